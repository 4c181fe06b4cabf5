"""Paper 004's Algorithm 1 with K local steps under a shared covariance spectrum where its
round map has non-real eigenvalues (odd K, eta (L + lam) > 1, g lam > 1; derived here): the
disk that holds them, the real edges, and the circles the curves are integrated on.

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11; model and notation of
``sigma.algorithm1.curves`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), H the spectrum of Sigma) and of
``algorithm1.fold`` (Sigma = I): a(s) = (1 - eta (s + lam))^K, c(s) = (1 - a(s)) / (s + lam),
Dhat_z = z sum_j p_j lam c(S_j) (z - a(S_j))^(-1), zeta(z) = (z - 1 + g lam) / (g lam); L the
top of the clients' limiting sample spectra under H (``client_ends``,
``sigma.fedavg.one_step.edges``).

1. The disk. ``algorithm1.fold``'s step 1 uses only that a_j = a(S_j) and c_j = c(S_j) are
   functions of a symmetric S_j with c > 0 (x = 1 - eta (s + lam) lies in (-1, 1) for s in
   [0, L] when eta (L + lam) < 2, so c = eta (1 - x^K) / (1 - x) > 0) and a >= inf a on the
   spectra; Sigma never enters. So the same holds here, at every finite d: at a non-real
   eigenvalue z a unit null vector u of the Schur complement zeta(z) - Dhat_z gives
   (z - 1 + g lam) / (g lam z) = int dm(x) / (z - x), m the positive measure of u under the
   weights p_j lam c(S_j) on the values x of the a_j; its imaginary and real parts give
   int dm / abs(z - x)^2 = (g lam - 1) / (g lam abs(z)^2) and int x dm / abs(z - x)^2 =
   -1 / (g lam), so -abs(z)^2 / (g lam - 1), a mean of x, is at least inf a = -A:

       abs(z)^2 <= (g lam - 1) A,   A = -inf a = -(1 - eta (L + lam))^K

   (a = x^K is decreasing in s for odd K: its infimum sits at the top L). In the limit the
   same holds for approximate null vectors (the identities up to O(eps / Im z)), so the
   limiting spectrum off the real axis lies in the disk too, and the Schur complement's
   inverse is bounded outside a slightly larger one. The disk's radius is the Sigma = I one
   with L the spectrum's top: the covariance moves L, not the bound's form.
2. The real edges. Real eigenvalues lie in [min(bottom, inf a), top] (``algorithm1.fold``,
   step 1): top the largest real z > max(0, sup a) with zeta(z) = top(Dhat_z), bottom the
   smallest z < inf a with zeta(z) = bottom(Dhat_z) (Dhat_z symmetric and positive there).
   Neither edge equation is monotone, so each is first bracketed by Weyl bounds over each
   client's hull [bottom_j, top_j] (``_Hull``), then found by ``pencil_edges.edges``' density
   scans on the bracket (``_scan``). Top: sum_j p_j max psi_j >= top(Dhat_z), and
   zeta(z) - z sum_j p_j max lam c / (z - a) > z (1 / (g lam) - sum_j p_j max lam c / (z - a))
   for z > 0, whose second factor increases in z: above its root (brentq) no eigenvalue lies;
   below, a point with zeta(z) < max_j (p_j psi_j(end) + sum_(k != j) p_k min psi_k) (ends of
   the hull lie in the support; top(Dhat_z) is at least that) has an eigenvalue above it: the
   bracket's lower end (a scan from the root down, then bisection). Bottom: with u = -z > A,
   bottom(Dhat_z) >= sum_j p_j min psi_j, and that bound minus zeta(z), divided by u, is
   (g lam - 1) / (g lam u) - 1 / (g lam) - sum_j p_j min lam c / (u + a): a decreasing term
   plus an increasing one, so on [u1, u2] it is below the first at u1 plus the second at u2:
   negative on an interval proves no eigenvalue there; the certified intervals run from
   u = max(g lam - 1, A) (zeta < 0 <= Dhat beyond) down to the first that fails (refined on
   finer grids): the bracket's lower end; its upper end the first z above it with zeta(z) >
   min_j (p_j psi_j(end) + sum_(k != j) p_k max psi_k) >= bottom(Dhat_z) (an eigenvalue below
   it), or inf a. The density scans follow each real point x down from x + i far: the path
   stays outside the disk only where abs(x) > disk, so the scans stop at CUT times the disk's
   radius; an edge inside that (or not found past it) is replaced by the bound CUT disk. The
   spectral radius is at most R = max(top, -lower, disk), lower = min(bottom, inf a) (or the
   bound), exact (``exact``) when a real edge found beyond CUT^2 disk is the largest. The
   bottom is not scanned when the top found dominates its bracket's lower end (lower is then
   that end, a bound).
   Measured against ``algorithm1.fold`` (Sigma = I, the spectrum [1]): top 9e-13 (K = 1,
   g lam = 2), 1e-12 (K = 3, g lam = 1.5), bottom 5e-14 (K = 1, g lam = 3, past -1).
3. The curves: ``sigma.algorithm1.curves``'s integrals (the pencil, its deterministic
   equivalent and two-point function, steps 1-3 there) on the circle abs(z) = r around the
   disk of radius R instead of its ellipse. Every finite-T integrand is z^T or P_T(z) (a
   polynomial) times a function analytic outside the spectrum, so any contour around it
   serves (z = 1 may lie inside); T = inf and settled rounds are the point z = 1 (G(1) =
   (1 - Phi)^(-1), reached from 1 + i far), which lies outside the disk when R < 1. Rounding
   is amplified by at most (r / max(1, rho))^(2 T_max) (rho the true spectral radius, the
   risk of order max(1, rho)^(2T)): r = max(1, R) min(AMPLIFICATION^(1 / (2 T_max)), 2)
   (``algorithm1.fold``'s constants), and the trapezoid rule's aliasing is (R / r)^N:
   N = T_max + 16 + ALIAS / log(r / R) nodes (``circle``). The pencil solves continue the
   deterministic equivalent from infinity (every node followed down from z + i far: the path
   stays outside the circle); no Hermitian branch check applies (G_00 is not the compressed
   resolvent of a symmetric matrix), ``circle_pencil``. Checked in
   ``tests/test_rounds_sigma_alg1_complex.py`` by routes a contour cannot fake: the risk at
   fixed T is a polynomial of degree 2T in g, fitted where g lam <= 1 (the real-spectrum
   routes) and extrapolated; Sigma = I (one atom) against ``algorithm1.fold``'s circles; the
   literal round map's eigenvalues at finite d; T = inf against ``clients_limit("pfedme")``
   (and, measured outside the suite, the chain route against the dense one: 9e-12). rounds=inf
   with R >= 1 only a bound is refused (convergence unknown). Where R > 1 is only a bound,
   rounding at T grows like (R / rho)^(2T) with the true rho unknown: not guarded.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.fold import ALIAS, AMPLIFICATION
from riskcalc.linear.dynamics.inputs import check_step_scope
from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges as sigma_edges
from riskcalc.linear.dynamics.sigma.pencil_edges import EDGES_MEMO, edges

#: Points of each client's sample-spectrum hull on which the Weyl bounds take min and max.
HULL = 2001
#: Real points x with abs(x) below CUT times the disk radius are not scanned (step 2).
CUT = 1.01


def client_ends(gam, spectrum):
    """[bottom, top] of each client's limiting sample spectrum under H (from 0 when
    gamma_j >= 1: the atom), as ``sigma.algorithm1.pencil.spectrum_edges`` reads them."""
    ends = np.array([sigma_edges(spectrum.atoms, spectrum.weights, np.array([gj]),
                                 np.array([1.0]))[:2] for gj in gam])
    ends[gam >= 1.0, 0] = 0.0
    return ends


def in_scope(gam, lam, eta, K, g, spectrum):
    """The clients' spectrum ends (``client_ends``) where the round map's spectrum leaves the
    real axis (odd K, eta (L + lam) > 1, g lam > 1; L the top of the clients' sample spectra),
    else None (K even or infinite and g lam <= 1 are decided without the edges)."""
    if np.isinf(K) or K % 2 == 0 or g * lam <= 1.0:
        return None
    ends = client_ends(gam, spectrum)
    return ends if eta * (ends[:, 1].max() + lam) > 1.0 else None


class _Hull:
    """a(s), lam c(s) on a grid of each client's hull [bottom_j, top_j] (M, HULL), the ends
    first and last: the Weyl bounds of step 2."""

    def __init__(self, p, lam, eta, K, ends):
        s = ends[:, :1] + np.linspace(0.0, 1.0, HULL)[None, :] * (ends[:, 1:] - ends[:, :1])
        self.p = p
        self.a = (1.0 - eta * (s + lam)) ** K
        self.lc = lam * (1.0 - self.a) / (s + lam)

    def ratio(self, z):
        """lam c / (z - a) at real z (Z,): (Z, M, HULL); psi_z = z times it."""
        return self.lc[None] / (np.asarray(z, float)[:, None, None] - self.a[None])

    def bounds(self, z):
        """At real z (Z,) outside [inf a, sup a]: a lower bound of top(Dhat_z) and an upper bound
        of bottom(Dhat_z), Dhat_z = sum_j p_j psi_z(S_j) (Weyl), each client's extreme that
        must lie in its support taken at the hull's ends."""
        z = np.asarray(z, float)
        psi = z[:, None, None] * self.ratio(z)
        lo, hi = psi.min(axis=2) * self.p, psi.max(axis=2) * self.p
        ends = psi[:, :, [0, -1]] * self.p[:, None]
        return (lo.sum(axis=1) + np.max(ends.max(axis=2) - lo, axis=1),
                hi.sum(axis=1) + np.min(ends.min(axis=2) - hi, axis=1))


def _top_window(hull, gl, base):
    """(lo, hi) with the top real eigenvalue above ``base`` = max(0, sup a) inside (step 2);
    None when no real eigenvalue lies above base."""
    from scipy.optimize import brentq

    def cert(z):       # increasing in z; >= 0: no eigenvalue at or above z
        return 1.0 / gl - float(np.sum(hull.p * hull.ratio([z])[0].max(axis=1)))

    z0 = base + 1e-12 * max(1.0, base)
    if cert(z0) >= 0.0:
        return None
    hi = max(2.0 * base, 1.0)
    while cert(hi) < 0.0:
        hi *= 2.0
        if hi > 1e12:
            raise SolverError("Algorithm 1's curves: no upper bound for the top of the round "
                              "map's spectrum")
    hi = brentq(cert, z0, hi, xtol=1e-14 * hi, rtol=1e-14)
    # The hull grid's max can fall short of the true one by O(h^2): a margin (scanned too).
    hi += 0.02 * (hi - base) + 1e-9 * max(1.0, hi)

    def below(z):      # < 0: zeta(z) < top(Dhat_z), so an eigenvalue lies above z
        return (z - 1.0 + gl) / gl - hull.bounds(np.atleast_1d(z))[0]

    zs = base + (hi - base) * np.geomspace(1.0, 1e-9, 400)
    f = below(zs)
    neg = np.flatnonzero(f < 0.0)
    if neg.size == 0:
        return base, hi
    k = neg[0]
    if k == 0:
        return zs[0], hi
    lo, up = zs[k], zs[k - 1]
    for _ in range(40):
        mid = 0.5 * (lo + up)
        if below(mid)[0] < 0.0:
            lo = mid
        else:
            up = mid
    return lo, hi


def _bottom_window(hull, gl, A):
    """(lo, hi, found) for the real eigenvalues below inf a = -A (step 2): none below lo
    (certified), and, when ``found``, one at or below hi; None when none lies below -A."""
    u0 = max(gl - 1.0, A)

    def t1(u):
        return (gl - 1.0) / (gl * u)

    def t3(u):         # increasing in u
        r = hull.lc[None] / (np.asarray(u, float)[:, None, None] + hull.a[None])
        return -np.sum(hull.p * r.min(axis=2), axis=1)

    if u0 <= A:
        return None
    us = A + (u0 - A) * np.geomspace(1.0, 1e-9, 400)      # descending
    top = None
    for _ in range(4):          # the first interval that fails, on finer grids inside it
        fail = np.flatnonzero(t1(us[1:]) - 1.0 / gl + t3(us[:-1]) >= 0.0)
        if fail.size == 0:      # (the coarser interval's failure was the bound's slack)
            break
        k = fail[0]
        top = us[k]
        us = np.linspace(us[k], us[k + 1], 100)
    if top is None:             # certified down to inf a (within 1e-9 of its distance)
        return None
    lo = -top
    zs = -(A + (top - A) * np.geomspace(1.0, 1e-9, 400))     # ascending from lo
    zeta = (zs - 1.0 + gl) / gl
    above = np.flatnonzero(zeta > hull.bounds(zs)[1])
    # The hull grid's min can exceed the true one by O(h^2): a margin below lo (scanned too).
    lo -= 0.02 * (-A - lo)
    if above.size:
        return lo, zs[above[0]], True
    return lo, -A, False


def _scan(pencil_cls, args, lo, hi, top_j, reflect):
    """The edge of the real spectrum in [lo, hi] nearest hi (``reflect``) or lo, by
    ``pencil_edges.edges``' density scans with the pencil ``pencil_cls(*args, shift, sign)``
    (every scanned point inside [lo, hi]); None when no point of the scan lies in it."""
    pad = 0.01 * (hi - lo)
    if reflect:
        shift, width, sign = hi + pad, hi + pad - lo, -1.0
    else:
        shift, width, sign = lo - pad, hi - lo + pad, 1.0
    pen = pencil_cls(*args, shift=shift, sign=sign)
    p = args[3]
    try:
        a, _, _ = edges(pen, top_j, qmax=np.full(p.size, width / (1.01 * np.sum(p))))
    except SolverError as exc:
        if "not found on the scan" not in str(exc):
            raise
        return None
    return shift + sign * a


@lru_cache(maxsize=EDGES_MEMO)
def circle_pencil(cls, far):
    """``cls`` (``Alg1Pencil`` or ``Alg1Chain``) whose solves follow every node from y = ``far``
    above it when they start from scratch, with no Hermitian branch check (step 3); one class
    per (cls, far) (kept: ``pencil_edges.edges`` keeps the scans of equal pencils of one
    class)."""

    class Circle(cls):
        def solve(self, nodes, path, check=True, tau0=None, tolerant=False):
            path = list(path)
            if tau0 is None and 0.0 < path[0] < far:
                steps = 1 + int(np.ceil(np.log(far / path[0]) / np.log(3.0)))
                path = list(np.geomspace(far, path[0], steps)) + path[1:]
            return super().solve(nodes, path, False, tau0, tolerant)

    Circle.__name__ = Circle.__qualname__ = f"Circle{cls.__name__}"
    return Circle


def complex_edges(gam, p, lam, eta, K, g, spectrum, ends, pencil):
    """The real edges and the spectral-radius bound of steps 1-2 (module docstring) under
    ``spectrum``, ``ends`` the clients' spectrum ends (``client_ends``), ``pencil`` the class
    of the density scans (``Alg1Pencil`` or ``Alg1Chain``).

    Returns
    -------
    dict with ``contraction`` (R), ``top``, ``bottom`` (None when not found), ``lower``,
    ``disk``, ``exact`` (R is the spectral radius itself), ``local`` (sup abs(a)) and
    ``pencil`` (``circle_pencil`` of ``pencil``).
    """
    L = float(ends[:, 1].max())
    check_step_scope(gam, L, lam, eta, K, g, "the top of the clients' sample spectra",
                     complex_ok=True)
    gl = g * lam
    # x = 1 - eta (s + lam) is linear in s, so a = x^K is extreme at the hulls' ends.
    vals = (1.0 - eta * (ends + lam)) ** K
    sup_a, inf_a = float(vals.max()), float(vals.min())
    A = -inf_a
    disk = float(np.sqrt((gl - 1.0) * A))
    cut = CUT * disk
    hull = _Hull(p, lam, eta, K, ends)
    base = max(0.0, sup_a)
    win_t = _top_window(hull, gl, base)
    win_b = _bottom_window(hull, gl, A)
    far = 4.0 * max(1.0, disk, win_t[1] if win_t else 0.0, -win_b[0] if win_b else 0.0)
    cls = circle_pencil(pencil, far)
    args = (spectrum.atoms, spectrum.weights, gam, p, lam, eta, K, g)
    top_j = ends[:, 1]
    # The top: the largest real eigenvalue, or a bound of it (not exact).
    top, top_exact = base, False
    if win_t is not None and win_t[1] <= cut:
        top = win_t[1]
    elif win_t is not None:
        # Below the window's lower end by a margin: with one client the certified end is the
        # top itself (the hull bounds are tight), and the scan needs a point inside.
        lo = max(win_t[0] - 0.02 * (win_t[1] - win_t[0]) - 1e-9 * max(1.0, win_t[1]), cut)
        hi = win_t[1]
        found = _scan(cls, args, lo, hi, top_j, True)
        if found is None and win_t[0] >= cut:
            raise SolverError("Algorithm 1's curves: the density scan missed the top of the "
                              f"round map's spectrum in [{lo:.6g}, {hi:.6g}]")
        top = cut if found is None else found
        top_exact = found is not None and found >= CUT * cut
    # The bottom: the smallest real eigenvalue below inf a, or a lower bound of the spectrum.
    bottom, lower = None, inf_a
    if win_b is not None:
        lo, hi, certain = win_b
        if lo >= -cut or (top_exact and top >= -lo):
            lower = lo      # (nothing to scan, or the top already dominates the bound)
        else:
            found = _scan(cls, args, lo, min(hi, -cut), top_j, False)
            if found is None and certain and hi <= -cut:
                raise SolverError("Algorithm 1's curves: the density scan missed the bottom of "
                                  f"the round map's spectrum in [{lo:.6g}, {hi:.6g}]")
            lower = -cut if found is None else found
            bottom = found if found is not None and found <= -CUT * cut else None
        lower = min(lower, inf_a)
    R = max(top, -lower, disk)
    real = max(top if top_exact else 0.0, -bottom if bottom is not None else 0.0)
    return {"contraction": R, "top": top, "bottom": bottom, "lower": lower, "disk": disk,
            "exact": bool(real >= R), "local": max(abs(sup_a), abs(inf_a)), "pencil": cls}


def circle(R, t_max):
    """Upper-half nodes z, weights w ((1 / 2 pi i) oint f dz = sum Im(f w) for real-symmetric
    f) and the node count n of the circle of step 3 around the disk of radius ``R``."""
    r = max(1.0, R) * min(AMPLIFICATION ** (0.5 / max(t_max, 1)), 2.0)
    n = int(t_max + 16 + np.ceil(ALIAS / np.log(r / R)))
    n += (-n) % 8
    theta = np.pi * (np.arange(n // 2) + 0.5) / (n // 2)
    z = r * np.exp(1j * theta)
    return z, 2j * z / n, n


def plan(gam, p, lam, eta, K, g, spectrum, rounds, pencil):
    """None where the round map's spectrum is real (``in_scope``), else ``complex_edges``' dict
    with ``edges`` = (top, None, lower) (``spectrum_edges``' form: lower in place of its low)
    and ``nodes(t_max)`` = ``circle(R, t_max)``; a ValueError for rounds=inf when R >= 1 is
    only a bound (whether the iteration converges is then not known)."""
    ends = in_scope(gam, lam, eta, K, g, spectrum)
    if ends is None:
        return None
    sp = complex_edges(gam, p, lam, eta, K, g, spectrum, ends, pencil)
    R = sp["contraction"]
    if not sp["exact"] and R >= 1.0 and np.any(np.isinf(rounds)):
        raise ValueError("rounds=inf: Algorithm 1's round map has complex eigenvalues here and "
                         f"its spectral radius is only bounded (by {R:.6g} >= 1, the disk bound "
                         "of sigma.algorithm1.circles): whether the iteration converges is not "
                         "known; ask finite rounds")
    sp["edges"] = (sp["top"], None, sp["lower"])
    sp["nodes"] = lambda t_max: circle(R, t_max)
    return sp
