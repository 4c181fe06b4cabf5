"""The proximal map of the logistic loss ``l(t) = log(1 + e^-t)`` (label +1),
``prox_{mu l}(v) = argmin_t l(t) + (t - v)^2 / (2 mu)``, the ``t`` of every expectation of the
CGMT system (Sur & Candes, PNAS 2019, eq. 5; ``riskcalc.logistic.fixed_point``): elementwise
with a safeguarded Newton iteration (``prox_logistic``), for a batch started close by Halley
steps (``prox_near``), and the sigmoid it is written with. The quadrature rules that integrate
it: ``riskcalc.logistic.engine.gaussian``.

No scipy submodule is imported here (fast ``riskcalc`` start-up).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError


def sigmoid(x, out=None):
    """``1 / (1 + e^-x)`` with full relative accuracy for ``x >= -709`` (both terms of the
    denominator are accurate; for ``x -> -inf`` it is ``e^-x`` to rounding); below, where the
    value is under 1e-308, the exponent is capped (absolute error < 1e-307) so that nothing
    overflows. ``out``: a float array of x's shape to compute in (x may be it; ``prox_near``'s
    buffers), else new arrays."""
    e = np.negative(np.asarray(x, float), out=out)
    e = np.exp(np.minimum(e, 709.0, out=out), out=out)
    return np.divide(1.0, np.add(e, 1.0, out=out), out=out)


def prox_logistic(v, mu, start=None):
    """``argmin_t log(1 + e^-t) + (t - v)^2 / (2 mu)``, elementwise (label +1).

    The optimality condition ``f(t) = t - v - mu sigmoid(-t) = 0`` is increasing in ``t``, slope in
    ``[1, 1 + mu/4]`` and its root lies in ``[v, v + mu]``: Newton steps kept inside that
    bracket (bisection otherwise) converge for every ``v`` and ``mu > 0``. ``start``: an initial
    guess (e.g. the prox at nearby ``v, mu``), clipped into the bracket.

    Raises
    ------
    SolverError
        If some entry has not converged after 200 steps.
    """
    v = np.asarray(v, float)
    mu = np.broadcast_to(np.asarray(mu, float), v.shape)
    shape = v.shape
    v, mu = v.ravel(), mu.ravel()
    lo, hi = v.copy(), v + mu
    if start is None:
        t = v + mu * sigmoid(-v) / (1.0 + mu * 0.25)
    else:
        t = np.clip(np.broadcast_to(start, shape).ravel(), lo, hi)
    step_old = hi - lo
    idx = np.arange(v.size)           # entries still iterating
    for _ in range(200):
        ti, vi, mi = t[idx], v[idx], mu[idx]
        p = sigmoid(-ti)
        f = ti - vi - mi * p
        lo_i = np.where(f < 0, ti, lo[idx])
        hi_i = np.where(f > 0, ti, hi[idx])
        step = f / (1.0 + mi * p * (1.0 - p))
        t_new = ti - step
        # rtsafe (Numerical Recipes 9.4): bisect when Newton leaves the bracket or does not
        # halve the step, which stops Newton cycling across the inflection point at t = 0.
        bisect = ~((t_new > lo_i) & (t_new < hi_i)) | (np.abs(step) > 0.5 * np.abs(step_old[idx]))
        # The slope is >= 1, so |t - root| <= |f|: stop at rounding level, keeping this t.
        done = np.abs(f) <= 4e-14 * (1.0 + np.abs(ti) + np.abs(vi))
        t[idx] = np.where(done, ti, np.where(bisect, 0.5 * (lo_i + hi_i), t_new))
        step_old[idx] = np.where(bisect, 0.5 * (hi_i - lo_i), step)
        lo[idx], hi[idx] = lo_i, hi_i
        idx = idx[~done]
        if idx.size == 0:
            return t.reshape(shape)
    raise SolverError("logistic proximal map: Newton did not converge in 200 steps")


def prox_near(v, mu, start):
    """``prox_logistic`` for a batch, fast when ``start`` is close; returns ``(t, sigmoid(-t))``.

    Halley steps (the derivatives of ``f(t) = t - v - mu sigmoid(-t)`` are
    ``f' = 1 + mu h``, ``f'' = -mu (1 - 2p) h`` with ``p = sigmoid(-t)``, ``h = p (1 - p)``) on the
    whole array, no bookkeeping of finished entries, until every residual is below
    ``4e-14 (1 + |t| + |v|)``, ``prox_logistic``'s test entry by entry (the slope is >= 1, so
    that bounds the error in ``t``; a bound by the batch's largest ``mu`` instead left errors
    of 1e-7 at ``mu ~ 1e7``, a global model near separability, and no root to ``TOL``);
    entries still above it after a few steps (a far start) finish with the safeguarded
    ``prox_logistic``. Without ``start``, each point starts from ``_prox_table``. ``v`` has
    shape (P, n, n) and ``mu`` (P, 1, 1).
    """
    t = _prox_table(v, mu[:, 0, 0]) if start is None else start
    tol = np.abs(v)
    tol += 1.0
    tol *= 4e-14
    # Each step in buffers allocated once (the small grids of a root solve spent as much in
    # allocation and call overhead as in arithmetic; ``sigmoid`` computes in one of them),
    # the same operations in the same order as the formulas below (bitwise the same
    # iterates); ``start`` is never written to.
    p, mp, f, w, d1, q, num = (np.empty_like(v) for _ in range(7))
    ok = np.empty(v.shape, bool)
    for _ in range(6):
        sigmoid(np.negative(t, out=p), out=p)
        np.multiply(mu, p, out=mp)
        np.subtract(t, v, out=f)                    # f = t - v - mu p
        f -= mp
        np.abs(t, out=w)                            # |f| <= tol + 4e-14 |t|
        w *= 4e-14
        w += tol
        np.abs(f, out=q)
        if np.less_equal(q, w, out=ok).all():
            return t, p
        np.subtract(1.0, p, out=w)                  # w = mu h = mu p (1 - p)
        w *= mp
        np.add(w, 1.0, out=d1)                      # f' = 1 + mu h
        np.multiply(p, 2.0, out=q)                  # q = f (1 - 2p) mu h
        np.subtract(1.0, q, out=q)
        q *= f
        q *= w
        np.multiply(d1, 2.0, out=w)                 # w = 2 f'^2 + q
        w *= d1
        w += q
        np.multiply(f, 2.0, out=num)
        num *= d1
        num /= w
        t = t - num
    mu = np.broadcast_to(mu, v.shape)
    bad = np.abs(t - v - mu * sigmoid(-t)) > tol + 4e-14 * np.abs(t)
    t = t.copy()
    t[bad] = prox_logistic(v[bad], mu[bad], np.clip(t[bad], v[bad], v[bad] + mu[bad]))
    return t, sigmoid(-t)


def _prox_table(v, mu, K: int = 129):
    """A start for the prox of every entry of ``v`` (P, n, n) at ``mu`` (P,): the exact prox
    (``prox_logistic``) on K equispaced values spanning each point's ``v``, linearly
    interpolated (``t`` is increasing in ``v`` with slope in (0, 1])."""
    lo, hi = v.min(axis=(1, 2)), v.max(axis=(1, 2))
    width = np.maximum(hi - lo, 1e-300)
    grid = lo[:, None] + width[:, None] * np.linspace(0.0, 1.0, K)
    table = prox_logistic(grid, mu[:, None])
    pos = (v - lo[:, None, None]) / width[:, None, None] * (K - 1)
    i = np.clip(pos.astype(np.intp), 0, K - 2)
    frac = pos - i
    rows = np.arange(len(v))[:, None, None]
    return table[rows, i] * (1.0 - frac) + table[rows, i + 1] * frac
