"""The three routes to the same limits agree: closed form, effective ridge kappa, paper forms."""

import numpy as np
import pytest

import riskcalc
from riskcalc import Spectrum
from riskcalc.linear.engine import kappa, marchenko_pastur, stieltjes
GAMMAS = np.array([0.1, 0.5, 0.9, 0.999, 1.001, 1.1, 1.5, 2.0, 4.0, 10.0, 1000.0])
LAMS = np.array([0.0, 1e-100, 1e-30, 1e-8, 1e-6, 1e-3, 0.05, 0.5, 1.0, 10.0, 1e3, 1e8, 1e30, 1e100])
G, L = np.meshgrid(GAMMAS, LAMS)


def test_closed_form_equals_general_routes_at_identity():
    closed = marchenko_pastur.isotropic_factors(G, L)
    for route in (kappa.ridge_factors, stieltjes.ridge_factors):
        general = route(G, L, Spectrum.identity())
        for c, g in zip(closed, general):
            np.testing.assert_allclose(g, c, rtol=1e-10)


def test_general_routes_agree(spectrum):
    kb, kv = kappa.ridge_factors(G, L, spectrum)
    pb, pv = stieltjes.ridge_factors(G, L, spectrum)
    np.testing.assert_allclose(pb, kb, rtol=1e-10)
    np.testing.assert_allclose(pv, kv, rtol=1e-10)


@pytest.mark.parametrize("method", list(riskcalc.METHODS))
def test_every_method_routes_agree_through_limit(method):
    info = riskcalc.METHODS[method]
    params = {info.signal: 1.3, "sigma": 0.7}
    if info.tuning:
        params[info.tuning] = 0.3
    closed = riskcalc.limit(method, gamma=GAMMAS, route="closed", **params)
    for route in ("kappa", "paper"):
        other = riskcalc.limit(method, gamma=GAMMAS, route=route,
                               spectrum=Spectrum.identity(), **params)
        np.testing.assert_allclose(other.risk, closed.risk, rtol=1e-10)
        np.testing.assert_allclose(other.bias, closed.bias, rtol=1e-10)


def test_scaled_identity_is_not_identity():
    # Sigma = 2 I doubles the test loss of FedAvg (||.||_Sigma) but leaves the ridgeless
    # interpolant's risk as for I (scale invariance of the min-norm solution).
    two = Spectrum([2.0])
    assert riskcalc.limit("fedavg", gamma=2, r=1, sigma=1, spectrum=two).risk == pytest.approx(2)
    ftfa = riskcalc.limit("ftfa", gamma=2, r=1, sigma=1, spectrum=two)
    assert ftfa.bias == pytest.approx(2 * 0.5, rel=1e-12)
    assert ftfa.variance == pytest.approx(1.0, rel=1e-12)


def test_kappa_solves_its_equation(spectrum):
    k = kappa.effective_ridge(G, L, spectrum)
    s, w = spectrum.atoms, spectrum.weights
    # Residual of lam = kappa - gamma int s kappa/(s + kappa), relative to the size of its terms.
    residual = k - G * ((s * k[..., None] / (s + k[..., None])) @ w) - L
    assert np.all(np.abs(residual) <= 1e-12 * (k + L))


def test_c0_is_the_inverse_of_gamma_kappa(spectrum):
    gammas = np.array([1.001, 1.5, 3.0, 100.0])
    np.testing.assert_allclose(
        stieltjes.c0(gammas, spectrum) * gammas * kappa.effective_ridge(gammas, 0.0, spectrum),
        1.0, rtol=1e-12)


def test_stieltjes_transform_solves_definition_6_2(spectrum):
    gammas, lams = np.array([0.5, 2.0, 5.0]), np.array([1e-3, 0.5, 50.0])
    st = stieltjes.stieltjes(gammas, lams, spectrum)
    s, w = spectrum.atoms, spectrum.weights
    z = -lams
    rhs = (1.0 / (s * (1 - gammas - gammas * z * st["m"])[:, None] - z[:, None])) @ w
    np.testing.assert_allclose(st["m"], rhs, rtol=1e-12)
    # m' against a central difference of the solved m (an independent route for the derivative).
    h = 1e-6 * lams
    mp = stieltjes.stieltjes(gammas, lams - h, spectrum)["m"]  # z + h
    mm = stieltjes.stieltjes(gammas, lams + h, spectrum)["m"]  # z - h
    np.testing.assert_allclose(st["dm"], (mp - mm) / (2 * h), rtol=1e-6)


def test_mp_stieltjes_is_the_stieltjes_transform_of_marchenko_pastur():
    # Integrate 1/(x + lam) against the Marchenko-Pastur density (gamma < 1: no atom at 0).
    from scipy.integrate import quad
    gamma, lam = 0.3, 0.7
    a, b = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2
    dens = (lambda x: np.sqrt((b - x) * (x - a)) / (2 * np.pi * gamma * x))
    m_quad = quad(lambda x: dens(x) / (x + lam), a, b, epsabs=1e-13)[0]
    dm_quad = quad(lambda x: dens(x) / (x + lam) ** 2, a, b, epsabs=1e-13)[0]
    m, dm = marchenko_pastur.mp_stieltjes(gamma, lam)
    assert m == pytest.approx(m_quad, rel=1e-9)
    assert dm == pytest.approx(dm_quad, rel=1e-9)
