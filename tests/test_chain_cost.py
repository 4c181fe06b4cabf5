"""``chain_cost.fedavg_chain_seconds``: its arcs, edges and pairs terms against the measured
samples its docstrings list (process CPU of ``benchmarks/bench_rounds_pairs.py``'s federation): each
estimate at or above the measured time and less than 1 / 0.7 times it (the table's ratios
those of the code's constants), so the refusals stay honest and the corner's estimate is not
inflated; and ``algorithm1.cost.alg1_chain_seconds`` against the whole runs its docstring lists
(``benchmarks/bench_rounds_alg1_chain.py``)."""

import re

import numpy as np
import pytest

from riskcalc.linear.dynamics.sigma import chain_cost
from riskcalc.linear.dynamics.sigma.algorithm1 import cost as alg1_cost


def _table():
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                      r"\s+([\d.]+)\s+([\d.]+)\s*$", chain_cost.fedavg_chain_seconds.__doc__, re.M)
    assert len(rows) >= 5
    return [tuple(int(v) for v in r[:4]) + tuple(float(v) for v in r[4:]) for r in rows]


@pytest.mark.parametrize("M, K, T, nodes, edges, edges_ratio, arc, arc_ratio, total", _table())
def test_measured_parts_within_the_estimate(M, K, T, nodes, edges, edges_ratio, arc, arc_ratio,
                                            total):
    # The one-point contour as ``fedavg._contour`` draws it: max(2 T + 16, 40 / t) nodes, the
    # double contour max(T + 16, 40 / t): both 40 / t when the double has more than T + 16.
    one_point = 2 * T + 16 if nodes == T + 16 else nodes
    est_edges = chain_cost.EDGE_SOLVES * chain_cost.fitted(chain_cost.EDGE_FIT, M, K, 2)
    est_arc = chain_cost.arc_solves(nodes, one_point) * chain_cost.fitted(chain_cost.ARC_FIT,
                                                                          M, K, 2)
    for got, est, ratio in ((edges, est_edges, edges_ratio), (arc, est_arc, arc_ratio)):
        assert 0.7 <= got / est <= 1.0 + 1e-9
        assert got / est == pytest.approx(ratio, abs=0.006)
    # The whole estimate adds the pairs' (fitted apart) to these two.
    assert chain_cost.fedavg_chain_seconds(M, K, 2, nodes, one_point=one_point) == pytest.approx(
        est_edges + est_arc
        + chain_cost.fedavg_pair_seconds(M, K, 2) * (nodes // 2) * (nodes // 2 + 1))
    assert total >= edges + arc


def test_arc_solves_default_is_the_most():
    """By default the arcs are charged as a rounds-driven one-point contour (2 nodes - 16),
    at least what any contour with ``nodes`` double-contour nodes solves."""
    assert chain_cost.arc_solves(216) == chain_cost.arc_solves(216, 416) == 208 + 108
    assert chain_cost.arc_solves(96, 96) == 48
    assert all(chain_cost.arc_solves(n) >= chain_cost.arc_solves(n, m)
               for n in (40, 96, 216) for m in range(n, 2 * n - 15))


def _pair_table():
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s*$",
                      chain_cost.fedavg_pair_seconds.__doc__, re.M)
    assert len(rows) >= 5
    return [tuple(int(v) for v in r[:5]) + tuple(float(v) for v in r[5:]) for r in rows]


@pytest.mark.parametrize("M, K, T, nodes, pairs, ms, ratio", _pair_table())
def test_measured_pairs_within_the_estimate(M, K, T, nodes, pairs, ms, ratio):
    """FedAvg's pairs on real contours (T = 10 and 200): the estimate at or above each, within
    1 / 0.75 of it; the pairs counted as the chain solves them (half the double contour's)."""
    assert pairs == (nodes // 2) * (nodes // 2 + 1) and nodes >= T + 16
    got = 1e-3 * ms / chain_cost.fedavg_pair_seconds(M, K, 2)
    assert 0.75 <= got <= 1.0 + 1e-9
    assert got == pytest.approx(ratio, abs=0.006)


def test_one_atom_costs_as_two_and_more_atoms_more():
    for fit in (chain_cost.ARC_FIT, chain_cost.EDGE_FIT, chain_cost.PAIR_FIT):
        one, two, four = (chain_cost.fitted(fit, 20, 50, a) for a in (1, 2, 4))
        assert one == two < four
    assert np.isfinite(chain_cost.fedavg_chain_seconds(20, 50, 2, 216))


def _alg1_table():
    doc = alg1_cost.alg1_chain_seconds.__doc__
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)" + r"\s+([\d.]+)" * 5 + r"\s*$", doc,
                      re.M)
    assert len(rows) >= 4
    return [tuple(int(v) for v in r[:4]) + tuple(float(v) for v in r[4:]) for r in rows]


@pytest.mark.parametrize("M, K, T, nodes, edges, arcs, pairs, total, ratio", _alg1_table())
def test_algorithm1_runs_within_the_estimate(M, K, T, nodes, edges, arcs, pairs, total, ratio):
    """``algorithm1.cost.alg1_chain_seconds`` (one edge scan, g lam = 1, two atoms) at or
    above each measured whole run of its table and less than 1 / 0.7 times it; the contour
    with at least T + 16 and 40 nodes, the parts within the total."""
    assert nodes >= max(T + 16, 40) and edges + arcs + pairs <= total
    got = total / alg1_cost.alg1_chain_seconds(M, K, 2, nodes)
    assert 0.7 <= got <= 1.0 + 1e-9
    assert got == pytest.approx(ratio, abs=0.006)
