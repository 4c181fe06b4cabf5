"""Formula mutants of the paper checks: does each check reject a plausible WRONG formula?

    python benchmarks/paper_formula_mutants.py [CLAIM_ID ...]

``paper_checks.sensitivity`` moves each claim's stated value by a fixed factor (x1.5, /100,
x100, exponent +0.5) through the seam ``paper_checks.core.stated``. This script injects what a
transcription or derivation error would look like instead (a dropped square or root, a missing
factor, gamma for 1 - 1/gamma, L for mu, a sign) into the function the check evaluates (the
formula helper of the check, or the ``riskcalc.minimax`` function it calls), by monkeypatching it
for one run of the claim's quick check, and prints whether the verdict changed. Where the check
also compares riskcalc's implementation with the formula (``p003_common._compare_points``),
riskcalc is given the same wrong formula, so that only the independent route (simulation,
mpmath) can reject it. The checks' per-process caches are emptied around each run.

A mutant the check accepts is a weakness of the check (fixed: ``001.fig2``, APGD2's root
dropped, fuzz40 paper F2; ``001.table1.iapgd-agd-optimality``, F8; ``000.lemma7.beta-sigma``
and ``004.table1.chen-column``, fuzz42 bounds F5-F6; ``000.thm11.fedprox-aer``, fuzz42 report F2;
or left, marked ``OPEN`` with what was measured), or a TRUE statement no evidence can reject
(``TRUE`` says why). Exit status 1 if an unmarked mutant is accepted. Measured (session 42, 160
s on a loaded machine): 56 mutants of 32 claims, 37 rejected (22 claims), 15 TRUE, 4 OPEN
(session 40: 47 of 23, 32 rejected); since fuzz42 report F2, 38 rejected, 16 TRUE, 2 OPEN.
"""

from __future__ import annotations

import sys
import time

import mpmath as mpm
import numpy as np

import paper_checks
import montecarlo.experiments.rates as rates
import paper_checks.mp as mp
import paper_checks.p000_common as c000
import paper_checks.p000_sec4 as s4
import paper_checks.p003_common as c003
import paper_checks.p003_sec3 as s3
import paper_checks.p003_sec6 as s6
import paper_checks.p003_thm12 as t12
from paper_checks.core import Config
from riskcalc import minimax

def _consistent(predict):
    # riskcalc implements the same wrong formula: the consistency leg of _compare_points agrees
    return [(c003, "_riskcalc", lambda method, p, quantity: float(predict(p)))]


def _dict_key(fn, key, f):
    def wrapped(*a, **k):
        out = dict(fn(*a, **k))
        out[key] = f(out[key], *a, **k)
        return out
    return wrapped


def _ridge(mod, which, f):
    return [(mod, which, f)]


MUTANTS = [
    ("003.thm1.isotropic-bias", "r^2 / gamma (1 - 1/gamma swapped for 1/gamma)",
     lambda: [(t12, "_bias_minnorm", (g := lambda p: p["signal"] ** 2 / p["gamma"]))]
     + _consistent(g)),
    ("003.thm1.isotropic-bias", "r^2 (1 - 1/gamma)^2 (a square added)",
     lambda: [(t12, "_bias_minnorm", (g := lambda p: p["signal"] ** 2
                                      * (1 - 1 / p["gamma"]) ** 2))] + _consistent(g)),
    ("003.thm1.isotropic-variance", "sigma^2 gamma / (gamma - 1) (gamma in the numerator)",
     lambda: [(t12, "_var_minnorm", (g := lambda p: p["sigma"] ** 2 * p["gamma"]
                                     / (p["gamma"] - 1)))] + _consistent(g)),
    ("003.thm1.isotropic-variance", "sigma^2 / (gamma - 1)^2 (a square added)",
     lambda: [(t12, "_var_minnorm", (g := lambda p: p["sigma"] ** 2
                                     / (p["gamma"] - 1) ** 2))] + _consistent(g)),
    ("003.thm1.isotropic-variance", "sigma / (gamma - 1) (sigma's square dropped)",
     lambda: [(t12, "_var_minnorm", (g := lambda p: p["sigma"] / (p["gamma"] - 1)))]
     + _consistent(g)),
    ("003.thm2.isotropic-bias", "r^2 lam m'(-lam) (lam's square dropped)",
     lambda: [(t12, "_bias_ridge", (g := lambda p: p["signal"] ** 2 * p["tuning"]
                                    * mp.mp_moment(p["gamma"], p["tuning"], 2)))]
     + _consistent(g)),
    ("003.thm2.isotropic-bias", "r^2 lam^2 m(-lam)^2 (m' read as m^2)",
     lambda: [(t12, "_bias_ridge", (g := lambda p: p["signal"] ** 2 * p["tuning"] ** 2
                                    * mp.mp_moment(p["gamma"], p["tuning"], 1) ** 2))]
     + _consistent(g)),
    ("003.thm2.isotropic-variance", "sigma^2 (m - lam m') (gamma dropped)",
     lambda: [(t12, "_var_ridge", (g := lambda p: p["sigma"] ** 2
                                   * (mp.mp_moment(p["gamma"], p["tuning"], 1) - p["tuning"]
                                      * mp.mp_moment(p["gamma"], p["tuning"], 2))))]
     + _consistent(g)),
    ("003.thm2.isotropic-variance", "sigma^2 gamma (m - lam^2 m') (a square on lam)",
     lambda: [(t12, "_var_ridge", (g := lambda p: p["sigma"] ** 2 * p["gamma"]
                                   * (mp.mp_moment(p["gamma"], p["tuning"], 1) - p["tuning"] ** 2
                                      * mp.mp_moment(p["gamma"], p["tuning"], 2))))]
     + _consistent(g)),
    ("003.thm2.mp-closed-form", "+ 4 gamma z under the root (sign)",
     lambda: [(t12, "printed_m", lambda g, z: (1 - g - z - mpm.sqrt((1 - g - z) ** 2
                                                                    + 4 * g * z)) / (2 * g * z))]),
    ("003.thm2.mp-closed-form", "(1 + gamma - z) for (1 - gamma - z) (sign of gamma)",
     lambda: [(t12, "printed_m", lambda g, z: (1 + g - z - mpm.sqrt((1 + g - z) ** 2
                                                                    - 4 * g * z)) / (2 * g * z))]),
    ("003.thm2.mp-closed-form", "2 z for 2 gamma z in the denominator",
     lambda: [(t12, "printed_m", lambda g, z: mp.printed_m(g, z) * g)]),
    ("003.sec63.eq17-bias", "(1 + m_1) for (1 + gamma m_1)",
     lambda: [(s6, "_printed_17_18", _p1718(gamma_m1=False))]),
    ("003.sec63.eq17-bias", "lam for lam^2 in front",
     lambda: [(s6, "_printed_17_18", _p1718(lam_sq=False))]),
    ("001.fig2.apgd1-vs-apgd2", "APGD2 L/mu for sqrt(L/mu) (the root dropped)",
     lambda: [(minimax, "apgd_complexity", _dict_key(
         minimax.apgd_complexity, "apgd2", lambda v, L, mu, lam, eps: v * np.sqrt(L / mu)))]),
    ("001.thm42.complexities", "IAPGD rounds with sqrt(L/mu) for sqrt(lam/mu)",
     lambda: [(minimax, "iapgd_agd_complexity",
               _dict_key(minimax.iapgd_agd_complexity, "rounds",
                         lambda v, L, mu, lam, n, eps, *a, **k: v * np.sqrt(L / lam)))]),
    ("001.sec32.lower-bounds", "comm. bound with lam/mu for sqrt(lam/mu)",
     lambda: [(minimax, "communication_lower_bound",
               (lambda f: lambda L, mu, lam, eps, *a: f(L, mu, lam, eps, *a)
                * np.sqrt(np.minimum(L, lam) / mu))(minimax.communication_lower_bound))]),
    ("004.lemma2.bilevel-constants", "mu_g = lam mu/(lam + L) (L for mu)",
     lambda: [(minimax, "bilevel_constants",
               _dict_key(minimax.bilevel_constants, "mu_g",
                         lambda v, L, mu, lam: lam * mu / (lam + L)))]),
    ("004.lemma2.bilevel-constants", "L_w = lam/(lam + L) (L for mu)",
     lambda: [(minimax, "bilevel_constants",
               _dict_key(minimax.bilevel_constants, "L_w",
                         lambda v, L, mu, lam: lam / (lam + L)))]),
]


def _over(fn, f):
    """fn's result mapped by f(result, *args)."""
    def wrapped(*a, **k):
        return f(fn(*a, **k), *a, **k)
    return wrapped


def _inner_sq(L, mu, lam, gamma, eta):
    from riskcalc.minimax.fedprox_bilevel import _inner_length
    c = minimax.bilevel_constants(L, mu, lam)
    x = eta * c["mu_l"]
    return _inner_length(lam, mu, 1 - np.sqrt(1 - gamma * c["L_g"]), x, 1 - x)


def _outer(f):
    def rate(L, mu, lam, gamma):
        x = gamma * minimax.bilevel_constants(L, mu, lam)["mu_g"]
        return f(x)
    return rate


MUTANTS += [
    ("001.thm44.local-optimality", "AL2SGD+ local m + sqrt((L~ + lam)/mu) (m dropped in the root)",
     lambda: [(minimax, "al2sgd_complexity", _dict_key(
         minimax.al2sgd_complexity, "local_order", lambda v, lt, mu, lam, m, eps:
         (m + np.sqrt((lt + lam) / mu)) * np.log(1 / eps)))]),
    ("001.thm44.local-optimality", "summand bound m + sqrt(L~/mu) (m dropped in the root)",
     lambda: [(minimax, "summand_oracle_lower_bound", _over(
         minimax.summand_oracle_lower_bound, lambda v, lt, mu, m, eps:
         m + np.sqrt(lt / mu) * np.log(1 / eps)))]),
    ("001.sec32.lower-bounds", "gradient bound L/mu for sqrt(L/mu)",
     lambda: [(minimax, "gradient_oracle_lower_bound", _over(
         minimax.gradient_oracle_lower_bound, lambda v, L, mu, eps: v * np.sqrt(L / mu)))]),
    ("001.sec32.lower-bounds", "prox bound with L for lam",
     lambda: [(minimax, "prox_oracle_lower_bound", _over(
         minimax.prox_oracle_lower_bound, lambda v, L, mu, lam, eps: v * np.sqrt(L / lam)))]),
    ("004.thm2.exact-limit-rate", "rate 1 - x (the /2 dropped: faster)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x))]),
    ("004.thm2.exact-limit-rate", "rate 1 - x/2 + x^2/2 (sign of the square)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x / 2 + x ** 2 / 2))]),
    ("004.thm2.exact-limit-rate", "rate 1 - x^2 (x squared: slower)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x ** 2))]),
    ("004.cor1.rounds-exact-limit", "rate 1 - x (the /2 dropped: faster)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x))]),
    ("004.thm2.inner-steps-exact", "eq. (12) with (1 - gamma L_g)^2 for ^4",
     lambda: [(minimax, "inner_loop_iterations", _inner_sq)]),
    ("004.lemma6.inner-contraction", "mu_l = mu (the + lam dropped)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_l", lambda v, L, mu, lam: mu))]),
    ("004.lemma7.outer-contraction", "L_w = lam/(lam + L)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "L_w", lambda v, L, mu, lam: lam / (lam + L)))]),
    ("004.lemma7.outer-contraction", "mu_g = lam mu/(lam + L)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_g", lambda v, L, mu, lam: lam * mu / (lam + L)))]),
    ("004.lemma6.inner-contraction", "mu_l = L + lam (L for mu)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_l", lambda v, L, mu, lam: L + lam))]),
    ("004.lemma7.outer-contraction", "mu_g = lam L/(lam + L) (L for mu)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_g", lambda v, L, mu, lam: lam * L / (lam + L)))]),
    ("004.lemma7.outer-contraction", "mu_g = mu (the envelope's lam/(lam + mu) dropped)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_g", lambda v, L, mu, lam: mu))]),
    ("004.thm2.exact-limit-rate", "mu_g = mu in the rate (the envelope dropped)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_g", lambda v, L, mu, lam: mu))]),
    ("004.thm2.linear-rate", "rate 1 - x (the /2 dropped: faster)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x))]),
    ("004.thm2.linear-rate", "rate 1 - x/2 + x^2/2 (sign of the square)",
     lambda: [(minimax, "outer_rate", _outer(lambda x: 1 - x / 2 + x ** 2 / 2))]),
    ("004.thm2.linear-rate", "mu_g = mu in the rate (the envelope dropped)",
     lambda: [(minimax, "bilevel_constants", _dict_key(
         minimax.bilevel_constants, "mu_g", lambda v, L, mu, lam: mu))]),
    ("000.eq18-19.proportional-weights", "Cor. 9 AER bound beta/N ^ R^2 (N/m read as N)",
     lambda: [(minimax, "excess_lower_bound_aer", lambda mu, beta, N, m, R:
               mu * (np.minimum(beta / N, np.asarray(R) ** 2) + beta / N))]),
    ("000.eq18-19.proportional-weights", "Cor. 9 IER bound without its beta/N term",
     lambda: [(minimax, "excess_lower_bound_ier", lambda mu, beta, n, N, R:
               mu * np.minimum(beta / n, np.asarray(R) ** 2))]),
    ("000.eq18-19.proportional-weights", "eq. (18) encoded with m/N -> 1/N",
     lambda: [(minimax, "dichotomy_aer_bound", lambda beta, mu, ls, R, N, m:
               beta * min(ls / (mu * N), R ** 2) + beta * ls / (mu * N))]),
    ("001.table1.iapgd-agd-optimality", "IAPGD rounds with sqrt(L/mu) for sqrt(lam/mu)",
     lambda: [(minimax, "iapgd_agd_complexity", _dict_key(
         minimax.iapgd_agd_complexity, "rounds",
         lambda v, L, mu, lam, n, eps, *a, **k: np.ceil(v * np.sqrt(L / lam))))]),
    ("001.table1.iapgd-agd-optimality", "gradient bound L/mu for sqrt(L/mu)",
     lambda: [(minimax, "gradient_oracle_lower_bound", _over(
         minimax.gradient_oracle_lower_bound, lambda v, L, mu, eps: v * np.sqrt(L / mu)))]),
    ("001.thm43.katyusha-optimality", "IAPGD+Katyusha local sqrt(m lam/mu) for m sqrt(lam/mu)",
     lambda: [(minimax, "iapgd_katyusha_complexity", _dict_key(
         minimax.iapgd_katyusha_complexity, "local_order",
         lambda v, lt, mu, lam, m, eps: np.sqrt(m * lam / mu) + np.sqrt(m * lt / mu)))]),
    ("003.cor31.local-minnorm", "rho^2 / gamma (1 - 1/gamma swapped for 1/gamma)",
     lambda: [(s3, "_bias_minnorm", (g := lambda p: p["signal"] ** 2 / p["gamma"]))]
     + _consistent(g)),
    ("003.cor31.local-ridge", "sigma^2 (m - lam m') (gamma dropped)",
     lambda: [(s3, "_var_ridge", (g := lambda p: p["sigma"] ** 2
                                  * (mp.mp_moment(p["gamma"], p["tuning"], 1) - p["tuning"]
                                     * mp.mp_moment(p["gamma"], p["tuning"], 2))))]
     + _consistent(g)),
    ("000.thm4.local-rate", "local IER bound with sqrt(n_i) (riskcalc's formula only)",
     lambda: [(minimax, "local_ier_bound", _over(
         minimax.local_ier_bound, lambda v, b, u, ls, n: v * np.sqrt(n)))]),
]


def _fedprox_shape(shape):
    """p000_sec4's (29)/(30) shape replaced by ``shape(n, m, N, R)`` (times d), in the band
    and in the m exponent of the bound's constant (``_m_growth``) alike."""
    return [(s4, "_shape", lambda n, m, N, R, thm: c000._D * shape(n, m, N, R))]


def _lambda_r(fn):
    """Thm 1's lambda of paper 004 with R's square lost in its upper branch rho^2/(n mu R^2)."""
    def lam(L, mu, rho, R, n, m, *a, **k):
        out = fn(L, mu, rho, R, n, m, *a, **k)
        return out._replace(lam=np.where(out.is_lower, out.lam, out.lam * np.asarray(R)))
    return lam


# Session 42 (fuzz42 bounds): claims that had no formula mutant.
MUTANTS += [
    ("000.lemma7.loss-sup", "log(1 + exp(c_X D d)) (d's root lost)",
     lambda: [(minimax, "logistic_constants", _dict_key(
         minimax.logistic_constants, "loss_sup",
         lambda v, cx, D, d, *a, **k: np.log1p(np.exp(cx * D * d))))]),
    ("000.lemma7.mu0", "(e^T + e^-T)^-2 (the exponents' /2 lost)",
     lambda: [(minimax, "logistic_constants", _dict_key(
         minimax.logistic_constants, "mu0",
         lambda v, cx, D, d, *a, **k: (np.exp(cx * D * np.sqrt(d))
                                       + np.exp(-cx * D * np.sqrt(d))) ** -2))]),
    ("000.lemma7.beta-sigma", "beta = c_X d/4 (c_X's square lost)",
     lambda: [(minimax, "logistic_constants", _dict_key(
         minimax.logistic_constants, "beta", lambda v, cx, D, d, *a, **k: cx * d / 4))]),
    ("000.eq30.fedprox-middle-regime", "eq. (30) with R m/N for R sqrt(m/N) (the root lost)",
     lambda: [(minimax, "fedprox_aer_bound", lambda b, u, ls, R, N, m: (u + b * ls / u)
               * (np.minimum(m / N, np.asarray(R) * m / N) + 1 / N))]),
    ("000.thm11.fedprox-aer", "eq. (30) with R m/N for R sqrt(m/N) (the root lost)",
     lambda: _fedprox_shape(lambda n, m, N, R: np.minimum(m / N, R * m / N) + 1 / N)),
    ("000.thm12.fedprox-ier", "eq. (29) with 1/N for sqrt(m)/N (sqrt(m) lost at the line break)",
     lambda: _fedprox_shape(lambda n, m, N, R: np.minimum(R / np.sqrt(n), 1 / n) + 1 / N)),
    ("004.table1.chen-column", "corrected row ||l||/(n m) for ||l||/(n sqrt m) (the root lost)",
     lambda: [(minimax, "table1_rates", _dict_key(
         minimax.table1_rates, "chen", lambda v, R, n, m, *a, **k: v / np.sqrt(m)))]),
    ("004.thm1.rates", "Thm 1's lambda rho^2/(n mu R) (R's square lost)",
     lambda: [(minimax, "fedprox_lambda", _lambda_r(minimax.fedprox_lambda))]),
    ("004.thm1.adaptive-lambda", "Thm 1's lambda rho^2/(n mu R) (R's square lost)",
     lambda: [(rates, "fedprox_lambda", _lambda_r(minimax.fedprox_lambda))]),
]


def _p1718(gamma_m1=True, lam_sq=True):
    from riskcalc.linear.engine import stieltjes

    def f(gamma, lam, spectrum):
        s, w = spectrum.atoms, spectrum.weights
        st = stieltjes.stieltjes(gamma, lam, spectrum)
        den = lam + st["a"] * s
        bias = (lam ** 2 if lam_sq else lam) * (1 + (gamma if gamma_m1 else 1) * st["m1"]) \
            * ((s / den ** 2) @ w)
        var = gamma * ((s * s * (1 - gamma + gamma * lam * st["dm"]) / den ** 2) @ w)
        return float(bias), float(var)
    return f


_LOOSE_RATE = ("Thm 2's rate is loose by x3.1-52 in its exponent (004.thm2.exact-limit-rate: "
               "exact limit of Alg. 1); the exact per-round factor (1 - gamma mu_g)^2 is below "
               "this mutant too")
#: Accepted mutants that are true statements (or do not enter the verdict), with the reason.
TRUE = {
    ("004.thm2.exact-limit-rate", "rate 1 - x (the /2 dropped: faster)"): _LOOSE_RATE,
    ("004.thm2.exact-limit-rate", "rate 1 - x/2 + x^2/2 (sign of the square)"):
        "a weaker (slower) rate than the printed one: true wherever the printed one is",
    ("004.thm2.exact-limit-rate", "rate 1 - x^2 (x squared: slower)"):
        "a weaker (slower) rate than the printed one: true wherever the printed one is",
    ("004.thm2.exact-limit-rate", "mu_g = mu in the rate (the envelope dropped)"):
        _LOOSE_RATE + "; mu for mu_g = lam mu/(lam + mu) moves x by 1 + mu/lam, and the "
        "mutated rate still stays above rho^2 at every lam checked",
    ("004.cor1.rounds-exact-limit", "rate 1 - x (the /2 dropped: faster)"):
        "eq. (13)'s check reads kappa_g, not outer_rate: the mutant does not enter its verdict",
    ("004.thm2.linear-rate", "rate 1 - x (the /2 dropped: faster)"): _LOOSE_RATE,
    ("004.thm2.linear-rate", "rate 1 - x/2 + x^2/2 (sign of the square)"):
        "a weaker (slower) rate than the printed one: true wherever the printed one is",
    ("004.thm2.linear-rate", "mu_g = mu in the rate (the envelope dropped)"):
        "observed rates 0.41-0.75 against bound rates 0.82-0.97 on this instance",
    ("004.thm2.inner-steps-exact", "eq. (12) with (1 - gamma L_g)^2 for ^4"):
        "eq. (12) is conservative by x1.4-2.7 (the check's own summary): the mutant's K (92 "
        "for 127 at lam 0.03) stays above the smallest K reaching 99% (89, 34, 8, 3)",
    ("004.lemma6.inner-contraction", "mu_l = mu (the + lam dropped)"):
        "the check computes (1 - eta (mu + lam))^K itself, not from bilevel_constants",
    ("004.lemma6.inner-contraction", "mu_l = L + lam (L for mu)"):
        "the check computes (1 - eta (mu + lam))^K itself, not from bilevel_constants",
    ("004.lemma7.outer-contraction", "L_w = lam/(lam + L)"):
        "Lemma 7's inequality (90) has no L_w",
    ("004.lemma7.outer-contraction", "mu_g = lam mu/(lam + L)"):
        "a smaller mu_g weakens (90): true wherever the printed one is",
    ("004.lemma7.outer-contraction", "mu_g = mu (the envelope's lam/(lam + mu) dropped)"):
        "(90) has Young's slack: with exact local steps and a client eigenvalue mu the left "
        "side (1 - gamma mu_g)^2 stays below the mutated right side (e.g. 0.667 < 0.708 at lam "
        "0.1, gamma = 1/(2 L_g))",
    ("000.thm12.fedprox-ier", "eq. (29) with 1/N for sqrt(m)/N (sqrt(m) lost at the line break)"):
        "a stronger bound that holds at the proof's lambda: a = 16/(16 + sqrt(m)), a^2 m -> 256, "
        "so the constant of 1/N (max over n_i, R of the linearized error / shape) peaks near 34 "
        "at m = 1024 and falls beyond (p000_sec4._m_growth: m^-0.09 from 256 to 4096)",
    ("000.thm4.local-rate", "local IER bound with sqrt(n_i) (riskcalc's formula only)"):
        "the verdict rests on the fitted exponents (through the seam); minimax.local_ier_bound "
        "is printed as evidence only (tests/test_minimax.py pins it)",
}

#: Accepted mutants showing a weakness of the check, left open (session 42).
OPEN = {
    ("004.thm1.rates", "Thm 1's lambda rho^2/(n mu R) (R's square lost)"): "not analysed",
    ("004.thm1.adaptive-lambda", "Thm 1's lambda rho^2/(n mu R) (R's square lost)"):
    "it moves lambda only where R > 1/sqrt(n) (x0.22, x0.71, x2.2 on the grid), where FedProx "
    "stayed no worse than LocalTrain; a lambda far above Thm 1's was not tried",
}


def _clear():
    """Empty the checks' per-process caches (``functools.cache`` of pure theory, e.g.
    ``p004_rounds._table``): a mutant must be evaluated, not read back."""
    for name, mod in list(sys.modules.items()):
        if name.startswith("paper_checks.") and name != "paper_checks.mp":
            for v in vars(mod).values():
                if callable(getattr(v, "cache_clear", None)) and v.__module__ == name:
                    v.cache_clear()


def _verdict(claim, patches):
    _clear()
    saved = [(m, a, getattr(m, a)) for m, a, _ in patches]
    try:
        for m, a, v in patches:
            setattr(m, a, v)
        try:
            return claim.check(Config(True), claim.seed).verdict
        except Exception as exc:            # a check that breaks has not accepted the mutant
            return f"raised {type(exc).__name__}"
    finally:
        for m, a, v in saved:
            setattr(m, a, v)
        _clear()


def main(only) -> int:
    bad, n = 0, 0
    for cid, what, make in MUTANTS:
        if only and cid not in only:
            continue
        claim = paper_checks.CLAIMS[cid]
        t0 = time.time()
        base, verdict = _verdict(claim, []), _verdict(claim, make())
        n += 1
        why = TRUE.get((cid, what)) or OPEN.get((cid, what))
        state = ("rejected" if verdict != base else "TRUE" if (cid, what) in TRUE
                 else "OPEN" if why else "ACCEPTED")
        bad += state == "ACCEPTED"
        print(f"{cid:<34} {state:<8} {base} -> {verdict} ({time.time() - t0:.1f} s) {what}"
              + (f"\n{'':<43} ({state.lower()}: {why})" if state in ("TRUE", "OPEN") else ""),
              flush=True)
    print(f"{n} mutants, {bad} accepted without a reason")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
