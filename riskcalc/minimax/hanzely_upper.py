"""Upper complexities of paper 001 (Hanzely, Hanzely, Horvath and Richtarik,
``../shared/papers/001_352374a3e1e3397e.txt``), Section 4 and Tables 1-2: APGD1/APGD2, IAPGD+AGD,
IAPGD+Katyusha, AL2SGD+ and the algorithm matching both lower bounds (``optimal_method``); the
lower bounds of Section 3 are ``riskcalc.minimax.hanzely``, whose notation this follows.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import flag, one_of
from riskcalc.minimax._common import (_offending, broadcasting, counts, positive,
                                      scalar_or_array, sizes, smooth_convex)
from riskcalc.minimax.hanzely import _at_least_mu, _eps


#: Why Sec. 4's orders refuse lam < mu (apgd1 was 6.9e-6 at lam = 1e-10, mu = 1, eps = 1/2).
_BELOW_ONE = "under one round per log(1/eps) below it"


@broadcasting
def apgd_complexity(L, mu, lam, eps):
    """Upper complexities of APGD1 and APGD2, Section 4.1 / Table 1 of paper 001.

    APGD1 (prox steps on ``f``, FedProx with momentum): communications = local prox calls
    ``sqrt(lambda/mu) log 1/eps``; APGD2 (gradient steps on ``f``): communications = local
    gradient calls ``sqrt(L/mu) log 1/eps``. Non-accelerated counterparts eqs. (5)/(6):
    ``L/mu log 1/eps`` and ``lambda/mu log 1/eps``.

    Parameters
    ----------
    L, mu, lam : array_like
        Smoothness, strong convexity (``L >= mu``), penalty ``lam >= mu``: (6) is proximal
        gradient descent on ``h = lam psi + mu/(2n) ||x||^2``, of condition number
        ``(lam + mu)/mu``, which ``lam/mu`` matches up to a factor 2 only for ``lam >= mu``
        (below it the printed order is under one round: ``paper_checks`` claim
        ``001.sec41.below-mu``, erratum-harmless).
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    dict
        ``apgd1``, ``apgd2``, ``pgd_grad`` (eq. 5), ``pgd_prox`` (eq. 6): orders, rates
        without their constants, not counts.
    """
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = _at_least_mu(lam, u, f"Sec. 4.1 of paper 001: the condition number of (6) is "
                              f"(lam + mu)/mu, read as lam/mu; {_BELOW_ONE}")
    log_inv = np.log(1 / _eps(eps))
    out = {"apgd1": np.sqrt(lm / u) * log_inv, "apgd2": np.sqrt(big_l / u) * log_inv,
           "pgd_grad": big_l / u * log_inv, "pgd_prox": lm / u * log_inv}
    return {k: scalar_or_array(v) for k, v in out.items()}


@broadcasting
def iapgd_agd_complexity(L, mu, lam, n, eps, gap0=1.0, printed=False):
    """IAPGD + AGD with the explicit schedule of Theorem 4.2 of paper 001.

    ``F(x^k) - F* <= 8 q^k (F(x^0) - F*)`` when AGD runs
    ``T_k = sqrt((L+lambda)/(mu+lambda)) log(1152 L lambda n^2 (2 sqrt(lambda/mu) + 1)^2/mu^2)
    + 4 sqrt(mu (L+lambda)/(lambda (mu+lambda))) k`` steps at round ``k``, with the contraction
    ``q = 1 - sqrt(mu/(lambda + mu))`` of (6)'s condition number ``(lambda + mu)/mu`` (the
    theorem prints ``1 - sqrt(mu/lambda)``: ERRATA). Returned:
    ``rounds`` = smallest ``K`` with ``8 q^K gap0 <= eps``; ``local_steps``
    = ``sum_{k<K} T_k`` (before rounding each ``T_k`` up); ``rounds_order`` =
    ``sqrt(lambda/mu) log 1/eps``; ``local_order`` = ``sqrt((L+lambda)/mu) log(1/eps)
    (log(L lambda n/mu^2) + log 1/eps)`` (see ERRATA). In the orders ``eps`` is the accuracy
    relative to ``gap0`` (``log(gap0/eps)``, 0 for ``eps >= gap0``: the theorem's O() is for
    ``eps -> 0``; ``log(1/eps)`` was negative for ``eps > 1``).

    Parameters
    ----------
    L, mu : array_like
        Smoothness and strong convexity, ``L >= mu``.
    lam : array_like
        Penalty; the momentum ``(sqrt(lambda) - sqrt(mu))/(sqrt(lambda) + sqrt(mu))`` and the
        rate need ``lam > mu``.
    n : array_like
        Number of clients.
    eps : array_like
        Target optimality gap ``> 0``.
    gap0 : array_like
        Initial gap ``F(x^0) - F* > 0``.
    printed : bool
        Count ``rounds`` (and the ``local_steps`` over them) with the theorem's printed rate
        ``q = 1 - sqrt(mu/lambda)`` instead, which undercounts them near ``lambda = mu``.

    Returns
    -------
    dict

    ERRATA
    ------
    The local gradient complexity is printed as ``O(sqrt((L+lambda)/mu) log(1/eps) (log(L
    lambda n/mu) + log 1/eps))``; summing the theorem's own schedule ``T_k`` over the
    ``K ~ sqrt(lambda/mu) log 1/eps`` rounds gives ``log(1152 L lambda n^2 (2 sqrt(lambda/mu)
    + 1)^2/mu^2)`` in its place, at most ``2 log(L lambda n/mu^2) + log 10368``. The printed
    ``L lambda n/mu`` has the dimension of a curvature: rescaling every ``f_i`` by ``s`` (L, mu,
    lambda times ``s``) leaves the schedule and every count unchanged but moves the printed log
    by ``log s``; at ``L = mu = 1e-60``, ``lambda = 1e-50``, ``n = 10``, ``eps = 1e-3`` the
    printed order is -7.3e7 (the same instance at ``mu = 1``: 2.2e7; the schedule sums to
    6.9e7 steps at both). Corrected: ``log(L lambda n/mu^2)``, which equals the printed one at
    ``mu = 1``; the ``O~(sqrt((L+lambda)/mu))`` conclusion stands (``paper_checks`` claim
    ``001.thm42.local-order-scale``).

    The rate ``1 - sqrt(mu/lambda)`` is too fast below ``lambda = (3 + sqrt(5))/2 mu = 2.618
    mu``, where it meets the squared spectral radius of Alg. 1's iteration: exact-prox
    IAPGD exceeds its bound 1.5e12-fold at ``lambda = 1.01 mu`` (439-fold at ``1.1 mu``),
    where ``1 - sqrt(mu/(lambda + mu))`` holds (``paper_checks`` claim
    ``001.sec41.below-mu``). Alg. 1 with exact prox steps, run in mpmath (60 digits) on the
    consensus direction of curvature ``mu`` (the slowest), needs 167 rounds to a gap of
    ``1e-100`` at ``lambda = mu (1 + 2e-16)`` (the gap contracts 0.25 a round), 194 at
    ``1.5 mu`` and 216 at ``2 mu``; the printed rate counts 7, 138 and 190, the corrected one
    190, 233 and 270, and ``F(x^k) - F*`` stays within 1.47 times ``q^k (F(x^0) - F*)`` for
    ``lambda/mu`` from ``1 + 2e-16`` to ``1e6``. The two rates agree for ``lambda >> mu``.
    """
    big_l, u = smooth_convex("L", L, "mu", mu)
    lm = positive("lam", lam)
    if np.any(lm <= u):
        # was "got lam=[1, 2]": neither mu nor the entry (fuzz40 paper F4)
        raise ValueError(f"lam must be > mu (Theorem 4.2 of paper 001: Alg. 1's momentum "
                         f"(sqrt(lam) - sqrt(mu))/(sqrt(lam) + sqrt(mu)) and the printed "
                         f"factor 1 - sqrt(mu/lam) are 0 at lam = mu and negative below), got "
                         f"{_offending(lm <= u, lam=lm, mu=u)}")
    (nn,) = sizes(n=n)
    ep = positive("eps", eps)
    g0 = positive("gap0", gap0)
    # -log(q) as -log1p(-sqrt(mu / (lam [+ mu]))): q rounds to 1 below mu / lam ~ 1e-32 (mu =
    # 1e-40 gave rounds = 0 after a division by zero). u / (lm + u), not 1 / (lm / u + 1):
    # lm / u overflows at lam = 1e100, mu = 1e-100.
    shrink = np.sqrt(u / lm) if flag("printed", printed) else np.sqrt(u / (lm + u))
    rounds = np.maximum(np.ceil(np.log(8 * g0 / ep) / -np.log1p(-shrink)), 0)
    # The log of the product as a sum of logs: the product overflowed (L = 1e-3, mu = 1e-100,
    # lam = 1e30, n = 1e3: ~1e364), and local_steps was inf, NaN where 0 rounds multiplied it.
    a = (np.sqrt((big_l + lm) / (u + lm))
         * (np.log(1152 * big_l) + np.log(lm) + 2 * np.log(nn)
            + 2 * np.log(2 * np.sqrt(lm / u) + 1) - 2 * np.log(u)))
    b = 4 * np.sqrt(u * (big_l + lm) / (lm * (u + lm)))
    local = rounds * a + b * rounds * (rounds - 1) / 2
    log_inv = np.maximum(np.log(g0) - np.log(ep), 0.0)
    # log(L lam n / mu^2) (ERRATA) as a sum of logs: the product overflowed (1e100 each: inf).
    out = {"rounds": counts(rounds), "local_steps": local,
           "rounds_order": np.sqrt(lm / u) * log_inv,
           "local_order": np.sqrt((big_l + lm) / u) * log_inv
           * (np.log(big_l) + np.log(lm) + np.log(nn) - 2 * np.log(u) + log_inv)}
    # counts() gives a Python int or float already; numpy scalars become Python numbers.
    return {k: (v.item() if hasattr(v, "item") and np.ndim(v) == 0 else v)
            for k, v in out.items()}


@broadcasting
def iapgd_katyusha_complexity(L_tilde, mu, lam, m, eps):
    """IAPGD + Katyusha, Theorem 4.3 of paper 001 (bounded iterates assumed).

    Communications ``sqrt(lambda/mu) log 1/eps``; local summand gradients
    ``(m sqrt(lambda/mu) + sqrt(m L_tilde/mu))`` up to log factors; optimal locally when
    ``m lambda <= L_tilde``.

    Parameters
    ----------
    L_tilde, mu : array_like
        Summand smoothness, strong convexity (``L_tilde >= mu``).
    lam : array_like
        Penalty, ``lam >= mu``: IAPGD's momentum ``(sqrt(lam) - sqrt(mu))/(sqrt(lam) +
        sqrt(mu))`` and rate ``1 - sqrt(mu/lam)`` (Algorithm 1, Theorem 4.2) need it.
    m : array_like
        Summands per client.
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    dict
        ``rounds_order`` and ``local_order`` (without log factors): orders, rates without
        their constants, not counts (0.69 at ``lam = mu``, ``eps = 1/2``); ``local_optimal``
        (bool).

    ERRATA
    ------
    After Theorem 4.3 the local complexity is called optimal "if sqrt(m) lambda = O(L_tilde)";
    ``m sqrt(lambda/mu) <= sqrt(m L_tilde/mu)`` is ``m lambda <= L_tilde``, as Table 1 and
    Section 2 state. Deciding numbers: ``L_tilde = 1``, ``mu = 1e-6`` and ``lambda =
    L_tilde / sqrt(m)`` (the printed condition holds with equality): the local complexity
    exceeds the lower bound ``m + sqrt(m L_tilde/mu)`` by 4.1x, 10x and 16.3x at ``m = 1e2,
    1e4, 1e6``, growing without bound, whereas under ``m lambda <= L_tilde`` the ratio stays
    at most 2. (At ``m = 100``, ``lambda = mu = 1``, ``L_tilde = 10`` the two conditions
    already disagree, but the local complexity 131.6 equals the bound there.)
    """
    lt, u = smooth_convex("L_tilde", L_tilde, "mu", mu)
    lm = _at_least_mu(lam, u, f"Theorem 4.3 of paper 001: IAPGD's momentum and rate need it; "
                              f"{_BELOW_ONE}")
    (mm,) = sizes(m=m)
    log_inv = np.log(1 / _eps(eps))
    return {"rounds_order": scalar_or_array(np.sqrt(lm / u) * log_inv),
            "local_order": scalar_or_array(mm * np.sqrt(lm / u) + np.sqrt(mm * lt / u)),
            "local_optimal": np.asarray(mm * lm <= lt)}


@broadcasting
def al2sgd_complexity(L_tilde, mu, lam, m, eps):
    """AL2SGD+, Theorem 4.4 of paper 001.

    Communications ``sqrt(min{L_tilde, lambda}/mu) log 1/eps`` (``rho = p(1-p)``,
    ``p = lambda/(lambda + L_tilde)``); local summand gradients
    ``(m + sqrt(m (L_tilde + lambda)/mu)) log 1/eps`` (``rho = 1/m``), optimal when
    ``lambda <= L_tilde``. The two are attained by different parameter choices.

    Parameters
    ----------
    L_tilde, mu : array_like
        Summand smoothness, strong convexity (``L_tilde >= mu``).
    lam : array_like
        Penalty, ``lam > 0``: Theorem 4.4 states no relation between ``lam`` and ``mu``
        (``p = lam/(lam + L_tilde)`` and ``rho = p(1-p)`` are defined for every ``lam``); see
        Notes for ``lam < mu``.
    m : array_like
        Summands per client.
    eps : array_like
        Relative accuracy in ``(0, 1)``.

    Returns
    -------
    dict
        ``rounds_order``, ``local_order``: orders, rates without their constants, not counts;
        ``rounds_order`` is ``max{1, sqrt(min{L_tilde, lam}/mu)} log 1/eps``, the printed
        order where ``lam >= mu`` (ERRATA below).

    Notes
    -----
    Below ``lam = mu`` the printed communication order ``sqrt(lam/mu) log 1/eps`` is under
    ``log 1/eps``. The theorem's text allows it (its "optimal regardless" compares with
    Thm 3.1, whose hypothesis ``lam >= mu`` restricts the lower bound, not this upper one), and
    Prop. E.4, which sets the parameters, is not in the text. The L-Katyusha reconstruction of
    ``paper_checks`` (``001.thm44.al2sgd-complexities``) has, with ``rho = p(1-p)``,
    ``2 + 2 sqrt(lam L_tilde/((lam + L_tilde) mu))`` communications per ``log 1/eps``: its
    order matches the printed one only where ``min{L_tilde, lam} >= mu``. The local order
    holds for every ``lam``.

    ERRATA (paper 001, Thm 4.4 and Sec. 2, below ``lam = mu``): no method attains the printed
    communication order there. Two instances of (2) that differ only in client 2's data have
    client 1's solutions ``lam/(mu + lam)`` apart, so without a communication the relative
    error stays above ``r ~ (lam/mu)^2/8``, and ``eps = r/10`` needs at least 0.9 expected
    rounds where ``sqrt(lam/mu) log 1/eps`` is 0.032 (``lam = 1e-6 mu``) and goes to 0. The
    order that holds is ``(1 + sqrt(min{L_tilde, lam}/mu)) log 1/eps``, within x2 of
    ``rounds_order``'s ``max{1, sqrt(min{L_tilde, lam}/mu)} log 1/eps``, the printed one where
    ``lam >= mu`` (``paper_checks`` claim ``001.thm44.below-mu``, erratum-harmless).

    ERRATA (paper 001, text after Thm 4.4): the communication count is called optimal
    "regardless" of how ``L_tilde`` and ``lambda`` compare, but Thm 3.1's lower bound has the
    smoothness ``L`` of each ``f_i`` (``L_tilde/m <= L <= L_tilde``), which APGD2 attains with
    the same summand oracle: optimal only when ``min{L_tilde, lambda} = O(L)``
    (``paper_checks`` claim ``001.thm44.communication-optimality``).
    """
    lt, u = smooth_convex("L_tilde", L_tilde, "mu", mu)
    lm = positive("lam", lam)
    (mm,) = sizes(m=m)
    log_inv = np.log(1 / _eps(eps))
    rate = np.maximum(1.0, np.sqrt(np.minimum(lt, lm) / u))      # ERRATA: not below 1
    return {"rounds_order": scalar_or_array(rate * log_inv),
            "local_order": scalar_or_array((mm + np.sqrt(mm * (lt + lm) / u)) * log_inv)}


@broadcasting
def optimal_method(L, lam, oracle="prox"):
    """Algorithm that matches both lower bounds, Table 2 of paper 001.

    ``prox``: APGD2 if ``lambda >= L`` else APGD1; ``grad``: APGD2 if ``lambda >= L`` else
    IAPGD+AGD; ``stoch``: APGD2 if ``lambda >= L`` else IAPGD+Katyusha (local optimality
    needs ``m lambda <= L_tilde``).

    Parameters
    ----------
    L, lam : array_like
        Smoothness and penalty (both > 0).
    oracle : {"prox", "grad", "stoch"}

    Returns
    -------
    ndarray of str
    """
    big_l = positive("L", L)
    lm = positive("lam", lam)
    small = {"prox": "APGD1", "grad": "IAPGD+AGD", "stoch": "IAPGD+Katyusha"}
    if not one_of(oracle, small):
        raise ValueError(f"oracle must be one of {sorted(small)}, got {oracle!r}")
    return np.where(lm >= big_l, "APGD2", small[oracle])
