"""Issue 32, fuzz40 (maml): what this fuzz found, each test failing before."""

import numpy as np
import pytest

from riskcalc import limit
from riskcalc.errors import IllConditioned
from riskcalc.linear.finite_clients import clients_limit, own
from riskcalc.linear.finite_clients.identity import client_weights
from riskcalc.linear.finite_clients.own_objective import objective, quadrature_peak


def test_newton_in_logarithms_solves_a_far_start_at_sigma_i():
    """F1: MAML-FL at Sigma = I, gamma [1e4, 0.5], alpha 2 (1/alpha inside the heavy client's
    spectrum): Newton's start has g = 1.3 for the root 8.0e4, its steps found no decrease and
    the nested solves took 2.5-4 s, 7.4e-12 from a 30-digit mpmath solve of the same system
    (tanh-sinh with the double zero of phi as a breakpoint). Newton's iteration in log g and
    log t_l answers in 3 steps, within 1.1e-12 of it."""
    gam, count = np.array([1e4, 0.5]), np.ones(2)
    p = client_weights(gam, count, "samples")
    phi = objective("maml_fl", 2.0)[0]
    g, t = own._subordination(gam, p, count, phi, quadrature_peak("maml_fl", 2.0, gam, count))
    assert g == pytest.approx(80011.995599780044057, rel=3e-12)
    np.testing.assert_allclose(t, [1.2496876155939157543e-05, 1.2498125968532884737e-9],
                               rtol=3e-12)


@pytest.mark.parametrize("alpha", [0.5, 2.0])
def test_maml_fl_narrow_peak_under_a_spectrum_refuses_at_once(alpha):
    """F2: MAML-FL on two-point:1,4,0.5 with gamma [1e4, 0.5]: 1/alpha lies in the heavy
    client's sample spectrum and its shift is tiny (a small share of the other's samples);
    the companion pencils refused after 10-25 s ("gave up after 12 companion pencils ...
    a smaller alpha answers"). Now refused before the continuation, naming phi's double
    zero and the peak's width."""
    with pytest.raises(IllConditioned, match=r"1/alpha = .* double zero.*relative width"):
        clients_limit("maml_fl", gamma=[1e4, 0.5], r=1.0, sigma=0.5, alpha=alpha,
                      spectrum="two-point:1,4,0.5")


def test_scaled_identity_is_the_identity_route_rescaled():
    """F3: Sigma = 3 I (scaled:3) went to the spectrum routes, which refused MAML-FL at gamma
    [1e3, 0.5], alpha 0.5 (F2's refusal; before it, after 10-30 s) where Sigma = I with alpha
    1.5 answers: phi_alpha(c s) = c phi_(alpha c)(s), the bias times c. Now that route (pFedMe
    too, at lam / c); on 35 federations where both answered they agreed within 7.8e-13."""
    kw = dict(gamma=[1e3, 0.5], r=1.0, sigma=0.5)
    res = clients_limit("maml_fl", **kw, spectrum="scaled:3", alpha=0.5)
    ref = clients_limit("maml_fl", **kw, alpha=1.5)
    np.testing.assert_allclose(res.bias, 3 * ref.bias, rtol=1e-13)
    np.testing.assert_allclose(res.variance, ref.variance, rtol=1e-13)


def test_maml_fl_zero_of_phi_in_a_spectral_gap_still_answers():
    """F2 (its first rule): 1/alpha = 6.67 inside [min s (1 - sqrt(gamma))^2, max s (1 +
    sqrt(gamma))^2] but in the gap of the heavy client's sample spectrum (two-point:1,30,0.5,
    gamma 0.5) was refused, where the pencils answer (no peak on the spectrum); the rule now
    asks for positive density there (the companion Stieltjes transform)."""
    res = clients_limit("maml_fl", gamma=[1e3, 0.5], r=1.0, sigma=0.5, alpha=0.15,
                        spectrum="two-point:1,30,0.5")
    np.testing.assert_allclose(res.risk, [31.38678959, 0.25], rtol=1e-8)


def test_scaled_identity_with_a_tuning_past_the_range_answers_its_end():
    """F4: pFedMe at lam 1e-100 on scaled:1e100 said "resolvent chain: the fixed point is
    unstable (slope 0.5 >= 1)"; the equivalent Sigma = I tuning lam / c = 1e-200 lies beyond
    [1e-100, 1e100], where the limits equal those at its end to 100 digits: now those (the bias
    times c)."""
    res = limit("pfedme", gamma=2.0, r=1.0, sigma=0.5, lam=1e-100, clients=3,
                spectrum="scaled:1e100")
    ref = limit("pfedme", gamma=2.0, r=1.0, sigma=0.5, lam=1e-100, clients=3)
    assert res.bias == pytest.approx(1e100 * ref.bias, rel=1e-13)
    assert res.variance == pytest.approx(ref.variance, rel=1e-13)


def test_pfedme_lam_far_below_a_spectrum_answers_its_rescaled_limit():
    """F5: pFedMe at lam 1e-100 on two-point:1e99,1e100,0.5 (lam 1e-199 of the eigenvalues)
    said "resolvent chain: the fixed point is unstable (slope 0.74 >= 1)"; where that route
    fails it now runs on Sigma / k (k a power of two near the mean) with lam / k clamped to
    1e-100, the bias times k: the lam -> 0 limit, that of two-point:1,10,0.5 at lam 1e-100
    with the bias times 1e99."""
    kw = dict(gamma=[2.0, 1.5, 4.0], r=[1.0, 0.5, 2.0], sigma=[0.5, 1.0, 0.2], lam=1e-100)
    res = clients_limit("pfedme", **kw, spectrum="two-point:1e99,1e100,0.5")
    ref = clients_limit("pfedme", **kw, spectrum="two-point:1,10,0.5")
    np.testing.assert_allclose(res.bias, 1e99 * ref.bias, rtol=1e-12)
    np.testing.assert_allclose(res.variance, ref.variance, rtol=1e-12)
