"""Issue 32, fuzz36 (api): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import figures
import montecarlo
import riskcalc
from riskcalc import minimax as mm

TWO = np.array(["auto", "closed"])


@pytest.mark.parametrize("call, name", [
    (lambda: riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, route=TWO), "route"),
    (lambda: riskcalc.limit("rtfa", gamma=0.5, r=1.0, sigma=0.5, lam=0.5, clients=3,
                            route=TWO), "route"),
    (lambda: riskcalc.limit("rtfa", gamma=0.5, r=1.0, sigma=0.5, lam=0.5, clients=2,
                            weights=np.array([0.5, 0.5])), "weights"),
    (lambda: riskcalc.optimal_lambda("rtfa", gamma=2.0, r=1.0, sigma=0.5, how=TWO), "how"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, centre=TWO),
     "centre"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, method=TWO),
     "method"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, clients=5,
                                     global_lam=1e-3, weights=np.ones(5)), "weights"),
    (lambda: mm.optimal_method(1.0, 0.5, oracle=TWO), "oracle"),
    (lambda: mm.fedprox_regime(0.5, 1000, 10, kind=TWO), "kind"),
    (lambda: mm.evaluate(["fedavg_aer"]), "unknown bound"),
    (lambda: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3,
                                measure=TWO), "measure"),
    (lambda: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=60, reps=3,
                                eigvecs=TWO), "eigvecs"),
    (lambda: figures.get_figure(["p003-region"]), "unknown figure"),
])
def test_a_choice_given_as_an_array_is_named(call, name, monkeypatch):
    """F1: a named choice (route, how, centre, weights, oracle, kind, measure, ...) given as an
    array was numpy's "The truth value of an array ... is ambiguous" (naming nothing), and a
    list for a bound's or a figure's name was a TypeError "unhashable type"."""
    monkeypatch.setattr("figures.core.load_all", lambda: {})   # its 1 s of imports
    with pytest.raises(ValueError) as info:
        call()
    assert name in str(info.value) and "ambiguous" not in str(info.value), str(info.value)
