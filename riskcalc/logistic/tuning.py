"""Optimal ridge penalty for personalized logistic regression: minimize the exact limit.

There is no closed form (unlike the linear model's ``lam* = sigma^2 gamma / r^2``, paper 003
Thm 2): ``lam*`` minimizes ``lam -> logistic_limit(...).risk`` (``riskcalc.logistic.fixed_point``)
over a log grid, refined by a bounded scalar search in ``log lam`` around the best grid point.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc._validate import positive_int, real
from riskcalc.logistic.limits import logistic_limit
from riskcalc.logistic.work import MAX_SECONDS, check_max_seconds

#: Search range of lam (beyond it the risk is flat to the solver's accuracy).
LAM_RANGE = (1e-3, 1e3)
#: Most grid points: one solve each (about 0.01 s with Sigma = I, more under a spectrum), and
#: the bounded search refines between grid points, so a finer grid only finds a minimum that
#: lies between two grid points and above both of its neighbours' risks.
MAX_GRID = 1000


def optimal_lambda_logistic(*, gamma, signal, r, grid: int = 13, spectrum=None,
                            max_seconds: float | None = MAX_SECONDS):
    """``(lam*, risk at lam*)`` minimizing the limit of ``||w_hat - w_i||^2``.

    Parameters
    ----------
    gamma, signal, r : float
        As in ``riskcalc.logistic_limit``.
    grid : int
        Log-spaced grid points over ``LAM_RANGE`` that bracket the minimum, in [3,
        ``MAX_GRID``] (three: the two ends and one interior point).
    spectrum : Spectrum, optional
        ``x ~ N(0, Sigma)`` (``riskcalc.logistic.spectrum.fixed_point``); the risk minimized stays
        ``||w_hat - w_i||^2``.
    max_seconds : float or None
        The whole search's limit (None: none): no solve is started past it, and the
        ValueError says how far the search got. Each solve is held to what is left of it.

    Returns
    -------
    tuple of float
        ``lam*`` (an end of ``LAM_RANGE`` when the risk is monotone there) and the risk.

    Raises
    ------
    ValueError
        A parameter out of range, or the search still running at ``max_seconds``.
    """
    from scipy.optimize import minimize_scalar

    # A bool or a float was taken (True: one grid point, the risk at lam = 1e-3 returned as the
    # optimum); 2.5 was a TypeError and 0 "argmin of an empty sequence".
    grid = positive_int("grid", grid, minimum=3, maximum=MAX_GRID)
    for name, value in (("gamma", gamma), ("signal", signal), ("r", r)):
        # One point: an array was "The truth value of an array ... is ambiguous".
        real(name, value, ndim=0)
    max_seconds = check_max_seconds(max_seconds)
    lams = np.geomspace(*LAM_RANGE, grid)
    clock, solved = time.perf_counter(), []

    def stopped(spent, why=""):
        return ValueError(
            f"optimal_lambda_logistic: still searching at max_seconds = {max_seconds:g} "
            f"({spent:.3g} s{why}): {min(len(solved), grid)} of {grid} grid points over lam "
            f"in [{LAM_RANGE[0]:g}, {LAM_RANGE[1]:g}] solved" + (
                "" if len(solved) < grid else f" and {len(solved) - grid} steps of the "
                "bounded search") + "; fewer grid points (grid), or raise max_seconds "
            "(None: no limit)")

    def risk(lam):
        # Had no limit as a whole (each solve 60 s of its own): grid = 40 under
        # two-point:1,100,0.5 ran 137 s on a loaded machine, grid = 1000 would run an hour.
        # Each solve gets what is left (it kept its own 60 s, so the search could overrun
        # max_seconds by up to one solve).
        spent = time.perf_counter() - clock
        if max_seconds is not None and spent > max_seconds:
            raise stopped(spent)
        left = None if max_seconds is None else max_seconds - spent
        try:
            value = logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam,
                                   spectrum=spectrum, max_seconds=left).risk
        except ValueError as exc:
            if left is None or f"max_seconds = {left:g}" not in str(exc):
                raise
            raise stopped(time.perf_counter() - clock,
                          f"; the solve at lam = {lam:.6g} would pass it: {exc}") from None
        solved.append(lam)
        return value
    risks = [risk(v) for v in lams]
    k = int(np.argmin(risks))
    if k in (0, grid - 1):
        return float(lams[k]), float(risks[k])
    res = minimize_scalar(lambda t: risk(np.exp(t)),
                          bounds=(np.log(lams[k - 1]), np.log(lams[k + 1])), method="bounded",
                          options={"xatol": 1e-6})
    return float(np.exp(res.x)), float(res.fun)
