"""Personalization (FTFA / RTFA) from the server model of paper 004's Algorithm 1 with K
warm-started local steps, Sigma = I (``riskcalc.linear.dynamics.personalize.
algorithm1_personalized``), against the exact-prox route (``prox_laws``, an independent
derivation and code), the identities of the filter, and the simulated algorithm."""

import numpy as np
import pytest

import riskcalc

L2 = (1 + np.sqrt(2.0)) ** 2
L3 = (1 + np.sqrt(3.0)) ** 2
# (federation, K, eta): Thm 2's step; above it with an even K and a global step 3 / lam; K = 1
# with clients at gamma > 1 and one with no heterogeneity or noise.
CASES = [
    (dict(gamma=[0.5, 2.0, 1.5], r=[0.3, 0.8, 0.5], sigma=[0.4, 0.6, 1.0], signal=1.0,
          lam=1.0), 3, 0.1),
    (dict(gamma=[0.5, 2.0], r=[0.6, 0.2], sigma=[0.5, 0.3], signal=1.3, lam=0.5,
          global_step=3.0, weights="uniform"), 4, 1.6 / (L2 + 0.5)),
    (dict(gamma=[0.3, 3.0, 0.8], r=[0.6, 0.2, 0.0], sigma=[0.5, 0.3, 0.0], signal=0.7,
          lam=2.0, global_step=0.3, weights="uniform"), 1, 0.9 / (L3 + 2.0)),
]
FILTERS = [dict(steps=3, step_size=0.15), dict(lam=0.7), dict(steps=40, step_size=0.05)]


@pytest.mark.parametrize("fed, K, eta", CASES)
def test_the_fixed_point_is_personalized_as_the_exact_prox_route_says(fed, K, eta):
    """T = inf: the server model is the FedProx / pFedMe joint minimizer whatever K, so its
    personalization equals the exact-prox route's (``local_steps=inf``), whose contours and
    laws have nothing of K's (a(s) != 0 here). Measured: 1.7e-15 relative."""
    steps = riskcalc.rounds_limit("pfedme", local_steps=K, step_size=eta, rounds=[np.inf], **fed)
    prox = riskcalc.rounds_limit("pfedme", local_steps=np.inf, rounds=[np.inf], **fed)
    for kw in FILTERS:
        np.testing.assert_allclose(steps.personalized_risk(**kw), prox.personalized_risk(**kw),
                                   rtol=1e-10, atol=0)


def test_many_local_steps_are_the_exact_prox_along_the_rounds():
    """K = 400 steps of size 0.5 / (L + lam): a(s) <= (1 - eta lam)^400 < 1e-17, so every round
    is the exact prox: the whole personalized curves against the exact-prox route (measured
    6e-16)."""
    fed, _, _ = CASES[0]
    rounds = [0, 1, 3, 12]
    many = riskcalc.rounds_limit("pfedme", local_steps=400, step_size=0.5 / (L2 + 1.0),
                                 rounds=rounds, **fed)
    prox = riskcalc.rounds_limit("pfedme", local_steps=np.inf, rounds=rounds, **fed)
    for kw in FILTERS[:2]:
        np.testing.assert_allclose(many.personalized_risk(**kw), prox.personalized_risk(**kw),
                                   rtol=1e-10, atol=0)


@pytest.mark.parametrize("fed, K, eta", CASES[:2])
def test_the_filter_at_its_ends_is_the_server_model(fed, K, eta):
    """No step (pi = 0) is the server model exactly; a ridge lam' = 1e9 leaves it within
    pi <= top / lam' (measured 3.3e-9)."""
    res = riskcalc.rounds_limit("pfedme", local_steps=K, step_size=eta,
                                rounds=[0, 1, 4, 20, np.inf], **fed)
    np.testing.assert_allclose(res.personalized_risk(steps=0, step_size=0.1), res.global_risk,
                               rtol=1e-12, atol=0)
    gap = np.abs(res.personalized_risk(lam=1e9) - res.global_risk)
    assert np.all(gap <= 2 * L2 * 1e-9 * res.global_risk.max())
    assert np.any(res.personalized_risk(lam=0.7) != res.global_risk)



def test_against_the_simulated_algorithm_at_two_d():
    """The literal Algorithm 1 then FTFA / RTFA from its server model
    (``montecarlo.linear.rounds.simulate_rounds(personalize=...)``), within 4 s.e. plus the
    finite-d gap 1 / d at d = 100 and 200, and the 1/d extrapolation within 4 s.e. (measured: z
    up to 2.2; a control at d = 400 with 150 replicates: z up to 1.4, the server model's in
    the same run up to 2.9)."""
    from montecarlo.linear.rounds import simulate_rounds

    fed, K, eta = CASES[0]
    kw = dict(fed, rounds=[0, 1, 5], local_steps=K, step_size=eta)
    pers = FILTERS[:2]
    theory = riskcalc.rounds_limit("pfedme", **kw)
    sims = {d: simulate_rounds("pfedme", d=d, reps=16, seed=7, personalize=pers, **kw)
            for d in (100, 200)}
    for q in pers:
        want = theory.personalized_risk(**q)
        assert np.all(np.abs(want - theory.global_risk)[:, 1:] > 1e-2)   # not the server's
        for d, sim in sims.items():
            gap = np.abs(sim.personalized_risk(**q) - want)
            assert np.all(gap <= 4 * sim.personalized_risk_se(**q) + 1.0 / d), (q, d, gap)
        extrap = 2 * sims[200].personalized_risk(**q) - sims[100].personalized_risk(**q)
        se = np.hypot(2 * sims[200].personalized_risk_se(**q), sims[100].personalized_risk_se(**q))
        assert np.all(np.abs(extrap - want) <= 4 * se + 1e-12), q


def test_complex_spectrum_region_extrapolates_as_a_polynomial_in_the_global_step():
    """K = 1, eta at 0.9 of the edge, g lam = 2 (the round map's spectrum off the real axis:
    ``algorithm1.fold``'s circles): at fixed T the personalized risk is a polynomial of degree
    2 T in g, fitted at Chebyshev nodes of g lam in [0.1, 1] (real spectrum) and extrapolated,
    to the fit's amplification (1e3) times 1e-11 (measured 3.4e-12)."""
    fed = dict(CASES[0][0], lam=0.8)
    eta, T = 0.9 * 2 / (L2 + 0.8), [1, 2]

    def pers(gl):
        return riskcalc.rounds_limit("pfedme", local_steps=1, step_size=eta, rounds=T,
                                     **{**fed, "global_step": gl / 0.8}).personalized_risk(lam=0.7)

    nodes = 0.55 + 0.45 * np.cos(np.pi * (np.arange(5) + 0.5) / 5)
    lag = np.array([np.prod([(2.0 - nodes[m]) / (nodes[k] - nodes[m])
                             for m in range(5) if m != k]) for k in range(5)])
    amp = np.abs(lag).sum()
    assert amp < 2e3
    got = pers(2.0)
    fit = np.tensordot(lag, np.array([pers(x) for x in nodes]), axes=1)
    assert np.all(np.abs(fit - got) <= (1e-11 * amp + 1e-10) * got)
