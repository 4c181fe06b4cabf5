"""Damped Newton's method with Armijo backtracking, batched over problems (the exact
minimizers of ``montecarlo.experiments.objectives`` and ``montecarlo.logistic.pipeline``)."""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError


def damped_newton(fun, grad, hess, x, tol, what, maxiter=100, hint=None):
    """Minimize ``fun`` from ``x`` by damped Newton steps, batched over leading dimensions.

    Each problem of the batch takes the Newton step ``-hess(x)^-1 grad(x)`` halved until
    Armijo's sufficient decrease holds (up to rounding near the optimum), and keeps its point
    once its gradient's sup-norm is at most ``tol``. The exact minimizers of the federated
    objectives (``objectives``) and of the logistic pipeline (``montecarlo.logistic.pipeline``)
    use it: an independent route from the papers' first-order algorithms.

    Parameters
    ----------
    fun, grad, hess : callable
        Value (...,), gradient (..., d) and Hessian (..., d, d) at a batch of points (..., d).
    x : ndarray, shape (..., d)
        Start.
    tol : float
        Gradient sup-norm at which a problem stops.
    what : str
        The solve's name in error messages.
    maxiter : int
        Most Newton steps.
    hint : str, optional
        The likely cause and remedy of a failure, as the caller names its parameters (default:
        the objectives' ``l2 = 0`` texts; the logistic pipeline's fits were told "set l2 > 0",
        a parameter they do not have, whatever stopped them).

    Raises
    ------
    SolverError
        A singular Hessian, or ``maxiter`` steps without reaching ``tol`` (with l2 = 0 and
        separable logistic data there is no finite minimizer).
    """
    f = fun(x)
    for _ in range(maxiter):
        g = grad(x)
        gnorm = np.max(np.abs(g), axis=-1)
        if np.all(gnorm <= tol):
            return x
        try:
            step = -np.linalg.solve(hess(x), g[..., None])[..., 0]
        except np.linalg.LinAlgError:
            why = hint or "with l2 = 0 and n < d the objective is not strongly convex; set l2 > 0"
            raise SolverError(f"{what}: singular Hessian ({why})") from None
        slope = np.sum(g * step, -1)
        t = np.ones(f.shape)
        for _ in range(40):
            x_new = x + t[..., None] * step
            f_new = fun(x_new)
            # A converged problem keeps its point; the others need sufficient decrease, up to
            # rounding (near the optimum the predicted decrease is below machine precision).
            slack = 1e-13 * np.maximum(1.0, np.abs(f))
            ok = (f_new <= f + 1e-4 * t * slope + slack) | (gnorm <= tol)
            if np.all(ok):
                break
            t = np.where(ok, t, 0.5 * t)
        x = np.where((gnorm <= tol)[..., None], x, x_new)
        f = np.where(gnorm <= tol, f, f_new)
    why = hint or "with l2 = 0 separable data have no finite minimizer; set l2 > 0"
    raise SolverError(f"{what}: Newton did not reach gradient norm {tol:g} in {maxiter} "
                      f"iterations ({why})")
