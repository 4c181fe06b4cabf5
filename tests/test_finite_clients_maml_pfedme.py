"""pFedMe at a finite number of clients with a general covariance spectrum, through
operator-valued subordination (riskcalc.linear.finite_clients.pfedme_sigma), homogeneous and
heterogeneous federations (MAML-FL: tests/test_finite_clients_maml_sigma.py); both against
simulation."""

import numpy as np
import pytest

import riskcalc
from riskcalc import ClientSpec, Spectrum
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.finite_clients.pfedme_sigma import (pfedme_sigma_group_limits,
                                                         pfedme_sigma_limit)

TWO = Spectrum.two_point(1.0, 4.0, 0.5)
THREE = Spectrum([0.5, 1.0, 3.0], weights=[0.3, 0.4, 0.3])


@pytest.mark.parametrize("gamma", [0.5, 1.5])
@pytest.mark.parametrize("clients", [2, 5, 20])
def test_identity_matches_scalar_subordination(gamma, clients):
    """Sigma = I through the operator-valued route (one atom) against finite_clients.own's
    scalar subordination and Marchenko-Pastur quadrature: an independent solve of the same
    limit."""
    b, v = pfedme_sigma_limit(gamma, 1.0, 0.5, clients, 0.7, Spectrum.identity())
    bo, vo = own_group_limits("pfedme", [gamma], [1.0], [0.5], [clients], 0.7, "samples")
    assert b == pytest.approx(bo[0], rel=1e-10)
    assert v == pytest.approx(vo[0], rel=1e-10)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_heterogeneous_identity_matches_scalar_subordination(weights):
    """A federation of three client groups (gamma, r, sigma differ; one shift t_g per group):
    Sigma = I against finite_clients.own's heterogeneous scalar route."""
    gam, r, sig, cnt = [2.0, 0.5, 1.5], [1.0, 2.0, 0.5], [0.5, 0.2, 1.0], [2, 1, 2]
    b, v = pfedme_sigma_group_limits(gam, r, sig, cnt, 0.7, weights, Spectrum.identity())
    bo, vo = own_group_limits("pfedme", np.array(gam), np.array(r), np.array(sig),
                              np.array(cnt, float), 0.7, weights)
    np.testing.assert_allclose(b, bo, rtol=1e-10)
    np.testing.assert_allclose(v, vo, rtol=1e-10)


@pytest.mark.parametrize("lam", [0.05, 0.5, 5.0])
def test_client_below_gamma_one_caps_the_subordination(lam):
    """Regression: a client with gamma < 1 next to clients with gamma > 1 made the scalar
    route's doubling search for tau(A^-1) pass G_l(0), where t_l < 0 puts a pole on S_l's
    spectrum ("Marchenko-Pastur quadrature did not converge"). Against the chain route."""
    gam, r, sig, cnt = [0.5, 1.5, 2.0], [0.5, 1.0, 1.5], [1.0, 0.5, 0.5], [1, 1, 1]
    b, v = pfedme_sigma_group_limits(gam, r, sig, cnt, lam, "samples", Spectrum.identity())
    bo, vo = own_group_limits("pfedme", np.array(gam), np.array(r), np.array(sig),
                              np.array(cnt, float), lam, "samples")
    np.testing.assert_allclose(b, bo, rtol=1e-10)
    np.testing.assert_allclose(v, vo, rtol=1e-10)


def test_heterogeneous_groups_of_equal_clients_merge():
    """Two groups with the same parameters are one group of their total size (the group
    equations are consistent), with a spectrum."""
    b, v = pfedme_sigma_group_limits([2.0, 2.0, 0.5], [1.0, 1.0, 2.0], [0.5, 0.5, 0.2],
                                     [1, 2, 1], 0.5, "samples", TWO)
    bm, vm = pfedme_sigma_group_limits([2.0, 0.5], [1.0, 2.0], [0.5, 0.2], [3, 1], 0.5,
                                       "samples", TWO)
    np.testing.assert_allclose(b[[0, 2]], bm, rtol=1e-10)
    np.testing.assert_allclose(v[[0, 2]], vm, rtol=1e-10)


@pytest.mark.parametrize("spectrum", [TWO, THREE])
@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_many_clients_give_oracle_limit(spectrum, gamma):
    """M -> infinity: paper 003's pFedMe limit (Thm 4, kappa route), to the O(1/M) of the
    global model's error."""
    res = riskcalc.limit("pfedme", gamma=gamma, r=1.0, sigma=0.5, lam=0.5, spectrum=spectrum,
                         clients=10 ** 8)
    ref = riskcalc.limit("pfedme", gamma=gamma, r=1.0, sigma=0.5, lam=0.5, spectrum=spectrum)
    assert res.bias == pytest.approx(ref.bias, rel=1e-6)
    assert res.variance == pytest.approx(ref.variance, rel=1e-6)


@pytest.mark.parametrize("spectrum", [TWO, THREE])
def test_one_client_is_least_squares(spectrum):
    """M = 1, gamma < 1: the Moreau envelope is minimized at the client's least squares, and
    the ridge step toward it keeps it: bias 0, variance sigma^2 gamma / (1 - gamma)."""
    res = riskcalc.limit("pfedme", gamma=0.5, r=1.0, sigma=0.5, lam=0.5, spectrum=spectrum,
                         clients=1)
    assert res.bias == pytest.approx(0.0, abs=1e-12)
    assert res.variance == pytest.approx(0.25, rel=1e-10)


def test_bad_input():
    """pFedMe's federated global model needs lam > 0."""
    with pytest.raises(ValueError, match="lam > 0"):
        riskcalc.limit("pfedme", gamma=2.0, r=1.0, sigma=0.5, lam=0.0, clients=5,
                       spectrum=TWO)


@pytest.mark.parametrize("method,tuning,gamma,clients", [
    ("pfedme", {"lam": 0.5}, 2.0, 5), ("pfedme", {"lam": 0.5}, 0.5, 2),
    ("maml_fl", {"alpha": 0.05}, 2.0, 5), ("maml_fl", {"alpha": 0.05}, 1.5, 2)])
def test_simulation(method, tuning, gamma, clients):
    """The federated pFedMe and MAML-FL pipelines simulated at d = 200 (exact conditional
    measure) agree within 4 s.e. + 1% (the oracle limit is off by +79% / +78% at gamma = 2,
    M = 5; benchmarks/bench_finite_clients_own.py has the d = 400 / 800 grids)."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = ClientSpec(method, gamma=gamma, r=1.0, sigma=0.5, spectrum=TWO, **tuning)
    c = compare(spec, Setting(d=200, clients=clients, global_model="federated",
                              weights="samples"), reps=3)
    assert c.limit.route == "finite_clients"
    s = c.summary["risk"]
    assert abs(s["mean"] - c.limit.risk) <= 4 * s["se"] + 0.01 * c.limit.risk
