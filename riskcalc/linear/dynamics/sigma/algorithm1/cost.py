"""The cost estimates (time and memory) of the chain route of paper 004's Algorithm 1 under a
shared spectrum (``sigma.algorithm1.chain``), the refusals beyond ``MAX_SECONDS`` and the memory
budget (``memory_check``) naming what would fit, and
the same estimate for FedAvg's own models on that route's pencil (``sigma.fedavg.own_chain``)."""

from __future__ import annotations

from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed

#: Most estimated process seconds of the route (``alg1_chain_seconds``), as FedAvg's chain, by
#: default (``budget``: rounds_limit's max_seconds).
MAX_SECONDS = 600.0


def alg1_chain_seconds(M, K, atoms, nodes, scans=1):
    """Estimated process seconds of this route with ``nodes`` contour nodes: (nodes / 2 + 1)
    (nodes / 2 + 2) pairs (``Alg1Chain.two_point``, three couplings), nodes / 2 + 1 node
    solves (``solve_arc`` and z = 1) and ``scans`` edge scans (2 when g lam > 1: the negative
    band's window too), each term c0 + a (c1 M K^2 + c2 M K^3) with a = atoms / 2 (at least
    1), times ``MARGIN``. Pairs and nodes refitted (relative least squares, non-negative) after
    session 20's corner changes (``Alg1Chain`` on ``chain_newton``'s Newton paths: the
    predictor on each node's last Newton eigenbasis, ``solve_arc`` from above every 32nd
    node) on the parts of ``benchmarks/bench_rounds_alg1_chain.py`` (g lam = 1; process CPU,
    OMP 1, a 2-core machine loaded by other sessions, load 1-5; 2026-11-27): pairs measured /
    fitted 0.82-1.25, nodes 0.89-1.12 (the fit before, 2.3e-3 + 1.9e-5 M K^2 + 2.5e-8 M K^3
    per node, counted every arc node from above: 0.23-0.37 of the arcs at M K^2 >= 4000).
    Scans: the fit of the edges as folds (``sigma.algorithm1.pencil``), 0.68-0.87 of these
    runs' edges, kept. The whole runs (seconds; the ratio measured / this estimate)::

          M   K    T  nodes   edges   arcs   pairs   total   /est.
          3  10   20     40     1.4    0.2     0.6     2.3   0.87
         10  20   60     80     8.7    1.2     5.1    15.4   0.91
         20  20  100    120    17.3    2.6    19.6    40.1   0.99
          5  30   20     40     8.4    0.7     1.3    10.8   0.72
         20  50  200    216   110.4   29.3   221.4   367.3   0.84

    The last is the audit corner (peak 1.3 GB, 11.5 min wall at load 1-5): estimated 980 s
    before (refused at the default 10 minutes), 440 s now; ``bench_rounds_pairs.py pfedme 20
    50 200`` (its spectrum two-point:0.25,4,0.5) ran within the default budget: 348.2 s (edges
    92.5, arcs 28.8, pairs 221.0; peak 1.4 GB). An edge whose fold is not confirmed
    is bisected (``pencil_edges.edges``' ``fallback``), at about 3 times a scan's fit, which
    this estimate does not count: (3, 20, 50) measured 14.8 s (edges 12.4), (20, 30, 200)
    220.2 s (edges 113.6, arcs 8.9, pairs 95.8), 2.1 and 1.4 times their estimates."""
    half = 0.5 * max(atoms, 2)

    def term(c):
        return c[0] + half * (c[1] * M * K ** 2 + c[2] * M * K ** 3)
    pairs = (nodes // 2 + 1) * (nodes // 2 + 2)
    return MARGIN * (pairs * term(_PAIR) + (nodes // 2 + 1) * term(_NODE) + scans * term(_SCAN))


#: Fitted constants of ``alg1_chain_seconds``: seconds per pair, per node and per edge scan.
_PAIR = (1.0e-3, 3.9e-7, 0.0)
_NODE = (9.2e-3, 3.9e-6, 2.4e-8)
_SCAN = (1.1, 2.05e-3, 1.46e-5)
#: The estimate's margin over the fit: the largest measured / fitted ratio of the whole runs
#: of the table (1.05; the measured CPU varies with the machine's load).
MARGIN = 1.06


def _affordable(M, K, atoms, n, t_max, scans, least=False, seconds=alg1_chain_seconds,
                what="spectrum: Algorithm 1"):
    """ValueError when ``seconds`` (``alg1_chain_seconds``, or covariate shift's,
    ``shift.algorithm1.cost``) exceeds MAX_SECONDS, naming what would fit (``least``: n is a
    lower bound of the nodes, before the edges fix the contour); ``what`` begins the
    message."""
    limit = allowed(MAX_SECONDS)

    def fit(m, k, nodes):
        return seconds(m, k, atoms, nodes, scans) <= limit

    sec = seconds(M, K, atoms, n, scans)
    if sec <= limit:
        return
    fits = []
    k = budget.largest(1, K, lambda k: fit(M, k, n))
    if k is not None:
        fits.append(f"local_steps <= {k}")
    if n <= t_max + 24 and not least:
        m = budget.largest(16, n, lambda m: fit(M, K, m))
        if m is not None:
            fits.append(f"rounds up to about {max(0, m - 16)}")
    c = budget.largest(1, M, lambda c: fit(c, K, n))
    if c is not None:
        fits.append(f"clients <= {c}")
    raise ValueError(
        f"{what} with local_steps = {K}, {M} clients and rounds up to {t_max}: "
        f"the chain route ({'at least ' if least else ''}{n} contour nodes) would take about "
        f"{sec:.3g} s here (more than {limit:.0f} s; cost ~ clients local_steps^3 "
        "nodes^2, nodes >= rounds + 16); give " + (", or ".join(fits) if fits else
                                                   "fewer local_steps and rounds")
        + f", {MORE_TIME}")


def memory_check(M, K, atoms, n, follow=True):
    """ValueError (``budget.check_memory``) when the route's estimated peak memory with n
    contour nodes (``memory.alg1_chain_count``) exceeds the memory budget; ``follow``: the
    nodes follow the rounds (n = T_max + 16), so fewer rounds would fit. Returns the
    estimate."""
    return budget.check_memory(lambda m, k, x: memory.estimate("alg1_chain", m, k, atoms, x),
                               (M, K, n), f"Algorithm 1's chain route with {M} clients, "
                               f"local_steps = {K}, {atoms} atoms and {n} contour nodes", follow)
