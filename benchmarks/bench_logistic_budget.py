"""Benchmark: ``montecarlo.runner.budget.logistic_replicate_seconds`` against the measured time of
one replicate of the logistic simulations (issue 32: the estimate was ~100x long and refused
runs that take seconds).

    OMP_NUM_THREADS=1 python benchmarks/bench_logistic_budget.py [--reps 3] [--quick]

Times one replicate (the median of ``--reps`` after one warm-up call, process CPU time and
wall time) of

* ``montecarlo.logistic.ridge.simulate_replicate`` (the oracle centre, one lam = 1, S = r = 1):
  estimated ``logistic_replicate_seconds(d, gamma)``;
* ``montecarlo.logistic.pipeline.simulate_replicate`` (M identical clients, global_lam 0.1,
  lam = 1, S = r = 1; FedAvg's global model, fine-tuning and local ridge): estimated
  ``logistic_replicate_seconds(d, gamma) + logistic_replicate_seconds(d, gamma / M)`` (the target
  and the pooled fit, as ``riskcalc compare --model logistic --global federated`` and
  ``montecarlo.logistic.sweep`` add them),

and prints the ratio estimate / measured CPU time: the estimate must stay above 1 (long, never
short by much) and below ~3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from montecarlo.logistic import pipeline, ridge
from montecarlo.runner.budget import logistic_pipeline_seconds, logistic_replicate_seconds

RIDGE = [(d, g) for d in (50, 100, 200, 400, 800) for g in (0.25, 1.0, 4.0)] + [(1600, 1.0)]
PIPE = [(d, g, m, p) for p in (False, True) for d in (100, 400) for g in (1.0, 4.0)
        for m in (2, 5, 20)] + [(800, 1.0, 5, False), (800, 1.0, 5, True)]


def timed(fn, reps):
    fn()                                          # warm-up (imports, first-call costs)
    cpu, wall = [], []
    for _ in range(reps):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="d <= 400 only")
    args = ap.parse_args()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'kind':<10}{'d':>5}{'gamma':>7}{'M':>4}{'cpu s':>10}{'wall s':>10}{'est s':>10}"
          f"{'est/cpu':>9}")
    ratios = []
    for d, g in RIDGE:
        if args.quick and d > 400:
            continue
        cpu, wall = timed(lambda: ridge.simulate_replicate(
            gamma=g, signal=1.0, r=1.0, lams=[1.0], d=d, seed=0, rep=0), args.reps)
        est = logistic_replicate_seconds(d, g)
        ratios.append(est / cpu)
        print(f"{'oracle':<10}{d:>5}{g:>7g}{'':>4}{cpu:>10.4f}{wall:>10.4f}{est:>10.4f}"
              f"{est / cpu:>9.2f}", flush=True)
    for d, g, m, p in PIPE:
        if args.quick and d > 400:
            continue
        cpu, wall = timed(lambda: pipeline.simulate_replicate(
            gammas=[g] * m, rs=[1.0] * m, signal=1.0, lams=[1.0], global_lam=0.1, d=d, seed=0,
            rep=0, pfedme=p), args.reps)
        est = logistic_pipeline_seconds(d, g, [g] * m, fedprox=p)
        ratios.append(est / cpu)
        print(f"{'fedprox' if p else 'federated':<10}{d:>5}{g:>7g}{m:>4}{cpu:>10.4f}{wall:>10.4f}{est:>10.4f}"
              f"{est / cpu:>9.2f}", flush=True)
    print(f"est/cpu: min {min(ratios):.2f}, max {max(ratios):.2f}")


if __name__ == "__main__":
    main()
