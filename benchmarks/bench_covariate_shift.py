"""Covariate shift at finite M: predicted (riskcalc) vs simulated (montecarlo), and speed.

1. Agreement grid: three federations with per-client covariances diagonal in one shared basis
   (``riskcalc.linear.finite_clients_shift``), FedAvg, FTFA and RTFA (lam = 0.5) with the FedAvg
   global model over M in {2, 5, 20} simulated clients, gamma in {0.5, 1.5} for the target
   (the others cycle through gamma 1 and 3), weights n_j / N:
   ``anti``: target two-point:1,4,0.5, others the anti-aligned two-point:4,1,0.5;
   ``scaled``: target scaled:2, others identity, scaled:0.5 and two-point:1,4,0.5;
   ``powerlaw``: target powerlaw:1 (d eigenvalues), others scaled:0.5 and two-point:4,1,0.5.
   Each row: the prediction at the simulated d (``montecarlo.compare.federated_limit``: the
   joint measure of the simulated coordinates), the replicate mean (exact conditional
   expectation given X), its standard error, and whether |difference| <= 3 s.e. + 0.5%.
2. Finite-d error: the ``anti`` and ``powerlaw`` federations at M = 5, gamma = 1.5, the three
   methods, at d = 100, 200, 400, 800 (``--fd-reps`` replicates).
3. Speed: every client's limit in a federation of 1000 distinct clients of three covariance
   types (two-point, anti-aligned two-point and scaled:2; then with powerlaw:1 at d = 200 in
   place of scaled:2), goal < 2 s.

Run: ``python benchmarks/bench_covariate_shift.py [--d 400] [--reps 6] [--fd-reps 16]
[--skip-grid] [--skip-speed]``.
"""

import argparse
import time

import numpy as np

import riskcalc
from montecarlo.compare import federated_limit
from montecarlo.instances import Setting, sample_instance
from montecarlo.measure import measure
from montecarlo.stats import mean_se

METHODS = (("fedavg", None), ("ftfa", None), ("rtfa", 0.5))
FEDERATIONS = {
    "anti": ("two-point:1,4,0.5", ("two-point:4,1,0.5",)),
    "scaled": ("scaled:2", ("identity", "scaled:0.5", "two-point:1,4,0.5")),
    "powerlaw": ("powerlaw:1", ("scaled:0.5", "two-point:4,1,0.5")),
}


def point(name, gamma, m, d, reps, seed=5):
    """Per method: (prediction, mean, se) of the target's risk on ``reps`` federations."""
    target, others = FEDERATIONS[name]
    sp = riskcalc.Spectrum.parse(target, d=d)
    setting = Setting(d=d, clients=m, global_model="federated", weights="samples",
                      spectra=(target,) + others, gammas=(1.0, 3.0))
    specs = {meth: riskcalc.ClientSpec(meth, gamma=gamma, r=1.0, sigma=0.5, lam=lam,
                                       spectrum=None if sp.is_identity else sp)
             for meth, lam in METHODS}
    sims = {meth: [] for meth, _ in METHODS}
    for k in range(reps):
        inst = sample_instance(specs["ftfa"], setting, seed, k)
        for meth, lam in METHODS:
            sims[meth].append(measure(inst, meth, [lam or 0.0])["risk"][0])
    return {meth: (federated_limit(specs[meth], setting, "auto").risk, *mean_se(sims[meth]))
            for meth, _ in METHODS}


def grid(d, reps):
    print(f"1. agreement grid, d = {d}, {reps} replicates (risk; ok: |diff| <= 3 se + 0.5%)")
    print(f"{'federation':<10} {'M':>3} {'gamma':>5} {'method':<7} {'predicted':>10} "
          f"{'simulated':>10} {'se':>8} {'rel.diff':>9} ok")
    bad = 0
    for name in FEDERATIONS:
        for m in (2, 5, 20):
            for gamma in (0.5, 1.5):
                for meth, (pred, mean, se) in point(name, gamma, m, d, reps).items():
                    ok = abs(mean - pred) <= 3 * se + 0.005 * pred
                    bad += not ok
                    print(f"{name:<10} {m:>3} {gamma:>5} {meth:<7} {pred:>10.5f} {mean:>10.5f} "
                          f"{se:>8.5f} {(mean - pred) / pred:>+9.4f} {'yes' if ok else 'NO'}",
                          flush=True)
    print(f"   rows outside the allowance: {bad}")


def finite_d(reps):
    print(f"2. finite-d error, M = 5, gamma = 1.5, {reps} replicates (rel. diff of the risk "
          "+- its s.e.)")
    for name in ("anti", "powerlaw"):
        for d in (100, 200, 400, 800):
            res = point(name, 1.5, 5, d, reps, seed=11)
            print(f"   {name:<9} d = {d:>4}: " + "  ".join(
                f"{meth} {(mean - pred) / pred:+.4f} +- {se / pred:.4f}"
                for meth, (pred, mean, se) in res.items()), flush=True)


def speed():
    print("3. speed: every client's limit, 1000 distinct clients, three covariance types")
    rng = np.random.default_rng(0)
    m = 1000
    gam, r, sig = rng.uniform(0.5, 4.0, m), rng.uniform(0.5, 2.0, m), rng.uniform(0.2, 1.0, m)
    for third, d in (("scaled:2", None), ("powerlaw:1", 200)):
        types = ("two-point:1,4,0.5", "two-point:4,1,0.5", third)
        spectra = [types[j % 3] for j in range(m)]
        for meth, lam in METHODS:
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                riskcalc.clients_limit(meth, gamma=gam, r=r, sigma=sig, lam=lam,
                                       spectra=spectra, d=d)
                best = min(best, time.perf_counter() - t0)
            print(f"   {', '.join(types)}{'' if d is None else f' (d = {d})'}: {meth:<6} "
                  f"{best:.3f} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--fd-reps", type=int, default=16)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    args = ap.parse_args()
    if not args.skip_speed:
        speed()
    if not args.skip_grid:
        grid(args.d, args.reps)
        finite_d(args.fd_reps)


if __name__ == "__main__":
    main()
