"""Paper 004's Algorithm 1 with exact local solves under a shared covariance spectrum: the server
model's curves (derived here).

Model as ``fedavg_sigma_k`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio
gamma_j, Sigma with spectrum H). Paper 004 (``004_98172ed3646eef14.txt``), eqs. 9-10, with the
exact prox v_j = (S_j + lam)^-1 (b_j + lam w) and the server step w <- w - g lam sum_j p_j
(w - v_j): since w - v_j = (S_j + lam)^-1 (S_j w - b_j), this is FedAvg's round map
(``fedavg_sigma_k``) with the filter q(s) = s / (s + lam), (q / s)(s) = 1 / (s + lam) and the
global step g lam (as ``prox_laws`` for Sigma = I): D = sum_j p_j q(S_j).

1. Linearization. Since 1 - q(s) = lam / (s + lam), z - D = z - sum_j p_j + lam sum_j p_j
   (S_j + lam)^-1 is the Schur complement of the pencil with n = 1 + M blocks ::

       row 0:  (z - sum_j p_j) x_0 + lam sum_j p_j x_j = y_0,
       row j:  x_0 - (S_j + lam) x_j                  = y_j,

   (y = e_0 gives x_j = (S_j + lam)^-1 x_0). So G = L^-1 has G_00 = (z - D)^-1 and G_j0 =
   (S_j + lam)^-1 (z - D)^-1, and L = L0(z) + sum_j E_j (x) S_j with E_j = -1 at (j, j) only:
   ``sigma_pencil``'s pencil with one local block per client whose column is its own row
   (r_j = c_j = (j)) and coefficient -1 in place of -eta. Its deterministic equivalent is that
   of ``sigma_pencil`` (step 2) with K = 1, eta = 1: one scalar tau_j = tau(Sigma G_jj) per
   client and contour node, Chat_j = -1 / (1 - gamma_j tau_j).
2. Curves. As ``fedavg_sigma_k`` with g -> g lam and the block coefficients
   q(S_j) G_00 = G_00 - lam G_j0 (v_j = e_0 - lam e_j) and, on the transposed side,
   G_00 (q / s)(S_j) = (G^T)_0j (wn_j = e_j); the two-point functions of ``sigma_pencil``
   (step 3) then give tau(Sigma R q(S_j)^2 R) and tau(Sigma R (q^2 / s)(S_j) R).
3. Edges. q <= top_j / (top_j + lam) on client j's spectrum (top_j: the top of its sample
   spectrum), which bounds D's spectrum for the scan of ``sigma_pencil.edges``; the atom of D
   at 0 is (1 - sum_j min(1, 1 / gamma_j))_+ as for FedAvg (null space of D = the intersection
   of those of the S_j).

Checks (``tests/test_rounds_sigma_prox.py``): Sigma = I against the scalar route of
``prox_laws`` and the literal iteration (``montecarlo.linear.rounds``) under a two-point spectrum
at several d. Not covered: the clients' own models v_j (paper 004's personalized models) under a
spectrum (refused).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma.fedavg_sigma_k import pencil_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, edges, stable_top


class ProxPencil(SigmaPencil):
    """The pencil of the module docstring (step 1) for clients (gamma_j, p_j) and penalty lam:
    ``SigmaPencil`` with one block per client, r_j = c_j = (j), coefficient -1."""

    def __init__(self, atoms, weights, gam, p, lam: float):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = 1.0, 1, self.gam.size
        self.n = 1 + self.M
        self.rows = 1 + np.arange(self.M).reshape(self.M, 1)
        self.cols = self.rows.copy()
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = -self.p.sum()
        L0[0, self.rows[:, 0]] = lam * self.p
        L0[self.rows[:, 0], 0] = 1.0
        L0[self.rows[:, 0], self.rows[:, 0]] = -lam
        self.L0 = L0


def prox_sigma_curves(gam, r, sigma, p, signal, lam, g, rounds, spectrum):
    """Bias, variance and distance to the fixed point of the server model of paper 004's
    Algorithm 1 with exact prox (``004_98172ed3646eef14.txt``, eqs. 9-10) for every client at
    every T of ``rounds`` under ``spectrum`` (module docstring); the dict of
    ``fedavg.round_map_curves`` (``local`` refuses).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, lam, g : float
        ||theta_0||, the prox penalty and the paper's global step gamma.
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
        H, uniform signal directions.
    """
    pen = ProxPencil(spectrum.atoms, spectrum.weights, gam, p, lam)
    top = stable_top(spectrum.atoms, spectrum.weights, gam)
    M = pen.M
    v = np.zeros((M, pen.n))
    v[:, 0], v[np.arange(M), pen.rows[:, 0]] = 1.0, -lam
    wn = np.zeros((M, pen.n))
    wn[np.arange(M), pen.rows[:, 0]] = 1.0
    return pencil_curves(pen, edges(pen, top, qmax=top / (top + lam)), g * lam, gam, r, sigma,
                         p, signal, rounds, v, wn)
