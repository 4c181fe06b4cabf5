"""A quasi-Newton active-set method on the simplex times a box, for the optimal weights.

``riskcalc.advise.weights`` minimizes a smooth F(p, x) over the client weights p on the simplex
sum_j p_j = 1 with bounds l <= p_j <= 1 and the tuning x in a box, with the exact gradient of
F (``riskcalc.linear.finite_clients.gradient``). For a few variables this module does so
without scipy.optimize, whose import alone was about a third of a 5-client ``riskcalc
advise``. It is SLSQP's method (Kraft 1988: sequential quadratic programming on a BFGS model
started from the identity, in the same variables) specialised to these constraints, with a
trust region and a tighter stop:

* the model: B, positive definite, starts as the identity (as SLSQP's) and is updated by
  damped BFGS (Powell 1978: B stays positive definite on a nonconvex F); restarted once
  when a step fails (a stale model);
* the step: with W the variables at a bound (the working set) and the others free, d solves
  min g.d + d.B.d / 2 subject to sum_{j free} d_{p_j} = 0 and d_i = 0 on W: a KKT system of
  the free block of B bordered by the constraint's row, whose multiplier mu gives the bound
  multipliers nu_i = g_i + (B d)_i + mu [i a weight] of W (stationarity g + mu 1_p - nu = 0).
  A variable of W whose nu_i has the sign that would let F decrease by leaving the bound is
  released; the step is cut where a variable reaches a bound (it joins W);
* the trust region: no weight moves by more than ``radius`` max(p_j, 1/M), no tuning by more
  than ``radius`` (log units), and a weight at most halves in a step unless that reaches its
  bound; the radius doubles after a capped step whose decrease matched the model's prediction
  and shrinks after a poor one. Why: F is not convex (MAML-FL's alpha, RTFA's penalties
  reaching the flat lam -> infinity), and a long model step can land in another basin;
  measured on 25 random federations, without it RTFA's result was 0.6% above SLSQP's in one,
  with it at most 5.4e-5 above (below);
* the line search: backtracking on the sufficient decrease F(y + a d) <= F(y) - 1e-4 a (-g.d);
* the stop: the model's predicted decrease -g.d below ``DEC_TOL`` abs(F) with no variable to
  release (a KKT point to rounding), or a step whose predicted decrease F no longer resolves
  with no variable to release (one with a multiplier of the wrong sign is released first:
  MAML-FL's alpha stayed at its bound under covariate shift, 30 clients, 9.2e-6 above
  SLSQP's mean, when the weights' steps stopped resolving first).

The weights stay feasible (sum p = 1 up to rounding, every bound held) throughout, as in
SLSQP: the result is a point of the same feasible set. A local method: the minimum it reaches
is the one of the start's basin, as SLSQP's; measured against scipy's SLSQP / L-BFGS-B with
the same exact gradients (tests/test_advise_speed.py; 25 random federations with 2-8 clients,
one client at sigma = 5 near gamma = 1 in every third, every pipeline): equal or lower
(by up to 1e-13: the tighter stop) for FedAvg, FTFA, MAML-FL and pFedMe; RTFA higher by at most
2.6e-8 where a penalty runs to infinity along a flat asymptote and by 5.4e-5 in one extreme
federation (three weights at their bound); equal or lower on the pinned federation of
``benchmarks/bench_advise.py`` that uses it (het5).
"""

from __future__ import annotations

import numpy as np

#: Stop when the model's predicted decrease is below this share of abs(F) (rounding of F).
DEC_TOL = 1e-15
#: Sufficient-decrease constant of the line search.
ARMIJO = 1e-4
#: Most halvings of a step.
MAX_HALVINGS = 40
#: The trust radius at the start (relative change of a weight; change of a log tuning) and
#: its floor.
RADIUS_START = 0.5
RADIUS_MIN = 1e-6


def minimize(fun_grad, y0, m: int, lower, upper, maxiter: int = 300):
    """Minimize ``fun_grad`` over {y : sum(y[:m]) = 1, lower <= y <= upper} (module docstring).

    Parameters
    ----------
    fun_grad : callable
        y -> (F(y), gradient (n,)); F = inf (or a value with a zero gradient) where no limit
        exists.
    y0 : ndarray (n,)
        The start; projected onto the feasible set first.
    m : int
        The first m variables are the weights (sum one).
    lower, upper : ndarray (n,)
        Bounds, with m * lower[:m] < 1 <= sum(upper[:m]).
    maxiter : int
        Most iterations.

    Returns
    -------
    y : ndarray (n,)
        The best feasible point found (its value is at most the start's).
    value : float
    """
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    y = _project(np.asarray(y0, float), m, lower, upper)
    f, g = fun_grad(y)
    if not np.isfinite(f):
        return y, f
    n = y.size
    B, fresh = np.eye(n), True
    is_p = np.arange(n) < m
    radius = RADIUS_START
    # Working set: -1 at the lower bound, +1 at the upper, 0 free.
    work = np.where(y <= lower, -1, np.where(y >= upper, 1, 0))
    for _ in range(maxiter):
        d, nu = _step(B, g, work, is_p)
        scale = np.where(is_p, np.maximum(y, 1.0 / m), 1.0)
        # Release the working-set variable whose multiplier has the wrong sign (largest).
        wrong = np.where(work == -1, -nu, np.where(work == 1, nu, -np.inf))
        dec = -(g @ d)
        if dec <= DEC_TOL * max(1.0, abs(f)):
            if np.max(wrong, initial=-np.inf) <= 0:
                break
            work[int(np.argmax(wrong))] = 0
            continue
        # Longest step inside the bounds, and the variable that reaches one; a weight at
        # most halves in one step unless that reaches its bound (a model fitted far from a
        # bound does not send a weight there in one step).
        floor = np.where(is_p, np.maximum(lower, 0.5 * y), lower)
        floor = np.where(floor > lower * (1 + 1e-12), floor, lower)
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d < 0, (floor - y) / d, np.where(d > 0, (upper - y) / d, np.inf))
        room[work != 0] = np.inf
        k = int(np.argmin(room))
        # Trust region: no variable moves by more than ``radius`` times its scale (a weight
        # relative to max(p_j, 1/m), a log tuning in its own units), so a model fitted at one
        # point does not send the iterate into another basin (or along a flat direction, a
        # penalty so large that the risk no longer depends on it, to its bound) in one step.
        reach = float(np.max(np.abs(d) / scale)) / radius
        a_max = min(1.0, float(room[k]), 1.0 / max(reach, 1e-300))
        a, moved = a_max, False
        for _ in range(MAX_HALVINGS):
            y_new = np.clip(y + a * d, lower, upper)
            f_new, g_new = fun_grad(y_new)
            if np.isfinite(f_new) and f_new <= f - ARMIJO * a * dec:
                moved = True
                break
            if a * dec <= 1e3 * DEC_TOL * max(1.0, abs(f)):
                break       # rounding: F no longer resolves the decrease
            a *= 0.5
        # Actual against predicted decrease (for the Newton direction d.B.d = -g.d): the
        # radius doubles after a capped step the model predicted well, and shrinks after a
        # poor one.
        pred = a * dec - 0.5 * a * a * dec
        if moved and a * reach >= 0.99 and f - f_new >= 0.75 * pred:
            radius *= 2.0
        elif not moved or f - f_new < 0.25 * pred:
            radius = max(0.25 * min(radius, a * reach), RADIUS_MIN)
        if not moved:
            if np.max(wrong, initial=-np.inf) > 0:
                # The free variables' decrease is below rounding, but a bound's multiplier
                # says F decreases by leaving it (e.g. MAML-FL's alpha at its bound while the
                # weights moved): release it, as at a converged step.
                work[int(np.argmax(wrong))] = 0
                continue
            if fresh:
                break
            # A stale model (BFGS across a region of other curvature): refit it here once.
            B, fresh = np.eye(n), True
            continue
        fresh = False
        if a == a_max == room[k] and (floor[k] == lower[k] or d[k] > 0):
            work[k] = -1 if d[k] < 0 else 1
            y_new[k] = lower[k] if d[k] < 0 else upper[k]
        B = _bfgs(B, y_new - y, g_new - g)
        y, f, g = y_new, f_new, g_new
    return y, f


def _step(B, g, work, is_p):
    """The equality-constrained Newton step on the free variables and the multipliers of the
    working set (module docstring)."""
    n = g.size
    free = work == 0
    idx = np.flatnonzero(free)
    # Some weight is always free: sum p = 1 > m * lower, and p_j = 1 forces the others to 0.
    K = np.zeros((idx.size + 1, idx.size + 1))
    K[:-1, :-1] = B[np.ix_(idx, idx)]
    K[:-1, -1] = K[-1, :-1] = is_p[idx]
    sol = np.linalg.solve(K, np.concatenate([-g[idx], [0.0]]))
    d = np.zeros(n)
    d[idx], mu = sol[:-1], sol[-1]
    # KKT: g + B d + mu 1_p - nu = 0 on the working set (d = 0 there, B d from the free ones).
    nu = g + B @ d + mu * is_p
    nu[free] = 0.0
    return d, nu


def _bfgs(B, s, y):
    """Powell's damped BFGS update (B stays positive definite)."""
    Bs = B @ s
    sBs = s @ Bs
    if not sBs > 0:
        return B
    sy = s @ y
    if sy < 0.2 * sBs:
        theta = 0.8 * sBs / (sBs - sy)
        y = theta * y + (1.0 - theta) * Bs
        sy = s @ y
    return B - np.outer(Bs, Bs) / sBs + np.outer(y, y) / sy


def _project(y, m, lower, upper):
    """The nearest point with sum(y[:m]) = 1 within the bounds (bisection on the shift)."""
    y = np.clip(y, lower, upper)
    p, lo, hi = y[:m], lower[:m], upper[:m]
    if abs(p.sum() - 1.0) > 1e-15:
        a, b = float(np.min(lo - p)), float(np.max(hi - p))
        for _ in range(200):
            t = 0.5 * (a + b)
            if np.clip(p + t, lo, hi).sum() > 1.0:
                b = t
            else:
                a = t
        y[:m] = np.clip(p + 0.5 * (a + b), lo, hi)
    return y
