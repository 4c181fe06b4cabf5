"""Benchmark: the larger simulation checks of the minimax rates (issue 5, part 4).

    python benchmarks/rates_full.py [--reps 150] [--seed 20240605] [--d 5]

Runs the experiments of ``montecarlo.experiments.rates`` at sizes beyond the tests and prints, for each
claim, the fitted exponents with 95% intervals (``riskcalc.minimax.ratecheck.fit_power_law``), the
``[c, C]`` verdicts (``rate_check``), the FedAvg/local crossovers against the thresholds, and
the round counts against paper 004 Cor. 1 and paper 001 Thm 3.1:

1. R = 0, n in 100..6400, m in {2, 4, 8}: FedAvg exponents in (N, m), local in (n, m), over
   the whole grid and over n >= 160 d (papers 000 Thms 4, 6, 8);
2. (n, R) grid, n in {200, 800, 3200}, R^2 = f d/n, f in 1/16..16: FedAvg, local, FedProx at
   paper 004 Thm 1's lambda, fine-tuning's best checkpoint, each over Thm 8's lower bound;
3. crossovers: measured, asymptotic (1 - 1/m) tr(H^-1)/n, Thm 8's kink d/n,
   ``dichotomy_threshold`` with Lemma 7's constants;
4. bilevel FedProx rounds vs Cor. 1, APGD1/APGD2 rounds vs Thm 3.1 (aligned and paper 001
   instances).

The verdicts use the bands stated in ``tests/test_rates_simulation.py`` (Fisher constant
``a = tr(H^-1)/d`` within a factor 2). Exit status 1 if any verdict fails.

Measured (2 cores, ``--reps 100``, seed 20240605): 28 s + 79 s + 53 s = 160 s wall; every
verdict ok.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from montecarlo.experiments import rates
from riskcalc.minimax.ratecheck import fit_power_law, rate_check


def _fit_line(label, fit):
    parts = [f"{k} {v:+.3f} [{fit.ci[k][0]:+.3f}, {fit.ci[k][1]:+.3f}]"
             for k, v in fit.exponents.items()]
    return f"  {label:<34} " + "; ".join(parts)


def homogeneous(args, verdicts):
    g = rates.homogeneous_grid([100, 200, 400, 800, 1600, 3200, 6400], [2, 4, 8], d=args.d,
                               reps=args.reps, seed=args.seed)
    print("1. R = 0 (exact minimizers), exponents with 95% intervals; claimed N -1 / n -1, m 0")
    far = g["n"] >= 160 * args.d
    for metric in ("err", "ier"):
        fa = g[f"fedavg_{metric}"].mean(-1)
        lo = g[f"local_{metric}"].mean(-1)
        f_fa = fit_power_law({"N": g["N"], "m": g["m"]}, fa)
        f_lo = fit_power_law({"n": g["n"], "m": g["m"]}, lo)
        f_far = fit_power_law({"n": g["n"][far], "m": g["m"][far]}, lo[far])
        print(_fit_line(f"FedAvg {metric}, all n", f_fa))
        print(_fit_line(f"local {metric}, all n", f_lo))
        print(_fit_line(f"local {metric}, n >= 160 d", f_far))
        verdicts[f"FedAvg {metric} N-exponent -1 in CI"] = f_fa.ci["N"][0] <= -1 <= f_fa.ci["N"][1]
        verdicts[f"local {metric} n-exponent -1 in CI (n >= 160 d)"] = (
            f_far.ci["n"][0] <= -1 <= f_far.ci["n"][1])
    a = g["fisher_trace_inv"] / args.d
    print(f"  n err/d of local by n (asymptotic a = tr(H^-1)/d = {a:.3f}):")
    for n in np.unique(g["n"]):
        sel = g["n"] == n
        vals = g["local_err"][sel] * n / args.d
        print(f"    n = {n:>5g}: {vals.mean():.3f} +- {vals.std(ddof=1) / np.sqrt(vals.size):.3f}"
              "  (pooled over m and replicates)")
    for key, bound in (("fedavg_err", args.d / g["N"]), ("local_err", args.d / g["n"])):
        chk = rate_check({"N": g["N"], "m": g["m"]}, g[key].mean(-1), bound, c=a / 2, C=2 * a)
        print(f"  {key} / (d/N or d/n): ratio in [{chk.ratio_min:.2f}, {chk.ratio_max:.2f}],"
              f" band [{a / 2:.2f}, {2 * a:.2f}] -> {'ok' if chk.within else 'FAIL'}")
        verdicts[f"{key} band"] = chk.within


def heterogeneous(args, verdicts):
    f = np.geomspace(1 / 16, 16, 9)
    g = rates.heterogeneity_grid([200, 800, 3200], f, m=4, d=args.d, reps=args.reps,
                                 seed=args.seed)
    a_max = g["fisher_trace_inv"].max() / args.d
    print(f"\n2. (n, R) grid, R^2 = f d/n, f = 1/16..16, m = 4; mean error / Thm 8 bound "
          f"min(d/n, R^2) + d/N (a_max = {a_max:.3f})")
    print("  lambda of paper 004 Thm 1 by f (n = 200): "
          + " ".join(f"{v:.3g}" for v in g["lam"][0]))
    best = np.minimum(g["fedavg_err"].mean(-1), g["local_err"].mean(-1))
    rows = {"FedAvg": g["fedavg_err"].mean(-1), "local": g["local_err"].mean(-1),
            "oracle dichotomy": best, "FedProx (Thm 1 lam)": g["fedprox_err"].mean(-1),
            "fine-tuning (best ckpt)": g["finetune_err"]}
    print("  f:" + " " * 24 + " ".join(f"{v:>6.3g}" for v in f))
    for name, err in rows.items():
        for k, n in enumerate(g["n"]):
            print(f"  {name:<22} n={n:<5g}" + " ".join(f"{v:>6.2f}"
                                                     for v in err[k] / g["lower_bound"][k]))
    lo, hi = 1 / (1 + 1 / 4) / 2, 2 * a_max
    grid = {"n": g["n"][:, None], "R": g["R"]}
    for name in ("oracle dichotomy", "FedProx (Thm 1 lam)", "fine-tuning (best ckpt)"):
        chk = rate_check(grid, rows[name], g["lower_bound"], c=lo, C=hi)
        print(f"  {name}: ratio in [{chk.ratio_min:.2f}, {chk.ratio_max:.2f}], band "
              f"[{lo:.2f}, {hi:.2f}] -> {'ok' if chk.within else 'FAIL'}; fitted constant "
              f"{chk.constants.constants['C']:.2f}")
        verdicts[f"{name} band"] = chk.within
    ratio = rows["FedProx (Thm 1 lam)"] / best
    print(f"  FedProx / better of FedAvg, local: max {ratio.max():.3f}, min {ratio.min():.3f}")
    tab = rates.crossover_table(g)
    print("\n3. FedAvg/local crossover R^2_x (replicate means) against thresholds")
    for k, n in enumerate(g["n"]):
        x = tab["measured"][k]
        print(f"  n = {n:<5g} R^2_x = {x:.4g}; asymptotic {tab['asymptotic'][k]:.4g} "
              f"(ratio {x / tab['asymptotic'][k]:.2f}); Thm 8 kink d/n {tab['kink'][k]:.4g} "
              f"(ratio {x / tab['kink'][k]:.2f}); dichotomy_threshold (Lemma 7 constants) "
              f"{tab['dichotomy'][k]:.4g} (ratio {x / tab['dichotomy'][k]:.2f})")
    verdicts["crossover within 2x of asymptotic"] = bool(
        np.all(np.abs(np.log(tab["measured"] / tab["asymptotic"])) <= np.log(2)))


def rounds(args, verdicts):
    print("\n4. Round counts")
    b = rates.bilevel_rounds(np.geomspace(0.01, 100, 9), mu=1e-2, eps=1e-6, seed=args.seed)
    fit = fit_power_law({"kappa_g": b["kappa_g"]}, b["simulated"])
    print("  bilevel FedProx (aligned quadratic, L/mu = 100, eps = 1e-6):")
    for lam, s, c, k, inner in zip(b["lam"], b["simulated"], b["corollary1"], b["kappa_g"],
                                   b["K"]):
        print(f"    lam {lam:>8.3g} kappa_g {k:>6.2f} K {inner:>4d} simulated {s:>6g} "
              f"Cor. 1 {c:>6g} sim/(kappa_g log 1/eps) {s / (k * np.log(1e6)):.3f}")
    print(_fit_line("rounds vs kappa_g (claimed 1)", fit))
    verdicts["bilevel rounds <= Cor. 1"] = bool(np.all(b["simulated"] <= b["corollary1"]))
    for instance in ("aligned", "paper001"):
        for algo, lams, mus, var, claimed in (
                ("apgd1", np.geomspace(0.02, 1.0, 6), 1e-4, "lam", 0.5),
                ("apgd2", 10.0, np.geomspace(1e-4, 5e-3, 6), "mu", -0.5)):
            res = rates.apgd_rounds(algo, lams, mus, instance=instance, d=10, reps=args.apgd_reps,
                                    seed=args.seed)
            sim = res["simulated"]
            x = np.broadcast_to(res[var][:, None], sim.shape)
            fit = fit_power_law({var: x}, sim)
            below = int(np.sum(sim < res["lower_bound"][:, None]))
            print(f"  {algo} on {instance}: rounds (mean over {sim.shape[1]} instances) "
                  + " ".join(f"{v:.0f}" for v in sim.mean(1)) + "; Thm 3.1 bound "
                  + " ".join(str(v) for v in res["lower_bound"])
                  + f"; runs below bound: {below}")
            print(_fit_line(f"{algo} {instance} (claimed {claimed:+})", fit))
            if instance == "aligned":
                verdicts[f"{algo} aligned >= Thm 3.1"] = below == 0
                verdicts[f"{algo} aligned exponent in CI"] = (
                    fit.ci[var][0] <= claimed <= fit.ci[var][1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=150)
    parser.add_argument("--apgd-reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20240605)
    parser.add_argument("--d", type=int, default=5)
    args = parser.parse_args(argv)
    verdicts = {}
    for part in (homogeneous, heterogeneous, rounds):
        start = time.perf_counter()
        part(args, verdicts)
        print(f"  ({part.__name__}: {time.perf_counter() - start:.1f} s)")
    print("\nverdicts")
    for name, ok in verdicts.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
