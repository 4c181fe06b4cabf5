"""The time estimate of paper 004's Algorithm 1 under covariate shift on its chain route
(``shift.algorithm1.chain``) and its refusal beyond ``sigma.algorithm1.cost.MAX_SECONDS``
(or the budget) naming what would fit, checked before the edge scans (with the fewest nodes
a contour takes) and again once the contour is known; the memory check is the shared
spectrum's (``sigma.algorithm1.cost.memory_check``: the same nodes' factors, the two-point
chunks bounded by ``chain._CHUNK_BYTES``)."""

from __future__ import annotations

from riskcalc.linear.dynamics.sigma.algorithm1.cost import _affordable, memory_check

__all__ = ["memory_check", "shift_alg1_affordable", "shift_alg1_seconds"]


def shift_alg1_seconds(M, K, atoms, nodes, scans=1):
    """Estimated process seconds of the chain route under shift with ``nodes`` contour nodes:
    (nodes / 2 + 1) (nodes / 2 + 2) pairs (three couplings each, solved by GMRES in X:
    O(atoms M K^3) per product), nodes / 2 + 1 node solves and ``scans`` edge scans (Newton
    by GMRES in X too), each term c0 + atoms (c1 M K^2 + c2 M K^3), times ``MARGIN``. Fitted
    to process CPU (one BLAS thread, a 2-core machine at load about 6 from other sessions) of
    anti-aligned two-point clients (2 joint atoms), g = 1, with (M, K, T): pairs per pair on
    (2, 11, 10), (2, 20, 10), (2, 30, 10), (3, 10, 40), (4, 10, 20), (2, 11, 100): 3.0e-3,
    9.2e-3, 2.1e-2, 2.7e-3, 3.9e-3, 2.3e-3 s (the fit 0.95-1.3 of these); scans 1.47 / 4.87 /
    1.57 / 1.93 s at (2, 11), (2, 30), (3, 10), (4, 10) (the fit 0.92-1.0). Nodes: 21 solves
    0.33 / 0.57 / 1.02 s at K = 11 / 20 / 30 (M = 2). An edge whose fold is not confirmed is
    bisected (``pencil_edges.edges``' fallback) at several times a scan's cost, not counted
    here (as ``sigma.algorithm1.cost``): measured (2, 20, 10) 15.7 s in all, 10.9 s of it the
    edges, against the estimate 12.5 s."""
    def term(c):
        return c[0] + atoms * (c[1] * M * K ** 2 + c[2] * M * K ** 3)
    pairs = (nodes // 2 + 1) * (nodes // 2 + 2)
    return MARGIN * (pairs * term(_PAIR) + (nodes // 2 + 1) * term(_NODE) + scans * term(_SCAN))


#: Fitted constants of ``shift_alg1_seconds``: seconds per pair, per node and per edge scan.
_PAIR = (1e-3, 3.3e-6, 7.5e-8)
_NODE = (5e-3, 1e-5, 1e-7)
_SCAN = (1.0, 9.1e-4, 5.5e-6)
#: The estimate's margin over the fit (the measured CPU varies with the machine's load).
MARGIN = 1.5


def shift_alg1_affordable(M, K, atoms, n, t_max, scans, least=False):
    """ValueError when ``shift_alg1_seconds`` exceeds MAX_SECONDS (or the budget), naming what
    would fit (``sigma.algorithm1.cost._affordable`` with this estimate; ``least``: n is a lower
    bound of the nodes, before the edges fix the contour)."""
    _affordable(M, K, atoms, n, t_max, scans, least, seconds=shift_alg1_seconds,
                what=f"spectra: Algorithm 1 under covariate shift ({atoms} joint atoms)")
