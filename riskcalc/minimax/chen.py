"""Minimax rates of Chen, Zheng, Long and Su, *Minimax estimation for personalized federated
learning* (``../shared/papers/000_7ff2ed2592df3b60.txt``; ``002_...`` is the HTML version).

Every bound of that paper holds "up to constants": ``E[risk] <= C * value`` (upper bounds) or
``>= c * value`` (lower bounds) for constants ``c, C > 0`` that do not depend on the sample sizes,
on ``m`` or on ``R``. The functions return ``value`` with every hidden constant set to 1; the
explicit factors the paper does print (``beta``, ``mu``, ``||l||_inf``, ``sigma^2``) are kept.

This module holds the upper bounds of PureLocalTraining (Theorem 4), FedAvg (Theorem 6) and the
dichotomous strategy (Section 3.3); the lower bounds (Lemma 7, Theorem 8, Corollary 9) are in
:mod:`riskcalc.minimax.chen_lower` and the FedProx bounds (Theorems 11-12) in
:mod:`riskcalc.minimax.chen_fedprox`. Their names stay importable from here.
"""

from __future__ import annotations

import numpy as np

from riskcalc.minimax._common import (_offending, at_most, broadcasting, enough_samples,
                                      from_logs, heterogeneity, nonnegative, positive,
                                      probability_vector, scalar_or_array, scalars, sizes,
                                      smooth_convex)
from riskcalc.minimax.chen_fedprox import (fedprox_aer_bound, fedprox_aer_bound_weighted,
                                           fedprox_ier_bound, fedprox_proof_lambda,
                                           fedprox_regime)
from riskcalc.minimax.chen_lower import (excess_lower_bound_aer, excess_lower_bound_ier,
                                         logistic_constants, lower_bound_aer, lower_bound_ier)

__all__ = [
    "dichotomy_aer_bound", "dichotomy_ier_bound", "dichotomy_threshold",
    "excess_lower_bound_aer", "excess_lower_bound_ier", "fedavg_aer_bound", "fedavg_ier_bound",
    "fedavg_weighted_bounds", "fedprox_aer_bound", "fedprox_aer_bound_weighted",
    "fedprox_ier_bound", "fedprox_proof_lambda", "fedprox_regime", "local_aer_weighted",
    "local_ier_bound", "logistic_constants", "lower_bound_aer", "lower_bound_ier",
]


def _require(cond, message):
    if np.any(~np.asarray(cond)):
        raise ValueError(message)


def _below(n, b, u, name, where):
    """Refuse ``n < 4 beta / mu`` (the hypothesis of ``where``), naming the first point as
    ``_offending`` writes it: the arguments' reprs showed whole lists and numpy's reprs
    (``beta=np.float32(100.0)``), and Theorem 6's refusal N alone (fuzz41 paper F10)."""
    bad = n < 4 * b / u
    if np.any(bad):
        raise ValueError(f"{name} must be >= 4*beta/mu ({where}), got "
                         f"{_offending(bad, **{name: n, 'beta': b, 'mu': u})}")


@broadcasting
def local_ier_bound(beta, mu, loss_sup, n_i):
    """PureLocalTraining individualized excess risk, Theorem 4 of paper 000.

    Encodes ``E_S[IER_i(A_PLT)] <= C * beta * ||l||_inf / (mu * n_i)`` for all ``i`` (``C``
    absolute), the uniform-stability bound of strongly convex ERM; the same value bounds
    ``AER_p`` for every ``p`` when the ``n_i`` are equal.

    Parameters
    ----------
    beta, mu : array_like
        Smoothness of the loss and strong convexity of the local ERM objective (``beta >= mu``).
    loss_sup : array_like
        ``||l||_inf`` (Assumption A(b)).
    n_i : array_like
        The client's sample size; Theorem 4 assumes ``n_i >= 4 beta / mu``.

    Returns
    -------
    float or ndarray
        ``beta * loss_sup / (mu * n_i)``.

    Raises
    ------
    ValueError
        On non-positive input, ``beta < mu`` or ``n_i < 4 beta / mu``.
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    (n,) = sizes(n_i=n_i)
    _below(n, b, u, "n_i", "Theorem 4 of paper 000")
    return scalar_or_array(b * ls / (u * n))


@broadcasting
def fedavg_aer_bound(beta, mu, loss_sup, R, N):
    """FedAvg average excess risk with ``p_i = n_i / N``, Theorem 6 eq. (11, left) of paper 000.

    Encodes ``E_S[AER_p(A_FA)] <= C * (beta * ||l||_inf / (mu * N) + beta * R^2)`` under
    Assumption B(a) (``sum_i p_i ||w_i - w_p||^2 <= R^2``), the special case of eq. (9) at the
    weights that minimize ``sum_i p_i^2 / n_i``.

    Parameters
    ----------
    beta, mu, loss_sup : array_like
        Smoothness, strong convexity (``beta >= mu``) and ``||l||_inf``.
    R : array_like
        Heterogeneity radius, ``R >= 0``.
    N : array_like
        Total sample size; Theorem 6's ``n_i >= 4 beta p_i / mu`` reads ``N >= 4 beta / mu``.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    (n_tot,) = sizes(N=N)
    _below(n_tot, b, u, "N", "Theorem 6 of paper 000 with p_i = n_i/N")
    return scalar_or_array(b * ls / (u * n_tot) + b * r ** 2)


@broadcasting
def fedavg_ier_bound(beta, mu, sigma2, R, N):
    """FedAvg IER with ``p_i = n_i / N``, Theorem 6 eq. (11, right) of paper 000.

    Encodes ``E_S[IER_i(A_FA)] <= C * (beta sigma^2 / (mu^2 N) + beta^3 R^2 / mu^2)`` under
    Assumption B(b) (``||w_i - w_p||^2 <= R^2`` for every ``i``); eq. (10) at ``p_i = n_i/N``.

    Parameters
    ----------
    beta, mu : array_like
        Smoothness and strong convexity, ``beta >= mu``.
    sigma2 : array_like
        Gradient variance at the optimum, ``sigma^2`` of Assumption A(c).
    R, N : array_like
        Heterogeneity radius (``>= 0``) and total sample size (``N >= 4 beta / mu``).

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    s2 = nonnegative("sigma2", sigma2)
    r = heterogeneity(R)
    (n_tot,) = sizes(N=N)
    _below(n_tot, b, u, "N", "Theorem 6 of paper 000 with p_i = n_i/N")
    return _fedavg_ier(b, u, s2, r, 1 / n_tot, -np.log(n_tot))


def _fedavg_ier(b, u, s2, r, s, log_s):
    """``b s2 / u^2 * s + b^3 r^2 / u^2`` of eqs. (10)-(11) (``s = sum_i p_i^2 / n_i``, its log
    ``log_s``): beta^3 R^2 overflowed (beta = R = 1e100: inf for the bound 1e300 at mu = 1e100),
    so where the floats lose it the bound is taken from its terms' logarithms."""
    with np.errstate(all="ignore"):
        direct = b * s2 / u ** 2 * s + b ** 3 * r ** 2 / u ** 2
        lb, lu = np.log(b), np.log(u)
        logs = np.logaddexp(lb + np.log(s2) - 2 * lu + log_s, 3 * lb + 2 * np.log(r) - 2 * lu)
    return from_logs("FedAvg's IER bound", direct, logs)


def fedavg_weighted_bounds(beta, mu, loss_sup, sigma2, R, p, n):
    """FedAvg bounds for general client weights, Theorem 6 eqs. (9)-(10) of paper 000.

    Encodes ``E[AER_p] <= C (beta ||l||_inf / mu * S + beta R^2)`` and
    ``E[IER_i] <= C (beta sigma^2 / mu^2 * S + beta^3 R^2 / mu^2)`` with
    ``S = sum_i p_i^2 / n_i``, which is minimized (to ``1/N``) by ``p_i = n_i / N``.

    Parameters
    ----------
    beta, mu, loss_sup, sigma2, R : float
        As in :func:`fedavg_aer_bound` and :func:`fedavg_ier_bound`.
    p, n : array_like, 1-d
        Client weights (a probability vector) and sample sizes; Theorem 6 assumes
        ``n_i >= 4 beta p_i / mu``.

    Returns
    -------
    tuple of float
        ``(aer_bound, ier_bound)``.
    """
    scalars(beta=beta, mu=mu, loss_sup=loss_sup, sigma2=sigma2, R=R)
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    s2 = nonnegative("sigma2", sigma2)
    r = heterogeneity(R)
    p_arr, n_arr = probability_vector(p, n)
    _require(n_arr >= 4 * b * p_arr / u, "n must satisfy n_i >= 4*beta*p_i/mu (Theorem 6 of "
                                         "paper 000)")
    s = float(np.sum(p_arr ** 2 / n_arr))
    return (float(b * ls / u * s + b * r ** 2), float(_fedavg_ier(b, u, s2, r, s, np.log(s))))


@broadcasting
def dichotomy_threshold(N, m, loss_sup=1.0, mu=1.0):
    """Switching threshold of the dichotomous strategy, Section 3.3 of paper 000.

    The strategy runs FedAvg when ``R^2 <= (||l||_inf / mu) * m / N`` and PureLocalTraining
    otherwise; with ``(||l||_inf, mu)`` of constant order this is the sharp threshold
    ``R^2 ~ m / N`` of eq. (4). Returns the threshold on ``R^2`` (not on ``R``).

    Parameters
    ----------
    N, m : array_like
        Total sample size and number of clients (``m <= N``).
    loss_sup, mu : array_like, optional
        ``||l||_inf`` and ``mu``; the default 1 gives the bare rate ``m / N``.

    Returns
    -------
    float or ndarray
        ``(loss_sup / mu) * m / N``.
    """
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    ls = positive("loss_sup", loss_sup)
    u = positive("mu", mu)
    return scalar_or_array(ls / u * mm / n_tot)


@broadcasting
def dichotomy_aer_bound(beta, mu, loss_sup, R, N, m):
    """AER of the dichotomous strategy with ``p_i = n_i/N``, eq. (18) of paper 000.

    Encodes ``E[AER] <= C (beta (||l||_inf / (mu N/m) ^ R^2) + beta ||l||_inf / (mu N))``:
    the better of Theorem 4 (``m/N`` branch) and eq. (11) (``R^2`` branch).

    Parameters
    ----------
    beta, mu, loss_sup : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``.
    R, N, m : array_like
        Heterogeneity radius, total sample size, clients (``m <= N``); Theorems 4 and 6 assume
        every ``n_i >= 4 beta / mu``, so ``N >= 4 beta m / mu``.

    Returns
    -------
    float or ndarray

    ERRATA
    ------
    Eq. (18) is printed for a general weight vector ``p`` with the local-training term
    ``||l||_inf / (mu N/m)``; Theorem 4 gives PureLocalTraining
    ``AER_p <= beta ||l||_inf / mu * sum_i p_i / n_i``, which equals the printed
    ``beta ||l||_inf m / (mu N)`` only for ``p_i = n_i / N`` and can exceed the whole
    right-hand side of (18) by a factor of order ``m`` otherwise. Deciding numbers:
    ``m = 10``, ``p_i = 1/10``, ``n = (4, 4000, ..., 4000)`` (``N = 36004``):
    ``sum p_i/n_i = 0.025225`` against ``m/N + sum p_i^2/n_i = 0.00027775 + 0.0025225 =
    0.0028002`` (ratio 9.01; it tends to ``m`` as the large sizes grow). Eq. (18) therefore
    needs ``p_i = n_i / N`` (or balanced sizes), the case this function encodes.
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    enough_samples("N", n_tot, b, u, "Theorems 4 and 6", m=mm)
    return scalar_or_array(b * np.minimum(ls * mm / (u * n_tot), r ** 2) + b * ls / (u * n_tot))


@broadcasting
def dichotomy_ier_bound(beta, mu, loss_sup, sigma2, R, n_i, N):
    """IER of the dichotomous strategy with ``p_i = n_i/N``, eq. (19) of paper 000.

    Encodes ``E[IER_i] <= C (beta^3/mu^2 (||l||_inf/(mu n_i) ^ R^2) + beta sigma^2/(mu^2 N))``
    (balanced sizes).

    Parameters
    ----------
    beta, mu, loss_sup, sigma2 : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``, ``sigma^2``.
    R, n_i, N : array_like
        Heterogeneity radius, the client's and the total sample size; Theorems 4 and 6 assume
        ``n_i >= 4 beta / mu``.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    s2 = nonnegative("sigma2", sigma2)
    r = heterogeneity(R)
    ni, n_tot = sizes(n_i=n_i, N=N)
    at_most("n_i", n_i, "N", N)
    enough_samples("n_i", ni, b, u, "Theorems 4 and 6")
    # With n_i >= 4 beta/mu, beta^3/mu^2 = beta kappa^2 <= 6.25e298 and no term leaves the
    # floats for parameters in [1e-100, 1e100] (the largest bound is 1.5e298).
    return scalar_or_array(b ** 3 / u ** 2 * np.minimum(ls / (u * ni), r ** 2)
                           + b * s2 / (u ** 2 * n_tot))


def local_aer_weighted(beta, mu, loss_sup, p, n):
    """PureLocalTraining AER for general weights implied by Theorem 4 of paper 000.

    ``AER_p = sum_i p_i IER_i <= C beta ||l||_inf / mu * sum_i p_i / n_i``.

    Parameters
    ----------
    beta, mu, loss_sup : float
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``.
    p, n : array_like, 1-d
        Client weights (probability vector) and sample sizes, each ``>= 4 beta / mu``
        (Theorem 4).

    Returns
    -------
    float
    """
    scalars(beta=beta, mu=mu, loss_sup=loss_sup)
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    p_arr, n_arr = probability_vector(p, n)
    enough_samples("n", n_arr, b, u, "Theorem 4")
    return float(b * ls / u * np.sum(p_arr / n_arr))
