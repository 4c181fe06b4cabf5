"""``logistic_limit`` over broadcast arrays: the grid solver for the Gauss-Hermite reach, the
one-point solver beyond it.

Points whose every scale is within ``gaussian.GH_REACH`` (``||w_i||``, and at the solution
``|a|`` and ``rho``, each times ``SCALE_MARGIN``, as the one-point solver builds its rules) are
solved together by ``riskcalc.logistic.broadcast`` on the same Gauss-Hermite rules as
``path._limit``. The others (large signal norms, wide estimates), and any point whose
ladder does not settle, are solved one at a time by the one-point solver (``path._limit``)
on the composite rules that resolve their scales, along the grid in boustrophedon order
(``snake_order``), each started from the previous one's solution (a direct root, the
continuation in lam when that fails): each entry is a root of the one-point system on the rules
its ladder settles on, as a scalar call's is.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc._validate import as_array, one_of, parameter
from riskcalc.logistic import broadcast
from riskcalc.logistic.fedavg import fedavg_centre_scale
from riskcalc.logistic.fixed_point import QUAD_RTOL, TOL, centre_geometry, solve_fixed_point
from riskcalc.logistic.path import CENTRES, _limit
from riskcalc.logistic.engine.deadline import Overtime, elapsed
from riskcalc.logistic.engine.gaussian import GH_REACH, Rule
from riskcalc.logistic.ranges import (LAM_RATIO, check_gamma, check_lam, check_reach,
                                     check_window, mle_lam)
from riskcalc.logistic.engine.warm import shared_rules
from riskcalc.logistic.result import LogisticResult
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.work import oracle_seconds, refuse_growing

FIELDS = ("risk", "cosine", "test_logloss", "test_error", "a", "b", "q", "mu")
#: Seconds per point solved together on Gauss-Hermite rules (measured, one thread, loaded
#: machine: 900 points in 0.7 s, 1e4 in 24 s, 4e4 in 74 s: gamma in [0.5, 2] x signal in
#: [0.5, 1], lam = 1), and the points solved at once: their arrays (P x nodes^2 per
#: quadrature array) grew with the grid, 1.7 GB at 1e4 points, 6.7 GB at 4e4.
NEAR_SECONDS, NEAR_CHUNK = 2.5e-3, 1000


def grid_limit(gamma, signal, r, lam, centre, max_seconds=None):
    """``logistic_limit`` for broadcast arrays (module docstring); ``max_seconds``: the limit
    of ``riskcalc.logistic.work`` on the points beyond the Gauss-Hermite reach."""
    arrays = [check_gamma(gamma), parameter("signal", signal), parameter("r", r),
              as_array("lam", lam, low=0.0)]
    check_lam(arrays[3])
    if not one_of(centre, CENTRES):
        raise ValueError(f"centre must be one of {CENTRES}, got {centre!r}")
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise ValueError("gamma, signal, r and lam do not broadcast together: shapes "
                         + ", ".join(str(np.shape(v)) for v in arrays)) from None
    check_reach(arrays[0], arrays[3])
    shape = arrays[0].shape
    g, S, rr, lm = (v.ravel().astype(float) for v in arrays)
    pairs = {(s, t): (1.0 if centre == "oracle" else fedavg_centre_scale(s, t))
             for s, t in zip(S, rr)}
    geo = np.array([centre_geometry(s, t, pairs[s, t]) for s, t in zip(S, rr)])
    kappa, c_e, C = geo.T.copy()
    for k in np.flatnonzero(lm == 0.0):
        if g[k] >= mle_threshold(kappa[k]):
            raise ValueError(f"lam = 0 at grid entry {k}: no finite minimizer (the MLE does not "
                             f"exist): gamma = {g[k]:g} >= the Candes-Sur threshold "
                             f"{mle_threshold(kappa[k]):.6g} at ||w_i|| = {kappa[k]:.6g}")
    out = {f: np.empty(g.size) for f in FIELDS}
    near = np.flatnonzero(kappa <= GH_REACH)
    far = np.flatnonzero(kappa > GH_REACH)
    if max_seconds is not None:
        # The points within the reach too (not estimated: a grid of 1e6 points ran past
        # 120 s and 8 GB with max_seconds = 2); below MLE_LAM as solved (``mle_lam``).
        lm_far = [mle_lam(lm[k], g[k], kappa[k]) for k in far]

        def at(t):
            return near.size * NEAR_SECONDS + sum(
                oracle_seconds(t * S[k], t * rr[k], lm_far[i], warm=i > 0)
                for i, k in enumerate(far))
        # Where the rules fit, every point's growth on separable data (was: gamma [0.5,
        # 0.6], signal = r = 0.3, lam 1e-5 estimated 5 ms, 57 s taken).
        refuse_growing(at, max_seconds, f"the logistic grid ({g.size} points, {far.size} "
                       f"beyond the Gauss-Hermite reach, ||w_i|| up to {np.max(kappa):.3g})",
                       ((g[k], kappa[k], lm[k], 1) for k in range(g.size)),
                       fewer="fewer grid points")
    # (No point within the reach: array_split refuses 0 parts; fuzz38 lead F2.)
    parts = np.array_split(near, -(-near.size // NEAR_CHUNK)) if near.size else []
    # By the call's deadline (was none: gamma [0.5, 0.50001], signal = r = 1, lam 1e-5 with
    # max_seconds 12 answered after 37 s, loaded): the near points' re-solves and the far
    # points' solves check it at every residual, the batch between its parts.
    begun = time.perf_counter()
    try:
        done = np.concatenate([np.zeros(0, bool)] + [
            _solve_near(part, g, S, rr, lm, kappa, c_e, C, pairs, out, max_seconds, begun)
            for part in parts])
    except Overtime as exc:
        spent = elapsed(time.perf_counter() - begun, max_seconds, exc)
        raise ValueError(f"the logistic grid ({g.size} points) was still solving at max_seconds "
                         f"= {max_seconds:g} {spent}: its estimate cannot see every point's "
                         "growth on separable data; give fewer points or larger lam, or "
                         "raise max_seconds (in Python; "
                         "--max-minutes on the command line)") from None
    rest = set(np.setdiff1d(np.arange(g.size), near[done]).tolist())
    # One at a time on composite rules, along the grid (boustrophedon order): each from the
    # previous one's solution (``solve_fixed_point``'s start; its continuation when that
    # fails), not from lam = 100.
    x = None
    with shared_rules():
        for k in (k for k in snake_order(shape) if k in rest):
            res, x = _limit(g[k], S[k], rr[k], lm[k], x, centre, pairs[S[k], rr[k]],
                            max_seconds, begun)
            for f in FIELDS:
                out[f][k] = getattr(res, f)
    check_window(out["q"], out["mu"], g, lm)
    notes = ["w_i = c (r = 0) at some grid points: the cosine is undefined there (NaN)"] \
        if np.any(np.isnan(out["cosine"])) else []
    params = dict(gamma=g.reshape(shape), signal=S.reshape(shape), r=rr.reshape(shape),
                  lam=lm.reshape(shape))
    if centre != "oracle":
        params.update(centre=centre, centre_scale=np.array(
            [pairs[s, t] for s, t in zip(S, rr)]).reshape(shape))
    return LogisticResult(params, **{f: out[f].reshape(shape) for f in FIELDS},
                          notes=tuple(notes))


def snake_order(shape) -> np.ndarray:
    """Flat (C-order) indices of an array of ``shape`` in boustrophedon order: index ``k`` runs
    backwards when the indices before it sum to an odd number, so consecutive entries are
    neighbours (one index differs by one)."""
    shape = tuple(int(n) for n in shape)
    out = []
    for counter in np.ndindex(*shape):
        idx, parity = [], 0
        for d, n in zip(counter, shape):
            o = n - 1 - d if parity % 2 else d
            idx.append(o)
            parity += o
        out.append(np.ravel_multi_index(idx, shape) if shape else 0)
    return np.array(out, dtype=np.intp)


def _solve_near(idx, g, S, rr, lm, kappa, c_e, C, pairs, out, max_seconds=None, begun=None):
    """Solve the points ``idx`` together and write their limits into ``out``; returns the mask
    (over ``idx``) of the points solved on Gauss-Hermite rules throughout."""
    if idx.size == 0:
        return np.zeros(0, bool)
    if max_seconds is not None and time.perf_counter() > begun + max_seconds:
        raise Overtime()        # (between parts: the batch itself checks no deadline)
    g, S, rr, lm, kappa, c_e, C = (v[idx] for v in (g, S, rr, lm, kappa, c_e, C))
    x, ok = broadcast.solve_batch(g, lm, kappa, c_e, C, tol=TOL, lam_ratio=LAM_RATIO,
                                  starts=lambda l0, nodes: broadcast.first_order_start(
                                      kappa, g, l0, c_e, C, nodes))
    for k in np.flatnonzero(~ok):
        x[k] = solve_fixed_point(g[k], S[k], rr[k], lm[k], scale=pairs[S[k], rr[k]],
                                 max_seconds=max_seconds, begun=begun)[0]
    x, nodes, ok = broadcast.refine(x, kappa, g, lm, c_e, C, tol=TOL, rtol=QUAD_RTOL)
    res = broadcast.limits(x, nodes, kappa, c_e, C)
    # The one-point solver's rule at this solution: where it is not the Gauss-Hermite tensor,
    # that solver (composite rules) gives the entry instead.
    ok &= np.array([Rule.at(kappa[k], int(nodes[k]), res["a"][k], res["rho"][k]).is_gauss_hermite
                    for k in range(idx.size)], bool)
    res["test_error"] = broadcast.test_errors(kappa, res["a"], res["rho"])
    for f in FIELDS:
        out[f][idx[ok]] = res[f][ok]
    return ok
