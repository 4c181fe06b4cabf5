"""Argument checks shared by every public function: bad input raises ``ValueError`` naming the
parameter and its valid range, so that no NaN ever leaves the package silently."""

from __future__ import annotations

import numpy as np


def as_array(name: str, value, *, low=None, high=None, low_open=False, high_open=False,
             allow_inf=False) -> np.ndarray:
    """Return ``value`` as a float array after checking it lies in the stated range.

    Parameters
    ----------
    name : str
        Parameter name used in the error message.
    value : array_like
        Scalar or array of numbers.
    low, high : float, optional
        Bounds of the valid range; ``low_open``/``high_open`` make them strict.
    allow_inf : bool
        Accept ``+inf`` (still subject to ``high``).
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    lo_txt = "" if low is None else (f"{'(' if low_open else '['}{low:g}")
    hi_txt = "" if high is None else (f"{high:g}{')' if high_open else ']'}")
    rng = f"{lo_txt or '(-inf'}, {hi_txt or 'inf)'}"
    if np.isnan(arr).any() or (not allow_inf and np.isinf(arr).any()):
        raise ValueError(f"{name} must be a finite number in {rng}, got {value!r}")
    if low is not None and (np.any(arr <= low) if low_open else np.any(arr < low)):
        raise ValueError(f"{name} must lie in {rng}, got {value!r}")
    if high is not None and (np.any(arr >= high) if high_open else np.any(arr > high)):
        raise ValueError(f"{name} must lie in {rng}, got {value!r}")
    return arr


def positive(name: str, value) -> np.ndarray:
    """``value`` > 0, finite."""
    return as_array(name, value, low=0.0, low_open=True)


def nonnegative(name: str, value) -> np.ndarray:
    """``value`` >= 0, finite."""
    return as_array(name, value, low=0.0)


def positive_int(name: str, value, *, minimum: int = 1) -> int:
    """An integer >= ``minimum``."""
    try:
        ok = not isinstance(value, bool) and int(value) == value and value >= minimum
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
