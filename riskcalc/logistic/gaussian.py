"""Gaussian expectations of the logistic proximal map, by tensor Gauss-Hermite quadrature.

Every expectation of the CGMT system (``riskcalc.logistic.fixed_point``) has the form
``E[2 sigmoid(kappa s) F(s, t)]`` with ``s, g`` independent standard normals,
``v = a s + rho g`` and ``t = prox_{mu l}(v)`` the proximal map of the logistic loss
``l(t) = log(1 + e^-t)`` (label +1). The factor ``2 sigmoid(kappa s)`` folds the label in: the
label -1 term equals the label +1 term after ``(s, g) -> (-s, -g)`` because
``l(-1, t) = l(+1, -t)`` (the ``2 rho'(Q1)`` weight of Sur & Candes, PNAS 2019, eq. 5).

No scipy submodule is imported here (fast ``riskcalc`` start-up).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from riskcalc.errors import SolverError

#: Nodes per dimension: the fixed point is solved with the first rule and checked with the
#: next one, moving up the ladder until two consecutive rules agree.
NODES = (56, 84, 126, 190)


def sigmoid(x):
    """``1 / (1 + e^-x)`` with full relative accuracy for ``x >= -709`` (both terms of the
    denominator are accurate; for ``x -> -inf`` it is ``e^-x`` to rounding); below, where the
    value is under 1e-308, the exponent is capped (absolute error < 1e-307) so that nothing
    overflows."""
    return 1.0 / (1.0 + np.exp(np.minimum(-np.asarray(x, float), 709.0)))


@lru_cache(maxsize=16)
def gauss_hermite(n: int):
    """Nodes and weights of the n-point rule for ``E[f(Z)]``, ``Z ~ N(0, 1)`` (cached,
    read-only arrays)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / np.sqrt(2.0 * np.pi)
    x.flags.writeable = w.flags.writeable = False
    return x, w


def prox_logistic(v, mu, start=None):
    """``argmin_t log(1 + e^-t) + (t - v)^2 / (2 mu)``, elementwise (label +1).

    The optimality condition ``f(t) = t - v - mu sigmoid(-t) = 0`` is increasing in ``t``, slope in
    ``[1, 1 + mu/4]`` and its root lies in ``[v, v + mu]``: Newton steps kept inside that
    bracket (bisection otherwise) converge for every ``v`` and ``mu > 0``. ``start``: an initial
    guess (e.g. the prox at nearby ``v, mu``), clipped into the bracket.

    Raises
    ------
    SolverError
        If some entry has not converged after 200 steps.
    """
    v = np.asarray(v, float)
    mu = np.broadcast_to(np.asarray(mu, float), v.shape)
    shape = v.shape
    v, mu = v.ravel(), mu.ravel()
    lo, hi = v.copy(), v + mu
    if start is None:
        t = v + mu * sigmoid(-v) / (1.0 + mu * 0.25)
    else:
        t = np.clip(np.broadcast_to(start, shape).ravel(), lo, hi)
    step_old = hi - lo
    idx = np.arange(v.size)           # entries still iterating
    for _ in range(200):
        ti, vi, mi = t[idx], v[idx], mu[idx]
        p = sigmoid(-ti)
        f = ti - vi - mi * p
        lo_i = np.where(f < 0, ti, lo[idx])
        hi_i = np.where(f > 0, ti, hi[idx])
        step = f / (1.0 + mi * p * (1.0 - p))
        t_new = ti - step
        # rtsafe (Numerical Recipes 9.4): bisect when Newton leaves the bracket or does not
        # halve the step, which stops Newton cycling across the inflection point at t = 0.
        bisect = ~((t_new > lo_i) & (t_new < hi_i)) | (np.abs(step) > 0.5 * np.abs(step_old[idx]))
        # The slope is >= 1, so |t - root| <= |f|: stop at rounding level, keeping this t.
        done = np.abs(f) <= 4e-14 * (1.0 + np.abs(ti) + np.abs(vi))
        t[idx] = np.where(done, ti, np.where(bisect, 0.5 * (lo_i + hi_i), t_new))
        step_old[idx] = np.where(bisect, 0.5 * (hi_i - lo_i), step)
        lo[idx], hi[idx] = lo_i, hi_i
        idx = idx[~done]
        if idx.size == 0:
            return t.reshape(shape)
    raise SolverError("logistic proximal map: Newton did not converge in 200 steps")


def _prox_near(v, mu, start):
    """``prox_logistic`` for a batch, fast when ``start`` is close; returns ``(t, sigmoid(-t))``.

    Halley steps (the derivatives of ``f(t) = t - v - mu sigmoid(-t)`` are
    ``f' = 1 + mu h``, ``f'' = -mu (1 - 2p) h`` with ``p = sigmoid(-t)``, ``h = p (1 - p)``) on the
    whole array, no bookkeeping of finished entries, until every residual is below
    ``4e-14 (1 + max |v| + max mu)`` (the slope is >= 1, so that bounds the error in ``t``);
    entries still above it after a few steps (a far start) finish with the safeguarded
    ``prox_logistic``. Without ``start``, each point starts from ``_prox_table``. ``v`` has
    shape (P, n, n) and ``mu`` (P, 1, 1).
    """
    t = _prox_table(v, mu[:, 0, 0]) if start is None else start
    mu = np.broadcast_to(mu, v.shape)
    tol = 4e-14 * (1.0 + np.max(np.abs(v)) + np.max(mu))
    for _ in range(6):
        p = sigmoid(-t)
        f = t - v - mu * p
        if np.max(np.abs(f)) <= tol:
            return t, p
        muh = mu * p * (1.0 - p)
        d1 = 1.0 + muh
        t = t - 2.0 * f * d1 / (2.0 * d1 * d1 + f * (1.0 - 2.0 * p) * muh)
    bad = np.abs(t - v - mu * sigmoid(-t)) > tol
    t = t.copy()
    t[bad] = prox_logistic(v[bad], mu[bad], np.clip(t[bad], v[bad], v[bad] + mu[bad]))
    return t, sigmoid(-t)


def _prox_table(v, mu, K: int = 129):
    """A start for the prox of every entry of ``v`` (P, n, n) at ``mu`` (P,): the exact prox
    (``prox_logistic``) on K equispaced values spanning each point's ``v``, linearly
    interpolated (``t`` is increasing in ``v`` with slope in (0, 1])."""
    lo, hi = v.min(axis=(1, 2)), v.max(axis=(1, 2))
    width = np.maximum(hi - lo, 1e-300)
    grid = lo[:, None] + width[:, None] * np.linspace(0.0, 1.0, K)
    table = prox_logistic(grid, mu[:, None])
    pos = (v - lo[:, None, None]) / width[:, None, None] * (K - 1)
    i = np.clip(pos.astype(np.intp), 0, K - 2)
    frac = pos - i
    rows = np.arange(len(v))[:, None, None]
    return table[rows, i] * (1.0 - frac) + table[rows, i + 1] * frac


class Rule:
    """The 2-d tensor rule over ``(s, g)`` with the label weight ``2 sigmoid(kappa s)``."""

    def __init__(self, kappa: float, n: int = NODES):
        x, w = gauss_hermite(n)
        self.n = n
        self.s = x[:, None]
        self.g = x[None, :]
        self.weight = 2.0 * sigmoid(kappa * self.s) * w[:, None] * w[None, :]

    def expect(self, values):
        """``E[2 sigmoid(kappa s) F]`` for ``values = F`` on the grid (broadcast to (n, n))."""
        return float(np.sum(self.weight * values))

    def moments(self, a, rho, mu):
        """The three expectations of the fixed point at ``(a, rho, mu)`` and their gradients.

        Returns ``(m, dm)``: ``m = (D, E2, E3)`` with ``D = E[l''(t) / (1 + mu l''(t))]``,
        ``E2 = E[(mu l'(t))^2] = E[(v - t)^2]`` and ``E3 = -E[l'(t) s] = E[sigmoid(-t) s]``;
        ``dm[i, j]`` the derivative of ``m[i]`` in ``(a, rho, mu)[j]``, from the implicit
        derivatives of the prox, ``dt = (dv + sigmoid(-t) dmu) / (1 + mu l''(t))``.
        """
        t = prox_logistic(a * self.s + rho * self.g, mu)
        p = sigmoid(-t)
        h = p * (1.0 - p)
        k = 1.0 / (1.0 + mu * h)
        dt = (self.s * k, self.g * k, p * k)          # dt/da, dt/drho, dt/dmu
        dh_dt, dp_dt = -(1.0 - 2.0 * p) * h, -h
        m = np.array([self.expect(h * k), self.expect((mu * p) ** 2), self.expect(p * self.s)])
        dm = np.empty((3, 3))
        for j, tj in enumerate(dt):
            dm[0, j] = self.expect(k * k * dh_dt * tj)
            dm[1, j] = self.expect(2.0 * mu * mu * p * dp_dt * tj)
            dm[2, j] = self.expect(self.s * dp_dt * tj)
        dm[0, 2] -= self.expect((h * k) ** 2)
        dm[1, 2] += self.expect(2.0 * mu * p * p)
        return m, dm


#: Quadrature points (grid points x nodes^2) evaluated at once by ``batch_moments``: bounds the
#: temporaries (about a dozen arrays of this size) at a few tens of MB.
CHUNK = 400_000


def batch_moments(kappa, a, rho, mu, n: int, start=None, derivatives: bool = True):
    """``Rule(kappa, n).moments(a, rho, mu)`` for P parameter points at once (1-d arrays).

    Returns ``(m, dm, t)``: ``m, dm`` of shapes ``(P, 3)`` and ``(P, 3, 3)``, the same
    expectations and derivatives as ``Rule.moments`` (see there; ``dm`` is None with
    ``derivatives=False``), evaluated on the tensor rule with the points' own label weights,
    and the proximal points ``t`` (P, n, n), which a later call at nearby parameters takes as
    ``start`` (its prox then needs a step or two). The grid is processed in chunks of about
    ``CHUNK`` nodes.

    The weight factorizes, ``2 sigmoid(kappa s_i) w_i`` times ``w_j``, and the derivatives of
    the prox along ``a``, ``rho`` are ``s k`` and ``g k`` (``k = 1 / (1 + mu l''(t))``): every
    expectation is a product with ``w`` or ``w g`` over the g-axis of an array without the
    factor ``s``, which is applied after the reduction (one matrix product for all).
    """
    x, w = gauss_hermite(n)
    s, g = x[None, :, None], x[None, None, :]
    P = np.size(a)
    m, dm, t_all = np.empty((P, 3)), np.empty((P, 3, 3)), np.empty((P, n, n))
    step = max(1, CHUNK // (n * n))
    wg = np.stack([w, w * x], -1)                               # (n, 2): w and w g
    for lo in range(0, P, step):
        sl = slice(lo, lo + step)
        k_, a_, r_, u_ = (np.asarray(v, float)[sl, None, None] for v in (kappa, a, rho, mu))
        w_s = 2.0 * sigmoid(k_[:, :, 0] * x) * w                 # (p, n) over s
        t, p = _prox_near(a_ * s + r_ * g, u_, None if start is None else start[sl])
        t_all[sl] = t
        hk = p * (1.0 - p)                                        # l''(t), then l'' k
        k = 1.0 / (1.0 + u_ * hk)
        hk *= k
        if not derivatives:
            red = np.stack([hk, (u_ * p) ** 2, p], 1) @ w         # (p, 3, n)
            m[sl] = np.einsum("pi,pqi->pq", w_s, red * np.array([1.0, 1.0, 0.0])[:, None]) \
                + np.einsum("pi,pi->p", w_s * x, red[:, 2])[:, None] * [0.0, 0.0, 1.0]
            continue
        # dh/dt = -(1 - 2p) h and dp/dt = -h: the three derivative arrays (module docstring
        # of Rule.moments), without the factors s, g, p of dt.
        A0 = -(1.0 - 2.0 * p) * hk * k * k                       # k^2 dh/dt k
        A1 = -2.0 * u_ * u_ * p * hk                              # 2 mu^2 p dp/dt k
        A2 = -hk                                                  # dp/dt k
        red = [arr @ wg for arr in (hk, (u_ * p) ** 2, p, A0, A0 * p, hk * hk, A1, A1 * p,
                                    p * p, A2, A2 * p)]               # each (p, n, 2)
        by_w = np.stack([r[..., 0] for r in red], 1)
        by_wg = np.stack([r[..., 1] for r in red], 1)

        def E(values, power=0):
            return np.einsum("pi,pi->p", w_s * x ** power, values)

        m[sl, 0], m[sl, 1], m[sl, 2] = E(by_w[:, 0]), E(by_w[:, 1]), E(by_w[:, 2], 1)
        dm[sl, 0] = np.stack([E(by_w[:, 3], 1), E(by_wg[:, 3]), E(by_w[:, 4] - by_w[:, 5])], -1)
        dm[sl, 1] = np.stack([E(by_w[:, 6], 1), E(by_wg[:, 6]),
                              E(by_w[:, 7]) + 2.0 * u_[:, 0, 0] * E(by_w[:, 8])], -1)
        dm[sl, 2] = np.stack([E(by_w[:, 9], 2), E(by_wg[:, 9], 1), E(by_w[:, 10], 1)], -1)
    return m, (dm if derivatives else None), t_all
