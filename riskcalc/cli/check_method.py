"""``riskcalc check-method NAME``: the method registry's common checks on one method
(``montecarlo.check_method``), e.g. a method loaded with ``--plugin``."""

from __future__ import annotations

import json
import math
from riskcalc.cli import COMMANDS


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "check-method", help=COMMANDS["check-method"],
        description="Check that a method's limit is finite, vectorized and route-independent, "
                    "that its estimator has the right shapes, and that the simulated bias, "
                    "variance and risk on small instances agree with the limit (99.9% "
                    "interval plus --rtol). Exit status 1 when a check fails.")
    p.add_argument("method", metavar="METHOD", help="a registered method name")
    p.add_argument("--d", type=int, default=200, help="dimension of the simulation (200)")
    p.add_argument("--reps", type=int, default=10, help="replicates, >= 2 (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--rtol", type=float, default=0.03,
                   help="allowance for the finite-d difference, relative (default 0.03)")
    p.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    p.set_defaults(func=run)


def run(args) -> int:
    from montecarlo.registry_checks import run_checks

    rows = run_checks(args.method, d=args.d, reps=args.reps, seed=args.seed, rtol=args.rtol)
    if args.json:
        # Strict JSON: an infinite difference (a limit of the wrong shape) becomes null.
        print(json.dumps([{k: (bool(v) if k == "ok" else None if isinstance(v, float)
                               and not math.isfinite(v) else v) for k, v in row.items()}
                          for row in rows]))
    else:
        for row in rows:
            extra = ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in row.items() if k not in ("check", "case", "ok"))
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {row['check']:<20} {row['case']:<18} "
                  f"{extra}")
    return 0 if all(row["ok"] for row in rows) else 1
