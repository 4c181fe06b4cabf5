"""Theory vs simulation of the logistic limits with a covariance spectrum (issue 33).

``riskcalc.logistic_limit(..., spectrum=)`` against exact-Newton simulations
(``montecarlo.logistic.ridge``) at d = 200, 400, 800 for a two-point and a power-law spectrum:
prints one row per (case, d) with the relative deviation of each quantity and its standard
error, and the deviation after a linear fit in 1/d. Run:
``OMP_NUM_THREADS=1 python benchmarks/logistic_spectrum_simulation.py [--reps K] [--jobs J]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import riskcalc
from montecarlo.logistic.ridge import simulate
from riskcalc import Spectrum

CASES = [
    dict(name="two-point oracle", spec="two-point:1,4,0.5", gamma=1.0, signal=1.5, r=1.0,
         lam=0.3, centre="oracle"),
    dict(name="power-law oracle", spec="powerlaw:0.5", gamma=2.0, signal=1.5, r=1.0, lam=0.1,
         centre="oracle"),
    dict(name="two-point local ridge", spec="two-point:1,4,0.5", gamma=0.5, signal=0.0, r=2.0,
         lam=0.05, centre="oracle"),
]
QUANTITIES = ("risk", "sigma_risk", "cosine", "test_logloss", "test_error")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", default="200,400,800")
    parser.add_argument("--reps", type=int, default=0, help="0: 160000 / d")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for case in CASES:
        for d in (int(v) for v in args.dims.split(",")):
            spec = Spectrum.parse(case["spec"], d=d)
            t0 = time.perf_counter()
            pred = riskcalc.logistic_limit(gamma=case["gamma"], signal=case["signal"],
                                           r=case["r"], lam=case["lam"], spectrum=spec,
                                           centre=case["centre"])
            t_theory = time.perf_counter() - t0
            reps = args.reps or max(20, 160000 // d)
            t0 = time.perf_counter()
            sim = simulate(gamma=case["gamma"], signal=case["signal"], r=case["r"],
                           lams=[case["lam"]], d=d, reps=reps, seed=33, n_jobs=args.jobs,
                           spectrum=spec)
            t_sim = time.perf_counter() - t0
            row = dict(case=case["name"], d=d, reps=reps, theory_seconds=t_theory,
                       sim_seconds=t_sim)
            for q in QUANTITIES:
                p, (m, se) = getattr(pred, q), (float(sim[q][0][0]), float(sim[q][1][0]))
                row[q] = dict(predicted=p, simulated=m, se=se, rel=(m - p) / abs(p),
                              z=(m - p) / se)
            rows.append(row)
            print(f"{case['name']:<22} d={d:4d} reps={reps:4d} theory {t_theory:.2f}s sim "
                  f"{t_sim:.0f}s  " + "  ".join(
                      f"{q} {row[q]['predicted']:.5f}/{row[q]['simulated']:.5f} "
                      f"({100 * row[q]['rel']:+.2f}%, {row[q]['z']:+.1f} se)" for q in QUANTITIES),
                  flush=True)
        sel = [r for r in rows if r["case"] == case["name"]]
        if len(sel) >= 2:
            inv = np.array([1.0 / r["d"] for r in sel])
            for q in QUANTITIES:
                y = np.array([r[q]["simulated"] for r in sel])
                w = 1.0 / np.array([r[q]["se"] for r in sel]) ** 2
                A = np.stack([np.ones_like(inv), inv], 1) * np.sqrt(w)[:, None]
                coef, *_ = np.linalg.lstsq(A, y * np.sqrt(w), rcond=None)
                cov = np.linalg.inv(A.T @ A)
                p = sel[-1][q]["predicted"]
                print(f"   {q:<13} extrapolated d->inf {coef[0]:.5f} +- {np.sqrt(cov[0, 0]):.5f}"
                      f" vs theory {p:.5f} ({100 * (coef[0] - p) / abs(p):+.2f}%)", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
