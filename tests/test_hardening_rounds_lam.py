"""Issue 32, item 1 of the last note: Algorithm 1's rounds (Sigma = I, finite K) at a small
eta lam. The round map's top nears 1 like 1 - O(eta lam), its contours' nodes and the
Marchenko-Pastur rule grow with it (lam 0.01: 14 s of CPU, lam 0.003: minutes), and the route
ignored ``max_seconds`` and ``max_gigabytes`` (three clients at gamma 2, lam 0.03: killed for
want of memory at 24 GB). Now its time and peak memory are estimated before the contours, before
each finer rule (``algorithm1.contours.accepted_rule``) and before the two-point traces
(``riskcalc.linear.dynamics.algorithm1.cost``) and refused beyond the budgets, naming what would
fit. (The estimates against measured CPU and peak memory: ``cost.curves_seconds``' table.)"""

import tracemalloc

import pytest

import riskcalc
from riskcalc.linear.dynamics.algorithm1 import contours, cost, curves

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


def test_refused_before_the_contours(monkeypatch):
    """Three clients at gamma 2, lam 0.03 (pooled N / d = 1.5, 1 - top = 4e-5): refused on
    memory at once, before any subordination solve at a contour's nodes."""
    def fail(*args):
        raise AssertionError("a contour was solved before the refusal")

    monkeypatch.setattr(contours, "subordinate", fail)
    three = dict(CASE, gamma=[2.0] * 3, r=[0.5] * 3, sigma=[0.5] * 3)
    with pytest.raises(ValueError, match=r"at least .* GB at its peak.*larger lam.*max_gigabytes"):
        riskcalc.rounds_limit("pfedme", lam=0.03, **three)
    with pytest.raises(ValueError, match=r"take at least .* s .*max_seconds"):
        riskcalc.rounds_limit("pfedme", lam=0.03, max_gigabytes=1e3, max_seconds=10, **three)


def test_checks_before_each_rule_are_lower_bounds_of_the_last(monkeypatch):
    """Every check before a rule is tried uses the contours' own node counts and a rule no
    finer than the accepted one, so it never refuses what the final check would let run."""
    seen = []
    check = cost.check_curves

    def spy(M, n1, n2, q, top, rho, final=True):
        seen.append((n1, n2, q, final))
        return check(M, n1, n2, q, top, rho, final)

    monkeypatch.setattr(curves, "check_curves", spy)
    riskcalc.rounds_limit("pfedme", lam=0.1, **CASE)
    *before, last = seen
    assert last[3] and not any(b[3] for b in before)
    assert [b[2] for b in before] == [64, 128, 64, 128]     # two contours, each rule tried
    assert all(b[:2] == last[:2] and b[2] <= last[2] for b in before)


def test_peak_memory_within_the_estimate():
    """The traced peak of the numpy arrays of one call stays below ``cost.curves_bytes`` at the
    accepted sizes (the estimate counts about a dozen arrays of each shape, times 1.2)."""
    seen = []
    check = cost.check_curves

    def spy(M, n1, n2, q, top, rho, final=True):
        seen.append(cost.curves_bytes(M, n1, n2, q))
        return check(M, n1, n2, q, top, rho, final)

    tracemalloc.start()
    try:
        curves.check_curves = spy
        riskcalc.rounds_limit("pfedme", lam=0.3, **CASE)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        curves.check_curves = check
        tracemalloc.stop()
    assert 0.3 * seen[-1] < peak < seen[-1]


def test_contour_beyond_its_nodes_names_the_step_not_the_rounds():
    """step_size 1e-12: the round map's top within 2e-13 of 1 needs more contour nodes than
    ``fedavg.MAX_NODES``; the refusal was FedAvg's ("spectrum too close to 0 ... ask fewer
    rounds or lower global_step"), which is not this route's cause."""
    with pytest.raises(riskcalc.SolverError,
                       match=r"top 1 - .* so near 1 .*larger lam or step_size"):
        riskcalc.rounds_limit("pfedme", gamma=[0.5] * 3, r=0.5, sigma=0.5, signal=1.0, lam=0.5,
                              rounds=[5], local_steps=1, step_size=1e-12)


@pytest.mark.parametrize("g", [1e6])
def test_divergent_server_step_named(g):
    """global_step 1e4 and 1e6 at lam = 1 (contraction far above 1): the refusal said "the
    round map's top 1 - 0.03 is so near 1" and asked for a larger lam (fuzz26 #4); it names
    the divergence and a smaller global_step. (1e4 answers since fuzz40 path F7, on the
    spectrum route at the identity: tests/test_fuzz40_path.py.)"""
    with pytest.raises((ValueError, riskcalc.SolverError),
                       match=r"diverges \(contraction .* > 1.*smaller global_step"):
        riskcalc.rounds_limit("pfedme", gamma=[0.5] * 3, r=1.0, sigma=1.0, signal=1.0, lam=1.0,
                              rounds=[10], local_steps=1, step_size=0.1, global_step=g)
