"""Paper 004's Algorithm 1 with K local steps under a two-point spectrum through the chain route
(``riskcalc.linear.dynamics.sigma.algorithm1.chain``): process CPU of the whole curves (server
and own models, rounds 0, 1, 3, 10, T, inf) and of their parts (the edges' density scans, the
node solves along the arc, the pair solves of the two-point function) against the estimate
``alg1_chain_seconds`` that refuses beyond 600 s.

Clients gamma = 0.5, 2, 4, 1.5, 3, 0.8, 2.5, 6, 1.2, 5 (repeated beyond 10), sample weights,
r and sigma spread from 0.3 to 0.9 and 0.4 to 1, spectrum {0.5, 3} (weights 0.3, 0.7),
lam = 0.8, eta at 0.9 of Thm 2's bound 1 / (L + lam).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_alg1_chain.py M K T [g_lam]`` (one case,
one line; the estimate's guard lifted so that any case runs); the cases of ``docs/rounds.rst``
were M K T g_lam = 3 9 10 1, 3 10 20 1.2, 3 10 200 1, 3 20 50 1.2, 10 10 50 1.2, 20 10 20 1,
5 30 20 1, 10 15 30 1, 3 50 5 1.

With the eigenbasis of the local steps (``sigma.algorithm1.basis``; 2026-11-27, process CPU,
OMP 1, the machine loaded by other sessions), measured (edges, arc, pairs) and the estimate
refitted on these lines (``cost``: the pairs 8-12 times cheaper than the old fit's)::

    M=3 K=10 T=20 g_lam=1.0 nodes=40 measured=8.9 s (edges 8.0, arc 0.3, pairs 0.5)
    M=3 K=20 T=50 g_lam=1.0 nodes=72 measured=21.0 s (edges 17.1, arc 1.1, pairs 2.6)
    M=10 K=10 T=50 g_lam=1.0 nodes=72 measured=19.2 s (edges 15.5, arc 0.9, pairs 2.6)
    M=5 K=30 T=20 g_lam=1.0 nodes=40 measured=54.5 s (edges 49.2, arc 2.1, pairs 2.5)
    M=10 K=15 T=30 g_lam=1.0 nodes=48 measured=31.6 s (edges 27.7, arc 1.3, pairs 2.2)
    M=3 K=50 T=5 g_lam=1.0 nodes=40 measured=92.6 s (edges 84.1, arc 3.3, pairs 4.1)
    M=20 K=10 T=20 g_lam=1.0 nodes=40 measured=26.0 s (edges 23.4, arc 0.9, pairs 1.3)
    M=3 K=10 T=200 g_lam=1.0 nodes=216 measured=14.1 s (edges 6.4, arc 0.7, pairs 6.7)
    M=10 K=20 T=60 g_lam=1.0 nodes=80 measured=47.5 s (edges 37.1, arc 2.5, pairs 7.2)
    M=3 K=10 T=20 g_lam=1.2 nodes=48 measured=15.8 s (edges 14.8, arc 0.2, pairs 0.6)
    M=20 K=20 T=100 g_lam=1.0 nodes=120 measured=103.2 s (edges 67.2, arc 7.4, pairs 27.3;
        not in the fit: the new estimate 190 s, the old 885 s)

After session 20's corner changes (``Alg1Chain`` on ``chain_newton``'s Newton paths: the
predictor on each node's last Newton eigenbasis, arcs from above every 32nd node; 2026-11-27,
process CPU, OMP 1, load 1-5; ``cost`` refitted on these lines, its table)::

    M=3 K=10 T=20 nodes=40 measured=2.3 s (edges 1.4, arc 0.2, pairs 0.6)
    M=3 K=20 T=50 nodes=72 measured=14.8 s (edges 12.4, arc 0.6, pairs 1.7; an edge bisected)
    M=10 K=20 T=60 nodes=80 measured=15.4 s (edges 8.7, arc 1.2, pairs 5.1; before the
        predictor's reuse, one loaded run: 18.1 s, edges 10.4, arc 1.4, pairs 5.8)
    M=20 K=20 T=100 nodes=120 measured=40.1 s (edges 17.3, arc 2.6, pairs 19.6)
    M=20 K=30 T=200 nodes=216 measured=220.2 s (edges 113.6, arc 8.9, pairs 95.8; bisected)
    M=5 K=30 T=20 nodes=40 measured=10.8 s (edges 8.4, arc 0.7, pairs 1.3)
    M=20 K=50 T=200 nodes=216 measured=367.3 s (edges 110.4, arc 29.3, pairs 221.4; peak
        1.3 GB; the estimate 980 s before, refused by default, 440 s now)

The whole curves at M = 3, K = 30, T = 40 against the code before the basis (run side by side):
41.8 s against 89.4 s, equal to 8.7e-14 relative.
"""

from __future__ import annotations

import resource
import sys

import numpy as np

import riskcalc
import riskcalc.linear.dynamics.sigma.algorithm1.chain as chain
import riskcalc.linear.dynamics.sigma.algorithm1.contour as contour
import riskcalc.linear.dynamics.sigma.algorithm1.cost as cost
import riskcalc.linear.dynamics.sigma.algorithm1.curves as curves
from riskcalc.linear.dynamics.sigma.budget import time_budget
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(M, K, T, gl=1.0):
    """One line: the measured seconds (total and parts) and the estimate."""
    gam = np.array([0.5, 2.0, 4.0, 1.5, 3.0, 0.8, 2.5, 6.0, 1.2, 5.0] * 3)[:M]
    r, sg = np.linspace(0.3, 0.9, M), np.linspace(0.4, 1.0, M)
    p = (1 / gam) / np.sum(1 / gam)
    lam = 0.8
    eta = 0.9 / (stable_top(SPEC.atoms, SPEC.weights, gam).max() + lam)
    parts = {}

    def timed(owner, name, key):
        f = getattr(owner, name)

        def g(*a, **k):
            t = _cpu()
            out = f(*a, **k)
            parts[key] = parts.get(key, 0.0) + _cpu() - t
            return out
        setattr(owner, name, g)
    timed(contour, "spectrum_edges", "edges")
    timed(chain.Alg1Chain, "two_point", "pairs")
    timed(chain.Alg1Chain, "solve_arc", "arc")
    rounds = np.array(sorted({0, 1, 3, 10, T}) + [np.inf], float)
    t0 = _cpu()
    with time_budget(np.inf):
        out = curves.algorithm1_sigma_k_curves(gam, r, sg, p, 1.2, lam, eta, K, gl / lam,
                                              rounds, SPEC, route="chain")
    total = _cpu() - t0
    n = out["nodes"]
    est = cost.alg1_chain_seconds(M, K, SPEC.atoms.size, n, 2 if gl > 1 else 1)
    print(f"M={M} K={K} T={T} g_lam={gl} nodes={n} measured={total:.1f} s estimate={est:.1f} s "
          f"(edges {parts['edges']:.1f}, arc {parts['arc']:.1f}, pairs {parts['pairs']:.1f})",
          flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
        float(sys.argv[4]) if len(sys.argv) > 4 else 1.0)
