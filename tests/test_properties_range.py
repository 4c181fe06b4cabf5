"""Property tests (hypothesis) over the whole documented input range (issue 12): for finite
in-range input, the API returns a non-negative number, never NaN, or raises a clear error.

Ranges (``riskcalc.linear.model``): gamma in [1e-100, 1e100], sigma, r, rho in [0, 1e100], lam
0 or in [1e-100, 1e100]. The one infinite limit is the interpolation threshold gamma = 1 of the
ridgeless estimators with noise (paper 003, Thm 1: the variance diverges there).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import riskcalc
import riskcalc.linear.finite_clients
from riskcalc import Spectrum
from riskcalc.errors import SolverError


def log_uniform(lo, hi):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0 ** e)


gammas = log_uniform(1e-100, 1e100) | st.floats(0.5, 2.0) | st.just(1.0)
scales = st.just(0.0) | log_uniform(1e-100, 1e100) | st.floats(0.01, 10.0)
tunings = st.just(0.0) | log_uniform(1e-100, 1e100) | st.floats(0.01, 10.0)
spectra = st.sampled_from([None, Spectrum.two_point(1.0, 10.0, 0.5),
                           Spectrum.power_law(1.0, 200)])
SETTINGS = settings(max_examples=600, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _kwargs(method, signal, tuning):
    info = riskcalc.METHODS[method]
    kw = {info.signal: signal}
    if info.tuning:
        kw[info.tuning] = tuning
    return kw


def _at_threshold(method, gamma, sigma, kw):
    """Interpolation threshold of a ridgeless personalization (local, FTFA, MAML-FL, or a ridge
    method at lam = 0) with noise: the variance is +inf there."""
    return gamma == 1.0 and sigma > 0 and method != "fedavg" and kw.get("lam", 0.0) == 0.0


def _check(result, threshold):
    values = np.array([result.bias, result.variance, result.risk], dtype=float)
    assert not np.isnan(values).any(), values
    assert (values >= 0).all(), values
    if not threshold:
        assert np.isfinite(values).all(), values


@SETTINGS
@given(method=st.sampled_from(list(riskcalc.METHODS)), gamma=gammas, sigma=scales,
       signal=scales, tuning=tunings, spectrum=spectra, route=st.sampled_from(riskcalc.ROUTES))
def test_limit_is_a_number_or_a_clear_error(method, gamma, sigma, signal, tuning, spectrum,
                                            route):
    kw = _kwargs(method, signal, tuning)
    try:
        result = riskcalc.limit(method, gamma=gamma, sigma=sigma, spectrum=spectrum,
                                route=route, **kw)
    except ValueError:
        return
    except SolverError:
        # Only the second route (paper 003's c0 of Def. 6.1) may give up, far out of range.
        assert route == "paper"
        return
    _check(result, threshold=_at_threshold(method, gamma, sigma, kw))


@SETTINGS
@given(method=st.sampled_from(riskcalc.linear.finite_clients.METHODS), gamma=gammas,
       sigma=scales, signal=scales, tuning=tunings, clients=st.integers(1, 1000),
       weights=st.sampled_from(["samples", "uniform"]), spectrum=spectra)
def test_finite_clients_limit_is_a_number_or_a_clear_error(method, gamma, sigma, signal,
                                                           tuning, clients, weights, spectrum):
    kw = _kwargs(method, signal, tuning)
    if method not in riskcalc.linear.finite_clients.HETEROGENEOUS:
        spectrum = None                        # MAML-FL and pFedMe: Sigma = I only
    try:
        result = riskcalc.limit(method, gamma=gamma, sigma=sigma, clients=clients,
                                weights=weights, spectrum=spectrum, **kw)
    except (ValueError, SolverError):
        return
    _check(result, threshold=_at_threshold(method, gamma, sigma, kw))


@SETTINGS
@given(method=st.sampled_from(["rtfa", "pfedme", "local_ridge", "maml_fl"]), gamma=gammas,
       sigma=scales, signal=scales, spectrum=spectra)
def test_optimal_limit_is_a_number_or_a_clear_error(method, gamma, sigma, signal, spectrum):
    kw = {riskcalc.METHODS[method].signal: signal}
    try:
        result = riskcalc.optimal_limit(method, gamma=gamma, sigma=sigma, spectrum=spectrum,
                                        **kw)
    except (ValueError, SolverError):
        return
    _check(result, threshold=False)


def test_kappa_route_at_the_threshold_with_a_tiny_penalty():
    # At gamma = 1, kappa ~ sqrt(lam) lies below s eps: the kappa route must still agree with
    # the closed form (Sigma = I, paper 003 Cor. 3.1 / Thm 2), which hypothesis found it did not.
    for method, signal in (("local_ridge", {"rho": 1.0}), ("rtfa", {"r": 1.0})):
        for lam in (1e-35, 1e-80, 1e-100):
            kappa = riskcalc.limit(method, gamma=1.0, sigma=1.0, lam=lam, route="kappa",
                                   **signal)
            closed = riskcalc.limit(method, gamma=1.0, sigma=1.0, lam=lam, route="closed",
                                    **signal)
            assert kappa.bias == pytest.approx(closed.bias, rel=1e-9)
            assert kappa.variance == pytest.approx(closed.variance, rel=1e-9)


def test_optimal_penalty_beyond_range_is_refused():
    # lam* = (sigma / r)^2 gamma = 1e-324 underflowed to 0, and the limit at gamma = 1 was +inf.
    with pytest.raises(ValueError, match="lam\\* = sigma\\^2 gamma / r\\^2"):
        riskcalc.optimal_limit("rtfa", gamma=1.0, sigma=1e-82, r=1e80)
    assert riskcalc.optimal_lambda("rtfa", gamma=2.0, sigma=1e-60, r=1e-60) == 2.0


def test_flat_maml_global_objective_is_refused():
    # alpha = 1 with S ~ I (gamma -> 0): s (1 - alpha s)^2 vanishes, no unique global model.
    with pytest.raises(SolverError, match="flat"):
        riskcalc.limit("maml_fl", gamma=1e-34, sigma=0.0, r=0.0, alpha=1.0, clients=2)
