"""Benchmark: finite-M logistic limits on 100-point grids, solved along the grid with warm starts
(``riskcalc.logistic.finite_clients.grid``), against scalar calls of a baseline revision in the
same run
(issue 33, item 2: goals <= 50 ms a point, first call < 1 s; oracle 2-d grids <= 10 ms a point).

    OMP_NUM_THREADS=1 python benchmarks/bench_logistic_finite_grid.py [--points 100]
        [--sample 6] [--baseline be1db31]

Grids (RTFA, global_lam 0.01, samples weights): M = 5 identical clients (gamma 1, S = r = 1) in
lam (1e-2 .. 10), in r (0.1 .. 2, lam 0.1) and in gamma (0.3 .. 3, lam 0.1); a 4-client
federation (gamma 0.5, 1, 2, 1; r 0.5, 1, 1.5, 0; S = 1; every client's limits) in lam and in a
common scale t of the r_j (0.5 .. 1.5), and in lam for client 0 alone; FedProx (pfedme) on
the M = 5 lam grid; the oracle (infinitely many clients) on 2-d gamma x lam grids and on a
20-point lam grid at ||w_i|| = 4.2 (composite rules). ``--sample`` points of each grid are
computed by scalar calls of the ``--baseline`` revision (``git archive`` into a temporary
folder, run in a subprocess of this run: the code before this change, a fresh interpreter,
its own remembered global models as a loop of scalar calls would have) and of this tree; the
table gives the grid's ms a point, the baseline's (wall time, and in brackets the process's
CPU time, which a loaded machine inflates far less), their CPU ratio, and the largest relative
difference of the risk and test error from this tree's scalar calls ("d now") and from the
baseline's ("d base").
The load average is printed: on the shared machine both timings inflate alike.

Measured (2 cores shared with five other sessions, load average 5.3-5.6 throughout; the
CPU column is the robust one there, wall time on a quiet machine is close to it):

    first call in a fresh interpreter (import + 3-point M=5 grid): 1.17 s (0.55 s CPU)
    grid                             pts    grid ms/pt      base ms/pt  ratio    d now   d base
    M=5 rtfa, lam grid               100   14.6 (  7.2)   133.9 (  66.8)    9.2  4.7e-14  4.8e-14
    M=5 rtfa, r grid                 100   28.2 ( 14.0)   351.2 ( 176.4)   12.6  1.2e-13  1.2e-13
    M=5 rtfa, gamma grid             100   30.0 ( 14.8)   363.6 ( 179.8)   12.1  1.5e-13  1.5e-13
    M=5 pfedme, lam grid             100   33.2 ( 16.4)    98.4 (  49.0)    3.0  4.3e-15  7.6e-14
    het4 rtfa, lam grid              100   63.3 ( 31.5)   633.5 ( 324.0)   10.3  2.2e-13  2.2e-13
    het4 rtfa, lam grid, client 0    100   15.0 (  7.5)   299.1 ( 148.7)   19.9  9.4e-14  9.9e-14
    het4 rtfa, r scale grid          100   89.7 ( 44.9)  1516.5 ( 756.8)   16.9  3.2e-13  3.1e-13
    oracle gamma x lam 20x20         400    7.9 (  3.9)    46.6 (  23.1)    5.9  6.4e-13  6.5e-13
    oracle gamma x lam 10x30, S=2    300    6.4 (  3.2)   150.5 (  73.9)   23.2  2.4e-16  6.6e-16
    oracle lam grid 20, S = r = 3     20   47.9 ( 23.9)   112.1 (  56.0)    2.3  8.4e-16  4.2e-15

(het4 rows without "client 0" give all four clients' limits at every point: four fine-tuning
fixed points. The baseline's scalar calls of one lam grid share its remembered global model,
as a loop of scalar calls does.)
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
        "het4 rtfa, lam grid, client 0": ("clients", dict(HET, signal=1.0, global_lam=0.01,
                                                           lam=lam, target=0)),
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
        # ||w_i|| = 4.2, beyond the Gauss-Hermite reach: composite rules, one point at a time
        # along the grid.
        "oracle lam grid 20, S = r = 3": dict(gamma=1.0, signal=3.0, r=3.0,
                                              lam=np.geomspace(1e-2, 10, 20)),
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
    t, c = time.perf_counter(), time.process_time()
    val = scalar(kind, kw)
    out.append((time.perf_counter() - t, time.process_time() - c, val))
print(json.dumps(out))
"""


def baseline_calls(rev, calls):
    """Scalar calls of revision ``rev`` in a fresh interpreter: ``[(wall s, CPU s, value)]``."""
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


def first_call():
    """Wall and CPU seconds of the import and a 3-point M = 5 grid in a fresh interpreter."""
    code = ("import time; t, c = time.perf_counter(), time.process_time(); import numpy as np, "
            "riskcalc; riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=np.array(["
            "0.1, 0.2, 0.4]), clients=5, global_lam=0.01); print(time.perf_counter() - t, "
            "time.process_time() - c)")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.split()
    return float(out[0]), float(out[1])


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
    wall, cpu = first_call()
    print(f"first call in a fresh interpreter (import + 3-point M=5 grid): {wall:.2f} s "
          f"({cpu:.2f} s CPU)")
    print("ms a point, wall (CPU of the process); ratio = baseline CPU / grid CPU")
    print(f"{'grid':<31} {'pts':>4} {'grid ms/pt':>13} {'base ms/pt':>15} {'ratio':>6} "
          f"{'d now':>8} {'d base':>8}")
    todo = {**grids(args.points), **{n: ("oracle", kw) for n, kw in oracle_grids().items()}}
    for name, (kind, kw) in todo.items():
        t, c = time.perf_counter(), time.process_time()
        if kind == "clients":
            res = riskcalc.logistic_clients_limit(**kw)
        else:
            res = riskcalc.logistic_limit(**kw)
        n = int(np.prod(np.shape(res.mean["risk"] if kind == "clients" else res.risk)))
        per_grid, cpu_grid = (time.perf_counter() - t) / n, (time.process_time() - c) / n
        idx = np.linspace(0, n - 1, args.sample).astype(int)
        calls = [entry((kind, kw), int(k)) for k in idx]
        base = baseline_calls(args.baseline, calls)
        per_base = sum(b[0] for b in base) / len(base)
        cpu_base = sum(b[1] for b in base) / len(base)
        now = [scalar(*c) for c in calls]
        grid = [(np.reshape(res.risk, (n, -1))[k].tolist(),
                 np.reshape(res.test_error, (n, -1))[k].tolist()) for k in idx]
        d_now = max(rel(g[i], s[i]) for g, s in zip(grid, now) for i in (0, 1))
        d_base = max(rel(g[i], b[2][i]) for g, b in zip(grid, base) for i in (0, 1))
        print(f"{name:<31} {n:>4} {1e3 * per_grid:>6.1f} ({1e3 * cpu_grid:>5.1f}) "
              f"{1e3 * per_base:>7.1f} ({1e3 * cpu_base:>6.1f}) {cpu_base / cpu_grid:>6.1f} "
              f"{d_now:>8.1e} {d_base:>8.1e}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
