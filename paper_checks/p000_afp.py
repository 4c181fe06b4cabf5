"""Paper 000, Appendix B: Algorithm 2 (AFP, FedProx's general version) run with the schedules
of Lemmas 14-15, against Lemma 15's outer-loop bound and Prop. 16's optimization error.

File ``000_7ff2ed2592df3b60.txt``, Alg. 2 (with its sampled clients training: the branch
Appendix B analyses, see ``000.alg2.swapped-branches``), Lemma 15 (eqs. 38-39), Prop. 16.
Instance: ridge-logistic clients with small features and a large ridge (beta/mu ~ 1.3), so that
(38)'s local rounds K_t stay in the hundreds; W = the ball of radius r around 0 holding every
local minimizer and prox (asserted), D = 2r; ||l||_inf = the largest sample loss on W.
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.objectives import ClientLosses, minimize, prox
from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, stated


def _instance(seed):
    rng = replicate_rng(seed, 0)
    m, n, d, l2 = 4, 20, 3, 1.0
    X = 0.5 * rng.standard_normal((m, n, d))
    y = np.where(rng.random((m, n)) < 0.5, 1.0, -1.0)
    return ClientLosses(X, y, l2=l2), rng


def _afp(f, lam, T, reps, rng, r, beta, mu, gmin, B_global):
    """Alg. 2's Stage I, ``reps`` independent runs at once: sampled clients run SoftLocalSGD
    (batch 1, eta_k = 1/((mu + lam)(k + 1)), projection on W) for K_t steps satisfying (38),
    then the server step with eta_t = 2 (mu + lam)/(lam mu (t + 1)); then Stage II (every
    client, K_T steps from w_T^(i) towards w_T). Returns the global models (T + 1, reps, d),
    the local rounds used and the Stage II local models (reps, m, d)."""
    m, n, d = f.X.shape
    X, y = f.X, f.y
    wg = np.zeros((reps, d))
    W = np.zeros((reps, m, d))
    out, ks = [wg.copy()], []

    def soft_local_sgd(V, centre, K):
        for k in range(K):
            j = rng.integers(0, n, (reps, m))
            xj = X[np.arange(m)[None, :], j]                                  # (reps, m, d)
            yj = y[np.arange(m)[None, :], j]
            z = np.sum(xj * V, -1)
            g = ((-yj / (1 + np.exp(yj * z)))[..., None] * xj + f.l2 * V
                 + lam * (V - centre[:, None]))
            V = V - g / ((mu + lam) * (k + 1))
            V = V * np.minimum(1.0, r / np.linalg.norm(V, axis=-1, keepdims=True))
        return V

    def rounds(t):                                                            # eq. (38)
        return int(np.ceil((4 * t + 20) * lam ** 2 * beta ** 2 * (2 * r) ** 2
                           / (mu ** 2 * gmin)))
    for t in range(T):
        K = rounds(t)
        ks.append(K)
        C = np.argsort(rng.random((reps, m)), axis=1)[:, :B_global]        # sampled clients
        mask = np.zeros((reps, m), bool)
        np.put_along_axis(mask, C, True, axis=1)
        W = np.where(mask[..., None], soft_local_sgd(W.copy(), wg, K), W)
        step = 2 * (mu + lam) / (lam * mu * (t + 1))
        wg = wg - lam * m * step / B_global * np.sum(
            np.where(mask[..., None], (wg[:, None] - W) / m, 0.0), 1)
        out.append(wg.copy())
    return np.array(out), ks, soft_local_sgd(W.copy(), wg, rounds(T))


def _run(cfg, seed):
    f, rng = _instance(seed)
    m, n, d = f.X.shape
    r = 3.0
    beta = float(np.max(np.sum(f.X ** 2, -1)) / 4 + f.l2)     # per-sample smoothness
    mu = f.l2
    loss_sup = float(np.logaddexp(0.0, r * np.max(np.linalg.norm(f.X, axis=-1)))
                     + f.l2 * r * r / 2)
    rows = []
    for lam, B in ((1.0, m), (0.5, 2)):
        w_opt, W_opt = minimize(f, "fedprox", lam)
        inside = bool(np.linalg.norm(w_opt) <= r and np.all(np.linalg.norm(W_opt, axis=-1) <= r))
        gmin = min(beta ** 2 * (2 * r) ** 2, 2 * lam * loss_sup, lam ** 2 * (2 * r) ** 2)
        wg, ks, W_final = _afp(f, lam, cfg.pick(12, 30), cfg.pick(40, 150), rng, r, beta, mu,
                               gmin, B)
        err = np.sum((wg - w_opt) ** 2, -1)                                  # (T + 1, reps)
        # E_OPT (Prop. 16's proof): sum_i p_i (L_i(w_{T+1}^(i)) + lam/2 ||w_T - w_{T+1}^(i)||^2)
        # - sum_i p_i F_i(w~), with F_i(w~) through the exact prox.
        P = prox(f, np.broadcast_to(w_opt, (m, d)), lam)
        F_opt = float(np.mean(f.value(P) + lam / 2 * np.sum((P - w_opt) ** 2, -1)))
        e_opt = (f.value(W_final) + lam / 2 * np.sum((wg[-1][:, None] - W_final) ** 2, -1)
                 ).mean(-1) - F_opt
        rows.append({"lam": lam, "B": B, "err": err.mean(1), "se": err.std(1) / np.sqrt(
            err.shape[1]), "K": ks, "K_T": int(np.ceil((4 * len(ks) + 20) * lam ** 2 * beta ** 2
                                                      * (2 * r) ** 2 / (mu ** 2 * gmin))),
            "gmin": gmin, "inside": inside, "e_opt": float(e_opt.mean()),
            "e_opt_se": float(e_opt.std() / np.sqrt(e_opt.size))})
    return f, {"beta": beta, "mu": mu, "r": r, "loss_sup": loss_sup, "m": m}, rows


@claim("000.lemma15.outer-loop", location="Lemma 15 (App. B, eqs. 38-39)", kind="inequality",
       statement="With eta_t = 2 (mu + lam)/(lam mu (t + 1)) and K_t as in (38), AFP's global "
                 "model has E||w_t - w~_global||^2 <= 12 (lam + mu)^2 m ||p||^2 min{beta^2 D^2, "
                 "2 lam ||l||_inf, lam^2 D^2}/(lam^2 mu^2 (t + 1)).",
       mutants=("upper",))
def lemma15(cfg, seed):
    _, k, rows = _run(cfg, seed)
    ok, parts = True, []
    for x in rows:
        t = np.arange(x["err"].size)
        bound = stated(12 * (x["lam"] + k["mu"]) ** 2 * 1.0 * x["gmin"]
                       / (x["lam"] ** 2 * k["mu"] ** 2 * (t + 1)), "upper")     # m||p||^2 = 1
        ratio = x["err"] / bound
        ok &= x["inside"] and bool(np.all(ratio <= 1))
        parts.append(f"lam={x['lam']:g}, {x['B']} of {k['m']} clients per round: max over t "
                     f"of E||w_t - w~||^2 / bound {ratio.max():.2g} (last {ratio[-1]:.2g}; K_t "
                     f"from {x['K'][0]} to {x['K'][-1]})")
    return judge(ok, f"ridge-logistic clients (beta = {k['beta']:.3g}, mu = {k['mu']:g}, W = "
                 f"ball of radius {k['r']:g}), AFP with Lemma 15's schedules: " + "; ".join(parts),
                 {"rows": rows})


@claim("000.prop16.afp-optimization", location="Proposition 16 (App. B)", kind="inequality",
       statement="Under the assumptions of Lemmas 14 and 15, E_AFP[E_OPT] <= 4 (beta + lam) "
                 "beta^2 D^2/(mu^2 (K_T + 1)) + 6 (lam + mu)^2 m ||p||^2 min{beta^2 D^2, 2 lam "
                 "||l||_inf, lam^2 D^2}/(lam mu^2 (T + 1)), E_OPT = sum_i p_i (L_i(w_{T+1}^(i)) "
                 "+ lam/2 ||w_T - w_{T+1}^(i)||^2) - sum_i p_i F_i(w~).",
       mutants=("upper",))
def prop16(cfg, seed):
    _, k, rows = _run(cfg, seed)
    D = 2 * k["r"]
    ok, parts = True, []
    for x in rows:
        T = len(x["K"])
        bound = stated(4 * (k["beta"] + x["lam"]) * k["beta"] ** 2 * D ** 2
                       / (k["mu"] ** 2 * (x["K_T"] + 1))
                       + 6 * (x["lam"] + k["mu"]) ** 2 * x["gmin"]
                       / (x["lam"] * k["mu"] ** 2 * (T + 1)), "upper")
        ok &= x["e_opt"] <= bound
        parts.append(f"lam={x['lam']:g}, {x['B']} of {k['m']} clients, T = {T}: E[E_OPT] "
                     f"{x['e_opt']:.3g} ± {x['e_opt_se']:.1g} <= {bound:.3g} (ratio "
                     f"{x['e_opt'] / bound:.2g})")
    return judge(ok, "AFP (Stage I and II) with Lemmas 14-15's schedules: " + "; ".join(parts),
                 {"rows": rows})


def _exact_risks(inst, W):
    """Exact AER (p_i = 1/m) per replicate and the worst client's mean IER of the models W on
    a Lemma 7 instance (``montecarlo.experiments.metrics.evaluate``)."""
    from montecarlo.experiments.algorithms import Trajectory
    from montecarlo.experiments.metrics import evaluate

    traj = Trajectory("exact", "local", 0.0, W[None], W.mean(-2)[None], np.zeros(1, int),
                      np.zeros(1), np.zeros(1))
    met = evaluate(traj, inst, checkpoints=[0])
    return met["aer"][0], float(np.max(np.mean(met["ier"][0], 0)))


def _lambda_grid(cfg, seed):
    """Exact FedProx on Lemma 7 instances (m = 4, d = 4, n in {100, 400}, R in {0.05, 0.3})
    over lam in [1e-2, 10]: rows with the AER, the worst client's IER and the constants."""
    from montecarlo.experiments.problems import Instance
    from montecarlo.experiments.rates_instances import fedprox_theorem1_constants, lemma7_instance

    m, d, l2 = 4, 4, 1e-3
    R = np.array([0.05, 0.3])
    rows = []
    for cell, n in enumerate((100, 400)):
        inst = lemma7_instance(R, reps=cfg.pick(6, 20), m=m, n=n, d=d, l2=l2, seed=seed,
                               cell=cell)
        for j, r in enumerate(R):
            c = fedprox_theorem1_constants(inst.w_star[j], d)
            point = Instance(ClientLosses(inst.train.X[:, 0], inst.train.y[:, j], l2=l2),
                             inst.w_star[j], inst.test_X, inst.labels)
            for lam in (1e-2, 1e-1, 1.0, 10.0):
                aer, ier = _exact_risks(point, minimize(point.train, "fedprox", lam)[1])
                rows.append({"n": n, "R": r, "lam": lam, "aer": float(np.mean(aer)),
                             "ier": ier, "mu": c["mu"], "sigma2": c["rho"] ** 2})
    # beta = d/4 (Lemma 7); ||l||_inf on the ball of radius 1, which holds every model
    return rows, {"m": m, "d": d, "beta": d / 4, "loss_sup": float(np.logaddexp(0.0, np.sqrt(d)))}


@claim("000.prop23.lambda-aer", location="Proposition 23 (App. C)", kind="inequality",
       statement="For every lam (with T, K_T large as in (51)), E[AER_p(AFP)] <= C (beta "
                 "||l||_inf/(mu + lam) sum_i p_i/n_i + lam/2 sum_i p_i ||w_p - w*_i||^2), C an "
                 "absolute constant.",
       mutants=("upper",))
def prop23(cfg, seed):
    # At the exact FedProx minimizer (AFP's limit as T, K_T grow), on Lemma 7 instances (d =
    # 4, antipodal models: sum_i p_i ||w_p - w*_i||^2 = R^2), over lam from 1e-2 to 10, n in
    # {100, 400} and R in {0.05, 0.3}: the AER over the bracket must stay below C = 1 (fixed
    # beforehand) while the bracket moves over decades. beta = d/4; ||l||_inf on the ball of
    # radius 1 (which holds every model); mu the population curvature (module docstring of
    # paper_checks.p000_stability).
    rows, k = _lambda_grid(cfg, seed)
    m, d = k["m"], k["d"]
    for x in rows:
        x["bracket"] = (k["beta"] * k["loss_sup"] / (x["mu"] + x["lam"]) / x["n"]
                        + x["lam"] / 2 * x["R"] ** 2)
        x["ratio"] = x["aer"] / stated(x["bracket"], "upper")
    ratio = np.array([x["ratio"] for x in rows])
    span = max(x["bracket"] for x in rows) / min(x["bracket"] for x in rows)
    top = rows[int(ratio.argmax())]
    return judge(bool(ratio.max() <= 1.0), f"Lemma 7 logistic m={m} d={d}, exact FedProx, lam "
                 "in [1e-2, 10], n in {100, 400}, R in {0.05, 0.3}: the bracket spans "
                 f"x{span:.0f}; E[AER] / bracket in [{ratio.min():.2g}, {ratio.max():.2g}] "
                 f"(<= C = 1; largest at n = {top['n']}, R = {top['R']:g}, lam = "
                 f"{top['lam']:g})", {"rows": rows})


@claim("000.prop30.lambda-ier", location="Proposition 30 (App. C), eq. (63)",
       kind="inequality",
       statement="For every lam (with T, K_T as in (62)), E[IER_i(AFP)] <= C/(lam n_i) [beta "
                 "||l||_inf + sigma^2 beta^2 n_i/mu^2 (sum_i p_i/sqrt(n_i))^2 + sigma^2 n_i sum_i "
                 "p_i^2/n_i] + C lam [(1 + beta^2/mu^2) R^2 + sigma^2/mu^2 sum_i p_i^2/n_i], C an "
                 "absolute constant.",
       mutants=("upper",))
def prop30(cfg, seed):
    # As 000.prop23.lambda-aer (the exact FedProx minimizer, AFP's limit), the worst client's
    # mean IER against (63) with C = 1 fixed beforehand; p_i = 1/m, n_i = n, sigma^2 the exact
    # gradient variance at the truth (max_i tr H_i), R^2 = max_i ||w_p - w*_i||^2.
    rows, k = _lambda_grid(cfg, seed)
    m, beta, ls = k["m"], k["beta"], k["loss_sup"]
    for x in rows:
        n, lam, s2, mu = x["n"], x["lam"], x["sigma2"], x["mu"]
        x["bracket"] = (1 / (lam * n) * (beta * ls + s2 * beta ** 2 * n / mu ** 2 / n
                                         + s2 * n / (m * n))
                        + lam * ((1 + beta ** 2 / mu ** 2) * x["R"] ** 2 + s2 / mu ** 2 / (m * n)))
        x["ratio"] = x["ier"] / stated(x["bracket"], "upper")
    ratio = np.array([x["ratio"] for x in rows])
    top = rows[int(ratio.argmax())]
    return judge(bool(ratio.max() <= 1.0), f"Lemma 7 logistic m={m} d={k['d']}, exact FedProx, "
                 "lam in [1e-2, 10], n in {100, 400}, R in {0.05, 0.3}: worst client's E[IER] / "
                 f"(63) in [{ratio.min():.2g}, {ratio.max():.2g}] (<= C = 1; largest at n = "
                 f"{top['n']}, R = {top['R']:g}, lam = {top['lam']:g})", {"rows": rows})
