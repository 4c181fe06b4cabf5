"""Cost of simulating training curves (``montecarlo.rounds``): one replicate of a 200-round
curve (every T = 0..200) for 10 heterogeneous clients with K = 10 local steps.

Federation: gamma_j = linspace(0.5, 2, 10), r_j = linspace(0.2, 2, 10), sigma_j = 0.5,
signal 1, sample weights, Sigma = I (and the two-point spectrum {1, 4} with --spectrum);
local step eta = 0.5 / (lam + (1 + sqrt(2))^2), half the stability edge 2 / (lam + top of the
limiting sample spectrum of the client with gamma = 2); Algorithm 1 with lam = 1 and g = 1/lam.
Rows: FedAvg exact given the designs (closed form, ``measure="conditional"``) and Algorithm 1
on one sampled draw (``measure="empirical"``), at each --d; then the growth in the number of
rounds asked (FedAvg, T_max = 50, 100, 200, 400 at the first d), and Algorithm 1 exact given
the designs at a small d (its cost grows like d (sum_j k_j)^2 per round). Times are process CPU
seconds with one BLAS thread (as every task of ``montecarlo.tasks`` runs), first call
included; the theory (``riskcalc.rounds_limit``) is to be compared with them.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_sim.py [--d 400 1000]
[--spectrum two-point:1,4,0.5]``.
"""

import argparse
import time

import numpy as np

from montecarlo.rounds import rounds_params, rounds_task
from montecarlo.threads import small_blas

M, K, LAM = 10, 10, 1.0


def one(method, d, rounds, measure, spectrum):
    lam = LAM if method == "fedprox" else None
    top = (1 + np.sqrt(2.0)) ** 2 * (4.0 if spectrum else 1.0)
    params = rounds_params(method, gamma=np.linspace(0.5, 2.0, M), r=np.linspace(0.2, 2.0, M),
                           sigma=[0.5] * M, signal=1.0, rounds=rounds, local_steps=K,
                           step_size=0.5 / ((lam or 0.0) + top), lam=lam, d=d,
                           spectrum=spectrum)
    with small_blas():
        t = time.process_time()
        out = rounds_task({**params, "measure": measure, "seed": 0, "rep": 0, "draws": 1})
        return time.process_time() - t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--spectrum", default=None)
    ap.add_argument("--small-d", type=int, default=60)
    a = ap.parse_args()
    rounds = list(range(201))
    print(f"{'method':<8} {'measure':<12} {'d':>5} {'T_max':>5} {'cpu s':>8} {'contraction':>11}"
          f" {'risk[0, 200]':>12}")
    for d in a.d:
        for method, measure in (("fedavg", "conditional"), ("fedprox", "empirical")):
            cpu, out = one(method, d, rounds, measure, a.spectrum)
            print(f"{method:<8} {measure:<12} {d:>5} {200:>5} {cpu:>8.2f} "
                  f"{out['contraction']:>11.4f} {out['risk'][0][200]:>12.5g}")
    for tmax in (50, 100, 200, 400):
        cpu, out = one("fedavg", a.d[0], list(range(tmax + 1)), "conditional", a.spectrum)
        print(f"{'fedavg':<8} {'conditional':<12} {a.d[0]:>5} {tmax:>5} {cpu:>8.2f} "
              f"{out['contraction']:>11.4f} {out['risk'][0][200 if tmax >= 200 else tmax]:>12.5g}")
    cpu, out = one("fedprox", a.small_d, rounds, "conditional", a.spectrum)
    print(f"{'fedprox':<8} {'conditional':<12} {a.small_d:>5} {200:>5} {cpu:>8.2f} "
          f"{out['contraction']:>11.4f} {out['risk'][0][200]:>12.5g}")


if __name__ == "__main__":
    main()
