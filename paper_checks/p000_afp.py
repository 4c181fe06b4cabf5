"""Paper 000, Appendix B: Algorithm 2 (AFP, FedProx's general version) run with the schedules
of Lemmas 14-15, against Lemma 15's outer-loop bound and Prop. 16's optimization error.

File ``000_7ff2ed2592df3b60.txt``, Alg. 2 (with its sampled clients training: the branch
Appendix B analyses, see ``000.alg2.swapped-branches``), Lemma 15 (eqs. 38-39), Prop. 16.
Two instances. Ridge-logistic clients with small features and a large ridge (beta/mu ~ 1.3), so
that (38)'s local rounds K_t stay in the hundreds; W = the ball of radius r around 0 holding
every local minimizer and prox (asserted), D = 2r; ||l||_inf = the largest sample loss on W:
there the bounds hold 1e4-1e6 below. And the binding instance ``MeanEstimation`` (mu = beta,
sample gradients of norm up to beta D, one of two clients per round), where they are nearly
attained, so that a bound divided by 100 is rejected (``paper_checks.sensitivity``).
"""

from __future__ import annotations

import math

import numpy as np

from montecarlo.experiments.objectives import ClientLosses, minimize, prox
from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, stated
from paper_checks.p000_common import _lambda_grid


def _instance(seed):
    rng = replicate_rng(seed, 0)
    m, n, d, l2 = 4, 20, 3, 1.0
    X = 0.5 * rng.standard_normal((m, n, d))
    y = np.where(rng.random((m, n)) < 0.5, 1.0, -1.0)
    return ClientLosses(X, y, l2=l2), rng


class LogisticSamples:
    """Ridge-logistic clients (a ``ClientLosses`` f with X of shape (m, n, d)) in the form
    ``soft_local_sgd`` takes: ``samples(j)`` gathers the samples j (steps, reps, m) of every
    client, ``grad(V, s)`` is the per-sample gradient at models V (reps, m, d) for one step's
    samples s."""

    def __init__(self, f):
        m, n, d = f.X.shape
        self.f = f
        # Sample i of client k is row k n + i of the flattened data: np.take on those rows
        # gathers the same numbers as X[k, j], 10x faster than the fancy index.
        self._x, self._y, self._start = f.X.reshape(-1, d), f.y.reshape(-1), np.arange(m) * n

    def samples(self, j):
        rows = self._start + j
        return zip(np.take(self._x, rows, axis=0), np.take(self._y, rows))

    def grad(self, V, s):
        xj, yj = s                                                          # (reps, m, d)
        return (-yj / (1 + np.exp(yj * np.sum(xj * V, -1))))[..., None] * xj + self.f.l2 * V


class MeanEstimation:
    """The binding instance of Assumption A (mean estimation, which paper 000 Sec. 2 names among
    the problems it covers): l(w, z) = beta/2 ||w - z||^2 with every z in W, so each sample loss
    is beta-smooth AND beta-strongly convex (mu = beta, the largest mu allowed) and ||grad l||
    reaches beta D on W: the constants of Lemmas 14-15 and Prop. 16 are nearly attained (their
    checks use it to reject the bound / 100). Derived here: Prox_{L_i/lam}(w) = (beta zbar_i +
    lam w)/(beta + lam) (inside W when w and zbar_i are), F_i(w) = beta lam/(2 (beta + lam))
    ||w - zbar_i||^2 + L_i(zbar_i), so w~ = mean_i zbar_i for p_i = 1/m.

    Z has shape (m, n, d), or (reps, m, n, d) for one dataset per replicate."""

    def __init__(self, Z, beta):
        self.Z, self.beta = np.asarray(Z, float), float(beta)
        self.zbar = self.Z.mean(-2)
        self._flat = self.Z.reshape(-1, self.Z.shape[-1])      # as in LogisticSamples

    def samples(self, j):
        """The points j (steps, reps, m) of every client, shape (steps, reps, m, d); Z of shape
        (reps, m, n, d) gives every replicate its own dataset."""
        m, n = self.Z.shape[-3:-1]
        start = np.arange(m) * n
        if self.Z.ndim == 4:
            start = np.arange(j.shape[-2])[:, None] * (m * n) + start
        return np.take(self._flat, start + j, axis=0)

    def grad(self, V, z):
        """Per-sample gradients at V (reps, m, d) of one step's points z (``samples``)."""
        return self.beta * (V - z)

    def value(self, W):
        """L_i(W_i) for models W (..., m, d)."""
        return self.beta / 2 * np.mean(np.sum((W[..., None, :] - self.Z) ** 2, -1), -1)

    def prox(self, w, lam):
        """Prox_{L_i/lam}(w) for every client, w (..., d): shape (..., m, d)."""
        return (self.beta * self.zbar + lam * np.asarray(w)[..., None, :]) / (self.beta + lam)


# Steps per draw in soft_local_sgd: at most 256 x 400 replicates x 4 clients x 2 coordinates
# (6.6 MB) of gathered points at a time.
_CHUNK = 256


def soft_local_sgd(loss, n, V, centre, K, lam, mu, r, rng, trace=None):
    """Alg. 2's SoftLocalSGD for every (replicate, client) at once: K steps of batch 1 with
    eta_k = 1/((mu + lam)(k + 1)) (Lemma 14), each followed by the projection on W = the ball of
    radius r. V (reps, m, d) the local models, centre (reps, d) the global model, ``loss`` a
    ``MeanEstimation`` or ``LogisticSamples`` (its ``samples`` and per-sample ``grad``), n the
    sample count (or one per client); ``trace`` (a list) receives the iterate after every step.

    The sample indices of up to ``_CHUNK`` steps are drawn and gathered at once: numpy's bounded
    integers keep their buffer in the bit generator, so one draw of (steps, reps, m) hands out
    the numbers of ``steps`` draws of (reps, m), and the runs are those of a draw per step bit
    for bit (tests/test_paper_checks_algorithms.py); the per-step numpy calls were most of the
    AFP claims' time."""
    reps, m, _ = V.shape
    pull = centre[:, None]
    for start in range(0, K, _CHUNK):
        steps = loss.samples(rng.integers(0, n, (min(_CHUNK, K - start), reps, m)))
        for k, s in enumerate(steps, start):
            V = V - (loss.grad(V, s) + lam * (V - pull)) / ((mu + lam) * (k + 1))
            # np.linalg.norm's own sum of squares, without its dispatch. When every model is
            # inside W (sqrt is monotone: the largest norm is that of the largest square) the
            # projection's factors are all r/r = 1 exactly: skipped. NaN projects, as before.
            sq = np.add.reduce(V * V, -1, keepdims=True)
            if not math.sqrt(sq.max()) <= r:
                V = V * (r / np.maximum(r, np.sqrt(sq)))
            if trace is not None:
                trace.append(V)
    return V


def _afp(loss, shape, lam, T, reps, rng, r, beta, mu, gmin, B_global, K_T=None, w0=None,
         p=None):
    """Alg. 2's Stage I, ``reps`` independent runs at once: sampled clients run SoftLocalSGD
    for K_t steps satisfying (38), then the server step with eta_t = 2 (mu + lam)/(lam mu (t +
    1)); then Stage II (every client, K_T steps, (38)'s count at t = T unless given, from
    w_T^(i) towards w_T). ``loss`` as ``soft_local_sgd``'s, ``shape`` = (m, n, d), ``w0`` the
    initial global model (default 0; local models start at 0), ``p`` the weights (default
    1/m); n in ``shape`` may be one sample count per client. Returns the global models (T + 1,
    reps, d), the local rounds used and the Stage II local models (reps, m, d)."""
    m, n, d = shape
    p = np.full(m, 1 / m) if p is None else np.asarray(p, float)
    wg = np.zeros((reps, d)) if w0 is None else np.tile(np.asarray(w0, float), (reps, 1))
    W = np.zeros((reps, m, d))
    out, ks = [wg.copy()], []

    def rounds(t):                                                            # eq. (38)
        return int(np.ceil((4 * t + 20) * lam ** 2 * beta ** 2 * (2 * r) ** 2
                           / (mu ** 2 * gmin)))
    for t in range(T):
        K = rounds(t)
        ks.append(K)
        C = np.argsort(rng.random((reps, m)), axis=1)[:, :B_global]        # sampled clients
        mask = np.zeros((reps, m), bool)
        np.put_along_axis(mask, C, True, axis=1)
        local = soft_local_sgd(loss, n, W.copy(), wg, K, lam, mu, r, rng)
        W = np.where(mask[..., None], local, W)
        step = 2 * (mu + lam) / (lam * mu * (t + 1))
        wg = wg - lam * m * step / B_global * np.sum(
            np.where(mask[..., None], p[:, None] * (wg[:, None] - W), 0.0), 1)
        out.append(wg.copy())
    K_T = rounds(T) if K_T is None else K_T
    return np.array(out), ks, soft_local_sgd(loss, n, W.copy(), wg, K_T, lam, mu, r, rng)


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
        wg, ks, W_final = _afp(LogisticSamples(f), f.X.shape, lam, cfg.pick(12, 30),
                               cfg.pick(40, 150), rng, r, beta, mu, gmin, B)
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


def _mean_instance(seed):
    """``MeanEstimation`` with m = 2 clients of n = 8 points in the unit ball of R^2: client i's
    points are (-1)^i a e_1 +- b e_2 (a = 0.9, b = 0.4, balanced), beta = mu = 1, W the unit
    ball (D = 2), so w~ = 0 and ||l||_inf = beta/2 (1 + sqrt(a^2 + b^2))^2."""
    a, b, n = 0.9, 0.4, 8
    signs = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    Z = np.stack([np.stack([np.full(n, s * a), b * signs], -1) for s in (1.0, -1.0)])
    f = MeanEstimation(Z, beta=1.0)
    r = 1.0
    return f, {"beta": 1.0, "mu": 1.0, "r": r, "m": 2, "n": n,
               "loss_sup": 0.5 * (r + float(np.max(np.linalg.norm(Z, axis=-1)))) ** 2}


def _run_mean(cfg, seed):
    """AFP on ``_mean_instance`` with one of the two clients sampled per round, lam in {0.1,
    1}: per lam the Stage I trajectory (T = 30: E||w_t - w~||^2 for t = 0..30) and, for several
    T, E_OPT with a Stage II long enough (K_T = 100 (T + 1)) that Prop. 16's K_T term is a small
    part of its bound (any K_T is allowed)."""
    f, k = _mean_instance(seed)
    rng = replicate_rng(seed, 4)
    beta, mu, r = k["beta"], k["mu"], k["r"]
    reps = cfg.pick(400, 1000)
    rows = []
    for lam in (0.1, 1.0):
        gmin = min(beta ** 2 * (2 * r) ** 2, 2 * lam * k["loss_sup"], lam ** 2 * (2 * r) ** 2)
        wg, ks, _ = _afp(f, f.Z.shape, lam, 30, reps, rng, r, beta, mu, gmin, 1, K_T=0)
        err = np.sum(wg ** 2, -1)                                            # w~ = 0
        # Derived here: the sampled client's first local step jumps to beta z/(beta + lam)
        # (centre w_0 = 0), its K_0 steps average the sampled points (never projected), and
        # the server step at t = 0 multiplies by 2 (mu + lam)/mu: E||w_1||^2 = 4 (a^2 + b^2/K_0).
        exact1 = 4 * (0.9 ** 2 + 0.4 ** 2 / ks[0])
        z1 = abs(err[1].mean() - exact1) / (err[1].std() / np.sqrt(reps))
        P = f.prox(np.zeros(2), lam)
        F_opt = float(np.mean(f.value(P) + lam / 2 * np.sum(P ** 2, -1)))
        e_opt = {}
        for T in cfg.pick((1, 4, 16), (1, 2, 4, 8, 16)):
            wT, _, W_final = _afp(f, f.Z.shape, lam, T, reps, rng, r, beta, mu, gmin, 1,
                                  K_T=100 * (T + 1))
            e = (f.value(W_final) + lam / 2 * np.sum((wT[-1][:, None] - W_final) ** 2, -1)
                 ).mean(-1) - F_opt
            e_opt[T] = (float(e.mean()), float(e.std() / np.sqrt(e.size)), 100 * (T + 1))
        rows.append({"lam": lam, "B": 1, "err": err.mean(1), "K": ks, "gmin": gmin,
                     "e_opt": e_opt, "exact1": exact1, "z1": float(z1)})
    return k, rows


@claim("000.lemma15.outer-loop", location="Lemma 15 (App. B, eqs. 38-39)", kind="inequality",
       statement="With eta_t = 2 (mu + lam)/(lam mu (t + 1)) and K_t as in (38), AFP's global "
                 "model has E||w_t - w~_global||^2 <= 12 (lam + mu)^2 m ||p||^2 min{beta^2 D^2, "
                 "2 lam ||l||_inf, lam^2 D^2}/(lam^2 mu^2 (t + 1)).",
       mutants=("upper",))
def lemma15(cfg, seed):
    # Two instances: ridge-logistic clients (_run: holds 1e4-1e5 below the bound) and the
    # binding mean-estimation clients (_run_mean, mu = beta, m = 2, one client per round), where
    # the bound is nearly attained at t = 1 (the server's first step doubles the sampled
    # client's pull) and the simulated E||w_1||^2 must match its exact value.
    _, k, rows = _run(cfg, seed)
    km, mean_rows = _run_mean(cfg, seed)
    ok, parts = True, []
    for x, kk, what in [(x, k, "logistic") for x in rows] + [(x, km, "mean") for x in mean_rows]:
        t = np.arange(x["err"].size)
        bound = stated(12 * (x["lam"] + kk["mu"]) ** 2 * 1.0 * x["gmin"]
                       / (x["lam"] ** 2 * kk["mu"] ** 2 * (t + 1)), "upper")    # m||p||^2 = 1
        ratio = x["err"] / bound
        ok &= x.get("inside", True) and bool(np.all(ratio <= 1)) and x.get("z1", 0) < 5
        parts.append(f"{what}, lam={x['lam']:g}, {x['B']} of {kk['m']} clients per round: max "
                     f"over t of E||w_t - w~||^2 / bound {ratio.max():.2g} (at t = "
                     f"{ratio.argmax()}; last {ratio[-1]:.2g}; K_t from {x['K'][0]} to "
                     f"{x['K'][-1]})" + (f", E||w_1||^2 {x['err'][1]:.4g} vs exact "
                                         f"{x['exact1']:.4g} (|z| {x['z1']:.1f})"
                                         if "z1" in x else ""))
    return judge(ok, f"AFP with Lemma 15's schedules; logistic = ridge-logistic clients (beta = "
                 f"{k['beta']:.3g}, mu = {k['mu']:g}, W = ball of radius {k['r']:g}); mean = "
                 "mean estimation (beta = mu = 1, W = unit ball, the binding instance): "
                 + "; ".join(parts), {"rows": rows, "mean_rows": mean_rows})


@claim("000.prop16.afp-optimization", location="Proposition 16 (App. B)", kind="inequality",
       statement="Under the assumptions of Lemmas 14 and 15, E_AFP[E_OPT] <= 4 (beta + lam) "
                 "beta^2 D^2/(mu^2 (K_T + 1)) + 6 (lam + mu)^2 m ||p||^2 min{beta^2 D^2, 2 lam "
                 "||l||_inf, lam^2 D^2}/(lam mu^2 (T + 1)), E_OPT = sum_i p_i (L_i(w_{T+1}^(i)) "
                 "+ lam/2 ||w_T - w_{T+1}^(i)||^2) - sum_i p_i F_i(w~).",
       mutants=("upper",))
def prop16(cfg, seed):
    # Ridge-logistic clients (_run, T = 12: 1e5-1e6 below) and the binding mean-estimation
    # clients (_run_mean: T from 1 to 32, K_T = 100 (T + 1) so that the K_T term is small; the
    # bound is nearly attained at T = 1 and small lam).
    _, k, rows = _run(cfg, seed)
    km, mean_rows = _run_mean(cfg, seed)
    D = 2 * k["r"]
    cases = [(x["lam"], x["B"], k, len(x["K"]), x["K_T"], x["gmin"], x["e_opt"], x["e_opt_se"],
              "logistic") for x in rows]
    cases += [(x["lam"], x["B"], km, T, KT, x["gmin"], e, se, "mean")
              for x in mean_rows for T, (e, se, KT) in x["e_opt"].items()]
    ok, parts = True, []
    for lam, B, kk, T, K_T, gmin, e_opt, se, what in cases:
        D = 2 * kk["r"]
        bound = stated(4 * (kk["beta"] + lam) * kk["beta"] ** 2 * D ** 2
                       / (kk["mu"] ** 2 * (K_T + 1))
                       + 6 * (lam + kk["mu"]) ** 2 * gmin / (lam * kk["mu"] ** 2 * (T + 1)),
                       "upper")
        ok &= e_opt <= bound
        parts.append(f"{what}, lam={lam:g}, {B} of {kk['m']} clients, T = {T}, K_T = {K_T}: "
                     f"E[E_OPT] {e_opt:.3g} ± {se:.1g} <= {bound:.3g} (ratio {e_opt / bound:.2g})")
    return judge(ok, "AFP (Stage I and II) with Lemmas 14-15's schedules; logistic = "
                 "ridge-logistic clients, mean = mean estimation (beta = mu = 1, the binding "
                 "instance): " + "; ".join(parts), {"rows": rows, "mean_rows": mean_rows})


@claim("000.prop23.lambda-aer", location="Proposition 23 (App. C)", kind="inequality",
       statement="Under (48), for every lam (with T, K_T as in (51)), E[AER_p(AFP)] <= C (beta "
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
    # AFP itself, with (51)'s T and K_T (C1 = C2 = 1), on mean estimation (paper_checks.
    # p000_mean.afp_risks: beta = mu = 1, ||l||_inf = 2, lam within (48))
    from paper_checks.p000_mean import BETA, LOSS_SUP, MU, afp_risks

    afp = afp_risks(cfg, seed)
    for x in afp:
        p, w = x["p"], x["w_star"]
        het = np.sum(p * np.sum((p @ w - w) ** 2, -1))             # sum_i p_i ||w_p - w*_i||^2
        x["ratio"] = float(p @ x["excess"]) / stated(
            BETA * LOSS_SUP / (MU + x["lam"]) * np.sum(p / x["n"]) + x["lam"] / 2 * het, "upper")
    a_top = max(afp, key=lambda x: x["ratio"])
    ok = ratio.max() <= 1.0 and a_top["ratio"] <= 1.0
    return judge(bool(ok), f"Lemma 7 logistic m={m} d={d}, exact FedProx, lam "
                 "in [1e-2, 10], n in {100, 400}, R in {0.05, 0.3}: the bracket spans "
                 f"x{span:.0f}; E[AER] / bracket in [{ratio.min():.2g}, {ratio.max():.2g}] "
                 f"(<= C = 1; largest at n = {top['n']}, R = {top['R']:g}, lam = "
                 f"{top['lam']:g}); AFP run with (51)'s T and K_T (C1 = C2 = 1; T from "
                 f"{min(x['T'] for x in afp)} to {max(x['T'] for x in afp)}) on mean estimation "
                 "(m = 4, n_i = 25 or 100 or (25, 25, 100, 100) with p_i = 1/m or n_i/N, lam in "
                 "{0.01, 0.05, 0.2} within (48), R in {0, 0.1, 0.5}): E[AER] / bracket at most "
                 f"{a_top['ratio']:.2g} (n = {a_top['n'].tolist()}, lam = {a_top['lam']:g}, R = "
                 f"{a_top['R']:g})", {"rows": rows, "afp_rows": afp})


@claim("000.prop30.lambda-ier", location="Proposition 30 (App. C), eqs. (63)-(64)",
       kind="inequality",
       statement="Under (48), for every lam (with T, K_T as in (62)), E[IER_i(AFP)] <= C/(lam "
                 "n_i) [beta ||l||_inf + sigma^2 beta^2 n_i/mu^2 (sum_i p_i/sqrt(n_i))^2 + sigma^2 "
                 "n_i sum_i p_i^2/n_i] + C lam [(1 + beta^2/mu^2) R^2 + sigma^2/mu^2 sum_i "
                 "p_i^2/n_i] (63) and E[IER_i(AFP)] <= C (beta ||l||_inf/(mu n_i) + lam D^2) "
                 "(64), C an absolute constant.",
       mutants=("upper",))
def prop30(cfg, seed):
    # As 000.prop23.lambda-aer (the exact FedProx minimizer, AFP's limit), the worst client's
    # mean IER against (63) with C = 1 fixed beforehand; p_i = 1/m, n_i = n, sigma^2 the exact
    # gradient variance at the truth (max_i tr H_i), R^2 = max_i ||w_p - w*_i||^2. Then AFP
    # itself with (62)'s T and K_T (C1 = C2 = 1) on mean estimation (paper_checks.p000_mean.
    # afp_risks; sigma^2 = beta^2 s^2, D = 2), every client against its own (63) and (64), C =
    # 1.
    from paper_checks.p000_mean import BETA, LOSS_SUP, MU, afp_risks

    rows, k = _lambda_grid(cfg, seed)
    m, beta, ls = k["m"], k["beta"], k["loss_sup"]
    for x in rows:
        x["bracket"] = float(_eq63(np.full(m, x["n"]), np.full(m, 1 / m), x["lam"], x["sigma2"],
                                   x["mu"], x["R"] ** 2, beta, ls)[0])
        x["ratio"] = x["ier"] / stated(x["bracket"], "upper")
    ratio = np.array([x["ratio"] for x in rows])
    top = rows[int(ratio.argmax())]
    afp = afp_risks(cfg, seed)
    for x in afp:
        n, p, lam, w = x["n"], x["p"], x["lam"], x["w_star"]
        b63 = _eq63(n, p, lam, (BETA * x["s"]) ** 2, MU, np.max(np.sum((p @ w - w) ** 2, -1)),
                    BETA, LOSS_SUP)
        x["ratio63"] = float(np.max(x["excess"] / stated(b63, "upper")))
        x["ratio64"] = float(np.max(x["excess"] / stated(BETA * LOSS_SUP / (MU * n) + lam * 4.0,
                                                         "upper")))
    r63, r64 = max(x["ratio63"] for x in afp), max(x["ratio64"] for x in afp)
    ok = ratio.max() <= 1.0 and r63 <= 1.0 and r64 <= 1.0
    return judge(bool(ok), f"Lemma 7 logistic m={m} d={k['d']}, exact FedProx, "
                 "lam in [1e-2, 10], n in {100, 400}, R in {0.05, 0.3}: worst client's E[IER] / "
                 f"(63) in [{ratio.min():.2g}, {ratio.max():.2g}] (<= C = 1; largest at n = "
                 f"{top['n']}, R = {top['R']:g}, lam = {top['lam']:g}); AFP run with (62)'s T "
                 f"and K_T (C1 = C2 = 1; T from {min(x['T'] for x in afp)} to "
                 f"{max(x['T'] for x in afp)}) on mean estimation (m = 4, n_i = 25 or 100 or (25, "
                 "25, 100, 100) with p_i = 1/m or n_i/N, lam in {0.01, 0.05, 0.2} within (48), R "
                 "in {0, 0.1, 0.5}): largest client E[IER_i] / (63) "
                 f"{r63:.2g}, / (64) {r64:.2g} (C = 1)", {"rows": rows, "afp_rows": afp})


def _eq63(n, p, lam, s2, mu, R2, beta, loss_sup):
    """The bracket of eq. (63) for every client (C = 1): n, p the sizes and weights (m,), s2 =
    sigma^2, R2 = R^2."""
    return (1 / (lam * n) * (beta * loss_sup + s2 * beta ** 2 * n / mu ** 2
                             * np.sum(p / np.sqrt(n)) ** 2 + s2 * n * np.sum(p ** 2 / n))
            + lam * ((1 + beta ** 2 / mu ** 2) * R2 + s2 / mu ** 2 * np.sum(p ** 2 / n)))
