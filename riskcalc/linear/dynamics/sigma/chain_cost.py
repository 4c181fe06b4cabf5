"""The estimated process seconds of FedAvg's chain routes, from which ``sigma.fedavg.curves``
(``fedavg_chain_seconds``) and the covariate shift's chain (``chain_seconds``) refuse, before
solving, a federation beyond their time limit: the pair and node solves and the edges' cost in
node solves (``EDGE_SOLVES``, ``BISECT_SOLVES``)."""

from __future__ import annotations


def pair_seconds(M, K, atoms):
    """Seconds per pair (``ChainPencil.two_point`` with ``symmetric``, both couplings):
    1.27 (2.04e-3 + a (4.59e-7 M K^2 + 4.66e-9 M K^3)), a = atoms / 2, at least 1. Refitted
    after issue 29's changes (``chain_basis``: matrix products, larger chunks, ``gmres``'s exits,
    ``unsure_systems``) on process CPU (OMP 1, a 2-core machine loaded by four other sessions)
    of samples at (M, K) = (3, 20) twice, (10, 20) twice, (3, 50), (20, 10), (10, 50), (20, 30),
    (20, 50) (16 nodes of a thin ellipse along an arc and their conjugates, half of the 16 x 32
    pairs, both couplings, the audit's spectrum two-point:0.25,4,0.5), relative least squares:
    measured / fitted 0.88-1.27, and 1.27 the largest (the audit corner's own contour, M = 20,
    K = 50, 48 upper nodes of T = 10 replayed: 25-31 ms per pair, 0.54-0.66 of this). One atom
    costs as two (GMRES's Gram-Schmidt does not shrink with the atoms)."""
    half = 0.5 * max(atoms, 2)
    return 1.27 * (2.04e-3 + half * (4.59e-7 * M * K ** 2 + 4.66e-9 * M * K ** 3))


def fedavg_pair_seconds(M, K, atoms):
    """Seconds per pair of FedAvg's chain (``sigma.fedavg.curves``: ``ChainPencil.two_point``,
    symmetric, both couplings, on the real double contour), ``fitted(PAIR_FIT, ...)``: fitted
    (relative least squares, non-negative, raised by the largest measured / fitted) on the
    process CPU of the pairs within the whole curves of ``benchmarks/bench_rounds_pairs.py``'s
    federation (OMP 1, a 2-core machine loaded by four other sessions, load 4-9; the T = 10
    rows: the whole run less its edges and arcs, an upper bound on the pairs; 2026-11-27)::

          M   K    T  nodes    pairs  ms/pair  /est.
          3  20   10    176     7832     1.10   0.84
         10  20   10    144     5256     2.73   1.00
          3  50   10    120     3660     4.44   0.98
         20  20   10    128     4160     4.42   0.93
         10  50   10    112     3192    11.30   0.84
         20  30   10    112     3192     8.13   0.82
         20  50   10     96     2352    22.70   0.87
          3  20  200    216    11772     1.14   0.87
         10  20  200    216    11772     2.32   0.85
          3  50  200    216    11772     3.59   0.79

    Measured / estimate 0.79-1.00 (the M K^3 term fitted to 0). The corner's own T = 200
    pairs (M = 20, K = 50) are not measured (its run was stopped unfinished). The thin ellipses
    ``pair_seconds`` was fitted on cost 2-3 times these contours' pairs (0.31-0.51 of it
    here); it stays for the covariate shift's chain (``chain_seconds``), whose pairs were not
    measured on real contours."""
    return fitted(PAIR_FIT, M, K, atoms)


def _pairs(nodes):
    """The pairs solved on a double contour of ``nodes`` nodes (half of them by symmetry)."""
    return (nodes // 2) * (nodes // 2 + 1)


def chain_seconds(M, K, atoms, nodes, edges=None):
    """Estimated process seconds of the covariate shift's chain route (``shift.curves``) with
    ``nodes`` double-contour nodes: the pairs (``pair_seconds``) and nodes / 2 + nodes node
    solves plus ``edges`` (default EDGE_SOLVES) for the arcs and the edges, each at 1.05
    (1.22e-2 + a (9.44e-6 M K^2 + 1.65e-7 M K^3)) s: FedAvg's node cost fitted before
    ``solve_arc`` (samples (3, 20), (10, 20), (3, 50), (10, 50), (20, 30), (20, 50), raised by
    the largest measured / fitted, 1.05), kept for the shift's chain, whose arcs and edges were
    not measured apart (for FedAvg's they are 0.3-0.6 of it: ``fedavg_chain_seconds``)."""
    half = 0.5 * max(atoms, 2)
    per_node = 1.05 * (1.22e-2 + half * (9.44e-6 * M * K ** 2 + 1.65e-7 * M * K ** 3))
    edges = EDGE_SOLVES if edges is None else edges
    return pair_seconds(M, K, atoms) * _pairs(nodes) + per_node * (nodes // 2 + nodes + edges)


def arc_solves(nodes, one_point=None):
    """The node solves of ``solve_arc`` in ``sigma.fedavg.curves``: the upper halves of the
    one-point contour (``one_point`` nodes; by default 2 ``nodes`` - 16, the most it has when
    the double contour has ``nodes``: rounds-driven) and of the double contour (``nodes``),
    which is the one-point contour itself when both follow the spectrum (equal counts)."""
    one_point = 2 * nodes - 16 if one_point is None else one_point
    return one_point // 2 + (nodes // 2 if one_point != nodes else 0)


def fedavg_chain_seconds(M, K, atoms, nodes, edges=None, one_point=None):
    """Estimated process seconds of FedAvg's chain route (``sigma_chain``) with ``nodes``
    double-contour nodes: the pairs (``fedavg_pair_seconds``), the fixed points at the upper
    halves of both contours (``ChainPencil.solve_arc``; ``arc_solves(nodes, one_point)`` at
    ARC_FIT), and the edges (``pencil_edges.edges``: the density scan and the folds),
    ``edges`` (default EDGE_SOLVES) solves at EDGE_FIT, each fit c0 + a (c1 M K^2 + c2 M K^3)
    s (a = atoms / 2, at least 1). Fitted (relative least squares, non-negative, then raised
    by the largest measured / fitted, so that the estimate is at least every sample) on the
    process CPU (OMP 1, a 2-core machine loaded by four other sessions, load 4-9) of
    ``edges`` and ``solve_arc`` within the whole curves of the audit's federation
    (``benchmarks/bench_rounds_pairs.py``: spectrum two-point:0.25,4,0.5, eta at 0.9 of the
    stability edge, rounds 0, 1, 10, T; one run each, 2026-11-27; at T = 10 both contours
    follow the spectrum, one of ``nodes``; at T = 200 the one-point has 416)::

          M   K    T  nodes  edges s  /est.   arc s  /est.  whole s
          3  20   10    176     5.32   0.82    1.69   0.94     15.6
         10  20   10    144    12.95   0.86    3.81   0.96     31.1
          3  50   10    120    27.22   0.88    7.74   1.00     51.2
         20  20   10    128    22.81   0.84    6.09   0.91     47.3
         10  50   10    112    70.09   0.73   21.29   0.91    127.5
         20  30   10    112    49.54   0.80   11.71   0.83     87.2
         20  50   10     96   189.12   0.99   34.35   0.86    278.0
          3  20  200    216     5.80   0.90    5.40   0.84     24.7
         10  20  200    216    14.10   0.94   16.40   0.94     57.9
          3  50  200    216    27.90   0.90   38.00   0.93    108.4

    Measured / estimate: edges 0.73-0.99, arcs 0.83-1.00 (the edges' scan classifies as many
    points as the spectrum asks: M = 10, K = 50 fewer than the corner). The arcs were fitted
    before (issue 29's "corner") to nodes / 2 + nodes solves at T = 10, where the route solved
    nodes / 2: three times too cheap a solve, so T = 200 (316 solves at 216 nodes) measured
    2.3-2.8 times that estimate. The pairs: ``fedavg_pair_seconds`` (0.31-0.51 of
    ``pair_seconds``, fitted on thin ellipses, on these contours). End to end:
    ``benchmarks/bench_rounds_pairs.py``, ``benchmarks/bench_rounds_sigma_k_scaling.py
    --end-to-end``."""
    edges = EDGE_SOLVES if edges is None else edges
    return (fedavg_pair_seconds(M, K, atoms) * _pairs(nodes)
            + fitted(ARC_FIT, M, K, atoms) * arc_solves(nodes, one_point)
            + fitted(EDGE_FIT, M, K, atoms) * edges)


def fitted(fit, M, K, atoms):
    """Seconds per solve of ``fit`` = (scale, c0, c1, c2) (``ARC_FIT``, ``EDGE_FIT``): scale
    (c0 + a (c1 M K^2 + c2 M K^3)), a = atoms / 2, at least 1 (one atom costs as two, as the
    pairs)."""
    scale, c0, c1, c2 = fit
    return scale * (c0 + 0.5 * max(atoms, 2) * (c1 * M * K ** 2 + c2 * M * K ** 3))


#: ``fedavg_chain_seconds``: (scale, c0, c1, c2) of a pair (``fedavg_pair_seconds``), of a node
#: solve of ``solve_arc`` and of one of the edges' EDGE_SOLVES.
PAIR_FIT = (1.13, 6.13e-4, 4.52e-7, 0.0)
ARC_FIT = (1.106, 4.93e-3, 8.76e-06, 1.228e-07)
EDGE_FIT = (1.2, 0.00674, 6.13e-06, 5.58e-08)
#: The edges' cost in node solves when both are confirmed as folds (``pencil_edges``, step 5):
#: the density scan (measured M = 10, K = 30: about 200 of them, 24 grid points; it grows with
#: the points classified, up to 64 when the spectrum is a narrow band in the middle of the
#: scan) and the folds with their confirmation (measured M = 10, K = 50: about 35-55).
EDGE_SOLVES = 350
#: The cost of bisecting an edge that is not confirmed (the count before the folds: about
#: 550 for both), added by ``sigma.fedavg.curves`` before it bisects (refused if then too long).
BISECT_SOLVES = 300
