"""Cost of simulating training curves (``montecarlo.linear.rounds``): one replicate of a 200-round
curve (every T = 0..200) for 10 heterogeneous clients with K = 10 local steps.

Federation: gamma_j = linspace(0.5, 2, 10), r_j = linspace(0.2, 2, 10), sigma_j = 0.5,
signal 1, sample weights, Sigma = I (and the two-point spectrum {1, 4} with --spectrum);
local step eta = 0.5 / (lam + (1 + sqrt(2))^2), half the stability edge 2 / (lam + top of the
limiting sample spectrum of the client with gamma = 2); Algorithm 1 with lam = 1 and g = 1/lam.
Rows: FedAvg exact given the designs (closed form, ``measure="conditional"``) and Algorithm 1
on one sampled draw (``measure="empirical"``), at each --d; then the growth in the number of
rounds asked (FedAvg, T_max = 50, 100, 200, 400 at the first d), and Algorithm 1 exact given
the designs at a small d (its cost grows like d (sum_j k_j)^2 per round). Times are process CPU
seconds with one BLAS thread (as every task of ``montecarlo.runner.tasks`` runs), first call
included; the theory (``riskcalc.rounds_limit``) is to be compared with them.

With --fixed-points: the T = inf risks of FedAvg (K = 1: the pooled least squares) and of
Algorithm 1 (the joint FedProx minimizer), simulated exactly given the designs, next to the
existing finite-M limits ``riskcalc.clients_limit("fedavg" | "pfedme")``. With --stability: the
spectral radius of Algorithm 1's and FedAvg's round maps on one sampled 5-client federation
(gamma 0.25..4, d = 40) for eta = f * 2 / (lam + L) (L the largest sample eigenvalue), K in
{1, 2, 5, 20} and several global steps.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_sim.py [--d 400 1000]
[--spectrum two-point:1,4,0.5] [--fixed-points] [--stability]``.
"""

import argparse
import time

import numpy as np

from montecarlo.linear.rounds import rounds_task
from montecarlo.linear.rounds_inputs import rounds_params
from montecarlo.runner.threads import small_blas

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


def fixed_points(ds):
    import riskcalc
    from montecarlo.linear.rounds import simulate_rounds

    fed = dict(gamma=[0.5, 1.0, 2.0], r=[0.5, 1.0, 1.5], sigma=[0.5, 1.0, 0.3], signal=1.0,
               rounds=[np.inf], reps=6, seed=3, measure="conditional")
    runs = (("fedavg", dict(local_steps=1, step_size=0.05)),
            ("fedprox", dict(local_steps=5, step_size=0.05, lam=0.7)))
    for method, kw in runs:
        lim = riskcalc.clients_limit("pfedme" if method == "fedprox" else method,
                                     gamma=fed["gamma"], sigma=fed["sigma"], r=fed["r"],
                                     lam=kw.get("lam"))
        print(f"{method} T = inf, theory (clients_limit): {np.round(lim.risk, 4)}")
        for d in ds:
            s = simulate_rounds(method, **fed, **kw, d=d)
            print(f"  d = {d:>4}: {np.round(s.risk[:, 0], 4)} +- {np.round(s.risk_se[:, 0], 4)}")


def stability():
    from montecarlo.linear.decomposition import decompose
    from montecarlo.linear.rounds import sample_designs
    from montecarlo.linear.rounds_fedavg import fedavg_conditional
    from montecarlo.linear.rounds_columns import client_basis
    from montecarlo.linear.rounds_propagate import Propagation

    d, gamma = 40, np.array([0.25, 0.5, 1.0, 2.0, 4.0])
    s = np.ones(d)
    X = sample_designs(gamma, s, 0, 0)
    basis = [client_basis(dec) for dec in decompose(X, s, eager_v=True)]
    n = np.array([x.shape[0] for x in X])
    p, m = n / n.sum(), len(X)
    L = max(mu.max() for _, mu in basis)
    beta, zero = [np.zeros((mu.size, 1)) for _, mu in basis], [np.zeros((d, 1))] * m
    grid = [(f, K) for f in (0.5, 0.9, 0.99) for K in (1, 2, 5, 20)]
    print(f"spectral radius; columns f in (0.5, 0.9, 0.99) x K in (1, 2, 5, 20); L = {L:.3f}")
    for lam in (0.1, 1.0, 10.0):
        Lg = lam * L / (lam + L)
        for name, g in (("1/lam", 1 / lam), ("1.9/lam", 1.9 / lam), ("1/L_g", 1 / Lg),
                        ("1/(2L_g)", 0.5 / Lg)):
            row = [Propagation("fedprox", basis, beta, zero, s, p, K, f * 2 / (lam + L), g,
                               lam, False).contraction() for f, K in grid]
            print(f"Alg. 1 lam {lam:<4} g {name:<8} " + " ".join(f"{x:.4f}" for x in row))
    for g in (0.5, 1.0, 2.0):
        row = [fedavg_conditional(basis, n, s, p, np.ones(m), np.ones(m), 1.0, [1], K,
                                  f * 2 / L, g)["contraction"] for f, K in grid]
        print(f"FedAvg g {g:<4}             " + " ".join(f"{x:.4f}" for x in row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--d", type=int, nargs="+", default=[400, 1000])
    ap.add_argument("--spectrum", default=None)
    ap.add_argument("--small-d", type=int, default=60)
    ap.add_argument("--fixed-points", action="store_true")
    ap.add_argument("--stability", action="store_true")
    a = ap.parse_args()
    if a.fixed_points:
        fixed_points(a.d)
    if a.stability:
        stability()
    if a.fixed_points or a.stability:
        return
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
