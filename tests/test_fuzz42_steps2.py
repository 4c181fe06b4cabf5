"""Issue 32, fuzz42 (steps2): what this fuzz found, each test failing before."""

import pytest

from riskcalc import steps_limit


@pytest.mark.parametrize("gamma, steps, step_size, bias", [
    (0.99, 1e7, 0.1, 5.827128124831474e-28),
    (0.993, 3e6, 0.3, 2.202095973353e-15),
    (0.995, 1e7, 0.1, 5.188891893069e-11),
])
def test_a_tiny_bias_near_gamma_one_is_resolved_not_rounding(gamma, steps, step_size, bias):
    """F1: near gamma = 1 Sigma = I's quadrature took the bias as 1 + (a sum near -1), rounded
    to ~1e-16 absolute: 1.1e-16 or 0 printed for mpmath's 5.8e-28 (the Marchenko-Pastur
    integral of q^(2k) at 50 digits), 2.1e-15 for 2.2e-15, 5.18889376e-11 for 5.18889189e-11.
    Below 1e-6 the plain sum of (1 - f)^2 is now taken once it settles."""
    res = steps_limit("ftfa", gamma=gamma, r=1, sigma=0, steps=steps, step_size=step_size)
    assert res.bias == pytest.approx(bias, rel=1e-11, abs=0)
