"""Speed of the closed-form measurement against a naive implementation (issue 3, item 5).

One client at d = 1600, gamma = 2 (n = 800), a 20-value lam grid of RTFA (paper 003,
``003_4b976ddf5225c17e.txt``, eq. 8, Thm 2), exact conditional bias and variance (eq. 3):

* naive: form S = X^T X / n, then per lam a d x d inverse of S + lam I and d x d products;
* fast (``montecarlo.linear.measure``): one n x n eigendecomposition of X X^T, then O(n) per lam.

Prints the time of each, their ratio (goal >= 10x), the cost of the lam sweep relative to one
decomposition (goal <= 1.5x), and the largest difference between the two answers. Run:
``python benchmarks/bench_linear.py [--d 1600] [--gamma 2] [--lams 20] [--spectrum SPEC]``.

``--accuracy`` instead runs the agreement check of issue 3 (too slow for CI): every method at
d = 1000, 20 replicates, identity / two-point / power-law spectra and gamma in {1.5, 2, 4},
printing each risk's relative difference to riskcalc and the worst case (goal: within 1%).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from montecarlo.compare import compare
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import Decomposition, measure
from riskcalc import ClientSpec, Spectrum


def naive(X, s, lams, r, sigma):
    """Bias and variance by d x d linear algebra per lam (the reference implementation)."""
    n, d = X.shape
    S = X.T @ X / n
    out = []
    for lam in lams:
        R = np.linalg.inv(S + lam * np.eye(d))
        B = lam * R
        bias = r ** 2 / d * np.trace(B @ (s[:, None] * B))
        var = sigma ** 2 / n * np.trace((s[:, None] * S) @ R @ R)
        out.append((bias, var))
    return np.array(out)


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


ACCURACY_PARAMS = {"fedavg": dict(r=1.0), "local": dict(rho=1.2),
                   "local_ridge": dict(rho=1.2, lam=0.5), "ftfa": dict(r=1.0),
                   "rtfa": dict(r=1.0, lam=0.5), "maml_fl": dict(r=1.0, alpha=0.1),
                   "pfedme": dict(r=1.0, lam=0.5)}


def accuracy(d, reps, spectra, gammas, n_jobs, global_model, clients):
    """Relative difference of the simulated risk to riskcalc's, for every method and setting."""
    worst = (0.0, None)
    print(f"{'method':<12} {'spectrum':<18} {'gamma':>5} {'predicted':>10} {'simulated':>10} "
          f"{'rel.diff':>9} {'in CI':>5}")
    for text in spectra:
        spectrum = Spectrum.parse(text, d=d)
        for gamma in gammas:
            for method, kw in ACCURACY_PARAMS.items():
                spec = ClientSpec(method, gamma=gamma, sigma=0.5,
                                  spectrum=None if spectrum.is_identity else spectrum, **kw)
                res = compare(spec, Setting(d=d, global_model=global_model, clients=clients),
                              reps=reps, seed=0, n_jobs=n_jobs).as_dict()
                rel = res["comparison"]["risk"]["rel_diff"]
                print(f"{method:<12} {text:<18} {gamma:>5g} {res['risk']:>10.5f} "
                      f"{res['simulated']['risk']:>10.5f} {100 * rel:>+8.3f}% "
                      f"{'yes' if res['comparison']['risk']['inside_ci95'] else 'no':>5}",
                      flush=True)
                if abs(rel) > abs(worst[0]):
                    worst = (rel, f"{method} {text} gamma={gamma:g}")
    print(f"worst relative difference of the risk: {100 * worst[0]:+.3f}% ({worst[1]})")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, help="dimension (default 1600; 1000 with --accuracy)")
    ap.add_argument("--gamma", type=float, default=2.0)
    ap.add_argument("--lams", type=int, default=20)
    ap.add_argument("--spectrum", default="powerlaw:0.5")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--accuracy", action="store_true",
                    help="run the agreement check instead (default d = 1000)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--global", dest="global_model", default="oracle")
    ap.add_argument("--clients", type=int, default=100)
    args = ap.parse_args(argv)
    if args.accuracy:
        accuracy(args.d or 1000, args.reps, ["identity", "two-point:0.5,2,0.5", "powerlaw:0.5",
                                "powerlaw:1"], [1.5, 2.0, 4.0], args.jobs, args.global_model,
                 args.clients)
        return
    args.d = args.d or 1600
    lams = np.logspace(-2, 1, args.lams)
    spectrum = Spectrum.parse(args.spectrum, d=args.d)
    spec = ClientSpec("rtfa", gamma=args.gamma, r=1.0, sigma=0.5, lam=float(lams[0]),
                      spectrum=None if spectrum.is_identity else spectrum)
    inst = sample_instance(spec, Setting(d=args.d), seed=0, rep=0)
    X, s = inst.X[0], inst.s

    t_dec, _ = best_of(lambda: Decomposition(X, s), args.repeat)
    t_fast, fast = best_of(lambda: measure(inst, "rtfa", lams), args.repeat)
    t_naive, ref = best_of(lambda: naive(X, s, lams, 1.0, 0.5), 1)
    err = max(np.max(np.abs(fast["bias"] - ref[:, 0]) / ref[:, 0]),
              np.max(np.abs(fast["variance"] - ref[:, 1]) / ref[:, 1]))
    print(f"d = {args.d}, n = {X.shape[0]}, {args.lams} lam values, spectrum {args.spectrum}")
    print(f"  one decomposition (X X^T + eigh):  {t_dec:8.3f} s")
    print(f"  fast lam sweep (montecarlo):       {t_fast:8.3f} s  "
          f"= {t_fast / t_dec:.2f}x one decomposition (goal <= 1.5x)")
    print(f"  naive lam sweep (d x d per lam):   {t_naive:8.3f} s")
    print(f"  speed-up naive / fast:             {t_naive / t_fast:8.1f}x (goal >= 10x)")
    print(f"  max relative difference:           {err:8.1e}")


if __name__ == "__main__":
    main()
