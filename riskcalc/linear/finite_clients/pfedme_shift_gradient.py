"""Exact gradient of a federation's mean finite-M pFedMe risk in the client weights, under
covariate shift (``finite_clients.pfedme_sigma``'s limits on the joint atoms).

``riskcalc.advise`` minimizes the mean risk (1/M) sum_i R_i over the client weights p and
pFedMe's shared lam; with finite differences each gradient costs M + 2 evaluations of the
limits. Here the weights' part costs one evaluation and K + 1 complex steps of the groups'
own terms (K the joint atoms), the penalty's two more evaluations (central differences in
log lam). Derived here, paper 003 (``003_4b976ddf5225c17e.txt``) eq. 14 with the notation of
``finite_clients.pfedme_sigma`` and ``engine.operator_subordination``.

1. The mean. In ``operator_subordination.middles`` the target's own source and the "other
   clients" sums differ by the target's own term, which cancels: with s_j = L_j^-1 (r_j^2
   e_b,j + a_j e_v,j), a_j = sigma_j^2 p_j^2 gamma_j, S = sum_j n_j s_j and
   Z = sum_j n_j L_j^-1 - (M - 1) diag(G^-2) ::

       R_i = l_i + f_i(L_i^-1 Z^-1 S),
       l_i = r_i^2 f_i(t_i Phi t_i) - f_i(s_i) + sigma_i^2 (own_i + 2 p_i gamma_i cross_i
             + p_i gamma_i noise_i),

   f_i(.) = tau(F K . K) the target's linear functional (``pfedme_sigma.group_pieces``). So
   mean = sum_i u_i l_i + Y^T Z^-1 S, u_i = n_i / M, Y_k = sum_i u_i f_i(L_i^-1 e_k): group i
   enters through its own p_i and t_i and three sums (Y, S, Z), and the shifts t_g through
   G alone (E_D[(b_g + t_g)^-1] = G fixes t_g given G and p_g).
2. Frozen adjoints. With alpha = Z^-T Y, beta = Z^-1 S, d(Y^T Z^-1 S) = dY.beta + alpha.dS -
   alpha^T dZ beta, so at fixed G the mean moves as sum_j phi_j with
   phi_j = u_j (l_j + f_j(L_j^-1 beta)) + n_j alpha.s_j - n_j alpha^T L_j^-1 beta,
   each phi_j a function of (p_j, G) alone; Z's explicit G adds
   -2 (M - 1) sum_k alpha_k beta_k dG_k / G_k^3.
3. G follows p through sum_g n_g t_g - (M - 1) / G = 0, with dt_g = -L_g^-1 (dG - dG_g/dp_g
   dp_g) (``solve_shifts``' derivatives): its G-Jacobian is -Z, so dG/dp_j = Z^-1 n_j
   dt_j/dp_j and, with lambda = Z^-T a_G (a_G the G-gradient of step 2) ::

       dmean/dp_j = dphi_j/dp_j + n_j lambda.dt_j/dp_j.

Complex steps, f'(x) = Im f(x + i h) / h, h = 1e-30 (Squire and Trapp, SIAM Rev. 40, 1998):
one moving every p_j (each phi_j and t_j sees its own), K moving one G_k each. In a step t_g
follows by one Newton step of its equation in complex arithmetic, the diagonal roots by
``resolvent_chain.root_step``, the chains in complex arithmetic (``resolvent_chain``), all
exact to rounding. p is free (the limits' formulas at unnormalized weights), as in
``finite_clients.shift_gradient``. Checks (tests): central differences of
``pfedme_shift_group_limits`` at free weights and in lam, the mean against it; Sigma_j = c I
against the Sigma = I closed forms of ``finite_clients.gradient``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.operator_subordination import joint_layout
from riskcalc.linear.finite_clients.identity import check_pooled
from riskcalc.linear.finite_clients.pfedme_sigma import (_states, group_pieces, own_variances,
                                                         solve_point)

#: The complex step.
H = 1e-30
#: The central differences' step in log lam (truncation ~1e-10 relative, the fixed point's
#: rounding over it ~1e-8 at worst).
LOG_STEP = 1e-5


def pfedme_shift_mean_risk_gradient(*, gamma, sigma, r, weights, spectra, tuning, d=None):
    """The mean finite-M pFedMe risk of a federation under covariate shift and its gradient
    (paper 003, ``003_4b976ddf5225c17e.txt``, eq. 14 with the limits of
    ``finite_clients.pfedme_sigma``; derived in the module docstring).

    Parameters
    ----------
    gamma, sigma, r : ndarray (M,)
    weights : ndarray (M,)
        Positive client weights (the limits' formulas hold for free weights).
    spectra : sequence (M,) or str
        Each client's covariance (``clients_limit``'s ``spectra``).
    tuning : float
        pFedMe's lam (> 0).
    d : int, optional
        The dimension, for ``powerlaw:P`` in ``spectra``.

    Returns
    -------
    mean : float
        (1/M) sum_j R_j, as ``clients_limit("pfedme", ...).mean_risk`` (to rounding).
    grad_p : ndarray (M,)
        d mean / d p_j, exact.
    grad_lam : float
        d mean / d lam (central differences in log lam).

    Raises
    ------
    ValueError
        If lam <= 0 or pooled N <= d.
    SolverError
        If the fixed point does not converge or the result is not finite.
    """
    lam = float(tuning)
    if not lam > 0:
        raise ValueError(f"pfedme needs lam > 0; got {lam:g}")
    gam, sig, rr, p = (np.asarray(a, dtype=float).ravel() for a in (gamma, sigma, r, weights))
    specs = [spectra] if isinstance(spectra, str) else list(spectra)
    joint = joint_spectrum(specs * (gam.size if len(specs) == 1 else 1), d)
    count = np.ones(gam.size)
    check_pooled(gam, count)
    sv, typ, h, Phi, marginals = joint_layout(joint, joint.types)
    fed = (gam, sv[typ], h, Phi, rr, sig, count)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        mean, grad = _mean_and_grad(fed, p, lam, own_variances(gam, lam, typ, marginals))
        ends = [_mean_and_grad(fed, p, lam * np.exp(e), own_variances(
            gam, lam * np.exp(e), typ, marginals), grad=False)[0]
            for e in (LOG_STEP, -LOG_STEP)]
        grad_lam = (ends[0] - ends[1]) / (2 * LOG_STEP) / lam
    if not (np.isfinite(mean) and np.all(np.isfinite(grad)) and np.isfinite(grad_lam)):
        raise SolverError("pfedme under covariate shift: the mean risk or its gradient is not "
                          "finite")
    return mean, grad, grad_lam


def _mean_and_grad(fed, p, lam, own, grad=True):
    """The mean risk at (p, lam) and, with ``grad``, its exact p-gradient (module
    docstring)."""
    gam, sg, h, Phi, r, sigma, count = fed
    t0 = solve_point(gam, sg, h, p, lam, count)
    C0 = _states(t0, gam, sg, h, p, lam)[2]
    M = count.sum()
    u = count / M

    def local(q, G):
        """Per group: t, L^-1, s, l and f at (q, G) (module docstring, step 1)."""
        t = t0
        if np.iscomplexobj(q) or np.iscomplexobj(G):
            # One Newton step of E_D[(b_g + t_g)^-1] = G (dG_g/dt_g = -L_g) from the real root.
            Gs, Ls = _states(t0, gam, sg, h, q, lam, C0)[4:]
            t = t0 + 1j * np.imag(np.linalg.solve(Ls, (Gs - G)[..., None])[..., 0])
        pc = group_pieces(t, gam, sg, h, q, lam, C0)
        Linv, f = np.linalg.inv(pc["L"]), pc["fkzk"]
        e_b = Phi - 2 * G * t * Phi + np.einsum("gij,gj->gi", pc["L"], t * Phi * t)
        a = sigma ** 2 * q ** 2 * gam
        s = np.einsum("gij,gj->gi", Linv, (r ** 2)[:, None] * e_b + a[:, None] * pc["e_v"])
        ell = (r ** 2 * f(t * Phi * t) - f(s)
               + sigma ** 2 * (own + 2 * q * gam * pc["cross"] + q * gam * pc["noise"]))
        return t, Linv, s, ell, f

    G = _states(t0, gam, sg, h, p, lam, C0)[4][0]
    _, Linv, s, ell, f = local(p, G)
    K = G.size
    Z = np.einsum("g,gij->ij", count, Linv) - (M - 1) * np.diag(1.0 / G ** 2)
    beta = np.linalg.solve(Z, count @ s)
    Y = np.array([u @ f(Linv[:, :, k]) for k in range(K)])
    mean = float(u @ ell + Y @ beta)
    if not grad:
        return mean, None
    alpha = np.linalg.solve(Z.T, Y)

    def phi(q, G):
        t, Li, s, ell, f = local(q, G)
        return (u * (ell + f(np.einsum("gij,j->gi", Li, beta))) + count * (s @ alpha)
                - count * np.einsum("i,gij,j->g", alpha, Li, beta)), t

    val, t = phi(p + 1j * H, G)
    d_p, dt_p = val.imag / H, t.imag / H
    a_G = np.array([np.sum(phi(p, G + 1j * H * e)[0].imag) / H for e in np.eye(K)])
    a_G -= 2 * (M - 1) * alpha * beta / G ** 3
    lam_G = np.linalg.solve(Z.T, a_G)
    return mean, d_p + count * (dt_p @ lam_G)
