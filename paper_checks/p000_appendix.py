"""Paper 000, Appendix B: the auxiliary lemmas of FedProx's optimization analysis, with their
explicit constants, checked by sampling (Lemmas 14, 17, 18, 19).

File ``000_7ff2ed2592df3b60.txt``, App. B.1 and B.3. The instances are ridge-logistic clients
(``montecarlo.experiments.objectives.ClientLosses``: f(w) = mean_j log(1 + exp(-y_j x_j'w)) + l2/2 ||w||^2,
mu = l2 strongly convex, per-sample smoothness beta = max_j ||x_j||^2/4 + l2); the Moreau
envelope F(w) = min_v f(v) + lam/2 ||v - w||^2 and its gradient lam (w - Prox(w)) come from
``montecarlo.experiments.objectives.prox`` (damped Newton to 1e-10). Derived here, for the binding cases:
with n < d the Gram matrix X'X has a null space, where f's Hessian is exactly l2 I, so F's
curvature there is exactly lam l2/(l2 + lam) (Lemma 17's strong-convexity constant is attained);
with features of norm ~ 10 the loss's curvature reaches ~ 25 >> lam, so F's curvature approaches
lam (its smoothness constant).
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.experiments.objectives import ClientLosses, prox
from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, stated


def _client(rng, n, d, scale, l2):
    X = scale * rng.standard_normal((1, n, d))
    y = np.where(rng.random((1, n)) < 0.5, 1.0, -1.0)
    return ClientLosses(X, y, l2=l2)


def _env_grad(f, W, lam):
    """lam (w - Prox_{f/lam}(w)) for a batch of points W, shape (k, d)."""
    P = prox(f, W[:, None, :], lam)[:, 0, :]
    return lam * (W - P), P


@claim("000.lemma17.envelope-constants", location="Lemma 17 (App. B.3)",
       kind="inequality",
       statement="Under Assumption A(b), each F_i (the Moreau envelope of L_i with parameter "
                 "lam) is lam-smooth and mu lam/(mu + lam)-strongly convex.",
       mutants=("upper", "lower"))
def lemma17(cfg, seed):
    # Pairs (w, w + h u): u random unit directions and the null directions of X (where the
    # strong-convexity constant is attained), h = 1e-3 (local curvature) and h = 1 (the global
    # inequalities). Smoothness: ||grad F(w1) - grad F(w2)|| <= lam ||w1 - w2||; strong
    # convexity: <grad F(w1) - grad F(w2), w1 - w2> >= mu lam/(mu + lam) ||w1 - w2||^2.
    rng = replicate_rng(seed, 0)
    n, d, l2 = 5, 8, 0.05
    f = _client(rng, n, d, 4.0, l2)
    null = np.linalg.svd(f.X[0])[2][n:]                       # d - n null directions of X
    rows = []
    for lam in (0.1, 1.0, 10.0):
        smooth, strong = stated(lam, "upper"), stated(l2 * lam / (l2 + lam), "lower")
        hi, lo = 0.0, np.inf
        for h in (1e-3, 1.0):
            dirs = np.vstack([rng.standard_normal((cfg.pick(12, 40), d)), null])
            dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
            W1 = rng.standard_normal((len(dirs), d))
            G1, _ = _env_grad(f, W1, lam)
            G2, _ = _env_grad(f, W1 + h * dirs, lam)
            dG = G2 - G1
            hi = max(hi, float(np.max(np.linalg.norm(dG, axis=1) / h)))
            lo = min(lo, float(np.min(np.sum(dG * dirs, 1) / h)))
        rows.append({"lam": lam, "max_lipschitz": hi, "smooth_bound": smooth,
                     "min_curvature": lo, "strong_bound": strong})
    ok = all(r["max_lipschitz"] <= r["smooth_bound"] * (1 + 1e-6)
             and r["min_curvature"] >= r["strong_bound"] * (1 - 1e-4) for r in rows)
    return judge(ok, f"ridge-logistic client n={n} < d={d}, l2 = mu = {l2:g}, features x4: "
                 + "; ".join(f"lam={r['lam']:g}: max ||dgrad F||/||dw|| {r['max_lipschitz']:.4g}"
                             f" <= lam, min curvature {r['min_curvature']:.5g} >= mu lam/(mu + "
                             f"lam) = {r['strong_bound']:.5g}" for r in rows)
                 + " (the strong-convexity constant is attained along X's null space)",
                 {"rows": rows})


@claim("000.lemma18.gradient-bound", location="Lemma 18 (App. B.3)", kind="inequality",
       statement="Under Assumption A(a, b), ||grad F_i(w)||^2 <= min{beta^2 D^2, 2 lam "
                 "||l||_inf, lam^2 D^2} for every w in W.",
       mutants=("upper",))
def lemma18(cfg, seed):
    # W = the ball of radius r around 0 (D = 2r), which holds the client's minimizer and every
    # Prox(w) used (asserted); w uniform in W. beta: per-sample smoothness max ||x_j||^2/4 + l2;
    # ||l||_inf: the largest sample loss on W, log(1 + exp(r max ||x_j||)) + l2 r^2/2.
    rng = replicate_rng(seed, 1)
    n, d, l2, r = 20, 4, 0.1, 3.0
    f = _client(rng, n, d, 1.0, l2)
    norms = np.linalg.norm(f.X[0], axis=1)
    beta = float(np.max(norms ** 2) / 4 + l2)
    loss_sup = float(np.logaddexp(0.0, r * norms.max()) + l2 * r * r / 2)
    D = 2 * r
    k = cfg.pick(200, 1000)
    U = rng.standard_normal((k, d))
    W = U / np.linalg.norm(U, axis=1, keepdims=True) * r * rng.random((k, 1)) ** (1 / d)
    rows = []
    for lam in (0.05, 1.0, 20.0):
        G, P = _env_grad(f, W, lam)
        inside = bool(np.all(np.linalg.norm(P, axis=1) <= r))
        bound = stated(min(beta ** 2 * D ** 2, 2 * lam * loss_sup, lam ** 2 * D ** 2), "upper")
        rows.append({"lam": lam, "max_grad2": float(np.max(np.sum(G * G, 1))),
                     "bound": bound, "prox_inside": inside})
    ok = all(x["prox_inside"] and x["max_grad2"] <= x["bound"] for x in rows)
    return judge(ok, f"ridge-logistic client n={n} d={d} l2={l2:g}, W = ball of radius {r:g} "
                 f"(D = {D:g}), beta = {beta:.3g}, ||l||_inf = {loss_sup:.3g}, {k} points w: "
                 + "; ".join(f"lam={x['lam']:g}: max ||grad F||^2 {x['max_grad2']:.4g} <= "
                             f"{x['bound']:.4g}" for x in rows), {"rows": rows})


@claim("000.lemma19.minibatch-variance", location="Lemma 19 (App. B.3)",
       kind="closed-form identity",
       statement="For a batch B of size B drawn without replacement from [n], E||(1/B) sum_{i in "
                 "B} x_i||^2 = (n/B - 1)/(n(n - 1)) sum_i ||x_i - xbar||^2 + ||xbar||^2 <= (1/n) "
                 "sum_i ||x_i - xbar||^2 + ||xbar||^2.",
       mutants=("equality",))
def lemma19(cfg, seed):
    # Exact expectation: every one of the C(n, B) batches, for random vectors and every B.
    rng = replicate_rng(seed, 2)
    worst_eq, worst_ineq = 0.0, 0.0
    for n in (2, 5, 8):
        x = rng.standard_normal((n, 3)) * rng.exponential(1.0, (n, 1)) + rng.standard_normal(3)
        xbar = x.mean(0)
        spread = float(np.sum((x - xbar) ** 2))
        for B in range(1, n + 1):
            exact = np.mean([np.sum(x[list(c)].mean(0) ** 2)
                             for c in itertools.combinations(range(n), B)])
            formula = stated((n / B - 1) / (n * (n - 1)) * spread + xbar @ xbar, "equality")
            worst_eq = max(worst_eq, abs(exact - formula) / exact)
            worst_ineq = max(worst_ineq, formula / (spread / n + xbar @ xbar))
    ok = worst_eq < 1e-12 and worst_ineq <= 1 + 1e-12
    return judge(ok, "all batches of every size B from n in {2, 5, 8} vectors in R^3: max "
                 f"relative difference to the formula {worst_eq:.1g}; formula / (spread/n + "
                 f"||xbar||^2) at most {worst_ineq:.4f} (<= 1, equality at B = 1)",
                 {"max_relative": worst_eq, "max_ratio": worst_ineq})


@claim("000.lemma14.inner-loop", location="Lemma 14 (App. B.1)", kind="inequality",
       statement="SoftLocalSGD with eta_k = 1/((mu + lam)(k + 1)) has E||w_k - Prox_{L_i/lam}"
                 "(w_global)||^2 <= 8 beta^2 D^2/(mu^2 (k + 1)) for every k >= 0.",
       mutants=("upper",))
def lemma14(cfg, seed):
    # Alg. 2's SoftLocalSGD (batch size 1, projection P_W onto W = the ball of radius r, D = 2r;
    # paper_checks.p000_afp.soft_local_sgd), w_global = 0, the mean squared distance to
    # Prox(w_global) over replicates against the bound at every k = 0..200, on two instances:
    # (i) a ridge-logistic client (mu = l2 = 0.2, lam = 0.05), from the boundary of W: holds,
    # 1e3-1e4 below the bound; (ii) the binding instance (p000_afp.MeanEstimation, mu = beta):
    # one client with points +-r e_1, from w_0 = r e_2, lam in {0.02, 0.2}. Derived here for
    # (ii): Prox(0) = 0 and the first step jumps to beta z_1/(beta + lam), so w_k =
    # beta/(beta + lam) (mean of k sampled points) (never projected) and E||w_k||^2 = (beta/
    # (beta + lam))^2 r^2/k for k >= 1, r^2 at k = 0: between 1/(32 (1 + lam/beta)^2) and
    # 1/16 of the bound at every k, which the simulation must reproduce (within 5 s.e.).
    from paper_checks.p000_afp import LogisticSamples, MeanEstimation, soft_local_sgd

    rng = replicate_rng(seed, 3)
    K, reps = 200, cfg.pick(200, 1000)
    rows = []
    n, d, l2, r, lam = 30, 3, 0.2, 2.0, 0.05
    f = _client(rng, n, d, 1.0, l2)
    beta = float(np.max(np.sum(f.X[0] ** 2, 1)) / 4 + l2)
    target = prox(f, np.zeros((1, d)), lam)[0]
    w0 = r * rng.standard_normal(d) / np.sqrt(d)
    trace = [np.tile(r * w0 / np.linalg.norm(w0), (reps, 1, 1))]
    soft_local_sgd(LogisticSamples(f), n, trace[0], np.zeros((reps, d)), K, lam, l2, r, rng,
                   trace)
    sq = np.sum((np.array(trace)[:, :, 0] - target) ** 2, -1)               # (K + 1, reps)
    rows.append({"what": f"ridge-logistic n={n} d={d} mu = l2 = {l2:g} lam = {lam:g} r = {r:g}",
                 "err": sq.mean(1), "beta": beta, "mu": l2, "D": 2 * r, "z": 0.0})
    r, n = 1.0, 8
    f = MeanEstimation(r * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)[None, :, None]
                       * np.array([1.0, 0.0]), beta=1.0)
    for lam in (0.02, 0.2):
        trace = [np.tile([[0.0, r]], (reps, 1, 1))]
        soft_local_sgd(f, n, trace[0], np.zeros((reps, 2)), K, lam, 1.0, r, rng, trace)
        sq = np.sum(np.array(trace)[:, :, 0] ** 2, -1)                     # Prox(0) = 0
        k = np.arange(1, K + 1)
        exact = np.concatenate([[r * r], (1 / (1 + lam)) ** 2 * r * r / k])
        # at k = 1 every run is at distance beta r/(beta + lam): no spread, only rounding
        z = (np.abs(sq.mean(1) - exact) / (sq.std(1) / np.sqrt(reps) + 1e-12 * exact))[1:]
        rows.append({"what": f"mean estimation (mu = beta = 1) r = {r:g} lam = {lam:g}",
                     "err": sq.mean(1), "beta": 1.0, "mu": 1.0, "D": 2 * r,
                     "z": float(z.max())})
    ok = True
    for x in rows:
        bound = stated(8 * x["beta"] ** 2 * x["D"] ** 2 / (x["mu"] ** 2 * np.arange(1, K + 2)),
                       "upper")
        ratio = x["err"] / bound
        ok &= bool(np.all(ratio <= 1)) and x["z"] < 5
        x.update(ratio_max=float(ratio.max()), ratio_min=float(ratio.min()))
    return judge(ok, f"SoftLocalSGD, batch 1, {reps} runs, k = 0..{K}: E||w_k - Prox||^2 / (8 "
                 "beta^2 D^2/(mu^2 (k+1))) " + "; ".join(
                     f"{x['what']}: in [{x['ratio_min']:.2g}, {x['ratio_max']:.2g}]"
                     + (f" (simulation vs the exact error: max |z| {x['z']:.1f})" if x["z"]
                        else "") for x in rows),
                 {"rows": [{k: v for k, v in x.items() if k != "err"} for x in rows]})


@claim("000.lemma26.loss-to-parameter-stability", location="Lemma 26 (App. C)",
       kind="inequality",
       statement="Under Assumption A(b), gamma_i <= sqrt(2 beta ||l||_inf) ||w_i(S) - "
                 "w_i(S^(i,j))|| + beta/2 ||w_i(S) - w_i(S^(i,j))||^2: the sup over z of the "
                 "loss change when one sample is replaced is bounded through the parameter "
                 "change.",
       mutants=("upper",))
def lemma26(cfg, seed):
    # Lemma 7 instances (Rademacher features, c_X = 1, so every z = (x, y) is one of 2^(d+1)
    # points and the sup over z is exact): the client's ridge-logistic ERM (l2 = 1e-2) on S and
    # on S with sample j replaced by a fresh z'; beta = c_X^2 d/4 (Lemma 7); ||l||_inf =
    # log(1 + exp(sqrt(d) r)) on the ball of radius r = the larger norm of the two minimizers.
    from montecarlo.experiments.objectives import minimize

    rng = replicate_rng(seed, 4)
    n, d, l2 = 30, 4, 1e-2
    beta = d / 4
    Z_all = np.array(list(itertools.product([-1.0, 1.0], repeat=d)))
    worst, rows = 0.0, []
    for scale in (0.5, 2.0):
        w_star = scale * rng.standard_normal(d) / np.sqrt(d)
        for _ in range(cfg.pick(6, 20)):
            X = rng.choice([-1.0, 1.0], size=(n, d))
            y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ w_star)), 1.0, -1.0)
            X2, y2 = X.copy(), y.copy()
            j = rng.integers(n)
            X2[j] = rng.choice([-1.0, 1.0], size=d)
            y2[j] = -y[j]
            W1 = minimize(ClientLosses(X[None, None], y[None, None], l2=l2), "local")[1][0, 0]
            W2 = minimize(ClientLosses(X2[None, None], y2[None, None], l2=l2), "local")[1][0, 0]
            delta = float(np.linalg.norm(W1 - W2))
            r = max(np.linalg.norm(W1), np.linalg.norm(W2))
            loss_sup = float(np.logaddexp(0.0, np.sqrt(d) * r))
            margins = np.concatenate([Z_all @ W1, -(Z_all @ W1)]), np.concatenate(
                [Z_all @ W2, -(Z_all @ W2)])
            change = float(np.max(np.abs(np.logaddexp(0.0, -margins[0])
                                         - np.logaddexp(0.0, -margins[1]))))
            bound = stated(np.sqrt(2 * beta * loss_sup) * delta + beta / 2 * delta ** 2, "upper")
            worst = max(worst, change / bound)
            rows.append({"scale": scale, "delta": delta, "sup_change": change, "bound": bound})
    return judge(worst <= 1, f"Lemma 7 instances d={d} (exact sup over the 2^{d + 1} points z), "
                 f"client ERM with n={n}, l2={l2:g}, one sample replaced ({len(rows)} cases, "
                 f"||w*|| ~ 0.5 and 2): parameter change {min(x['delta'] for x in rows):.3g} to "
                 f"{max(x['delta'] for x in rows):.3g}; sup_z |loss change| / bound at most "
                 f"{worst:.3f}", {"rows": rows, "max_ratio": worst})
