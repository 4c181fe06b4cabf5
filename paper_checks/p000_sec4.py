"""Paper 000, Sec. 4: FedProx's bounds (Thms 11-12, eqs. 28-30) simulated at the proofs' lambda,
and the discussion after eq. (30).

File ``000_7ff2ed2592df3b60.txt`` (002 is the same paper, HTML text); shared helpers:
``paper_checks.p000_common``.
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments import rates
from paper_checks.core import claim, judge, judge_erratum, stated
from paper_checks.evidence import fmt
from paper_checks.p000_common import _D, _cells, _fmt_fit, _ints, _mc_exponents
from riskcalc import minimax


def _linearized(n, N, R, mu, lam):
    """Asymptotic IER of the FedProx minimizer at penalty ``lam``, the bands' centre.

    Linearizing client i's FedProx model around the truth (population Hessian mu I):
    w_i = a w_hat_i + (1 - a) w_g with a = mu/(mu + lam), w_g the average of the local
    MLEs w_hat_i (errors of covariance I/(mu n_i)), so
    E[IER_i] ~ (a^2 d/n + (1 - a^2) d/N + (1 - a)^2 mu R^2) / 2.
    """
    a = mu / (mu + lam)
    return 0.5 * (a ** 2 * _D / n + (1 - a ** 2) * _D / N + (1 - a) ** 2 * mu * R ** 2)


def _fedprox_linearized(g, thm):
    """``_linearized`` on the grid ``g`` at its proofs' lambda (mu from the grid)."""
    n, _, N, R = _cells(g)
    return _linearized(n, N, R, g["mu"], g[f"lam_thm{thm}"])


def _shape(n, m, N, R, thm):
    """d x eq. (30) (Thm 11) or (29) (Thm 12), paper 000, balanced clients."""
    if thm == 11:
        return _D * (np.minimum(m / N, R * np.sqrt(m / N)) + 1 / N)
    return _D * (np.minimum(R / np.sqrt(n), 1 / n) + np.sqrt(m) / N)


#: Clients and samples per client of ``_m_growth``: m = 4^k up to 4096, n_i = 200 to 12800.
_M_FAR, _N_FAR = 4 ** np.arange(1, 7), np.array([200, 800, 3200, 12800])


def _m_growth(thm, mu, shape=None):
    """The m exponent of K(m) = max over n_i and R of the linearized error / the bound's
    shape, fitted between m = 256 and 4096 (FedProx at the proof's lambda, R^2 n_i = 2^-21
    to 2^7): about 0 when the bound's constant does not grow with m.

    The simulated m = 4 and 16 are too few to see it: from 4 to 16 K rises about as m^0.34
    for the printed shape (the proofs' lam <= m mu/16 keeps FedProx near local training at
    small m) and as m^0.5-0.9 for a shape with R m/N for R sqrt(m/N); from 256 to 4096 the
    linearization, deterministic, gives 0.02 (Thm 11) and -0.06 (Thm 12) for the printed
    shapes, 0.42 and 0.39 for that mutant, whose K grows without bound."""
    from riskcalc.minimax import fedprox_proof_lambda

    shape = _shape if shape is None else shape
    top = []
    for m in _M_FAR:
        top.append(max(float(np.max(
            _linearized(n, n * m, R, mu, fedprox_proof_lambda(R, int(n), int(m), mu, theorem=thm))
            / shape(n, m, n * m, R, thm)))
            for n in _N_FAR for R in [np.sqrt(2.0 ** np.arange(-21, 7.5, 0.5) / n)]))
    return float(np.log(top[-1] / top[-3]) / np.log(_M_FAR[-1] / _M_FAR[-3]))


def _fedprox_bound(g, thm):
    """Error (AER for Thm 11, worst client's IER for Thm 12), d x eq. (30) / (29), and the
    regimes where the paper calls the bound minimax optimal, with its rate there."""
    n, m, N, R = _cells(g)
    if thm == 11:
        # The proof's events A and C (App. C.3): (30) is O(m/N), then O(1/N).
        return (g["fedprox_thm11_aer"].mean(-1), _shape(n, m, N, R, 11),
                {"A": (R ** 2 >= m / N, _D * m / N), "C": (R ** 2 <= 1 / (m * N), _D / N)})
    # Only R^2 >= m/N (rate 1/n_i) matches the lower bound (17) (discussion after (30)).
    return (g["fedprox_thm12_ier_worst"], _shape(n, m, N, R, 12),
            {"A": (R ** 2 >= m / N, _D / n)})


def _fedprox_check(cfg, seed, thm):
    """Simulate FedProx at the lambda of Thm ``thm``'s proof: the band over (n_i, m, R), the
    n_i exponent where the bound is tight."""
    g = rates.paper000_fedprox_grid(cfg.pick([200, 800], [200, 800, 1600]), [4, 16],
                                    2.0 ** np.arange(-11, 4, 2), theorems=(thm,), d=_D,
                                    reps=cfg.pick(6, 10), seed=seed, baselines=())
    # The exponent on n_i >= 160 d only: FedProx is near local training in both tight regimes,
    # and the local MLE's second-order excess (relative size ~ d/n_i) steepens the fitted
    # exponent below that (tests/test_rates_simulation.py). Two radii per tight regime.
    # Quick: 12 replicates (20 cost 1.7 of the claim's 3 CPU s): the exponents' 95% intervals
    # about +-0.2, so an exponent off by 0.25 is still rejected (+0.5: the mutant).
    gt = rates.paper000_fedprox_grid([800, 1600, 3200], cfg.pick([4], [4, 16]),
                                     2.0 ** np.array([-11, -9, 1, 3]), theorems=(thm,), d=_D,
                                     reps=cfg.pick(12, 24), seed=seed + 1, baselines=())
    n, m, N, R = _cells(g)
    err, shape, _ = _fedprox_bound(g, thm)
    t_err, t_shape, tight = _fedprox_bound(gt, thm)
    pred = _fedprox_linearized(g, thm) / shape
    t_pred = _fedprox_linearized(gt, thm) / t_shape
    c = min(float(pred.min()), float(t_pred.min())) / 2
    C = 2 * max(float(pred.max()), float(t_pred.max()))
    ratio, t_ratio = err / shape, t_err / t_shape
    fits = {}
    for name, (mask, rate) in tight.items():
        # The radii of one (n_i, m) cell share their data (common random numbers): average
        # them per replicate, so that each cell is one independent point with a Monte Carlo
        # error. The bounded factor a^2 that the radius still moves inside a regime is left
        # to the band. Client averages (AER) for Thm 12 too: the worst client's mean is
        # selected after the fact.
        rows = np.flatnonzero(mask.any(-1))
        reps = np.array([gt[f"fedprox_thm{thm}_aer"][i][mask[i]].mean(0) for i in rows])
        preds = {"n": gt["n"][rows], "m": gt["m"][rows]}
        if np.ptp(preds["m"]) == 0:
            del preds["m"]
        fits[name] = _mc_exponents(preds, reps)
        fits[name]["bound_exponents"] = {"n": -1.0, "m": 0.0 if name == "A" else -1.0}
        fits[name]["r_ratio"] = float(max(
            (t_err[i][mask[i]] / rate[i][mask[i]]).max()
            / (t_err[i][mask[i]] / rate[i][mask[i]]).min() for i in rows))
    e_n = stated(-1.0, "exponent")                  # the bound's exponent in n_i
    ok = all(x["ci"]["n"][0] <= e_n <= x["ci"]["n"][1] for x in fits.values())
    ok &= bool(np.all((ratio >= c) & (ratio <= C)) and np.all((t_ratio >= c) & (t_ratio <= C)))
    # The band divides the error and the prediction by the same shape, so it cannot see the
    # shape's m exponent (R m/N for R sqrt(m/N) was accepted): the bound's constant must not
    # grow with m, seen where the linearization (which the band pins to the simulation) is
    # taken to m = 4096; 0.2 lies halfway between the printed shapes and that mutant.
    growth = _m_growth(thm, float(np.median(g["mu"])))
    ok &= growth <= 0.2
    by_m = {int(mm): (float(ratio[m == mm].min()), float(ratio[m == mm].max()))
            for mm in np.unique(g["m"])}
    # Where the paper calls its bound loose: error / bound at the regime's smallest and largest
    # radius (mean over n_i), per m; a rate-sharp bound would keep it flat.
    loose = ~np.any([mask for mask, _ in _fedprox_bound(g, thm)[2].values()], axis=0)
    if thm == 12:
        loose &= R ** 2 >= 1 / N                               # (29)'s R/sqrt(n_i) branch
    ends = {}
    for mm in np.unique(g["m"]):
        rows = np.flatnonzero((g["m"] == mm) & (loose.sum(-1) >= 2))
        if rows.size:
            ends[int(mm)] = tuple(float(np.mean([ratio[i][loose[i]][j] for i in rows]))
                                  for j in (0, -1))
    # At the smallest radius (R^2 n_i = 2^-11, below every threshold), mean over n_i.
    smallest = {int(mm): float(ratio[g["m"] == mm][:, 0].mean()) for mm in np.unique(g["m"])}
    evidence = {"fits": fits, "ratio": ratio, "tight_grid_ratio": t_ratio, "band": (c, C),
                "ratio_by_m": by_m, "ratio_smallest_R": smallest,
                "loose_ends": ends, "m_growth": growth,
                "lam": g[f"lam_thm{thm}"], "n": g["n"], "m": g["m"], "R": g["R"],
                "errors": err, "linearized": pred * shape}
    return ok, evidence


def _fedprox_summary(ev, tight_rate):
    fits = "; ".join(f"{k}: {_fmt_fit(x, 'n')} on n_i in [800, 3200], error/rate moves "
                     f"x{x['r_ratio']:.2f} with R" for k, x in ev["fits"].items())
    by_m = ", ".join(f"m={k}: [{lo:.2f}, {hi:.2f}]" for k, (lo, hi) in ev["ratio_by_m"].items())
    ends = ", ".join(f"m={k}: {lo:.2f} -> {hi:.2f}" for k, (lo, hi) in ev["loose_ends"].items())
    low = ", ".join(f"m={k}: {v:.2f}" for k, v in ev["ratio_smallest_R"].items())
    return (f"d=5, n_i in {_ints(ev['n'])}, m in {_ints(ev['m'])}, R^2 n_i in [2^-11, 8], exact "
            f"FedProx at the proof's lambda ({fmt(ev['lam'].min(), 2)} to "
            f"{fmt(ev['lam'].max(), 2)}); where tight ({tight_rate}) {fits}; "
            f"error / (d x bound) by m {by_m}, band [{ev['band'][0]:.2f}, {ev['band'][1]:.2f}] "
            f"(linearized prediction / 2 to x 2); max over n_i, R of linearized / bound grows "
            f"as m^{ev['m_growth']:.2f} from m = 256 to 4096 (at most 0.2: a constant); "
            f"at R^2 n_i = 2^-11 {low}; in the loose "
            f"regime error / bound from its smallest to largest R: {ends}")


@claim("000.thm11.fedprox-aer", location="Thm 11, eqs. 28 and 30 (proof: App. C.3)",
       kind="rate up to constants",
       statement="For some lambda, FedProx with p_i = n_i/N (balanced n_i) has E[AER_p] <~ (mu + "
                 "beta ||l||_inf/mu) (min(m/N, R sqrt(m/N)) + 1/N) (eq. 30): O(m/N) when R^2 >~ "
                 "m/N and O(1/N) when R^2 <~ 1/(mN), both minimax optimal, and suboptimal in "
                 "between.",
       mutants=('exponent',))
def thm11(cfg, seed):
    ok, ev = _fedprox_check(cfg, seed, 11)
    return judge(ok, _fedprox_summary(ev, "m/N in A: R^2 >= m/N, 1/N in C: R^2 <= 1/(mN)")
                 + ". The proof's lam <= m mu/16 keeps FedProx near local training at these "
                   "m (a = mu/(mu + lam) >= 1/2): the 1/N regime holds with a constant ~ "
                   "m a^2/2 that first grows with m (a = 16/(16+m)), and in the middle regime "
                   "the error decays more slowly in R than R sqrt(m/N) (the ratio rises as R "
                   "falls) while staying within the band", ev)


@claim("000.thm12.fedprox-ier", location="Thm 12, eq. 29 (proof: App. C.4)",
       kind="rate up to constants",
       statement="For some lambda, FedProx with p_i ~ 1/m and balanced n_i has, for every client, "
                 "E[IER_i] <~ K (min(R/sqrt(n_i), 1/n_i) + sqrt(m)/N): O(1/n_i), optimal, when "
                 "R^2 >~ m/N; O(R/sqrt(n_i)) for 1/N <~ R^2 <~ m/N; O(sqrt(m)/N) below.",
       mutants=('exponent',))
def thm12(cfg, seed):
    ok, ev = _fedprox_check(cfg, seed, 12)
    return judge(ok, _fedprox_summary(ev, "1/n_i where R^2 >= m/N")
                 + ". Worst client's mean IER. The proof's lambda (c_B = mu/16, so that "
                   "p_max lam <= mu/16 for every m) stays below m mu/16: at R^2 <~ 1/N the ratio "
                   "to sqrt(m)/N grows with m over the simulated m (linearized: about "
                   "sqrt(m) a^2/2, a = 16/(16+sqrt(m)), peaking near 2 at m = 256), so the "
                   "bound holds with a constant, not tightly", ev)


@claim("000.eq30.fedprox-middle-regime", location="Sec. 4, discussion after eq. 30",
       kind="rate up to constants",
       statement="'If 1/(mN) <~ R^2 <~ m/N, then (30) becomes O(m/N), whereas the lower bound "
                 "reads Omega(R^2 + 1/N).'",
       mutants=('equality',))
def eq30(cfg, seed):
    # Evaluate eq. (30)'s rate min(m/N, R sqrt(m/N)) + 1/N across the middle regime and
    # compare with the printed O(m/N) and with R sqrt(m/N) + 1/N.
    m, N = 100, 1e4
    r2 = np.geomspace(1 / (m * N), m / N, 41)
    eq30 = np.minimum(m / N, np.sqrt(r2) * np.sqrt(m / N)) + 1 / N
    lib = minimax.fedprox_aer_bound(1.0, 1.0, 1.0, np.sqrt(r2), N, m) / 2.0  # (mu + b l/mu) = 2
    printed_ratio = float(np.max((m / N) / eq30))
    corrected = stated(np.sqrt(r2) * np.sqrt(m / N) + 1 / N, "equality")
    corr_ratio = float(np.max(np.abs(corrected / eq30 - 1)))
    ok_lib = bool(np.allclose(lib, eq30, rtol=1e-12))
    # Verdict level (paper_checks.core): O(m/N) is a valid upper bound on (30) in the middle
    # regime (R sqrt(m/N) <= m/N there), only not sharp.
    return judge_erratum(printed_ratio > 10, corr_ratio < 1e-12 and ok_lib,
                         f"m=100 N=1e4: over the middle regime, (m/N) / eq.(30) reaches "
                         f"{printed_ratio:.3g} (at R^2 = 1/(mN): eq. 30 = {eq30[0]:.3g} vs m/N = "
                         f"{m / N:g}); R sqrt(m/N) + 1/N matches eq. (30) to {corr_ratio:.1e}",
                         {"max_printed_over_eq30": printed_ratio, "corrected_rel_err": corr_ratio},
                         "in the middle regime (30) becomes O(R sqrt(m/N) + 1/N) (continuous with "
                         "O(1/N) at R^2 = 1/(mN)); it is suboptimal against Omega(R^2 + 1/N) "
                         "unless R^2 ~ m/N",
        level="loose")
