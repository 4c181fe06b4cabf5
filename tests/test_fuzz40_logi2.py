"""Issue 32, fuzz40 (logi2): what this fuzz found, each test failing before."""

import pytest

import riskcalc
from riskcalc.errors import SolverError

#: Sample weights, one client of nearly infinite data beside one of gamma 1: rho of the
#: first client's view is of order sqrt(gamma) = 1e-4.
FAR = dict(gamma=[1e-8, 1.0], r=[1.0, 1.0], signal=1.0, global_lam=0.01)


@pytest.mark.parametrize("spectrum, risk", [("identity", [0.01485784, 1.84247569]),
                                            ("scaled:2", [0.0103935, 1.8662167])])
def test_spectral_fedavg_beside_a_near_infinite_data_client_is_sigma_identity(spectrum, risk):
    # F1: "no convergence at global_lam = 0.1 (residual 2.02e-08)" under identity, scaled:2
    # and two-point:1,1.0001,0.5 where Sigma = I answered: rho_l^2 was w_g' Sigma w_g -
    # alpha_l^2, which lost the digits of rho ~ 1e-4. Now a sum of squares; the risks are
    # Sigma = I's (scaled:2: whitened, signal and r times sqrt(2), global_lam halved, the risk
    # halved).
    res = riskcalc.logistic_clients_limit(method="fedavg", spectrum=spectrum, **FAR)
    assert res.risk == pytest.approx(risk, rel=1e-6)


def test_spectral_pfedme_under_a_scaled_identity_is_the_whitened_sigma_identity():
    # F1 (pFedMe's twin): under scaled:2 "FedProx fixed point with a spectrum: no convergence
    # at lam = 0.5 (residual 1.46e-09)". Sigma = 2 I is Sigma = I with signal, r times sqrt(2),
    # lam and global_lam halved, the risk halved: 0.01003824, 1.32265496 on that route.
    res = riskcalc.logistic_clients_limit(method="pfedme", lam=0.5, spectrum="scaled:2", **FAR)
    assert res.risk == pytest.approx([0.01003824, 1.32265496], rel=1e-6)


def test_spectral_rtfa_beside_a_near_infinite_data_client_is_sigma_identity():
    # F2 (the fine-tuning's twin of F1): "logistic fine-tuning with a spectrum: no convergence
    # at lam = 100 (residual 9.22e-08)" under identity where Sigma = I answered: nu_gh and
    # nu_h^2 were w_h' Sigma w_g - A_h A_g and w_h' Sigma w_h - A_h^2. Now sums of products.
    res = riskcalc.logistic_clients_limit(gamma=[5e-8, 0.5], r=[1.6, 0.3], signal=1.0,
                                          global_lam=0.06, lam=1.0, method="rtfa",
                                          spectrum="identity")
    assert res.risk == pytest.approx([0.45807742, 0.91991357], rel=1e-6)


def test_fine_tuning_rule_is_capped_beside_a_separable_client():
    # F3: RTFA at lam = 1e-8 under two-point:1,4,0.5 beside a separable client (gamma 0.5 above
    # its Candes-Sur threshold 0.33) built a 3-d rule of 752 x 528 x 800 nodes: a MemoryError
    # under a 3 GB limit (Sigma = I: 2.2 GB). Rule3 now stops at gaussian.MAX_RULE_NODES, as
    # the 2-d rule does, and says why (the solution's norm grows as lam falls).
    with pytest.raises(SolverError, match=r"beyond 5e\+07: .*give a larger lam"):
        riskcalc.logistic_clients_limit(gamma=[0.5, 1.0], r=[1.0, 0.5], signal=1.0, lam=1e-6,
                                        global_lam=0.1, method="rtfa",
                                        spectrum="two-point:1,4,0.5", max_seconds=5)


def test_spectral_pfedme_under_a_wide_spectrum_reaches_its_root():
    # F4: under powerlaw:3,30 (powerlaw:3,1000 likewise) pFedMe at lam 0.3 failed "FedProx
    # fixed point with a spectrum: no convergence at lam = 0.3 (residual 9.23e-01)" (lam 3
    # answered): from the global model's view the root was out of reach. The continuation in
    # lam from 100 reaches it (its neighbour lam 0.31: 1.8839, 1.3205, solved directly).
    res = riskcalc.logistic_clients_limit(gamma=[0.5, 1.0], r=[1.0, 0.5], signal=1.0, lam=0.3,
                                          global_lam=0.1, method="pfedme",
                                          spectrum="powerlaw:3,30")
    assert res.risk == pytest.approx([1.88572935, 1.32497661], rel=1e-6)


@pytest.mark.parametrize("simulate", ["ridge", "pipeline"])
def test_simulators_refuse_signal_weights_as_the_limits_do(simulate):
    # F5: the limits refuse a spectrum with signal_weights (w_0 and u are isotropic in this
    # model); montecarlo's logistic simulators drew them isotropic anyway and returned the
    # numbers of the spectrum without signal_weights, silently.
    from montecarlo.logistic.pipeline import simulate_pipeline
    from montecarlo.logistic.ridge import simulate as simulate_ridge

    spectrum = riskcalc.Spectrum([1.0, 4.0], signal_weights=[0.1, 0.9])
    kw = dict(signal=1.0, lams=[0.3], d=20, reps=2, spectrum=spectrum)
    with pytest.raises(ValueError, match="isotropic directions"):
        if simulate == "ridge":
            simulate_ridge(gamma=0.5, r=0.5, **kw)
        else:
            simulate_pipeline(gamma=[0.5, 1.0], r=[1.0, 0.5], global_lam=0.1, **kw)
