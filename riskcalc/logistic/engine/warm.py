"""Warm starts along grids of logistic limits (``riskcalc.logistic.finite_clients.grid``, the far
points of ``riskcalc.logistic.grid``): Jacobians carried from point to point
(``JacobianMemory``) and quadrature rules shared within a grid (``shared_rules``,
``remembered``), with their last proximal points. Outside a grid nothing is kept: a scalar
call's values do not depend on the calls before it.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np


class JacobianMemory:
    """Jacobians of one fixed point carried along a grid of parameter points
    (``riskcalc.logistic.finite_clients.grid``), one per ladder level.

    ``root`` solves by Broyden's method (the "good" rank-one update) started from the
    Jacobian the previous point ended with (a finite-difference Jacobian at the first point):
    near a neighbour's solution a few residual evaluations reach the root, where Powell's
    hybrid method spends ``n + 1`` on a fresh Jacobian alone. It reports failure (None) rather
    than wander: the caller then runs its own solver (hybr), whose checks are unchanged.
    """

    #: Broyden steps per root; a residual growing by more than ``GROWTH`` stops it.
    MAXITER, GROWTH = 12, 2.0

    def __init__(self):
        self.jac = {}

    def root(self, fun, x0, level, tol: float):
        """``(x, sup |fun(x)|, evaluations)`` with the residual at most ``tol`` (iterating on to
        ``tol / 100`` or a step at rounding level), or None."""
        x = np.array(x0, float)
        r, n = fun(x), 1
        J = self.jac.get(level)
        if J is None:
            J, n = np.empty((x.size, x.size)), n + x.size
            for i in range(x.size):
                h = 1e-7 * (1.0 + abs(x[i]))
                e = x.copy()
                e[i] += h
                J[:, i] = (fun(e) - r) / h
        err = float(np.max(np.abs(r)))
        for _ in range(self.MAXITER):
            if not np.isfinite(err) or err <= tol * 1e-2:
                break
            try:
                dx = -np.linalg.solve(J, r)
            except np.linalg.LinAlgError:
                break
            x_new = x + dx
            r_new = fun(x_new)
            n += 1
            err_new = float(np.max(np.abs(r_new)))
            if not err_new <= self.GROWTH * err:
                break
            J = J + np.outer(r_new - r - J @ dx, dx) / (dx @ dx)
            x, r, err = x_new, r_new, err_new
            if np.all(np.abs(dx) <= 1e-13 * (1.0 + np.abs(x))):
                break
        if not err <= tol:
            self.jac.pop(level, None)
            return None
        self.jac[level] = J
        return x, err, n


#: ``remembered``'s capacity: rules, and the most nodes of a rule kept.
REMEMBER, REMEMBER_NODES = 48, 40_000
#: The store of ``shared_rules`` (None outside: nothing is kept).
_STORE = [None]


@contextmanager
def shared_rules():
    """Within this block, ``remembered`` keeps the small rules it builds: the grids
    (``riskcalc.logistic.finite_clients.grid``, the far points of ``grid``) solve one point after
    another on rules of the same axes. Outside it every solve builds its own rules, so a call's
    values do not depend on the calls before it (bit for bit: shared rules carry their last
    proximal points, the next solve's warm start, which moves the roots by rounding)."""
    outer, _STORE[0] = _STORE[0], {}
    try:
        yield
    finally:
        _STORE[0] = outer


def remembered(key, build):
    """The rule ``key`` (its class, ``kappa``, ladder level and axis keys: these fix its nodes)
    built once within ``shared_rules``: a solve re-builds the rules of its point at every root,
    and a grid those of its neighbours. Sharing also shares the last proximal points, the next
    call's warm start. Rules over ``REMEMBER_NODES`` nodes are not kept (memory); the oldest go
    beyond ``REMEMBER``. Outside ``shared_rules``: ``build()``."""
    store = _STORE[0]
    rule = None if store is None else store.get(key)
    if rule is None:
        rule = build()
        if store is None:
            return rule
        # A rule of the same class, level and axes at the nearest other kappa (a grid's
        # neighbour) has proximal points on nodes of the same shape: the first warm start.
        near = [(abs(k[1] - key[1]), i) for i, (k, other) in enumerate(store.items())
                if k[:1] + k[2:] == key[:1] + key[2:] and other._t is not None
                and other.weight.shape == rule.weight.shape]
        if near:
            rule._t = list(store.values())[min(near)[1]]._t
        if rule.weight.size <= REMEMBER_NODES:
            if len(store) >= REMEMBER:
                del store[next(iter(store))]
            store[key] = rule
    return rule
