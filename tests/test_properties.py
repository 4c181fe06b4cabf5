"""Property tests (hypothesis) of the limits: monotonicity in lam, optimality of lam*, and the
ordering of methods that paper 003 states."""

import numpy as np
from hypothesis import given, settings, strategies as st

import riskcalc
from riskcalc import Spectrum

gammas = st.floats(0.05, 50.0).filter(lambda g: abs(g - 1) > 1e-3)
lams = st.floats(1e-6, 1e6)
pos = st.floats(0.05, 5.0)
spectra = st.sampled_from([None, Spectrum.two_point(1.0, 4.0, 0.5), Spectrum.power_law(1.0, 200),
                           Spectrum([0.2, 1.0, 5.0], weights=[0.2, 0.5, 0.3])])
#: Slack of an ordering between two SEPARATELY solved limits: each is accurate to about 1e-12
#: relative (riskcalc.solvers.RTOL on the roots, then the traces), so at a tie (e.g. rho = r,
#: where RTFA and local ridge are one problem) the two may differ by ~1e-12 either way
#: (1.4e-12 was seen); 1e-9 is the accuracy the exactness tests demand, with margin.
SLACK = 1e-9


@settings(max_examples=200, deadline=None)
@given(gamma=gammas, lam=lams, factor=st.floats(1.01, 100.0), r=pos, sigma=pos, spec=spectra)
def test_variance_decreases_and_bias_increases_in_lam(gamma, lam, factor, r, sigma, spec):
    lo = riskcalc.limit("rtfa", gamma=gamma, r=r, sigma=sigma, lam=lam, spectrum=spec)
    hi = riskcalc.limit("rtfa", gamma=gamma, r=r, sigma=sigma, lam=lam * factor, spectrum=spec)
    assert hi.variance <= lo.variance * (1 + SLACK)
    assert hi.bias >= lo.bias * (1 - SLACK)


@settings(max_examples=200, deadline=None)
@given(gamma=gammas, lam=st.just(0.0) | st.floats(1e-100, 1e6), r=pos, sigma=pos, spec=spectra,
       method=st.sampled_from(["rtfa", "pfedme", "local_ridge"]))
def test_risk_at_optimal_lambda_is_minimal(gamma, lam, r, sigma, spec, method):
    signal = {riskcalc.METHODS[method].signal: r}
    best = riskcalc.optimal_limit(method, gamma=gamma, sigma=sigma, spectrum=spec, **signal)
    other = riskcalc.limit(method, gamma=gamma, sigma=sigma, lam=lam, spectrum=spec, **signal)
    assert best.risk <= other.risk * (1 + SLACK)


@settings(max_examples=200, deadline=None)
@given(gamma=gammas, r=pos, sigma=pos, spec=spectra)
def test_rtfa_at_optimum_beats_ftfa_and_fedavg(gamma, r, sigma, spec):
    # Paper 003, Sec. 3.3 and Sec. 6.9.
    best = riskcalc.optimal_limit("rtfa", gamma=gamma, r=r, sigma=sigma, spectrum=spec).risk
    ftfa = riskcalc.limit("ftfa", gamma=gamma, r=r, sigma=sigma, spectrum=spec).risk
    fedavg = riskcalc.limit("fedavg", gamma=gamma, r=r, sigma=sigma, spectrum=spec).risk
    assert best <= ftfa * (1 + SLACK)
    assert best <= fedavg * (1 + SLACK)


@settings(max_examples=100, deadline=None)
@given(gamma=gammas, r=pos, rho_extra=st.floats(0.0, 5.0), sigma=pos, spec=spectra)
def test_collaboration_helps_when_rho_exceeds_r(gamma, r, rho_extra, sigma, spec):
    # Paper 003, Sec. 3.3: since rho >= r, FTFA beats the local min-norm interpolant and RTFA
    # at its optimum beats local ridge at its optimum.
    rho = r + rho_extra
    ftfa = riskcalc.limit("ftfa", gamma=gamma, r=r, sigma=sigma, spectrum=spec).risk
    local = riskcalc.limit("local", gamma=gamma, rho=rho, sigma=sigma, spectrum=spec).risk
    assert ftfa <= local * (1 + SLACK)
    rtfa = riskcalc.optimal_limit("rtfa", gamma=gamma, r=r, sigma=sigma, spectrum=spec).risk
    ridge = riskcalc.optimal_limit("local_ridge", gamma=gamma, rho=rho, sigma=sigma,
                                   spectrum=spec).risk
    assert rtfa <= ridge * (1 + SLACK)


@settings(max_examples=100, deadline=None)
@given(gamma=st.floats(1.001, 50.0), r=pos, sigma=pos)
def test_ftfa_beats_fedavg_iff_noise_is_small(gamma, r, sigma):
    # Paper 003, Sec. 3.3 (gamma > 1, Assumption A1): FTFA outperforms FedAvg iff
    # sigma^2 < r^2 (gamma - 1) / gamma.
    ftfa = riskcalc.limit("ftfa", gamma=gamma, r=r, sigma=sigma).risk
    fedavg = riskcalc.limit("fedavg", gamma=gamma, r=r, sigma=sigma).risk
    margin = r**2 * (gamma - 1) / gamma - sigma**2
    if abs(margin) > 1e-9:
        assert (ftfa < fedavg) == (margin > 0)


def test_isotropic_optimal_risk_is_sigma2_gamma_m():
    # Paper 003, Thm 2: L(lam*) = sigma^2 gamma m(-lam*), through the closed-form m.
    from riskcalc.linear.engine.marchenko_pastur import mp_stieltjes
    g = np.array([0.3, 0.9, 1.2, 2.0, 7.0])
    for r, sigma in [(1.0, 0.5), (2.0, 1.5), (0.3, 2.0)]:
        lam = riskcalc.optimal_lambda("rtfa", gamma=g, r=r, sigma=sigma)
        m, _ = mp_stieltjes(g, lam)
        np.testing.assert_allclose(riskcalc.limit("rtfa", gamma=g, r=r, sigma=sigma, lam=lam).risk,
                                   sigma**2 * g * m, rtol=1e-12)
