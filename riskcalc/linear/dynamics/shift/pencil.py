"""FedAvg's round map with K local steps under COVARIATE SHIFT: the linear pencil with per-client
eigenvalues on the joint measure (derived here).

Model as ``shift.one_step`` (client j: gamma_j = d / n_j, weight p_j, rows N(0, Sigma_j), all
Sigma_j diagonal in one shared basis; the joint measure mu of ``riskcalc.linear.engine.
joint_spectrum``: atoms a of weight h_a, client j's eigenvalue v_j(a)), with K local gradient
steps as ``sigma.sigma_pencil``: S_j = Sigma_j^(1/2) W_j Sigma_j^(1/2) = (1 / n_j) sum_mu x x^T
over client j's rows x ~ N(0, Sigma_j), A_j = I - eta S_j, D = sum_j p_j (I - A_j^K), tau =
tr / d, E[.] the integral over mu.

1. Linearization: ``sigma_pencil``, step 1, verbatim (it does not use Sigma): G = L^-1 of
   L = L0(z) (x) I + sum_j E_j (x) S_j has G_00 = (z - D)^-1 and G_(j,k),0 = A_j^k G_00; E_j
   = -eta I_K on the entries (r_j, c_j).
2. Deterministic equivalent. Row x of client j enters L as (1 / n_j) U E_j U^T, U = I_n (x) x.
   Woodbury: G = G' - G' U Chat_x U^T G' / n_j with Chat_x = E_j (I + U^T G' U E_j /
   n_j)^-1, where G' lacks the row; U^T G' U / n_j = [x^T G'_ab x / n_j]_ab -> gamma_j
   T^(j), T^(j)_ab = tau(Sigma_j G_ab) (x independent of G', E[x x^T] = Sigma_j: client j's
   OWN covariance is the only change from ``sigma_pencil``). Summing the n_j rows of each
   client as there, E[G] is the inverse of L0 (x) I + sum_j Chat_j (x) Sigma_j, diagonal in
   the shared basis: on atom a ::

       Ghat(a) = (L0 + sum_j v_j(a) Chat_j)^-1,   Chat_j = E_j (I + gamma_j T^(j) E_j)^-1.

   Push-through on E_j = -eta P_r^T P_c (P_r, P_c: the rows r_j, c_j): Chat_j[r_j, c_j] =
   -eta (I - gamma_j eta tau_j)^-1, zero elsewhere, with tau_j = T^(j)[c_j, r_j] =
   E[v_j Ghat[c_j, r_j]] (``own_weights``). Client j's v_j scales the rows r_j of L, which no
   other client touches (``ghat``). Newton: dChat_k = -gamma_k Chat_k dtau_k Chat_k (Chat =
   -eta X^-1, X = I - gamma eta tau), dGhat = -Ghat (sum_k v_k dChat_k) Ghat, so ::

       dtau_j = sum_k gamma_k E[v_j v_k Ghat[c_j, r_k] Chat_k dtau_k Chat_k Ghat[c_k, r_j]],

   ``sigma_pencil``'s Jacobian with v_j v_k for s^2 (``_jacobian``); the Euler predictor's
   dtau/dz = E[v_j (Ghat Z Ghat)[c_j, r_j]], Z on block 0. One covariance (v_j = s for every
   j) is ``sigma_pencil`` term by term; K = 1 is ``shift.one_step``'s subordination (the tests
   compare both).
3. Two points. As ``sigma_pencil``, step 3: for F = w v^T the block upper triangular pencil
   [[L(z2)^T, -F], [0, L(z1)]] has the random part (E_j^T (+) E_j) (x) S_j, so step 2 applies
   to it with its own T^(j) = [[T2^T, T12], [0, T1]]: its Chat_j is [[Chat2_j^T, -gamma_j
   Chat2_j^T T12^(j) Chat1_j], [0, Chat1_j]] (the inverse of an upper triangular block
   matrix), and the inverse's upper right block on atom a ::

       Ghat12(a) = Ghat2(a)^T (F + sum_k gamma_k v_k(a) Chat2_k^T Y_k Chat1_k) Ghat1(a),
       Y_j = T12^(j)[r_j, r_j] = E[v_j Ghat12[r_j, r_j]],

   LINEAR in the Y_j at each pair of nodes: (I - J12) Y = E[v_j (Ghat2^T F Ghat1)[r_j, r_j]],
   J12 with the weights gamma_k v_j v_k. The traces then read Ghat12_00 with any metric:
   tau(Sigma_i G2^T F G1 _00) = E[v_i Ghat12_00] (client i's risk) and tau(G2^T F G1 _00) =
   E[Ghat12_00] (the distance) from the same Y (``two_point``'s ``lams``).
4. Edges. ``pencil_edges`` (steps 4, 5) with the density Im tau(W (x + i y - D)^-1) for the
   positive diagonal W = sum_j p_j Sigma_j (``s`` here: any positive weight finds the same
   support, and tau(W (x - D)^-1) decreases on the real axis outside it).
"""

from __future__ import annotations

import copy

import numpy as np

from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges as sigma_edges
from riskcalc.linear.dynamics.sigma.kept import Kept
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

#: tau at the end of the last contour paths solved (``metric_solve``) and the two-point
#: functions of the last pair of node sets (``metric_two_point``), keyed on the pencil without
#: its metric ``s`` and on the nodes: ``shift.kinf`` and ``shift.algorithm1.prox`` evaluate one
#: contour per client metric, and neither tau nor the pair solves read ``s``.
_SOLVED = Kept(2, 1 << 24)
_PAIRS = Kept(1, 1 << 26)
#: The most bytes of two-point values read with every metric at once (M + 1 metrics against
#: 2 per call): beyond, each metric solves its pairs again, as the memory estimates assume.
PAIRS_BYTES = 1 << 26


class ShiftPencil(SigmaPencil):
    """The pencil of the module docstring: ``SigmaPencil`` with client j's eigenvalue v_j(a)
    on the joint atoms in place of the shared s."""

    what = "rounds limit under covariate shift with local steps"

    def __init__(self, joint, gam, p, eta: float, K: int):
        V = np.asarray(joint.values, float)[np.asarray(joint.types)]          # (M, atoms)
        super().__init__(np.asarray(p, float) @ V / np.sum(p), joint.weights, gam, p, eta, K)
        self.V = V
        rowv = np.zeros((V.shape[1], self.n))
        for j in range(self.M):
            rowv[:, self.rows[j]] = V[j][:, None]
        self.rowv = rowv                          # v_j(a) on client j's rows r_j

    def ghat(self, z, C):
        """Ghat(a) (N, atoms, n, n) at nodes z (N,) given Chat (N, M, K, K) (step 2)."""
        E = self.chat_blocks(C)
        L = self.L0 + self.rowv[None, :, :, None] * E[:, None]
        L[:, :, self.zblocks, self.zblocks] += z[:, None, None]
        return np.linalg.inv(L)

    def own_weights(self):
        """h_a v_j(a) (M, atoms): client j's tau_j = E[v_j Ghat[c_j, r_j]] (step 2)."""
        return self.h * self.V

    def pair_weights(self):
        """h_a v_j(a) v_k(a) (M, M, atoms): the Jacobians' weights (steps 2, 3)."""
        return self.h * self.V[:, None, :] * self.V[None, :, :]

    def _jacobian(self, C, G):
        """I - J (N, M K^2, M K^2) of step 2 (row-major vec of tau): per (node, j, k) the sum
        over the atoms of gamma_k h v_j v_k (G[c_j, r_k] Chat_k)_xc (Chat_k G[c_k, r_j])_db, one
        batched BLAS product (an einsum's path search and loops cost more at these sizes)."""
        N, M, K, A = G.shape[0], self.M, self.K, G.shape[1]
        Gcr = self.blocks(G, self.cols, self.rows)           # [n, a, j, ., k, .] = G[c_j, r_k]
        P = np.matmul(Gcr.transpose(0, 4, 1, 2, 3, 5).reshape(N, M, A * M * K, K), C)
        P = P.reshape(N, M, A, M, K, K).transpose(0, 3, 1, 4, 5, 2)         # [n, j, k, x, c, a]
        P = (P * (self.pair_weights() * self.gam[:, None])[None, :, :, None, None, :]).reshape(
            N, M, M, K * K, A)
        Q = np.matmul(C[:, None], Gcr.reshape(N, A, M, K, M * K))            # [n, a, k, d, (j, b)]
        Q = Q.reshape(N, A, M, K, M, K).transpose(0, 4, 2, 1, 3, 5).reshape(N, M, M, A, K * K)
        J = np.matmul(P, Q).reshape(N, M, M, K, K, K, K).transpose(0, 1, 3, 6, 2, 4, 5)
        size = M * K * K
        return np.eye(size) - J.reshape(N, size, size)

    def two_point(self, one1, one2, couplings, lams):
        """H[f, l][u, v] = E[lams[l] Ghat12_ab] at every pair (u of one1, v of one2) for each
        coupling F = sum_m c_m w_m v_m^T (``couplings``: (c, W, V), W and V (m, n), or (c, W,
        V, (a, b)) with its own block, default (0, 0)) and each measure of ``lams`` (L, atoms;
        h v_i for client i's metric, h for tau; (len(couplings), L, atoms): coupling f's own):
        (len(couplings), L, N1, N2); one linear solve of step 3 per pair serves them all
        (every block of Ghat12 from the same Y_j, with Ghat[c_k, 0] -> Ghat2[c_k, a],
        Ghat1[c_k, b], as ``SigmaPencil.two_point``)."""
        blocks = [tuple(f[3]) if len(f) > 3 else (0, 0) for f in couplings]
        lams = np.asarray(lams)
        C1, G1 = one1
        C2, G2 = one2
        N1, N2, A = G1.shape[0], G2.shape[0], self.h.size
        M, K, size = self.M, self.K, self.M * self.K ** 2
        # Chat_k Ghat[c_k, r_j] at either node, held as the matrices over the atoms that the
        # Jacobian's products take per (j, k), all nodes of a side at once (one BLAS product
        # each, not einsum's loops): at z2 (j, k, (v, x, c), a) with the weights gamma_k h v_j
        # v_k, at z1 (j, k, a, (u, d, b)).
        Q1, Q2 = (np.matmul(C[:, None], self.blocks(G, self.cols, self.rows).reshape(
            G.shape[0], A, M, K, M * K)).reshape(G.shape[0], A, M, K, M, K) for C, G in
            ((C1, G1), (C2, G2)))
        Q2 = (Q2.transpose(4, 2, 0, 5, 3, 1) * (self.pair_weights() * self.gam[:, None])[
            :, :, None, None, None, :]).reshape(M, M, N2 * K * K, A)
        Q1 = np.ascontiguousarray(Q1.transpose(4, 2, 1, 0, 3, 5)).reshape(M, M, A, N1 * K * K)
        # Chat_k Ghat[c_k, b] at z1 (times v_k(a): step 3's sum), as (N1, k, d, a), and
        # gamma_k Chat_k Ghat[c_k, a] at z2, as (N2, k, c, a).
        q1 = {b: np.ascontiguousarray(np.einsum("nkcd,nakd->nkca", C1, G1[:, :, self.cols, b])
                                      * self.V[None, :, None, :])
              for b in {bl[1] for bl in blocks}}
        q2 = {a: np.einsum("nkcd,nakd->nkca", C2, G2[:, :, self.cols, a])
              * self.gam[None, :, None, None] for a in {bl[0] for bl in blocks}}
        hv = self.h * self.V                                                   # (M, atoms)
        facs = []
        for f, (ia, ib) in zip(couplings, blocks):
            c, W, Vc = f[:3]
            c = np.asarray(c, float)
            left = np.matmul(W, G2)                           # (N2, a, m, n): w^T Ghat2
            right = np.matmul(Vc, G1)                         # (N1, a, m, n): v^T Ghat1
            lr = np.einsum("ja,m,vamjx->vamjx", hv, c, left[:, :, :, self.rows])
            # The right-hand side's product over (a, m) per client j: (j, (v, x), (a, m)).
            lr = lr.transpose(3, 0, 4, 1, 2).reshape(M, N2 * K, -1)
            # Column b copied: a view would keep all of ``right`` alive.
            facs.append((lr, right[:, :, :, self.rows], c * left[:, :, :, ia],
                         right[:, :, :, ib].copy()))
        out = np.zeros((len(couplings), lams.shape[-2], N1, N2), complex)
        # Entries held per pair: the solve's (lhs, rhs), the gathered per-atom factors (Q1,
        # Q2 and the q's) and the couplings' values per atom, so that a chunk stays near 4e6
        # complex entries at any atom count.
        per_pair = (size * max(size, len(facs)) + self.h.size * (
            M * K * (2 * size + K * (len(q1) + len(q2))) + len(facs)))
        rows_u = max(1, int(4e6 / per_pair) // N2)
        diag = np.arange(size)
        groups = {bl: [f for f, b in enumerate(blocks) if b == bl] for bl in set(blocks)}
        lam = lams if lams.ndim == 3 else np.broadcast_to(lams, (len(facs),) + lams.shape)
        for u0 in range(0, N1, rows_u):
            u1 = min(N1, u0 + rows_u)
            nu, P = u1 - u0, (u1 - u0) * N2
            # The pairs (u, v) in row-major order: p = (u - u0) N2 + v; I - J built in one
            # pass, in the transposed layout the solve below takes.
            J = np.matmul(Q2, Q1[..., u0 * K * K:u1 * K * K]).reshape(M, M, N2, K, K, nu, K, K)
            lhs = np.empty((nu, N2, M, K, K, M, K, K), complex)
            np.negative(J.transpose(5, 2, 1, 4, 6, 0, 3, 7), out=lhs)
            lhs = lhs.reshape(P, size, size)
            lhs[:, diag, diag] += 1.0
            rhs = np.empty((len(facs), P, size), complex)
            for f, (lr, rr, _, _) in enumerate(facs):
                rt = rr[u0:u1].transpose(3, 1, 2, 0, 4).reshape(M, lr.shape[-1], nu * K)
                rhs[f] = np.matmul(lr, rt).reshape(M, N2, K, nu, K).transpose(
                    3, 1, 0, 2, 4).reshape(P, size)
            val = np.stack([np.einsum("vam,uam->uva", lb, rb[u0:u1]).reshape(P, A)
                            for _, _, lb, rb in facs])
            # sum_k gamma_k v_k(a) q2_k^T Y_k q1_k: the weights wq of Y's entries per atom, once
            # for the couplings of one block (a, b). Y enters only through wq Y, so each pair
            # solves the transposed system for wq (the atoms' columns of every block) instead
            # of Y for every coupling: wq (I - J)^-1 rhs = ((I - J)^-T wq^T)^T rhs, 2 blocks
            # columns against the couplings' 16 to 24 (measured on the 42 calls of the rounds
            # tests, one BLAS thread: the solves 5.7 s -> 3.3 s; the values equal to 5.4e-15).
            wq = np.stack([np.einsum("vkca,ukda->uvakcd", q2[ia], q1[ib][u0:u1]).reshape(
                P, A, size) for ia, ib in groups], axis=1).reshape(P, -1, size)
            Wt = np.swapaxes(np.linalg.solve(lhs, np.swapaxes(wq, 1, 2)), 1, 2)
            for bi, fs in enumerate(groups.values()):
                val[fs] += np.matmul(Wt[:, bi * A:(bi + 1) * A], rhs[fs].transpose(
                    1, 2, 0)).transpose(2, 0, 1)
            out[:, :, u0:u1] = np.matmul(lam, val.transpose(0, 2, 1)).reshape(
                len(facs), -1, nu, N2)
        return out


class MetricPencil(ShiftPencil):
    """A ``ShiftPencil`` whose traces read one client's metric ``s`` at a time (``shift.kinf``,
    ``shift.algorithm1.prox``: one contour per client metric): its contour paths and pair
    solves, which do not read ``s``, are shared across the metrics (``metric_solve``,
    ``metric_two_point``)."""

    def two_point(self, one1, one2, couplings, block=(0, 0)):
        """``SigmaPencil.two_point``'s (len(couplings), 2, N1, N2) under shift: E[h s Ghat12_ab]
        and E[h Ghat12_ab] (s the metric) through ``ShiftPencil.two_point``
        (``metric_two_point``: every client's metric at once)."""
        cps = [(f[0], f[1], f[2], tuple(f[3]) if len(f) > 3 else tuple(block))
               for f in couplings]
        return metric_two_point(self, one1, one2, cps)

    def solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """``_solve``; without ``tau0``, a path solved under another metric taken up at its end
        (``metric_solve``)."""
        if tau0 is None and not tolerant:
            return metric_solve(self, self._solve, nodes, path, check=check)
        return self._solve(nodes, path, check=check, tau0=tau0, tolerant=tolerant)

    def _solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """``SigmaPencil.solve`` (a subclass may start the path its own way)."""
        return super().solve(nodes, path, check=check, tau0=tau0, tolerant=tolerant)


def _metric_free_key(kept, pen, *arrays):
    """``kept``'s key of ``pen`` with its metric ``s`` left out, and of ``arrays`` (complex
    ones as their real and imaginary parts)."""
    plain = copy.copy(pen)
    plain.s = np.zeros(0)
    return kept.key(plain, *[x for a in arrays for x in (
        (a.real, a.imag) if np.iscomplexobj(a) else (a,))])


def metric_solve(pen, solve, nodes, path, check=True):
    """``solve(nodes, path, check=, tau0=)`` (``SigmaPencil.solve``'s) from no tau0, taken up
    at the path's last node from the tau kept when this pencil solved it under another metric:
    Newton's steps there stop at once and return the same tau, Chat and Ghat to the bit, and
    the branch check reads this metric."""
    key = _metric_free_key(_SOLVED, pen, *[nodes(t) for t in path])
    kept = _SOLVED.get(key)
    if kept is not None:
        return solve(nodes, path[-1:], check=check, tau0=kept.copy())
    out = solve(nodes, path, check=check, tau0=None)
    _SOLVED.put(key, out[0].copy())
    return out


def metric_two_point(pen, one1, one2, couplings):
    """``ShiftPencil.two_point`` (len(couplings), 2, N1, N2) read with the metric h s and with
    h, for a pencil whose s is one client's v_i: every client's metric read at once on the
    first call and kept (``forget_pairs`` drops them; at most ``PAIRS_BYTES`` of values);
    other metrics s directly."""
    i = np.flatnonzero(np.all(pen.V == pen.s, axis=1)) if pen.s.shape == pen.h.shape else []
    size = 16 * len(couplings) * (pen.M + 1) * one1[1].shape[0] * one2[1].shape[0]
    if len(i) == 0 or size > PAIRS_BYTES:
        return ShiftPencil.two_point(pen, one1, one2, couplings,
                                     np.stack([pen.h * pen.s, pen.h]))
    key = _metric_free_key(_PAIRS, pen, *one1, *one2,
                           *[np.asarray(x, float) for f in couplings for x in f])
    H = _PAIRS.get(key)
    if H is None:
        H = ShiftPencil.two_point(pen, one1, one2, couplings, np.vstack([pen.h * pen.V, pen.h]))
        _PAIRS.put(key, H)
    return H[:, [i[0], -1]]


def forget_pairs():
    """Drop the two-point functions ``metric_two_point`` keeps (after a curves' metrics)."""
    _PAIRS.clear()


def client_ends(V, h, gam):
    """(M, 2): [bottom, top] of each client's sample spectrum under its own covariance (from 0
    when gamma_j >= 1), one edge solve per distinct (covariance, gamma_j)."""
    kept = {}
    out = np.empty((len(gam), 2))
    for j, gj in enumerate(gam):
        key = (V[j].tobytes(), float(gj))
        if key not in kept:
            kept[key] = sigma_edges(V[j], h, np.array([gj]), np.array([1.0]))[:2]
        out[j] = kept[key]
    out[np.asarray(gam) >= 1.0, 0] = 0.0
    return out
