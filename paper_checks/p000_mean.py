"""Paper 000, App. C on the binding mean-estimation instance: the stability bounds of
approximate FedProx minimizers (Prop. 21 with its Err_i, Lemma 24 with its E_{lam,i} of eq. 59;
Lemma 24's claim is here, also run on Lemma 7 instances through ``paper_checks.
p000_stability``'s approximate pairs), and AFP's risks with the T and K_T of (51) and (62)
(Props 23 and 30: ``afp_risks``) and AFP's stability (Prop. 22: ``afp_stability``).

File ``000_7ff2ed2592df3b60.txt``, Def. 5, Def. 20, Props 21-23 and 30, Lemma 24. Instance
(``paper_checks.p000_afp.MeanEstimation``): l(w, z) = beta/2 ||w - z||^2 on the sample space Z
= W = the unit ball of R^2, beta = mu = 1, so ||l||_inf = sup_{w, z in W} l = 2 beta; m = 4
clients, p_i = 1/m (unless a row says otherwise), client i draws z = w*_i + s xi, xi uniform
on {+-e_1, +-e_2}, w*_i = R (cos 2 pi i/m, sin 2 pi i/m), R + s <= 1. Condition (48): n_i >=
4 beta/mu = 4 and p_i lam <= mu/16, i.e. lam <= 1/4 at p_i = 1/m.

Derived here. FedProx's exact minimizer: F_i(w) = beta lam/(2 (beta + lam)) ||w - zbar_i||^2 +
const, so w~_g = mean_i zbar_i and w~_i = (beta zbar_i + lam w~_g)/(beta + lam) (in W). The
approximate algorithm (Def. 20, any algorithm allowed): the exact global model (eps_g = 0) and
local models moved by eps_i along u = w~_i(S)/||w~_i(S)||, forward on S and backward on S' (S
with one sample of client i replaced by the point of Z opposite to w*_i): the output is a
function of the dataset, and its constants are exact: h_i = L_i + lam/2 ||. - w_g||^2 is a
quadratic of curvature beta + lam around Prox_i(w_g), so zeta_i = (beta + lam) eps_i, delta_i =
(beta + lam)/2 eps_i^2, zeta_g = delta_g = 0. Stability (Def. 5, the sup over Z): l(a, z) -
l(b, z) = beta <a - b, (a + b)/2 - z>, whose sup over ||z|| <= 1 is beta (||a - b|| + abs(<a - b,
(a + b)/2>)). With the models near the boundary of W this is about 4 beta eps_i, and Prop. 21's
Err_i about 4 beta eps_i (1 + 16 p_i lam/mu): the bound is nearly attained. Risks: the excess
risk of w for client i is E_z l(w, z) - E_z l(w*_i, z) = beta/2 ||w - w*_i||^2 (w*_i = E z),
exact for the models AFP reaches; sigma^2 = E||grad l(w*_i, z)||^2 = beta^2 s^2.
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, stated
from paper_checks.p000_stability import _approximate_pair, _error_term

BETA = MU = 1.0
LOSS_SUP = 2 * BETA


def _fedprox_exact(Z, lam):
    """Exact FedProx local models for data Z (m, n, d), p_i = 1/m."""
    zbar = Z.mean(1)
    return (BETA * zbar + lam * zbar.mean(0)) / (BETA + lam)


def sup_loss_change(a, b):
    """sup over the unit ball of abs(l(a, z) - l(b, z)) (module docstring)."""
    v = a - b
    return BETA * (float(np.linalg.norm(v)) + abs(float(v @ (a + b))) / 2)


def approximate_stability(cfg, seed, *, m=4, R=0.85, s=0.1):
    """Rows ``{n, lam, eps_g, eps, gamma, err21, E59, bound21, bound24}`` over n in {100, 1e4},
    lam in {1/20, 1/4} (within (48)), eps_g in {0, 0.05}, eps_i in {0, 0.02, 0.1}, a few
    datasets each; ``gamma`` the largest measured stability, ``bound21`` Prop. 21's 160 beta
    ||l||/(n (mu + lam)) + Err_i, ``bound24`` Lemma 24's 160 beta ||l||/(n (mu + lam)) + sqrt(2
    beta ||l||) E + beta E^2. The global model is moved by eps_g along u (forward on S,
    backward on S'), the local ones by eps_i from their prox of it; the constants are exact:
    zeta_g = c eps_g, delta_g = c eps_g^2/2 with c = beta lam/(beta + lam) the curvature of
    sum_i p_i F_i, and zeta_i, delta_i as in the module docstring."""
    rng = replicate_rng(seed, 5)
    angles = 2 * np.pi * np.arange(m) / m
    w_star = R * np.stack([np.cos(angles), np.sin(angles)], -1)
    steps = s * np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    p, i = 1 / m, 0
    rows = []
    for n in (100, 10_000):
        for lam in (0.05, 0.25):
            for eps_g, eps in ((0.0, 0.0), (0.0, 0.02), (0.0, 0.1), (0.05, 0.0), (0.05, 0.1)):
                gamma = 0.0
                for _ in range(cfg.pick(3, 10)):
                    Z = w_star[:, None, :] + steps[rng.integers(0, 4, (m, n))]
                    Z2 = Z.copy()
                    Z2[i, int(rng.integers(n))] = -w_star[i] / R
                    u = _fedprox_exact(Z, lam)[i]
                    u /= np.linalg.norm(u)
                    out = []
                    for data, sign in ((Z, 1.0), (Z2, -1.0)):
                        zbar = data.mean(1)
                        w_g = zbar.mean(0) + sign * eps_g * u
                        out.append((BETA * zbar[i] + lam * w_g) / (BETA + lam) + sign * eps * u)
                    gamma = max(gamma, sup_loss_change(*out))
                main = 160 * BETA * LOSS_SUP / (n * (MU + lam))
                kap = (BETA + lam) / (MU + lam)
                cg, ci = kap + 3 * lam / MU, np.sqrt(kap) + 16 * p * lam / MU
                err21 = (2 * np.sqrt(2 * BETA * LOSS_SUP) * (4 * eps_g * cg + eps * ci)
                         + 8 * BETA ** 2 * (16 * eps_g ** 2 * cg ** 2 + eps ** 2 * ci ** 2))
                curv = BETA * lam / (BETA + lam)
                zeta_g, delta_g = curv * eps_g, curv / 2 * eps_g ** 2
                zeta_i, delta_i = (BETA + lam) * eps, (BETA + lam) / 2 * eps ** 2
                E = (8 * zeta_i / (MU + lam) + np.sqrt(8 * delta_i / (MU + lam))
                     + 8 / MU * (2 * zeta_g + 4 * p * lam * eps
                                 + np.sqrt(2 * MU * lam * delta_g / (MU + lam))))
                rows.append({"n": n, "lam": lam, "eps_g": eps_g, "eps": eps, "gamma": gamma,
                             "err21": err21, "E59": E, "bound21": main + err21,
                             "bound24": main + np.sqrt(2 * BETA * LOSS_SUP) * E + BETA * E ** 2})
    return rows


@claim("000.lemma24.approximate-stability", location="Lemma 24 (App. C)", kind="inequality",
       statement="An algorithm satisfying (53)-(57), under (48), has federated stability gamma_i "
                 "<= 160 beta ||l||_inf/(n_i (mu + lam)) + sqrt(2 beta ||l||_inf) E_{lam,i} + "
                 "beta E_{lam,i}^2, E_{lam,i} as in (59).",
       mutants=("upper",))
def lemma24(cfg, seed):
    # The approximate FedProx minimizers of _approximate_pair at eps = 1e-3 and 1e-2, their
    # tightest constants of (53)-(57); gamma_i exact over the 2^(d+1) points z (ridge-logistic
    # sample loss, as in the ERM); lam within (48).
    rows, ok = [], True
    for eps in cfg.pick((1e-2,), (1e-3, 1e-2)):
        for frac in (0.25, 1.0):
            k0 = _approximate_pair(cfg, seed, 1.0, eps)[1]
            lam = frac * k0["mu"] / 16 / k0["p_i"]
            pair, k = _approximate_pair(cfg, seed, lam, eps)
            Z = np.array(list(itertools.product([-1.0, 1.0], repeat=k["d"])))
            (_, a), (_, b) = pair

            def loss(w):
                z = Z @ w
                return (np.concatenate([np.logaddexp(0.0, -z), np.logaddexp(0.0, z)])
                        + k["l2"] / 2 * w @ w)
            gamma = float(np.max(np.abs(loss(a) - loss(b))))
            E = _error_term(k, lam)
            bl = k["beta"] * k["loss_sup"]
            bound = stated(160 * bl / (k["n"] * (k["mu"] + lam)) + np.sqrt(2 * bl) * E
                           + k["beta"] * E ** 2, "upper")
            ok &= bool(k["n"] >= 4 * k["beta"] / k["mu"]) and gamma <= bound
            rows.append({"eps": eps, "lam": lam, "gamma": gamma, "E": E, "bound": bound,
                         "ratio": gamma / bound})
    # the binding mean-estimation instance: (eps_g, eps_i)-minimizers moved apart on S and S', their
    # constants of (53)-(57) exact (module docstring)
    mean = approximate_stability(cfg, seed)
    for x in mean:
        x["ratio"] = x["gamma"] / stated(x["bound24"], "upper")
        ok &= bool(x["ratio"] <= 1)
    by_eps = {e: max(x["ratio"] for x in mean if (x["eps_g"], x["eps"]) == e)
              for e in ((0.0, 0.0), (0.0, 0.02), (0.0, 0.1), (0.05, 0.0), (0.05, 0.1))}
    return judge(ok, "Lemma 7 logistic m=4 d=3 n=200, FedProx's exact solution moved by eps, "
                 "constants of (53)-(57) measured: " + "; ".join(
                     f"eps={x['eps']:g} lam={x['lam']:.3g}: gamma_i {x['gamma']:.3g} <= "
                     f"{x['bound']:.3g} (E = {x['E']:.3g}, ratio {x['ratio']:.2g})"
                     for x in rows)
                 + "; mean estimation (beta = mu = 1, m = 4, n in {100, 1e4}, lam in {0.05, "
                 "0.25}), (eps_g, eps_i)-minimizers moved apart on S and S': largest gamma_i / "
                 "bound " + ", ".join(f"{v:.2g} at (eps_g, eps_i) = {e}"
                                      for e, v in by_eps.items()),
                 {"rows": rows, "mean_rows": mean})


def _federation(rng, reps, m, n, R, s):
    """``reps`` datasets of m clients: z = w*_i + s xi (xi uniform on {+-e_1, +-e_2}), w*_i = R
    (cos 2 pi i/m, sin 2 pi i/m), so w_p = 0 and every ||w_p - w*_i|| = R; shapes (reps, m, n,
    2) and (m, 2)."""
    angles = 2 * np.pi * np.arange(m) / m
    w_star = R * np.stack([np.cos(angles), np.sin(angles)], -1)
    steps = s * np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    return w_star[:, None, :] + steps[rng.integers(0, 4, (reps, m, n))], w_star


def afp_risks(cfg, seed, *, m=4):
    """AFP itself (Alg. 2 with Lemmas 14-15's schedules, all clients every round,
    ``paper_checks.p000_afp._afp``) on mean-estimation federations, one fresh dataset per run,
    T and K_T the larger of (51)'s and (62)'s with C1 = C2 = 1. Rows ``{R, s, n, p, lam, T,
    K_T, excess}`` with ``excess`` the mean over runs of each client's excess risk beta/2 ||w -
    w*_i||^2 (exact for the models reached), over (R, s) in {(0.1, 0.4), (0.5, 0.4), (0,
    0.9)}: balanced sizes n_i = n in {25, 100}, p_i = 1/m, lam in {0.01, 0.05, 0.2} (n = 100
    with lam = 0.2 would need T = 400 rounds: left out), and unbalanced sizes n = (25, 25, 100,
    100) with p_i = 1/m or n_i/N, lam in {0.01, 0.05}; every lam within (48) (p_i lam <=
    mu/16)."""
    from paper_checks.p000_afp import MeanEstimation, _afp

    rng = replicate_rng(seed, 6)
    reps = cfg.pick(50, 400)
    cells = [(np.full(m, n), np.full(m, 1 / m), lam)
             for n, lam in ((25, 0.01), (25, 0.05), (25, 0.2), (100, 0.01), (100, 0.05))]
    uneven = np.array([25, 25, 100, 100])
    cells += [(uneven, p, lam) for p in (np.full(m, 1 / m), uneven / uneven.sum())
              for lam in (0.01, 0.05)]
    rows = []
    for R, s in ((0.1, 0.4), (0.5, 0.4), (0.0, 0.9)):
        for n, p, lam in cells:
            up, mp2, inv = lam * max(lam, 1.0), m * np.sum(p ** 2), 1 / np.sum(p / n)
            T = int(np.ceil(up * mp2 * max(inv, up * n.max() ** 2,                 # (51)
                                           np.max(n * np.maximum(1 / p, up * n)))))  # (62)
            K_T = int(np.ceil((lam + 1) ** 2 * max(inv, lam ** 2 * np.max(p * n) ** 2,
                                                   np.max(n * np.maximum(1 / p,
                                                                         lam ** 2 * p ** 2 * n)))))
            Z, w_star = _federation(rng, reps, m, int(n.max()), R, s)
            gmin = min(4 * BETA ** 2, 2 * lam * LOSS_SUP, 4 * lam ** 2)       # D = 2
            _, _, W = _afp(MeanEstimation(Z, BETA), (m, n, 2), lam, T, reps, rng, 1.0,
                           BETA, MU, gmin, m, K_T=K_T, p=p)
            excess = BETA / 2 * np.sum((W - w_star) ** 2, -1)                  # (reps, m)
            rows.append({"R": R, "s": s, "n": n, "p": p, "lam": lam, "T": T, "K_T": K_T,
                         "w_star": w_star, "excess": excess.mean(0)})
    return rows


def afp_stability(cfg, seed, *, m=4, lam=0.01, R=0.5, s=0.4, C2=6400.0):
    """E_AFP[gamma_0] of AFP itself with (49)'s T and K_T, C1 = 1 and C2 = 6400 (T = lam^2
    n^2, K_T = C2 lam^2 n^2/m^2, rounded up; the large C2 makes Stage II draw every sample
    about 0.04 n times, so that the mean over runs settles), on one mean-estimation dataset S
    per n in {25, 100, 400} (p_i = 1/m) and S' = S with client 0's first sample (set to w*_0 +
    s e_1) replaced by the point of Z opposite to w*_0. The two runs share every random draw
    (the same seed); gamma_0 is the sup over Z of the loss change of client 0's output
    (``sup_loss_change``), averaged over the runs. Rows ``{n, T, K_T, gamma, se}``."""
    from paper_checks.p000_afp import MeanEstimation, _afp

    reps = cfg.pick(100, 400)
    gmin = min(4 * BETA ** 2, 2 * lam * LOSS_SUP, 4 * lam ** 2)              # D = 2
    rows = []
    for n in (25, 100, 400):
        up2 = (lam * max(lam, 1.0)) ** 2
        T, K_T = int(np.ceil(up2 * n * n)), int(np.ceil(C2 * up2 * n * n / m ** 2))
        Z, w_star = _federation(replicate_rng(seed, 8, n), 1, m, n, R, s)
        Z = Z[0]
        Z[0, 0] = w_star[0] + [s, 0.0]             # the same replaced pair at every n
        Z2 = Z.copy()
        Z2[0, 0] = -w_star[0] / R
        out = []
        for data in (Z, Z2):
            _, _, W = _afp(MeanEstimation(data, BETA), (m, n, 2), lam, T, reps,
                           replicate_rng(seed, 9, n), 1.0, BETA, MU, gmin, m, K_T=K_T)
            out.append(W[:, 0])
        gamma = np.array([sup_loss_change(a, b) for a, b in zip(*out)])
        rows.append({"n": n, "T": T, "K_T": K_T, "gamma": float(gamma.mean()),
                     "se": float(gamma.std() / np.sqrt(reps))})
    return rows
