"""``riskcalc advise`` at 20 to 1000 clients: the same decision, faster, against a baseline tree.

Issue 32 (advise as a decision tool at 100-1000 clients). Seeded random federations (Sigma = I,
every pipeline; gamma_j uniform on [0.3, 3], r_j and sigma_j uniform on [0.1, 2], one
``numpy.random.SeedSequence([32, k])`` per federation k), their sizes log-spaced from 20 to
1000 clients (``--count`` of them, default 20), plus ``f1000`` (1000 clients, seed 1: the
federation of ``weights``' Gain measurements). Each runs
``python -m riskcalc advise --federation FILE --json --no-progress`` in a fresh subprocess
from this tree and, with ``--baseline DIR`` (a source tree of the code to compare against,
e.g. ``git archive <commit> | tar -x -C DIR``), from DIR, A and B in turn. Printed per
federation: the child's CPU (user + system) and wall seconds of each, their ratio, whether
the recommendation (method and weights) and the whole ranking are the same, and the largest
relative differences of the printed risks (every candidate's mean risk; its per-client risks),
matched by method and weights. Under optimal weights the per-client risks move at first order
with the weights where the mean risk, at its minimum, moves at second order: a stop of the
weights' search ~1e-10 relative earlier moves them by ~1e-5 relative.

Measured: ``benchmarks/bench_advise_measured.txt``, twenty-third (against 91c27d8),
twenty-fourth (20-300 clients, against 18f0133) and twenty-fifth (against fe07b9b) rounds.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_advise_decision.py [--baseline DIR]
[--count 20] [--largest 1000] [--f1000]``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def federation(m: int, seed) -> dict:
    """A federation file's object of m random clients (module docstring)."""
    rng = np.random.default_rng(seed)
    g, r, s = rng.uniform(0.3, 3, m), rng.uniform(0.1, 2, m), rng.uniform(0.1, 2, m)
    return {"fedrisk_federation": 1,
            "clients": [{"gamma": float(a), "r": float(b), "sigma": float(c)}
                        for a, b, c in zip(g, r, s)]}


def run(root: str, path: str):
    """(advice JSON, CPU seconds, wall seconds) of the command from the tree ``root``."""
    env = dict(os.environ, PYTHONPATH=root, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "riskcalc", "advise", "--federation", path,
                          "--json", "--no-progress"], env=env, cwd=root, capture_output=True,
                         text=True, check=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), cpu, wall


def compare(new: dict, old: dict):
    """(same recommendation, same ranking, largest relative difference of the mean risks, of
    the per-client risks)."""
    def key(c):
        return c["method"], c["weights"]["name"]

    rank_new, rank_old = [key(c) for c in new["candidates"]], [key(c) for c in old["candidates"]]
    olds = {key(c): c for c in old["candidates"]}
    worst = [0.0, 0.0]
    for c in new["candidates"]:
        o = olds.get(key(c))
        if o is None:
            return key(new["recommended"]) == key(old["recommended"]), False, np.inf, np.inf
        for k, name in enumerate(("mean_risk", "risks")):
            a, b = np.array(c[name], float), np.array(o[name], float)
            worst[k] = max(worst[k], float(np.max(np.abs(a - b) / np.abs(b))))
    return (key(new["recommended"]) == key(old["recommended"]), rank_new == rank_old) + tuple(
        worst)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", help="source tree to compare against")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--largest", type=int, default=1000)
    ap.add_argument("--f1000", action="store_true", help="also the federation f1000")
    args = ap.parse_args()
    sizes = np.unique(np.round(np.geomspace(20, args.largest, args.count)).astype(int))
    cases = [(f"k{k}_m{m}", m, [32, k]) for k, m in enumerate(sizes)]
    if args.f1000:
        cases.append(("f1000", 1000, 1))
    worst, same = [0.0, 0.0], True
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, seed in cases:
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as fh:
                json.dump(federation(m, seed), fh)
            new, cpu, wall = run(ROOT, path)
            line = f"{name:>12} new cpu {cpu:6.2f} s wall {wall:6.2f} s"
            if args.baseline:
                old, cpu0, wall0 = run(args.baseline, path)
                rec, ranking, *diff = compare(new, old)
                same = same and rec and ranking
                worst = [max(w, d) for w, d in zip(worst, diff)]
                line += (f" | old cpu {cpu0:6.2f} s wall {wall0:6.2f} s | cpu ratio "
                         f"{cpu / cpu0:.2f} | same recommendation {rec}, ranking {ranking} | "
                         f"max rel diff: mean risks {diff[0]:.2g}, per-client {diff[1]:.2g}")
            print(line, flush=True)
    if args.baseline:
        print(f"all recommendations and rankings the same: {same}; largest relative "
              f"difference of a mean risk {worst[0]:.2g}, of a client's risk {worst[1]:.2g}")


if __name__ == "__main__":
    main()
