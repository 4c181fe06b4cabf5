"""The (targets x clients) sums of the covariate-shift limits (``finite_clients.shift``) in O(M).

In ``limits.evaluate`` target t's bias and variance carry, over every other client j (type u)::

    term_tj = alpha_j c_tu + (beta_j - alpha_j delta_j e_tu) a_tu / (1 + delta_j b_tu),

per column j the closed forms alpha_j = r_j^2 om_j^2, beta_j (bias part r_j^2 kap_j, variance
part sigma_j^2 p_j gamma_j vco_j) and delta_j = gamma_j om_j^2, per target and type the
traces (a, b, c, e) (``limits.evaluate``'s F1, at1, f2a2, at2); summed with multiplicities
others_tj = count_j - [j is target t's own client]. Summed literally over M targets and M
clients this is O(M^2) (at 1000 distinct clients more than half of ``advise``'s time under
shift). Derived here: every such sum, and every partial derivative the exact gradients take
of it (``gradient``), is a Cauchy sum ::

    C(y) = sum_a w_a / (1 + x_a y)^k,   k = 1 or 2,

over one index (the clients of a type, rates x_a = delta_a, at the targets' points y = b_tu;
or the targets, rates b_tu, at the clients' points delta_j), and with z = max abs(x_a y) < 1 ::

    C(y) = sum_(n < N) binom(n + k - 1, n) (-y)^n mu_n + R_N,   mu_n = sum_a w_a x_a^n,
    abs(R_N) <= z^N (N + 1 - N z) / (1 - z)^2 sum_a abs(w_a)   (k = 2),
    abs(R_N) <= z^N / (1 - z) sum_a abs(w_a)   (k = 1),

N chosen so that the bound is below 2^-56 sum_a abs(w_a), under the rounding of the literal sum
(which carries ~ M 2^-53 sum_a abs(w_a)). Moments of N powers, then N powers at every point:
O(N (M + targets)) for each type. The terms with z > 1/4 (a client given a large weight: delta_j
= gamma_j om_j^2 grows like p_j^2) are summed literally, so N <= 30. At 1000 clients of weights
~1/M, delta_j b ~ 1e-6 and N = 3. The own client's term (others_tj = count_j - 1) is
subtracted once per target, O(M).
"""

from __future__ import annotations

import numpy as np

#: The series' truncation, relative to sum_a abs(w_a) (module docstring).
EPS = 2.0 ** -56
#: Terms with abs(x_a y) above this are summed literally (N <= 30 below it).
Z_MAX = 0.25


def remove_one(F1, at1, f2a2, at2, delta):
    """psi(Sigma_t) and psi(Sigma_t^2) of ``finite_clients.shift``'s docstring after removing
    one client of rho-weight delta (Sherman-Morrison); arguments broadcast."""
    den = 1.0 + delta * at1
    return F1 / den, f2a2 - delta * at2 * F1 / den


def terms(count_of, x, cols, typ, tgt_groups):
    """The other-client sums of targets in groups ``tgt_groups``: (bias part, variance part)
    sum_j others_tj (alpha_j psi2_tj + beta_b,j psi1_tj) and sum_j others_tj beta_v,j psi1_tj,
    psi the ``remove_one`` of the target's traces with client j (module docstring).

    Parameters
    ----------
    count_of : ndarray (groups,)
    x : tuple of ndarray (targets, T)
        The targets' (a, b, c, e).
    cols : tuple of ndarray (groups,)
        (alpha, beta_b, beta_v, delta) per group.
    typ : ndarray of int (groups,)
    tgt_groups : ndarray of int (targets,)
    """
    a, b, c, e = x
    alpha, beta_b, beta_v, delta = cols
    T = a.shape[1]
    bias = c @ np.bincount(typ, count_of * alpha, minlength=T)
    var = np.zeros_like(bias)
    for u in np.unique(typ):
        J = typ == u
        w = count_of[J] * np.stack([beta_b[J], alpha[J] * delta[J], beta_v[J]])
        S = cauchy(w, delta[J], b[:, u], 1, split_sum=True)
        bias = bias + a[:, u] * (S[0] - e[:, u] * S[1])
        var = var + a[:, u] * S[2]
    # The target's own client once less.
    i = tgt_groups
    rows = np.arange(i.size)
    psi1, psi2 = remove_one(a[rows, typ[i]], b[rows, typ[i]], c[rows, typ[i]], e[rows, typ[i]],
                            delta[i])
    return (bias - (alpha[i] * psi2 + beta_b[i] * psi1), var - beta_v[i] * psi1)


def partials(out, k, u_t, x, cols, count_of, typ, tgt_groups):
    """Add to ``out`` (``limits.evaluate``'s partials) the partial derivatives of targets k's
    sum_j others_tj term_tj in their (a, b, c, e) (rows k of out["targets"], per type), and of
    sum_t u_t (that sum) in the columns (alpha, beta, delta) (out["columns"]); cols =
    (alpha, beta, delta), beta the bias and variance parts together."""
    a, b, c, e = x
    alpha, beta, delta = cols
    tg = out["targets"]
    for u in np.unique(typ):
        J = typ == u
        n, al, be, de = count_of[J], alpha[J], beta[J], delta[J]
        # d/d(a, b, c, e) of sum_j n_j term_tj: sums over the clients j of type u.
        s1 = cauchy(n * np.stack([be, al * de]), de, b[:, u], 1, split_sum=True)
        s2 = cauchy(n * np.stack([be * de, al * de * de]), de, b[:, u], 2, split_sum=True)
        tg[0, k, u] = s1[0] - e[:, u] * s1[1]
        tg[1, k, u] = -a[:, u] * (s2[0] - e[:, u] * s2[1])
        tg[2, k, u] = n @ al
        tg[3, k, u] = -a[:, u] * s1[1]
        # d/d(alpha_j, beta_j, delta_j) of sum_t u_t n_j term_tj: sums over the targets.
        ua, uea = u_t * a[:, u], u_t * e[:, u] * a[:, u]
        t1 = cauchy(np.stack([ua, uea]), b[:, u], de, 1, split_sum=False)
        t2 = cauchy(np.stack([ua * b[:, u], uea * b[:, u]]), b[:, u], de, 2, split_sum=False)
        out["columns"][:, J] += n * np.stack([u_t @ c[:, u] - de * t1[1], t1[0],
                                              -al * t1[1] - be * t2[0] + al * de * t2[1]])
    # The target's own client once less (others_tj = count_j - 1 there).
    i = tgt_groups
    rows = np.arange(i.size)
    ti = typ[i]
    ai, bi, ci, ei = (v[rows, ti] for v in x)
    al, be, de = alpha[i], beta[i], delta[i]
    den = 1.0 + de * bi
    q = ai / den
    m = be - al * de * ei
    for r, d in enumerate((m / den, -m * q * de / den, al, -al * de * q)):
        tg[r, k, ti] -= d
    for r, d in enumerate((ci - de * ei * q, q, -al * ei * q - m * q * bi / den)):
        np.subtract.at(out["columns"][r], i, u_t * d)


def cauchy(w, x, y, power, split_sum):
    """sum_a w[:, a] / (1 + x_a y_b)^power for every point y_b: (len(w), len(y)) (module
    docstring). The terms with abs(x_a y_b) > ``Z_MAX`` are summed literally: those of the
    large rates x_a (``split_sum``: the summed index carries them) or at the large points y_b
    (otherwise)."""
    w = np.atleast_2d(w)
    out = np.zeros((w.shape[0], y.size), dtype=np.result_type(w, x, y))
    if x.size == 0 or y.size == 0:
        return out
    if split_sum:
        small = np.abs(x) * np.max(np.abs(y)) <= Z_MAX
        if not small.all():
            out += _literal(w[:, ~small], x[~small], y, power)
        out += _series(w[:, small], x[small], y, power)
    else:
        small = np.abs(y) * np.max(np.abs(x)) <= Z_MAX
        if not small.all():
            out[:, ~small] = _literal(w, x, y[~small], power)
        out[:, small] = _series(w, x, y[small], power)
    return out


def _literal(w, x, y, power):
    return w @ (1.0 / (1.0 + x[:, None] * y[None, :]) ** power)


def _series(w, x, y, power):
    """The truncated series of ``cauchy`` (every abs(x_a y_b) <= Z_MAX)."""
    if x.size == 0 or y.size == 0:
        return np.zeros((w.shape[0], y.size), dtype=np.result_type(w, x, y))
    z = float(np.max(np.abs(x)) * np.max(np.abs(y)))
    n = 1
    while z > 0 and z ** n * ((n + 1 - n * z) / (1 - z) ** 2 if power == 2
                              else 1 / (1 - z)) > EPS:
        n += 1
    k = np.arange(n)
    coef = k + 1.0 if power == 2 else np.ones(n)
    moments = w @ (x[None, :] ** k[:, None]).T                 # (len(w), n)
    return moments @ (coef[:, None] * (-y[None, :]) ** k[:, None])
