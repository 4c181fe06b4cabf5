"""Replicate statistics: the one place means, standard errors and Student-t intervals over
simulation replicates are computed (compare, sweep, figures and paper checks all use it), and
a prediction's summary against them (``summarize``, for compare and the sweeps)."""

from __future__ import annotations

import numpy as np


def mean_se(x, axis: int = 0):
    """Mean and standard error of the mean along ``axis`` (replicates)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        mean, se = x.mean(axis), x.std(axis, ddof=1) / np.sqrt(x.shape[axis])
    top = np.max(np.abs(x), axis=axis) if x.size else np.zeros(())
    tiny = np.any((top > 0) & (top < 1e-150))
    if (np.all(np.isfinite(se)) and not tiny) or not np.all(np.isfinite(x)):
        return mean, se
    # Finite replicates whose squared deviations overflow (risks near 1e200 at r = sigma =
    # 1e100 printed "std.err inf") or underflow (RTFA variances near 2e-200 at lam = 1e100
    # printed "std.err 0" and an interval excluding the prediction): the same statistics of x
    # scaled by its largest magnitude.
    scale = np.max(np.abs(x), axis=axis, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    y = x / scale
    scale = np.squeeze(scale, axis)
    return y.mean(axis) * scale, y.std(axis, ddof=1) / np.sqrt(x.shape[axis]) * scale


def t_half_width(se, reps: int, level: float = 0.95):
    """Half-width of the Student-t interval with ``reps - 1`` degrees of freedom."""
    # The quantile by scipy.special's stdtrit, which scipy.stats.t.ppf calls (equal to the bit
    # for reps - 1 = 1 to 2000, levels 0.5 to 0.999): importing scipy.stats cost each process
    # that reports an interval (the command line, the figures, the workers) about 0.9 s.
    from scipy.special import stdtrit

    return stdtrit(reps - 1, 0.5 + level / 2) * se


def summarize(samples, predicted, level: float = 0.95, scale=None) -> dict:
    """Mean, standard error, Student-t interval, relative difference and coverage of one
    quantity over replicates (axis 0 of ``samples``); vectorized over the other axes.

    The interval is mean +- t_{reps-1, (1+level)/2} * se; the relative difference is
    (mean - predicted) / predicted (NaN where predicted is 0, or below 1e-12 of a finite
    ``scale``, the predicted risk: the rounding of a simulation of that risk, a bias of
    8.6e-50 against a simulated 1.4e-15, had rel_diff 1.6e+33; fuzz38 quad F2). ``inside``
    also counts a prediction equal to a zero-width interval's mean (a deterministic quantity),
    within 1e-9 of either or 1e-12 of a finite ``scale``.
    """
    x = np.asarray(samples, dtype=float)
    mean, se = mean_se(x)
    half = t_half_width(se, x.shape[0], level)
    pred = np.asarray(predicted, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(pred != 0, (mean - pred) / pred, np.nan)
    # Rounding noise must not make a deterministic quantity (e.g. FedAvg's oracle bias) "miss":
    # neither relative to it, nor below the rounding of the risk (a ridge bias of 8e-200 at
    # lam = 1e-100 beside a risk of 0.25, simulated 0 with no spread, was "not in the 95%
    # interval"; fuzz39 fuzz F5).
    tol = half + 1e-9 * np.maximum(np.abs(pred), np.abs(mean))
    if scale is not None:
        scale = np.abs(np.asarray(scale, dtype=float))
        below = (np.abs(pred) < 1e-12 * scale) & np.isfinite(scale)
        rel = np.where(below, np.nan, rel)
        tol = tol + np.where(np.isfinite(scale), 1e-12 * scale, 0.0)
    # An infinite prediction (the ridgeless variance at gamma = 1) is inside no interval,
    # although |mean - inf| <= inf would say so.
    with np.errstate(invalid="ignore"):     # inf - inf: both overflowed, inside no interval
        inside = np.isfinite(pred) & np.isfinite(mean) & (np.abs(mean - pred) <= tol)
    return {"mean": mean, "se": se, "low": mean - half, "high": mean + half, "rel_diff": rel,
            "inside": inside}


def none_if_nan(v):
    """A float, or None for NaN (JSON has no NaN)."""
    v = float(v)
    return None if np.isnan(v) else v
