"""Coverage of ``riskcalc advise --data --bootstrap``'s intervals, measured by simulation
(issue 30 item 4; ``riskcalc.advise.uncertainty``), and the estimates' standard errors they
start from.

Each replicate draws a federation's data with KNOWN parameters (``montecarlo.linear.federation
.sample_federation``: theta_j = theta_0 + r_j u_j, u_j uniform, Gaussian rows and noise), runs
the chain (``riskcalc.estimate`` -> ``advise`` -> ``uncertainty.bootstrap``) and counts whether
each interval contains the TRUE predicted risk: ``advise`` at the true gamma_j, r_j, sigma_j and
rho_j = ||theta_j|| of the replicate (its realized norm, which the estimate targets). Printed:
coverage of every candidate's mean-risk interval (binomial s.e. over the replicates), of all the
per-client intervals pooled (s.e. from the replicates' coverage fractions, as the intervals of
one replicate are correlated), and of the recommended candidate's, with the stability of the
recommendation.

``--check-se``: the reported standard errors of sigma_j^2, r_j^2, rho_j^2 against the spread of
the estimates over the replicates (ratio sd / mean se, relative s.e. 1 / sqrt(2 (R - 1))).

    OMP_NUM_THREADS=1 python benchmarks/bench_advise_intervals.py [--reps 200 --draws 100]
        [--gamma 0.8 --route moments] [--methods fedavg,ftfa,rtfa,local_ridge]
    OMP_NUM_THREADS=1 python benchmarks/bench_advise_intervals.py --check-se --reps 200
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from montecarlo.linear.federation import sample_federation
from montecarlo.runner.threads import small_blas
from riskcalc.advise import Federation, advise
from riskcalc.advise.uncertainty import bootstrap
from riskcalc.estimate import estimate
from riskcalc.spectrum import Spectrum

#: The federation simulated: four heterogeneous clients (r_j, sigma_j), ||theta_0|| = 1.
R = np.array([1.0, 1.2, 1.5, 2.0])
SIGMA = np.array([0.5, 0.8, 1.0, 0.6])
RHO = np.sqrt(1.0 + R ** 2)
METHODS = ("fedavg", "ftfa", "local_ridge")


def replicate(fed, d, seed, rep, route, draws, methods, spectrum):
    """One replicate: {key: (covered mean?, covered per client (M,))}, recommendation
    stability, point == truth recommended."""
    X, theta, y, _ = sample_federation(fed, d, seed, rep)
    ids = np.repeat(np.arange(fed.m), [x.shape[0] for x in X])
    est = estimate(np.vstack(X), np.concatenate(y), ids, route=route)
    point = advise(est.federation(spectrum=spectrum), methods=methods)
    iv = bootstrap(est, point, spectrum=spectrum, draws=draws,
                   seed=1000 + rep)
    true_fed = Federation(gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                          rho=np.linalg.norm(theta, axis=1), spectrum=fed.spectrum)
    truth = advise(true_fed, methods=methods)
    out = {}
    for c in truth.candidates:
        key = (c.method, c.weights)
        if key not in iv.mean:
            continue
        lo, hi = iv.mean[key]
        q = iv.risks[key]
        out[key] = (lo <= c.mean_risk <= hi, (q[:, 0] <= c.risks) & (c.risks <= q[:, 1]))
    rec_key = (point.recommended.method, point.recommended.weights)
    same = rec_key == (truth.recommended.method, truth.recommended.weights)
    return out, rec_key, iv.stability, same


def coverage(args):
    r = args.r_scale * R
    fed = Federation(gamma=[args.gamma] * 4, r=r, sigma=SIGMA, rho=np.sqrt(1.0 + r ** 2))
    spectrum = Spectrum.parse("identity")
    hits, per_rep, rec_hits, stab, same = {}, [], [], [], []
    t0 = time.time()
    with small_blas():
        for rep in range(args.reps):
            out, rec_key, s, agree = replicate(fed, args.d, args.seed, rep, args.route,
                                               args.draws, args.methods.split(","), spectrum)
            for key, (mean_hit, client_hits) in out.items():
                hits.setdefault(key, []).append(mean_hit)
            per_rep.append(np.mean(np.concatenate([h for _, h in out.values()])))
            rec_hits.append(out[rec_key][0])
            stab.append(s)
            same.append(agree)
            if (rep + 1) % 20 == 0:
                print(f"  {rep + 1} replicates, {time.time() - t0:.0f} s", flush=True)
    n = args.reps
    print(f"federation: M = 4, gamma = {args.gamma}, d = {args.d}, route {args.route}, "
          f"Sigma = I (given), methods {args.methods}, r = {r.tolist()}, "
          f"sigma = {SIGMA.tolist()}, ||theta_0|| = 1; "
          f"{n} replicates x {args.draws} draws, nominal 0.90")
    print(f"{'candidate':<22}{'mean-risk coverage':>20}{'binomial s.e.':>15}")
    for key, h in sorted(hits.items()):
        p = np.mean(h)
        print(f"{key[0] + ' ' + key[1]:<22}{p:>20.3f}{np.sqrt(p * (1 - p) / len(h)):>15.3f}"
              + ("" if len(h) == n else f"   ({len(h)} replicates)"))
    p = np.mean(rec_hits)
    print(f"recommended candidate's mean risk: {p:.3f} +- {np.sqrt(p * (1 - p) / n):.3f} "
          "(binomial s.e.)")
    per_rep = np.array(per_rep)
    print(f"all per-client intervals pooled: {per_rep.mean():.3f} +- "
          f"{per_rep.std(ddof=1) / np.sqrt(n):.3f} (s.e. over replicates)")
    print(f"recommendation stability (mean share of draws): {np.mean(stab):.3f}; point "
          f"recommendation = true one in {np.mean(same):.3f} of the replicates")
    print(f"wall time {time.time() - t0:.0f} s")


def check_se(args):
    fed = Federation(gamma=[args.gamma] * 4, r=R, sigma=SIGMA, rho=RHO)
    vals, ses = {"sigma2": [], "r2": [], "rho2": []}, {"sigma2": [], "r2": [], "rho2": []}
    with small_blas():
        for rep in range(args.reps):
            X, theta, y, _ = sample_federation(fed, args.d, args.seed, rep)
            ids = np.repeat(np.arange(fed.m), [x.shape[0] for x in X])
            est = estimate(np.vstack(X), np.concatenate(y), ids, route=args.route)
            truth = {"sigma2": SIGMA ** 2, "r2": R ** 2,
                     "rho2": np.sum(theta ** 2, axis=1)}          # realized ||theta_j||^2
            for k in vals:
                vals[k].append(est.values[k] - truth[k])
                ses[k].append(est.se[k])
    rel = 1 / np.sqrt(2 * (args.reps - 1))
    print(f"M = 4, gamma = {args.gamma}, d = {args.d}, route {args.route}, {args.reps} "
          f"replicates; ratio = sd of (estimate - truth) / mean reported se, "
          f"each +- {rel:.2f} (relative)")
    for k in vals:
        err, se = np.array(vals[k]), np.array(ses[k])
        ratio = np.sqrt(np.mean(err ** 2, axis=0)) / se.mean(axis=0)
        print(f"{k:<8} rms-error/se per client {np.round(ratio, 2).tolist()}  "
              f"bias/se {np.round(err.mean(0) / se.mean(0), 2).tolist()}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--draws", type=int, default=100)
    p.add_argument("--d", type=int, default=80)
    p.add_argument("--gamma", type=float, default=0.5)
    p.add_argument("--route", default="auto")
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--r-scale", type=float, default=1.0, help="r_j times this")
    p.add_argument("--check-se", action="store_true")
    args = p.parse_args()
    (check_se if args.check_se else coverage)(args)


if __name__ == "__main__":
    main()
