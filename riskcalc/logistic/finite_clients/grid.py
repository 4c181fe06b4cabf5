"""The finite-M logistic limits over grids: array arguments broadcast, and the points are solved
in an order along which each fixed point starts from its neighbours' solutions (issue 33,
item 2).

What is solved at each point is ``finite_clients.solve_point``, the body of the scalar
``logistic_clients_limit``: the same fixed points, the same acceptance (residual ``TOL``) and the
same quadrature ladder (two consecutive rules agree). What changes is where each solve starts.

- **Order.** The grid's points are visited in boustrophedon order (``grid.snake_order``: the
  reflected mixed-radix Gray code over the broadcast shape), so consecutive points differ in
  one index by one step, also at the turns of a 2-d grid.
- **Warm starts.** Each fixed point (the global model of ``pooled``, the fine-tuning of
  ``finetune``, the joint FedProx point of ``fedprox``) first tries a direct root on its path
  rule from a prediction: the previous point's path root moved along the secant of the last
  two (``predict``; linear extrapolation, used only where the last two steps in parameter space
  point the same way, so its error is second order in the step). When that root misses
  ``TOL`` the solver takes its own cold path (the continuation of the scalar call): a point that
  converges nowhere raises ``SolverError`` as the scalar call does.
- **Shared rules.** The quadrature rules of one axis layout are built once for the grid and
  carry their last proximal points to the next point (``warm.shared_rules``).
- **Shared global models.** Points with one federation and one ``global_lam`` (a grid in lam)
  share one global fixed point, solved once.

Entries therefore agree with scalar calls to within the fixed points' own accuracy (both are
roots of one system to residual ``TOL`` on the rule the ladder settles on), not bit for bit.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from riskcalc._validate import as_array, integers, parameter, positive_int
from riskcalc.logistic.engine.warm import JacobianMemory, shared_rules
from riskcalc.logistic.grid import snake_order
from riskcalc.logistic.blocks.pooled import Federation, solve_pooled
from riskcalc.logistic.ranges import (MAX_IDENTICAL, check_gamma, check_global_lam, check_lam,
                                     mle_lam)
from riskcalc.logistic.result import QUANTITIES, FiniteLogisticResult, LogisticClientsResult
from riskcalc.logistic.work import MAX_SECONDS, finite_seconds, refuse_growing

#: Two consecutive steps count as one direction (secant prediction) above this cosine.
PARALLEL = 0.999


def predict(prev, last, p_prev, p_last, p_next):
    """A warm start for the point at ``p_next``: ``last`` (the previous point's ``Point.warm``)
    moved along the secant from ``prev`` when the steps ``p_last - p_prev`` and
    ``p_next - p_last`` are parallel (module docstring); else ``last`` itself."""
    if prev is None or not p_prev.shape == p_last.shape == p_next.shape:
        return last                 # (a change in the number of clients: no common secant)
    d0, d1 = p_last - p_prev, p_next - p_last
    n0, n1 = np.linalg.norm(d0), np.linalg.norm(d1)
    if not (n0 > 0 and n1 > 0 and d0 @ d1 > PARALLEL * n0 * n1):
        return last
    s = n1 / n0

    def move(a, b):
        if a is None or b is None or np.shape(a) != np.shape(b):
            return b
        return b + s * (b - a)
    return {"memory": last.get("memory"), "pooled": move(prev.get("pooled"), last.get("pooled")),
            "fedprox": move(prev.get("fedprox"), last.get("fedprox")),
            "finetune": {c: move(prev.get("finetune", {}).get(c), y)
                         for c, y in last.get("finetune", {}).items()}}


def _pooled_cache(memory, max_seconds):
    """``solve_point``'s ``pooled``: one global fixed point per federation and ``global_lam``
    within a grid (a repeat counts no evaluations), its Jacobians carried in ``memory``."""
    cache = {}

    def pooled(fed: Federation, global_lam, start):
        key = (fed.gamma.tobytes(), fed.r.tobytes(), fed.count.tobytes(), fed.signal,
               fed.weights, global_lam)
        if key in cache:
            return replace(cache[key], iterations=0)
        cache[key] = solve_pooled(fed, global_lam, start, memory, max_seconds)
        return cache[key]
    return pooled


class _Memories(dict):
    """One ``warm.JacobianMemory`` per fixed point of the grid, made on first use."""

    def __missing__(self, key):
        self[key] = JacobianMemory()
        return self[key]

    def get(self, key, default=None):
        return self[key]


def check_grid_work(points, method, wanted, max_seconds):
    """``riskcalc.logistic.work.refuse`` for the whole grid before solving: the first point
    cold, the others warm started; penalties below MLE_LAM as solved (``ranges.mle_lam``,
    ``point.pooled_lam``)."""
    from riskcalc.logistic.finite_clients.point import _growing, pooled_lam

    if method == "local_ridge":
        points = [(g, r, s, mle_lam(lam, float(np.max(g)), float(np.max(np.hypot(s, r)))), lg)
                  for g, r, s, lam, lg in points]
    else:
        points = [(g, r, s, lam, pooled_lam(g, r, s, lg)) for g, r, s, lam, lg in points]

    def at(t):
        return sum(finite_seconds(g, t * r, t * s, lam, lg, method, t * r[wanted],
                                  warm=k > 0) for k, (g, r, s, lam, lg) in enumerate(points))
    top_s, top_r = max(p[2] for p in points), max(float(np.max(p[1])) for p in points)
    # Local ridge's growth on separable data, as ``point.check_work`` (was: clients [2, 3],
    # gamma 0.5, signal = r = 0.3, lam 1e-5 ran to the deadline of max_seconds = 1).
    growing = (item for g, r, s, lam, lg in points
               for item in _growing(g, s, r[wanted], lam, 1.0)) if method == "local_ridge" \
        else ()
    refuse_growing(at, max_seconds, f"the finite-M logistic grid ({len(points)} points, "
                   f"signal up to {top_s:g}, r up to {top_r:g})", growing,
                   fewer="fewer grid points")


def _solve_grid(points, weights, method, wanted, max_seconds, solve):
    """``solve_point`` for each ``(gamma (M,), r (M,), signal, lam, global_lam)`` in
    ``points`` (in that order), each warm started (module docstring). ``solve``: the point
    solver (``finite_clients.solve_point``). Returns the list of its ``Point``s."""
    if max_seconds is not None:
        check_grid_work(points, method, wanted, max_seconds)
    memory = _Memories()
    pooled, out = _pooled_cache(memory["pooled"], max_seconds), []
    prev, last = None, {"memory": memory}
    coords = [np.concatenate([g, r, [s, -1.0 if lam is None else lam,
                                     -1.0 if lg is None else lg]])
              for g, r, s, lam, lg in points]
    with shared_rules():
        for k, (g, r, s, lam, lg) in enumerate(points):
            warm = last if k == 0 else predict(prev, last, coords[k - 2] if k >= 2 else None,
                                               coords[k - 1], coords[k])
            point = solve(g, r, s, lam, lg, weights, method, wanted, warm=warm, pooled=pooled,
                          max_seconds=max_seconds, estimate=False)
            out.append(point)
            prev, last = last if k else None, point.warm
    return out


def _broadcast(named):
    """``np.broadcast_arrays`` of the ``(name, array)`` pairs, or a ValueError naming them."""
    try:
        out = np.broadcast_arrays(*(v for _, v in named))
    except ValueError:
        raise ValueError(", ".join(n for n, _ in named) + " do not broadcast together: shapes "
                         + ", ".join(f"{n} {np.shape(v)}" for n, v in named)) from None
    if out[0].size == 0:
        raise ValueError("empty grid: " + ", ".join(f"{n} {np.shape(v)}" for n, v in named))
    return out


def _check_lam(lam, method) -> None:
    """lam within ``ranges.LAM_MAX`` where it is measured to break (RTFA's fine-tuning and
    local ridge; the joint FedProx / pFedMe point holds at lam = 1e50)."""
    if method in ("rtfa", "local_ridge"):
        check_lam(lam)


def _optional(name, value, low_open=False):
    """A penalty array, or None where the method takes none (``_check`` decides which)."""
    return None if value is None else as_array(name, value, low=0.0, low_open=low_open)


def finite_grid(*, gamma, signal, r, lam, clients, global_lam, weights, method, solve,
                max_seconds=MAX_SECONDS):
    """``finite_logistic_limit`` with array arguments (numpy broadcasting), solved with warm
    starts along the grid (module docstring); every field of the result is an array of the
    broadcast shape, ``iterations`` their total and ``residual`` their largest.

    Parameters
    ----------
    gamma, signal, r, lam, clients, global_lam : float, int or array_like
        As in ``finite_logistic_limit`` (``clients``: integers >= 1), broadcast together.
    weights, method : str
        Checked by the caller (``method`` canonical).
    solve : callable
        The point solver, ``finite_clients.solve_point`` (passed in: that module is the front
        door above this one).
    max_seconds : float or None
        Limit on the grid's estimated work (``riskcalc.logistic.work``; None: no limit).

    Returns
    -------
    FiniteLogisticResult

    Raises
    ------
    ValueError
        An entry out of range, arrays that do not broadcast (naming the parameters), or an
        estimated work beyond ``max_seconds``.
    SolverError
        A point's fixed point did not converge (as the scalar call).
    """
    named = [("gamma", check_gamma(gamma)), ("signal", parameter("signal", signal)),
             ("r", parameter("r", r)), ("clients", integers("clients", clients, minimum=1,
                                                maximum=MAX_IDENTICAL)),
             ("lam", _optional("lam", lam, low_open=method == "pfedme")),
             ("global_lam", check_global_lam(global_lam, method))]
    _check_lam(lam, method)
    named = [(n, v) for n, v in named if v is not None]
    arrays = dict(zip((n for n, _ in named), _broadcast(named)))
    shape = arrays["gamma"].shape
    flat = {n: v.ravel() for n, v in arrays.items()}
    order = snake_order(shape)
    points = [(np.full(int(flat["clients"][k]), flat["gamma"][k]),
               np.full(int(flat["clients"][k]), flat["r"][k]), float(flat["signal"][k]),
               float(flat["lam"][k]) if "lam" in flat else None,
               float(flat["global_lam"][k]) if "global_lam" in flat else None) for k in order]
    solved = _solve_grid(points, weights, method, np.array([0]), max_seconds, solve)
    field = {q: np.empty(order.size) for q in QUANTITIES + ("global_overlap", "global_dist")}
    for k, point in zip(order, solved):
        for q in QUANTITIES:
            field[q][k] = point.values[q][0]
        field["global_overlap"][k] = np.nan if point.overlap is None else point.overlap
        field["global_dist"][k] = np.nan if point.dist is None else point.dist
    params = {n: v.astype(int) if n == "clients" else v for n, v in arrays.items()}
    params.update(lam=arrays.get("lam"), global_lam=arrays.get("global_lam"), weights=weights)
    local = method == "local_ridge"
    return FiniteLogisticResult(
        method, params, *(field[q].reshape(shape) for q in QUANTITIES),
        None if local else field["global_overlap"].reshape(shape),
        None if local else field["global_dist"].reshape(shape),
        sum(p.iterations for p in solved), max(p.residual for p in solved), ())


def clients_grid(*, gamma, r, signal, lam, global_lam, weights, method, target, solve,
                 max_seconds=MAX_SECONDS):
    """``logistic_clients_limit`` over a grid: ``signal``, ``lam`` and ``global_lam`` arrays of
    any shape, ``gamma`` and ``r`` arrays whose LAST axis is the clients (shape ``(..., M)``;
    their leading axes broadcast with the others). Solved with warm starts along the grid
    (module docstring). ``weights``, ``method``, ``solve``, ``max_seconds``: as in
    ``finite_grid``.

    Returns
    -------
    LogisticClientsResult
        Per-client fields of shape ``grid + (n,)`` (``n = M``, or 1 with ``target``), ``mean``
        of shape ``grid``, ``global_overlap`` and ``global_dist`` of shape ``grid`` (None for
        local ridge).

    Raises
    ------
    ValueError
        Out-of-range entries, arrays that do not broadcast (naming the parameters), a bad
        target, or an estimated work beyond ``max_seconds``.
    SolverError
        A point's fixed point did not converge.
    """
    gam = check_gamma(gamma)
    rr = parameter("r", r)
    gam, rr = (v.reshape(1) if v.ndim == 0 else v for v in (gam, rr))
    per_client = _broadcast([("gamma", gam), ("r", rr)])
    m = per_client[0].shape[-1]
    if m == 0:
        raise ValueError("the federation needs at least one client")
    named = [("gamma (leading axes)", per_client[0][..., 0]),
             ("signal", parameter("signal", signal)),
             ("lam", _optional("lam", lam, low_open=method == "pfedme")),
             ("global_lam", check_global_lam(global_lam, method))]
    _check_lam(lam, method)
    named = [(n, v) for n, v in named if v is not None]
    grid = _broadcast(named)
    shape = grid[0].shape
    full = [np.broadcast_to(v, shape + (m,)).reshape(-1, m) for v in per_client]
    flat = {n: v.ravel() for (n, _), v in zip(named, grid)}
    if target is not None:
        target = positive_int("target", target, minimum=0)
        if target >= m:
            raise ValueError(f"target must be a client index in [0, {m - 1}], got {target}")
    wanted = np.arange(m) if target is None else np.array([target])
    order = snake_order(shape)
    points = [(full[0][k], full[1][k], float(flat["signal"][k]),
               float(flat["lam"][k]) if "lam" in flat else None,
               float(flat["global_lam"][k]) if "global_lam" in flat else None) for k in order]
    solved = _solve_grid(points, weights, method, wanted, max_seconds, solve)
    values = {q: np.empty((order.size, wanted.size)) for q in QUANTITIES}
    glob = {q: np.full(order.size, np.nan) for q in ("overlap", "dist")}
    for k, point in zip(order, solved):
        for q in QUANTITIES:
            values[q][k] = point.values[q]
        if point.overlap is not None:
            glob["overlap"][k], glob["dist"][k] = point.overlap, point.dist
    values = {q: v.reshape(shape + (wanted.size,)) for q, v in values.items()}
    local = method == "local_ridge"
    params = dict(gamma=full[0].reshape(shape + (m,)), r=full[1].reshape(shape + (m,)),
                  signal=np.broadcast_to(flat["signal"].reshape(shape), shape),
                  lam=None if "lam" not in flat else flat["lam"].reshape(shape),
                  global_lam=None if "global_lam" not in flat
                  else flat["global_lam"].reshape(shape),
                  weights=weights, clients=m, targets=wanted.tolist())
    return LogisticClientsResult(
        method, params, **values, mean={q: v.mean(axis=-1) for q, v in values.items()},
        global_overlap=None if local else glob["overlap"].reshape(shape),
        global_dist=None if local else glob["dist"].reshape(shape),
        iterations=sum(p.iterations for p in solved),
        residual=max(p.residual for p in solved), notes=())
