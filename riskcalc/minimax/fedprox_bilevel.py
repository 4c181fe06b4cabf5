"""The bilevel FedProx algorithm of *The effect of personalization in FedProx*
(``../shared/papers/004_98172ed3646eef14.txt``): the constants of its Moreau-envelope
reformulation (Lemma 2), its linear rate and inner-loop length (Theorem 2) and its
communication and computation complexities (Corollary 1).

Notation as in :mod:`riskcalc.minimax.fedprox`: ``L``-smooth, ``mu``-strongly convex loss
(``kappa = L/mu``), proximal weight ``lambda``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.minimax._common import (broadcasting, counts, positive, scalar_or_array,
                                      smooth_convex)


@broadcasting
def bilevel_constants(L, mu, lam):
    """Analytic constants of the bilevel FedProx reformulation, Lemma 2 of paper 004.

    ``F_i`` (Moreau envelope of ``L_i`` with parameter ``1/lambda``) is ``mu_g``-strongly
    convex and ``L_g``-smooth with ``mu_g = lambda mu/(lambda + mu)``,
    ``L_g = lambda L/(lambda + L)``; ``h_i`` has ``mu_l = mu + lambda``, ``L_l = L + lambda``;
    the prox map is ``L_w``-Lipschitz with ``L_w = lambda/(lambda + mu)``. Re-derived: for a
    quadratic ``a/2 ||w||^2`` the envelope is ``(a lambda/(a + lambda))/2 ||w||^2``, increasing
    in ``a``, and the prox map is ``w -> lambda w/(a + lambda)``; the printed forms agree.

    Parameters
    ----------
    L, mu : array_like
        Smoothness and strong convexity, ``L >= mu > 0``.
    lam : array_like
        Proximal weight, ``lam > 0``.

    Returns
    -------
    dict
        ``mu_g, L_g, mu_l, L_l, L_w, kappa_g`` (``kappa_g = L_g/mu_g =
        kappa (lambda + mu)/(lambda + L)``).
    """
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = positive("lam", lam)
    mu_g = lm * u / (lm + u)
    l_g = lm * big_l / (lm + big_l)
    out = {"mu_g": mu_g, "L_g": l_g, "mu_l": u + lm, "L_l": big_l + lm,
           "L_w": lm / (lm + u), "kappa_g": l_g / mu_g}
    return {k: scalar_or_array(v) for k, v in out.items()}


@broadcasting
def outer_rate(L, mu, lam, gamma):
    """Linear rate of Theorem 2 of paper 004: ``1 - gamma mu_g/2 - (gamma mu_g)^2/2``.

    From eq. (105)-(106) with ``eps_g = mu_g (1 - gamma mu_g)/2``; requires
    ``0 < gamma < 1/L_g``.

    Parameters
    ----------
    L, mu, lam : array_like
        As in :func:`bilevel_constants`.
    gamma : array_like
        Global step size.

    Returns
    -------
    float or ndarray
    """
    c = bilevel_constants(L, mu, lam)
    g = positive("gamma", gamma)
    if np.any(g * c["L_g"] >= 1):
        raise ValueError(f"gamma must lie in (0, 1/L_g) (Theorem 2 of paper 004), got "
                         f"gamma={gamma!r}, 1/L_g={(1 / np.asarray(c['L_g'])).tolist()!r}")
    x = g * c["mu_g"]
    return scalar_or_array(1 - x / 2 - x ** 2 / 2)


@broadcasting
def inner_loop_iterations(L, mu, lam, gamma, eta):
    """Smallest inner-loop length K meeting eq. (12) of paper 004 (Theorem 2).

    Condition: ``(2 + 64 L_w^2 lambda^2 / mu_g^2) (1 - eta mu_l)^K <= (1 - gamma L_g)^4`` with
    ``gamma < 1/L_g`` and ``eta <= 1/L_l``. Note ``L_w lambda / mu_g = lambda/mu``.

    Parameters
    ----------
    L, mu, lam : array_like
        As in :func:`bilevel_constants`.
    gamma, eta : array_like
        Global and local step sizes. ``eta`` is taken as given: at ``eta = 1/L_l`` written as a
        float, ``1 - eta mu_l = (L - mu)/(L + lam)`` rounds to 0 where ``lam >> L`` (K = 1 for
        3 at ``L = 1.4e-9``, ``mu = 8.6e-16``, ``lam = 5.4e12``); :func:`fedprox_complexity`
        takes that step exactly.

    Returns
    -------
    int or ndarray of int
    """
    c = bilevel_constants(L, mu, lam)
    g = positive("gamma", gamma)
    e = positive("eta", eta)
    # Each range with the value and its bound, as outer_rate's (was the range alone: eta 100
    # at L = 1 was "eta must lie in (0, 1/L_l]"; fuzz39 fuzz2 F2).
    if np.any(g * c["L_g"] >= 1):
        raise ValueError(f"gamma must lie in (0, 1/L_g) (Theorem 2 of paper 004), got "
                         f"gamma={gamma!r}, 1/L_g={(1 / np.asarray(c['L_g'])).tolist()!r}")
    # eta = 1/L_l is admissible; the slack absorbs its rounding.
    if np.any(e * c["L_l"] > 1 + 1e-12):
        raise ValueError(f"eta must lie in (0, 1/L_l] (Theorem 2 of paper 004), got "
                         f"eta={eta!r}, 1/L_l={(1 / np.asarray(c['L_l'])).tolist()!r}")
    x = e * c["mu_l"]
    return _inner_length(lam, mu, g * c["L_g"], x, 1 - x)


def _inner_length(lam, mu, g_lg, x, rest):
    """The smallest ``K >= 1`` of eq. (12): ``(2 + 64 (lam/mu)^2) (1 - x)^K <= (1 - g_lg)^4``
    with ``x = eta mu_l`` and ``rest = 1 - x`` (the caller's, without its rounding where it
    can: :func:`fedprox_complexity`)."""
    lm = np.asarray(lam, dtype=float)
    # log(coef / target), coef = 2 + 64 (L_w lam / mu_g)^2 = 2 + 64 (lam / mu)^2, in logs:
    # (lam / mu)^2 overflows from lam / mu ~ 1e154.
    log_ratio = (np.logaddexp(np.log(2.0), np.log(64.0) + 2 * np.log(lm / np.asarray(mu)))
                 - 4 * np.log1p(-g_lg))
    # -log(1 - x) as -log1p(-x) for small x: 1 - x rounds to 1 below x ~ 1e-16 (mu = lam =
    # 1e-17 at L = 1 gave K = 1); as -log(rest) above 1/2. rest = 0 (L = mu and eta = 1/L_l)
    # solves the inner problem in one step (K = 1); the 0.25 and 0.5 only keep the logarithms
    # finite on entries that np.where discards.
    small = x <= 0.5
    with np.errstate(divide="ignore"):
        step = np.where(small, -np.log1p(-np.where(small, x, 0.25)),
                        -np.log(np.where(small, 0.5, np.maximum(rest, 0.0))))
    return counts(np.maximum(np.ceil(log_ratio / step), 1.0))


def _product(a, b):
    """a * b of two ``counts``: exact integers while it fits int64, else floats."""
    f = np.asarray(a, dtype=float) * np.asarray(b, dtype=float)
    # Both factors integers too: 0 rounds times K = 3.5e27 (a float, past int64) passed the
    # product's test and K's cast to int64 was an OverflowError (a traceback of bounds).
    if np.all(f < 2.0 ** 62) and all(np.asarray(x).dtype.kind in "iu" for x in (a, b)):
        out = np.asarray(a, dtype=np.int64) * np.asarray(b, dtype=np.int64)
        return int(out) if out.ndim == 0 else out
    return counts(f)


@broadcasting
def fedprox_complexity(L, mu, lam, eps, dist0=1.0):
    """Communication and computation of Algorithm 1, Corollary 1 of paper 004 (eqs. 13-14, 118).

    Step sizes ``eta = 1/L_l``, ``gamma = 1/(2 L_g)``. Returned:

    - ``K``: the smallest inner length meeting eq. (12) (:func:`inner_loop_iterations`);
    - ``K_118``: the sufficient ``ceil(2 + (lambda+L)/(lambda+mu) log(1056 kappa^2))``;
    - ``rounds``: smallest ``T`` with ``dist0 * r^T <= eps``, ``r`` of :func:`outer_rate`
      (``dist0`` is the initial value of the Lyapunov sum of the proof);
    - ``gradient_evaluations``: ``rounds * K``;
    - ``rounds_order``: ``kappa_g log(1/eps)`` with ``kappa_g = kappa (lambda+mu)/(lambda+L)``
      (eq. 13), and ``gradient_order``: ``kappa log(1/eps)`` (eq. 14), with ``eps`` read as the
      accuracy relative to ``dist0`` (``log(dist0/eps)``, as ``rounds`` reads it): the
      corollary's O() is for ``eps -> 0``, and an ``eps`` at or above ``dist0`` needs no
      round, so both are 0 there (``log(1/eps)`` was negative for ``eps > 1``).

    Parameters
    ----------
    L, mu, lam : array_like
        As in :func:`bilevel_constants`.
    eps : array_like
        Target squared distance, ``0 < eps``.
    dist0 : array_like
        Initial squared distance (Lyapunov value), ``> 0``.

    Returns
    -------
    dict
    """
    c = bilevel_constants(L, mu, lam)
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = positive("lam", lam)
    ep = positive("eps", eps)
    d0 = positive("dist0", dist0)
    gamma = 1 / (2 * np.asarray(c["L_g"]))
    # eta = 1/L_l: 1 - eta mu_l = (L - mu)/(L + lam) as that quotient: eta mu_l rounded to 1
    # where lam >> L (L = 1.6e-18, lam = 4.2, mu = 2.8e-70: K = 1 for 8, and 15 for 3 where it
    # rounded below 1), and the gradient evaluations with it.
    k = _inner_length(lm, u, gamma * np.asarray(c["L_g"]), (u + lm) / (big_l + lm),
                      (big_l - u) / (big_l + lm))
    # -log r of ``outer_rate``'s r = 1 - x/2 - x^2/2 as -log1p(-(x/2 + x^2/2)): r rounds to 1
    # below x ~ 1e-16 (mu = 1e-16 at L = lam = 1 gave rounds = 0 with rounds_order 3.5e16).
    x = gamma * np.asarray(c["mu_g"])
    rounds = counts(np.maximum(np.ceil(np.log(d0 / ep) / -np.log1p(-(x / 2 + x ** 2 / 2))), 0))
    kappa = big_l / u
    k118 = counts(np.ceil(2 + (lm + big_l) / (lm + u) * (np.log(1056) + 2 * np.log(kappa))))
    log_inv = np.maximum(np.log(d0) - np.log(ep), 0.0)
    out = {"K": k, "K_118": k118, "rounds": rounds, "gradient_evaluations": _product(rounds, k),
           "rounds_order": scalar_or_array(np.asarray(c["kappa_g"]) * log_inv),
           "gradient_order": scalar_or_array(kappa * log_inv)}
    return out
