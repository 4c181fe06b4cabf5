"""The companion pencils of MAML-FL's finite-M limit for a general covariance spectrum
(``finite_clients.maml_sigma``, whose module docstring derives what is computed here; paper 003,
``003_4b976ddf5225c17e.txt``, eqs. 12-13).

K_g = (t_g + p_g phi(S_g))^-1, phi(s) = s (1 - alpha s)^2, is the (1, 3) block of the inverse of
the companion pencil of ``block_pencil`` (``Companions``: every group's blocks in one batch,
followed from shift to shift on the physical branch, with the budget that bounds a
continuation that cannot follow them, ``Stuck``); ``responses`` gives G_g = E_D[K_g] and
-dG_g/dt; ``group_pieces`` the noise source and the targets' traces W, X1, X2, X3 (steps 2-3
of ``maml_sigma``'s docstring), each a block of one coupled pencil (``pencil_assembly``);
``check_peak`` refuses, before any pencil, a peak of K_g too narrow for them to follow.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.engine import block_pencil, pencil_assembly
from riskcalc.linear.engine.weighted_mp import companion_stieltjes
from riskcalc.linear.finite_clients.own import _subordination
from riskcalc.linear.finite_clients.own_objective import (maml_factors, objective,
                                                          quadrature_peak)
from riskcalc.linear.finite_clients.shift.chains import remember
from riskcalc.spectrum import Spectrum

#: ``maml_sigma._shifts``' budget (fuzz37 unbound F2): companion pencils not followed in all;
#: residuals and pencils not followed per stage (one that converged took 5-14 and none).
FAILED, STAGE_CALLS, STAGE_FAILED = 12, 30, 2


def coefficients(alpha):
    """(c_1, c_2, c_3) of phi(s) = s (c_1 + c_2 s + c_3 s^2) = s (1 - alpha s)^2 / k, and of
    R_m^2 / k, in ``own_objective.maml_factors``' form (k = 1 up to alpha = 1, alpha^2 beyond; the
    shifts t scale by 1 / k, continuously in alpha: a continuation carries them as they are)."""
    a, b = maml_factors(alpha)
    return np.array([a * a, -2.0 * a * b, b * b])


class Companions:
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
        converged shifts). Failures count against the budget (``Stuck``)."""
        L = self.L.copy()
        L[:, :, 2, 0] = t
        what = "MAML-FL finite-clients limit (companion pencil)"
        moved = None if self.sol is None else np.flatnonzero(
            np.any(L != self.last, axis=(1, 2, 3)))
        if moved is not None and moved.size == 0:
            return L, self.sol
        if self.budget["failed"] >= FAILED or self.failed >= STAGE_FAILED:
            raise Stuck(self.budget["failed"] >= FAILED)
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
        ``Stuck`` past ``STAGE_CALLS`` calls."""
        self.calls += 1
        if self.calls > STAGE_CALLS:
            raise Stuck(False)
        return responses(self.at(t)[1])


class Stuck(Exception):
    """A stage of ``maml_sigma._shifts`` past its budget (False) or all of it spent (True): not a
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


#: The smallest relative width of the peak at phi's double zero (``check_peak``) answered;
#: the width below which a failure of the continuation names the peak; the share of the
#: other clients' samples (pooled N/d) below which a client's peak is looked for.
_MIN_WIDTH, _NARROW, _OTHERS = 0.012, 0.03, 0.05


def check_peak(gam, p, count, alpha, s, h, scale):
    """IllConditioned, before the continuation, where 1/alpha (phi's double zero, paper 003
    eq. 12) lies in a client's sample spectrum (``_in_support``) and that client's shift t is
    tiny beside its weight: (p phi + t)^-1 peaks there with relative width w = sqrt(t / (p c))
    / s0 (phi ~ c (s - s0)^2), which the companion pencils cannot follow. Measured on
    two-point spectra (1,4,0.5, 1,4,0.3, 1,2,0.5), gamma [30-1e3, 0.5], alpha 0.5-2 (w at
    Sigma = I, alpha times the mean eigenvalue, ``finite_clients.own``): refused after 2-40 s
    from w ~ 0.027 down (all 18 measured from 0.0037 to 0.0146), answered in 0.2-20 s from
    ~ 0.0175 (0.0144 on one); refused at once below ``_MIN_WIDTH`` (from 0.003 to 0.012 after
    4-54 s before: gamma [100, 0.5], others' pooled N/d 0.01, was not looked at; fuzz41 maml
    F2). Only for clients whose others pool
    N/d < ``_OTHERS`` (g t ~ that share; w 0.007 at 0.01, 0.013 at 0.017): 40 clients
    spanning gamma 0.3-60 spent 3.2 s here for a 0.1 s limit.

    Returns
    -------
    str or None
        Where the narrowest such peak is below ``_NARROW``, what a refusal of the
        continuation should say of it (the pencils may still answer there).
    """
    others = np.sum(count / gam) - 1 / gam
    cand = np.flatnonzero(others < _OTHERS) if alpha > 0 else []
    inside = np.zeros(gam.size, bool)
    inside[cand] = [_in_support(1 / alpha, gam[k], s[k], h) for k in cand]
    if not inside.any():
        return None
    a = alpha * float(np.mean(s @ h))
    try:
        t = _subordination(gam, p, count, objective("maml_fl", a)[0],
                           quadrature_peak("maml_fl", a, gam, count))[1]
    except SolverError:
        return None
    width = np.where(inside, np.sqrt(t / (p * (a if a <= 1 else 1 / a))) * a, np.inf)
    k = int(np.argmin(width))
    said = (f"1/alpha = {scale / alpha:.4g} (phi's double zero) lies in the sample spectrum "
            f"of the client at gamma = {gam[k]:.4g}, whose shift is tiny beside its weight (a "
            "small share of the other clients' samples): the peak there has relative width "
            f"{width[k]:.2g} at Sigma = I")
    if width[k] < _MIN_WIDTH:
        raise IllConditioned(
            f"maml_fl's finite-M limit under a spectrum: {said}, below {_MIN_WIDTH:g}, which "
            "the companion pencils cannot follow (they refuse after 2-40 s from about 0.02): "
            "bring the clients' gamma closer to each other, or take alpha with 1/alpha "
            "outside the spectra (at Sigma = I the limit answers)")
    return said if width[k] < _NARROW else None


def _in_support(x, gamma, s, h):
    """Whether x has positive density in the sample spectrum of ratio gamma on eigenvalues s
    (masses h): Im of the companion Stieltjes transform at x (1 + 1e-8 i) above 1e-4 of its
    modulus (0.45-0.62 inside two-point spectra, ~1e-8 in their gaps: 1/alpha = 20 on
    two-point:1,100,0.5 at gamma 0.5 answered, and F2's first rule refused it). Where
    Silverstein's iteration does not settle there (atoms 1e-7 to 1e-2 apart: the peak went
    unseen, gamma [100, 0.5] at alpha 0.5 on two-point:1,1.0000001,0.5 refused after 4 s;
    fuzz41 maml F6), at x (1 + 1e-3 i) above 0.03 (0.12-0.47 inside, 1e-3 to 4e-3 in gaps
    and just past an edge)."""
    spec = Spectrum(s[h > 0], weights=h[h > 0])
    for eta, share in ((1e-8, 1e-4), (1e-3, 0.03)):
        try:
            mu = companion_stieltjes(np.array([x * (1 + eta * 1j)]), gamma, spec)[0]
        except SolverError:
            continue
        return bool(mu.imag > share * abs(mu))
    return False
