"""``advise --model logistic`` against a Monte Carlo of the exact minimizers (issue 33, item 3).

For each pinned federation, ``riskcalc.advise.logistic.advise_logistic`` ranks the candidates;
then every candidate is simulated at its advised tuning by exact Newton solves
(``montecarlo.logistic.pipeline``: FedAvg's global model with the candidate's weights, each
client's fine-tuning at its lam_j, the joint FedProx minimizer, local ridge), every client in
turn the target, on the same draws for every candidate (paired replicates, seeded per
replicate). Printed per candidate: predicted and simulated mean risk over the clients, the
standard error, the relative difference; then whether the recommendation is the simulated best
and, if not, the paired difference to the simulated best in standard errors.

    python benchmarks/bench_logistic_advise.py [--d 200] [--reps 20] [--jobs 2]
        [--cache DIR] [--only NAME,...]

Measured 2026-11-26 (d = 200, 20 replicates, seed 0, shared machine under load; advise CPU):

    federation  advise  recommended (predicted, simulated)   simulated best?  next other method
    outlier2     9.9 s  rtfa        3.410, 3.466 +- 0.063    yes              local_ridge, 8.8 s.e.
    het4        24.4 s  pfedme      2.929, 2.951 +- 0.065    yes              rtfa, 2.8 s.e.
    unrelated3   4.9 s  local_ridge 5.886, 5.922 +- 0.039    yes              pfedme, 9.6 s.e.
    sizes3       3.8 s  local_ridge 0.999, 0.984 +- 0.012    yes              pfedme, 5.2 s.e.

Every candidate's simulated mean risk (28 of them) within -1.7% to +2.5% of its prediction
at d = 200 (no extrapolation in 1/d).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from montecarlo.logistic import pipeline
from montecarlo.runner.tasks import run_tasks
from riskcalc.advise.logistic import LogisticFederation, advise_logistic

FEDERATIONS = {
    "outlier2": dict(gamma=[0.5, 0.5], r=[0.0, 3.0], signal=2.0, global_lam=0.05),
    "het4": dict(gamma=[0.5, 1.0, 2.0, 0.8], r=[0.5, 1.0, 2.0, 0.3], signal=2.0,
                 global_lam=0.01),
    "unrelated3": dict(gamma=[1.0, 1.0, 1.0], r=[3.0, 3.0, 3.0], signal=0.5, global_lam=0.05),
    "sizes3": dict(gamma=[0.3, 2.0, 2.0], r=[0.5, 0.5, 0.5], signal=1.0, global_lam=0.05),
}


def label(c) -> str:
    return f"{c['method']}/{c['weights']}"


def replicate(task: dict) -> dict:
    """Every candidate's mean risk over the clients on replicate ``task['rep']``."""
    fed, cands = task["fed"], task["candidates"]
    common = dict(gammas=fed["gamma"], rs=fed["r"], signal=fed["signal"], d=task["d"],
                  seed=task["seed"], rep=task["rep"])
    _, W, X, y = pipeline.draw_federation(**common)
    m = len(fed["gamma"])
    out = {}
    for c in cands:
        if c["method"] == "pfedme":
            _, Wp = pipeline.fedprox_model(X, y, lam=c["lam"], global_lam=fed["global_lam"],
                                           weights=c["weights"])
            out[label(c)] = float(np.mean([np.sum((Wp[j] - W[j]) ** 2) for j in range(m)]))
            continue
        risks = []
        for j in range(m):
            lam = [c["lam"][j]] if c["method"] in ("rtfa", "local_ridge") else [1.0]
            res = pipeline.simulate_replicate(
                **common, lams=lam, global_lam=fed["global_lam"],
                weights="samples" if c["weights"] == "none" else c["weights"], target=j)
            risks.append(res["fedavg"]["risk"] if c["method"] == "fedavg"
                         else res[c["method"]]["risk"][0])
        out[label(c)] = float(np.mean(risks))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=200)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--cache", help="folder of the replicate caches (resumable)")
    parser.add_argument("--only", help="comma-separated federation names")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(FEDERATIONS)
    for name in names:
        spec = FEDERATIONS[name]
        start = time.process_time()
        adv = advise_logistic(LogisticFederation(**spec))
        seconds = time.process_time() - start
        cands = [{"method": c.method, "weights": c.weights,
                  "lam": c.tuning.get("lam"), "predicted": c.mean_risk}
                 for c in adv.candidates]
        tasks = [{"fed": spec, "candidates": [{k: c[k] for k in ("method", "weights", "lam")}
                                              for c in cands],
                  "d": args.d, "seed": args.seed, "rep": rep} for rep in range(args.reps)]
        cache = None if args.cache is None else os.path.join(args.cache, f"{name}.jsonl")
        res = run_tasks(replicate, tasks, cache=cache, n_jobs=args.jobs, progress=True,
                        desc=name)
        sims = {label(c): np.array([r[label(c)] for r in res]) for c in cands}
        print(f"\n{name}: {spec}; advise {seconds:.1f} s CPU; d = {args.d}, {args.reps} reps")
        print(f"  {'candidate':<22}{'predicted':>10}{'simulated':>11}{'s.e.':>8}{'rel':>8}")
        for c in cands:
            v = sims[label(c)]
            se = v.std(ddof=1) / np.sqrt(v.size)
            print(f"  {label(c):<22}{c['predicted']:>10.4f}{v.mean():>11.4f}{se:>8.4f}"
                  f"{100 * (v.mean() - c['predicted']) / c['predicted']:>+7.2f}%")
        pick = label(cands[0])
        best = min(sims, key=lambda k: sims[k].mean())
        if best == pick:
            others = [k for k in sims if sims[k].mean() > sims[pick].mean()
                      and k.split("/")[0] != pick.split("/")[0]]
            runner = min(others, key=lambda k: sims[k].mean()) if others else None
            gap = ""
            if runner is not None:
                diff = sims[runner] - sims[pick]
                z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
                gap = f"; next other method {runner}: paired gap {z:.1f} s.e."
            print(f"  recommended {pick} is the simulated best{gap}")
        else:
            diff = sims[pick] - sims[best]
            z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
            print(f"  recommended {pick}; simulated best {best}, paired difference "
                  f"{diff.mean():.4f} ({z:.1f} s.e.)")


if __name__ == "__main__":
    main()
