"""Argument checks shared by every public function: bad input raises ``ValueError`` naming the
parameter and its valid range, so that no NaN ever leaves the package silently."""

from __future__ import annotations

import numpy as np


#: Accepted method names -> the canonical name, in Python and on the command line (DESIGN.md:
#: ``pfedme`` is the joint objective's canonical name, ``fedprox`` an alias everywhere).
METHOD_ALIASES = {"fedprox": "pfedme"}


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
    bad = np.isnan(arr) | (np.isinf(arr) & (not allow_inf))
    if bad.any():
        raise ValueError(f"{name} must be a finite number in {rng}, got {_show(arr, bad)}")
    if low is not None:
        bad |= arr <= low if low_open else arr < low
    if high is not None:
        bad |= arr >= high if high_open else arr > high
    if bad.any():
        raise ValueError(f"{name} must lie in {rng}, got {_show(arr, bad)}")
    return arr


def _show(arr, bad):
    """The offending value, without dumping a whole array into the message."""
    if arr.ndim == 0:
        return repr(float(arr))
    first = np.flatnonzero(bad.ravel())[0]
    return f"{float(arr.ravel()[first])!r} (entry {first} of {arr.size})"


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
