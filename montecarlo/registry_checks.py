"""The common checks of the method registry, run on one method (built-in or registered).

In the spirit of scikit-learn's ``check_estimator``: a method is one entry in
``riskcalc.METHODS`` (its asymptotic limit) and one in ``montecarlo.ESTIMATORS`` (its
finite-sample estimator, DESIGN.md "Methods are a registry"), and ``check_method`` verifies
that the two describe the same method and that the limit is what the estimator's risk tends to:

* ``registry``: both entries exist and agree (personalized, centered iff the signal is r);
* ``limit``: finite, nonnegative, risk = bias + variance, vectorized (a grid of gamma and
  tuning values equals the scalar calls) and route-independent (kappa and paper routes agree
  for a non-identity spectrum);
* ``estimator``: omega(mu) and f(mu) are finite arrays shaped like mu, omega >= 0;
* ``simulation``: on small instances (paper 003, Sec. 2; ``montecarlo.compare``), the simulated
  bias, variance and risk lie within ``t * se + rtol * |predicted|`` of the limit, where
  ``t * se`` is the half-width of the 99.9% Student-t interval of the replicate mean and
  ``rtol`` allows for the O(1/d) finite-size difference at the small d used.
"""

from __future__ import annotations

import numpy as np

import riskcalc
from montecarlo.compare import QUANTITIES, compare
from montecarlo.estimators import get_estimator
from montecarlo.instances import Setting
from montecarlo.stats import t_half_width

#: Model of the simulated cases: Sigma = I and the two-point spectrum H = {1, 4} (equal mass).
CASES = (("identity", None), ("two-point:1,4,0.5", riskcalc.Spectrum([1.0, 4.0], [0.5, 0.5])))
LEVEL = 0.999


def check_method(name: str, *, gamma: float = 2.0, sigma: float = 0.5, signal: float = 1.0,
                 tuning: float = 0.5, d: int = 200, reps: int = 10, seed: int = 0,
                 rtol: float = 0.03) -> list:
    """Run the registry's common checks on method ``name``; AssertionError if any fails.

    Parameters
    ----------
    name : str
        A name of both ``riskcalc.METHODS`` and ``montecarlo.ESTIMATORS``.
    gamma, sigma, signal, tuning : float
        The simulated client: d/n, noise level, r (or rho) and the tuning value (lam or alpha;
        ignored by untuned methods).
    d, reps, seed : int
        Dimension, replicates and seed of the simulation check.
    rtol : float
        Allowance for the finite-d difference, relative to the limit (3% at d = 200 covers the
        built-in methods, whose finite-d gaps are O(1/d)).

    Returns
    -------
    list of dict
        One row per check: ``check``, ``case``, ``ok`` and the numbers behind it.

    Raises
    ------
    AssertionError
        Listing every failed check.

    Examples
    --------
    >>> rows = check_method("ftfa", reps=4)
    >>> all(row["ok"] for row in rows)
    True
    """
    rows = run_checks(name, gamma=gamma, sigma=sigma, signal=signal, tuning=tuning, d=d,
                      reps=reps, seed=seed, rtol=rtol)
    failed = [row for row in rows if not row["ok"]]
    if failed:
        raise AssertionError(f"check_method({name!r}) failed: " + "; ".join(
            f"{row['check']} [{row['case']}]: "
            + ", ".join(f"{k} = {v}" for k, v in row.items() if k not in ("check", "case", "ok"))
            for row in failed))
    return rows


def run_checks(name: str, *, gamma: float = 2.0, sigma: float = 0.5, signal: float = 1.0,
               tuning: float = 0.5, d: int = 200, reps: int = 10, seed: int = 0,
               rtol: float = 0.03) -> list:
    """The rows of ``check_method`` (same parameters), failed checks included, no exception."""
    info = riskcalc.get_method(name)
    est = get_estimator(name)
    rows = [_registry(info, est), _vectorized(info, gamma, sigma, signal, tuning),
            _routes(info, gamma, sigma, signal, tuning), _estimator(est, tuning)]
    params = {"gamma": gamma, "sigma": sigma, info.signal: signal}
    if info.tuning:
        params[info.tuning] = tuning
    for label, spectrum in CASES:
        spec = riskcalc.ClientSpec(name, spectrum=spectrum, **params)
        res = compare(spec, Setting(d=d), reps=reps, seed=seed)
        for q in QUANTITIES:
            pred, mean = float(getattr(res.limit, q)), float(res.summary[q]["mean"])
            se = float(res.summary[q]["se"])
            tol = float(t_half_width(se, reps, LEVEL)) + rtol * abs(pred) + 1e-12
            rows.append({"check": f"simulation {q}", "case": label, "ok": abs(mean - pred) <= tol,
                         "predicted": pred, "simulated": mean, "se": se, "tolerance": tol})
    return rows


def _registry(info, est) -> dict:
    ok = est.personalized == info.personalized and est.centered == (info.signal == "r")
    return {"check": "registry", "case": "-", "ok": ok, "personalized": est.personalized,
            "centered": est.centered, "signal": info.signal}


def _vectorized(info, gamma, sigma, signal, tuning) -> dict:
    """A (3, 2) grid of gamma and tuning values, against the scalar calls."""
    gammas = gamma * np.array([[0.75], [1.0], [2.0]])
    tunings = tuning * np.array([0.5, 2.0]) if info.tuning else None
    grid = _limit(info, gammas, sigma, signal, tunings)
    shape = (3, 2) if info.tuning else (3, 1)
    ok = all(np.shape(getattr(grid, q)) == shape for q in QUANTITIES)
    worst = np.inf
    if ok:
        values = np.stack([np.asarray(getattr(grid, q), dtype=float) for q in QUANTITIES])
        scalars = np.empty_like(values)
        for i, j in np.ndindex(shape):
            one = _limit(info, gammas[i, 0], sigma, signal,
                         tunings[j] if info.tuning else None)
            scalars[:, i, j] = [getattr(one, q) for q in QUANTITIES]
        worst = float(np.max(np.abs(values - scalars) / np.maximum(np.abs(scalars), 1e-300)))
        ok = (bool(np.all(np.isfinite(values)) and np.all(values[:2] >= 0))
              and np.allclose(values[2], values[0] + values[1], rtol=1e-12, atol=0)
              and worst <= 1e-12)
    return {"check": "limit vectorized", "case": "identity", "ok": ok, "max_rel_diff": worst}


def _routes(info, gamma, sigma, signal, tuning) -> dict:
    """The kappa and paper routes on the two-point spectrum agree to 1e-8."""
    spectrum = CASES[1][1]
    t = tuning if info.tuning else None
    kappa, paper = (_limit(info, gamma, sigma, signal, t, spectrum=spectrum, route=route)
                    for route in ("kappa", "paper"))
    diff = max(abs(getattr(kappa, q) - getattr(paper, q)) / max(abs(getattr(kappa, q)), 1e-300)
               for q in QUANTITIES)
    return {"check": "limit routes", "case": CASES[1][0], "ok": bool(diff <= 1e-8),
            "max_rel_diff": float(diff)}


def _estimator(est, tuning) -> dict:
    mu = np.linspace(0.05, 6.0, 40)
    omega, f = est.global_weight(mu, tuning), est.filter(mu, tuning)
    ok = all(np.shape(a) == mu.shape and np.all(np.isfinite(a)) for a in (omega, f))
    return {"check": "estimator shapes", "case": "-",
            "ok": bool(ok and np.all(np.asarray(omega) >= 0))}


def _limit(info, gamma, sigma, signal, tuning, **kw):
    extra = {info.tuning: tuning} if info.tuning else {}
    return riskcalc.limit(info.name, gamma=gamma, sigma=sigma, **{info.signal: signal},
                          **extra, **kw)
