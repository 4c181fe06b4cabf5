"""Paper 004's lemmas (App. A; file ``004_98172ed3646eef14.txt``): Lemma 1 (eqs. 4 and 5),
Lemma 3 (the envelope gradient), Lemmas 4 and 5, on the paper's ridge-logistic instances with
exact minimizers. Each judged in the scope the paper states it (claims added for coverage in
issue 13)."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.objectives import ClientLosses, minimize
from montecarlo.experiments.problems import paper004_instance
from paper_checks.core import claim, judge, stated
from paper_checks.evidence import fmt


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
