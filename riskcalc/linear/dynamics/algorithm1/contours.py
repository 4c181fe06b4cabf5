"""The two contours of paper 004's Algorithm 1 curves with K local steps, Sigma = I
(``algorithm1.curves``, ``004_98172ed3646eef14.txt`` Appendix B.1, eqs. 10-11): ellipses
around a real spectrum of the round map (``algorithm1.curves``' module docstring, step 6) or
circles around a non-real one (``algorithm1.fold``'s module docstring, step 2), each with the
subordination solution at its nodes and the Marchenko-Pastur rule that solution needs.

The rule doubles from ``Q_START`` nodes per client until the subordination equations hold to
``RULE_TOL`` under a rule of twice as many (``accepted_rule``, one loop for both shapes). The
work of the whole curves grows with the rule (``algorithm1.cost``), so ``budget(q)`` is called
before each rule is tried: a refusal comes before that rule's work, not after the contours
(which, at a very small eta lam, took minutes or the machine's memory first).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.cost import fix_nodes, why_nodes
from riskcalc.linear.dynamics.algorithm1.fold import ALIAS, AMPLIFICATION, subordinate
from riskcalc.linear.dynamics.fedavg import MAX_NODES, _contour

#: Quadrature nodes per client: first rule, and the most tried before giving up.
Q_START, Q_MAX = 64, 4096
#: Residual of the subordination equations under the doubled rule that accepts a rule.
RULE_TOL = 1e-11
#: Most cells M x N/2 x N of the circles' two-point arrays (each complex: 100 MB at the limit).
MAX_CIRCLE_CELLS = 6e6


def accepted_rule(make_laws, solve, budget, hint):
    """The first rule of ``Q_START``, 2 ``Q_START``, ... nodes whose solution ``solve(laws)``
    -> (omega, G) (setting ``laws.z``) holds to ``RULE_TOL`` under the doubled rule
    (``make_laws(q)``), after ``budget(q)``: (laws, omega, G). SolverError beyond ``Q_MAX``,
    with ``hint``."""
    q = Q_START
    while q <= Q_MAX:
        budget(q)
        laws = make_laws(q)
        omega, G = solve(laws)
        check = make_laws(2 * q)
        check.z = laws.z
        E0, _ = check.cauchy(omega)
        if np.max(np.abs(E0 - G) / np.abs(G)) <= RULE_TOL:
            return laws, omega, G
        q *= 2
    raise SolverError(f"Algorithm 1's curves: the Marchenko-Pastur rule did not reach "
                      f"{RULE_TOL:g} with {Q_MAX} nodes ({hint})")


#: Least 1 - sup a (``check_top_gap``) with which the curves' edge solve is tried.
TOP_GAP = 1e-9


def check_top_gap(gam, lam, eta, K, gl, top=None):
    """SolverError before the round map's edge solve where its top is within ``TOP_GAP`` of 1.
    The top is at least sup a, a(s) = (1 - eta (s + lam))^K over the clients' sample spectra
    (``algorithm1.rate``), and at least 1 - g lam (``gl``: the w block of the symmetrized map,
    1 - g lam + g lam^2 sum_j p_j c_j; where it is not symmetric, g lam > 1). With 1 - top at
    most 1e-9 no contour of ``MAX_NODES`` nodes resolves the curves (measured, gamma (0.5, 2),
    K = 2, eta 0.1: 1 - top from 1.6e-9 down refused for its nodes), while the edge solve
    itself took 11-12 s at lam 1e-9 and at lam 1e-12 found a contraction 1 + 6.5e-12, refused
    as a divergence; under a spectrum the scans said "not found" or blamed pooled N near d
    (fuzz40 path F8). ``top``: the covariance's largest eigenvalue (None: Sigma = I, whose
    sample spectra are [(1 - sqrt g)^2, (1 + sqrt g)^2] exactly; else the bottom of each is at
    most top (1 - sqrt g)^2, 0 where gamma_j > 1; pooled samples that do not span:
    ``local_gap``). Local steps at or past their stability edge (eta (L + lam) >= 2, L bounded
    by top (1 + sqrt g)^2) are left to the routes."""
    local = local_gap(gam, lam, eta, K, top)
    if local is None:
        return      # the routes' own scope checks say why (diverging local steps)
    if min(local, gl) < TOP_GAP:
        why = ("its local steps' slowest factor (1 - step_size (s + lam))^K on the clients' "
               "sample spectra" if local <= gl else "the server step global_step lam")
        raise SolverError(f"Algorithm 1's curves: the round map's top 1 - {min(local, gl):.2g} "
                          f"or nearer ({why}) is so near 1 that its contour needs more than "
                          f"{MAX_NODES} nodes; {fix_nodes(0.0, gam, gl)}")


def local_gap(gam, lam, eta, K, top=None):
    """min over the clients' sample spectra of 1 - a(s), a(s) = (1 - eta (s + lam))^K: the round
    map's top is at least 1 minus it (``check_top_gap``; ``top`` as there); None where the local
    steps reach their stability edge. Pooled samples that do not span: on the pooled range,
    where each client's null space still meets the others' ranges (dimension sum over k != j of
    1 / gamma_k), but for one client, whose null space is the common one held apart (they gave
    numpy's "Array must not contain infs or NaNs" at lam 1e-9; fuzz41 path F12)."""
    scale = 1.0 if top is None else top
    if eta * (scale * np.max((1.0 + np.sqrt(gam)) ** 2) + lam) >= 2.0:
        return None
    low = np.where((gam > 1.0) & (gam.size > 1), 0.0, scale * (1.0 - np.sqrt(gam)) ** 2)
    x_low = eta * (low + lam)
    with np.errstate(invalid="ignore", divide="ignore"):    # x_low >= 1: far from 1
        precise = -np.expm1(K * np.log1p(-x_low))              # 1 - a, no cancellation
    # a decreases on [0, x_low] where x_low < 1 (a bound at the sample spectrum's bottom)
    gap = np.where(x_low < 1.0, precise, 1.0 if top is not None else 1.0 - (1.0 - x_low) ** K)
    if top is None:     # the top edge (1 + sqrt g)^2 is in the sample spectrum too (an even K
        # at the stability edge: a there near 1)
        gap = np.minimum(gap, 1.0 - (1.0 - eta * ((1.0 + np.sqrt(gam)) ** 2 + lam)) ** K)
    return float(np.min(gap))


def ellipses(lo, hi, rho, t_max, top, gam, gl=None):
    """``fedavg._contour``'s (c0, h, t, n) of the outer and the inner ellipse in x = 1 - z
    (spectrum [1 - hi, 1 - lo], pole of P_inf at x = 0), ``top`` the round map's top, ``gam``
    the clients' gamma_j, ``gl`` the server step global_step lam (for the message)."""
    try:
        return [_contour(1.0 - hi, 1.0 - lo, 1.0, rho, t_max, shrink, degree=1)
                for shrink in (1.0, 0.7)]
    except SolverError as exc:
        # Its nodes grow like 1 / sqrt(1 - top) here, not with a spectrum near 0 (FedAvg's).
        raise SolverError(f"Algorithm 1's curves: {why_nodes(top, rho)} its contour needs more "
                          f"than {MAX_NODES} nodes; {fix_nodes(rho, gam, gl)}") from exc


def solve_ellipse(make_laws, g, lam, lo, hi, ellipse, budget):
    """Nodes z, weights w (oint f dz / 2 pi i = sum Im(f w)), omega, G (the Cauchy transform of
    Dhat_z at zeta(z)) on the upper half of ``ellipse`` (``ellipses``), and the accepted laws
    (``make_laws(q)``, ``algorithm1.laws.NodeLaws``)."""
    c0x, h, t, n = ellipse
    c0 = 1.0 - c0x
    theta = np.pi * (np.arange(n // 2) + 0.5) / (n // 2)
    gl = g * lam
    t_far = max(np.arcsinh(8.0 * max(abs(hi), abs(lo), 1.0) / h), 2.0 * t)
    path = [t + (t_far - t) * 0.5 ** k for k in range(60) if (t_far - t) * 0.5 ** k > 0.25 * t]
    path.append(t)

    def solve(laws):
        def zeta(tt):
            laws.z = c0 + h * np.cosh(tt) * np.cos(theta) + 1j * h * np.sinh(tt) * np.sin(theta)
            return (laws.z - 1.0 + gl) / gl
        # Only Im G < 0 (Gc is a compressed resolvent of a symmetric matrix) is required here,
        # or, where a(s) < 0 somewhere (``algorithm1.curves``' module docstring, step 2),
        # Im(z G) < 0 above the real axis.
        return subordinate(laws, zeta, path, "Algorithm 1's curves",
                           (lambda zt: 1.0 - gl + gl * zt) if np.any(laws.a < 0) else None)
    laws, omega, G = accepted_rule(make_laws, solve, budget, "the contour passes too close to "
                                   "the spectrum: its top nears 1 as eta lam -> 0 and as lam "
                                   "grows past the clients' sample eigenvalues; "
                                   + fix_nodes(0.0))
    dz = -h * np.cosh(t) * np.sin(theta) + 1j * h * np.sinh(t) * np.cos(theta)
    return laws.z, dz * (2.0 / n), omega, G, laws


def circles(R, t_max):
    """Radii and node counts of the two circles (outer, inner) around a non-real spectrum of
    bound ``R`` (``algorithm1.fold``, step 2), for rounds up to ``t_max``."""
    R = max(R, 1e-3)
    r_out = R * AMPLIFICATION ** (0.5 / max(t_max, 1))
    radii = [R * (r_out / R) ** frac for frac in (1.0, 0.7)]
    sizes = [int(t_max + 16 + np.ceil(ALIAS / np.log(r / R))) for r in radii]
    return radii, [n + (-n) % 8 for n in sizes]


def solve_circles(make_laws, M, g, lam, R, t_max, budget):
    """The two circles of ``circles``: for each, nodes z (upper half), weights w (oint f dz /
    2 pi i = sum Im(f w)), omega, G, and the accepted laws (``make_laws(q)``)."""
    gl = g * lam
    radii, sizes = circles(R, t_max)
    if M * sizes[0] / 2 * sizes[1] > MAX_CIRCLE_CELLS:
        raise SolverError(f"Algorithm 1's curves: {sizes} nodes on the circles around the "
                          f"non-real spectrum for {M} clients (more than "
                          f"{MAX_CIRCLE_CELLS:.0g} cells of two-point arrays): ask fewer "
                          "rounds (the nodes grow like 5.5 T_max)")
    out = []
    for r, n in zip(radii, sizes):
        unit = np.exp(1j * np.pi * (np.arange(n // 2) + 0.5) / (n // 2))
        far = 8.0 * max(1.0, R)
        path = [r + (far - r) * 0.5 ** k for k in range(60) if (far - r) * 0.5 ** k > 0.05 * r]
        path.append(r)

        def solve(laws, unit=unit, path=path):
            def zeta(rad):
                laws.z = rad * unit
                return (laws.z - 1.0 + gl) / gl
            return subordinate(laws, zeta, path, "Algorithm 1's curves")
        laws, omega, G = accepted_rule(make_laws, solve, budget, "the circles' nodes too near "
                                       "the spectrum")
        out.append((laws.z, 2j * laws.z / n, omega, G, laws))
    return out
