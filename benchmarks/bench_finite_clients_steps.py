"""Finite personalization steps from a finite-M FedAvg model: predicted vs simulated, and speed.

1. Agreement grid (issue 20, item 2): FTFA and RTFA (lam = 0.5) after K = 10 full-batch gradient
   steps of size eta = 0.08 from the FedAvg global model, for two spectra (two-point {1, 4}
   and a 20-atom power law j^-1) x M in {2, 5, 20} x gamma in {0.5, 1.5} at --d (default 400),
   and the M = 5 rows again at --d-check (default 800: the deviation shrinks like 1/d). The
   federation is simulated (``montecarlo`` federated setting, sample weights, exact
   conditional expectation given X); one sampled
   federation serves both methods of a replicate. Each row prints the prediction
   (``riskcalc.steps_limit(..., clients=M)``), the replicate mean, its standard error, the
   relative difference and whether |difference| <= 3 s.e. + 0.5% of the prediction.
2. Speed: ``steps_limit(..., clients=5)`` for K = 10, 50, 200 (every k <= K from one pencil)
   and ``optimal_steps`` over 0..200, two-point spectrum.

Run: ``python benchmarks/bench_finite_clients_steps.py [--d 400] [--d-check 800] [--reps 8]
[--cache FILE] [--jobs 1] [--skip-speed | --skip-grid]``.
"""

import argparse
import time

import numpy as np

import riskcalc
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks
from riskcalc.spectrum import Spectrum

METHODS = (("ftfa", None), ("rtfa", 0.5))
SPECTRA = ("two-point:1,4,0.5", "powerlaw:1,20")
STEPS, ETA = 10, 0.08


def replicate(task: dict) -> dict:
    """Risk of the target under both methods after STEPS steps, one sampled federation."""
    spec = riskcalc.ClientSpec("ftfa", gamma=task["gamma"], r=1.0, sigma=0.5,
                               spectrum=Spectrum.parse(task["spectrum"]))
    inst = sample_instance(spec, Setting(**task["setting"]), task["seed"], task["rep"])
    return {name: float(measure(inst, name, [0.0 if lam is None else lam], steps=STEPS,
                                step_size=ETA)["risk"][0]) for name, lam in METHODS}


def agreement(d, d_check, reps, cache, jobs):
    print(f"1. FTFA / RTFA (lam 0.5) after {STEPS} steps (eta {ETA}) from the FedAvg model over "
          f"M clients; r = 1, sigma = 0.5; {reps} replicates")
    print(f"{'spectrum':<18} {'M':>3} {'gamma':>5} {'d':>5} {'method':<5} {'predicted':>10} "
          f"{'simulated':>10} {'s.e.':>8} {'rel.diff':>9}  ok")
    rows = [(sp, m, g, dd) for sp in SPECTRA for m in (2, 5, 20) for g in (0.5, 1.5)
            for dd in ([d, d_check] if m == 5 and d_check else [d])]
    tasks = [{"spectrum": sp, "gamma": g, "seed": 7, "rep": rep,
              "setting": Setting(d=dd, clients=m, global_model="federated",
                                 weights="samples").as_dict()}
             for sp, m, g, dd in rows for rep in range(reps)]
    results = run_tasks(replicate, tasks, cache=cache, n_jobs=jobs, progress=True,
                        desc="steps grid")
    worst, fails = 0.0, 0
    for j, (sp, m, g, dd) in enumerate(rows):
        chunk = results[j * reps:(j + 1) * reps]
        for name, lam in METHODS:
            pred = riskcalc.steps_limit(name, gamma=g, r=1.0, sigma=0.5, lam=lam, steps=STEPS,
                                        step_size=ETA, spectrum=Spectrum.parse(sp),
                                        clients=m).risk
            mean, se = mean_se(np.array([c[name] for c in chunk]))
            rel = (mean - pred) / pred
            ok = abs(mean - pred) <= 3 * se + 0.005 * pred
            worst, fails = max(worst, abs(rel)), fails + (not ok)
            print(f"{sp:<18} {m:>3} {g:>5} {dd:>5} {name:<5} {pred:>10.5f} {mean:>10.5f} "
                  f"{se:>8.2g} {100 * rel:>+8.3f}%  {'yes' if ok else 'NO'}")
    print(f"   largest |rel. diff| {100 * worst:.3f}%, {fails} rows outside 3 s.e. + 0.5%")


def speed():
    sp = Spectrum.two_point(1.0, 4.0, 0.5)
    print("2. speed (two-point spectrum, M = 5, gamma = 2)")
    for k in (10, 50, 200):
        t = time.perf_counter()
        riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, steps=k,
                             step_size=0.05, spectrum=sp, clients=5)
        print(f"   steps_limit K = {k:>3}: {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    best = riskcalc.optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=1.0, step_size=0.05,
                                  spectrum=sp, clients=5, max_steps=200)
    print(f"   optimal_steps over 0..200: k* = {best.params['steps']}, risk {best.risk:.5f}, "
          f"{time.perf_counter() - t:.2f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--d-check", type=int, default=800)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--cache")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-grid", action="store_true")
    args = ap.parse_args()
    if not args.skip_grid:
        agreement(args.d, args.d_check, args.reps, args.cache, args.jobs)
    if not args.skip_speed:
        speed()


if __name__ == "__main__":
    main()
