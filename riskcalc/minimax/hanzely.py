"""Communication and local-oracle complexities of Hanzely, Hanzely, Horvath and Richtarik,
*Lower bounds and optimal algorithms for personalized federated learning*
(``../shared/papers/001_352374a3e1e3397e.txt``).

Objective (2): ``(1/n) sum_i f_i(x_i) + lambda/(2n) sum_i ||x_i - x_bar||^2`` with ``L``-smooth,
``mu``-strongly convex ``f_i`` (``n`` clients); with a finite-sum local structure each ``f_i``
is an average of ``m`` ``L_tilde``-smooth summands. Except for Theorem 3.1 and the explicit
schedule of Theorem 4.2, the complexities are stated up to constants (``O``; the lower bounds,
printed with ``O``, are ``Omega``) and ``eps`` is the relative accuracy inside ``log(1/eps)``.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, flag
from riskcalc.minimax._common import (MAGNITUDE, _offending, broadcasting, counts, from_logs,
                                      nonnegative, positive, scalar_or_array, sizes, smooth_convex)


def _eps(eps):
    """A relative accuracy: in (0, 1) and, as every parameter, at least 1e-100."""
    return as_array("eps", eps, low=MAGNITUDE[0], high=1.0, high_open=True)


def _at_least_mu(lam, u, where="Theorem 3.1 of paper 001"):
    """``lam`` checked against ``lam >= mu``, the hypothesis of ``where``."""
    lm = positive("lam", lam)
    if np.any(lm < u):
        raise ValueError(f"lam must be >= mu ({where}), got "
                         f"{_offending(lm < u, lam=lm, mu=u)}")
    return lm


def _thm31_factor(L, mu, lam):
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = _at_least_mu(lam, u)
    with np.errstate(divide="ignore"):
        worst = np.maximum(np.sqrt(u / lm), np.sqrt(u / (big_l - u)))
    # 10 max{...} itself, not q = 1 - 10 max{...}: q rounds to 1 below mu/lam ~ 1e-34, so its
    # powers and logarithm are taken through log1p(-x) (see the callers).
    return 10 * worst


def _thm31_point(bad, L, mu, lam) -> str:
    """The first point of ``(L, mu, lam)`` (already checked) outside Thm 3.1's corrected
    hypothesis: a grid's refusal named no point (``bounds communication_lower_bound --L
    1e4,50``)."""
    return _offending(bad, **{k: np.asarray(v, dtype=float)
                              for k, v in (("L", L), ("mu", mu), ("lam", lam))})


@broadcasting
def thm31_distance_lower_bound(L, mu, lam, rounds, dist0=1.0, strict=True):
    """Right-hand side of Theorem 3.1, eq. (3) of paper 001.

    ``||x^k - x*||^2 >= 1/4 (1 - 10 max{sqrt(mu/lambda), sqrt(mu/(L - mu))})^{C(k)+1}
    ||x^0 - x*||^2`` for the worst instance, where ``C(k)`` is the number of communication
    rounds among the first ``k`` iterations (span-restricted algorithms, Assumption 3.1).

    Parameters
    ----------
    L, mu, lam : array_like
        Smoothness, strong convexity (``L >= mu``) and ``lam >= mu``.
    rounds : array_like
        ``C(k) >= 0``.
    dist0 : array_like
        ``||x^0 - x*||^2 > 0``.
    strict : bool
        Raise where the base ``q = 1 - 10 max{...}`` is not in ``(0, 1)`` (see ERRATA); with
        ``False`` the printed formula is evaluated as is.

    Returns
    -------
    float or ndarray

    ERRATA
    ------
    Theorem 3.1 is stated for ``L >= mu, lambda >= mu``, but the base ``q`` is positive only
    for ``lambda > 100 mu`` and ``L > 101 mu``. Elsewhere the printed bound is vacuous
    (negative for even ``C(k)``) or false (``q^2`` can exceed 4): ``mu = lambda = 1``, ``L = 2``,
    ``C(k) = 1``: ``q = -9``, bound ``81/4 ||x^0 - x*||^2 = 20.25 ||x^0 - x*||^2``, violated by
    the algorithm that never moves (``x^k = x^0``). Corrected hypothesis:
    ``lambda > 100 mu`` and ``L > 101 mu`` (or a constant smaller than 10).
    """
    x = _thm31_factor(L, mu, lam)
    q = 1 - x
    c = nonnegative("rounds", rounds)
    d0 = positive("dist0", dist0)
    if flag("strict", strict) and np.any(q <= 0):
        raise ValueError("Theorem 3.1 of paper 001 needs 10*max(sqrt(mu/lam), sqrt(mu/(L-mu)))"
                         " < 1, i.e. lam > 100*mu and L > 101*mu; the printed hypothesis "
                         "L >= mu, lam >= mu is not enough (see ERRATA), got "
                         + _thm31_point(q <= 0, L, mu, lam))
    # q^(C+1) as exp((C+1) log1p(-x)) where q > 0: q rounded to 1 gave 0.25 dist0 at
    # mu/lam = 1e-200, C = 1e100 for the 0.25 e^-10 dist0 there is.
    with np.errstate(all="ignore"):
        log_power = (c + 1) * np.log1p(-np.minimum(x, 1))
        power = np.where(q > 0, np.exp(log_power), q ** (c + 1))
        bound = 0.25 * power * d0
    if np.all(q > 0):
        # A bound below the floats is an error giving it: it was 0 (C = 1e6 rounds at
        # L = lam = 1e4, mu = 1: q = 0.9, 0.25 q^(C+1) = 2.8e-45761).
        return from_logs("the bound of Theorem 3.1 (paper 001)", bound,
                         np.log(0.25) + log_power + np.log(d0))
    return scalar_or_array(bound)


@broadcasting
def communication_lower_bound(L, mu, lam, eps, dist0=1.0):
    """Fewest communication rounds allowed by Theorem 3.1 of paper 001 to reach ``eps``.

    The smallest integer ``C >= 0`` with ``1/4 q^{C+1} dist0 <= eps``,
    ``q = 1 - 10 max{sqrt(mu/lambda), sqrt(mu/(L - mu))}``, i.e.
    ``C = max(0, ceil(log(4 eps/dist0)/log q - 1))``: no span-restricted algorithm reaches
    ``||x^k - x*||^2 <= eps`` on the worst instance with fewer rounds. For small ``mu`` this is
    ``~ sqrt(min{L, lambda}/mu) log(dist0/eps) / 10``, the ``Omega(sqrt(min{L,lambda}/mu)
    log 1/eps)`` of the text.

    Parameters
    ----------
    L, mu, lam : array_like
        Smoothness, strong convexity and penalty; ``lam > 100 mu`` and ``L > 101 mu`` (see
        :func:`thm31_distance_lower_bound`, ERRATA).
    eps : array_like
        Target squared distance, ``> 0``.
    dist0 : array_like
        ``||x^0 - x*||^2 > 0``.

    Returns
    -------
    int or ndarray of int
        Floats past 2^63 (:func:`riskcalc.minimax._common.counts`).
    """
    x = _thm31_factor(L, mu, lam)
    ep = positive("eps", eps)
    d0 = positive("dist0", dist0)
    if np.any(x >= 1):
        raise ValueError("Theorem 3.1 of paper 001 needs lam > 100*mu and L > 101*mu "
                         "(10*max(sqrt(mu/lam), sqrt(mu/(L-mu))) < 1), got "
                         + _thm31_point(x >= 1, L, mu, lam))
    ratio = 4 * ep / d0
    # log q as log1p(-x): q rounds to 1 below mu/lam ~ 1e-34 (mu/lam = 1e-40 gave 0 rounds for
    # ~2e21), and counts() keeps past 2^63 the floats that astype(int) wrapped.
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(ratio >= 1, 0.0, np.ceil(np.log(ratio) / np.log1p(-x) - 1 - 1e-12))
    return counts(np.maximum(c, 0))


@broadcasting
def prox_oracle_lower_bound(L, mu, lam, eps):
    """Local proximal-oracle calls, Section 3.2 of paper 001: ``sqrt(min{lambda, L}/mu) log 1/eps``.

    The bound is that of "the construction from Theorem 3.1", so it has its hypotheses
    ``L >= mu``, ``lambda >= mu`` (below them it fell under one call, answered without a note,
    where :func:`thm31_distance_lower_bound` refuses).

    Parameters
    ----------
    L, mu, lam : array_like
        Smoothness, strong convexity (``L >= mu``), penalty ``lam >= mu``.
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    float or ndarray
    """
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = _at_least_mu(lam, u)
    return scalar_or_array(np.sqrt(np.minimum(lm, big_l) / u) * np.log(1 / _eps(eps)))


@broadcasting
def gradient_oracle_lower_bound(L, mu, eps):
    """Local gradient-oracle calls, Section 3.2 of paper 001: ``sqrt(L/mu) log 1/eps``.

    Parameters
    ----------
    L, mu : array_like
        Smoothness and strong convexity, ``L >= mu > 0``.
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    float or ndarray
    """
    big_l, u = smooth_convex("L", L, "mu", mu)
    return scalar_or_array(np.sqrt(big_l / u) * np.log(1 / _eps(eps)))


@broadcasting
def summand_oracle_lower_bound(L_tilde, mu, m, eps):
    """Summand-gradient calls, Section 3.2 of paper 001: ``m + sqrt(m L_tilde/mu) log 1/eps``.

    Client-symmetric algorithms on ``m``-term finite sums with ``L_tilde``-smooth summands.

    Parameters
    ----------
    L_tilde, mu : array_like
        Summand smoothness and strong convexity, ``L_tilde >= mu > 0``.
    m : array_like
        Summands per client.
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Section 2 prints ``(m + sqrt(m L_tilde/mu)) log 1/eps``, Section 3.2 (encoded here)
    ``m + sqrt(m L_tilde/mu) log 1/eps``. Not an error: the Section 2 form is Lan & Zhou's
    (2018) stronger lower bound for randomized incremental gradient methods, a narrower
    class; it is never below the Section 3.2 form (``paper_checks``:
    ``001.sec2.summand-lower-bound``, ratio 1 to 26.9 over m, L_tilde/mu, eps).
    """
    lt, u = smooth_convex("L_tilde", L_tilde, "mu", mu)
    (mm,) = sizes(m=m)
    return scalar_or_array(mm + np.sqrt(mm * lt / u) * np.log(1 / _eps(eps)))
