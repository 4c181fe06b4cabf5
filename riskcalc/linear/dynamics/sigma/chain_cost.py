"""The estimated process seconds of FedAvg's chain route (``sigma_chain``), from which
``sigma.fedavg.curves`` refuses, before solving, a federation beyond its time limit: the pair and
node solves (``chain_seconds``) and the edges' cost in node solves (``EDGE_SOLVES``,
``BISECT_SOLVES``)."""

from __future__ import annotations


def chain_seconds(M, K, atoms, nodes, edges=None):
    """Estimated process seconds of the chain route with ``nodes`` double-contour nodes (the
    one-point contour has 2 nodes - 16): nodes / 2 (nodes / 2 + 1) pairs
    (``ChainPencil.two_point`` with ``symmetric``) at 1.27 (2.04e-3 + a (4.59e-7 M K^2 +
    4.66e-9 M K^3)) s each (a = atoms / 2, at least 1; both couplings), and the fixed points at
    the upper halves of both contours (``ChainPencil.solve_arc``) and the edges
    (``pencil_edges.edges``: ``edges`` of them, default EDGE_SOLVES) at 1.05
    (1.22e-2 + a (9.44e-6 M K^2 + 1.65e-7 M K^3)) s each. The pairs: refitted after issue 29's
    changes (``chain_basis``: matrix products, larger chunks, ``gmres``'s exits,
    ``unsure_systems``) on process CPU (OMP 1, a 2-core machine loaded by four other sessions)
    of samples at (M, K) = (3, 20) twice, (10, 20) twice, (3, 50), (20, 10), (10, 50), (20, 30),
    (20, 50) (16 nodes of a thin ellipse along an arc and their conjugates, half of the 16 x 32
    pairs, both couplings, the audit's spectrum two-point:0.25,4,0.5), relative least squares:
    measured / fitted 0.88-1.27, and 1.27 the largest (the fit before, 1.98e-3 + a (4.92e-7
    M K^2 + 9.2e-9 M K^3), was 1.3-1.5 times these at M K^2 >= 25000; the audit corner's own
    contour, M = 20, K = 50, 48 upper nodes of T = 10 replayed: 25-31 ms per pair, 0.54-0.66
    of this estimate). The nodes and edges: fitted before on the samples (3, 20), (10, 20),
    (3, 50), (10, 50), (20, 30), (20, 50), raised by 1.05 (the largest measured / fitted); at
    the corner M = 20, K = 50, T = 10 (2026-11-27, loaded) the arcs measured 37.5 s for 144
    node solves (0.29 of the estimate) and the edges 203 s (0.61 of 350 node solves): not
    refitted on that one case, so the estimate stays long there. One atom costs as two
    (GMRES's Gram-Schmidt does not shrink with the atoms). End to end against the estimate:
    ``benchmarks/bench_rounds_sigma_k_scaling.py --end-to-end``,
    ``benchmarks/bench_rounds_pairs.py``."""
    half = 0.5 * max(atoms, 2)
    per_pair = 1.27 * (2.04e-3 + half * (4.59e-7 * M * K ** 2 + 4.66e-9 * M * K ** 3))
    per_node = 1.05 * (1.22e-2 + half * (9.44e-6 * M * K ** 2 + 1.65e-7 * M * K ** 3))
    edges = EDGE_SOLVES if edges is None else edges
    return per_pair * (nodes // 2) * (nodes // 2 + 1) + per_node * (nodes // 2 + nodes + edges)


#: ``chain_seconds``: the edges' cost in node solves of ``ChainPencil.solve_arc`` when both are
#: confirmed as folds (``pencil_edges``, step 5): the density scan (measured M = 10, K = 30:
#: about 200 of them, 24 grid points; it grows with the points classified, up to 64 when the
#: spectrum is a narrow band in the middle of the scan) and the folds with their confirmation
#: (measured M = 10, K = 50: 15-24 s, about 35-55).
EDGE_SOLVES = 350
#: The cost of bisecting an edge that is not confirmed (the count before the folds: about
#: 550 for both), added by ``sigma.fedavg.curves`` before it bisects (refused if then too long).
BISECT_SOLVES = 300
