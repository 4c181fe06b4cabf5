"""Paper 004's Algorithm 1 with exact local solves under a shared covariance spectrum: the curves
of the server model and of the clients' own models (derived here).

Model as ``sigma.fedavg.curves`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio
gamma_j, Sigma with spectrum H). Paper 004 (``004_98172ed3646eef14.txt``), eqs. 9-10, with the
exact prox v_j = (S_j + lam)^-1 (b_j + lam w) and the server step w <- w - g lam sum_j p_j
(w - v_j): since w - v_j = (S_j + lam)^-1 (S_j w - b_j), this is FedAvg's round map
(``sigma.fedavg.curves``) with the filter q(s) = s / (s + lam), (q / s)(s) = 1 / (s + lam) and the
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
2. Curves. As ``sigma.fedavg.curves`` with g -> g lam and the block coefficients
   q(S_j) G_00 = G_00 - lam G_j0 (v_j = e_0 - lam e_j) and, on the transposed side,
   G_00 (q / s)(S_j) = (G^T)_0j (wn_j = e_j); the two-point functions of ``sigma_pencil``
   (step 3) then give tau(Sigma R q(S_j)^2 R) and tau(Sigma R (q^2 / s)(S_j) R).
3. Edges. q <= top_j / (top_j + lam) on client j's spectrum (top_j: the top of its sample
   spectrum), which bounds D's spectrum for the scan of ``pencil_edges.edges``; the atom of D
   at 0 is (1 - sum_j min(1, 1 / gamma_j))_+ as for FedAvg (null space of D = the intersection
   of those of the S_j).

4. Own models. Client i's model after the local phase of round T >= 1 is
   v_i = B_i (lam w_(T-1) + b_i), B_i = (S_i + lam)^-1, b_i = S_i theta_i + n_i
   (n_i = X_i^T eps_i / n_i, covariance sigma_i^2 gamma_i S_i / d), so with A_i = lam B_i ::

       v_i - theta_i = A_i (w_(T-1) - theta_i) + B_i n_i,
       w_(T-1) - theta_i = P theta_0 - theta_0 + R c - u_i,  c = sum_j p_j (q_j u_j + B_j n_j),

   P = (I - g lam D)^(T-1), R = R_(T-1)(D) (``sigma.fedavg.curves``; theta_j = theta_0 + u_j). The
   blocks of G (step 1, solved with y = e_j) are G_0j = lam p_j G_00 B_j, G_i0 = B_i G_00 and
   G_ij = B_i G_0j - delta_ij B_i; hence B_i G_00 B_j = (G_ij + delta_ij B_i) / (lam p_j) and
   B_i G_00 q_j = G_i0 - (G_ij + delta_ij B_i) / p_j. R and P - 1 are polynomials (R = 1 / z
   at T = inf, P - 1 = -1), so a constant matrix integrates to 0 against them on the contour
   around D's nonzero spectrum (which c and (P - 1) theta_0 live on), and ::

       v_i - theta_i = oint R Y(lam (p_j e_0 - e_j)) u_j + oint R Y(e_j) n_j
                       + oint (P - 1) Y(-lam e_0) theta_0 + Y_inf(lam e_i) (theta_0 + u_i)
                       - Y_inf(e_i) n_i,

   sums over j, with Y(a) = sum_b a_b G_ib(z) (row i of G) and Y_inf(a) the same at z = inf,
   where G_ii = -B_i and the other blocks vanish (A_i = -lam G_ii(inf), B_i = -G_ii(inf)).
   For the noise, Y(e_j) S_j = Y(lam (p_j e_0 - e_j)) - delta_ij I and -Y_inf(e_i) S_i = I +
   Y_inf(lam e_i). Every term of E[(v_i - theta_i)^T Sigma (v_i - theta_i)] is therefore
   tau(Sigma Y(a) Y'(a')^T) at two nodes, the block (i, i) of G2 F G1^T with F = a' a^T: the
   two-point function of ``sigma_pencil`` (step 3) applied to the transposed pencil (L0^T;
   E_j is symmetric, so its solution is Ghat^T) with ``block`` = (i, i), and the node at
   infinity taken at z = 1e13 (1 + b) (relative error 1e-13); the identity terms add
   sigma_i^2 gamma_i tau(Sigma Y(e_i)) from the one-point G_ii. T = 0 is the zero model.

Checks (``tests/test_rounds_sigma_prox.py``): Sigma = I against the scalar routes of
``prox_laws`` (server) and ``local_models`` (own models), the own models at T = inf against
``clients_limit("pfedme")`` under the spectrum (pFedMe's minimizer), and the literal iteration
(``montecarlo.linear.rounds``) under a two-point spectrum at several d. Not covered:
personalization from the round-T server model under a spectrum (refused).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma.fedavg.own import assemble, own_pairs
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, stable_top


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
    ``fedavg.round_map_curves`` (``local()``: the clients' own models, step 4; with a
    personalization filter it refuses).

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
    qmax = top / (top + lam)
    return pencil_curves(pen, edges(pen, top, qmax=qmax, near=band_points(gam, p, qmax)),
                         g * lam, gam, r, sigma, p, signal, rounds, v, wn,
                         own_models=lambda c: _own_models(pen, c, lam, gam, r, sigma, p, signal,
                                                          rounds))


#: lam / a below which ``projection_lam``'s projection replaces the prox under a spectrum.
PROJECTION_RATIO = 1e-5


def projection_lam(gam, spectrum) -> float:
    """The lam below which ``rounds_limit`` takes FedAvg's exact local solves (K = inf,
    ``sigma.fedavg.exact``, global step g lam) for Algorithm 1's exact prox under a spectrum,
    as ``prox_laws.projection_lam`` does for Sigma = I: PROJECTION_RATIO times the smallest
    bottom a_j of the clients' nonzero sample spectra. Measured (five clients at gamma 2,
    spectrum (1, 4), a = 0.311): the prox's own-model risk differs from the projection's by
    0.67 lam relative down to lam 1e-6, then by rounding, 2e-6 at 1e-7, 2e-5 at 1e-8, and the
    fixed point was 78.6 for 3.56 at 1e-14 (fuzz27 F19): below 3e-6 the projection is the
    closer, within 2e-6."""
    from riskcalc.linear.engine.weighted_mp import support_edges

    bottom = min(support_edges(float(g), spectrum)[0] for g in np.unique(gam))
    return PROJECTION_RATIO * max(float(bottom), 0.0)


def takes_projection(gam, spectrum, lam) -> bool:
    """Whether Algorithm 1's exact prox at ``lam`` is taken as FedAvg's exact local solves
    (global step g lam) under ``spectrum``: below ``projection_lam``, except for one client
    with gamma > 1 (D a projection, its nonzero spectrum one point: not covered by
    ``sigma.fedavg.exact``). The server curves (``rounds_limit``) and the personalization
    after the rounds (``personalize_sigma``) both ask here, so they model the same server."""
    return lam <= projection_lam(gam, spectrum) and (gam.size > 1 or gam[0] < 1.0)


def band_points(gam, p, qmax):
    """Where D = sum_j p_j S_j (S_j + lam)^-1 may hold a narrow band apart from the rest of its
    spectrum (``pencil_edges.edges``' ``near``): as lam -> 0, D -> sum_j p_j P_j (P_j the
    projection on the range of S_j; ``sigma.fedavg.exact``), whose outermost atoms are 1 (the
    ranges' intersection, approached from below as sum_j p_j qmax_j) and sum_(gamma_j < 1)
    p_j (the other clients' null spaces' intersection); at small lam each becomes a band of
    width O(lam) that a grid of the scan's step can miss (measured: two clients, gamma =
    (1.5, 2), lam = 3e-3 under a two-point spectrum, a band of mass 1/6 missed)."""
    low = float(np.sum(p[gam < 1.0]))
    return [float(np.sum(p * qmax))] + ([low] if low > 0.0 else [])


def _own_models(pen, c, lam, gam, r, sigma, p, signal, rounds):
    """(bias, variance) of every client's own model v_i after the local phase of round T
    (module docstring, step 4) from the contour ``c`` of ``pencil_curves``."""
    M, n, s, h = pen.M, pen.n, pen.s, pen.h
    Es = float(h @ s)
    z = c["z"]
    # A dense pencil of 1 + M blocks, M unknowns, with its 8 M couplings (``memory``), on the
    # 2 N nodes of the pair solves. Measured numpy peak / estimate (two-point spectrum): M = 2,
    # 12 atoms 0.79; M = 10, T = 200 0.94; M = 20, T = 50 0.46; M = 24, T = 200 0.44.
    budget.check_memory(lambda m, k, x: memory.estimate("dense", m, 1 + m, s.size, x,
                                                        **memory.own_couplings(m)),
                        (M, 1, 2 * z.size), f"the clients' own models (exact prox) with "
                        f"{s.size} atoms and {2 * z.size} contour nodes",
                        nodes_follow_rounds=False)
    # The node at infinity: G_ii -> -(S_i + lam)^-1, G_00, G_i0 -> 0 (error O(1 / z)).
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    _, Ci, Gi = pen.solve(lambda t: big, [0.0])
    C1, G1 = (np.concatenate([x, y]) for x, y in zip(c["one"], (Ci, Gi)))
    C2, G2 = (np.concatenate([x, y]) for x, y in zip(c["full"], (Ci, Gi)))
    G1t, G2t = G1.swapaxes(-1, -2), G2.swapaxes(-1, -2)       # the transposed pencil
    e = np.eye(n)
    au = lam * (p[:, None] * e[0][None, :] - e[1:])          # u_j's row combination
    couplings = []
    for i in range(M):
        ei, sg, bl = e[1 + i], sigma[i] ** 2 * gam[i], (1 + i, 1 + i)
        couplings += [
            (r ** 2, au, au, bl), (sigma ** 2 * gam, au, e[1:], bl),                # (R, R)
            ([signal ** 2], -lam * e[:1], -lam * e[:1], bl),                        # (Pm, Pm)
            ([2 * r[i] ** 2], lam * ei[None, :], au[i][None, :], bl),               # (R, inf)
            ([sg, sg], np.stack([lam * ei, -ei]), np.stack([ei, au[i]]), bl),
            ([2 * signal ** 2], lam * ei[None, :], -lam * e[:1], bl),               # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], lam * ei[None, :], lam * ei[None, :], bl),  # (inf, inf)
            ([sg], lam * ei[None, :], -ei[None, :], bl),
        ]
    # One linear solve per pair of nodes for every client's blocks (i, i).
    Hall = own_pairs(pen, (C1, G1t), (C2, G2t), couplings, M)
    traces = np.stack([np.einsum("a,na->n", h * s, G1[:, :, 1 + i, 1 + i])  # tau(Sigma G_ii)
                       for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, Es, rounds)

