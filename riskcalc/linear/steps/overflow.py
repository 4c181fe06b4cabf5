"""Divergent personalization steps from the finite-M FedAvg model (Sigma = I) proven past the
floating-point range before the pencils run (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7,
Algs. 5-6, from eq. 6's global model; derived here, with the notation of
``riskcalc.linear.steps.finite_clients``).

Lower bounds. Let client i be the target, S = S_i, A = sum_j p_j S_j (the pooled Gram matrix
of eq. 6, invertible when pooled N > d), B = A - p S (the other clients', p = p_i), and u a
unit eigenvector of S with eigenvalue s > 0. With theta_g = A^-1 sum_j p_j (S_j theta_j +
X_j^T xi_j / n_j), the error after k steps is e = R_k(S) (theta_g - theta_i) + g_k(S) X^T xi /
n (R_k, g_k = (1 - R_k) / s the step polynomials). Since A >= p s u u^T + B,
Sherman-Morrison gives 1 - p s u^T A^-1 u >= c(s) = l_B / (l_B + p s), l_B = lambda_min(B).

* Bias (xi = 0): the part of e linear in the target's deviation delta_i (norm r, uniform
  direction, independent of the rest, mean 0) is -R_k(S) A^-1 B delta_i, so the bias is at
  least (r^2 / d) tr(R_k A^-1 B^2 A^-1 R_k) >= (r^2 / d) sum_u R_k(s)^2 (u^T B A^-1 u)^2 and
  u^T B A^-1 u = 1 - p s u^T A^-1 u >= c(s): bias >= r^2 int c(s)^2 R_k(s)^2 dF(s).
* Variance: the part of e linear in xi_i is (p R_k A^-1 + g_k) X^T xi_i / n, of variance
  (sigma^2 / n) tr(M S M^T), M = p R_k A^-1 + g_k, >= (sigma^2 / n) sum_u s (u^T M u)^2 with
  u^T M u = (1 - R_k(s) (1 - p s u^T A^-1 u)) / s: variance >= sigma^2 gamma int
  (c(s) abs(R_k(s)) - 1)_+^2 / s dF(s).

F = F_gamma (Marchenko-Pastur) as d -> infinity; l_B -> the lower edge of the others' pooled
law (samples weights: (N_o / N) (1 - sqrt(d / N_o))^2, N_o their samples; uniform: at least
(N_o / (M n_max)) times the same edge), > 0 when the others alone have N_o > d. Past the edge
(abs(q_hi) > 1, q = 1 - eta (s + lam), q_hi at s = x_hi), on the window [x_hi - delta, x_hi]
with delta = min(abs(q_hi) / (2 k eta), (x_hi - x_lo) / 2): abs(q)^k >= abs(q_hi)^k (1 -
1 / (2 k))^k >= abs(q_hi)^k / 2, s >= x_hi / 2, abs(R_k) >= (s abs(q)^k - lam) / (s + lam),
c(s) >= c(x_hi), and F's mass >= (2/3) delta^(3/2) sqrt((x_hi - x_lo) / 2) / (2 pi gamma x_hi).
Others' pooled N_o <= d (B singular, or at its hard edge: gamma 2 with 3 clients), gamma != 1
(fuzz39 steps2 F1, F2): Sherman-Morrison on A = A' + p s u u^T, A' = p S' + B, S' = S - s u u^T,
gives 1 - p s u^T A^-1 u = 1 / (1 + p s u^T A'^-1 u) >= l / (l + p s), l = lambda_min(A'), so
the bounds above hold with l in place of l_B. S' >= ell Q, Q the projection on its other
eigenvectors with s > 0 (rank min(n, d) - 1 ~ alpha d, alpha = min(1 / gamma, 1); ell =
(sqrt(gamma) - 1)^2 the law's lower nonzero edge), and B >= b P for the rows of any beta d of
the others' samples (beta <= N_o / d, P the projection on their span, b = beta d w (1 /
sqrt(beta) - 1)^2 their Gram matrix's lower nonzero edge, w the least weight of a row: 1 / N for
samples weights, 1 / (M n_max) uniform). Q and P are independent and uniformly oriented, so
lambda_min(Q + P) -> 1 - sqrt(c+), c+ = (sqrt(alpha (1 - beta)) + sqrt(beta (1 - alpha)))^2 the
top of Wachter's law of the squared cosines of their principal angles, < 1 when alpha + beta > 1
(pooled N > d leaves such beta; at alpha = 1, Q = I - u u^T and lambda_min(Q + P) = 1 - sqrt(1 -
norm(P u)^2) -> 1 - sqrt(1 - beta), the same c+): l >= min(p ell, b) (1 - sqrt(c+)), the largest
over a grid of beta in (1 - alpha, N_o / d). Where both bounds exceed the largest double, the
values are infinite (as on ``steps.limits``' route) without solving (1e6 steps of 0.6 at gamma 1
with 3 clients were refused for memory; fuzz39 steps F8; 1000 of 1 at gamma 2 with 3 clients
took ~90 s, F1 here).
Checked against the pencils (tests): the bounds lie below their values.
"""

from __future__ import annotations

import numpy as np

#: log of the largest double: beyond, a value is infinite.
LOG_MAX = float(np.log(np.finfo(float).max))


def log_bounds(method, gam, r, sigma, count, lam, weights, steps, step_size, target=0):
    """log of the lower bounds of the target's bias and variance after ``steps`` (array)
    divergent steps (module docstring), -inf where they say nothing (others' pooled N <= d
    with the target's gamma 1, a convergent step, r or sigma 0).

    Parameters
    ----------
    method : {"ftfa", "rtfa"}
    gam, r, sigma, count, lam : array_like (groups,)
        As ``finite_clients.steps_group_limits``' (Sigma = I).
    weights : {"samples", "uniform"}
    steps : array_like of int
    step_size : float
    target : int
        The target group.

    Returns
    -------
    log_bias, log_variance : ndarray shaped like ``steps``
    """
    gam, r, sigma, count, lam = (np.asarray(a, dtype=float) for a in (gam, r, sigma, count, lam))
    k = np.asarray(steps, dtype=float)
    none, ok = np.full(k.shape, -np.inf), k >= 1
    g, eta = float(gam[target]), float(step_size)
    lm = float(lam[target]) if method == "rtfa" else 0.0
    inv = count / gam                                  # n_j / d per group (all its clients)
    others = float(np.sum(inv) - 1.0 / g)              # N_o / d: all but the target client
    with np.errstate(over="ignore"):
        q_hi = eta * (lm + (1.0 + np.sqrt(g)) ** 2) - 1.0  # abs(q) at the top (q < -1 there)
    if not 1.0 < q_hi < np.inf:     # step_size 1e308 warned (the pencils answer; steps2 F4)
        return none, none
    if weights == "samples":
        p, per_row = 1.0 / g / np.sum(inv), 1.0 / np.sum(inv)
    else:
        rest = np.ones(gam.size, bool) if count[target] > 1 else np.arange(gam.size) != target
        p, per_row = 1.0 / np.sum(count), float(np.min(gam[rest])) / np.sum(count)
    l_b = _floor(others, g, p, per_row)
    if not l_b > 0.0:
        return none, none
    hi, lo = (1.0 + np.sqrt(g)) ** 2, (1.0 - np.sqrt(g)) ** 2
    k = np.maximum(k, 1.0)
    delta = np.minimum(q_hi / (2.0 * k * eta), 0.5 * (hi - lo))
    log_mass = (np.log(2.0 / 3.0) + 1.5 * np.log(delta) + 0.5 * np.log(0.5 * (hi - lo))
                - np.log(2.0 * np.pi * g * hi))
    log_q = k * np.log(q_hi) - np.log(2.0)             # log of abs(q)^k on the window
    # abs(R_k) >= (hi / 2 abs(q)^k - lam) / (hi + lam), in logs (lam may be 0).
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        head = log_q + np.log(0.5 * hi)
        log_r = head + np.log1p(-np.exp(np.log(lm) - head)) - np.log(hi + lm) if lm else \
            head - np.log(hi)
        log_c = np.log(l_b / (l_b + p * hi))
        amp = log_c + log_r                            # log of c abs(R_k)
        log_bias = 2 * np.log(r[target]) + 2 * amp + log_mass
        log_var = (2 * np.log(sigma[target]) + np.log(g) + log_mass - np.log(hi)
                   + 2 * (amp + np.log1p(-np.exp(-amp))))
    return (np.where(ok & np.isfinite(log_bias), log_bias, -np.inf).reshape(none.shape),
            np.where(ok & np.isfinite(log_var), log_var, -np.inf).reshape(none.shape))


def _floor(others, g, p, per_row):
    """A lower bound l of lambda_min(A - p s u u^T) in the limit (module docstring), 0 where
    none is proven; ``others`` = N_o / d, ``per_row`` the least weight of an other's sample
    row (B >= per_row X_o^T X_o)."""
    if others > 1.0:                # B alone: its lower edge
        return others * per_row * (1.0 - 1.0 / np.sqrt(others)) ** 2
    alpha = min(1.0 / g, 1.0)       # the rank of S's other eigenvectors, per d
    if g == 1.0 or others + alpha <= 1.0:
        return 0.0
    beta = np.linspace(1.0 - alpha, others, 66)[1:-1]     # a subset's rows, per d
    kappa = np.minimum(p * (np.sqrt(g) - 1.0) ** 2,
                       beta * per_row * (1.0 / np.sqrt(beta) - 1.0) ** 2)
    cos2 = (np.sqrt(alpha * (1.0 - beta)) + np.sqrt(beta * (1.0 - alpha))) ** 2
    return float(np.max(kappa * (1.0 - np.sqrt(cos2))))


def overflowed(method, gam, r, sigma, count, lam, weights, steps, step_size, target=0):
    """Where (over ``steps``) the target's bias and variance are both proven past the largest
    double by ``log_bounds``, or are 0 (no signal, no noise anywhere: the callers' rule)."""
    log_bias, log_var = log_bounds(method, gam, r, sigma, count, lam, weights, steps,
                                   step_size, target)
    return (((log_bias > LOG_MAX) | ~np.any(np.asarray(r) > 0))
            & ((log_var > LOG_MAX) | ~np.any(np.asarray(sigma) > 0)))
