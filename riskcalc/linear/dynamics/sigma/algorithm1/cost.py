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
    1), times ``MARGIN``. Fitted to process CPU, one BLAS thread, on a 2-core machine loaded
    by other sessions (``benchmarks/bench_rounds_alg1_chain.py``'s federation with the audit's
    spectrum two-point:0.25,4,0.5 and eta at 0.9 of 2 / (L + lam), g lam = 1). Pairs: after the
    right-hand sides and outputs moved into the eigenbasis (``basis.in_basis``: no K x K
    product per pair, about 2 times cheaper at K = 50), minimax in the ratio on (M, K, T) =
    (3, 10, 60), (3, 50, 5), (5, 30, 5), (10, 20, 5), (10, 50, 10), (20, 10, 5) twice,
    (20, 20, 5), (20, 30, 5): measured / fitted 0.74-1.36 (the fit before, 4.1e-4 + 1.14e-6
    M K^2, was 0.46-0.89 of these). Scans: refitted after the edges became folds
    (``sigma.algorithm1.pencil``), relative least squares on (M, K) = (3, 10), (3, 50) twice,
    (5, 30) twice, (10, 20) twice, (10, 50), (20, 10) three times, (20, 20), (20, 30) twice:
    0.92-1.13 (the bisection's fit before, 4.5 + 9.1e-3 M K^2 + 2.4e-5 M K^3, was 0.23-0.29
    of them). An edge whose fold is not confirmed is bisected at about 4 times a scan's cost
    with no re-check by this estimate (``pencil_edges.edges``' ``fallback``, as FedAvg's has):
    the check after the edges (``chain.chain_parts``) counts the scans at this fit. Nodes:
    the fit of (3, 10, 20), (3, 20, 50), (10, 10, 50), (5, 30, 20), (10, 15, 30), (3, 50, 5),
    (20, 10, 20), (3, 10, 200), (10, 20, 60) (0.76-1.78, the larger ratios on the smallest
    cases; the arcs here, 20 of the 21 node solves, 0.94-1.10 of it)."""
    half = 0.5 * max(atoms, 2)

    def term(c):
        return c[0] + half * (c[1] * M * K ** 2 + c[2] * M * K ** 3)
    pairs = (nodes // 2 + 1) * (nodes // 2 + 2)
    return MARGIN * (pairs * term(_PAIR) + (nodes // 2 + 1) * term(_NODE) + scans * term(_SCAN))


#: Fitted constants of ``alg1_chain_seconds``: seconds per pair, per node and per edge scan.
_PAIR = (5.9e-4, 6.6e-7, 0.0)
_NODE = (2.3e-3, 1.9e-5, 2.5e-8)
_SCAN = (1.1, 2.05e-3, 1.46e-5)
#: The estimate's margin over the fit: above the largest measured / fitted ratio of the pairs
#: (1.36; the measured CPU varies with the machine's load).
MARGIN = 1.5


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
    k = max((k for k in range(1, K) if fit(M, k, n)), default=None)
    if k is not None:
        fits.append(f"local_steps <= {k}")
    if n <= t_max + 24 and not least:
        m = max((m for m in range(16, n) if fit(M, K, m)), default=None)
        if m is not None:
            fits.append(f"rounds up to about {max(0, m - 16)}")
    c = max((c for c in range(1, M) if fit(c, K, n)), default=None)
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
