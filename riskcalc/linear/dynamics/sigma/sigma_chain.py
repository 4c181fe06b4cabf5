"""FedAvg's pencil with K local steps under a spectrum, solved through its chain structure
(derived here).

Pencil, fixed point and two-point system are those of ``sigma_pencil`` (derivation there):
Ghat(s) = (L0 + z e_0 e_0^T + s sum_j Chat_j)^-1 with Chat_j on (r_j, c_j), r_j = ((j,1)..(j,K)),
c_j = (0, (j,1)..(j,K-1)). The dense route costs (M K)^3 per atom and node for Ghat and
(M K^2)^3 for the Newton and two-point systems; here every operation costs O(M K^3), and the
Newton and two-point systems are solved in the eigenbasis of the local steps (``chain_basis``:
O(M K^3) per node or pair to change basis, then O(M K^2) per GMRES product on 2 atoms M K
unknowns).

1. Schur complement on block 0. With x_j = x[r_j] (K entries per client), Z the K x K down
   shift ((Z x)_k = x_(k-1), (Z x)_0 = 0) and e_0, e_K the first and last unit vectors, x[c_j] =
   e_0 x_0 + Z x_j, so the rows r_j read (I + s Chat_j)(e_0 x_0 + Z x_j) - x_j = y_j, i.e.
   B_j x_j + b_j x_0 = y_j with B_j = (I + s Chat_j) Z - I, b_j = (I + s Chat_j) e_0, and row 0
   reads (z - sum_j p_j) x_0 + sum_j p_j e_K^T x_j = y_0. Eliminating x_j = B_j^-1 (y_j - b_j
   x_0): with u_j = B_j^-1 b_j, w_j^T = p_j e_K^T B_j^-1, sigma = z - sum_j p_j (1 + e_K^T u_j)
   (a scalar per atom and node) ::

       Ghat_00 = 1 / sigma,  Ghat_0j = -w_j^T / sigma,  Ghat_j0 = -u_j / sigma,
       Ghat_jk = delta_jk B_j^-1 + u_j w_k^T / sigma,

   block diagonal plus rank one across clients. The blocks the fixed point reads are then
   Ghat[c_j, r_k] = e_0 Ghat_0k + Z Ghat_jk = delta_jk D_j + alpha_j w_k^T / sigma with D_j =
   Z B_j^-1, alpha_j = Z u_j - e_0, and Ghat[c_j, 0] = -alpha_j / sigma.
2. The Newton operator. ``sigma_pencil``'s Jacobian, dtau_j = sum_k gamma_k E_H[s^2
   (Ghat[c_j, r_k] Chat_k) dtau_k (Chat_k Ghat[c_k, r_j])], becomes with the blocks of step 1 ::

       (J X)_j = E_H[s^2 (gamma_j (A_j X_j B_j + A_j X_j b'_j d_j^T + a_j e_j^T X_j B_j)
                 + a_j d_j^T c)],   c = sum_k gamma_k e_k^T X_k b'_k,

   with A_j = D_j Chat_j, a_j = alpha_j / sigma, e_j = Chat_j^T w_j on the left and B_j =
   Chat_j D_j, b'_j = Chat_j alpha_j, d_j = w_j / sigma on the right: per client two K x K
   products per atom, and the cross-client coupling is the scalar c per atom. Newton's steps
   solve (I - J) dtau = -res by GMRES with this exact product (batched over nodes); the path
   (nodes followed down from far above them, Euler predictor dres_j/dz = E_H[s alpha_j w_j^T /
   sigma^2]) is ``sigma_pencil``'s. The predictor of a stage solves with the eigenbasis
   factors (``chain_basis``, step 5) of each node's last Newton step at the previous stage
   (a Jacobian within Newton's last correction of the solution's: the predictor, a starting
   point to 1e-3, is unchanged to that order), fresh ones only where no Newton step was
   taken there: one eigendecomposition per node and stage fewer (``chain_newton``; measured
   on a 64-node arc, M = 3, K = 20: 773 -> 533 node eigendecompositions, values within
   7e-16).
3. Two-point functions. ``sigma_pencil``'s linear system for Y_j = E_H[s Ghat12[r_j, r_j]]
   has the operator sum_k gamma_k E_H[s^2 Q2_kj^T Y_k Q1_kj], Q_kj = Chat_k Ghat[c_k, r_j] =
   delta_kj B_k + b'_k d_j^T (step 2's right factors), i.e. the form of step 2 with the left
   factors (B^T, d, b') at z2 and the right ones (B, b', d) at z1; its right-hand side and
   output read the rows W^T Ghat[:, r_j] = -W_0 w_j^T / sigma + W_j^T B_j^-1 + (sum_k W_k^T
   u_k) w_j^T / sigma, the column Ghat[:, 0] and q_k = Chat_k Ghat[c_k, 0] = -b'_k / sigma.
   Solved by GMRES for every pair of nodes, batched over pairs (in chunks by memory). With
   z2 running over the nodes and their conjugates, the values are symmetric: tau(Sigma G2 h
   G1) with h a function of S_j is its own transpose, so H(z1, z2) = H(z2, z1), and H(conj z1,
   conj z2) = conj H(z1, z2); ``symmetric`` solves the pairs (u, v), (u, conj v) with v >= u
   only (half), and the eigenbasis at conj u is the conjugate of that at u (one
   eigendecomposition per upper node for both sides, against three).

4. Contour nodes along the arc (``solve_arc``, ``chain_newton``). Every 32nd node of the
   ellipse's upper half is followed down from far above it (``sigma_pencil``'s path, 25
   stages: about 45 eigendecompositions per node against 3 along the arc); each other node
   starts from its neighbour's solution and the factors of its last Newton step (one Euler
   predictor step along the chord, then Newton). Every eighth node before: the arcs of the
   audit corner (M = 20, K = 50, rounds up to 200: 316 node solves) then cost 40 paths from
   above, 11 now. The solution is analytic in the upper half plane and the ellipse stays there, and
   neighbouring nodes are apart by at most about pi / 20 of their distance to the spectrum
   (0.45 of it at the ellipse's ends; ``fedavg._contour`` takes N >= 40 / t nodes, t the
   ellipse's parameter), so Newton's method starts close to the same branch; the branch check
   of ``solve`` still applies to every node. Measured (M = 3, K = 20, rounds up to 50): the
   whole curves within 7e-14 (3.6e-13 relative) of the path from above at every node, the node
   solves about 8 times cheaper.

GMRES (``chain_basis.gmres``) stops at a residual 1e-13 relative to the right-hand side
(restarted, with classical Gram-Schmidt twice). A two-point solution from the eigenbasis is
checked in the original system: by the bound of ``chain_basis`` (step 4) from its residual in
the eigenbasis, else by step 3's product in X; one that misses 1e-10 is solved again there
by GMRES, and one that still misses raises SolverError (Newton's steps may be inexact: its
residual test decides). The outputs q2^T X q1 are read as (S_v q2)^T W (S_u q1), without X.
Measured (M = 10, K = 50, 72 pairs, process CPU on a loaded machine): 0.0439 s per pair
before (the check in X for every system), 0.0367 s with the bound. Checks
(``tests/test_rounds_sigma_kbig.py``): against the dense ``SigmaPencil`` (3.1e-12 at the
nodes, 1.3e-14 for whole curves), Sigma = I with one client against quadrature of the
Marchenko-Pastur law at K = 20 and 50 (1.5e-14), and the literal iteration at K = 12.
The route's estimated cost (its refusal before it solves): ``chain_cost``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.chain_basis import (_KRYLOV, apply_xi, batch_view,
                                                         bilinear_sum, compress, eigen_factors,
                                                         flat, gmres, lift, pair_factors,
                                                         rows_product, side_factors, solve_xi,
                                                         unflat, unsure_systems)
from riskcalc.linear.dynamics.sigma.chain_newton import _NEWTON_GMRES, ArcSolves
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

#: Bytes of the pair factors and Krylov bases held at once by ``two_point``.
_CHUNK_BYTES = 1.5e8
#: Largest residual of a two-point system (relative to its right-hand side) taken from the
#: eigenbasis solve (``chain_basis``, step 4); beyond, GMRES in the original coordinates.
_RESIDUAL = 1e-10


class ChainPencil(ArcSolves, SigmaPencil):
    """``SigmaPencil``'s pencil (same rows, columns, Chat) with Ghat held as the factors of the
    module docstring (step 1) and the Newton and two-point systems solved by GMRES (the
    Newton paths: ``chain_newton.ArcSolves``)."""

    #: ``pencil_edges.edges``: 2 points per bracket (each refinement about 3 times cheaper per
    #: digit than 10 at these sizes, where the work is per point; measured M = 3, K = 20: 31.6 s
    #: against 21.2 s, edges within 1.1e-13).
    bisect = 2
    #: z = x (``chain_newton.ArcSolves.solve``'s variable x), its branch check on Im G_00.
    shift, sign, zcheck = 0.0, 1.0, False

    def __init__(self, atoms, weights, gam, p, eta: float, K: int):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = float(eta), int(K), self.gam.size
        self.n = 1 + self.M * self.K
        self.rows = 1 + np.arange(self.M * self.K).reshape(self.M, self.K)
        self.cols = np.concatenate([np.zeros((self.M, 1), int), self.rows[:, :-1]], axis=1)

    def ghat(self, z, C):
        """The factors of Ghat(s) at nodes z (N,) (module docstring, step 1): a dict of Binv
        (N, atoms, M, K, K), u, w, alpha (N, atoms, M, K), sigma (N, atoms) and the vectors of
        the operator of step 2 (its matrices: ``right_factor``, and ``chain_basis``)."""
        K = self.K
        X = np.eye(K) + self.client_atoms()[None, :, :, None, None] * C[:, None]
        B = -np.broadcast_to(np.eye(K), X.shape).astype(complex)
        B[..., :-1] += X[..., 1:]                                  # (I + s Chat) Z - I
        Bi = np.linalg.inv(B)
        u = np.einsum("namkl,naml->namk", Bi, X[..., 0])
        w = self.p[:, None] * Bi[..., -1, :]
        sig = z[:, None] - self.p.sum() - np.einsum("m,nam->na", self.p, u[..., -1])
        alpha = np.concatenate([-np.ones(u.shape[:-1] + (1,)), u[..., :-1]], axis=-1)
        return {"Binv": Bi, "u": u, "w": w, "sigma": sig, "alpha": alpha,
                "a": alpha / sig[..., None, None],
                "e": np.einsum("nmlk,naml->namk", C, w),
                "b": np.einsum("nmkl,naml->namk", C, alpha),
                "d": w / sig[..., None, None]}

    def client_atoms(self):
        """Each client's eigenvalue on each atom, (atoms, M): s for every client here (a pencil
        with per-client eigenvalues, ``shift.chain``: client j's own)."""
        return np.broadcast_to(self.s[:, None], (self.s.size, self.M))

    def right_factor(self, C, G):
        """B_j = Chat_j D_j, D_j = Z B_j^-1 (module docstring, step 2): (N, atoms, M, K, K)."""
        Bi = G["Binv"]
        D = np.concatenate([np.zeros(Bi.shape[:-2] + (1, self.K)), Bi[..., :-1, :]], axis=-2)
        return C[:, None] @ D

    def node_bytes(self):
        """Bytes of the factors held per node: Binv and, while ``two_point`` runs, B (two K x K
        per client and atom; Ghat's A and B were held at every node before: three)."""
        return self.s.size * 2 * self.M * self.K ** 2 * 16.0

    def column0(self, G):
        """Ghat[:, 0] (N, atoms, n)."""
        s = G["sigma"][..., None]
        return np.concatenate([1.0 / s, -G["u"].reshape(s.shape[:2] + (-1,)) / s], axis=-1)

    def conj_join(self, one):
        C, G = one
        return np.concatenate([C, C.conj()]), {k: np.concatenate([v, v.conj()])
                                               for k, v in G.items()}

    def residual(self, z, tau):
        C = self.chat(tau)
        G = self.ghat(z, C)
        own = G["Binv"] * 0.0
        own[..., 1:, :] = G["Binv"][..., :-1, :]
        own = own + G["alpha"][..., :, None] * G["d"][..., None, :]
        return tau - self.own_mean(own), C, G

    def _dres(self, G):
        """dres/dz at the nodes of G (module docstring, step 2: E_H[s alpha_j w_j^T /
        sigma^2])."""
        return np.einsum("ma,namk,naml->nmkl", self.own_weights(), G["alpha"],
                         G["d"] / G["sigma"][..., None, None])

    def _apply(self, L, R, X):
        """X - J X (module docstring, step 2) for left factors L = (A, a, e) and right ones
        R = (B, b, d), each (P, atoms, M, ...), X (P, M, K, K)."""
        A, a, e = L
        B, b, d = R
        AX = A @ X[:, None]
        eX = e[..., None, :] @ X[:, None]                              # (P, atoms, M, 1, K)
        inner = AX @ B + (AX @ b[..., None]) * d[..., None, :] + a[..., :, None] * (eX @ B)
        c = (eX @ b[..., None])[..., 0, 0] @ self.gam
        out = self.gam[:, None, None] * inner + a[..., :, None] * d[..., None, :] * c[..., None,
                                                                                       None, None]
        return X - np.einsum("a,pamkl->pmkl", self.h * self.s ** 2, out)

    def _factors(self, C, G):
        """The eigenbasis factors of (I - J) at the nodes of (C, G) (``chain_basis``, step 5):
        a dict of arrays with the nodes first."""
        lam, S, Sinv = eigen_factors(C, self.K)
        D = lam[:, None] / (1.0 - self.s[None, :, None, None] * lam[:, None])
        V = np.linalg.solve(C, Sinv)                               # Chat^-1 E P
        SC = S @ C                                                 # V^-1
        left = (D, np.einsum("nmkl,naml->namk", SC, G["a"]),
                np.einsum("nmlk,naml->namk", V, G["e"]))
        right = (D, np.einsum("nmkl,naml->namk", S, G["b"]),
                 np.einsum("nmlk,naml->namk", Sinv, G["d"]))
        return dict(pair_factors(self.gam, self.h * self.s ** 2, left, right), V=V, S=S, SC=SC,
                    Sinv=Sinv)

    def _newton(self, fac, rhs, tol=_NEWTON_GMRES):
        """(I - J)^-1 rhs, rhs (N, M, K, K), J of ``_factors`` ``fac`` at the same N nodes, to
        GMRES's tolerance where it gets there (an inexact Newton step elsewhere: the residual
        test decides), solved in the eigenbasis (``chain_basis``, step 5: X = V W S)."""
        rhs = fac["SC"] @ rhs @ fac["Sinv"]
        view = batch_view(fac, rhs.shape[0])

        def apply(x, idx):
            return apply_xi(self.gam, view(idx), x)
        xi, _ = gmres(apply, flat(*compress(fac, rhs / fac["Dg"])), tol=tol)
        return fac["V"] @ ((rhs - lift(self.gam, fac, *unflat(fac, xi))) / fac["Dg"]) @ fac["S"]

    def _rows(self, G, W):
        """(W^T Ghat[:, r_j], W^T Ghat[:, 0]) for rows W (m, n): (N, atoms, m, M, K), (N,
        atoms, m) (module docstring, step 3)."""
        Wj = W[:, self.rows]                                       # (m, M, K)
        Wu = np.einsum("mjk,najk->nam", Wj, G["u"])
        s = G["sigma"][..., None]
        rows = np.swapaxes(Wj.transpose(1, 0, 2) @ G["Binv"], 2, 3) + ((Wu - W[:, 0]) / s)[
            ..., None, None] * G["w"][:, :, None]
        return rows, (W[:, 0] - Wu) / s

    def _check_in_x(self, idx, Y, facs, one1, one2, Sv, Su, U, Vv, sysp, lam, out):
        """``two_point``'s systems ``idx`` (of the chunk's pairs U, Vv, systems sysp) whose
        residual bound missed: X = S_v^T W S_u checked in the original system, and solved
        again there by GMRES where its residual misses _RESIDUAL (their outputs rewritten).
        The rows and the right factors in X are formed here, at these systems' nodes only
        (held at every node they were most of ``two_point``'s memory at many clients)."""
        M, K, nf = self.M, self.K, len(facs)
        X = Sv[Vv][sysp][idx].swapaxes(-1, -2) @ Y[idx] @ Su[U][sysp][idx]
        X = X.reshape(idx.size, -1)
        pu, fu = U[sysp[idx]], idx % nf
        pv = Vv[sysp[idx]]
        (C1, G1), (C2, G2) = one1, one2
        G1, G2 = ({k: v[p] for k, v in G.items()} for G, p in ((G1, pu), (G2, pv)))
        hs = self.h * self.s
        rhs_x = np.empty((idx.size, M, K, K), complex)
        for f, (c, W, V) in enumerate(fc[:3] for fc in facs):
            sel = np.flatnonzero(fu == f)
            if sel.size:
                lr = self._rows({k: v[sel] for k, v in G2.items()}, W)[0]
                rr = self._rows({k: v[sel] for k, v in G1.items()}, V)[0]
                rhs_x[sel] = np.einsum("a,m,pamjx,pamjy->pjxy", hs, c, lr, rr, optimize=True)
        rhs_x = rhs_x.reshape(idx.size, -1)
        Lp = (self.right_factor(C2[pv], G2).swapaxes(-1, -2), G2["d"], G2["b"])
        Rp = (self.right_factor(C1[pu], G1), G1["b"], G1["d"])

        def apply_x(x, i):
            return self._apply([a[i] for a in Lp], [a[i] for a in Rp],
                               x.reshape(-1, M, K, K)).reshape(x.shape)
        every = np.arange(idx.size)
        bn = np.linalg.norm(rhs_x, axis=1)
        bad = np.flatnonzero(np.linalg.norm(rhs_x - apply_x(X, every), axis=1) > _RESIDUAL * bn)
        if bad.size == 0:
            return
        X[bad], ok = gmres(lambda x, i: apply_x(x, bad[i]), rhs_x[bad])
        if not ok.all():
            raise SolverError("rounds limit with a spectrum and local steps: GMRES on "
                              "the chain pencil's two-point system did not converge")
        X = X.reshape(-1, M, K, K)
        q2 = Lp[2] / G2["sigma"][..., None, None]              # -q_k at z2, (idx, a, M, K)
        q1 = Rp[1] / G1["sigma"][..., None, None]
        for b in bad:
            u, v, f = pu[b], pv[b], fu[b]
            base = np.einsum("am,am->a", facs[f][5][v], facs[f][6][u])
            corr = np.einsum("m,amk,mkl,aml->a", self.gam, q2[b], X[b], q1[b])
            out[f, :, u, v] = (base + self.s * corr) @ lam.T

    def two_point(self, one1, one2, couplings, block=(0, 0), symmetric=False):
        """``SigmaPencil.two_point`` for block (0, 0) (module docstring, step 3): shape
        (len(couplings), 2, N1, N2). ``symmetric``: ``one2`` is ``conj_join(one1)`` and every
        coupling gives a trace symmetric in (z1, z2) (tau(Sigma G2 h G1) with h a function of
        S_j: transpose it), so with H(conj z1, conj z2) = conj H(z1, z2) only the pairs (u, v)
        and (u, conj v) with v >= u are solved (half of them)."""
        if any(tuple(f[3]) != (0, 0) for f in couplings if len(f) > 3) or tuple(block) != (0, 0):
            raise ValueError("the chain pencil reads block (0, 0) of the two-point functions only")
        (C1, G1), (C2, G2) = one1, one2
        N1, N2 = G1["sigma"].shape[0], G2["sigma"].shape[0]
        M, K, nf = self.M, self.K, len(couplings)
        hs, atoms = self.h * self.s, self.s.size
        lam = np.stack([hs, self.h])
        w2 = self.h * self.s ** 2
        # The eigenbasis of the local steps (``chain_basis``): GMRES on W, X = S_v^T W S_u.
        # With ``symmetric`` the nodes v are the nodes u and their conjugates: one
        # eigendecomposition per node u serves both sides (conjugated at conj u).
        eig = eigen_factors(C1, K) if symmetric else None
        Du, beu, deu, SuT, Su = side_factors(G1, C1, self.s, left=False, eig=eig)
        if symmetric:
            Dv, alv, epv, SvT, Sv = (np.concatenate([x, x.conj()]) for x in side_factors(
                G1, C1, self.s, left=True, eig=eig))
        else:
            Dv, alv, epv, SvT, Sv = side_factors(G2, C2, self.s, left=True)
        facs = []
        for c, W, V in (f[:3] for f in couplings):
            c, W, V = (np.asarray(x, float) for x in (c, W, V))
            lr, l0 = self._rows(G2, W)
            rr, r0 = self._rows(G1, V)
            # The rows in the eigenbasis only (``_check_in_x`` forms them in X where needed).
            facs.append((c, W, V, np.einsum("vjxy,vamjy->vamjx", SvT,
                                            np.einsum("a,m,vamjx->vamjx", hs, c, lr)),
                         np.einsum("ujxy,uamjy->uamjx", SuT, rr), c * l0, r0))
            del lr, rr
        # The outputs q2^T X q1 = (S_v q2)^T W (S_u q1), q = -Chat G[c, 0] = b' / sigma; the
        # largest and smallest singular values of S per node and client (the residual bound).
        Sq2 = np.einsum("nmkl,naml->namk", Sv, G2["b"] / G2["sigma"][..., None, None])
        Sq1 = np.einsum("nmkl,naml->namk", Su, G1["b"] / G1["sigma"][..., None, None])
        sv_u = np.linalg.svd(Su, compute_uv=False)
        sv_v = np.concatenate([sv_u, sv_u]) if symmetric else np.linalg.svd(Sv, compute_uv=False)
        sv_v, sn_v, sv_u, sn_u = sv_v[..., 0], sv_v[..., -1], sv_u[..., 0], sv_u[..., -1]
        out = np.zeros((nf, 2, N1, N2), complex)
        # Per pair: its systems' arrays in the basis (about twelve M K^2 each), the rows at both
        # nodes and the Krylov basis of the reduced system (2 atoms M K unknowns), in half the
        # chunk's bytes; the systems solved again in X (``_check_in_x``: their Krylov basis and
        # factors) in chunks of the other half (the chunk ``memory`` counts: one in X before).
        per_pair = 32.0 * nf * (12 * M * K * K + 2 * atoms * M * M * K
                                + (_KRYLOV + 11) * 2 * atoms * M * K)
        in_x = max(1, int(_CHUNK_BYTES / (32.0 * M * K * K * (_KRYLOV + 8 + 6 * atoms))))
        U_all = np.repeat(np.arange(N1), N2)
        V_all = np.tile(np.arange(N2), N1)
        if symmetric:
            keep = (V_all % N1) >= U_all
            U_all, V_all = U_all[keep], V_all[keep]
        chunk = max(1, int(_CHUNK_BYTES / per_pair))
        for c0 in range(0, U_all.size, chunk):
            U, Vv = U_all[c0:c0 + chunk], V_all[c0:c0 + chunk]
            P = U.size
            rhs = np.stack([rows_product(lt[Vv], rt[U]) for _, _, _, lt, rt, _, _ in facs],
                           axis=1).reshape(P * nf, M, K, K)
            sysp = np.repeat(np.arange(P), nf)          # the pair of each system
            F = pair_factors(self.gam, w2, [a[Vv][sysp] for a in (Dv, alv, epv)],
                             [a[U][sysp] for a in (Du, beu, deu)])
            xi = solve_xi(self.gam, F, rhs / F["Dg"])
            Y = (rhs - lift(self.gam, F, *unflat(F, xi))) / F["Dg"]
            # The residual of X = S_v^T W S_u in the original system (``chain_basis``, step
            # 4) is S_v^T R_W S_u, R_W W's residual (computed, with its rounding): bounded by
            # the singular values of S, or formed where the bound misses (``unsure_systems``),
            # so those below _RESIDUAL need no product in X; the others are checked there, and
            # those that miss _RESIDUAL are solved again in X (the product of step 3).
            Rw = rhs - F["Dg"] * Y - lift(self.gam, F, *compress(F, Y))
            unsure = unsure_systems(Rw, rhs, (sv_v, sn_v, Sv, Vv[sysp]), (sv_u, sn_u, Su,
                                                                        U[sysp]), _RESIDUAL)
            Y = Y.reshape(P, nf, M, K, K)
            for f, (_, _, _, _, _, lb, rb) in enumerate(facs):
                base = np.einsum("pam,pam->pa", lb[Vv], rb[U])
                corr = bilinear_sum(self.gam, Sq2[Vv], Y[:, f], Sq1[U])
                out[f, :, U, Vv] = (base + self.s * corr) @ lam.T
            for i0 in range(0, unsure.size, in_x):
                self._check_in_x(unsure[i0:i0 + in_x], Y.reshape(P * nf, M, K, K), facs, one1,
                                 one2, Sv, Su, U, Vv, sysp, lam, out)
        if symmetric:
            iu, iv = np.tril_indices(N1, -1)
            out[..., iu, iv] = out[..., iv, iu]
            out[..., iu, N1 + iv] = out[..., iv, N1 + iu].conj()
        return out
