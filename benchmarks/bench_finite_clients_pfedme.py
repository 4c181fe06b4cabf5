"""pFedMe at finite M with a general spectrum: predicted vs simulated (issue 20, item 1).

pFedMe (lam = 0.5) with its own global objective (paper 003, eq. 14) over M identical simulated
clients, for two spectra (two-point {1, 4} and a 20-atom power law j^-1) x M in {2, 5, 20} x
gamma in {0.5, 1.5} at --d (default 400), and the M = 5 rows again at --d-check (default 800).
Exact conditional measure, sample weights, r = 1, sigma = 0.5. Each row prints the prediction
(``riskcalc.limit("pfedme", ..., clients=M)``, ``riskcalc.linear.finite_clients_pfedme_sigma``),
the oracle limit (M -> infinity), the replicate mean, its standard error, the relative
difference and whether |difference| <= 3 s.e. + 0.5% of the prediction.

Run: ``python benchmarks/bench_finite_clients_pfedme.py [--d 400] [--d-check 800] [--reps 6]
[--cache FILE] [--jobs 1]``.
"""

import argparse

import numpy as np

import riskcalc
from montecarlo.instances import Setting, sample_instance
from montecarlo.measure import measure
from montecarlo.stats import mean_se
from montecarlo.tasks import run_tasks
from riskcalc.spectrum import Spectrum

SPECTRA = ("two-point:1,4,0.5", "powerlaw:1,20")
LAM = 0.5


def replicate(task: dict) -> float:
    spec = riskcalc.ClientSpec("pfedme", gamma=task["gamma"], r=1.0, sigma=0.5, lam=LAM,
                               spectrum=Spectrum.parse(task["spectrum"]))
    inst = sample_instance(spec, Setting(**task["setting"]), task["seed"], task["rep"])
    return float(measure(inst, "pfedme", [LAM])["risk"][0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=400)
    ap.add_argument("--d-check", type=int, default=800)
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--cache")
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    rows = [(sp, m, g, dd) for sp in SPECTRA for m in (2, 5, 20) for g in (0.5, 1.5)
            for dd in ([args.d, args.d_check] if m == 5 and args.d_check else [args.d])]
    tasks = [{"spectrum": sp, "gamma": g, "seed": 5, "rep": rep,
              "setting": Setting(d=dd, clients=m, global_model="federated",
                                 weights="samples").as_dict()}
             for sp, m, g, dd in rows for rep in range(args.reps)]
    res = run_tasks(replicate, tasks, cache=args.cache, n_jobs=args.jobs, progress=True,
                    desc="pfedme grid")
    print(f"pFedMe (lam {LAM}), r = 1, sigma = 0.5, {args.reps} replicates")
    print(f"{'spectrum':<18} {'M':>3} {'gamma':>5} {'d':>5} {'oracle':>9} {'predicted':>10} "
          f"{'simulated':>10} {'s.e.':>8} {'rel.diff':>9}  ok")
    worst, fails = 0.0, 0
    for j, (sp, m, g, dd) in enumerate(rows):
        kw = dict(gamma=g, r=1.0, sigma=0.5, lam=LAM, spectrum=Spectrum.parse(sp))
        pred = riskcalc.limit("pfedme", clients=m, **kw).risk
        oracle = riskcalc.limit("pfedme", **kw).risk
        mean, se = mean_se(np.array(res[j * args.reps:(j + 1) * args.reps]))
        rel = (mean - pred) / pred
        ok = abs(mean - pred) <= 3 * se + 0.005 * pred
        worst, fails = max(worst, abs(rel)), fails + (not ok)
        print(f"{sp:<18} {m:>3} {g:>5} {dd:>5} {oracle:>9.5f} {pred:>10.5f} {mean:>10.5f} "
              f"{se:>8.2g} {100 * rel:>+8.3f}%  {'yes' if ok else 'NO'}")
    print(f"largest |rel. diff| {100 * worst:.3f}%, {fails} rows outside 3 s.e. + 0.5%")


if __name__ == "__main__":
    main()
