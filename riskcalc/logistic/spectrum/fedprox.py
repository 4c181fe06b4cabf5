r"""The FedProx / pFedMe joint objective with M logistic clients and a covariance spectrum: the
exact limit (derived here).

``riskcalc.logistic.blocks.fedprox``'s joint problem (its ``K = lam diag(pi) - (lam^2 / (lam +
global_lam)) pi pi^T``, client weights ``pi_j``) with features ``x ~ N(0, Sigma)``, ``w_0`` and
the ``u_j`` isotropic in the original coordinates (``riskcalc.logistic.spectrum.fixed_point``).

Derivation (``fedprox``'s stacked leave-one-out with ``spectral``'s resolvent step)
-----------------------------------------------------------------------------------
Client j's data enter ``w_j`` only; by Stein's lemma per block (``spectral`` step 3) the
stacked stationarity reads, for ``W = (w_1..w_M)``,

    sum_l K_jl w_l + pi_j D_j Sigma w_j = pi_j eps_j Sigma theta_j - pi_j Sigma^(1/2) zeta_j,

``theta_j = w_0 + r_j u_j``, ``eps_j = (E3_j + alpha_j D_j) / kappa_j``, the ``zeta_j``
independent with per-coordinate variance ``gamma_j E_j[psi^2] / d``. In ``Sigma``'s eigenbasis
(eigenvalue ``s``) the coupling is the M x M matrix ``K + s diag(Lambda)``, ``Lambda_j = pi_j D_j``:
with ``R(s) = (K + s diag(Lambda))^-1``,

    w_j = sum_l R_jl(Sigma) Sigma pi_l (eps_l theta_l - Sigma^(-1/2) zeta_l),
    mu_j = (pi_j / n_j) tr(Sigma (H^-1)_jj) -> pi_j gamma_j <s R_jj>,

and, with ``G_lm = S^2 + delta_lm r_l^2`` (``theta_l.theta_m`` by isotropy) and
``N_l = pi_l^2 gamma_l E2_l / mu_l^2``:

    w_j' Sigma theta_j = sum_l <s^2 R_jl> pi_l eps_l G_lj,
    w_j' Sigma w_j     = sum_lm <s^3 R_jl R_jm> pi_l eps_l pi_m eps_m G_lm + sum_l <s^2 R_jl^2> N_l,

the Euclidean products with one power of ``s`` less. At ``Sigma = I`` these are ``fedprox``'s
steps 2-4 (``a = R G``, ``b_jl = R_jl F_l``, ``q^2`` of step 3).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.blocks.fedprox import GroupInverse, expand, gaps, unpack
from riskcalc.logistic.engine.gaussian import SCALE_MARGIN, Rule, solve_resolved
from riskcalc.logistic.engine.deadline import by_deadline
from riskcalc.logistic.blocks.pooled import PATH_NODES, TOL, Federation, settle
from riskcalc.logistic.ranges import ladder


def views(x, fed: Federation, spectrum, lam, lam_g, rules, euclid: bool = False):
    """Per group: ``(alpha, rho^2, mu)`` implied by the per-group ``x = (alpha, log rho,
    log mu)``; with ``euclid``, also ``(w_j.theta_j, ||w_j||^2)``. ``R(s)`` by
    ``GroupInverse`` (one per atom): with ``G_lm = S^2 + delta_lm r_l^2`` the sums over
    clients are ``S^2 (R c)_j + R_jj c_j r_j^2`` and ``S^2 (R c)_j^2 + sum_l R_jl^2 c_l^2
    r_l^2``, ``c_l = pi_l eps_l``."""
    G = fed.gamma.size
    alpha, rho, mu, (D, E2, E3) = unpack(x, rules)
    kappa = np.sqrt((fed.signal ** 2 + fed.r ** 2) * spectrum.mean)
    eps = np.divide(E3 + alpha * D, kappa, out=np.zeros(G), where=kappa > 0)
    pi, gamma, s, h, S2 = fed.pi, fed.gamma, spectrum.atoms, spectrum.weights, fed.signal ** 2
    R = GroupInverse(pi, fed.count, lam, lam_g, s[:, None] * (pi * D)[None])   # (atoms, G)
    c = pi * eps
    N = pi * pi * gamma * E2 / (mu * mu)
    Rc, diag = R.apply(c), R.diagonal()
    cross = S2 * Rc + diag * c * fed.r ** 2
    square = S2 * Rc * Rc + R.squares(c * c * fed.r ** 2)
    noise = R.squares(N)

    def products(k):
        """``(w_j.S^k theta_j, w_j.S^k w_j)`` per group."""
        w_th = np.einsum("a,a,ag->g", h, s ** (k + 1), cross)
        w_w = (np.einsum("a,a,ag->g", h, s ** (k + 2), square)
               + np.einsum("a,a,ag->g", h, s ** (k + 1), noise))
        return w_th, w_w
    w_th = products(1)[0]
    alpha_new = np.divide(w_th, kappa, out=np.zeros_like(w_th), where=kappa > 0)
    mu_new = pi * gamma * np.einsum("a,a,ag->g", h, s, diag)
    out = (alpha_new, _rho2(fed, s, h, c, Rc, diag, cross, R.others(c * c * fed.r ** 2), noise),
           mu_new)
    return out + (products(0),) if euclid else out


def _rho2(fed: Federation, s, h, c, Rc, diag, cross, others, noise):
    """``rho_j^2 = w_j' Sigma w_j - alpha_j^2`` per group as a sum of squares (the difference
    lost a near-infinite-data client's digits, ``rho`` of order ``sqrt(gamma)``). Per atom
    ``s`` the teachers' part of ``w_j`` in the plane of ``(w_0, u_j)`` splits into the part
    across ``theta_j``, ``s S r_j ((R c)_j - R_jj c_j) / sqrt(K_j)`` (``K_j = S^2 + r_j^2``),
    and along it, ``p(s) = s cross_j / sqrt(K_j)``; with the other clients' directions
    (``others``: ``sum_{l != j} R_jl^2 c_l^2 r_l^2``) and the noise,

        rho_j^2 = <s^3 (across^2 + others)> + <s (p - <s p> / <s>)^2> + <s^2 noise>,

    the middle term ``<s p^2> - <s p>^2 / <s>`` as a weighted variance."""
    S2, r2 = fed.signal ** 2, fed.r ** 2
    K = S2 + r2
    across = np.divide(S2 * r2 * (Rc - diag * c) ** 2, K, out=np.zeros(Rc.shape), where=K > 0)
    p = np.divide(s[:, None] * cross, np.sqrt(K), out=np.zeros(Rc.shape), where=K > 0)
    mean_p = np.einsum("a,a,ag->g", h, s, p) / np.dot(h, s)
    return (np.einsum("a,a,ag->g", h, s ** 3, across + others)
            + np.einsum("a,a,ag->g", h, s, (p - mean_p) ** 2)
            + np.einsum("a,a,ag->g", h, s ** 2, noise))


def residuals(x, fed, spectrum, lam, lam_g, rules):
    return gaps(x, *views(x, fed, spectrum, lam, lam_g, rules))


def _root(x0, fed, spectrum, lam, lam_g, rules, deadline=None):
    from scipy.optimize import root

    sol = root(by_deadline(residuals, deadline), x0, args=(fed, spectrum, lam, lam_g, rules),
               method="hybr", options={"xtol": 1e-13})
    if not np.all(np.isfinite(sol.x)):
        return sol.x, np.inf, sol.nfev
    return sol.x, float(np.max(np.abs(residuals(sol.x, fed, spectrum, lam, lam_g, rules)))), \
        sol.nfev


def _root_resolved(x0, fed, spectrum, lam, lam_g, nodes, deadline=None):
    G = fed.gamma.size
    kappa = np.sqrt((fed.signal ** 2 + fed.r ** 2) * spectrum.mean)

    def rules_at(x, margin=SCALE_MARGIN):
        rho = np.exp(np.clip(x[G:2 * G], -60, 30))
        return [Rule.at(k, nodes, x[c], rho[c], margin) for c, k in enumerate(kappa)]
    return solve_resolved(lambda x, rules: _root(x, fed, spectrum, lam, lam_g, rules, deadline),
                          rules_at, np.asarray(x0, float))


def solve_fedprox_spectral(fed: Federation, spectrum, lam: float, lam_g: float, view,
                           deadline=None):
    """Per client ``(alpha, rho, mu)``, the Euclidean ``(w_j.theta_j, ||w_j||^2)``, and solver
    diagnostics; ``view``: per-group ``(alpha, log rho)`` to start from (the global model's),
    with ``mu = gamma <s> / (lam + 0.2)``, as ``fedprox.solve_fedprox``; ``deadline.Overtime``
    past ``deadline`` (None: no limit).

    Raises
    ------
    SolverError
        No root to ``TOL``, or the quadrature does not settle.
    """
    def start(lam_k):
        return np.concatenate([view, np.log(fed.gamma * spectrum.mean / (lam_k + 0.2))])
    (x, err, nfev), _ = _root_resolved(start(lam), fed, spectrum, lam, lam_g, PATH_NODES,
                                       deadline)
    if not err <= TOL:
        # From the global model's view the root can be out of reach under a wide spectrum
        # (powerlaw:3,1000, gamma [0.5, 1], lam 0.3: "no convergence (residual 2.95)"); the
        # continuation in lam (ranges.ladder), each root the next one's start, reaches it.
        lams = ladder(lam)
        x = start(lams[0])
        for lam_k in lams:
            (x, err, n), _ = _root_resolved(x, fed, spectrum, lam_k, lam_g, PATH_NODES, deadline)
            nfev += n
            if not err <= TOL:
                break
    if not err <= TOL:
        raise SolverError(f"FedProx fixed point with a spectrum: no convergence at "
                          f"lam = {lam:g} (residual {err:.2e})")
    x_fine, err, n, fine = settle(
        lambda x, nodes: _root_resolved(x, fed, spectrum, lam, lam_g, nodes, deadline), x,
        "FedProx fixed point with a spectrum")
    nfev += n
    idx = expand(fed)
    alpha, rho2, mu, (w_th, w_w) = views(x_fine, fed, spectrum, lam, lam_g, fine, euclid=True)
    return alpha[idx], np.sqrt(rho2)[idx], mu[idx], (w_th[idx], w_w[idx]), nfev, err
