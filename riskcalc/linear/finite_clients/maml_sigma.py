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
from riskcalc.linear.engine import block_pencil, pencil_assembly
from riskcalc.linear.finite_clients.identity import client_weights
from riskcalc.linear.finite_clients.own import check_near_pooled, maml_factors
from riskcalc.linear.finite_clients.shift import global_point
from riskcalc.linear.finite_clients.shift_conditioning import eigenvalue_span
from riskcalc.linear.finite_clients.shift_chains import own_variance, remember
from riskcalc.linear.engine.operator_subordination import (joint_layout, middles, shared_layout,
                                                           solve_shifts)

#: Halvings of a continuation step in alpha before giving up.
_HALVINGS = 20
#: The eigenvalue span beyond which a failure names the span (``_group_limits``).
_SPAN = 1e6
#: ``_shifts``' budget (fuzz37 unbound F2): companion pencils not followed in all; residuals
#: and pencils not followed per stage (one that converged took 5-14 and none); first step.
_FAILED, _STAGE_CALLS, _STAGE_FAILED, _FIRST = 12, 30, 2, 1 / 16


def coefficients(alpha):
    """(c_1, c_2, c_3) of phi(s) = s (c_1 + c_2 s + c_3 s^2) = s (1 - alpha s)^2 / k, and of
    R_m^2 / k, in ``own.maml_factors``' form (k = 1 up to alpha = 1, alpha^2 beyond; the
    shifts t scale by 1 / k, continuously in alpha: a continuation carries them as they are)."""
    a, b = maml_factors(alpha)
    return np.array([a * a, -2.0 * a * b, b * b])

#: The last solution of ``_shifts`` (one entry: its clients' key -> shifts, blocks).
_LAST = {}


class _Companions:
    """The companion blocks of K_g = (t_g + p_g phi(S_g))^-1 of every group as one batch
    (``block_pencil``: each group's fixed point iterated as if alone), the fixed points kept
    as the next solve's start (the shifts move little between Newton steps)."""

    def __init__(self, gamma, s, h, p, alpha, c=None, budget=None):
        B, n = s.shape
        self.budget = {"failed": 0} if budget is None else budget
        self.calls = self.failed = 0
        self.gamma, self.s, self.h = gamma, s, h
        c = coefficients(alpha) if c is None else c
        dtype = np.result_type(p, c, float)          # complex: a complex step
        self.E = np.zeros((B, 3, 3), dtype)
        self.E[:, 0, 0] = self.E[:, 1, 1] = 1.0
        self.E[:, 2, 2] = c[2] * p
        self.L = np.zeros((B, n, 3, 3), dtype)
        self.L[:, :, 0, 1] = self.L[:, :, 1, 2] = -1.0
        self.L[:, :, 2, 1], self.L[:, :, 2, 2] = c[0] * p[:, None], c[1] * p[:, None]
        self.sol = self.last = None

    def at(self, t):
        """The blocks' Lhat and fixed points at shifts t (groups x atoms), each group followed
        from its last shift (or from gamma = 0) in small steps (``pencil_assembly.follow``); a
        group whose t has not moved keeps its fixed point (the target's traces reuse the
        converged shifts). Failures count against the budget (``_Stuck``)."""
        L = self.L.copy()
        L[:, :, 2, 0] = t
        what = "MAML-FL finite-clients limit (companion pencil)"
        moved = None if self.sol is None else np.flatnonzero(
            np.any(L != self.last, axis=(1, 2, 3)))
        if moved is not None and moved.size == 0:
            return L, self.sol
        if self.budget["failed"] >= _FAILED or self.failed >= _STAGE_FAILED:
            raise _Stuck(self.budget["failed"] >= _FAILED)
        try:
            if moved is None:
                sol = self._first(L, what)
            else:
                L0, L1, E = self.last[moved], L[moved], self.E[moved]
                sol = self.sol.put(moved, pencil_assembly.follow(
                    self.s[moved], self.h, lambda th: (self.gamma[moved], E,
                                                       L0 + th[:, None, None, None] * (L1 - L0),
                                                       None),
                    self.sol.take(moved), what, batch=moved.size))
                physical(sol, t, what)
        except SolverError:
            self.budget["failed"] += 1
            self.failed += 1
            raise
        self.sol, self.last = sol, L
        return L, sol

    def _first(self, L, what):
        """The blocks at Lhat ``L`` from none: continued in gamma at the shifts max(t, 1),
        then down to t by factors of 2 on the physical branch (continued at a small t, they
        landed on an unphysical root: 4 clients on two-point:1,4,0.3 at gamma 3.9, where the
        shifts' Newton iteration then chased t -> 0 and failed; fuzz37 unbound F1)."""
        t = L[:, :, 2, 0]
        top = np.maximum(t, 1.0)
        Lt = L.copy()
        Lt[:, :, 2, 0] = top
        sol = pencil_assembly.continuation(self.gamma, self.s, self.h, self.E, Lt, what=what)
        while np.any(top > t):
            L0, top = Lt, np.maximum(t, top / 2)
            Lt = L.copy()
            Lt[:, :, 2, 0] = top
            sol = pencil_assembly.follow(self.s, self.h, lambda th, L0=L0, L1=Lt: (
                self.gamma, self.E, L0 + th[:, None, None, None] * (L1 - L0), None), sol,
                what, batch=self.gamma.size)
            physical(sol, top, what)
        return sol

    def state(self, t):
        """G_g = E_D[K_g] and the matrices of h -> E_D[K_g h K_g] (= -dG_g/dt) at shifts t;
        ``_Stuck`` past ``_STAGE_CALLS`` calls."""
        self.calls += 1
        if self.calls > _STAGE_CALLS:
            raise _Stuck(False)
        return responses(self.at(t)[1])


class _Stuck(Exception):
    """A stage of ``_shifts`` past its budget (False) or all of it spent (True): not a
    SolverError, which the shifts' line search takes for one failed step."""


def physical(sol, t, what):
    """SolverError off the physical branch: K = (t + p phi(S))^-1, phi >= 0, lies between 0
    and 1/t, so 0 < t E_D[K] <= 1 on every atom (fuzz37 unbound F1)."""
    tg = t * sol.Q[:, :, 0, 2]
    if not np.all((tg > 0) & (tg <= 1.0 + 1e-9)):
        raise SolverError(f"{what}: the companion pencil's fixed point left the physical "
                          "branch (0 < t E_D[K] <= 1)")


def responses(sol):
    """G_g = E_D[K_g] and L_g = -dG_g/dt of the companion blocks' solution ``sol``, L_g
    kept in its ``memo`` (the converged shifts' blocks serve the shifts' last check, the
    limits' pieces and a gradient's start)."""
    if "L" not in sol.memo:
        sol.memo["L"] = -block_pencil.local_response(sol, (2, 0), (0, 2))
    return sol.Q[:, :, 0, 2], sol.memo["L"]


def maml_sigma_group_limits(gam, r, sigma, count, alpha: float, weights, spectrum):
    """Bias and variance of a client of each group (``count`` identical clients per group,
    per-group gamma, r, sigma; one alpha and spectrum) under MAML-FL with its own global model
    over all the clients (module docstring).

    Raises
    ------
    ValueError
        If alpha < 0 or pooled N <= d.
    SolverError
        If a fixed point does not converge.
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
        If a fixed point does not converge.
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
    p = client_weights(gam, count, weights)
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
    try:
        t, G, comp = _shifts(gam, sv, typ, h, p, count, alpha)
        pc = group_pieces(comp, *comp.at(t), t, p, alpha, live)
    except SolverError as exc:
        if isinstance(exc, IllConditioned) or not span > _SPAN:
            raise
        # Measured (gamma 0.5 and 2, two-point:1,S,W): answers up to S = 1e6 at alpha 0.1 and
        # 1e-9, none or only some beyond (the shifts' fixed point over such a span).
        raise SolverError(f"{exc} (the spectra's eigenvalues span a factor {span:.3g}: this "
                          f"route's fixed points are reliable up to about {_SPAN:g}; narrow "
                          "the span)") from None
    Zs = middles(G, pc["L"], t, count, r, sigma, p, gam, Phi, pc["e_v"])[live]
    W = pc["W"]
    pa, ga, sa = p[live], gam[live], sigma[live]
    bias[live] = scale * (r[live] ** 2 * ((Zs[:, 0] * W) @ h) + (Zs[:, 1] * W) @ h)
    var[live] = (np.where(sa == 0, 0.0, sa ** 2 * (
        own[live] + 2 * pa * ga * pc["cross"] + pa * ga * pc["noise"]
        + pa ** 2 * ga * ((Zs[:, 2] * W) @ h))) + (Zs[:, 3] * W) @ h)
    return bias, var


def group_pieces(comp, L, sol, t, p, alpha, live, real=None):
    """What every group's risk needs at shifts t (module docstring): G_g and L_g = -dG_g/dt
    from the companion blocks ``comp`` (Lhat ``L``, fixed points ``sol``), the noise source
    e_v = E_D[K psi K] (step 2), and for the targets ``live`` W and the variance's cross and
    noise terms X1 - X2 and X2 - X3 (step 3). Complex-safe (a complex step of
    ``subordination_gradient``: complex pencils, ``block_pencil``). ``real``: a dict where the
    coupled pencils' solutions are kept (real inputs) or from which a complex step starts
    (``block_pencil.solve(real=)``: one Newton step)."""
    keep, step = real is not None, np.iscomplexobj(L)
    real = {} if real is None else real

    def solved(pen, key, what):
        # I - J of a real solution only where complex steps will start from it.
        res = pen.solve(what, real.get(key) if step else None, response=keep)
        if not step:
            real[key] = res
        return res

    cm = coefficients(alpha)      # R_m^2 K / k = sum_j cm_j S^(j-1) K
    pen = pencil_assembly.Pencil(comp.gamma, comp.s, comp.h)
    i1, i2 = pen.solved(sol, comp.E, L), pen.solved(sol, comp.E, L)
    for j in range(3):
        pen.couple(i1 + 2, i2 + j, lhat=-t * cm[j])
    ktrk = solved(pen, "noise", "MAML-FL noise source").conditional(i1, i2 + 2)
    W, X1, X2, X3 = _target_traces(comp, live, L, sol, t, cm, solved)
    G, Lg = responses(sol)
    return {"G": G, "L": Lg,
            "e_v": (sol.conditional(cm, 2) - ktrk) / p[:, None], "W": W, "cross": X1 - X2,
            "noise": X2 - X3}


def _shifts(gam, sv, typ, h, p, count, alpha):
    """The shifts t_g, G and the groups' companion blocks (``operator_subordination``), by
    continuation in alpha from alpha = 0, where the global objective is FedAvg's and the
    shifts are known: t_g = Abar - om_g Sigma_g with Abar = sum_l n_l om_l Sigma_l
    (``finite_clients.shift.global_point``; one covariance: ``finite_clients.sigma``'s
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
    and the tuning's searches call the limit at nearby weights and alpha many times."""
    key = (gam.tobytes(), sv[typ].tobytes(), h.tobytes(), count.tobytes())
    warm = _warm(key, gam, sv[typ], h, p, count, alpha)
    if warm is not None:
        return warm
    _, om, abar, _, _ = global_point(gam, p, count, typ, h, sv)
    t = abar - om[:, None] * sv[typ]
    what = "MAML-FL finite-clients limit"
    cube = alpha * float(np.max(sv[typ] @ h)) > 1
    v_end = 2.0 if cube else alpha
    v0, step, budget, grow = 0.0, min(v_end, _FIRST), {"failed": 0}, 2.0
    while True:
        v1 = min(v_end, v0 + step)
        comp = _Companions(gam, sv[typ], h, p, alpha,
                           None if v1 >= v_end else _path(v1, alpha, cube), budget)
        try:
            t1, G = solve_shifts(comp.state, count, t, what)
        except (SolverError, _Stuck) as exc:
            if isinstance(exc, _Stuck) and exc.args[0]:
                excess = float(count @ (1 / gam) - 1)
                near = excess < 0.1         # "near pooled N = d" at N/d - 1 = 1 misled
                raise SolverError(f"{what}: gave up after {_FAILED} companion pencils that "
                                  "could not be followed to the shifts' Newton steps (each "
                                  "costs up to a second; it ran for minutes) at N/d - 1 = "
                                  f"{excess:.3g}, alpha = {alpha:g}: "
                                  f"{'near pooled N = d, ' if near else ''}with the filter s "
                                  "(1 - alpha s)^2 far from monotone on the sample spectrum; "
                                  f"{'a gamma further from pooled N = d or ' if near else ''}"
                                  "a smaller alpha answers") from None
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
    comp = _Companions(gam, s, h, p, alpha)
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
    except (SolverError, _Stuck):
        return None
    _LAST[key] = (t1, comp)
    return t1, G, comp


def _target_traces(comp, live, L, sol, t, cm, solved):
    """W = E_D[K P^perp Sigma P^perp K] per atom and the traces X1, X2, X3 of the module
    docstring for a target in each of the groups ``live`` (ratio gamma > 1; arrays over
    them) at shifts t (Sigma the target's own covariance), from the batch's companion blocks
    ``comp`` with Lhat ``L`` and fixed points ``sol`` there, each coupled pencil solved by
    ``solved(pencil, key, what)`` (``group_pieces``)."""
    L, sol, E, s, t = L[live], sol.take(live), comp.E[live], comp.s[live], t[live]

    def pencil():
        return pencil_assembly.Pencil(comp.gamma[live], s, comp.h)

    what = "MAML-FL target traces"
    # The projection rows' block depends on gamma and the target's spectrum only.
    g = comp.gamma[live]
    tp = remember(("projection", g.tobytes(), s.tobytes(), comp.h.tobytes()),
               lambda: pencil_assembly.projection_trace(g, s, comp.h))
    pen = pencil()
    k1, j1, j2, k2 = (pen.solved(sol, E, L), pen.projection(tp), pen.projection(tp),
                      pen.solved(sol, E, L))
    pen.couple(k1 + 2, j1, lhat=-1.0)
    pen.couple(j1, j2, lhat=-s)
    pen.couple(j2, k2, lhat=-1.0)
    W = solved(pen, "W", what).conditional(k1, k2 + 2)
    pen = pencil()
    j0, k1, j2 = pen.projection(tp), pen.solved(sol, E, L), pen.projection(tp)
    for j in range(3):
        pen.couple(j0, k1 + j, lhat=-cm[j])
    pen.couple(k1 + 2, j2, lhat=-1.0)
    res = solved(pen, "X12", what)
    rows = np.zeros(pen.size, cm.dtype)
    rows[k1:k1 + 3] = cm
    X1, X2 = res.trace(rows, j2), res.trace(j0, j2)
    pen = pencil()
    j0, k1, k2, j3 = (pen.projection(tp), pen.solved(sol, E, L), pen.solved(sol, E, L),
                      pen.projection(tp))
    pen.couple(j0, k1, lhat=-1.0)
    for j in range(3):
        pen.couple(k1 + 2, k2 + j, lhat=-t * cm[j])
    pen.couple(k2 + 2, j3, lhat=-1.0)
    X3 = solved(pen, "X3", what).trace(j0, j3)
    return W, X1, X2, X3
