"""Issue 32, item 1 of the last note: Algorithm 1's rounds (Sigma = I, finite K) at a small
eta lam. The round map's top nears 1 like 1 - O(eta lam), its contours' nodes and the
Marchenko-Pastur rule grow with it (lam 0.01: 14 s of CPU, lam 0.003: minutes), and the route
ignored ``max_seconds``. Now its work is estimated after the contours (cheap here; not yet
bounded themselves, minutes at lam 0.01 with three clients at gamma 2) and before the
two-point traces (``riskcalc.linear.dynamics.algorithm1.cost``) and refused beyond the budget,
naming what would fit. (The estimate against measured CPU: ``cost.curves_seconds``' table.)"""

import pytest

import riskcalc
from riskcalc.linear.dynamics.algorithm1 import curves

CASE = dict(gamma=[2.0, 0.5], r=[0.5, 0.5], sigma=[0.5, 0.5], signal=1.0, rounds=[5],
            local_steps=1, step_size=0.05)


def test_refused_beyond_max_seconds_naming_what_fits():
    with pytest.raises(ValueError, match=r"larger lam or step_size.*max_seconds"):
        riskcalc.rounds_limit("pfedme", lam=0.3, max_seconds=0.05, **CASE)


def test_refused_before_the_two_point_work(monkeypatch):
    def fail(*args):
        raise AssertionError("the two-point traces ran before the refusal")

    monkeypatch.setattr(curves, "_pair_terms", fail)
    with pytest.raises(ValueError, match="Algorithm 1's curves would take"):
        riskcalc.rounds_limit("pfedme", lam=0.3, max_seconds=0.05, **CASE)
