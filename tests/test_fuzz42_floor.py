"""Issue 32, fuzz42 (floor): what this fuzz found, each test failing before."""

import mpmath
import numpy as np

from riskcalc.linear.dynamics.api import rounds_limit


def test_fedavg_own_model_of_a_data_rich_client_is_its_least_squares():
    # F1: FedAvg, K = inf, gamma [1e-100, 0.5]: client 0's own model is its local least
    # squares (full rank: nothing of w survives), risk sigma^2 gamma / (1 - gamma) at every
    # T >= 1; from T = 2 on 6.7e-17 was printed (the solve's G minus the closed form P_1).
    res = rounds_limit("fedavg", gamma=[1e-100, 0.5], r=1.0, sigma=0.5, signal=1.0,
                       rounds=[1, 2, 5, np.inf], local_steps=np.inf, weights="uniform")
    mpmath.mp.dps = 60
    g0 = mpmath.mpf(1e-100)
    exact = float(mpmath.mpf(0.25) * g0 / (1 - g0))
    local = res.local_risk
    assert np.allclose(local[0], exact, rtol=1e-9, atol=0.0)
