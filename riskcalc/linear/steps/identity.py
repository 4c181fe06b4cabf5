"""Finite personalization steps from the finite-M FedAvg model under Sigma = I, by
Marchenko-Pastur quadrature instead of pencils (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7,
Algs. 5-6, from eq. 6's global model; the derivation is ``riskcalc.linear.steps.finite_clients``'
module docstring, which routes here for Sigma = I with convergent steps).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine import kappa
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.finite_clients.identity import (assemble, check_pooled, others_sum,
                                                     federation_totals, sources, subordination,
                                                     summands)
from riskcalc.linear.steps.edge import power


def identity_steps_group_limits(method, gam, r, sigma, count, lam, weights, max_steps: int,
                                step_size: float, ks=None, targets=None):
    """``steps_group_limits`` for Sigma = I (every group a target; paper 003,
    ``003_4b976ddf5225c17e.txt``, Sec. 7, Algs. 5-6, from eq. 6's global model), by quadrature
    instead of pencils: every trace of the module docstring is then one Marchenko-Pastur
    integral of a rational function of S_i, R_k(s) = (lam + s q(s)^k) / (s + lam) (q^k for
    FTFA) against the subordination of ``finite_clients.identity`` (the target traces J of its
    ``assemble``: tau(f), tau(f (b+t)^-2), tau(f S (b+t)^-2), tau(f S^2 (b+t)^-2),
    tau(f S (b+t)^-1), tau(R (1 - R) (b+t)^-1), f = R^2, b + t = p (S + u)) and the oracle
    variance gamma tau(S g_k(S)^2), g_k = (1 - R_k) / s. Time and memory grow like groups x
    steps (the pencils' like groups x steps^2), in blocks of bounded memory; ``ks`` (integers
    >= 0): the steps to compute instead of every k <= ``max_steps`` (one k = 1000 then costs
    about what one k = 1 does). ``targets``: the groups to compute (default all; the others
    take no steps, and a step divergent on them does not enter).

    Returns
    -------
    bias, variance : ndarray (targets, max_steps + 1), or (targets, len(ks))

    Raises
    ------
    ValueError
        For pooled N <= d.
    SolverError
        If a fixed point or the quadrature does not converge.
    """
    gam, r, sigma, count, lam = (np.asarray(a, dtype=float) for a in (gam, r, sigma, count, lam))
    check_pooled(gam, count)
    lam = lam if method == "rtfa" else np.zeros_like(lam)
    p, g, x, u, var_r = subordination(gam, count, weights)
    D, var_b, Eb, Ev = sources("fedavg", gam, lam, p, x, u, var_r)[:4]
    terms = summands(r, sigma, gam, p, g, D, var_b, Eb, Ev)
    totals = federation_totals(count, g, *terms)
    # The other groups' sums per group, not the totals minus its own term, which cancels for a
    # data-rich client (gamma [1e-10, 1]: FedAvg's k = 0 bias 0 for 4e-20; fuzz42 steps3 F1).
    others = [others_sum(count, w) for w in terms]
    ks = np.arange(int(max_steps) + 1) if ks is None else np.asarray(ks, dtype=int).ravel()
    eta = float(step_size)
    rows = np.arange(gam.size) if targets is None else np.asarray(targets, dtype=int).ravel()
    bias, var = np.empty((rows.size, ks.size)), np.empty((rows.size, ks.size))
    blocks = list(kappa.blocks(rows.size, 8 * ks.size * 512))
    # The traces depend on the groups' gamma, weights and lam, not on r or sigma: kept for
    # the next call with the same (``_LAST``).
    key = (method, eta, ks.tobytes(), gam.tobytes(), p.tobytes(), u.tobytes(), lam.tobytes(),
           rows.tobytes())
    quadratures = _LAST.get(key)
    if quadratures is None:
        quadratures = [_step_quadrature(method, gam, p, u, lam, ks, eta, rows[blk])
                       for blk in blocks]
        _LAST.clear()
        _LAST[key] = quadratures
    for blk, (J, own) in zip(blocks, quadratures):
        idx = np.repeat(rows[blk], ks.size)
        # The own bias's J0 - 2 p J3 + p^2 Jfb (``assemble``) is tau(f (1 - p S (b+t)^-1)^2) =
        # t^2 J1 (t = p u): as one trace (J3 = Jfb = 0, as ``finite_clients.identity.sources``),
        # free of the cancellation of O(1) terms where a data-rich client's p is near 1 (gamma
        # [1e-10, 1]: FedAvg's k = 0 own bias 0 for 2e-20; fuzz42 steps3 F1). u = 0 (M = 1):
        # as computed.
        pu = p[idx] * u[idx]
        J = np.array(J)
        J[0] = np.where(pu != 0, pu ** 2 * J[1], J[0] - 2.0 * p[idx] * J[4] + p[idx] ** 2 * J[3])
        J[3], J[4] = 0.0, 0.0
        b, v = assemble(r[idx], sigma[idx], gam[idx], p[idx], count[idx], g, D[idx],
                        var_b[idx], Eb[idx], Ev[idx], J, gam[idx] * own, totals=totals,
                        others=[o[idx] for o in others])
        bias[blk], var[blk] = b.reshape(-1, ks.size), v.reshape(-1, ks.size)
    return bias, var


#: ``identity_steps_group_limits``' last quadratures (key: their inputs): the draws of
#: ``riskcalc.advise.uncertainty.bootstrap`` change r_j, sigma_j (rho_j), not gamma_j or the
#: weights (50 x 31 advise runs of tests/test_advise_uncertainty.py: 1600 quadratures -> 50).
_LAST = {}


def _step_quadrature(method, gam, p, u, lam, ks, eta, blk):
    """The target traces J and own of ``identity_steps_group_limits`` (its docstring) for the
    groups ``blk`` (indices) and every k of ``ks``, read-only arrays (kept in ``_LAST``)."""
    idx = np.repeat(blk, ks.size)
    # As floats: the integer k were cast to floats at each of the two products below.
    kk = np.tile(ks.astype(float), idx.size // ks.size)[:, None]

    def traces(s, P, U, L, kk):
        # q^k as exp(k log1p(-eta (s + lam))) where 1 - eta (s + lam) rounds (below 1/2;
        # above, 1 - x is exact): the power's rounding grew like k eps, beyond the rule's
        # 1e-12 from 1e6 steps (FTFA at gamma 1, 0.001 x 1e6 refused; fuzz38 quad F1).
        ftfa = method == "ftfa"       # then lam = 0 (s + lam is s)
        x = eta * (s if ftfa else s + L)
        qk = power(x, kk)
        # RTFA at lam = 0 is FTFA: (L + s q^k) / (s + L) is 0 / 0 at s = 0, which mp_expect
        # took as 0 on the null space (R = 1 there): bias 0.299 for 2.424 at gamma 2, 3 clients
        # (fuzz36 xroute F4).
        R = qk if ftfa else np.where(L == 0, qk, (L + s * qk) / (s + L))
        # g_k = (1 - R_k) / s = (1 - q^k) / (s + lam): own = gamma tau(S g_k^2), whose
        # value at s = 0 (0 / 0 for FTFA) is 0, as mp_expect takes a non-finite one.
        # One new (7, K', n) array, each trace formed in its place (mp_expect uses it as is:
        # stacking a tuple copied it), with the same operations as written out in full:
        # R^2, (R / D)^2, s (R / D)^2, (s R / D)^2, s R^2 / D, R (1 - R) / D,
        # s ((1 - q^k) / (s + lam))^2, D = P (s + U).
        out = np.empty((7,) + np.broadcast_shapes(s.shape, R.shape))
        D = P * (s + U)
        np.square(R, out=out[0])
        np.square(np.divide(R, D, out=out[1]), out=out[1])
        np.multiply(s, out[1], out=out[2])
        np.square(np.divide(np.multiply(s, R, out=out[3]), D, out=out[3]), out=out[3])
        np.divide(np.multiply(s, out[0], out=out[4]), D, out=out[4])
        np.subtract(1.0, qk, out=out[6])
        np.divide(np.multiply(R, out[6] if ftfa else np.subtract(1.0, R, out=out[5]),
                              out=out[5]), D, out=out[5])
        np.square(np.divide(out[6], s if ftfa else s + L, out=out[6]), out=out[6])
        np.multiply(s, out[6], out=out[6])
        return out

    *J, own = mp_expect(gam[idx], traces, p[idx, None], u[idx, None], lam[idx, None], kk)
    J = np.array(J)
    # J1 = tau((R / D)^2) carries the whole bias (J0 = t^2 J1, t = p u, in the caller) but came
    # as F(0) + (a sum near -F(0)), F(0) = 1 / t^2 (``mp_expect``'s subtraction), rounded to
    # ~1e-16 of F(0): bias 0 for mpmath's 5.8e-28 at gamma 0.99 after 1e7 steps of 0.1, 3
    # clients (fuzz42 steps3 F2; the oracle route's steps2 F1). Below 1e-6 of F(0) (no atom:
    # gamma <= 1) the plain sum is taken where it settles relatively.
    pi, ui = p[idx], u[idx]
    small = np.flatnonzero((gam[idx] <= 1) & ((pi * ui) ** 2 * J[1] < 1e-6))
    for at in (small[i:i + _PLAIN_ROWS] for i in range(0, small.size, _PLAIN_ROWS)):
        J[1, at] = _plain_j1(method == "ftfa", gam[idx][at], pi[at], ui[at], lam[idx][at],
                             kk[at, 0], eta, J[1, at])
    J.setflags(write=False)
    own.setflags(write=False)
    return J, own


#: ``_plain_j1``'s rows per block and most nodes (a block's arrays hold rows x nodes).
_PLAIN_ROWS, _PLAIN_MAX = 16, 1 << 17


def _plain_j1(ftfa, gam, p, u, lam, k, eta, fallback):
    """J1 = tau((R_k / D)^2), D = p (S + u) (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7,
    Algs. 5-6; ``identity_steps_group_limits``), for gamma <= 1 by the midpoint rule in t of
    s = 1 + gamma - 2 sqrt(gamma) cos t (dmu = 8 sin^2(t/2) cos^2(t/2) / (pi s) dt, as
    ``steps.limits.filter_integrals``), every term positive, doubling from 64 nodes until two
    rules agree to 1e-12 relative; the rows that do not by ``_PLAIN_MAX`` nodes keep
    ``fallback`` (``mp_expect``'s value)."""
    root = np.sqrt(gam)[:, None]
    lo = ((1.0 - gam[:, None]) / (1.0 + root)) ** 2
    prev, n = None, 64
    while n <= _PLAIN_MAX:
        v = np.sin(0.5 * np.pi * (np.arange(n) + 0.5) / n) ** 2
        s = lo + 4.0 * root * v
        x = eta * (s if ftfa else s + lam[:, None])
        with np.errstate(divide="ignore", invalid="ignore"):
            qk = power(x, k[:, None])
            R = qk if ftfa else np.where(lam[:, None] == 0, qk,
                                         (lam[:, None] + s * qk) / (s + lam[:, None]))
            cur = np.sum(8.0 * v * (1.0 - v) / (n * s) * (R / (p[:, None] * (s + u[:, None])))
                         ** 2, -1)
        settled = prev is not None and np.abs(cur - prev) <= 1e-12 * cur
        if np.all(settled):
            return cur
        prev, n = cur, 2 * n
    return np.where(settled, cur, fallback)
