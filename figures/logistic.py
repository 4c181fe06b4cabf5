"""Helpers of the logistic / quadratic figures (papers 000, 001, 004): replicate statistics of
``montecarlo.experiments.presets`` rows, into the figure table."""

from __future__ import annotations

import numpy as np
from montecarlo.runner.stats import mean_se, t_half_width

from figures.core import Table


def mean_ci(values, level: float = 0.95):
    """Mean, standard error and Student-t interval over replicates (NaN interval for one)."""
    v = np.asarray(values, float)
    if v.size < 2:
        return v.mean(), np.nan, np.nan, np.nan
    mean, se = mean_se(v)
    half = t_half_width(se, v.size, level)
    return mean, se, mean - half, mean + half


def add_summary(table: Table, rows, *, panel: str, method: str, series: str, x_col: str,
                x_name: str, y_col: str, kind: str = "simulation", where=None) -> None:
    """Per value of ``x_col``, the replicate mean of ``y_col`` over the rows of ``method``
    (rows filtered by ``where``), with 95% intervals."""
    groups: dict = {}
    for r in rows:
        if r["method"] != method or (where is not None and not where(r)):
            continue
        groups.setdefault(r[x_col], []).append(r[y_col])
    for x in sorted(groups):
        vals = groups[x]
        mean, se, lo, hi = mean_ci(vals)
        table.add(panel, series, kind, x_name, x, y_col, mean, se=se, lo=lo, hi=hi,
                  reps=len(vals))
