"""Theory vs simulation of the finite-M logistic limits with a covariance spectrum (issue 33).

``riskcalc.logistic_clients_limit(..., spectrum=)`` for FedAvg, RTFA, local ridge and the
FedProx / pFedMe joint objective against the exact pipeline (``montecarlo.logistic.pipeline``,
client 0 the target) at several d, for a two-point and a power-law spectrum; one row per
(case, d, method) and the deviation after a weighted linear fit in 1/d. Run:
``OMP_NUM_THREADS=1 python benchmarks/logistic_spectrum_finite_clients.py [--dims 100,200,400]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import riskcalc
from montecarlo.logistic.pipeline import simulate_pipeline
from riskcalc import Spectrum

CASES = [
    dict(name="two-point M=3 uniform", spec="two-point:1,4,0.5", gamma=[1.0, 2.0, 2.0],
         r=[0.5, 1.0, 1.0], signal=1.5, lam=0.5, global_lam=0.05, weights="uniform"),
    dict(name="power-law M=4 samples", spec="powerlaw:0.5", gamma=[1.0, 1.0, 2.0, 2.0],
         r=[0.0, 0.5, 1.0, 1.5], signal=1.0, lam=0.3, global_lam=0.02, weights="samples"),
]
METHODS = ("fedavg", "rtfa", "local_ridge", "pfedme")
QUANTITIES = ("risk", "sigma_risk", "cosine_uncentred", "test_error")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", default="100,200,400")
    parser.add_argument("--budget", type=int, default=8000, help="reps = budget / d")
    parser.add_argument("--case", default="", help="only the cases whose name contains this")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for case in (c for c in CASES if args.case in c["name"]):
        kw = dict(gamma=case["gamma"], r=case["r"], signal=case["signal"],
                  global_lam=case["global_lam"], weights=case["weights"])
        for d in (int(v) for v in args.dims.split(",")):
            spec = Spectrum.parse(case["spec"], d=d)
            reps = max(8, args.budget // d)
            t0 = time.perf_counter()
            sim = simulate_pipeline(**kw, lams=[case["lam"]], d=d, reps=reps, seed=33,
                                    spectrum=spec, pfedme=True)
            t_sim = time.perf_counter() - t0
            for method in METHODS:
                t0 = time.perf_counter()
                th = riskcalc.logistic_clients_limit(
                    **kw, method=method, spectrum=spec, target=0,
                    lam=None if method == "fedavg" else case["lam"])
                t_th = time.perf_counter() - t0
                row = dict(case=case["name"], d=d, reps=reps, method=method,
                           theory_seconds=t_th, sim_seconds=t_sim)
                for q in QUANTITIES:
                    p = float(getattr(th, q)[0])
                    m, se = (float(np.ravel(v)[0]) for v in sim[method][q])
                    row[q] = dict(predicted=p, simulated=m, se=se, rel=(m - p) / abs(p),
                                  z=(m - p) / se)
                rows.append(row)
                print(f"{case['name']:<22} d={d:4d} reps={reps:3d} {method:<11} theory "
                      f"{t_th:5.2f}s sim {t_sim:4.0f}s  " + "  ".join(
                          f"{q} {row[q]['predicted']:.4f}/{row[q]['simulated']:.4f} "
                          f"({100 * row[q]['rel']:+.1f}%, {row[q]['z']:+.1f}se)"
                          for q in QUANTITIES), flush=True)
        for method in METHODS:
            sel = [r for r in rows if r["case"] == case["name"] and r["method"] == method]
            inv = np.array([1.0 / r["d"] for r in sel])
            parts = []
            for q in QUANTITIES:
                y = np.array([r[q]["simulated"] for r in sel])
                w = 1.0 / np.array([r[q]["se"] for r in sel]) ** 2
                A = np.stack([np.ones_like(inv), inv], 1) * np.sqrt(w)[:, None]
                coef, *_ = np.linalg.lstsq(A, y * np.sqrt(w), rcond=None)
                se0 = float(np.sqrt(np.linalg.inv(A.T @ A)[0, 0]))
                p = sel[-1][q]["predicted"]
                parts.append(f"{q} {coef[0]:.4f}+-{se0:.4f} vs {p:.4f} "
                             f"({100 * (coef[0] - p) / abs(p):+.2f}%)")
            print(f"   {method:<11} extrapolated d->inf: " + "  ".join(parts), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
