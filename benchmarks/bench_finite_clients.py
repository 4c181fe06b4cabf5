"""Finite number of clients: predicted (riskcalc) vs simulated (montecarlo), and speed.

1. Agreement grid (issue 11): FedAvg, FTFA, RTFA (lam = 0.5) x M in {2, 5, 20, 100} x
   gamma in {0.5, 1.5}, plus the headline FTFA gamma = 2, r = 1, sigma = 0.5 at M = 5 and 20,
   plus a heterogeneous federation, all with the FedAvg global model solved over M simulated
   clients (``montecarlo`` federated setting, exact conditional expectation given X). Each row
   prints the prediction (``riskcalc.clients_limit``), the replicate mean, its standard error
   and whether |difference| <= 4 s.e. + 0.5% of the prediction. One sampled federation serves
   the three methods of a replicate.
2. Finite-d error: FTFA gamma = 2, M = 5 at d = 100, 200, 400, 800 (the deviation shrinks
   like 1/d).
3. Speed: the limits of every client of a heterogeneous federation of M = 1000 clients
   (FedAvg, FTFA, RTFA, and MAML-FL, pFedMe with their own global objectives); then FTFA and
   RTFA for the same 1000 distinct client groups with a general spectrum (two-point {1, 10},
   goal < 1 s; 1000-atom power law, goal < 5 s), batched over the groups, against a loop that
   solves one target group per call (``sigma_group_limits(..., targets=[i])``, the cost
   structure of the former per-group loop), with the ratio and the largest relative difference.

Run: ``python benchmarks/bench_finite_clients.py [--d 800] [--reps 8] [--cache FILE]
[--spectrum two-point:1,10,0.5] [--jobs 2] [--skip-speed | --skip-grid]`` (--cache resumes an
interrupted run; a progress bar shows on stderr; --spectrum runs grids 1 and 2 with that
covariance spectrum shared by every client).
"""

import argparse
import time

import numpy as np

import riskcalc
from montecarlo.linear.instances import Setting, client_params, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks
from riskcalc.linear.finite_clients.sigma import sigma_group_limits
from riskcalc.spectrum import Spectrum

METHODS = (("fedavg", None), ("ftfa", None), ("rtfa", 0.5))
HET = {"gammas": (1.0, 4.0, 0.8), "rs": (2.0, 0.5, 1.5), "sigmas": (0.3, 1.0, 0.2)}


def _spectrum(text):
    return Spectrum.parse(text) if text not in (None, "identity") else None


def replicate(task: dict) -> dict:
    """Bias/variance/risk of the target under every method on one sampled federation."""
    spec = riskcalc.ClientSpec("ftfa", gamma=task["gamma"], r=1.0, sigma=0.5,
                               spectrum=_spectrum(task.get("spectrum")))
    setting = Setting(**task["setting"])
    inst = sample_instance(spec, setting, task["seed"], task["rep"])
    out = {}
    for name, lam in METHODS:
        res = measure(inst, name, [0.0 if lam is None else lam])
        out[name] = [float(res[q][0]) for q in ("bias", "variance", "risk")]
    return out


def predictions(gamma, setting, spectrum=None):
    sp = _spectrum(spectrum)
    spec = riskcalc.ClientSpec("ftfa", gamma=gamma, r=1.0, sigma=0.5, spectrum=sp)
    gam, r, sigma = client_params(spec, setting)
    return {name: riskcalc.clients_limit(name, gamma=gam, r=r, sigma=sigma, lam=lam,
                                         weights=setting.weights, spectrum=sp)
            for name, lam in METHODS}


def points(d):
    pts = [(g, Setting(d=d, clients=m, global_model="federated", weights="samples"))
           for g in (0.5, 1.5) for m in (2, 5, 20, 100)]
    pts += [(2.0, Setting(d=d, clients=m, global_model="federated", weights="uniform"))
            for m in (5, 20)]
    pts += [(2.0, Setting(d=d, clients=m, global_model="federated", weights=w, **HET))
            for m in (4, 20) for w in ("samples", "uniform")]
    return pts


def agreement(d, reps, cache, spectrum, jobs):
    pts = points(d)
    tasks = [{"gamma": g, "setting": s.as_dict(), "seed": 11, "rep": k,
              **({} if spectrum == "identity" else {"spectrum": spectrum})}
             for g, s in pts for k in range(reps)]
    results = run_tasks(replicate, tasks, cache=cache, n_jobs=jobs,
                        desc=f"finite clients d={d}")
    print(f"d = {d}, {reps} replicates, spectrum {spectrum}; pass: |sim - pred| <= 4 se + 0.5% "
          "pred (risk)")
    print(f"{'method':<7} {'gamma':>5} {'M':>4} {'weights':<8} {'het':<4} {'predicted':>10} "
          f"{'simulated':>10} {'se':>8} {'rel.diff':>9} pass")
    worst = 0.0
    for i, (g, s) in enumerate(pts):
        res = results[i * reps:(i + 1) * reps]
        pred = predictions(g, s, spectrum)
        for name, _ in METHODS:
            mean, se = mean_se(np.array([r[name] for r in res]))
            p = float(pred[name].risk[0])
            ok = abs(mean[2] - p) <= 4 * se[2] + 0.005 * p
            worst = max(worst, abs(mean[2] - p) / (4 * se[2] + 0.005 * p))
            print(f"{name:<7} {g:>5g} {s.clients:>4} {s.weights:<8} "
                  f"{'yes' if s.gammas else 'no':<4} {p:>10.6f} {mean[2]:>10.6f} {se[2]:>8.2g} "
                  f"{100 * (mean[2] / p - 1):>+8.3f}% {'yes' if ok else 'NO'}")
    print(f"largest |diff| / (4 se + 0.5%): {worst:.3f}")


def finite_d(reps, cache, spectrum, jobs):
    print(f"FTFA gamma = 2, M = 5, samples, spectrum {spectrum}: relative deviation vs d")
    pred = predictions(2.0, Setting(d=100, clients=5, global_model="federated",
                                    weights="samples"), spectrum)["ftfa"].risk[0]
    for d in (100, 200, 400, 800):
        s = Setting(d=d, clients=5, global_model="federated", weights="samples")
        tasks = [{"gamma": 2.0, "setting": s.as_dict(), "seed": 12, "rep": k,
                  **({} if spectrum == "identity" else {"spectrum": spectrum})}
                 for k in range(reps)]
        mean, se = mean_se(np.array([r["ftfa"] for r in run_tasks(
            replicate, tasks, cache=cache, n_jobs=jobs, desc=f"d={d}")]))
        print(f"  d = {d:>4}: predicted {pred:.6f}, simulated {mean[2]:.6f} +- {se[2]:.2g} "
              f"({100 * (mean[2] / pred - 1):+.3f}%; d x rel.diff = "
              f"{d * (mean[2] / pred - 1):+.2f})")


def speed():
    rng = np.random.default_rng(0)
    m = 1000
    gam = rng.uniform(0.5, 4.0, m)
    r, sigma = rng.uniform(0.5, 2.0, m), rng.uniform(0.1, 1.0, m)
    own = (("maml_fl", {"alpha": 0.1}), ("pfedme", {"lam": 0.5}))
    for name, kw in [(n, {} if lam is None else {"lam": lam}) for n, lam in METHODS] + list(own):
        t0 = time.perf_counter()
        res = riskcalc.clients_limit(name, gamma=gam, r=r, sigma=sigma, **kw)
        dt = time.perf_counter() - t0
        print(f"M = {m} heterogeneous clients, {name}: every client's limit in {dt:.3f} s "
              f"(goal < 1 s); mean risk {res.mean_risk:.6f}")
    spectra = (("two-point {1, 10}", riskcalc.Spectrum.two_point(1.0, 10.0, 0.5), 1.0),
               ("power law, 1000 atoms", riskcalc.Spectrum.power_law(1.0, 1000), 5.0))
    for label, sp, goal in spectra:
        for name, lam in METHODS[1:]:
            t0 = time.perf_counter()
            res = riskcalc.clients_limit(name, gamma=gam, r=r, sigma=sigma, lam=lam, spectrum=sp)
            dt = time.perf_counter() - t0
            lams = np.full(m, 0.0 if lam is None else lam)
            t0 = time.perf_counter()
            loop = np.array([sigma_group_limits(name, gam, r, sigma, np.ones(m), lams, "samples",
                                                sp, targets=[i]) for i in range(m)])[:, :, 0]
            dt_loop = time.perf_counter() - t0
            ref = np.array([res.bias, res.variance]).T
            # FTFA's bias is exactly 0 for gamma <= 1 (least squares) on both routes.
            diff = np.max(np.divide(np.abs(loop - ref), np.abs(ref), out=np.zeros_like(ref),
                                    where=ref != 0))
            print(f"M = {m} groups, {label}, {name}: batched {dt:.3f} s (goal < {goal:g} s), "
                  f"per-group loop {dt_loop:.2f} s, ratio {dt_loop / dt:.1f}x, largest "
                  f"relative difference {diff:.1e}; mean risk {res.mean_risk:.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=800)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--cache", help="JSON-lines cache of finished replicates (resume)")
    parser.add_argument("--spectrum", default="identity",
                        help="covariance spectrum of the grid (identity, two-point:1,10,0.5, ...)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes of the grid")
    parser.add_argument("--skip-grid", action="store_true", help="only the speed benchmark")
    parser.add_argument("--skip-speed", action="store_true", help="only the grid")
    args = parser.parse_args()
    if not args.skip_speed:
        speed()
    if not args.skip_grid:
        finite_d(args.reps, args.cache, args.spectrum, args.jobs)
        agreement(args.d, args.reps, args.cache, args.spectrum, args.jobs)


if __name__ == "__main__":
    main()
