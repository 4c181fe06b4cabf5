"""Issue 32, fuzz39 (steps2): what this fuzz found, each test failing before."""

import warnings

import numpy as np
import pytest

from riskcalc import optimal_steps, steps_limit
from riskcalc.linear.steps.finite_clients import clients_steps_limit, steps_group_limits
from riskcalc.linear.steps.overflow import log_bounds
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli


def test_divergent_steps_with_few_other_samples_proven_infinite_before_the_pencils():
    """F1: FTFA at gamma 2 from the FedAvg model of 3 clients (Sigma = I; the others' pooled
    N = d, B at its hard edge) after 1000 steps of 1 (past the edge) ran the pencils ~90 s to
    print null, and with max_seconds = 5 was refused: ``steps.overflow``'s bound needed the
    others alone to have N > d. Its bound through the target's other eigenvectors and a
    subset of the others' rows (Wachter's law) now proves the values past the floats."""
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=1000, step_size=1.0,
                      clients=3, max_seconds=5)
    assert res.bias == res.variance == np.inf and not res.converges
    bias, var = clients_steps_limit("rtfa", gamma=[4.0, 2.0, 2.0], sigma=1.0, r=1.0, lam=0.3,
                                    steps=10 ** 6, step_size=0.4, weights="uniform",
                                    max_seconds=5)
    assert bias == var == np.inf


def test_few_other_samples_bounds_lie_below_the_pencils():
    """F1: the new bounds lie below the pencils' values at every k <= 40 (both methods, both
    weights, the others' pooled N = d and < d)."""
    cases = [("ftfa", [2.0], [1.0], [0.5], [3.0], [0.0], "uniform", 1.0),
             ("rtfa", [4.0], [1.0], [1.0], [5.0], [0.3], "samples", 0.4),
             ("ftfa", [2.0, 1.5], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.0] * 2, "samples",
              0.5)]
    for method, *group, weights, eta in cases:
        b, v = steps_group_limits(method, *group, weights, Spectrum.identity(), 40, eta,
                                  targets=[0])
        low_b, low_v = log_bounds(method, *group, weights, np.arange(41), eta)
        assert np.all(np.isfinite(low_b[1:])) and np.all(low_b <= np.log(b[0]))
        assert np.isfinite(low_v[-1]) and np.all(low_v <= np.log(v[0]))


def test_divergent_steps_of_a_low_gamma_target_with_few_other_samples_proven_infinite():
    """F2: the same with the target's gamma < 1 (S invertible, the others' pooled N = d / 4):
    FTFA at gamma [0.5, 4] after 1000 steps of 1 was refused at max_seconds = 5 (no bound);
    Q = I - u u^T there (alpha = 1) and the bound holds, below the pencils at every k <= 40."""
    bias, var = clients_steps_limit("ftfa", gamma=[0.5, 4.0], sigma=1.0, r=1.0, steps=1000,
                                    step_size=1.0, max_seconds=5)
    assert bias == var == np.inf
    group = ([0.5, 4.0], [1.0, 2.0], [0.5, 1.0], [1.0, 2.0], [0.0] * 2)
    b, v = steps_group_limits("ftfa", *group, "uniform", Spectrum.identity(), 40, 1.0,
                              targets=[0])
    low_b, low_v = log_bounds("ftfa", *group, "uniform", np.arange(41), 1.0)
    assert np.all(np.isfinite(low_b[1:])) and np.all(low_b <= np.log(b[0]))
    assert np.isfinite(low_v[-1]) and np.all(low_v <= np.log(v[0]))


def test_steps_from_a_pooled_n_equal_to_d_name_it_before_the_estimate():
    """F3: steps_limit(clients=2) at gamma 2 (pooled N = d) after 1000 divergent steps of 1
    with max_seconds = 5 was refused for time ("at most 497 steps fit"), where 497 steps
    are refused for the pooled N: now the pooled N is named, as by clients_steps_limit."""
    with pytest.raises(ValueError, match="pooled N > d"):
        steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=1000, step_size=1.0,
                    clients=2, max_seconds=5)


@pytest.mark.parametrize("kw", [{}, {"clients": 3}, {"spectrum": "two-point:1,4,0.3"},
                                {"method": "rtfa", "gamma": 0.5, "lam": 2.0, "steps": 1}])
def test_a_step_past_the_floats_answers_without_warnings(kw):
    """F4: steps_limit with step_size 1e308 (eta x_hi overflows) answered inf with numpy's
    "overflow encountered in multiply" (and, under a spectrum, "invalid value" from the
    contour's geometry) in Python; the note already says "more than 1.8e+308"."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = steps_limit(**{"method": "ftfa", "gamma": 2.0, "r": 1.0, "sigma": 1.0,
                             "steps": 3, "step_size": 1e308, **kw})
    assert res.bias == res.variance == np.inf and not res.converges


def test_no_steps_under_a_spectrum_answer_at_any_step_size():
    """F5: under two-point:1,4,0.3, 0 steps of 1e308 answered bias inf (the contour's
    geometry built from the step overflowed), where 0 steps of any step size leave the global
    model: bias r^2 int t dH = 3.1 (as at step size 0.1), variance 0 (Sigma = I: 1, 0)."""
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=[0, 1], step_size=1e308,
                      spectrum="two-point:1,4,0.3")
    assert res.bias[0] == pytest.approx(3.1, rel=1e-12) and res.variance[0] == 0.0
    assert res.bias[1] == res.variance[1] == np.inf


def test_no_steps_under_a_spectrum_print_no_negative_zero(capsys):
    """F6: ``predict ftfa --steps 0 --spectrum two-point:1,4,0.3`` printed "variance -0"
    (the contour's integral of 0, -0.0)."""
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                              "--steps", "0", "--step-size", "0.1", "--spectrum",
                              "two-point:1,4,0.3"], capsys)
    assert code == 0 and "-0" not in out, out


def test_optimal_divergent_steps_from_a_finite_m_model_skip_the_proven_overflow():
    """F7: optimal_steps at gamma 2 with 3 clients, step 1 (past the edge), max_steps 1000,
    max_seconds 5 was refused ("give max_steps <= 497"): the estimate counted pencils up to
    1000 where the values are proven infinite from ~460 on (F1) and not solved. Now k = 0
    (risk 4 = bias 2 + variance 2, as steps_limit's k = 0)."""
    res = optimal_steps("ftfa", gamma=2.0, sigma=1.0, r=1.0, step_size=2.0, max_steps=1000,
                        clients=3, max_seconds=5)     # step 2: past the floats sooner
    assert res.params["steps"] == 0 and res.risk == pytest.approx(4.0, rel=1e-12)
    assert not res.converges


def test_divergent_steps_under_a_scaled_identity_proven_infinite_before_the_pencils():
    """F8: under scaled:2 (Sigma = 2 I) FTFA at gamma 2 with 3 clients after 1000 steps of
    0.5 was refused at max_seconds 5 (pencils estimated 40 s) where Sigma = I's 1000 steps of
    1 answer inf: Sigma = c I is Sigma = I with step c eta, lam / c, the bias times c (the
    pencils agree to 1e-14), so steps.overflow's bounds apply."""
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=[5, 1000], step_size=0.5,
                      clients=3, spectrum="scaled:2", max_seconds=5)
    ident = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=5, step_size=1.0,
                        clients=3)
    assert res.bias[0] == pytest.approx(2 * ident.bias, rel=1e-12)
    assert res.bias[1] == res.variance[1] == np.inf and not np.any(res.converges)
