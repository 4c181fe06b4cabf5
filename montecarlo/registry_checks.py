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
* ``simulation``: on instances of paper 003, Sec. 2 (``montecarlo.compare``) at d and 2d, the
  replicate means m(d), m(2d) of the bias, variance and risk are extrapolated to d = infinity,
  2 m(2d) - m(d) (their finite-d difference is O(1/d): the ridgeless variance's is 2/d at
  gamma = 2, from E tr W^-1 of a Wishart matrix), and must lie within ``k * se + rtol *
  |predicted|`` of the limit, se the standard error of the extrapolation. Where a size does
  not realize the ratio or spectrum asked (d / round(d / gamma), the d quantiles of H), each
  mean is taken less its own prediction there (``compare``'s), and that difference is
  extrapolated. A check that raises (a limit defined for Sigma = I only, say) is a failed
  row with the error.

Defaults, measured (d = 200 and 400, 100 replicates each, k = 4, rtol = 0.2%): on every
built-in method, both cases, seeds 0 and 1, the extrapolated means lie within 1.95 standard
errors of the limits (at most 34% of the tolerance); the largest standard error is 0.29% of
the limit (the ridgeless variance), so the tolerance stays under 1.4% and a limit 2% wrong
fails (``tests/test_cli_fuzz.py``). One run takes 12-30 s.
"""

from __future__ import annotations

import numpy as np

import riskcalc
from montecarlo.compare import QUANTITIES, compare
from montecarlo.linear.estimators import get_estimator
from montecarlo.linear.instances import Setting
from montecarlo.runner.seeding import check_seed
from riskcalc._validate import as_array, parameter, positive_int

#: Model of the simulated cases: Sigma = I and the two-point spectrum H = {1, 4} (equal mass).
CASES = (("identity", None), ("two-point:1,4,0.5", riskcalc.Spectrum([1.0, 4.0], [0.5, 0.5])))
#: Defaults of the simulation check (module docstring).
D, REPS, RTOL, K = 200, 100, 0.002, 4.0


def check_method(name: str, *, gamma: float = 2.0, sigma: float = 0.5, signal: float = 1.0,
                 tuning: float = 0.5, spectrum=CASES, d: int = D, reps: int = REPS,
                 seed: int = 0, rtol: float = RTOL, k: float = K) -> list:
    """Run the registry's common checks on method ``name``; AssertionError if any fails.

    Parameters
    ----------
    name : str
        A name of both ``riskcalc.METHODS`` and ``montecarlo.ESTIMATORS``.
    gamma, sigma, signal, tuning : float
        The simulated client: d/n, noise level, r (or rho) and the tuning value (lam or alpha;
        ignored by untuned methods).
    spectrum : sequence of (label, Spectrum or None)
        The simulated covariances (default: Sigma = I and the two-point H = {1, 4}).
    d, reps, seed : int
        Smaller dimension (the simulation runs at d and 2d), replicates per dimension, seed.
    rtol : float
        Allowance for what the extrapolation leaves of the finite-d difference, relative to
        the limit (module docstring: measured on the built-in methods).
    k : float
        Number of standard errors of the extrapolated mean allowed (as a Student-t interval
        of the same level).

    Returns
    -------
    list of dict
        One row per check: ``check``, ``case``, ``ok`` and the numbers behind it.

    Raises
    ------
    AssertionError
        Listing every failed check.
    ValueError
        For d, reps or seed out of range (before any check).

    Examples
    --------
    >>> rows = check_method("ftfa", reps=4)
    >>> all(row["ok"] for row in rows)
    True
    """
    rows = run_checks(name, gamma=gamma, sigma=sigma, signal=signal, tuning=tuning,
                      spectrum=spectrum, d=d, reps=reps, seed=seed, rtol=rtol, k=k)
    failed = [row for row in rows if not row["ok"]]
    if failed:
        raise AssertionError(f"check_method({name!r}) failed: " + "; ".join(
            f"{row['check']} [{row['case']}]: "
            + ", ".join(f"{k} = {v}" for k, v in row.items() if k not in ("check", "case", "ok"))
            for row in failed))
    return rows


def run_checks(name: str, *, gamma: float = 2.0, sigma: float = 0.5, signal: float = 1.0,
               tuning: float = 0.5, spectrum=CASES, d: int = D, reps: int = REPS,
               seed: int = 0, rtol: float = RTOL, k: float = K) -> list:
    """The rows of ``check_method`` (same parameters), failed checks included, no exception:
    a check that raises (a limit defined for Sigma = I only, say) is a failed row whose
    ``error`` says why. The run's own options (d, reps, seed) raise ValueError: a bad seed
    was six failed checks, blaming the method; so do a check grid out of range and a limit
    that is infinite there (``grid_in_range``, ``finite_limits``)."""
    info = riskcalc.get_method(name)
    est = get_estimator(name)
    gamma, sigma, signal, tuning, spectrum, d, reps, seed, rtol, k = _arguments(
        info, gamma, sigma, signal, tuning, spectrum, d, reps, seed, rtol, k)
    for check in (grid_in_range, finite_limits):
        check(name, gamma=gamma, sigma=sigma, signal=signal, tuning=tuning, cases=spectrum)
    route_case = next((c for c in spectrum if c[1] is not None), spectrum[0])
    rows = [_row(lambda: _registry(info, est), "registry", "-"),
            _row(lambda: _vectorized(info, gamma, sigma, signal, tuning), "limit vectorized",
                 "identity"),
            _row(lambda: _routes(info, gamma, sigma, signal, tuning, route_case),
                 "limit routes", route_case[0]),
            _row(lambda: _estimator(est, tuning), "estimator shapes", "-")]
    params = {"gamma": gamma, "sigma": sigma, info.signal: signal}
    if info.tuning:
        params[info.tuning] = tuning
    for label, sp in spectrum:
        try:
            spec = riskcalc.ClientSpec(name, spectrum=sp, **params)
            # max_minutes: the whole run's, checked by the caller (check-method --max-minutes).
            runs = [compare(spec, Setting(d=size), reps=reps, seed=seed, max_minutes=None)
                    for size in (d, 2 * d)]
            asked = riskcalc.spec_limit(spec)
        except (ValueError, ArithmeticError) as exc:
            rows += [{"check": f"simulation {q}", "case": label, "ok": False,
                      "error": str(exc)} for q in QUANTITIES]
            continue
        for q in QUANTITIES:
            rows.append(_simulation(q, label, runs, float(getattr(asked, q)), rtol, k))
    return rows


def grid_in_range(name: str, *, gamma: float, sigma: float, signal: float, tuning,
                  cases=None, option: str = "") -> None:
    """ValueError where the vectorized check's grid (0.75, 1 and 2 times gamma, 0.5 and 2
    times the tuning) leaves the model's ranges: ``lam = 1e100`` gave pfedme a failed row (an
    AssertionError of ``check_method`` blaming the method) for the check's own 2e100.
    ``cases`` is unused (the signature of ``finite_limits``); ``option`` as there."""
    info = riskcalc.get_method(name)
    for g in (0.75 * gamma, 2 * gamma):
        for t in ((0.5 * tuning, 2 * tuning) if info.tuning else (None,)):
            try:
                riskcalc.ClientSpec(name, gamma=g, sigma=sigma, **{info.signal: signal},
                                    **({info.tuning: t} if info.tuning else {}))
            except ValueError as exc:
                raise ValueError(f"the checks evaluate the limit at 0.75 to 2 times "
                                 f"{option}gamma" + (f" and 0.5 to 2 times {option}{info.tuning}"
                                                     if info.tuning else "")
                                 + f", out of range here: {exc}") from None


def finite_limits(name: str, *, gamma: float, sigma: float, signal: float, tuning, cases,
                  option: str = "") -> None:
    """ValueError where the limit of method ``name`` is infinite at the parameters given (the
    ridgeless variance at gamma = 1), for any spectrum of ``cases``: it is inside no
    interval, and the simulation rows said "ok" against it with a tolerance of inf (the
    command line refused it; ``check_method`` passed). ``option``: the prefix of the names in
    the message (``--`` on the command line). A limit that raises is left to the check rows
    (a failed row each)."""
    info = riskcalc.get_method(name)
    for label, sp in cases:
        try:
            res = riskcalc.limit(name, gamma=gamma, sigma=sigma, spectrum=sp,
                                 **{info.signal: signal},
                                 **({info.tuning: tuning} if info.tuning else {}))
        except (ValueError, ArithmeticError):
            continue
        for q in ("bias", "variance"):
            if not np.isfinite(float(getattr(res, q))):
                raise ValueError(f"the limit's {q} of {name} is infinite at gamma = {gamma:g} "
                                 f"(case {label}): no simulation can be checked against it; "
                                 f"choose another {option}gamma" + (
                                     f" or a {option}lam > 0" if info.tuning == "lam" else ""))


def _arguments(info, gamma, sigma, signal, tuning, spectrum, d, reps, seed, rtol, k):
    """The checks' own arguments, checked as ``riskcalc check-method`` checks its options:
    reps=1, d=1, seed=-1, tuning=True or an array of gamma were reported as the method
    failing its checks (an AssertionError blaming it), k=-1 failed every simulation row, and
    spectrum="identity" was an IndexError."""
    values = [float(parameter(n, v, ndim=0)) for n, v in
              (("gamma", gamma), ("sigma", sigma), (info.signal, signal))]
    values.append(float(as_array("tuning", tuning, low=0.0, ndim=0)))
    if not isinstance(spectrum, (list, tuple)) or not spectrum or not all(
            isinstance(c, (list, tuple)) and len(c) == 2 and isinstance(c[0], str)
            and (c[1] is None or isinstance(c[1], riskcalc.Spectrum)) for c in spectrum):
        raise ValueError("spectrum must be a non-empty sequence of (label, Spectrum or None) "
                         f"pairs, such as (('identity', None),), got {spectrum!r:.60}")
    return (*values, tuple(spectrum), positive_int("d", d, minimum=2),
            positive_int("reps", reps, minimum=2), check_seed(seed),
            float(as_array("rtol", rtol, low=0.0, high=1.0, low_open=True, ndim=0)),
            float(as_array("k", k, low=0.0, high=100.0, low_open=True, ndim=0)))


def _simulation(q, label, runs, pred, rtol, k) -> dict:
    """One quantity: the replicate means at d and 2d extrapolated to d = infinity (their
    finite-d difference is O(1/d): 2 m(2d) - m(d) removes it), against the limit ``pred``
    within k standard errors plus ``rtol`` of it. Each mean is taken less its own run's
    prediction, at the ratio and spectrum its size realizes: ftfa at gamma 3 and d = 25
    (d / n = 3.125, then 50 / 17 = 2.94) extrapolated its exact bias to 0.64 against 0.68, a
    FAIL for a closed form (fuzz39 fuzz F9)."""
    (m1, s1, l1), (m2, s2, l2) = ((float(r.summary[q]["mean"]), float(r.summary[q]["se"]),
                                   float(getattr(r.limit, q))) for r in runs)
    mean, se = pred + 2 * (m2 - l2) - (m1 - l1), float(np.hypot(2 * s2, s1))
    tol = k * se + rtol * abs(pred) + 1e-12
    return {"check": f"simulation {q}", "case": label, "ok": bool(abs(mean - pred) <= tol),
            "predicted": pred, "simulated": mean, "se": se, "tolerance": tol,
            "at_d": m1, "at_2d": m2}


def _row(check, name, case) -> dict:
    try:
        return check()
    except (ValueError, ArithmeticError) as exc:
        return {"check": name, "case": case, "ok": False, "error": str(exc)}


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
        # A grid point at the interpolation threshold (gamma = 1 with no ridge: 2 x the
        # user's gamma 0.5) has an infinite limit, the same in both calls: it was a FAIL with
        # max_rel_diff nan for local at --gamma 0.5.
        edge = np.isinf(scalars) & (values == scalars)
        with np.errstate(invalid="ignore"):
            rel = np.abs(values - scalars) / np.maximum(np.abs(scalars), 1e-300)
        worst = float(np.max(np.where(edge, 0.0, rel)))
        rest = ~edge.any(axis=0)            # the points off the threshold
        ok = (bool(np.all(np.isfinite(values[:, rest])) and np.all(values[:2] >= 0))
              and np.allclose(values[2][rest], values[0][rest] + values[1][rest],
                              rtol=1e-12, atol=0)
              and worst <= 1e-12)
    return {"check": "limit vectorized", "case": "identity", "ok": ok, "max_rel_diff": worst}


def _routes(info, gamma, sigma, signal, tuning, case) -> dict:
    """The kappa and paper routes agree to 1e-8 on the spectrum of ``case`` (label,
    Spectrum); for Sigma = I (None) the closed form and the kappa route do."""
    label, spectrum = case
    routes = ("kappa", "paper") if spectrum is not None else ("closed", "kappa")
    t = tuning if info.tuning else None
    kappa, paper = (_limit(info, gamma, sigma, signal, t, spectrum=spectrum, route=route)
                    for route in routes)
    diff = max(abs(getattr(kappa, q) - getattr(paper, q)) / max(abs(getattr(kappa, q)), 1e-300)
               for q in QUANTITIES)
    return {"check": "limit routes", "case": label, "ok": bool(diff <= 1e-8),
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
