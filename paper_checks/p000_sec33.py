"""Paper 000, Sec. 3.3-3.4: Fig. 1's right panel (FedProx), Thm 8's threshold rule and the
p_i = n_i/N form of eqs. (18)-(19) (file ``000_...``; claims added for coverage in issue 13).
Each judged in the scope the paper states it."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms import fedprox
from montecarlo.experiments.metrics import evaluate
from montecarlo.experiments.problems import paper000_instance
from paper_checks.core import claim, judge, stated
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
