"""Whether the data are mean zero, as the model has them: paper 003's model (Sec. 2) draws the
features x ~ N(0, Sigma) and y = x^T theta_j + noise, with no intercept, and the estimators of
``riskcalc.estimate.estimator`` read the uncentred second moments as Sigma's. Features shifted
by 5 (X + 5) were estimated as the spectrum two-point:1.08,246.8,0.9 without a word.

Two tests of the null (derived here), each a p-value (the y test exact; the features' exact
for Sigma = c I and a two-moment approximation otherwise, hence ``MEAN_P`` far below 0.05):

* features: with xbar the pooled mean of the N rows and C their sample covariance (divisor
  N - 1), N ||xbar||^2 is independent of C, with mean tr Sigma and the law of a weighted
  chi-square, sum_k s_k chi^2_1 over the eigenvalues s_k of Sigma, and (N - 1) tr C that of
  sum_k s_k chi^2_(N - 1). Satterthwaite's two-moment match of both (h = (tr Sigma)^2 /
  tr Sigma^2 degrees of freedom per chi^2_1) makes N ||xbar||^2 / tr C an F(h, h (N - 1))
  variable, exactly so for Sigma = c I (h = d); h is estimated with tr Sigma^2 by the
  unbiased (N - 1)^2 / ((N - 2)(N + 1)) (tr C^2 - (tr C)^2 / (N - 1)) (Gaussian rows);
* y: client j's y are, given theta_j, n_j independent N(0, v_j) draws, so n_j ybar_j^2 / s_j^2
  (s_j^2 the sample variance) is F(1, n_j - 1); the smallest p-value of the m clients times m
  (Bonferroni) is the p-value of "every client's y is mean zero".
"""

from __future__ import annotations

import numpy as np

#: A p-value below this is reported as data that are not mean zero (``note``). Measured under
#: the null (Gaussian rows, 7 federations of d = 1-500, N = 6-1000, identity, two-point and
#: one-spike spectra, 400-2000 draws each): 0.04-0.07 of the p-values below 0.05, the smallest
#: 5.4e-7 (d = 50, N = 8, one eigenvalue 1000 times the others).
MEAN_P = 1e-9


def mean_test(X, y, inverse, n, t2) -> dict:
    """The tests of the module docstring.

    Parameters
    ----------
    X : ndarray (N, d)
    y : ndarray (N,)
    inverse, n : ndarray
        Each row's client index (0..m-1) and the clients' row counts.
    t2 : float
        tr S^2 of the uncentred S = X^T X / N (the estimator's, reused).

    Returns
    -------
    dict
        ``features_p``, ``features_ratio`` (N ||xbar||^2 / tr C, about 1 for mean-zero
        features) and ``y_p``.
    """
    from scipy.special import betainc

    N = X.shape[0]
    xbar = X.mean(axis=0)
    b2 = float(xbar @ xbar)
    k = N / (N - 1)
    tr_c = k * (float(np.sum(X * X)) / N - b2)
    proj = X @ xbar
    tr_c2 = k * k * (t2 - 2 * float(proj @ proj) / N + b2 * b2)
    a2 = (N - 1) ** 2 / ((N - 2) * (N + 1)) * (tr_c2 - tr_c ** 2 / (N - 1))
    a2 = a2 if a2 > 0 else tr_c2        # rounding: the conservative (larger) estimate
    ratio = N * b2 / tr_c if tr_c > 0 else 1.0
    h = tr_c ** 2 / a2 if tr_c > 0 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        p_x = float(betainc(h * (N - 1) / 2, h / 2, (N - 1) / (N - 1 + ratio)))
        sums = np.bincount(inverse, weights=y)
        mean = sums / n
        ss = np.bincount(inverse, weights=y * y) - n * mean ** 2
        s2 = np.maximum(ss, 0.0) / (n - 1)
        f = n * mean ** 2 / s2
        p_j = betainc((n - 1) / 2, 0.5, (n - 1) / (n - 1 + f))
    p_j = np.where(np.isnan(p_j), 1.0, p_j)      # y 0 within a client: no evidence
    return {"features_p": p_x if np.isfinite(p_x) else 1.0,
            "features_ratio": ratio,
            "y_p": float(min(1.0, n.size * float(np.min(p_j))))}


def note(test) -> str | None:
    """A note when ``test`` (``mean_test``'s dict) rejects mean-zero features or y at
    ``MEAN_P``, else None."""
    if not test:
        return None
    parts = []
    if test["features_p"] < MEAN_P:
        parts.append(f"the features' pooled mean is not 0 (N times its squared norm is "
                     f"{test['features_ratio']:.3g} times what mean-zero rows give; p = "
                     f"{test['features_p']:.2g})")
    if test["y_p"] < MEAN_P:
        parts.append(f"some client's y has a mean other than 0 (p = {test['y_p']:.2g})")
    if not parts:
        return None
    return ("; ".join(parts) + ": the model (Cheng, Chadha & Duchi 2023, Sec. 2) has mean-zero "
            "features and no intercept, and these estimates assume it (a shifted X is read as "
            "a larger covariance): centre X's columns (and each client's y) before estimating "
            "if the data carry an offset or an intercept")
