"""Replicate statistics: the one place means, standard errors and Student-t intervals over
simulation replicates are computed (compare, sweep, figures and paper checks all use it)."""

from __future__ import annotations

import numpy as np


def mean_se(x, axis: int = 0):
    """Mean and standard error of the mean along ``axis`` (replicates)."""
    x = np.asarray(x, dtype=float)
    return x.mean(axis), x.std(axis, ddof=1) / np.sqrt(x.shape[axis])


def t_half_width(se, reps: int, level: float = 0.95):
    """Half-width of the Student-t interval with ``reps - 1`` degrees of freedom."""
    from scipy import stats  # here, not at import: scipy.stats costs the CLI ~0.4 s

    return stats.t.ppf(0.5 + level / 2, reps - 1) * se
