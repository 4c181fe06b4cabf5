"""Issue 32, fuzz38 (steps): what this fuzz found, each test failing before."""

import warnings

import numpy as np
import pytest

import riskcalc


@pytest.mark.parametrize("kind", ["conditional", "empirical"])
def test_simulated_divergent_steps_from_the_federated_model_overflow_to_inf(kind):
    """F1: ``compare rtfa --gamma 2 --lam 0.5 --steps 300 --step-size 1 --clients 4 --global
    federated --d 30`` printed the simulated bias, variance and risk as "nan" (the filter's
    k-th power overflowed, and inf - inf in the federated sums was NaN), beside a predicted
    "overflow"; from Python, numpy's overflow warnings. Now infinite, without warnings."""
    from montecarlo.linear.instances import Setting, sample_instance
    from montecarlo.linear.measure import measure

    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=1.0, lam=0.5)
    inst = sample_instance(spec, Setting(d=30, clients=4, global_model="federated"), 0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = measure(inst, "rtfa", [0.5], kind=kind, steps=300, step_size=1.0)
    assert all(np.isposinf(out[q]).all() for q in ("bias", "variance", "risk"))


def test_summary_of_an_overflowed_simulation_against_an_overflowed_prediction_is_quiet():
    """F1: ``montecarlo.compare`` of diverging steps warned "invalid value encountered in
    subtract" (inf - inf in the coverage check); neither is inside an interval."""
    from montecarlo.compare import summarize

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = summarize(np.full((3, 1), np.inf), [np.inf])
    assert not out["inside"][0] and np.isposinf(out["mean"][0])
