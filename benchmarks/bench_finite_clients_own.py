"""MAML-FL and pFedMe at finite M with a general spectrum: predicted vs simulated (issue 20).

The two methods of paper 003 with their own global objective (eq. 12, MAML-FL with step size
alpha, default 0.05; eq. 14, pFedMe with penalty lam, default 0.5; ``--tuning`` overrides)
over M simulated clients, for two spectra (two-point {1, 4} and a 20-atom power law j^-1).
Exact conditional measure, sample weights, sigma = 0.5, seed 5.

* Default rows: M identical clients (r = 1), M in {2, 5, 20} x gamma in {0.5, 1.5}
  (pFedMe) or {0.5, 1.5, 3} (MAML-FL) at --d (default 400), and the M = 5 rows again at
  --d-check (default 800; 0 skips them), without the pairs with M <= gamma (pooled
  N = M d / gamma <= d leaves the global model undetermined). The prediction is
  ``riskcalc.limit(method, ..., clients=M)``.
* ``--hetero``: federations whose clients differ, gamma = (2, 2, 0.5, 1.5, 3) with
  r = (1, 0.5, 1, 1.5, 1), and gamma = (2, 0.8) with r = (1, 0.5), each client in turn the
  target (client 0 of ``montecarlo.linear.instances``, the others in their listed order, as
  ``compare --global federated --clients-file`` simulates them) at --d. The prediction is
  ``riskcalc.clients_limit(method, ...)`` for the whole federation.

Each row prints the oracle limit (M -> infinity, the target's own parameters), the prediction,
the replicate mean, its standard error, the relative difference and whether |difference| <=
3 s.e. + 0.5% of the prediction. Where the theory refuses (ValueError or SolverError: e.g.
MAML-FL with a non-identity spectrum before its finite-M limit exists) the prediction is
"n/a", and the last line gives the range of (simulated / oracle - 1) over those rows.

Run: ``python benchmarks/bench_finite_clients_own.py [--method pfedme|maml_fl] [--tuning T]
[--hetero] [--d 400] [--d-check 800] [--reps 6 (pFedMe) / 8 (MAML-FL)] [--cache FILE]
[--jobs 1]``.
"""

import argparse

import numpy as np

import riskcalc
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks
from riskcalc.spectrum import Spectrum

SPECTRA = ("two-point:1,4,0.5", "powerlaw:1,20")
SIGMA = 0.5
#: method -> (title, tuning name, default tuning, default gamma grid, default replicates)
METHODS = {"pfedme": ("pFedMe", "lam", 0.5, (0.5, 1.5), 6),
           "maml_fl": ("MAML-FL", "alpha", 0.05, (0.5, 1.5, 3.0), 8)}
#: heterogeneous federations: (gamma_j, r_j), sigma = SIGMA for every client
FEDERATIONS = (((2.0, 2.0, 0.5, 1.5, 3.0), (1.0, 0.5, 1.0, 1.5, 1.0)),
               ((2.0, 0.8), (1.0, 0.5)))


def replicate(task: dict) -> float:
    name = METHODS[task["method"]][1]
    spec = riskcalc.ClientSpec(task["method"], gamma=task["gamma"], r=task["r"],
                               sigma=SIGMA, spectrum=Spectrum.parse(task["spectrum"]),
                               **{name: task["tuning"]})
    inst = sample_instance(spec, Setting(**task["setting"]), task["seed"], task["rep"])
    return float(measure(inst, task["method"], [task["tuning"]])["risk"][0])


def predicted(fn):
    """The theory's value, or None where it refuses (not implemented yet, or no solution)."""
    try:
        return fn()
    except (ValueError, riskcalc.SolverError):
        return None


def homogeneous_rows(method, tuning, args):
    """The default grid's rows (spectrum, gamma, r, d, M, other clients (None: the
    target's copies), oracle limit, prediction or None)."""
    name, gammas = METHODS[method][1], METHODS[method][3]
    rows = []
    for sp in SPECTRA:
        kw = dict(r=1.0, sigma=SIGMA, spectrum=Spectrum.parse(sp), **{name: tuning})
        for m in (2, 5, 20):
            for g in gammas:
                if m <= g:      # pooled N = M d / gamma <= d: no unique global model
                    continue
                oracle = riskcalc.limit(method, gamma=g, **kw).risk
                pred = predicted(lambda: riskcalc.limit(method, gamma=g, clients=m, **kw).risk)
                for dd in ([args.d, args.d_check] if m == 5 and args.d_check else [args.d]):
                    rows.append((sp, g, 1.0, dd, m, None, oracle, pred))
    return rows


def hetero_rows(method, tuning, args):
    """The rows of ``--hetero``: every client of every federation of ``FEDERATIONS`` as the
    target, in both spectra."""
    name = METHODS[method][1]
    rows = []
    for sp in SPECTRA:
        spectrum = Spectrum.parse(sp)
        for gam, r in FEDERATIONS:
            res = predicted(lambda: riskcalc.clients_limit(
                method, gamma=list(gam), r=list(r), sigma=SIGMA, spectrum=spectrum,
                **{name: tuning}).risk)
            for k in range(len(gam)):
                others = [j for j in range(len(gam)) if j != k]
                oracle = riskcalc.limit(method, gamma=gam[k], r=r[k], sigma=SIGMA,
                                        spectrum=spectrum, **{name: tuning}).risk
                rows.append((sp, gam[k], r[k], args.d, len(gam),
                             ([gam[j] for j in others], [r[j] for j in others]),
                             oracle, None if res is None else float(res[k])))
    return rows


def task(method, tuning, row, rep):
    """Replicate ``rep`` of ``row``: everything its randomness and its result depend on."""
    sp, g, r, d, m, others, _, _ = row
    hetero = {} if others is None else {"gammas": others[0], "rs": others[1], "sigmas": [SIGMA]}
    return {"method": method, "tuning": tuning, "spectrum": sp, "gamma": g, "r": r,
            "seed": 5, "rep": rep,
            "setting": Setting(d=d, clients=m, global_model="federated", weights="samples",
                               **hetero).as_dict()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", choices=tuple(METHODS), default="pfedme")
    ap.add_argument("--tuning", type=float,
                    help="lam of pFedMe (default 0.5) or alpha of MAML-FL (default 0.05)")
    ap.add_argument("--hetero", action="store_true",
                    help="the heterogeneous federations instead of the default grid")
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--d-check", type=int, default=800)
    ap.add_argument("--reps", type=int, help="replicates (default 6 for pFedMe, 8 for MAML-FL)")
    ap.add_argument("--cache")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    title, name, default, _, default_reps = METHODS[args.method]
    tuning = default if args.tuning is None else args.tuning
    reps = default_reps if args.reps is None else args.reps
    rows = (hetero_rows if args.hetero else homogeneous_rows)(args.method, tuning, args)
    tasks = [task(args.method, tuning, row, rep) for row in rows for rep in range(reps)]
    res = run_tasks(replicate, tasks, cache=args.cache, n_jobs=args.jobs, progress=True,
                    desc=f"{args.method} grid")
    if args.hetero:
        print(f"{title} ({name} {tuning:g}), sigma = {SIGMA}, {reps} replicates, "
              "heterogeneous federations, each client in turn the target")
        head = f"{'spectrum':<18} {'M':>3} {'gamma':>5} {'r':>4} {'d':>5}"
    else:
        print(f"{title} ({name} {tuning:g}), r = 1, sigma = {SIGMA}, {reps} replicates")
        head = f"{'spectrum':<18} {'M':>3} {'gamma':>5} {'d':>5}"
    print(f"{head} {'oracle':>9} {'predicted':>10} {'simulated':>10} {'s.e.':>8} "
          f"{'rel.diff':>9}  ok")
    worst, fails, gaps = 0.0, 0, []
    for j, (sp, g, r, dd, m, _, oracle, pred) in enumerate(rows):
        mean, se = mean_se(np.array(res[j * reps:(j + 1) * reps]))
        lead = (f"{sp:<18} {m:>3} {g:>5} {r:>4} {dd:>5}" if args.hetero
                else f"{sp:<18} {m:>3} {g:>5} {dd:>5}")
        if pred is None:
            gaps.append((mean - oracle) / oracle)
            print(f"{lead} {oracle:>9.5f} {'n/a':>10} {mean:>10.5f} {se:>8.2g} {'n/a':>9}  -")
            continue
        rel = (mean - pred) / pred
        ok = abs(mean - pred) <= 3 * se + 0.005 * pred
        worst, fails = max(worst, abs(rel)), fails + (not ok)
        print(f"{lead} {oracle:>9.5f} {pred:>10.5f} {mean:>10.5f} {se:>8.2g} "
              f"{100 * rel:>+8.3f}%  {'yes' if ok else 'NO'}")
    if len(gaps) < len(rows):
        print(f"largest |rel. diff| {100 * worst:.3f}%, {fails} rows outside 3 s.e. + 0.5%")
    if gaps:
        print(f"{len(gaps)} rows without a prediction (the theory refuses); simulated / oracle "
              f"- 1 there: {100 * min(gaps):+.1f}% to {100 * max(gaps):+.1f}%")


if __name__ == "__main__":
    main()
