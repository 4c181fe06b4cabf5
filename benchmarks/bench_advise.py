"""``riskcalc advise`` at the scale of real federations: process CPU time of the whole command.

Issue 30, item 1. The pinned federations (written as clients files, seeded from one
``numpy.random.SeedSequence``; gamma_j log-uniform on [0.3, 4], r_j uniform on [0.2, 2],
sigma_j uniform on [0.1, 1.5], rho_j = sqrt(1 + r_j^2), every client distinct):

* ``het5``, ``het100``, ``het1000``: Sigma = I, every pipeline (goals: < 1 s, < 5 s, < 30 s);
* ``het10000``: Sigma = I, ``--methods fedavg,ftfa,rtfa`` (goal < 60 s);
* ``shift1000``: covariate shift, 1000 distinct clients cycling through three covariance types
  (two-point:1,4,0.5, the anti-aligned two-point:4,1,0.5, scaled:2; goal < 30 s), every
  pipeline (fine-tuning steps have no finite-M limit under shift and are skipped).

Each case runs ``python -m riskcalc advise --clients-file FILE --json [--methods ...]`` in a
fresh subprocess (imports and set-up included) and reports the child's user + system CPU
seconds (``resource.getrusage(RUSAGE_CHILDREN)``) and wall seconds. With ``--baseline DIR``
(a source tree of the code to compare against, e.g. ``git archive <commit> | tar -x -C DIR``)
every case also runs from DIR, A and B alternating, with the ratio and the largest relative
difference of every candidate's risks (matched by method and weights) and of the mean risk of
the optimal weights (negative: the new weights are better). A baseline run past
``--baseline-timeout`` seconds is stopped and reported as such.

Measured rounds (each round's table against the code before it, newest last):
``benchmarks/bench_advise_measured.txt``.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_advise.py [--cases het5,het100]
[--baseline DIR] [--baseline-cases het5,het100] [--baseline-max-minutes] [--baseline-timeout 900]
[--out DIR]``.
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
SHIFT_TYPES = ("two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2")
CASES = {
    "het5": (5, None, None),
    "het100": (100, None, None),
    "het1000": (1000, None, None),
    "het10000": (10000, None, "fedavg,ftfa,rtfa"),
    "shift1000": (1000, SHIFT_TYPES, None),
    # Not pinned (no goal): the shift law at sizes both codes finish.
    "shift10": (10, SHIFT_TYPES, None),
    "shift30": (30, SHIFT_TYPES, None),
    "shift60": (60, SHIFT_TYPES, None),
    # shift1000's clients, the pipelines with exact gradients under shift only.
    "shift1000fr": (1000, SHIFT_TYPES, "fedavg,ftfa,rtfa"),
}
GOALS = {"het5": 1.0, "het100": 5.0, "het1000": 30.0, "het10000": 60.0, "shift1000": 30.0}
PINNED = ("het5", "het100", "het1000", "het10000", "shift1000")


def federation(name: str) -> list:
    """The pinned clients of case ``name`` (module docstring)."""
    m, types, _ = CASES[name]
    rng = np.random.default_rng(np.random.SeedSequence([30, m, 0 if types is None else 1]))
    gamma = np.exp(rng.uniform(np.log(0.3), np.log(4.0), m))
    r = rng.uniform(0.2, 2.0, m)
    sigma = rng.uniform(0.1, 1.5, m)
    out = []
    for j in range(m):
        c = {"gamma": float(gamma[j]), "r": float(r[j]), "sigma": float(sigma[j]),
             "rho": float(np.sqrt(1.0 + r[j] ** 2))}
        if types is not None:
            c["spectrum"] = types[j % len(types)]
        out.append(c)
    return out


def goal(name: str) -> str:
    """The case's goal as printed (none for the cases that are not pinned)."""
    return f"goal < {GOALS[name]:g} s cpu" if name in GOALS else "no goal: not pinned"


def run(tree: str, path: str, methods, timeout: float, new: bool = True):
    """(cpu seconds, wall seconds, parsed JSON or the refusal's text, or None past
    ``timeout``) of one advise run from ``tree`` (``new``: with ``--max-minutes 600
    --no-progress``, which today's code does not know)."""
    cmd = [sys.executable, "-m", "riskcalc", "advise", "--clients-file", path, "--json"] + (
        ["--max-minutes", "600", "--no-progress"] if new else [])
    if methods:
        cmd += ["--methods", methods]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, None
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode == 2 and proc.stderr.startswith("error: advise"):
        return cpu, wall, proc.stderr.strip()
    if proc.returncode != 0:
        raise RuntimeError(f"advise failed from {tree}: {proc.stderr.strip()[-500:]}")
    return cpu, wall, json.loads(proc.stdout)


def estimate(path: str, methods) -> float:
    """The CPU seconds ``riskcalc.advise.cost`` estimates for the case (what ``--max-minutes``
    is checked against), to set beside the measured time."""
    sys.path.insert(0, ROOT)
    from riskcalc.advise import PIPELINES, cost
    from riskcalc.advise.federation import from_clients

    with open(path) as fh:
        fed = from_clients(json.load(fh))
    return sum(cost.estimate_seconds(fed, methods.split(",") if methods else PIPELINES)
               .values())


def compare(new: dict, old: dict) -> dict:
    """Largest relative difference of the candidates' risks and the optimal weights' gain."""
    def key(c):
        return c["method"], c["weights"]["name"]

    olds = {key(c): c for c in old["candidates"]}
    worst, gain = 0.0, {}
    for c in new["candidates"]:
        o = olds.get(key(c))
        if o is None:
            continue
        a = np.array([np.inf if v is None else v for v in c["risks"]], float)
        b = np.array([np.inf if v is None else v for v in o["risks"]], float)
        if c["weights"]["name"] == "optimal":
            gain[c["method"]] = (c["mean_risk"] - o["mean_risk"]) / o["mean_risk"]
            continue
        fin = np.isfinite(a) & np.isfinite(b)
        if np.any(np.isfinite(a) != np.isfinite(b)):
            worst = np.inf
        if fin.any():
            worst = max(worst, float(np.max(np.abs(a[fin] - b[fin]) / np.abs(b[fin]))))
    return {"max_rel_diff": worst, "optimal_mean_change": gain,
            "same_recommendation": key(new["recommended"]) == key(old["recommended"])}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(PINNED))
    ap.add_argument("--baseline", metavar="DIR")
    ap.add_argument("--baseline-timeout", type=float, default=900.0)
    ap.add_argument("--baseline-cases", default=",".join(CASES),
                    help="the cases also run from --baseline")
    ap.add_argument("--baseline-max-minutes", action="store_true",
                    help="the baseline knows --max-minutes and --no-progress (5fcbd35 does): "
                         "give them to it too (else it refuses what its default budget "
                         "exceeds, e.g. shift30)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--out", metavar="DIR", help="keep the clients files and JSON outputs here")
    args = ap.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="bench_advise_")
    os.makedirs(out, exist_ok=True)
    for name in args.cases.split(","):
        path = os.path.join(out, f"{name}.json")
        with open(path, "w") as fh:
            json.dump(federation(name), fh)
        methods = CASES[name][2]
        cpu, wall, res = run(ROOT, path, methods, args.timeout)
        line = (f"{name:<10} new: cpu {'>' + str(args.timeout) if cpu is None else f'{cpu:8.2f}'}"
                f" s, wall {wall:8.2f} s ({goal(name)}; estimated "
                f"{estimate(path, methods):.3g} s)")
        if isinstance(res, str):
            line += f" REFUSED: {res}"
            res = None
        if res is not None:
            with open(os.path.join(out, f"{name}.new.out.json"), "w") as fh:
                json.dump(res, fh)
        if args.baseline and name in args.baseline_cases.split(","):
            bcpu, bwall, bres = run(args.baseline, path, methods, args.baseline_timeout,
                                    new=args.baseline_max_minutes)
            if bcpu is None:
                line += f" | baseline: did not finish in {args.baseline_timeout:g} s wall"
            elif isinstance(bres, str):
                line += f" | baseline: cpu {bcpu:8.2f} s, REFUSED: {bres}"
            else:
                line += f" | baseline: cpu {bcpu:8.2f} s, wall {bwall:8.2f} s"
                if cpu is not None:
                    line += f", ratio {bcpu / cpu:7.1f}x"
                if res is not None:
                    line += f", {json.dumps(compare(res, bres))}"
                with open(os.path.join(out, f"{name}.base.out.json"), "w") as fh:
                    json.dump(bres, fh)
        print(line, flush=True)


if __name__ == "__main__":
    main()
