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
    federation (OMP 1, a 2-core machine loaded by other sessions, load 4-10; the T = 10
    rows: the whole run less its edges and arcs, an upper bound on the pairs; 2026-11-27,
    measured again after issue 29's corner changes, the symmetric solve's eigenbases once per
    upper node, ``sigma_chain``, step 3; the fit kept)::

          M   K    T  nodes    pairs  ms/pair  /est.
          3  20   10    176     7832     1.21   0.93
         10  20   10    144     5256     2.59   0.95
          3  50   10    120     3660     4.21   0.93
         20  20   10    128     4160     4.13   0.86
         10  50   10    112     3192    11.18   0.83
          3  20  200    216    11772     1.13   0.87
         10  20  200    216    11772     2.34   0.86
         20  30   10    112     3192     7.55   0.76
          3  50  200    216    11772     3.51   0.78
         20  50  200    216    11772    20.08   0.77

    Measured / estimate 0.76-0.95 (0.79-1.00 before those changes; the M K^3 term fitted to
    0), the audit corner's own T = 200 pairs (M = 20, K = 50) included. The thin ellipses
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
    process CPU (OMP 1, a 2-core machine loaded by other sessions, load 4-10) of ``edges``
    and ``solve_arc`` within the whole curves of the audit's federation
    (``benchmarks/bench_rounds_pairs.py``: spectrum two-point:0.25,4,0.5, eta at 0.9 of the
    stability edge, rounds 0, 1, 10, T; one run each, 2026-11-27, after issue 29's corner
    changes: each predictor on the factors of the last Newton step and ``solve_arc`` following
    every 32nd node from above, ``chain_newton``; at T = 10 both contours follow the
    spectrum, one of ``nodes``; at T = 200 the one-point has 416; the last row is the audit
    corner itself, with its peak resident memory 2.7 GB)::

          M   K    T  nodes  edges s  /est.   arc s  /est.  whole s
          3  20   10    176     5.10   0.83    1.00   1.00     15.8
         10  20   10    144    10.40   0.84    1.80   0.97     25.9
          3  50   10    120    24.70   0.95    3.10   0.99     43.4
         20  20   10    128    19.10   0.90    2.50   0.85     39.0
         10  50   10    112    57.00   0.73    8.20   0.91    101.2
          3  20  200    216     5.40   0.88    2.80   0.78     21.7
         10  20  200    216    10.90   0.88    6.80   0.84     45.3
         20  30   10    112    40.90   0.85    5.10   0.87     70.3
          3  50  200    216    23.50   0.91   13.50   0.82     78.5
         20  50  200    216   153.40   1.00   82.60   0.82    473.0

    Measured / estimate: edges 0.73-1.00, arcs 0.78-1.00 (the edges' scan classifies as many
    points as the spectrum asks: M = 10, K = 50 fewer than the corner). Before those changes
    (the previous fit, same federation and load): edges 5.32, 12.95, 27.22, 22.81, 70.09 s and
    arcs 1.69, 3.81, 7.74, 6.09, 21.29 s on the first five rows, 5.80 / 5.40, 14.10 / 16.40 and
    27.90 / 38.00 s on the T = 200 ones; the audit corner M = 20, K = 50, T = 200 estimated
    761 s (pairs 309, arcs 262, edges 190: refused), now 563 s (309, 101, 153: accepted), and
    measured 473 s (pairs 236, arcs 83, edges 153). The pairs: ``fedavg_pair_seconds`` (0.31-0.51 of
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
ARC_FIT = (1.146, 0.00456, 3.8e-06, 3.33e-08)
EDGE_FIT = (1.157, 0.00848, 4.26e-06, 6.3e-08)
#: The edges' cost in node solves when both are confirmed as folds (``pencil_edges``, step 5):
#: the density scan (measured M = 10, K = 30: about 200 of them, 24 grid points; it grows with
#: the points classified, up to 64 when the spectrum is a narrow band in the middle of the
#: scan) and the folds with their confirmation (measured M = 10, K = 50: about 35-55).
EDGE_SOLVES = 350
#: The cost of bisecting an edge that is not confirmed (the count before the folds: about
#: 550 for both), added by ``sigma.fedavg.curves`` before it bisects (refused if then too long).
BISECT_SOLVES = 300
