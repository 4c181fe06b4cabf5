"""Paper 000, Thm 8 (eqs. 14-15) and Cor. 9 (eqs. 16-17) as LOWER bounds: the Bayes risk under
the proof's hypercube prior (Assouad's method), computed across n, m and R.

File ``000_7ff2ed2592df3b60.txt`` (002 is the same paper, HTML text), Sec. 3.2 and App. A.

Derivation (here). The minimax risk is at least the Bayes risk under any prior supported in
the class. The proof of Thm 8 uses two hypercube priors, one per term:

* heterogeneity (the min{d/n_i, R^2} term): w*_i = delta v_i, v_i independent and uniform on
  {-1, 1}^d, delta = min(R/(2 sqrt d), 1/sqrt(n_i)); then ||w*_i - sum_j p_j w*_j|| <= 2 delta
  sqrt(d) <= R, so the prior lies in P1 and P2. The clients are independent and the centre 0
  is known, so client i's posterior depends on its own n_i samples only, and the Bayes AER
  with equal n_i is the one-client Bayes risk;
* homogeneity (the d/N term): one shared w* = delta v, delta = 1/sqrt(N), all N samples.

Lemma 7's instances: features x uniform on {-1, 1}^d (c_X = 1), logistic labels. With x
taking 2^d values, the likelihood depends on the data only through the counts of (x, y), so
the exact posterior over the 2^d vertices is computed from simulated counts at any sample
size. The Bayes estimator is the posterior mean for the squared error (Thm 8) and, for the
excess logistic risk (Cor. 9), the minimizer of the posterior-expected population loss
E_x[q(x) log(1 + e^{-x'w}) + (1 - q(x)) log(1 + e^{x'w})], q(x) = sum_v post(v) sigmoid(x' delta
v), found by Newton's method. Each is exactly the Bayes rule, so the simulated risk estimates
the Bayes risk itself (Monte Carlo error reported), a lower bound on the minimax risk.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import expit, log_expit

from montecarlo.runner.seeding import replicate_rng
from montecarlo.runner.stats import mean_se
from paper_checks.core import claim, judge, stated
from paper_checks.evidence import Z

_D = 3


def _cube(d):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=d)))


def _posterior(rng, delta, n, d, reps):
    """Draw v uniform on the cube and n samples per replicate; return (v index, posterior over
    the 2^d vertices) with the counts of each (x, y) as sufficient statistics."""
    V = _cube(d)
    X = V                                       # the 2^d feature values, equally likely
    idx = rng.integers(0, len(V), reps)
    counts = rng.multinomial(n, np.full(len(X), 1 / len(X)), size=reps)      # (reps, 2^d)
    p1 = expit(delta * X @ V[idx].T).T                                      # (reps, 2^d)
    k1 = rng.binomial(counts, p1)
    k0 = counts - k1
    marg = delta * X @ V.T                                                  # (x, v')
    loglik = k1 @ log_expit(marg) + k0 @ log_expit(-marg)                   # (reps, v')
    loglik -= loglik.max(1, keepdims=True)
    post = np.exp(loglik)
    return idx, post / post.sum(1, keepdims=True), V


def bayes_estimation_risk(delta, n, d, reps, rng):
    """Monte Carlo of the Bayes risk E||E[w|S] - w||^2 under w = delta v, v uniform on the cube
    (derived here, see the module docstring); returns (mean, s.e.)."""
    idx, post, V = _posterior(rng, delta, n, d, reps)
    est = delta * post @ V
    return mean_se(np.sum((est - delta * V[idx]) ** 2, 1))


def _population_loss(W, q, X):
    """E_x[q log(1 + e^{-x'w}) + (1 - q) log(1 + e^{x'w})] per row of W (x uniform on X)."""
    t = W @ X.T
    return np.mean(-q * log_expit(t) - (1 - q) * log_expit(-t), -1)


def bayes_excess_risk(delta, n, d, reps, rng, newton=30):
    """Monte Carlo of the Bayes risk for the excess logistic risk under the cube prior: the
    Bayes rule minimizes the posterior-expected population loss (Newton's method on a convex
    function); returns (mean, s.e.)."""
    idx, post, V = _posterior(rng, delta, n, d, reps)
    X = V
    q = post @ expit(delta * V @ X.T)                                       # (reps, x)
    W = np.zeros((reps, d))
    for _ in range(newton):
        s = expit(W @ X.T)
        grad = ((s - q) @ X) / len(X)
        hess = np.einsum("rx,xi,xj->rij", s * (1 - s), X, X) / len(X)
        W -= np.linalg.solve(hess, grad[..., None])[..., 0]
    w_true = delta * V[idx]
    q_true = expit(w_true @ X.T)
    excess = _population_loss(W, q_true, X) - _population_loss(w_true, q_true, X)
    return mean_se(excess)


def _grid(cfg):
    ns = cfg.pick([50, 800], [50, 200, 800, 3200])
    ms = cfg.pick([2, 32], [2, 8, 32])
    r2n = [1 / 16, 1.0, 16.0]          # R^2 n / d: far below, at and far above the kink
    return [(n, m, np.sqrt(f * _D / n)) for n in ns for m in ms for f in r2n]


def _lower_bound(cfg, seed, risk_fn, rate_fn):
    """max of the two priors' Bayes risks over the (n, m, R) grid, against ``rate_fn``."""
    rows = []
    for k, (n, m, R) in enumerate(_grid(cfg)):
        rng = replicate_rng(seed, k)
        reps = cfg.pick(400, 2000)
        het = risk_fn(min(R / (2 * np.sqrt(_D)), 1 / np.sqrt(n)), n, _D, reps, rng)
        hom = risk_fn(1 / np.sqrt(n * m), n * m, _D, reps, rng)
        best = max(het, hom, key=lambda x: x[0])
        rows.append({"n": n, "m": m, "R": R, "bayes": best[0], "se": best[1],
                     "het": het[0], "hom": hom[0],
                     "rate": stated(rate_fn(n, m, R), "lower")})
    ratio = np.array([r["bayes"] / r["rate"] for r in rows])
    # Monte Carlo: the ratio's lower end minus Z s.e. must stay above the constant.
    low = np.array([(r["bayes"] - Z * r["se"]) / r["rate"] for r in rows])
    rates = np.array([r["rate"] for r in rows])
    return rows, ratio, low, float(rates.max() / rates.min())


def _summary(rows, ratio, low, span, what, c):
    return (f"Lemma 7 instances (Rademacher x, d = {_D}), Bayes risk under the proof's "
            f"hypercube priors (exact posterior over 2^d vertices from sufficient counts), "
            f"n in {sorted({r['n'] for r in rows})}, m in {sorted({r['m'] for r in rows})}, "
            f"R^2 n/d in {{1/16, 1, 16}}: {what} spans x{span:.0f}; Bayes risk / rate in "
            f"[{ratio.min():.3f}, {ratio.max():.3f}] (spread x{ratio.max() / ratio.min():.1f}),"
            f" lower end - {Z:g} s.e. >= {low.min():.3f} (required >= {c:g}): no estimator "
            "does better than a constant times the rate")


@claim("000.thm8.lower-bound", location="Thm 8, eqs. (14)-(15) (proof: App. A)",
       kind="inequality",
       statement="inf over estimators of sup over P1 (resp. P2) of the AER (resp. IER) "
                 "estimation error is >~ min{d/(N/m), R^2} + d/N (resp. min{d/n_i, R^2} + "
                 "d/N), with "
                 "balanced n_i and p_i = n_i/N.",
       mutants=('lower',))
def thm8_lower(cfg, seed):
    # Balanced n_i and the proof's independent-client prior: AER = IER = the one-client Bayes
    # risk, so one computation checks (14) and (15). The rate must be matched from below by a
    # constant over the grid (and from above: 000.thm8.dichotomy-rate).
    c = 0.05
    rows, ratio, low, span = _lower_bound(
        cfg, seed, bayes_estimation_risk,
        lambda n, m, R: min(_D / n, R * R) + _D / (n * m))
    return judge(bool(low.min() >= c) and ratio.max() / ratio.min() < 20 and span > 30,
                 _summary(rows, ratio, low, span, "the rate min{d/n, R^2} + d/N", c),
                 {"rows": rows, "ratio": ratio, "span": span})


@claim("000.cor9.lower-bound", location="Cor. 9, eqs. (16)-(17)", kind="inequality",
       statement="Any algorithm has E[AER] (resp. E[IER_i]) >~ mu (min{beta/(N/m), R^2} + beta/N) "
                 "(resp. mu (min{beta/n_i, R^2} + beta/N)) on some Lemma 7 instance, with "
                 "beta ~ d.",
       mutants=('lower',))
def cor9_lower(cfg, seed):
    # The excess logistic risk's Bayes rule under the same priors; on these instances (margins
    # |x'w| <= sqrt(d) delta <= 1) mu = mu_0 >= 1/(4 cosh^2(1/2)) and beta = d/4 (Lemma 7).
    c = 0.05
    beta, mu = _D / 4, 1 / (4 * np.cosh(0.5) ** 2)
    rows, ratio, low, span = _lower_bound(
        cfg, seed, bayes_excess_risk,
        lambda n, m, R: mu * (min(beta / n, R * R) + beta / (n * m)))
    return judge(bool(low.min() >= c) and ratio.max() / ratio.min() < 20 and span > 30,
                 _summary(rows, ratio, low, span, "mu (min{beta/n, R^2} + beta/N)", c),
                 {"rows": rows, "ratio": ratio, "span": span, "beta": beta, "mu": mu})


@claim("000.lemma13.homogeneous-lower", location="Lemma 13 (App. A)", kind="inequality",
       statement="With w*_i = w_p for every client, inf over estimators of sup over w_p of "
                 "E_S||w_hat - w_p||^2 >~ d/N.",
       mutants=("lower", "exponent"))
def lemma13(cfg, seed):
    # The Bayes risk under the hypercube prior w_p = delta v, delta = 1/sqrt(N) (all N samples
    # share the model; exact posterior, bayes_estimation_risk) lower-bounds the minimax risk;
    # it must stay above a constant times d/N over N from 50 to 12800, i.e. with the exponent
    # -1 of N (the seam: a mutant moves it).
    e = stated(1.0, "exponent")
    rows = []
    for k, N in enumerate(cfg.pick([50, 400, 3200], [50, 200, 800, 3200, 12800])):
        bayes, se = bayes_estimation_risk(1 / np.sqrt(N), N, _D, cfg.pick(400, 2000),
                                          replicate_rng(seed, k))
        rate = stated(_D / N ** e, "lower")
        rows.append({"N": N, "bayes": bayes, "se": se, "ratio": bayes / rate,
                     "low": (bayes - Z * se) / rate})
    low = min(r["low"] for r in rows)
    spread = max(r["ratio"] for r in rows) / min(r["ratio"] for r in rows)
    return judge(low >= 0.05 and spread < 3, f"hypercube prior, d = {_D}, N = " + ", ".join(
        f"{r['N']}: Bayes risk N/d {r['ratio']:.3f}" for r in rows)
        + f": lower end - {Z:g} s.e. >= {low:.3f} (required >= 0.05), flat in N (spread "
        f"x{spread:.2f} < 3)", {"rows": rows})
