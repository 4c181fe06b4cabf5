"""Timing of riskcalc.rounds_limit (Sigma = I, 10 heterogeneous clients, K = 10): the issue-29
targets, for FedAvg and for paper 004's Algorithm 1 (``fedprox``).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_theory.py [fedavg|fedprox]``. Prints, per
method, the process CPU time of the first call in a fresh process (a 200-round curve; goal
< 1 s), of the fixed point alone (goal < 0.1 s; Algorithm 1: the exact prox's fixed point and
the K-step map's contraction, ``riskcalc.linear.dynamics.algorithm1.fixed_point``), the growth of the cost with T_max (whole curve
0..T_max each time, in one process after a warm-up call; goal: doubling T less than doubles the
time) at a fast and a slow contraction, and one simulation reference at d = 1000: FedAvg, the
spectra of one draw (eigendecompositions, a lower bound on any simulation); Algorithm 1, one
replicate of the literal algorithm over the same 200 rounds (``montecarlo.linear.rounds``, one
sampled theta and noise), with the ratio simulation / theory. The first calls include their
imports: with the bytecode cache written (a run before this one, PYTHONDONTWRITEBYTECODE unset);
without it, compiling this tree's modules adds about 0.04 s (measured, Algorithm 1's fixed
point: 0.041 -> 0.08 s).
"""

import subprocess
import sys
import time

import numpy as np

ROOT = __import__('pathlib').Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SETUP = ("import numpy as np, riskcalc; gam = np.linspace(0.4, 3.0, 10); "
         "kw = dict(gamma=gam, r=np.linspace(0.1, 0.6, 10), sigma=np.linspace(0.3, 1.0, 10), "
         "signal=1.0, local_steps=10)")
#: Per method: its extra arguments (Algorithm 1: lam = 0.5, eta = 0.9 / (L + lam), L the top
#: of the clients' spectra, g = 1 / lam by default) and two global steps (fast, slow).
METHODS = {
    "fedavg": ("step_size=0.1", (1.0, 0.05)),
    "fedprox": ("lam=0.5, step_size=0.9 / ((1 + np.sqrt(3.0)) ** 2 + 0.5)", (2.0, 0.2)),
}


def fresh(stmt):
    """Process CPU seconds of ``stmt`` (after the import and setup) in a new interpreter."""
    code = (f"import time; t0 = time.process_time(); {SETUP}; t1 = time.process_time(); "
            f"{stmt}; print(time.process_time() - t1, t1 - t0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()    # this tree's riskcalc
    return float(out[0]), float(out[1])


def verdict(seconds, goal):
    return f"(goal < {goal:g} s: {'met' if seconds < goal else 'NOT met'}, x{seconds / goal:.2f})"


def bench(method):
    extra, steps = METHODS[method]
    call, imp = fresh(f"riskcalc.rounds_limit('{method}', rounds=range(201), {extra}, **kw)")
    print(f"[{method}] 200-round curve, M = 10, K = 10, first call: {call:.3f} s CPU "
          f"{verdict(call, 1.0)} (import {imp:.2f} s)")
    theory = call
    call, _ = fresh(f"riskcalc.rounds_limit('{method}', rounds=np.inf, {extra}, **kw)")
    print(f"[{method}] fixed point alone, first call: {call:.3f} s CPU {verdict(call, 0.1)}")
    if method == "fedavg":
        call, _ = fresh("riskcalc.rounds_limit('fedavg', rounds=range(201), step_size=0.1, "
                        "**kw).local_risk")
        print(f"[fedavg] 200-round curve with the clients' local models (double contour), "
              f"first call: {call:.3f} s CPU")
    import riskcalc
    ns = {}
    exec(SETUP + f"; kw.update(dict({extra}))", ns)
    kw = ns["kw"]
    riskcalc.rounds_limit(method, rounds=[1], **kw)
    for g in steps:
        prev = None
        for tmax in (50, 100, 200, 400, 800, 1600):
            t0 = time.process_time()
            res = riskcalc.rounds_limit(method, rounds=range(tmax + 1), global_step=g, **kw)
            el = time.process_time() - t0
            ratio = "" if prev is None else f"  x{el / prev:.2f} for doubling T"
            print(f"[{method}] global_step {g}, contraction {res.contraction:.4f}, "
                  f"T_max = {tmax:5d}: {el:.3f} s CPU, {res.diagnostics['contour_nodes']} "
                  f"nodes{ratio}", flush=True)
            prev = el
    rng = np.random.default_rng(np.random.SeedSequence(0))
    d, gam = 1000, ns["gam"]
    t0 = time.process_time()
    if method == "fedavg":
        # The spectra of one draw at d = 1000 (all 201 rounds follow from them).
        eta, K = 0.1, 10
        D = np.zeros((d, d))
        for gm, pj in zip(gam, (1 / gam) / np.sum(1 / gam)):
            n = int(round(d / gm))
            X = rng.standard_normal((n, d))
            lam, V = np.linalg.eigh(X.T @ X / n)
            D += pj * (V * (1 - (1 - eta * np.clip(lam, 0, None)) ** K)) @ V.T
        np.linalg.eigh(D)
        what = "the spectra alone (one draw)"
    else:
        from montecarlo.linear.rounds import simulate_rounds

        simulate_rounds("fedprox", rounds=range(201), d=d, reps=2, seed=0,
                        measure="empirical", **kw)
        what = "the literal algorithm, one replicate (2 run, time halved)"
    el = (time.process_time() - t0) / (1 if method == "fedavg" else 2)
    print(f"[{method}] simulation at d = 1000, {what}: {el:.2f} s CPU, x{el / theory:.0f} the "
          "theory's first call")


def main():
    for method in sys.argv[1:] or list(METHODS):
        bench(method)


if __name__ == "__main__":
    main()
