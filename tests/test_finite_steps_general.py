"""Finite personalization steps under a general covariance (``riskcalc.linear.engine.weighted_mp`` and the
general route of ``riskcalc.linear.steps.limits``) against independent routes: the Sigma = I
midpoint rule, exact moments of the Sigma-weighted spectrum (a rational power series), and
eigenvalues of large sample covariances. The k -> infinity limits (the implicit forms of
Sec. 6.3) and the simulation at finite d are tested for every spectrum in
``test_finite_steps.py``."""

from fractions import Fraction

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.steps.limits import filter_integrals, spectral_filter_integrals, steps_limit
from tests.test_finite_steps import ftfa_exact, mp_moment

TWO_POINT = riskcalc.Spectrum.two_point(1.0, 4.0, 0.5)
THREE_POINT = riskcalc.Spectrum([0.25, 1.0, 3.0], weights=[0.2, 0.5, 0.3])
POWER_LAW = riskcalc.Spectrum.power_law(1.0, 100)


def nu_moments(gamma, atoms, weights, order):
    """int s^j dnu, j <= order, exactly: with tau_p = int t^p dH, B(w) = 1 + gamma sum_p
    tau_p (w B)^p (the companion moments, from Silverstein's equation) and
    sum_j m_j w^j = sum_p tau_{p+1} (w B)^p, as truncated power series in rationals."""
    tau = [sum(w * t ** p for t, w in zip(atoms, weights)) for p in range(order + 2)]

    def mul(a, b):
        out = [Fraction(0)] * (order + 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b[:order + 1 - i]):
                out[i + j] += x * y
        return out

    def powers(b):   # (w B)^p for p = 0..order
        wb = [Fraction(0)] + b[:order]
        out = [[Fraction(1)] + [Fraction(0)] * order]
        for _ in range(order):
            out.append(mul(out[-1], wb))
        return out

    b = [Fraction(1)] + [Fraction(0)] * order
    for _ in range(order + 1):   # each pass fixes one more coefficient
        pw = powers(b)
        b = [Fraction(1) + gamma * sum(tau[p] * pw[p][j] for p in range(1, order + 1))
             if j == 0 else gamma * sum(tau[p] * pw[p][j] for p in range(1, order + 1))
             for j in range(order + 1)]
    pw = powers(b)
    return [sum(tau[p + 1] * pw[p][j] for p in range(order + 1)) for j in range(order + 1)]


def test_moment_series_gives_narayana_for_identity():
    gamma = Fraction(3, 2)
    m = nu_moments(gamma, [Fraction(1)], [Fraction(1)], 6)
    assert m == [mp_moment(j, gamma) for j in range(7)]


def test_moment_series_matches_wishart_identities():
    # E (1/d) tr(S Sigma) = int t^2 dH and (1/d) tr(S^2 Sigma) -> int t^3 + gamma int t int t^2.
    atoms, weights, gamma = [Fraction(1, 4), Fraction(7, 4)], [Fraction(1, 2)] * 2, Fraction(2)
    m = nu_moments(gamma, atoms, weights, 2)
    tau = [sum(w * t ** p for t, w in zip(atoms, weights)) for p in range(4)]
    assert m == [tau[1], tau[2], tau[3] + gamma * tau[1] * tau[2]]


@pytest.mark.parametrize("atoms, weights", [
    ([Fraction(1), Fraction(4)], [Fraction(1, 2), Fraction(1, 2)]),
    ([Fraction(1, 4), Fraction(1), Fraction(3)], [Fraction(1, 5), Fraction(1, 2), Fraction(3, 10)]),
])
@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(1), Fraction(5, 2)])
@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_ftfa_matches_exact_moments(atoms, weights, gamma, k):
    eta = Fraction(1, 20)
    bias, var = ftfa_exact(gamma, eta, k, nu_moments(gamma, atoms, weights, 2 * k))
    sp = riskcalc.Spectrum([float(a) for a in atoms], weights=[float(w) for w in weights])
    b, v = spectral_filter_integrals(float(gamma), 0.0, k, float(eta), sp)
    assert b == pytest.approx(float(bias), rel=1e-10)
    assert v == pytest.approx(float(var), rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("gamma, lam, k, eta", [
    (2.0, 0.0, 5, 0.2), (0.5, 0.3, 7, 0.2), (1.0, 0.0, 20, 0.2), (1.0, 0.5, 10 ** 4, 0.1),
    (1.01, 0.0, 50, 0.2), (0.99, 0.0, 500, 0.2), (3.0, 0.0, 2000, 0.1), (2.0, 2.0, 30, 0.1),
    (0.5, 0.0, 100, 0.7),
])
def test_identity_spectrum_matches_the_marchenko_pastur_route(gamma, lam, k, eta):
    # Two algorithms for the same integral: midpoint rule on the MP density, and the contour
    # integral with Silverstein's equation solved numerically.
    want = filter_integrals(gamma, lam, k, eta)
    got = spectral_filter_integrals(gamma, lam, k, eta, riskcalc.Spectrum.identity())
    for a, b in zip(got, want):
        assert a == pytest.approx(float(b), rel=1e-11, abs=1e-15)


@pytest.mark.parametrize("gamma", [0.25, 0.8, 1.0, 1.6, 4.0])
def test_support_edges(gamma):
    lo, hi = weighted_mp.support_edges(gamma, riskcalc.Spectrum.identity())
    assert lo == pytest.approx((1 - np.sqrt(gamma)) ** 2, abs=1e-14)
    assert hi == pytest.approx((1 + np.sqrt(gamma)) ** 2, rel=1e-14)
    # Two-point: the extreme non-zero eigenvalues of a large sample covariance.
    rng = np.random.default_rng(7)
    n = 1500
    d = int(gamma * n)
    x = rng.standard_normal((n, d)) * np.sqrt(np.repeat([1.0, 4.0], [d // 2, d - d // 2]))
    eig = np.linalg.eigvalsh(x @ x.T / n if d > n else x.T @ x / n)
    lo, hi = weighted_mp.support_edges(gamma, TWO_POINT)
    assert eig[-1] == pytest.approx(hi, rel=0.03)
    if gamma != 1.0:
        assert eig[0] == pytest.approx(lo, rel=0.15, abs=0.01)


def test_atom_at_zero_is_the_null_space_weight():
    # (1/d) tr[P_null Sigma] for gamma = 2 against int t / (1 + gamma c0 t) dH.
    rng = np.random.default_rng(11)
    n, d = 400, 800
    s = np.repeat([1.0, 4.0], d // 2)
    x = rng.standard_normal((n, d)) * np.sqrt(s)
    _, _, vt = np.linalg.svd(x, full_matrices=True)
    null = vt[n:]
    got = float(np.einsum("ij,j,ij->", null, s, null)) / d
    assert got == pytest.approx(weighted_mp.atom_at_zero(2.0, TWO_POINT), rel=0.02)
    assert weighted_mp.atom_at_zero(0.5, TWO_POINT) == 0.0


def test_companion_stieltjes_is_the_upper_half_plane_root():
    z = np.array([0.3 + 1e-3j, 2.0 + 0.5j, 10.0 + 1e-2j, -1.0 + 1e-4j])
    mu = weighted_mp.companion_stieltjes(z, 2.0, THREE_POINT)
    t, w = THREE_POINT.atoms, THREE_POINT.weights
    resid = z + 1 / mu - 2.0 * (t / (1 + np.multiply.outer(mu, t))) @ w
    assert np.all(mu.imag > 0) and np.all(np.abs(resid) < 1e-12)
    # Sigma = I: Silverstein's equation is the quadratic z mu^2 + (z + 1 - gamma) mu + 1 = 0,
    # with exactly one root in the upper half plane.
    g = 2.0
    mu_i = weighted_mp.companion_stieltjes(z, g, riskcalc.Spectrum.identity())
    for zz, got in zip(z, mu_i):
        roots = np.roots([zz, zz + 1 - g, 1])
        upper = roots[roots.imag > 0]
        assert upper.size == 1 and got == pytest.approx(upper[0], rel=1e-12)


def test_divergent_step_gets_a_note_and_large_risk():
    top = weighted_mp.support_edges(2.0, TWO_POINT)[1]
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=TWO_POINT,
                      steps=[10, 40, 80], step_size=2.1 / top)
    assert any("diverges" in n for n in res.notes)
    # The top of the spectrum grows like 1.1^(2k): past FedAvg's r^2 int t dH = 2.5.
    assert res.risk[0] < res.risk[1] < res.risk[2] and res.risk[2] > 100


def test_many_divergent_steps_are_infinite_not_an_error():
    # Issue 32 changed this from a SolverError: past the stability edge the integrand leaves
    # the floating point range on the contour, and the value (growing like 1.25^(2k)) is
    # reported infinite with converges False, as at few steps (tests/test_steps_divergence.py).
    top = weighted_mp.support_edges(2.0, TWO_POINT)[1]
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, spectrum=TWO_POINT, steps=5000,
                      step_size=2.5 / top)
    assert res.risk == np.inf and res.converges is False
