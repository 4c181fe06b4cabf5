"""Issue 32, fuzz40 (logi): what this fuzz found, each test failing before."""
import numpy as np
import pytest

import riskcalc


def test_group_inverse_is_the_dense_coupling_inverse():
    # F1's design: (K + diag(d))^-1 per group by Sherman-Morrison, against a dense inverse of
    # K = lam diag(pi) - lam^2/(lam + lam_g) pi pi^T over the M clients.
    from riskcalc.logistic.blocks.fedprox import GroupInverse

    rng = np.random.default_rng(4)
    count = np.array([3, 1, 5])
    pi = rng.random(3)
    pi /= count @ pi
    d = pi * rng.uniform(0.1, 3.0, 3)
    lam, lam_g = 7.0, 0.3
    P, dd = np.repeat(pi, count), np.repeat(d, count)
    R = np.linalg.inv(lam * np.diag(P) - lam ** 2 / (lam + lam_g) * np.outer(P, P)
                      + np.diag(dd))
    G = GroupInverse(pi, count, lam, lam_g, d)
    first = np.searchsorted(np.repeat(np.arange(3), count), np.arange(3))
    v = rng.normal(size=3)
    assert G.apply(v) == pytest.approx((R @ np.repeat(v, count))[first], rel=1e-12)
    assert G.squares(v * v) == pytest.approx(((R * R) @ np.repeat(v * v, count))[first],
                                             rel=1e-12)
    assert G.diagonal() == pytest.approx(np.diag(R)[first], rel=1e-12)


@pytest.mark.parametrize("clients, spectrum, risk", [
    (100000, None, 0.58118615),
    (1000, "powerlaw:0.5,1000", 0.60871102),
])
def test_pfedme_over_many_identical_clients_answers(clients, spectrum, risk):
    # F1: pFedMe's joint fixed point inverted an M x M coupling per eigenvalue atom and
    # evaluation: 1000 identical clients ran 54 s (1e5 allocated 74.5 GiB), so from session
    # 39 these were refused up front ("estimated at 1.3e+03 s and 0.0298 GiB", "29.8 GiB",
    # "298 GiB"). Per group by Sherman-Morrison they take well under a second; at 100 and 300
    # clients both routes give the same risk (within 2e-15), and the risk falls toward its
    # M -> inf value like 1/M (1.2378 at 3 clients, 0.5983 at 100, 0.5869 at 300).
    res = riskcalc.logistic_limit(gamma=1, r=0.5, signal=1, lam=0.5, global_lam=0.1,
                                  clients=clients, method="pfedme", spectrum=spectrum)
    assert res.risk == pytest.approx(risk, rel=1e-6)


def test_pfedme_with_far_apart_sample_weights_answers_continuously():
    # F1: with sample weights, clients at gamma [1e-8, 1] or [1, 1e10] failed pFedMe's root
    # ("no convergence ... residual 1.29e-09", 2.35e-09): rho_j^2 was ||w_j||^2 - alpha_j^2,
    # which loses the digits of a client with nearly infinite data (rho ~ sqrt(gamma)). Now a
    # sum of squares; client 1 is the same beside gamma 1e-16 or 1e-8 (its weight dominates).
    kw = dict(r=[1.0, 1.0], signal=1.0, lam=0.5, global_lam=0.01, method="pfedme")
    near = riskcalc.logistic_clients_limit(gamma=[1e-8, 1.0], **kw).risk
    far = riskcalc.logistic_clients_limit(gamma=[1e-16, 1.0], **kw).risk
    assert near == pytest.approx([0.01435386, 1.43878312], rel=1e-6)
    assert far == pytest.approx(near, rel=1e-5)


def test_pfedme_at_huge_lam_is_fedavg():
    # F2: F1's Sherman-Morrison coefficient t = s / den overflowed at lam = 1e300 (den ~
    # 1/lam), and pFedMe was refused as "singular in floating point (client weights pi_j from
    # 0.333 to 0.333); uniform weights, ..." (the dense route answered). Held as diag(1/e) +
    # k z z^T with k and z of order one, it is FedAvg's model again (lam -> inf).
    kw = dict(gamma=1.0, signal=1.0, r=0.5, global_lam=0.1, clients=3)
    fedavg = riskcalc.logistic_limit(method="fedavg", **kw).risk
    assert riskcalc.logistic_limit(method="pfedme", lam=1e300, **kw).risk == pytest.approx(
        fedavg, rel=1e-12)


def test_spectral_overtime_names_the_eigenvalues_when_they_are_the_cost(monkeypatch):
    # F4: fedavg or pfedme at finite M under powerlaw:0.5 with d = 5e6 ran to the 60 s
    # deadline, then said "the solutions' norms grow as the penalties fall on nearly separable
    # data; give larger penalties" at global_lam 0.1 (a milliseconds solve with 1000
    # eigenvalues): the 5e6 eigenvalues were the cost. (MANY_ATOMS lowered here to keep it
    # cheap.)
    from riskcalc.logistic.finite_clients import spectral

    monkeypatch.setattr(spectral, "MANY_ATOMS", 100, raising=False)
    with pytest.raises(ValueError, match=r"sums over the spectrum's 300000 distinct eigenvalues "
                       r"for each of 1 distinct client; give a spectrum of fewer distinct "
                       r"eigenvalues \(powerlaw:P,D with a smaller D\), or raise max_seconds"):
        riskcalc.logistic_limit(gamma=1, r=0.5, signal=1, global_lam=0.1, clients=3,
                                method="fedavg", spectrum="powerlaw:0.5,300000", max_seconds=0.06)


def test_simulated_fine_tuning_at_a_large_penalty_converges():
    # F5: the simulated RTFA (and pFedMe's proximal points) at lam = 1e8, inside the limits'
    # LAM_MAX, failed "Newton did not reach gradient norm 1e-10 in 100 iterations (with l2 = 0
    # separable data have no finite minimizer; set l2 > 0)": the penalty's gradient carries
    # lam times w's rounding. RTFA at lam = 1e8 is FedAvg's model (lam -> inf).
    from montecarlo.logistic.pipeline import simulate_replicate

    out = simulate_replicate(gammas=[2.0, 2.0], rs=[0.5, 0.5], signal=1.0, lams=[1e8],
                             global_lam=0.1, d=8, seed=1, rep=0)
    assert out["rtfa"]["risk"][0] == pytest.approx(out["fedavg"]["risk"], rel=1e-6)


@pytest.mark.parametrize("call", ["replicate", "sweep"])
def test_simulated_pfedme_beyond_its_penalty_range_is_refused(call, tmp_path):
    # F5: with the inner solves converging, the simulated pFedMe minimizer answered at lam =
    # 1e12 and 1e300 with risks 1.0858 and 1.1500 for FedAvg's 1.1259 (its outer gradient
    # lam (w - sum p_j w_j) rounds at ~1e-14 lam): refused beyond 1e8, saying why.
    from montecarlo.logistic.pipeline import simulate_replicate
    from montecarlo.logistic.sweep import sweep_logistic

    why = r"lam = 1e\+12: the simulated pFedMe / FedProx minimizer holds lam <= 1e\+08"
    with pytest.raises(ValueError, match=why):
        if call == "replicate":
            simulate_replicate(gammas=[2.0, 2.0], rs=[0.5, 0.5], signal=1.0, lams=[1e12],
                               global_lam=0.1, d=8, seed=1, rep=0, pfedme=True)
        else:
            sweep_logistic("pfedme", gamma=2.0, r=0.5, signal=1.0, lam=[0.1, 1e12], d=8,
                           reps=2, clients=2, global_lam=0.1)
