r"""Fine-tuning toward FedAvg's global model with a covariance spectrum (RTFA at finite M): the
exact limit (derived here).

``riskcalc.logistic.blocks.finetune``'s estimator ``w_h = argmin (1/n_i) sum_{block i} l +
(lam/2) ||w - w_g||^2`` with features ``x ~ N(0, Sigma)`` and the global model ``w_g`` of
``riskcalc.logistic.spectrum.pooled`` (its notation: ``R_g = (lam_g + Dbar Sigma)^-1``,
``m_g = E w_0 + sum_j pi_j eps_j r_j u_j``, ``w_g = R_g Sigma m_g - R_g Sigma^(1/2) zeta_g``,
``zeta_g`` of per-coordinate variance ``F / d``). ``g(s) = 1/(lam_g + Dbar s)``,
``h(s) = 1/(lam + D_h s)``, ``<.>`` the mean over ``H``.

Derivation (``finetune``'s steps with ``spectral``'s resolvent step)
----------------------------------------------------------------------
1. Training margins as in ``finetune`` step 1: ``z_h = prox_{mu_h l}(omega_h - kappa_hg l'(z_g))``
   with ``mu_h = tr(Sigma H_h^-1) / n_i -> gamma_i <s h>`` and
   ``kappa_hg = lam c_i tr(Sigma H_h^-1 H_g^-1)``.
2. Cross resolvent. ``lam H_h^-1 H_g^-1 = H_g^-1 - (1/n_i) sum_k l''_h x_k x_k' H_h^-1 H_g^-1``;
   Sherman-Morrison in both resolvents (sample k is in both) and ``E[x x' B x x' C] ->
   tr(Sigma B) Sigma C`` give ``H_h^-1 H_g^-1 -> R_h (I + c_i T D_hg Sigma) R_g`` with
   ``T = tr(Sigma H_h^-1 H_g^-1)``, ``R_h = (lam + D_h Sigma)^-1``; taking ``tr(Sigma .)``,

       kappa_hg = lam W_i L_1 / (1 - W_i D_hg L_2),   L_k = <s^k h g>.

   (At ``Sigma = I``: ``finetune``'s ``kappa_hg = lam mu_g / (lam + D_x)``, since
   ``D_h - mu_g D_hg = D_x``.)
3. Stationarity with Stein's lemma through both cavity margins (Onsager terms ``D_h Sigma w_h``
   and ``-kappa_hg D_hg Sigma w_g``, ``finetune`` step 3) and the label's margin:

       w_h = b(Sigma) w_g + eps_h h(Sigma) Sigma w_i - h(Sigma) Sigma^(1/2) zeta_h,
       b(s) = (lam + kappa_hg D_hg s) h(s),
       eps_h = (E3 + A_h D_h - A_g kappa_hg D_hg) / kappa,

   ``zeta_h`` isotropic with per-coordinate variance ``V_h / d``, ``V_h = gamma_i E[l'_h^2]``,
   and covariance ``C_gh / d`` with ``zeta_g``, ``C_gh = W_i E[l'_g l'_h]`` (the shared block).
4. Overlaps, with ``M_gg = E^2 S^2 + sum_j pi_j^2 eps_j^2 r_j^2``, ``M_gi = E S^2 +
   pi_i eps_i r_i^2``, ``M_ii = S^2 + r_i^2`` (``m_g.m_g``, ``m_g.w_i``, ``w_i.w_i`` by their
   isotropic directions)::

       A_h kappa       = M_gi <b g s^2> + eps_h M_ii <h s^2>,
       w_h' Sigma w_g  = M_gg <b g^2 s^3> + eps_h M_gi <h g s^3> + F <b g^2 s^2> + C_gh <g h s^2>,
       w_h' Sigma w_h  = M_gg <b^2 g^2 s^3> + 2 eps_h M_gi <b g h s^3> + eps_h^2 M_ii <h^2 s^3>
                         + F <b^2 g^2 s^2> + 2 C_gh <b g h s^2> + V_h <h^2 s^2>;

   the Euclidean ``w_h.w_i`` and ``||w_h||^2`` are the same sums with one power of ``s`` less.
   At ``Sigma = I`` these are ``finetune``'s ``nu_gh = rho_h nu_g^2 + Q_gh`` and
   ``nu_h^2 = rho_h^2 nu_g^2 + 2 rho_h Q_gh + Q_h`` (``C_gh g h = Q_gh``, ``V_h h^2 = Q_h``).

Unknowns ``y = (A_h, log mu_h, log kappa_hg, nu_gh, log nu_h)`` as in ``finetune`` (``nu_gh``,
``nu_h``: the parts across ``w_i`` in the ``Sigma`` geometry), on its 3-d rule ``Rule3`` with
the global model's view ``(A_g, nu_g, mu_g)`` of block i.
"""

from __future__ import annotations

import numpy as np

from riskcalc.logistic.blocks.finetune import GlobalView, Rule3, _start, moments, solve_ladder
from riskcalc.logistic.engine.gaussian import SCALE_MARGIN, solve_resolved
from riskcalc.logistic.engine.deadline import by_deadline


class Coupling:
    """What block i's fine-tuning needs of the global model (``pooled_spectral`` state):
    the view, ``lam_g``, ``Dbar``, ``F``, ``W_i``, the ``M`` products, ``S^2``, ``r_i^2`` and the
    spectrum's atoms and weights; ``moments``: the loss's expectations (``finetune.moments``;
    the tests put the square loss's closed forms here)."""

    moments = staticmethod(moments)

    def __init__(self, fed, st, c: int, spectrum, lam_g: float):
        S2 = fed.signal ** 2
        spread = float(np.sum(fed.count * (fed.pi * st.eps * fed.r) ** 2))
        self.view = GlobalView(float(st.alpha[c]), float(st.rho[c]), float(st.mu[c]),
                               float(st.kappa[c]), float(fed.gamma[c]))
        self.lam_g, self.Dbar, self.F, self.W = lam_g, st.Dbar, st.F, float(fed.W[c])
        self.M_gg = st.E ** 2 * S2 + spread
        self.M_gi = st.E * S2 + float(fed.pi[c] * st.eps[c] * fed.r[c] ** 2)
        self.M_ii = S2 + float(fed.r[c]) ** 2
        # m_g's part across w_i (step 4's sums of squares): in the plane of (w_0, u_i), and
        # the other clients' directions (count - 1 of c's own group).
        own = (fed.pi * st.eps * fed.r) ** 2
        across = S2 * float(fed.r[c] ** 2 * (st.E - fed.pi[c] * st.eps[c]) ** 2) / self.M_ii \
            if self.M_ii > 0 else st.E ** 2 * S2
        self.T = across + float(np.sum((fed.count - (np.arange(own.size) == c)) * own))
        self.s, self.wts = spectrum.atoms, spectrum.weights

    def avg(self, values):
        return float(values @ self.wts)


def _parts(y, cp: Coupling, lam, rule):
    """The moments at ``y`` and the overlaps of step 4 (Sigma-weighted and Euclidean)."""
    m = cp.moments(y, cp.view, lam, rule)
    v, s = cp.view, cp.s
    g, h = 1.0 / (cp.lam_g + cp.Dbar * s), 1.0 / (lam + m["D_h"] * s)
    b = (lam + m["k_hg"] * m["D_hg"] * s) * h
    # 0 when w_i = 0 (signal 0, r_i 0; its terms carry M_ii = M_gi = 0), as in the one-client
    # and pooled spectral fixed points: the division gave NaN, "no convergence (residual nan)".
    eps = (m["E3"] + m["A_h"] * m["D_h"] - v.A_g * m["k_hg"] * m["D_hg"]) / v.kappa \
        if v.kappa > 0 else 0.0
    C_gh = cp.W * m["Q_gh"] * v.gamma / (v.mu_g * m["mu_h"])
    V_h = m["Q_h"] * v.gamma ** 2 / m["mu_h"] ** 2
    avg = cp.avg

    def products(k):
        """``(w_h.S^k w_i, w_h.S^k w_g, w_h.S^k w_h)`` for ``k = 1`` (Sigma) or 0."""
        p = s ** k
        hw = cp.M_gi * avg(b * g * s * p) + eps * cp.M_ii * avg(h * s * p)
        hg = (cp.M_gg * avg(b * g * g * s * s * p) + eps * cp.M_gi * avg(h * g * s * s * p)
              + cp.F * avg(b * g * g * s * p) + C_gh * avg(g * h * s * p))
        hh = (cp.M_gg * avg(b * b * g * g * s * s * p)
              + 2 * eps * cp.M_gi * avg(b * g * h * s * s * p)
              + eps * eps * cp.M_ii * avg(h * h * s * s * p) + cp.F * avg(b * b * g * g * s * p)
              + 2 * C_gh * avg(b * g * h * s * p) + V_h * avg(h * h * s * p))
        return hw, hg, hh
    def across():
        """``(nu_gh, nu_h^2)``: ``w_h' Sigma w_g - A_h A_g`` and ``w_h' Sigma w_h - A_h^2`` as
        sums of products (the differences lost a near-infinite-data client's digits): per
        atom the teachers' parts across ``w_i`` (``T``) and along it (``p_g``, ``p_h``, their
        covariance over the eigenvalues), and the noise, which is across ``w_i``."""
        root = np.sqrt(cp.M_ii)
        p_g = g * s * cp.M_gi / root if root > 0 else 0.0 * s
        p_h = b * p_g + eps * h * s * root

        def cov(x, y):
            return avg(s * (x - avg(s * x) / avg(s)) * (y - avg(s * y) / avg(s)))
        gh = (cp.T * avg(b * g * g * s ** 3) + cov(p_g, p_h) + cp.F * avg(b * g * g * s * s)
              + C_gh * avg(g * h * s * s))
        hh = (cp.T * avg(b * b * g * g * s ** 3) + cov(p_h, p_h)
              + cp.F * avg(b * b * g * g * s * s) + 2 * C_gh * avg(b * g * h * s * s)
              + V_h * avg(h * h * s * s))
        return gh, hh
    L1, L2 = avg(s * h * g), avg(s * s * h * g)
    return m, dict(mu_h=v.gamma * avg(s * h),
                   k_hg=lam * cp.W * L1 / (1.0 - cp.W * m["D_hg"] * L2),
                   sigma=products(1), euclid=products(0), across=across())


def residuals(y, cp: Coupling, lam: float, rule):
    m, p = _parts(y, cp, lam, rule)
    hw = p["sigma"][0]
    gh, hh = p["across"]
    v = cp.view
    return np.array([m["mu_h"] / p["mu_h"] - 1.0,
                     m["k_hg"] / p["k_hg"] - 1.0,
                     m["A_h"] - (hw / v.kappa if v.kappa > 0 else 0.0),
                     (m["nu_gh"] - gh) / (v.nu_g ** 2 + v.A_g ** 2),
                     np.log(m["nu_h"]) - 0.5 * np.log(max(hh, 1e-300))])


def _root(y0, cp, lam, rule, deadline=None):
    from scipy.optimize import root

    sol = root(by_deadline(residuals, deadline), y0, args=(cp, lam, rule), method="hybr",
               options={"xtol": 1e-12})
    if not np.all(np.isfinite(sol.x)):
        return sol.x, np.inf, sol.nfev
    return sol.x, float(np.max(np.abs(residuals(sol.x, cp, lam, rule)))), sol.nfev


def _root_resolved(y0, cp, lam, nodes, deadline=None):
    (y, err, nfev), rules = solve_resolved(
        lambda y, rules: _root(y, cp, lam, rules[0], deadline),
        lambda y, margin=SCALE_MARGIN: [Rule3.at(cp.view, nodes, y, margin, deadline)],
        np.asarray(y0, float))
    return y, err, nfev, rules[0]


def solve_finetune_spectral(cp: Coupling, lam: float, deadline=None):
    """The fixed point for ``lam > 0`` (``finetune.solve_finetune``'s path: directly from the
    large-lam start, else continuation in lam by factors of 10; then the ladder ``NODES3``).
    Returns a dict: ``A_h``, ``sigma_risk``, ``risk``, ``cosine_uncentred``, ``a``, ``rho``
    (block i's view of ``w_h``), ``iterations``, ``residual``; ``deadline.Overtime`` past
    ``deadline`` (``time.perf_counter``'s clock; None: no limit).

    Raises
    ------
    SolverError
        No root to ``TOL``, or the quadrature does not settle.
    """
    y_fine, fine, err, nfev, _ = solve_ladder(
        lambda y0, lam_k, nodes: _root_resolved(y0, cp, lam_k, nodes, deadline),
        lambda lam_k: _start(cp.view, lam_k), lam, "logistic fine-tuning with a spectrum")
    m, p = _parts(y_fine, cp, lam, fine)
    kappa, A_h, nu_h = cp.view.kappa, float(m["A_h"]), float(m["nu_h"])
    hw, _, hh = p["euclid"]
    return dict(a=A_h, rho=nu_h, sigma_risk=(A_h - kappa) ** 2 + nu_h ** 2,
                risk=float(hh - 2.0 * hw + cp.M_ii),
                cosine_uncentred=float(hw / np.sqrt(hh * cp.M_ii)) if hh * cp.M_ii > 0
                else float("nan"),
                iterations=nfev, residual=err)
