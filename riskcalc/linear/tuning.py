"""Optimal tuning of the ridge penalty lam (RTFA, pFedMe, local ridge).

Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 2, Thm 4 and Cor. 3.1: for Sigma = I the risk is
minimized at lam* = sigma^2 gamma / r^2 (rho^2 for local ridge), where it equals
sigma^2 gamma m(-lam*). The same lam* is optimal for every spectrum H as long as the signal
direction is uniform (G = H): the ridge estimator with that penalty is then the posterior mean
under the Gaussian prior theta ~ N(0, r^2/d I), which in the limit has the same risk as the
uniform prior on the sphere of radius r (Dobriban-Wager 2018, Thm 2.1). For G != H there is no
closed form and lam* is found by minimizing the exact limit numerically.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import one_of
from riskcalc.linear.limits import LimitResult, limit
from riskcalc.linear.methods import get_method
from riskcalc.linear.model import LAM_RANGE, ClientSpec, broadcast_shape

HOWS = ("auto", "closed", "numeric")

# Grid over which the numeric search brackets the minimum, in units of sigma^2 gamma / r^2
# (the G = H optimum): wide enough for any spectrum with condition number up to ~1e8.
_GRID = np.logspace(-10, 10, 201)


def optimal_lambda(method: str, *, gamma, sigma, r=None, rho=None, spectrum=None,
                   how: str = "auto"):
    """The penalty lam* that minimizes the limiting risk of ``method``.

    Paper 003, Thm 2 (RTFA), Thm 4 (pFedMe), Cor. 3.1 (local ridge): lam* = sigma^2 gamma /
    r^2, or sigma^2 gamma / rho^2 for ``local_ridge``.

    Parameters
    ----------
    method : str
        ``rtfa``, ``pfedme`` or ``local_ridge``.
    gamma, sigma, r, rho, spectrum
        As in ``riskcalc.limit``.
    how : str
        ``"closed"``: the formula (valid when the signal direction is uniform, G = H);
        ``"numeric"``: minimize the exact limit over lam; ``"auto"``: closed when valid.

    Returns
    -------
    float or ndarray
        lam* in [0, inf]: 0 when sigma = 0 (interpolation is optimal), inf when the signal
        norm is 0 (the center is exact: FedAvg for RTFA/pFedMe, the zero vector for local
        ridge).
    """
    info = get_method(method)
    if not info.ridge:
        raise ValueError(f"method {method} has no ridge penalty lam to tune "
                         "(optimal_lambda takes rtfa, pfedme, local_ridge)")
    if not one_of(how, HOWS):
        raise ValueError(f"how must be one of {', '.join(HOWS)}; got {how!r}")
    spec = ClientSpec(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=0.0, spectrum=spectrum)
    uniform = spec.spectrum is None or spec.spectrum.signal_is_uniform
    if how == "closed" and not uniform:
        raise ValueError("the closed-form lam* = sigma^2 gamma / r^2 needs a uniform signal "
                         "direction (spectrum without signal_weights)")
    shape = broadcast_shape({"gamma": spec.gamma, "sigma": spec.sigma,
                             spec.info.signal: spec.signal})
    gamma, sigma, signal = (np.broadcast_to(v, shape) for v in (spec.gamma, spec.sigma,
                                                                 spec.signal))
    if how == "numeric" or (how == "auto" and not uniform):
        out = np.vectorize(lambda g, s, t: _numeric(spec, g, s, t))(gamma, sigma, signal)
    else:
        out = _closed(gamma, sigma, signal)
    return float(out) if shape == () else np.asarray(out, dtype=float)


def optimal_limit(method: str, *, gamma, sigma, r=None, rho=None, spectrum=None,
                  how: str = "auto") -> LimitResult:
    """The limit at lam = ``optimal_lambda(...)``: the best risk the method can reach.

    Paper 003, Thm 2 / Thm 4 / Cor. 3.1: for Sigma = I it equals sigma^2 gamma m(-lam*).

    Parameters
    ----------
    method, gamma, sigma, r, rho, spectrum, how
        As for ``optimal_lambda``.

    Returns
    -------
    LimitResult
        The limit at lam*; ``params["lam"]`` holds lam*.

    Raises
    ------
    ValueError
        When lam* is infinite (signal norm 0: the centre itself is optimal; for local ridge
        the zero vector).
    """
    lam = optimal_lambda(method, gamma=gamma, sigma=sigma, r=r, rho=rho, spectrum=spectrum,
                         how=how)
    if np.any(np.isinf(lam)):
        # local_ridge shrinks toward 0, not toward the centre: "use method fedavg" was wrong
        # advice there (theta_i = 0 is estimated with risk 0 by the zero vector).
        # Which entry of a grid (r=[0, 1] named none; fuzz41 api F18).
        at = "" if np.ndim(lam) == 0 else (f" at entry {int(np.flatnonzero(np.isinf(lam))[0])}"
                                           f" of {np.size(lam)}")
        raise ValueError(f"lam* is infinite (signal norm 0{at}): " + (
            "theta_i = 0, which the zero vector estimates with risk 0 (local ridge as lam -> "
            "inf)" if get_method(method).name == "local_ridge" else
            "the optimum is the center itself, use method fedavg"))
    _check_reach(np.asarray(lam), get_method(method).signal)
    return limit(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam, spectrum=spectrum)


def _check_reach(lam, signal: str) -> None:
    """ValueError for a lam* beyond ``LAM_RANGE`` (the penalties ``limit`` computes), saying what
    it means: ``optimal_limit`` was refused with ``limit``'s "lam must be 0 or lie in ...",
    whose advice (the limits equal those at lam = 0 to 100 digits) is false at gamma = 1,
    for a lam the caller never gave (fuzz40 api F3)."""
    out = (lam != 0) & ((lam < LAM_RANGE[0]) | (lam > LAM_RANGE[1]))
    if not np.any(out):
        return
    bad = float(lam[out].flat[0])
    big = bad > LAM_RANGE[1]
    raise ValueError(
        f"optimal_limit: lam* = sigma^2 gamma / {signal}^2 = {bad:.3g} is beyond the penalties "
        f"riskcalc.limit computes (lam must be 0 or lie in [{LAM_RANGE[0]:g}, "
        f"{LAM_RANGE[1]:g}]): " + (
            f"the signal {signal} is negligible against the noise, and the optimum's risk is "
            f"that of the centre to a relative 1/lam* (method "
            f"{'fedavg' if signal == 'r' else 'local_ridge at lam = 1e100'})" if big else
            f"the noise is negligible against the signal {signal}: lam = 0 (min-norm) is "
            "optimal to a relative ~lam* away from gamma = 1, where its variance diverges"))


def _closed(gamma, sigma, signal):
    """lam* = (sigma / signal)^2 gamma, any normal float (r = 1e-60 gave "falls outside
    [1e-100, 1e+100]: beyond floating-point range" for lam* = 2e120, a float; that range is
    the one of ``riskcalc.limit``, which says so when asked there); refused where it
    overflows or underflows."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        # (sigma / signal)^2 gamma: the squares alone overflow above 1e154.
        lam = np.where(sigma == 0, 0.0, (sigma / signal) ** 2 * gamma)
    if np.any((sigma > 0) & (signal > 0) & ~np.isfinite(lam)):
        raise ValueError("lam* = sigma^2 gamma / r^2 (rho^2 for local_ridge) overflows: the "
                         "signal-to-noise ratio is beyond floating-point range")
    # Below the smallest normal float lam* has lost its digits (1e-324 rounds to 0: the limit
    # at gamma = 1 was then +inf for a finite optimum).
    if np.any((sigma > 0) & (lam < np.finfo(float).tiny)):
        raise ValueError("lam* = sigma^2 gamma / r^2 (rho^2 for local_ridge) underflows: the "
                         "signal-to-noise ratio is beyond floating-point range")
    return lam


def _numeric(spec: ClientSpec, gamma, sigma, signal) -> float:
    if sigma == 0:
        return 0.0
    if signal == 0:
        return np.inf

    def risk(lam):
        return limit(spec.method, gamma=gamma, sigma=sigma, lam=lam, spectrum=spec.spectrum,
                     **{spec.info.signal: signal}).risk

    # The search stays within the penalties the limit takes (gamma = 1e50, r = 1e-20 was
    # refused with "lam must be 0 or lie in [1e-100, 1e+100]", naming a lam nobody gave).
    with np.errstate(over="ignore", under="ignore"):
        scale = sigma**2 * gamma / signal**2
        grid = np.unique(np.clip(scale * _GRID, *LAM_RANGE))
    values = risk(grid)
    i = int(np.argmin(values))
    if i == 0 and risk(0.0) <= values[0]:
        _check_resolved(risk, 0.0, [np.clip(scale, *LAM_RANGE)])
        return 0.0
    if i == grid.size - 1:
        raise ValueError("the risk keeps decreasing as lam grows beyond "
                         f"{grid[-1]:.3g}: lam* is infinite or out of range")
    lo, hi = np.log(grid[max(i - 1, 0)]), np.log(grid[i + 1])
    from scipy.optimize import minimize_scalar  # here, not at import: fast CLI start

    res = minimize_scalar(lambda t: risk(np.exp(t)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-10})
    lam = float(np.exp(res.x))
    _check_resolved(risk, lam, np.clip([lam / 10, lam * 10], *LAM_RANGE))
    return lam


#: Least relative rise of the risk a decade away from the numeric lam* (from lam* = 0: at
#: sigma^2 gamma / r^2): below it rounding moves the minimizer by more than ~1e-3.
FLAT = 1e-9


def _check_resolved(risk, lam, near) -> None:
    """ValueError unless the risk at ``near`` exceeds that at ``lam`` by ``FLAT`` of itself:
    far from gamma = 1 the risk is flat to rounding around its minimum, and the minimizer was
    noise (G != H at gamma = 1e20: 6.8e23 for 1e20, at gamma = 1e-20: 0)."""
    near = [x for x in near if x != lam]         # a neighbour clipped onto lam is none
    best = risk(lam)
    rise = float(np.min(risk(np.asarray(near, dtype=float)))) - best
    if not rise > FLAT * best:
        raise ValueError(f"lam* cannot be resolved in double precision: the risk at lam = "
                         f"{', '.join(f'{x:.3g}' for x in near)} is within {FLAT:g} of itself "
                         f"at lam = {lam:.3g} (gamma or the signal-to-noise ratio far from 1); "
                         "every lam there gives the same risk to 9 digits")
