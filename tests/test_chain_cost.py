"""``chain_cost.fedavg_chain_seconds``: its arcs and edges terms against the measured samples
its docstring lists (process CPU of ``benchmarks/bench_rounds_pairs.py``'s federation): each
estimate at or above the measured time and less than 1 / 0.7 times it (the table's ratios
those of the code's constants), so the refusals stay honest and the corner's estimate is not
inflated."""

import re

import numpy as np
import pytest

from riskcalc.linear.dynamics.sigma import chain_cost


def _table():
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                      r"\s+([\d.]+)\s*$", chain_cost.fedavg_chain_seconds.__doc__, re.M)
    assert len(rows) >= 5
    return [tuple(int(v) for v in r[:3]) + tuple(float(v) for v in r[3:]) for r in rows]


@pytest.mark.parametrize("M, K, nodes, edges, edges_ratio, arc, arc_ratio, total", _table())
def test_measured_parts_within_the_estimate(M, K, nodes, edges, edges_ratio, arc, arc_ratio,
                                            total):
    est_edges = chain_cost.EDGE_SOLVES * chain_cost.fitted(chain_cost.EDGE_FIT, M, K, 2)
    est_arc = (nodes // 2 + nodes) * chain_cost.fitted(chain_cost.ARC_FIT, M, K, 2)
    for got, est, ratio in ((edges, est_edges, edges_ratio), (arc, est_arc, arc_ratio)):
        assert 0.7 <= got / est <= 1.0 + 1e-9
        assert got / est == pytest.approx(ratio, abs=0.006)
    # The whole estimate adds the pairs' (fitted apart) to these two.
    assert chain_cost.fedavg_chain_seconds(M, K, 2, nodes) == pytest.approx(
        est_edges + est_arc + chain_cost.pair_seconds(M, K, 2) * (nodes // 2) * (nodes // 2 + 1))
    assert total >= edges + arc


def test_one_atom_costs_as_two_and_more_atoms_more():
    for fit in (chain_cost.ARC_FIT, chain_cost.EDGE_FIT):
        one, two, four = (chain_cost.fitted(fit, 20, 50, a) for a in (1, 2, 4))
        assert one == two < four
    assert np.isfinite(chain_cost.fedavg_chain_seconds(20, 50, 2, 216))
