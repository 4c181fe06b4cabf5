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


def test_own_model_of_a_client_of_tiny_weight():
    # F2: FedAvg K = 1, gamma [2, 1e-11], weights by samples (p_0 = 5e-12): raise_powers'
    # P_n = (omega P_(n-1) - E[q^(n-1)]) / p lost 1 / p per step; client 0's own risk at T = 2
    # was 1.11 for 0.83 (also 1e12 and "negative quadratic form" elsewhere). Exact: only
    # u_0 moves, E[(1 - q)^2 (1 - g p_0 q)^2] r_0^2 with q = eta s, MP(2) moments.
    res = rounds_limit("fedavg", gamma=[2.0, 1e-11], r=[1.0, 0.0], sigma=0.0, signal=0.0,
                       rounds=[2], local_steps=1, step_size=0.1)
    mpmath.mp.dps = 40
    g, e = mpmath.mpf(2), mpmath.mpf("0.1")
    m = [1, 1, 1 + g, 1 + 3 * g + g ** 2, 1 + 6 * g + 6 * g ** 2 + g ** 3]
    p0 = (1 / g) / (1 / g + 1 / mpmath.mpf(1e-11))

    def E(c):
        return sum(ci * mi for ci, mi in zip(c, m))

    exact = (p0 ** 2 * E([0, 0, e ** 2, -2 * e ** 3, e ** 4])
             - 2 * p0 * E([0, e, -2 * e ** 2, e ** 3]) + E([1, -2 * e, e ** 2]))
    assert abs(res.local_risk[0, 0] / float(exact) - 1) < 1e-9


def test_round_map_of_point_masses_is_their_sum():
    # F3: FedAvg K = inf, gamma [1e-20, 0.5] by samples: every a_j = p_j I, D = I; the edge
    # scan lost p_1 = 2e-20 beside 1 (bottom edge -2.7e-11) and refused "pooled N = d:
    # sum_j 1/gamma_j = 1e+20, near 1". Now D = I: w_1 = sum_j p_j (theta_j + xi_j), the fixed
    # point; client 0's risk sum_j p_j^2 sigma^2 gamma_j / (1 - gamma_j) + 2 p_1^2 r^2.
    res = rounds_limit("fedavg", gamma=[1e-20, 0.5], r=1.0, sigma=0.5, signal=1.0,
                       rounds=[1, 3, np.inf], local_steps=np.inf)
    mpmath.mp.dps = 60
    g = [mpmath.mpf(1e-20), mpmath.mpf("0.5")]
    p = [(1 / x) / (1 / g[0] + 1 / g[1]) for x in g]
    exact = sum(pj ** 2 * x / (1 - x) for pj, x in zip(p, g)) / 4 + 2 * p[1] ** 2
    assert res.diagnostics["edges"] == (1.0, 1.0)
    assert np.allclose(res.risk[0], float(exact), rtol=1e-9, atol=0.0)


def test_round_map_edges_within_the_clients_sums():
    # F4: gamma [1.6e-12, 977] by samples (p_1 = 1.6e-15): the edge scan put D's top at
    # 0.0206 for 2.684e-4 (K = 5, global_step 100: contraction 1.056, "diverges", for 0.973)
    # and its bottom near 0 with K = 1 ("pooled N = d ... near 1"). D lies between the sums
    # of the clients' bottoms and tops (Weyl), here within 5e-16 of client 0's own range.
    gam = [1.59345487e-12, 977.396589]
    p0 = (1 / gam[0]) / (1 / gam[0] + 1 / gam[1])
    a0 = (1 - np.sqrt(gam[0])) ** 2
    eta = 5.368532734294096e-05
    res = rounds_limit("fedavg", gamma=gam, r=1.0, sigma=0.5, signal=1.0, rounds=[1],
                       local_steps=5, step_size=eta, global_step=100.0)
    assert res.converges
    assert abs(res.contraction - (1 - 100 * p0 * (1 - (1 - eta * a0) ** 5))) < 1e-9
    res = rounds_limit("fedavg", gamma=gam, r=1.0, sigma=0.5, signal=1.0, rounds=[1],
                       local_steps=1, step_size=1e-3)
    assert abs(res.contraction - (1 - 1e-3 * p0 * a0)) < 1e-9
