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
