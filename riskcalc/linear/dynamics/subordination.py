"""The spectrum of D = sum_j p_j q(S_j): free subordination on a contour and support edges.

Derived here (Sigma = I). The S_j are independent Wishart matrices, hence asymptotically free,
and so are the a_j = p_j q(S_j) (``client_laws``). For the free sum D = sum_j a_j, Biane's
subordination gives analytic omega_j on the upper half plane with ::

    G_D(z) = G_j(omega_j(z))  for every j,     sum_j omega_j(z) = z + (M - 1) / G_D(z),
    E[(z - D)^{-1} given S_j] = (omega_j(z) - a_j)^{-1},

(the second relation is R-transform additivity: omega_j = z - sum_{k != j} R_k(G_D)). Hence
(1/d) tr h(S_j) (z - D)^{-1} -> E_MP(gamma_j)[h(s) / (omega_j(z) - p_j q(s))], the client
expectations of ``client_laws``. ``solve`` finds (omega, G) at every node of a contour by
Newton's method on the M + 1 equations in the reciprocal form F_j(omega_j) = F,
sum_j omega_j = z + (M - 1) F (F_j = 1/G_j = omega - tau(a_j) - var(a_j)/omega + ..., nearly
linear, which makes Newton robust; the Jacobian is an arrow matrix, solved in O(M)), following
each node from a far ellipse, where omega_j = z - sum_{k != j} (tau(a_k) + var(a_k) / z) is
accurate, inwards in stages with an Euler predictor (the physical branch is the analytic
continuation from infinity; the solution is checked to satisfy Im G < 0 < Im omega_j).

Support edges (``edges``). On the real axis outside the support of D every omega_j is real and
outside the spectrum of a_j; with y = 1/G_D, omega_j = G_j^{-1}(1/y) on the matching monotone
branch and x(y) = sum_j omega_j - (M - 1) y. Moving from a point where x is known to be outside
the support (y -> +inf: x -> +inf; y -> -inf: x -> -inf; y -> 0+ when D has an atom at 0:
x -> 0+), dx/dG = sum_j 1 / G_j'(omega_j) + (M - 1) y^2 < 0 until the edge, which is its first
zero (or the point where an omega_j reaches the spectrum of a_j, or the limit of an atom).
The atom of D at 0 is mu0 = (1 - sum_j (1 - mu0_j))_+ (Bercovici-Voiculescu: the atom of a free
sum at 0 is the excess of the summands' atoms there); when mu0 > 0 the lower edge is that of
the nonzero part, found on the branch omega_j in the gap (0, bottom of a_j's continuous part).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError

#: Newton's relative step after which one more step reaches rounding (quadratic convergence).
NEWTON_TOL = 1e-9
NEWTON_ITER = 40


def atom_at_zero(laws) -> float:
    """The mass of D's atom at 0, (1 - sum_j (1 - mu0_j))_+ (nothing is learned there)."""
    return max(0.0, 1.0 - float(np.sum(1.0 - laws.mu0)))


def _invert(laws, G, lo, hi, gap=False):
    """Real omega_j in [lo, hi] with G_j(omega_j) = G (G_j decreasing there), all clients at
    once (arrays (M, n)); NaN where the bracket holds no root.

    Newton's method runs inside the shrinking bracket on 1/G_j(omega) - 1/G, increasing and
    nearly linear far out (1/G_j(omega) = omega - tau(a_j) + O(1/omega)), in the variable
    w = sqrt(omega - lo0) (lo0 the bracket's first lower end: where G_j may have the
    square-root singularity of an edge of the spectrum of a_j, w makes it regular), or, in the
    gap between an atom at 0 and the rest (``gap``, where G_j changes sign), on
    log G - log G_j(e^w) in w = log omega (G_j ~ mu0_j / omega near 0; +inf where G_j <= 0).
    """
    y = np.broadcast_to(1.0 / G, np.shape(lo)).astype(float)
    lo, hi = np.array(lo, float), np.array(hi, float)
    point = hi - lo <= 1e-14 * (np.abs(lo) + np.abs(y))
    omega_point = lo.copy()
    if gap:
        guess = np.log(np.maximum(laws.mu0[:, None], 1e-300) * np.abs(y))
        lo, hi = np.log(np.maximum(lo, 1e-300)), np.log(hi)

        def omega_of(w):
            return np.exp(w), np.exp(w)
    else:
        end = lo.copy()
        guess = np.sqrt(np.maximum(y + laws.mean[:, None] - end, 0.0))
        lo, hi = np.zeros_like(lo), np.sqrt(hi - end)

        def omega_of(w):
            return end + w * w, 2.0 * w

    def f_df(w, ends=None):
        # (``ends``: the law's values at omega_of(w), computed by the caller)
        om, dom = omega_of(w)
        E0, dE0 = laws.cauchy(om) if ends is None else ends
        # Overflow far out on the gap branch is an infinite f, which the bracket handles.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if gap:
                pos = E0.real > 0
                return (np.where(pos, -np.log(np.where(pos, y * E0.real, 1.0)), np.inf),
                        -dE0.real * dom / E0.real)
            return 1.0 / E0.real - y, -dE0.real / E0.real ** 2 * dom

    # No root where f has one sign on (nearly) the whole bracket; a bracket of zero width
    # (a_j a multiple of the identity) is its own root.
    # (Both ends in one call of the laws: its overhead is most of a call's cost.)
    width = hi - lo
    ends = [lo + 1e-14 * width, hi - 1e-14 * width]
    E0, dE0 = laws.cauchy(np.hstack([omega_of(e)[0] for e in ends]))
    f_lo, f_hi = (f_df(e, (a, b))[0] for e, a, b in zip(ends, np.split(E0, 2, axis=1),
                                                       np.split(dE0, 2, axis=1)))
    none = ((f_lo > 0) | (f_hi < 0)) & ~point
    w = np.where((guess > lo) & (guess < hi), guess, 0.5 * (lo + hi))
    active = ~(none | point)
    scale = np.abs(lo) + np.abs(hi) + 1e-300
    # An entry whose (w, lo, hi) comes back to its value of one or two steps before cycles
    # so to the last step (f_df is a pure function of each entry), and lo and hi, which alone
    # decide its outcome below, no longer move: it stops at once (``stuck``) with that outcome.
    # (Newton clipped to alternate bracket ends a rounding apart, or a midpoint that rounds
    # to an end: 163 of 2331 calls ran all 100 steps for one such entry, 45% of the steps.)
    stuck, kept, w_old = np.zeros_like(active), np.zeros_like(active), np.full_like(w, np.nan)
    for _ in range(100):
        if not active.any():
            break
        f, df = f_df(w)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = w - f / df
        lo_old, hi_old = lo, hi
        lo = np.where(active & (f < 0), w, lo)
        hi = np.where(active & (f > 0), w, hi)
        # A Newton step a rounding error outside the bracket means the root sits at its end
        # (f there was a rounding residue of the wrong sign): clip instead of bisecting.
        slack = 1e-12 * scale
        ok = (newton > lo - slack) & (newton < hi + slack)
        new = np.where(ok, np.clip(newton, lo, hi), 0.5 * (lo + hi))
        new = np.where(active, new, w)
        # Converged when a Newton step in omega is at rounding (the variable w may be
        # stretched). Never after a bisection: in the gap's w = log omega a bisection from
        # omega ~ 1e-300 moves omega by far less than 1e-14 y and would stop at a point that is
        # no root (an edge 3% low was reported that way).
        om_new, om_old = omega_of(new)[0], omega_of(w)[0]
        done = (ok & (np.abs(om_new - om_old) <= 1e-14 * (np.abs(om_old) + np.abs(y)))) | (f == 0)
        active &= ~done
        same = (lo == lo_old) & (hi == hi_old)
        still = active & same & ((new == w) | (kept & (new == w_old)))
        stuck |= still
        active &= ~still
        kept, w_old, w = same, w, new
    active |= stuck
    # Entries still active after 100 steps: the bracket's midpoint if it is below 1e-9.
    tight = np.abs(hi - lo) <= 1e-9 * scale
    w = np.where(active, 0.5 * (lo + hi), w)
    om = np.where(point, omega_point, omega_of(w)[0])
    return np.where(none | (active & ~tight), np.nan, om)


def _branch(laws, y, branch):
    """x(y), dx/dG and validity on one real branch (module docstring) at the values y."""
    M = laws.M
    y = np.asarray(y, float)
    yy = np.broadcast_to(y, (M, y.size))
    if branch == "up":
        lo, hi = np.maximum(laws.top[:, None], laws.bottom[:, None] + yy), laws.top[:, None] + yy
    elif branch == "down":
        lo, hi = laws.bottom[:, None] + yy, np.minimum(laws.top[:, None] + yy,
                                                       laws.bottom[:, None])
    else:  # the gap (0, lo) between the atom at 0 and the continuous part
        lo, hi = np.zeros_like(yy), np.broadcast_to(laws.lo[:, None], yy.shape)
    w = _invert(laws, 1.0 / yy, lo, hi, gap=branch == "gap")
    _, dE0 = laws.cauchy(np.where(np.isnan(w), laws.top[:, None] + 1.0, w))
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = (M - 1) * y ** 2 + np.sum(1.0 / dE0.real, axis=0)
    return w.sum(axis=0) - (M - 1) * y, phi


def _edge(laws, branch, scale):
    """One support edge of D by the scan-and-refine of the module docstring."""
    sign = -1.0 if branch == "down" else 1.0
    if branch == "gap":  # y from 0+ upwards: x from 0+ upwards
        ys = scale * np.geomspace(1e-12, 1e4, 49)
    else:  # |y| from far (x far outside) down to 0
        ys = sign * scale * np.geomspace(1e4, 1e-20, 73)
    # Scan in chunks and stop at the first bad point (points past the edge cost the most).
    xs, phis = [], []
    for chunk in np.array_split(ys, 6):
        xc, pc = _branch(laws, chunk, branch)
        xs.append(xc), phis.append(pc)
        if np.any(np.isnan(xc) | ~(pc < 0)):
            break
    x, phi = np.concatenate(xs), np.concatenate(phis)
    ys = ys[:x.size]
    bad = np.isnan(x) | ~(phi < 0)
    if not bad[0]:
        first = int(np.argmax(bad)) if bad.any() else len(ys)
    else:
        raise SolverError("support edge of the round map: no real solution at the start of "
                          "the scan (inputs beyond floating point range?)")
    if first == len(ys):
        return float(x[-1])  # an atom at the end of the spectrum: x(y) -> its location
    # Refine the bracket [last good, first bad] by vectorized scans of 32 points (one call
    # costs about what one point does). x is stationary at a critical-point edge, so y to
    # 1e-9 gives x to rounding; where an omega_j meets the spectrum of a_j instead, the
    # error in x is of the order of the bracket times dx/dy, also below 1e-12.
    y_in, y_out, x_in = ys[first - 1], ys[first], x[first - 1]
    while abs(y_out - y_in) > 1e-10 * abs(y_in):
        inner = np.linspace(y_in, y_out, 34)[1:-1]
        xi, pi = _branch(laws, inner, branch)
        bad = np.isnan(xi) | ~(pi < 0)
        k = int(np.argmax(bad)) if bad.any() else len(inner)
        if k > 0:
            y_in, x_in = inner[k - 1], xi[k - 1]
        if k < len(inner):
            y_out = inner[k]
    return float(x_in)


def edge(laws, branch: str) -> float:
    """One edge of the spectrum of D: its top (``branch="up"``) or the bottom of its nonzero
    part (``"down"``, or ``"gap"`` when D has an atom at 0). M = 1: the range of a_1 itself
    (omega_1 = z)."""
    if laws.M == 1:
        return float(laws.hi[0] if branch == "up" else laws.lo[0])
    return _edge(laws, branch, float(np.sum(laws.top)))


def edges(laws):
    """(a, b, mu0): the edges of the nonzero part of the spectrum of D and its atom at 0."""
    mu0 = atom_at_zero(laws)
    return edge(laws, "gap" if mu0 > 0 else "down"), edge(laws, "up"), mu0


def solve(laws, z, scale, t_path, check_branch=True, weight=None):
    """omega (M, N) and G (N) at the contour nodes z(t_path[-1]) by continuation.

    Parameters
    ----------
    laws : ClientLaws
    z : callable
        t -> nodes (N,) of the ellipse of parameter t (same angles for every t).
    scale : float
        The size of the spectrum (for tolerances).
    t_path : sequence of float
        Decreasing ellipse parameters; the first far enough for the moment expansion.
    check_branch : bool
        Check Im omega_j >= Im z (a property of self-adjoint client laws; complex laws, as in
        ``algorithm1.curves``, check Im G < 0 only).
    weight : callable, optional
        nodes -> factor f with Im(f G) of the sign opposite to Im z required instead of Im G's
        (``algorithm1.curves`` where a(s) < 0: z G, module docstring there).

    Raises
    ------
    SolverError
        If Newton's method does not converge at some node or leaves the physical branch.
    """
    M = laws.M
    zz = z(t_path[0])
    mean, var = np.sum(laws.mean), np.sum(laws.var)
    # Unknowns omega_j and F = 1/G_D: F_j(omega_j) = F, sum_j omega_j = z + (M - 1) F, with
    # F_j = 1/G_j = omega - tau(a_j) - var(a_j)/omega + ..., nearly linear: Newton is robust.
    F = zz - mean - var / (zz - mean)
    omega = zz - (mean - laws.mean[:, None]) - (var - laws.var[:, None]) / (zz - mean)

    def reciprocal(om):
        G, dG = laws.cauchy(om)
        return 1.0 / G, -dG / G ** 2

    for t in t_path:
        # Euler predictor along the path: d(omega, F)/dz from the linearized equations.
        # (z(t) once: it may set the laws' nodes, ``algorithm1.laws.NodeLaws.z``)
        z_t = z(t)
        step_z, zz = z_t - zz, z_t
        _, e = reciprocal(omega)
        dF = step_z / (np.sum(1.0 / e, axis=0) - (M - 1))
        omega, F = omega + dF / e, F + dF
        polish = False
        for _ in range(NEWTON_ITER):
            Fj, e = reciprocal(omega)
            f = Fj - F
            f0 = omega.sum(axis=0) - (M - 1) * F - zz
            dF = (-f0 + np.sum(f / e, axis=0)) / (np.sum(1.0 / e, axis=0) - (M - 1))
            step = (dF - f) / e
            omega = omega + step
            F = F + dF
            if polish:
                break
            # Quadratic convergence: one more step after a change of 1e-9 reaches rounding.
            polish = np.all(np.abs(step) <= NEWTON_TOL * (np.abs(omega) + scale)) and np.all(
                np.abs(dF) <= NEWTON_TOL * (np.abs(F) + scale))
        else:
            raise SolverError("round map spectrum: Newton's method on the subordination "
                              f"equations did not converge at t = {t:.3g} ({NEWTON_ITER} "
                              "steps)")
    G = 1.0 / F
    imz = zz.imag
    fG = G if weight is None else weight(zz) * G
    if np.any(fG.imag * np.sign(imz) > 1e-12 * np.abs(fG)) or check_branch and np.any(
            (omega.imag - imz) * np.sign(imz) < -1e-9 * scale):
        raise SolverError("round map spectrum: the subordination solve left the physical "
                          "branch (Im omega_j < Im z)")
    return omega, G
