"""r_j and ||theta_0|| from the clients' pair products, and the covariance their estimates
carry from the clients' random directions (``riskcalc.estimate``, paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 2: theta_j = theta_0 + r_j u_j, u_j uniform on the sphere).

Derived here (``geometry``, M >= 3). ``distances`` is linear in (sq, cross); perturbed by one
source at a time it moves:

* sq_j by s (the spread e_j of ||u_j||_A^2): every pair distance D_jk (k != j) by s, so R by s
  and r_j^2 by ((M - 1) s - s) / (M - 2) = s, every other r_i^2 by (s - s) / (M - 2) = 0, and
  ||theta_0||^2 not at all;
* sq_j by 2 r_j t and theta_j . theta_k by r_j t for every k != j (theta_0's component a_j
  along u_j, of sd t = c sqrt(kappa / d)): no D_jk moves (2 r_j t - 2 r_j t = 0), so no r_i^2;
  ||theta_0||^2 by 2 (M - 1) r_j t / (M (M - 1)) = 2 r_j t / M;
* theta_j . theta_k by c_jk = r_j r_k sqrt(kappa / d) (the overlap b_jk of u_j and u_k):
  D_jk by -2 c_jk, R by -2 c_jk / (M - 1), so r_i^2 by alpha c_jk (1 - (M - 1) [i in {j, k}]),
  alpha = 2 / ((M - 1) (M - 2)), and ||theta_0||^2 by beta c_jk, beta = 2 / (M (M - 1)).

Summing the outer products of these columns over the M + M + M (M - 1) / 2 sources, with
w_jk = c_jk^2, W = sum_(j<k) w_jk and s_j = sum_k w_jk: the r^2 block is diag(a_j^2) +
alpha^2 (W 1 1^T - (M - 1) (1 s^T + s 1^T) + (M - 1)^2 (diag(s) + w)), the r^2 x centre
column alpha beta (W 1 - (M - 1) s), the centre entry sum_j (2 r_j t / M)^2 + beta^2 W:
O(M^2) memory and work (the columns themselves, M^2 / 2 of M^2 numbers, held 6.6 GB at M = 200).
M = 2 (``distances`` then has another form) takes the five columns one by one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distances", "geometry"]


def distances(sq, cross):
    """r_j^2 and ||theta_0||^2 from unbiased estimates ``sq`` of ||theta_j||^2 and ``cross``
    (off the diagonal) of theta_j . theta_k (in one metric).

    M >= 3: the pair distances D_jk = sq_j + sq_k - 2 cross_jk estimate ||theta_j -
    theta_k||^2 = r_j^2 + r_k^2 + O(1/sqrt(d)) (independent uniform directions), solved by
    least squares over the pairs: R = sum_j r_j^2 = sum_(j<k) D_jk / (M - 1) and r_j^2 =
    (sum_(k != j) D_jk - R) / (M - 2); free of theta_0 (the estimate is shift invariant).
    M = 2: r_j^2 = sq_j - cross_12 (theta_j . theta_k = ||theta_0||^2 + O(1/sqrt(d)) needs
    theta_0 in a direction independent of the u_j). ||theta_0||^2: the mean cross product.
    """
    m = len(sq)
    off = cross.sum() - np.trace(cross)
    centre2 = off / (m * (m - 1))
    if m == 2:
        return sq - cross[0, 1], centre2
    D = sq[:, None] + sq[None, :] - 2 * cross
    np.fill_diagonal(D, 0.0)
    total = D.sum() / 2 / (m - 1)
    return (D.sum(axis=1) - total) / (m - 2), centre2


def geometry(values, d: int, kappa: float) -> np.ndarray:
    """Covariance (M + 1, M + 1) of the error of r2 (M,) and centre_norm2 that comes from the
    clients' random directions (``riskcalc.estimate`` module docstring, "Standard errors"; its
    sum over sources in closed form: this module's docstring).

    With theta_j = theta_0 + r_j u_j and the metric A (the identity for least squares,
    Sigma^2 / m2 for the moments), sq_j = ||theta_j||_A^2 = c^2 + r_j^2 (1 + e_j) +
    2 r_j a_j and theta_j . theta_k = c^2 + r_j a_j + r_k a_k + r_j r_k b_jk, with e_j =
    u_j^T A u_j - 1, a_j = theta_0^T A u_j, b_jk = u_j^T A u_k: mean 0, uncorrelated, of
    variances 2 (kappa - 1) / (d + 2), c^2 kappa / d and kappa / d for uniform u_j
    (kappa = tr(A^2) / d, m4 / m2^2 of the two-atom spectrum, 1 for least squares). The
    estimates are linear in (sq, cross) (``distances``), so each source's column is the image
    of its unit perturbation; the plug-in r_j, c are the estimates clipped at 0."""
    r = np.sqrt(np.maximum(values["r2"], 0.0))
    c = np.sqrt(max(float(values["centre_norm2"]), 0.0))
    m = r.size
    spread = r ** 2 * np.sqrt(2 * max(kappa - 1.0, 0.0) / (d + 2))     # sources e_j
    t = c * np.sqrt(kappa / d)                                          # sources a_j
    pair = np.outer(r, r) * np.sqrt(kappa / d)                          # sources b_jk
    if m == 2:
        return _columns(spread, r * t, pair[0, 1])
    alpha, beta = 2.0 / ((m - 1) * (m - 2)), 2.0 / (m * (m - 1))
    w = pair ** 2
    np.fill_diagonal(w, 0.0)
    s = w.sum(axis=1)
    W = s.sum() / 2
    ones = np.ones(m)
    out = np.empty((m + 1, m + 1))
    out[:m, :m] = np.diag(spread ** 2) + alpha ** 2 * (
        W - (m - 1) * (ones[:, None] * s + s[:, None]) + (m - 1) ** 2 * (np.diag(s) + w))
    out[:m, m] = out[m, :m] = alpha * beta * (W - (m - 1) * s)
    out[m, m] = np.sum((2 * r * t / m) ** 2) + beta ** 2 * W
    return out


def _columns(spread, shift, overlap) -> np.ndarray:
    """``geometry`` for M = 2: the images under ``distances`` of its five sources."""
    base = np.concatenate(distances(np.zeros(2), np.zeros((2, 2))), axis=None)
    cols = []
    for j in range(2):
        cols.append((np.eye(2)[j] * spread[j], np.zeros((2, 2))))
        cross = np.zeros((2, 2))
        cross[j, 1 - j] = cross[1 - j, j] = shift[j]
        cols.append((2 * np.eye(2)[j] * shift[j], cross))
    cols.append((np.zeros(2), np.array([[0.0, overlap], [overlap, 0.0]])))
    J = np.array([np.concatenate(distances(sq, cross), axis=None) - base
                  for sq, cross in cols]).T
    return J @ J.T
