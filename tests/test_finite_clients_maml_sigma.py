"""MAML-FL at a finite number of clients with a general covariance spectrum
(riskcalc.linear.finite_clients.maml_sigma) against independent routes: the Marchenko-Pastur
route of finite_clients.own (Sigma = I), the FedAvg-then-FTFA chains of finite_clients.sigma
(alpha = 0), the oracle limit (M -> infinity) and least squares (M = 1) (simulation:
tests/test_finite_clients_maml_pfedme.py); and MAML-FL and pFedMe under covariate shift
(per-client covariances diagonal in one basis) against finite_clients.shift (alpha = 0,
lam -> infinity), the shared-spectrum routes (one type) and the oracle limit (simulation:
tests/test_finite_clients_shift.py)."""

import numpy as np
import pytest

import riskcalc
from riskcalc import Spectrum
from riskcalc.linear.finite_clients.maml_sigma import (maml_shift_group_limits,
                                                       maml_sigma_group_limits)
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.finite_clients.pfedme_sigma import (pfedme_shift_group_limits,
                                                         pfedme_sigma_group_limits)
from riskcalc.linear.finite_clients.shift.limits import shift_group_limits
from riskcalc.linear.finite_clients.sigma import sigma_group_limits
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

TWO = Spectrum.two_point(1.0, 4.0, 0.5)
THREE = Spectrum([0.5, 1.0, 3.0], weights=[0.3, 0.4, 0.3])
# A signal concentrated on the large eigenvalues (Phi = dG/dH not constant).
TILTED = Spectrum([0.5, 1.0, 3.0], weights=[0.3, 0.4, 0.3], signal_weights=[0.1, 0.3, 0.6])
HETERO = ([2.0, 0.5, 3.0], [1.0, 0.5, 1.2], [0.5, 0.3, 0.4], [2, 1, 3])


@pytest.mark.parametrize("gamma", [1.5, 1.9])
@pytest.mark.parametrize("clients", [2, 5, 20])
def test_identity_matches_marchenko_pastur_route(gamma, clients):
    b, v = maml_sigma_group_limits([gamma], [1.0], [0.5], [clients], 0.05, "samples",
                                   Spectrum.identity())
    bo, vo = own_group_limits("maml_fl", np.array([gamma]), np.array([1.0]), np.array([0.5]),
                              np.array([clients], float), 0.05, "samples")
    np.testing.assert_allclose([b[0], v[0]], [bo[0], vo[0]], rtol=1e-10)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_heterogeneous_identity_matches_marchenko_pastur_route(weights, alpha):
    b, v = maml_sigma_group_limits(*HETERO, alpha, weights, Spectrum.identity())
    bo, vo = own_group_limits("maml_fl", *(np.array(x, float) for x in HETERO), alpha,
                              weights)
    np.testing.assert_allclose(b, bo, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, vo, rtol=1e-10)


@pytest.mark.parametrize("spectrum", [TWO, TILTED])
@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_alpha_zero_is_fedavg_then_ftfa(spectrum, weights):
    """alpha = 0: MAML-FL's global objective is FedAvg's and its personalization FTFA's, whose
    finite-M limit with a spectrum is the resolvent chains of finite_clients.sigma."""
    b, v = maml_sigma_group_limits(*HETERO, 0.0, weights, spectrum)
    bf, vf = sigma_group_limits("ftfa", *(np.array(x, float) for x in HETERO), np.zeros(3),
                                weights, spectrum)
    np.testing.assert_allclose(b, bf, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(v, vf, rtol=1e-9)


@pytest.mark.parametrize("spectrum", [TWO, THREE, TILTED])
def test_many_clients_give_oracle_limit(spectrum):
    """M -> infinity: paper 003's MAML-FL limit (FTFA's, whatever alpha; Thm 3), to the
    O(1/M) of the global model's error (relative ~3 / M here)."""
    kw = dict(gamma=2.0, r=1.0, sigma=0.5, alpha=0.05, spectrum=spectrum)
    res = riskcalc.limit("maml_fl", clients=10 ** 6, **kw)
    ref = riskcalc.limit("maml_fl", **kw)
    assert res.risk == pytest.approx(ref.risk, rel=1e-4)
    assert res.risk > ref.risk


@pytest.mark.parametrize("spectrum", [TWO, THREE])
def test_one_client_is_least_squares(spectrum):
    """M = 1, gamma < 1: the client interpolates its own data, i.e. least squares: bias 0,
    variance sigma^2 gamma / (1 - gamma) whatever the spectrum."""
    res = riskcalc.limit("maml_fl", gamma=0.5, r=1.0, sigma=0.5, alpha=0.05, spectrum=spectrum,
                         clients=1)
    assert res.bias == 0.0
    assert res.variance == pytest.approx(0.25, rel=1e-10)


def test_risk_depends_on_alpha_at_finite_m():
    """Unlike the oracle limit, the finite-M limit moves with alpha (the global objective
    filters the clients' sample covariances), and a heterogeneous federation's clients with
    equal parameters get equal limits (groups)."""
    kw = dict(gamma=[2.0, 2.0, 0.5, 3.0], r=[1.0, 1.0, 0.5, 1.2], sigma=0.5, spectrum=TWO)
    a = riskcalc.clients_limit("maml_fl", alpha=0.02, **kw)
    b = riskcalc.clients_limit("maml_fl", alpha=0.1, **kw)
    assert a.risk[0] == a.risk[1]
    assert abs(a.risk[0] - b.risk[0]) > 1e-3 * a.risk[0]


def test_alpha_out_of_range():
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        maml_sigma_group_limits([2.0], [1.0], [0.5], [5], -0.1, "samples", TWO)


# --- covariate shift (commuting client covariances) -------------------------------------------

GAM, R, SIG, CNT = (np.array(x) for x in ([2.0, 0.5, 1.5], [1.0, 0.7, 1.3], [0.5, 0.3, 0.8],
                                          [1.0, 2.0, 3.0]))
JOINT = joint_spectrum(["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"], 100)
TYP = np.array([0, 1, 2])


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_shift_alpha_zero_is_fedavg_then_ftfa(weights):
    """alpha = 0 under covariate shift: the FTFA limit of finite_clients.shift (its own
    derivation, resolvent chains with diagonal shifts)."""
    b, v = maml_shift_group_limits(GAM, R, SIG, CNT, 0.0, weights, JOINT, TYP)
    bf, vf = shift_group_limits("ftfa", GAM, R, SIG, CNT, np.zeros(3), weights, JOINT, TYP)
    np.testing.assert_allclose(b, bf, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(v, vf, rtol=1e-9)


def test_shift_pfedme_large_lam_is_fedavg():
    """lam -> infinity: pFedMe's Moreau envelope is the loss itself and its ridge step
    vanishes, i.e. FedAvg (finite_clients.shift), with an error of first order in 1 / lam."""
    ref = np.array(shift_group_limits("fedavg", GAM, R, SIG, CNT, np.zeros(3), "samples", JOINT,
                                      TYP))
    err = [np.max(np.abs(np.array(pfedme_shift_group_limits(
        GAM, R, SIG, CNT, lam, "samples", JOINT, TYP)) - ref) / ref) for lam in (1e3, 1e4)]
    assert err[1] < 1e-3 and 8 < err[0] / err[1] < 12


@pytest.mark.parametrize("shift,shared", [(maml_shift_group_limits, maml_sigma_group_limits),
                                          (pfedme_shift_group_limits,
                                           pfedme_sigma_group_limits)])
def test_shift_with_one_type_is_the_shared_spectrum(shift, shared):
    one = joint_spectrum(["two-point:1,4,0.5"] * 3, 100)
    tuning = 0.05 if shift is maml_shift_group_limits else 0.5
    b, v = shift(GAM, R, SIG, CNT, tuning, "samples", one, np.zeros(3, dtype=int))
    bs, vs = shared(GAM, R, SIG, CNT, tuning, "samples", TWO)
    np.testing.assert_allclose(b, bs, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, vs, rtol=1e-10)


@pytest.mark.parametrize("method,tuning", [("maml_fl", 0.05), ("pfedme", 0.5)])
def test_shift_many_clients_give_oracle_limit_in_own_covariance(method, tuning):
    """One target among 10^5 clients of another covariance: the oracle limit of paper 003 in
    the target's covariance (the centre is exact whatever the others' covariances)."""
    kw = {"alpha" if method == "maml_fl" else "lam": tuning}
    fn = maml_shift_group_limits if method == "maml_fl" else pfedme_shift_group_limits
    b, v = fn([2.0, 2.0], [1.0, 1.0], [0.5, 0.5], [1, 10 ** 5], tuning, "samples", JOINT,
              np.array([0, 1]))
    ref = riskcalc.limit(method, gamma=2.0, r=1.0, sigma=0.5, spectrum=JOINT.marginal(0), **kw)
    assert b[0] + v[0] == pytest.approx(ref.risk, rel=1e-4)
