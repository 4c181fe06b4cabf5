"""Predicted (riskcalc.logistic_limit) vs simulated (montecarlo.logistic.ridge) personalized
logistic regression on the grid of issue 14, and the finite-d gap as d grows.

    python benchmarks/bench_logistic_limits.py [--d 800] [--reps 40] [--jobs 1]
        [--gammas 0.5,1,2] [--signals 0.5,1,2] [--rs 0.5,1,2] [--lams 0.03,0.3,3]
        [--cache FILE.jsonl] [--sizes 100,200,400,800] [--optimal]

Per grid point and lam: predicted limit, simulated mean, standard error, relative difference,
and whether ``|sim - pred| <= 3 se + 3% |pred|`` (the issue's criterion); a summary line with
the largest relative difference and the count within. ``--sizes`` instead prints, at the first
grid point, the gap ``sim - pred`` for each d (it should shrink with d); ``--optimal`` simulates
the first grid point at ``lam*`` (``riskcalc.optimal_lambda_logistic``) and at ``lam*/4``,
``lam*/2``, ``2 lam*``, ``4 lam*``: the simulated risk should be lowest at ``lam*``. Exact
Newton solves (``montecarlo.experiments.objectives.prox``), seeds from SeedSequence, resumable with ``--cache``.
"""

from __future__ import annotations

import argparse
import itertools
import time

from montecarlo.logistic.ridge import QUANTITIES, simulate
from riskcalc.logistic import logistic_limit, optimal_lambda_logistic


def floats(text):
    return [float(v) for v in text.split(",")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--d", type=int, default=800)
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--gammas", type=floats, default=[0.5, 1.0, 2.0])
    p.add_argument("--signals", type=floats, default=[0.5, 1.0, 2.0])
    p.add_argument("--rs", type=floats, default=[0.5, 1.0, 2.0])
    p.add_argument("--lams", type=floats, default=[0.03, 0.3, 3.0])
    p.add_argument("--cache")
    p.add_argument("--sizes", type=lambda t: [int(v) for v in t.split(",")])
    p.add_argument("--optimal", action="store_true")
    args = p.parse_args(argv)
    if args.sizes:
        return sizes(args)
    if args.optimal:
        return optimal(args)
    worst, within, total = 0.0, 0, 0
    print(f"d = {args.d}, reps = {args.reps}, seed = {args.seed}")
    print(f"{'gamma':>5} {'S':>4} {'r':>4} {'lam':>6} {'quantity':<12} {'predicted':>10} "
          f"{'simulated':>10} {'se':>8} {'rel.diff':>9} ok")
    for gamma, signal, r in itertools.product(args.gammas, args.signals, args.rs):
        t0 = time.time()
        sim = simulate(gamma=gamma, signal=signal, r=r, lams=args.lams, d=args.d,
                       reps=args.reps, seed=args.seed, n_jobs=args.jobs, cache=args.cache)
        for k, lam in enumerate(args.lams):
            th = logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam)
            for q in QUANTITIES:
                pred, mean, se = getattr(th, q), sim[q][0][k], sim[q][1][k]
                rel = (mean - pred) / abs(pred)
                ok = abs(mean - pred) <= 3 * se + 0.03 * abs(pred)
                worst, within, total = max(worst, abs(rel)), within + ok, total + 1
                print(f"{gamma:>5g} {signal:>4g} {r:>4g} {lam:>6g} {q:<12} {pred:>10.5g} "
                      f"{mean:>10.5g} {se:>8.2g} {100 * rel:>+8.2f}% {'yes' if ok else 'NO'}",
                      flush=True)
        print(f"# ({gamma:g}, {signal:g}, {r:g}) took {time.time() - t0:.0f} s", flush=True)
    print(f"SUMMARY: max |rel diff| = {100 * worst:.2f}%, within 3 se + 3%: {within}/{total}")


def sizes(args):
    gamma, signal, r = args.gammas[0], args.signals[0], args.rs[0]
    print(f"finite-d gap at gamma = {gamma:g}, S = {signal:g}, r = {r:g}, reps = {args.reps}")
    ths = [logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam) for lam in args.lams]
    for d in args.sizes:
        sim = simulate(gamma=gamma, signal=signal, r=r, lams=args.lams, d=d, reps=args.reps,
                       seed=args.seed, n_jobs=args.jobs, cache=args.cache)
        for k, lam in enumerate(args.lams):
            gap = sim["risk"][0][k] - ths[k].risk
            print(f"d = {d:>5} lam = {lam:<6g} risk gap = {gap:+.4f} +- {sim['risk'][1][k]:.4f}"
                  f" ({100 * gap / ths[k].risk:+.2f}%)", flush=True)
    return 0


def optimal(args):
    gamma, signal, r = args.gammas[0], args.signals[0], args.rs[0]
    lam_star, risk_star = optimal_lambda_logistic(gamma=gamma, signal=signal, r=r)
    lams = [lam_star * f for f in (0.25, 0.5, 1.0, 2.0, 4.0)]
    sim = simulate(gamma=gamma, signal=signal, r=r, lams=lams, d=args.d, reps=args.reps,
                   seed=args.seed, n_jobs=args.jobs, cache=args.cache)
    print(f"gamma = {gamma:g}, S = {signal:g}, r = {r:g}: lam* = {lam_star:.5g}, limit "
          f"{risk_star:.5g}; d = {args.d}, reps = {args.reps} (common random numbers)")
    for k, lam in enumerate(lams):
        th = logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam).risk
        print(f"lam = {lam:<8.4g} limit {th:.5f}  simulated {sim['risk'][0][k]:.5f} "
              f"+- {sim['risk'][1][k]:.5f}", flush=True)
    return 0


if __name__ == "__main__":
    main()
