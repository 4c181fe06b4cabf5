"""Exact gradients of a federation's mean finite-M risk in the client weights, under covariate
shift (FedAvg, FTFA, RTFA with the FedAvg global model: ``finite_clients.shift``).

``riskcalc.advise`` minimizes the mean risk (1/M) sum_i R_i over the client weights p (and
RTFA's penalties lam_i); with finite differences each gradient costs M + 1 evaluations of the
limits, each with a (targets x clients) sum (O(M), ``finite_clients.shift.pairs``; it was
O(M^2)). This module gives the gradient at the cost of one pass that also linearizes that sum
and 3 T + 1 (RTFA: 3 T + 2) passes that skip it (T the number of distinct covariances):
measured at 1000 clients of three types, 6-7 evaluations' time (FedAvg 0.045 s, FTFA 0.060
s, RTFA 0.10 s a gradient, one thread, loaded machine). Derived
here, paper 003 (``003_4b976ddf5225c17e.txt``) eqs. 6-8 with the covariate-shift limits of
``finite_clients.shift`` (whose notation this follows).

Structure. ``limits.evaluate`` computes every client's risk from the global point (g_t,
wt_t = sum_l om_l, rho_t = sum_l gamma_l om_l^2 per type t; om_l = p_l / (1 + gamma_l p_l
g_(t(l)))) with client l's weight entering in two roles: as a target's own weight
(p_self_i: its om_i removed from Omega and rho_b, its chains' K = (p_i S_i + Omega)^-1, its
variance terms) and as another client's (p_oth_j: om_j, rho_j and the coefficients of the
(targets x clients) sums). At fixed globals, target i's own terms depend on p_self_i alone
and column j of the sums on p_oth_j alone, so, with mean = (1/M) sum_i R_i:

1. the (targets x clients) sum, target t's sum_j term_tj with term_tj a closed form in the
   column's (alpha_j, beta_j, delta_j) and the target's (a, b, c, e)_(t, t(j))
   (``limits.evaluate``), is linearized once at the real point: its partials in every target's
   4 T numbers and the u-weighted sums over the targets of its partials in every column's 3
   (``pairs.partials``, u_t = 1/M). The complex steps below then skip the sum: its
   imaginary part is the partials times the imaginary parts of its arguments;
2. d_self_i = dmean/dp_self_i: one complex step moving every p_self at once (target i's
   risk sees only its own);
3. d_oth_j = dmean/dp_oth_j: one complex step moving every p_oth (column j's arguments
   move with p_oth_j alone), contracted with the columns' partials; 2 and 3 are one step
   moving both (the linearized sum's risks see p_self alone, its columns p_oth alone);
4. a_g, a_wt, a_rho = dmean/d(g_t, wt_t, rho_t) at fixed p: one complex step each (3 T);
5. the globals follow p: wt_t and rho_t explicitly (dom_l/dp_l = (om_l / p_l)^2,
   dom_l/dg = -gamma_l om_l^2), and g through its fixed point E(g, p) = g - phi(wt(p, g)) = 0,
   phi_t = tau(Sigma_t Abar^-1), Abar = sum_u wt_u Sigma_u: dE/dg = I - Tbar diag(rho)
   (``limits.global_point``'s Newton matrix), dE_t/dp_j = Tbar_(t, t(j)) (om_j / p_j)^2. With
   the adjoint lambda = (dE/dg)^-T a~, a~_u = a_g,u - rho_u a_wt,u - 2 a_rho,u sum_(l of type
   u) gamma_l^2 om_l^3,

       dmean/dp_j = d_self_j + d_oth_j
                    + (om_j / p_j)^2 [a_wt + 2 gamma_j om_j a_rho - Tbar lambda]_(t(j));

6. RTFA: dmean/dlam_i, one complex step moving every lam (target i's risk depends on its own
   lam_i alone: the global model has none), through R = (S_i / lam_i + 1)^-1 in its chains
   and its own ridge variance (``chains.target_chains``).

Every complex step, f'(x) = Im f(x + i h) / h with h = 1e-30 (Squire and Trapp, SIAM Rev. 40,
1998), is exact to rounding: ``limits.evaluate`` is arithmetic but for the targets' diagonal
roots and resolvent chains, which follow the step by their tangents
(``chains.target_chains``: one Newton step of the root's equation in complex
arithmetic; the chains' derivatives as longer chains). p is free here (the limits' formulas
at unnormalized weights), as in ``finite_clients.gradient`` (Sigma = I), whose route this
mirrors.
Checks (tests): fourth-order central differences of the limits at free weights and in the
penalties; Sigma_j = c I for every client against ``finite_clients.gradient`` (closed forms).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients.identity import check_pooled
from riskcalc.linear.finite_clients.shift.limits import evaluate, global_point

#: The complex step.
H = 1e-30
#: Methods whose gradient under covariate shift is implemented.
METHODS = ("fedavg", "ftfa", "rtfa")


def shift_mean_risk_gradient(method: str, *, gamma, sigma, r, weights, spectra, d=None,
                             tuning=None):
    """The mean finite-M risk of a federation under covariate shift and its exact gradient in
    the client weights (paper 003, ``003_4b976ddf5225c17e.txt``, eqs. 6-8 with the limits of
    ``finite_clients.shift``; the gradient is derived in the module docstring).

    Parameters
    ----------
    method : {"fedavg", "ftfa", "rtfa"}
    gamma, sigma, r : ndarray (M,)
    weights : ndarray (M,)
        Positive client weights summing to one (as ``clients_limit`` normalizes them).
    spectra : sequence (M,) or str
        Each client's covariance (``clients_limit``'s ``spectra``).
    d : int, optional
        The dimension, for ``powerlaw:P`` in ``spectra``.
    tuning : ndarray (M,) or float, optional
        RTFA's per-client lam (> 0).

    Returns
    -------
    mean : float
        (1/M) sum_j R_j, as ``clients_limit(...).mean_risk`` (to rounding).
    grad_p : ndarray (M,)
        d mean / d p_j with p free (the limits' formulas at unnormalized weights).
    grad_tuning : ndarray (M,) or None
        d mean / d lam_j (RTFA), None otherwise.

    Raises
    ------
    ValueError
        For a method outside ``METHODS``, RTFA without ``tuning``, or pooled N <= d.
    SolverError
        If a fixed point does not converge or is unstable, or the result is not finite.
    """
    if method not in METHODS:
        raise ValueError(f"gradients under covariate shift are implemented for "
                         f"{', '.join(METHODS)}; got {method}")
    gam, sig, rr, p = (np.asarray(a, dtype=float).ravel() for a in (gamma, sigma, r, weights))
    if method == "rtfa" and tuning is None:
        raise ValueError("rtfa needs tuning (its per-client lam)")
    lam = (np.broadcast_to(np.asarray(tuning, dtype=float), gam.shape) if method == "rtfa"
           else np.zeros(gam.size))
    specs = [spectra] if isinstance(spectra, str) else list(spectra)
    joint = joint_spectrum(specs * (gam.size if len(specs) == 1 else 1), d)
    typ, w, sv = joint.types, joint.weights, joint.values
    T = sv.shape[0]
    count = np.ones(gam.size)
    check_pooled(gam, count)
    tgt = np.arange(gam.size)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        g, om, _, tbar, rho = global_point(gam, p, count, typ, w, sv)
        wt = np.bincount(typ, count * om, minlength=T)
        base = {"p_self": p, "p_oth": p, "g": g, "wt_tot": wt, "rho_tot": rho}
        u = count / count.sum()
        memo = {}
        bias, var, parts = evaluate(method, gam, rr, sig, count, lam, joint, typ, tgt,
                                    pairs=u, memo=memo, **base)
        mean = float(u @ (bias + var))
        w_cols = parts["columns"]

        def step(names, direction):
            """Im of (target risks, columns) / H at a complex step of the inputs ``names``."""
            args = dict(base, lam=lam)
            for name in names:
                args[name] = args[name] + 1j * H * direction
            b, v, cols = evaluate(method, gam, rr, sig, count, joint=joint, typ=typ, tgt=tgt,
                                  pairs=parts, memo=memo, **args)
            return (b + v).imag / H, np.array(cols).imag / H

        def moved(name, direction):
            risks, cols = step((name,), direction)
            return u @ risks + np.sum(w_cols * cols)

        # Steps 2 and 3 in one: with the sum linearized the risks see p_self alone and the
        # columns p_oth alone (``limits.evaluate``), so each part is its own step's, bit for
        # bit (tests/test_advise_shift_fast.py).
        own, others = step(("p_self", "p_oth"), 1.0)
        d_self = u * own
        d_oth = np.sum(w_cols * others, axis=0)
        a = {name: np.array([moved(name, np.arange(T) == t) for t in range(T)])
             for name in ("g", "wt_tot", "rho_tot")}
        cube = np.bincount(typ, count * gam ** 2 * om ** 3, minlength=T)
        a_tilde = a["g"] - rho * a["wt_tot"] - 2 * cube * a["rho_tot"]
        lam_g = np.linalg.solve((np.eye(T) - tbar * rho).T, a_tilde)
        glob = a["wt_tot"][typ] + 2 * gam * om * a["rho_tot"][typ] - (tbar @ lam_g)[typ]
        grad = d_self + d_oth + count * (om / p) ** 2 * glob
        grad_lam = None
        if method == "rtfa":
            # Target i's risk depends on its own lam_i alone (the global model has no lam).
            grad_lam = u * step(("lam",), 1.0)[0]
    if not (np.isfinite(mean) and np.all(np.isfinite(grad))
            and (grad_lam is None or np.all(np.isfinite(grad_lam)))):
        raise SolverError("covariate shift: the mean risk or its gradient is not finite (inputs "
                          "beyond floating-point range)")
    return mean, grad, grad_lam
