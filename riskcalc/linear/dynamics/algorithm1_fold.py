"""The extreme eigenvalues of paper 004's Algorithm 1 round map as folds of the real branch of
the subordination equations (derived here): the fast route of ``algorithm1_rate``.

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11; notation of
``algorithm1_rate`` (psi_z, Dhat_z, zeta(z) = (z - 1 + g lam) / (g lam)). Write F = 1 / G for
the Cauchy transform G of Dhat_z at zeta(z). Outside the spectrum on the real axis the
subordination equations 1 / G_j(omega_j; z) = F (G_j the Cauchy transform of p_j psi_z(S_j)) and
sum_j omega_j - (M - 1) F = zeta(z) have a real solution branch that starts at z = +infinity (F
= +infinity) and comes down to the top eigenvalue z* (and one from z = -infinity up to the
bottom one). Parametrized by F instead of z the branch is regular: with e_j and b_j the
derivatives of 1 / G_j in omega_j and in z, the implicit function theorem gives dz/dF = C / D, C
= sum_j 1 / e_j - (M - 1), D = 1 / (g lam) + sum_j b_j / e_j, and C is the Jacobian of the
fixed-z equations in (omega, F), which vanishes exactly at the edge of the spectrum of Dhat_z
(``subordination``'s dx/dG = 0). On the physical branch z is monotone in F (G is a Stieltjes
transform of a positive measure in z there), so z* = z(F*) at the first zero F* of C: a fold,
where z(F) turns (z - z* ~ (F - F*)^2). ``fold`` follows the branch from far out (zeta = +-20,
beyond Dhat_z's spectrum, which lies in [0, z / (z - sup a)] since lam c(s) <= 1) toward F = 0
(F* > 0 at the top: G_j > 0 above each law), each point by Newton's method on the M + 1 unknowns
(omega, z) (an arrow system, O(M)) from the branch's tangent, and finds F* by regula falsi on C
(Illinois), with steps halved where Newton fails (then regrown); z(F) is accurate to (F - F*)^2.
M + 1 scalar unknowns and a few dozen points replace the old route's root finding in z with a
full edge scan of the free sum at every step. The client laws are the discrete ``mp_rule``
measures, doubled until both edges agree to ``algorithm1_rate.FOLD_TOL``;
``algorithm1_rate.contraction`` (the old route) stays as the fallback and as the independent
check in the tests. M = 1 has no fold (the edge is that of one law): the old route. With laws
that do not depend on z and g lam = 1 (zeta(z) = z, b_j = 0, dz/dF = C) the same fold is an edge
of the free sum of the laws: ``fedavg.edges`` for FedAvg's round map D (and the exact prox's).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError


def mp_rule(gamma, n):
    """Nodes s (M, n + 1) and weights (M, n + 1) of a discrete measure integrating F analytic
    near the Marchenko-Pastur support like ``mp_quadrature.mp_expect``'s Gauss-Chebyshev rule
    of n nodes: tau(F) = F(0) + sum_q w_q (F(x_q) - F(0)) / x_q ..., the atom at 0 the first
    node (its weight 1 - sum of the others)."""
    gamma = np.asarray(gamma, float)[:, None]
    c = np.minimum(gamma, 1.0 / gamma)
    scale = np.maximum(gamma, 1.0)
    k = np.arange(1, n + 1) * (np.pi / (n + 1))
    s = (1.0 + c) + 2.0 * np.sqrt(c) * np.cos(k)
    w = np.sin(k) ** 2 * (np.pi / (n + 1)) * 4.0 * c / (2 * np.pi * c) / s / scale
    nodes = np.hstack([np.zeros_like(gamma), scale * s])
    return nodes, np.hstack([1.0 - w.sum(axis=1, keepdims=True), w])



class RuleLaws:
    """The laws of d_j = p_j psi_z(S_j) at a real z by the rule of ``mp_rule`` (n nodes), with
    the first derivatives in omega and z that ``fold`` needs."""

    def __init__(self, gamma, p, lam, eta, K, n):
        s, self.w = mp_rule(gamma, n)
        self.M = self.w.shape[0]
        self.a = (1.0 - eta * (s + lam)) ** K
        self.pc = np.asarray(p, float)[:, None] * lam * (1.0 - self.a) / (s + lam)
        # The atom's weight 1 - sum(w) is a rounding residue when gamma < 1: not a node.
        self.node = self.w > 1e-12

    def at(self, z):
        """d = p lam z c / (z - a) at the nodes and its derivative in z."""
        den = z - self.a
        return self.pc * z / den, -self.pc * self.a / den ** 2

    def terms(self, omega, z):
        """G_j(omega_j), dG_j/domega and dG_j/dz (M,), G_j = E[1 / (omega_j - d_j)]."""
        d, dd = self.at(z)
        w1 = self.w / (omega[:, None] - d)
        w2 = w1 / (omega[:, None] - d)
        return w1.sum(axis=1), -w2.sum(axis=1), (w2 * dd).sum(axis=1)

    def moments(self, z):
        """Mean and variance of every d_j at z (the far start of ``fold``)."""
        d, _ = self.at(z)
        mean = np.sum(self.w * d, axis=1)
        return mean, np.sum(self.w * d * d, axis=1) - mean ** 2

    def outside(self, omega, z, sign):
        """Whether every omega_j lies beyond (``sign``) every node of its law, and, at the top,
        z above every a(s) (where psi_z is finite and decreasing in z)."""
        d, _ = self.at(z)
        ext = np.where(self.node, sign * d, -np.inf).max(axis=1)
        ok = np.all(sign * omega > ext)
        return ok and (sign < 0 or z > np.where(self.node, self.a, -np.inf).max())


def _branch_point(law, gl, sign, F, omega, z):
    """The real solution (omega, z) of 1 / G_j(omega_j; z) = F, sum_j omega_j - (M - 1) F =
    zeta(z) by Newton's method from (omega, z); with C = sum_j 1 / e_j - (M - 1) and
    D = 1 / (g lam) + sum_j b_j / e_j (e_j, b_j the derivatives of 1 / G_j in omega_j and z),
    dz/dF = C / D. None if Newton fails or the point is off the physical branch (omega_j
    beyond its law, ``law.outside``, G_j of the sign ``sign``, e_j > 0)."""
    M = law.M
    polish = False
    for _ in range(40):
        with np.errstate(all="ignore"):
            G, G1, Gz = law.terms(omega, z)
            e, b = -G1 / G ** 2, -Gz / G ** 2
            E = 1.0 / G - F
            S = omega.sum() - (M - 1) * F - (z - 1.0 + gl) / gl
            D = 1.0 / gl + np.sum(b / e)
            dz = (S - np.sum(E / e)) / D
            dom = (-E - b * dz) / e
        if not (np.all(np.isfinite(dom)) and np.isfinite(dz)):
            return None
        omega, z = omega + dom, z + dz
        if polish:
            break
        polish = (np.max(np.abs(dom)) <= 1e-10 * (np.max(np.abs(omega)) + abs(F) + 1.0)
                  and abs(dz) <= 1e-10 * (abs(z) + 1.0))
    else:
        return None
    with np.errstate(all="ignore"):
        G, G1, Gz = law.terms(omega, z)
        e, b = -G1 / G ** 2, -Gz / G ** 2
    if not law.outside(omega, z, sign) or np.any(~(e > 0)) or np.any(~(sign * G > 0)):
        return None
    return {"F": F, "omega": omega, "z": z, "C": float(np.sum(1.0 / e) - (M - 1)),
            "D": float(1.0 / gl + np.sum(b / e)), "e": e, "b": b}


def fold(law, gl, sign, z_stop=None):
    """The top (``sign`` = 1) or bottom (-1) eigenvalue of Algorithm 1's round map for the
    client laws ``law`` (``RuleLaws``): the fold of the real branch of the subordination
    equations (module docstring); None when the bottom branch passes ``z_stop``
    before it folds. With laws that do not depend on z and g lam = 1, zeta(z) = z and the fold
    is an edge of the free sum of the laws itself (``fedavg``'s round map)."""
    z = max(2.0, 1.0 + 19.0 * gl) if sign > 0 else 1.0 - 21.0 * gl    # zeta(z) = +-20
    zeta = (z - 1.0 + gl) / gl
    mean, var = law.moments(z)
    F = zeta - mean.sum() - var.sum() / (zeta - mean.sum())
    omega = zeta - (mean.sum() - mean) - (var.sum() - var) / (zeta - mean.sum())
    good = _branch_point(law, gl, sign, F, omega, z)
    if good is None:
        raise SolverError("Algorithm 1's rate: no real solution far outside the spectrum")
    prev = bad = None
    cap = np.inf     # the largest step tried next (halved where Newton fails, then regrown)
    for _ in range(400):
        Fg, Cg = good["F"], good["C"]
        if bad is None:          # march toward F = 0 (where the branch must fold) ...
            step = -0.5 * Fg
            if prev is not None and Cg != prev["C"]:
                sec = -Cg * (Fg - prev["F"]) / (Cg - prev["C"])
                if 0.0 < sec / step < 1.0:   # ... by the secant on C where it is shorter
                    step = sec
        else:                    # regula falsi on C, Illinois-weighted
            step = -Cg * (bad["F"] - Fg) / (bad["C"] - Cg)
        if abs(step) <= 1e-11 * abs(Fg) or (bad is not None and abs(bad["F"] - Fg)
                                             <= 1e-11 * abs(Fg)):
            return good["z"]
        step = np.sign(step) * min(abs(step), cap)
        if cap < 1e-11 * abs(Fg):
            break
        dz = good["C"] / good["D"] * step
        guess = good["omega"] + (step - good["b"] * dz) / good["e"]
        new = _branch_point(law, gl, sign, Fg + step, guess, good["z"] + dz)
        if new is None:          # Newton from too far, or the rule's nodes: a shorter step
            cap = 0.5 * abs(step)
        elif new["C"] == 0.0:
            return new["z"]
        elif new["C"] > 0.0:
            if z_stop is not None and new["z"] >= z_stop:
                return None
            prev, good, cap = good, new, 2.0 * cap
            if bad is not None:
                bad = dict(bad, C=0.5 * bad["C"])
        else:
            bad = new
    raise SolverError("Algorithm 1's rate: the fold of the subordination branch was not found "
                      "(Newton's method fails along the branch)")
