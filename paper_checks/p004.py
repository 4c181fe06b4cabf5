"""Paper 004 (*The effect of personalization in FedProx*): claims and their checks.

File ``004_98172ed3646eef14.txt``.

Evidence routes: Lemma 2's constants against the curvature of a numerically built Moreau
envelope; the proof's norm split against random vectors; Table 1 against paper 000's minimax
lower bound; Thm 2's rate and the experiments' claims against ``montecarlo``'s bilevel FedProx
and exact minimizers on the paper's synthetic logistic data; Thm 1's adaptive lambda against
exact minimizers on paper 000 Lemma 7's instances (``montecarlo.rates.heterogeneity_grid``),
where its constants L, mu, rho are computable exactly.
"""

from __future__ import annotations

import numpy as np

from montecarlo.algorithms import fedprox_bilevel
from montecarlo.logistic import paper004_instance, quadratic_instance
from montecarlo.metrics import exact_solution
from montecarlo.objectives import ClientLosses, minimize
from montecarlo.paper004 import CENTER_VAR, LABELS, adaptive_lambda
from montecarlo.rates import heterogeneity_grid
from montecarlo.seeding import replicate_rng
from montecarlo.stats import mean_se
from paper_checks.core import claim, judge, judge_erratum
from paper_checks.evidence import Z, fmt
from riskcalc import minimax


@claim("004.lemma2.bilevel-constants", location="Lemma 2", kind="closed-form identity",
       statement="The Moreau envelope F_i of an L-smooth mu-strongly convex f_i (parameter 1/lam) "
                 "is mu_g = lam mu/(lam + mu) strongly convex and L_g = lam L/(lam + L) smooth; the "
                 "prox map is L_w = lam/(lam + mu) Lipschitz.")
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
        c = minimax.bilevel_constants(L, mu, lam)
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
                 "giving C1 = 32 rho^2/mu^2 and the other constants of Thm 1.")
def eq50(cfg, seed):
    rng = replicate_rng(seed, 0)
    a, b = rng.standard_normal((2, 10000, 5))
    lhs = np.sum((a + b) ** 2, 1)
    one_one = np.sum(a * a, 1) + np.sum(b * b, 1)
    two_two = 2 * one_one
    frac_bad = float(np.mean(lhs > one_one))
    worst = float(np.max(lhs / one_one))
    ok_corr = bool(np.all(lhs <= two_two * (1 + 1e-12)))
    printed = minimax.fedprox_constants(1.0, 1.0, 1.0)
    fixed = minimax.fedprox_constants(1.0, 1.0, 1.0, rederived=True)
    return judge_erratum(frac_bad > 0, ok_corr,
                         f"10000 random pairs in R^5: ||a+b||^2 > ||a||^2 + ||b||^2 for "
                         f"{100 * frac_bad:.0f}%, ratio up to {worst:.3f} (a = b gives 2); with "
                         f"coefficients 2, 2 never violated; C1 (L=mu=rho=1): printed "
                         f"{printed.C1:g} -> {fixed.C1:g}, C3 {printed.C3:g} -> {fixed.C3:g}",
                         {"violation_fraction": frac_bad, "max_ratio": worst,
                          "printed": printed._asdict(), "rederived": fixed._asdict()},
                         "E||w_g - w*_g||^2 <= 2 E||w_g - w_GT||^2 + 2 E||w_GT - w*_g||^2; the "
                         "recursion then needs g <= 1/(16 L^2) and gives C1 = 64 rho^2/mu^2, "
                         "C2 = ((1 + sqrt 3) rho/mu)^2 v 64 kappa^2, C3 = 384 rho^2/mu^2, "
                         "C4 = (rho (1 + sqrt(4 C2 + 5))/mu)^2 v 390 kappa^2")


@claim("004.table1.middle-column", location="Table 1, column 1/(m sqrt n) < R <= 1/sqrt n",
       kind="rate up to constants",
       statement="In the middle heterogeneity regime FedProx's local error (and the lower bound) "
                 "is R^2 ^ 1/(mn) (minimum).")
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
    corrected = [max(1 / n, 1 / (x["m"] * n)) for x in rows]
    corr_ok = all(0.5 <= c / x["lower_bound"] <= 2 for c, x in zip(corrected, rows))
    return judge_erratum(worst > 100, corr_ok, "n=100, R=1/sqrt(n): lower bound min(1/n, R^2) + "
                         "1/N over the printed R^2 ^ 1/(mn): " + ", ".join(
                             f"m={x['m']}: {x['ratio']:.0f}" for x in rows),
                         {"points": rows, "corrected": corrected},
                         "R^2 v 1/(mn) (maximum): Thm 1 gives C3/N + C4 R^2 there and the lower "
                         "bound is R^2 + 1/N")


@claim("004.thm2.linear-rate", location="Thm 2 and Cor. 1 (bilevel FedProx, Alg. 1)",
       kind="algorithmic convergence",
       statement="With gamma = 1/(2 L_g), eta = 1/(L + lam) and K inner steps as in eq. (12), the "
                 "bilevel FedProx algorithm converges linearly with rate 1 - gamma mu_g/2 - "
                 "(gamma mu_g)^2/2.")
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
        ok &= worst <= 1.0
        rows.append({"lam": lam, "rate": rate, "observed_rate": observed, "max_ratio": worst})
    return judge(ok, "quadratic m=10 d=10 L=1 mu=0.1, ||w_g^t - w_g*||^2 / (r^t ||w_g^0 - w_g*||^2) "
                 "<= 1: " + "; ".join(f"lam={x['lam']:g}: bound rate {x['rate']:.4f}, observed "
                                      f"{x['observed_rate']:.4f}, max ratio {x['max_ratio']:.3f}"
                                      for x in rows), {"points": rows})


@claim("004.fig1a.interpolation", location="Sec. 6.2, Fig. 1(a) (Synthetic-Logit)",
       kind="qualitative experimental claim",
       statement="FedProx interpolates between GlobalTrain and LocalTrain: at low heterogeneity "
                 "GlobalTrain and large lam have lower statistical error, at high heterogeneity "
                 "LocalTrain and small lam do; LocalTrain is the least affected by heterogeneity.")
def fig1a(cfg, seed):
    R = np.array([0.0, 0.3, 3.0])
    lams = [0.01, 0.1, 1.0, 10.0]
    reps = cfg.pick(2, 6)
    err = {k: [] for k in ["local", "global"] + [f"lam={x:g}" for x in lams]}
    for rep in range(reps):
        inst = paper004_instance(R, n_test=1, seed=seed, rep=rep)
        ws = inst.w_star
        _, W = minimize(inst.train, "local")
        err["local"].append(np.sum((W - ws) ** 2, -1).mean(-1))
        wg, _ = minimize(inst.train, "global")
        err["global"].append(np.sum((wg[..., None, :] - ws) ** 2, -1).mean(-1))
        for lam in lams:
            _, W = minimize(inst.train, "fedprox", lam)
            err[f"lam={lam:g}"].append(np.sum((W - ws) ** 2, -1).mean(-1))
    mean = {k: np.mean(v, 0) for k, v in err.items()}
    small, large = mean[f"lam={lams[0]:g}"], mean[f"lam={lams[-1]:g}"]
    low_ok = mean["global"][0] < mean["local"][0] and large[0] < small[0]
    high_ok = mean["local"][-1] < mean["global"][-1] and small[-1] < large[-1]
    spread_local = float(mean["local"].max() / mean["local"].min())
    spread_global = float(mean["global"].max() / mean["global"].min())
    ok = low_ok and high_ok and spread_local < spread_global
    return judge(ok, f"paper 004 synthetic logistic, {reps} reps, mean ||w_i - w*_i||^2 at R = "
                 + ", ".join(f"{r:g}" for r in R) + ": " + "; ".join(
                     f"{k}: " + "/".join(fmt(v, 3) for v in mean[k]) for k in mean)
                 + f"; spread over R: local x{spread_local:.2f}, global x{spread_global:.1f}",
                 {"R": R, "mean_error": mean})


@claim("004.fig1d.communication-vs-lambda", location="Sec. 6.3, Fig. 1(d)-(f) and Cor. 1 (eq. 13)",
       kind="algorithmic convergence",
       statement="Larger lam (less personalization) needs more communication rounds to converge: "
                 "rounds ~ kappa_g log(1/eps), kappa_g = kappa (lam + mu)/(lam + L).")
def fig1d(cfg, seed):
    inst = quadratic_instance(m=10, d=10, L=1.0, mu=0.05, seed=seed)
    rows = []
    for lam in (0.1, 1.0, 10.0):
        tr = fedprox_bilevel(inst, lam=lam, rounds=cfg.pick(400, 800))
        wg, _ = exact_solution(tr, inst)
        err = np.sum((tr.global_model - wg) ** 2, -1)
        hit = np.flatnonzero(err <= 1e-8 * err[0])
        rounds = int(tr.rounds[hit[0]]) if hit.size else np.inf
        kg = float(minimax.bilevel_constants(1.0, 0.05, lam)["kappa_g"])
        rows.append({"lam": lam, "rounds": rounds, "kappa_g": kg})
    r = [x["rounds"] for x in rows]
    ok = r[0] < r[1] < r[2] < np.inf
    return judge(ok, "quadratic m=10 d=10 L=1 mu=0.05, rounds to reduce the global error 1e8-fold: "
                 + ", ".join(f"lam={x['lam']:g}: {x['rounds']} (kappa_g {x['kappa_g']:.2f})"
                             for x in rows), {"points": rows})


@claim("004.thm1.adaptive-lambda", location="Thm 1 (adaptive lambda), Remark 2, Sec. 1",
       kind="inequality",
       statement="With Thm 1's lambda (the smallest admissible when R <= 1/sqrt(n), the largest "
                 "when R > 1/sqrt(n)), FedProx's local statistical error E||w~_i - w*_i||^2 is "
                 "never worse than LocalTrain's and, at R = 0, equals GlobalTrain's.")
def thm1_adaptive(cfg, seed):
    # Exact minimizers (Newton) on paper 000 Lemma 7's logistic instances, where Thm 1's
    # constants are computable (L = d/4, mu and rho^2 from the exact Fisher information, see
    # montecarlo.rates.fedprox_theorem1_constants). R^2 = f d/n puts every n at the same place
    # relative to the kink R^2 = d/n; f = 1e-8 is R = 0 to the errors' precision (R^2 ~ 5e-10).
    f = np.array([1e-8, 0.1, 1.0, 10.0, 100.0])
    g = heterogeneity_grid(cfg.pick([100], [100, 400, 1600]), f, m=4, d=5,
                           reps=cfg.pick(20, 100), seed=seed)
    never_worse, rows = True, []
    for k, n in enumerate(g["n"]):
        vs_local = mean_se(g["fedprox_err"][k] - g["local_err"][k], axis=-1)
        vs_global = mean_se(g["fedprox_err"][k, 0] - g["fedavg_err"][k, 0])
        never_worse &= bool(np.all(vs_local[0] <= Z * vs_local[1]))
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


def _synthetic(R, seed, rep, labels=LABELS, center_var=CENTER_VAR):
    """Paper 004's synthetic logistic data (Sec. 6.1; m, n, d, l2 = 10, 200, 60, 1e-2, the
    instance defaults), by default as the figures read it (``montecarlo.paper004``: Bernoulli
    labels and a centre of variance 0.1, since with Sec. 6.1's argmax labels the minimizer does
    not estimate w*)."""
    return paper004_instance(R, n_test=1, labels=labels, center_var=center_var, seed=seed,
                             rep=rep)


@claim("004.fig2.local-updates", location="Sec. 6.3, Fig. 2, Cor. 1",
       kind="algorithmic convergence",
       statement="More local updates K per round help FedProx with small lam (more "
                 "personalization) much more than with large lam, which benefits only marginally "
                 "from extra local computation and needs more communication.")
def fig2(cfg, seed):
    # Optimization error of bilevel FedProx (Alg. 1, Cor. 1 steps) after T rounds, relative to
    # the start, against the exact minimizer; App. C's small and large lam at R = 1 (the
    # figure's R). Cor. 1: rounds ~ kappa (lam + mu)/(lam + L), and the inner loop needs
    # K ~ (lam + L)/(lam + mu) steps before the outer rate binds: about 600 for lam = 0.02 but
    # about 40 for lam = 0.5 (L ~ 19, mu = l2 = 0.01 here), beyond which K buys nothing.
    lams = cfg.pick((0.02, 0.5), (0.02, 0.1, 0.5))
    ks, T = cfg.pick((1, 40, 200), (1, 5, 40, 200)), 40
    err = np.zeros((cfg.pick(1, 3), len(lams), len(ks)))
    for rep in range(err.shape[0]):
        inst = _synthetic(1.0, seed, rep)
        for i, lam in enumerate(lams):
            _, W_star = minimize(inst.train, "fedprox", lam)
            start = np.sum(W_star ** 2)                 # the algorithm starts from 0
            for j, K in enumerate(ks):
                tr = fedprox_bilevel(inst, lam=lam, rounds=T, inner_steps=K)
                err[rep, i, j] = np.sum((tr.local[-1] - W_star) ** 2) / start
    e = np.exp(np.log(err).mean(0))                     # geometric mean over instances
    gain = e[:, 0] / e[:, -1]                           # K = 1 -> largest K
    late = e[:, -2] / e[:, -1]                          # second largest -> largest K
    ok = (gain[0] > 10 * gain[-1] and np.all(np.diff(gain) < 0) and late[-1] < 2
          and late[0] > 10 and e[-1, -1] > e[0, -1])
    return judge(ok, f"synthetic logistic R=1, {err.shape[0]} instance(s), ||w_T - w~||^2 / "
                     f"||w_0 - w~||^2 after T={T} rounds for K = {', '.join(map(str, ks))}: "
                 + "; ".join(f"lam={lam:g}: " + ", ".join(fmt(v, 3) for v in row)
                             + f" (gain x{fmt(g, 3)}, last step x{fmt(s, 3)})"
                             for lam, row, g, s in zip(lams, e, gain, late)),
                 {"lam": lams, "K": ks, "rounds": T, "relative_error": e, "gain": gain,
                  "last_step_gain": late})


@claim("004.fig3.adaptive-lambda", location="App. C.2, Fig. 3 (Synthetic-Logit)",
       kind="qualitative experimental claim",
       statement="With the adaptive lam of Thm 1 (App. C: rho = 2), FedProx has the lowest "
                 "statistical error in most scenarios, beating both GlobalTrain and LocalTrain, "
                 "particularly at moderate and high heterogeneity; only as R -> 0 is "
                 "GlobalTrain slightly better.")
def fig3(cfg, seed):
    # Exact minimizers at the lam p004-fig3 draws (montecarlo.paper004.adaptive_lambda: rho = 2,
    # mu = l2, L = 1, R_het^2 = d R, capped at 10 on Thm 1's first branch). The verdict rests on
    # the figures' reading of Sec. 6.1 (Bernoulli labels, centre variance 0.1; see
    # montecarlo.paper004); the literal one (argmax labels, centre variance 1) is reported
    # alongside, to show that the label model is not what decides.
    R = np.array(cfg.pick([0.0, 1.0, 3.0], [0.0, 0.01, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0]))
    lams = adaptive_lambda(R)
    high = R >= 1.0                                   # moderate and high heterogeneity
    reps = cfg.pick(6, 15)
    readings, parts = {}, []
    for labels, center_var in ((LABELS, CENTER_VAR), ("argmax", 1.0)):
        err = {k: [] for k in ("local", "global", "adaptive")}
        norm2 = []
        for rep in range(reps):
            inst = _synthetic(R, seed, rep, labels, center_var)
            ws = inst.w_star
            norm2.append(np.sum(ws ** 2, -1).mean(-1))
            _, W = minimize(inst.train, "local")
            err["local"].append(np.sum((W - ws) ** 2, -1).mean(-1))
            wg, _ = minimize(inst.train, "global")
            err["global"].append(np.sum((wg[..., None, :] - ws) ** 2, -1).mean(-1))
            row = []
            for j, lam in enumerate(lams):        # one lam per R: one solve per grid point
                losses = ClientLosses(inst.train.X, inst.train.y[j], l2=inst.train.l2)
                row.append(np.sum((minimize(losses, "fedprox", float(lam))[1] - ws[j]) ** 2,
                                  -1).mean())
            err["adaptive"].append(row)
        err = {k: np.array(v) for k, v in err.items()}
        z = {}
        for other in ("local", "global"):
            diff_mean, diff_se = mean_se(err["adaptive"] - err[other])
            z[other] = diff_mean / diff_se
        mean = {k: v.mean(0) for k, v in err.items()}
        share = float(np.min(mean["local"][high] / np.mean(norm2, 0)[high]))
        readings[labels] = {"mean_error": mean, "z_vs_local": z["local"],
                            "z_vs_global": z["global"], "mean_norm2": np.mean(norm2, 0)}
        parts.append(f"{labels} labels: " + "; ".join(
            f"{k} " + "/".join(fmt(v, 3) for v in mean[k]) for k in mean)
            + "; z of adaptive - local " + "/".join(f"{v:+.1f}" for v in z["local"])
            + ", - global " + "/".join(f"{v:+.1f}" for v in z["global"])
            + f" (at R >= 1 even LocalTrain's error is >= {share:.0%} of mean ||w*_i||^2)")
    # Rejected: at some moderate/high R the adaptive lam is significantly worse than a baseline
    # (the paper says it beats both there).
    primary = readings[LABELS]
    rejected = bool(np.any(primary["z_vs_local"][high] > Z)
                    or np.any(primary["z_vs_global"][high] > Z))
    return judge(not rejected, f"synthetic logistic, {reps} reps, mean ||w_i - "
                 "w*_i||^2 at R = " + ", ".join(f"{r:g}" for r in R) + " (adaptive lam "
                 + "/".join(fmt(v, 2) for v in lams) + "): " + " | ".join(parts),
                 {"R": R, "lam": lams, "readings": readings})


@claim("004.fig5.client-sampling", location="App. C, Fig. 5 (100 and 1,000 clients, 10% sampling)",
       kind="qualitative experimental claim",
       statement="With many clients and 10% client sampling, as in Fig. 1: smaller lam converges "
                 "faster in the first rounds, and as R grows smaller lam overtakes larger lam "
                 "in total error.")
def fig5(cfg, seed):
    # Bilevel FedProx with clients_per_round = m / 10 on the synthetic data as the figures read
    # it (p004-fig5 draws m = 100 and 1,000; m = 1,000 costs minutes, so the check uses 100,
    # quick 50). Convergence speed: the optimization error to each lam's own exact minimizer,
    # relative to the start, after 2 rounds (the total error mixes speed and floor). Overtaking:
    # the total error ||w_t^(i) - w*^(i)||^2 after the last round, lam = 0.02 vs 0.5, paired by
    # replicate.
    m, reps, rounds = cfg.pick(50, 100), cfg.pick(5, 8), cfg.pick(20, 40)
    R, lams, early = [0.0, 3.0], (0.02, 0.5), 2
    speed, total = {lam: [] for lam in lams}, {lam: [] for lam in lams}
    for rep in range(reps):
        inst = paper004_instance(R, m=m, n_test=1, labels=LABELS, center_var=CENTER_VAR,
                                 seed=seed, rep=rep)
        for lam in lams:
            tr = fedprox_bilevel(inst, lam=lam, rounds=rounds, inner_steps=20,
                                 clients_per_round=m // 10, seed=seed, rep=rep)
            _, W = exact_solution(tr, inst)
            opt = np.sum((tr.local - W) ** 2, -1).mean(-1)
            speed[lam].append(opt[early] / opt[0])
            total[lam].append(np.sum((tr.local[-1] - inst.w_star) ** 2, -1).mean(-1))
    d_speed = mean_se(np.array(speed[lams[0]]) - np.array(speed[lams[1]]))
    d_total = mean_se(np.array(total[lams[0]]) - np.array(total[lams[1]]))
    faster = bool(np.all(d_speed[0] < -Z * d_speed[1]))
    overtakes = bool(d_total[0][0] > Z * d_total[1][0] and d_total[0][1] < -Z * d_total[1][1])
    return judge(faster and overtakes, f"paper 004 synthetic, m={m}, {m // 10} clients per "
                 f"round, {reps} reps, R = 0 / 3: relative optimization error after {early} "
                 "rounds, lam=0.02 minus lam=0.5: " + " / ".join(
                     f"{a:+.3g}±{s:.1g}" for a, s in zip(*d_speed)) + f"; total error after "
                 f"{rounds} rounds, lam=0.02 minus lam=0.5: " + " / ".join(
                     f"{a:+.3g}±{s:.1g}" for a, s in zip(*d_total)),
                 {"m": m, "R": R, "lams": lams, "speed_diff": d_speed[0],
                  "speed_se": d_speed[1], "total_diff": d_total[0], "total_se": d_total[1]})
