"""Paper 001 (Hanzely, Hanzely, Horvath, Richtarik, *Lower bounds and optimal algorithms for
personalized federated learning*): claims and their checks. File ``001_352374a3e1e3397e.txt``.

Evidence routes (Theorem 3.1 is in ``paper_checks.p001_thm31``): the APGD1/APGD2 complexities of
Sec. 4.1 against round counts of ``montecarlo.experiments.algorithms.apgd1`` and ``apgd2`` on
the quadratic instances of Fig. 2; the stated optimality conditions against the complexity
formulas of ``riskcalc.minimax.hanzely`` and ``hanzely_upper``; Thm 4.2's rate against
exact-prox IAPGD (= APGD1 with Alg. 1's momentum) and its local count against the AGD schedule
summed term by term; Thm 4.4 against the L-Katyusha derivation (sympy). IAPGD with its inexact
inner loops (AGD, Katyusha) runs in ``paper_checks.p001_iapgd``, which also holds the text after
Thm 4.4 on AL2SGD+'s local optimality (moved there to keep this file under 400 lines, in the same
catalogue order); AL2SGD+ (Alg. 4 and Prop. E.4
are in the appendix, not in the text) is not run: what needs it is stated as not checked.
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.experiments.algorithms import apgd1, apgd2
from montecarlo.experiments.problems import quadratic_instance
from montecarlo.experiments.metrics import exact_solution, rounds_to_accuracy
from montecarlo.experiments.objectives import minimize, objective_value
from montecarlo.experiments.rates import aligned_quadratic
from montecarlo.runner.seeding import replicate_rng
from paper_checks.core import claim, judge, judge_erratum, stated
from riskcalc import minimax


def _rounds(cfg, seed):
    mu = cfg.pick(1e-2, 1e-3)
    inst = quadratic_instance(m=20, d=20, L=1.0, mu=mu, seed=seed)
    lams = np.array([1e-2, 1e-1, 10.0, 100.0])
    out = {"apgd1": [], "apgd2": []}
    for lam in lams:
        for name, algo in (("apgd1", apgd1), ("apgd2", apgd2)):
            # Quick: 1200 iterations, 1.5 times the most any needs (APGD1 at lam = 100: 788);
            # deterministic runs, the same rounds under any cap above them (a miss counts inf).
            tr = algo(inst, lam=lam, iterations=cfg.pick(1200, 4000))
            out[name].append(float(rounds_to_accuracy(tr, exact_solution(tr, inst), 1e4)))
    return mu, lams, {k: np.array(v) for k, v in out.items()}


@claim("001.fig2.apgd1-vs-apgd2", location="Sec. 4.1, Table 1, Sec. 5 (Fig. 2)",
       kind="algorithmic convergence",
       statement="APGD2 needs O(sqrt(L/mu) log 1/eps) rounds, not influenced by lam; APGD1 needs "
                 "O(sqrt(lam/mu) log 1/eps), growing like sqrt(lam); APGD1 is preferable for "
                 "lam <= L and APGD2 for lam > L.",
       mutants=('exponent',))
def fig2(cfg, seed):
    mu, lams, r = _rounds(cfg, seed)
    slope = float(np.polyfit(np.log(lams[lams > 1.0]), np.log(r["apgd1"][lams > 1.0]), 1)[0])
    budget2 = float(minimax.apgd_complexity(1.0, mu, 1.0, 1e-8)["apgd2"])  # ||.||^2 down 1e8
    spread2 = float(r["apgd2"].max() / r["apgd2"].min())
    order = bool(np.all((r["apgd1"] < r["apgd2"]) == (lams < 1.0)))
    e = stated(0.5, "exponent")                    # APGD1's stated exponent in lam
    # APGD2's exponent in 1/mu, measured over one decade of mu against minimax's formula's:
    # the budget alone (an upper bound) accepted L/mu for sqrt(L/mu) (fuzz40 paper F2).
    # Measured 0.36 (quick, mu 1e-2 -> 1e-3) and 0.32 (full, 1e-3 -> 1e-4), the formula 0.5.
    inst = quadratic_instance(m=20, d=20, L=1.0, mu=mu / 10, seed=seed)
    tr = apgd2(inst, lam=10.0, iterations=cfg.pick(1200, 4000))
    slow = float(rounds_to_accuracy(tr, exact_solution(tr, inst), 1e4))
    slope2 = float(np.log10(slow / r["apgd2"][lams == 10.0][0]))
    e2 = float(np.log10(minimax.apgd_complexity(1.0, mu / 10, 1.0, 1e-8)["apgd2"] / budget2))
    ok = (e - 0.2 <= slope <= e + 0.25 and np.all(r["apgd2"] <= budget2) and spread2 < 4
          and order and abs(slope2 - e2) <= 0.25)
    return judge(ok, f"quadratic m=20 d=20 L=1 mu={mu:g}, rounds to shrink ||x - x*|| 1e4-fold at "
                     "lam = " + ", ".join(f"{l:g}: APGD1 {a:.0f} / APGD2 {b:.0f}" for l, a, b in
                                         zip(lams, r["apgd1"], r["apgd2"]))
                 + f"; APGD1 exponent in lam (lam > L) {slope:.2f}; APGD2 within x{spread2:.2f} and "
                   f"below sqrt(L/mu) log(1e8) = {budget2:.0f}; APGD2 exponent in 1/mu "
                   f"{slope2:.2f} (formula {e2:.2f})",
                 {"mu": mu, "lam": lams, "rounds": r, "apgd1_slope": slope,
                  "apgd2_budget": budget2, "apgd2_slope_mu": slope2})


@claim("001.thm43.katyusha-optimality", location="Thm 4.3, text after it", kind="inequality",
       statement="IAPGD+Katyusha's local (summand-gradient) complexity m sqrt(lam/mu) + sqrt(m "
                 "L~/mu) is optimal (matches m + sqrt(m L~/mu), up to logs) if sqrt(m) lam = O(L~) "
                 "(the extracted text leaves the radical's extent open: sqrt(m) lam or "
                 "sqrt(m lam)).",
       mutants=('exponent',))
def thm43(cfg, seed):
    # The summand lower bound is m + sqrt(m L~/mu) (Sec. 3.2): a gap needs m sqrt(lam/mu) to
    # exceed both terms, i.e. a small mu. Both readings of the condition, each on its boundary,
    # at L~ = 1e-2, 1, 1e2 with L~/mu = 1e8 fixed (the complexities depend on L~/mu and lam/mu
    # only, so a condition that is right must give the same verdict at every L~):
    # (a) sqrt(m) lam = L~: lam/mu = (L~/mu)/sqrt(m), the gap grows like m^(1/4) at every L~;
    # (b) sqrt(m lam) = L~: lam = L~^2/m, a condition that is not scale-invariant: the gap
    #     is about 1 + sqrt(L~), unbounded as L~ grows at fixed L~/mu.
    # L~/mu = 1e8 keeps every point inside Thm 4.3's lam >= mu (lam/mu = L~ kappa/m >= 1 in
    # (b)); at 1e6, (b) at L~ = 1e-2, m = 1e6 was lam/mu = 1e-2, now refused.
    mm = np.array([1e2, 1e4, 1e6])
    kappa = 1e8
    rows = {}
    for lt in (1e-2, 1.0, 1e2):
        mu = lt / kappa
        lower = mm + np.sqrt(mm * lt / mu)
        # corrected: lam = L~ m^(e - 2) with the stated e = 1, i.e. m lam = L~ (the seam)
        readings = {"a": lt / np.sqrt(mm), "b": lt ** 2 / mm,
                    "corrected": lt * mm ** (stated(1.0, "exponent") - 2.0)}
        for reading, lam in readings.items():
            local = minimax.iapgd_katyusha_complexity(lt, mu, lam, mm, 0.5)["local_order"]
            rows[reading, lt] = local / lower
    a = np.array([rows["a", lt] for lt in (1e-2, 1.0, 1e2)])
    b = np.array([rows["b", lt] for lt in (1e-2, 1.0, 1e2)])
    ok = np.array([rows["corrected", lt] for lt in (1e-2, 1.0, 1e2)])
    a_rejected = bool(np.all(a[:, -1] > 3 * a[:, 0]))         # grows with m at every L~
    b_rejected = bool(b[-1].max() > 5 and b[-1].min() > 2 * b[0].max())   # grows with L~
    return judge_erratum(a_rejected and b_rejected, ok.max() <= 2.0,
                         "L~/mu = 1e8, m = 1e2, 1e4, 1e6: local complexity / (m + "
                         "sqrt(m L~/mu)) "
                         "on the boundary of (a) sqrt(m) lam = L~: " + "; ".join(
                             f"L~={lt:g}: " + ", ".join(f"{x:.2f}" for x in rows["a", lt])
                             for lt in (1e-2, 1.0, 1e2))
                         + " (grows like m^(1/4)); of (b) sqrt(m lam) = L~: " + "; ".join(
                             f"L~={lt:g}: " + ", ".join(f"{x:.2f}" for x in rows["b", lt])
                             for lt in (1e-2, 1.0, 1e2))
                         + " (same problem up to scale, verdict changes with L~); of m lam = L~: "
                         f"at most {ok.max():.2f}",
                         {"m": mm, "L_tilde_over_mu": kappa,
                          "ratio": {f"{r},{lt:g}": v for (r, lt), v in rows.items()}},
                         "optimal when m lam <= L~ (as Table 1 and Sec. 2 state): then m "
                         "sqrt(lam/mu) <= sqrt(m L~/mu); under sqrt(m) lam = L~ the gap grows "
                         "like m^(1/4), and sqrt(m lam) = O(L~) is not invariant to rescaling "
                         "the objective (gap about 1 + sqrt(L~) at fixed L~/mu)",
                         level="erratum-harmless",
                         transcription=("depends", "the PDF must show no radical over L~: the "
                                        "text reads 'sqrt mλ = O(L~)' with the radical's extent "
                                        "lost, and sqrt(m lam) = O(sqrt(L~)) would be exactly "
                                        "the right condition m lam <= L~; both readings without "
                                        "a radical over L~ are rejected at L~ != 1 (Table 1 and "
                                        "Sec. 2 print m lam <= L~, so no conclusion changes)"))


def _fedprox_gap(losses, W, lam, f_star):
    """``F(x) - F*`` of paper 001 eq. (2) (``F = (1/n) sum f_i(x_i) + lam psi(x)``, with
    ``psi = 1/(2n) sum ||x_i - xbar||^2``): the FedProx objective at ``w_g = xbar``."""
    return objective_value(losses, "fedprox", W.mean(-2), W, lam) - f_star


@claim("001.thm42.outer-rate", location="Thm 4.2 (IAPGD, Alg. 1), exact local prox",
       kind="algorithmic convergence",
       statement="IAPGD (Alg. 1, momentum (sqrt(lam) - sqrt(mu))/(sqrt(lam) + sqrt(mu))) has "
                 "F(x^k) - F* <= 8 (1 - sqrt(mu/lam))^k (F(x^0) - F*); checked in the limit of "
                 "exact local solves (eps_k = 0 in eq. 7; the inexact AGD inner loop is "
                 "001.thm42.inexact-agd) from lam = 2.7 mu: below lam = (3 + sqrt(5))/2 mu = "
                 "2.618 mu the printed rate fails (001.sec41.below-mu).",
       mutants=('upper',))
def thm42_rate(cfg, seed):
    # With exact prox steps Alg. 1 is APGD1 (montecarlo.experiments.algorithms.apgd1, eq. 6 with Nesterov
    # momentum); apgd1's momentum (sqrt(kappa) - 1)/(sqrt(kappa) + 1) uses kappa = (lam + mu')/mu',
    # so mu' = lam mu/(lam - mu) gives Alg. 1's kappa = lam/mu exactly. Every client has the
    # Hessian diag(geomspace(mu, L, d)) (montecarlo.experiments.rates.aligned_quadratic): the consensus
    # direction has curvature exactly mu, as in the worst case.
    L, mu = 1.0, cfg.pick(1e-2, 1e-3)
    losses = aligned_quadratic(m=10, d=20, L=L, mu=mu, seed=seed)
    # From 2.7 mu. Route 2 (p001_iapgd.consensus_ratio, mpmath): the spectral radius squared of
    # Alg. 1 on the consensus direction meets 1 - sqrt(mu/lam) at lam/mu = (3 + sqrt(5))/2: the
    # gap outruns the bound below it (x654 at 2.6 mu in 2000 rounds), the scope's edge.
    from paper_checks.p001_iapgd import consensus_ratio

    edge = {t: consensus_ratio(t, 2000) for t in (2.6, 2.62, 2.7, 3.0)}
    rows, ok = [], all(v <= stated(8.0, "upper") for t, v in edge.items() if t > 2.618)
    ok &= edge[2.6] > 8
    for lam in (2.7 * mu, 0.1, 1.0, 10.0):
        wg, W_star = minimize(losses, "fedprox", lam)
        f_star = objective_value(losses, "fedprox", wg, W_star, lam)
        tr = apgd1(losses, lam=lam, iterations=cfg.pick(600, 3000), mu=lam * mu / (lam - mu))
        gap = _fedprox_gap(losses, tr.local, lam, f_star)
        q = 1 - np.sqrt(mu / lam)
        k = np.arange(gap.size)
        live = gap > 1e-10 * gap[0]          # above the rounding floor of F - F*
        ratio = gap[live] / (gap[0] * q ** k[live])
        observed = float((gap[live][-1] / gap[0]) ** (1 / k[live][-1]))
        ok &= bool(ratio.max() <= stated(8.0, "upper"))
        rows.append({"lam": lam, "bound_rate": q, "observed_rate": observed,
                     "max_ratio": float(ratio[1:].max()), "rounds_checked": int(live.sum())})
    return judge(ok, f"aligned quadratic m=10 d=20 L=1 mu={mu:g}, exact-prox IAPGD, max_k "
                 "(F(x^k) - F*)/((1 - sqrt(mu/lam))^k (F(x^0) - F*)) <= 8: " + "; ".join(
                     f"lam={x['lam']:g}: {x['max_ratio']:.3f} (rate {x['observed_rate']:.4f} vs "
                     f"bound {x['bound_rate']:.4f})" for x in rows)
                 + "; mpmath, consensus direction (curvature mu) over 2000 rounds: " + ", ".join(
                     f"lam={t:g} mu: {v:.3g}" for t, v in edge.items())
                 + " (the printed rate fails below lam = (3 + sqrt(5))/2 mu = 2.618 mu)",
                 {"points": rows, "consensus_max_ratio": edge})


def _agd_schedule_sum(L, mu, lam, n, rounds):
    """``sum_{k < K} ceil(T_k)`` for Thm 4.2's AGD schedule, summed term by term (an
    independent route from the closed form of ``minimax.iapgd_agd_complexity``)."""
    k = np.arange(rounds)
    t_k = (np.sqrt((L + lam) / (mu + lam))
           * np.log(1152 * L * lam * n ** 2 * (2 * np.sqrt(lam / mu) + 1) ** 2 / mu ** 2)
           + 4 * np.sqrt(mu * (L + lam) / (lam * (mu + lam))) * k)
    return float(np.sum(np.ceil(t_k)))


def thm42_grid(cfg):
    """``(L, lam, n, eps)`` of ``001.thm42.complexities`` (``mu = 1``). Its accuracies reach
    1e-60: over [1e-12, 1e-2] log(1/eps) moves only x6, inside the check's x10 band, so a stated
    communication order missing its log(1/eps) passed (fuzz38 paper F4); to 1e-60 it moves x30."""
    return list(itertools.product([1.0, 1e2, 1e4, 1e6], [2.0, 1e2, 1e4, 1e6],
                                  cfg.pick([1, 1e4], [1, 1e2, 1e4]),
                                  cfg.pick([1e-2, 1e-12, 1e-60], [1e-2, 1e-6, 1e-12, 1e-60])))


@claim("001.thm42.complexities", location="Thm 4.2 (IAPGD + AGD)", kind="rate up to constants",
       statement="With AGD run for T_k = sqrt((L+lam)/(mu+lam)) log(1152 L lam n^2 (2 sqrt(lam/mu)"
                 " + 1)^2/mu^2) + 4 sqrt(mu(L+lam)/(lam(mu+lam))) k steps at round k, IAPGD + AGD "
                 "needs O(sqrt(lam/mu) log 1/eps) communications and O(sqrt((L+lam)/mu) log(1/eps)"
                 " (log(L lam n/mu) + log 1/eps)) local gradients.",
       mutants=('exponent',))
def thm42_complexities(cfg, seed):
    # The rounds K are the fewest with 8 (1 - sqrt(mu/lam))^K <= eps (the theorem's rate); the
    # local count sums ceil(T_k) over them. A stated order that missed a factor (sqrt(lam/mu),
    # a log) would leave the x10 band over a grid spanning 6 decades of L, lam and 58 of eps.
    mu = 1.0
    grid = thm42_grid(cfg)
    comm, local, closed = [], [], []
    for L, lam, n, eps in grid:
        c = minimax.iapgd_agd_complexity(L, mu, lam, n, eps, printed=True)
        total = _agd_schedule_sum(L, mu, lam, n, c["rounds"])
        log_inv = np.log(1 / eps)
        comm.append(c["rounds"] / ((lam / mu) ** stated(0.5, "exponent") * log_inv))
        local.append(total / (np.sqrt((L + lam) / mu) * log_inv
                              * (np.log(L * lam * n / mu) + log_inv)))
        # Rounding each T_k up adds at most one step per round to the closed form.
        closed.append(0.0 <= total - c["local_steps"] <= c["rounds"])
    comm, local = np.array(comm), np.array(local)
    ok = comm.max() / comm.min() < 10 and local.max() / local.min() < 10 and all(closed)
    return judge(ok, f"{len(grid)} points, L/mu in [1, 1e6], lam/mu in [2, 1e6], n, eps in "
                     f"[1e-60, 1e-2]: rounds / (sqrt(lam/mu) log 1/eps) in [{comm.min():.3g}, "
                     f"{comm.max():.3g}]; sum ceil(T_k) / (sqrt((L+lam)/mu) log(1/eps) (log(L lam"
                     f" n/mu) + log 1/eps)) in [{local.min():.3g}, {local.max():.3g}]; closed form "
                     f"within K of the sum at {sum(closed)}/{len(grid)} points",
                 {"grid": [list(g) for g in grid], "rounds_ratio": comm,
                  "local_ratio": local, "closed_form_ok": closed})


@claim("001.table1.iapgd-agd-optimality", location="Table 1 (row IAPGD + AGD), text after Thm 4.2",
       kind="rate up to constants",
       statement="IAPGD + AGD's communication (sqrt(lam/mu) log 1/eps) and local gradient "
                 "complexity (O~(sqrt((L+lam)/mu))) are optimal if lam <= L: they match Thm 3.1's "
                 "sqrt(min{L, lam}/mu) log 1/eps and Sec. 3.2's sqrt(L/mu) log 1/eps up to "
                 "constants and logs.",
       mutants=('exponent',))
def table1_iapgd(cfg, seed):
    # Upper counts from Thm 4.2's rate and schedule (as in 001.thm42.complexities), lower ones
    # from Thm 3.1 (fewest rounds, hypotheses lam > 100 mu, L > 101 mu) and Sec. 3.2.
    L, mu, n, eps = 1e4, 1.0, 10, 1e-6
    lams = np.array([2e2, 1e3, 1e4, 1e5, 1e6, 1e8])
    c = minimax.iapgd_agd_complexity(L, mu, lams, n, eps, printed=True)
    comm = (c["rounds"] / minimax.communication_lower_bound(L, mu, lams, eps)
            * (lams / mu) ** stated(0.0, "exponent"))          # the stated match in lam
    def local_ratio(lam, nn, big_l=L):
        k = minimax.iapgd_agd_complexity(big_l, mu, lam, nn, eps, printed=True)["rounds"]
        return (np.array([_agd_schedule_sum(big_l, mu, x, nn, r) for x, r in zip(lam, k)])
                / minimax.gradient_oracle_lower_bound(big_l, mu, eps)
                / (np.log(big_l * lam * nn / mu) + np.log(1 / eps)))  # the allowed log factor

    local = local_ratio(lams, n)
    small = lams <= L
    # n = 1e40 too: at one n the log factor hardly moved, and a match without it (O(sqrt(L/mu)
    # log 1/eps) local gradients) passed as well (fuzz38 paper F9); there it is x4 off. And
    # L = 1e6: at one L/mu a lower bound L/mu log 1/eps (the root dropped) only moved the
    # ratio by a constant, and passed (fuzz40 paper F8); measured 2.14-2.26 there.
    local_n = np.concatenate([local[small], local_ratio(lams[small], 1e40),
                              local_ratio(lams[small], n, 1e6)])
    bounded = (comm[small].max() / comm[small].min() < 3
               and local_n.max() / local_n.min() < 3)
    # Without the condition the gap grows like sqrt(lam/L): the qualifier is necessary (the
    # sentence after Thm 4.2, "thus optimal", omits it; Table 1 has it).
    grows = comm[-1] / comm[small][-1] > 30 and local[-1] / local[small][-1] > 30
    return judge(bounded and grows, "L=1e4 mu=1 n=10 eps=1e-6, rounds / Thm 3.1 bound at lam = "
                 + ", ".join(f"{l:.0e}: {x:.3g}" for l, x in zip(lams, comm))
                 + "; local gradients / (sqrt(L/mu) log(1/eps) x log factor): "
                 + ", ".join(f"{x:.3g}" for x in local)
                 + " -- flat for lam <= L (at n = 1e40: "
                 + ", ".join(f"{x:.3g}" for x in local_n[small.sum():2 * small.sum()])
                 + "; at L = 1e6: "
                 + ", ".join(f"{x:.3g}" for x in local_n[2 * small.sum():])
                 + "), growing like sqrt(lam/L) beyond",
                 {"lam": lams, "rounds_over_lower": comm, "local_over_lower": local,
                  "local_over_lower_n1e40": local_n[small.sum():2 * small.sum()],
                  "local_over_lower_L1e6": local_n[2 * small.sum():]})


def _l_katyusha_counts(L_tilde, mu, lam, m, rho):
    """Expected communications and local summand gradients per ``log(1/eps)`` of AL2SGD+,
    reconstructed from Sec. 4.3 (Alg. 4 and Prop. E.4 are in the appendix, absent from the
    extracted text): L-Katyusha (Qian, Qu, Richtarik, arXiv:1906.01481, arbitrary sampling) needs
    ``1/rho + sqrt(calL/(rho mu))`` iterations per ``log(1/eps)``, where ``rho`` is the
    probability of refreshing the reference point and ``calL = max(lam/p, L_tilde/(1-p))`` the
    expected smoothness of the estimator that takes ``lam grad psi / p`` with probability ``p`` and
    one summand gradient per client ``/(1-p)`` otherwise (L2SGD+'s sampling). An iteration
    communicates when an averaging step follows a local one (probability ``p(1-p)``) or when
    the reference gradient is refreshed (``rho``, which also costs ``m`` summand gradients); a
    local step costs one summand gradient (probability ``1-p``)."""
    p = lam / (lam + L_tilde)
    calL = np.maximum(lam / p, L_tilde / (1 - p))
    iterations = 1 / rho + np.sqrt(calL / (rho * mu))
    return (p * (1 - p) + rho) * iterations, ((1 - p) + rho * m) * iterations


@claim("001.thm44.al2sgd-complexities", location="Thm 4.4 (AL2SGD+), Sec. 4.3, Table 2 (*)",
       kind="rate up to constants",
       statement="AL2SGD+ (L-Katyusha with L2SGD+'s non-uniform sampling, p = lam/(lam + L~)) "
                 "needs O(sqrt(min{L~, lam}/mu) log 1/eps) communications with rho = p(1 - p), "
                 "and O((m + sqrt(m (L~ + lam)/mu)) log 1/eps) summand gradients with rho = 1/m; "
                 "the two are not attained by one choice of rho. Checked against the "
                 "L-Katyusha derivation (Alg. 4 and Prop. E.4 are not in the text; AL2SGD+ is "
                 "not implemented, so its own convergence is not checkable here).",
       mutants=('exponent',))
def thm44_derivation(cfg, seed):
    import sympy as sp  # only this check needs it; keeps the catalogue's import light

    lam, lt = sp.symbols("lam L_tilde", positive=True)
    p = lam / (lam + lt)
    # The sampling p = lam/(lam + L~) equalizes both branches of calL at lam + L~, and
    # p(1-p) calL = lam L~/(lam + L~), which lies in [min/2, min] of {lam, L~}. Rational
    # functions: cancel is exact and gives 0 iff one is identically 0 (simplify's first call
    # cost 0.2 s more for the same answers).
    identities = [sp.cancel(lam / p - (lam + lt)), sp.cancel(lt / (1 - p) - (lam + lt)),
                  sp.cancel(p * (1 - p) * (lam + lt) - lam * lt / (lam + lt))]
    exact = all(e == 0 for e in identities)
    mu = 1.0
    pts = list(itertools.product([1.0, 1e2, 1e4, 1e6], [1.0, 1e2, 1e4, 1e6],
                                 cfg.pick([10, 1e4], [10, 1e3, 1e5])))
    L_t, lm, m = (np.array(v) for v in zip(*pts))
    pq = lm / (lm + L_t) * (L_t / (lm + L_t))
    comm_c, local_c = _l_katyusha_counts(L_t, mu, lm, m, pq)          # rho = p(1-p)
    comm_m, local_m = _l_katyusha_counts(L_t, mu, lm, m, 1 / m)       # rho = 1/m
    comm_rate = (np.minimum(L_t, lm) / mu) ** stated(0.5, "exponent")
    local_rate = m + np.sqrt(m * (L_t + lm) / mu)
    r_comm, r_local = comm_c / comm_rate, local_m / local_rate
    ok = exact and r_comm.max() / r_comm.min() < 5 and r_local.max() / r_local.min() < 5
    # "Not at the same time": the other choice of rho is off by a factor growing with m.
    cross_local, cross_comm = float((local_c / local_rate).max()), float((comm_m / comm_rate).max())
    ok &= min(cross_local, cross_comm) > 10
    return judge(ok, f"sympy: calL = lam + L~ on both branches and p(1-p) calL = lam L~/(lam + L~)"
                     f" ({'exact' if exact else 'FAILED'}); {len(pts)} points L~/mu, lam/mu in "
                     f"[1, 1e6], m in [10, {max(m):.0e}]: rho = p(1-p) comms / sqrt(min/mu) in "
                     f"[{r_comm.min():.3g}, {r_comm.max():.3g}]; rho = 1/m summand gradients / "
                     f"(m + sqrt(m(L~+lam)/mu)) in [{r_local.min():.3g}, {r_local.max():.3g}]; "
                     f"the swapped choices are off by up to x{cross_local:.3g} (local) and "
                     f"x{cross_comm:.3g} (comms)",
                 {"identities": [str(e) for e in identities], "points": [list(x) for x in pts],
                  "comm_ratio": r_comm, "local_ratio": r_local,
                  "cross_local_max": cross_local, "cross_comm_max": cross_comm})


@claim("001.thm44.communication-optimality", location="Thm 4.4 (text after it), Sec. 2, Table 2",
       kind="rate up to constants",
       statement="AL2SGD+'s communication complexity sqrt(min{L~, lam}/mu) log 1/eps is optimal "
                 "regardless of the relative size of L~ and lam.",
       mutants=('exponent',))
def thm44_comm(cfg, seed):
    # Thm 3.1's bound is sqrt(min{L, lam}/mu) with L the smoothness of f_i, and footnote 11
    # allows L~ >= L >= L~/m. APGD2 (lam >= L) and IAPGD+Katyusha (lam <= L) attain it under
    # the same summand oracle (Table 2), so AL2SGD+ is optimal only if min{L~, lam} = O(L).
    # How large L~/L is in practice: least squares on Gaussian features (L~ = max ||x_j||^2,
    # L = lambda_max(X'X/n)).
    rng = replicate_rng(seed, 0)
    d, n = cfg.pick((20, 200), (50, 2000))
    X = rng.standard_normal((n, d))
    ratio_data = float(np.max(np.sum(X * X, 1)) / np.linalg.eigvalsh(X.T @ X / n)[-1])
    L, mu, eps = 1.0, 1e-4, 1e-6
    lower = float(minimax.communication_lower_bound(L, mu, L, eps))
    ratios = np.array([1.0, ratio_data, 1e2, 1e4])
    m = 1e4                                     # footnote 11: L~/L <= m (rounds ignore m)
    gap = [float(minimax.al2sgd_complexity(r * L, mu, r * L, m, eps)["rounds_order"]) / lower
           for r in ratios]
    base = float(minimax.al2sgd_complexity(L, mu, L, m, eps)["rounds_order"]) / lower
    # Corrected form: min{L~, lam} <= L (here lam = L with L~ up to 1e4 L, and lam < L).
    fixed = [float(minimax.al2sgd_complexity(r * L, mu, lm, m, eps)["rounds_order"])
             / float(minimax.communication_lower_bound(L, mu, lm, eps))
             * r ** stated(0.0, "exponent")                # corrected: no power of L~/L
             for r in ratios for lm in (L, 0.1 * L)]
    printed_rejected = gap[-1] / base > 30               # grows like sqrt(L~/L), unbounded
    corrected_ok = max(fixed) / min(fixed) < 5
    # Verdict level (paper_checks.core): optimal in the finite-sum class parametrized by L~
    # (Sec. 3.2's local-oracle bounds, worst case L = L~); only against Thm 3.1's L-class bound
    # is it off by sqrt(L~/L).
    return judge_erratum(printed_rejected, corrected_ok,
                         "L=1 mu=1e-4 eps=1e-6, lam = L~: AL2SGD+ rounds / Thm 3.1 bound at L~/L"
                         " = " + ", ".join(f"{r:.3g}: {g:.3g}" for r, g in zip(ratios, gap))
                         + f" (L~/L = {ratio_data:.3g} for least squares on {n} Gaussian samples "
                           f"in d={d}); with min(L~, lam) <= L the ratio stays in "
                           f"[{min(fixed):.3g}, {max(fixed):.3g}]",
                         {"L_tilde_over_L": ratios, "ratio_lam_eq_Ltilde": gap,
                          "ratio_min_le_L": fixed, "data_L_tilde_over_L": ratio_data},
                         "optimal when min{L~, lam} = O(L) (e.g. lam <= L, or L~ = O(L)); for "
                         "lam >= L~ > L it exceeds Thm 3.1's sqrt(min{L, lam}/mu) log 1/eps, "
                         "which APGD2 attains with the same summand oracle, by sqrt(L~/L) (up to "
                         "sqrt(m))",
        level="loose")
