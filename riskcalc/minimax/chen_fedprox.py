"""FedProx in paper 000, Chen, Zheng, Long and Su, *Minimax estimation for personalized
federated learning* (``../shared/papers/000_7ff2ed2592df3b60.txt``): the excess-risk upper
bounds of Theorems 11 and 12 (eqs. 25, 28-30), the regimes of the comparison that follows
eq. (30), and the penalty the proofs prescribe (Appendices C.3 and C.4).

Every bound holds "up to constants" (see :mod:`riskcalc.minimax.chen`): the functions return
the rate with the hidden constant ``C`` set to 1.
"""

from __future__ import annotations

import numbers
from decimal import Decimal

import numpy as np

from riskcalc._validate import positive_int
from riskcalc.minimax._common import (at_most, broadcasting, enough_samples,
                                      federation_holds, from_logs, heterogeneity, nonnegative,
                                      positive, probability_vector, scalar_or_array, scalars,
                                      sizes, smooth_convex)


@broadcasting
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
        Heterogeneity radius, total sample size, clients (``m <= N``); Theorem 11 assumes
        every ``n_i >= 4 beta / mu``, so ``N >= 4 beta m / mu``.

    Returns
    -------
    float or ndarray
    """
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    n_tot, mm = sizes(N=N, m=m)
    at_most("m", m, "N", N)
    enough_samples("N", n_tot, b, u, "Theorem 11", m=mm)
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
        Client weights and sample sizes, each ``>= 4 beta / mu`` (Theorem 11).

    Returns
    -------
    float
    """
    scalars(beta=beta, mu=mu, loss_sup=loss_sup, R=R)
    b, u = smooth_convex("beta", beta, "mu", mu)
    ls = positive("loss_sup", loss_sup)
    r = heterogeneity(R)
    p_arr, n_arr = probability_vector(p, n)
    enough_samples("n", n_arr, b, u, "Theorem 11")
    s1 = np.sum(p_arr / n_arr)
    s2 = np.sum(p_arr ** 2 / n_arr)
    cp = p_arr.max() * s1 / s2
    pref = u / min(1.0, cp) + max(1.0, cp) * b * ls / u
    return float(pref * (min(r * np.sqrt(s1), s1) + s2))


@broadcasting
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
        Heterogeneity radius, the client's and the total sample size, clients; Theorem 12
        assumes every ``n_j >= 4 beta / mu``, so ``N >= n_i + (m - 1) 4 beta / mu`` (and
        ``N = n_i`` for ``m = 1``).

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
    enough_samples("n_i", ni, b, u, "Theorem 12")
    federation_holds(ni, n_tot, mm, b, u, "Theorem 12")
    rate = np.minimum(r / np.sqrt(ni), 1 / ni) + np.sqrt(mm) / n_tot
    with np.errstate(all="ignore"):
        k = (u + 1 / u) * (b * ls + (s2 * b ** 2 + b ** 2 + s2) / u ** 2) + u * dia ** 2
        # K's products overflowed (sigma^2 beta^2 / mu^2 (mu + 1/mu) = 1e337 at sigma2 = 1e100,
        # beta = 1e60, mu = 1e-39: inf for the bound 1e237 at R = 0, n_i = N = 1e100), so where
        # the floats lose a term the bound is taken from the terms' logarithms.
        lb, lu, ls2 = np.log(b), np.log(u), np.log(s2)
        squares = np.logaddexp(np.logaddexp(ls2 + 2 * lb, 2 * lb), ls2)
        curv = np.logaddexp(lb + np.log(ls), squares - 2 * lu)
        log_k = np.logaddexp(np.logaddexp(lu, -lu) + curv, lu + 2 * np.log(dia))
    return from_logs("FedProx's IER bound", k * rate, log_k + np.log(rate))


@broadcasting
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
    if not isinstance(kind, str):
        raise ValueError(f"kind must be 'aer' or 'ier', got {kind!r}")
    if kind == "aer":
        low = 1.0 / (mm * n_tot)
    elif kind == "ier":
        low = 1.0 / n_tot
    else:
        raise ValueError(f"kind must be 'aer' or 'ier', got {kind!r}")
    high = mm / n_tot
    r2 = r ** 2
    return np.where(r2 >= high, 0, np.where(r2 >= low, 1, 2))


@broadcasting
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
    # One number: an array of two was numpy's "truth value ... is ambiguous", naming nothing,
    # and array([11]) was taken where [11] was refused.
    if not (isinstance(theorem, (numbers.Real, Decimal)) and not isinstance(theorem, bool)
            and theorem in (11, 12)):
        raise ValueError(f"theorem must be 11 or 12, got {theorem!r}")
    r2 = R ** 2
    if theorem == 11:
        with np.errstate(divide="ignore"):
            return np.where(r2 >= 1 / n, mu / (16 * r2 * n),
                            np.where(r2 >= 1 / (m * m * n), mu / (16 * R * np.sqrt(n)),
                                     mu * m / 16))
    return np.where(r2 >= 1 / n, mu / n, mu / 16 * np.sqrt(m / (r2 * m * n + 1)))
