"""Bounds of riskcalc.minimax from paper 004 (``004_98172ed3646eef14.txt``, FedProx: constants,
the adaptive lambda, Table 1's regimes, the bilevel algorithm's rates) against values worked out
by hand, and its errata."""

import math

import numpy as np
import pytest
from scipy import optimize

import riskcalc.minimax as mm


# ---------------------------------------------------------------- paper 004


def test_fedprox_constants_hand_values():
    c = mm.fedprox_constants(2, 1, 1)
    assert c == pytest.approx((32, 128, 192, 792))
    c = mm.fedprox_constants(1, 1, 10)
    c2 = 100 * (1 + math.sqrt(3)) ** 2                     # 746.41 > 32
    assert c.C1 == pytest.approx(3200) and c.C3 == pytest.approx(19200)
    assert c.C2 == pytest.approx(c2)
    assert c.C4 == pytest.approx(100 * (1 + math.sqrt(4 * c2 + 5)) ** 2)
    r = mm.fedprox_constants(2, 1, 1, rederived=True)
    assert r == pytest.approx((64, 256, 384, 1560))


def test_fedprox_lambda_both_branches():
    # R <= 1/sqrt(n): max(64 kappa^2 L, 5 mu (rho^2/n)/(rho^2/N)) - mu
    lam, low = mm.fedprox_lambda(1, 1, 1, 0.0, 100, 10)
    assert lam == pytest.approx(63) and bool(low)
    assert mm.fedprox_lambda(2, 1, 1, 0.0, 100, 10).lam == pytest.approx(511)
    assert mm.fedprox_lambda(1, 1, 1, 0.0, 100, 100).lam == pytest.approx(499)
    # R = 0.05: ratio (2*0.0025 + 0.01)/(0.0025 + 0.001) = 4.2857, 5*4.29 < 64
    assert mm.fedprox_lambda(1, 1, 1, 0.05, 100, 10).lam == pytest.approx(63)
    # R > 1/sqrt(n): rho^2 / (n mu R^2)
    lam, low = mm.fedprox_lambda(1, 1, 1, [0.5, 1.0], 100, 10)
    np.testing.assert_allclose(lam, [0.04, 0.01])
    assert not low.any()
    # the branch boundary R = 1/sqrt(n) belongs to the first branch
    assert bool(mm.fedprox_lambda(1, 1, 1, 0.1, 100, 10).is_lower)
    lo, hi = mm.fedprox_lambda_interval(1, 1, 1, [0.0, 1.0], 100, 10)
    np.testing.assert_allclose(lo, [63, 0]) and np.testing.assert_allclose(hi, [np.inf, 0.01])
    assert mm.fedprox_lambda(1, 1, 1, 0.0, 100, 10, rederived=True).lam == pytest.approx(127)


def test_fedprox_error_bounds_hand_values():
    # C1/N + C2 min(1/n, R^2) = 32/1000 + 128 * 0.0025
    assert mm.fedprox_global_error_bound(2, 1, 1, 0.05, 100, 10) == pytest.approx(0.352)
    assert mm.fedprox_local_error_bound(2, 1, 1, 0.05, 100, 10) == pytest.approx(0.192 + 1.98)
    assert mm.fedprox_local_error_bound(2, 1, 1, 1.0, 100, 10) == pytest.approx(0.192 + 7.92)


def test_fedprox_global_constant_erratum():
    # ERRATA (eq. 50): with ||a+b||^2 <= 2||a||^2 + 2||b||^2 the recursion at the printed
    # minimal lambda (63 for L = mu = 1) gives (8 + 16)/(1 - 8 g) > 32.
    a = b = np.array([1.0])
    assert float((a + b) @ (a + b)) > float(a @ a + b @ b)
    lam = mm.fedprox_lambda(1, 1, 0.0, 0.0, 100, 10).lam
    g = 4 * (1 / (1 + lam) + 1 / (1 + lam) ** 2)
    assert g == pytest.approx(4 * (1 / 64 + 1 / 64 ** 2))
    assert 24 / (1 - 8 * g) == pytest.approx(48.76, abs=0.01)
    assert 24 / (1 - 8 * g) > mm.fedprox_constants(1, 1, 1).C1 / 1.0
    # the re-derived lambda (127) makes 1 - 8 g >= 1/2, so the factor is <= 64
    lam_r = mm.fedprox_lambda(1, 1, 0.0, 0.0, 100, 10, rederived=True).lam
    g_r = 4 * (1 / (1 + lam_r) + 1 / (1 + lam_r) ** 2)
    assert 1 - 8 * g_r >= 0.5 and 32 / (1 - 8 * g_r) <= 64


def test_local_case2_lambda_erratum():
    # mu = rho = 1, L = 2, n = 100, m = 10 (N = 1000), R = 0
    printed = mm.local_case2_lambda(2, 1, 1, 0.0, 100, 10, printed=True)
    assert printed == pytest.approx(math.sqrt(8 * (0.064 + 0.01) / 0.032) - 1)   # 3.3012
    fixed = mm.local_case2_lambda(2, 1, 1, 0.0, 100, 10)
    assert fixed == pytest.approx(math.sqrt(12 * (128 * 4 / 1000 + 2 / 100) / 0.096) - 1)
    assert printed < 5 < fixed
    # eq. (72) at lambda = 5 exceeds the claimed (74) = 192/N
    rhs72 = 12 / 36 * (128 * 4 / 1000 + 2 / 100) + 96 / 1000
    assert rhs72 == pytest.approx(0.27333, abs=1e-5) and rhs72 > 0.192


@pytest.mark.parametrize("rederived", [False, True])
def test_theorem1_lambda_implies_both_case2_conditions(rederived):
    L, mu, rho, R = np.meshgrid([1.0, 2.0, 10.0], [1.0], [0.1, 1.0, 10.0], [0.0, 0.01, 0.05, 0.1],
                                indexing="ij")
    for n, m in [(100, 2), (100, 1000), (10000, 50)]:
        lam = mm.fedprox_lambda(L, mu, rho, R / math.sqrt(n / 100), n, m, rederived=rederived).lam
        r = R / math.sqrt(n / 100)
        local = mm.local_case2_lambda(L, mu, rho, r, n, m, rederived=rederived)
        assert np.all(lam >= local)
        # global condition (54) with the factor 8 L^2 (16 L^2 re-derived)
        kappa, N = L / mu, n * m
        ratio = (2 * L ** 2 * r ** 2 + rho ** 2 / n) / (4 * rho ** 2 / (mu ** 2 * N)
                                                          + 4 * L ** 2 * r ** 2 / mu ** 2)
        a1 = 8 * kappa / mu * np.maximum((16 if rederived else 8) * L ** 2, ratio) - mu
        assert np.all(lam >= a1 * (1 - 1e-12))


def test_table1_regimes_and_rates():
    R = np.array([0.2, 0.1, 0.05, 0.01, 0.005])      # 1/sqrt(n) = 0.1, 1/(m sqrt n) = 0.01
    np.testing.assert_array_equal(mm.table1_regime(R, 100, 10), [0, 1, 1, 2, 2])
    rates = mm.table1_rates(R, 100, 10)
    np.testing.assert_allclose(rates["ours"], [0.01, 0.01, 0.0025, 0.001, 0.001])
    np.testing.assert_allclose(rates["chen"][0], 2 / 100)


def test_table1_errata():
    # "R^2 ^ 1/(mn)" undercuts the minimax lower bound by the factor m + 1 at R = 1/sqrt(n)
    printed = mm.table1_rates(0.1, 100, 10, printed=True)["ours"]
    assert printed == pytest.approx(0.001)
    lower = mm.lower_bound_ier(1, 100, 1000, 0.1)
    assert lower == pytest.approx(0.011) and lower / printed == pytest.approx(11)
    # Chen et al.'s homogeneous entry: printed 1/sqrt(mn), their eq. (29) gives 1/(n sqrt m)
    assert mm.table1_rates(1e-4, 100, 100, printed=True)["chen"] == pytest.approx(0.01)
    assert mm.table1_rates(1e-4, 100, 100)["chen"] == pytest.approx(0.001)
    # eq. (29) at n_i = n = 100, m = 100 with its factor K = 5 (beta = mu = D = 1, sigma2 = 0)
    eq29 = mm.fedprox_ier_bound(1, 1, 1, 0, 1, 1e-4, 100, 1e4, 100) / 5
    assert eq29 == pytest.approx(1e-5 + 10 / 1e4)


def test_bilevel_constants_hand_and_moreau_envelope():
    c = mm.bilevel_constants(3, 1, 2)
    assert c["mu_g"] == pytest.approx(2 / 3) and c["L_g"] == pytest.approx(1.2)
    assert c["mu_l"] == pytest.approx(3) and c["L_l"] == pytest.approx(5)
    assert c["L_w"] == pytest.approx(2 / 3) and c["kappa_g"] == pytest.approx(1.8)
    # independent: the envelope min_u a/2 u^2 + lam/2 (w - u)^2 found numerically
    for a, expect in [(1.0, c["mu_g"]), (3.0, c["L_g"])]:
        def env(w):
            return optimize.minimize_scalar(lambda u: a / 2 * u ** 2 + (w - u) ** 2).fun
        h = 0.5
        second = (env(h) - 2 * env(0.0) + env(-h)) / h ** 2
        assert second == pytest.approx(expect, rel=1e-6)
        prox = optimize.minimize_scalar(lambda u: a / 2 * u ** 2 + (1.0 - u) ** 2).x
        assert prox == pytest.approx(2 / (a + 2), rel=1e-6)   # slope lam/(a+lam)


def test_outer_rate_and_inner_loop_hand_values():
    # gamma mu_g = 1/3: 1 - 1/6 - 1/18
    assert mm.outer_rate(3, 1, 2, 0.5) == pytest.approx(7 / 9)
    with pytest.raises(ValueError, match="gamma"):
        mm.outer_rate(3, 1, 2, 0.9)
    # coef 2 + 64 (lam/mu)^2 = 258, target (1 - 0.6)^4 = 0.0256, contraction 0.4
    assert 258 * 0.4 ** 10 > 0.0256 >= 258 * 0.4 ** 11
    assert mm.inner_loop_iterations(3, 1, 2, 0.5, 0.2) == 11
    assert mm.inner_loop_iterations(1, 1, 1, 0.5, 0.5) == 1     # L = mu: exact in one step
    with pytest.raises(ValueError, match="eta"):
        mm.inner_loop_iterations(3, 1, 2, 0.5, 0.3)


def test_fedprox_complexity_hand_values():
    out = mm.fedprox_complexity(3, 1, 2, 1e-6)
    r = 1 - 5 / 36 - 25 / 648
    assert out["rounds"] == math.ceil(math.log(1e6) / -math.log(r)) == 71
    assert 258 * 0.4 ** 9 > 0.0625 >= 258 * 0.4 ** 10
    assert out["K"] == 10
    assert out["K_118"] == math.ceil(2 + 5 / 3 * math.log(1056 * 9)) == 18
    assert out["K"] <= out["K_118"]
    assert out["gradient_evaluations"] == 710
    assert out["rounds_order"] == pytest.approx(1.8 * math.log(1e6))


def test_second_branch_restatement_erratum():
    # proof of the local bound restates eq. (34) as rho^2/(mu m R^2); (34) gives rho^2/(mu n R^2)
    m, n = 10, 100
    printed = 1 / (1 * m * 1)
    assert mm.fedprox_lambda(1, 1, 1, 1.0, n, m).lam == pytest.approx(1 / n) != printed
