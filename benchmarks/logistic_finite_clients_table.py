"""Predicted vs simulated: the federated logistic pipeline at finite M (issue 19's table).

For every (M, S, r) of the grid and every lam, the finite-M limits
(``riskcalc.logistic_limit(..., clients=M, global_lam=1e-3)``) beside the exact-minimizer
simulation (``montecarlo.logistic.pipeline.simulate_pipeline``), gamma = 1, client 0 the target.

    PYTHONPATH=. python benchmarks/logistic_finite_clients_table.py --d 400 --reps 20

Prints one row per (M, S, r, method, lam, quantity): the prediction, the simulated mean and its
standard error, and the relative deviation; ``--json FILE`` also writes them.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import riskcalc
from montecarlo.logistic.pipeline import simulate_pipeline

GRID = [(M, S, r) for M in (2, 5, 20) for S, r in ((1.0, 1.0), (2.0, 0.5))]
LAMS = [0.1, 1.0]
GLOBAL_LAM = 1e-3


def rows(M, S, r, d, reps, seed):
    sim = simulate_pipeline(gamma=1.0, signal=S, r=r, lams=LAMS, global_lam=GLOBAL_LAM, d=d,
                            reps=reps, clients=M, seed=seed)
    kw = dict(gamma=1.0, signal=S, r=r, clients=M, global_lam=GLOBAL_LAM)
    oracle = [riskcalc.logistic_limit(gamma=1.0, signal=S, r=r, lam=lam) for lam in LAMS]
    cases = [("fedavg", None, riskcalc.logistic_limit(**kw, method="fedavg"), None)]
    cases += [(m, lam, riskcalc.logistic_limit(**kw, lam=lam, method=m), k)
              for k, lam in enumerate(LAMS) for m in ("rtfa", "local_ridge")]
    out = []
    for method, lam, th, k in cases:
        for q in ("risk", "cosine_uncentred", "test_error"):
            mean, se = (float(np.asarray(v) if k is None else np.asarray(v)[k])
                        for v in sim[method][q])
            pred = float(getattr(th, q))
            out.append(dict(M=M, S=S, r=r, d=d, reps=reps, method=method, lam=lam, quantity=q,
                            predicted=pred, simulated=mean, se=se, rel=(mean - pred) / pred,
                            oracle=oracle[k].risk if (q == "risk" and k is not None) else None))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=400)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    table = []
    for M, S, r in GRID:
        for row in rows(M, S, r, args.d, args.reps, args.seed):
            table.append(row)
            print("M={M:2d} S={S:g} r={r:g} {method:11s} lam={lam!s:4s} {quantity:10s} "
                  "pred={predicted:9.4f} sim={simulated:9.4f} se={se:.4f} rel={rel:+.3f}"
                  .format(**row), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(table, fh, indent=1)


if __name__ == "__main__":
    main()
