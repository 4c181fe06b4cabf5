"""Testing whether errors scale as a minimax rate claims (theory side of the rate checks).

The papers of :mod:`riskcalc.minimax` state rates "up to constants": ``c * bound <= error <=
C * bound`` with unknown ``c, C``. Given errors on a grid of (``N/m``, ``R``, ``lam``, ...),
this module fits the unknown constant(s) by least squares on the log scale, fits power-law
exponents with confidence intervals, checks that the errors stay inside ``[c, C] x bound`` and
maps which method is rate-optimal where. It only fits numbers it is given: simulations live in
``montecarlo``.
"""

from __future__ import annotations

from typing import Mapping, NamedTuple

import numpy as np
from scipy import optimize, stats

from riskcalc._validate import as_array, one_of, positive
from riskcalc.minimax import lower_bound_aer
from riskcalc.minimax._common import from_logs


class PowerLawFit(NamedTuple):
    """``log y = log constant + sum_j exponent_j log x_j`` fitted by ordinary least squares."""

    constant: float
    exponents: dict
    ci: dict
    stderr: dict
    residual_sd: float
    dof: int


class ConstantFit(NamedTuple):
    """Constants ``C_k`` of ``y ~ sum_k C_k t_k`` fitted on the log scale."""

    constants: dict
    ci: dict
    residual_sd: float


class RateCheck(NamedTuple):
    """Outcome of :func:`rate_check`."""

    constants: ConstantFit
    error_fit: PowerLawFit
    bound_exponents: dict
    consistent: dict
    ratio_min: float
    ratio_max: float
    within: bool
    c: float
    C: float


class RegimeMap(NamedTuple):
    """Outcome of :func:`regime_map` (arrays broadcast over ``N, m, R``)."""

    lower: np.ndarray
    upper: dict
    ratio: dict
    optimal: dict
    best: np.ndarray


def _named(what: str, value) -> dict:
    """``value`` as a dict of name -> values: a list of pairs, an array or None was a
    TypeError, IndexError or AttributeError of the first use."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping (a dict) of name -> values, got "
                         f"{type(value).__name__}")
    return dict(value)


def _positive_field(name, value, shape):
    arr = positive(name, value)
    try:
        return np.broadcast_to(arr, shape).ravel()
    except ValueError:
        raise ValueError(f"{name} must broadcast to the errors' shape {shape}, got shape "
                         f"{arr.shape}") from None


def fit_power_law(predictors: Mapping[str, object], errors, level: float = 0.95) -> PowerLawFit:
    """Fit ``errors ~ constant * prod_j x_j^{a_j}`` by least squares on the log scale.

    Ordinary least squares of ``log errors`` on ``[1, log x_1, ...]``; the confidence
    intervals are ``a_j +- t_{dof, (1+level)/2} * se_j`` (exact under i.i.d. Gaussian
    log-noise, i.e. multiplicative log-normal noise). Grid points that share random numbers
    (common random numbers across a heterogeneity grid, as in
    ``montecarlo.experiments.rates.heterogeneity_grid``) are not independent: their residuals are
    correlated and these intervals come out too narrow; take the interval from the replicates
    instead (as ``paper_checks.p000`` does).

    Parameters
    ----------
    predictors : mapping of str to array_like
        Positive grid variables, each broadcastable to ``errors``; each must vary.
    errors : array_like
        Positive errors (e.g. simulated ``E||w_hat - w||^2``).
    level : float
        Confidence level in ``(0, 1)``.

    Returns
    -------
    PowerLawFit

    Raises
    ------
    ValueError
        Non-positive values, a constant predictor, collinear predictors, or too few points.
    """
    predictors = _named("predictors", predictors)
    y = positive("errors", errors)
    lev = as_array("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    names = list(predictors)
    cols = [np.ones(y.size)]
    for name in names:
        x = np.log(_positive_field(name, predictors[name], y.shape))
        if np.ptp(x) == 0:
            raise ValueError(f"predictor {name} does not vary over the grid; drop it")
        cols.append(x)
    design = np.column_stack(cols)
    dof = y.size - design.shape[1]
    if dof < 1:
        raise ValueError(f"errors must have more than {design.shape[1]} points for "
                         f"{len(names)} exponent(s), got {y.size}")
    if np.linalg.matrix_rank(design) < design.shape[1]:
        raise ValueError(f"predictors {names} are collinear on this grid (log scale)")
    coef, *_ = np.linalg.lstsq(design, np.log(y.ravel()), rcond=None)
    resid = np.log(y.ravel()) - design @ coef
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(design.T @ design)
    se = np.sqrt(np.diag(cov))
    tq = float(stats.t.ppf((1 + float(lev)) / 2, dof))
    with np.errstate(over="ignore"):
        # exp(log constant) was inf (with a RuntimeWarning) for the constant 1e320 of errors
        # x at x = 1e-320 * (1, 2, 4, 8, 16): a constant past the floats is a ValueError.
        constant = float(from_logs("the fitted constant", np.exp(coef[0]), coef[0]))
    return PowerLawFit(
        constant=constant,
        exponents={n: float(a) for n, a in zip(names, coef[1:])},
        ci={n: (float(a - tq * s), float(a + tq * s)) for n, a, s in zip(names, coef[1:], se[1:])},
        stderr={n: float(s) for n, s in zip(names, se[1:])},
        residual_sd=float(np.sqrt(s2)), dof=int(dof))


def fit_constants(terms: Mapping[str, object], errors, level: float = 0.95) -> ConstantFit:
    """Fit the hidden constants of a bound ``sum_k C_k t_k`` by least squares on the log scale.

    Minimizes ``sum (log errors - log sum_k C_k t_k)^2`` over ``C_k > 0`` (parametrized as
    ``log C_k``); with one term this is the geometric mean of ``errors / t``. Intervals are
    ``exp(log C_k +- t * se)`` from the Gauss-Newton covariance ``s^2 (J^T J)^{-1}``; a
    constant whose term never matters on the grid gets an infinite interval.

    Parameters
    ----------
    terms : mapping of str to array_like
        Nonnegative term values (e.g. ``{"C1": 1/N, "C2": min(1/n, R^2)}``), broadcastable to
        ``errors``; their sum must be positive everywhere.
    errors : array_like
        Positive errors.
    level : float
        Confidence level in ``(0, 1)``.

    Returns
    -------
    ConstantFit
    """
    terms = _named("terms", terms)
    y = np.log(positive("errors", errors).ravel())
    lev = as_array("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    names = list(terms)
    if not names:
        raise ValueError("terms must name at least one term")
    shape = np.shape(errors)
    t = np.column_stack([np.broadcast_to(as_array(k, terms[k], low=0.0), shape).ravel()
                         for k in names])
    if np.any(t.sum(axis=1) <= 0):
        raise ValueError("terms must have a positive sum at every grid point")
    dof = y.size - len(names)
    if dof < 1:
        raise ValueError(f"errors must have more than {len(names)} points, got {y.size}")

    def resid(theta):
        return y - np.log(t @ np.exp(theta))

    def jac(theta):
        w = t * np.exp(theta)
        return -w / w.sum(axis=1, keepdims=True)

    start = np.full(len(names), float(np.mean(y - np.log(t.sum(axis=1)))))
    with np.errstate(over="ignore"):
        # The constants' scale past the floats (terms 1e-200 x for errors 1e200 x: e^921) was
        # scipy's "Residuals are not finite in the initial point"; from_logs says so.
        from_logs("the fitted constants' scale", np.exp(start[0]), start[0])
    sol = optimize.least_squares(resid, start, jac=jac, method="lm", xtol=1e-14, ftol=1e-14)
    r = sol.fun
    s2 = float(r @ r) / dof
    j = jac(sol.x)
    tq = float(stats.t.ppf((1 + float(lev)) / 2, dof))
    # A term 0 at every grid point leaves its constant unidentified (an infinite interval);
    # the others keep theirs: one such term made every interval infinite (fuzz41 paper F12).
    live = np.any(t > 0, axis=0)
    jtj = (j.T @ j)[np.ix_(live, live)]
    se = np.full(len(names), np.inf)
    if np.linalg.matrix_rank(jtj) == live.sum():
        se[live] = np.sqrt(np.diag(s2 * np.linalg.inv(jtj)))
    return ConstantFit(
        constants={k: float(np.exp(v)) for k, v in zip(names, sol.x)},
        ci={k: (float(np.exp(v - tq * s)), float(np.exp(v + tq * s)))
            for k, v, s in zip(names, sol.x, se)},
        residual_sd=float(np.sqrt(s2)))


def rate_check(grid: Mapping[str, object], errors, bound, c: float, C: float,
               level: float = 0.95) -> RateCheck:
    """Check simulated errors against a bound over a grid.

    Fits the bound's constant(s) (:func:`fit_constants`), fits the errors' power-law exponents
    in every grid variable that varies (:func:`fit_power_law`), fits the bound's own exponents on
    the same grid (no noise, so no interval), calls an exponent consistent when the bound's
    exponent lies in the errors' confidence interval, and tests
    ``c <= errors / bound <= C`` at every grid point (``bound`` with unit constants).
    Exponents are meaningful inside one regime, where the bound is a power law; pass the grid
    points of one regime (see :func:`regime_map`).

    Parameters
    ----------
    grid : mapping of str to array_like
        Positive grid variables (e.g. ``N/m``, ``R``, ``lam``) broadcastable to ``errors``.
    errors : array_like
        Positive errors.
    bound : array_like or mapping of str to array_like
        Bound values on the grid, or its terms (the bound is their sum with unit constants).
    c, C : float
        The band ``0 < c <= C``.
    level : float
        Confidence level.

    Returns
    -------
    RateCheck
    """
    grid = _named("grid", grid)
    lo = float(positive("c", c))
    hi = float(positive("C", C))
    if lo > hi:
        raise ValueError(f"c must be <= C, got c={c!r}, C={C!r}")
    y = positive("errors", errors)
    # An array bound is checked as "bound": a negative or NaN value was "C must lie in [0,
    # inf)", naming the band's upper edge, given valid (fuzz39 fuzz2 F10).
    terms = dict(bound) if isinstance(bound, Mapping) else {
        "C": as_array("bound", bound, low=0.0)}
    const = fit_constants(terms, y, level=level)
    total = sum(np.broadcast_to(as_array(k, v, low=0.0), y.shape) for k, v in terms.items())
    varying = {k: v for k, v in grid.items()
               if np.ptp(np.broadcast_to(positive(k, v), y.shape)) > 0}
    err_fit = fit_power_law(varying, y, level=level)
    bound_fit = fit_power_law(varying, total, level=level)
    ratio = y / total
    return RateCheck(
        constants=const, error_fit=err_fit, bound_exponents=bound_fit.exponents,
        consistent={k: bool(err_fit.ci[k][0] <= bound_fit.exponents[k] <= err_fit.ci[k][1])
                    for k in varying},
        ratio_min=float(ratio.min()), ratio_max=float(ratio.max()),
        within=bool(np.all((ratio >= lo) & (ratio <= hi))), c=lo, C=hi)


def regime_map(N, m, R, kind: str = "aer", slack: float = 2.0) -> RegimeMap:
    """Which of FedAvg, local training and FedProx is rate-optimal where (balanced clients).

    Rates with every hidden and problem constant set to 1 and ``d = 1``, ``n_i = N/m``:
    lower bound ``min(m/N, R^2) + 1/N`` (paper 000, Thm 8 / Cor 9); ``fedavg``
    ``1/N + R^2`` (eq. 11); ``local`` ``m/N`` (Thm 4); ``fedprox_000`` eq. (30)
    ``min(m/N, R sqrt(m/N)) + 1/N`` for ``kind="aer"`` or eq. (29)
    ``min(m/N, R sqrt(m/N)) + sqrt(m)/N`` for ``kind="ier"``; ``fedprox_004``
    ``1/N + min(m/N, R^2)`` (paper 004, Thm 1). A method is marked rate-optimal at a point when
    its rate is within ``slack`` times the lower bound; since rates differ by growing factors
    away from the boundaries (``R^2 ~ m/N``, ``1/(mN)``, ``1/N``), the map does not depend on
    ``slack`` there.

    Parameters
    ----------
    N, m, R : array_like
        Total sample size, clients (``m <= N``), heterogeneity radius; broadcast together.
    kind : {"aer", "ier"}
        Which FedProx bound of paper 000 to use.
    slack : float
        Factor ``>= 1`` allowed over the lower bound.

    Returns
    -------
    RegimeMap
        ``lower``, per-method ``upper`` and ``ratio``, boolean ``optimal`` and the ``best``
        method name (smallest rate; ties go to the earlier of fedavg, local, fedprox_000,
        fedprox_004).
    """
    sl = float(as_array("slack", slack, low=1.0))
    if not one_of(kind, ("aer", "ier")):
        raise ValueError(f"kind must be 'aer' or 'ier', got {kind!r}")
    lower = np.asarray(lower_bound_aer(1.0, N, m, R))
    n_tot, mm, rr = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (N, m, R)))
    hetero = np.minimum(mm / n_tot, rr * np.sqrt(mm / n_tot))
    fp000 = hetero + (1 / n_tot if kind == "aer" else np.sqrt(mm) / n_tot)
    upper = {"fedavg": 1 / n_tot + rr ** 2, "local": mm / n_tot, "fedprox_000": fp000,
             "fedprox_004": 1 / n_tot + np.minimum(mm / n_tot, rr ** 2)}
    ratio = {k: v / lower for k, v in upper.items()}
    names = list(upper)
    best = np.asarray(names)[np.argmin(np.stack([upper[k] for k in names]), axis=0)]
    return RegimeMap(lower=lower, upper=upper, ratio=ratio,
                     optimal={k: v <= sl for k, v in ratio.items()}, best=best)
