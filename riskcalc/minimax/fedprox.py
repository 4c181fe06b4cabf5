"""FedProx statistical rates and bilevel-algorithm complexities of *The effect of
personalization in FedProx* (``../shared/papers/004_98172ed3646eef14.txt``).

Notation of that paper: ``L``-smooth, ``mu``-strongly convex loss (``kappa = L/mu``), gradient
variance at the optimum ``rho^2`` (Assumption 4), heterogeneity ``||w_i - w_g||^2 <= R^2``
(Assumption 1), ``m`` clients with ``n`` samples each, ``N = m n``, ``p_i = 1/m``.
Theorem 1 has explicit constants, so its bounds are exact inequalities, not rates.

This module holds Theorem 1 (the prescribed lambda, the error bounds); Table 1 is in
:mod:`riskcalc.minimax.fedprox_table1` and the bilevel algorithm's complexities (Lemma 2,
Theorem 2, Corollary 1) in :mod:`riskcalc.minimax.fedprox_bilevel`, and their names stay
importable from here.
"""

from __future__ import annotations

import math
from functools import reduce
from typing import NamedTuple

import numpy as np

from riskcalc._validate import flag
from riskcalc.minimax._common import (broadcasting, client_sizes, from_logs, heterogeneity,
                                      nonnegative, scalar_or_array, smooth_convex)
from riskcalc.minimax.fedprox_bilevel import (bilevel_constants, fedprox_complexity,
                                              inner_loop_iterations, outer_rate)
from riskcalc.minimax.fedprox_table1 import table1_rates, table1_regime

__all__ = [
    "FedProxConstants", "LambdaPrescription", "bilevel_constants", "fedprox_complexity",
    "fedprox_constants", "fedprox_global_error_bound", "fedprox_lambda",
    "fedprox_lambda_interval", "fedprox_local_error_bound", "inner_loop_iterations",
    "local_case2_lambda", "outer_rate", "table1_rates", "table1_regime",
]


class FedProxConstants(NamedTuple):
    """``C1..C4`` of Theorem 1 (paper 004)."""

    C1: float
    C2: float
    C3: float
    C4: float


class LambdaPrescription(NamedTuple):
    """The endpoint of Theorem 1's admissible lambda set and which side it bounds."""

    lam: np.ndarray
    is_lower: np.ndarray


def _lmr(L, mu, rho):
    big_l, u = smooth_convex("L", L, "mu", mu)
    return big_l, u, nonnegative("rho", rho)


def _global_constant(rederived):
    # The factor 32 of eq. (53) comes from eq. (50), which drops the 2 of
    # ||a + b||^2 <= 2||a||^2 + 2||b||^2; redone with it the factor is 64 (see fedprox_constants).
    # A switch is True or False: rederived="no" was the re-derived constant.
    return 64.0 if flag("rederived", rederived) else 32.0


@broadcasting
def fedprox_constants(L, mu, rho, rederived=False):
    """Constants ``C1..C4`` of Theorem 1 (eqs. 6-7, 57, 78-79) of paper 004.

    Printed: ``C1 = 32 rho^2/mu^2``, ``C2 = ((1+sqrt 3) rho/mu)^2 v 32 L^2/mu^2``,
    ``C3 = 192 rho^2/mu^2``, ``C4 = (rho (1 + (4 C2 + 5)^{1/2}) / mu)^2 v 198 L^2/mu^2``
    (``v`` is the maximum). With ``rederived=True`` the constants of the corrected proof
    (ERRATA) are returned: ``C1 = 64 rho^2/mu^2``, ``C2 = ((1+sqrt 3) rho/mu)^2 v 64 L^2/mu^2``,
    ``C3 = 384 rho^2/mu^2``, ``C4 = (rho (1 + (4 C2 + 5)^{1/2}) / mu)^2 v 390 L^2/mu^2``.

    Parameters
    ----------
    L, mu : array_like
        Smoothness and strong convexity, ``L >= mu > 0``.
    rho : array_like
        Gradient standard deviation at the optimum, ``rho >= 0``.
    rederived : bool
        Return the constants of the corrected proof instead of the printed ones.

    Returns
    -------
    FedProxConstants
        ``(C1, C2, C3, C4)``.

    ERRATA
    ------
    - Eq. (50) bounds ``E||w_g - w*_g||^2`` by ``E||w_g - w_GT||^2 + E||w_GT - w*_g||^2``
      (coefficients 1 and 1); the valid split is ``2 E||.||^2 + 2 E||.||^2``. With it, eq. (51)
      becomes ``E <= (2 g B' + 16 b) / (1 - 8 L^2 g)`` (``b = rho^2/(mu^2 N) + L^2 R^2/mu^2``,
      ``B' = 4 L^2 R^2 + 2 rho^2/n``), so condition (52) needs ``g <= 1/(16 L^2)`` (printed
      ``1/(8 L^2)``, which only gives ``1 - 8 L^2 g >= 0``) and the constant of (53) becomes
      64 (printed 32). Deciding numbers: the identity ``||a + b||^2 = 4`` for ``a = b = 1``
      against the printed ``||a||^2 + ||b||^2 = 2``; at ``L = mu = 1`` the printed minimal
      ``lambda = 63`` gives ``g = 4 (1/64 + 1/64^2) = 0.06348``, ``1 - 8 g = 0.4922`` and the
      corrected recursion the factor ``(8 + 16)/0.4922 = 48.8 > 32``.
    - The local constants inherit it through step (c) of eq. (72):
      ``3 E||w_g - w*_g||^2 <= 3 * 64 b`` gives ``C3 = 384 rho^2/mu^2`` and ``390 kappa^2``.
    - Dimension note (not an error of the stated inequality): ``4 C2 + 5`` adds a squared
      length (``C2 ~ rho^2/mu^2``) to a number, and the branch test ``R <= 1/sqrt(n)`` compares a
      length with a number; the theorem holds in the units it is written in but is not
      invariant under rescaling ``w``.
    """
    direct, logs = _constants(L, mu, rho, rederived)
    return FedProxConstants(*(from_logs(f"C{k} of Theorem 1 (paper 004)", c, lc)
                              for k, c, lc in zip(range(1, 5), direct, logs)))


def _constants(L, mu, rho, rederived):
    """``C1..C4`` of :func:`fedprox_constants` as floats (inf or NaN where a product leaves
    the floats: C4 = 0 * inf at rho = 0, L = 1e100, mu = 1e-100) and as natural logarithms
    (-inf for 0), for ``from_logs``."""
    big_l, u, r = _lmr(L, mu, rho)
    g = _global_constant(rederived)
    local_r2 = 6 * g + 6
    with np.errstate(all="ignore"):
        c1 = g * r ** 2 / u ** 2
        c2 = np.maximum(((1 + math.sqrt(3)) * r / u) ** 2, g * big_l ** 2 / u ** 2)
        c3 = 6 * g * r ** 2 / u ** 2
        c4 = np.maximum((r * (1 + np.sqrt(4 * c2 + 5)) / u) ** 2, local_r2 * big_l ** 2 / u ** 2)
        lr, lk = np.log(r) - np.log(u), np.log(big_l) - np.log(u)    # log(rho/mu), log(kappa)
        l2 = np.maximum(2 * (math.log(1 + math.sqrt(3)) + lr), math.log(g) + 2 * lk)
        root = np.logaddexp(0.0, 0.5 * np.logaddexp(math.log(4) + l2, math.log(5)))
        logs = (math.log(g) + 2 * lr, l2, math.log(6 * g) + 2 * lr,
                np.maximum(2 * (lr + root), math.log(local_r2) + 2 * lk))
    return (c1, c2, c3, c4), logs


@broadcasting
def fedprox_lambda(L, mu, rho, R, n, m, rederived=False):
    """The lambda prescribed by Theorem 1 of paper 004 (both branches; eqs. 34, 54, 82).

    - ``R <= 1/sqrt(n)``: any ``lambda >= max{64 kappa^2 L, (2 kappa v 5) mu
      (2 L^2 R^2 + rho^2/n) / (L^2 R^2 + rho^2/N)} - mu``; the minimum is returned with
      ``is_lower = True``. ``rederived=True`` uses ``128 kappa^2 L`` (see
      :func:`fedprox_constants`, ERRATA).
    - ``R > 1/sqrt(n)``: any ``0 <= lambda <= rho^2 / (n mu R^2)``; the maximum is returned with
      ``is_lower = False``.

    Parameters
    ----------
    L, mu, rho : array_like
        Smoothness, strong convexity (``L >= mu > 0``), gradient deviation ``rho >= 0``.
    R : array_like
        Heterogeneity radius, ``R >= 0``.
    n, m : array_like
        Samples per client and number of clients.
    rederived : bool
        Use the corrected first-branch threshold.

    Returns
    -------
    LambdaPrescription
        ``(lam, is_lower)`` arrays broadcast over the inputs.

    ERRATA
    ------
    The proof of the local bound (case 1, before eq. 71) restates the second branch as
    ``lambda* <= rho^2 / (mu m R^2)``; with ``p_i = 1/m`` and ``n_i = n``,
    ``sum_i p_i / n_i = 1/n``, so eq. (34) gives ``rho^2 / (mu n R^2)`` as in the theorem.
    Deciding numbers: ``m = 10``, ``n = 100``, ``rho = mu = R = 1``: 0.1 printed, 0.01 from (34).
    """
    big_l, u, r = _lmr(L, mu, rho)
    rr = heterogeneity(R)
    nn, mm, n_tot = client_sizes(n, m)
    kappa = big_l / u
    c = 128.0 if flag("rederived", rederived) else 64.0
    homogeneous = rr <= 1 / np.sqrt(nn)
    # Products leave the floats where the lambda does not (n mu R^2 = inf: 0 for 1.2e-161 at
    # rho = 6.6e75, R = 2.2e97, n = 9e92, mu = 8.6e24), so each branch is also taken in logs;
    # R = 0 only reaches the first branch, the second is evaluated everywhere and then masked.
    with np.errstate(all="ignore"):
        ratio_num = 2 * big_l ** 2 * rr ** 2 + r ** 2 / nn
        ratio_den = big_l ** 2 * rr ** 2 + r ** 2 / n_tot
        # rho = 0 and R = 0 is the noiseless homogeneous case: both sides vanish and any
        # lambda above the first term works, so the ratio is taken as 0 there.
        ratio = np.divide(ratio_num, ratio_den,
                          out=np.zeros(np.broadcast(ratio_num, ratio_den).shape),
                          where=ratio_den > 0)
        lower = np.maximum(c * kappa ** 2 * big_l, np.maximum(2 * kappa, 5.0) * u * ratio) - u
        upper = r ** 2 / (nn * u * rr ** 2)
        lL, lu, lr, lR, ln = (np.log(v) for v in (big_l, u, r, rr, nn))
        lk = lL - lu
        l_den = np.logaddexp(2 * lL + 2 * lR, 2 * lr - ln - np.log(mm))
        l_ratio = np.where(l_den > -np.inf, np.logaddexp(np.log(2) + 2 * lL + 2 * lR,
                                                         2 * lr - ln) - l_den, -np.inf)
        l_max = np.maximum(np.log(c) + 2 * lk + lL, np.log(np.maximum(2 * kappa, 5.0)) + lu
                           + l_ratio)
        # max >= 64 L >= 64 mu: subtracting mu loses no digits.
        logs = np.where(homogeneous, l_max + np.log1p(-np.exp(lu - l_max)),
                        2 * lr - ln - lu - 2 * lR)
    lam = from_logs("the lambda of Theorem 1 (paper 004)", np.where(homogeneous, lower, upper),
                    logs)
    return LambdaPrescription(lam, np.asarray(homogeneous))


@broadcasting
def fedprox_lambda_interval(L, mu, rho, R, n, m, rederived=False):
    """Admissible lambda of Theorem 1 of paper 004 as an interval ``[lo, hi]``.

    ``[lambda_min, inf)`` for ``R <= 1/sqrt(n)`` and ``[0, rho^2/(n mu R^2)]`` otherwise; see
    :func:`fedprox_lambda`.

    Returns
    -------
    tuple of ndarray
        ``(lo, hi)``.
    """
    lam, is_lower = fedprox_lambda(L, mu, rho, R, n, m, rederived=rederived)
    lo = np.where(is_lower, lam, 0.0)
    hi = np.where(is_lower, np.inf, lam)
    return scalar_or_array(lo), scalar_or_array(hi)


@broadcasting
def local_case2_lambda(L, mu, rho, R, n, m, printed=False, rederived=False):
    """Minimal lambda of the local-model case ``R <= 1/sqrt(n)``, eqs. (73)/(75) of paper 004.

    Re-derived from eq. (72): with the global bound ``E||w_g - w*_g||^2 <= G b`` (``G = 32``
    as printed, 64 re-derived), the local error is at most
    ``12/(mu+lambda)^2 [4G kappa^2 rho^2/N + (4G kappa^2 + 4) L^2 R^2 + 2 rho^2/n]
    + 3G rho^2/(mu^2 N) + (3G kappa^2 + 3) R^2``, and the bound
    ``6G rho^2/(mu^2 N) + (6G + 6) kappa^2 R^2`` (``192``/``198`` for ``G = 32``) follows once
    ``(mu + lambda)^2 >= 12 [...] / (3G rho^2/(mu^2 N) + (3G + 3) kappa^2 R^2)``.

    Parameters
    ----------
    L, mu, rho, R, n, m : array_like
        As in :func:`fedprox_lambda`.
    printed : bool
        Return the printed eq. (75) instead.
    rederived : bool
        Use ``G = 64`` (ignored when ``printed``).

    Returns
    -------
    float or ndarray
        The minimal lambda (may be negative: then every ``lambda >= 0`` works).

    ERRATA
    ------
    Eq. (73) prints the bracket as ``128 rho^2/N + 132 L^2 R^2 + 2 rho^2/n``; expanding (72)
    gives ``128 kappa^2 rho^2/N + (128 kappa^2 + 4) L^2 R^2 + 2 rho^2/n`` (the ``kappa^2`` of
    ``4 L^2 * 32 rho^2/mu^2`` and of ``4 L^2 * 32 L^2/mu^2`` are dropped), so (73) and (75) are
    too weak when ``kappa > 1``. Deciding numbers: ``mu = rho = 1``, ``L = 2``, ``n = 100``,
    ``m = 10``, ``R = 0``: printed (75) ``sqrt(18.5) - 1 = 3.301``, corrected ``7.155``; at
    ``lambda = 5`` the right side of (72) is ``0.2733 > 0.192`` of eq. (74). Theorem 1's own
    lambda (eq. 82) still implies the corrected condition.
    """
    big_l, u, r = _lmr(L, mu, rho)
    rr = heterogeneity(R)
    nn, _, n_tot = client_sizes(n, m)
    kappa = big_l / u
    with np.errstate(divide="ignore"):      # log 0 = -inf: a term that is 0
        lL, lu, lr, lR, lN, ln = (np.log(v) for v in (big_l, u, r, rr, n_tot, nn))
    lk = lL - lu
    with np.errstate(all="ignore"):        # overflow and underflow: ``bad`` below
        if flag("printed", printed):
            num = 8 * (64 * r ** 2 / n_tot + 66 * big_l ** 2 * rr ** 2 + r ** 2 / nn)
            den = 32 * r ** 2 / (u ** 2 * n_tot) + 33 * kappa ** 2 * rr ** 2
            logs = ([np.log(8 * 64) + 2 * lr - lN, np.log(8 * 66) + 2 * lL + 2 * lR,
                     np.log(8) + 2 * lr - ln],
                    [np.log(32) + 2 * lr - 2 * lu - lN, np.log(33) + 2 * lk + 2 * lR])
        else:
            g = _global_constant(rederived)
            num = 12 * (4 * g * kappa ** 2 * r ** 2 / n_tot
                        + (4 * g * kappa ** 2 + 4) * big_l ** 2 * rr ** 2 + 2 * r ** 2 / nn)
            den = 3 * g * r ** 2 / (u ** 2 * n_tot) + (3 * g + 3) * kappa ** 2 * rr ** 2
            l4gk = np.logaddexp(np.log(4 * g) + 2 * lk, np.log(4.0))
            logs = ([np.log(48 * g) + 2 * lk + 2 * lr - lN, np.log(12) + l4gk + 2 * lL + 2 * lR,
                     np.log(24) + 2 * lr - ln],
                    [np.log(3 * g) + 2 * lr - 2 * lu - lN, np.log(3 * g + 3) + 2 * lk + 2 * lR])
        root = np.sqrt(_ratio(num, den))
    # Where a product or term leaves the floats' range (|log| > 690), the float sums lost a
    # term (L = R = 1e100: inf / inf was NaN for a minimal lambda of 3.9e100; u^2 N = inf
    # dropped a term of den): the ratio from the terms' logarithms there.
    parts = [2 * lk, 2 * lr, 2 * lL, 2 * lR, 2 * lu, 2 * lu + lN, 2 * lk + 2 * lr,
             2 * lk + 2 * lL, *logs[0], *logs[1]]
    bad = reduce(np.logical_or, [np.isfinite(p) & (np.abs(p) > 690) for p in parts])
    if np.any(bad):
        lnum, lden = (reduce(np.logaddexp, terms) for terms in logs)
        with np.errstate(over="ignore", invalid="ignore"):    # den = 0: _ratio's 0 is kept
            root = np.where(bad & (lden > -np.inf), np.exp(0.5 * (lnum - lden)), root)
    return scalar_or_array(root - u)


def _ratio(num, den):
    """``num / den`` of :func:`local_case2_lambda`, 0 where ``den = 0``: there ``rho = R = 0``,
    so ``num = 0`` too and both sides of eq. (72) vanish for every lambda (the minimal lambda
    ``-mu`` says every ``lambda >= 0`` works; it was NaN, 0/0, "overflow" on the command
    line)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    return np.divide(num, den, out=np.zeros(num.shape), where=den > 0)


@broadcasting
def fedprox_global_error_bound(L, mu, rho, R, n, m, rederived=False):
    """Global-model error bound, Theorem 1 eq. (6) of paper 004.

    Encodes ``E||w~_g - w*_g||^2 <= C1/N + C2 (1/n ^ R^2)`` (``^`` = minimum) at the prescribed
    lambda (:func:`fedprox_lambda`), ``N = m n``.

    Parameters
    ----------
    L, mu, rho, R, n, m : array_like
        As in :func:`fedprox_lambda`.
    rederived : bool
        Use the re-derived constants.

    Returns
    -------
    float or ndarray
    """
    return _error_bound("global", L, mu, rho, R, n, m, rederived)


@broadcasting
def fedprox_local_error_bound(L, mu, rho, R, n, m, rederived=False):
    """Local-model error bound, Theorem 1 eq. (7) of paper 004.

    Encodes ``E||w~_i - w*_i||^2 <= C3/N + C4 (1/n ^ R^2)`` for every client.

    Parameters
    ----------
    L, mu, rho, R, n, m : array_like
        As in :func:`fedprox_lambda`.
    rederived : bool
        Use the re-derived constants.

    Returns
    -------
    float or ndarray
    """
    return _error_bound("local", L, mu, rho, R, n, m, rederived)


def _error_bound(which, L, mu, rho, R, n, m, rederived):
    """``C1/N + C2 min(1/n, R^2)`` (eq. 6, ``which="global"``) or ``C3/N + C4 ...`` (eq. 7),
    from the logarithms where the floats lose a term: C1 = 32 rho^2/mu^2 overflowed (rho =
    1e100, mu = 1e-100: inf for the bound 3.2e200 at N = 1e200), 0 * inf of C4 was NaN."""
    first, second = (0, 1) if which == "global" else (2, 3)
    direct, logs = _constants(L, mu, rho, rederived)
    rr = heterogeneity(R)
    nn, _, n_tot = client_sizes(n, m)
    with np.errstate(all="ignore"):
        value = direct[first] / n_tot + direct[second] * np.minimum(1 / nn, rr ** 2)
        log_value = np.logaddexp(logs[first] - np.log(n_tot),
                                 logs[second] + np.minimum(-np.log(nn), 2 * np.log(rr)))
    return from_logs(f"the {which} error bound of Theorem 1 (paper 004)", value, log_value)
