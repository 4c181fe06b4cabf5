"""Paper 000, Appendix C: FedProx's stability and estimation bounds with explicit constants
(Prop. 21, Prop. 29, Lemma 31), checked on Lemma 7's logistic instances with exact minimizers.

File ``000_7ff2ed2592df3b60.txt``, App. C. Instances: ``montecarlo.experiments.rates_instances.
lemma7_instance`` (Rademacher features, c_X = 1, so every z = (x, y) is one of 2^(d+1) points
and a sup over z is exact; antipodal true models at distance R from their average 0, p_i =
1/m). Constants: beta = c_X^2 d/4 (Lemma 7); sigma^2 = max_i tr(H_i), the exact gradient
variance at the truth; mu = min_i lambda_min(H_i), the population curvature at the truth (the
substitute for Assumption A(b)'s empirical mu that ``montecarlo.experiments.rates_instances.
fedprox_theorem1_constants`` documents), plus the ridge l2 of the empirical risks.
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.experiments.objectives import ClientLosses, minimize, prox
from montecarlo.experiments.rates_instances import fedprox_theorem1_constants, lemma7_instance
from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, judge_erratum, stated


@claim("000.lemma31.prox-estimate", location="Lemma 31 (App. C)", kind="inequality",
       statement="||w*_i - Prox_{L_i/lam}(w_p)|| <= 2/(mu + lam) ||grad L_i(w*_i, S_i) + "
                 "lam (w*_i - w_p)|| for every i.",
       mutants=("upper",))
def lemma31(cfg, seed):
    # The inequality holds for any point in place of w*_i (it is strong convexity of L_i +
    # lam/2 ||. - w_p||^2 around its minimizer): checked at the true models and at points
    # displaced along X's null space (n < d), where the curvature is exactly mu + lam and the
    # ratio to the bound reaches its largest value 1/2 (the factor 2 is loose by 2).
    rng = replicate_rng(seed, 0)
    n, d, l2 = 6, 8, 0.05
    X = rng.choice([-1.0, 1.0], size=(1, n, d))
    y = np.where(rng.random((1, n)) < 0.5, 1.0, -1.0)
    f = ClientLosses(X, y, l2=l2)
    null = np.linalg.svd(X[0])[2][n:]
    worst = 0.0
    for lam in (0.1, 1.0, 10.0):
        w_p = rng.standard_normal(d)
        target = prox(f, w_p[None, :], lam)[0]
        pts = np.vstack([rng.standard_normal((cfg.pick(20, 60), d)),
                         target + 1e-2 * null, target + null])
        g = f.grad(pts[:, None, :])[:, 0] + lam * (pts - w_p)
        ratio = (np.linalg.norm(pts - target, axis=1)
                 / stated(2 / (l2 + lam) * np.linalg.norm(g, axis=1), "upper"))
        worst = max(worst, float(ratio.max()))
    return judge(worst <= 1.0, f"ridge-logistic client n={n} < d={d}, mu = l2 = {l2:g}, lam "
                 "in {0.1, 1, 10}, random points and points along X's null space: max "
                 f"||w - Prox(w_p)|| / (2 ||grad h(w)||/(mu + lam)) = {worst:.4f} (<= 1; 1/2 "
                 "is attained along the null space, so the factor 2 is loose by 2)",
                 {"max_ratio": worst})


@claim("000.prop29.global-estimation", location="Proposition 29 (App. C.4)", kind="inequality",
       statement="E_S||w~_global - w_p||^2 <= 48 beta^2 sigma^2/(mu^2 lam^2) (sum_i "
                 "p_i/sqrt(n_i))^2"
                 " + 48 beta^2 R^2/mu^2 + 12 (mu + lam)^2 sigma^2/(mu^2 lam^2) sum_i p_i^2/n_i "
                 "for FedProx's global minimizer.",
       mutants=("upper",))
def prop29(cfg, seed):
    m, d, n = 4, 4, 200
    R = np.array([0.0, 0.2, 0.6])
    inst = lemma7_instance(R, reps=cfg.pick(10, 40), m=m, n=n, d=d, l2=1e-3, seed=seed)
    rows, ok = [], True
    for lam in (0.1, 1.0, 10.0):
        wg, _ = minimize(inst.train, "fedprox", lam)                       # (reps, len(R), d)
        for k, r in enumerate(R):
            ws = inst.w_star[k]
            c = fedprox_theorem1_constants(ws, d)
            beta, s2, mu = c["L"], c["rho"] ** 2, c["mu"]
            err = float(np.mean(np.sum((wg[:, k] - ws.mean(0)) ** 2, -1)))
            bound = stated(48 * beta ** 2 * s2 / (mu * lam) ** 2 * (m / m / np.sqrt(n)) ** 2
                           + 48 * beta ** 2 * r ** 2 / mu ** 2
                           + 12 * (mu + lam) ** 2 * s2 / (mu * lam) ** 2 * m / m ** 2 / n,
                           "upper")
            ok &= err <= bound
            rows.append({"lam": lam, "R": r, "error": err, "bound": bound,
                         "ratio": err / bound})
    top = max(rows, key=lambda x: x["ratio"])
    return judge(bool(ok), f"Lemma 7 logistic m={m} d={d} n={n}, exact FedProx, lam in {{0.1, 1, "
                 f"10}}, R in {{0, 0.2, 0.6}}: E||w~_g - w_p||^2 / bound at most "
                 f"{top['ratio']:.2g} (lam = {top['lam']:g}, R = {top['R']:g}: {top['error']:.3g}"
                 f" vs {top['bound']:.3g})", {"rows": rows})


def _replaced(cfg, seed, n=200):
    """Exact FedProx local models on S and on S with one sample of client i replaced (a fresh
    x, the label flipped), at lam = mu m/64 and mu m/16 (the latter is (48)'s limit p_i lam =
    mu/16 with p_i = 1/m). Returns the constants and ``{lam: [(W_i(S), W_i(S'))]}``."""
    m, d, l2 = 4, 3, 1e-3
    inst = lemma7_instance(np.array([0.3]), reps=1, m=m, n=n, d=d, l2=l2, seed=seed)
    c = fedprox_theorem1_constants(inst.w_star[0], d)
    X, y = inst.train.X[0, 0], inst.train.y[0, 0]                         # (m, n, d), (m, n)
    rng = replicate_rng(seed, 1)
    pairs = {}
    for lam in (c["mu"] / 16 * m / 4, c["mu"] / 16 * m):
        _, W = minimize(ClientLosses(X, y, l2=l2), "fedprox", lam)
        pairs[lam] = []
        for _ in range(cfg.pick(4, 12)):
            i, j = int(rng.integers(m)), int(rng.integers(n))
            X2, y2 = X.copy(), y.copy()
            X2[i, j] = rng.choice([-1.0, 1.0], size=d)
            y2[i, j] = -y[i, j]
            _, W2 = minimize(ClientLosses(X2, y2, l2=l2), "fedprox", lam)
            pairs[lam].append((W[i], W2[i]))
    return {"m": m, "d": d, "n": n, "beta": c["L"], "mu": c["mu"]}, pairs


def _loss_sup(d, pairs):
    radius = max(max(np.linalg.norm(a), np.linalg.norm(b)) for a, b in pairs)
    return float(np.logaddexp(0.0, np.sqrt(d) * radius))


@claim("000.prop21.fedprox-stability", location="Proposition 21 (App. C)", kind="inequality",
       statement="Under (48) (n_i >= 4 beta/mu, p_i lam <= mu/16), an (eps_g, {eps_i})-minimizer "
                 "of (20) has federated stability gamma_i <= 160 beta ||l||_inf/(n_i (mu + lam)) "
                 "+ Err_i, Err_i = 2 sqrt(2 beta ||l||_inf) [4 eps_g ((beta + lam)/(mu + lam) + "
                 "3 lam/mu) + eps_i (sqrt((beta + lam)/(mu + lam)) + 16 p_i lam/mu)] + 8 beta^2 "
                 "[16 eps_g^2 (...)^2 + eps_i^2 (...)^2] (zero for exact minimizers).",
       mutants=("upper",))
def prop21(cfg, seed):
    # (i) exact FedProx minimizers (Err_i = 0) on Lemma 7 instances: gamma_i the sup over z
    # when one sample of client i is replaced (Def. 5), exact over the 2^(d+1) points z;
    # ||l||_inf on the ball holding every model used; n_i >= 4 beta/mu checked: 70-90x below.
    # (ii) the binding mean-estimation instance (paper_checks.p000_mean): exact minimizers
    # (~100x below) and (eps_g, eps_i)-minimizers moved against each other on S and S', where
    # Err_i's eps_i term is nearly attained (its 8 beta^2 reads the same as 8 beta: beta = 1,
    # and so do its (beta + lam)/(mu + lam) with or without the square root).
    from paper_checks.p000_mean import approximate_stability

    k, pairs = _replaced(cfg, seed)
    d, n, beta, mu = k["d"], k["n"], k["beta"], k["mu"]
    rows, ok = [], n >= 4 * beta / mu
    for lam, pr in pairs.items():
        gamma = _gamma(d, pr)
        bound = stated(160 * beta * _loss_sup(d, pr) / (n * (mu + lam)), "upper")
        ok &= gamma <= bound
        rows.append({"lam": lam, "gamma": gamma, "bound": bound, "ratio": gamma / bound})
    mean = approximate_stability(cfg, seed)
    for x in mean:
        x["ratio"] = x["gamma"] / stated(x["bound21"], "upper")
        ok &= bool(x["ratio"] <= 1)
    by_eps = {e: max(x["ratio"] for x in mean if (x["eps_g"], x["eps"]) == e)
              for e in ((0.0, 0.0), (0.0, 0.02), (0.0, 0.1), (0.05, 0.0), (0.05, 0.1))}
    return judge(bool(ok), f"(i) Lemma 7 logistic m={k['m']} d={d} n={n} (n >= 4 beta/mu = "
                 f"{4 * beta / mu:.3g}), exact FedProx, one sample replaced: " + "; ".join(
                     f"lam = {x['lam']:.3g}: gamma_i {x['gamma']:.3g} <= {x['bound']:.3g} "
                     f"(ratio {x['ratio']:.2g})" for x in rows)
                 + "; (ii) mean estimation (beta = mu = 1, m = 4, n in {100, 1e4}, lam in "
                 "{0.05, 0.25}), (eps_g, eps_i)-minimizers moved apart on S and S': largest "
                 "gamma_i / bound " + ", ".join(f"{v:.2g} at (eps_g, eps_i) = {e}"
                                                for e, v in by_eps.items()),
                 {"rows": rows, "mean_rows": mean})


def _gamma(d, pr):
    """max over the pairs of sup_z |l(a, z) - l(b, z)| (exact over the 2^(d+1) points z)."""
    Z_all = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    gamma = 0.0
    for a, b in pr:
        z1, z2 = Z_all @ a, Z_all @ b
        change = np.abs(np.logaddexp(0.0, np.concatenate([-z1, z1]))
                        - np.logaddexp(0.0, np.concatenate([-z2, z2])))
        gamma = max(gamma, float(change.max()))
    return gamma


@claim("000.prop22.afp-stability-rate", location="Proposition 22 (App. C)",
       kind="rate up to constants",
       statement="Under (48), with T and K_T large enough (49), AFP has expected federated "
                 "stability E[gamma_i] <= C beta ||l||_inf/(n_i (mu + lam)), C an absolute "
                 "constant.",
       mutants=("exponent",))
def prop22(cfg, seed):
    # C is not given, so what can fail is the rate in n_i (its exponent goes through the seam):
    # (i) AFP's limit (T, K_T -> infinity: the exact FedProx minimizer, _replaced) on Lemma 7
    # instances at (48)'s lam = mu m/16, n_i from 100 to 1600: gamma_i n_i (mu + lam)/(beta
    # ||l||_inf) flat in n_i (within x3; its level is the measured C); (ii) AFP itself with
    # (49)'s T and K_T (C1 = 1, C2 = 6400) on mean estimation (paper_checks.p000_mean.
    # afp_stability, lam = 0.01, coupled runs on S and S'), n_i in {25, 100, 400}: the fitted
    # exponent of E[gamma_i] in n_i within 0.35 of the stated -1, and the level C reported.
    # Within (48) (p_i lam <= mu/16) mu + lam moves by at most 1 + m/16: the rate in n_i is
    # what the proposition states.
    from paper_checks.p000_mean import BETA, LOSS_SUP, MU, afp_stability

    e = stated(1.0, "exponent")
    rows = []
    for n in cfg.pick((100, 400, 1600), (100, 200, 400, 800, 1600)):
        k, pairs = _replaced(cfg, seed, n=n)
        lam = max(pairs)
        pr = pairs[lam]
        gamma = _gamma(k["d"], pr)
        scaled = gamma * n ** e * (k["mu"] + lam) / (k["beta"] * _loss_sup(k["d"], pr))
        rows.append({"n": n, "gamma": gamma, "scaled": scaled})
    sc = np.array([x["scaled"] for x in rows])
    afp = afp_stability(cfg, seed)
    slope = float(np.polyfit(np.log([x["n"] for x in afp]),
                             np.log([x["gamma"] for x in afp]), 1)[0])
    level = max(x["gamma"] * x["n"] * (MU + 0.01) / (BETA * LOSS_SUP) for x in afp)
    ok = sc.max() / sc.min() < 3 and abs(slope + e) < 0.35
    return judge(bool(ok), "(i) exact FedProx (AFP's limit), lam = mu m/16, one sample "
                 "replaced: gamma_i n_i (mu + lam)/(beta ||l||_inf) = " + ", ".join(
                     f"{x['scaled']:.3g} (n = {x['n']})" for x in rows)
                 + f": flat in n_i (x{sc.max() / sc.min():.2f}), i.e. C ~ {sc.max():.2g}; (ii) "
                 "AFP with (49)'s T and K_T (C1 = 1, C2 = 6400), mean estimation, lam = 0.01: "
                 "E[gamma_i] " + ", ".join(f"{x['gamma']:.3g} ± {x['se']:.1g} (n = {x['n']}, T = "
                                           f"{x['T']}, K_T = {x['K_T']})" for x in afp)
                 + f": exponent in n_i {slope:.2f} (-1 stated), C ~ {level:.2g}",
                 {"rows": rows, "afp_rows": afp, "afp_slope": slope})


@claim("000.lemma28.parameter-stability", location="Lemma 28 (App. C)", kind="inequality",
       statement="Under the assumptions of Prop. 21, ||w_i(S') - w_i(S)|| <= 16 sqrt(2 beta "
                 "||l||_inf)/(n_i (mu + lam)) + E_{lam,i}, E_{lam,i} the error term (59) of an "
                 "approximate minimizer.",
       mutants=("upper",))
def lemma28(cfg, seed):
    # Exact minimizers (E = 0; _replaced) and approximate ones (the exact solution moved by
    # eps = 1e-3, 1e-2 along fixed directions, their constants of (53)-(57) measured:
    # _approximate_pair), lam within (48).
    k, pairs = _replaced(cfg, seed)
    d, n, beta, mu = k["d"], k["n"], k["beta"], k["mu"]
    rows, ok = [], True
    for lam, pr in pairs.items():
        change = max(float(np.linalg.norm(a - b)) for a, b in pr)
        bound = stated(16 * np.sqrt(2 * beta * _loss_sup(d, pr)) / (n * (mu + lam)), "upper")
        ok &= change <= bound
        rows.append({"lam": lam, "eps": 0.0, "change": change, "bound": bound,
                     "ratio": change / bound})
    for eps in (1e-3, 1e-2):
        for lam in list(pairs):
            ((_, a), (_, b)), kk = _approximate_pair(cfg, seed, lam, eps)
            change = float(np.linalg.norm(a - b))
            bound = stated(16 * np.sqrt(2 * kk["beta"] * kk["loss_sup"])
                           / (kk["n"] * (kk["mu"] + lam)) + _error_term(kk, lam), "upper")
            ok &= change <= bound
            rows.append({"lam": lam, "eps": eps, "change": change, "bound": bound,
                         "ratio": change / bound})
    return judge(bool(ok), f"Lemma 7 logistic m={k['m']} d={d} n={n}, FedProx exact (eps = 0) "
                 "and moved by eps, one sample replaced: ||w_i(S') - w_i(S)|| vs bound: "
                 + "; ".join(f"eps={x['eps']:g} lam={x['lam']:.3g}: {x['change']:.3g} <= "
                             f"{x['bound']:.3g} (ratio {x['ratio']:.2g})" for x in rows),
                 {"rows": rows})


@claim("000.lemma25.approximate-minimizers", location="Lemma 25 (App. C)",
       kind="inequality",
       statement="An (eps_g, {eps_i})-minimizer of (20) (Def. 20) satisfies (53)-(57) with "
                 "delta_g = lam/2 eps_g, zeta_g = lam eps_g, delta_i = (beta + lam)/2 eps_i, "
                 "zeta_i = (beta + lam) eps_i (as extracted: no squares on the eps of the "
                 "deltas).",
       mutants=("upper",))
def lemma25(cfg, seed):
    # Exact FedProx solution (w~_g, Prox_i(w~_g)) of ridge-logistic clients, then approximate
    # minimizers at distance eps_g from w~_g and eps_i from Prox_i(w^_g) in random directions,
    # eps from 1e-2 to 3. (53) and (55) follow from lam-smoothness of F_i (Lemma 17) and
    # (beta + lam)-smoothness of L_i + lam/2 ||w^_g - .||^2, so their deltas are quadratic in
    # eps: lam/2 eps_g^2 and (beta + lam)/2 eps_i^2 (the proof of Prop. 21, eq. 60, uses
    # sqrt(4 (beta + lam)/(mu + lam)) eps_i = sqrt(8 delta_i/(mu + lam)), i.e. the square).
    rng = replicate_rng(seed, 2)
    m, n, d, l2 = 3, 20, 4, 0.05
    X = 3.0 * rng.standard_normal((m, n, d))
    y = np.where(rng.random((m, n)) < 0.5, 1.0, -1.0)
    f = ClientLosses(X, y, l2=l2)
    beta = float(np.max(np.sum(X * X, -1)) / 4 + l2)          # per-sample smoothness
    printed_bad, corrected_worst = False, 0.0
    rows = []
    for lam in (0.3, 3.0):
        w_opt, _ = minimize(f, "fedprox", lam)

        def env(wg):                                            # F_i(wg) and grad F_i(wg)
            P = prox(f, np.broadcast_to(wg, (m, d)), lam)
            val = f.value(P) + lam / 2 * np.sum((P - wg) ** 2, -1)
            return val, lam * (wg - P), P
        F_opt = env(w_opt)[0].mean()
        for eps in (1e-2, 0.3, 3.0):
            for _ in range(cfg.pick(3, 10)):
                u = rng.standard_normal(d)
                w_hat = w_opt + eps * u / np.linalg.norm(u)
                vals, grads, P = env(w_hat)
                V = rng.standard_normal((m, d))
                W_hat = P + eps * V / np.linalg.norm(V, axis=1, keepdims=True)
                lhs53 = vals.mean() - F_opt
                lhs54 = float(np.linalg.norm(grads.mean(0)))
                lhs55 = f.value(W_hat) + lam / 2 * np.sum((w_hat - W_hat) ** 2, -1) - vals
                lhs56 = np.linalg.norm(f.grad(W_hat) + lam * (W_hat - w_hat), axis=-1)
                printed_bad |= bool(lhs53 > lam / 2 * eps
                                    or np.any(lhs55 > (beta + lam) / 2 * eps))
                ratios = [lhs53 / stated(lam / 2 * eps ** 2, "upper"),
                          lhs54 / stated(lam * eps, "upper"),
                          float(np.max(lhs55 / stated((beta + lam) / 2 * eps ** 2, "upper"))),
                          float(np.max(lhs56 / stated((beta + lam) * eps, "upper")))]
                corrected_worst = max(corrected_worst, max(ratios))
                rows.append({"lam": lam, "eps": eps, "ratios": ratios})
    by_eps = {e: max(max(r["ratios"]) for r in rows if r["eps"] == e) for e in (1e-2, 0.3, 3.0)}
    summary = (f"ridge-logistic clients m={m} n={n} d={d}, beta = {beta:.3g}, lam in {{0.3, 3}}, "
               "approximate minimizers at eps in {0.01, 0.3, 3}: largest left side / corrected "
               "constant (lam/2 eps_g^2, lam eps_g, (beta + lam)/2 eps_i^2, (beta + lam) eps_i) "
               + ", ".join(f"{v:.3f} at eps = {e:g}" for e, v in by_eps.items())
               + f"; the extracted deltas (eps not squared) violated: {printed_bad}")
    return judge_erratum(printed_bad, corrected_worst <= 1, summary,
                         {"rows": rows, "printed_violated": printed_bad},
                         "delta_g = lam/2 eps_g^2 and delta_i = (beta + lam)/2 eps_i^2 (the "
                         "smoothness bounds; eq. (60) uses the squares)",
                         level="erratum-harmless",
                         transcription=("depends", "the PDF must show delta(global) = lam/2 "
                                        "eps(global) with no square: the extraction drops "
                                        "superscripts, and with eps^2 the lemma is right"))


def _approximate_pair(cfg, seed, lam, eps):
    """An approximate FedProx minimizer on S and on S' (one sample of client i replaced): the
    exact solution moved by eps along fixed unit directions (u for the global model, v_j for
    the local ones; the same for S and S', so the output is a function of the data). Returns
    the outputs and the tightest constants of (53)-(57) over both datasets."""
    m, d, n, l2 = 4, 3, 200, 1e-3
    inst = lemma7_instance(np.array([0.3]), reps=1, m=m, n=n, d=d, l2=l2, seed=seed)
    c = fedprox_theorem1_constants(inst.w_star[0], d)
    X, y = inst.train.X[0, 0], inst.train.y[0, 0]
    rng = replicate_rng(seed, 3)
    i, j = int(rng.integers(m)), int(rng.integers(n))
    X2, y2 = X.copy(), y.copy()
    X2[i, j] = rng.choice([-1.0, 1.0], size=d)
    y2[i, j] = -y[i, j]
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    V = rng.standard_normal((m, d))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    out, const = [], {"delta_g": 0.0, "zeta_g": 0.0, "delta_i": 0.0, "zeta_i": 0.0}
    for Xs, ys in ((X, y), (X2, y2)):
        f = ClientLosses(Xs, ys, l2=l2)
        w_opt, _ = minimize(f, "fedprox", lam)
        w_g = w_opt + eps * u

        def env(wg):
            P = prox(f, np.broadcast_to(wg, (m, d)), lam)
            return f.value(P) + lam / 2 * np.sum((P - wg) ** 2, -1), lam * (wg - P), P
        v_opt = env(w_opt)[0]
        vals, grads, P = env(w_g)
        W = P + eps * V
        const["delta_g"] = max(const["delta_g"], float(vals.mean() - v_opt.mean()))
        const["zeta_g"] = max(const["zeta_g"], float(np.linalg.norm(grads.mean(0))))
        const["delta_i"] = max(const["delta_i"], float(
            (f.value(W) + lam / 2 * np.sum((w_g - W) ** 2, -1) - vals)[i]))
        const["zeta_i"] = max(const["zeta_i"], float(
            np.linalg.norm(f.grad(W)[i] + lam * (W[i] - w_g))))
        out.append((w_g, W[i]))
    const.update(eps_i=eps, p_i=1 / m, beta=c["L"] + l2, mu=c["mu"], n=n, d=d, l2=l2, i=i)
    radius = max(np.linalg.norm(a) for pair in out for a in pair)
    const["loss_sup"] = float(np.logaddexp(0.0, np.sqrt(d) * radius) + l2 * radius ** 2 / 2)
    return out, const


def _error_term(k, lam):
    """E_{lam,i} of eq. (59)."""
    mu = k["mu"]
    return (8 * k["zeta_i"] / (mu + lam) + np.sqrt(8 * k["delta_i"] / (mu + lam))
            + 8 / mu * (2 * k["zeta_g"] + 4 * k["p_i"] * lam * k["eps_i"]
                        + np.sqrt(2 * mu * lam * k["delta_g"] / (mu + lam))))


@claim("000.lemma27.global-stability", location="Lemma 27 (App. C)", kind="inequality",
       statement="An algorithm satisfying (53), (54) and (57) has ||w_g(S') - w_g(S)|| <= (lam + "
                 "mu)/(lam mu) (2 zeta_g + sqrt(2 lam mu delta_g/(lam + mu)) + 4 p_i lam eps_i + "
                 "2 p_i lam ||w_i(S') - w_i(S)||).",
       mutants=("upper",))
def lemma27(cfg, seed):
    rows, ok = [], True
    for eps in (0.0, 1e-3, 1e-2):
        for lam in (0.05, 0.5):
            pair, k = _approximate_pair(cfg, seed, lam, eps)
            (g1, a), (g2, b) = pair
            mu = k["mu"]
            lhs = float(np.linalg.norm(g1 - g2))
            bound = stated((lam + mu) / (lam * mu) * (
                2 * k["zeta_g"] + np.sqrt(2 * lam * mu * k["delta_g"] / (lam + mu))
                + 4 * k["p_i"] * lam * eps + 2 * k["p_i"] * lam * np.linalg.norm(a - b)),
                "upper")
            ok &= lhs <= bound
            rows.append({"eps": eps, "lam": lam, "change": lhs, "bound": bound,
                         "ratio": lhs / bound})
    return judge(ok, "Lemma 7 logistic m=4 d=3 n=200, FedProx's exact solution moved by eps "
                 "(0 = exact): ||w_g(S') - w_g(S)|| vs bound: " + "; ".join(
                     f"eps={x['eps']:g} lam={x['lam']:g}: {x['change']:.3g} <= "
                     f"{x['bound']:.3g} (ratio {x['ratio']:.2g})" for x in rows),
                 {"rows": rows})
