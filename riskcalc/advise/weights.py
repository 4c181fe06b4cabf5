"""Optimal aggregation weights: the p on the simplex minimizing the federation's mean risk.

Derived here: the finite-M limits (``riskcalc.clients_limit``) hold for any positive client
weights p_j of the global objective (paper 003, eq. 6 with general p_j), so the mean risk
(1/M) sum_j R_j(p, tuning) is a smooth function on the open simplex. It is minimized jointly
over p and the method's tuning (the log penalties of RTFA, the shared log alpha / log lam of
MAML-FL and pFedMe) by SLSQP's method (L-BFGS-B with exact gradients beyond ``NEWTON_MAX``
variables: Gradients below) with the constraint sum_j p_j = 1 and bounds p_j >= ``P_MIN`` / M
(a client with p_j -> 0 leaves the global objective; the bound keeps the limits finite), from
the best of the starting points given (the sample and uniform weights with their tuned
parameters). The result is the best point found, so it is never worse than a start.

Starts (``riskcalc.advise``): on the L-BFGS-B route (``optimize``'s ``more``), RTFA's and
MAML-FL's searches also start from FTFA's optimal weights, pFedMe's from MAML-FL's, which lie
near theirs (L1 distances 0.002, 0.23 and 0.21 on shift1000 of
``benchmarks/bench_advise.py``, against ~0.4 from the sample and uniform weights), RTFA's
with the penalties tuned there (``tune.rtfa_lams``), the others' with each tuning of their
other starts. Measured there (L-BFGS-B gradient calls, scipy's memory 10): RTFA 124 -> 47
for one more penalty search (~1 s; with the sample weights' penalties instead: 132 calls),
MAML-FL 61 -> 54 (with the alpha tuned at FTFA's weights: 55, for 1.8 s more), pFedMe (at
memory 20, ``LBFGS_MEMORY``) 79 -> 71. Every optimal mean risk ended lower than without (RTFA
by 2e-12 relative, the others by 1e-13 to 3e-13). pFedMe from FTFA's weights (its lam tuned
there) took 94 calls and from RTFA's 116, against 85, both ending higher (to 1e-12
relative). Not on the other routes: on het5 of the benchmark ``simplex_newton`` went from
FTFA's weights to a MAML-FL point 1.7e-4 relative higher than from its own starts. Scaling
the tuning variable of L-BFGS-B's MAML-FL search by 0.3, 3 or 10 (as the weights are by c)
took 57, 73 and 89 calls against 50.

Gain: on the L-BFGS-B route the search stops once ``GAIN_ITERATIONS`` iterations in a row
lowered the mean risk by at most ``GAIN_RTOL`` of it in all (``_gain_stop``), a tenth of the
tie tolerance ``result.TIE_RTOL``: its last iterations (ftol 1e-13) moved the weights' gain
(0.01-0.2% at 1000 clients) by ~1e-10 relative at the cost of 25-45% of the calls. Measured on
``f1000`` of ``benchmarks/bench_advise_decision.py`` (FedAvg, FTFA, MAML-FL, pFedMe): 100 / 94 /
60 / 74 calls without, 82 / 75 / 42 / 50 with; every optimal mean risk within 1.1e-10
relative of the search to the end (on the benchmark's 21 federations of 20-1000 clients, the
same recommendations and rankings as before, mean risks within 2.1e-10: the routes without
the stop moved too, by the rounding of ``own_sources``' products).

Gradients: where the limits have an exact gradient (Sigma = I,
``riskcalc.linear.finite_clients.gradient``; FedAvg, FTFA and RTFA under covariate shift,
``riskcalc.linear.finite_clients.shift.gradient``) the optimizer is given it, and each step
costs a few evaluations of the limits instead of the M + 1 of finite differences. p is
parametrized by positive z with p = z / sum z (the objective is F(z / sum z)), so dF/dz =
(grad_p F - (p . grad_p F)) / sum z. Up to ``NEWTON_MAX`` variables the optimizer is
``riskcalc.advise.simplex_newton`` (SLSQP's method written for these constraints, so that a
small federation's advice does not import scipy.optimize: 0.35-0.45 s of a 5-client command's
~1.3 s of CPU). Beyond, the equality constraint is dropped (F(z / sum z) does not need it) and
L-BFGS-B minimizes over the bounds alone, on rescaled weights (``optimize``'s comments), the
weights then projected onto the floor (``_floored``). Until session 38 scipy's SLSQP took up to
300 variables: its dense quadratic subproblems cost 1.6-1.9x L-BFGS-B's with the gain stop at
60-291 clients, and on 20 seeded federations of 20-300 clients of
``benchmarks/bench_advise_decision.py`` L-BFGS-B from 33 variables gave the same
recommendations and rankings, mean risks within 1.1e-10 relative (a client's risk within
5e-5), for 0.57-0.98x the CPU of the whole command (``benchmarks/bench_advise_measured.txt``,
twenty-fourth round). For RTFA's per-client penalties SLSQP crawled (258 iterations for 100
clients, against 104 for L-BFGS-B).
"""

from __future__ import annotations

import numpy as np

from riskcalc.advise import simplex_newton
from riskcalc.errors import SolverError

#: Smallest weight a client may get, relative to 1/M.
P_MIN = 1e-4
#: Most variables for ``simplex_newton`` (exact gradients; L-BFGS-B beyond: module docstring).
NEWTON_MAX = 32
#: Iterations of the optimizer given exact gradients.
MAXITER = 300
#: L-BFGS-B's memory (scipy's default 10): measured on shift1000 of
#: ``benchmarks/bench_advise.py`` with RTFA's and MAML-FL's starts from FTFA's weights (module
#: docstring; L-BFGS-B calls of FedAvg, FTFA, RTFA, MAML-FL, pFedMe; every optimal mean risk
#: within 5e-13 relative of another's): 10: 108, 103, 47, 54, 85; 20: 108, 102, 47,
#: 50, 79; 30: 109, 99, 50, 57, 67; 50: 106, 99, 45, 59, 70. 20 costs least (MAML-FL's
#: gradient is four times the others').
LBFGS_MEMORY = 20
#: L-BFGS-B's stop on the gain: the search ends once ``GAIN_ITERATIONS`` iterations in a row
#: lowered the mean risk by at most ``GAIN_RTOL`` of it in all (module docstring, Gain).
GAIN_RTOL, GAIN_ITERATIONS = 1e-10, 3
#: SLSQP's ftol with finite-difference gradients: 1e-10 stopped at points whose mean risk
#: moved by up to 2e-11 relative with the limits' last bits (shift10 of
#: ``benchmarks/bench_advise.py``, MAML-FL); at 1e-12 every pipeline there went lower, for
#: 0-15% more CPU.
FD_FTOL = 1e-12
#: SLSQP's iterations with finite-difference gradients (100 stopped RTFA's 60 variables at 30
#: clients under shift short: its mean risk 2e-10 above another path's; 229 to converge).
FD_MAXITER = MAXITER
#: SLSQP's finite-difference step (scipy's default ``eps``, sqrt of the double epsilon).
_EPS = float(np.sqrt(np.finfo(float).eps))


def optimize(objective, starts, m: int, extra_bounds=(), gradient=None, separable=None,
             more=None):
    """Minimize ``objective(p, extra)`` over p on the simplex and ``extra`` in its bounds.

    Parameters
    ----------
    objective : callable
        (p ndarray (m,), extra ndarray (k,)) -> float; may raise ValueError/SolverError
        where no limit exists (counted as a large value).
    starts : list of (p, extra)
        Starting points; the best of them is the fallback.
    m : int
        Number of clients.
    extra_bounds : sequence of (low, high)
        Bounds of the extra (tuning) variables.
    gradient : callable, optional
        (p, extra) -> (value, d value / d p (m,), d value / d extra (k,)), the exact gradient
        (p free, not renormalized); without it the optimizer takes finite differences.
    separable : callable, optional
        Without ``gradient``: (p, extra) -> the M per-client values whose mean is
        ``objective`` (bit for bit), value j depending on extra_j alone among the extra
        variables (k = m: RTFA's per-client penalties). Then the finite differences in
        ``extra`` take one evaluation instead of k (``_separable_jacobian``).
    more : callable, optional
        () -> further starts, asked for (and so computed) on the L-BFGS-B route only (module
        docstring, Starts).

    Returns
    -------
    p, extra, value
    """
    k = len(extra_bounds)
    lbfgs = bool(gain_note(m, k, gradient))
    starts = list(starts) + (list(more()) if lbfgs and more is not None else [])
    start_vals = []
    for p, extra in starts:
        start_vals.append(_safe(objective, np.asarray(p, float), np.asarray(extra, float)))
    best = int(np.argmin(start_vals))
    best_p, best_x, best_v = (np.asarray(starts[best][0], float),
                              np.asarray(starts[best][1], float), start_vals[best])
    if not np.isfinite(best_v):
        raise SolverError("optimal weights: no starting point has a finite mean risk")
    raw = objective
    objective, gradient, separable = _unit_scale(objective, gradient, separable, best_v)
    penalty = 10.0 * abs(best_v) / _unit(best_v) + 1.0

    def fun(z):
        v = _safe(objective, z[:m] / z[:m].sum(), z[m:])
        return v if np.isfinite(v) else penalty

    def fun_grad(z):
        total = z[:m].sum()
        p = z[:m] / total
        try:
            v, gp, gx = gradient(p, z[m:])
        except (ValueError, SolverError):
            v = np.inf
        if not np.isfinite(v):
            return penalty, np.zeros(z.size)
        return v, np.concatenate([(gp - p @ gp) / total, np.atleast_1d(gx)])

    z0 = np.concatenate([np.clip(best_p, P_MIN / m, 1.0), best_x])
    bounds = [(P_MIN / m, 1.0)] * m + list(extra_bounds)
    if gradient is not None and z0.size <= NEWTON_MAX:
        lower, upper = np.array(bounds, dtype=float).T
        x, _ = simplex_newton.minimize(fun_grad, z0, m, lower, upper, maxiter=MAXITER)
        return _better(raw, x, m, best_p, best_x, best_v)
    from scipy.optimize import minimize  # here, not at import: fast CLI start

    cons = [{"type": "eq", "fun": lambda z: z[:m].sum() - 1.0,
             "jac": lambda z: np.concatenate([np.ones(m), np.zeros(k)])}]
    if gradient is None and separable is not None and k == m:
        sep_fun, jac = _separable_jacobian(separable, m, bounds, penalty)
        x = minimize(sep_fun, z0, jac=jac, method="SLSQP", bounds=bounds, constraints=cons,
                     options={"ftol": FD_FTOL, "maxiter": FD_MAXITER}).x
    elif gradient is None:
        x = minimize(fun, z0, method="SLSQP", bounds=bounds, constraints=cons,
                     options={"ftol": FD_FTOL, "maxiter": FD_MAXITER}).x
    else:                                               # ``lbfgs``
        # L-BFGS-B on y = (c z, extra): a quasi-Newton model starts from the identity, so
        # the curvatures should match. Client j's weight p_j ~ 1/M moves its own risk on a
        # scale p_j (curvature ~ M in z, M / c^2 in y); a shared tuning moves every risk
        # (curvature ~ 1): c = sqrt(M). A per-client penalty moves its own client's (~ 1/M),
        # which suggests c = M, but p_j and lam_j are strongly coupled: c = M^(3/4) measured
        # best (1000 clients: 127 iterations against 300 for M or sqrt(M), and a lower
        # mean risk; 100 clients: 154 against 104, the same mean risk to 1e-11).
        c = float(m) ** 0.75 if k >= m else float(np.sqrt(m))

        def scaled(y):
            v, dz = fun_grad(np.concatenate([y[:m] / c, y[m:]]))
            return v, np.concatenate([dz[:m] / c, dz[m:]])

        y = minimize(scaled, np.concatenate([c * z0[:m], z0[m:]]), jac=True,
                     method="L-BFGS-B", bounds=[(c * P_MIN / m, c)] * m + list(extra_bounds),
                     options={"ftol": 1e-13, "gtol": 1e-12, "maxiter": MAXITER,
                              "maxcor": LBFGS_MEMORY}, callback=_gain_stop()).x
        x = np.concatenate([y[:m] / c, y[m:]])
    return _better(raw, x, m, best_p, best_x, best_v)


def gain_note(m: int, k: int, gradient) -> tuple:
    """The note of an optimal-weights candidate whose search stops at the gain tolerance
    (module docstring, Gain), or none: ``optimize``'s route for m weights and k tuning
    variables is L-BFGS-B (exact gradients beyond ``NEWTON_MAX`` variables)."""
    if gradient is None or m + k <= NEWTON_MAX:
        return ()
    return (f"optimal weights: the search (L-BFGS-B) stopped once {GAIN_ITERATIONS} "
            f"iterations in a row lowered the mean risk by at most {GAIN_RTOL:g} of it",)


def _gain_stop():
    """L-BFGS-B's callback stopping the search once ``GAIN_ITERATIONS`` iterations in a row
    lowered the mean risk by at most ``GAIN_RTOL`` of it in all (module docstring)."""
    seen = []

    def callback(intermediate_result):
        seen.append(float(intermediate_result.fun))
        if (len(seen) > GAIN_ITERATIONS
                and seen[-1 - GAIN_ITERATIONS] - seen[-1] <= GAIN_RTOL * abs(seen[-1])):
            raise StopIteration

    return callback


def _unit(value: float) -> float:
    """The power of two at or below ``abs(value)``, within a factor 2 of it (1 at 0): the unit
    the optimizers see the mean risk in (``_unit_scale``)."""
    return float(np.ldexp(1.0, np.frexp(abs(value))[1] - 1)) if value != 0 else 1.0


def _unit_scale(objective, gradient, separable, value):
    """``objective``, ``gradient`` and ``separable`` divided by ``_unit(value)`` (exact: a
    power of two). The optimizers are not scale-free (simplex_newton and SLSQP start from an
    identity model and stop on absolute decreases; L-BFGS-B's tolerances hold relative to
    max(1, abs(F))): risks in other units (y in other units, r_j and sigma_j times c) stopped
    them at the start (risks ~1e-8: 'no gain over samples') or overflowed the first step
    (~1e200), and the recommendation changed with the units."""
    unit = _unit(value)
    if unit == 1.0:
        return objective, gradient, separable

    def scaled_gradient(p, extra):
        v, gp, gx = gradient(p, extra)
        return v / unit, np.asarray(gp) / unit, np.asarray(gx) / unit

    return (lambda p, extra: objective(p, extra) / unit,
            None if gradient is None else scaled_gradient,
            None if separable is None else
            (lambda p, extra: np.asarray(separable(p, extra), dtype=float) / unit))


def _separable_jacobian(separable, m, bounds, penalty):
    """SLSQP's objective and its forward-difference gradient for a ``separable`` objective
    (``optimize``), with one evaluation for all the extra variables.

    The weights' part is scipy's own (``approx_derivative``, 2-point, absolute step
    ``_EPS`` adjusted to the bounds: what SLSQP does without a gradient), so it is the same
    numbers. The extra part moves every extra_j by its own step in ONE evaluation: value j
    depends on extra_j alone, so (v_j(x + h) - v_j(x)) / (M h_j) is the forward difference
    of the mean in extra_j (equal to the one-at-a-time difference but for the rounding of
    the mean's sum, which the one-at-a-time difference carries: ~ M eps max abs v / h
    absolute, here avoided). M + 1 evaluations per gradient instead of M + k. Where the
    moved evaluation fails or is not finite, the one-at-a-time differences instead."""
    from scipy.optimize._numdiff import approx_derivative

    lower, upper = np.array(bounds, dtype=float).T
    last = {}

    def values(z):
        key = z.tobytes()
        if key not in last:
            last.clear()
            try:
                v = np.asarray(separable(z[:m] / z[:m].sum(), z[m:]), dtype=float)
            except (ValueError, SolverError):
                v = np.full(m, np.inf)
            last[key] = v
        return last[key]

    def fun(z):
        v = float(values(z).mean())
        return v if np.isfinite(v) else penalty

    def jac(z):
        z = np.asarray(z, dtype=float)
        f0, v0 = fun(z), values(z).copy()
        grad = np.empty(z.size)
        grad[:m] = approx_derivative(lambda zp: fun(np.concatenate([zp, z[m:]])), z[:m],
                                     f0=f0, method="2-point", abs_step=_EPS,
                                     bounds=(lower[:m], upper[:m]))
        # The steps SLSQP would take in extra (bounds as in approx_derivative).
        x0 = z[m:]
        h = _EPS * np.ones_like(x0)
        h = np.where((x0 + h) - x0 == 0,
                     _EPS * np.where(x0 >= 0, 1.0, -1.0) * np.maximum(1.0, np.abs(x0)), h)
        h = _adjust_to_bounds(x0, h, lower[m:], upper[m:])
        moved = x0 + h
        dx = moved - x0
        v1 = values(np.concatenate([z[:m], moved]))
        if np.all(np.isfinite(v0)) and np.all(np.isfinite(v1)):
            grad[m:] = (v1 - v0) / m / dx
        else:
            grad[m:] = approx_derivative(lambda zx: fun(np.concatenate([z[:m], zx])), x0,
                                         f0=f0, method="2-point", abs_step=_EPS,
                                         bounds=(lower[m:], upper[m:]))
        return grad

    return fun, jac


def _adjust_to_bounds(x0, h, lb, ub):
    """scipy's one-sided adjustment of forward steps to the bounds
    (``scipy.optimize._numdiff._adjust_scheme_to_bounds``, one step)."""
    from scipy.optimize._numdiff import _adjust_scheme_to_bounds

    return _adjust_scheme_to_bounds(x0, h, 1, "1-sided", lb, ub)[0]


def _better(objective, x, m, best_p, best_x, best_v):
    """The optimizer's point x = (weights, extra), renormalized, if it beats the best start."""
    p_new = np.clip(x[:m], P_MIN / m, 1.0)
    p_new = _floored(p_new / p_new.sum(), m)
    value = _safe(objective, p_new, x[m:])
    if value < best_v:
        return p_new, x[m:], value
    return best_p, best_x, best_v


def _floored(p, m):
    """p (on the simplex) projected onto {p_j >= P_MIN / m, sum p = 1} where it leaves it:
    L-BFGS-B bounds z, not p = z / sum z, so a z summing above 1 put a client at half the floor
    (p_0 = 1.7e-5 for P_MIN / 3 = 3.3e-5, 3 clients; fuzz38 own2's item 5)."""
    f = P_MIN / m
    if p.min() >= f:
        return p
    u = np.sort(p - f)[::-1]
    excess = np.cumsum(u) - (1.0 - m * f)
    last = np.nonzero(u - excess / np.arange(1, m + 1) > 0)[0][-1]
    return f + np.maximum(p - f - excess[last] / (last + 1), 0.0)


def _safe(objective, p, extra) -> float:
    try:
        value = float(objective(p, extra))
    except (ValueError, SolverError):
        return np.inf
    return value if np.isfinite(value) else np.inf
