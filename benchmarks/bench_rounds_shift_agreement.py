"""Predicted vs simulated risk along FedAvg's rounds under covariate shift (issue 29; K = 1,
``riskcalc.linear.dynamics.shift.one_step``): riskcalc.rounds_limit(..., spectra=...) against
montecarlo.linear.rounds.simulate_rounds(..., spectra=...) (exact given the designs, client j's
rows N(0, Sigma_j) in the shared basis, client i's risk in Sigma_i) at several d, extrapolated
by weighted least squares in 1/d (``bench_rounds_agreement.judge_row``).

Prints, per federation, client and round T, the predicted server-model risk, the simulated
means (s.e.) at each d, the extrapolation to d = infinity with its standard error, and whether
abs(extrapolated - predicted) <= 0.5% + 3 s.e. (the issue's criterion); then per d the mean
and largest |simulated - predicted| / predicted over the rows (the finite-d gap).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_shift_agreement.py [--d 200,400,800]
[--reps 16] [--jobs 1] [--select 0,1]``.

Measured (defaults: d = 200, 400, 800, 16 replicates each, seeds 300 + federation; OMP 1, a
2-core machine loaded by other sessions, load average 3.5-5; 46.6 s user + 4.4 s sys process
CPU, 220 MB peak): 65 of 65 rows within 0.5% + 3 s.e. after extrapolation in 1/d; the largest
|relative difference| 0.59% (federation 2, near pooled N = d, client 0 at T = inf: 5.280 (s.e.
0.027) against 5.311, 1.2 s.e.); federations 0 and 1 all within 0.10%. The finite-d gap, mean
(largest) of |simulated - predicted| / predicted over the 65 rows:

    d = 200: 0.17% (2.52%)    d = 400: 0.12% (1.14%)    d = 800: 0.03% (0.20%)

shrinking with d (the largest ones are federation 2's fixed point, 5.445 / 5.372 / 5.322
against 5.311 for client 0 at d = 200 / 400 / 800: the gap 2.5% / 1.1% / 0.2%; its round
map contracts slowest, 0.995). Federation 0 is the federation of ``docs/rounds.rst`` "Under
covariate shift" (the same eta 0.15).
Simulation process CPU per federation at d = 800 (16 replicates): 15.3 s (M = 4), 19.0 s
(M = 6), 6.4 s (M = 3); the predictions 0.6-0.9 s.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from bench_rounds_agreement import judge_row   # a sibling script: benchmarks/ is on sys.path

ROUNDS = [0, 1, 10, 50, 200, np.inf]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]
#: (name, federation): anti-aligned two-point spectra against identity and scaled identities.
FEDERATIONS = [
    ("M=4 g=1 samples: 1,4 / 4,1 / identity / 1,4",
     dict(gamma=[0.5, 1.2, 2.0, 0.8], r=[0.5, 1.0, 0.3, 0.8], sigma=[0.5, 1.0, 0.3, 0.7],
          spectra=ANTI + ["identity", ANTI[0]], step_size=0.15, global_step=1.0,
          weights="samples")),
    ("M=6 g=1.3 uniform: 0.5,3,0.3 / 3,0.5,0.3 / 1,2 / identity",
     dict(gamma=list(np.linspace(0.4, 3.0, 6)), r=list(np.linspace(0.2, 1.2, 6)),
          sigma=[0.3, 0.8] * 3,
          spectra=["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "two-point:1,2,0.5",
                   "identity", "two-point:0.5,3,0.3", "two-point:3,0.5,0.3"],
          step_size=0.1, global_step=1.3, weights="uniform")),
    ("M=3 near pooled N = d (sum 1/gamma = 1.23) g=1: 1,4 / 4,1 / scaled:2",
     dict(gamma=[2.0, 2.5, 3.0], r=[0.5, 1.0, 0.8], sigma=[0.5, 0.3, 0.8],
          spectra=ANTI + ["scaled:2"], step_size=0.2, global_step=1.0, weights="samples")),
]


def agreement(title, kw, dims, reps, seed, jobs):
    """Predict ``kw``'s curves (``rounds_limit("fedavg", **kw)``), simulate them at each d of
    ``dims``, print the table of the module docstring under ``title`` and return, per row (a
    client and a round T > 0), (relative difference, within, |sim - pred| / pred per d,
    |sim - pred| / s.e. per d); ``bench_rounds_shift_k_agreement`` shares it."""
    clock = time.process_time()
    pred = riskcalc.rounds_limit("fedavg", **kw)
    clock = time.process_time() - clock
    sims = []
    for d in dims:
        start = time.process_time()
        sims.append(simulate_rounds("fedavg", **kw, d=d, reps=reps, seed=seed, jobs=jobs))
        print(f"  simulated d = {d}: {time.process_time() - start:.1f} s CPU", flush=True)
    print(f"\n{title}: contraction {pred.contraction:.5f}, prediction {clock:.1f} s CPU")
    print(f"  {'quantity':>10} {'j':>3} {'T':>4} {'predicted':>10} "
          + " ".join(f"{'d=' + str(d):>17}" for d in dims)
          + f" {'extrap.':>10} {'s.e.':>8} {'rel':>8}  ok")
    rows = []
    for j in range(pred.risk.shape[0]):
        for t, T in enumerate(kw["rounds"]):
            if T == 0:      # the zero model: no randomness
                continue
            p_val = pred.risk[j, t]
            y = np.array([s.risk[j, t] for s in sims])
            se = np.array([s.risk_se[j, t] for s in sims])
            rel, ok = judge_row("risk", j, T, p_val, dims, y, se)
            rows.append((rel, ok, np.abs(y - p_val) / p_val, np.abs(y - p_val) / se))
    return rows


def summary(rows, dims):
    """Print how many ``agreement`` rows lie within the criterion and the finite-d gaps."""
    rel, ok, gaps, zs = (np.array(x) for x in zip(*rows))
    print(f"\n{int(ok.sum())} of {len(rows)} within 0.5% + 3 s.e. after extrapolation in 1/d; "
          f"largest |relative difference| {100 * np.max(np.abs(rel)):.3f}%")
    print("finite-d gap |sim - pred| / pred, mean (largest) over the rows; largest in s.e.: "
          + "    ".join(f"d = {d}: {100 * g.mean():.2f}% ({100 * g.max():.2f}%, {z.max():.1f} "
                        "s.e.)" for d, g, z in zip(dims, gaps.T, zs.T)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="200,400,800")
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--select", default=None)
    args = ap.parse_args()
    chosen = (range(len(FEDERATIONS)) if args.select is None
              else [int(x) for x in args.select.split(",")])
    dims = [int(x) for x in args.d.split(",")]
    rows = []
    for i, (name, fed) in enumerate(FEDERATIONS):
        if i in chosen:
            rows += agreement(name, dict(fed, signal=1.0, rounds=ROUNDS, local_steps=1), dims,
                              args.reps, 300 + i, args.jobs)
    summary(rows, dims)


if __name__ == "__main__":
    main()
