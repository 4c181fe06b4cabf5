"""Issue 29's audit corners of the rounds limits under a covariance spectrum: the estimate that
guards the chain routes and, with the guard lifted, the measured process CPU of the whole
curves and of their parts (the edges, the node solves along the arcs, the pair solves of the
two-point functions).

The audit's federation: M clients with gamma = 0.5, 2, 4, 1.5, 3, 0.8, 2.5, 6, 1.2, 5
(repeated), r and sigma spread over [0.3, 0.9] and [0.4, 1], sample weights, signal 1.2, the
spectrum two-point:0.25,4,0.5, rounds 0, 1, 10, T; FedAvg with eta at 0.9 of its stability
edge 2 / max_j top(S_j), Algorithm 1 (``pfedme``) with lam = 0.8 and eta at 0.9 of
2 / (L + lam).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_pairs.py METHOD M K T`` (one line:
the refusal at the default 10 minutes and the CPU spent before it, if any, then the measured
run). Measured (2026-11-27, process CPU, OMP 1, a 2-core machine loaded by four other
sessions, load 4-11), before and after issue 29's change (``sigma.chain_basis``,
``sigma.algorithm1.basis``, the refitted ``chain_cost`` and ``algorithm1.cost``)::

    fedavg 20 50 200: refused, estimate 1376 s -> 1182 s (still refused)
    fedavg 20 50 10:  371.0 s (edges 206.8, arc 37.2, pairs 126.2)
                   -> 302.2 s (edges 202.7, arc 37.5, pairs 61.0); curves equal
    pfedme 10 50 200: refused after 65 s of edges, estimate 996 s -> 496 s, measured 275.1 s
                      (edges 68.4, arc 53.4, pairs 143.1)
    pfedme 20 30 200: refused, estimate 707 s -> 352 s, measured 172.9 s (edges 41.8, arc
                      30.9, pairs 95.7; this script, within the default budget)

With the arcs and the edges priced apart (``chain_cost.fedavg_chain_seconds``; its table: the
corner at T = 10 measured 278.0 s, edges 189.1, arcs 34.4, pairs 53.3, 22.7 ms per pair, load
4-8): ``fedavg 20 50 200`` refused at 827 s (pairs 548, arcs 89, edges 190), its parts at
T = 10 extrapolated to 216 double-contour nodes about 533 s (pairs 267, arcs 77, edges 189):
the pairs' estimate, fitted on thin ellipses, is about twice their time on these contours.

With FedAvg's pairs fitted on real contours (``chain_cost.fedavg_pair_seconds``; this script
prints the double contour's nodes, the pairs and their ms per pair) and the arcs counted as
solved (``chain_cost.arc_solves``: at T = 10 both contours are the spectrum's one, nodes / 2
solves, not the nodes / 2 + nodes the arcs had been fitted to): fedavg 3 20 200 measured 24.7 s
(edges 5.8, arcs 5.4, pairs 13.4: 1.14 ms per pair), fedavg 10 20 200 57.9 s (edges 14.1, arcs
16.4, pairs 27.3: 2.32 ms), fedavg 3 50 200 108.4 s (edges 27.9, arcs 38.0, pairs 42.2: 3.59
ms), load 5-9; the arcs at T = 200 were 2.3-2.8 times their previous
estimate, so the T = 10 extrapolation above (533 s) undercounted them. ``fedavg 20 50 200``:
refused at 761 s (pairs 309, arcs 262, edges 190); its run was stopped unfinished (15-25 %
of a core on the loaded machine). After session 20's corner changes (predictor on the last
Newton factors, ``solve_arc`` every 32nd node from above, shared eigenbases in the symmetric
pairs): ``fedavg 20 50 200`` measured 473 s (edges 153, arcs 83, pairs 236; peak 2.7 GB),
estimated 563 s, accepted by default. ``pfedme 20 50 200`` (Algorithm 1 on the shared Newton
loop, cost refitted): accepted by default at an estimate of 440 s, measured 348 s (edges 92.5,
arcs 28.8, pairs 221.0; peak 1.4 GB).
"""

from __future__ import annotations

import sys
import time

import numpy as np

import riskcalc
import riskcalc.linear.dynamics.sigma.algorithm1.chain as alg1_chain
import riskcalc.linear.dynamics.sigma.algorithm1.contour as alg1_contour
import riskcalc.linear.dynamics.sigma.fedavg.curves as fedavg_curves
import riskcalc.linear.dynamics.sigma.sigma_chain as sigma_chain
from riskcalc.linear.dynamics.sigma import chain_cost
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

SPEC = riskcalc.Spectrum.two_point(0.25, 4.0, 0.5)


def federation(method, M, K, T):
    """``rounds_limit``'s keyword arguments for the corner (module docstring)."""
    gam = np.resize([0.5, 2.0, 4.0, 1.5, 3.0, 0.8, 2.5, 6.0, 1.2, 5.0], M)
    top = stable_top(SPEC.atoms, SPEC.weights, gam).max()
    kw = dict(gamma=gam, r=np.linspace(0.3, 0.9, M), sigma=np.linspace(0.4, 1.0, M),
              signal=1.2, rounds=[0, 1, 10, T], local_steps=K, spectrum=SPEC)
    if method == "fedavg":
        return dict(kw, step_size=0.9 * 2.0 / top)
    return dict(kw, lam=0.8, step_size=0.9 * 2.0 / (top + 0.8))


def run(method, M, K, T):
    """Print the refusal at the default budget (if any) and the measured parts."""
    kw = federation(method, M, K, T)
    parts = {}

    def timed(owner, name, key):
        f = getattr(owner, name)

        def g(*a, **k):
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                parts[key] = parts.get(key, 0.0) + time.process_time() - t
        setattr(owner, name, g)
    if method == "fedavg":
        owners = (fedavg_curves, "edges"), (sigma_chain.ChainPencil, "two_point"), \
            (sigma_chain.ChainPencil, "solve_arc")
    else:
        owners = (alg1_contour, "spectrum_edges"), (alg1_chain.Alg1Chain, "two_point"), \
            (alg1_chain.Alg1Chain, "solve_arc")
    for (owner, name), key in zip(owners, ("edges", "pairs", "arc")):
        timed(owner, name, key)
    nodes = []
    if method == "fedavg":      # the double contour's nodes, as the guard sees them
        guard = fedavg_curves.fedavg_chain_seconds

        def seen(*a):
            nodes.append(a[3])
            return guard(*a)
        fedavg_curves.fedavg_chain_seconds = seen
    for budget in (None, 1e9):          # the default 10 minutes, then none if refused
        parts.clear()
        clock = time.process_time()
        try:
            riskcalc.rounds_limit(method, max_seconds=budget, **kw)
        except ValueError as e:
            print(f"{method} M={M} K={K} T={T}: refused after "
                  f"{time.process_time() - clock:.1f} s: {e}", flush=True)
            continue
        print(f"{method} M={M} K={K} T={T}: measured {time.process_time() - clock:.1f} s ("
              + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()) + ")", flush=True)
        if nodes:
            n = nodes[-1]
            pairs = (n // 2) * (n // 2 + 1)
            est = chain_cost.fedavg_pair_seconds(M, K, 2) * pairs
            print(f"  {n} double-contour nodes, {pairs} pairs: {1e3 * parts['pairs'] / pairs:.1f} "
                  f"ms per pair; pairs' estimate {est:.1f} s (measured / estimate "
                  f"{parts['pairs'] / est:.2f}); whole estimate "
                  f"{chain_cost.fedavg_chain_seconds(M, K, 2, n):.1f} s", flush=True)
        break

if __name__ == "__main__":
    run(sys.argv[1], *(int(x) for x in sys.argv[2:5]))
