"""The logistic limit along a lam path: ``logistic_lam_path`` (``riskcalc.logistic_lam_path``)
and the one-point limit behind it and the grids (``_limit``): the fixed point of
``riskcalc.logistic.fixed_point`` (derived there), its quadrature ladder, and the reported
limits (risk, cosine, test log-loss and error) at the root.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc._validate import as_array, one_of, parameter, real
from riskcalc.logistic.engine.deadline import Overtime
from riskcalc.logistic.engine.gaussian import NODES
from riskcalc.logistic.fedavg import fedavg_centre_scale
from riskcalc.logistic.fixed_point import (_describe, check_mle, settle, solve_fixed_point,
                                          test_error)
from riskcalc.logistic.ranges import (LAM_RATIO, check_gamma, check_lam, check_reach,
                                      check_window, mle_lam)
from riskcalc.logistic.result import LogisticResult
from riskcalc.logistic.work import check_max_seconds, oracle_seconds, overtime, refuse_growing

CENTRES = ("oracle", "fedavg")


#: Most penalties of one ``logistic_lam_path``.
MAX_PATH = 10000


def logistic_lam_path(*, gamma, signal, r, lams, centre: str = "oracle",
                      max_seconds: float | None = 60.0) -> list:
    """``logistic_limit`` for several ``lams`` at once (same order), each solve warm-started at
    the previous (larger) lam: several times faster than separate calls along a path.

    Parameters
    ----------
    gamma, signal, r, centre
        As in ``logistic_limit``.
    lams : sequence of float
        Penalties, each >= 0 (at most ``MAX_PATH``).
    max_seconds : float or None
        Limit on the whole path: its work estimate (``check_path``) is refused beyond it
        before solving, and every solve stops at one deadline, ``max_seconds`` from the start
        of the path (``solve_fixed_point``); None: no limit.

    Returns
    -------
    list of LogisticResult
    """
    return lam_path(gamma, signal, r, lams, centre, max_seconds)


def lam_path(gamma, signal, r, lams, centre, max_seconds, what=None) -> list:
    """``logistic_lam_path``; ``what``: the estimate's refusal names it (default: the path),
    ``logistic_limit``'s one point its own."""
    # One point: an array was a TypeError from float().
    gamma = float(check_gamma(real("gamma", gamma, ndim=0)))
    signal = float(parameter("signal", signal, ndim=0))
    r = float(parameter("r", r, ndim=0))
    max_seconds = check_max_seconds(max_seconds)
    lams = as_array("lam", real("lams", lams, ndim=1), low=0.0).reshape(-1)
    if lams.size == 0:          # was an empty list returned
        raise ValueError("lams must list at least one penalty lam >= 0, got an empty list")
    check_lam(lams)
    check_reach(gamma, lams)
    if lams.size > MAX_PATH:
        # was: 10^6 penalties solved one after the other for many minutes, no estimate
        raise ValueError(f"lams lists {lams.size} penalties; give at most {MAX_PATH} (each is "
                         "a fixed-point solve, milliseconds to seconds)")
    if not one_of(centre, CENTRES):
        raise ValueError(f"centre must be one of {CENTRES}, got {centre!r}")
    if lams.min() == 0.0:       # before the larger lams' solves (was: after them)
        check_mle(gamma, signal, r)
    order = np.argsort(-lams, kind="stable")
    if max_seconds is not None:
        check_path(gamma, signal, r, lams[order], max_seconds, what or (
            f"the logistic lam path ({lams.size} penalt{'y' if lams.size == 1 else 'ies'}, "
            f"down to lam = {lams.min():g}) at signal = {signal:g}, r = {r:g}"))
    scale = 1.0 if centre == "oracle" else fedavg_centre_scale(signal, r)
    out, x, clock = [None] * lams.size, None, time.perf_counter()
    for i, k in enumerate(order):
        try:    # one deadline for the whole path (was: max_seconds for each lam)
            out[k], x = _limit(gamma, signal, r, float(lams[k]), x, centre, scale,
                               max_seconds, clock)
        except ValueError as exc:
            if not i:
                raise
            raise ValueError(f"{exc} (the path had solved lam >= {lams[order[i - 1]]:g}, "
                             f"{i} of its {lams.size} penalties, by then)") from None
    return out


def check_path(gamma, signal, r, lams, max_seconds, what) -> None:
    """``work.refuse_growing`` for a Sigma = I path ``lams`` (decreasing; one point: the
    ``logistic_limit`` point): each lam's rules (``oracle_seconds``; below ``MLE_LAM``, where
    the MLE exists, at lam = 0: ``mle_lam``), warm from the lam before it when within one
    continuation stage (a factor ``LAM_RATIO``; a larger jump falls back to the whole
    continuation), and each lam's growth on separable data (``growth_seconds`` at ``<s> = 1``,
    as under the ``identity`` spectrum). Where the rules alone are over, the smallest lam whose
    path fits is named. Was: the path unestimated, ``max_seconds`` for each lam apart: lams
    [1e-3, 1e-300] at gamma 0.5, signal = r = 1, max_seconds 5 refused after 8 s naming no lam
    (``lam = 1e-300 ... still solving``)."""
    check_reach(gamma, lams)        # before the estimate, whose lam would be out of reach
    kappa = float(np.hypot(signal, r))

    def rules(t, floor=0.0):
        total, before = 0.0, None
        for lam in np.maximum(lams, floor):
            lam = mle_lam(float(lam), gamma, kappa)
            warm = before is not None and lam * LAM_RATIO >= before
            total += oracle_seconds(t * signal, t * r, lam, warm=warm)
            before = lam
        return total
    refuse_growing(rules, max_seconds, what,
                   [(gamma, kappa, mle_lam(float(lam), gamma, kappa), 1) for lam in lams],
                   by_lam=(float(lams[-1]), lambda v: rules(1.0, v)))


def _limit(gamma, signal, r, lam, start, centre, scale, max_seconds=None, begun=None):
    """One point's limit from ``start`` (None: its path), by ``begun + max_seconds``
    (``begun``: ``time.perf_counter()`` when the call's limit began, a grid's start; default
    now)."""
    clock = time.perf_counter() if begun is None else begun
    deadline = None if max_seconds is None else clock + max_seconds
    try:    # every residual checks the deadline (only with max_seconds): one refusal here
        x, rule, (kappa, c_e, C) = solve_fixed_point(gamma, signal, r, lam, nodes=NODES[0],
                                                     start=start, scale=scale,
                                                     max_seconds=max_seconds, begun=clock)
        start = x
        x_fine, err, fine = settle(x, kappa, gamma, signal, r, lam, c_e, C, deadline)
    except Overtime:
        raise overtime(gamma, signal, r, lam, time.perf_counter() - clock, max_seconds) from None
    a, b, q, mu = x_fine[0], x_fine[1], float(np.exp(x_fine[2])), float(np.exp(x_fine[3]))
    check_window(q, mu, gamma, lam)
    rho = float(np.hypot(b, q))
    notes = []
    dist_c = np.sqrt((a - c_e) ** 2 + (b - C) ** 2 + q ** 2)
    gap = np.hypot(kappa - c_e, C)          # ||w_i - c||, = r for the oracle centre
    if gap > 0:
        # Along the unit vector (w_i - c) / gap: gap * dist_c underflowed to 0 at r = 5e-324
        # (a NaN cosine and numpy's "invalid value" warning).
        cosine = ((a - c_e) * ((kappa - c_e) / gap) - (b - C) * (C / gap)) / dist_c
    else:
        cosine = float("nan")
        notes.append("w_i = c (r = 0): the cosine is undefined")
    logloss = fine.expect(np.logaddexp(0.0, -(a * fine.s + rho * fine.g)))
    params = dict(gamma=gamma, signal=signal, r=r, lam=lam)
    if centre != "oracle":
        params.update(centre=centre, centre_scale=scale)
    return LogisticResult(params,
                          risk=float((a - kappa) ** 2 + b ** 2 + q ** 2), cosine=float(cosine),
                          test_logloss=logloss, test_error=test_error(kappa, a, rho),
                          a=float(a), b=float(b), q=q, mu=mu, notes=tuple(notes),
                          diagnostics={"solver": "scipy.optimize.root (hybr)",
                                       "residual": float(err),
                                       "quadrature_nodes": int(fine.n),
                                       "quadrature_axes": _describe(fine)}), start
