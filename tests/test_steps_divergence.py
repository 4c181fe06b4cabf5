"""A divergent step size is a result, reported the same way at any number of steps (issue 32):
``converges`` False, values that grow without bound in k, infinite (JSON null) once past the
floating point range; only the work of a curve is bounded, before solving."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main

TWO_POINT = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])


@pytest.mark.parametrize("eta", [0.2, 1.0, 10.0])
def test_one_step_is_the_mp_moment_closed_form_at_any_step_size(eta):
    # One FTFA step from the centre: f(s) = eta s, so B = r^2 E(1 - eta s)^2 and
    # V = sigma^2 gamma eta^2 E s under Marchenko-Pastur (E s = 1, E s^2 = 1 + gamma): exact,
    # stable or not (eta (1 + sqrt 2)^2 = 1.17 and 58 diverge).
    gamma, r, sigma = 2.0, 1.3, 0.7
    res = riskcalc.steps_limit("ftfa", gamma=gamma, r=r, sigma=sigma, steps=1, step_size=eta)
    assert res.bias == pytest.approx(r ** 2 * (1 - 2 * eta + eta ** 2 * (1 + gamma)), rel=1e-12)
    assert res.variance == pytest.approx(sigma ** 2 * gamma * eta ** 2, rel=1e-12)
    assert res.converges == (eta * (1 + np.sqrt(gamma)) ** 2 < 2)


@pytest.mark.parametrize("spectrum", [None, TWO_POINT], ids=["identity", "two-point"])
def test_divergent_curve_grows_to_infinity_without_an_error(spectrum):
    ks = [2, 5, 20, 60, 2000, 20000]
    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=ks, step_size=1.0,
                               spectrum=spectrum)
    assert not np.any(res.converges)
    finite = np.isfinite(res.risk)
    assert finite[0] and not finite[-1]                  # overflow at many steps: inf
    assert np.all(np.diff(res.risk[finite]) > 0)          # growth while representable
    assert np.all(~finite[np.argmin(finite):])            # once infinite, infinite after
    assert any("diverges" in n for n in res.notes)


def test_stable_curve_says_it_converges():
    res = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.3, steps=[0, 10],
                               step_size=0.1)
    assert np.all(res.converges) and not res.notes


def test_cli_reports_divergence_the_same_at_few_and_many_steps(capsys):
    for steps, risk in (("5", 64495.5), ("5000", None)):
        assert main(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                     "--steps", steps, "--step-size", "1", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["diagnostics"] == {"converges": False}
        assert out["risk"] == (None if risk is None else pytest.approx(risk, rel=1e-9))
        assert main(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                     "--steps", steps, "--step-size", "1"]) == 0
        assert "converges: false" in capsys.readouterr().out


def test_optimal_steps_in_chunks_equals_the_whole_curve():
    kw = dict(gamma=0.5, r=1.0, sigma=1.0, step_size=0.05)
    best = riskcalc.optimal_steps("ftfa", max_steps=9000, **kw)      # three chunks
    curve = riskcalc.steps_limit("ftfa", steps=np.arange(9001), **kw)
    k = int(np.argmin(curve.risk))
    assert best.params["steps"] == k
    assert best.risk == curve.risk[k] and best.converges


def test_divergent_optimal_steps_is_fast_and_finite():
    res = riskcalc.optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=0.5, step_size=10.0,
                                 max_steps=300)
    assert res.params["steps"] == 0 and res.risk == 1.0 and res.converges is False


def test_work_is_bounded_before_solving():
    with pytest.raises(ValueError, match=r"max_steps <= \d+"):
        riskcalc.optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=0.5, step_size=0.1,
                               max_steps=10 ** 9)
    with pytest.raises(ValueError, match="max_steps"):
        riskcalc.optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=0.5, step_size=0.1,
                               max_steps=100000, spectrum=TWO_POINT)


def _mp_filter_mpmath(gamma, k, eta):
    """Bias and variance factors of ``filter_integrals`` (lam = 0) by mpmath quadrature of the
    Marchenko-Pastur density, split geometrically toward the top edge where a divergent
    integrand |1 - eta s|^(2k) concentrates (an independent route: real-line quadrature in s,
    30 digits, not the midpoint rule in t)."""
    import mpmath as mp

    with mp.workdps(30):
        g = mp.mpf(gamma)
        a, b = (1 - mp.sqrt(g)) ** 2, (1 + mp.sqrt(g)) ** 2
        eta = mp.mpf(eta)

        def dens(s):
            return mp.sqrt((b - s) * (s - a)) / (2 * mp.pi * g * s)

        def f(s):
            return 1 - (1 - eta * s) ** k

        width = abs(1 - eta * b) / (k * eta)
        pts = [a] + [b - width * 2 ** j for j in range(40, -1, -1) if b - width * 2 ** j > a]
        bias = mp.quad(lambda s: (1 - f(s)) ** 2 * dens(s), pts + [b]) + max(0, 1 - 1 / g)
        var = g * mp.quad(lambda s: f(s) ** 2 / s * dens(s), pts + [b])
        return float(bias), float(var)


@pytest.mark.parametrize("k, eta", [(5000, 0.35), (20000, 0.345)])
def test_many_divergent_steps_are_a_finite_result(k, eta):
    """eta (1 + sqrt 2)^2 = 2.04 and 2.011 at k = 5000 and 20000: values near 1e163 and 1e179,
    finite, were refused as "quadrature did not settle" (the nodes carry the ~3 k eps rounding
    of a k-th power, above RTOL). Now they agree with an mpmath quadrature to 16 k eps (the
    rule settles to 8 k eps, the nodes' rounding adds 3 k eps), with converges False."""
    from riskcalc.linear.steps.limits import filter_integrals

    want = _mp_filter_mpmath(2.0, k, eta)
    got = filter_integrals(2.0, 0.0, k, eta)
    for g, w in zip(got, want):
        assert abs(float(g) - w) <= 16 * k * np.finfo(float).eps * w
    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=k, step_size=eta)
    assert res.converges is False and np.isfinite(res.risk)
    assert res.risk == pytest.approx(want[0] + want[1], rel=16 * k * np.finfo(float).eps)


@pytest.mark.parametrize("k, eta", [(500, 0.175), (5000, 0.172), (20000, 0.1717)])
def test_many_divergent_steps_general_route_scaling_identity(k, eta):
    """Sigma = 2 I takes the contour route; S = 2 S_1 gives exactly B = 2 B_1(lam / 2, 2 eta),
    V = V_1(lam / 2, 2 eta) in Marchenko-Pastur's factors. Past the edge (2 eta x_hi = 2.04,
    2.005, 2.0015) the contour settles to the rounding floor of the k-th power, ~3 k eps times
    the ~50 sqrt(k) ratio of the nodes to the integral (weighted_mp.contour_integrals):
    at most ~1e-7 at k = 20000 (measured 3e-8); 1e-6 is asserted. These were "the contour
    rule did not settle" (k = 2000-5000) or reported infinite though finite (k = 20000)."""
    from riskcalc.linear.steps.limits import filter_integrals, spectral_filter_integrals

    b, v = spectral_filter_integrals(2.0, 0.0, k, eta, riskcalc.Spectrum([2.0]))
    b1, v1 = filter_integrals(2.0, 0.0, k, 2 * eta)
    assert np.isfinite(b) and b == pytest.approx(2 * b1, rel=1e-6)
    assert v == pytest.approx(v1, rel=1e-6)


def test_cli_many_divergent_steps_near_the_edge(capsys):
    assert main(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1", "--steps",
                 "5000", "--step-size", "0.35", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["diagnostics"] == {"converges": False} and out["risk"] > 1e160
