"""BLAS threads for many small decompositions: single-threaded vs the library default.

A federated replicate decomposes every client's X_j X_j^T (``montecarlo.linear.measure``), e.g.
MAML-FL (paper 003, ``003_4b976ddf5225c17e.txt``, eq. 12) over M = 1000 clients of n = d/gamma
samples. OpenBLAS's second thread gains nothing on such small problems and, when the machine
is busy (joblib workers, other jobs), waking it can cost milliseconds per call.
``montecarlo.linear.decomposition.decompose`` therefore limits BLAS to one thread
(``threadpoolctl``) for Gram matrices up to ``SMALL_GRAM``; setting ``SMALL_GRAM = 0`` restores
the default (baseline).

For each configuration, prints the best and median over ``--repeat`` interleaved runs of one
``measure`` call (decompositions + global model + risk; with d <= ``SMALL_GRAM`` the limited
run keeps one BLAS thread throughout) and of the decompositions alone, baseline and limited,
and their ratios baseline / limited. ``--load`` runs a busy-looping process next to it (one
core, the situation of a machine shared with other work) and repeats the comparison. Also
prints how many BLAS threads joblib's loky workers get for ``n_jobs = 2`` (loky already sets
OPENBLAS_NUM_THREADS=cpu_count // n_jobs there, so ``run_tasks`` adds no limit of its own).

Run: ``python benchmarks/bench_threads.py [--clients 1000] [--d 200] [--gamma 2] [--load]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from joblib import Parallel, delayed
from threadpoolctl import threadpool_info

import montecarlo.linear.decomposition as dm
import montecarlo.linear.measure as mm
from montecarlo.linear.instances import Setting, sample_instance
from riskcalc import ClientSpec


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def blas_threads():
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


def worker_threads(n_jobs):
    """BLAS threads inside joblib's (loky) workers, and their OPENBLAS_NUM_THREADS."""
    return Parallel(n_jobs=n_jobs)(
        delayed(lambda: (os.environ.get("OPENBLAS_NUM_THREADS"), blas_threads()))()
        for _ in range(n_jobs))


def compare_once(inst, method, tuning, repeat):
    """Baseline and limited runs interleaved ``repeat`` times (so that both see the same
    background load); prints the best and the median of each."""
    modes = {"baseline (default threads)": 0, "limited (1 thread)": dm.SMALL_GRAM}
    times = {label: {"decompositions": [], "measure": []} for label in modes}
    for _ in range(repeat):
        for label, small in modes.items():
            saved, dm.SMALL_GRAM = dm.SMALL_GRAM, small
            try:
                times[label]["decompositions"].append(
                    timed(lambda: dm.decompose(inst.X, inst.s, eager_v=True)))
                times[label]["measure"].append(timed(lambda: mm.measure(inst, method, [tuning])))
            finally:
                dm.SMALL_GRAM = saved
    for label, t in times.items():
        print(f"  {label:<28} " + "   ".join(
            f"{k} best {min(v):7.3f} s, median {statistics.median(v):7.3f} s"
            for k, v in t.items()), flush=True)
    (b, lim) = times.values()
    print("  ratio baseline / limited:    " + "   ".join(
        f"{k} best {min(b[k]) / min(lim[k]):6.2f}x, median "
        f"{statistics.median(b[k]) / statistics.median(lim[k]):6.2f}x" for k in b))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=1000)
    ap.add_argument("--d", type=int, default=200)
    ap.add_argument("--gamma", type=float, default=2.0)
    ap.add_argument("--method", default="maml_fl")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--load", action="store_true",
                    help="also measure next to a busy-looping process")
    args = ap.parse_args(argv)
    tuning = 0.1
    kw = {"alpha": tuning} if args.method == "maml_fl" else {"lam": tuning}
    spec = ClientSpec(args.method, gamma=args.gamma, r=1.0, sigma=0.5, **kw)
    inst = sample_instance(spec, Setting(d=args.d, clients=args.clients,
                                         global_model="federated"), seed=0, rep=0)
    print(f"{args.method}, M = {args.clients} clients, d = {args.d}, n = {inst.n[0]} each; "
          f"BLAS threads here: {blas_threads()} ({os.cpu_count()} cores)")
    print(f"joblib loky workers (n_jobs=2): (OPENBLAS_NUM_THREADS, BLAS threads) = "
          f"{worker_threads(2)}")
    print("as is (no load added by this script):")
    compare_once(inst, args.method, tuning, args.repeat)
    if args.load:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(0.5)
            print("next to one busy-looping process:")
            compare_once(inst, args.method, tuning, args.repeat)
        finally:
            busy.kill()
            busy.wait()


if __name__ == "__main__":
    main()
