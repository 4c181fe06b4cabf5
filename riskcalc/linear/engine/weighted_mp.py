"""Integrals against the Sigma-weighted limiting spectrum of the sample covariance.

For a general covariance with eigenvalue distribution H and d/n -> gamma, spectral functions
of S = X^T X / n weighted by Sigma converge:

    (1/d) tr[phi(S) Sigma]  ->  int phi dnu,
    nu(ds) = lim (1/d) sum_j (v_j' Sigma v_j) delta_{s_j}(ds)

(v_j, s_j the eigenvectors and eigenvalues of S). This is what the risk after a finite number of gradient steps
needs (``riskcalc.linear.steps.limits``); paper 003 (``003_4b976ddf5225c17e.txt``) Sec. 6.3 uses the
same deterministic equivalent at one point z = -lam only (Def. 6.2).

Route. The deterministic equivalent (S - z)^{-1} ~ (a(z) Sigma - z)^{-1} with a = -z mu(z),
where mu is the Stieltjes transform of the limiting spectrum of the companion n x n matrix
X X^T / n, the unique solution with Im mu > 0 (Im z > 0) of Silverstein's equation

    z = -1/mu + gamma int t / (1 + t mu) dH(t)

(Silverstein and Bai 1995; at z = -lam, a is the variable of Def. 6.2), gives

    g(z) = int nu(ds) / (s - z) = -(1/z) int t / (1 + t mu(z)) dH(t).

nu has total mass int t dH, an atom nu({0}) = int t / (1 + t mu(0)) dH at 0 when gamma > 1
(mu(0) = gamma c0 of Def. 6.1), and a continuous part on [x_lo, x_hi]. For phi analytic
inside a contour C around the support, int phi dnu = -(1 / 2 pi i) int_C phi g dz; C is an
ellipse with foci x_lo, x_hi (or around [0, x_hi] with the atom), where the periodic
trapezoid (midpoint) rule converges geometrically. No density and no edge singularity is
ever evaluated. The edges come from Silverstein and Choi (1995): outside the support,
x(mu) = -1/mu + gamma int t / (1 + t mu) dH is increasing in real mu, and the edges are its
critical points.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IntegrandOverflow, SolverError
from riskcalc.spectrum import Spectrum
from riskcalc.linear.engine.stieltjes import c0

#: Fixed-point iterations of Silverstein's equation before the Newton polish.
MAX_FIXED_POINT = 20000
NEWTON_STEPS = 30
#: Rounds of ``_bracketed_root`` before it gives up; each round halves the bracket (or its
#: log-ratio, far from 0): ~2100 halvings separate 1 from 1e-300, ~10 log-halvings 1e300 ratios.
MAX_ROOT_STEPS = 4000
#: Largest relative rounding floor ``contour_integrals`` accepts for a divergent power.
MAX_POWER_ROUNDING = 1e-6
#: Largest nodes x distinct eigenvalues ``contour_integrals`` solves at once: each array of the
#: fixed point holds that many complex values (256 MiB; the solver holds ~3, and a point costs
#: ~0.2 us per value: a few seconds). A powerlaw of 10^6 eigenvalues with a divergent step size
#: doubled its nodes past 4 GB and 10 minutes.
MAX_ENTRIES = 2 ** 24
#: Nodes of ``contour_integrals``' first rule (doubled until it settles).
FIRST_NODES = 32
#: A step with eta (lam + x_hi) within EDGE_RTOL (relative) of 2 is AT the stability edge:
#: x_hi's rounding (``support_edges`` and (1 + sqrt(gamma))^2 differ by an ulp at gamma 2).
EDGE_RTOL = 8 * np.finfo(float).eps


def support_edges(gamma: float, spectrum: Spectrum) -> tuple[float, float]:
    """Lower and upper edges of the non-zero part of the limiting spectrum of S.

    Silverstein and Choi (1995): x(mu) = -1/mu + gamma int t / (1 + t mu) dH has
    x'(mu) = 0 at the edges. The top edge is the critical point in (-1 / max t, 0); the
    bottom one lies in (0, inf) when gamma > 1 and in (-inf, -1 / min t) when gamma < 1 (the
    companion spectrum then has an atom 1 - gamma at 0). Each critical point is the root of a
    monotone function (in the variable named below), found by ``_bracketed_root``.
    For gamma = 1 the bottom edge is 0. For Sigma = I: (1 -/+ sqrt(gamma))^2.

    Parameters
    ----------
    gamma : float
        Aspect ratio d/n > 0.
    spectrum : Spectrum
        Eigenvalue distribution H.

    Returns
    -------
    x_lo, x_hi : float
    """
    t, w = spectrum.atoms, spectrum.weights
    g = float(gamma)

    def x_of_mu(mu):
        with np.errstate(divide="ignore"):      # an edge at its singular end: see below
            return -1.0 / mu + g * np.dot(w, t / (1.0 + t * mu))

    # Top: u = -mu in (0, 1/t_max); 1 - gamma int (t u)^2 / (1 - t u)^2 dH falls from 1 to -inf.
    u = _decreasing_root(lambda u: 1.0 - g * np.dot(w, (t * u / (1.0 - t * u)) ** 2),
                         0.0, 1.0 / t[-1])
    x_hi = x_of_mu(-u)
    if g > 1:
        # mu in (0, inf) as mu / (1 + mu t_max) =: y in (0, 1/t_max): 1 - gamma int (t mu /
        # (1 + t mu))^2 dH falls from 1 to 1 - gamma < 0.
        y = _decreasing_root(
            lambda y: 1.0 - g * np.dot(w, (t * y / (1.0 - t[-1] * y + t * y)) ** 2),
            0.0, 1.0 / t[-1])
        x_lo = x_of_mu(y / (1.0 - t[-1] * y))
    elif g < 1:
        # v = -1/mu in (0, t_min): 1 - gamma int t^2 / (t - v)^2 dH falls from 1 - gamma > 0.
        v = _decreasing_root(lambda v: 1.0 - g * np.dot(w, (t / (t - v)) ** 2), 0.0, t[0])
        x_lo = x_of_mu(-1.0 / v)
    else:
        x_lo = 0.0
    # A critical point within rounding of its singular end (gamma ~ 1e-100: 1 + t mu = 0 in
    # floating point) leaves x_of_mu infinite; the edge is then the atom itself, to a relative
    # 2 sqrt(gamma w) (the cluster of the atom t of weight w has half-width 2 t sqrt(gamma w)).
    x_lo = x_lo if np.isfinite(x_lo) else float(t[0])
    x_hi = x_hi if np.isfinite(x_hi) else float(t[-1])
    return max(x_lo, 0.0), x_hi


def support_gaps(gamma: float, spectrum: Spectrum, below: float = np.inf,
                 most: int = 4) -> list:
    """Gaps (x_a, x_b, j) inside [x_lo, x_hi] of the limiting spectrum of S, ascending, j the
    index of the atom t_j just below the gap: at most ``most``, between the atoms farthest
    apart in ratio (the highest among equals) with sum_(i <= j) w_i t_i < ``below``.

    Silverstein and Choi (1995): off the support x'(mu) > 0, i.e. with v = -1/mu, gamma int
    (t / (t - v))^2 dH < 1, a convex function of v between two atoms t_j < v < t_(j+1); a gap
    where its minimum there is below 1 / gamma, with edges x(v) = v (1 + gamma int t / (v - t)
    dH) at its two roots. Two atoms alone bound that minimum below by (a^(1/3) + b^(1/3))^3 /
    (t_(j+1) - t_j)^2, a = w_j t_j^2, b = w_(j+1) t_(j+1)^2: only pairs under that bound are
    tried.
    """
    t, w = spectrum.atoms, spectrum.weights
    g = float(gamma)
    pair = np.cbrt(w * t * t)
    cand = np.flatnonzero((g * (pair[:-1] + pair[1:]) ** 3 < np.diff(t) ** 2)
                          & (np.cumsum(w * t)[:-1] < below))
    cand = np.sort(cand[np.lexsort((cand, t[cand + 1] / t[cand]))][-most:])

    def fun(v):
        return 1.0 - g * np.dot(w, (t / (t - v)) ** 2)

    out = []
    for j in cand:
        a, b = float(t[j]), float(t[j + 1])
        while True:     # the minimum of the convex sum: where its slope changes sign
            v = np.sqrt(a * b) if b > 4.0 * a else 0.5 * (a + b)
            if not a < v < b:
                break
            a, b = (v, b) if np.dot(w, t * t / (t - v) ** 3) < 0 else (a, v)
        if fun(v) <= 0:
            continue
        ends = (-_decreasing_root(lambda y: fun(-y), -v, -float(t[j])),
                _decreasing_root(fun, v, float(t[j + 1])))
        out.append(tuple(float(e * (1.0 + g * np.dot(w, t / (e - t)))) for e in ends) + (j,))
    return out


def _decreasing_root(fun, lo, hi):
    """Root in (lo, hi) of a decreasing function, positive at lo, that tends to -inf (or
    turns negative) towards hi, to full double precision. A root closer to hi than the
    spacing of doubles there (gamma = 1e-100: the top edge's critical point lies 1e-50 below
    1 / t_max) is the last double before hi, where ``fun`` is still >= 0."""
    top = 0.5 * (lo + hi)
    while fun(top) >= 0:
        nearer = 0.5 * (top + hi)
        if not lo < nearer < hi or nearer == top:
            return top
        top = nearer
    return _bracketed_root(fun, lo, top)


def _bracketed_root(fun, a, b):
    """Root of a decreasing ``fun`` with fun(a) > 0 > fun(b), to 4 eps relative (1e-300
    absolute): the Illinois variant of false position, with a bisection (geometric where a > 0
    and the ends differ by more than a factor 4, for roots near 0) whenever a step did not
    halve the bracket; the end with the smaller residual is returned. Written here rather than
    scipy's ``brentq``, whose import (~1-2 s on a loaded machine) took longer than a quick
    ``--max-minutes`` (fuzz40 steps F1)."""
    ends = [[a, fun(a)], [b, fun(b)]]       # [x, f(x)] with f > 0 first, f < 0 second
    scaled = [ends[0][1], ends[1][1]]        # the values false position uses (Illinois)
    side = None
    for _ in range(MAX_ROOT_STEPS):
        (a, fa), (b, fb) = ends
        if b - a <= 4 * np.finfo(float).eps * max(abs(a), abs(b)) + 1e-300:
            return a if abs(fa) < abs(fb) else b
        width = b - a
        x = a + scaled[0] * (b - a) / (scaled[0] - scaled[1])
        for _ in range(2):
            if not a < x < b:
                x = np.sqrt(a * b) if a > 0 and b > 4 * a else 0.5 * (a + b)
            if not a < x < b:               # adjacent doubles
                return a if abs(fa) < abs(fb) else b
            fx = fun(x)
            if fx == 0:
                return x
            k = 0 if fx > 0 else 1
            ends[k] = [x, fx]
            scaled[k] = fx
            if side == k:                   # the same end moved twice: halve the other's value
                scaled[1 - k] *= 0.5
            side = k
            a, b = ends[0][0], ends[1][0]
            if b - a <= 0.5 * width:
                break
            x, side = np.nan, None          # not halved: bisect once
    raise SolverError(f"support edge: no convergence in {MAX_ROOT_STEPS} steps")


def companion_stieltjes(z, gamma: float, spectrum: Spectrum) -> np.ndarray:
    """Stieltjes transform mu(z) of the limiting spectrum of X X^T / n, for Im z > 0.

    The unique root in the upper half plane of Silverstein's equation (module docstring):
    the fixed-point map mu -> -1 / (z - gamma int t / (1 + t mu) dH) maps the upper half
    plane into itself and converges there; a Newton polish then brings the root to full
    precision. A point is accepted only with Im mu > 0 and a residual at rounding level.

    Raises
    ------
    SolverError
        If some point does not converge.
    """
    z = np.asarray(z, complex)
    t, w = spectrum.atoms, spectrum.weights
    mu = -1.0 / z
    todo = np.ones(z.shape, bool)
    for _ in range(MAX_FIXED_POINT):
        zz, mm = z[todo], mu[todo]
        new = -1.0 / (zz - gamma * ((t / (1.0 + np.multiply.outer(mm, t))) @ w))
        mu[todo] = new
        still = np.abs(new - mm) > 1e-7 * np.abs(new)
        todo[np.flatnonzero(todo)[~still]] = False
        if not todo.any():
            break
    else:
        raise SolverError(f"Silverstein's equation: the fixed point did not settle in "
                          f"{MAX_FIXED_POINT} iterations at {int(todo.sum())} points")
    start = mu.copy()
    for _ in range(NEWTON_STEPS):
        q = 1.0 / (1.0 + np.multiply.outer(mu, t))
        f = z + 1.0 / mu - gamma * ((t * q) @ w)
        df = -1.0 / mu ** 2 + gamma * ((t * t * q * q) @ w)
        step = f / df
        mu = mu - step
        if np.all(np.abs(step) <= 4 * np.finfo(float).eps * np.abs(mu)):
            break
    q = 1.0 / (1.0 + np.multiply.outer(mu, t))
    resid = np.abs(z + 1.0 / mu - gamma * ((t * q) @ w))
    scale = np.abs(z) + 1.0 / np.abs(mu) + gamma * (np.abs(t * q) @ w)
    ok = (mu.imag > 0) & (resid <= 1e-12 * scale) & (np.abs(mu - start) <= 1e-3 * np.abs(start))
    if not ok.all():
        raise SolverError(f"Silverstein's equation: Newton did not confirm the root at "
                          f"{int((~ok).sum())} of {ok.size} points")
    return mu


def atom_at_zero(gamma: float, spectrum: Spectrum) -> float:
    """nu({0}) = int t / (1 + t mu(0)) dH with mu(0) = gamma c0 (gamma > 1; else 0).

    The Sigma-weighted mass of the null space of S: lim (1/d) tr[P_null Sigma].
    """
    if gamma <= 1:
        return 0.0
    kappa = gamma * float(c0(gamma, spectrum))
    t, w = spectrum.atoms, spectrum.weights
    return float(np.dot(w, t / (1.0 + kappa * t)))


def _too_many_values(nodes: int, atoms: int, power: float) -> str:
    """The refusal of ``contour_integrals`` beyond ``MAX_ENTRIES``, with what would fit."""
    most = MAX_ENTRIES // nodes
    return (f"finite-step integral: the spectrum's {atoms} distinct eigenvalues at {nodes} "
            f"contour nodes are {nodes * atoms:.3g} values, more than the {MAX_ENTRIES} held "
            f"at once; give a spectrum of at most {most} distinct eigenvalues (powerlaw:P,D "
            "with a smaller D approximates the same law)"
            + (" or a step size below the stability limit (a divergent one needs many nodes)"
               if power > 0 else ""))


def check_values(atoms: int) -> None:
    """``contour_integrals``' refusal at its first rule, for a caller to make before the
    support's edges are solved (10^7 atoms were refused after 9-35 s of ``support_edges``)."""
    if FIRST_NODES * atoms > MAX_ENTRIES:
        raise ValueError(_too_many_values(FIRST_NODES, atoms, 0.0))


def _ellipse_nodes(n: int, p: float, q: float, excess: float):
    """The n midpoint nodes z in the upper half of the ellipse with foci p < q and parameter
    rho = 1 + ``excess``, z = (p + q)/2 + h (u + 1/u)/2 with u = rho e^(i theta), h = (q - p)/2,
    and dz/dtheta. Each node is taken from its nearer focus, z = p + h (1 + u)^2 / (2 u) or
    q + h (1 - u)^2 / (2 u), with 1 +- u from half angles: ``c + h (u + 1/u) / 2`` lost the
    digits of a node near p = 0 to the cancellation of c against h (1e-10 relative at gamma
    1.0005 after 6e5 steps of 0.1 under two-point:1,4,0.3, where the integrand ~ 1/z turned it
    into 6e-11 relative noise in the variance, above the rule's tolerance: refused after
    14 s; fuzz40 steps F3)."""
    h = 0.5 * (q - p)
    j = np.arange(n) + 0.5
    theta = np.pi * j / n
    e, half = np.exp(1j * theta), np.exp(0.5j * theta)
    u = (1.0 + excess) * e
    # cos(theta / 2) as the sine of its complement: theta's rounding near pi is not in it.
    plus = 2.0 * np.sin(0.5 * np.pi * (n - j) / n) * half + excess * e      # 1 + u
    minus = -2.0j * np.sin(0.5 * theta) * half - excess * e                # 1 - u
    z = np.where(theta > 0.5 * np.pi, p + 0.5 * h * plus ** 2 / u, q + 0.5 * h * minus ** 2 / u)
    return z, -0.5j * h * minus * plus / u


_OVERFLOW = ("finite-step integral: the integrand overflows on the contour (a divergent step "
             "size with many steps)")


def contour_integrals(phis, gamma: float, spectrum: Spectrum, *, foci, margin: float,
                      rtol: float, atol, max_nodes: int,
                      power: float = 0.0) -> list[float]:
    """int phi dnu over the part of nu inside an ellipse, for each phi of ``phis``.

    The ellipse has foci ``foci`` = (p, q) and reaches ``margin`` beyond them on the real
    axis; it must enclose the support to be integrated and keep every singularity of phi
    outside. ``phis`` map complex nodes to values (vectorized). The midpoint rule in the
    ellipse angle (2 n nodes, n in the upper half plane, the lower half by conjugate
    symmetry) doubles n until two successive values agree to ``rtol`` (relative) or
    ``atol`` (one for all, or one per phi).

    ``power`` > 0: each phi holds a ``power``-th power of a factor larger than 1 on the
    contour (a divergent step size), whose rounding is ~3 ``power`` eps relative at every node
    (the factor to ~3 eps, raised to that power), and whose nodes are much larger than the
    integral (measured ~50 sqrt(power) times). The rule then settles to that rounding floor,
    (8 + 3 power) eps sum abs(terms) / n, when it exceeds ``rtol`` (measured: 2e-9 relative at
    power 5000, 1e-8 at 20000), and refuses a floor beyond ``MAX_POWER_ROUNDING`` of the value.

    Raises
    ------
    SolverError
        When the rule does not settle with ``max_nodes`` nodes in the upper half plane, or
        when the integrand on the contour is so much larger than the integral that rounding
        alone exceeds the tolerance (phi growing fast off the real axis).
    """
    p, q = foci
    h = 0.5 * (q - p)
    # rho - 1 of the ellipse (rho its parameter), not rounded through rho ~ 1.
    excess = (margin + np.sqrt(margin * (2.0 * h + margin))) / h
    t, w = spectrum.atoms, spectrum.weights
    atols = np.broadcast_to(np.asarray(atol, float), (len(phis),))
    prev = None
    n = FIRST_NODES
    while n <= max_nodes:
        if n * t.size > MAX_ENTRIES:
            raise ValueError(_too_many_values(n, t.size, power))
        z, dz = _ellipse_nodes(n, p, q, excess)
        # phi first: where it overflows the value is past the floats, whatever Silverstein's
        # equation does at these nodes (two-point:1e-8,1e8,0.5 after 1000 steps of 1e-3: its
        # fixed point did not settle on the thin ellipse; fuzz39 steps F3).
        with np.errstate(over="ignore", invalid="ignore"):
            values = [phi(z) for phi in phis]
        if not all(np.all(np.isfinite(v)) for v in values):
            raise IntegrandOverflow(_OVERFLOW)
        mu = companion_stieltjes(z, gamma, spectrum)
        weight = -(t / (1.0 + np.multiply.outer(mu, t))) @ w / z * dz
        with np.errstate(over="ignore", invalid="ignore"):
            terms = [v * weight for v in values]
        if not all(np.all(np.isfinite(tm)) for tm in terms):
            raise IntegrandOverflow(_OVERFLOW)
        cur = [-float(np.sum(tm).imag) / n for tm in terms]
        rounding = [(8 + 3 * power) * np.finfo(float).eps * float(np.sum(np.abs(tm))) / n
                    for tm in terms]
        if power > 0:
            if any(r > MAX_POWER_ROUNDING * abs(v) for r, v in zip(rounding, cur)):
                raise SolverError(f"finite-step integral: the rounding of the {power:g}-th "
                                  "power on the contour exceeds "
                                  f"{MAX_POWER_ROUNDING:g} of the value (a step size at or "
                                  "barely past the stability limit with very many "
                                  "steps): fewer steps or a step size farther from the limit")
        elif any(r > rtol * abs(v) + a for r, v, a in zip(rounding, cur, atols)):
            raise IntegrandOverflow("finite-step integral: the integrand on the contour is too "
                                    "large for the integral (a step size near the stability limit "
                                    "with many steps?)")
        if prev is not None and all(abs(a - b) <= rtol * abs(a) + tol + 2 * r
                                    for a, b, tol, r in zip(cur, prev, atols, rounding if power
                                                            else (0.0,) * len(cur))):
            return cur
        prev = cur
        n *= 2
    raise SolverError(f"finite-step integral: the contour rule did not settle with {max_nodes} "
                      "nodes")
