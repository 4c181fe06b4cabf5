"""Benchmark: ``riskcalc.logistic_limit`` on 200-point grids solved together vs one point at a
time (issue 19, "Speed": goal <= 10 ms a point).

    python benchmarks/bench_logistic_broadcast.py [--points 200] [--sample 20]

Grids (200 points each): lam from 1e-3 to 10 (gamma = 1, S = r = 1); r from 0.05 to 4
(gamma = 2, S = 1, lam = 0.1); gamma from 0.1 to 5 (S = 2, r = 0.5, lam = 1); the FedAvg
centre over lam. Each grid is solved by one call; ``--sample`` points of it are solved one at
a time (the per-point cost before this round) and compared (largest relative difference over
the eight fields). Also the first call in a fresh interpreter (import plus a 3-point grid), to
show no seconds of set-up. The load average is printed: on the shared 2-core machine other
jobs inflate both timings alike, so the ratio is the robust number.

Measured (2 cores shared with about ten other jobs, load average 9-10 during the run; on a
quiet machine both timing columns shrink by roughly the load factor):

    grid                             grid ms/pt 1-by-1 ms/pt  ratio max rel diff
    lam grid (gamma 1, S = r = 1)          21.5        632.2   29.4     3.38e-12
    r grid (gamma 2, S 1, lam 0.1)         27.2        515.6   19.0     3.20e-11
    gamma grid (S 2, r 0.5, lam 1)          9.4        201.3   21.4     1.40e-14
    lam grid, FedAvg centre                12.7        432.8   34.1     1.35e-14
    first call in a fresh interpreter (import + 3-point grid): 0.71 s

On a quiet machine (load average 1.1):

    grid                             grid ms/pt 1-by-1 ms/pt  ratio max rel diff
    lam grid (gamma 1, S = r = 1)           4.3        141.1   32.5     3.38e-12
    r grid (gamma 2, S 1, lam 0.1)          8.0        163.3   20.5     3.20e-11
    gamma grid (S 2, r 0.5, lam 1)          3.3         51.7   15.7     1.40e-14
    lam grid, FedAvg centre                 3.8        130.9   34.5     1.35e-14
    first call in a fresh interpreter (import + 3-point grid): 0.28 s
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

import riskcalc

FIELDS = ("risk", "cosine", "test_logloss", "test_error", "a", "b", "q", "mu")


def grids(P):
    return {
        "lam grid (gamma 1, S = r = 1)": dict(gamma=1.0, signal=1.0, r=1.0,
                                              lam=np.geomspace(1e-3, 10, P)),
        "r grid (gamma 2, S 1, lam 0.1)": dict(gamma=2.0, signal=1.0,
                                               r=np.linspace(0.05, 4, P), lam=0.1),
        "gamma grid (S 2, r 0.5, lam 1)": dict(gamma=np.linspace(0.1, 5, P), signal=2.0,
                                               r=0.5, lam=1.0),
        "lam grid, FedAvg centre": dict(gamma=1.0, signal=2.0, r=0.5,
                                        lam=np.geomspace(1e-2, 10, P), centre="fedavg"),
    }


def first_call() -> float:
    code = ("import time; t = time.perf_counter(); import numpy as np, riskcalc; "
            "riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=np.array([0.1, 1, 10]));"
            " print(time.perf_counter() - t)")
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=env, check=True).stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args(argv)
    riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=[0.5, 1.0])   # warm imports
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'grid':<32} {'grid ms/pt':>10} {'1-by-1 ms/pt':>12} {'ratio':>6} {'max rel diff':>12}")
    for name, kw in grids(args.points).items():
        t = time.perf_counter()
        res = riskcalc.logistic_limit(**kw)
        per_grid = (time.perf_counter() - t) / args.points
        idx = np.linspace(0, args.points - 1, args.sample).astype(int)
        worst, t = 0.0, time.perf_counter()
        for k in idx:
            one = riskcalc.logistic_limit(**{key: (float(np.ravel(v)[k]) if np.ndim(v) else v)
                                             for key, v in kw.items()})
            for f in FIELDS:
                ref = getattr(one, f)
                worst = max(worst, abs(getattr(res, f)[k] - ref) / max(abs(ref), 1e-12))
        per_one = (time.perf_counter() - t) / args.sample
        print(f"{name:<32} {1e3 * per_grid:>10.1f} {1e3 * per_one:>12.1f} "
              f"{per_one / per_grid:>6.1f} {worst:>12.2e}")
    print(f"first call in a fresh interpreter (import + 3-point grid): {first_call():.2f} s")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
