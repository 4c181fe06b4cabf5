"""Issue 32, fuzz40 (path): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc

BASE = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)


@pytest.mark.parametrize("rounds", [[2 ** 53 + 1], 2 ** 53 + 1, np.array([2 ** 53 + 1]),
                                    [1, np.inf, 2 ** 53 + 1], [np.uint64(2 ** 53 + 1)]])
def test_rounds_past_two_to_the_53_refused_before_rounding(rounds):
    """F1: ``rounds_limit(rounds=[2**53 + 1])`` was solved as T = 2^53 (its float) and returned
    ``rounds`` [9.007e15]; the command line refused the same T."""
    with pytest.raises(ValueError, match="rounds must be integers in 0..9007199254740992"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=rounds, local_steps=1, step_size=0.1)


def test_local_steps_past_two_to_the_53_refused_before_rounding():
    """F1: ``local_steps=2**53 + 1`` was taken as K = 2^53 (``params`` said so)."""
    with pytest.raises(ValueError, match="local_steps must be one integer"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=[1], local_steps=2 ** 53 + 1,
                              step_size=0.1)


@pytest.mark.parametrize("method, extra, route", [("fedavg", {}, "fedavg"),
                                                  ("pfedme", {"lam": 1.0}, "pfedme_steps")])
def test_thousands_of_local_steps_at_the_exact_solve_take_its_route(method, extra, route,
                                                                    monkeypatch):
    """F2: K = 5000 local steps of 0.1 at gamma (0.5, 2) equal the exact local solve to
    rounding, yet only K > 10^4 was taken as it: FedAvg took 22 s, Algorithm 1 135 s, for the
    numbers K = inf gives in 0.05-0.3 s. Now from K = 1000 on they take the exact route."""
    from riskcalc.linear.dynamics import ROUTES

    exact = riskcalc.rounds_limit(method, **BASE, rounds=[1, 10], local_steps=np.inf, **extra)
    if route == "pfedme_steps":
        def refuse(*args):
            raise AssertionError("solved K steps as such")
        monkeypatch.setitem(ROUTES, route, refuse)
    else:
        seen = []
        solve = ROUTES[route]
        monkeypatch.setitem(ROUTES, route, lambda *a: seen.append(a[6]) or solve(*a))
    many = riskcalc.rounds_limit(method, **BASE, rounds=[1, 10], local_steps=5000,
                                 step_size=0.1, **extra)
    assert np.array_equal(many.risk, exact.risk) and many.params["local_steps"] == 5000
    if route == "fedavg":
        assert seen == [np.inf]
