"""Issue 32, fuzz41 (path2): what this fuzz found, each test failing before."""

import functools

import numpy as np
import pytest

import riskcalc

from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics import ROUTES

BASE = dict(gamma=[0.5, 2.0], r=[0.5, 0.5], sigma=[0.5, 0.5], signal=1.0)
EXACT = dict(BASE, rounds=[1, 3, np.inf], local_steps=np.inf, d=12, reps=2)


@functools.cache
def unit_fit():
    """FedAvg's own-model risks with exact local solves at Sigma = I (F1's reference)."""
    return simulate_rounds("fedavg", **EXACT).local_risk


@pytest.mark.parametrize("method,extra", [("fedavg", {}), ("fedprox", {"lam": 1.0})])
@pytest.mark.parametrize("spectrum", ["scaled:1e50", "two-point:1e50,3e50,0.5"])
def test_exact_local_solve_at_a_huge_covariance_keeps_the_own_model_risk(method, extra,
                                                                         spectrum):
    """F1: ``simulate_rounds`` with exact local solves formed A_j = I - Q_j of a full-rank client
    as I - Y_j Y_j^T, rounding times signal^2 Sigma: its own-model risk at Sigma = 1e50 I was
    -4.5e32 (two-point 1e50: 3.5e20; scaled 1e20: -158) where it is the noise's alone, as at
    Sigma = I (the least-squares fit's noise risk does not scale with Sigma); Algorithm 1's exact
    prox at lam = 1 is that fit to rounding there (lam / mu <= 1e-50)."""
    big = simulate_rounds(method, spectrum=spectrum, **EXACT, **extra)
    assert np.all(np.isfinite(big.local_risk)) and np.all(big.local_risk >= 0)
    np.testing.assert_allclose(big.local_risk[0], unit_fit()[0], rtol=1e-9)


ONE = dict(gamma=[2.0], r=0.5, sigma=0.5, signal=1.0, local_steps=2, step_size=0.1,
           global_step=1.0)


def test_algorithm1_one_pooled_client_refused_up_front_naming_the_case():
    """F2: Algorithm 1 with one client at gamma 2, K = 2, lam <= 0.12 said 'no bracket for the top
    ... above 0.9801' (a SolverError): the pooled route finds the top above a0 = (1 - eta
    lam)^K, which one client's map (a 2 x 2 matrix at each eigenvalue s: top 0.972789 at the
    bulk's edge) does not reach. Refused naming the case; lam = 0.2 still answers, its
    contraction the 2 x 2 map's top at s = (1 - sqrt 2)^2. (Since fuzz42 path F1
    ``rounds_limit`` serves one pooled client by the spectrum route at the identity, which
    answers lam = 0.1: the refusal is that of the Sigma = I route itself.)"""
    one = np.ones(1)
    with pytest.raises(ValueError, match=r"lam = 0.1: .*one client .* 0.972789, is not above "
                                         r"a0 = .* = 0.9801.* local_steps=inf"):
        ROUTES["pfedme_steps"](np.array([2.0]), 0.5 * one, 0.5 * one, one, 1.0, 0.1, 0.1, 2,
                               1.0, np.array([1.0]))
    lam, s = 0.2, (1 - np.sqrt(2.0)) ** 2
    a = (1 - 0.1 * (s + lam)) ** 2
    b = a + 1 - lam + lam * lam * (1 - a) / (s + lam)
    top = (b + np.sqrt(b * b - 4 * a * (1 - lam))) / 2
    got = riskcalc.rounds_limit("fedprox", **ONE, lam=lam, rounds=[1]).contraction
    assert got == pytest.approx(top, rel=1e-10)


def test_fedavg_own_models_estimated_before_the_double_contour():
    """F3: FedAvg's own models at Sigma = I with pooled N < d (gamma (2, 3, 4), K = 2, T = 2000)
    took 8.7 s CPU, max_seconds = 1 notwithstanding: their double contour (8e6 node pairs per
    client) had a cap on pairs but no time estimate. Now refused before the work, naming the
    estimate, what sets the nodes and what fits; the server curves still answer."""
    res = riskcalc.rounds_limit("fedavg", gamma=[2.0, 3.0], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[400], local_steps=2, step_size=0.1, max_seconds=0.1)
    assert np.isfinite(res.risk).all()
    with pytest.raises(ValueError, match=r"own models would take about .* s \(estimated: .* node "
                                         r"pairs .* 2 client\(s\): the rounds up to T = 400; "
                                         r"more than the 0.1 s allowed\); ask for fewer rounds"):
        res.local_risk


@pytest.mark.parametrize("gamma", [[3.0, 3.0], [2.0]])
def test_simulated_algorithm1_fixed_point_with_pooled_samples_short_of_d(gamma):
    """F5: ``simulate_rounds('fedprox', local_steps=2, rounds=[inf])`` with pooled N < d refused
    'does not converge (spectral radius of its round map 1 >= 1) ... lower the step sizes':
    the radius counted the common null space, which the rounds from 0 never enter. Now taken
    on the pooled range: the fixed point is the pooled min-norm interpolator, FedAvg's on the
    same designs (paper 004 eq. 10; ``algorithm1.pooled`` step 4), and the radius below 1."""
    kw = dict(gamma=gamma, r=0.5, sigma=0.5, signal=1.0, rounds=[np.inf], local_steps=2,
              step_size=0.1, d=12, reps=2)
    prox = simulate_rounds("fedprox", lam=0.1, **kw)
    np.testing.assert_allclose(prox.risk, simulate_rounds("fedavg", **kw).risk, rtol=1e-8)
    assert np.all(prox.contraction < 1.0)


def test_simulated_algorithm1_stops_iterating_at_its_fixed_point(monkeypatch):
    """F6: ``simulate_rounds('fedprox', local_steps=2, rounds=[10**7])`` iterated all 10^7
    rounds one by one (minutes, no estimate). The rounds now stop where the state is the fixed
    point to its accuracy: later rounds are its values (T = 10^7 equals T = inf), within a few
    thousand steps."""
    import montecarlo.linear.rounds_propagate as rp

    steps, step = [], rp.Propagation.step

    def counted(self):
        steps.append(1)
        assert len(steps) < 20000, "iterated past the fixed point"
        return step(self)

    monkeypatch.setattr(rp.Propagation, "step", counted)
    res = simulate_rounds("fedprox", **BASE, lam=0.5, rounds=[10 ** 7, np.inf], local_steps=2,
                          step_size=0.1, d=12, reps=2, measure="empirical")
    np.testing.assert_allclose(res.risk[:, 0], res.risk[:, 1], rtol=1e-9)
