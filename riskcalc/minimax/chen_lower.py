"""Minimax lower bounds of Chen, Zheng, Long and Su, *Minimax estimation for personalized
federated learning* (``../shared/papers/000_7ff2ed2592df3b60.txt``): the constants of the
logistic instances (Lemma 7, eq. 12), the estimation-error lower bounds (Theorem 8) and the
excess-risk lower bounds (Corollary 9).

Every bound holds "up to constants" (see :mod:`riskcalc.minimax.chen`): the functions return
the rate with the hidden constant ``c`` set to 1.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import flag
from riskcalc.minimax._common import (at_most, broadcasting, from_logs, heterogeneity, positive,
                                      scalar_or_array, sizes, smooth_convex)

_MU0 = "mu0 of Lemma 7 (paper 000)"


@broadcasting
def logistic_constants(c_x, D, d, printed=False):
    """Constants of the logistic lower-bound instances, Lemma 7 / eq. (12) of paper 000.

    Model: features with i.i.d. coordinates bounded by ``c_X``, labels ``y`` with
    ``P(y = 1) = sigmoid(x^T w_i)``, loss ``l = log(1 + exp(-y x^T w))`` on a domain ``W`` of
    diameter ``D`` containing the origin, so ``|x^T w| <= T := c_X D sqrt(d)``. Re-derived:

    - ``||l||_inf = sup_{|t| <= T} log(1 + e^t) = log(1 + e^T)``;
    - ``beta = c_X^2 d / 4`` (Hessian ``x x^T s(1-s) <= x x^T / 4`` and ``||x||^2 <= c_X^2 d``);
    - ``sigma^2 = c_X^2 d / 4`` (at the optimum ``E||grad||^2 = tr E[Hessian]``);
    - ``mu_0 = min_{|t| <= T} s(t)(1 - s(t)) = (e^{T/2} + e^{-T/2})^{-2} = 1 / (4 cosh^2(T/2))``,
      the curvature factor; the strong convexity is ``mu ~ mu_0`` (up to the feature second
      moment), which is what eq. (12) states.

    Parameters
    ----------
    c_x, D : array_like
        Feature bound ``c_X`` and domain diameter ``D`` (both > 0).
    d : array_like
        Dimension, in ``[1, 1e100]`` (a count, as for the other bounds: 0.5 was taken).
    printed : bool
        Return the paper's printed ``||l||_inf`` and ``mu_0`` instead (see ERRATA).

    Returns
    -------
    dict
        ``loss_sup``, ``sigma2``, ``beta``, ``mu0``.

    ERRATA
    ------
    - Lemma 7 prints ``||l||_inf = c_X D sqrt(d)``. The loss reaches ``log(1 + e^T) > T`` when
      ``y x^T w = -T``, so the printed value is not an upper bound; corrected
      ``||l||_inf = log(1 + exp(c_X D sqrt(d)))``. Deciding numbers: ``c_X = D = d = 1``:
      printed 1, attained ``log(1 + e) = 1.3133``.
    - Eq. (12) prints ``mu_0 = (exp(c_X D sqrt(d)/2) + exp(-c_X D sqrt(d)))^{-2}``; the minimum
      of ``e^t / (1 + e^t)^2`` over ``|t| <= T`` is ``(e^{T/2} + e^{-T/2})^{-2}`` (the second
      exponent lacks its ``/2``). The printed value exceeds the true minimum curvature, so it is
      not a valid strong-convexity constant. Deciding numbers: ``T = 2``: printed
      ``(e + e^-2)^-2 = 0.12280``, corrected ``(e + e^-1)^-2 = 0.10499``.
    - The proof says ``x/(1+x)^2`` "is decreasing on (0, 1) and increasing on (1, inf)"; it is
      the reverse (derivative ``(1-x)/(1+x)^3``), which is what makes the minimum sit at the
      endpoints ``x = e^{+-T}``.
    """
    cx = positive("c_x", c_x)
    dia = positive("D", D)
    (dim,) = sizes(d=d)
    t = cx * dia * np.sqrt(dim)
    beta = cx ** 2 * dim / 4.0
    with np.errstate(all="ignore"):
        # mu_0 = e^-T (...)^-2 is below the floats from T ~ 708 (it printed 0: c_X = D = 1,
        # d = 1e6 gave the strong convexity 0), so it is taken from its logarithm.
        if flag("printed", printed):
            loss_sup = t
            mu0 = from_logs(_MU0, (np.exp(t / 2) + np.exp(-t)) ** -2,
                            -2 * np.logaddexp(t / 2, -t))
        else:
            loss_sup = np.logaddexp(0.0, t)
            mu0 = from_logs(_MU0, 0.25 / np.cosh(t / 2) ** 2, -t - 2 * np.log1p(np.exp(-t)))
    return {"loss_sup": scalar_or_array(loss_sup), "sigma2": scalar_or_array(beta),
            "beta": scalar_or_array(beta), "mu0": mu0}


@broadcasting
def lower_bound_aer(d, N, m, R):
    """Minimax lower bound on the average estimation error, Theorem 8 eq. (14) of paper 000.

    Encodes ``inf sup_{P_1} (1/N) sum_i n_i E||w_hat_i - w_i||^2 >= c (d/(N/m) ^ R^2 + d/N)``
    for the logistic model with balanced sizes (``n_i ~ n_j``) and ``p_i = n_i / N``; ``^`` is
    the minimum.

    Parameters
    ----------
    d, N, m : array_like
        Dimension, total sample size, number of clients (``m <= N``).
    R : array_like
        Heterogeneity radius of Assumption B(a), ``R >= 0``.

    Returns
    -------
    float or ndarray
        ``min(d m / N, R^2) + d / N``.
    """
    dim, n_tot, mm = sizes(d=d, N=N, m=m)
    at_most("m", m, "N", N)
    r = heterogeneity(R)
    return scalar_or_array(np.minimum(dim * mm / n_tot, r ** 2) + dim / n_tot)


@broadcasting
def lower_bound_ier(d, n_i, N, R):
    """Minimax lower bound on one client's estimation error, Theorem 8 eq. (15) of paper 000.

    Encodes ``inf sup_{P_2} E||w_hat_i - w_i||^2 >= c (d/n_i ^ R^2 + d/N)`` for every ``i``
    (logistic model, balanced sizes, Assumption B(b)).

    Parameters
    ----------
    d, n_i, N : array_like
        Dimension, the client's sample size and the total sample size (``n_i <= N``).
    R : array_like
        Heterogeneity radius, ``R >= 0``.

    Returns
    -------
    float or ndarray
        ``min(d / n_i, R^2) + d / N``.
    """
    dim, ni, n_tot = sizes(d=d, n_i=n_i, N=N)
    at_most("n_i", n_i, "N", N)
    r = heterogeneity(R)
    return scalar_or_array(np.minimum(dim / ni, r ** 2) + dim / n_tot)


@broadcasting
def excess_lower_bound_aer(mu, beta, N, m, R):
    """Minimax lower bound on the average excess risk, Corollary 9 eq. (16) of paper 000.

    Encodes ``E[AER_p(A) 1_E] >= c mu (beta/(N/m) ^ R^2 + beta/N)``: Theorem 8 with
    ``beta ~ d`` (Lemma 7) and ``mu``-strong convexity of the population losses. Assumes
    ``n_i >= C beta``, ``m <= C' (N/m)^c`` and balanced sizes.

    Parameters
    ----------
    mu, beta : array_like
        Strong convexity and smoothness (``beta >= mu``).
    N, m, R : array_like
        Total sample size, clients (``m <= N``), heterogeneity radius.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    r = heterogeneity(R)
    return scalar_or_array(u * (np.minimum(b * mm / n_tot, r ** 2) + b / n_tot))


@broadcasting
def excess_lower_bound_ier(mu, beta, n_i, N, R):
    """Minimax lower bound on one client's excess risk, Corollary 9 eq. (17) of paper 000.

    Encodes ``E[IER_i(A) 1_{E_i}] >= c mu (beta/n_i ^ R^2 + beta/N)``.

    Parameters
    ----------
    mu, beta : array_like
        Strong convexity and smoothness (``beta >= mu``).
    n_i, N, R : array_like
        The client's and the total sample size (``n_i <= N``), heterogeneity radius.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ni, n_tot = sizes(n_i=n_i, N=N)
    at_most("n_i", n_i, "N", N)
    r = heterogeneity(R)
    return scalar_or_array(u * (np.minimum(b / ni, r ** 2) + b / n_tot))
