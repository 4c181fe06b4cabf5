"""Predicted vs simulated risk along FedAvg's rounds with a shared covariance spectrum (issue 29
item 5; ``riskcalc.linear.dynamics.sigma.fedavg.one_step``, K = 1, and ``sigma.fedavg.curves``, K = 5 local
steps): riskcalc.rounds_limit against
montecarlo.linear.rounds.simulate_rounds (exact given the designs) at several d, extrapolated by
weighted least squares in 1/d, on heterogeneous federations with two-point spectra (pooled
N > d and N < d, uniform and sample weights, global steps below and above 1, step sizes as
fractions of the stability edge 2 / (g top) of the limiting round map for K = 1, of the clients'
local gradient descent 2 / max_j top(S_j) for K = 5).

Prints, per federation, client and round T, the predicted server-model risk, the simulated
means (s.e.) at each d, the extrapolation to d = infinity with its standard error, and whether
abs(extrapolated - predicted) <= 0.5% + 3 s.e. (the issue's criterion); then the same for the
distance to the fixed point ||w_T - w_inf||^2 (grid29 entries: also the clients' own models,
and Algorithm 1 with exact prox, ``method="pfedme"``).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_sigma_agreement.py [--d 200,400,800]
[--reps 16] [--jobs 2] [--cache DIR] [--select 4,5]`` (``--select``: federations by index).
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from bench_rounds_agreement import judge_row   # a sibling script: benchmarks/ is on sys.path
from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges
from riskcalc.linear.dynamics.sigma.fedavg.curves import local_stability
from riskcalc.linear.finite_clients import client_weight_vector
from riskcalc.linear.finite_clients.identity import client_weights

ROUNDS = [0, 1, 5, 20, 100, 200, np.inf]
#: (name, federation, spectrum (atoms, weights)); edge: eta = edge * 2 / (g top of A) for K = 1,
#: edge * 2 / max_j top(S_j) for K >= 2 (``local_steps``, default 1).
FEDERATIONS = [
    ("M=3 g=1 samples, H={0.5,3}", dict(gamma=[0.5, 1.5, 3.0], r=[0.5, 1.0, 1.5],
                                         sigma=[0.5, 1.0, 0.3], edge=0.9, global_step=1.0,
                                         weights="samples"), ([0.5, 3.0], [0.5, 0.5])),
    ("M=5 g=0.7 uniform, H={1,4}", dict(gamma=[0.3, 0.6, 1.2, 2.0, 5.0], r=[1.0] * 5,
                                        sigma=[0.5] * 5, edge=0.5, global_step=0.7,
                                        weights="uniform"), ([1.0, 4.0], [0.7, 0.3])),
    ("M=10 g=1.3 samples, H={0.25,2}", dict(gamma=list(np.linspace(0.5, 4.0, 10)),
                                            r=list(np.linspace(0.2, 2.0, 10)), sigma=[0.5] * 10,
                                            edge=0.8, global_step=1.3, weights="samples"),
     ([0.25, 2.0], [0.5, 0.5])),
    ("M=4 N<d g=1 uniform, H={0.5,3}", dict(gamma=[3.0, 4.0, 6.0, 8.0], r=[0.3, 0.6, 0.9, 1.2],
                                            sigma=[0.3, 0.6, 1.0, 0.5], edge=0.9,
                                            global_step=1.0, weights="uniform"),
     ([0.5, 3.0], [0.3, 0.7])),
    ("M=3 K=5 g=1 samples, H={0.5,3}", dict(gamma=[0.5, 2.0, 4.0], r=[0.3, 0.6, 0.9],
                                            sigma=[0.5, 0.8, 0.3], edge=0.8, global_step=1.0,
                                            weights="samples", local_steps=5),
     ([0.5, 3.0], [0.5, 0.5])),
    ("M=3 K=5 N<d g=1.3 uniform, H={1,4}", dict(gamma=[3.0, 5.0, 8.0], r=[0.5, 1.0, 0.5],
                                                sigma=[0.3, 0.6, 1.0], edge=0.5,
                                                global_step=1.3, weights="uniform",
                                                local_steps=5), ([1.0, 4.0], [0.7, 0.3])),
    # grid29: corners of issue 29's Done-when not measured above, with the clients' own models
    # (``own``: local_risk) besides the server's: FedAvg K = 2 (g = 0.6) and K = 8 (M K^2 = 192,
    # the route's largest at M = 3; g = 1.2) at 0.9 of the local edge, and Algorithm 1 with exact
    # prox (``method``; global_risk and the own models' risk) at M = 10 (g lam = 1.4, samples)
    # and M = 3 (lam = 3, g lam = 0.6, uniform, a client with gamma = 6).
    ("grid29 M=3 K=2 g=0.6 samples, H={0.5,3}", dict(gamma=[0.5, 2.0, 4.0], r=[0.3, 0.6, 0.9],
                                                      sigma=[0.5, 0.8, 0.3], edge=0.9,
                                                      global_step=0.6, weights="samples",
                                                      local_steps=2, own=True),
     ([0.5, 3.0], [0.3, 0.7])),
    ("grid29 M=3 K=8 g=1.2 uniform, H={1,4}", dict(gamma=[0.7, 1.5, 3.0], r=[0.5, 1.0, 0.5],
                                                    sigma=[0.3, 0.6, 1.0], edge=0.9,
                                                    global_step=1.2, weights="uniform",
                                                    local_steps=8, own=True),
     ([1.0, 4.0], [0.7, 0.3])),
    ("grid29 Alg. 1 M=10 lam=0.5 g=2.8 samples, H={0.25,2}",
     dict(method="pfedme", gamma=list(np.linspace(0.5, 4.0, 10)),
          r=list(np.linspace(0.2, 2.0, 10)), sigma=[0.5] * 10, lam=0.5, global_step=2.8,
          weights="samples", local_steps=np.inf), ([0.25, 2.0], [0.5, 0.5])),
    ("grid29 Alg. 1 M=3 lam=3 g=0.2 uniform, H={0.5,3}",
     dict(method="pfedme", gamma=[0.5, 1.5, 6.0], r=[0.3, 1.2, 0.6], sigma=[0.8, 0.4, 0.6],
          lam=3.0, global_step=0.2, weights="uniform", local_steps=np.inf),
     ([0.5, 3.0], [0.3, 0.7])),
    ("grid29 M=20 K=2 g=1 samples, H={0.5,3}", dict(gamma=list(np.linspace(0.5, 3.0, 20)),
                                                     r=list(np.linspace(0.1, 1.5, 20)),
                                                     sigma=[0.3, 0.6, 1.0, 0.5] * 5, edge=0.9,
                                                     global_step=1.0, weights="samples",
                                                     local_steps=2), ([0.5, 3.0], [0.5, 0.5])),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="200,400,800")
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache", type=pathlib.Path)
    ap.add_argument("--select", default=None)
    args = ap.parse_args()
    chosen = (range(len(FEDERATIONS)) if args.select is None
              else [int(x) for x in args.select.split(",")])
    dims = [int(x) for x in args.d.split(",")]
    worst, count, inside = 0.0, 0, 0
    for i, (name, fed, (atoms, wts)) in enumerate(FEDERATIONS):
        if i not in chosen:
            continue
        fed = dict(fed)
        K = fed.pop("local_steps", 1)
        method = fed.pop("method", "fedavg")
        own = fed.pop("own", False)
        spec = riskcalc.Spectrum(atoms, weights=wts)
        gam = np.asarray(fed["gamma"])
        w = fed["weights"]
        p = (client_weights(gam, np.ones(gam.size), w) if isinstance(w, str)
             else client_weight_vector(w, gam.size))
        if method == "pfedme":      # exact prox: no local step size
            eta = None
        elif K == 1:
            top = edges(spec.atoms, spec.weights, gam, p)[1]
            eta = fed.pop("edge") * 2.0 / (fed["global_step"] * top)
        else:
            eta = fed.pop("edge") * 2.0 / local_stability(spec, gam, 1.0)
        kw = dict(fed, signal=1.0, step_size=eta, rounds=ROUNDS, local_steps=K, spectrum=spec)
        clock = time.process_time()
        pred = riskcalc.rounds_limit(method, **kw)
        clock = time.process_time() - clock
        sims = []
        for d in dims:
            cache = None if args.cache is None else args.cache / f"rounds-sigma-{i}-{d}.jsonl"
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
            sims.append(simulate_rounds(method, **kw, d=d, reps=args.reps, seed=100 + i,
                                        jobs=args.jobs, cache=cache))
        print(f"\n{name}: eta = {'prox' if eta is None else round(eta, 4)}, contraction "
              f"{pred.contraction:.5f}, prediction {clock:.1f} s CPU")
        print(f"  {'quantity':>10} {'j':>3} {'T':>4} {'predicted':>10} "
              + " ".join(f"{'d=' + str(d):>17}" for d in dims)
              + f" {'extrap.':>10} {'s.e.':>8} {'rel':>8}  ok")
        # FedAvg: risk is the server model's; Algorithm 1: the own models' (global_risk the
        # server's); ``own``: FedAvg's own models after their local steps (local_risk) too.
        quantities = (["global_risk", "risk"] if method == "pfedme"
                      else ["risk", "local_risk"] if own else ["risk"])
        rows = [(q, j, t) for q in quantities for j in range(pred.risk.shape[0])
                for t in range(len(ROUNDS))]
        rows += [("distance", 0, t) for t in range(len(ROUNDS) - 1)]
        for q, j, t in rows:
            T = ROUNDS[t]
            if T == 0:
                continue
            if q != "distance":
                p_val = getattr(pred, q)[j, t]
                y = np.array([getattr(s, q)[j, t] for s in sims])
                se = np.array([getattr(s, q + "_se")[j, t] for s in sims])
            else:
                p_val = pred.distance_to_fixed_point[t]
                y = np.array([s.global_distance[0, t] for s in sims])
                se = np.array([s.global_distance_se[0, t] for s in sims])
            rel, ok = judge_row(q, j, T, p_val, dims, y, se)
            worst = max(worst, abs(rel))
            count += 1
            inside += ok
    print(f"\n{inside} of {count} within 0.5% + 3 s.e. after extrapolation in 1/d; largest "
          f"|relative difference| {100 * worst:.3f}%")


if __name__ == "__main__":
    main()
