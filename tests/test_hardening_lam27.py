"""Session 27 hardening: extreme but valid parameters answer (the known limit) or say why not."""

import mpmath
import numpy as np
import pytest

import riskcalc
import riskcalc.minimax as mm


def _fedprox_counts_mp(L, mu, lam, eps, dist0):
    """K, K_118 and rounds of Corollary 1 (paper 004, eqs. 12-13, 118) at 60 digits (mpmath's
    log1p: 1 - 2e-200 is 1 even there): the theorem's conditions
    (2 + 64 (lam / mu)^2) (1 - eta mu_l)^K <= (1 - gamma L_g)^4 and dist0 r^T <= eps with
    eta = 1 / L_l, gamma = 1 / (2 L_g), solved for the smallest K, T."""
    with mpmath.workdps(60):
        L, mu, lam, eps, dist0 = (mpmath.mpf(v) for v in (L, mu, lam, eps, dist0))
        mu_g, L_g = lam * mu / (lam + mu), lam * L / (lam + L)
        x_in = (mu + lam) / (L + lam)
        k = mpmath.ceil(mpmath.log((2 + 64 * (lam / mu) ** 2) * 16)
                        / -mpmath.log1p(-x_in))
        x = mu_g / (2 * L_g)
        t = mpmath.ceil(mpmath.log(dist0 / eps) / -mpmath.log1p(-x / 2 - x ** 2 / 2))
        k118 = mpmath.ceil(2 + (lam + L) / (lam + mu) * mpmath.log(1056 * (L / mu) ** 2))
        return float(k), float(k118), float(t)


@pytest.mark.parametrize("L, mu, lam", [(1, 1e-15, 1e-15), (1, 1e-16, 1e-16), (1, 1e-17, 1e-17),
                                        (1, 1e-18, 1e-18), (1, 1e-30, 1e-30), (1, 1e-16, 1),
                                        (1e100, 1e-100, 1e-100), (3, 1, 2)])
def test_fedprox_complexity_counts_at_tiny_rates(L, mu, lam):
    # 1 - eta mu_l and 1 - gamma mu_g / 2 rounded to 1: K = 1 at mu = lam = 1e-17, rounds = 0
    # at mu = 1e-16, and int64 wrapped K_118 to -2^63 from mu = lam = 1e-18.
    out = mm.fedprox_complexity(L, mu, lam, 1e-3, 1.0)
    k, k118, t = _fedprox_counts_mp(L, mu, lam, 1e-3, 1.0)
    for name, want in (("K", k), ("K_118", k118), ("rounds", t)):
        assert out[name] == pytest.approx(want, rel=1e-12), name
        assert isinstance(out[name], int) or want >= 2.0 ** 63, name
    assert out["gradient_evaluations"] == pytest.approx(k * t, rel=1e-12)
    assert out["K"] <= out["K_118"]


def test_fedprox_complexity_exact_integers_and_arrays():
    # Within int64 the counts are exact integers (rounds * K multiplied as integers); an array
    # with an entry beyond int64 is floats, none wrapped negative.
    out = mm.fedprox_complexity(1, 1e-15, 1e-15, 1e-3)
    assert out["gradient_evaluations"] == out["rounds"] * out["K"]
    arr = mm.fedprox_complexity([1, 3], [1e-18, 1], [1e-18, 2], 1e-6)
    assert arr["K_118"][1] == 18 and arr["K_118"][0] > 4e19
    assert arr["K"].dtype == np.int64 and list(arr["K"][1:]) == [10]
    assert np.all(arr["gradient_evaluations"] > 0)


def _pfedme_risk(lam, gamma, **kw):
    return riskcalc.limit("pfedme", gamma=gamma, sigma=1, r=1, lam=lam, clients=10, **kw).risk


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_pfedme_identity_small_lam_tends_to_its_limit(gamma):
    # The lam -> 0 limit by a second route: the risk is smooth in lam there (slope ~ 4 at
    # gamma 2), so Richardson's 2 R(lam) - R(2 lam) at lam = 1e-7 gives it to ~1e-12. With phi
    # = lam s / (s + lam) the route drifted (1.8248 for 1.875 at lam = 1e-100, gamma 2) or was
    # refused (gamma 0.5 at lam = 1e-8 and 1e-15).
    limit = 2 * _pfedme_risk(1e-7, gamma) - _pfedme_risk(2e-7, gamma)
    for lam in (1e-15, 1e-50, 1e-100):
        assert _pfedme_risk(lam, gamma) == pytest.approx(limit, rel=1e-8, abs=0), lam


@pytest.mark.parametrize("gamma", [0.3, 0.5, 0.8])
def test_pfedme_identity_small_lam_is_own_least_squares_below_one(gamma):
    # An exact limit: for gamma < 1 each client's S is invertible, so its personalization
    # lam (S + lam)^-1 -> 0 leaves its own least squares, risk sigma^2 gamma / (1 - gamma),
    # whatever the global model (O(lam) away). Before, lam = 1e-8 and 1e-15 were refused at
    # gamma 0.5 and the reach was erratic.
    for lam in (1e-15, 1e-50, 1e-100):
        res = riskcalc.limit("pfedme", gamma=gamma, sigma=1, r=1, lam=lam, clients=10)
        assert res.risk == pytest.approx(gamma / (1 - gamma), rel=1e-12), lam


@pytest.mark.parametrize("mu", [1e-3, 1e-17, 1e-40, 1e-80])
def test_iapgd_agd_rounds_at_tiny_mu_against_mpmath(mu):
    # Theorem 4.2 of paper 001: rounds = ceil(log(8 gap0 / eps) / -log(q)), q = 1 - sqrt(mu /
    # (lam + mu)), the corrected rate (fuzz41 paper F1; the printed 1 - sqrt(mu / lam) before).
    # -log(rate) lost everything below mu / lam ~ 1e-32: mu = 1e-40 gave rounds = 0 (and a
    # division by zero); now -log1p(-x), the count a float beyond int64.
    from riskcalc.minimax.hanzely_upper import iapgd_agd_complexity

    out = iapgd_agd_complexity(1.0, mu, 1.0, 10, 1e-3)
    with mpmath.workdps(60):
        ref = mpmath.ceil(mpmath.log(8 / mpmath.mpf("1e-3"))
                          / -mpmath.log(1 - mpmath.sqrt(mpmath.mpf(mu) / (1 + mpmath.mpf(mu)))))
    assert float(out["rounds"]) == pytest.approx(float(ref), rel=1e-12)
    assert isinstance(out["rounds"], int) == (ref < 2 ** 63)
    assert out["local_steps"] > 0 and isinstance(out["local_steps"], float)
