"""Paper 001, Sec. 3.2 and Table 2: the local-oracle lower bounds, run on Nesterov's worst-case
quadratic with span-restricted methods, and Table 2's match marks.

File ``001_352374a3e1e3397e.txt``, Secs 2-3.

Derivation (here). Nesterov's worst-case quadratic (Lectures on Convex Optimization, Sec.
2.1.4), f(x) = (L - mu)/8 (x'Ax - 2 x_1) + mu/2 ||x||^2 with A = tridiag(-1, 2, -1) in
dimension d: from x^0 = 0, a gradient at a point of span{e_1..e_k} lies in span{e_1..e_{k+1}},
so after k gradient calls a span-restricted method (Assumption 3.1) has ||x^k - x*||^2 >=
sum_{j > k} x*_j^2 =: tail(k), computed exactly from x* (a banded solve). Sec. 3.2 reduces
problem (2) with f_1 = ... = f_n and x^0 = 0 to this single f, so the fewest calls reaching
||x^k - x*||^2 <= eps ||x*||^2 is a lower bound for (2), to be compared with sqrt(L/mu) log 1/eps;
Nesterov's accelerated gradient (span-restricted) must stay above tail(k) and, if the bound is
tight (Table 2's gradient row), reach eps within a constant factor of it.
Table 2's marks are then read as statements on the complexity formulas: a match ("3") means
upper / lower stays bounded (up to the log factors the paper allows) over the regime, a
mismatch ("7") that the ratio grows without bound.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.linalg import solveh_banded

from paper_checks.core import claim, judge, judge_erratum, stated
from riskcalc import minimax


def _nesterov(L, mu, d):
    """Gradient of Nesterov's quadratic (as a function) and its exact minimizer."""
    a = (L - mu) / 4
    def grad(x):
        Ax = 2 * x
        Ax[1:] -= x[:-1]
        Ax[:-1] -= x[1:]
        g = a * Ax + mu * x
        g[0] -= a
        return g
    # (a A + mu I) x* = a e_1, A's bands in solveh_banded's upper form
    ab = np.zeros((2, d))
    ab[0, 1:] = -a
    ab[1, :] = 2 * a + mu
    rhs = np.zeros(d)
    rhs[0] = a
    return grad, solveh_banded(ab, rhs)


def _agd_calls(L, mu, grad, x_star, eps, kmax):
    """Gradient calls of Nesterov's AGD (constant momentum) until ||x - x*||^2 <= eps ||x*||^2,
    and whether every iterate stayed above the span bound tail(k)."""
    tail = np.cumsum((x_star ** 2)[::-1])[::-1]          # tail[k] = sum_{j >= k} x*_j^2
    q = (np.sqrt(L / mu) - 1) / (np.sqrt(L / mu) + 1)
    x = y = np.zeros_like(x_star)
    target, above = eps * tail[0], True
    for k in range(1, kmax + 1):
        x_new = y - grad(y) / L
        y = x_new + q * (x_new - x)
        x = x_new
        err = np.sum((x - x_star) ** 2)
        above &= bool(err >= tail[k] * (1 - 1e-9)) if k < len(tail) else True
        if err <= target:
            return k, above
    return np.inf, above


def summand_lower_calls(m: int, kappa_block: float, eps: float) -> int:
    """Fewest summand gradients a span-restricted method needs on a separable finite sum.

    Derived here. f(x) = (1/m) sum_j f_j(x_j), x = (x_1, ..., x_m) in m blocks, f_j Nesterov's
    chain on block j with smoothness L~ and strong convexity m mu (so each f_j / m is
    L~/m-smooth in its block, f is mu-strongly convex and each summand f_j is L~-smooth): a
    gradient of summand j at a point of the explored span adds at most one coordinate of block
    j. After k_j calls on block j the error is >= tail(k_j) (as in ``_agd_calls``), and
    ||x - x*||^2 <= eps ||x*||^2 needs sum_j tail(k_j) <= eps m tail(0). tail is convex in k
    (its increments x*_k^2 decrease, asserted), so by Jensen sum_j tail(k_j) >= m tail(k_bar):
    the calls are at least m k*, k* the (real) solution of tail(k*) = eps tail(0), bounded
    below by the last integer k with tail(k) > eps tail(0). Block condition number
    kappa_block = L~/(m mu), so the bound is m sqrt(kappa_block) log 1/eps / 2 ~ sqrt(m L~/mu).
    """
    L_t = 1.0
    mu_block = L_t / kappa_block
    d = int(12 * np.sqrt(kappa_block) * np.log(1 / eps)) + 50
    _, x_star = _nesterov(L_t, mu_block, d)
    inc = x_star ** 2
    if np.any(np.diff(inc) > 1e-15 * inc[0]):
        raise RuntimeError("the chain's tail is not convex: the Jensen step does not apply")
    tail = np.cumsum(inc[::-1])[::-1]
    k_star = int(np.argmax(tail <= eps * tail[0])) - 1
    return m * max(k_star, 1)


@claim("001.sec32.lower-bounds", location="Sec. 3.2 (local-oracle lower bounds) and Table 2",
       kind="rate up to constants",
       statement="Span-restricted methods need >~ sqrt(L/mu) log 1/eps local gradient calls "
                 "(Nesterov's worst-case quadratic, f_1 = ... = f_n) and sqrt(min{lam, L}/mu) "
                 "log 1/eps prox calls; Table 2: these bounds and Thm 3.1's communication bound "
                 "are matched by APGD1/APGD2/IAPGD+AGD (and, for summand gradients, by "
                 "IAPGD+Katyusha iff m lam <= L~, AL2SGD+ locally iff lam <= L~).",
       mutants=('exponent',))
def sec32(cfg, seed):
    eps, L = 1e-6, 1.0
    kappas = cfg.pick([1e2, 1e3, 1e4], [1e2, 1e3, 1e4, 1e5])
    rows = []
    # Two accuracies: at one eps a stated rate without its log(1/eps) passed (fuzz38 paper F5).
    for kappa, tol in itertools.product(kappas, (1e-3, 1e-12)):
        mu = L / kappa
        d = int(12 * np.sqrt(kappa) * np.log(1 / tol)) + 50
        grad, x_star = _nesterov(L, mu, d)
        tail = np.cumsum((x_star ** 2)[::-1])[::-1]
        k_low = int(np.argmax(tail <= tol * tail[0]))
        k_agd, above = _agd_calls(L, mu, grad, x_star, tol, 20 * k_low + 100)
        scale = kappa ** stated(0.5, "exponent") * np.log(1 / tol)
        rows.append({"kappa": kappa, "eps": tol, "d": d, "lower_calls": k_low,
                     "agd_calls": k_agd,
                     "lower_over_rate": k_low / scale, "agd_over_lower": k_agd / k_low,
                     "agd_above_span_bound": above})
    low = np.array([r["lower_over_rate"] for r in rows])
    gap = np.array([r["agd_over_lower"] for r in rows])
    grad_ok = (low.max() / low.min() < 1.5 and low.min() > 0.1 and gap.max() < 10
               and all(r["agd_above_span_bound"] for r in rows))
    # Table 2 on the formulas (riskcalc.minimax), mu = 1, eps = 1e-6, n = 10, over lam and L
    # from 1e3 to 1e7 (Thm 3.1 needs lam, L > 100 mu): the ratio upper / lower must stay in one
    # band for a match mark.
    mu, n = 1.0, 10
    grid = [(Lv, lam) for Lv in (1e3, 1e5, 1e7) for lam in (1e3, 1e5, 1e7)]
    marks = {"prox": [], "grad": [], "comm": []}
    for Lv, lam in grid:
        ap = minimax.apgd_complexity(Lv, mu, lam, eps)
        best_prox = ap["apgd1"] if lam <= Lv else ap["apgd2"]          # Table 2, prox row
        marks["prox"].append(best_prox / minimax.prox_oracle_lower_bound(Lv, mu, lam, eps))
        marks["comm"].append(best_prox / minimax.communication_lower_bound(Lv, mu, lam, eps))
        if lam <= Lv:                                                   # gradient row
            c = minimax.iapgd_agd_complexity(Lv, mu, lam, n, eps, printed=True)
            up = c["local_steps"] / (np.log(Lv * lam * n / mu) + np.log(1 / eps))
        else:
            up = ap["apgd2"]
        marks["grad"].append(up / minimax.gradient_oracle_lower_bound(Lv, mu, eps))
    spread = {k: float(max(v) / min(v)) for k, v in marks.items()}
    # Summand row: IAPGD+Katyusha's local count over m + sqrt(m L~/mu): bounded iff m lam <= L~.
    mm, lt, mu_s = np.array([1e2, 1e4, 1e6]), 1.0, 1e-8
    kat = minimax.iapgd_katyusha_complexity
    kat_in = kat(lt, mu_s, lt / mm, mm, eps)["local_order"] / (mm + np.sqrt(mm * lt / mu_s))
    kat_out = (kat(lt, mu_s, 100 * lt / mm ** 0.5, mm, eps)["local_order"]
               / (mm + np.sqrt(mm * lt / mu_s)))
    table_ok = (max(spread.values()) < 5 and kat_in.max() / kat_in.min() < 2
                and kat_out[-1] / kat_out[0] > 5)
    return judge(grad_ok and table_ok,
                 "Nesterov's quadratic, L = 1: span bound's fewest gradient calls / "
                 "(sqrt(kappa) log 1/eps) = " + ", ".join(
                     f"kappa={r['kappa']:.0e} eps={r['eps']:g}: {r['lower_over_rate']:.3f}"
                     for r in rows)
                 + "; AGD (span-restricted) never below the bound: "
                 + f"{all(r['agd_above_span_bound'] for r in rows)}, its calls / the bound's "
                 + ", ".join(f"{r['agd_over_lower']:.2f}" for r in rows)
                 + " (tight). Table 2 (L, lam in [1e3, 1e7]): best upper / lower spreads x"
                 + ", x".join(f"{v:.2f} ({k})" for k, v in spread.items())
                 + "; IAPGD+Katyusha local / summand bound with m lam = L~: "
                 + ", ".join(f"{x:.2f}" for x in kat_in) + ", with sqrt(m) lam = 100 L~: "
                 + ", ".join(f"{x:.2f}" for x in kat_out) + " (m = 1e2, 1e4, 1e6)",
                 {"gradient_oracle": rows, "table2_ratios": marks, "table2_spread": spread,
                  "katyusha_in": kat_in, "katyusha_out": kat_out})


def _zero_round_error(delta: float) -> float:
    """Fewest relative error ``(F(x) - F*)/(F(x^0) - F*)`` that an output made without any
    communication can guarantee on problem (2), for ``lam = delta mu``.

    Derived here. Two instances of (2) with n = 2, d = 1, x^0 = 0: f_1(x) = mu/2 (x - 1)^2 in
    both, f_2(x) = mu/2 (x - b)^2 with b = -1 or b = 1 (mu-strongly convex, smooth for every
    L, L~ >= mu). F(x) = (f_1(x_1) + f_2(x_2))/2 + lam (x_1 - x_2)^2/8 has the Hessian
    H = [[mu/2 + lam/4, -lam/4], [-lam/4, mu/2 + lam/4]] and the minimizer x_i* = (mu b_i +
    lam b_bar)/(mu + lam): x_1* is mu/(mu + lam) for b = -1 and 1 for b = 1. Without a
    communication client 1's output z (random or not) has one law in both instances; client 2
    is granted its best answer, so instance P costs s (z - x_1*(P))^2 / 2 with s = H_11 -
    H_12^2/H_22, relative a_P (z - x_1*(P))^2 with a_P = s/(2 (F_P(0) - F_P*)). The worse of
    the two is at least their mean, whose least value over z is a_1 a_2 D^2/(2 (a_1 + a_2)),
    D = lam/(mu + lam).
    """
    mu, lam = 1.0, delta
    H = np.array([[mu / 2 + lam / 4, -lam / 4], [-lam / 4, mu / 2 + lam / 4]])
    s = H[0, 0] - H[0, 1] ** 2 / H[1, 1]
    a = []
    for b in (-1.0, 1.0):
        bar = (1.0 + b) / 2
        x_star = (mu * np.array([1.0, b]) + lam * bar) / (mu + lam)
        a.append(s / (x_star @ H @ x_star))
    return a[0] * a[1] / (2 * (a[0] + a[1])) * (lam / (mu + lam)) ** 2


def _below_mu():
    """Route 1 of the claims below lam = mu: with no communication the worst relative error
    of ANY method is >= r = ``_zero_round_error(lam/mu)``, so accuracy eps = r/10 needs >= 0.9
    expected rounds, against the printed order sqrt(lam/mu) log(1/eps). Returns (lam/mu, r,
    eps, printed order, rounds needed, their ratio, whether it grows by over x100)."""
    deltas = 10.0 ** -np.arange(0, 13, 2)
    r = np.array([_zero_round_error(x) for x in deltas])
    eps = r / 10
    rounds_low = 1 - eps / r
    printed = np.sqrt(deltas) * np.log(1 / eps)
    ratio = rounds_low / printed
    grows = bool(np.all(np.diff(ratio) > 0) and ratio[-1] / ratio[0] > 100)
    return deltas, r, eps, printed, rounds_low, ratio, grows


@claim("001.thm44.below-mu", location="Thm 4.4 (AL2SGD+) and Sec. 2, communication complexity "
       "for lam < mu", kind="rate up to constants",
       statement="AL2SGD+'s communication complexity is O(sqrt(min{L~, lam}/mu) log 1/eps), "
                 "stated with no relation between lam and mu.",
       mutants=("exponent",))
def thm44_below_mu(cfg, seed):
    # Route 1, a lower bound for ANY method whose communication schedule does not depend on the
    # data (Assumption 3.1's zeta(k), AL2SGD+'s coins): with probability q of no communication
    # its worst expected relative error is >= q r, r = _zero_round_error(lam/mu), so accuracy
    # eps = r/10 needs E[rounds] >= P(rounds >= 1) >= 0.9. Below lam = mu (L~ >= mu, so
    # min{L~, lam} = lam) the printed order sqrt(lam/mu) log(1/eps) goes to 0 there: no
    # constant covers it. Route 2, the L-Katyusha reconstruction (p001._l_katyusha_counts,
    # rho = p(1-p)): 2 + 2 sqrt(lam L~/((lam + L~) mu)) rounds per log 1/eps, within x2 of the
    # corrected (1 + sqrt(min{L~, lam}/mu)) log 1/eps over lam/mu in [1e-12, 1e6].
    from paper_checks.p001 import _l_katyusha_counts

    deltas, r, eps, printed, rounds_low, ratio, grows = _below_mu()
    lt, lm = (np.array(v) for v in zip(*itertools.product([1.0, 1e3, 1e6],
                                                          10.0 ** np.arange(-12, 7, 2))))
    comm = _l_katyusha_counts(lt, 1.0, lm, 100, lm * lt / (lm + lt) ** 2)[0]
    corrected = 1 + np.minimum(lt, lm) ** stated(0.5, "exponent")
    band = comm / corrected
    consistent = bool(np.all(rounds_low <= (1 + np.sqrt(deltas)) * np.log(1 / eps)))
    # riskcalc's rounds_order, max{1, sqrt(min/mu)} log 1/eps, is the corrected order (x2)
    encoded = (minimax.al2sgd_complexity(1e6, 1.0, deltas, 10, eps)["rounds_order"]
               / ((1 + np.sqrt(deltas)) * np.log(1 / eps)))
    attained = consistent and bool(band.min() >= 1 - 1e-12 and band.max() <= 2 + 1e-12
                                   and encoded.min() >= 0.5 and encoded.max() <= 1)
    return judge_erratum(grows, attained,
                         "two instances differing only in client 2's data (mu = 1): with no "
                         "communication the worst relative error is >= r = " + ", ".join(
                             f"{v:.3g}" for v in r) + " at lam/mu = " + ", ".join(
                             f"{x:.0e}" for x in deltas) + "; at eps = r/10 every method needs "
                         ">= 0.9 expected rounds, the printed order is " + ", ".join(
                             f"{v:.3g}" for v in printed) + f" (ratio x{ratio[0]:.3g} -> "
                         f"x{ratio[-1]:.3g}); L-Katyusha with rho = p(1-p): rounds / (1 + "
                         f"sqrt(min{{L~, lam}}/mu)) in [{band.min():.3g}, {band.max():.3g}] for "
                         "L~/mu in {1, 1e3, 1e6}, lam/mu in [1e-12, 1e6]; riskcalc's "
                         f"rounds_order / (1 + sqrt(lam/mu)) log 1/eps in [{encoded.min():.3g},"
                         f" {encoded.max():.3g}]",
                         {"lam_over_mu": deltas, "zero_round_error": r, "eps": eps,
                          "printed": printed, "rounds_lower": rounds_low,
                          "reconstruction_over_corrected": band, "riskcalc_over_corrected":
                          encoded},
                         "O((1 + sqrt(min{L~, lam}/mu)) log 1/eps), the same where lam >= mu "
                         "(Thm 3.1's scope, where the optimality is claimed)",
                         level="erratum-harmless",
                         transcription=("depends", "the form is printed twice (Sec. 2 and Thm "
                                        "4.4) without a '1 +', so extraction damage is unlikely;"
                                        " but Prop. E.4, which sets the parameters, is not in "
                                        "the text and may restrict lam >= mu, as Thm 3.1 does "
                                        "and Thm 4.2's rate (1 - sqrt(mu/lam))^k needs"))


@claim("001.sec41.below-mu", location="Sec. 4.1 (APGD1, Table 1) and Thm 4.2 (IAPGD), "
       "communication complexity for lam < mu", kind="rate up to constants",
       statement="APGD1 and IAPGD communicate O(sqrt(lam/mu) log 1/eps) times, and IAPGD+AGD "
                 "has F(x^k) - F* <= 8 (1 - sqrt(mu/lam))^k (F(x^0) - F*), both stated with "
                 "no relation between lam and mu (the rate is checked just above lam = mu too).",
       mutants=("exponent",))
def sec41_below_mu(cfg, seed):
    # Route 1 (_below_mu): every method needs >= 0.9 expected rounds where the printed order
    # goes to 0 as lam/mu -> 0. Thm 4.2: below lam = mu its factor 8 (1 - sqrt(mu/lam)) is
    # negative, so at k = 1 the bound says F(x^1) < F*. Route 2: APGD1 itself (quadratic m = 20,
    # d = 20, L = 1, mu = 1e-2, rounds to shrink ||x - x*|| 1e4-fold) needs 1-2 rounds below
    # lam = mu, within (1 + sqrt(lam/mu)) log 1e4 everywhere (measured 0.11-0.52 of it), and
    # grows like (lam/mu)^(1/2) above it (measured exponent 0.47 over lam/mu in [1, 100]).
    # (6) is proximal gradient on h = lam psi + mu/(2n) ||x||^2 of condition (lam + mu)/mu.
    # Route 3, just above lam = mu: Thm 4.2's rate, run as 001.thm42.outer-rate runs it (exact
    # local prox, the aligned quadratic whose consensus curvature is mu), exceeds its bound
    # x1.5e12 at lam = 1.01 mu (x439 at 1.1 mu; below it from 1.5 mu), while 8 (1 - sqrt(mu/
    # (lam + mu)))^k, the rate of (6)'s condition number, holds at every lam checked (at most
    # 0.0062 of it).
    from montecarlo.experiments.algorithms import apgd1
    from montecarlo.experiments.metrics import exact_solution, rounds_to_accuracy
    from montecarlo.experiments.objectives import minimize, objective_value
    from montecarlo.experiments.problems import quadratic_instance
    from montecarlo.experiments.rates import aligned_quadratic
    from paper_checks.p001 import _fedprox_gap

    deltas, r, eps, printed, rounds_low, ratio, grows = _below_mu()
    factor = 8 * (1 - np.sqrt(1 / deltas[1:]))            # Thm 4.2 at k = 1, lam < mu
    mu = 1e-2
    losses = aligned_quadratic(m=10, d=20, L=1.0, mu=mu, seed=seed)
    near = np.array([1.01, 1.1, 1.5, 3.0])
    worst = {"printed": [], "corrected": []}
    for x in near:
        lam = x * mu
        wg, W_star = minimize(losses, "fedprox", lam)
        gap = _fedprox_gap(losses, apgd1(losses, lam=lam, iterations=150,
                                         mu=lam * mu / (lam - mu)).local, lam,
                           objective_value(losses, "fedprox", wg, W_star, lam))
        k = np.arange(gap.size)
        live = gap > 1e-10 * gap[0]          # above the rounding floor of F - F*
        for key, q in (("printed", 1 - np.sqrt(1 / x)), ("corrected", 1 - np.sqrt(1 / (x + 1)))):
            worst[key].append(float(np.max(gap[live][1:] / (gap[0] * q ** k[live][1:])) / 8))
    worst = {key: np.array(v) for key, v in worst.items()}
    inst = quadratic_instance(m=20, d=20, L=1.0, mu=mu, seed=seed)
    rel = np.array(cfg.pick([1e-6, 1e-3, 1.0, 10.0, 100.0],
                            [1e-6, 1e-4, 1e-2, 1.0, 10.0, 100.0]))
    runs = []
    for x in rel:
        tr = apgd1(inst, lam=x * mu, iterations=cfg.pick(400, 1500))
        runs.append(float(rounds_to_accuracy(tr, exact_solution(tr, inst), 1e4)))
    runs = np.array(runs)
    band = runs / ((1 + np.sqrt(rel)) * np.log(1e4))
    up = rel >= 1.0
    slope = float(np.polyfit(np.log(rel[up]), np.log(runs[up]), 1)[0])
    e = stated(0.5, "exponent")                       # the corrected order's exponent
    attained = bool(np.all(runs >= 1) and band.max() <= 1 and abs(slope - e) <= 0.25
                    and worst["corrected"].max() <= 1)
    return judge_erratum(grows and bool(np.all(factor < 0)) and worst["printed"][0] > 1,
                         attained,
                         "any method needs >= 0.9 expected rounds at eps = r/10 where the "
                         "printed sqrt(lam/mu) log 1/eps is " + ", ".join(
                             f"{v:.3g}" for v in printed) + " (lam/mu = " + ", ".join(
                             f"{x:.0e}" for x in deltas) + "); Thm 4.2's factor 8 (1 - "
                         f"sqrt(mu/lam)) at k = 1 is {factor[0]:.3g} to {factor[-1]:.3g} "
                         "below lam = mu (the bound would put F(x^1) below F*); just above "
                         "it, exact-prox IAPGD's F(x^k) - F* over Thm 4.2's bound at lam/mu = "
                         + ", ".join(f"{x:g}: {v:.3g}" for x, v in zip(near, worst["printed"]))
                         + ", over 8 (1 - sqrt(mu/(lam + mu)))^k (F(x^0) - F*) at most "
                         f"{worst['corrected'].max():.3g}; APGD1, "
                         "quadratic m=20 d=20 L=1 mu=0.01, rounds to shrink ||x - x*|| 1e4-fold"
                         " at lam/mu = " + ", ".join(f"{x:g}: {n:.0f}" for x, n in
                                                     zip(rel, runs))
                         + f", rounds / ((1 + sqrt(lam/mu)) log 1e4) in [{band.min():.3g}, "
                           f"{band.max():.3g}], exponent above lam = mu {slope:.2f}",
                         {"lam_over_mu": deltas, "zero_round_error": r, "printed": printed,
                          "rounds_lower": rounds_low, "thm42_factor": factor,
                          "apgd1_lam_over_mu": rel, "apgd1_rounds": runs, "apgd1_band": band,
                          "apgd1_exponent": slope, "thm42_lam_over_mu": near,
                          "thm42_printed_ratio": worst["printed"],
                          "thm42_corrected_ratio": worst["corrected"]},
                         "O((1 + sqrt(lam/mu)) log 1/eps) communications for APGD1 (its (6) has "
                         "condition number (lam + mu)/mu), the same where lam >= mu, where the "
                         "optimality is claimed; Thm 4.2's rate 8 (1 - sqrt(mu/(lam + mu)))^k, "
                         "the rate of (6)'s condition number (lam + mu)/mu: the printed 8 (1 - "
                         "sqrt(mu/lam))^k is negative below lam = mu and too fast up to lam = "
                         "(3 + sqrt(5))/2 mu = 2.618 mu (001.thm42.outer-rate), and the two agree "
                         "for lam >> mu",
                         level="erratum-harmless",
                         transcription=("depends", "the PDF must show sqrt(lam/mu), with no '1 "
                                        "+' and no '+ mu' under the root, in Sec. 4.1's order, "
                                        "and no hypothesis lam >= mu in Thm 4.2; the extraction "
                                        "keeps '+' inside Thm 4.2's other radicals (sqrt((L + "
                                        "lam)/(mu + lam))), so a lost '1 +' is unlikely, but "
                                        "Algorithms 1-2 and their propositions are not in the "
                                        "text and may restrict lam >= mu"))
