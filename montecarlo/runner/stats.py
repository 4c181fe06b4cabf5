"""Replicate statistics: the one place means, standard errors and Student-t intervals over
simulation replicates are computed (compare, sweep, figures and paper checks all use it)."""

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
