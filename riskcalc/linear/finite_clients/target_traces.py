"""The six target traces of FTFA and RTFA at Sigma = I (``finite_clients.identity``, step 5):
closed forms where the poles -lam and -u are apart (``ridge_traces``), Marchenko-Pastur
quadrature near each other (``mp_quadrature.mp_expect``).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine.mp_quadrature import mp_expect


def target_traces(gamma, lam, p, u, strict=True):
    """tau(f), tau(f (b+t)^-2), tau(f S (b+t)^-2), tau(f S^2 (b+t)^-2), tau(f S (b+t)^-1),
    tau(h (b+t)^-1) for FTFA or RTFA targets, one column per group (b + t = p (S + u),
    f = R^2; step 5). lam = 0 is FTFA: f = P^perp, whose traces are (1 - 1/gamma)_+ phi(0)."""
    perp = np.maximum(1.0 - 1.0 / gamma, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        J = np.array([perp, np.where(perp > 0, perp / (p * u) ** 2, 0.0), 0 * perp, 0 * perp,
                      0 * perp, 0 * perp])
    ridge = np.real(lam) > 0
    # Closed forms where the poles -lam and -u are apart (``ridge_traces``); quadrature near
    # lam = u, where the partial fractions would cancel.
    edge = (1.0 - np.sqrt(gamma)) ** 2
    closed = ridge & (np.abs(u - lam) >= _APART * (edge + np.maximum(np.abs(u), np.abs(lam))))
    if closed.any():
        J = J.astype(np.result_type(J, lam, u, p))
        J[:, closed] = ridge_traces(gamma[closed], lam[closed], p[closed], u[closed])
    ridge = ridge & ~closed
    if ridge.any():
        lr, ur, pr = lam[ridge, None], u[ridge, None], p[ridge]
        # Each integrand over its size at s = 1, k = (lam / (1 + lam))^2 and (1 + u)^-1 per
        # pole -u: the rules agree to 1e-12 (1 + value), absolute for small values (lam
        # 1.3e-4 beside u 0.63, gamma 3.6e-7: J1 off by 6e-8; fuzz42 rtfa F4).
        f0, f1, f2, f3, h = mp_expect(gamma[ridge], lambda s, lr, ur: (
            ((1.0 + lr) / (s + lr)) ** 2,
            ((1.0 + lr) * (1.0 + ur) / ((s + lr) * (s + ur))) ** 2,
            s * ((1.0 + lr) * (1.0 + ur) / ((s + lr) * (s + ur))) ** 2,
            (s * (1.0 + lr) * (1.0 + ur) / ((s + lr) * (s + ur))) ** 2,
            s * ((1.0 + lr) / (s + lr)) ** 2 * (1.0 + ur) / (s + ur)), lr, ur, strict=strict)
        k, v = (lr[:, 0] / (1.0 + lr[:, 0])) ** 2, 1.0 + ur[:, 0]
        f0, f1, f2, f3, h = k * f0, k * f1 / v ** 2, k * f2 / v ** 2, k * f3 / v ** 2, k * h / v
        J[:, ridge] = [f0, f1 / pr ** 2, f2 / pr ** 2, f3 / pr ** 2, h / pr,
                       h / (lr[:, 0] * pr)]
    return J


#: ``ridge_traces`` is used where |u - lam| >= _APART (e + max(u, lam)), e = (1 - sqrt(gamma))^2
#: the lower edge of the continuous spectrum: its partial fractions divide differences of
#: Stieltjes transforms by u - lam, each losing a factor ~ (e + max(u, lam)) / |u - lam| <= 2.
_APART = 0.5


def ridge_traces(gamma, lam, p, u):
    """The six RTFA traces of ``target_traces`` in closed form (derived here; complex-safe in
    lam, p, u for ``finite_clients.gradient``'s complex steps). The law of S is
    (1 - 1/gamma)_+ delta_0 plus a continuous part nu; the atom contributes
    (1 - 1/gamma)_+ F(0) to tau(F) (F(0) = 1, 1/u^2, 0, 0, 0 for the five integrands below).
    With A_k = nu((s + lam)^-k), B_k = nu((s + u)^-k) (k = 1, 2: ``continuous``),
    delta = u - lam and C = nu((s + lam)^-1 (s + u)^-1) = (A_1 - B_1) / delta, the partial
    fractions of 1/(s + lam) - 1/(s + u) = delta / ((s + lam)(s + u)) and
    s / ((s + lam)(s + u)) = (u / (s + u) - lam / (s + lam)) / delta give ::

        nu(f) = lam^2 A_2,
        nu(f (b+t)^-2) p^2 = lam^2 (A_2 + B_2 - 2 C) / delta^2,
        nu(f S (b+t)^-2) p^2 = lam^2 ((lam + u) C - lam A_2 - u B_2) / delta^2,
        nu(f S^2 (b+t)^-2) p^2 = lam^2 (lam^2 A_2 + u^2 B_2 - 2 lam u C) / delta^2,
        nu(f S (b+t)^-1) p = lam^2 (u C - lam A_2) / delta,

    and the last trace is the fifth over lam p (f = lam^2 (S + lam)^-2, b + t = p (S + u)).
    The atom is kept apart because its terms cancel exactly in these sums (e.g. (lam + u) /
    (lam u) - 1/lam - 1/u = 0) and would otherwise swamp nu's."""
    a1, a2 = continuous(gamma, lam)
    b1, b2 = continuous(gamma, u)
    atom = np.maximum(1.0 - 1.0 / gamma, 0.0)
    delta = u - lam
    c = (a1 - b1) / delta
    l2 = lam ** 2
    # Divided by (delta p)^2 and (u p)^2 ~ t^2, not by delta^2 and then p^2: gamma_j 1e-100
    # beside 1e100 (p = 1e-200, u = 1e200) overflowed one and underflowed the other, NaN
    # (fuzz42 misc F4).
    dp2 = (delta * p) ** 2
    h = l2 * (u * c - lam * a2) / delta
    with np.errstate(divide="ignore", invalid="ignore"):
        at0 = np.where(atom > 0, atom / (u * p) ** 2, 0.0)   # u = 0 only at M = 1, gamma < 1
    return np.array([atom + l2 * a2, at0 + l2 * (a2 + b2 - 2.0 * c) / dp2,
                     l2 * ((lam + u) * c - lam * a2 - u * b2) / dp2,
                     l2 * (l2 * a2 + u * (u * b2) - 2.0 * lam * u * c) / dp2,
                     h / p, h / (lam * p)])


def continuous(gamma, x):
    """nu((s + x)^-1) and nu((s + x)^-2) for the continuous part nu of the Marchenko-Pastur
    law of ratio gamma, x > 0, without cancellation and complex-safe (the branch is chosen on
    the real part). gamma <= 1: nu is the law, with m(-x) = 2 / (D + b) or (D - b) / (2 gamma
    x) (b = 1 - gamma + x, D = sqrt(b^2 + 4 gamma x); ``engine.marchenko_pastur``) and
    m'(-x) = m (1 + gamma m) / D. gamma > 1: nu is 1/gamma times the law of gamma S' with S'
    of ratio 1/gamma (``mp_quadrature``), so nu((s + x)^-k) = gamma^(-1-k) m'_(1/gamma)'s
    k-th transform at x / gamma."""
    gamma = np.asarray(gamma, dtype=float)
    big = gamma > 1
    c = np.where(big, 1.0 / gamma, gamma)
    y = np.where(big, x / gamma, x)
    b = 1.0 - c + y
    disc = np.sqrt(b * b + 4.0 * c * y)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(np.real(b) >= 0, 2.0 / (disc + b), (disc - b) / (2.0 * c * y))
    dm = m * (1.0 + c * m) / disc
    return np.where(big, m / gamma ** 2, m), np.where(big, dm / gamma ** 3, dm)
