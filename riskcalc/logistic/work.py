r"""Work estimates for the logistic fixed points, and the refusal beyond a time limit (issue 33,
item 5; issue 32's "run for minutes").

The cost of a logistic limit is (quadrature nodes of a residual evaluation) x (evaluations). Up
to ``gaussian.GH_REACH`` every axis is a Gauss-Hermite rule of a few dozen nodes and a point
costs milliseconds; beyond it (large signal norms, or a global model whose norm grows as
``global_lam -> 0`` on separable pooled data) the axes become Gauss-Legendre panels whose count
grows in proportion to the feature scale, so a 2-d rule grows like ``||w_i||^2`` and the 3-d
rule of the fine-tuning like ``||w_i||^3``.

Estimated here, before solving, from what is known before solving (derived here):

- **Scales.** The first rule of every solve is built at its start, the large-penalty solution
  ``w_hat ~ c`` (``fixed_point._start``; the global model's view likewise: ``w_g ~ alpha w_0``
  with ``alpha <= 1``), whose margins have coefficients ``c_e = S^2/kappa`` along ``w_i`` and
  ``C = S r / kappa`` across it (``fixed_point.centre_geometry``). The estimate builds the rules'
  axis keys (``gaussian.axis_key``, no nodes) at these scales: a solution that grows beyond
  them (small penalties) costs more, one that shrinks less. Measured against the estimate
  (loaded machine): oracle at ``signal = r = 10``, lam 0.1, 10 s estimated, 10-12 s taken;
  M = 5 RTFA there 5.7 s estimated, 2.9 s taken.
- **Evaluations.** ``EVALS_PER_ROOT`` residual evaluations per root (measured 9 to 36 for
  hybr with a finite-difference or analytic Jacobian), times the roots of the path: one per
  continuation stage (``lam`` from 100 down by factors of 10; one from a warm start) and the
  ladder's next level; the fine-tuning's ladder climbs while its label-weight axis is beyond
  the Gauss-Hermite reach (``ladder3``). The joint fixed points (the global model, FedProx)
  add their finite-difference Jacobian's evaluations: quadratic in the distinct clients.
- **Time per node.** ``SECONDS_2D`` and ``SECONDS_3D`` per node and evaluation of the 2-d and
  (unpruned) 3-d rules, measured on the project's 2-core machine with one thread
  (``Rule.moments`` with its derivatives: 0.24-0.59 us per node, the global model's residuals
  0.7-1 us, under a load of 6-8; ``finetune.moments``: 10-24 ns per unpruned node), and
  ``SECONDS_FEDPROX`` for the FedProx point's; ``SECONDS_CALL`` once per call.

Users: ``predict`` and ``riskcalc.logistic_clients_limit``
(``finite_clients.point.check_work``), the finite-M grids (``finite_clients.grid.check_grid_work``,
warm starts), the oracle limits and their grids (``oracle_seconds``), and
``riskcalc advise --model logistic``
(``riskcalc.advise.logistic.estimate_seconds``: one ``finite_seconds`` per call of its
searches, the global model remembered after the first; issue 32, one estimate for both).
Measured against advise (process CPU, one thread, loaded 2-core machine; 2-50 distinct clients
at signal 1 and 5 at signal 5, global_lam 0.1 and 1e-3): 1.6-4.0 times the CPU taken.

``refuse`` raises the ValueError: the estimate, the limit, and what brings it under it (the
largest common scale of ``signal`` and ``r`` whose estimate fits, found by bisection on the
estimate, or a larger ``max_seconds``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from riskcalc._validate import max_time
from riskcalc.logistic.blocks.finetune import GH_MAX, NODES3, PANEL_BASE
from riskcalc.logistic.blocks.finetune import PATH_NODES as PATH3
from riskcalc.logistic.engine.deadline import elapsed
from riskcalc.logistic.engine.gaussian import (EVALS_PER_ROOT, GH_REACH, NODES, SCALE_MARGIN,
                                        SECONDS_PER_NODE as SECONDS_2D, axis_key, axis_nodes,
                                        rule_nodes)
from riskcalc.logistic.blocks.pooled import PATH_NODES
from riskcalc.logistic.ranges import LOG_WINDOW, ladder
from riskcalc.logistic.transition import mle_threshold

#: Default limit on the estimated seconds of one call.
MAX_SECONDS = 60.0
#: Seconds per node (before pruning) and evaluation of the 3-d rule (``EVALS_PER_ROOT`` and
#: the 2-d rule's ``SECONDS_2D`` are ``gaussian``'s, which the global model's path uses too).
SECONDS_3D = 1.0e-8
#: Seconds per node and evaluation of the FedProx point's 2-d rules (``fedprox.views``: no
#: derivatives, so below ``SECONDS_2D``): measured 0.7-1.3e-7 at lam = 0.1 over G = 2-50
#: distinct clients (signal 1 and 5), twice that at lam = 1e-3 (more evaluations on the path).
SECONDS_FEDPROX = 2.0e-7
#: Seconds of one call beyond its roots (argument checks, the groups, every target's limits
#: on the finest 2-d rule, the fine-tuning's moments on its finest rule): measured 11-14 ms
#: per RTFA call at signal 1 whose roots took 2-3 ms (advise's searches, G = 2-50).
SECONDS_CALL = 0.012


def rule3_nodes(kappa, scales, n) -> int:
    """Nodes of ``finetune.Rule3`` at ladder level ``n`` before pruning (not built)."""
    return int(np.prod([axis_nodes(key) for key in _rule3_keys(kappa, scales, n)]))


def _rule3_keys(kappa, scales, n):
    return [axis_key(SCALE_MARGIN * sc, n, PANEL_BASE, GH_MAX)
            for sc in (max(kappa, scales[0]), scales[1], scales[2])]


def ladder3(kappa, scales) -> tuple:
    """Levels of the fine-tuning's solve: its path rule, then ``NODES3`` up to the first level
    whose ``s`` axis, like the level's before it (the path rule's included), is panels or
    within ``GH_REACH`` (the whole ladder if none is). Why: that axis carries the label weight
    ``2 sigmoid(kappa s)``, steeper beyond the reach than the Gauss-Hermite rule converges on,
    so consecutive levels keep disagreeing until two of them have it in panels (the margins'
    axes are smooth: Gauss-Hermite beyond the reach settles). Measured: signal 5, r ~ 1
    climbed the whole ladder (0.5 s per solve; 10 ms at signal 1, which stopped at 24 or 32);
    signal 10, r = 1, panels from the path rule on, stopped at 32 (here at 24)."""
    steep = SCALE_MARGIN * max(kappa, scales[0]) > GH_REACH

    def settled(n):
        return not steep or _rule3_keys(kappa, scales, n)[0][0] == "gl"
    levels = (PATH3,)
    for n in NODES3:
        levels += (n,)
        if settled(levels[-2]) and settled(n):
            break
    return levels


def stages(lam: float) -> int:
    """Continuation stages down to ``lam``: the roots of ``ranges.ladder`` (100, 10, ..., 1e-4,
    then on down by factors of 10 to ``lam``, or 0), one for ``lam >= 1`` (its direct root).
    Counted from the ladder itself: a formula of its own in log10 disagreed with it within
    1e-9 of 1e-4 and at subnormal lam."""
    return 1 if lam >= 1.0 else len(ladder(lam))


def oracle_seconds(signal, r, lam, warm: bool = False) -> float:
    """Estimated seconds of one oracle-centre limit (``fixed_point``; module docstring). At
    ``signal = r = 0`` the rules are the smallest Gauss-Hermite ones, as at any tiny norm (it
    returned 0 there, for a solve of ~0.04-0.07 s)."""
    kappa = math.hypot(signal, r)
    c_e, C = (signal ** 2 / kappa, signal * r / kappa) if kappa > 0.0 else (0.0, 0.0)
    roots = 1 if warm else stages(lam)
    nodes = roots * rule_nodes(kappa, NODES[0], c_e, C) + rule_nodes(kappa, NODES[1], c_e, C)
    return EVALS_PER_ROOT * SECONDS_2D * nodes


#: The solution's growth on separable data (``growth_seconds``), calibrated on 105 solves
#: (12 spectra, gamma 0.2 to 1, signal = r = 0.3 to 1, lam 1 to 1e-6): seconds at
#: ``lam / <s> = GROWTH_LAM`` and ``gamma = 2 h``, and the power of ``GROWTH_LAM / (lam / <s>)``
#: (and of ``1 / (gamma / h - 1)``: the margin of separable data, small near h, grows the norm).
GROWTH_SECONDS, GROWTH_LAM, GROWTH_POWER = 0.07, 1e-2, 0.5
#: ... and below ``lam / <s> = GROWTH_FLOOR``, the calibration's end, linear in the stages
#: (factors ``LAM_RATIO`` of lam) below it: on separable data the norm of the solution grows
#: like log(1 / lam) there, not as a power, so each stage costs about what the last one above
#: the floor did, ``GROWTH_STAGE`` times the growth at the floor (``growth_seconds``). The
#: power law extrapolated refused solves of seconds (gamma 2, signal = r = 1: lam 1e-12
#: "estimated at 3.49e+03 s", answered in 5.6 s); held at the floor, lam 1e-300 ran ~56 s.
GROWTH_FLOOR, GROWTH_STAGE = 1e-6, 0.7


#: Distinct norms whose growth ``refuse_growing`` reads where the rules alone are over.
FEW_KAPPAS = 16
#: ``mle_threshold`` remembered per norm: a grid's points share a few (``grid``).
_threshold = lru_cache(maxsize=4096)(mle_threshold)


def growth_seconds(gamma, kappa, lam, mean) -> float:
    """Seconds a solve adds as its solution outgrows the large-penalty scales that
    ``oracle_seconds`` builds its rules at: on data separable as ``lam -> 0`` (``gamma >=
    h(kappa)``, ``kappa = ||w_i||_Sigma``) the margins' scales ``a`` and ``rho`` grow as the
    penalty relative to the data, ``lam / <s>`` (exactly ``lam / c`` at ``Sigma = c I``), falls,
    the faster the nearer gamma is to h. Was: scaled:50 at gamma 0.5, signal = r = 0.3, lam
    1e-3 took 2.15 s (``a``, ``rho`` 9 times the start's) where the rules at the start's scales
    estimated 0.155 s (now 1.87 s). Calibrated (``GROWTH_*``, 105 solves): 98 at most their
    estimate, the 7 above it by 1.1-2.1 times (two stopped at 60 s; ``_solve_by``'s deadline
    bounds them); none taking under 30 s is over the default 60 s; the largest over-estimate
    is 190 times (powerlaw:3,30, whose many small eigenvalues slow the growth). 0 where the
    MLE exists, at ``lam = 0`` and beyond ``kappa = 1e3`` (``ranges.mle_lam``'s reach of h;
    the rules' own estimate dominates there). At Sigma = I (``<s> = 1``: ``limits``, the same
    estimate as the ``identity`` spectrum's) checked on 20 solves (gamma 0.2-2, signal = r
    0.3-2, lam 1e-3 to 1e-6; load 8-9 on 2 cores): 0.17-2.5 times the estimate, the one beyond
    (gamma 0.5, signal = r = 0.3, lam 1e-5: 13.2 s estimated) 16 s unloaded, 58-90 s loaded.
    Below ``GROWTH_FLOOR`` (``GROWTH_STAGE`` per stage), checked on 16 continuation stages of
    Sigma = I at signal = r = 1, lam 1e-7 to 1e-12, time to each stage against the estimate
    (rules and growth): gamma 2 and 5 (load 9) 0.40-0.89 times it; gamma 1 (load 12) 2.5-5
    times its per-stage share and 9.4 times in all at 1e-7 (a bridged stage of 67 s); gamma
    0.5 still grew 3 times per stage at 1e-6 (load 12): near h the power regime lasts below
    the floor, where the continuation's own stage-cost refusal and deadline bound it."""
    lam_eff = lam / mean
    if not (0.0 < lam_eff < GROWTH_LAM and kappa <= 1e3):
        return 0.0
    h = _threshold(float(kappa))
    if gamma < h:
        return 0.0
    seconds = GROWTH_SECONDS * (GROWTH_LAM / (gamma / h - 1.0 + 1e-3)) ** GROWTH_POWER \
        / max(lam_eff, GROWTH_FLOOR) ** GROWTH_POWER
    if lam_eff >= GROWTH_FLOOR:
        return seconds
    # (log10 apart: GROWTH_FLOOR / 5e-324 overflows)
    return seconds * (1.0 + GROWTH_STAGE * (math.log10(GROWTH_FLOOR) - math.log10(lam_eff)))


def growth_lam(gamma, kappa, mean, budget):
    """The lam at which ``growth_seconds(gamma, kappa, lam, mean)`` is ``budget`` (its
    inverse; ``gamma >= h(kappa)``), at most ``mean GROWTH_LAM`` (no growth from there: was
    'lam >= 0.0752 fits' at gamma = h), None when ``budget <= 0`` (no lam brings it under)."""
    if budget <= 0.0:
        return None
    margin = gamma / _threshold(float(kappa)) - 1.0 + 1e-3
    floor = GROWTH_SECONDS * (GROWTH_LAM / margin) ** GROWTH_POWER / GROWTH_FLOOR ** GROWTH_POWER
    if budget > floor:          # below the floor: the stages' linear growth inverted, and not
        # below gamma <s> / e^29, under which mu may leave the residuals' window (gamma 2,
        # lam 1e-100 named 4.9e-29 where (E1) puts mu beyond it: ``ranges.check_reach``)
        return max(mean * GROWTH_FLOOR * 10.0 ** (-(budget / floor - 1.0) / GROWTH_STAGE),
                   gamma * mean * math.exp(1.0 - LOG_WINDOW[1]))
    return mean * GROWTH_LAM / max(1.0, margin * (budget / GROWTH_SECONDS)
                                   ** (1.0 / GROWTH_POWER))


def growth_advice(growth, fewer=None, lam=None, searched=True):
    """``refuse``'s ``fewer`` naming the ``growth_seconds`` of an estimate (none: ``fewer``)
    and ``lam``, the smallest penalty within the limit (``growth_lam``; None: no lam is, the
    rules alone fill it; ``searched`` False: the rules at this lam alone fill it and no lam
    was sought, as fewer stages at a larger lam may fit). Was: lam 1e-300 'estimated at
    4.25e+148 s ... a larger lam'; local ridge, clients 3, lam 3e-11 'no lam fits' where
    lam 0.01 answers."""
    if not growth:
        return fewer
    larger = f"lam >= {lam:.3g} fits" if lam is not None else \
        "no lam fits: the rest of the work fills the limit" if searched else \
        "the rules alone at this lam fill the limit: no lam is named"
    return ((f"{fewer}, " if fewer else "") + f"a larger lam (on separable data the solution "
            f"grows as lam falls: {growth:.3g} s of it here; {larger})")


def refuse_growing(at, max_seconds, what, growing, mean=1.0, fewer=None,
                   by_lam=None) -> None:
    """``refuse`` for an estimate of rules and growth, the one shape of every logistic work
    check (Sigma = I point and grid, under a spectrum, finite-M point and grid).

    ``at(t)``: the rules' seconds with ``signal`` and ``r`` scaled by ``t`` (``refuse``'s
    ``estimate_at``). ``growing``: the points that may grow on separable data, as tuples
    ``(gamma, kappa, lam, count)`` (``count`` points alike); each adds ``count`` times its
    ``growth_seconds`` at ``mean = <s>`` (a threshold: 0.3-20 ms, kappa 1 to 1e3). The lam
    named (``growth_lam``) gives each growing point an equal share of what the rules leave of
    ``max_seconds``: at it every point's growth is within its share, so the whole within the
    limit. ``fewer``: what else brings it under (``growth_advice``). ``by_lam``: for one point,
    ``(lam, rules_at)`` with ``rules_at(lam)`` the rules' seconds at a penalty: the smallest lam
    whose rules and growth fit is named instead (bisection on log lam; both fall as lam
    rises), the same on both sides of where the rules alone are over. Was: gamma 0.5, signal =
    r = 1, lam 1e-300, max_seconds 1.5 'estimated at 5.74 s' (300 stages) advising only 'raise
    max_seconds'; gamma 2, signal = r = 1, max_seconds 0.3 '13.6 s ... lam >= 0.01 fits' at lam
    1e-10 but '0.306 s ... lam >= 0.000769 fits' at 1e-11 (the growth read only where the rules
    fit, the lam of the share rule there)."""
    rules, growing = at(1.0), list(growing)
    growth, grows = 0.0, []
    # Where the rules alone are over, the growth of at most FEW_KAPPAS distinct kappa (a
    # threshold each: up to 20 ms); a larger grid's is left out, the estimate "or more".
    counted = rules <= max_seconds or by_lam is not None or len(
        {kappa for _, kappa, _, _ in growing if kappa <= 1e3}) <= FEW_KAPPAS
    for gamma, kappa, lam, count in growing if counted else ():
        seconds = growth_seconds(gamma, kappa, lam, mean)
        if seconds:
            growth += count * seconds
            grows.append((gamma, kappa, count))
    if rules + growth <= max_seconds:
        return
    if by_lam is not None and 0.0 < by_lam[0] < 1.0:
        named = _lam_by_rules(by_lam, growing, mean, max_seconds)
    else:
        share = (max_seconds - rules) / sum(c for _, _, c in grows) if grows else 0.0
        fit = [growth_lam(gamma, kappa, mean, share) for gamma, kappa, _ in grows]
        named = max(fit) if fit and None not in fit else None
    if growth:
        fewer = growth_advice(growth, fewer, named, searched=by_lam is not None
                              or rules <= max_seconds)
    elif rules > max_seconds and named is not None:
        fewer = ((f"{fewer}, " if fewer else "") + f"a larger lam (most of it is the "
                 f"continuation's stages down to lam = {by_lam[0]:g}: lam >= {named:.3g} fits)")
    least = not counted and any(0.0 < lam / mean < GROWTH_LAM and kappa <= 1e3
                                for _, kappa, lam, _ in growing)
    refuse(rules + growth, max_seconds, what, lambda t: at(t) + growth, fewer=fewer,
           least=least)


def _lam_by_rules(by_lam, growing, mean, max_seconds):
    """The smallest lam above ``by_lam[0]`` whose rules (``by_lam[1]``) and growth fit
    ``max_seconds`` (``refuse_growing``), rounded up as printed; None where even lam = 1 does
    not."""
    lam, rules_at = by_lam

    def total(v):
        return rules_at(v) + sum(c * growth_seconds(g, k, v, mean) for g, k, _, c in growing)
    if total(1.0) > max_seconds:
        return None
    lo, hi = math.log10(lam), 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if total(10.0 ** mid) <= max_seconds else (mid, hi)
    shown = 10.0 ** hi
    while total(float(f"{shown:.3g}")) > max_seconds:     # as printed (0.000109 was over)
        shown *= 1.001
    return float(f"{shown:.3g}")


def _scales(signal, r):
    """``(kappa, c_e, C)`` of clients with these ``r`` (module docstring), arrays."""
    kappa = np.hypot(signal, r)
    c_e = np.divide(signal ** 2, kappa, out=np.zeros_like(kappa), where=kappa > 0)
    C = np.divide(signal * r, kappa, out=np.zeros_like(kappa), where=kappa > 0)
    return kappa, c_e, C


def finite_seconds(gamma, r, signal, lam, global_lam, method: str, targets,
                   warm: bool = False, pooled: bool = True) -> float:
    """Estimated seconds of one ``logistic_clients_limit`` call for the clients ``targets``
    (per-client ``gamma``, ``r``; module docstring): the global model (one 2-d rule per group
    of equal clients), then the fine-tuning (3-d rules), the joint FedProx point (2-d, every
    group) or local ridge (2-d), and ``SECONDS_CALL``.

    ``pooled``: False when the call finds its global model remembered
    (``finite_clients.point._pooled``: the same federation, weights and ``global_lam`` solved
    before in the process, as along ``riskcalc.advise``'s searches), so it is not solved.

    The global model is one fixed point in G + 3 unknowns over the G groups
    (``pooled.residuals``), each residual a sum over the groups: hybr's finite-difference
    Jacobian alone takes G + 3 evaluations, so a root costs (``EVALS_PER_ROOT`` + G + 3)
    evaluations, quadratic in G. Counting ``EVALS_PER_ROOT`` alone, over the distinct r only,
    the estimate fell 6-fold short at 100 distinct clients (RTFA, lam = global_lam = 0.1: 3.3 s
    estimated, 18.6 s taken; now 25.7 s; 7.4 s against 5.6 s at 50) and the command line ran
    for minutes at 500 clients without refusing. The FedProx point likewise has 3G unknowns
    (``fedprox.residuals``): (``EVALS_PER_ROOT`` + 3G) evaluations of the G rules per root
    (measured 168 and 155 evaluations at G = 50)."""
    total = SECONDS_CALL
    # The groups only where a joint fixed point is solved: advise costs every group's search
    # apart, and np.unique over 500 pairs in each of its 1000 calls took 0.5 s.
    if (method != "local_ridge" and pooled) or (method == "pfedme" and lam):
        gamma, r = np.broadcast_arrays(np.asarray(gamma, float), np.asarray(r, float))
        pairs = np.unique(np.stack([gamma.ravel(), r.ravel()], axis=1), axis=0)
        groups = list(zip(*_scales(signal, pairs[:, 1])))
    if method != "local_ridge" and pooled:
        roots = 1 if warm else stages(global_lam)
        nodes = sum(roots * rule_nodes(k, PATH_NODES, a, b) + rule_nodes(k, NODES[0], a, b)
                    for k, a, b in groups)
        total += (EVALS_PER_ROOT + len(groups) + 3) * SECONDS_2D * nodes
    if method == "pfedme" and lam:
        nodes = sum(rule_nodes(k, PATH_NODES, a, b) + rule_nodes(k, NODES[0], a, b)
                    for k, a, b in groups)
        return total + (EVALS_PER_ROOT + 3 * len(groups)) * SECONDS_FEDPROX * nodes
    target_r = np.unique(np.asarray(targets, float))
    for rt, k, a, b in zip(target_r, *_scales(signal, target_r)):
        if method == "rtfa" and lam:
            nodes = sum(rule3_nodes(k, (a, b, b), n) for n in ladder3(k, (a, b, b)))
            total += EVALS_PER_ROOT * SECONDS_3D * nodes
        elif method == "local_ridge" or lam == 0.0:
            total += oracle_seconds(signal, rt, lam if method == "local_ridge" else 1.0, warm)
    return total


def check_max_seconds(max_seconds):
    """``max_seconds`` of the public logistic functions: None (no limit) or a number > 0
    (inf allowed). Was unchecked: 0, -1 or NaN gave "estimated 0.06 s ... over the limit
    max_seconds = -1" (or nan), True a limit of one second, and a path at 0 computed."""
    return max_time("max_seconds", max_seconds)


def refuse(seconds: float, limit: float, what: str, estimate_at, fewer=None,
           least=False) -> None:
    """Raise the ValueError of the module docstring when ``seconds > limit``.

    ``estimate_at(t)``: the estimate with ``signal`` and ``r`` scaled by ``t``, or None when the
    cost does not come from the norms (then only ``max_seconds`` is suggested, after
    ``fewer``: what else would bring it under, where the norms cannot). ``least``: the
    estimate leaves out a grid's growth on separable data (``refuse_growing``), printed as
    "or more"."""
    if seconds <= limit:
        return
    advice = f"raise max_seconds (in Python, now {limit:g}; --max-minutes on the command line)"
    # The bisection's floor 1e-300 must itself fit: at lam -> 0 a fixed cost remains, and
    # "at most 1e-300 times their values" was advised with max_seconds = 0.6.
    if estimate_at is not None and estimate_at(1e-300) <= limit:
        # Bisection on log10 of the factor: for signal = 1e101 it is ~1e-101, which a
        # bisection on [0, 1] printed as "at most 0 times".
        lo, hi = -300.0, 0.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if estimate_at(10.0 ** mid) <= limit else (lo, mid)
        advice = (f"signal and r at most {10.0 ** lo:.3g} times their values (||w_i|| below "
                  f"{GH_REACH:g} keeps every rule Gauss-Hermite: milliseconds), or " + advice)
    elif fewer:
        advice = f"{fewer}, or {advice}"
    more, why = (" or more", "; the growth on separable data of a grid of many norms is not "
                 "counted where its rules alone are over") if least else ("", "")
    raise ValueError(f"{what}: estimated at {seconds:.3g} s{more} of quadrature (large norms "
                     f"need Gauss-Legendre panels, many distinct clients a large joint fixed "
                     f"point; riskcalc.logistic.work{why}), over the limit max_seconds = "
                     f"{limit:g}; {advice}")


def overtime(gamma, signal, r, lam, seconds, max_seconds, kappa=None):
    """The ValueError for a fixed point (``fixed_point``, ``spectrum.fixed_point``) still
    solving at ``max_seconds`` (it raised ``Overtime``): the estimates above cannot see how far
    the solution's scales grow with gamma. ``kappa``: the margin scale ``||w_i||_Sigma`` of
    the threshold (default ``||w_i||``, Sigma = I)."""
    h = mle_threshold(float(np.hypot(signal, r)) if kappa is None else kappa)
    near = (f"; gamma = {gamma:g} lies {(h - gamma) / h:.2g} below the Candes-Sur threshold "
            f"h = {h:.6g}, where the MLE's norm grows without bound" if lam == 0.0 and gamma < h
            else "")
    return ValueError(f"lam = {lam:g}: the logistic fixed point (gamma = {gamma:g}, signal = "
                      f"{signal:g}, r = {r:g}) was still solving at max_seconds = "
                      f"{max_seconds:g} {elapsed(seconds, max_seconds)}{near}; give "
                      f"{'gamma further below h or ' if near else ''}a larger lam, or raise "
                      "max_seconds (in Python; --max-minutes on the command line)")
