"""Claims added for coverage (issue 13): paper 000's Fig. 1 right panel, Thm 8's threshold rule
and the p_i = n_i/N form of eqs. (18)-(19); paper 004's Lemmas 1 and 4. Each judged in the
scope the paper states it."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms import fedprox
from montecarlo.experiments.problems import paper000_instance, paper004_instance
from montecarlo.experiments.metrics import evaluate
from montecarlo.experiments.objectives import ClientLosses, minimize
from paper_checks.core import claim, judge, stated
from paper_checks.evidence import fmt
from paper_checks.p000_sec32 import _estimation_errors, _fig1_accuracy
from riskcalc import minimax


@claim("000.fig1.fedprox-right-panel", location="Sec. 3.4, Fig. 1 (right) and Appendix D",
       kind="qualitative experimental claim",
       statement="In the logistic simulation of Fig. 1, FedProx with lam = 0 mimics "
                 "PureLocalTraining, with lam = 4 resembles FedAvg, and with lam = 0.44 performs "
                 "like FedAvg followed by fine-tuning.",
       mutants=('equality',))
def fig1_right(cfg, seed):
    # The left panel's runs (paper_checks.p000_sec32._fig1_accuracy: same instances, seeds,
    # App. D hyperparameters) and FedProx (Alg. 2) on the same instances. "Mimics / resembles /
    # bears a similar performance" read as: of the three left-panel curves, the named one is
    # the nearest (mean |accuracy difference| over R) to each FedProx curve.
    R, acc, reps = _fig1_accuracy(cfg, seed)
    hp = dict(rounds=20, local_epochs=5, lr=0.2, global_lr=0.8, batch_size=16)
    prox = {lam: [] for lam in (0.0, 0.44, 4.0)}
    for rep in range(reps):
        inst = paper000_instance(R, m=5, n=100, d=100, n_test=cfg.pick(1000, 5000),
                                 seed=seed, rep=rep)
        for lam in prox:
            tr = fedprox(inst, lam=lam, **hp, seed=seed, rep=rep)
            prox[lam].append(evaluate(tr, inst, checkpoints=[-1])["accuracy_mean"][0])
    mean = {k: np.mean(v, 0) for k, v in prox.items()}
    ref = {k: stated(v.mean(0), "equality") for k, v in acc.items()}
    named = {0.0: "local", 4.0: "fedavg", 0.44: "finetune"}
    dist = {lam: {k: float(np.mean(np.abs(mean[lam] - v))) for k, v in ref.items()}
            for lam in mean}
    ok = all(min(dist[lam], key=dist[lam].get) == named[lam] for lam in mean)
    return judge(ok, f"{reps} reps, m=5 n=100 d=100, R = " + ", ".join(f"{r:g}" for r in R)
                 + ": mean |accuracy difference| over R to local / FedAvg / fine-tuning: "
                 + "; ".join(f"FedProx lam={lam:g}: " + " / ".join(
                     f"{dist[lam][k]:.3f}" for k in ("local", "fedavg", "finetune"))
                     for lam in mean) + "; accuracies FedProx " + "; ".join(
                     f"lam={lam:g}: " + "/".join(f"{v:.3f}" for v in mean[lam]) for lam in mean),
                 {"R": R, "fedprox": {f"{k:g}": v for k, v in mean.items()},
                  "distance": {f"{k:g}": v for k, v in dist.items()}})


@claim("000.thm8.threshold-rule", location="Sec. 3.3 (the dichotomous strategy, before eq. 18)",
       kind="rate up to constants",
       statement="The dichotomous strategy as printed, FedAvg if R^2 <= (||l||_inf/mu) m/N and "
                 "PureLocalTraining otherwise, attains the minimax rate min(d/n_i, R^2) + d/N up "
                 "to constant factors when (beta, mu, ||l||_inf, sigma) are of constant order.",
       mutants=("exponent",))
def thm8_rule(cfg, seed):
    # The printed rule with its factor F = ||l||_inf/mu, evaluated at Lemma 7's instances
    # (riskcalc.minimax.logistic_constants: F = 4 cosh^2(T/2) log(1 + e^T), T = c_X D sqrt(d);
    # F = 4.1 at T = 1/2, 6.7 at T = 1: constant order), on the instances of
    # 000.thm8.dichotomy-rate. A rate "up to constants" makes no claim on the constant: what
    # can fail is a loss, against the better of the two methods, that grows with the sample
    # size. Holds if the loss stays below x10 at n = 100 and 1000 and does not grow by more
    # than x2 from n = 100 to n = 1000. The threshold's exponent on m/N goes through the seam.
    # Limitation (coverage: partial): a threshold rule can lose at most about m (FedAvg's
    # d/N against local d/n at R = 0) or R_max^2 n/d on this grid, so an exponent mutant is
    # capped too and the check cannot tell it from the printed rule.
    m, d = 5, 10
    reps = cfg.pick(3, 10)
    R = np.geomspace(0.02, 1.2, 7)
    runs = []
    for n in (100, 1000):
        loc, glo = _estimation_errors(R, m, n, d, seed + n, reps, l2=1e-3)
        runs.append((n, loc.mean(0), glo.mean(0)))
    exponent = stated(1.0, "exponent")
    factors = {T: float(minimax.logistic_constants(T, 1.0, 1.0)["loss_sup"]
                        / minimax.logistic_constants(T, 1.0, 1.0)["mu0"]) for T in (0.5, 1.0)}

    def losses(F):
        return [float(np.max(np.where(R ** 2 <= F * (m / (m * n)) ** exponent, glo, loc)
                             / np.minimum(loc, glo))) for n, loc, glo in runs]
    rows = {T: losses(F) for T, F in factors.items()}
    ok = all(max(v) < 10 and v[1] < 2 * v[0] for v in rows.values())
    return judge(ok, f"m=5 d={d}, R in [0.02, 1.2], {reps} reps: the printed rule (FedAvg iff "
                 "R^2 <= (||l||_inf/mu) m/N, the factor at Lemma 7's instances) loses against "
                 "the better of FedAvg and local training " + "; ".join(
                     f"F = {factors[T]:.2f} (T = {T:g}): x{v[0]:.2f} at n = 100, x{v[1]:.2f} "
                     f"at n = 1000" for T, v in rows.items())
                 + ": a constant factor, not growing with n (the claim's scope: constants are "
                   "not accused)",
                 {"factor": factors, "loss_vs_best": rows, "exponent": exponent})


@claim("000.eq18-19.proportional-weights", location="Sec. 3.3, eqs. (18)-(19) and the display "
       "after them", kind="rate up to constants",
       statement="With p_i = n_i/N, (18) and (19) simplify to beta min{||l||_inf/(mu N/m), R^2} + "
                 "beta ||l||_inf/(mu N) and beta^3/mu^2 min{||l||_inf/(mu n_i), R^2} + beta "
                 "sigma^2/(mu^2 N), which match the lower bounds of Cor. 9 up to constant "
                 "factors when (beta, mu, ||l||_inf, sigma) are of constant order.",
       mutants=("exponent",))
def eq18_19(cfg, seed):
    # (a) The simplification: the general displays (18)-(19) with p_i = n_i/N, evaluated term
    # by term on random unbalanced sizes, against the simplified display (and riskcalc's
    # encodings of it, minimax.dichotomy_aer_bound / dichotomy_ier_bound).
    # (b) "Matches Cor. 9 up to constant factors": over balanced sizes n in [10, 1e5], m in
    # [2, 1000] and R in [1e-4, 10] (the lower bounds (16)-(17) span ~1e7 there), the ratio
    # upper / lower must stay in a band set by the constants alone. Derived here: a ratio of
    # sums lies between its termwise ratios, and min(a t, R^2) / min(b t, R^2) lies between
    # min(1, a/b) and max(1, a/b); so for the AER the ratio lies between the extremes of
    # {beta/mu, ||l||_inf/mu^2} and for the IER of {beta^3/mu^3, beta^2 ||l||_inf/mu^4,
    # sigma^2/mu^3}, whatever n, m, R: the band is max/min of each set. Four constant-order
    # sets. The rate's exponent on the sample sizes goes through the seam: a wrong exponent
    # makes the ratio drift with n and leave the band.
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(20):
        n = rng.integers(5, 5000, size=rng.integers(2, 50)).astype(float)
        N, m = n.sum(), len(n)
        p = n / N
        beta, mu, ls, s2, R = 2.0, 0.5, 1.5, 0.7, float(rng.uniform(0, 1))
        general = (beta * min(ls / (mu * N / m), R ** 2) + beta * ls / mu * np.sum(p ** 2 / n),
                   beta ** 3 / mu ** 2 * min(ls / (mu * n[0]), R ** 2)
                   + beta * s2 / mu ** 2 * np.sum(p ** 2 / n))
        simple = (beta * min(ls * m / (mu * N), R ** 2) + beta * ls / (mu * N),
                  beta ** 3 / mu ** 2 * min(ls / (mu * n[0]), R ** 2) + beta * s2 / (mu ** 2 * N))
        lib = (minimax.dichotomy_aer_bound(beta, mu, ls, R, N, m),
               minimax.dichotomy_ier_bound(beta, mu, ls, s2, R, n[0], N))
        worst = max(worst, *(abs(a - b) / b for a, b in zip(general, simple)),
                    *(abs(a - b) / b for a, b in zip(lib, simple)))
    e = stated(1.0, "exponent")
    n, m, R = np.meshgrid(np.geomspace(10, 1e5, 9), np.geomspace(2, 1000, 7),
                          np.geomspace(1e-4, 10, 11), indexing="ij")
    N = n * m
    rows = []
    for beta, mu, ls, s2 in [(1.0, 1.0, 1.0, 1.0), (2.0, 0.5, 1.5, 0.7), (4.0, 0.25, 3.0, 2.0),
                             (1.0, 0.8, 0.5, 0.3)]:
        aer_up = beta * np.minimum(ls / (mu * (N / m) ** e), R ** 2) + beta * ls / (mu * N ** e)
        ier_up = (beta ** 3 / mu ** 2 * np.minimum(ls / (mu * n ** e), R ** 2)
                  + beta * s2 / (mu ** 2 * N ** e))
        aer_lo = minimax.excess_lower_bound_aer(mu, beta, N, m, R)
        ier_lo = minimax.excess_lower_bound_ier(mu, beta, n, N, R)
        bands = [max(c) / min(c) for c in ((beta / mu, ls / mu ** 2),
                                           (beta ** 3 / mu ** 3, beta ** 2 * ls / mu ** 4,
                                            s2 / mu ** 3))]
        spreads = [float(np.exp(np.ptp(np.log(r)))) for r in (aer_up / aer_lo, ier_up / ier_lo)]
        rows.append({"constants": (beta, mu, ls, s2), "spread": spreads, "band": bands})
    span = float(minimax.excess_lower_bound_aer(1.0, 1.0, N, m, R).max()
                 / minimax.excess_lower_bound_aer(1.0, 1.0, N, m, R).min())
    ok = worst < 1e-12 and all(s <= b * (1 + 1e-9) for r in rows
                               for s, b in zip(r["spread"], r["band"]))
    return judge(ok, "20 random unbalanced size vectors (m up to 50): (18)-(19) with p_i = "
                 f"n_i/N vs the simplified display (and riskcalc): max relative difference "
                 f"{worst:.2g}; n in [10, 1e5], m in [2, 1000], R in [1e-4, 10] (Cor. 9's bound "
                 f"spans x{span:.2g}): upper / lower varies by (AER, IER) " + ", ".join(
                     f"x{r['spread'][0]:.3g}, x{r['spread'][1]:.3g} (bands x{r['band'][0]:.3g}, "
                     f"x{r['band'][1]:.3g} at (beta, mu, ||l||, sigma^2) = {r['constants']})"
                     for r in rows),
                 {"simplification": worst, "match": rows, "lower_span": span})


def _fedprox_minimizers(cfg, seed):
    """Exact FedProx and GlobalTrain minimizers on paper 004-type logistic instances with a
    ridge (the reconstruction's instances: strongly convex, so the minimizers exist)."""
    out = []
    for rep in range(cfg.pick(2, 5)):
        inst = paper004_instance([0.0, 1.0], n_test=1, labels="bernoulli", center_var=0.1,
                                 seed=seed, rep=rep)
        out.append(inst.train)
    return out


@claim("004.lemma4.local-global-gap", location="Lemma 4 (App. A)", kind="inequality",
       statement="At the FedProx minimizer, ||w~_g - w~_i|| <= 2 ||grad L_i(w~_g)|| / (mu + lam).",
       mutants=('upper',))
def lemma4(cfg, seed):
    # Deterministic: exact minimizers (Newton), mu = l2 (a valid strong-convexity constant of
    # the ridge-logistic losses). The sharp constant is 1 (the prox is a contraction around
    # w~_g); the factor 2 is what the lemma states.
    worst = 0.0
    for train in _fedprox_minimizers(cfg, seed):
        for lam in (0.02, 0.5, 10.0):
            wg, W = minimize(train, "fedprox", lam)
            grad = train.grad(np.broadcast_to(wg[..., None, :], W.shape))
            lhs = np.linalg.norm(W - wg[..., None, :], axis=-1)
            rhs = np.linalg.norm(grad, axis=-1) / (train.l2 + lam)
            worst = max(worst, float(np.max(lhs / rhs)))
    return judge(worst <= stated(2.0, "upper"), "paper 004-type ridge-logistic instances (R = "
                 "0, 1), lam in "
                 f"{{0.02, 0.5, 10}}: max ||w~_g - w~_i|| / (||grad L_i(w~_g)||/(mu + lam)) = "
                 f"{worst:.4f} (lemma: <= 2; sharp constant 1)", {"max_ratio": worst})


@claim("004.lemma1.global-vs-globaltrain", location="Lemma 1, eq. (4)", kind="inequality",
       statement="||w~_g - w~_GT||^2 <= 4 (1 + L/mu) / (mu (mu + lam)) sum_i p_i ||grad "
                 "L_i(w~_g)||^2.",
       mutants=('upper',))
def lemma1(cfg, seed):
    # Deterministic: exact FedProx and GlobalTrain minimizers, p_i = 1/m, L = max_i L_i (the
    # logistic bound lambda_max(X'X/n)/4 + l2), mu = l2.
    worst = 0.0
    for train in _fedprox_minimizers(cfg, seed):
        L = train.smoothness().max(-1)
        mu = train.l2
        w_gt, _ = minimize(train, "global")
        for lam in (0.02, 0.5, 10.0):
            wg, W = minimize(train, "fedprox", lam)
            grad = train.grad(np.broadcast_to(wg[..., None, :], W.shape))
            lhs = np.sum((wg - w_gt) ** 2, -1)
            rhs = stated(4 * (1 + L / mu) / (mu * (mu + lam))
                         * np.mean(np.sum(grad ** 2, -1), -1), "upper")
            worst = max(worst, float(np.max(lhs / rhs)))
    # The closest case found (a Nelder-Mead search over two-client quadratics in R^2, L/mu
    # from 1.5 to 100, lam free, converged to it): one dimension, curvatures mu and L = 2 mu,
    # minimizers -1 and +1, lam -> 0. Derived here: w~_g -> 0, w~_GT = (L - mu)/(L + mu), so
    # lhs/rhs = ((k - 1)/(k + 1))^2 / (2 (1 + k) (1 + k^2)), k = L/mu: at most 0.0037 (k = 2).
    # Reported, not judged: it says why the /100 mutant passes (coverage: partial).
    k = np.linspace(1.05, 20, 400)
    family = float(np.max(((k - 1) / (k + 1)) ** 2 / (2 * (1 + k) * (1 + k ** 2))))
    return judge(worst <= 1.0, "paper 004-type ridge-logistic instances (R = 0, 1), lam in "
                 f"{{0.02, 0.5, 10}}: max lhs / rhs of eq. (4) = {fmt(worst, 3)} (<= 1); two "
                 f"one-dimensional quadratic clients (curvatures mu, k mu; lam -> 0), the closest "
                 f"case found: at most {family:.2g} (so a bound / 100 still holds)",
                 {"max_ratio": worst, "quadratic_family_max": family})


@claim("004.lemma3.envelope-gradient", location="Lemma 3 (Lemarechal & Sagastizabal 1997)",
       kind="closed-form identity",
       statement="F_i(w_g) = min_w L_i(w) + lam/2 ||w - w_g||^2 is differentiable with gradient "
                 "lam (w_g - w*_i(w_g)), w*_i(w_g) the minimizing w.",
       mutants=('equality',))
def lemma3(cfg, seed):
    # A ridge-logistic client of the paper 004-type instance; F_i evaluated through its prox
    # (Newton on L_i(w) + lam/2 ||w - w_g||^2) and differentiated by central differences,
    # against the lemma's lam (w_g - prox(w_g)).
    train = _fedprox_minimizers(cfg, seed)[0]
    # client 0 of the R = 0 instance, its first 8 features (keeps the prox solves cheap)
    X, y, l2 = train.X[:1, :, :8], train.y[0, :1], train.l2
    f = ClientLosses(X, y, l2=l2)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for lam in (0.1, 1.0, 10.0):
        def prox(wg):
            w = wg.copy()
            for _ in range(100):                # damped Newton on L_i(w) + lam/2 ||w - wg||^2
                g = f.grad(w[None])[0] + lam * (w - wg)
                H = f.hessian(w[None])[0] + lam * np.eye(w.size)
                step = np.linalg.solve(H, g)
                w = w - step / max(1.0, float(np.linalg.norm(step)))
                if np.max(np.abs(g)) < 1e-13:
                    break
            return w

        def env(wg):
            w = prox(wg)
            return float(f.value(w[None])[0] + lam / 2 * np.sum((w - wg) ** 2))
        wg = rng.standard_normal(f.d)
        h = 1e-5
        fd = np.array([(env(wg + h * e) - env(wg - h * e)) / (2 * h) for e in np.eye(f.d)])
        formula = stated(lam * (wg - prox(wg)), "equality")
        worst = max(worst, float(np.max(np.abs(fd - formula)) / np.max(np.abs(formula))))
    return judge(worst < 1e-6, "ridge-logistic client (paper 004-type instance), lam in "
                 f"{{0.1, 1, 10}}: max relative difference between central differences of F_i "
                 f"and lam (w_g - prox(w_g)) = {worst:.2g}", {"max_relative": worst})


@claim("003.lemma61.rademacher-moments", location="Lemma 6.1 (Sec. 6)", kind="inequality",
       statement="(E ||sum_j zeta_j x_j||_2^p)^(1/p) <= sqrt(p - 1) (sum_j ||x_j||_2^2)^(1/2) "
                 "for Rademacher zeta_j, p >= 2.",
       mutants=('upper',))
def lemma61(cfg, seed):
    # Exact expectation: every one of the 2^m sign patterns, m = 10, random x_j in R^5 (some
    # of very unequal norms); p = 2 is an identity (ratio 1).
    rng = np.random.default_rng(seed)
    m = 10
    signs = np.array(np.meshgrid(*[[-1.0, 1.0]] * m)).reshape(m, -1).T     # (2^m, m)
    worst, at_two = 0.0, 0.0
    for _ in range(cfg.pick(5, 20)):
        x = rng.standard_normal((m, 5)) * rng.exponential(1.0, (m, 1))
        norms = np.linalg.norm(signs @ x, axis=1)
        scale = np.sqrt(np.sum(x ** 2))
        for p in (2.0, 3.0, 4.0, 8.0):
            ratio = float(np.mean(norms ** p) ** (1 / p)
                          / stated(np.sqrt(p - 1) * scale, "upper"))
            if p == 2.0:
                at_two = max(at_two, abs(ratio - 1))
            else:
                worst = max(worst, ratio)
    return judge(worst <= 1 and at_two < 1e-12, "exact over all 2^10 sign patterns, random "
                 f"x_j in R^5: max lhs / rhs over p in {{3, 4, 8}} = {worst:.4f} (<= 1); p = 2 "
                 f"is an equality (to {at_two:.1g})", {"max_ratio": worst})


@claim("003.lemma64.inverse-continuity", location="Lemma 6.4 (Sec. 6)", kind="inequality",
       statement="If lambda_min(U) >= lambda_0 > 0 and |||V - U|||_op -> 0, then |||V^-1 - "
                 "U^-1|||_op -> 0.",
       mutants=('upper',))
def lemma64(cfg, seed):
    # The deterministic core: |||V^-1 - U^-1||| <= e / (lambda_0 (lambda_0 - e)) for e =
    # |||V - U||| < lambda_0 (V^-1 - U^-1 = V^-1 (U - V) U^-1); random PSD U (d = 30) with
    # lambda_min = lambda_0 and symmetric perturbations of size e -> 0.
    rng = np.random.default_rng(seed)
    d, lam0 = 30, 0.5
    rows, ok = [], True
    for e in (1e-1, 1e-2, 1e-3, 1e-4):
        worst = 0.0
        for _ in range(cfg.pick(5, 20)):
            Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
            U = Q @ np.diag(np.r_[lam0, rng.uniform(lam0, 5.0, d - 1)]) @ Q.T
            E = rng.standard_normal((d, d))
            E = (E + E.T) / 2
            E *= e / np.linalg.norm(E, 2)
            gap = np.linalg.norm(np.linalg.inv(U + E) - np.linalg.inv(U), 2)
            worst = max(worst, float(gap))
            ok &= gap <= stated(e / (lam0 * (lam0 - e)), "upper") * (1 + 1e-9)
        rows.append((e, worst))
    ok &= all(b[1] < a[1] for a, b in zip(rows, rows[1:]))
    return judge(bool(ok), f"d={d}, lambda_0={lam0}: max |||V^-1 - U^-1||| at |||V - U||| = "
                 + ", ".join(f"{e:g}: {fmt(w, 3)}" for e, w in rows)
                 + " (within e / (lambda_0 (lambda_0 - e)), decreasing to 0)",
                 {"rows": rows})


@claim("004.lemma5.globaltrain-error", location="Lemma 5 (App. A)", kind="inequality",
       statement="E||w~_GT - w*_g|| <= (rho sqrt(sum_i p_i^2/n_i) + L R) / (mu/2) for the "
                 "GlobalTrain minimizer.",
       mutants=('upper',))
def lemma5(cfg, seed):
    # Paper 000 Lemma 7's logistic instances (montecarlo.experiments.rates.lemma7_instance), where L, mu,
    # rho are computable (montecarlo.experiments.rates.fedprox_theorem1_constants); p_i = 1/m, n_i = n,
    # R = max_i ||w*_i - w*_g|| (Assumption 1). The root mean square of ||w~_GT - w*_g|| over
    # replicates bounds its mean from above, so checking it is the stronger test.
    from montecarlo.experiments.rates import fedprox_theorem1_constants, lemma7_instance

    m, d, n = 4, 5, 200
    R = np.array([0.0, 0.1, 0.3, 1.0])
    inst = lemma7_instance(R, reps=cfg.pick(20, 100), m=m, n=n, d=d, seed=seed)
    w_gt, _ = minimize(inst.train, "global")
    rows, ok = [], True
    for k, r in enumerate(R):
        ws = inst.w_star[k]                                     # (m, d)
        wg = ws.mean(0)
        c = fedprox_theorem1_constants(ws, d)
        r_het = float(np.max(np.linalg.norm(ws - wg, axis=-1)))
        err = np.linalg.norm(w_gt[:, k] - wg, axis=-1)
        rms = float(np.sqrt(np.mean(err ** 2)))
        bound = stated((c["rho"] * np.sqrt(1 / (m * n)) + c["L"] * r_het) / (c["mu"] / 2),
                       "upper")
        ok &= rms <= bound
        rows.append({"R": r, "rms": rms, "bound": bound})
    return judge(bool(ok), f"Lemma 7 logistic m={m} d={d} n={n}, exact GlobalTrain minimizers: "
                 "rms ||w~_GT - w*_g|| vs bound at R = " + ", ".join(
                     f"{x['R']:g}: {fmt(x['rms'], 3)} <= {fmt(x['bound'], 3)}" for x in rows),
                 {"points": rows})


@claim("004.lemma1.eq5-local-inequality", location="Lemma 1, eq. (5)", kind="inequality",
       statement="sum_i p_i/n_i sum_j (mu ||w~_i - w*_i||^2 + <grad l(w*_i, z_ij), w~_i - w*_i>) "
                 "<= lam/2 R^2 at the FedProx minimizer.",
       mutants=('upper',))
def lemma1_eq5(cfg, seed):
    # Lemma 7 logistic instances with a ridge l2 = 1e-2 in every loss, so that each L_i is
    # mu = l2 strongly convex (Assumption 3); p_i = 1/m; R^2 = max_i ||w*_i - w*_g||^2
    # (Assumption 1); exact FedProx minimizers, every replicate (the lemma is deterministic).
    from montecarlo.experiments.rates import lemma7_instance

    R = np.array([0.0, 0.3, 1.0])
    inst = lemma7_instance(R, reps=cfg.pick(10, 40), m=4, n=200, d=5, l2=1e-2, seed=seed)
    train = inst.train
    r2 = np.max(np.sum((inst.w_star - inst.w_star.mean(1, keepdims=True)) ** 2, -1), -1)
    rows, ok = [], True
    for lam in (0.1, 1.0, 10.0):
        _, W = minimize(train, "fedprox", lam)
        ws = np.broadcast_to(inst.w_star, W.shape)
        D = W - ws
        lhs = np.mean(train.l2 * np.sum(D ** 2, -1) + np.sum(train.grad(ws) * D, -1), -1)
        worst = lhs.max(0)
        ok &= bool(np.all(worst <= stated(lam / 2 * r2, "upper")))
        rows.append({"lam": lam, "max_lhs": worst, "rhs": lam / 2 * r2})
    # The binding case (derived here): mean estimation l(w, z) = mu/2 ||w - z||^2 (L = mu),
    # w*_i on a circle of radius R about w*_g, each client's points w*_i +- e_1, w*_i +- e_2
    # (zbar_i = w*_i): w~_g = w*_g, w~_i - w*_i = lam/(mu + lam) (w*_g - w*_i), so lhs = mu
    # lam^2 R^2/(mu + lam)^2 = 2 mu lam/(mu + lam)^2 x rhs, one half at lam = mu.
    m, mu = 4, 1.0
    ang = 2 * np.pi * np.arange(m) / m
    w_star = np.stack([np.cos(ang), np.sin(ang)], -1)                       # R = 1
    Z = w_star[:, None, :] + np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    top = 0.0
    for lam in (0.1, 1.0, 10.0):
        zbar = Z.mean(1)
        D = (mu * zbar + lam * zbar.mean(0)) / (mu + lam) - w_star
        lhs = np.mean(mu * np.sum(D ** 2, -1) + np.sum(mu * (w_star - zbar) * D, -1))
        ok &= bool(lhs <= stated(lam / 2, "upper"))
        top = max(top, float(lhs / (lam / 2)))
    return judge(ok, f"mean estimation (L = mu = 1, m = 4, R = 1, lam in {{0.1, 1, 10}}): lhs / "
                 f"(lam R^2/2) up to {top:.3f} (1/2 at lam = mu); "
                 "Lemma 7 logistic m=4 d=5 n=200, l2=1e-2, R = 0 / 0.3 / 1: max lhs vs "
                 "lam R^2/2: " + "; ".join(
                     f"lam={x['lam']:g}: " + " / ".join(
                         f"{fmt(a, 3)} <= {fmt(b, 3)}" for a, b in zip(x["max_lhs"], x["rhs"]))
                     for x in rows), {"points": rows})
