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

import numpy as np

from riskcalc.errors import SolverError

#: Nodes per dimension: the fixed point is solved with the first rule and checked with the
#: next one, moving up the ladder until two consecutive rules agree.
NODES = (56, 84, 126, 190)


def sigmoid(x):
    """``1 / (1 + e^-x)`` with full relative accuracy in both tails."""
    return np.exp(-np.logaddexp(0.0, -np.asarray(x, float)))


def gauss_hermite(n: int):
    """Nodes and weights of the n-point rule for ``E[f(Z)]``, ``Z ~ N(0, 1)``."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / np.sqrt(2.0 * np.pi)


def prox_logistic(v, mu):
    """``argmin_t log(1 + e^-t) + (t - v)^2 / (2 mu)``, elementwise (label +1).

    The optimality condition ``f(t) = t - v - mu sigmoid(-t) = 0`` is increasing in ``t``, slope in
    ``[1, 1 + mu/4]`` and its root lies in ``[v, v + mu]``: Newton steps kept inside that
    bracket (bisection otherwise) converge for every ``v`` and ``mu > 0``.

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
    t = v + mu * sigmoid(-v) / (1.0 + mu * 0.25)
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
