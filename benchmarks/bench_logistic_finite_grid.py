"""Benchmark: finite-M logistic limits on 100-point grids, solved along the grid with warm starts
(``riskcalc.logistic.finite_grid``), against scalar calls of a baseline revision in the same run
(issue 33, item 2: goals <= 50 ms a point, first call < 1 s; oracle 2-d grids <= 10 ms a point).

    OMP_NUM_THREADS=1 python benchmarks/bench_logistic_finite_grid.py [--points 100]
        [--sample 6] [--baseline be1db31]

Grids (RTFA, global_lam 0.01, samples weights): M = 5 identical clients (gamma 1, S = r = 1) in
lam (1e-2 .. 10), in r (0.1 .. 2, lam 0.1) and in gamma (0.3 .. 3, lam 0.1); a 4-client
federation (gamma 0.5, 1, 2, 1; r 0.5, 1, 1.5, 0; S = 1; every client's limits) in lam and in a
common scale t of the r_j (0.5 .. 1.5); FedProx (pfedme) on the M = 5 lam grid; the oracle
(infinitely many clients) on 2-d gamma x lam grids. ``--sample`` points of each grid are
computed by scalar calls of the ``--baseline`` revision (``git archive`` into a temporary
folder, run in a subprocess of this run: the code before this change, a fresh interpreter,
its own remembered global models as a loop of scalar calls would have) and of this tree; the
table gives the grid's ms a point, the baseline's, their ratio, and the largest relative
difference of the risk and test error from this tree's scalar calls and from the baseline's.
The load average is printed: on the shared machine both timings inflate alike.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import riskcalc  # noqa: E402

HET = dict(gamma=[0.5, 1.0, 2.0, 1.0], r=[0.5, 1.0, 1.5, 0.0])


def grids(P):
    lam, t = np.geomspace(1e-2, 10, P), np.linspace(0.5, 1.5, P)
    base = dict(gamma=1.0, signal=1.0, r=1.0, clients=5, global_lam=0.01, lam=0.1)
    return {
        "M=5 rtfa, lam grid": ("finite", dict(base, lam=lam)),
        "M=5 rtfa, r grid": ("finite", dict(base, r=np.linspace(0.1, 2.0, P))),
        "M=5 rtfa, gamma grid": ("finite", dict(base, gamma=np.linspace(0.3, 3.0, P))),
        "M=5 pfedme, lam grid": ("finite", dict(base, lam=lam, method="pfedme")),
        "het4 rtfa, lam grid": ("clients", dict(HET, signal=1.0, global_lam=0.01, lam=lam)),
        "het4 rtfa, r scale grid": ("clients", dict(
            gamma=HET["gamma"], r=t[:, None] * np.array(HET["r"]), signal=1.0,
            global_lam=0.01, lam=0.1)),
    }


def oracle_grids():
    return {
        "oracle gamma x lam 20x20": dict(gamma=np.linspace(0.2, 3.0, 20)[:, None], signal=1.0,
                                         r=1.0, lam=np.geomspace(1e-2, 10, 20)[None, :]),
        "oracle gamma x lam 10x30, S=2": dict(gamma=np.linspace(0.5, 4.0, 10)[:, None],
                                              signal=2.0, r=0.5,
                                              lam=np.geomspace(1e-2, 10, 30)[None, :]),
    }


def entry(kw, k):
    """Scalar arguments of flat grid entry ``k`` (per-client lists kept whole)."""
    kind, kw = kw
    per_client = ("gamma", "r") if kind == "clients" else ()
    shape = np.broadcast_shapes(*[np.shape(v) for n, v in kw.items() if n not in per_client],
                                *[np.shape(kw[n])[:-1] for n in per_client])
    idx = np.unravel_index(k, shape)
    out = {}
    for n, v in kw.items():
        if isinstance(v, str):
            out[n] = v
        elif kind == "clients" and n in ("gamma", "r"):
            a = np.asarray(v, float)
            out[n] = (a[idx] if a.ndim > 1 else a).tolist()
        elif np.ndim(v):
            out[n] = float(np.broadcast_to(v, shape)[idx])
        else:
            out[n] = v
    return kind, out


def scalar(kind, kw):
    """One scalar call: ``(risk, test_error)`` lists (every client for the federation)."""
    if kind == "finite":
        res = riskcalc.logistic_limit(**kw)
    elif kind == "clients":
        res = riskcalc.logistic_clients_limit(**kw)
    else:
        res = riskcalc.logistic_limit(**kw)
    return np.ravel(res.risk).tolist(), np.ravel(res.test_error).tolist()


def warm_up():
    """Imports (scipy.optimize) and first-use set-up, on a federation no grid uses."""
    riskcalc.logistic_limit(gamma=0.7, signal=0.7, r=0.7, lam=0.3, clients=3, global_lam=0.05)


CHILD = """
import json, sys, time
sys.path.insert(0, {path!r})
import riskcalc
sys.path.insert(0, {here!r})
from bench_logistic_finite_grid import scalar, warm_up
warm_up()
out = []
for kind, kw in json.load(sys.stdin):
    t = time.perf_counter()
    val = scalar(kind, kw)
    out.append((time.perf_counter() - t, val))
print(json.dumps(out))
"""


def baseline_calls(rev, calls):
    """Scalar calls of revision ``rev`` in a fresh interpreter: ``[(seconds, value)]``."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "riskcalc"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        code = CHILD.format(path=tmp, here=os.path.join(ROOT, "benchmarks"))
        env = dict(os.environ, PYTHONPATH=tmp)
        run = subprocess.run([sys.executable, "-c", code], input=json.dumps(calls), text=True,
                             capture_output=True, env=env, cwd=tmp)
        if run.returncode:
            raise SystemExit(f"baseline {rev} failed:\n{run.stderr}")
        return json.loads(run.stdout)


def first_call() -> float:
    code = ("import time; t = time.perf_counter(); import numpy as np, riskcalc; "
            "riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=np.array([0.1, 0.2, "
            "0.4]), clients=5, global_lam=0.01); print(time.perf_counter() - t)")
    env = dict(os.environ, PYTHONPATH=ROOT)
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env=env, check=True).stdout)


def rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--sample", type=int, default=6)
    parser.add_argument("--baseline", default="be1db31",
                        help="git revision whose scalar calls are timed (default: the code "
                             "before issue 33 item 2)")
    args = parser.parse_args(argv)
    warm_up()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; baseline {args.baseline}")
    print(f"first call in a fresh interpreter (import + 3-point M=5 grid): {first_call():.2f} s")
    print(f"{'grid':<30} {'pts':>4} {'grid ms/pt':>10} {'base ms/pt':>10} {'ratio':>6} "
          f"{'diff vs now':>11} {'diff vs base':>12}")
    todo = {**grids(args.points), **{n: ("oracle", kw) for n, kw in oracle_grids().items()}}
    for name, (kind, kw) in todo.items():
        t = time.perf_counter()
        if kind == "clients":
            res = riskcalc.logistic_clients_limit(**kw)
        else:
            res = riskcalc.logistic_limit(**kw)
        n = int(np.prod(np.shape(res.mean["risk"] if kind == "clients" else res.risk)))
        per_grid = (time.perf_counter() - t) / n
        idx = np.linspace(0, n - 1, args.sample).astype(int)
        calls = [entry((kind, kw), int(k)) for k in idx]
        base = baseline_calls(args.baseline, calls)
        per_base = sum(s for s, _ in base) / len(base)
        now = [scalar(*c) for c in calls]
        grid = [(np.reshape(res.risk, (n, -1))[k].tolist(),
                 np.reshape(res.test_error, (n, -1))[k].tolist()) for k in idx]
        d_now = max(rel(g[i], s[i]) for g, s in zip(grid, now) for i in (0, 1))
        d_base = max(rel(g[i], b[1][i]) for g, b in zip(grid, base) for i in (0, 1))
        print(f"{name:<30} {n:>4} {1e3 * per_grid:>10.1f} {1e3 * per_base:>10.1f} "
              f"{per_base / per_grid:>6.1f} {d_now:>11.1e} {d_base:>12.1e}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
