"""Issue 32, fuzz42 (steps3): what this fuzz found, each test failing before.

The finite-M steps limits under Sigma = I (``riskcalc.linear.steps.identity``) are checked at
their two ends against the finite-M limits of ``riskcalc.clients_limit`` (another route: closed
forms and the target traces of ``finite_clients``): k = 0 steps is FedAvg's global model,
k -> infinity RTFA's own limit.
"""

import pytest

from riskcalc import clients_limit, steps_limit
from riskcalc.linear.steps.finite_clients import clients_steps_limit


@pytest.mark.parametrize("g0", [1e-10, 1e-8])
@pytest.mark.parametrize("r", [[1, 0], [1, 1]])
def test_f1_data_rich_client_steps_keep_every_share(g0, r):
    # gamma [g0, 1]: the own bias J0 - 2 p J3 + p^2 Jfb cancelled O(1) terms and the others'
    # sums were the totals minus the own term: k = 0 printed 0 for 4e-20 (RTFA after 1e5
    # steps 1.1e-17 for 4.4e-17 at 1e-8).
    kw = {"gamma": [g0, 1], "r": r, "sigma": [1e-12, 1], "step_size": 0.1}
    b0 = clients_steps_limit("ftfa", steps=[0], **kw)[0][0]
    want0 = clients_limit("fedavg", gamma=kw["gamma"], r=r, sigma=kw["sigma"]).bias[0]
    assert b0 == pytest.approx(want0, rel=1e-7, abs=0)
    b = clients_steps_limit("rtfa", steps=[100000], lam=0.5, **kw)[0][0]
    want = clients_limit("rtfa", gamma=kw["gamma"], r=r, sigma=kw["sigma"], lam=0.5).bias[0]
    assert b == pytest.approx(want, rel=1e-7, abs=0)


@pytest.mark.parametrize("gamma, steps, eta, want", [
    (0.99, 10**7, 0.1, 1.1610322059452778e-27),
    (0.995, 10**7, 0.1, 1.0358265970578033e-10),
    (0.99, 10**6, 0.5, 2.6094473022715906e-16)])
def test_f2_three_clients_near_gamma_one_bias_not_a_rounding_floor(gamma, steps, eta, want):
    # The bias is J1 = tau((R / D)^2) times a factor free of k; J1 came as F(0) + (a sum near
    # -F(0)), rounded to ~1e-16 of F(0): 0 printed (1.0357e-10 at 0.995, 1.1e-4 off). The
    # references: that factor (at 10 steps) times a 50-digit mpmath J1 (mpmath.quad in t,
    # s = 1 + gamma - 2 sqrt(gamma) cos t).
    got = steps_limit("ftfa", gamma=gamma, r=1, sigma=1, steps=steps, step_size=eta,
                      clients=3).bias
    assert got == pytest.approx(want, rel=1e-12, abs=0)
