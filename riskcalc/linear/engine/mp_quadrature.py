"""Expectations under the Marchenko-Pastur law by Gauss-Chebyshev quadrature (vectorized).

Used by the finite-clients limits (``riskcalc.linear.finite_clients``) for the traces of
rational functions of one client's sample covariance that have no short closed form.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError

_QUAD_START, _QUAD_MAX, _QUAD_TOL = 32, 1 << 15, 1e-12


def mp_expect(gamma, fun, *args, strict: bool = True):
    """tau(fun(S)) for S with the Marchenko-Pastur law of ratio gamma (mean 1), vectorized.

    For ratio c <= 1 the law mu has s dmu(s) = sqrt((b - s)(s - a)) / (2 pi c) ds on
    [a, b] = [(1 - sqrt c)^2, (1 + sqrt c)^2], so with G(s) = (F(s) - F(0)) / s,
    tau(F) = F(0) + int G(s) sqrt((b - s)(s - a)) ds / (2 pi c): Gauss-Chebyshev quadrature of
    the second kind with the same nodes for every c (the 1/s of the density is gone, so the
    convergence is geometric at a rate set by the poles of F only; F(0) may be replaced by any
    constant, and is by 0 where F has a pole at 0). For gamma > 1 the law is
    (1 - 1/gamma) delta_0 plus 1/gamma times the law of gamma S' with S' of ratio 1/gamma (the
    nonzero eigenvalues of X^T X / n are those of X X^T / n), whence
    tau(F) = F(0) + tau'(F(gamma S') - F(0)) / gamma. The nodes double until two rules agree
    to 1e-12; with ``args`` (per-row parameters of ``fun``) each row stops as soon as its own
    rules agree, so a few hard rows (a pole close to the spectrum) do not make every row pay
    for their nodes.

    Parameters
    ----------
    gamma : ndarray (K,)
        Ratios > 0.
    fun : callable
        ``fun(s, *args)``: s (K', n) -> tuple of (K', n) arrays (several integrands at once),
        analytic on a neighbourhood of [0, b]; K' = K without ``args``.
    *args : ndarray (K, ...)
        Per-row parameters of ``fun``, handed to it for the rows still being refined.
    strict : bool
        False: the rows that have not converged with ``_QUAD_MAX`` nodes are NaN instead of
        an error (a batch over many rows, each of which stands alone).

    Returns
    -------
    ndarray (number of integrands, K)

    Raises
    ------
    SolverError
        If the quadrature has not converged with ``_QUAD_MAX`` nodes (``strict``).
    """
    gamma = np.asarray(gamma, dtype=float)[:, None]
    c = np.minimum(gamma, 1.0 / gamma)
    scale = np.maximum(gamma, 1.0)
    center, half = 1.0 + c, 2.0 * np.sqrt(c)
    with np.errstate(divide="ignore", invalid="ignore"):
        at0 = np.array(fun(np.zeros_like(gamma), *args))[..., 0]
    # tau(F) = C + tau(F - C) for any constant C: a pole of F at 0 (possible only below the
    # spectrum, gamma < 1) takes C = 0 and converges at the rate sqrt(gamma)^n.
    at0 = np.where(np.isfinite(at0), at0, 0.0)
    out = np.empty_like(at0)
    todo = np.arange(gamma.shape[0])
    rows = slice(None)              # every row, until some converge (no copies meanwhile)
    prev, n = None, _QUAD_START
    while n <= _QUAD_MAX:
        x, w = _nodes(n)
        s = center[rows] + half[rows] * x
        sub = args if isinstance(rows, slice) else [a[rows] for a in args]
        vals = np.array(fun(scale[rows] * s, *sub))
        # G(s) sqrt(1 - x^2) h^2 dx / (2 pi c), with the Chebyshev-U weight in w.
        integral = (((vals - at0[:, rows, None]) / s) @ w
                    * (half[rows, 0] ** 2 / (2 * np.pi * c[rows, 0])))
        vals = at0[:, rows] + integral / scale[rows, 0]
        if prev is not None:
            done = np.all(np.abs(vals - prev) <= _QUAD_TOL * (1 + np.abs(vals)), axis=0)
            if done.all():
                out[:, todo] = vals
                return out
            if not args:
                done[:] = False
            if done.any():
                out[:, todo[done]] = vals[:, done]
                todo, vals = todo[~done], vals[:, ~done]
                rows = todo
        prev, n = vals, 2 * n
    if not strict:
        out[:, todo] = np.nan
        return out
    raise SolverError("Marchenko-Pastur quadrature did not converge (a pole too close to the "
                      "spectrum: lam too small?)")


_NODES = {}


def _nodes(n: int):
    """The n Chebyshev-U nodes cos(k pi / (n + 1)) and weights, computed once per n (the
    finite-M limits call ``mp_expect`` thousands of times on a few rows each)."""
    if n not in _NODES:
        k = np.arange(1, n + 1) * (np.pi / (n + 1))
        _NODES[n] = (np.cos(k), np.sin(k) ** 2 * (np.pi / (n + 1)))
    return _NODES[n]
