"""Exact gradients of the mean finite-M risk in the client weights for the global models of
``engine.operator_subordination``: pFedMe and MAML-FL under covariate shift
(``finite_clients.pfedme_sigma``, ``finite_clients.maml_sigma`` on the joint atoms).

``riskcalc.advise`` minimizes the mean risk (1/M) sum_i R_i over the client weights p (and
the pipeline's shared tuning); with finite differences each gradient costs M + 2 evaluations
of the limits. Here it costs one evaluation and K + 1 complex steps of the groups' own terms
(K the atoms of D), one more per tuning parameter stepped. Derived here, paper 003
(``003_4b976ddf5225c17e.txt``) eqs. 12-14 with the notation of ``operator_subordination``.

1. The mean. In ``operator_subordination.middles`` the target's own source and the "other
   clients" sums differ by the target's own term, which cancels: with s_j = L_j^-1 (r_j^2
   e_b,j + a_j e_v,j), a_j = sigma_j^2 p_j^2 gamma_j, S = sum_j n_j s_j and
   Z = sum_j n_j L_j^-1 - (M - 1) diag(G^-2) ::

       R_i = l_i + f_i(L_i^-1 Z^-1 S),
       l_i = r_i^2 f_i(t_i Phi t_i) - f_i(s_i) + sigma_i^2 (own_i + 2 p_i gamma_i cross_i
             + p_i gamma_i noise_i),

   f_i(.) = tau(F K . K) the target's linear functional. So mean = sum_i u_i l_i +
   Y^T Z^-1 S, u_i = n_i / M, Y_k = sum_i u_i f_i(L_i^-1 e_k): group i enters through its
   own p_i and t_i and three sums (Y, S, Z), and the shifts t_g through G alone
   (E_D[(b_g + t_g)^-1] = G fixes t_g given G and p_g).
2. Frozen adjoints. With a = Z^-T Y, b = Z^-1 S, d(Y^T Z^-1 S) = dY.b + a.dS - a^T dZ b, so
   at fixed G the mean moves as sum_j phi_j with
   phi_j = u_j (l_j + f_j(L_j^-1 b)) + n_j a.s_j - n_j a^T L_j^-1 b,
   each phi_j a function of (p_j, G) and the shared tuning alone; Z's explicit G adds
   -2 (M - 1) sum_k a_k b_k dG_k / G_k^3.
3. G follows p through sum_g n_g t_g - (M - 1) / G = 0, with dt_g = -L_g^-1 (dG - dG_g/dp_g
   dp_g) (``solve_shifts``' derivatives): its G-Jacobian is -Z, so dG/dp_j = Z^-1 n_j
   dt_j/dp_j and, with lambda = Z^-T a_G (a_G the G-gradient of step 2) ::

       dmean/dp_j = dphi_j/dp_j + n_j lambda.dt_j/dp_j,

   and likewise for a shared tuning x: dmean/dx = sum_j (dphi_j/dx + n_j lambda.dt_j/dx).

Complex steps, f'(x) = Im f(x + i h) / h, h = 1e-30 (Squire and Trapp, SIAM Rev. 40, 1998):
one moving every p_j (each phi_j and t_j sees its own), K moving one G_k each, one per
tuning parameter stepped. In a step t_g follows by one Newton step of its equation in complex
arithmetic from the real root (``newton_shift``), and so do the pipeline's own fixed points:

* pFedMe (paper 003, eq. 14; ``pfedme_sigma.group_pieces``, f_i(Z) = tau(F K Z K), F =
  R Sigma_i R): the diagonal roots by ``resolvent_chain.root_step``, the chains in complex
  arithmetic (``resolvent_chain``). Its lam by one more complex step: lam also moves R's
  roots (``root_step`` at complex eta) and the own ridge variances (their exact tangent,
  ``kappa.ridge_variance_lam_derivative``).
* MAML-FL (eqs. 12-13; ``maml_pencils.group_pieces``): f_i(Z) = E_H[Z W_i], W_i =
  E_D[K P^perp Sigma_i P^perp K], for a target with gamma_i > 1, f_i = 0 otherwise (its own
  least squares: l_i = sigma_i^2 own_i, its group still in the global model's sums). The
  companion blocks and the coupled pencils by their fixed points' tangents from the real
  solutions (one Newton step with the real Jacobian, in real arithmetic:
  ``block_pencil.solve(real=)``); alpha by one more complex step.

Small lam (pFedMe). As lam -> 0 the shifts t, c = t + p lam and Lam are O(lam) with O(1)
ratios (lam w = lam / c), so a complex step in lam moves each of the pieces above by O(1 /
lam) (measured: the cross term 0.029 / lam, E_D[K psi K] 13.8 / lam) and the mean's
derivative, O(1), is what is left after they cancel: it loses about eps X / lam relative
(X measured 4 to 400 over three federations; 8e-4 at lam 1e-12 for the one of issue 32).
The loss shows without a reference: the imaginary parts are linear in the step, so two
steps (H and 4 H / 3) differ by rounding only (measured: 3e-4 apart where 8e-4 was lost).
Where they differ by more than ROUNDED, the derivative is the parabola through the complex
steps at x, 2 x and 3 x, x = lam 4^k the first where the parabola's distance to the line
through the first two points (its curvature term) plus 100 times the largest spread is
within 1e-7 of it (a quantized step can agree with itself by chance; three quantized
points on a parabola hardly), and below 1e-8 times the smallest joint atom always (the
spread can miss there): the mean is smooth at lam = 0 (its second lam-derivative measured
constant to 2e-4 from lam 1e-7 to 3e-5), and no such x from 1e-8 to 1e-2 times the smallest
joint atom is a SolverError (unless the step's own 100 spreads are within 1e-6, above that
floor: it answers then). Measured against
Richardson's extrapolation of difference quotients of the mean: 3e-9 at lam 1e-12 to 1e-50
(atoms 1 to 4; the complex step was 8e-4 off at 1e-12, -8 for -1.57 at 1e-16); refused
with atoms 0.01 to 100 or 0.005 to 0.02 (looser bounds answered there up to 1.3e-6 off).
The mean and the weight gradient keep their lam (no cancellation there).

p is free (the limits' formulas at unnormalized weights), as in
``finite_clients.shift.gradient``. Checks (tests): central differences of
``pfedme_shift_group_limits`` / ``maml_shift_group_limits`` at free weights and in lam /
alpha, the means against them; Sigma_j = c I against the Sigma = I closed forms of
``finite_clients.gradient``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine import block_pencil
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.operator_subordination import joint_layout
from riskcalc.linear.finite_clients.identity import check_pooled
from riskcalc.linear.finite_clients import maml_pencils, maml_sigma, pfedme_sigma
from riskcalc.linear.model import check_lam

#: The complex step.
H = 1e-30

#: The relative spread of two complex steps in lam above which pFedMe's lam-derivative is
#: extrapolated from larger lam (module docstring, "Small lam").
ROUNDED = 1e-8


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
        d mean / d lam, exact (a complex step); where rounding spreads two complex steps by
        more than ROUNDED (relative), extrapolated from larger lam (module docstring, "Small
        lam"; measured within 1e-8 relative, else SolverError).

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
    # clients_limit's range (lam = 1e300 was an OverflowError, inf and 1e-300 'no bracket').
    check_lam(lam)
    layout = _layout(gamma, sigma, r, weights, spectra, d)
    mean, grad, grad_lam, spread = _pfedme_at(layout, lam)
    # Below 1e-8 times the smallest atom the loss is at least ROUNDED (measured), and a step
    # quantized coarsely can agree with the second one by chance (1e-50: 7e52 for -1345).
    atom = _smallest_atom(layout)
    forced = lam < 1e-8 * atom
    # The spread against the derivative's scale, mean / (lam + atom), as well as its value: at
    # a stationary lam (the uniform weights' tuned lam, where the optimal weights' search
    # starts) the derivative is ~0 and a spread of 1e-15 was taken for a small lam's loss,
    # refused ('take a larger lam' at lam = 0.55): the search stayed at its start.
    if spread > ROUNDED * max(abs(grad_lam), abs(mean) / (lam + atom)) or forced:
        try:
            grad_lam = _small_lam_derivative(layout, lam)
        except SolverError:
            # The step itself where its spread bounds it as the parabola's are bounded
            # (atoms 0.01 to 100 at lam 1e-6: 4e-8 apart, 3e-8 off; no parabola qualifies).
            if forced or 100.0 * spread > 1e-6 * abs(grad_lam):
                raise
    return mean, grad, grad_lam


def _small_lam_derivative(layout, lam):
    """pFedMe's d mean / d lam at a ``lam`` where the complex step lost its digits (module
    docstring, "Small lam"): the parabola through the complex steps at x, 2 x and 3 x, x the
    first of lam 4^k (from 1e-8 up to 1e-2 times the smallest joint atom) where the parabola's
    distance to the line through the first two points plus 100 times the steps' largest
    spread is within 1e-7 of it; SolverError when none qualifies."""
    atom = _smallest_atom(layout)
    # Below 1e-8 atom the steps lose more than ROUNDED, beyond 1e-2 atom the curvature does.
    x = max(4.0 * lam, 1e-8 * atom)
    while x <= 1e-2 * atom:
        (first, one), (second, two), (third, three) = (_pfedme_at(layout, k * x)[2:]
                                                       for k in (1.0, 2.0, 3.0))
        u = lam / x
        line = first + (u - 1.0) * (second - first)
        parabola = line + (u - 1.0) * (u - 2.0) / 2.0 * (third - 2.0 * second + first)
        if abs(parabola - line) + 100.0 * max(one, two, three) <= 1e-7 * abs(parabola):
            return parabola
        x *= 4.0
    raise SolverError(f"pfedme under covariate shift: d mean / d lam at lam = {lam:.3g} lost "
                      "its digits to rounding (O(1 / lam) terms cancel) and no extrapolation "
                      "from larger lam settles to 1e-7; the mean and the weight gradient are "
                      "exact: take a larger lam")


def _smallest_atom(layout):
    """The smallest positive joint atom of ``_layout``'s ``layout``."""
    values = layout[5]
    return float(np.min(values[values > 0]))


def _pfedme_at(layout, lam):
    """``pfedme_shift_mean_risk_gradient``'s (mean, grad_p, grad_lam) at ``lam`` from
    ``_layout``'s ``layout``, the lam-derivative by the complex step, and that step's
    rounding spread (``mean_and_gradient``'s ``spread``)."""
    gam, sig, rr, p, count, sv, typ, h, Phi, marginals = layout
    sg = sv[typ]
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        t0 = pfedme_sigma.solve_point(gam, sg, h, p, lam, count)
        real = pfedme_sigma._states(t0, gam, sg, h, p, lam)
        C0, G = real[2], real[4][0]

        def local(q, G, x):
            """Per group: t, L^-1, s, l and f at (q, G, lam = x) (module docstring, step 1)."""
            t = t0
            if any(np.iscomplexobj(v) for v in (q, G, x)):
                t = newton_shift(t0, *pfedme_sigma._states(t0, gam, sg, h, q, x, C0)[4:], G)
            pc = pfedme_sigma.group_pieces(t, gam, sg, h, q, x, C0)
            own = pfedme_sigma.own_variances(gam, x, typ, marginals)
            Linv, s, ell = group_terms(t, G, Phi, pc["L"], pc["e_v"], pc["fkzk"], rr, sig, q,
                                       gam, own, pc["cross"], pc["noise"])
            return t, Linv, s, ell, pc["fkzk"]

        mean, grad, (grad_lam,), (spread,) = mean_and_gradient(local, p, G, count,
                                                               tuning=(lam,), spread=True)
    if not (np.isfinite(mean) and np.all(np.isfinite(grad)) and np.isfinite(grad_lam)):
        raise SolverError("pfedme under covariate shift: the mean risk or its gradient is not "
                          "finite")
    return mean, grad, grad_lam, spread


def maml_shift_mean_risk_gradient(*, gamma, sigma, r, weights, spectra, tuning, d=None):
    """The mean finite-M MAML-FL risk of a federation under covariate shift and its exact
    gradient (paper 003, ``003_4b976ddf5225c17e.txt``, eqs. 12-13 with the limits of
    ``finite_clients.maml_sigma``; derived in the module docstring). Arguments, results and
    errors as ``pfedme_shift_mean_risk_gradient``'s, with ``tuning`` MAML-FL's alpha (>= 0,
    ValueError otherwise) and the third result d mean / d alpha (exact, a complex step)."""
    alpha = float(tuning)
    if not alpha >= 0:
        raise ValueError(f"maml_fl needs alpha >= 0; got {alpha:g}")
    gam, sig, rr, p, count, sv, typ, h, Phi, marginals = _layout(gamma, sigma, r, weights,
                                                                 spectra, d)
    own = pfedme_sigma.own_variances(gam, 0.0, typ, marginals)
    live = np.flatnonzero(gam > 1)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if live.size == 0:
            # Every client's own least squares, whatever the global model.
            return float(np.mean(sig ** 2 * own)), np.zeros(gam.size), 0.0
        t0, G, comp = maml_sigma._shifts(gam, sv, typ, h, p, count, alpha)
        L0, sol0 = comp.at(t0)
        what = "MAML-FL exact gradient (companion pencil)"
        real = {}                   # the real point's coupled pencils, the steps' start
        # G_g and L_g at the real point: a step in G alone starts t's Newton step from them.
        start = maml_pencils.responses(sol0)

        def local(q, G, a):
            """Per group: t, L^-1, s, l and f at (q, G, alpha = a)."""
            t, cp, L, sol = t0, comp, L0, sol0
            if any(np.iscomplexobj(x) for x in (q, G, a)):
                cp = maml_pencils.Companions(gam, comp.s, h, q, a)
                L = cp.L.astype(complex)
                L[:, :, 2, 0] = t0
                Gs, Ls = start
                if np.iscomplexobj(q) or np.iscomplexobj(a):
                    sol = block_pencil.solve(gam, cp.s, h, cp.E, L, real=sol0, response=True,
                                             what=what)
                    Gs, Ls = maml_pencils.responses(sol)
                t = newton_shift(t0, Gs, Ls, G)
                L = L.copy()
                L[:, :, 2, 0] = t
                sol = block_pencil.solve(gam, cp.s, h, cp.E, L, real=sol0, response=True,
                                         what=what)
            pc = maml_pencils.group_pieces(cp, L, sol, t, q, a, live, real)
            dtype = np.result_type(pc["W"], pc["cross"], pc["noise"])
            W = np.zeros(t.shape, dtype)
            W[live] = pc["W"]
            cross, noise = np.zeros(gam.size, dtype), np.zeros(gam.size, dtype)
            cross[live], noise[live] = pc["cross"], pc["noise"]

            def f(Z):
                return (Z * W) @ h

            Linv, s, ell = group_terms(t, G, Phi, pc["L"], pc["e_v"], f, rr, sig, q, gam, own,
                                       cross, noise)
            return t, Linv, s, ell, f

        mean, grad, (grad_alpha,) = mean_and_gradient(local, p, G, count, tuning=(alpha,))
    if not (np.isfinite(mean) and np.all(np.isfinite(grad)) and np.isfinite(grad_alpha)):
        raise SolverError("maml_fl under covariate shift: the mean risk or its gradient is not "
                          "finite")
    return mean, grad, grad_alpha


def _layout(gamma, sigma, r, weights, spectra, d):
    """The clients' arrays (one group each), their count and D's layout on the joint atoms
    (``operator_subordination.joint_layout``)."""
    gam, sig, rr, p = (np.asarray(a, dtype=float).ravel() for a in (gamma, sigma, r, weights))
    specs = [spectra] if isinstance(spectra, str) else list(spectra)
    joint = joint_spectrum(specs * (gam.size if len(specs) == 1 else 1), d)
    count = np.ones(gam.size)
    check_pooled(gam, count)
    return (gam, sig, rr, p, count, *joint_layout(joint, joint.types))


def newton_shift(t0, Gs, Ls, G):
    """t_g at a complex step from its real root t0 (E_D[(b_g + t_g)^-1] = G): one Newton step,
    dG_g/dt_g = -L_g, of which the imaginary part only (the real part is t0's)."""
    return t0 + 1j * np.imag(np.linalg.solve(Ls, (Gs - G)[..., None])[..., 0])


def group_terms(t, G, Phi, L, e_v, f, r, sigma, q, gam, own, cross, noise):
    """L^-1, s and l of step 1 (module docstring) for every group at shifts t and weights q
    (complex-safe), from its L, noise source e_v, functional f and variance terms."""
    Linv = np.linalg.inv(L)
    e_b = Phi - 2 * G * t * Phi + np.einsum("gij,gj->gi", L, t * Phi * t)
    a = sigma ** 2 * q ** 2 * gam
    s = np.einsum("gij,gj->gi", Linv, (r ** 2)[:, None] * e_b + a[:, None] * e_v)
    ell = (r ** 2 * f(t * Phi * t) - f(s)
           + sigma ** 2 * (own + 2 * q * gam * cross + q * gam * noise))
    return Linv, s, ell


def mean_and_gradient(local, p, G, count, tuning=(), grad=True, spread=False):
    """The mean risk and its exact gradient (module docstring).

    Parameters
    ----------
    local : callable
        ``local(q, G, *tuning)`` -> (t, L^-1, s, l, f) of every group at weights q, G and
        tuning, complex-safe: t (groups, K), L^-1 (groups, K, K), s (groups, K), l (groups,)
        and f(Z) (groups,) for middles Z (groups, K) (module docstring, step 1).
    p : ndarray (groups,)
    G : ndarray (K,)
        The global point (real).
    count : ndarray (groups,)
    tuning : tuple of float
        Shared tuning parameters to differentiate (by a complex step each).
    grad : bool
        False: the mean only.
    spread : bool
        True: each tuning derivative also by a second complex step, 4 H / 3, and the results
        a fourth item, their differences (rounding only: the imaginary parts are linear in
        the step, so exact arithmetic would give the same).

    Returns
    -------
    mean : float
    grad_p : ndarray (groups,) or None
    grad_tuning : list of float
    spreads : list of float
        With ``spread`` only.
    """
    M = count.sum()
    u = count / M
    _, Linv, s, ell, f = local(p, G, *tuning)
    K = G.size
    Z = np.einsum("g,gij->ij", count, Linv) - (M - 1) * np.diag(1.0 / G ** 2)
    b = np.linalg.solve(Z, count @ s)
    Y = np.array([u @ f(Linv[:, :, k]) for k in range(K)])
    mean = float(u @ ell + Y @ b)
    if not grad:
        return mean, None, []
    a = np.linalg.solve(Z.T, Y)

    def phi(q, G, *x):
        t, Li, s, ell, f = local(q, G, *x)
        return (u * (ell + f(np.einsum("gij,j->gi", Li, b))) + count * (s @ a)
                - count * np.einsum("i,gij,j->g", a, Li, b)), t.imag / H

    val, dt_p = phi(p + 1j * H, G, *tuning)
    a_G = np.array([np.sum(phi(p, G + 1j * H * e, *tuning)[0].imag) / H for e in np.eye(K)])
    lam_G = np.linalg.solve(Z.T, a_G - 2 * (M - 1) * a * b / G ** 3)
    def tuned(k, step):
        x = list(tuning)
        x[k] = x[k] + 1j * step
        v, dt = phi(p, G, *x)
        return float(np.sum(v.imag) / step + count @ (dt @ lam_G * (H / step)))

    out = [tuned(k, H) for k in range(len(tuning))]
    grad_p = val.imag / H + count * (dt_p @ lam_G)
    if not spread:
        return mean, grad_p, out
    return mean, grad_p, out, [abs(tuned(k, 4.0 * H / 3.0) - o) for k, o in enumerate(out)]
