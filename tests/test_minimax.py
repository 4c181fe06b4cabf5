"""Bounds of riskcalc.minimax against values worked out by hand, regime boundaries and errata:
paper 000 (``000_7ff2ed2592df3b60.txt``, Chen et al.) and the registry (every bound evaluates
and cites its paper). Paper 004's bounds: tests/test_minimax_fedprox.py; paper 001's:
tests/test_minimax_hanzely.py."""

import math

import numpy as np
import pytest

import riskcalc.minimax as mm
from riskcalc.minimax import (chen, chen_fedprox, chen_lower, fedprox, fedprox_bilevel,
                              fedprox_table1, hanzely, hanzely_upper)
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
    for mod in (chen, chen_lower, chen_fedprox, fedprox, fedprox_bilevel, fedprox_table1,
                hanzely, hanzely_upper):
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
