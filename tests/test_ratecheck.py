"""Rate fitting on synthetic data with known exponents and constants, and regime maps."""

import math

import numpy as np
import pytest

from riskcalc.minimax.ratecheck import fit_constants, fit_power_law, rate_check, regime_map

N = np.array([100.0, 200.0, 400.0, 800.0, 1600.0])[:, None]
R = np.array([0.01, 0.02, 0.04, 0.08])[None, :]


def test_power_law_exact_data():
    y = 2.0 * N ** -0.5 * np.ones_like(R)
    fit = fit_power_law({"N": N}, y)
    assert fit.exponents["N"] == pytest.approx(-0.5, abs=1e-12)
    assert fit.constant == pytest.approx(2.0)
    assert fit.residual_sd == pytest.approx(0.0, abs=1e-12)


def test_power_law_noisy_exponents_inside_ci():
    # one draw (a 95% interval misses 1 time in 20; the coverage test below checks the rate)
    rng = np.random.default_rng(1)
    y = 3.0 * N ** -1.0 * R ** 2 * np.exp(0.1 * rng.standard_normal((5, 4)))
    fit = fit_power_law({"N": N, "R": R}, y)
    lo, hi = fit.ci["N"]
    assert lo <= -1.0 <= hi
    lo, hi = fit.ci["R"]
    assert lo <= 2.0 <= hi
    assert fit.dof == 20 - 3


def test_power_law_interval_coverage():
    # 95% intervals from log-normal multiplicative noise cover the truth ~95% of the time
    rng = np.random.default_rng(1)
    hits, reps = np.zeros(2), 400
    clean = 0.7 * N ** -1.0 * R ** 2.0
    for _ in range(reps):
        fit = fit_power_law({"N": N, "R": R}, clean * np.exp(0.3 * rng.standard_normal((5, 4))))
        hits += [fit.ci["N"][0] <= -1.0 <= fit.ci["N"][1], fit.ci["R"][0] <= 2.0 <= fit.ci["R"][1]]
    assert np.all((0.92 <= hits / reps) & (hits / reps <= 0.98))


def test_power_law_rejects():
    with pytest.raises(ValueError, match="errors"):
        fit_power_law({"N": N}, -np.ones((5, 1)))
    with pytest.raises(ValueError, match="does not vary"):
        fit_power_law({"N": N, "m": 4.0}, N ** -1.0)
    with pytest.raises(ValueError, match="R"):
        fit_power_law({"R": np.array([0.0, 0.1, 0.2, 0.3])}, np.ones(4))
    with pytest.raises(ValueError, match="more than"):
        fit_power_law({"N": N[:2]}, np.ones((2, 1)))


def test_fit_constants_single_and_two_terms():
    bound = 1 / N + 0 * R
    one = fit_constants({"C": bound}, 4.0 * bound)
    assert one.constants["C"] == pytest.approx(4.0)
    # y = 2/N + 5 R^2, exact
    y = 2 / N + 5 * R ** 2
    two = fit_constants({"C1": 1 / N + 0 * R, "C2": R ** 2 + 0 * N}, y)
    assert two.constants["C1"] == pytest.approx(2.0, rel=1e-8)
    assert two.constants["C2"] == pytest.approx(5.0, rel=1e-8)
    rng = np.random.default_rng(2)
    noisy = fit_constants({"C1": 1 / N + 0 * R, "C2": R ** 2 + 0 * N},
                          y * np.exp(0.05 * rng.standard_normal(y.shape)))
    for k, true in [("C1", 2.0), ("C2", 5.0)]:
        assert noisy.ci[k][0] <= true <= noisy.ci[k][1]


def test_rate_check_band_and_exponents():
    rng = np.random.default_rng(3)
    bound = 1 / N + 0 * R
    errors = 1.5 * bound * np.exp(0.05 * rng.standard_normal((5, 4)))
    res = rate_check({"N": N, "R": R}, errors, bound, c=1.0, C=2.0)
    # R does not change the bound: a zero exponent inside the error interval
    assert res.consistent == {"N": True, "R": True}
    assert res.bound_exponents["N"] == pytest.approx(-1.0)
    assert res.within and 1.0 <= res.ratio_min <= res.ratio_max <= 2.0
    assert res.constants.constants["C"] == pytest.approx(1.5, rel=0.05)
    # errors decaying like N^-1/2 are inconsistent with a 1/N bound and leave the band
    slow = 1.5 * N ** -0.5 * np.ones_like(R) * np.exp(0.01 * rng.standard_normal((5, 4)))
    bad = rate_check({"N": N}, slow, bound, c=1.0, C=2.0)
    assert bad.consistent["N"] is False and not bad.within


def test_rate_check_ratio_hand_values():
    grid = {"N": np.array([1.0, 2.0, 4.0])}
    res = rate_check(grid, np.array([2.0, 3.0, 4.0]), np.array([1.0, 2.0, 4.0]), c=1.0, C=2.0)
    assert (res.ratio_min, res.ratio_max) == (1.0, 2.0) and res.within
    assert not rate_check(grid, np.array([2.0, 3.0, 4.0]), np.array([1.0, 2.0, 4.0]),
                          c=1.5, C=2.0).within
    with pytest.raises(ValueError, match="c must be <= C"):
        rate_check(grid, np.ones(3), np.ones(3), c=2.0, C=1.0)


def test_regime_map_boundaries():
    # N = 1e4, m = 100: m/N = 1e-2, 1/(mN) = 1e-6
    r = np.sqrt([1e-8, 1e-4, 1.0])
    rm = regime_map(1e4, 100, r)
    np.testing.assert_allclose(rm.lower, [1e-8 + 1e-4, 2e-4, 1e-2 + 1e-4])
    np.testing.assert_array_equal(rm.optimal["fedavg"], [True, True, False])
    np.testing.assert_array_equal(rm.optimal["local"], [False, False, True])
    # FedProx of paper 000: optimal at both ends, R sqrt(m/N) + 1/N = 1.1e-3 (5.5x) in between
    np.testing.assert_array_equal(rm.optimal["fedprox_000"], [True, False, True])
    assert rm.ratio["fedprox_000"][1] == pytest.approx(1.1e-3 / 2e-4)
    assert rm.optimal["fedprox_004"].all()
    np.testing.assert_array_equal(rm.best, ["fedavg", "fedavg", "local"])
    # IER: the homogeneous end is off by sqrt(m) = 10
    ier = regime_map(1e4, 100, 0.0, kind="ier")
    assert ier.ratio["fedprox_000"] == pytest.approx(10.0)
    assert math.isclose(float(ier.ratio["fedavg"]), 1.0)


def test_regime_map_rejects():
    with pytest.raises(ValueError, match="kind"):
        regime_map(100, 4, 0.1, kind="x")
    with pytest.raises(ValueError, match="slack"):
        regime_map(100, 4, 0.1, slack=0.5)
    with pytest.raises(ValueError, match="m must be <= N"):
        regime_map(10, 40, 0.1)
