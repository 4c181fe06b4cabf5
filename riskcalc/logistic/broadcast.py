"""``logistic_limit`` over arrays: the fixed point of ``riskcalc.logistic.fixed_point`` solved
for a whole grid of parameter points together.

The equations, quadrature rules and accuracy check are those of the one-point solver
(``fixed_point.solve_fixed_point`` and ``path._limit``): residuals (E1)-(E4) in
``(a, b, log q, log mu)``, accepted at sup-norm ``TOL``, on the tensor Gauss-Hermite rule with
``NODES[0]`` nodes, then re-solved on the next rule until two consecutive rules agree to
``QUAD_RTOL``. What changes is the solver: one damped Newton iteration for every point at once
(``gaussian.batch_moments`` evaluates all points' expectations with array operations, each
proximal map warm started at the previous iterate's), continuation in ``lam`` shared by the
grid (points with ``lam >= 1`` directly from the first-order start, the others down from
``lam = 1`` by factors of ``LAM_RATIO``, each stage started from the previous one's solution
moved along the tangent ``dx/d log lam = -J^-1 dres/d log lam``), and the points that fail a
stage retried one at a time by the one-point solver.
"""

from __future__ import annotations

import math

import numpy as np

from riskcalc.logistic.engine.gaussian import NODES, batch_moments, gauss_hermite
from riskcalc.logistic.engine.prox import sigmoid

#: Newton iterations per continuation stage before a point counts as failed.
MAXITER = 40
#: Nodes per dimension of the rule the continuation runs on.
COARSE = 24


def batch_residuals(x, kappa, gamma, lam, c_e, C, nodes, start=None):
    """Residuals (P, 4), Jacobians (P, 4, 4) and proximal points of (E1)-(E4) at
    ``x = (a, b, log q, log mu)`` (P, 4): ``fixed_point.residuals`` for every point."""
    log_q, log_mu = np.clip(x[:, 2], -60.0, 30.0), np.clip(x[:, 3], -60.0, 30.0)
    a, b, q, mu = x[:, 0], x[:, 1], np.exp(log_q), np.exp(log_mu)
    rho = np.hypot(b, q)
    m, dm, t = batch_moments(kappa, a, rho, mu, nodes, start)
    D, E2, E3 = m.T
    zero, one = np.zeros_like(a), np.ones_like(a)
    chain = np.stack([np.stack([one, zero, zero, zero], -1),
                      np.stack([zero, b / rho, q * q / rho, zero], -1),
                      np.stack([zero, zero, zero, mu], -1)], 1)        # (P, 3, 4)
    dm = dm @ chain
    w = 1.0 / np.maximum(1.0, lam)         # (E3), (E4) scaled as in fixed_point.residuals
    res = np.stack([mu * (lam + D) / gamma - 1.0 + (x[:, 3] - log_mu),
                    0.5 * np.log(E2 / gamma) - x[:, 2],
                    w * (lam * (a - c_e) - E3),
                    w * (b * (lam + D) - lam * C)], -1)
    jac = np.stack([(mu / gamma)[:, None] * dm[:, 0],
                    0.5 * dm[:, 1] / E2[:, None],
                    -dm[:, 2],
                    b[:, None] * dm[:, 0]], 1)
    jac[:, 0, 3] += mu * (lam + D) / gamma
    jac[:, 1, 2] -= 1.0
    jac[:, 2, 0] += lam
    jac[:, 3, 1] += lam + D
    jac[:, 2:] *= w[:, None, None]
    return res, jac, t


def newton(x, kappa, gamma, lam, c_e, C, nodes, tol):
    """Damped Newton for every point (backtracking on the residual's sup-norm). Returns
    ``(x, ok)``; ``ok`` marks the points that reached residual ``tol``."""
    x = np.array(x, float)
    res, jac, t = batch_residuals(x, kappa, gamma, lam, c_e, C, nodes)
    err = np.max(np.abs(res), -1)
    step_len = np.ones(len(x))
    for _ in range(MAXITER):
        act = np.flatnonzero(np.isfinite(err) & (err > tol))
        if act.size == 0:
            break
        with np.errstate(all="ignore"):
            try:
                dx = -np.linalg.solve(jac[act], res[act][..., None])[..., 0]
            except np.linalg.LinAlgError:
                dx = -np.linalg.lstsq(jac[act][0], res[act][0], rcond=None)[0][None]
        dx[~np.isfinite(dx)] = 0.0
        step = np.clip(dx, -2.0, 2.0) * step_len[act, None]
        sub = (kappa[act], gamma[act], lam[act], c_e[act], C[act])
        r_new, j_new, t_new = batch_residuals(x[act] + step, *sub, nodes, t[act])
        e_new = np.max(np.abs(r_new), -1)
        better = np.isfinite(e_new) & (e_new < err[act])
        good = act[better]
        x[good] += step[better]
        res[good], jac[good], t[good], err[good] = (r_new[better], j_new[better],
                                                    t_new[better], e_new[better])
        # A rejected step is halved at the next iteration; an accepted one restores full
        # steps.
        step_len[good] = 1.0
        step_len[act[~better]] *= 0.25
        if np.any(step_len[act] < 1e-8):
            err[act[step_len[act] < 1e-8]] = np.inf
    return x, np.isfinite(err) & (err <= tol)


def solve_batch(gamma, lam, kappa, c_e, C, *, tol, lam_ratio, starts):
    """The fixed point of every point at the working rule ``NODES[0]``: the continuation in
    ``lam`` on the coarse rule ``COARSE`` (a sixth of the cost per evaluation), then Newton on
    the working rule from there (two or three steps: the rules' solutions differ by the coarse
    rule's quadrature error).

    ``starts(lam_k, nodes)``: first-order starts ``(P, 4)`` at penalties ``lam_k``. Returns
    ``x`` (P, 4) and the mask of points solved (the others are left to the one-point solver).
    """
    x, ok = _continuation(gamma, lam, kappa, c_e, C, nodes=COARSE, tol=tol,
                          lam_ratio=lam_ratio, starts=starts)
    idx = np.flatnonzero(ok)
    x[idx], ok[idx] = newton(x[idx], kappa[idx], gamma[idx], lam[idx], c_e[idx], C[idx],
                             NODES[0], tol)
    return x, ok


def _continuation(gamma, lam, kappa, c_e, C, *, nodes, tol, lam_ratio, starts):
    """The fixed point of every point on the rule ``nodes``, continued in ``lam``."""
    # Stage 0: every point at max(lam, 1), directly from the first-order start.
    lam0 = np.maximum(lam, 1.0)
    x, ok = newton(starts(lam0, nodes), kappa, gamma, lam0, c_e, C, nodes, tol)
    cur = lam0.copy()
    while True:
        todo = np.flatnonzero(ok & (cur > lam))
        if todo.size == 0:
            break
        # Down by lam_ratio to max(lam, 1e-4); from 1e-4 straight to the target (lam = 0: the
        # MLE), as the one-point solver.
        nxt = np.maximum(cur[todo] / lam_ratio, np.maximum(lam[todo], 1e-4))
        nxt = np.where(cur[todo] <= 1e-4, lam[todo], nxt)
        sub = (kappa[todo], gamma[todo])
        # Tangent predictor: d res / d log lam at fixed x is (0, 0, lam (a - c_e),
        # lam (b - C)) (E1 is divided by gamma: mu lam / gamma).
        res, jac, _ = batch_residuals(x[todo], *sub, cur[todo], c_e[todo], C[todo], nodes)
        a, b, mu = x[todo, 0], x[todo, 1], np.exp(x[todo, 3])
        c = cur[todo]
        dres = np.stack([mu * c / gamma[todo], np.zeros_like(a), c * (a - c_e[todo]),
                         c * (b - C[todo])], -1)
        with np.errstate(all="ignore"):
            dx = -np.linalg.solve(jac, dres[..., None])[..., 0]
            dlog = np.where(nxt > 0, np.log(np.maximum(nxt, 1e-300) / c), 0.0)
        guess = x[todo] + np.where(np.isfinite(dx) & (nxt > 0)[:, None],
                                   dx * dlog[:, None], 0.0)
        x_new, ok_new = newton(guess, *sub, nxt, c_e[todo], C[todo], nodes, tol)
        x[todo] = np.where(ok_new[:, None], x_new, x[todo])
        ok[todo] = ok_new
        cur[todo] = nxt
    return x, ok & (cur == lam)


def refine(x, kappa, gamma, lam, c_e, C, *, tol, rtol):
    """The quadrature ladder of ``path._limit`` for every point: re-solve on the next
    rule until two consecutive rules agree to ``rtol``. Returns ``(x_fine, nodes, ok)``;
    ``ok`` marks the points whose rules agreed (the caller passes the others to the one-point
    solver, which resolves large scales with composite rules)."""
    P = len(x)
    x = x.copy()
    out, used, ok = x.copy(), np.full(P, NODES[0]), np.zeros(P, bool)
    todo = np.arange(P)
    for nodes in NODES[1:]:
        if todo.size == 0:
            break
        sub = (kappa[todo], gamma[todo], lam[todo], c_e[todo], C[todo])
        x_fine, conv = newton(x[todo], *sub, nodes, tol)
        agree = conv & np.all(np.abs(x_fine - x[todo]) <= rtol * (1.0 + np.abs(x[todo])), -1)
        out[todo], used[todo] = x_fine, nodes
        ok[todo[agree]] = True
        x[todo] = x_fine
        todo = todo[~agree]
    return out, used, ok


def first_order_start(kappa, gamma, lam, c_e, C, nodes=NODES[0]):
    """``fixed_point._start`` for every point: the large-lam solution (the centre plus a
    shrunken isotropic part), three substitutions."""
    a, b, mu, q = c_e.copy(), C.copy(), gamma / lam, np.full(len(lam), 1e-3)
    t = None
    for _ in range(3):
        m, _, t = batch_moments(kappa, a, np.hypot(b, q), mu, nodes, t, derivatives=False)
        D, E2, E3 = m.T
        mu = gamma / (lam + D)
        q = np.sqrt(E2 / gamma)
        a, b = c_e + E3 / lam, lam * C / (lam + D)
    return np.stack([a, b, np.log(q), np.log(mu)], -1)


def limits(x, nodes, kappa, c_e, C):
    """Risk, cosine, test log-loss and ``(a, b, q, mu, rho)`` of solved points (as
    ``path._limit``; the test error is left to ``fixed_point.test_error``)."""
    a, b, q, mu = x[:, 0], x[:, 1], np.exp(x[:, 2]), np.exp(x[:, 3])
    rho = np.hypot(b, q)
    dist_c = np.sqrt((a - c_e) ** 2 + (b - C) ** 2 + q ** 2)
    gap = np.hypot(kappa - c_e, C)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = np.where(gap > 0, ((a - c_e) * ((kappa - c_e) / gap) - (b - C) * (C / gap))
                          / dist_c, np.nan)     # unit vector first: as path._limit
    logloss = np.empty(len(x))
    for n in np.unique(nodes):
        sel = nodes == n
        z, w = gauss_hermite(int(n))
        s, g = z[None, :, None], z[None, None, :]
        weight = (2.0 * sigmoid(kappa[sel, None] * z) * w)[:, :, None] * w[None, None, :]
        logloss[sel] = np.sum(weight * np.logaddexp(
            0.0, -(a[sel, None, None] * s + rho[sel, None, None] * g)), axis=(1, 2))
    return dict(risk=(a - kappa) ** 2 + b ** 2 + q ** 2, cosine=cosine, test_logloss=logloss,
                a=a, b=b, q=q, mu=mu, rho=rho)


#: Composite Gauss-Legendre rule of ``test_errors``: on each half-line ``[0, L_TAIL]`` (the
#: normal density beyond is below 1e-22), panels ``[L 2^-(k+1), L 2^-k]`` for ``k < K`` and
#: ``[0, L 2^-K]``, ``GL_NODES`` nodes each.
L_TAIL, GL_NODES = 10.0, 16


def test_errors(kappa, a, rho):
    """``P(y x.w_hat < 0) = E[2 sigmoid(kappa s) Phi(-a s / rho)]`` for every point (1-d
    arrays), by a composite Gauss-Legendre rule with panels halving toward 0.

    The integrand is analytic; its fast variations all sit at ``s = 0``: ``Phi(-a s / rho)``
    turns over a width ``rho / |a|`` and the sigmoid's poles are at ``s = +-i pi / kappa``.
    A panel ``[b/2, b]`` lies a distance ``b/2`` from 0, so 16 nodes integrate it to rounding
    level whatever those widths; halving continues until the last panel ``[0, b_K]`` is
    narrower than both widths (then it is smooth on that panel too). ``math.erfc`` gives
    ``Phi``: no scipy import (``scipy.special`` alone costs a second on a loaded machine).
    Checked against mpmath in the tests (scipy's adaptive ``quad``, used before, missed narrow
    kinks: 3e-5 off at ``rho / a = 2e-4``).
    """
    kappa, a, rho = (np.atleast_1d(np.asarray(v, float)) for v in (kappa, a, rho))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(rho > 0, a / rho, np.sign(a) * np.inf)
        scale = min(1.0, float(np.min(1.0 / np.abs(ratio))), float(np.min(1.0 / kappa)))
    K = int(np.clip(np.ceil(np.log2(L_TAIL / max(scale, 1e-300))) + 3, 8, 1000))
    z, w = np.polynomial.legendre.leggauss(GL_NODES)
    edges = np.append(L_TAIL * 2.0 ** -np.arange(K + 1.0), 0.0)
    lo, hi = edges[1:], edges[:-1]
    s = (0.5 * (hi - lo)[:, None] * (z + 1.0) + lo[:, None]).ravel()
    ws = (0.5 * (hi - lo)[:, None] * w).ravel() * np.exp(-0.5 * s * s) / np.sqrt(2.0 * np.pi)
    total = 0.0
    for sign in (1.0, -1.0):
        x = -sign * ratio[:, None] * s
        with np.errstate(invalid="ignore"):
            cdf = 0.5 * _ERFC(-x / np.sqrt(2.0)).astype(float)
        cdf[np.isnan(x)] = 0.5             # a = 0 and rho = 0: no direction, a coin flip
        total = total + (2.0 * sigmoid(sign * kappa[:, None] * s) * cdf) @ ws
    return total


_ERFC = np.frompyfunc(math.erfc, 1, 1)
