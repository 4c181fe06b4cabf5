"""Paper 004's Algorithm 1 with K local steps under COVARIATE SHIFT when the pooled samples do
not span R^d: the curves on a contour with z = 1 inside (derived here).

Model, pencil and notation: ``shift.algorithm1.curves`` (paper ``004_98172ed3646eef14.txt``,
Appendix B.1, eqs. 10-11; S_j = Sigma_j^(1/2) Z_j^T Z_j Sigma_j^(1/2) / n_j, the Sigma_j diagonal
in one basis; client i's risk in its own Sigma_i). Pooled N < d: sum_j 1 / gamma_j < 1.

1. The split of ``sigma.algorithm1.pooled`` (steps 1-2) uses no property of the S_j but their
   symmetry and N in each kernel: N = the kernel of the pooled design (n_1 + .. + n_M rows, row
   block j drawn from N(0, Sigma_j)) and R = N^perp are invariant under every S_j, so every
   Y_m(a) is -P_N / (z - 1) + Y_R on theta_0's rows c_th, the data couplings (au_j, cf_j: S_j
   on the right, f_j in R) have no pole at z = 1, and theta_0's cross terms average to 0 over
   its uniform direction whatever metric Sigma_i reads them (P_R P_N = 0). So client i's curves
   of ``shift.algorithm1.curves`` (step 1 there) hold as they stand on the ellipse with foci
   min(0, bottom) and 1 (z = 1 inside), the pole adding signal^2 tau(Sigma_i P_N) in client i's
   metric at every finite T; T = inf reads the data couplings at z = 1 as their mean over the
   circle abs(z - 1) = (1 - top) / 4 (``sigma.algorithm1.pooled``, step 4: ``at_one``,
   ``ring_mean``), and the distance subtracts signal^2 tau(P_N) (metric h, as there).
2. tau(Sigma_i P_N) in closed form. P_N = lim_(x -> 0) x (S + x)^-1, S = sum_j S_j / gamma_j
   (the pooled Gram matrix / d, whose kernel is N). Its deterministic equivalent for commuting
   Sigma_j (the sum of Wisharts' ``engine.joint_spectrum`` form, Couillet-Liao Thm 2.6): (S +
   x)^-1 ~ (sum_j (1 / gamma_j) Sigma_j / (1 + delta_j) + x)^-1 with delta_j = tau(Sigma_j (S +
   x)^-1). With a kernel delta_j ~ e_j / x, so x (S + x)^-1 -> (C + 1)^-1, C = sum_j c_j Sigma_j,

       c_j tau(Sigma_j (C + 1)^-1) = 1 / gamma_j     (j = 1..M),

   and tau(Sigma_i P_N) = tau(Sigma_i (C + 1)^-1), tau(P_N) = tau((C + 1)^-1). Summing the M
   equations: tau(C (C + 1)^-1) = sum_j 1 / gamma_j, so tau(P_N) = mu0 = 1 - sum_j 1 / gamma_j
   (``algorithm1.pooled.pooled_atom``; checked at the solve). All Sigma_j = Sigma: C = Sigma /
   kappa0 with tau(Sigma (Sigma + kappa0)^-1) = 1 / gamma_p, the min-norm interpolator's
   equation, and tau(Sigma P_N) = kappa0 / gamma_p (``sigma.algorithm1.pooled.held_apart``).
   A second route at the solve: client i's circle residue of tau(Sigma_i G_00) must be
   tau(Sigma_i P_N) (1 - a0) / (1 - a0 + g lam a0) (``sigma.algorithm1.pooled.check_masses``
   in client i's metric h v_i), with the whole mass tau(Sigma_i) on the contour (measured:
   tau(Sigma_i P_N) scaled by 1.001 is refused by it).
3. Edges: ``shift.algorithm1.curves`` (each client's sample spectrum under its own covariance)
   scanned with ``pooled_ok`` (the atom 1 invisible to the density scan, ``sigma.algorithm1.
   pooled``, step 3).

4. Personalization from the round-T server model (``shift.algorithm1.personalize``): F_i is
   the identity on N, so as ``sigma.algorithm1.pooled`` (step 5) the circle's mean gives its
   point z = 1 and T = inf adds client i's signal^2 tau(Sigma_i P_N).

Scope: as ``sigma.algorithm1.pooled`` (g lam <= 1, eta (L + lam) <= 1) on the dense pencil (M
K^2 <= ``sigma_pencil.MAX_UNKNOWNS``, personalization M (K + k)^2 <= it, RTFA k = 1); the chain
routes are refused at pooled N < d under shift. Checks (``tests/test_rounds_shift_alg1_pooled.
py``): equal covariances against ``sigma.algorithm1.pooled`` (FTFA too), the closed form
against a finite-d kernel, the continuation in gamma_2 from spanning federations, T = inf
against FedAvg K = 1's fixed point under the same shift (its personalizations measured 2.7e-14,
not in the tests), and the literal algorithm simulated at two d (server, own models, RTFA).
"""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import numpy as np
from scipy.optimize import root

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.shift.algorithm1.pencil import ShiftAlg1Pencil
from riskcalc.linear.dynamics.shift.pencil import client_ends
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import check_masses, pooled_contour


def shift_held_apart(gam, V, h):
    """(tau(Sigma_i P_N) (M,), tau(P_N)) of the pooled null space N under covariate shift
    (module docstring, step 2); ``V`` (M, atoms) client j's eigenvalues on the joint atoms of
    weights ``h``."""
    gam, V, h = np.asarray(gam, float), np.asarray(V, float), np.asarray(h, float)
    mu0 = pooled_atom(gam)

    def res(logc):
        inv = 1.0 / (np.exp(logc) @ V + 1.0)           # (C + 1)^-1 on the atoms
        return logc + np.log(gam * ((V * inv) @ h))     # log(c_j gamma_j tau(Sigma_j (C+1)^-1))

    # Start: the isotropic guess C = c tau(Sigma) I with tau(C (C + 1)^-1) = 1 - mu0.
    sol = root(res, np.full(gam.size, np.log((1.0 - mu0) / mu0 / np.mean(V @ h))), tol=1e-12)
    inv = 1.0 / (np.exp(sol.x) @ V + 1.0)
    held, atom = (V * inv) @ h, float(inv @ h)
    if np.max(np.abs(res(sol.x))) > 1e-10 or abs(atom - mu0) > 1e-9 * max(mu0, 1e-300):
        raise SolverError("spectra: the pooled null space's equations under covariate shift "
                          f"did not converge (tau(P_N) = {atom:.6g}, expected 1 - sum_j "
                          f"1/gamma_j = {mu0:.6g})")
    return held, atom


def shift_pooled_contour(gam, p, lam, eta, K, g, rounds, V, h):
    """``sigma.algorithm1.pooled.pooled_contour``'s dict on the shift pencil (module docstring,
    step 3: each client's sample spectrum under its own covariance) with ``held`` ((M,)
    tau(Sigma_i P_N), tau(P_N)) of step 2, and ``pooled`` the clients' mean eigenvalue."""
    pooled = p @ V / np.sum(p)
    c = pooled_contour(gam, p, lam, eta, K, g, rounds, SimpleNamespace(atoms=pooled, weights=h),
                       pencil=partial(ShiftAlg1Pencil, V), ends=client_ends(V, h, gam),
                       held=shift_held_apart(gam, V, h))
    return {**c, "pooled": pooled}


def check_client_masses(pen, G, c, V, h, a0, gl) -> None:
    """``sigma.algorithm1.pooled.check_masses`` in each client's metric h v_i: the contour's
    mass tau(Sigma_i), the circle's client i's residue of N (module docstring, step 2)."""
    held, atom = c["held"]
    for i in range(V.shape[0]):
        metric = SimpleNamespace(h=h, s=V[i], column0=pen.column0)
        check_masses(metric, G, {**c, "held": (held[i], atom)}, float(V[i] @ h), a0, gl)
