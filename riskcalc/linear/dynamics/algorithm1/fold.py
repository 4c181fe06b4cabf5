"""The extreme eigenvalues of paper 004's Algorithm 1 round map as folds of the real branch of
the subordination equations (derived here): the fast route of ``algorithm1.rate``.

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11; notation of
``algorithm1.rate`` (psi_z, Dhat_z, zeta(z) = (z - 1 + g lam) / (g lam)). Write F = 1 / G for
the Cauchy transform G of Dhat_z at zeta(z). Outside the spectrum on the real axis the
subordination equations 1 / G_j(omega_j; z) = F (G_j the Cauchy transform of p_j psi_z(S_j)) and
sum_j omega_j - (M - 1) F = zeta(z) have a real solution branch that starts at z = +infinity (F
= +infinity) and comes down to the top eigenvalue z* (and one from z = -infinity up to the
bottom one). Parametrized by F instead of z the branch is regular: with e_j and b_j the
derivatives of 1 / G_j in omega_j and in z, the implicit function theorem gives dz/dF = C / D, C
= sum_j 1 / e_j - (M - 1), D = 1 / (g lam) + sum_j b_j / e_j, and C is the Jacobian of the
fixed-z equations in (omega, F), which vanishes exactly at the edge of the spectrum of Dhat_z
(``subordination``'s dx/dG = 0). On the physical branch z is monotone in F (G is a Stieltjes
transform of a positive measure in z there), so z* = z(F*) at the first zero F* of C: a fold,
where z(F) turns (z - z* ~ (F - F*)^2). ``fold`` follows the branch from far out (zeta = +-20,
beyond Dhat_z's spectrum, which lies in [0, z / (z - sup a)] since lam c(s) <= 1) toward F = 0
(F* > 0 at the top: G_j > 0 above each law), each point by Newton's method on the M + 1 unknowns
(omega, z) (an arrow system, O(M)) from the branch's tangent, and finds F* by regula falsi on C
(Illinois), with steps halved where Newton fails (then regrown); z(F) is accurate to (F - F*)^2.
M + 1 scalar unknowns and a few dozen points replace the old route's root finding in z with a
full edge scan of the free sum at every step. The client laws are the discrete ``laws.mp_rule``
measures, doubled until both edges agree to ``algorithm1.rate.FOLD_TOL``;
``algorithm1.rate.contraction`` (the old route) stays as the fallback and as the independent
check in the tests. M = 1 has no fold (the edge is that of one law): the old route. With laws
that do not depend on z and g lam = 1 (zeta(z) = z, b_j = 0, dz/dF = C) the same fold is an edge
of the free sum of the laws: ``round_map_edges`` for FedAvg's round map D (and the exact prox's).

Non-real spectrum (``complex_contraction``, ``contours.solve_circles``, ``merge``): odd K, eta > 1 /
(L + lam) and g lam > 1 (derived here).

Setting and notation of ``algorithm1.rate`` and ``algorithm1.curves`` (Sigma = I): a(s) = (1 -
eta (s + lam))^K is negative on part of the spectrum, A = -inf a > 0, and with g lam > 1 the
round map Phi is not similar to a symmetric matrix (the 2 x 2 block of one client along one
eigenvector of S already has complex eigenvalues). What stays true:

1. Where the non-real spectrum lies. For z not real, z - a_j is invertible and z is an
   eigenvalue iff the Schur complement z - (1 - g lam) - g lam Dhat_z is singular,
   Dhat_z = z sum_j p_j lam c_j (z - a_j)^(-1). With a unit null vector u and
   q(z) = <u, sum_j p_j lam c_j (z - a_j)^(-1) u> = int dm(x) / (z - x) (m a positive measure
   on the values x of a, mixing the clients' spectral measures of u with the weights
   p_j lam c(s) > 0): (z - 1 + g lam) / (g lam z) = q(z). Imaginary parts:
   int dm / abs(z - x)^2 = (g lam - 1) / (g lam abs(z)^2); real parts, minus Re z times that:
   int x dm / abs(z - x)^2 = -1 / (g lam). So the mean of x under dm / abs(z - x)^2, which is
   at least inf a = -A, equals -abs(z)^2 / (g lam - 1):

       abs(z)^2 <= (g lam - 1) A      for every non-real eigenvalue z.

   In the limit d -> infinity the same holds on the spectrum of the limiting operator
   (approximate null vectors of the Schur complement or of its adjoint, which is the Schur
   complement at conj(z)). Real eigenvalues lie in [min(bottom, inf a), top]: above
   max(0, sup a) and below min(0, inf a) every a_j - z is definite, so there z is an eigenvalue
   iff (z - 1 + g lam) / (g lam) is in the spectrum of the SYMMETRIC Dhat_z (positive there), as
   in ``algorithm1.rate``: the top is the largest root of (z - 1 + g lam) / (g lam) =
   top(Dhat_z) (positive for large z), the bottom, if any, the smallest root of
   (z - 1 + g lam) / (g lam) = bottom(Dhat_z) below inf a (negative for z -> -infinity;
   Dhat_z need not be monotone in z here, so both are found by a scan from infinity, then
   bisection). The spectral radius is at most R = max(top, -lower, sqrt((g lam - 1) A)),
   lower = min(bottom, inf a); it equals max(top, -bottom) when that is the larger (``exact``),
   else R is an upper bound.
2. The curves. Every quantity of ``algorithm1.curves`` is (1 / 2 pi i) oint of z^T (or P_T(z))
   times a compressed resolvent of Phi, on any contour in the resolvent set of the limiting
   operator that encloses its spectrum; its deterministic equivalent (the subordination
   solution continued from infinity, where it is the moment expansion) is analytic there. The
   circle abs(z) = r > R encloses the spectrum by step 1, and on it abs(z)^T amplifies
   rounding by at most (r / rho)^T (rho the true spectral radius), the double integrals by
   its square: r = R AMPLIFICATION^(1 / (2 T_max)). The trapezoid rule with N nodes on the
   circle integrates z^T f(z) (f analytic for abs(z) > R, O(1 / z)) with the error of the
   aliased Laurent coefficient, O((R / r)^N) relative: N = T_max + 16 + ALIAS / log(r / R).
   The two contours of the double integrals are the circles of radii r and R (r / R)^0.7;
   the subordination solve is continued along circles from 8 max(1, R) down to them. (The
   ellipses of ``algorithm1.curves`` hug the real spectrum; a circle is the widest contour
   with the same largest abs(z), so it is the one that can enclose the disk of step 1.) The
   Hermitian branch checks of ``subordination`` do not apply (Gc is not the compressed
   resolvent of a symmetric matrix: no sign of Im G); the branch is the continuation from
   infinity, checked in the tests by two independent routes a contour cannot fake (the
   polynomial in g extrapolated from g lam <= 1, and the literal algorithm at two d).
3. T = inf. The fixed point solves v_j = (lam w + b_j) / (S_j + lam), w = sum_j p_j v_j
   whatever K, eta and g (1 - a_j is invertible): the pFedMe joint objective's minimizer. It,
   and the rounds past which the iteration has settled to 1e-16 (``fedavg.round_horizon`` with
   the bound R), are computed at g = 1 / lam, where the spectrum is real (``merge``); the
   circles then need no z = 1 outside them. When R >= 1 is only a bound, T = inf is refused:
   whether the iteration converges is then not known.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics import subordination


def _branch_point(law, gl, sign, F, omega, z):
    """The real solution (omega, z) of 1 / G_j(omega_j; z) = F, sum_j omega_j - (M - 1) F =
    zeta(z) by Newton's method from (omega, z); with C = sum_j 1 / e_j - (M - 1) and
    D = 1 / (g lam) + sum_j b_j / e_j (e_j, b_j the derivatives of 1 / G_j in omega_j and z),
    dz/dF = C / D. None if Newton fails or the point is off the physical branch (omega_j
    beyond its law, ``law.outside``, G_j of the sign ``sign``, e_j > 0)."""
    M = law.M
    polish = False
    for _ in range(40):
        with np.errstate(all="ignore"):
            G, G1, Gz = law.terms(omega, z)
            e, b = -G1 / G ** 2, -Gz / G ** 2
            E = 1.0 / G - F
            S = omega.sum() - (M - 1) * F - (z - 1.0 + gl) / gl
            D = 1.0 / gl + np.sum(b / e)
            dz = (S - np.sum(E / e)) / D
            dom = (-E - b * dz) / e
        if not (np.all(np.isfinite(dom)) and np.isfinite(dz)):
            return None
        omega, z = omega + dom, z + dz
        if polish:
            break
        polish = (np.max(np.abs(dom)) <= 1e-10 * (np.max(np.abs(omega)) + abs(F) + 1.0)
                  and abs(dz) <= 1e-10 * (abs(z) + 1.0))
    else:
        return None
    with np.errstate(all="ignore"):
        G, G1, Gz = law.terms(omega, z)
        e, b = -G1 / G ** 2, -Gz / G ** 2
    if not law.outside(omega, z, sign) or np.any(~(e > 0)) or np.any(~(sign * G > 0)):
        return None
    return {"F": F, "omega": omega, "z": z, "C": float(np.sum(1.0 / e) - (M - 1)),
            "D": float(1.0 / gl + np.sum(b / e)), "e": e, "b": b}


def fold(law, gl, sign, z_stop=None):
    """The top (``sign`` = 1) or bottom (-1) eigenvalue of Algorithm 1's round map for the
    client laws ``law`` (``RuleLaws``): the fold of the real branch of the subordination
    equations (module docstring); None when the bottom branch passes ``z_stop``
    before it folds. With laws that do not depend on z and g lam = 1, zeta(z) = z and the fold
    is an edge of the free sum of the laws itself (``fedavg``'s round map)."""
    z = max(2.0, 1.0 + 19.0 * gl) if sign > 0 else 1.0 - 21.0 * gl    # zeta(z) = +-20
    zeta = (z - 1.0 + gl) / gl
    mean, var = law.moments(z)
    F = zeta - mean.sum() - var.sum() / (zeta - mean.sum())
    omega = zeta - (mean.sum() - mean) - (var.sum() - var) / (zeta - mean.sum())
    good = _branch_point(law, gl, sign, F, omega, z)
    if good is None:
        raise SolverError("Algorithm 1's rate: no real solution far outside the spectrum")
    prev = bad = None
    cap = np.inf     # the largest step tried next (halved where Newton fails, then regrown)
    for _ in range(400):
        Fg, Cg = good["F"], good["C"]
        if bad is None:          # march toward F = 0 (where the branch must fold) ...
            step = -0.5 * Fg
            if prev is not None and Cg != prev["C"]:
                sec = -Cg * (Fg - prev["F"]) / (Cg - prev["C"])
                if 0.0 < sec / step < 1.0:   # ... by the secant on C where it is shorter
                    step = sec
        else:                    # regula falsi on C, Illinois-weighted
            step = -Cg * (bad["F"] - Fg) / (bad["C"] - Cg)
        if abs(step) <= 1e-11 * abs(Fg) or (bad is not None and abs(bad["F"] - Fg)
                                             <= 1e-11 * abs(Fg)):
            return good["z"]
        step = np.sign(step) * min(abs(step), cap)
        if cap < 1e-11 * abs(Fg):
            break
        dz = good["C"] / good["D"] * step
        guess = good["omega"] + (step - good["b"] * dz) / good["e"]
        new = _branch_point(law, gl, sign, Fg + step, guess, good["z"] + dz)
        if new is None:          # Newton from too far, or the rule's nodes: a shorter step
            cap = 0.5 * abs(step)
        elif new["C"] == 0.0:
            return new["z"]
        elif new["C"] > 0.0:
            if z_stop is not None and new["z"] >= z_stop:
                return None
            prev, good, cap = good, new, 2.0 * cap
            if bad is not None:
                bad = dict(bad, C=0.5 * bad["C"])
        else:
            bad = new
    raise SolverError("Algorithm 1's rate: the fold of the subordination branch was not found "
                      "(Newton's method fails along the branch)")


#: Grid points of the scans from infinity for the real edges (step 1).
SCAN = 16
#: The circles' radii: at most AMPLIFICATION^(1 / (2 T_max)) times the bound R of the
#: spectral radius (the double integrals amplify rounding by at most AMPLIFICATION); their
#: nodes make the aliasing error exp(-ALIAS) (step 2).
AMPLIFICATION, ALIAS = 1e6, 25.0


def local_extremes(gam, lam, eta, K):
    """(sup a, inf a) over the clients' spectra (the atom at 0 included when gamma_j > 1)."""
    tops = (1.0 + np.sqrt(gam)) ** 2
    bottoms = np.where(gam > 1, 0.0, (1.0 - np.sqrt(gam)) ** 2)
    ends = (1.0 - eta * (np.concatenate([bottoms, tops]) + lam)) ** K
    return float(ends.max()), float(ends.min())


def in_scope(gam, lam, eta, K, g) -> bool:
    """True where the round map has a non-real spectrum (odd K, inf a < 0, g lam > 1)."""
    if np.isinf(K) or K % 2 == 0 or g * lam <= 1.0:
        return False
    return local_extremes(gam, lam, eta, K)[1] < 0.0


def _root(f, lo, hi):
    from scipy.optimize import brentq
    return brentq(f, lo, hi, xtol=1e-13, rtol=1e-12)


def complex_contraction(gam, p, lam, eta, K, g, laws_cls) -> dict:
    """The real edges and the spectral-radius bound of step 1 (module docstring); ``laws_cls``
    the real-z client laws of psi_z (``algorithm1.laws.PsiLaws``), the inputs checked by
    ``inputs.check_step_scope`` (``algorithm1.rate``).

    Returns
    -------
    dict with ``contraction`` (R), ``top``, ``bottom`` (None when no real eigenvalue lies below
    inf a), ``lower`` (min(bottom, inf a)), ``disk`` (sqrt((g lam - 1) A)), ``exact`` (R is the
    spectral radius itself) and ``local`` (sup abs(a)).
    """
    sup_a, inf_a = local_extremes(gam, lam, eta, K)
    gl = g * lam
    solved = {}

    def f(z, which, sign=False):
        """F at z; with ``sign``, only its sign where Weyl's bounds on the edges of the free
        sum (sum_j of the laws' ends) already give it (no subordination solve). Each (z,
        which) solved once: ``_root`` asks first for the bracket's ends, which the scans
        solved (a pure solve, the same value)."""
        if (z, which) in solved:
            return solved[z, which]
        law = laws_cls(gam, p, lam, eta, K, z)
        left = (z - 1.0 + gl) / gl
        if sign and (left > np.sum(law.hi) if which else left < np.sum(law.lo)):
            return 1.0 if which else -1.0
        solved[z, which] = left - subordination.edge(law, "up" if which else "down")
        return solved[z, which]

    # Top: F > 0 for large z; scan down toward max(0, sup a) for the first sign change.
    base = max(sup_a, 0.0)
    hi = max(2.0 * base, 1.0)
    while f(hi, True) <= 0.0:
        hi *= 2.0
        if hi > 1e8:
            raise SolverError("Algorithm 1's rate: no upper bracket for the top of the round "
                              "map's spectrum")
    grid = base + (hi - base) * np.geomspace(1.0, 1e-6, SCAN)
    top = None
    prev = hi
    for z in grid[1:]:
        if f(z, True, sign=True) < 0.0:
            top = _root(lambda x: f(x, True), z, prev)
            break
        prev = z
    if top is None:
        raise SolverError("Algorithm 1's rate: the top of the round map's spectrum was not "
                          "bracketed above sup a")
    # Bottom: F < 0 as z -> -inf (and at 1 - g lam); scan up toward inf a.
    bottom = None
    lo = min(1.0 - gl, inf_a)
    if lo < inf_a:
        prev = lo
        for z in inf_a - (inf_a - lo) * np.geomspace(1.0, 1e-6, SCAN)[1:]:
            if f(z, False, sign=True) > 0.0:
                bottom = _root(lambda x: f(x, False), prev, z)
                break
            prev = z
    lower = min(bottom if bottom is not None else 0.0, inf_a)
    disk = float(np.sqrt((gl - 1.0) * -inf_a))
    rho = max(top, -lower, disk)
    real = max(top, -bottom if bottom is not None else 0.0)
    return {"contraction": rho, "top": top, "bottom": bottom, "lower": lower, "disk": disk,
            "exact": bool(real >= rho), "local": max(abs(sup_a), abs(inf_a))}


def subordinate(laws, zeta, path, where, weight=np.zeros_like):
    """``subordination.solve`` of Algorithm 1's client laws (``algorithm1.laws``) along
    ``path``, SolverError naming ``where``. Its Hermitian branch check (Im omega_j >= Im zeta)
    is off: a complex, node-dependent law need not satisfy it; ``weight`` is the sign check
    that does apply (``subordination.solve``'s; the default, 0, none: off a symmetric spectrum
    Im G has no sign, step 2)."""
    scale = float(np.sum(np.abs(laws.mean)) + np.sqrt(np.sum(laws.var)) + 1.0)
    try:
        return subordination.solve(laws, zeta, scale, path, check_branch=False, weight=weight)
    except SolverError as exc:
        raise SolverError(f"{where}: {exc}") from exc


def solve_point(laws, g, lam, z0, far):
    """(omega, G) of ``laws`` (``algorithm1.laws.NodeLaws``, its rule kept) at the real point
    z0 outside the round map's spectrum, followed down from z0 + i ``far`` (the distance's pole
    correction of ``algorithm1.curves``, step 3; no Hermitian check off a symmetric spectrum)."""
    gl = g * lam

    def zeta(t):
        laws.z = np.array([z0 + 1j * t])
        return (laws.z - 1.0 + gl) / gl
    path = [far * 0.5 ** k for k in range(60) if far * 0.5 ** k > 1e-3] + [0.0]
    return subordinate(laws, zeta, path, f"Algorithm 1's curves, the distance at z = {z0:g}")


def merge(part, fixed, finite, sp):
    """Step 3: the curves at the finite rounds ``finite`` (``part``, or None) and the fixed
    point (``fixed``, one column) in one result of ``algorithm1.curves.curves``, with the
    spectral data ``sp`` of the complex case."""
    if sp["contraction"] >= 1.0 and not sp["exact"]:
        raise SolverError("Algorithm 1's curves: rounds=inf with a round map whose spectral "
                          f"radius is only bounded (by {sp['contraction']:.6g} >= 1, "
                          "algorithm1.fold step 1): convergence is not known; ask finite rounds")
    nT = finite.size

    def join(a, b):
        out = np.empty(b.shape[:-1] + (nT,))
        if a is not None:
            out[..., finite] = a
        out[..., ~finite] = b[..., :1]
        return out
    get = (lambda key: part[key]) if part is not None else (lambda key: None)
    res = {"bias": join(get("bias"), fixed["bias"]),
           "variance": join(get("variance"), fixed["variance"]),
           "distance": join(get("distance"), np.zeros(1)),
           "contraction": sp["contraction"], "edges": (sp["lower"], sp["top"]),
           "contraction_is_bound": not sp["exact"], "atom": 0.0,
           "nodes": (part["nodes"] if part is not None else 0) + fixed["nodes"]}

    def local(terms=None):
        own = fixed["local"](terms)
        mine = part["local"](terms) if part is not None else (None, None)
        return join(mine[0], own[0]), join(mine[1], own[1])
    res["local"] = local
    return res


class _FixedLaws:
    """Client laws that do not depend on z (``ClientLaws``, ``prox_laws.ProxLaws``) in the
    interface of ``algorithm1.fold.fold``: with g lam = 1 there, z is the spectral variable of
    D itself and the fold is an edge of D."""

    def __init__(self, laws):
        self.laws, self.M = laws, laws.M

    def moments(self, z):
        return self.laws.mean, self.laws.var

    def terms(self, omega, z):
        E0, dE0 = self.laws.cauchy(omega)
        return E0.real, dE0.real, np.zeros(self.M)

    def outside(self, omega, z, sign):
        return bool(np.all(sign * (omega - (self.laws.top if sign > 0 else self.laws.bottom))
                           > 0))


def round_map_edges(laws):
    """``subordination.edges`` (a, b, mu0) of FedAvg's round map D (``dynamics.fedavg``; the
    exact prox's too), by the folds of ``fold`` (a
    few dozen Newton solves of M + 1 unknowns instead of scans) where they apply: M >= 2 and
    no atom of D at 0 (whose lower edge is on the gap branch); the scans otherwise, or where
    a fold is not found (an edge where an omega_j meets its law's spectrum, as for point
    masses)."""
    mu0 = subordination.atom_at_zero(laws)
    if mu0 == 0.0 and np.all(laws.top == laws.bottom):
        # Every a_j is p_j I (K = inf, gamma_j < 1): D is their sum exactly (the scan lost a
        # p_j of 2e-20 beside 1: a bottom edge -2.7e-11 for 1, "pooled N = d").
        return float(np.sum(laws.top)), float(np.sum(laws.top)), mu0
    if laws.M >= 2 and mu0 == 0.0 and np.any(laws.top > laws.bottom):
        try:
            fixed = _FixedLaws(laws)
            return fold(fixed, 1.0, -1.0), fold(fixed, 1.0, 1.0), mu0
        except SolverError:
            pass
    a, b, mu0 = subordination.edges(laws)
    # Weyl: D lies between the sums of the a_j's bottoms and tops; the scan lost a client of
    # weight 1.6e-15 beside a narrow law (gamma [1.6e-12, 977]: top 0.0206 for 2.684e-4, a
    # contraction 1.056 "diverging" for 0.973; or a bottom near 0, "pooled N = d").
    return (a if mu0 > 0 else max(a, float(np.sum(laws.bottom))),
            min(b, float(np.sum(laws.top))), mu0)
