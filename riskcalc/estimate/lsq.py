"""The least-squares route of ``riskcalc.estimate`` (every client with n_j > d + 2 rows): each
client's own least-squares fit theta_hat_j, and the exact covariance of the estimates built
from it, given the designs, for Gaussian noise (``least_squares``; its derivation is in its
docstring, the estimators in ``riskcalc.estimate``'s).
"""

from __future__ import annotations

import numpy as np

from riskcalc.estimate.pairs import distances

__all__ = ["coefficients", "least_squares"]


def least_squares(X, y, inverse, m):
    """sigma2, rho2, r2, centre_norm2 by local least squares (``riskcalc.estimate`` module
    docstring) and their joint covariance (in ``riskcalc.estimate.FLAT`` order), exact for
    Gaussian noise given the designs (derived here): every estimate is sum_(k,l) A_kl theta_hat_k . theta_hat_l - sum_k c_k s_k (s_k = sigma_k^2
    tr(G_k^-1), G_k = X_k^T X_k) with theta_hat_k = theta_k + e_k, e_k ~ N(0, sigma_k^2
    G_k^-1) independent of each other and of sigma_hat_k^2 ~ sigma_k^2 chi^2_(n_k - d) /
    (n_k - d), so its variance is 4 sum_k sigma_k^2 v_k^T G_k^-1 v_k (v_k = sum_l A_kl
    theta_l) + 2 sum_k A_kk^2 sigma_k^4 tr(G_k^-2) + 4 sum_(k<l) A_kl^2 sigma_k^2 sigma_l^2
    tr(G_k^-1 G_l^-1) + 2 sum_k c_k^2 tr(G_k^-1)^2 sigma_k^4 / (n_k - d), with the estimates
    plugged in (the first term less its plug-in bias); the covariance of two estimates is the
    same sum with each square a product of the two estimates' coefficients."""
    d = X.shape[1]
    theta, ginv = np.empty((m, d)), np.empty((m, d, d))
    sigma2, nres = np.empty(m), np.empty(m)
    for j in range(m):
        rows = inverse == j
        Xj, yj = X[rows], y[rows]
        ginv[j] = np.linalg.inv(Xj.T @ Xj)
        theta[j] = ginv[j] @ (Xj.T @ yj)
        nres[j] = rows.sum() - d
        resid = yj - Xj @ theta[j]
        sigma2[j] = resid @ resid / nres[j]
    trace = np.trace(ginv, axis1=1, axis2=2)
    tr2 = np.einsum("kab,lba->kl", ginv, ginv)           # tr(G_k^-1 G_l^-1)
    gram = theta @ theta.T

    def estimates(P, shift):
        sq = np.diag(P) - shift
        r2, centre2 = distances(sq, P)
        return np.concatenate([shift / trace, sq, r2, [centre2]])

    shift = sigma2 * trace
    values = estimates(gram, shift)
    # The estimates are linear in (P, s): their coefficients A and c (per output). The
    # contractions go through BLAS (optimize): O(m^3 d^2 + m^4) work, not O(m^4 d^2).
    A = coefficients(m)
    c = np.stack([estimates(np.zeros((m, m)), np.eye(m)[k]) for k in range(m)], axis=1)
    v = np.einsum("okl,ld->okd", A, theta, optimize=True)
    lin = 4 * np.einsum("k,okd,kde,pke->op", sigma2, v, ginv, v, optimize=True)
    quad = (2 * np.einsum("okk,pkk,k,k->op", A, A, sigma2 ** 2, np.diag(tr2), optimize=True)
            + 2 * np.einsum("okl,pkl,k,l,kl->op", A, A, sigma2, sigma2,
                            tr2 * (1 - np.eye(m)), optimize=True))
    noise = 2 * np.einsum("ok,pk,k,k->op", c, c, trace ** 2 * sigma2 ** 2, 1.0 / nres,
                          optimize=True)
    # The plug-in lin overstates its value at theta by 2 quad (E[theta_hat theta_hat^T] =
    # theta theta^T + sigma^2 G^-1): lin - 2 quad is unbiased, then made positive semidefinite
    # (lin is); measured, the plain plug-in overstated se(rho_j^2) by up to 1.3 at d = 100.
    w, u = np.linalg.eigh(lin - 2 * quad)
    cov = (u * np.maximum(w, 0.0)) @ u.T + quad + noise
    names = ("sigma2", "rho2", "r2")
    out = {k: values[i * m:(i + 1) * m] for i, k in enumerate(names)}
    out["centre_norm2"] = values[-1]
    # From the order (sigma2, rho2, r2, centre) above to FLAT's (sigma2, r2, rho2, centre).
    order = np.r_[0:m, 2 * m:3 * m, m:2 * m, 3 * m]
    return out, cov[np.ix_(order, order)]


def coefficients(m: int) -> np.ndarray:
    """A (3 m + 1, m, m): each estimate's coefficient of theta_hat_k . theta_hat_l, in the order
    (sigma2, rho2, r2, centre_norm2), symmetric in (k, l). sigma2 has none; rho2_i = sq_i has
    A_ii = 1; r2 and centre_norm2 are ``distances`` of (sq, cross), whose images of a unit
    perturbation are derived in ``riskcalc.estimate.pairs``: sq_k moves r2_k alone (M >= 3;
    M = 2: r2 = sq - cross_12); cross_kl = cross_lk = 1 moves r2_i by alpha (1 - (M - 1)
    [i in {k, l}]) (M = 2: by -1) and centre_norm2 by beta = 2 / (M (M - 1)); each off-diagonal
    pair's coefficient is half its perturbation's image (it counts twice in the sum)."""
    idx = np.arange(m)
    off = 1.0 - np.eye(m)
    A = np.zeros((3 * m + 1, m, m))
    A[m + idx, idx, idx] = 1.0
    A[2 * m + idx, idx, idx] = 1.0
    if m == 2:
        A[2 * m:3 * m] -= 0.5 * off
    else:
        member = (idx[:, None, None] == idx[None, :, None]) | (idx[:, None, None]
                                                              == idx[None, None, :])
        A[2 * m:3 * m] = A[2 * m:3 * m] + 0.5 * (2.0 / ((m - 1) * (m - 2))) * (
            1.0 - (m - 1) * member) * off
    A[3 * m] = off / (m * (m - 1))
    return A
