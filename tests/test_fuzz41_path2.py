"""Issue 32, fuzz41 (path2): what this fuzz found, each test failing before."""

import functools

import numpy as np
import pytest

from montecarlo.linear.rounds import simulate_rounds

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
