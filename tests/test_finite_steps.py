"""Finite personalization steps (``riskcalc.linear.steps.limits``) against independent routes: exact
Marchenko-Pastur moments (Narayana numbers, rational arithmetic) where the filter is a
polynomial, mpmath quadrature in s where it is not, the converged limits of Thms 1-2 /
Cor. 3.1 as k -> infinity, and simulation at finite d."""

from fractions import Fraction
from math import comb

import mpmath as mpm
import numpy as np
import pytest

import riskcalc
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.steps.limits import filter_integrals, steps_limit


def mp_moment(j, gamma):
    """(1/d) E tr S^j in the limit: sum_i N(j, i) gamma^(i-1), N the Narayana numbers."""
    if j == 0:
        return Fraction(1)
    return sum(Fraction(comb(j, i) * comb(j, i - 1), j) * gamma ** (i - 1)
               for i in range(1, j + 1))


def poly_mul(a, b):
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def ftfa_exact(gamma, eta, k, moments=None):
    """Bias and variance factors of FTFA after k steps as exact rationals: with
    f(s) = 1 - (1 - eta s)^k, (1 - f)^2 and f^2 / s are polynomials in s. ``moments``:
    int s^j dnu for j <= 2k (default: Marchenko-Pastur, Sigma = I)."""
    if moments is None:
        moments = [mp_moment(j, gamma) for j in range(2 * k + 1)]
    one_minus_f = [comb(k, j) * (-eta) ** j for j in range(k + 1)]          # (1 - eta s)^k
    bias_poly = poly_mul(one_minus_f, one_minus_f)
    f = [-c for c in one_minus_f]
    f[0] += 1                                                               # f(0) = 0
    var_poly = poly_mul(f, f)[1:]                                           # f^2 / s
    bias = sum(c * moments[j] for j, c in enumerate(bias_poly))
    var = gamma * sum(c * moments[j] for j, c in enumerate(var_poly))
    return bias, var


@pytest.mark.parametrize("gamma", [Fraction(1, 2), Fraction(1), Fraction(2), Fraction(37, 10)])
@pytest.mark.parametrize("eta", [Fraction(1, 10), Fraction(1, 5)])
@pytest.mark.parametrize("k", [0, 1, 2, 3, 7, 15])
def test_ftfa_matches_exact_moments(gamma, eta, k):
    bias, var = ftfa_exact(gamma, eta, k)
    b, v = filter_integrals(float(gamma), 0.0, k, float(eta))
    assert b == pytest.approx(float(bias), rel=1e-12, abs=1e-14)
    assert v == pytest.approx(float(var), rel=1e-12, abs=1e-14)


def mp_quad(gamma, lam, k, eta):
    """The same integrals by mpmath in the variable s itself (tanh-sinh), 30 digits."""
    mpm.mp.dps = 30
    g, lam, eta = mpm.mpf(gamma), mpm.mpf(lam), mpm.mpf(eta)
    a, b = (1 - mpm.sqrt(g)) ** 2, (1 + mpm.sqrt(g)) ** 2

    def dens(s):
        return mpm.sqrt((b - s) * (s - a)) / (2 * mpm.pi * g * s)

    def f(s):
        return s / (s + lam) * (1 - (1 - eta * (s + lam)) ** k)

    atom = max(1 - 1 / g, 0)
    bias = atom + mpm.quad(lambda s: (1 - f(s)) ** 2 * dens(s), [a, b])
    var = g * mpm.quad(lambda s: f(s) ** 2 / s * dens(s), [a, b])
    return float(bias), float(var)


@pytest.mark.parametrize("gamma, lam, k, eta", [
    (2.0, 0.5, 1, 0.2), (2.0, 0.5, 10, 0.2), (0.5, 0.1, 30, 0.3), (1.0, 1.0, 5, 0.1),
    (4.0, 0.05, 200, 0.05), (1.5, 2.0, 3, 0.25),
])
def test_rtfa_matches_mpmath(gamma, lam, k, eta):
    b, v = filter_integrals(gamma, lam, k, eta)
    mb, mv = mp_quad(gamma, lam, k, eta)
    assert b == pytest.approx(mb, rel=1e-12)
    assert v == pytest.approx(mv, rel=1e-12)


TWO_POINT = riskcalc.Spectrum.two_point(1.0, 4.0, 0.5)


@pytest.mark.parametrize("spectrum", [
    None, TWO_POINT, riskcalc.Spectrum([0.25, 1.0, 3.0], weights=[0.2, 0.5, 0.3]),
    riskcalc.Spectrum.power_law(1.0, 100)], ids=["identity", "two-point", "three-point",
                                                 "power-law"])
@pytest.mark.parametrize("method, kw", [
    ("ftfa", dict(r=1.0)), ("rtfa", dict(r=1.0, lam=0.5)), ("rtfa", dict(r=2.0, lam=1e-3)),
    ("local", dict(rho=1.5)), ("local_ridge", dict(rho=1.5, lam=0.3)),
])
@pytest.mark.parametrize("gamma", [0.5, 2.0, 5.0])
def test_many_steps_reach_the_converged_limits(spectrum, method, kw, gamma):
    # eta = 1 / (lam + top of the spectrum of S), below the stability limit 2 / (lam + top):
    # the iterates converge to Thms 1-2 / Cor. 3.1 (for a general spectrum their implicit
    # forms of Sec. 6.3, c0 and Def. 6.2, solved on the real axis by other code).
    lam = kw.get("lam", 0.0)
    top = (1 + np.sqrt(gamma)) ** 2 if spectrum is None else \
        weighted_mp.support_edges(gamma, spectrum)[1]
    eta = 1.0 / (lam + top)
    got = steps_limit(method, gamma=gamma, sigma=0.5, spectrum=spectrum, steps=10 ** 6,
                      step_size=eta, **kw)
    want = riskcalc.limit(method, gamma=gamma, sigma=0.5, spectrum=spectrum, **kw)
    assert got.bias == pytest.approx(want.bias, rel=1e-10, abs=1e-14)
    assert got.variance == pytest.approx(want.variance, rel=1e-10)
    assert not got.notes


def test_zero_steps_is_the_starting_model_and_arrays_broadcast():
    res = steps_limit("rtfa", gamma=[1.5, 3.0], r=2.0, sigma=0.7, lam=0.4,
                      steps=[[0], [1], [50]], step_size=0.1)
    assert res.risk.shape == (3, 2)
    assert np.allclose(res.bias[0], 4.0) and np.all(res.variance[0] == 0)
    assert res.route == "finite-steps" and res.params["steps"] == [[0.0], [1.0], [50.0]]


def test_ftfa_is_not_monotone_in_the_steps():
    # The exact limit behind the paper_checks verdict on Sec. 5's "more steps are better".
    k = np.array([0, 5, 20, 10 ** 5])
    risk = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=k, step_size=0.2).risk
    assert risk[0] > risk[3] > risk[2]


def test_unstable_step_gets_a_note():
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=3, step_size=0.5)
    assert any("diverges" in n for n in res.notes)


@pytest.mark.parametrize("kw, name", [
    (dict(method="fedavg"), "method"),
    (dict(steps=-1), "steps"),
    (dict(steps=1.5), "steps"),
    (dict(step_size=0.0), "step_size"),
    (dict(spectrum=riskcalc.Spectrum([1.0, 4.0], signal_weights=[0.9, 0.1])),
     "signal_weights"),
    (dict(gamma=-1.0), "gamma"),
])
def test_bad_input(kw, name):
    args = dict(method="ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=3, step_size=0.1)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        steps_limit(args.pop("method"), **args)


@pytest.mark.parametrize("spectrum, eta, seed", [(None, 0.2, 3), (TWO_POINT, 0.1, 5)],
                         ids=["identity", "two-point"])
def test_simulation_agrees(spectrum, eta, seed):
    # Finite d: exact conditional bias and variance of k gradient steps (montecarlo) against
    # the limit, within 4 standard errors plus 3/n (the finite-n trace allowance of
    # paper_checks.p003_common).
    d, reps, lam = 400, 8, 0.5
    steps = [1, 5, 25]
    for method, tune in (("ftfa", 0.0), ("rtfa", lam)):
        kw = {"lam": lam} if tune else {}
        spec = riskcalc.ClientSpec(method, gamma=2.0, r=1.0, sigma=0.5, spectrum=spectrum,
                                   **kw)
        for k in steps:
            risks = [measure(sample_instance(spec, Setting(d=d), seed, rep), method, [tune],
                             steps=k, step_size=eta)["risk"][0] for rep in range(reps)]
            mean, se = mean_se(np.array(risks))
            pred = steps_limit(method, gamma=2.0, r=1.0, sigma=0.5, spectrum=spectrum,
                               steps=k, step_size=eta, **kw).risk
            assert abs(mean - pred) <= 4 * se + 3.0 / (d / 2) * pred, (method, k, mean, pred)
