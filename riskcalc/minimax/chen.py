"""Minimax rates of Chen, Zheng, Long and Su, *Minimax estimation for personalized federated
learning* (``../shared/papers/000_7ff2ed2592df3b60.txt``; ``002_...`` is the HTML version).

Every bound of that paper holds "up to constants": ``E[risk] <= C * value`` (upper bounds) or
``>= c * value`` (lower bounds) for constants ``c, C > 0`` that do not depend on the sample sizes,
on ``m`` or on ``R``. The functions return ``value`` with every hidden constant set to 1; the
explicit factors the paper does print (``beta``, ``mu``, ``||l||_inf``, ``sigma^2``) are kept.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import nonnegative, positive, positive_int
from riskcalc.minimax._common import (at_most, heterogeneity, probability_vector,
                                      scalar_or_array, sizes, smooth_convex)


def _require(cond, message):
    if np.any(~np.asarray(cond)):
        raise ValueError(message)


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
    _require(n >= 4 * b / u, f"n_i must be >= 4*beta/mu (Theorem 4 of paper 000), got "
                             f"n_i={n_i!r}, beta={beta!r}, mu={mu!r}")
    return scalar_or_array(b * ls / (u * n))


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
    _require(n_tot >= 4 * b / u, f"N must be >= 4*beta/mu (Theorem 6 of paper 000 with "
                                 f"p_i = n_i/N), got N={N!r}")
    return scalar_or_array(b * ls / (u * n_tot) + b * r ** 2)


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
    _require(n_tot >= 4 * b / u, f"N must be >= 4*beta/mu (Theorem 6 of paper 000 with "
                                 f"p_i = n_i/N), got N={N!r}")
    return scalar_or_array(b * s2 / (u ** 2 * n_tot) + b ** 3 * r ** 2 / u ** 2)


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
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    s2 = nonnegative("sigma2", sigma2)
    r = heterogeneity(R)
    p_arr, n_arr = probability_vector(p, n)
    _require(n_arr >= 4 * b * p_arr / u, "n must satisfy n_i >= 4*beta*p_i/mu (Theorem 6 of "
                                         "paper 000)")
    s = float(np.sum(p_arr ** 2 / n_arr))
    return (float(b * ls / u * s + b * r ** 2),
            float(b * s2 / u ** 2 * s + b ** 3 * r ** 2 / u ** 2))


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
        Dimension (> 0).
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
    dim = positive("d", d)
    t = cx * dia * np.sqrt(dim)
    beta = cx ** 2 * dim / 4.0
    if printed:
        loss_sup = t
        mu0 = (np.exp(t / 2) + np.exp(-t)) ** -2
    else:
        loss_sup = np.logaddexp(0.0, t)
        mu0 = 0.25 / np.cosh(t / 2) ** 2
    return {"loss_sup": scalar_or_array(loss_sup), "sigma2": scalar_or_array(beta),
            "beta": scalar_or_array(beta), "mu0": scalar_or_array(mu0)}


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


def dichotomy_aer_bound(beta, mu, loss_sup, R, N, m):
    """AER of the dichotomous strategy with ``p_i = n_i/N``, eq. (18) of paper 000.

    Encodes ``E[AER] <= C (beta (||l||_inf / (mu N/m) ^ R^2) + beta ||l||_inf / (mu N))``:
    the better of Theorem 4 (``m/N`` branch) and eq. (11) (``R^2`` branch).

    Parameters
    ----------
    beta, mu, loss_sup : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``.
    R, N, m : array_like
        Heterogeneity radius, total sample size, clients (``m <= N``).

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
    return scalar_or_array(b * np.minimum(ls * mm / (u * n_tot), r ** 2) + b * ls / (u * n_tot))


def dichotomy_ier_bound(beta, mu, loss_sup, sigma2, R, n_i, N):
    """IER of the dichotomous strategy with ``p_i = n_i/N``, eq. (19) of paper 000.

    Encodes ``E[IER_i] <= C (beta^3/mu^2 (||l||_inf/(mu n_i) ^ R^2) + beta sigma^2/(mu^2 N))``
    (balanced sizes).

    Parameters
    ----------
    beta, mu, loss_sup, sigma2 : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``, ``sigma^2``.
    R, n_i, N : array_like
        Heterogeneity radius, the client's and the total sample size.

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
        Client weights (probability vector) and sample sizes.

    Returns
    -------
    float
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    p_arr, n_arr = probability_vector(p, n)
    return float(b * ls / u * np.sum(p_arr / n_arr))


def fedprox_aer_bound(beta, mu, loss_sup, R, N, m):
    """FedProx AER with ``p_i = n_i/N`` and balanced sizes, eq. (30) of paper 000.

    Encodes ``E[AER_p(A_FP)] <= C (mu + beta ||l||_inf / mu)
    (1/(N/m) ^ R/sqrt(N/m) + 1/N)``, Theorem 11 / eq. (28) with ``sum p_i/n_i = m/N``,
    ``sum p_i^2/n_i = 1/N`` and ``C_p = m n_max / N ~ 1``.

    Parameters
    ----------
    beta, mu, loss_sup : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``.
    R, N, m : array_like
        Heterogeneity radius, total sample size, clients (``m <= N``).

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    rate = np.minimum(mm / n_tot, r * np.sqrt(mm / n_tot)) + 1.0 / n_tot
    return scalar_or_array((u + b * ls / u) * rate)


def fedprox_aer_bound_weighted(beta, mu, loss_sup, R, p, n):
    """FedProx AER for general weights, Theorem 11 eqs. (25) and (28) of paper 000.

    Encodes ``E[AER_p] <= C (mu/(1 ^ C_p) + (1 v C_p) beta ||l||_inf / mu)
    [(R sqrt(sum p_i/n_i)) ^ (sum p_i/n_i) + sum p_i^2/n_i]`` with the weight-balance constant
    ``C_p = p_max (sum p_i/n_i) / (sum p_i^2/n_i)`` of eq. (25).

    Parameters
    ----------
    beta, mu, loss_sup, R : float
        As in :func:`fedprox_aer_bound`.
    p, n : array_like, 1-d
        Client weights and sample sizes.

    Returns
    -------
    float
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    p_arr, n_arr = probability_vector(p, n)
    s1 = np.sum(p_arr / n_arr)
    s2 = np.sum(p_arr ** 2 / n_arr)
    cp = p_arr.max() * s1 / s2
    pref = u / min(1.0, cp) + max(1.0, cp) * b * ls / u
    return float(pref * (min(r * np.sqrt(s1), s1) + s2))


def fedprox_ier_bound(beta, mu, loss_sup, sigma2, D, R, n_i, N, m):
    """FedProx IER with ``p_i ~ 1/m`` and balanced sizes, Theorem 12 eq. (29) of paper 000.

    Encodes ``E[IER_i(A_FP)] <= C K (R/sqrt(n_i) ^ 1/n_i + sqrt(m)/N)`` with the printed factor
    ``K = (mu + 1/mu)(beta ||l||_inf + (sigma^2 beta^2 + beta^2 + sigma^2)/mu^2) + mu D^2``.
    The last term is ``sqrt(m)/N`` (the PDF text breaks it over two lines), as the three-case
    discussion after eq. (30) confirms: it is ``O(sqrt(m)/N)``, "off by a factor sqrt(m)" from
    ``1/N``, and it crosses ``R/sqrt(n_i)`` at ``R^2 = 1/N``.

    Parameters
    ----------
    beta, mu, loss_sup, sigma2 : array_like
        Smoothness, strong convexity (``beta >= mu``), ``||l||_inf``, ``sigma^2``.
    D : array_like
        Diameter of the parameter domain.
    R, n_i, N, m : array_like
        Heterogeneity radius, the client's and the total sample size, clients.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    s2 = nonnegative("sigma2", sigma2)
    dia = positive("D", D)
    r = heterogeneity(R)
    ni, n_tot, mm = sizes(n_i=n_i, N=N, m=m)
    at_most("n_i", n_i, "N", N)
    at_most("m", m, "N", N)
    k = (u + 1 / u) * (b * ls + (s2 * b ** 2 + b ** 2 + s2) / u ** 2) + u * dia ** 2
    return scalar_or_array(k * (np.minimum(r / np.sqrt(ni), 1 / ni) + np.sqrt(mm) / n_tot))


def fedprox_regime(R, N, m, kind="aer"):
    """Regime of the FedProx comparison that follows eq. (30) of paper 000.

    AER (eq. 30 against eq. 16): regime 0 ``R^2 >= m/N`` (rate ``m/N``, optimal);
    regime 1 ``1/(mN) <= R^2 < m/N`` (rate ``R sqrt(m/N)``, suboptimal against ``R^2 + 1/N``
    unless ``R^2 ~ m/N``); regime 2 ``R^2 < 1/(mN)`` (rate ``1/N``, optimal).
    IER (eq. 29 against eq. 17, ``n_i = N/m``): thresholds ``m/N`` and ``1/N``; rates
    ``m/N``, ``R sqrt(m/N)`` and ``sqrt(m)/N`` (off by ``sqrt(m)``).

    Parameters
    ----------
    R, N, m : array_like
        Heterogeneity radius, total sample size, clients (``m <= N``).
    kind : {"aer", "ier"}

    Returns
    -------
    ndarray of int
        0, 1 or 2 as above.

    ERRATA
    ------
    For the middle AER regime the paper prints "(30) becomes O(m/N)". With
    ``R^2 <= m/N`` the minimum in (30) is ``R sqrt(m/N)``, so the rate is
    ``R sqrt(m/N) + 1/N``; only this form is continuous with the ``O(1/N)`` regime at
    ``R^2 = 1/(mN)``. Deciding numbers: ``m = 100``, ``N = 10^4``, ``R^2 = 10^-6 = 1/(mN)``:
    ``R sqrt(m/N) = 10^-4 = 1/N`` while ``m/N = 10^-2``, a jump by the factor ``m`` at the
    boundary if the printed rate were taken literally.
    """
    r = heterogeneity(R)
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    if kind == "aer":
        low = 1.0 / (mm * n_tot)
    elif kind == "ier":
        low = 1.0 / n_tot
    else:
        raise ValueError(f"kind must be 'aer' or 'ier', got {kind!r}")
    high = mm / n_tot
    r2 = r ** 2
    return np.where(r2 >= high, 0, np.where(r2 >= low, 1, 2))


def fedprox_proof_lambda(R, n: int, m: int, mu: float, theorem: int = 11):
    """The FedProx penalty of the proofs of paper 000 Thms 11 and 12, balanced clients.

    ``000_7ff2ed2592df3b60.txt``, Appendix C.3 (Thm 11, AER) and C.4 (Thm 12, IER), with
    ``n_i = n`` and ``p_i = n_i/N = 1/m``, so ``sum p_i/n_i = 1/n``, ``sum p_i^2/n_i = 1/N``
    (``N = m n``) and eq. (25)'s ``C_p = 1``:

    * Thm 11: ``mu/(16 R^2 n)`` if ``R^2 >= 1/n`` (event A), ``mu/(16 R sqrt(n))`` if
      ``1/(m^2 n) <= R^2 < 1/n`` (B), ``mu m / 16`` below (C); continuous in ``R``;
    * Thm 12: ``c_A m/(D^2 N)`` with ``c_A ~ mu D^2``, i.e. ``mu/n``, if ``R^2 >= m/N = 1/n``
      (A), else ``c_B sqrt(m) / sqrt(R^2 N + 1)`` (B) with ``c_B = mu/16``, the largest
      constant for which the proof's requirement ``p_max lam <= mu/16`` holds for every ``m``.

    Both keep ``lam / m <= mu / 16`` (the condition under which Props 23 and 30 apply), so for
    a few clients the prescribed FedProx stays close to PureLocalTraining.

    Parameters
    ----------
    R : float or array_like
        Heterogeneity radius, >= 0.
    n, m : int
        Samples per client and clients.
    mu : float or array_like
        Strong convexity, > 0 (broadcast with ``R``).
    theorem : {11, 12}

    Returns
    -------
    ndarray
        ``lam``, the broadcast shape of ``R`` and ``mu``.
    """
    R = nonnegative("R", R)
    n, m = positive_int("n", n), positive_int("m", m)
    mu = positive("mu", mu)
    r2 = R ** 2
    if theorem == 11:
        with np.errstate(divide="ignore"):
            return np.where(r2 >= 1 / n, mu / (16 * r2 * n),
                            np.where(r2 >= 1 / (m * m * n), mu / (16 * R * np.sqrt(n)),
                                     mu * m / 16))
    if theorem == 12:
        return np.where(r2 >= 1 / n, mu / n, mu / 16 * np.sqrt(m / (r2 * m * n + 1)))
    raise ValueError(f"theorem must be 11 or 12, got {theorem!r}")
