"""Paper 004 (*The effect of personalization in FedProx*): claims and their checks.

File ``004_98172ed3646eef14.txt``.

Evidence routes: Lemma 2's constants against the curvature of a numerically built Moreau
envelope; the proof's norm split against random vectors; Table 1 against paper 000's minimax
lower bound; Thm 2's rate and the experiments' claims against ``montecarlo``'s bilevel FedProx
and exact minimizers on the paper's synthetic logistic data; Thm 1's adaptive lambda against
exact minimizers on paper 000 Lemma 7's instances (``montecarlo.experiments.rates.heterogeneity_grid``),
where its constants L, mu, rho are computable exactly.
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms import fedprox_bilevel
from montecarlo.experiments.problems import quadratic_instance
from montecarlo.experiments.metrics import exact_solution
from montecarlo.experiments.paper004 import authors_data, authors_errors, authors_floor, authors_run
from montecarlo.experiments.rates import heterogeneity_grid
from montecarlo.runner.seeding import replicate_rng
from montecarlo.runner.stats import mean_se
from paper_checks.core import Outcome, claim, judge, judge_erratum, stated
from paper_checks.evidence import Z, fmt
from riskcalc import minimax


@claim("004.lemma2.bilevel-constants", location="Lemma 2", kind="closed-form identity",
       statement="The Moreau envelope F_i of an L-smooth mu-strongly convex f_i (parameter 1/lam) "
                 "is mu_g = lam mu/(lam + mu) strongly convex and L_g = lam L/(lam + L) smooth; the "
                 "prox map is L_w = lam/(lam + mu) Lipschitz.",
       mutants=('equality',))
def lemma2(cfg, seed):
    rng = replicate_rng(seed, 0)
    d, mu, L = 12, 0.2, 5.0
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    H = (Q * np.geomspace(mu, L, d)) @ Q.T
    rows, ok = [], True
    for lam in (0.1, 1.0, 30.0):
        # Envelope gradient lam (w - prox(w)), prox(w) = (H + lam)^-1 lam w: its Jacobian,
        # computed column by column from the prox map (not from the closed form).
        P = np.column_stack([np.linalg.solve(H + lam * np.eye(d), lam * e) for e in np.eye(d)])
        J = lam * (np.eye(d) - P)
        ev = np.linalg.eigvalsh((J + J.T) / 2)
        lip = np.linalg.norm(P, 2)
        c = {k: stated(v, "equality") for k, v in minimax.bilevel_constants(L, mu, lam).items()}
        ok &= (abs(ev[0] - c["mu_g"]) < 1e-9 and abs(ev[-1] - c["L_g"]) < 1e-9
               and abs(lip - c["L_w"]) < 1e-9)
        rows.append({"lam": lam, "envelope_min_eig": ev[0], "mu_g": c["mu_g"],
                     "envelope_max_eig": ev[-1], "L_g": c["L_g"], "prox_lipschitz": lip,
                     "L_w": c["L_w"]})
    return judge(ok, "quadratic f with Hessian spectrum [0.2, 5]: " + "; ".join(
        f"lam={x['lam']:g}: envelope curvature [{fmt(x['envelope_min_eig'])}, "
        f"{fmt(x['envelope_max_eig'])}] vs [mu_g, L_g] = [{fmt(x['mu_g'])}, {fmt(x['L_g'])}], "
        f"prox Lipschitz {fmt(x['prox_lipschitz'])} vs L_w {fmt(x['L_w'])}" for x in rows),
        {"points": rows})


@claim("004.thm1.eq50-split", location="Thm 1 proof, eq. 50 (constants C1-C4)",
       kind="inequality",
       statement="E||w_g - w*_g||^2 <= E||w_g - w_GT||^2 + E||w_GT - w*_g||^2 (coefficients 1, 1), "
                 "giving C1 = 32 rho^2/mu^2 and the other constants of Thm 1.",
       mutants=('upper',))
def eq50(cfg, seed):
    rng = replicate_rng(seed, 0)
    a, b = rng.standard_normal((2, 10000, 5))
    lhs = np.sum((a + b) ** 2, 1)
    one_one = np.sum(a * a, 1) + np.sum(b * b, 1)
    two_two = 2 * one_one
    frac_bad = float(np.mean(lhs > one_one))
    worst = float(np.max(lhs / one_one))
    ok_corr = bool(np.all(lhs <= stated(two_two, "upper") * (1 + 1e-12)))
    printed = minimax.fedprox_constants(1.0, 1.0, 1.0)
    fixed = minimax.fedprox_constants(1.0, 1.0, 1.0, rederived=True)
    # Verdict level (paper_checks.core): only Thm 1's constants C1-C4 change (by factors 2), not
    # its rates.
    return judge_erratum(frac_bad > 0, ok_corr,
                         f"10000 random pairs in R^5: ||a+b||^2 > ||a||^2 + ||b||^2 for "
                         f"{100 * frac_bad:.0f}%, ratio up to {worst:.3f} (a = b gives 2); with "
                         f"coefficients 2, 2 never violated; C1 (L=mu=rho=1): printed "
                         f"{printed.C1:g} -> {fixed.C1:g}, C3 {printed.C3:g} -> {fixed.C3:g}",
                         {"violation_fraction": frac_bad, "max_ratio": worst,
                          "printed": printed._asdict(), "rederived": fixed._asdict()},
                         "E||w_g - w*_g||^2 <= 2 E||w_g - w_GT||^2 + 2 E||w_GT - w*_g||^2; the "
                         "recursion then needs g <= 1/(16 L^2) and gives C1 = 64 rho^2/mu^2, "
                         "C2 = max{((1 + sqrt 3) rho/mu)^2, 64 kappa^2}, C3 = 384 rho^2/mu^2, "
                         "C4 = max{(rho (1 + sqrt(4 C2 + 5))/mu)^2, 390 kappa^2}",
        level="erratum-harmless",
        transcription=('independent',
                       "paper 004's text is LaTeX; the coefficients 1, 1 are "
                       'consistent with the printed C1 = 32 rho^2/mu^2'))


@claim("004.table1.middle-column", location="Table 1, column 1/(m sqrt n) < R <= 1/sqrt n",
       kind="rate up to constants",
       statement="In the middle heterogeneity regime FedProx's local error (and the lower bound) "
                 "is min{R^2, 1/(mn)}.",
       mutants=('exponent',))
def table1(cfg, seed):
    rows, worst = [], 0.0
    n = 100
    for m in (10, 100, 1000):
        R = 1 / np.sqrt(n)          # top of the middle column
        printed = float(minimax.table1_rates(R, n, m, printed=True)["ours"])
        # Paper 000's minimax lower bound, eq. (15) with d = 1: min(1/n, R^2) + 1/N.
        lower = float(minimax.lower_bound_ier(1, n, m * n, R))
        thm1 = float(minimax.fedprox_local_error_bound(1.0, 1.0, 1.0, R, n, m)
                     / minimax.fedprox_constants(1.0, 1.0, 1.0).C4)
        worst = max(worst, lower / printed)
        rows.append({"m": m, "printed": printed, "lower_bound": lower,
                     "thm1_over_C4": thm1, "ratio": lower / printed})
    # An upper rate below a minimax lower rate by a factor growing without bound (~m) is
    # impossible "up to constants"; the corrected max(R^2, 1/(mn)) stays within a factor 2.
    # R^2 = 1/n here; the seam: the exponent of R in the corrected max(R^2, 1/(mn))
    corrected = [max((1 / np.sqrt(n)) ** (2 * stated(1.0, "exponent")), 1 / (x["m"] * n))
                 for x in rows]
    corr_ok = all(0.5 <= c / x["lower_bound"] <= 2 for c, x in zip(corrected, rows))
    return judge_erratum(worst > 100, corr_ok, "n=100, R=1/sqrt(n): lower bound min(1/n, R^2) + "
                         "1/N over the printed min{R^2, 1/(mn)}: " + ", ".join(
                             f"m={x['m']}: {x['ratio']:.0f}" for x in rows),
                         {"points": rows, "corrected": corrected},
                         "max{R^2, 1/(mn)}: Thm 1 gives C3/N + C4 R^2 there and the lower "
                         "bound is R^2 + 1/N",
                         transcription=('independent',
                                        "paper 004's text is LaTeX (the cell reads R^2 wedge "
                                        '1/(mn)), not a PDF extraction'))


@claim("004.thm2.linear-rate", location="Thm 2 and Cor. 1 (bilevel FedProx, Alg. 1)",
       kind="algorithmic convergence",
       statement="With gamma = 1/(2 L_g), eta = 1/(L + lam) and K inner steps as in eq. (12), the "
                 "bilevel FedProx algorithm converges linearly with rate 1 - gamma mu_g/2 - "
                 "(gamma mu_g)^2/2.",
       mutants=('upper',))
def thm2(cfg, seed):
    inst = quadratic_instance(m=10, d=10, L=1.0, mu=0.1, seed=seed)
    rows, ok = [], True
    for lam in (0.1, 1.0, 10.0):
        tr = fedprox_bilevel(inst, lam=lam, rounds=cfg.pick(120, 300))
        wg, _ = exact_solution(tr, inst)
        err = np.sum((tr.global_model - wg) ** 2, -1)
        c = minimax.bilevel_constants(1.0, 0.1, lam)
        rate = float(minimax.outer_rate(1.0, 0.1, lam, 1 / (2 * c["L_g"])))
        t = np.arange(err.size)
        live = err > 1e-24 * err[0]          # before rounding noise
        worst = float(np.max(err[live][1:] / (err[0] * rate ** t[live][1:])))
        observed = float((err[live][-1] / err[0]) ** (1 / t[live][-1]))
        ok &= worst <= stated(1.0, "upper")
        rows.append({"lam": lam, "rate": rate, "observed_rate": observed, "max_ratio": worst})
    return judge(ok, "quadratic m=10 d=10 L=1 mu=0.1, ||w_g^t - w_g*||^2 / (r^t ||w_g^0 - w_g*||^2) "
                 "<= 1: " + "; ".join(f"lam={x['lam']:g}: bound rate {x['rate']:.4f}, observed "
                                      f"{x['observed_rate']:.4f}, max ratio {x['max_ratio']:.3f}"
                                      for x in rows), {"points": rows})


def _authors_itr(cfg, runs, R):
    """Last-round ITR (the authors' plotted local error) of ``runs`` (label -> authors_run
    keywords) at every R, trained once on the authors' data (identical for every R,
    ``montecarlo.experiments.paper004.same_training_data``); quick: the figures' shortened horizons."""
    data = [authors_data(r) for r in R]
    epochs = cfg.pick(30, 150)
    out = {}
    for label, kw in runs.items():
        res = authors_run(data[0], local_epochs=epochs, **kw)
        out[label] = np.array([authors_errors(ds, res["G"][-1:], res["W"][-1:])[1][0]
                               for ds in data])
    floor = np.array([authors_floor(ds)[1] for ds in data])
    return out, floor, res["lam"]


def _authors_stat_runs(cfg):
    rounds = cfg.pick(25, 50)
    runs = {"GlobalTrain": dict(method="FedAvg", rounds=rounds),
            "LocalTrain": dict(method="LocalTrain", rounds=cfg.pick(25, 500),
                               lr=cfg.pick(0.01, 0.001))}
    runs.update({f"lam={lam:g}": dict(method="FedProx", lam=lam, rounds=rounds)
                 for lam in (0.02, 0.1, 0.5)})
    return runs


@claim("004.fig1a.interpolation", location="Sec. 6.2, Fig. 1(a) (Synthetic-Logit)",
       kind="qualitative experimental claim",
       statement="FedProx interpolates between GlobalTrain and LocalTrain: at low heterogeneity "
                 "GlobalTrain and large lam have lower statistical error, at high heterogeneity "
                 "LocalTrain and small lam do; LocalTrain is the least affected by heterogeneity.",
       mutants=('upper',))
def fig1a(cfg, seed):
    # Judged in the paper's scope: its own synthetic experiment as the authors ran it
    # (montecarlo.experiments.paper004.authors_run, the published code "as run"; the seeds are the
    # authors', so ``seed`` is not used), on the error they plot (last-round ITR). With
    # argmax labels each client's classes are separable and LocalTrain has no minimizer: its
    # plotted error is the distance after the stated horizon (GlobalTrain's and FedProx's
    # minimizers exist: 004.sec61.statistical-error), and R only rescales the target.
    R = np.array([0.1, 1.389, 3.0])
    err, floor, _ = _authors_itr(cfg, _authors_stat_runs(cfg), R)
    small, large = err["lam=0.02"], err["lam=0.5"]
    # The stated orderings, each an upper bound through the seam.
    low_ok = (err["GlobalTrain"][0] < stated(err["LocalTrain"][0], "upper")
              and large[0] < stated(small[0], "upper"))
    high_ok = (err["LocalTrain"][-1] < stated(err["GlobalTrain"][-1], "upper")
               and small[-1] < stated(large[-1], "upper"))
    spread = {k: float(v.max() / v.min()) for k, v in err.items()}
    ok = low_ok and high_ok and spread["LocalTrain"] == min(spread.values())
    return judge(ok, "authors' setup (m=10, n=199 used, d=10, 2 classes, argmax labels, "
                 f"{cfg.pick('quick horizons 25x30 steps', '50x150 steps, LocalTrain 500x150')}"
                 "), last-round mean ||w_k - W_k^T|| at R = " + ", ".join(f"{r:g}" for r in R)
                 + ": " + "; ".join(f"{k}: " + "/".join(fmt(v, 3) for v in err[k]) for k in err)
                 + "; exact floor " + "/".join(fmt(v, 3) for v in floor)
                 + "; spread over R: " + ", ".join(f"{k} x{v:.2f}" for k, v in spread.items()),
                 {"R": R, "itr": err, "floor": floor, "spread": spread})


@claim("004.fig1d.communication-vs-lambda", location="Sec. 6.3, Fig. 1(d)-(f) and Cor. 1 (eq. 13)",
       kind="algorithmic convergence",
       statement="Larger lam (less personalization) needs more communication rounds to converge: "
                 "rounds ~ kappa_g log(1/eps), kappa_g = kappa (lam + mu)/(lam + L).",
       mutants=('upper',))
def fig1d(cfg, seed):
    inst = quadratic_instance(m=10, d=10, L=1.0, mu=0.05, seed=seed)
    rows = []
    for lam in (0.1, 1.0, 10.0):
        # Quick: 150 rounds, twice the most needed (21, 45, 64 at these lam); the runs are
        # deterministic, their first rounds the same to the bit whatever the count, and a
        # run that misses the 1e8 fold counts as infinite (the claim fails).
        tr = fedprox_bilevel(inst, lam=lam, rounds=cfg.pick(150, 800))
        wg, _ = exact_solution(tr, inst)
        err = np.sum((tr.global_model - wg) ** 2, -1)
        hit = np.flatnonzero(err <= 1e-8 * err[0])
        rounds = int(tr.rounds[hit[0]]) if hit.size else np.inf
        kg = float(minimax.bilevel_constants(1.0, 0.05, lam)["kappa_g"])
        rows.append({"lam": lam, "rounds": rounds, "kappa_g": kg})
    r = [x["rounds"] for x in rows]
    ok = r[0] < stated(r[1], "upper") and r[1] < stated(r[2], "upper") and r[2] < np.inf
    return judge(ok, "quadratic m=10 d=10 L=1 mu=0.05, rounds to reduce the global error 1e8-fold: "
                 + ", ".join(f"lam={x['lam']:g}: {x['rounds']} (kappa_g {x['kappa_g']:.2f})"
                             for x in rows), {"points": rows})


@claim("004.thm1.adaptive-lambda", location="Thm 1 (adaptive lambda), Remark 2, Sec. 1",
       kind="inequality",
       statement="With Thm 1's lambda (the smallest admissible when R <= 1/sqrt(n), the largest "
                 "when R > 1/sqrt(n)), FedProx's local statistical error E||w~_i - w*_i||^2 is "
                 "never worse than LocalTrain's and, at R = 0, equals GlobalTrain's.",
       mutants=('upper',))
def thm1_adaptive(cfg, seed):
    # Exact minimizers (Newton) on paper 000 Lemma 7's logistic instances, where Thm 1's
    # constants are computable (L = d/4, mu and rho^2 from the exact Fisher information, see
    # montecarlo.experiments.rates.fedprox_theorem1_constants). R^2 = f d/n puts every n at the same place
    # relative to the kink R^2 = d/n; f = 1e-8 is R = 0 to the errors' precision (R^2 ~ 5e-10).
    f = np.array([1e-8, 0.1, 1.0, 10.0, 100.0])
    g = heterogeneity_grid(cfg.pick([100], [100, 400, 1600]), f, m=4, d=5,
                           reps=cfg.pick(20, 100), seed=seed,
                           methods=("fedavg", "local", "fedprox"))
    never_worse, rows = True, []
    for k, n in enumerate(g["n"]):
        vs_local = mean_se(g["fedprox_err"][k] - g["local_err"][k], axis=-1)
        vs_global = mean_se(g["fedprox_err"][k, 0] - g["fedavg_err"][k, 0])
        # never worse than LocalTrain: LocalTrain's error bounds FedProx's (the seam)
        gap = g["fedprox_err"][k] - stated(g["local_err"][k], "upper")
        never_worse &= bool(np.all(mean_se(gap, axis=-1)[0] <= Z * vs_local[1]))
        glob = g["fedavg_err"][k, 0].mean()
        rows.append({"n": n, "lam": g["lam"][k], "fedprox_minus_local": vs_local[0],
                     "se": vs_local[1], "zero_R_fedprox_minus_global": vs_global[0],
                     "zero_R_se": vs_global[1], "zero_R_global": glob,
                     "zero_R_local": g["local_err"][k, 0].mean()})
    at_zero = all(abs(x["zero_R_fedprox_minus_global"]) <= Z * x["zero_R_se"]
                  + 0.01 * x["zero_R_global"] for x in rows)
    return judge(never_worse and at_zero, "Lemma 7 logistic, m=4 d=5, exact minimizers, "
                 f"{g['fedprox_err'].shape[-1]} reps, R^2/(d/n) = 1e-8 (R ~ 0), " + ", ".join(
                     f"{x:g}" for x in f[1:]) + ": " + "; ".join(
                     f"n={x['n']:.0f}: FedProx - local " + ", ".join(
                         f"{a:+.3g}±{s:.2g}" for a, s in zip(x["fedprox_minus_local"], x["se"]))
                     + f" (lam {fmt(x['lam'][0], 3)} -> {fmt(x['lam'][-1], 3)}); at R = 0 FedProx "
                       f"- global {x['zero_R_fedprox_minus_global']:+.2g}±{x['zero_R_se']:.1g} "
                       f"(global {fmt(x['zero_R_global'], 3)}, local {fmt(x['zero_R_local'], 3)})"
                     for x in rows), {"r2_over_d_n": f, "points": rows})


@claim("004.fig2.local-updates", location="Sec. 6.3, Fig. 2, Cor. 1",
       kind="algorithmic convergence",
       statement="More local updates K per round help FedProx with small lam (more "
                 "personalization) much more than with large lam, which benefits only marginally "
                 "from extra local computation and needs more communication.",
       mutants=('upper',))
def fig2(cfg, seed):
    # The paper's Fig. 2 experiment as the authors ran it (notebooks/
    # simulation_main_local_epochs.ipynb: R = 1, 10 clients, 20 rounds, local epochs 25..150;
    # the notebook sets lam = 0.5, the text compares it with a small lam: 0.02 of Fig. 1).
    # Gain = ITR with the fewest local updates / ITR with the most, after ``early`` rounds
    # (communication saved) and after the last round. Deterministic (the authors' seeds).
    data = authors_data(1.0)
    ks, early, rounds = (25, 150), 5, 20
    itr = {}
    for lam in (0.02, 0.5):
        for K in ks:
            out = authors_run(data, "FedProx", lam=lam, rounds=rounds, local_epochs=K)
            itr[lam, K] = authors_errors(data, out["G"], out["W"])[1]
    gain = {lam: (itr[lam, ks[0]][early - 1] / itr[lam, ks[1]][early - 1],
                  itr[lam, ks[0]][-1] / itr[lam, ks[1]][-1]) for lam in (0.02, 0.5)}
    ok = (gain[0.5][0] < stated(gain[0.02][0], "upper")
          and gain[0.5][1] < stated(gain[0.02][1], "upper") and gain[0.5][1] < 1.1)
    return judge(ok, f"authors' setup R=1, m=10, d=10, 2 classes, {rounds} rounds, local "
                 f"updates {ks[0]} vs {ks[1]}: mean ||w_k - W_k^T|| after {early} / {rounds} "
                 "rounds: " + "; ".join(
                     f"lam={lam:g}: " + ", ".join(f"K={K}: {fmt(itr[lam, K][early - 1], 4)} / "
                                                  f"{fmt(itr[lam, K][-1], 4)}" for K in ks)
                     + f" (gain x{gain[lam][0]:.3f} / x{gain[lam][1]:.3f})" for lam in gain),
                 {"K": ks, "itr": {f"{lam:g},{K}": v for (lam, K), v in itr.items()},
                  "gain": {f"{lam:g}": v for lam, v in gain.items()}})


@claim("004.fig3.adaptive-lambda", location="App. C.2, Fig. 3 (Synthetic-Logit)",
       kind="qualitative experimental claim",
       statement="With the adaptive lam of Thm 1 (App. C: rho = 2), FedProx has the lowest "
                 "statistical error in most scenarios, beating both GlobalTrain and LocalTrain, "
                 "particularly at moderate and high heterogeneity; only as R -> 0 is "
                 "GlobalTrain slightly better.")
def fig3(cfg, seed):
    # Not checkable in its stated scope: Fig. 3's experiment is the synthetic one of Sec. 6.1,
    # whose argmax labels make every client's classes separable, so the clients' local
    # minimizers and Thm 1's constants (mu, rho) at them do not exist and "the lam of Thm 1"
    # is undefined there (the pooled problem has a minimizer: 004.sec61.statistical-error);
    # the published notebooks never run the code's adaptive rule (--adapt_mu), whose factor 5
    # is not App. C's rho^2 = 4. Run anyway, that rule picks one lam for every R (the
    # training data do not depend on R), reported here as evidence.
    R = np.array([0.1, 1.389, 3.0])
    runs = _authors_stat_runs(cfg)
    runs = {"GlobalTrain": runs["GlobalTrain"], "LocalTrain": runs["LocalTrain"],
            "adaptive": dict(method="FedProx", lam=0.1, rounds=runs["GlobalTrain"]["rounds"],
                             adapt=True)}
    err, floor, lam = _authors_itr(cfg, runs, R)
    separable = all(_separable(authors_data(1.0), k) for k in range(10))
    return Outcome("not checkable", "Thm 1's lam is undefined on Sec. 6.1's data (argmax "
                   f"labels: every client's classes separable: {separable}; no local minimizer, no "
                   "mu) and the published code does not run Fig. 3's adaptive rule; the "
                   f"code's --adapt_mu picks lam = {lam:.4g} for every R (data independent of "
                   "R); last-round mean ||w_k - W_k^T|| at R = " + ", ".join(f"{r:g}" for r in R)
                   + ": " + "; ".join(f"{k}: " + "/".join(fmt(v, 3) for v in err[k])
                                      for k in err),
                   {"R": R, "itr": err, "floor": floor, "lam": lam, "separable": separable})


def _separable(data, k):
    """Client k's classes are separated by a hyperplane through 0: its true model does it."""
    X, W = data["X"][k] * data["scale"][k], data["W"][k]
    margin = (X @ (W[1] - W[0])) * (2 * data["Y"][k][:, 1] - 1)
    return bool(np.all(margin > 0))


@claim("004.fig5.client-sampling", location="App. C, Fig. 5 (100 and 1,000 clients, 10% sampling)",
       kind="qualitative experimental claim",
       statement="With many clients and 10% client sampling, as in Fig. 1: smaller lam converges "
                 "faster in the first rounds, and as R grows smaller lam overtakes larger lam "
                 "in total error.",
       mutants=('upper',))
def fig5(cfg, seed):
    # The authors' run (notebooks/simulation_main_total.ipynb: 1,000 clients, 10% sampled,
    # lam in {0.02, 0.25, 0.5}, 100 rounds x 150 local epochs; quick 100 clients, 20 x 30),
    # the code as run, client sampling seeded by ``seed`` (theirs is unseeded). The data do not
    # depend on R, so one run per lam is scored at R = 0.1 and 3 (the notebook draws R = 2).
    m, rounds, epochs = cfg.pick(100, 1000), cfg.pick(20, 100), cfg.pick(30, 150)
    lams, R, early = (0.02, 0.5), (0.1, 2.0, 3.0), 2
    itr = {}
    for lam in lams:
        out = authors_run(authors_data(2.0, m=m), "FedProx", lam=lam, rounds=rounds,
                          local_epochs=epochs, sampling_rate=0.1, rng=replicate_rng(seed, 0))
        for r in R:
            itr[lam, r] = authors_errors(authors_data(r, m=m), out["G"], out["W"])[1]
    faster = itr[0.02, 2.0][early - 1] < stated(itr[0.5, 2.0][early - 1], "upper")
    overtakes = itr[0.02, 0.1][-1] > itr[0.5, 0.1][-1] and itr[0.02, 3.0][-1] < itr[0.5, 3.0][-1]
    return judge(faster and overtakes, f"authors' setup m={m}, 10% sampled, {rounds} rounds x "
                 f"{epochs} local steps: mean ||w_k - W_k^T|| after {early} rounds at R=2: "
                 + ", ".join(f"lam={lam:g} {fmt(itr[lam, 2.0][early - 1], 5)}" for lam in lams)
                 + f"; after {rounds} rounds at R = 0.1 / 3: " + "; ".join(
                     f"lam={lam:g} {fmt(itr[lam, 0.1][-1], 4)} / {fmt(itr[lam, 3.0][-1], 4)}"
                     for lam in lams),
                 {"m": m, "R": R, "itr": {f"{lam:g},{r:g}": v for (lam, r), v in itr.items()}})
