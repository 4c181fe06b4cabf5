r"""FedAvg's logistic global model over M FIXED blocks of data: the exact limit (derived here).

Model (DESIGN.md, third round; issue 19): x ~ N(0, I_d), client j has ``n_j = d / gamma_j``
samples with ``P(y = 1 | x) = sigmoid(x.w_j)``, ``w_j = w_0 + r_j u_j``, ``||w_0|| = S``, the
``u_j`` unit vectors orthogonal to ``w_0`` and to each other in the limit. The global model

    w_g = argmin_w  sum_j c_j sum_{k in block j} l(y_k x_k.w) + (lam_g/2) ||w||^2,

``l(t) = log(1 + e^-t)``, with ``c_j = 1/N`` ("samples") or ``1/(M n_j)`` ("uniform").
Write ``W_j = c_j d`` (``1/Gamma`` or ``gamma_j / M``, ``Gamma = sum_j 1/gamma_j``) and
``pi_j = n_j c_j = W_j / gamma_j`` (the block's total weight: ``(1/gamma_j)/Gamma`` or ``1/M``).

Derivation (leave-one-out / cavity, El Karoui, PTRF 2018, Sec. 2; the same system as the
CGMT of ``riskcalc.logistic.fixed_point`` at M = 1)
------------------------------------------------------------------------------------
All teachers lie in the finite-dimensional ``T = span(w_0, u_1, ..., u_M)``. Write
``w_g = a w_0/S + sum_l b_l u_l + w_perp`` with ``q = ||w_perp||`` and, for a sample ``x``,
``s_0 = x.w_0/S``, ``s_l = x.u_l`` (independent standard normals). Let
``H = sum_k c_k l''(z_k) x_k x_k^T + lam_g I`` and ``V = tr H^{-1} = d v``.

1. Leave sample k out: ``w_g - w_g^(k) = -H^{-1} x_k c_j l'(y_k z_k)``, so the training margin
   ``z_k = x_k.w_g`` is the proximal map ``z_k = prox_{mu_j l}(omega_k)`` of the cavity margin
   ``omega_k = x_k.w_g^(k)`` with ``mu_j = c_j V = W_j v``; ``omega_k`` is Gaussian (``x_k`` is
   independent of ``w_g^(k)``): ``omega = a s_0 + sum_l b_l s_l + q g``.
2. Trace (``d = tr(H H^{-1})`` and Sherman-Morrison per sample):
   ``1 = lam_g v + sum_j pi_j v D_j``, ``D_j = E_j[l''(z) / (1 + mu_j l''(z))]``.     (T)
3. Isotropic part: ``P_perp X^T psi`` (``psi_k = c_k l'(z_k)``) is a Gaussian vector ``zeta``
   with per-coordinate variance ``sum_k psi_k^2`` plus the Onsager term
   ``w_perp sum_k d psi_k / d omega_k``; the stationarity ``lam_g w = -X^T psi`` then gives
   ``w_perp = -zeta / (lam_g + sum_j pi_j D_j) = -v zeta`` by (T), so
   ``q^2 = sum_j (1/gamma_j) E_j[(mu_j l'(z))^2]``.                                  (N)
4. Directions of T: project the stationarity on ``w_0/S`` and ``u_l`` (fixed vectors):
   ``lam_g a = -sum_j pi_j E_j[l' s_0]``, ``lam_g b_l = -sum_j pi_j E_j[l' s_l]``.
   Block j's label depends on ``s = x.w_j/kappa_j`` (``kappa_j = sqrt(S^2 + r_j^2)``) only, and
   ``omega = alpha_j s + rho_j g'`` with ``alpha_j = (a S + b_j r_j)/kappa_j``,
   ``rho_j^2 = a^2 + sum_l b_l^2 + q^2 - alpha_j^2``. Splitting ``s_0 = (S/kappa_j) s + e`` and
   Stein's lemma on ``e`` (``Cov(e, omega) = a - S alpha_j / kappa_j``):

       -E_j[l' s_0] = (S/kappa_j) E3_j - (a - S alpha_j/kappa_j) D_j,
       -E_j[l' s_j] = (r_j/kappa_j) E3_j - (b_j - r_j alpha_j/kappa_j) D_j,
       -E_j[l' s_l] = -b_l D_j  (l != j, s_l independent of block j's label),

   with ``E3_j = -E_j[l'(y z) y s]`` (``engine.gaussian.Rule.moments``).   (A), (B)

Unknowns ``(a, b_1..b_M, q, v)``: M + 3 scalars. Clients with equal ``(gamma_j, r_j)`` have equal
``b_j`` (the problem is strictly convex for ``lam_g > 0``, so its solution inherits the
symmetry): the solver works per group of identical clients. At M = 1 the system is the one of
``fixed_point`` with centre 0 (``b_1`` and ``a`` along ``w_1``); with all ``r_j = 0`` it is one
block with ``gamma = 1/Gamma`` (samples weights).

Existence at ``lam_g = 0`` (Gordon's comparison for separability, as in Candes & Sur, Ann.
Statist. 2020, Thm 1, with M blocks): the pooled data are separable with probability -> 1 iff
``d/N > min_theta (1/N) sum_k E[(Z - y_k x_k.theta)_+^2]`` over ``theta`` in ``T``. For block j,
``y x.theta = y (alpha_j s + e_j)`` with ``e_j ~ N(0, sigma_j^2)`` independent of the label, so
``Z - y e_j ~ N(0, 1 + sigma_j^2)`` and the condition reads ``min_theta F(theta) < 1`` with

    F = sum_j (1/gamma_j) (1 + sigma_j^2) E[2 sigmoid(kappa_j s) psi(alpha_j s / t_j)],
    t_j = sqrt(1 + sigma_j^2),

``psi(m) = E[(Z - m)_+^2]`` (``riskcalc.logistic.transition``), convex in ``theta``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.ranges import check_solution_logs, ladder
from riskcalc.logistic.engine.gaussian import (EVALS_PER_ROOT, NODES, SCALE_MARGIN,
                                               SECONDS_PER_NODE, Rule, label_rule, rule_nodes,
                                               solve_resolved)
from riskcalc.logistic.engine.prox import sigmoid

#: Residual (sup-norm) below which a root is accepted.
TOL = 1e-11
#: Agreement required between consecutive quadrature rules.
QUAD_RTOL = 1e-6
#: Nodes per dimension along the continuation path (then the ladder ``NODES``).
PATH_NODES = 24
WEIGHTS = ("samples", "uniform")


@dataclass(frozen=True)
class Federation:
    """Groups of identical clients: ``gamma``, ``r``, ``count`` per group, one ``signal``."""

    gamma: np.ndarray
    r: np.ndarray
    count: np.ndarray
    signal: float
    weights: str

    @property
    def kappa(self):
        return np.hypot(self.signal, self.r)

    @property
    def W(self):
        """``c_j d`` per group (module docstring)."""
        if self.weights == "samples":
            return np.full(self.gamma.shape, 1.0 / np.sum(self.count / self.gamma))
        return self.gamma / np.sum(self.count)

    @property
    def pi(self):
        return self.W / self.gamma


@dataclass(frozen=True)
class PooledState:
    """The global fixed point: ``a``, ``b`` (per group), ``q``, ``v`` and, per group,
    the block's view ``alpha`` (component along ``w_j / kappa_j``), ``rho`` (the rest's norm)
    and ``mu = c_j tr H^{-1}``; ``iterations``, ``residual``: solver diagnostics."""

    a: float
    b: np.ndarray
    q: float
    v: float
    alpha: np.ndarray
    rho: np.ndarray
    mu: np.ndarray
    iterations: int
    residual: float
    #: The root on the path rule ``PATH_NODES`` (``residuals``' unknowns): the warm start of
    #: a neighbouring point's solve (``solve_pooled``'s ``start``).
    path_x: np.ndarray = None


def _ratio(x, kappa):
    x, kappa = np.broadcast_arrays(np.asarray(x, float), np.asarray(kappa, float))
    return np.divide(x, kappa, out=np.zeros(x.shape), where=kappa > 0)


def block_view(fed: Federation, a, b, q):
    """``(alpha_j, rho_j)`` per group (step 4 of the module docstring)."""
    kappa = fed.kappa
    alpha = _ratio(a * fed.signal + b * fed.r, kappa)
    total = a * a + np.sum(fed.count * b * b) + q * q
    return alpha, np.sqrt(np.maximum(total - alpha ** 2, q * q))


def residuals(x, fed: Federation, lam_g: float, rules):
    """Residuals of (A), (B), (N), (T) at ``x = (a, b_1/pi_1..b_G/pi_G, log q, log v)``
    (``b_c`` is of order ``pi_c``: scaled, the unknowns are of one order at any M)."""
    G = fed.gamma.size
    a, b = x[0], x[1:G + 1] * fed.pi
    q, v = np.exp(np.clip(x[G + 1], -60, 30)), np.exp(np.clip(x[G + 2], -60, 30))
    alpha, rho = block_view(fed, a, b, q)
    mu = fed.W * v
    m = np.array([rule.moments(alpha[c], rho[c], mu[c], derivatives=False)[0]
                  for c, rule in enumerate(rules)])
    D, E2, E3 = m.T
    S, r, kappa, pi, cnt = fed.signal, fed.r, fed.kappa, fed.pi, fed.count
    res_a = lam_g * a - np.sum(cnt * pi * (_ratio(S, kappa) * E3
                                           - (a - _ratio(S * alpha, kappa)) * D))
    total_D = np.sum(cnt * pi * D)
    res_b = (lam_g * b - pi * (_ratio(r, kappa) * E3 - (b - _ratio(r * alpha, kappa)) * D)
             + b * (total_D - pi * D)) / pi
    res_q = 0.5 * np.log(np.sum(cnt * E2 / fed.gamma)) - np.log(q)
    res_v = v * (lam_g + total_D) - 1.0
    # (A) and (B) divided by max(1, lam_g): their terms grow like lam_g, and so would their
    # rounding floor.
    w = 1.0 / max(1.0, lam_g)
    return np.concatenate([[w * res_a], w * res_b, [res_q, res_v]])


def settle(root_at, x, who: str):
    """The quadrature ladder: ``root_at(x, nodes)`` (``((x, residual, evaluations), rules)``,
    as ``gaussian.solve_resolved``) on each level of ``NODES`` in turn, each from the previous
    level's root, until two consecutive levels agree to ``QUAD_RTOL`` with a residual within
    ``TOL``. Returns ``(x, residual, evaluations, rules)`` of the finer of the two.

    Raises
    ------
    SolverError
        The finest level still moves the root (``who`` names the fixed point).
    """
    nfev = 0
    for nodes in NODES:
        (x_fine, err, n), fine = root_at(x, nodes)
        nfev += n
        if err <= TOL and np.all(np.abs(x_fine - x) <= QUAD_RTOL * (1.0 + np.abs(x))):
            return x_fine, err, nfev, fine
        x = x_fine
    raise SolverError(f"{who}: quadrature not converged with the ladder's finest level "
                      f"{NODES[-1]}")


def _root(x0, fed, lam_g, rules, memory=None, maxfev=0):
    if memory is not None:
        out = memory.root(lambda x: residuals(x, fed, lam_g, rules), x0, rules[0].n, TOL)
        if out is not None:
            return out
    from scipy.optimize import root

    sol = root(residuals, x0, args=(fed, lam_g, rules), method="hybr",
               options={"xtol": 1e-13, "maxfev": maxfev})
    x = sol.x
    if not np.all(np.isfinite(x)):
        return x, np.inf, sol.nfev
    return x, float(np.max(np.abs(residuals(x, fed, lam_g, rules)))), sol.nfev


def rules_at(fed: Federation, nodes: int):
    """``rules_at`` of ``gaussian.solve_resolved``: per group, the rule for the block's view
    ``(alpha_c, rho_c)`` of ``x`` (``residuals``)."""
    G = fed.gamma.size

    def at(x, margin=SCALE_MARGIN):
        q = np.exp(np.clip(x[G + 1], -60, 30))
        alpha, rho = block_view(fed, x[0], x[1:G + 1] * fed.pi, q)
        return [Rule.at(k, nodes, alpha[c], rho[c], margin) for c, k in enumerate(fed.kappa)]
    return at


def _root_resolved(x0, fed, lam_g, nodes, memory=None, maxfev=0):
    """``_root`` on rules resolving the solution's scales (``gaussian.solve_resolved``);
    ``memory``: a ``warm.JacobianMemory`` carried along a grid; ``maxfev``: hybr's limit
    on evaluations (0: its default, 200 per unknown)."""
    out, _ = solve_resolved(lambda x, rules: _root(x, fed, lam_g, rules, memory, maxfev),
                            rules_at(fed, nodes), np.asarray(x0, float))
    return out


def _start(fed: Federation, lam_g: float):
    """Large-ridge start: ``w_g`` the mean gradient at 0 divided by ``lam_g``."""
    G = fed.gamma.size
    # At w = 0: -E[l'(0) y s] = E[sigmoid(kappa s) s] ~ kappa E[sigmoid'] ~ kappa / 4 (small).
    a = np.sum(fed.count * fed.pi) * fed.signal / (4 * lam_g)
    b = fed.r / (4 * lam_g)                 # b_c / pi_c
    v = 1.0 / (lam_g + 0.25)
    q = np.sqrt(np.sum(fed.count * (fed.W * v * 0.5) ** 2 / fed.gamma))
    return np.concatenate([[a], b, [np.log(q), np.log(v)]])[: G + 3]


def solve_pooled(fed: Federation, lam_g: float, start=None, memory=None,
                 max_seconds: float = None) -> PooledState:
    """The global fixed point for ``lam_g >= 0`` (existence checked by the caller).

    Continuation in ``lam_g`` from 100 down by factors of 10 (``lam_g = 0`` from 1e-4), each
    step a Powell hybrid solve with a coarse rule; then the quadrature ladder of
    ``riskcalc.logistic.engine.gaussian`` (two consecutive rules must give the same root).
    ``start``: the unknowns of ``residuals`` near this point's path root (a neighbouring grid
    point's ``path_x``), tried first in place of the continuation; the continuation runs when
    that root misses ``TOL``. The ladder and its checks are the same either way. ``memory``
    (with ``start``): a ``warm.JacobianMemory`` of the grid, tried before hybr.

    Below ``lam_g = 1e-4`` the path goes on down by factors of 10 (on separable pooled data
    the solution's norm grows without bound as ``lam_g -> 0``, and a jump from 1e-4 finds no
    root). ``max_seconds``: after each stage, the rest of the path is estimated at the rules
    of the current solution (``riskcalc.logistic.work``); beyond the limit a ValueError says
    which ``global_lam`` the path reached within it.

    Raises
    ------
    ValueError
        The estimated work exceeds ``max_seconds``.
    SolverError
        A step does not reach the residual ``TOL``, or the quadrature does not settle.
    """
    # The continuation path uses a coarse rule (cheap, and close enough to start the fine
    # solves a few steps from their roots); every rule resolves the solution's scales.
    nfev, err = 0, np.inf
    if start is not None and np.size(start) == fed.gamma.size + 3:
        x, err, nfev = _root_resolved(start, fed, lam_g, PATH_NODES, memory)
    if not err <= TOL:
        lams = ladder(lam_g)
        x, views = _start(fed, lams[0]), None
        for k, lam_k in enumerate(lams):
            # Below 1e-4 a stage takes at most 50 evaluations per unknown (measured: 11-60 in
            # all), not hybr's 200: where no root is found, it fails in seconds, not a minute.
            x_k, err, n = _root_resolved(x, fed, lam_k, PATH_NODES,
                                         maxfev=50 * x.size if 0 < lam_k < 1e-4 else 0)
            nfev += n
            if not err <= TOL:
                raise SolverError("logistic global model: no convergence at global_lam = "
                                  f"{lam_k:g} (residual {err:.2e})")
            x = x_k
            if max_seconds is not None:
                views = _check_rest(fed, x, views, lams, k, lam_g, max_seconds)
    path_x = x
    x_fine, err, n, _ = settle(
        lambda x, nodes: (_root_resolved(x, fed, lam_g, nodes, memory), None), x,
        "logistic global model")
    nfev += n
    G = fed.gamma.size
    check_solution_logs(x_fine[G + 1:G + 3], "the logistic global model", gamma=fed.gamma,
                        global_lam=lam_g)
    a, b = float(x_fine[0]), x_fine[1:G + 1] * fed.pi
    q, v = float(np.exp(x_fine[G + 1])), float(np.exp(x_fine[G + 2]))
    alpha, rho = block_view(fed, a, b, q)
    return PooledState(a, b, q, v, alpha, rho, fed.W * v, nfev, err, path_x)


def _check_rest(fed, x, previous, lams, k, lam_g, max_seconds):
    """The ValueError of ``solve_pooled`` when the rest of the path (stages after ``k`` and
    the ladder's first level) is estimated beyond ``max_seconds``; else the blocks' views
    ``(alpha, rho)`` at ``x``, the solution at ``lams[k]``.

    The rules of the stages to come are estimated at the views extrapolated linearly from the
    last two stages (on separable pooled data the norm grows like ``log(1/global_lam)``, by
    about the same amount per decade), and never below the current ones."""
    G = fed.gamma.size
    alpha, rho = block_view(fed, x[0], x[1:G + 1] * fed.pi, np.exp(np.clip(x[G + 1], -60, 30)))
    step = (np.zeros(2 * G) if previous is None
            else np.maximum(np.abs(np.concatenate([alpha, rho])) - previous, 0.0))
    now = np.abs(np.concatenate([alpha, rho]))
    remaining = len(lams) - 1 - k
    nodes = 0
    for j in range(1, remaining + 2):
        sc = now + min(j, remaining) * step
        n = PATH_NODES if j <= remaining else NODES[0]
        nodes += sum(rule_nodes(kp, n, sc[c], sc[G + c]) for c, kp in enumerate(fed.kappa))
    rest = EVALS_PER_ROOT * SECONDS_PER_NODE * nodes
    if rest > max_seconds:
        norm = float(np.sqrt(x[0] ** 2 + np.sum(fed.count * (x[1:G + 1] * fed.pi) ** 2)
                             + np.exp(2 * np.clip(x[G + 1], -60, 30))))
        raise ValueError(
            f"global_lam = {lam_g:g}: the logistic global model's norm grows as global_lam "
            f"-> 0 (||w_g|| = {norm:.3g} at global_lam = {lams[k]:g}), and the rest of the "
            f"path is estimated at {rest:.3g} s of quadrature (riskcalc.logistic."
            f"work), over max_seconds = {max_seconds:g}; global_lam >= {lams[k]:g} is within "
            "it, or raise max_seconds (in Python; --max-minutes on the command line)")
    return now


def separability_margin(fed: Federation) -> float:
    """``min_theta F(theta)`` of the module docstring: the pooled minimizer at ``lam_g = 0``
    exists iff this exceeds 1 (the data are separable with probability -> 1 iff it is < 1)."""
    from scipy.optimize import minimize

    from riskcalc.logistic.transition import _psi

    z, w = label_rule(float(np.max(fed.kappa)))
    weight = [2.0 * sigmoid(k * z) * w for k in fed.kappa]
    G = fed.gamma.size

    def F(theta):
        a, b = theta[0], theta[1:]
        alpha = _ratio(a * fed.signal + b * fed.r, fed.kappa)
        sig2 = a * a + np.sum(fed.count * b * b) - alpha ** 2
        scale = np.sqrt(1.0 + np.maximum(sig2, 0.0))
        return float(sum(fed.count[c] / fed.gamma[c] * scale[c] ** 2
                         * np.sum(weight[c] * _psi(alpha[c] * z / scale[c]))
                         for c in range(G)))

    best = minimize(F, np.full(G + 1, 0.5), method="Nelder-Mead" if G > 6 else "BFGS",
                    options={"gtol": 1e-12} if G <= 6 else {"xatol": 1e-10, "fatol": 1e-13})
    return min(float(best.fun), F(np.zeros(G + 1)))
