"""The edges of the nonzero spectrum of A = sum_j p_j S_j and its atom at 0 (derived here),
for ``sigma.fedavg.one_step`` (whose notation this follows: S_j = Sigma^(1/2) W_j
Sigma^(1/2), W_j white Wishart of ratio gamma_j, Sigma with spectrum H, c the scalar of its
step 2) and every route under a spectrum that needs the round map's window.

On the real axis off the spectrum, x = z / c lies off the support of H; with
y = E_H[s / (s - x)] and t = -1 / delta the equation for c reads sum_j p_j / (p_j gamma_j - t)
= y (a secular equation, increasing in t between its poles) and c = -t y, so
z(x) = -x t(x) y(x) is explicit up to that root. The top edge is the first local minimum of
z(x) coming down from x = +inf (x > max s, t above every pole); the bottom edge of the nonzero
part the first local maximum coming from z = 0: from x = 0+ when sum_j 1 / gamma_j > 1
(t < 0), from x_* < 0 with E_H[s / (s - x_*)] = sum_j 1 / gamma_j otherwise (A has the atom
1 - sum_j 1 / gamma_j at 0; 0 < t < min p_j gamma_j). Sigma = I, M = 1: (1 +/- sqrt(gamma))^2.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from riskcalc.errors import SolverError


def _secular(y, lo, hi, pg, p):
    """t in (lo, hi) with sum_j p_j / (p_j gamma_j - t) = y, increasing in t there (lo, hi:
    poles, 0, or infinite); the bracket walks from an interior point toward the root."""
    def f(t):
        return float(np.sum(p / (pg - t))) - y
    m = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (
        lo + 1.0 if np.isfinite(lo) else hi - 1.0)
    end, side = (lo, -1.0) if f(m) > 0 else (hi, 1.0)
    prev = m
    for k in range(1, 1100):
        x = m + side * (2.0 ** k - 1.0) if np.isinf(end) else end + (m - end) * 0.5 ** k
        if side * f(x) >= 0:
            a, b = sorted((prev, x))
            return brentq(f, a, b, xtol=1e-300, rtol=1e-15, maxiter=400)
        prev = x
    raise SolverError("rounds limit with a spectrum: the secular equation of the support "
                      "edges has no root in its bracket")


def _secular_scan(y, lo, hi, pg, p):
    """``_secular`` for every y (n,) of a scan at once: the same bracket walk, then 64
    bisections. The roots agree with Brent's to rounding but not bit for bit, so they only
    place the extremum on the scan (``_extremum``); its value is ``_secular``'s, as before
    (measured: ``pencil_edges``' fold of Algorithm 1's round map, ``test_rounds_sigma_alg1_
    fold``, was no longer confirmed when the clients' ends moved by one ulp)."""
    y = np.asarray(y, float)
    m = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (
        lo + 1.0 if np.isfinite(lo) else hi - 1.0)
    up = np.sum(p / (pg - m)) <= y                       # the root lies above m
    end = np.where(up, hi, lo)
    prev, x = np.full(y.size, m), np.full(y.size, m)
    todo = np.ones(y.size, bool)
    for k in range(1, 1100):
        i = np.flatnonzero(todo)
        side, far = np.where(up[i], 1.0, -1.0), np.isinf(end[i])
        e = np.where(far, m, end[i])
        step = np.where(far, m + side * (2.0 ** k - 1.0), e + (m - e) * 0.5 ** k)
        prev[i], x[i] = x[i], step
        todo[i] = side * (np.sum(p / (pg - step[:, None]), axis=1) - y[i]) < 0
        if not todo.any():
            break
    else:
        raise SolverError("rounds limit with a spectrum: the secular equation of the support "
                          "edges has no root in its bracket")
    a, b = np.minimum(prev, x), np.maximum(prev, x)       # f(a) <= 0 <= f(b)
    # 64 bisections: a bracket is no wider than the root's distance to the end it walked
    # toward (or than the root, toward infinity), and 2^-64 of that is below rounding.
    for _ in range(64):
        mid = 0.5 * (a + b)
        low = np.sum(p / (pg - mid[:, None]), axis=1) < y
        a, b = np.where(low, mid, a), np.where(low, b, mid)
    return 0.5 * (a + b)


def _extremum(zscan, zfun, xs, sign):
    """The first local extremum (sign +1 a minimum, -1 a maximum) of zfun along the grid xs
    (ordered from where z is known to lie outside the spectrum; ``zscan``: zfun at all of
    them at once), refined by Brent's method."""
    zs = sign * zscan(xs)
    k = next((i for i in range(1, len(xs) - 1) if zs[i] <= zs[i - 1] and zs[i] <= zs[i + 1]),
             None)
    if k is None:
        raise SolverError("rounds limit with a spectrum: no edge of the round map's spectrum "
                          "found on the scan")
    lo, hi = sorted((xs[k - 1], xs[k + 1]))
    res = minimize_scalar(lambda x: sign * zfun(x), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-15 * (abs(lo) + abs(hi))})
    return sign * min(res.fun, sign * zfun(xs[k]))


#: A scan of (0, 1) dense at both ends (an edge's critical point can sit near either).
_both_ends = 1.0 / (1.0 + np.exp(-np.linspace(-23.0, 23.0, 461)))


#: Distinct inputs whose edges ``edges`` keeps (least recently used dropped first), each of at
#: most ``EDGES_MEMO_BYTES`` (a 65,536-atom spectrum): at most 64 MiB held.
EDGES_MEMO = 64
EDGES_MEMO_BYTES = 1 << 20


def edges(atoms, weights, gam, p):
    """(a, b, mu0): the edges of the nonzero spectrum of A = sum_j p_j S_j and its atom at 0
    (module docstring).

    A scan of about 800 secular solves (at once: about 4 ms at a few atoms, 70 ms one by
    one) that the routes under a spectrum ask for again with the same arrays at every solve
    (each client's top, the
    pencil's and the circles' windows, every call of ``rounds_limit`` on one federation): the
    result is kept for the last ``EDGES_MEMO`` distinct inputs, keyed on each array's dtype,
    shape and bytes (the solve reads nothing else, so a kept value is the one a new solve would
    return). A failing solve is not kept, nor inputs of more than ``EDGES_MEMO_BYTES``.
    ``edges.cache_clear()`` forgets them."""
    key = tuple(_exact(x) for x in (atoms, weights, gam, p))
    if any(k is None for k in key) or sum(len(k[2]) for k in key) > EDGES_MEMO_BYTES:
        return _edges(atoms, weights, gam, p)
    return _edges_memo(key)


def _exact(x):
    """(dtype, shape, bytes) of x as an array, None for an object array (no bytes to key on)."""
    x = np.ascontiguousarray(x)
    return None if x.dtype.hasobject else (x.dtype.str, x.shape, x.tobytes())


@lru_cache(maxsize=EDGES_MEMO)
def _edges_memo(key):
    # The solve sees the arrays rebuilt from the key: the value depends on the key alone.
    return _edges(*(np.frombuffer(data, dtype).reshape(shape) for dtype, shape, data in key))


edges.cache_clear = _edges_memo.cache_clear
edges.cache_info = _edges_memo.cache_info


def _edges(atoms, weights, gam, p):
    s, h = np.asarray(atoms, float), np.asarray(weights, float)
    pg = p * gam
    inv = float(np.sum(1.0 / gam))
    mu0 = max(0.0, 1.0 - inv)

    def mH(x):
        return np.sum(h * s / (s - np.asarray(x, float)[..., None]), axis=-1)

    def z_of(x, lo, hi):
        y = float(mH(x))
        return -x * _secular(y, lo, hi, pg, p) * y

    def z_scan(xs, lo, hi):
        y = mH(xs)
        return -xs * _secular_scan(y, lo, hi, pg, p) * y

    top_t = (pg.max(), np.inf)
    smax = s.max()
    xs = smax + smax * np.geomspace(1e8, 1e-8, 321)
    b = _extremum(lambda x: z_scan(x, *top_t), lambda x: z_of(x, *top_t), xs, +1)
    if abs(inv - 1.0) < 1e-12:
        return 0.0, float(b), mu0
    # x_* (or x* when inv > 1): E_H[s / (s - x)] = inv on the branch left of min s.
    smin = s.min()
    if inv > 1:
        hi = smin * 0.5
        while mH(hi) < inv:        # the pole of E_H[s / (s - x)] at min s bounds the walk
            hi = smin - (smin - hi) * 0.5
        xend = brentq(lambda x: mH(x) - inv, 0.0, hi, xtol=1e-300, rtol=1e-15)
        xs = xend * _both_ends
        low_t = (-np.inf, 0.0)
    else:
        lo = -smax
        while mH(lo) > inv:
            lo *= 2
        xend = brentq(lambda x: mH(x) - inv, lo, 0.0, xtol=1e-300, rtol=1e-15)
        xs = xend * _both_ends[::-1]
        low_t = (0.0, pg.min())
    a = _extremum(lambda x: z_scan(x, *low_t), lambda x: z_of(x, *low_t), xs, -1)
    return float(a), float(b), mu0
