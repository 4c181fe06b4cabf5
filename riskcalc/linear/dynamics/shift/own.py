"""FedAvg with K >= 1 local steps under COVARIATE SHIFT: the clients' own models after their local
steps of round T (derived here).

Model as ``shift.curves`` (client j: gamma_j, r_j, sigma_j, p_j, rows N(0, Sigma_j), the Sigma_j
diagonal in one shared basis; joint measure mu, atoms a of weight h_a, client j's eigenvalue
v_j(a); S_j = (1 / n_j) X_j^T X_j, A_j = I - eta S_j, q_j = I - A_j^K, (q / s)_j = eta
sum_(k<K) A_j^k, D = sum_j p_j q_j, n_j = X_j^T eps_j / n_j of covariance sigma_j^2 gamma_j
S_j / d), client i's own model measured in its own covariance: E[(v_i - theta_i)^T Sigma_i
(v_i - theta_i)]. Conventions of ``local_models`` (T = 0: the zero model; T = inf: the local
phase from the fixed point).

1. Own model. ``sigma.fedavg.own``, step 1, verbatim (it does not use Sigma): v_i - theta_i =
   A_i^K (w_(T-1) - theta_i) + (q / s)_i n_i, w_(T-1) - theta_i = -P theta_0 + R c - u_i, c =
   sum_j p_j (q_j u_j + (q / s)_j n_j), P = (I - g D)^(T-1), R = R_(T-1)(D).
2. Extended pencil. ``sigma.fedavg.own``, step 2 (one deterministic row (j, 0) per client: x_0
   - x_(j,0) = y_(j,0), client j's chain started at x_(j,0)); its exact inverse G has the
   blocks G_(i,K),0 = A_i^K Gz and G_(i,K),(j,m) = p_j A_i^K Gz A_j^(K-m) - delta_ij
   A_i^(K-m) there, whatever the covariances. Client j's S_j enters only through E_j (x) S_j
   on (r_j, c_j), r_j = ((j,1)..(j,K)), c_j = ((j,0)..(j,K-1)), so ``shift.pencil``'s step 2
   applies: Ghat(a) = (L0 + sum_j v_j(a) Chat_j)^-1 with v_j(a) on client j's rows (``ghat``),
   tau_j = E[v_j Ghat[c_j, r_j]]. With y_(j,0) = 0 the row (j, 0) gives x_(j,0) = x_0 on every
   atom, so Ghat[c_j, r_j] is the base pencil's Ghat[(0, (j,1)..(j,K-1)), r_j]: the base fixed
   point tau_j and Chat_j (``shift.pencil``'s contour solution) are the extended pencil's,
   with no new solve.
3. Rows. ``sigma.fedavg.own``, step 3, verbatim (algebra in the exact G): with Y(b) = sum_c
   b_c G_(i,K),c, au_j = p_j e_0 - e_(j,0), wn_j = eta sum_(m=1..K) e_(j,m), ::

       v_i - theta_i = oint R Y(au_j) u_j + oint R Y(wn_j) n_j + oint (P - 1) Y(-e_0) theta_0
                       + Y_inf(e_(i,0)) (theta_0 + u_i) - Y_inf(wn_i) n_i,

   and Y(wn_j) S_j = Y(au_j) - delta_ij I, -Y_inf(wn_i) S_i = I + Y_inf(e_(i,0)) (identities
   of the exact S_j, not of Sigma_j).
4. Second moments. E[u_j u_j^T] = r_j^2 I / d, E[n_j n_j^T] = sigma_j^2 gamma_j S_j / d
   (S_j client j's own, absorbed by step 3's identity), so every term is tau(Sigma_i Y2(b)
   Y1(b')^T) = tau(Sigma_i [G2 F G1^T]_((i,K),(i,K))), F = b b'^T: the block ((i,K), (i,K))
   of the transposed pencil's two-point function (``shift.pencil``, step 3, on L^T: E_j^T on
   (c_j, r_j), Chat_j^T, L0^T; the Jacobian weights h v_j v_k unchanged) read in client i's
   metric, E[v_i Ghat12_((i,K),(i,K))] (``ShiftPencil.two_point`` with the block and the
   metric of each coupling). Client i's eight
   couplings are ``sigma.fedavg.own``'s (its ``assemble`` sums them); the identity terms
   sigma_i^2 gamma_i tau(Sigma_i Y(wn_i)) = sigma_i^2 gamma_i E[v_i (Ghat wn_i)_(i,K)] from
   the one-point Ghat; T = 0: (signal^2 + r_i^2) tau(Sigma_i).
   One covariance (v_j = s) is ``sigma.fedavg.own`` term by term.

Dense: the extended pencil of 1 + M (K + 1) blocks per atom and node, M K^2 unknowns per pair
(at most ``sigma_pencil.MAX_UNKNOWNS``; beyond, ``shift.own_chain``). Checks
(``tests/test_rounds_shift_own.py``): equal covariances against ``sigma.fedavg.own``, the
simulated algorithm (``montecarlo.linear.rounds``, ``spectra``) on an anti-aligned federation
at two d, and the aligned (shared-spectrum) prediction rejected there.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.shift.pencil import ShiftPencil
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.fedavg.own import OwnPencil, assemble
from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS


class OwnShiftPencil(OwnPencil):
    """``sigma.fedavg.own.OwnPencil`` (its blocks, rows, columns, L0) with client j's eigenvalue
    v_j(a) on its own rows (module docstring, step 2), from ``shift.pencil.ShiftPencil`` or
    ``shift.chain.ShiftChain`` ``base``; ``ShiftPencil``'s two-point solve (step 4)."""

    two_point = ShiftPencil.two_point
    pair_weights = ShiftPencil.pair_weights

    def __init__(self, base, transposed: bool = False):
        super().__init__(base, transposed)
        self.V = base.V

    def ghat(self, z, C):
        """Ghat(a) (N, atoms, n, n) at nodes z (N,) given Chat (N, M, K, K) (transposed:
        pass Chat_j transposed; the result is Ghat(a)^T)."""
        L = np.broadcast_to(self.L0, (z.size, self.V.shape[1], self.n, self.n)).astype(complex)
        for j in range(self.M):
            L[:, :, self.rows[j][:, None], self.cols[j][None, :]] += \
                self.V[j][None, :, None, None] * C[:, j][:, None]
        L[:, :, 0, 0] += z[:, None]
        return np.linalg.inv(L)


def own_models_shift(pen, c, gam, r, sigma, p, signal, rounds):
    """(bias, variance), each (M, len(rounds)), of every client's own model after the local
    phase of round T in its own covariance (module docstring) from the contour ``c`` of
    ``shift.curves.shift_k_curves`` (the keys of ``sigma.fedavg.curves.pencil_curves``'
    ``own_models``) for FedAvg's pencil ``pen`` under shift.

    Raises
    ------
    ValueError
        M K^2 beyond ``sigma_pencil.MAX_UNKNOWNS`` (the dense extended pencil's), or beyond the
        memory budget.
    """
    M, K, h, eta, V = pen.M, pen.K, pen.h, pen.eta, pen.V
    if M * K * K > MAX_UNKNOWNS:
        raise ValueError(f"covariate shift: the clients' own models (local_risk) with "
                         f"local_steps = {K} and {M} clients solve M K^2 = {M * K * K} unknowns "
                         f"per pair of contour nodes (at most {MAX_UNKNOWNS} on this dense "
                         "route; beyond it, shift.own_chain on the chain route)")
    z = c["z"]
    budget.check_memory(lambda m, k, x: memory.estimate("dense", m * k * k, 1 + m * (k + 1),
                                                        h.size, x, **memory.own_couplings(m)),
                        (M, K, 2 * z.size), f"the clients' own models under covariate shift "
                        f"with {h.size} joint atoms and {2 * z.size} contour nodes",
                        nodes_follow_rounds=False)
    big = np.array([1e13 * (1.0 + c["b"])], complex)       # the node at infinity (Gz -> 0)
    _, Ci, _ = pen.solve(lambda t: big, [0.0])
    ext, extt = OwnShiftPencil(pen), OwnShiftPencil(pen, transposed=True)
    C1 = np.concatenate([c["one"][0], Ci])
    C2 = np.concatenate([c["one"][0], c["one"][0].conj(), Ci])
    G1 = ext.ghat(np.concatenate([z, big]), C1)
    G2 = ext.ghat(np.concatenate([z, z.conj(), big]), C2)
    N1, n = z.size, ext.n
    e = np.eye(n)
    au = p[:, None] * e[0][None, :] - e[ext.zero]
    wn = np.zeros((M, n))
    for j in range(M):
        wn[j, ext.rows[j]] = eta
    couplings = []
    for i in range(M):
        ei, sg, bl = e[ext.zero[i]], sigma[i] ** 2 * gam[i], (ext.last[i], ext.last[i])
        couplings += [(cc, W, Vc, bl) for cc, W, Vc in [
            (r ** 2, au, au), (sigma ** 2 * gam, au, wn),                           # (R, R)
            ([signal ** 2], -e[:1], -e[:1]),                                        # (Pm, Pm)
            ([2 * r[i] ** 2], ei[None, :], au[i][None, :]),                         # (R, inf)
            ([sg, sg], np.stack([ei, -wn[i]]), np.stack([wn[i], au[i]])),
            ([2 * signal ** 2], ei[None, :], -e[:1]),                               # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], ei[None, :], ei[None, :]),                  # (inf, inf)
            ([sg], ei[None, :], -wn[i][None, :])]]
    t = (lambda x: x.swapaxes(-1, -2))
    lams = np.repeat(h * V, 8, axis=0)[:, None, :]          # client i's metric: (8 M, 1, atoms)
    Hall = extt.two_point((t(C1), t(G1)), (t(C2), t(G2)), couplings, lams)[:, 0].reshape(
        M, 8, N1 + 1, -1)
    traces = np.stack([np.einsum("a,nab,b->n", h * V[i], G1[:, :, ext.last[i], :], wn[i])
                       for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, V @ h, rounds)

