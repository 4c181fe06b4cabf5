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
"""

from __future__ import annotations

import resource
import sys

import numpy as np

import riskcalc
import riskcalc.linear.dynamics.sigma.algorithm1.cost as cost
import riskcalc.linear.dynamics.sigma.algorithm1.chain as chain
import riskcalc.linear.dynamics.sigma.algorithm1.curves as curves
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
    timed(curves, "spectrum_edges", "edges")
    timed(chain.Alg1Chain, "two_point", "pairs")
    timed(chain.Alg1Chain, "solve_arc", "arc")
    cost.MAX_SECONDS = np.inf
    rounds = np.array(sorted({0, 1, 3, 10, T}) + [np.inf], float)
    t0 = _cpu()
    out = curves.algorithm1_sigma_k_curves(gam, r, sg, p, 1.2, lam, eta, K, gl / lam, rounds, SPEC,
                                          route="chain")
    total = _cpu() - t0
    n = out["nodes"]
    est = cost.alg1_chain_seconds(M, K, SPEC.atoms.size, n, 2 if gl > 1 else 1)
    print(f"M={M} K={K} T={T} g_lam={gl} nodes={n} measured={total:.1f} s estimate={est:.1f} s "
          f"(edges {parts['edges']:.1f}, arc {parts['arc']:.1f}, pairs {parts['pairs']:.1f})",
          flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
        float(sys.argv[4]) if len(sys.argv) > 4 else 1.0)
