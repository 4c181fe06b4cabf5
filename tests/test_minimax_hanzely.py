"""Bounds of riskcalc.minimax from paper 001 (``001_352374a3e1e3397e.txt``, Hanzely et al.:
communication and oracle lower bounds, the upper complexities, the optimal method) against
values worked out by hand, and its errata."""

import math

import numpy as np
import pytest

import riskcalc.minimax as mm


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
    out = mm.iapgd_agd_complexity(3, 1, 4, 2, 1e-3, printed=True)      # Thm 4.2's printed rate
    assert out["rounds"] == math.ceil(math.log(8000) / math.log(2)) == 13
    a_k = math.sqrt(7 / 5) * math.log(1152 * 3 * 4 * 4 * 25)
    b_k = 4 * math.sqrt(7 / 20)
    assert out["local_steps"] == pytest.approx(13 * a_k + b_k * 13 * 12 / 2)
    with pytest.raises(ValueError, match="lam must be > mu"):
        mm.iapgd_agd_complexity(3, 1, 1, 2, 1e-3)
    k = mm.iapgd_katyusha_complexity(10, 1, 1, 100, math.exp(-1))
    assert k["rounds_order"] == pytest.approx(1)
    assert k["local_order"] == pytest.approx(100 + math.sqrt(1000))
    al = mm.al2sgd_complexity(4, 1, 9, 16, math.exp(-1))
    assert al["rounds_order"] == pytest.approx(2)
    assert al["local_order"] == pytest.approx(16 + math.sqrt(208))


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
