r"""The FedProx / pFedMe joint objective with M FIXED logistic clients: the exact limit
(derived here).

The joint problem (paper 000 eq. 20 / Alg. 2's fixed point; paper 004 eq. 1)

    min_{w, w_1..w_M}  sum_j pi_j [f_j(w_j) + (lam/2) ||w_j - w||^2] + (global_lam/2) ||w||^2,

``f_j`` client j's mean log-loss over its ``n_j = d/gamma_j`` samples and ``pi_j = n_j c_j`` the
client weights of ``riskcalc.logistic.blocks.pooled`` (``n_j/N`` or ``1/M``); client j's estimate is
``w_j``. Minimizing over ``w`` (``w = beta sum_j pi_j w_j``, ``beta = lam/(lam + global_lam)``)
leaves ``sum_j pi_j f_j(w_j) + (1/2) sum_{jl} K_jl w_j.w_l`` with

    K = lam diag(pi) - (lam^2 / (lam + global_lam)) pi pi^T.

Derivation (the leave-one-out argument of ``pooled``, with the M estimators stacked in
``R^{M d}``; the data Hessian is block diagonal, the coupling ``K (x) I``):

1. Sample k of block j enters only ``w_j``'s margin: ``z = prox_{mu_j l}(omega)`` with
   ``mu_j = (pi_j/n_j) tr (H^{-1})_{jj}``.
2. Resolvent: Sherman-Morrison per sample in the identity ``H^{-1} H = I`` gives
   ``H^{-1} -> R (x) I_d`` with ``R = (K + diag(Lambda))^{-1}``, ``Lambda_j = pi_j D_j``,
   ``D_j = E_j[l''/(1 + mu_j l'')]``; so ``mu_j = pi_j gamma_j R_jj``.
3. Isotropic parts: ``(1/n_j) P X_j^T l'_j pi_j = zeta_j + Lambda_j P w_j`` (Onsager), the
   ``zeta_j`` independent across blocks with per-coordinate variance ``pi_j^2 E_j[l'^2]/n_j``;
   the stationarity ``K W + (...) = 0`` gives ``P W = -R zeta`` and
   ``P w_j . P w_m = sum_l R_jl R_ml pi_l^2 gamma_l E_l[l'^2]``.
4. Directions of ``T = span(w_0, u_1..u_M)`` (``w_j = a_j w_0/S + sum_l b_jl u_l + ...``):
   with Stein's lemma as in ``pooled`` step 4 (the ``D_j`` terms moved to the left),
   ``a = R G`` and ``b_jl = R_jl F_l`` with
   ``G_j = pi_j [(S/kappa_j) E3_j + (S alpha_j/kappa_j) D_j]``,
   ``F_l = pi_l [(r_l/kappa_l) E3_l + (r_l alpha_l/kappa_l) D_l]``.

Block j's view: ``alpha_j = (a_j S + b_jj r_j)/kappa_j``, ``rho_j^2 = ||w_j||^2 - alpha_j^2``.
Unknowns ``(alpha, rho, mu)`` per group of identical clients. Checks (tests): ``lam -> inf``
gives FedAvg's global model (``pooled``); M = 1 gives local ridge with penalty
``lam global_lam / (lam + global_lam)``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.ranges import check_solution_logs
from riskcalc.logistic.engine.gaussian import SCALE_MARGIN, Rule, solve_resolved
from riskcalc.logistic.blocks.pooled import PATH_NODES, TOL, Federation, _ratio, settle
from riskcalc.logistic.engine.deadline import Overtime, by_deadline


def expand(fed: Federation):
    """The group of each client, in order."""
    return np.repeat(np.arange(fed.gamma.size), fed.count)


class GroupInverse:
    """``R = (K + diag(d))^-1`` (module docstring, step 2) over M clients in groups of
    identical ones, by Sherman-Morrison: O(groups) per inverse, never an M x M matrix.

    With ``sum_j pi_j = 1``, ``K = lam diag(pi) - s pi pi^T``, ``s = lam^2 / (lam + lam_g)``,
    so ``R = diag(1/e) + t u u^T`` with ``e = lam pi + d``, ``u = pi / e`` and
    ``t = s / den``, ``den = 1 - s sum_j pi_j^2 / e_j = (c + s sum_j pi_j d_j / e_j) / lam``
    (``c = lam lam_g / (lam + lam_g)``, using ``sum_j pi_j = 1``): every term positive, no
    cancellation. Held as ``R = diag(1/e) + k z z^T``, ``z = lam u`` and ``k = (lam /
    (lam + lam_g)) / (c + s sum_j pi_j d_j / e_j)``, each of order one at any lam (``t``
    overflowed at lam 1e300). Formed entry by entry, ``K`` rounded at ``lam eps`` in the
    direction of the all-ones vector (1% off FedAvg's answer at lam 1e12); inverted densely,
    1000 identical clients cost an M x M inverse per atom and evaluation (34 s; 1e5 clients
    74.5 GiB).

    ``pi``, ``count``: per group; ``d`` of shape ``(G,)`` or ``(A, G)`` (one inverse per row).
    Every method takes and returns per-group arrays broadcast with ``d``.
    """

    def __init__(self, pi, count, lam: float, lam_g: float, d):
        share = lam / (lam + lam_g)
        e = lam * pi + d
        den = lam_g * share + lam * share * np.sum(count * pi * d / e, axis=-1, keepdims=True)
        self.inv_e, self.z, self.count = 1.0 / e, lam * pi / e, count
        self.k = share / den
        if not (np.all(np.isfinite(self.inv_e)) and np.all(np.isfinite(self.k))
                and np.all(den > 0)):
            # Was numpy's bare "Singular matrix" (``error: Singular matrix`` on the command
            # line): sample weights of clients with gamma 1e-16 and 1e10 (pi_j 1 and 1e-26).
            raise SolverError(
                "FedProx / pFedMe fixed point: the clients' coupling matrix K + diag(pi_j D_j) "
                f"is singular in floating point (client weights pi_j from {np.min(pi):.3g} to "
                f"{np.max(pi):.3g}); uniform weights, or clients of closer gamma")

    def _sum(self, v):
        return np.sum(self.count * v, axis=-1, keepdims=True)

    def apply(self, v):
        """``(R v)_j``."""
        return v * self.inv_e + self.k * self.z * self._sum(self.z * v)

    def squares(self, w):
        """``sum_l R_jl^2 w_l``."""
        kz = self.k * self.z
        return w * self.inv_e * (self.inv_e + 2.0 * kz * self.z) + kz * kz * self._sum(
            self.z * self.z * w)

    def others(self, w):
        """``sum_{l != j} R_jl^2 w_l`` (``w >= 0``): the other clients of j's group count."""
        kz = self.k * self.z
        own = self.z * self.z * w
        return kz * kz * np.maximum(self._sum(own) - own, 0.0)

    def diagonal(self):
        """``R_jj``."""
        return self.inv_e + self.k * self.z * self.z


def unpack(x, rules):
    """``(alpha, rho, mu)`` per group from the per-group ``x = (alpha, log rho, log mu)``, and
    the rules' moments ``(D, E2, E3)`` there (``views`` here and in
    ``riskcalc.logistic.spectrum.fedprox``)."""
    G = len(rules)
    alpha, rho, mu = x[:G], np.exp(np.clip(x[G:2 * G], -60, 30)), \
        np.exp(np.clip(x[2 * G:], -60, 30))
    moments = np.array([rule.moments(alpha[c], rho[c], mu[c], derivatives=False)[0]
                        for c, rule in enumerate(rules)]).T
    return alpha, rho, mu, moments


def gaps(x, alpha, rho2, mu):
    """The fixed point's residuals: the views ``(alpha, rho^2, mu)`` against ``x``."""
    G = alpha.size
    return np.concatenate([alpha - x[:G], 0.5 * np.log(np.maximum(rho2, 1e-300)) - x[G:2 * G],
                           np.log(mu) - x[2 * G:]])


def views(x, fed: Federation, lam: float, lam_g: float, rules):
    """``(alpha, rho^2, mu)`` per group implied by the per-group ``x = (alpha, log rho,
    log mu)`` (steps 1-4 of the module docstring)."""
    alpha, rho, mu, (D, E2, E3) = unpack(x, rules)
    pi, gamma, r, kappa, S = fed.pi, fed.gamma, fed.r, fed.kappa, fed.signal
    R = GroupInverse(pi, fed.count, lam, lam_g, pi * D)
    a = R.apply(pi * (_ratio(S, kappa) * E3 + _ratio(S * alpha, kappa) * D))
    F = pi * (_ratio(r, kappa) * E3 + _ratio(r * alpha, kappa) * D)
    diag = R.diagonal()
    q2 = R.squares(pi * pi * gamma * E2 / (mu * mu))
    b = diag * F
    alpha_new = _ratio(a * S + b * r, kappa)
    # ||w_j||^2 - alpha_j^2 as a sum of squares: the part of (a_j, b_jj) across theta_j, the
    # other clients' directions, the noise.
    rho2 = _ratio(a * r - b * S, kappa) ** 2 + R.others(F * F) + q2
    return alpha_new, rho2, pi * gamma * diag


def residuals(x, fed, lam, lam_g, rules):
    return gaps(x, *views(x, fed, lam, lam_g, rules))


def _root(x0, fed, lam, lam_g, rules, deadline=None):
    from scipy.optimize import root

    sol = root(by_deadline(residuals, deadline), x0, args=(fed, lam, lam_g, rules),
               method="hybr", options={"xtol": 1e-13})
    x = sol.x
    if not np.all(np.isfinite(x)):
        return x, np.inf, sol.nfev
    return x, float(np.max(np.abs(residuals(x, fed, lam, lam_g, rules)))), sol.nfev


def _root_resolved(x0, fed, lam, lam_g, nodes, deadline=None):
    """``_root`` on per-group rules resolving the solution's scales ``(alpha_c, rho_c)``."""
    G = fed.gamma.size

    def rules_at(x, margin=SCALE_MARGIN):
        rho = np.exp(np.clip(x[G:2 * G], -60, 30))
        return [Rule.at(k, nodes, x[c], rho[c], margin) for c, k in enumerate(fed.kappa)]
    return solve_resolved(lambda x, rules: _root(x, fed, lam, lam_g, rules, deadline),
                          rules_at, np.asarray(x0, float))


def solve_fedprox(fed: Federation, lam: float, lam_g: float, start, deadline=None):
    """Per-client ``(alpha, rho, mu)`` of the joint objective, and solver diagnostics.

    ``start``: per-group ``(alpha, log rho, log mu)`` to begin from (the global model's view).
    Solved with a coarse rule, then the quadrature ladder (two consecutive rules agree);
    ``deadline.Overtime`` past ``deadline`` (``time.perf_counter``'s clock; None: no limit).

    Raises
    ------
    SolverError
        No root to ``TOL``, or the quadrature does not settle.
    """
    (x, err, nfev), _ = _root_resolved(start, fed, lam, lam_g, PATH_NODES, deadline)
    if not err <= TOL:
        raise SolverError(f"FedProx fixed point: no convergence at lam = {lam:g} "
                          f"(residual {err:.2e})")
    x_fine, err, n, fine = settle(
        lambda x, nodes: _root_resolved(x, fed, lam, lam_g, nodes, deadline), x,
        "FedProx fixed point")
    nfev += n
    G = fed.gamma.size
    check_solution_logs(x_fine[G:3 * G], "the FedProx / pFedMe fixed point",
                        gamma=fed.gamma, lam=lam, global_lam=lam_g)
    idx = expand(fed)
    alpha, rho2, mu = views(x_fine, fed, lam, lam_g, fine)
    return alpha[idx], np.sqrt(rho2)[idx], mu[idx], nfev, err


#: Penalties tried, from the smallest above the one asked, when pFedMe's joint root fails
#: on separable clients (``no_joint_root``).
PROBE_LAMS = (1e-8, 1e-6, 1e-4, 1e-2)


def no_joint_root(exc, fed, inverse, lam, solve, mean=1.0):
    """The error for pFedMe's joint root ``exc`` failing at ``lam``: with its cause where
    clients' data are separable.

    As ``lam -> 0`` the coupling ``lam/2 ||w_j - w||^2`` vanishes and client j's model tends to
    its own unpenalized logistic MLE, which does not exist where ``gamma_j >= h(kappa_j)``
    (Candes & Sur, Ann. Statist. 2020, Thm 1; ``kappa_j = ||w_j||_Sigma``, ``mean`` the
    spectrum's mean eigenvalue): the norms grow without bound as lam falls, and the root,
    started from the global model's view, is lost (gamma [1, 2], lam 1e-300 said only "no
    convergence (residual 1.28)"). ``solve(v)`` re-solves at ``v``: the first of
    ``PROBE_LAMS`` above ``lam`` that answers is offered. ``exc`` itself where no client is
    separable or ``lam`` is not below ``PROBE_LAMS``' largest (not a small-lam failure).
    """
    from riskcalc.logistic.transition import mle_threshold

    kappa = fed.kappa * np.sqrt(mean)
    h = np.array([mle_threshold(float(k)) for k in kappa])
    apart = fed.gamma >= h
    if lam >= PROBE_LAMS[-1] or not apart.any():
        return exc
    who = [j for j in range(inverse.size) if apart[inverse[j]]]
    names = ", ".join(f"{j} (gamma {fed.gamma[inverse[j]]:g} >= h = {h[inverse[j]]:.3g})"
                      for j in who[:4]) + (f" and {len(who) - 4} more" if len(who) > 4 else "")
    tried, answer = [v for v in PROBE_LAMS if v > lam], ""
    for v in tried:
        try:
            solve(v)
        except (SolverError, Overtime):
            continue
        answer = f" (lam = {v:g} does)"
        break
    else:
        answer = " (none of lam = " + ", ".join(f"{v:g}" for v in tried) + " answers)"
    return ValueError(
        f"pfedme at lam = {lam:g}: {exc}. As lam -> 0 each client's model tends to its own "
        "unpenalized MLE, which does not exist for client" + "s" * (len(who) > 1)
        + f" {names}: {'their' if len(who) > 1 else 'its'} data are separable (Candes & Sur "
        "2020, Thm 1), the norms grow "
        f"without bound as lam falls and the joint root is lost; give a larger lam{answer}")
