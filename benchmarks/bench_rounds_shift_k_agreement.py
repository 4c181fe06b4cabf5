"""Predicted vs simulated risk along FedAvg's rounds under covariate shift with K >= 2 local
steps (issue 29, ``riskcalc.linear.dynamics.shift.curves``): riskcalc.rounds_limit(...,
spectra=..., local_steps=K) against montecarlo.linear.rounds.simulate_rounds(..., spectra=...)
at several d, extrapolated by weighted least squares in 1/d (``bench_rounds_agreement.
judge_row``), as ``bench_rounds_shift_agreement.py`` does for K = 1.

Prints, per federation, K, client and round T, the predicted server-model risk, the simulated
means (s.e.) at each d, the extrapolation to d = infinity and whether it lies within 0.5% + 3
s.e. of the prediction; then per d the mean and largest |simulated - predicted| / predicted and
the largest |simulated - predicted| / s.e. over the rows.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_shift_k_agreement.py [--d 200,400,800]
[--reps 16] [--K 2,3] [--jobs 1]`` (K = 2, 3: the dense pencil; --K 10 runs the chain route,
``shift.chain``, for these three and four clients).

Measured (defaults: d = 200, 400, 800, 16 replicates, K = 2 and 3, seeds 500 + federation; OMP
1, a 2-core machine loaded by other sessions, load average 5-11; 70.3 s user + 5.2 s sys
process CPU, 400 MB peak): 70 of 70 rows within 0.5% + 3 s.e. after extrapolation in 1/d, the
largest |relative difference| 0.098% (federation 0, client 1, K = 2, T = 100). The finite-d
gap, mean (largest) |simulated - predicted| / predicted over the rows, and the largest in s.e.::

    d = 200: 0.08% (0.32%, 5.8 s.e.)   d = 400: 0.05% (0.17%, 3.9 s.e.)
    d = 800: 0.03% (0.12%, 2.5 s.e.)

With --K 10 --d 200,400 (the chain route): 35 of 35 rows within, largest 0.24% extrapolated;
the finite-d gap 0.09% (0.24%, 5.0 s.e.) at d = 200 and 0.04% (0.11%, 4.5 s.e.) at d = 400;
predictions 5.5 and 7.2 s CPU. Predictions at K = 2, 3: 1.8-3.0 s CPU each; simulations 0.4 / 2.2 / 14 s CPU per federation and K at d =
200 / 400 / 800.
"""

from __future__ import annotations

import argparse

import numpy as np

from bench_rounds_shift_agreement import agreement, summary   # a sibling script

ROUNDS = [1, 5, 20, 100, np.inf]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]
#: (name, federation): anti-aligned two-point spectra against identity and scaled identities,
#: local steps stable on every client (step_size times its sample spectrum's top <= 2).
FEDERATIONS = [
    ("M=3 g=1 samples: 1,4 / 4,1 / identity (tests/test_rounds_shift_k.py)",
     dict(gamma=[0.5, 1.2, 0.8], r=[0.5, 1.0, 0.8], sigma=[0.5, 1.0, 0.7],
          spectra=ANTI + ["identity"], step_size=0.08, global_step=1.0, weights="samples")),
    ("M=4 g=1.3 uniform: 0.5,3,0.3 / 3,0.5,0.3 / scaled:2 / identity",
     dict(gamma=[0.4, 0.9, 1.5, 2.0], r=[0.3, 0.6, 0.9, 1.2], sigma=[0.3, 0.8, 0.3, 0.8],
          spectra=["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "scaled:2", "identity"],
          step_size=0.06, global_step=1.3, weights="uniform")),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="200,400,800")
    ap.add_argument("--reps", type=int, default=16)
    ap.add_argument("--K", default="2,3")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    dims = [int(x) for x in args.d.split(",")]
    rows = []
    for i, (name, fed) in enumerate(FEDERATIONS):
        for K in (int(x) for x in args.K.split(",")):
            rows += agreement(f"{name}, K = {K}",
                              dict(fed, signal=1.0, rounds=ROUNDS, local_steps=K), dims,
                              args.reps, 500 + i, args.jobs)
    summary(rows, dims)


if __name__ == "__main__":
    main()
