"""Paper 000 (Chen, Zheng, Long, Su, *Minimax estimation for personalized federated learning*,
``000_7ff2ed2592df3b60.txt``; 002 is the same paper, HTML text): shared pieces of its checks,
which live in one module per part of the paper: ``p000_lemma7`` (Lemma 7), ``p000_sec31``
(Thms 4 and 6, Sec. 3.1), ``p000_sec32`` (Thm 8, Cor. 9 and Sec. 3.3, Fig. 1), ``p000_sec4``
(Prop. 10, Thms 11-12, eq. 30).

Evidence routes: the constants of Lemma 7 recomputed by direct numerical optimization of the
logistic loss and Monte Carlo over features; the rates of Thm 8 / eqs. (14)-(19) against the
errors of exactly solved local and global logistic models (``montecarlo.experiments.objectives``); the
upper bounds of Thms 4, 6, 11 and 12 against the exact excess risks of PureLocalTraining,
FedAvg and FedProx (at the lambda of the proofs) on Lemma 7 instances (``montecarlo.experiments.rates``),
exponents with confidence intervals and ratios to the rate in a band fixed beforehand; the
Fig. 1 experiment re-run with the algorithms of ``montecarlo.experiments.algorithms`` at Appendix D's
hyperparameters. ``riskcalc.minimax`` must agree with every recomputed constant.
"""

from __future__ import annotations

import numpy as np
from scipy.special import stdtrit

from montecarlo.experiments.algorithms import Trajectory
from montecarlo.experiments.metrics import evaluate
from montecarlo.experiments.objectives import minimize
from montecarlo.experiments.problems import Instance
from montecarlo.experiments.rates_instances import fedprox_theorem1_constants, lemma7_instance
from paper_checks.core import stated
from riskcalc import minimax
from riskcalc.minimax.ratecheck import rate_check


# -- Thms 4, 6, 11, 12: simulated scaling of the upper bounds ---------------------------------
# Lemma 7 instances (``montecarlo.experiments.rates``): Rademacher features (c_X = 1), d = 5, antipodal
# true models at distance R from their average 0, exact minimizers. At w = 0 the population
# Hessian is I/4, so the well-specified MLE of k samples has E[excess risk] -> d/(2k) (the
# Fisher information cancels) and a model off by R v has excess risk ~ R^2/8. These two
# constants, fixed before any simulation, set the bands: every ratio to the rate is its
# asymptotic value within a factor 2 (the Monte Carlo error of the replicate means and the
# O(d/n) second-order terms stay well inside, see tests/test_rates_simulation.py); for FedProx
# the asymptotic value is ``_fedprox_linearized``.
_D = 5


def _rate_fit(grid, errors, bound, mask, c, C):
    """``ratecheck.rate_check`` on the cells ``mask`` (one regime of the bound), as a dict.

    The bound's exponent in the grid's first variable passes through the sensitivity seam
    (``paper_checks.core.stated``): its mutant multiplies the bound by that variable^0.5."""
    first = np.asarray(grid[next(iter(grid))], float)
    bound = bound * first ** stated(0.0, "exponent")
    chk = rate_check({k: v[mask] for k, v in grid.items()}, errors[mask], bound[mask], c, C)
    fit = chk.error_fit
    return {"exponents": fit.exponents, "ci": fit.ci, "bound_exponents": chk.bound_exponents,
            "consistent": chk.consistent, "ratio_min": chk.ratio_min,
            "ratio_max": chk.ratio_max, "within": chk.within, "band": (c, C),
            "cells": int(mask.sum())}


def _mc_exponents(predictors, samples, level=0.95):
    """Power-law exponents of replicate means with intervals from their Monte Carlo error.

    OLS of ``log mean`` on ``[1, log x_j]`` over independent points (rows of ``samples``,
    replicates on the last axis); the delta method gives ``var log mean = (se/mean)^2`` per
    point, propagated through the OLS weights, and the interval uses Student's t with
    ``reps - 1`` degrees of freedom. Unlike ``ratecheck.fit_power_law`` (intervals from the
    residuals) this stays meaningful with as few points as parameters plus one, and it does not
    absorb a systematic departure from the power law into a wider interval.
    """
    samples = np.asarray(samples, float)
    mean = samples.mean(-1)
    rel_var = samples.var(-1, ddof=1) / samples.shape[-1] / mean ** 2
    X = np.column_stack([np.ones(len(mean))] + [np.log(v) for v in predictors.values()])
    A = np.linalg.solve(X.T @ X, X.T)
    coef = A @ np.log(mean)
    se = np.sqrt(np.diag((A * rel_var) @ A.T))
    q = float(stdtrit(samples.shape[-1] - 1, (1 + level) / 2))       # scipy.stats.t.ppf's
    names = list(predictors)
    return {"exponents": {k: float(a) for k, a in zip(names, coef[1:])},
            "ci": {k: (float(a - q * e), float(a + q * e))
                   for k, a, e in zip(names, coef[1:], se[1:])}}


def _fmt_fit(fit, var):
    lo, hi = fit["ci"][var]
    return (f"{var}^{fit['exponents'][var]:.3f} [{lo:.3f}, {hi:.3f}] (bound "
            f"{fit['bound_exponents'][var]:.2f})")


def _printed_factors(g):
    """Lemma 7's beta, sigma^2, mu_0, ||l||_inf (c_X = 1, d = 5) on the domain W = the ball of
    radius max R around 0 (diameter D = 2 max R), which holds every true model of the grid."""
    return minimax.logistic_constants(1.0, max(2.0 * float(g["R"].max()), 1e-12), _D)


def _ints(values):
    return sorted({int(v) for v in np.ravel(values)})


def _cells(g):
    """Grid variables broadcast to (cells, len(R^2 n))."""
    n = np.broadcast_to(g["n"][:, None], g["R"].shape)
    m = np.broadcast_to(g["m"][:, None], g["R"].shape)
    return n, m, n * m, g["R"]


def _exact_risks(inst, W):
    """Exact AER (p_i = 1/m) per replicate and the worst client's mean IER of the models W
    (reps, ..., m, d) on a Lemma 7 instance (``montecarlo.experiments.metrics.evaluate``):
    shapes (reps, ...) and (...)."""
    traj = Trajectory("exact", "local", 0.0, W[None], W.mean(-2)[None], np.zeros(1, int),
                      np.zeros(1), np.zeros(1))
    met = evaluate(traj, inst, checkpoints=[0])
    return met["aer"][0], np.max(np.mean(met["ier"][0], 0), -1)


def _lambda_grid(cfg, seed):
    """Exact FedProx on Lemma 7 instances (m = 4, d = 4, n in {100, 400}, R in {0.05, 0.3})
    over lam in [1e-2, 10]: rows with the AER, the worst client's IER and the constants
    (Props 23 and 30, ``paper_checks.p000_afp``)."""
    m, d, l2 = 4, 4, 1e-3
    R = np.array([0.05, 0.3])
    rows = []
    for cell, n in enumerate((100, 400)):
        inst = lemma7_instance(R, reps=cfg.pick(6, 20), m=m, n=n, d=d, l2=l2, seed=seed,
                               cell=cell)
        for j, r in enumerate(R):
            c = fedprox_theorem1_constants(inst.w_star[j], d)
            point = Instance(inst.train.take(np.s_[:, j]),
                             inst.w_star[j], inst.test_X, inst.labels)
            for lam in (1e-2, 1e-1, 1.0, 10.0):
                aer, ier = _exact_risks(point, minimize(point.train, "fedprox", lam)[1])
                rows.append({"n": n, "R": r, "lam": lam, "aer": float(np.mean(aer)),
                             "ier": float(ier), "mu": c["mu"], "sigma2": c["rho"] ** 2})
    # beta = d/4 (Lemma 7); ||l||_inf on the ball of radius 1, which holds every model
    return rows, {"m": m, "d": d, "beta": d / 4, "loss_sup": float(np.logaddexp(0.0, np.sqrt(d)))}
