"""Timing of riskcalc.rounds_limit (FedAvg, K local steps, Sigma = I): the issue-29 targets.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_theory.py``. Prints the process CPU
time of the first call in a fresh process (a 200-round curve, 10 heterogeneous clients,
K = 10), of the fixed point alone, and the growth of the cost with T_max (whole curve
0..T_max each time), plus one simulation-free reference: the finite-d exact conditional risk
at d = 1000 (one draw, eigendecomposition) for the same curve.
"""

import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parents[1]))

SETUP = ("import numpy as np, riskcalc; gam = np.linspace(0.4, 3.0, 10); "
         "kw = dict(gamma=gam, r=np.linspace(0.1, 0.6, 10), sigma=np.linspace(0.3, 1.0, 10), "
         "signal=1.0, local_steps=10, step_size=0.1)")


def fresh(stmt):
    """Process CPU seconds of ``stmt`` (after the import) in a new interpreter."""
    code = (f"import time; t0 = time.process_time(); {SETUP}; t1 = time.process_time(); "
            f"{stmt}; print(time.process_time() - t1, t1 - t0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), float(out[1])


def main():
    call, imp = fresh("riskcalc.rounds_limit('fedavg', rounds=range(201), **kw)")
    print(f"200-round curve, M = 10, K = 10, first call: {call:.3f} s CPU (import {imp:.2f} s)")
    call, _ = fresh("riskcalc.rounds_limit('fedavg', rounds=np.inf, **kw)")
    print(f"fixed point alone, first call: {call:.3f} s CPU")
    call, _ = fresh("riskcalc.rounds_limit('fedavg', rounds=range(201), **kw).local_risk")
    print(f"200-round curve with the clients' local models (double contour), first call: "
          f"{call:.3f} s CPU")
    import riskcalc
    ns = {}
    exec(SETUP, ns)
    kw = ns["kw"]
    riskcalc.rounds_limit("fedavg", rounds=[1], **kw)
    for g in (1.0, 0.05):    # contraction 0.75 and 0.987 (slow: the nodes grow with T)
        prev = None
        for tmax in (50, 100, 200, 400, 800, 1600):
            t0 = time.process_time()
            res = riskcalc.rounds_limit("fedavg", rounds=range(tmax + 1), global_step=g, **kw)
            el = time.process_time() - t0
            ratio = "" if prev is None else f"  x{el / prev:.2f} for doubling T"
            print(f"global_step {g}, contraction {res.contraction:.4f}, T_max = {tmax:5d}: "
                  f"{el:.3f} s CPU, {res.diagnostics['contour_nodes']} nodes{ratio}")
            prev = el
    # Finite-d reference (exact conditional risk of one draw at d = 1000, all 201 rounds).
    rng = np.random.default_rng(np.random.SeedSequence(0))
    d, gam, eta, K = 1000, ns["gam"], 0.1, 10
    t0 = time.process_time()
    D = np.zeros((d, d))
    for gm, pj in zip(gam, (1 / gam) / np.sum(1 / gam)):
        n = int(round(d / gm))
        X = rng.standard_normal((n, d))
        lam, V = np.linalg.eigh(X.T @ X / n)
        D += pj * (V * (1 - (1 - eta * np.clip(lam, 0, None)) ** K)) @ V.T
    np.linalg.eigh(D)
    print(f"finite-d reference: the spectra alone at d = 1000 (one draw): "
          f"{time.process_time() - t0:.2f} s CPU")


if __name__ == "__main__":
    main()
