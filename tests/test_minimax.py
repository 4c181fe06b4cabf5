"""Bounds of riskcalc.minimax against values worked out by hand, regime boundaries and errata."""

import math

import numpy as np
import pytest
from scipy import optimize

import riskcalc.minimax as mm
from riskcalc.minimax import chen, chen_fedprox, chen_lower, fedprox, fedprox_bilevel, hanzely
from riskcalc.papers import cite

# ---------------------------------------------------------------- paper 000


def test_local_ier_bound_hand_value():
    # beta * loss_sup / (mu * n_i) = 2 * 3 / (1 * 10)
    assert mm.local_ier_bound(2, 1, 3, 10) == pytest.approx(0.6)
    np.testing.assert_allclose(mm.local_ier_bound(2, 1, 3, [10, 20]), [0.6, 0.3])


@pytest.mark.parametrize("args, word", [((2, 1, 3, 7), "n_i"), ((0.5, 1, 3, 10), "beta"),
                                        ((2, 1, 3, 0), "n_i"), ((2, -1, 3, 10), "mu")])
def test_local_ier_bound_rejects(args, word):
    with pytest.raises(ValueError, match=word):
        mm.local_ier_bound(*args)


def test_fedavg_bounds_hand_values():
    # eq. 11: 2*3/20 + 2*0.5^2 = 0.3 + 0.5 ; 2*5/20 + 2^3*0.25/1 = 0.5 + 2
    assert mm.fedavg_aer_bound(2, 1, 3, 0.5, 20) == pytest.approx(0.8)
    assert mm.fedavg_ier_bound(2, 1, 5, 0.5, 20) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="N must be >= 4"):
        mm.fedavg_aer_bound(2, 1, 3, 0.5, 7)
    with pytest.raises(ValueError, match="R"):
        mm.fedavg_ier_bound(2, 1, 5, -0.1, 20)


def test_fedavg_weighted_bounds_hand_and_optimal_weights():
    # p = (1/2, 1/2), n = (10, 30): sum p^2/n = 0.025 + 0.008333 = 1/30
    aer, ier = mm.fedavg_weighted_bounds(2, 1, 3, 5, 0.5, [0.5, 0.5], [10, 30])
    assert aer == pytest.approx(6 / 30 + 0.5)
    assert ier == pytest.approx(10 / 30 + 2.0)
    # p = n/N gives sum p^2/n = 1/N = 1/40, i.e. eq. (11)
    aer_opt, _ = mm.fedavg_weighted_bounds(2, 1, 3, 5, 0.5, [0.25, 0.75], [10, 30])
    assert aer_opt == pytest.approx(6 / 40 + 0.5)
    assert aer_opt == pytest.approx(mm.fedavg_aer_bound(2, 1, 3, 0.5, 40))
    with pytest.raises(ValueError, match="sum to 1"):
        mm.fedavg_weighted_bounds(2, 1, 3, 5, 0.5, [0.5, 0.6], [10, 30])


def test_logistic_constants_rederived():
    # c_X = D = 1, d = 4: T = 2
    c = mm.logistic_constants(1, 1, 4)
    assert c["beta"] == pytest.approx(1.0) and c["sigma2"] == pytest.approx(1.0)
    assert c["loss_sup"] == pytest.approx(math.log(1 + math.e ** 2))
    assert c["mu0"] == pytest.approx((math.e + math.exp(-1)) ** -2)
    p = mm.logistic_constants(1, 1, 4, printed=True)
    assert p["loss_sup"] == pytest.approx(2.0)
    assert p["mu0"] == pytest.approx((math.e + math.exp(-2)) ** -2)


def test_logistic_constants_erratum_instance():
    # ERRATA of Lemma 7: a concrete (x, y, w) with ||x||_inf = c_X, ||w|| = D.
    d, cx, D = 4, 1.0, 1.0
    x = np.full(d, cx)
    w = np.full(d, D / math.sqrt(d))
    t = x @ w                                  # = c_X D sqrt(d) = 2
    loss = math.log1p(math.exp(t))             # y = -1
    curvature = math.exp(t) / (1 + math.exp(t)) ** 2
    printed = mm.logistic_constants(cx, D, d, printed=True)
    fixed = mm.logistic_constants(cx, D, d)
    assert loss > printed["loss_sup"]          # 2.1269 > 2: printed ||l||_inf is exceeded
    assert loss == pytest.approx(fixed["loss_sup"])
    assert curvature < printed["mu0"]          # 0.10499 < 0.12280: printed mu_0 too large
    assert curvature == pytest.approx(fixed["mu0"])
    # smoothness: at t = 0 the Hessian is x x^T / 4 with top eigenvalue ||x||^2/4 = c_X^2 d / 4
    assert np.linalg.eigvalsh(np.outer(x, x) / 4).max() == pytest.approx(fixed["beta"])


def test_lower_bounds_hand_values():
    # eq. 14: min(2*4/100, 0.01) + 2/100 = 0.03 ; R = 1: 0.08 + 0.02
    np.testing.assert_allclose(mm.lower_bound_aer(2, 100, 4, [0.0, 0.1, 1.0]),
                               [0.02, 0.03, 0.10])
    assert mm.lower_bound_ier(2, 25, 100, 0.1) == pytest.approx(0.03)
    assert mm.excess_lower_bound_aer(0.5, 2, 100, 4, 0.1) == pytest.approx(0.015)
    assert mm.excess_lower_bound_ier(0.5, 2, 25, 100, 1.0) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="m must be <= N"):
        mm.lower_bound_aer(2, 10, 20, 0.1)
    with pytest.raises(ValueError, match="n_i must be <= N"):
        mm.lower_bound_ier(2, 200, 100, 0.1)


def test_lower_bound_broadcasts():
    out = mm.lower_bound_aer(1, [[100.0], [200.0]], 4, [0.0, 1.0])
    np.testing.assert_allclose(out, [[0.01, 0.05], [0.005, 0.025]])


def test_dichotomy_threshold_and_switch():
    assert mm.dichotomy_threshold(100, 4) == pytest.approx(0.04)
    assert mm.dichotomy_threshold(100, 4, loss_sup=3, mu=2) == pytest.approx(0.06)
    # beta=2, mu=1, loss_sup=3, N=100, m=4: threshold R^2 = 0.12
    below = mm.dichotomy_aer_bound(2, 1, 3, 0.2, 100, 4)
    assert below == pytest.approx(2 * 0.04 + 0.06)
    assert below == pytest.approx(mm.fedavg_aer_bound(2, 1, 3, 0.2, 100))
    assert mm.dichotomy_aer_bound(2, 1, 3, 1.0, 100, 4) == pytest.approx(2 * 0.12 + 0.06)
    # exactly at the threshold both branches agree
    r_star = math.sqrt(0.12)
    assert mm.dichotomy_aer_bound(2, 1, 3, r_star, 100, 4) == pytest.approx(0.30)
    # eq. 19: 8 * min(3/25, 0.04) + 2*5/100
    assert mm.dichotomy_ier_bound(2, 1, 3, 5, 0.2, 25, 100) == pytest.approx(0.42)


def test_dichotomy_general_weights_erratum():
    # ERRATA of eq. (18): local training with uniform p and imbalanced n
    n = [4] + [4000] * 9
    p = [0.1] * 10
    local = mm.local_aer_weighted(1, 1, 1, p, n)
    assert local == pytest.approx(0.1 * (1 / 4 + 9 / 4000))          # 0.025225
    printed_rhs = 10 / 36004 + 0.01 * (1 / 4 + 9 / 4000)            # 0.0028002
    assert local / printed_rhs == pytest.approx(9.008, rel=1e-3)


def test_fedprox000_bounds_hand_values():
    # prefactor mu + beta*loss_sup/mu = 7 ; m/N = 0.04, sqrt(m/N) = 0.2
    np.testing.assert_allclose(mm.fedprox_aer_bound(2, 1, 3, [0.0, 0.1, 1.0], 100, 4),
                               [7 * 0.01, 7 * 0.03, 7 * 0.05])
    # balanced p = n/N: C_p = 0.25 * 0.04 / 0.01 = 1, same value
    assert mm.fedprox_aer_bound_weighted(2, 1, 3, 0.1, [0.25] * 4, [25] * 4) == pytest.approx(0.21)
    # K = (1 + 1)(1 + 3) + 1 = 9 ; min(0.1/5, 1/25) + 2/100 = 0.04
    assert mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, 25, 100, 4) == pytest.approx(0.36)


def test_fedprox000_regime_boundaries():
    N, m = 1e4, 100  # m/N = 1e-2, 1/(mN) = 1e-6, 1/N = 1e-4
    r2 = np.array([2e-2, 1e-2, 1e-4, 1e-6, 1e-7])
    np.testing.assert_array_equal(mm.fedprox_regime(np.sqrt(r2), N, m), [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(mm.fedprox_regime(np.sqrt([1e-3, 1e-4, 1e-5]), N, m, "ier"),
                                  [1, 1, 2])
    with pytest.raises(ValueError, match="kind"):
        mm.fedprox_regime(0.1, N, m, "foo")


def test_fedprox000_middle_regime_erratum():
    # ERRATA: at R^2 = 1/(mN) the eq. (30) rate is R sqrt(m/N) = 1/N, not m/N
    N, m = 1e4, 100
    R = math.sqrt(1 / (m * N))
    rate = mm.fedprox_aer_bound(1, 1, 1, R, N, m) / 2      # strip the prefactor mu + beta/mu
    assert rate == pytest.approx(1e-4 + 1e-4)              # R sqrt(m/N) + 1/N
    assert (m / N) / (R * math.sqrt(m / N)) == pytest.approx(m)

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

# ---------------------------------------------------------------- paper 001


def test_thm31_hand_value_and_erratum():
    # sqrt(mu/lam) = sqrt(mu/(L-mu)) = 0.01: q = 0.9
    assert mm.thm31_distance_lower_bound(10001, 1, 1e4, 9) == pytest.approx(0.25 * 0.9 ** 10)
    # ERRATA: mu = lam = 1, L = 2, one round: printed bound 20.25 ||x0 - x*||^2 > ||x0 - x*||^2,
    # which the algorithm that never moves already violates.
    printed = mm.thm31_distance_lower_bound(2, 1, 1, 1, dist0=1.0, strict=False)
    assert printed == pytest.approx(0.25 * 81)
    assert printed > 1.0
    with pytest.raises(ValueError, match="lam > 100"):
        mm.thm31_distance_lower_bound(2, 1, 1, 1)


def test_communication_lower_bound_hand_value():
    # 0.25 * 0.9^(C+1) <= 1e-3  <=>  C + 1 >= 52.4
    assert 0.25 * 0.9 ** 52 > 1e-3 >= 0.25 * 0.9 ** 53
    assert mm.communication_lower_bound(10001, 1, 1e4, 1e-3, 1.0) == 52
    assert mm.communication_lower_bound(10001, 1, 1e4, 0.3, 1.0) == 0
    np.testing.assert_array_equal(mm.communication_lower_bound(10001, 1, 1e4, [1e-3, 0.3]),
                                  [52, 0])
    with pytest.raises(ValueError, match="lam > 100"):
        mm.communication_lower_bound(10001, 1, 50, 1e-3)
    with pytest.raises(ValueError, match="lam must be >= mu"):
        mm.communication_lower_bound(10001, 1, 0.5, 1e-3)


def test_oracle_lower_bounds_hand_values():
    assert mm.prox_oracle_lower_bound(4, 1, 9, math.exp(-2)) == pytest.approx(4)
    assert mm.gradient_oracle_lower_bound(9, 1, math.exp(-1)) == pytest.approx(3)
    assert mm.summand_oracle_lower_bound(4, 1, 100, math.exp(-3)) == pytest.approx(160)
    # ERRATA: Section 2's (m + sqrt(m L~/mu)) log(1/eps) = 1100 vs Section 3.2's 200
    assert mm.summand_oracle_lower_bound(1, 1, 100, math.exp(-10)) == pytest.approx(200)
    with pytest.raises(ValueError, match="eps"):
        mm.gradient_oracle_lower_bound(9, 1, 1.5)


def test_upper_complexities_hand_values():
    a = mm.apgd_complexity(4, 1, 9, math.exp(-1))
    assert (a["apgd1"], a["apgd2"], a["pgd_grad"], a["pgd_prox"]) == pytest.approx((3, 2, 4, 9))
    out = mm.iapgd_agd_complexity(3, 1, 4, 2, 1e-3)
    assert out["rounds"] == math.ceil(math.log(8000) / math.log(2)) == 13
    a_k = math.sqrt(7 / 5) * math.log(1152 * 3 * 4 * 4 * 25)
    b_k = 4 * math.sqrt(7 / 20)
    assert out["local_steps"] == pytest.approx(13 * a_k + b_k * 13 * 12 / 2)
    with pytest.raises(ValueError, match="lam must be > mu"):
        mm.iapgd_agd_complexity(3, 1, 1, 2, 1e-3)
    k = mm.iapgd_katyusha_complexity(10, 1, 1, 100, math.exp(-1))
    assert k["rounds"] == pytest.approx(1) and k["local"] == pytest.approx(100 + math.sqrt(1000))
    al = mm.al2sgd_complexity(4, 1, 9, 16, math.exp(-1))
    assert al["rounds"] == pytest.approx(2) and al["local"] == pytest.approx(16 + math.sqrt(208))


def test_katyusha_optimality_condition_erratum():
    # "sqrt(m) lam = O(L~)" holds (10 <= 10) yet m sqrt(lam/mu) = 100 > sqrt(m L~/mu) = 31.6
    m, lam, lt = 100, 1.0, 10.0
    assert math.sqrt(m) * lam <= lt
    assert m * math.sqrt(lam) > math.sqrt(m * lt)
    assert not bool(mm.iapgd_katyusha_complexity(lt, 1, lam, m, 0.1)["local_optimal"])
    assert bool(mm.iapgd_katyusha_complexity(100, 1, 1, 100, 0.1)["local_optimal"])


def test_optimal_method_table2():
    np.testing.assert_array_equal(mm.optimal_method(1, [0.5, 1, 2], "grad"),
                                  ["IAPGD+AGD", "APGD2", "APGD2"])
    assert str(mm.optimal_method(1, 0.5, "prox")) == "APGD1"
    with pytest.raises(ValueError, match="oracle"):
        mm.optimal_method(1, 1, "magic")

# ---------------------------------------------------------------- registry and docs

VALID = {"beta": 2.0, "mu": 1.0, "loss_sup": 3.0, "n_i": 25.0, "R": 0.1, "N": 100.0, "m": 4.0,
         "sigma2": 1.0, "c_x": 1.0, "D": 1.0, "d": 4.0, "L": 1e4 + 1, "rho": 1.0, "n": 25.0,
         "lam": 1e4, "gamma": 1e-5, "eta": 1e-5, "eps": 1e-3, "dist0": 1.0, "rounds": 3.0,
         "L_tilde": 1e4 + 1, "gap0": 1.0}


@pytest.mark.parametrize("name", sorted(mm.BOUNDS))
def test_registry_entries_evaluate_and_cite(name):
    spec = mm.BOUNDS[name]
    out = mm.evaluate(name, **{p: VALID[p] for p in spec.params if p not in spec.defaults})
    assert out and all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in out.values())
    # Cited by authors and year (riskcalc.papers), with the theorem or equation after a comma.
    assert any(spec.ref.startswith(cite(pid) + ", ") for pid in ("000", "004", "001"))
    assert "paper 00" in spec.func.__doc__


def test_every_public_function_cites_its_paper():
    for mod in (chen, chen_lower, chen_fedprox, fedprox, fedprox_bilevel, hanzely):
        for name in dir(mod):
            obj = getattr(mod, name)
            if callable(obj) and not name.startswith("_") and obj.__module__ == mod.__name__ \
                    and not isinstance(obj, type):
                assert obj.__doc__ and "paper 00" in obj.__doc__, name


def test_evaluate_rejects_bad_calls():
    with pytest.raises(ValueError, match="unknown bound"):
        mm.evaluate("nope")
    with pytest.raises(ValueError, match="needs R"):
        mm.evaluate("lower_bound_aer", d=1, N=100, m=4)
    with pytest.raises(ValueError, match="unexpected: lam"):
        mm.evaluate("lower_bound_aer", d=1, N=100, m=4, R=0.1, lam=1)


def test_second_branch_restatement_erratum():
    # proof of the local bound restates eq. (34) as rho^2/(mu m R^2); (34) gives rho^2/(mu n R^2)
    m, n = 10, 100
    printed = 1 / (1 * m * 1)
    assert mm.fedprox_lambda(1, 1, 1, 1.0, n, m).lam == pytest.approx(1 / n) != printed
