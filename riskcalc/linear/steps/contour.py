"""Finite-step filter integrals under a general covariance, by contour integrals around the
support of the Sigma-weighted limiting spectrum of S (paper 003, ``003_4b976ddf5225c17e.txt``,
Sec. 7, Algs. 5-6 under Assumption A2; the derivation is ``riskcalc.linear.steps.limits``'
module docstring, whose ``steps_limit`` routes here for a spectrum other than the identity).
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart
from riskcalc.errors import IntegrandOverflow, SolverError
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.steps import edge as steps_edge
from riskcalc.linear.steps import finite_clients as finite_clients_steps

#: The general route solves Silverstein's equation at every node (to ~1e-15); 1e-11 leaves
#: room for the rounding of the contour sum.
RTOL_GENERAL = 1e-11
#: ... and its absolute one (times the mean eigenvalue): the Stieltjes transform's ~1e-13 noise
#: near s = 0, below which gamma = 1 after 4e5 steps of 0.1 was refused (the bias is now within
#: 6e-14 of Sigma = I's quadrature under 1.0000005 I; fuzz38 steps F7).
ATOL_GENERAL = 1e-13
MAX_CONTOUR_NODES = 2 ** 15
#: A bias below SPLIT of the mass int t dH may lie below one contour's tolerance, ATOL_GENERAL
#: of that mass (two-point:1e-8,1e8,0.5: bias 5.8e-9 for 6.67e-9; fuzz41 F2): gaps in the
#: support with less than SPLIT of the mass below them then split it into bands.
SPLIT = ATOL_GENERAL / RTOL_GENERAL
#: ... at most at the 4 widest such gaps, each spanning a factor WIDE at least (powerlaw:2,1000
#: at gamma 0.01 has 144 gaps of ~3e-6 relative, which one contour resolves: 60x the time
#: for nothing), each band's ellipse within BAND_NODES nodes, else one contour (2^8 left a
#: decayed band, ~20 sqrt(eta k h / 2) nodes for h its half width, to the one contour: bias
#: 0.0615 for mpmath's 0.0606 after 7773 steps; fuzz42 steps F6).
WIDE, BAND_NODES = 4.0, 2 ** 12
#: Where the bands fail, one contour's bias below SPLIT of the mass stands if it is RESOLVED
#: times its tolerance at least (else refused): on 10 such spectra (1 + 30 to 200 atoms over
#: [1e8, 1e14], gamma 0.7-0.9, 1e4-2e6 steps) within 3e-10 relative (2.6e-6 of the tolerance)
#: of the bands with 32768 nodes; 60 atoms after 499066 steps of 7.28e-15 at gamma 0.7 were
#: refused where it gives 2272.796483 (fuzz42 steps2 F2).
RESOLVED = 1e3


def spectral_filter_integrals(gamma, lam, steps, step_size, spectrum):
    """``steps.limits.filter_integrals`` for a general covariance: ``int (1 - f)^2 dnu`` and
    ``gamma int f^2 / s dnu`` with nu the Sigma-weighted limiting spectrum of S.

    Paper 003 Sec. 7 (Algs. 5-6) under Assumption A2 (derivation in ``steps.limits``' module
    docstring).
    Contour integrals (``riskcalc.linear.engine.weighted_mp.contour_integrals``) around either the
    continuous part [x_lo, x_hi] (the atom at 0 added as phi(0) nu({0})) or [0, x_hi] with
    the atom inside, whichever keeps the contour relatively farther from the singularities:
    the pole of f at -lam and, for lam = 0, the growth of (1 - eta s)^k off [0, 2/eta]; a bias
    below ``SPLIT`` of the mass int t dH again on one ellipse per band where gaps split the
    support (``_banded``). Arguments broadcast together.
    """
    gamma, lam, k, eta = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (gamma, lam, steps, step_size)))
    weighted_mp.check_values(spectrum.atoms.size)
    bias, var = np.empty(gamma.shape), np.empty(gamma.shape)
    edges, atoms, gaps = {}, {}, {}
    for idx in np.ndindex(gamma.shape):
        g, l, kk, e = float(gamma[idx]), float(lam[idx]), float(k[idx]), float(eta[idx])
        if g not in edges:
            edges[g] = weighted_mp.support_edges(g, spectrum)
            atoms[g] = weighted_mp.atom_at_zero(g, spectrum)
        lo, hi = edges[g]
        if kk == 0:     # R_0 = I at any step: a stable one's contour (1e308 gave inf; steps2 F5)
            e = 1.0 / (l + hi)
        # Right of the support |1 - eta (s + lam)| may outgrow its top-edge value by about e^2
        # over 2k powers (inside the stable disk when there is room). At the edge, to within
        # 1 / k, that is the wider: within 8 eps of it the contour was refused for 10 steps,
        # or took the divergent branch, refused at 1e6 steps as "past the stability limit"
        # (fuzz39 steps F1); the k-th power's rounding then counts as past it.
        with np.errstate(over="ignore", invalid="ignore"):    # step_size 1e308 (steps2 F4)
            top = e * (l + hi)
            room, reach_k = 0.5 * (2.0 / e - l - hi), (top - 1.0) / max(kk * e, e)
        if np.isinf(top) and kk > 0:     # overflows on every contour (below), without warnings
            bias[idx] = var[idx] = np.inf
            continue
        edge = reach_k >= room
        cap = max(room, reach_k)
        past = bool(steps_edge.past_edge(top))
        # (half the gap to 0). A continuous part narrower than rounding (gamma 1e100: x_lo =
        # x_hi) has no ellipse of its own: around [0, x_hi] only (fuzz39 steps F9).
        ratio_cut = min(0.5 * lo, cap) / (hi - lo) if g != 1 and hi > lo else -np.inf
        # Around [0, x_hi]: stay right of the pole -lam, or where (1 + eta delta)^(2k) <= e^2.
        # After k steps the pole at -lam is removable, and weak where eta k lam < 1: then
        # delta = lam + 1 / (eta k) (lam / 2 refused gamma = 1, lam = 1e-8 after 10 steps,
        # "fewer steps or a smaller step size answer"; fuzz38 steps F8).
        weak = kk > 0 and kk * e * l < 1.0
        reach = l + 1.0 / (kk * e) if weak else 0.5 * l if l > 0 else np.inf
        if past:    # the power is largest right of the support: reach as far left of 0 (1 /
            # (eta k) = 10 made an ellipse too thin for Silverstein's fixed point 2e7 times
            # past the edge under two-point:1e-8,1e8,0.5, refused; fuzz42 steps F2)
            reach = max(reach, cap)
        margin_all = min(reach, cap, 0.25 * hi)
        routes = [((lo, hi), min(0.5 * lo, cap), atoms[g]), ((0.0, hi), margin_all, 0.0)]
        if ratio_cut < margin_all / hi:
            routes.reverse()
        if ratio_cut <= 0:
            routes = routes[:1]
        if past:    # the bands first (``_banded``): the one contour's nodes near a band under
            routes.insert(0, (None, 0.0, 0.0))    # a gap failed or took minutes (fuzz41 F3)

        def one_minus_power(z, l=l, kk=kk, e=e):
            return -_expm1(kk * _log1p(-e * (z + l)))

        def phi_bias(z, l=l, kk=kk, e=e):
            # (lam + z q^k) / (z + lam), not 1 - z (1 - q^k) / (z + lam): where q^k is small
            # that lost ~eps / q^k of its relative digits (a band with its bias 1e-11 on the
            # contour summed a noise of 5e-16 to its 5.4e-18; fuzz41 steps F2).
            power = np.exp(kk * _log1p(-e * (z + l)))
            return (power if l == 0 else (l + z * power) / (z + l)) ** 2

        def phi_var(z, l=l):
            return z * (one_minus_power(z) / (z + l)) ** 2

        def banded(g=g, kk=kk, e=e, cap=cap, reach=reach, edge=edge, past=past):
            if g not in gaps:
                gaps[g] = [gap for gap in weighted_mp.support_gaps(
                    g, spectrum, SPLIT * spectrum.mean) if gap[1] >= WIDE * gap[0]]
            return gaps[g] and _banded((phi_bias, phi_var), g, spectrum, gaps[g], (lo, hi),
                                       cap, reach, atoms[g], kk if edge else 0.0, past,
                                       (l, kk, e))

        for foci, margin, atom in routes:
            if foci is None:
                if got := banded():
                    (b, v), atom = got
                    break
                continue
            # Resolved from nodes x (rho - 1) ~ 11-18 (rho the ellipse's), settled a doubling
            # later: beyond, skipped (gamma 1 after 1e7 steps failed in 30 s; fuzz38 F10). Near
            # gamma = 1 but not at it, x_lo > 0 inside [0, x_hi]: settled at 22-88, none with
            # 32768 (rho - 1) < 56 (gamma 1.001, 1e6 steps: refused after 20 s; steps2 F19).
            if not past and _too_many(foci, margin, lo, g):
                failed = SolverError(
                    "finite-step integral: the contour rule would need more than "
                    f"{MAX_CONTOUR_NODES} nodes"
                    + (_AT_EDGE.format(shown_apart(e * (l + hi), 2.0)) if edge else ""))
                continue
            try:
                # Past the stability edge the values are resolved to the rounding of the k-th
                # power on the contour (contour_integrals' power), not to RTOL_GENERAL.
                b, v = weighted_mp.contour_integrals(
                    (phi_bias, phi_var), g, spectrum, foci=foci, margin=margin,
                    # The variance is scale-free: ATOL_GENERAL of the mean eigenvalue 3.1e12
                    # left it 6.9e-6 off (fuzz42 steps F10).
                    rtol=RTOL_GENERAL, atol=(ATOL_GENERAL * spectrum.mean, ATOL_GENERAL),
                    max_nodes=MAX_CONTOUR_NODES, power=kk if edge else 0.0)
                break
            except IntegrandOverflow:
                if not past:
                    raise
                # Past the stability edge the integrand grows like |1 - eta (lam + z)|^(2k)
                # and overflows on the contour: the value is beyond the floating point range.
                b, v, atom = np.inf, np.inf, 0.0
                break
            except SolverError as exc:
                # The other contour may settle (gamma 0.95 on two-point:1,4,0.3 after 1e4
                # steps of 0.1 did not around [0, x_hi]; fuzz38 steps F2).
                failed = exc
        else:
            raise finite_clients_steps.near_one(failed, g, kk, e) from None
        if not (past or edge) and b + atom < SPLIT * spectrum.mean:
            # The bias may lie below the contour's tolerance: where gaps split the support,
            # each band on its own ellipse (``_banded``; fuzz41 steps F2).
            if got := banded():
                (b, v), atom = got
            elif gaps[g] and b + atom < RESOLVED * ATOL_GENERAL * spectrum.mean:
                # one contour's 0.0 for the bands' 2257 (fuzz42 steps F7)
                raise SolverError(_UNRESOLVED.format(spectrum.mean, ATOL_GENERAL * spectrum.mean,
                                                     RESOLVED, BAND_NODES))
        # Both are integrals of squares: a value below 0 within the rule's absolute tolerance
        # is 0 (bias -1.1e-8 printed under two-point:1e-8,1e8,0.5, tolerance 5e-6; fuzz39 F4).
        tol = 8 * ATOL_GENERAL * spectrum.mean
        if l == 0 and not (past or edge):
            # FTFA: (1 - f)^2 = q^(2k) is convex in s, on [x_lo, x_hi] at most at an end, its
            # integral at most that times the mass int t dH plus the atom at 0: the contour's
            # noise within its tolerance was printed (bias 1.55e-223 for ~1e-440 under 1000
            # atoms over [0.1, 10] at gamma 0.3 after 1e6 steps of 0.01; fuzz42 steps2 F3).
            with np.errstate(divide="ignore"):
                most = 2.0 * kk * max(np.log(abs(1.0 - e * lo)), np.log(abs(1.0 - e * hi)))
            b = min(b + atom, atoms[g] + spectrum.mean * np.exp(most)) - atom
        bias[idx], var[idx] = _nonnegative(b + atom, tol), g * _nonnegative(v, 8 * ATOL_GENERAL)
    return bias, var


def _too_many(foci, margin, lo, g, nodes=MAX_CONTOUR_NODES) -> bool:
    """Whether the ellipse with ``foci`` reaching ``margin`` beyond them would need more than
    ``nodes`` nodes (``lo`` the support's lower edge, ``g`` gamma)."""
    h = 0.5 * (foci[1] - foci[0])
    near = foci[0] == 0.0 < lo and abs(np.log(g)) < finite_clients_steps.NEAR_ONE
    return (58.0 if near else 20.0) * h > nodes * (
        margin + np.sqrt(margin * (2.0 * h + margin)))


def _banded(phis, g, spectrum, gaps, edges, cap, reach, atom, power, past, step):
    """(int phi dnu for each of ``phis``, the atom at 0 left to add) as a sum over the bands of
    the support between ``gaps`` (``weighted_mp.support_gaps``), each on its own ellipse
    reaching half the gaps to its neighbours (to 0 below the first; ``cap`` above the last),
    and below a band's lower end a no farther than q(a) / (eta k), where the k-th power of q =
    1 - eta (lam + s) has grown by e^2 (``step`` = (lam, k, eta)), and settled to
    ATOL_GENERAL times its atoms' mass of int t dH (the variance's, a ratio of traces, to
    ATOL_GENERAL; fuzz42 steps F10) (``power`` as ``contour_integrals``';
    infinite where it overflows ``past`` the edge); the first band
    around [0, its top], the atom inside, where its own ellipse would need too many nodes (as
    ``spectral_filter_integrals``' second route). None where a band's rule would need more
    than ``BAND_NODES`` nodes or fails: the single contours answer then, or past their
    resolution (a bias below ``SPLIT`` of the mass) the caller refuses."""
    t, w = spectrum.atoms, spectrum.weights
    lam, k, eta = step
    ends = [edges[0], *(x for gap in gaps for x in gap[:2]), edges[1]]
    cum = np.cumsum(w * t)
    mass = np.diff(np.concatenate([[0.0], cum[[gap[2] for gap in gaps]], cum[-1:]]))
    plan = []
    for i, (a, b) in enumerate(zip(ends[::2], ends[1::2])):
        right = ends[2 * i + 2] - b if i < len(gaps) else 2.0 * cap
        foci, margin = (a, b), 0.5 * min(a - (ends[2 * i - 1] if i else 0.0), right)
        if k > 0 and eta * (a + lam) < 1.0:
            # A decayed upper band's ellipse reaching half the gap below it summed terms
            # 1e6 times its tail, whose rounding failed the tolerance: the one contour's value
            # stood, 0.78% off (gamma 0.7 under two-point:0.063,2.6e14,0.31 after 1690 steps of
            # 3.3e-16: bias 0.26270 for mpmath's 0.26477; fuzz42 steps F1).
            margin = min(margin, (1.0 - eta * (a + lam)) / (eta * k))
        if i == 0 and _too_many(foci, margin, edges[0], g, BAND_NODES):
            foci, margin, atom = (0.0, b), min(reach, 0.5 * right, 0.25 * b), 0.0
        if _too_many(foci, margin, edges[0], g, BAND_NODES):
            return None     # before any work (a band of log-spaced atoms took 0.5 s to see)
        plan.append((foci, margin))
    total = np.zeros(len(phis))
    for (foci, margin), scale in zip(plan, mass):
        # Settled to RTOL_GENERAL of the bias found below it too (the atom and the lower
        # bands), where that is smaller: ATOL_GENERAL of an upper band's mass swamped a bias
        # (gamma 2 under two-point:1e-8,1e8,0.9 after 1000 steps of 1e-9: -5.4e-9 on the upper
        # band within its 1e-6, the bias 5.88e-9 for the simulated 1.124e-8).
        below = atom + total[0]
        try:
            part = weighted_mp.contour_integrals(
                phis, g, spectrum, foci=foci, margin=margin, rtol=RTOL_GENERAL,
                atol=(min(ATOL_GENERAL * scale, RTOL_GENERAL * below) if below > 0 else
                      ATOL_GENERAL * scale, ATOL_GENERAL),
                max_nodes=MAX_CONTOUR_NODES, power=power)
        except IntegrandOverflow:
            if not past:
                return None
            return np.full(len(phis), np.inf), 0.0
        except SolverError:
            return None
        total += part
    return total, atom


def _nonnegative(value: float, tol: float) -> float:
    """``value`` (an integral of a square) with a negative part within ``tol`` set to 0."""
    if value < -tol:
        raise SolverError(f"finite-step integral came out negative beyond its tolerance "
                          f"({value:g} < -{tol:g}): the contour rule lost its precision")
    return max(value, 0.0) + 0.0     # -0.0 printed "variance -0" (steps2 F6)


#: Why a bias below SPLIT of the mass is refused where the bands fail (fuzz42 steps F7).
_UNRESOLVED = ("finite-step integral: the bias lies below 1e-2 of the spectrum's mass int t "
               "dH = {:.3g}, where one contour resolves it only to {:.2g} (its value stands "
               "from {:g} times that), and the bands between the gaps of the spectrum of S did "
               "not resolve it (more than {} nodes each, or a band's rule failed): the bands "
               "above the gaps decay within 1 / (step_size steps) of their lower edges, and "
               "fewer steps or a smaller step size answer")

#: Why the contour refuses a step at the stability edge (fuzz39 steps F1).
_AT_EDGE = ("; at the stability edge (step_size (lam + top of the spectrum of S) = {}) the "
            "filter peaks within 1 / (step_size steps) of the top, which the contour must pass "
            "as closely: fewer steps answer")


def _log1p(w):
    """Complex log(1 + w), accurate for small |w| (numpy's complex log1p loses Re)."""
    x, y = w.real, w.imag
    return 0.5 * np.log1p(x * (2.0 + x) + y * y) + 1j * np.arctan2(y, 1.0 + x)


def _expm1(w):
    """Complex exp(w) - 1, accurate for small |w|."""
    x, y = w.real, w.imag
    return np.expm1(x) * np.cos(y) - 2.0 * np.sin(0.5 * y) ** 2 + 1j * np.exp(x) * np.sin(y)
