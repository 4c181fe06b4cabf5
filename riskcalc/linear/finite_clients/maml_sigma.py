"""Finite-M limit of MAML-FL (its own global objective) for a GENERAL covariance spectrum.

Paper 003 (``003_4b976ddf5225c17e.txt``), eqs. 12-13: the global model minimizes
sum_j p_j L_j(theta - alpha grad L_j(theta)), a quadratic with Hessian A = sum_j b_j,
b_j = p_j phi(S_j), phi(s) = s (1 - alpha s)^2, and noise source psi(s) = s (1 - alpha s)^4
(``finite_clients.own``, which treats Sigma = I); the client then interpolates its own data
with the least change (eq. 13): R = P_i^perp (gamma_i > 1; local least squares, R = 0, for
gamma_i <= 1), noise X_i^+ xi_i. M clients share the spectrum H, in groups of identical
clients. Derived here:

1. The operator-valued subordination of ``operator_subordination`` (one shift t_g in
   D = alg(Sigma) per group) needs G(t) = E_D[K] and L[h] = E_D[K h K] for
   K = (t + p phi(S))^-1, the inverse of a cubic in S with a Sigma-dependent shift. K is the
   (1, 3) block of the inverse of the companion pencil of ``block_pencil``
   (c_1, c_2, c_3 = p, -2 alpha p, alpha^2 p), whose deterministic equivalent gives G, and
   L = -dG/dt is its linear response to t.
2. Noise source: psi = R_m^2 phi with R_m = I - alpha S and phi K = (I - t K) / p, so
   E_D[K psi K] = (E_D[R_m^2 K] - E_D[K t R_m^2 K]) / p (E_D commutes with transposition);
   R_m^2 K = sum_j c'_j S^(j-1) K with c' = (1, -2 alpha, alpha^2) is a combination of the
   rows (P^-1)_(j3) = S^(j-1) K of the companion pencil.
3. Target terms (F = P^perp Sigma P^perp): tau(F K Z K) = E_H[Z W], W = E_D[K P^perp Sigma
   P^perp K]; the target's own noise adds the cross term 2 p gamma tau(Sigma P^perp K R_m^2
   (I - P^perp)) (X_i^T (X_i^+)^T = I - P^perp) and p^2 gamma tau(F K psi K) =
   p gamma (tau(F K R_m^2) - tau(F K R_m^2 t K)). Every trace is a block of one pencil
   (``pencil_assembly.Pencil``: companion blocks, projection rows and couplings)::

       X1 = tau(Sigma R_m^2 K P^perp),  X2 = tau(Sigma P^perp R_m^2 K P^perp),
       X3 = tau(Sigma P^perp K t R_m^2 K P^perp),
       V_i = sigma_i^2 (own + 2 p gamma (X1 - X2) + p gamma (X2 - X3) + ...)

   (the dots: ``operator_subordination.middles``).

Checks (tests): Sigma = I gives ``finite_clients.own`` (Marchenko-Pastur quadrature; homogeneous
and heterogeneous federations, both weightings), M -> infinity the oracle limit (FTFA's, which
does not depend on alpha), alpha = 0 the FedAvg-then-FTFA limit of ``finite_clients.sigma``,
M = 1 least squares, and simulation of the federated pipeline.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.engine import pencil_assembly
from riskcalc.linear.finite_clients.identity import client_weights
from riskcalc.linear.finite_clients.maml_pencils import (FAILED, Companions, Stuck,
                                                         check_peak, coefficients,
                                                         group_pieces, physical)
from riskcalc.linear.finite_clients.own_objective import check_near_pooled
from riskcalc.linear.finite_clients.pfedme_sigma import check_clients
from riskcalc.linear.finite_clients.shift.limits import global_point
from riskcalc.linear.finite_clients.shift.conditioning import eigenvalue_span
from riskcalc.linear.finite_clients.shift.chains import own_variance
from riskcalc.linear.engine.operator_subordination import (check_size, joint_layout, middles,
                                                           shared_layout, solve_shifts)

#: Halvings of a continuation step in alpha before giving up.
_HALVINGS = 20
#: The eigenvalue span beyond which a failure names the span (``_group_limits``).
_SPAN = 1e6
#: ``_shifts``' first continuation step.
_FIRST = 1 / 16
#: N/d - 1 below which a failure names pooled N = d as its cause (``_shifts``, ``_pieces``).
_NEAR = 0.1
#: N/d - 1 below which the risks are solved by a second continuation path (``_check_paths``).
_CHECK = 0.2
#: The relative difference between the two paths beyond which the risks are refused.
_AGREE = 1e-8
#: The last solution of ``_shifts`` (one entry: its clients' key -> shifts, blocks).
_LAST = {}


def maml_sigma_group_limits(gam, r, sigma, count, alpha: float, weights, spectrum):
    """Bias and variance of a client of each group (``count`` identical clients per group,
    per-group gamma, r, sigma; one alpha and spectrum) under MAML-FL with its own global model
    over all the clients (module docstring).

    Raises
    ------
    ValueError
        If alpha < 0 or pooled N <= d.
    SolverError
        If a fixed point does not converge; IllConditioned near pooled N = d where two
        continuation paths disagree beyond ``_AGREE`` (``_check_paths``).
    """
    return _group_limits(gam, r, sigma, count, alpha, weights,
                         *shared_layout(spectrum, np.size(gam)))


def maml_shift_group_limits(gam, r, sigma, count, alpha: float, weights, joint, typ):
    """``maml_sigma_group_limits`` under covariate shift: client covariances diagonal in one
    shared basis (``riskcalc.linear.engine.joint_spectrum``; group g of type ``typ[g]``), a uniform
    signal direction, each target's risk in its own covariance. The module's derivation holds
    with D the diagonal matrices of the shared basis (the W_j are free with amalgamation over
    it, ``finite_clients.shift``): every function of Sigma becomes a function on the joint
    atoms, and client g's pencils use its own eigenvalues there.

    Raises
    ------
    ValueError
        If alpha < 0 or pooled N <= d.
    SolverError
        If a fixed point does not converge; IllConditioned near pooled N = d where two
        continuation paths disagree beyond ``_AGREE`` (``_check_paths``).
    """
    return _group_limits(gam, r, sigma, count, alpha, weights, *joint_layout(joint, typ))


def _group_limits(gam, r, sigma, count, alpha, weights, sv, typ, h, Phi, marginals):
    """The limits per group: group g's client covariance has eigenvalues sv[typ[g]] on the
    atoms of D (masses h), Phi the signal density there, ``marginals`` each group's spectrum
    (for its own least-squares variance)."""
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0; got {alpha}")
    gam, r, sigma, count = (np.asarray(x, dtype=float).ravel() for x in (gam, r, sigma, count))
    check_near_pooled("maml_fl", gam, count)
    # The bias's 1/M correction drowns in rounding, as pFedMe's (fuzz38 maml F4, docs F1).
    check_clients("maml_fl", count)
    check_size("maml_fl", gam.size, h.size)
    p = client_weights(gam, count, weights)
    if p.min() < np.finfo(float).eps * p.max():
        # The companion pencils cannot be followed there: 4-12 s, then "the filter far from
        # monotone; a smaller alpha answers" (gamma 1e-16 beside 2 at alpha 0.1 and 0.001;
        # 1e-13 answers; fuzz38 maml F5).
        raise IllConditioned(
            "maml_fl's finite-M limit under a spectrum: one client's weight p_l dwarfs "
            f"another's beyond double precision (weights from {p.min():.3g} to {p.max():.3g}, "
            f"gamma from {gam.min():.3g} to {gam.max():.3g}): bring the clients' gamma (and "
            "weights) closer to each other")
    # The own least-squares variance per group, in one batch per covariance type.
    own = np.empty(gam.size)
    for k in np.unique(typ):
        sel = np.flatnonzero(typ == k)
        own[sel] = own_variance(gam[sel], 0.0, marginals[sel[0]])
    bias, var = np.zeros(gam.size), np.where(sigma == 0, 0.0, sigma ** 2 * own)
    # gamma <= 1: the client's own least squares, whatever the global model.
    live = np.flatnonzero(gam > 1)
    if live.size == 0:
        return bias, var
    # The limit under the covariances c Sigma_j with step alpha / c is that under Sigma_j with
    # alpha, the bias times c. The continuation in alpha and the pencils' tolerances assume
    # eigenvalues near 1 (scaled:1e6 failed at once, scaled:1e-50 after 35 s): a mean
    # eigenvalue beyond [1/16, 16] is brought into it by a power of two (exact), within the
    # span the route is reliable for (beyond, rescaled fixed points converged to a negative
    # risk: two-point:1,1e40,0.5 at alpha 0.1).
    span, scale = eigenvalue_span(sv), float(np.mean(sv @ h))
    if not 1 / 16 <= scale <= 16 and span <= _SPAN:
        scale = 2.0 ** np.round(np.log2(scale))
        sv, alpha = sv / scale, alpha * scale
    else:
        scale = 1.0
    peak = check_peak(gam, p, count, alpha, sv[typ], h, scale)
    excess, weighted = _excesses(gam, p, count)
    # Near pooled N = d, also for the heavy clients alone (weights [1e-3, 1, 1] at gamma 2:
    # the equal-weight N/d - 1 is 0.5, the weighted one 0.012, and the risks moved 3.2e-9
    # with the path; fuzz39 maml F1): from scratch, checked by a second path.
    near = min(excess, weighted) < _CHECK

    def risks(share, warm):
        # Bias and variance of the live groups, the shifts' first step ``share`` of its usual.
        try:
            t, G, comp = _shifts(gam, sv, typ, h, p, count, alpha, scale, share, warm)
            pc = _pieces(comp, t, p, alpha, live, excess)
        except SolverError as exc:
            if isinstance(exc, IllConditioned):
                raise
            if peak is not None:
                # It said only "the subordination fixed point did not converge" (fuzz41 maml
                # F2): the narrow peak is the likely cause (``check_peak``).
                raise SolverError(f"{exc} ({peak}, narrow for the companion pencils: bring "
                                  "the clients' gamma closer to each other, or take alpha "
                                  "with 1/alpha outside the spectra)") from None
            if not span > _SPAN:
                raise
            # Measured (gamma 0.5 and 2, two-point:1,S,W): answers up to S = 1e6 at alpha 0.1
            # and 1e-9, none or only some beyond (the shifts' fixed point over such a span).
            raise SolverError(f"{exc} (the spectra's eigenvalues span a factor {span:.3g}: "
                              f"this route's fixed points are reliable up to about {_SPAN:g}; "
                              "narrow the span)") from None
        Zs = middles(G, pc["L"], t, count, r, sigma, p, gam, Phi, pc["e_v"])[live]
        W = pc["W"]
        pa, ga, sa = p[live], gam[live], sigma[live]
        return (scale * (r[live] ** 2 * ((Zs[:, 0] * W) @ h) + (Zs[:, 1] * W) @ h),
                np.where(sa == 0, 0.0, sa ** 2 * (
                    own[live] + 2 * pa * ga * pc["cross"] + pa * ga * pc["noise"]
                    + pa ** 2 * ga * ((Zs[:, 2] * W) @ h))) + (Zs[:, 3] * W) @ h)

    bias[live], var[live] = risks(1.0, not near)     # near: the same path each time
    if near:
        _check_paths("maml_fl", (bias[live], var[live]), risks(1 / 3, False),
                     _closeness(gam, p, count))
    return bias, var


def _pieces(comp, t, p, alpha, live, excess):
    """``group_pieces`` at the converged shifts t. Near pooled N = d (N/d - 1 = ``excess``
    below ``_NEAR``) the coupled pencils of the noise source and the target traces are
    ill-conditioned (condition numbers 1e5-1e11 measured at 4 clients on two-point:1,4,0.3,
    gamma 3.85-3.9, alpha 0.05-0.1): their residual stalls at rounding, 2-40 times the
    solver's tolerance, and refinement moves them by 1e-11 to 1e-9 relative. Such a failure
    says so (it said only "the fixed point did not converge"; fuzz38 maml F1)."""
    try:
        return group_pieces(comp, *comp.at(t), t, p, alpha, live)
    except SolverError as exc:
        if isinstance(exc, IllConditioned) or not excess < _NEAR:
            raise
        raise SolverError(f"{exc}: near pooled N = d (N/d - 1 = {excess:.3g}) the risk's coupled "
                          "pencils are ill-conditioned and their residual stalls at rounding "
                          "above the solver's tolerance; a gamma further from pooled N = d or "
                          "a smaller alpha answers") from None


def _check_paths(name, one, two, closeness):
    """IllConditioned where two continuation paths' risks ``one`` and ``two`` (bias,
    variance) differ by more than ``_AGREE`` relative. Near pooled N = d the coupled pencils of
    ``_pieces`` stall at rounding and their solutions depend on where the shifts' Newton
    iteration stopped: from scratch and warm-started from alpha 0.05 the risks differed by 1e-9
    to 1e-8 relative at 4 clients on two-point:1,4,0.3, gamma 3.8 (N/d - 1 = 0.053), alpha
    0.1, far above the M eps / (N/d - 1) = 2e-14 that ``own_objective.check_near_pooled``
    assumes, and the answer depended on what was solved before (fuzz38 maml2 F1).
    ``closeness``: ``_closeness``' answer."""
    text, _, ways = closeness
    diff = max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), np.finfo(float).tiny))
               for a, b in zip(one, two))
    if diff > _AGREE:
        raise IllConditioned(
            f"{name}'s finite-M limit under a spectrum: near pooled N = d ({text}) two "
            f"continuation paths give risks {diff:.2g} apart relative (it answers up to "
            f"{_AGREE:g}): the coupled pencils stall at rounding; "
            f"{ways or 'a gamma further from pooled N = d or '}a smaller alpha answers")


def _shifts(gam, sv, typ, h, p, count, alpha, scale=1.0, share=1.0, warm=True):
    """The shifts t_g, G and the groups' companion blocks (``operator_subordination``), by
    continuation in alpha from alpha = 0, where the global objective is FedAvg's and the
    shifts are known: t_g = Abar - om_g Sigma_g with Abar = sum_l n_l om_l Sigma_l
    (``finite_clients.shift.limits.global_point``; one covariance: ``finite_clients.sigma``'s
    K = (p S + omega Sigma)^-1). Beyond alpha m = 1 (m the largest mean eigenvalue; alpha
    alone, which scaled:3 at alpha 2/3 refused and scaled:1 at alpha 2, the same limit,
    answered; fuzz37 unbound F5) the path (``_path``) runs through
    monotone filters from s to s^3 (alpha = infinity in ``coefficients``' form), then in
    1/alpha from 0: through alpha in (1, 10) directly, where the filter is far from monotone,
    it needed hundreds of Newton steps (115-170 s at 4 clients on a two-point spectrum). A
    step that fails is halved: for large alpha s the filter phi is far from monotone and
    Newton's iteration needs a start near the root. Each stage has a budget (``_FIRST`` on):
    a failing stage ran the shifts' 100 Newton steps (4 clients on two-point:1,4,0.3 at
    gamma 2: 99 s at alpha = 2, 244 s at alpha = 1; fuzz37 unbound F2).

    Or, first, from the last solution for the same clients (``_warm``): the optimal weights
    and the tuning's searches call the limit at nearby weights and alpha many times.

    ``scale``: the power of two ``_group_limits`` divided the eigenvalues by and multiplied
    alpha by; a refusal gives the alpha asked, alpha / scale (it gave alpha times the scale:
    0.256 for 0.001 on two-point:100,400,0.3; fuzz38 maml F2). ``share``: the first step's
    fraction of its usual, ``warm``: whether to start from the last solution (a second path
    for ``_check_paths``)."""
    key = (gam.tobytes(), sv[typ].tobytes(), h.tobytes(), count.tobytes())
    warm = _warm(key, gam, sv[typ], h, p, count, alpha) if warm else None
    if warm is not None:
        return warm
    _, om, abar, _, _ = global_point(gam, p, count, typ, h, sv)
    t = abar - om[:, None] * sv[typ]
    what = "MAML-FL finite-clients limit"
    cube = alpha * float(np.max(sv[typ] @ h)) > 1
    v_end = 2.0 if cube else alpha
    v0, step, budget, grow = 0.0, min(v_end, _FIRST) * share, {"failed": 0}, 2.0
    while True:
        v1 = min(v_end, v0 + step)
        comp = Companions(gam, sv[typ], h, p, alpha,
                          None if v1 >= v_end else _path(v1, alpha, cube), budget)
        try:
            t1, G = solve_shifts(comp.state, count, t, what)
        except (SolverError, Stuck) as exc:
            if isinstance(exc, Stuck) and exc.args[0]:
                closeness, near, ways = _closeness(gam, p, count)
                raise SolverError(f"{what}: gave up after {FAILED} companion pencils that "
                                  "could not be followed to the shifts' Newton steps (each "
                                  "costs up to a second; it ran for minutes) at "
                                  f"{closeness}, alpha = {alpha / scale:g}: "
                                  f"{'near pooled N = d, ' if near else ''}with the filter s "
                                  "(1 - alpha s)^2 far from monotone on the sample spectrum; "
                                  f"{ways}a smaller alpha answers") from None
            step, grow = step / 2, 1.0
            if step <= v_end * 2.0 ** -_HALVINGS:
                if isinstance(exc, SolverError):
                    raise
                raise SolverError(f"{what}: the subordination fixed point did not "
                                  "converge") from None
            continue
        if v1 >= v_end:
            _LAST.clear()
            _LAST[key] = (t1, comp)
            return t1, G, comp
        v0, t, step, grow = v1, t1, grow * step, 2.0


def _closeness(gam, p, count):
    """N/d - 1 as the failure of ``_shifts`` gives it, and whether it is near pooled N = d
    (below ``_NEAR``; "near pooled N = d" at N/d - 1 = 1 misled). Under explicit weights the
    objective weighs client j's samples by p_j / n_j, proportional to p_j gamma_j, rho_j
    relative to the largest: its Hessian is at least tau times the Gram matrix of the
    clients with rho_j >= tau, whose smallest eigenvalue at Sigma = I is the Marchenko-Pastur
    edge (1 - 1/sqrt(1 + e))^2 of their pooled N/d - 1 = e. The largest such bound over tau
    gives the equal-weight N/d - 1 of the same edge (weights [1e-9, 1, 1] at gamma 2: N/d - 1
    = 0.5, but the heavy two sit at pooled N = d: 1.2e-5; refused after 9-30 s naming 0.5
    and the filter alone; fuzz38 maml2 F2). Returns the text, whether near, the ways out."""
    excess, weighted = _excesses(gam, p, count)
    text, ways = f"N/d - 1 = {excess:.3g}", "a gamma further from pooled N = d or "
    if weighted < excess * (1 - 1e-6):
        text += (" (with the clients' samples weighted by p_j gamma_j as the objective "
                 "weighs them, as near pooled N = d as N/d - 1 = "
                 f"{weighted:.2g} with equal weights)")
        ways = "weights closer to each other, " + ways
    near = weighted < _NEAR
    return text, near, ways if near else ""


def _excesses(gam, p, count):
    """N/d - 1 and its weighted counterpart (``_closeness``): the equal-weight N/d - 1 whose
    Marchenko-Pastur edge bounds the weighted objective's Hessian."""
    excess = float(count @ (1 / gam) - 1)
    rho = p * gam / np.max(p * gam)
    edge = max(tau * (1 - 1 / np.sqrt(1 + e)) ** 2 if e > 0 else 0.0 for tau, e in (
        (tau, float(count[rho >= tau] @ (1 / gam[rho >= tau]) - 1)) for tau in np.unique(rho)))
    root = np.sqrt(edge)
    return excess, float(root * (2 - root) / (1 - root) ** 2)    # the edge's N/d - 1


def _path(v, alpha, cube):
    """``coefficients`` at a point v of ``_shifts``' continuation toward alpha: alpha = v;
    or, through the cube, (1 - v, 0, v) up to v = 1 (phi = (1 - v) s + v s^3), then
    alpha = alpha / (v - 1) (v in (1, 2])."""
    if not cube:
        return coefficients(v)
    if v <= 1:
        return np.array([1.0 - v, 0.0, v])
    return coefficients(alpha / (v - 1.0))


def _warm(key, gam, s, h, p, count, alpha):
    """The shifts, G and companion blocks from the last solution for the same clients (other
    weights p' and alpha'), or None where that fails (then ``_shifts`` continues from
    alpha = 0). Each group's block is followed at the old shift t' from its old pencil to
    the new one along the straight path in (E, Lhat): every pencil on it is the inverse of
    t' + a convex combination of two nonnegative filters p' phi' and p phi, so the branch
    is the one continuation from gamma = 0 finds; then Newton's iteration of
    ``solve_shifts`` from t'. The shifts are the same root (to the solvers' tolerances)."""
    last = _LAST.get(key)
    if last is None:
        return None
    t0, old = last
    comp = Companions(gam, s, h, p, alpha)
    L1 = comp.L.copy()
    L1[:, :, 2, 0] = t0
    E0, L0, E1 = old.E, old.last, comp.E
    try:
        comp.sol = pencil_assembly.follow(s, h, lambda th: (
            gam, E0 + th[:, None, None] * (E1 - E0), L0 + th[:, None, None, None] * (L1 - L0),
            None), old.sol, "MAML-FL finite-clients limit (companion pencil)", batch=gam.size)
        physical(comp.sol, t0, "MAML-FL finite-clients limit (companion pencil)")
        comp.last = L1
        t1, G = solve_shifts(comp.state, count, t0, "MAML-FL finite-clients limit")
    except (SolverError, Stuck):
        return None
    _LAST[key] = (t1, comp)
    return t1, G, comp
