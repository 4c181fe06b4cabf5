r"""Ridge-to-a-centre logistic regression with a general covariance spectrum: the exact limit
(derived here).

Model (DESIGN.md, fourth round, "Logistic with a covariance spectrum"; issue 33): features
``x ~ N(0, Sigma)`` with ``Sigma``'s eigenvalue distribution ``H`` (``riskcalc.Spectrum``),
``P(y = 1 | x) = sigmoid(x.w_i)``, ``w_i = w_0 + r u`` with ``w_0`` uniform on the sphere of
radius ``S`` and ``u`` a uniform unit vector orthogonal to it: both directions isotropic in the
ORIGINAL coordinates (so ``w_0' f(Sigma) w_0 -> S^2 <f>``, ``u' f(Sigma) u -> <f>`` and
``w_0' f(Sigma) u -> 0`` for bounded ``f``, ``<f> = integral f(s) dH(s)``). Estimator, with the
centre ``c = theta w_0`` (``theta = 1`` the oracle centre, FedAvg's infinite-client scale, or 0:
local ridge):

    w_hat = argmin_w (1/n) sum_k l(y_k x_k.w) + (lam/2) ||w - c||^2,   l(t) = log(1 + e^-t).

Derivation (leave-one-out / cavity, El Karoui, PTRF 2018, as ``blocks.pooled``; the
Gaussian-covariate replica equations of Loureiro et al., NeurIPS 2021, with an offset centre)
----------------------------------------------------------------------------------------------
Write ``psi_k = y_k l'(y_k z_k)`` at the training margin ``z_k = x_k.w_hat`` and
``H = (1/n) sum_k l''(y_k z_k) x_k x_k' + lam I``.

1. Leave sample k out: ``z_k = prox_{mu l}(omega_k)`` (label folded), ``omega_k`` the cavity
   margin, with ``mu = (1/n) x_k' H_(k)^-1 x_k -> (1/n) tr(Sigma H^-1)``.
2. Resolvent. Sherman-Morrison per sample gives the deterministic equivalent
   ``H^-1 -> R = (lam I + D Sigma)^-1``, ``D = E[l''(t) / (1 + mu l''(t))]``, so

       (E1)  mu = gamma <s / (lam + D s)>.

3. Stationarity ``lam (w_hat - c) = -(1/n) X' psi``. Conditionally on the cavity estimates,
   ``x_k`` is Gaussian: Stein's lemma on ``psi_k = f(omega_k, x_k.w_i)`` splits
   ``(1/n) X' psi`` into ``D Sigma w_hat`` (Onsager, through ``omega``), ``-eps Sigma w_i``
   (through the label's margin) and a Gaussian ``Sigma^(1/2) zeta``, ``zeta`` isotropic with
   per-coordinate variance ``E[psi^2] / n`` and independent of ``w_0, u``. Hence

       w_hat = R (lam c + eps Sigma w_i - Sigma^(1/2) zeta).

   The fresh (and cavity) margins are ``(x.w_i, x.w_hat) = (kappa s, a s + rho g)`` with
   ``kappa^2 = w_i' Sigma w_i = K^2 <s>`` (``K^2 = S^2 + r^2``), ``a = w_hat' Sigma w_i / kappa``
   and ``a^2 + rho^2 = w_hat' Sigma w_hat``. Projecting the stationarity on ``w_i`` with Stein's
   lemma in ``s`` identifies ``eps``: ``-E[psi s] = E3`` (``gaussian.Rule.moments``) and
   ``E[psi s] = a D - kappa eps``, so ``eps = (E3 + a D) / kappa``.
4. Overlaps, with ``I_kj = <s^k / (lam + D s)^j>``, ``E[psi^2] = E2 / mu^2`` and
   ``(1/n) tr(Sigma R Sigma R) = gamma I_22``::

       (E2')  a kappa = lam theta S^2 I_11 + eps K^2 I_21,
       (E3')  a^2 + rho^2 = lam^2 theta^2 S^2 I_12 + 2 lam theta eps S^2 I_22
                            + eps^2 K^2 I_32 + gamma (E2 / mu^2) I_22.

Unknowns ``(a, rho, mu)``. At ``Sigma = I`` (every ``I_kj = 1/(lam + D)^j``) (E1) is
``fixed_point``'s (E1), (E2') is its (E3) ``lam (a - c_e) = E3``, and (E3') its (E2) plus
(E4) (``b = lam C / (lam + D)``, ``q^2 = E2 / gamma``). With ``Sigma = c I`` the map
``v = sqrt(c) w`` turns the problem into the isotropic one with ``(S, r, lam) ->
(sqrt(c) S, sqrt(c) r, lam / c)``, and ``risk`` scales by ``1/c``: both are checks in the tests,
as is the square loss (where ``D``, ``E2``, ``E3`` are closed forms and (E1)-(E3') must give
the linear family's ridge limit, ``riskcalc.limit("rtfa", ..., spectrum=)``).

Outputs. With the Euclidean products ``w_hat.w_0 = lam theta S^2 I_01 + eps S^2 I_11``,
``w_hat.w_i = lam theta S^2 I_01 + eps K^2 I_11`` and
``||w_hat||^2 = lam^2 theta^2 S^2 I_02 + 2 lam theta eps S^2 I_12 + eps^2 K^2 I_22
+ gamma (E2 / mu^2) I_12``:

- ``risk = ||w_hat - w_i||^2`` (DESIGN.md's contract), ``sigma_risk = (w_hat - w_i)' Sigma
  (w_hat - w_i) = (a - kappa)^2 + rho^2``;
- ``cosine = cos(w_hat - c, w_i - c)`` and ``cosine_uncentred = cos(w_hat, w_i)``
  (Euclidean, as at ``Sigma = I``);
- test log-loss ``E[2 sigmoid(kappa s) l(a s + rho g)]`` and error
  ``E[2 sigmoid(kappa s) Phi(-a s / rho)]`` under ``x ~ N(0, Sigma)``;
- ``b, q``: the split of ``rho`` in the whitened coordinates (``Sigma^(1/2) w``) along the part
  of ``Sigma^(1/2) c`` orthogonal to ``Sigma^(1/2) w_i`` and the rest, as ``fixed_point``'s
  ``b, q`` at ``Sigma = I``: ``b = (w_hat' Sigma c - a c_e) / C`` with
  ``c_e = theta S^2 <s> / kappa``, ``C^2 = theta^2 S^2 <s> - c_e^2``
  (``w_hat' Sigma w_0 = lam theta S^2 I_11 + eps S^2 I_21``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic import broadcast
from riskcalc.logistic.engine.gaussian import NODES, SCALE_MARGIN, Rule, solve_resolved
from riskcalc.logistic.ranges import ladder
from riskcalc.logistic.engine.deadline import by_deadline

#: Residual (sup-norm) and quadrature agreement, as ``fixed_point``.
TOL, QUAD_RTOL = 1e-11, 1e-7


@dataclass(frozen=True)
class Problem:
    """One parameter point: ``gamma``, ``lam``, centre scale ``theta``, ``S^2``, ``K^2``,
    ``kappa = ||w_i||_Sigma`` and the spectrum's atoms ``s`` and weights ``h``."""

    gamma: float
    lam: float
    theta: float
    S2: float
    K2: float
    kappa: float
    s: np.ndarray
    h: np.ndarray

    def integrals(self, D):
        """``I[k, j] = <s^k / (lam + D s)^j>`` for ``k <= 4``, ``j <= 3``."""
        inv = 1.0 / (self.lam + D * self.s)
        pows = self.s[None, :] ** np.arange(5)[:, None]                 # (5, atoms)
        invs = inv[None, :] ** np.arange(4)[:, None]                    # (4, atoms)
        return np.einsum("ka,ja,a->kj", pows, invs, self.h)


def problem(gamma, signal, r, lam, spectrum, theta) -> Problem:
    s, h = spectrum.atoms, spectrum.weights
    K2 = signal * signal + r * r
    return Problem(float(gamma), float(lam), float(theta), float(signal * signal), float(K2),
                   float(np.sqrt(K2 * (s @ h))), s, h)


def _eps(p: Problem, a, D, E3):
    """``eps = (E3 + a D) / kappa`` (step 3); 0 when ``w_i = 0``."""
    return (E3 + a * D) / p.kappa if p.kappa > 0 else 0.0


def residuals(x, rule: Rule, p: Problem):
    """Residuals of (E1), (E2'), (E3') at ``x = (a, log rho, log mu)`` and their Jacobian."""
    a = x[0]
    rho, mu = np.exp(np.clip(x[1:], -60.0, 30.0))
    (D, E2, E3), dm = rule.moments(a, rho, mu)            # dm: d(D, E2, E3)/d(a, rho, mu)
    I = p.integrals(D)
    lt = p.lam * p.theta
    k = p.kappa if p.kappa > 0 else 1.0
    eps = _eps(p, a, D, E3)
    # d eps / d(a, D, E3); zero for w_i = 0, where eps is 0.
    de = np.array([D, a, 1.0]) / k if p.kappa > 0 else np.zeros(3)
    Q = (lt * lt * p.S2 * I[1, 2] + 2 * lt * eps * p.S2 * I[2, 2] + eps * eps * p.K2 * I[3, 2]
         + p.gamma * E2 * I[2, 2] / mu ** 2)
    N = a * a + rho * rho
    res = np.array([x[2] - np.log(p.gamma * I[1, 1]),
                    a - (lt * p.S2 * I[1, 1] + eps * p.K2 * I[2, 1]) / k,
                    1.0 - Q / N])
    # Partials in (a, rho, mu) at fixed moments (P) and in the moments (D, E2, E3) (M);
    # dI[k, j]/dD = -j I[k + 1, j + 1].
    P, M = np.zeros((3, 3)), np.zeros((3, 3))
    P[0, 2] = 1.0 / mu
    M[0, 0] = I[2, 2] / I[1, 1]
    R2_eps = -p.K2 * I[2, 1] / k
    P[1, 0] = 1.0 + R2_eps * de[0]
    M[1, 0] = (lt * p.S2 * I[2, 2] + eps * p.K2 * I[3, 2]) / k + R2_eps * de[1]
    M[1, 2] = R2_eps * de[2]
    Q_eps = 2 * lt * p.S2 * I[2, 2] + 2 * eps * p.K2 * I[3, 2]
    Q_D = -(lt * lt * p.S2 * 2 * I[2, 3] + 2 * lt * eps * p.S2 * 2 * I[3, 3]
            + eps * eps * p.K2 * 2 * I[4, 3] + p.gamma * E2 * 2 * I[3, 3] / mu ** 2)
    P[2] = [Q * 2 * a / N ** 2 - Q_eps * de[0] / N, Q * 2 * rho / N ** 2,
            2 * p.gamma * E2 * I[2, 2] / mu ** 3 / N]
    M[2] = [-(Q_D + Q_eps * de[1]) / N, -p.gamma * I[2, 2] / mu ** 2 / N, -Q_eps * de[2] / N]
    jac = (P + M @ dm) * np.array([1.0, rho, mu])
    return res, jac


def _root(x0, rule, p, deadline=None):
    from scipy.optimize import root

    # As ``fixed_point._root``: one stage can take all the time (lam = 0 just below the
    # Candes-Sur threshold ran past 300 s with max_seconds = 10).
    sol = root(by_deadline(residuals, deadline), x0, args=(rule, p), method="hybr", jac=True,
               options={"xtol": 1e-13})
    x = sol.x
    if not np.all(np.isfinite(x)):
        return x, np.inf
    return x, float(np.max(np.abs(residuals(x, rule, p)[0])))


def _root_resolved(x0, p: Problem, nodes, deadline=None):
    """``_root`` on a rule resolving the solution's scales: ``(x, err, rule)``;
    ``deadline.Overtime`` when still solving at ``deadline`` (``time.perf_counter``'s clock)."""
    def rules_at(x, margin=SCALE_MARGIN):
        return [Rule.at(p.kappa, nodes, float(x[0]), float(np.exp(np.clip(x[1], -60, 30))),
                        margin)]
    (x, err), rules = solve_resolved(lambda x, rules: _root(x, rules[0], p, deadline), rules_at,
                                     np.asarray(x0, float))
    return x, err, rules[0]


def _start(p: Problem, nodes):
    """Large-lam start: ``w_hat`` near the centre, three substitutions of (E1)-(E3')."""
    m1 = float(p.s @ p.h)
    k = p.kappa if p.kappa > 0 else 1.0
    a = p.theta * p.S2 * m1 / k
    rho = max(np.sqrt(max(p.theta ** 2 * p.S2 * m1 - a * a, 0.0)), 1e-3)
    mu = p.gamma * m1 / p.lam
    for _ in range(3):
        rule = Rule.at(p.kappa, nodes, a, rho)
        (D, E2, E3), _ = rule.moments(a, rho, mu, derivatives=False)
        I = p.integrals(D)
        mu = p.gamma * I[1, 1]
        eps = _eps(p, a, D, E3)
        lt = p.lam * p.theta
        a = (lt * p.S2 * I[1, 1] + eps * p.K2 * I[2, 1]) / k
        Q = (lt * lt * p.S2 * I[1, 2] + 2 * lt * eps * p.S2 * I[2, 2]
             + eps * eps * p.K2 * I[3, 2] + p.gamma * E2 * I[2, 2] / mu ** 2)
        rho = np.sqrt(Q - a * a) if Q > a * a else rho
    return np.array([a, np.log(rho), np.log(mu)])


def solve(p: Problem, start=None, deadline=None):
    """The fixed point ``x = (a, log rho, log mu)`` at the working rule, then the quadrature
    ladder (two consecutive rules agree to ``QUAD_RTOL``), as ``fixed_point.solve_fixed_point``
    and ``path._limit``: directly from ``start`` or the large-lam start when
    ``lam >= 1``, else continuation from ``lam = 100`` by factors of 10. Returns
    ``(x, rule, residual)``; ``deadline.Overtime`` from the first residual evaluated past
    ``deadline`` (``time.perf_counter``'s clock; None: no limit).

    Raises
    ------
    SolverError
        A continuation step or the ladder does not converge.
    """
    x, err = None, np.inf
    if start is not None or p.lam >= 1.0:
        x0 = _start(p, NODES[0]) if start is None else start
        x, err, _ = _root_resolved(x0, p, NODES[0], deadline)
    if not err <= TOL:
        lams = ladder(p.lam)
        x = _start(_at_lam(p, lams[0]), NODES[0])
        for lam_k in lams:
            x, err = _step(x, _at_lam(p, lam_k), deadline)
            if not err <= TOL:
                # From the previous step's point the root finder can leave the solution's
                # scales (as in ``spectrum.pooled``): measured gamma = 0.2, signal 4, r 0.3,
                # lam = 0.01, spectrum scaled:1.0001, no convergence at lam = 0.1 where the
                # identity's solver answers; the large-lam start at this lam finds the root.
                x, err = _step(_start(_at_lam(p, lam_k), NODES[0]), _at_lam(p, lam_k),
                               deadline)
            if not err <= TOL:
                step = "" if lam_k == p.lam else (
                    f" (a step of the continuation from lam = {lams[0]:g} down to the lam = "
                    f"{p.lam:g} asked)")
                raise SolverError(f"logistic fixed point with a spectrum: no convergence at "
                                  f"lam = {lam_k:g}{step} (gamma = {p.gamma:g}; residual "
                                  f"{err:.2e})")
    for nodes in NODES[1:]:
        x_fine, err, fine = _root_resolved(x, p, nodes, deadline)
        if err <= TOL and np.all(np.abs(x_fine - x) <= QUAD_RTOL * (1.0 + np.abs(x))):
            return x_fine, fine, err
        x = x_fine
    raise SolverError(f"logistic fixed point with a spectrum: quadrature not converged at the "
                      f"finest ladder level {NODES[-1]} (gamma = {p.gamma:g}, lam = {p.lam:g})")


def _step(x0, p: Problem, deadline=None):
    """One continuation step on the working rule: ``(x, residual)``, the residual infinite
    where the iterate outgrew every quadrature rule (``gaussian.MAX_RULE_NODES``)."""
    try:
        x, err, _ = _root_resolved(x0, p, NODES[0], deadline)
    except SolverError:
        return np.asarray(x0, float), np.inf
    return x, err


def _at_lam(p: Problem, lam):
    return Problem(p.gamma, float(lam), p.theta, p.S2, p.K2, p.kappa, p.s, p.h)


def outputs(x, rule: Rule, p: Problem) -> dict:
    """Every limit of the module docstring at the solution ``x``."""
    a = float(x[0])
    rho, mu = (float(v) for v in np.exp(x[1:]))
    (D, E2, E3), _ = rule.moments(a, rho, mu, derivatives=False)
    I = p.integrals(D)
    lt, th = p.lam * p.theta, p.theta
    eps = _eps(p, a, D, E3)
    iso = p.gamma * E2 / mu ** 2                       # E[psi^2] gamma: the fluctuation's scale
    w_w0 = lt * p.S2 * I[0, 1] + eps * p.S2 * I[1, 1]
    w_wi = lt * p.S2 * I[0, 1] + eps * p.K2 * I[1, 1]
    w_w = (lt * lt * p.S2 * I[0, 2] + 2 * lt * eps * p.S2 * I[1, 2] + eps * eps * p.K2 * I[2, 2]
           + iso * I[1, 2])
    out = dict(a=a, rho=rho, mu=mu, risk=w_w - 2 * w_wi + p.K2,
               sigma_risk=(a - p.kappa) ** 2 + rho ** 2)
    # cos(w_hat - c, w_i - c), c = theta w_0 (Euclidean).
    gap2 = p.K2 - 2 * th * p.S2 + th * th * p.S2
    dist2 = w_w - 2 * th * w_w0 + th * th * p.S2
    cross = w_wi - th * w_w0 - th * p.S2 + th * th * p.S2
    out["cosine"] = (cross / np.sqrt(gap2 * dist2) if gap2 > 1e-300 * max(p.K2, 1.0)
                     else float("nan"))
    out["cosine_uncentred"] = (w_wi / np.sqrt(w_w * p.K2) if w_w * p.K2 > 0
                               else float("nan"))
    # Whitened split of rho (module docstring).
    m1 = float(p.s @ p.h)
    c_e = th * p.S2 * m1 / p.kappa if p.kappa > 0 else 0.0
    C = np.sqrt(max(th * th * p.S2 * m1 - c_e * c_e, 0.0))
    wSc = th * (lt * p.S2 * I[1, 1] + eps * p.S2 * I[2, 1])
    b = (wSc - a * c_e) / C if C > 0 else 0.0
    out["b"], out["q"] = float(b), float(np.sqrt(max(rho * rho - b * b, 0.0)))
    out["test_logloss"] = rule.expect(np.logaddexp(0.0, -(a * rule.s + rho * rule.g)))
    out["test_error"] = float(broadcast.test_errors(p.kappa, a, rho)[0])
    return out

