"""Paper 004's Algorithm 1 with finite local steps when the pooled samples do not span R^d: the
common null space held apart (derived here).

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11; notation of
``algorithm1.rate`` and ``algorithm1.curves`` (Sigma = I, a(s) = (1 - eta (s + lam))^K,
c(s) = (1 - a(s)) / (s + lam), psi_z(s) = lam z c(s) / (z - a(s)), zeta(z) = (z - 1 + g lam) /
(g lam), Dhat_z = sum_j p_j psi_z(S_j)). Pooled N < d means sum_j min(1, 1 / gamma_j) < 1, so
every gamma_j > 1.

1. The split. N = the intersection of the kernels of the S_j (dimension mu0 d, mu0 = 1 - sum_j
   1 / gamma_j, the excess of the clients' atoms at 0: Bercovici-Voiculescu, as
   ``subordination.atom_at_zero``) and its complement R (the pooled range) are invariant under
   every S_j, hence under every function of them and under the round map Phi, which acts on
   N (x) R^(M + 1) as on one coordinate with S_j = 0: a_j = a0 = (1 - eta lam)^K, lam c_j = 1 -
   a0. There the consensus (x, x, ..., x) is fixed (v_j' = a0 x + (1 - a0) x, w' = (1 - g lam)
   x + g lam x), with the eigenvalues a0 (1 - g lam) (server against clients' mean) and a0
   (the clients' differences, M - 1 times) besides; the eigenvalue 1 is what
   ``algorithm1.rate``'s edge equation cannot separate (zeta(1) = psi_1(0) = 1: Dhat_z's atom).
2. Training from 0 never enters N: beta_f (``algorithm1.curves``, step 1) is built of b_j = X_j^T
   y_j / n_j, in R, and Phi keeps R. So the iterates of the server and of the clients have no
   component in N, and in the error e_T = w_T - theta_0 (or v_i - theta_0) N contributes -P_N
   theta_0 at every T: a constant ||P_N theta_0||^2 -> signal^2 mu0 in every client's risk of
   every model (the N part of u_i is the r_i^2 mu0 inside r_i^2; the data terms vanish on N,
   h_k(0) = d_k(z) S_k = 0). In the contour integrals of ``algorithm1.curves``: on N, Gc N =
   (z - a0 + g lam a0) / ((z - 1)(z - a0 (1 - g lam))) = 1 / (z - 1) (the denominator is
   (z - 1 + g lam)(z - a0) - g lam z (1 - a0) = (z - 1)(z - a0 (1 - g lam))), and the own
   models' rho_i (1 + lam c_i Gc N) = 1 / (z - 1) too: the theta_0 traces carry the atom
   mu0 / ((z1 - 1)(z2 - 1)) whose double integral with z1^T z2^T is mu0 around z = 1, 0
   otherwise. The contour is kept around the spectrum of Phi on R only (z = 1 outside) and
   signal^2 mu0 is added to the bias (not to the distance ||w_T - w_inf||^2: both have no N
   part). Gc alone has mass (1 - a0) / (1 - a0 + g lam a0) at z = 1 (its residue on N), so the
   contour, which encloses a0 (1 - g lam) (``check_mass``), holds 1 - mu0 times that of tau(Gc).
3. The edge of Phi on R. For real z > a0 = sup a (a >= 0) the atom psi_z(0) of Dhat_z lies
   above its continuous part when psi_z decreases on the clients' bulks (checked: always for
   eta (L + lam) <= 1, where a and c, hence psi_z, decrease in s). The top of the spectrum on
   R is then the root z* in (a0, 1) of zeta(z) = top_R(Dhat_z), top_R = psi_z(0) - a'(z),
   a'(z) the lower edge of the nonzero part of D'_z = psi_z(0) - Dhat_z = sum_j p_j (psi_z(0) -
   psi_z(S_j)) >= 0, whose atom at 0 is N: the gap branch of ``subordination.edge``
   (``HeldApartLaws``: the client laws reflected, the atom's term mu0_j / omega exact and the
   bulk by ``laws.mp_bulk_cauchy``'s partial fractions). At z = 1, D'_1 = sum_j p_j S_j (S_j +
   lam)^(-1) (the exact prox's D) and zeta - top_R = a'(1) > 0; z* is the root of the
   increasing difference below, found from z = 1 down (the eigenvalue 1 of N excluded).
4. T = inf. The fixed point solves v_j = (lam w + b_j) (S_j + lam)^(-1), w = sum_j p_j v_j (the
   pFedMe joint objective sum_j p_j (f_j(v_j) + lam / 2 ||v_j - w||^2), paper 004 eq. 10, at
   its minimum). With pooled N < d it is 0: any w with X_j w = y_j for every j (the pooled
   system is underdetermined) and v_j = w attain it, and every minimizer is one of these
   (f_j(v_j) = 0 and v_j = w). From 0 the iterates stay in R, so the limit is the pooled
   min-norm interpolator, the same for every client's own model and the server's, whatever K,
   eta, g, lam and the weights: FedAvg's K = 1 fixed point (gradient descent on the pooled
   objective from 0, ``fedavg``, step 4) and the exact prox's (``rounds_limit(local_steps=
   inf)``, D's atom at 0 held apart, ``fedavg.round_map_curves``); the tests check all three.

Scope: g lam <= 1 (the default g = 1 / lam included) and eta (L + lam) <= 1 (paper 004 Thm 2's
condition, where a(s) decreases from a0 = sup a; ``inputs.check_step_scope`` refuses the rest).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws


def pooled_atom(gam) -> float:
    """mu0 = (1 - sum_j min(1, 1 / gamma_j))_+: the share of R^d no client's samples reach."""
    return max(0.0, 1.0 - float(np.sum(np.minimum(1.0, 1.0 / np.asarray(gam, float)))))


class HeldApartLaws(PsiLaws):
    """The laws of p_j (psi_z(0) - psi_z(S_j)) at a real z > a0 (module docstring, step 3), in
    the interface of ``subordination.edge``'s gap branch: mu0 (the atom at 0, 1 - 1 / gamma_j),
    lo (the bottom of the rest), top, cauchy."""

    def __init__(self, gamma, p, lam, eta, K, z):
        super().__init__(gamma, p, lam, eta, K, z)
        self.shift = self.p * float(self.psi(0.0))
        self.mu0 = np.where(self.gamma > 1.0, 1.0 - 1.0 / self.gamma, 0.0)
        self.lo = self.bottom = self.shift - self.bulk[:, 1]
        self.hi = self.top = self.shift - self.bulk[:, 0]
        if not np.all(self.lo > 0.0):
            raise SolverError("Algorithm 1 with pooled N < d: psi_z(0) does not top every "
                              f"client's bulk at z = {z:.6g} (algorithm1.pooled, step 3)")

    def _cauchy(self, omega, gam, p, bulk=False):
        """E[1 / (omega - b)] = mu0 / omega - E_bulk[1 / ((c - omega) - p psi_z(S))]."""
        c = p * float(self.psi(0.0))
        mu0 = np.where(gam > 1.0, 1.0 - 1.0 / gam, 0.0)
        E, dE = super()._cauchy(c - omega, gam, p, bulk=True)
        return mu0 / omega - E, -mu0 / omega ** 2 + dE


def _top_gap(gam, p, lam, eta, K, g, z) -> float:
    """zeta(z) - top_R(Dhat_z) at a real z in (a0, 1] (module docstring, step 3)."""
    laws = HeldApartLaws(gam, p, lam, eta, K, z)
    return (z - 1.0 + g * lam) / (g * lam) - (float(laws.psi(0.0))
                                              - subordination.edge(laws, "gap"))


def check_one_client(gam, lam, eta, K, g) -> None:
    """Refuse one client whose top on R lies at or below a0 (step 3 finds it above a0: with M >=
    2 each client's null space meets the others' ranges, psi_z(0) on R). With M = 1 the map
    acts on (v, w) at each eigenvalue s of S as a 2 x 2 matrix with characteristic polynomial
    (z - a)(z - 1 + g lam) - g lam lam c z (zeta(z) = psi_z(s)), whose larger root is largest
    at the bulk's lower edge (1 - sqrt(gamma))^2; it exceeds a0 iff the polynomial is negative
    there (gamma 2, K = 2, eta 0.1, lam 0.1 was 'no bracket ... above 0.9801'; fuzz41 path2 F2)."""
    s, gl, a0 = (1.0 - np.sqrt(gam)) ** 2, g * lam, (1.0 - eta * lam) ** K
    a = (1.0 - eta * (s + lam)) ** K
    lc = lam * (1.0 - a) / (s + lam)
    if (a0 - a) * (a0 - 1.0 + gl) - gl * lc * a0 < 0.0:
        return
    b = a + 1.0 - gl + gl * lc
    top = (b + np.sqrt(b * b - 4.0 * a * (1.0 - gl))) / 2.0
    raise ValueError(f"lam = {lam:.6g}: Algorithm 1 with one client and pooled N < d (gamma "
                     f"{gam:.6g} > 1): the top of the round map's spectrum on the client's range, "
                     f"{top:.6g}, is not above a0 = (1 - step_size lam)^local_steps = {a0:.6g}, "
                     "where this route (built for two clients or more) finds it; not covered: "
                     "use local_steps=inf (the exact prox), or lam, step_size or local_steps "
                     "that bring a0 below it")


def pooled_contraction(gam, p, lam, eta, K, g) -> dict:
    """The spectral data of Algorithm 1's round map on the pooled range R (module docstring,
    steps 1 and 3), in the form of ``algorithm1.rate.contraction``'s dict, ``atom`` the
    mass mu0 of the null space N held apart. zeta(z) - top_R(Dhat_z) increases with slope at
    least 1 / (g lam) (psi_z decreases in z above a0), so z* lies in [1 - g lam F(1), 1),
    F(1) = a'(1) > 0 the prox D's gap edge."""
    from scipy.optimize import brentq

    gl = g * lam
    a0 = (1.0 - eta * lam) ** K
    if len(gam) == 1:
        check_one_client(gam[0], lam, eta, K, g)
    known = {}

    def gap(z):
        # brentq asks first for the bracket's ends, found below (each an edge scan: about a
        # quarter of its asks)
        if z not in known:
            known[z] = _top_gap(gam, p, lam, eta, K, g, z)
        return known[z]

    at_one = gap(1.0)
    if not at_one > 0.0:
        raise SolverError("Algorithm 1's rate with pooled N < d: the round map's spectrum on "
                          "the pooled range reaches 1 (pooled N near d?)")
    lo = max(1.0 - gl * at_one, a0 + 1e-9 * (1.0 - a0))
    f_lo = gap(lo)
    if f_lo > 0.0:
        raise SolverError("Algorithm 1's rate with pooled N < d: no bracket for the top of the "
                          f"round map's spectrum on the pooled range (above {lo:.6g})")
    top = lo if f_lo == 0.0 else brentq(gap, lo, 1.0, xtol=1e-14, rtol=1e-13)
    local = float(max(abs(a0), abs((1.0 - eta * (np.max((1.0 + np.sqrt(gam)) ** 2) + lam))
                                   ** K)))
    return {"contraction": top, "top": top, "bottom": None, "lower": 0.0, "exact": True,
            "local": local, "atom": pooled_atom(gam)}


def check_mass(G, w, gl, mu0, a0, edges, what) -> None:
    """``fedavg.enclosed`` for the w block: (1 / 2 pi i) oint tau(Gc) dz = sum Im(G w) / (g lam)
    on the contour (``algorithm1.curves``' upper-half nodes) must be 1 - mu0 (1 - a0) / (1 - a0
    + g lam a0), Gc's mass on R and at a0 (1 - g lam) (module docstring, step 2)."""
    from riskcalc.linear.dynamics.fedavg import enclosed

    held = mu0 * (1.0 - a0) / (1.0 - a0 + gl * a0)
    enclosed(float(np.sum((G * w).imag)) / gl, held, edges, what)
