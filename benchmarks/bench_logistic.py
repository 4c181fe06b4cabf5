"""Benchmark: the paper 000 Appendix D preset (Fig. 1), all methods, on local cores.

    python benchmarks/bench_logistic.py [--reps 100] [--jobs 2] [--out fig1.csv]

Runs ``paper000-fig1`` (m = 5, n_i = 100, d = 100; 21 values of R from 0 to 20 simulated as one
batched instance per replicate; FedAvg, PureLocalTraining, FedAvg + fine-tuning and FedProx with
lam = 0, 0.44, 4 at the Appendix D hyperparameters; accuracy and excess risk on 5000 fresh test
features per client), prints the wall time and the Fig. 1 accuracy table, and checks the
qualitative result of Fig. 1 (FedAvg best at R = 0, local training best at R = 20, fine-tuning
within 0.02 of the better of the two at every R).

Measured (2 cores, shared with other jobs, numpy 2.4 / OpenBLAS):
100 replicates x 21 R x 6 methods in 168 s wall (1.7 s per replicate on 2 workers; load
average 3.5 from other jobs during the run). One replicate alone: 1.8 s on one core.
"""

from __future__ import annotations

import argparse
import csv
import time

from montecarlo.experiments.presets import PRESETS
from montecarlo.experiments.presets_run import COLUMNS, run_preset, summarize


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="optional CSV of all rows")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = run_preset("paper000-fig1", reps=args.reps, seed=args.seed, n_jobs=args.jobs,
                      progress=True)
    wall = time.perf_counter() - start
    if args.out:
        with open(args.out, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    acc = summarize(rows, "accuracy")
    methods = list(PRESETS["paper000-fig1"].methods)
    values = sorted({v for _, v in acc})
    print(f"paper000-fig1: {args.reps} replicates x {len(values)} R x {len(methods)} methods "
          f"in {wall:.1f} s wall on {args.jobs} worker(s) ({wall / args.reps:.2f} s/replicate)")
    print("mean test accuracy (standard error)")
    print(f"{'R':>5} " + " ".join(f"{m:>16}" for m in methods))
    for v in values:
        print(f"{v:>5g} " + " ".join(f"{acc[m, v][0]:>8.4f} ({acc[m, v][1]:.4f})"
                                     for m in methods))
    lo, hi = values[0], values[-1]
    checks = {
        f"FedAvg best at R={lo:g}": acc["fedavg", lo][0] > acc["local", lo][0],
        f"local best at R={hi:g}": acc["local", hi][0] > acc["fedavg", hi][0],
        "fine-tuning within 0.02 of the better everywhere": all(
            acc["finetune", v][0] >= max(acc["fedavg", v][0], acc["local", v][0]) - 0.02
            for v in values),
    }
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
