"""Isotropic (Sigma = I) closed forms: the Marchenko-Pastur Stieltjes transform and the ridge limits.

Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 2 and Cor. 3.1: for Sigma = I the limiting
spectrum of the sample covariance X^T X / n with d/n -> gamma is Marchenko-Pastur, with
Stieltjes transform

    m(z) = (1 - gamma - z - sqrt((1 - gamma - z)^2 - 4 gamma z)) / (2 gamma z),

the root of gamma z m^2 - (1 - gamma - z) m + 1 = 0 that is a Stieltjes transform. The ridge
limits are B = ||theta||^2 lam^2 m'(-lam) and V = sigma^2 gamma (m(-lam) - lam m'(-lam)).

Every expression below is algebraically identical to those printed forms but rearranged so that
no two large terms cancel: the printed forms lose all accuracy as lam -> 0 (m grows like 1/lam
when gamma > 1) and when gamma is close to 1.
"""

from __future__ import annotations

import numpy as np


def mp_stieltjes(gamma, lam):
    """Marchenko-Pastur Stieltjes transform and its derivative at z = -lam.

    Paper 003, Thm 2 (closed form of m_i(z) when Cov(x) = I).

    Parameters
    ----------
    gamma : array_like
        Aspect ratio d/n > 0.
    lam : array_like
        Ridge penalty > 0 (m has a pole at 0 when gamma > 1).

    Returns
    -------
    m, dm : ndarray
        m(-lam) and m'(-lam) = dm/dz at z = -lam.

    Notes
    -----
    With b = 1 - gamma + lam and D = sqrt(b^2 + 4 gamma lam) (the square root of the
    discriminant at z = -lam), m = (D - b) / (2 gamma lam) = 2 / (D + b); the first form is
    used when b < 0 and the second when b >= 0. Implicit differentiation of the quadratic gives
    m'(z) = (m + gamma m^2) / ((1 - gamma - z) - 2 gamma z m), whose denominator at z = -lam
    is D, so m'(-lam) = m (1 + gamma m) / D.
    """
    gamma, lam = np.broadcast_arrays(np.asarray(gamma, float), np.asarray(lam, float))
    b = 1.0 - gamma + lam
    disc = np.sqrt(b * b + 4.0 * gamma * lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(b >= 0, 2.0 / (disc + b), (disc - b) / (2.0 * gamma * lam))
    dm = m * (1.0 + gamma * m) / disc
    return m, dm


def isotropic_factors(gamma, lam):
    """Bias per unit ||theta||^2 and variance per unit sigma^2 of ridge(less) regression, Sigma = I.

    Paper 003, Thm 1 (lam = 0: B = r^2 (1 - 1/gamma), V = sigma^2 / (gamma - 1)) and Thm 2 /
    Cor. 3.1 (lam > 0: B = r^2 lam^2 m'(-lam), V = sigma^2 gamma (m(-lam) - lam m'(-lam))).
    For gamma < 1 and lam = 0 the estimator is least squares (B = 0, V = sigma^2 gamma /
    (1 - gamma)); at gamma = 1, lam = 0 the variance is infinite and the bias 0.

    Parameters
    ----------
    gamma, lam : array_like
        Aspect ratio d/n > 0 and penalty >= 0 (broadcast together).

    Returns
    -------
    bias, variance : ndarray
        B / ||theta||^2 and V / sigma^2.

    Notes
    -----
    For lam > 0, lam^2 m' = (lam m) (lam + gamma lam m) / D, and
    m - lam m' = m (D + 1 - gamma - lam) / (2 D), where D + 1 - gamma - lam equals
    4 lam / (D + gamma - 1 + lam) (used when 1 - gamma - lam < 0, to avoid cancellation).
    Everything is written through lam m, which stays O(1) as lam -> 0.
    """
    gamma, lam = np.broadcast_arrays(np.asarray(gamma, float), np.asarray(lam, float))
    ridge = lam > 0
    lam_safe = np.where(ridge, lam, 1.0)
    b = 1.0 - gamma + lam_safe
    disc = np.sqrt(b * b + 4.0 * gamma * lam_safe)
    c = 1.0 - gamma - lam_safe
    # np.where evaluates both branches; the unused one may divide by zero.
    with np.errstate(divide="ignore", invalid="ignore"):
        # lam m(-lam) stays O(1) as lam -> 0 while m itself blows up like 1/lam.
        lm = np.where(b >= 0, 2.0 * lam_safe / (disc + b), (disc - b) / (2.0 * gamma))
        bias_ridge = lm * (lam_safe + gamma * lm) / disc
        # c >= 0 implies b >= 0, where m = 2 / (disc + b) is finite.
        var_ridge = np.where(c >= 0, gamma * (2.0 / (disc + b)) * (disc + c) / (2.0 * disc),
                             2.0 * gamma * lm / ((disc - c) * disc))
        bias0 = np.where(gamma > 1, 1.0 - 1.0 / gamma, 0.0)
        var0 = np.where(gamma > 1, 1.0 / (gamma - 1.0),
                        np.where(gamma < 1, gamma / (1.0 - gamma), np.inf))
    return np.where(ridge, bias_ridge, bias0), np.where(ridge, var_ridge, var0)
