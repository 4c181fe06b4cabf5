"""FedAvg with K >= 1 local steps under a shared covariance spectrum: the clients' own models
after their local steps of round T (derived here).

Model and notation as ``sigma.fedavg.curves`` and ``sigma_pencil`` (A_j = I - eta S_j, q_j =
I - A_j^K, (q / s)_j = eta sum_(k<K) A_j^k, D = sum_j p_j q_j, Gz = (z - D)^-1,
theta_j = theta_0 + u_j, b_j = S_j theta_j + n_j, n_j = X_j^T eps_j / n_j of covariance
sigma_j^2 gamma_j S_j / d). The definition and the conventions (T = 0: the zero model; T =
inf: the local phase from the fixed point) are those of ``local_models`` (Sigma = I).

1. Own model. Client i's model after the local phase of round T >= 1 is v_i = A_i^K w_(T-1)
   + (q / s)_i b_i, so ::

       v_i - theta_i = A_i^K (w_(T-1) - theta_i) + (q / s)_i n_i,
       w_(T-1) - theta_i = -P theta_0 + R c - u_i,   c = sum_j p_j (q_j u_j + (q / s)_j n_j),

   P = (I - g D)^(T-1), R = R_(T-1)(D) (``sigma.fedavg.curves``).
2. Extended pencil. The rows of ``sigma_pencil``'s inverse give A_i^k Gz A_j^l for l < K only,
   and q_j needs l = K. One more deterministic block per client, row (j, 0): x_0 - x_(j,0) =
   y_(j,0), with the chain now started at x_(j,0) (row (j,1): A_j x_(j,0) - x_(j,1)), gives
   x_(j,k) = A_j^k x_0 - sum_(m=0..k) A_j^(k-m) y_(j,m) and (z - D) x_0 = y_0 + sum_j p_j
   sum_(m=0..K) A_j^(K-m) y_(j,m), so the inverse G has ::

       G_(i,K),0 = A_i^K Gz,   G_(i,K),(j,m) = p_j A_i^K Gz A_j^(K-m) - delta_ij A_i^(K-m),

   m = 0..K. The random part is still E_j = -eta on (r_j, c_j), r_j = ((j,1)..(j,K)), now
   c_j = ((j,0)..(j,K-1)): the same K x K blocks, and with y_(j,0) = 0 the system is the old
   one (x_(j,0) = x_0), so the deterministic equivalent has the same fixed point tau_j and
   Chat_j (``sigma_pencil``, step 2): Ghat of the extended pencil is (L0 + s sum_j Chat_j)^-1
   from the contour's solution, with no new solve.
3. Rows. With Y(a) = sum_b a_b G_(i,K),b (row (i,K)) and the node at infinity Y_inf(a), where
   Gz = 0 and G_(i,K),(i,m) = -A_i^(K-m): p_j A_i^K Gz q_j = Y(p_j e_0 - e_(j,0)) -
   delta_ij A_i^K and p_j A_i^K Gz (q / s)_j = Y(wn_j) + delta_ij (q / s)_i with wn_j = eta
   sum_(m=1..K) e_(j,m). R and P - 1 are polynomials (R = 1 / z at T = inf, P - 1 = -1), so
   the constants integrate to 0 on the contour around D's nonzero spectrum (which c and
   (P - 1) theta_0 live on), and ::

       v_i - theta_i = oint R Y(au_j) u_j + oint R Y(wn_j) n_j + oint (P - 1) Y(-e_0) theta_0
                       + Y_inf(e_(i,0)) (theta_0 + u_i) - Y_inf(wn_i) n_i,

   sums over j, au_j = p_j e_0 - e_(j,0). For the noise, Y(wn_j) S_j = Y(au_j) - delta_ij I
   (eta sum_(m<=K) A^(K-m) S = q) and -Y_inf(wn_i) S_i = q_i = I + Y_inf(e_(i,0)).
4. Second moments: exactly ``prox_sigma`` step 4 with (lam (p_j e_0 - e_j), e_j, -lam e_0,
   lam e_i, block (i, i)) replaced by (au_j, wn_j, -e_0, e_(i,0), block ((i,K), (i,K))):
   blocks of ``sigma_pencil.two_point`` on the transposed extended pencil (rows and columns
   of E_j swapped, Chat_j transposed, L0 transposed), the node at infinity at z = 1e13 (1 +
   b), and the identity terms sigma_i^2 gamma_i tau(Sigma Y(wn_i)) from the one-point G.

Checks (``tests/test_rounds_sigma_local.py``): Sigma = I against the scalar route of
``local_models`` (pooled N > d and N < d, K = 1 and K >= 2), the extended pencil's own fixed
point against the original's (step 2), and the literal iteration (``montecarlo.linear.rounds``)
under a two-point spectrum at two d.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.guards import own_work
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, symmetric_pairs


class OwnPencil(SigmaPencil):
    """The extended pencil of the module docstring (step 2), n = 1 + M (K + 1) blocks:
    0, then per client (j, 0), (j, 1), .., (j, K); ``transposed``: its transpose (E_j on
    (c_j, r_j), L0^T; pass Chat_j transposed)."""

    def __init__(self, base: SigmaPencil, transposed: bool = False):
        self.s, self.h, self.gam, self.p = base.s, base.h, base.gam, base.p
        self.eta, self.K, self.M = base.eta, base.K, base.M
        M, K = self.M, self.K
        self.n = 1 + M * (K + 1)
        start = 1 + (K + 1) * np.arange(M)                     # (j, 0)
        self.zero = start
        self.last = start + K                                   # (j, K)
        rows = start[:, None] + 1 + np.arange(K)[None, :]       # (j, 1..K)
        cols = start[:, None] + np.arange(K)[None, :]           # (j, 0..K-1)
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = -self.p.sum()
        L0[0, self.last] = self.p
        L0[start, 0] = 1.0
        L0[start, start] = -1.0
        for j in range(M):
            L0[rows[j], rows[j]] = -1.0
            L0[rows[j], cols[j]] += 1.0
        self.rows, self.cols, self.L0 = (cols, rows, L0.T) if transposed else (rows, cols, L0)


def own_models(pen, c, gam, r, sigma, p, signal, rounds):
    """(bias, variance), each (M, len(rounds)), of every client's own model after the local
    phase of round T (module docstring) from the contour ``c`` of
    ``sigma.fedavg.curves.pencil_curves`` for FedAvg's pencil ``pen``."""
    M, K, s, h, eta = pen.M, pen.K, pen.s, pen.h, pen.eta
    Es = float(h @ s)
    z = c["z"]
    ext, extt = OwnPencil(pen), OwnPencil(pen, transposed=True)
    # The extended pencil's inverse and the pair solves of its 8 M couplings: a dense pencil
    # (``memory``) of 1 + M (K + 1) blocks on the 2 N nodes.
    budget.check_memory(lambda m, k, x: memory.estimate("dense", m * k * k, 1 + m * (k + 1),
                                                        s.size, x, **memory.own_couplings(m)),
                        (M, K, 2 * z.size), f"the clients' own models (dense route) with "
                        f"{s.size} atoms and {2 * z.size} contour nodes",
                        nodes_follow_rounds=False)
    own_work(M, K, s.size, 2 * z.size)      # their time, before solving
    # The node at infinity: Gz -> 0 (error O(1 / z)).
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    _, Ci, _ = pen.solve(lambda t: big, [0.0])
    zf = np.concatenate([z, z.conj()])
    C1 = np.concatenate([c["one"][0], Ci])
    C2 = np.concatenate([c["one"][0], c["one"][0].conj(), Ci])     # upper, conjugates, inf
    z1, z2 = np.concatenate([z, big]), np.concatenate([zf, big])
    G1, G2 = ext.ghat(z1, C1), ext.ghat(z2, C2)
    G1t, G2t = G1.swapaxes(-1, -2), G2.swapaxes(-1, -2)         # the transposed pencil
    C1t, C2t = C1.swapaxes(-1, -2), C2.swapaxes(-1, -2)
    n = ext.n
    e = np.eye(n)
    au = p[:, None] * e[0][None, :] - e[ext.zero]               # u_j's row combination
    wn = np.zeros((M, n))
    for j in range(M):
        wn[j, ext.rows[j]] = eta
    couplings = []
    for i in range(M):
        ei, sg = e[ext.zero[i]], sigma[i] ** 2 * gam[i]
        bl = (ext.last[i], ext.last[i])
        couplings += [
            (r ** 2, au, au, bl), (sigma ** 2 * gam, au, wn, bl),                   # (R, R)
            ([signal ** 2], -e[:1], -e[:1], bl),                                    # (Pm, Pm)
            ([2 * r[i] ** 2], ei[None, :], au[i][None, :], bl),                     # (R, inf)
            ([sg, sg], np.stack([ei, -wn[i]]), np.stack([wn[i], au[i]]), bl),
            ([2 * signal ** 2], ei[None, :], -e[:1], bl),                           # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], ei[None, :], ei[None, :], bl),              # (inf, inf)
            ([sg], ei[None, :], -wn[i][None, :], bl),
        ]
    Hall = own_pairs(extt, (C1t, G1t), (C2t, G2t), couplings, M)
    # tau(Sigma Y(wn_i)) at every node of the upper half and at infinity.
    traces = np.stack([np.einsum("a,nab,b->n", h * s, G1[:, :, ext.last[i], :], wn[i])
                       for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, Es, rounds)


def own_pairs(pen, one1, one2, couplings, M):
    """``assemble``'s Hall (M, 8, N1 + 1, 2 N1 + 1) from ``pen.two_point`` (lam = s) on
    ``one1`` (the N1 upper nodes and the node at infinity) and ``one2`` (the upper nodes, their
    conjugates and infinity) for each client's eight ``couplings`` in ``assemble``'s order,
    the entries ``assemble`` reads only (the others NaN): the first three at the pairs of
    finite nodes, half of them solved (``two_point``'s ``symmetric``: their traces tau(Sigma
    Y2 h Y1^T), h a function of the S_j, are symmetric in (z1, z2) with W and V swapped, so
    the second (W != V) is solved with its swap as its mirror; measured: the mirrors agree to
    1e-15 of the largest value), the other five at the pairs (u, inf) only. Against every
    coupling at every pair: about a third of the pairs' work. A pencil with its own
    ``two_point`` (``sigma_pencil.symmetric_pairs``: the covariate shift's) solves them all."""
    (C1, G1), (C2, G2) = one1, one2
    N1 = G1.shape[0] - 1
    if not symmetric_pairs(pen):
        return pen.two_point(one1, one2, couplings)[:, 0].reshape(M, 8, N1 + 1, -1)
    out = np.full((M, 8, N1 + 1, 2 * N1 + 1), np.nan, complex)
    grid = [couplings[8 * i + f] for i in range(M) for f in range(3)]
    # Each client's four: its three and the second's swap, the mirror of the second.
    grid = [f for i in range(M) for f in grid[3 * i:3 * i + 3] + [
        (grid[3 * i + 1][0], grid[3 * i + 1][2], grid[3 * i + 1][1], grid[3 * i + 1][3])]]
    mirror = (np.array([0, 3, 2, 1])[None, :] + 4 * np.arange(M)[:, None]).ravel()
    H = pen.two_point((C1[:N1], G1[:N1]), (C2[:-1], G2[:-1]), grid, symmetric=True,
                      mirror=mirror)[:, 0].reshape(M, 4, N1, 2 * N1)
    out[:, :3, :N1, :-1] = H[:, :3]
    col = [couplings[8 * i + f] for i in range(M) for f in range(3, 8)]
    out[:, 3:, :, -1:] = pen.two_point(one1, (C2[-1:], G2[-1:]), col)[:, 0].reshape(
        M, 5, N1 + 1, 1)
    return out


def assemble(Hall, traces, c, gam, r, sigma, signal, Es, rounds):
    """(bias, variance), each (M, len(rounds)), of the own models from the two-point blocks
    ``Hall`` (M, 8, N1 + 1, .) of each client's eight couplings (FedAvg here, Algorithm 1 in
    ``prox_sigma``: the same terms, module docstring) and ``traces`` (M, N1 + 1): tau(Sigma Y)
    of each client's noise row at the upper nodes and at infinity. T = 0: the zero model."""
    one, double, g, z = c["one_q"], c["double_q"], c["g"], c["z"]
    N1, M = z.size, len(gam)
    Tm1 = np.where(c["finite"], np.maximum(rounds - 1.0, 0.0), 0.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        def filters(x):     # R_{T-1}(x), P_{T-1}(x) - 1 (T = inf: 1 / x, -1)
            power = (1.0 - g * x) ** Tm1
            return (np.where(c["finite"][:, None], (1.0 - power) / x, 1.0 / x),
                    np.where(c["finite"][:, None], power - 1.0, -1.0))
        R1, P1 = filters(z)
        R2, P2 = filters(np.concatenate([z, z.conj()]))
    bias, var = np.empty((M, len(rounds))), np.empty((M, len(rounds)))
    for i in range(M):
        H, sg, y = Hall[i], sigma[i] ** 2 * gam[i], traces[i]
        with np.errstate(over="ignore", invalid="ignore"):
            bias[i] = double(R1, R2, H[0, :N1, :-1]) + double(P1, P2, H[2, :N1, :-1]) \
                + one(R1, H[3, :N1, -1][None, :])[:, 0] \
                + one(P1, H[5, :N1, -1][None, :])[:, 0] + H[6, -1, -1].real
            var[i] = double(R1, R2, H[1, :N1, :-1]) + one(R1, H[4, :N1, -1][None, :])[:, 0] \
                + H[7, -1, -1].real + sg * (one(R1, y[None, :N1])[:, 0] - y[-1].real)
    T0 = rounds == 0
    bias[:, T0] = ((signal ** 2 + r ** 2) * Es)[:, None]
    var[:, T0] = 0.0
    return bias, var
