"""Shared argument checks of the minimax bounds (built on :mod:`riskcalc._validate`), and
``from_logs``: a bound whose float evaluation left the floats' range, from its logarithm."""

from __future__ import annotations

import functools
import inspect
import math
import sys

import numpy as np

from riskcalc._validate import _show, as_array, real

PAPER_000 = "../shared/papers/000_7ff2ed2592df3b60.txt"
PAPER_001 = "../shared/papers/001_352374a3e1e3397e.txt"
PAPER_004 = "../shared/papers/004_98172ed3646eef14.txt"


#: Magnitudes a parameter may take (0 aside, where it may be 0), as on the command line
#: (``riskcalc bounds``): within them the bounds' products stay finite or go through
#: ``from_logs``; beyond them the Python functions answered silently what the command refuses
#: (inf for mu_g at L = mu = lam = 1e200 in bilevel_constants; lower_bound_aer 3.1e210 for
#: 2.9e143 where d m overflowed).
MAGNITUDE = (1e-100, 1e100)


def _magnitude(name: str, value, zero: bool) -> np.ndarray:
    """``value`` (``real``) positive within ``MAGNITUDE``, or 0 where ``zero``: one range in
    the message (-1 was refused as outside "(0, inf)", 1e101 as outside [1e-100, 1e+100])."""
    arr = np.asarray(real(name, value), dtype=float) + 0.0      # -0.0 is a 0
    with np.errstate(invalid="ignore"):
        bad = ~((arr >= MAGNITUDE[0]) & (arr <= MAGNITUDE[1]) | (zero & (arr == 0)))
    if np.any(bad):
        raise ValueError(f"{name} must {'be 0 or ' if zero else ''}lie in [{MAGNITUDE[0]:g}, "
                         f"{MAGNITUDE[1]:g}] (the bounds' range), got {_show(arr, bad)}")
    return arr


def positive(name: str, value) -> np.ndarray:
    """``value`` > 0, finite, within ``MAGNITUDE``."""
    return _magnitude(name, value, False)


def nonnegative(name: str, value) -> np.ndarray:
    """``value`` 0 or within ``MAGNITUDE``."""
    return _magnitude(name, value, True)


def broadcasting(func):
    """Decorate a bound whose parameters broadcast (numpy's rules): numbers given as arrays or
    lists whose shapes do not broadcast together are a ValueError naming them. numpy's
    "operands could not be broadcast together with shapes (2,) (3,)" named no parameter, and
    apgd_complexity answered L of 2 values with lam of 3 by outputs of different shapes."""
    sig = inspect.signature(func)

    @functools.wraps(func)
    def checked(*args, **kwargs):
        try:
            given = sig.bind(*args, **kwargs).arguments
        except TypeError:
            return func(*args, **kwargs)        # Python's own message for a wrong call
        shapes = {}
        for name, value in given.items():
            if isinstance(value, (list, tuple, np.ndarray)):
                try:
                    arr = np.asarray(value)
                except ValueError:              # ragged: the parameter's own check names it
                    continue
                if arr.dtype.kind in "iuf":
                    shapes[name] = arr.shape
        try:
            shape = np.broadcast_shapes(*shapes.values())
        except ValueError:
            raise ValueError("the parameters given as arrays must broadcast together, got "
                             + ", ".join(f"{k} of shape {v}" for k, v in shapes.items())
                             ) from None
        result = func(*args, **kwargs)
        return result if not shapes else _spread(result, shape)
    return checked


def _spread(value, shape):
    """``value`` (a number, an array, or a dict of them) broadcast to the parameters' ``shape``:
    a result that does not depend on a parameter given as an array kept its own shape
    (outer_rate of L = [1, 2] was one number; bilevel_constants of an empty L mixed numbers
    with empty arrays; fuzz39 fuzz2 F9)."""
    if isinstance(value, dict):
        return {k: _spread(v, shape) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        # A record (fedprox_constants', fedprox_lambda's) field by field: C1 of L = [1, 2] was
        # one number beside C2's two, is_lower one bool beside lam's two (fuzz42 bounds F9).
        return type(value)(*(_spread(v, shape) for v in value))
    if not isinstance(value, (int, float, np.ndarray, np.generic)):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf" or arr.shape == shape:
        return value
    try:
        return np.broadcast_to(arr, np.broadcast_shapes(arr.shape, shape)).copy()
    except ValueError:
        return value


def scalars(**named) -> None:
    """Raise unless each of ``named`` is one number (``real`` of rank 0): the weighted bounds
    sum over the clients' ``p`` and ``n``, so their constants are numbers (a list was numpy's
    TypeError "only 0-dimensional arrays can be converted to Python scalars", naming nothing;
    fuzz42 bounds F8)."""
    for name, value in named.items():
        real(name, value, ndim=0)


def smooth_convex(beta_name: str, beta, mu_name: str, mu):
    """``(beta, mu)`` as arrays with ``beta >= mu > 0``.

    A loss whose every sample is ``beta``-smooth cannot average to a ``mu``-strongly convex
    objective with ``mu > beta``, so such a pair describes no instance at all.
    """
    b = positive(beta_name, beta)
    u = positive(mu_name, mu)
    if np.any(b < u):
        raise ValueError(f"{beta_name} must be >= {mu_name} (smoothness bounds strong convexity),"
                         f" got {_offending(b < u, **{beta_name: b, mu_name: u})}")
    return b, u


def _offending(bad, **arrays) -> str:
    """The first entry where ``bad`` holds, as ``name=value`` of the broadcast ``arrays``
    (the message showed numpy's reprs, ``L=np.float32(0.1)``, or whole arrays)."""
    bad = np.asarray(bad)
    k = int(np.flatnonzero(bad)[0])
    values = {name: float(np.broadcast_to(a, bad.shape).ravel()[k])
              for name, a in arrays.items()}
    text = ", ".join(f"{name}={int(v) if v.is_integer() and abs(v) < 1e16 else v!r}"
                     for name, v in values.items())
    return text + (f" (entry {k} of {bad.size})" if bad.ndim else "")


def sizes(**named) -> list[np.ndarray]:
    """Sample sizes, client counts, summands per client or a dimension, in the order given:
    each in ``[1, MAGNITUDE[1]]``. Real values are taken (rate curves over continuous grids),
    but every theorem counts at least one client, sample or summand: below 1 the bounds
    answered for half a client (``al2sgd_complexity(m=0.5)``) where the command line refuses."""
    out = []
    for name, value in named.items():
        arr = np.asarray(real(name, value), dtype=float)
        with np.errstate(invalid="ignore"):
            bad = ~((arr >= 1) & (arr <= MAGNITUDE[1]))
        if np.any(bad):
            raise ValueError(f"{name} must lie in [1, {MAGNITUDE[1]:g}] (a count), got "
                             f"{_show(arr, bad)}")
        out.append(arr)
    return out


def client_sizes(n, m):
    """Paper 004's ``m`` clients of ``n`` samples each: ``(n, m, N = m n)`` as arrays."""
    nn, mm = sizes(n=n, m=m)
    return nn, mm, nn * mm


def at_most(small_name: str, small, big_name: str, big) -> None:
    """Raise unless ``small <= big`` elementwise (e.g. one client's n_i cannot exceed N)."""
    bad = np.asarray(small) > np.asarray(big)
    if np.any(bad):
        raise ValueError(f"{small_name} must be <= {big_name}, got "
                         f"{_offending(bad, **{small_name: small, big_name: big})}")


def enough_samples(name: str, n, beta, mu, theorem: str, m=None) -> None:
    """Raise unless ``n >= 4 beta / mu`` (``4 beta m / mu`` for a total ``N`` over ``m``
    clients): paper 000's Theorems 4, 6, 11 and 12 assume ``n_i >= 4 beta / mu`` for every
    client, and a total below ``4 beta m / mu`` leaves some client below it."""
    need = 4 * beta / mu * (1.0 if m is None else m)
    bad = np.asarray(n) < need
    if np.any(bad):
        extra = {} if m is None else {"m": m}
        raise ValueError(f"{name} must be >= 4*beta{'' if m is None else '*m'}/mu ({theorem} "
                         f"of paper 000: every client needs n_i >= 4*beta/mu), got "
                         f"{_offending(bad, **{name: n, 'beta': beta, 'mu': mu, **extra})}")


def federation_holds(n_i, N, m, beta, mu, theorem: str) -> None:
    """Raise unless one client's ``n_i`` and ``m`` clients can make ``N = n_1 + ... + n_m``
    (paper 000, eq. 2) when every client holds ``n_j >= 4 beta / mu`` (Theorems 11-12): the
    other ``m - 1`` clients hold at least ``(m - 1) 4 beta / mu``, so ``N >= n_i + (m - 1) 4
    beta / mu``, and a lone client (``m = 1``) holds all ``N = n_i``. ``fedprox000_ier`` answered
    for n_i = 4, N = 8, m = 1 (fuzz42 bounds F1)."""
    n_i, N, m = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (n_i, N, m)))
    with np.errstate(over="ignore"):
        short = N < n_i + 4 * beta / mu * (m - 1)
    lone = (m == 1) & (N != n_i)
    for bad, rule in ((lone, "N must equal n_i when m = 1 (one client holds every sample)"),
                      (short, "N must be >= n_i + (m - 1)*4*beta/mu (the other m - 1 clients "
                              "hold n_j >= 4*beta/mu samples each)")):
        if np.any(bad):
            raise ValueError(f"{rule}: {theorem} of paper 000 with N = n_1 + ... + n_m, got "
                             f"{_offending(bad, n_i=n_i, N=N, m=m, beta=beta, mu=mu)}")


def heterogeneity(R) -> np.ndarray:
    """The heterogeneity radius R >= 0."""
    return nonnegative("R", R)


def probability_vector(p, n):
    """Client weights ``p`` (a probability vector) and sample sizes ``n`` as 1-d arrays."""
    p_arr = as_array("p", p, low=0.0, high=1.0)
    (n_arr,) = sizes(n=n)
    if p_arr.ndim != 1 or n_arr.shape != p_arr.shape:
        raise ValueError(f"p and n must be 1-d arrays of the same length, got shapes "
                         f"{p_arr.shape} and {n_arr.shape}")
    if not np.isclose(p_arr.sum(), 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"p must sum to 1, got sum {float(p_arr.sum())!r}")
    return p_arr, n_arr


def scalar_or_array(x):
    """Return a Python float for 0-d results, so scalar calls give scalars."""
    x = np.asarray(x)
    return float(x) if x.ndim == 0 and x.dtype.kind == "f" else x


#: Natural logarithms of the largest float and of the smallest normal one.
_LOG_MAX, _LOG_MIN = math.log(sys.float_info.max), math.log(sys.float_info.min)


def from_logs(name: str, direct, log_value):
    """A nonnegative quantity from its float evaluation ``direct`` where that kept its digits
    (within 1e-12 relative of its logarithm), else from its natural logarithm ``log_value``
    (-inf for 0): a product or a term of ``direct`` may leave the floats' range (inf, or 0) when
    the quantity itself does not.

    Raises
    ------
    ValueError
        Naming ``name`` where the quantity itself has no float: above the largest float or
        nonzero below the smallest normal one (there inf or 0 would be printed as a result).
    """
    lv, d = np.broadcast_arrays(np.asarray(log_value, dtype=float),
                                np.asarray(direct, dtype=float))
    for bad, where in ((lv > _LOG_MAX, "above the largest float (1.8e308)"),
                       ((lv < _LOG_MIN) & (lv > -np.inf),
                        "nonzero but below the smallest normal float (2.2e-308)")):
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            exp10 = float(lv.ravel()[k]) / math.log(10)
            power = math.floor(exp10)
            # A mantissa rounding up to 10 moves to the next power: 9.9996e400 was 10.000e+400.
            mantissa = f"{10 ** (exp10 - power):.3f}"
            if mantissa == "10.000":
                mantissa, power = "1.000", power + 1
            # 10^(-4.34e249) (mu0 at T = 1e250) had its 250 digits of exponent written out.
            text = f"{mantissa}e{power:+d}" if abs(exp10) < 1e15 else f"10^{exp10:.6g}"
            raise ValueError(f"{name} is {text}{f' (entry {k} of {bad.size})' if bad.ndim else ''}"
                             f", {where}: it has no float value; use less extreme parameters")
    with np.errstate(divide="ignore", invalid="ignore"):
        kept = np.isfinite(d) & (d > 0) & (np.abs(np.log(d) - lv) <= 1e-12)
    return scalar_or_array(np.where(kept, d, np.exp(lv)))


def counts(x):
    """Whole counts held as floats (ceil'd): integers (a Python int for a scalar, else int64)
    where every entry fits int64, else the floats themselves (int64 had wrapped paper 004's
    K_118 = 9e19 to -2^63; beyond it the float carries all the digits there are)."""
    x = np.asarray(x, dtype=float)
    if np.all(x < 2.0 ** 63):
        return int(x) if x.ndim == 0 else x.astype(np.int64)
    return float(x) if x.ndim == 0 else x
