"""Paper 004's Algorithm 1 with K local steps under a shared spectrum, solved through its
pencil's client structure (derived here): ``sigma.algorithm1.curves``'s curves beyond the dense
route's M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``.

Pencil, fixed point and two-point function are ``sigma.algorithm1.curves``'s (steps 2-3 there); the
dense route inverts n = 1 + M (K + 2) blocks per atom and node and solves M K^2 unknowns with a
dense Jacobian. Here every operation costs O(M K^3), as ``sigma_chain`` (FedAvg), whose Newton
operator, GMRES and Newton paths (``chain_newton``: the predictor on each node's last Newton
eigenbasis, the arc continuation) are reused, and the Newton and two-point systems are solved
in the eigenbasis of the local steps (``basis``: O(M K^3) per node or pair to change basis,
O(M K^2) per GMRES product). What differs from FedAvg's chain:

1. Schur complement on block 0. Client j owns K + 2 blocks (local order: state s_j, copy c_j,
   chain (j,1..K)), and Ghat(s) = [[a, r^T], [c, D]]^-1 with a = z - 1 + g lam, D = diag(D_j)
   (D_j: the rows s_j, c_j and the chain with s Chat_j on (chain, (c_j, (j,1..K-1))) and z at
   s_j), c_j = eta lam on the chain rows, r_j = -g lam p_j at (j,K). With u_j = D_j^-1 c_j,
   wr_j = r_j^T D_j^-1 and sigma = a - sum_j wr_j c_j: Ghat_00 = 1 / sigma, Ghat_0j = -wr_j /
   sigma, Ghat_j0 = -u_j / sigma, Ghat_jk = delta_jk D_j^-1 + u_j wr_k^T / sigma (inverting
   D_j costs (K + 2)^3). Then Ghat[cols_j, rows_k] = delta_jk D~_j + alpha_j w_k^T / sigma
   (D~_j = D_j^-1[cols, rows], alpha_j = u_j[cols], w_j = wr_j[rows]): ``sigma_chain``'s form
   (its step 2), so Newton's operator is its ``_apply`` with the same factors.
2. z sits on block 0 and on every s_k, so the Euler predictor reads dGhat/dz = -Ghat[:, 0]
   Ghat[0, :] - sum_k Ghat[:, s_k] Ghat[s_k, :], on (cols_j, rows_j) ::

       D~[c,s] (D^-1[s,r] + beta_j w_j^T / sigma) + alpha_j (wr_j[s] D^-1[s,r]
       + (1 + sum_k wr_k[s] beta_k) w_j^T / sigma) / sigma,   beta_k = u_k[s_k]

   (client j's D^-1 and wr; the minus sign taken into dres).
3. Two-point function (``sigma.algorithm1.curves``, step 3: the transposed pencil), read for the
   original pencil: Ghat12 = Ghat2 (F + s sum_k gamma_k Chat2_k Y_k Chat1_k^T) Ghat1^T,
   Y_j = E_H[s Ghat12[cols_j, cols_j]]. Its operator is ``sigma_chain``'s with the left factors
   (A, a, e) = (D~ Chat, alpha / sigma, Chat^T w) at z2 and the right ones (A^T, e, a) at z1.
   F = sum_i c_i w_i v_i^T: the vectors au_j, cf_j live on client j's blocks only, so Ghat x_i
   = (y0_i, delta_ij D_j^-1 x_i - u_j y0_i), y0_i = -wr_i x_i / sigma: the right-hand side and
   the blocks (m, m) (m = 0 and every s_l) cost O(M K^2) per pair and atom; c_th (on 0 and
   every s_j) is one dense vector. The rows Ghat[m, rows_k] Chat_k are -e_k / sigma (m = 0)
   and delta_lk f_l + beta_l e_k / sigma (m = s_l, f_l = Chat_l^T D_l^-1[s, rows]). The
   noise coupling (au_j, cf_j) enters the double integrals with the same weight in z1 and z2,
   so it is replaced by its symmetric part (au cf^T + cf au^T) / 2: every coupling is then
   symmetric in (z1, z2) and, with H(conj z1, conj z2) = conj H(z1, z2), half the pairs are
   solved (``sigma_chain.two_point``'s scheme, with z = 1 joined to the upper nodes). The
   systems are solved in ``basis`` (GMRES on 2 atoms M K unknowns); those whose residual bound
   misses 1e-10 there are solved again here by GMRES with the product in X.
4. Nodes: the dense route's contour (``sigma.algorithm1.pencil._contour_nodes``), its upper half
   solved along the arc (``solve_arc``), z = 1 followed down from far above. Edges:
   ``sigma.algorithm1.pencil.spectrum_edges``'s windows and scans with this pencil.

Cost: ``algorithm1.cost.alg1_chain_seconds`` (fitted to measured process CPU, one BLAS
thread). Checks (``tests/test_rounds_sigma_alg1chain.py``): the dense pencil where both apply,
Sigma = I against ``algorithm1.curves``, T = inf against ``clients_limit("pfedme")``, the
literal algorithm at two d.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.algorithm1 import basis
from riskcalc.linear.dynamics.sigma.algorithm1.cost import _affordable, memory_check
from riskcalc.linear.dynamics.sigma.algorithm1.couplings import columns_in_order, solved_couplings
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import reflected
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import at_one, ring_mean
from riskcalc.linear.dynamics.sigma.chain_basis import _KRYLOV
from riskcalc.linear.dynamics.sigma.sigma_chain import _NEWTON_GMRES, _RESIDUAL, ChainPencil, gmres

_CHUNK_BYTES = 1.5e8


class Alg1Chain(ChainPencil):
    """``sigma.algorithm1.pencil.Alg1Pencil``'s pencil held as the factors of the module docstring
    (step 1); z = ``shift`` + ``sign`` Re x + i Im x for the solves' variable x; ``zcheck``:
    the branch check on Im tau(Sigma z G_00) (``sigma.algorithm1.curves``, step 4) for
    ``solve``'s ``check``."""

    what = "Algorithm 1 with local steps and a spectrum (chain route)"

    def __init__(self, atoms, weights, gam, p, lam, eta, K, g, shift=0.0, sign=1.0,
                 zcheck=False):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = float(eta), int(K), self.gam.size
        self.shift, self.sign, self.zcheck = float(shift), float(sign), zcheck
        K, M, nb = self.K, self.M, self.K + 2
        self.n, self.nb = 1 + M * nb, nb
        self.lr, self.lc = np.arange(2, K + 2), np.arange(1, K + 1)   # local rows, cols
        D0 = np.zeros((nb, nb))
        D0[0, K + 1] = -1.0
        D0[1, 0], D0[1, 1] = 1.0, -1.0
        D0[self.lr, self.lc] = 1.0 - eta * lam
        D0[self.lr, self.lr] = -1.0
        self.D0, self.a0 = D0, g * lam - 1.0
        self.col = np.zeros(nb)
        self.col[self.lr] = eta * lam
        self.rowp = -g * lam * self.p                                # r_j at local K + 1
        # The local block block 0's row reads (x_(j,K)), the one each client's model is read
        # at (the state s_j), and whether z sits on the latter: ``fedavg.own_chain``'s
        # pencil differs in these only.
        self.last, self.own, self.zlocal = K + 1, 0, True

    def ghat(self, x, C):
        """The factors of Ghat(s) at the nodes x (N,) (module docstring, step 1), the nodes' z
        and Chat (for ``basis``), and those of ``sigma_chain``'s Newton operator (A, a, e; b,
        d: its B only where ``_newton_x`` needs it)."""
        lr, lc = self.lr, self.lc
        z = self.shift + self.sign * x.real + 1j * x.imag
        D = np.broadcast_to(self.D0, (x.size, self.s.size, self.M) + self.D0.shape).astype(
            complex)
        # Client j's eigenvalue on each atom (s for all here; ``shift.algorithm1.chain``).
        D[..., lr[:, None], lc[None, :]] += self.client_atoms()[None, :, :, None, None] \
            * C[:, None]
        if self.zlocal:
            D[..., self.own, self.own] += z[:, None, None]
        Di = np.linalg.inv(D)
        u = Di @ self.col
        wr = self.rowp[:, None] * Di[..., self.last, :]
        sig = z[:, None] + self.a0 - np.einsum("namb,b->na", wr, self.col)
        Dm = Di[..., lc[:, None], lr[None, :]]
        alpha, w = u[..., lc], wr[..., lr]
        Cb = np.broadcast_to(C[:, None], Dm.shape)
        return {"z": z, "C": C, "Di": Di, "u": u, "wr": wr, "sigma": sig, "alpha": alpha,
                "w": w, "Dm": Dm, "A": Dm @ Cb, "a": alpha / sig[..., None, None],
                "e": np.einsum("nmlk,naml->namk", C, w),
                "b": np.einsum("nmkl,naml->namk", C, alpha),
                "d": w / sig[..., None, None],
                "f": np.einsum("nmlk,naml->namk", C, Di[..., self.own, lr])}

    def node_bytes(self):
        """Bytes held per node: ``ghat``'s Di, Dm and A per atom and client, Chat, and the
        eigenbasis of ``two_point`` (P and P^-1 at the node and at its conjugate)."""
        return (self.s.size * (self.nb ** 2 + 2 * self.K ** 2) + 4 * self.K ** 2) * self.M * 16.0

    def column0(self, G):
        """Ghat[:, 0] (N, atoms, n), ``Alg1Pencil``'s block order, as ``edges`` reads it."""
        s = G["sigma"][..., None]
        col = np.concatenate([1.0 / s, -G["u"].reshape(s.shape[:2] + (-1,)) / s], axis=-1)
        return reflected(self, col)

    def residual(self, z, tau):
        C = self.chat(tau)
        G = self.ghat(z, C)
        own = G["Dm"] + G["alpha"][..., :, None] * G["d"][..., None, :]
        return tau - self.own_mean(own), C, G

    def _dres(self, G):
        """dres/dz at the nodes of G (module docstring, step 2)."""
        Di, lr, lc = G["Di"], self.lr, self.lc
        sig = G["sigma"][..., None, None]                                # (N, a, 1, 1)
        beta, wrs = G["u"][..., 0], G["wr"][..., 0]                      # (N, a, M)
        tot = 1.0 + np.einsum("nam,nam->na", wrs, beta)[..., None, None]
        dsr = Di[..., 0, lr]                                             # D^-1[s, rows]
        row = dsr + beta[..., None] * G["w"] / sig
        left = Di[..., lc, 0][..., :, None] * row[..., None, :]
        row = (wrs[..., None] * dsr + tot * G["w"] / sig) / sig
        right = G["alpha"][..., :, None] * row[..., None, :]
        return self.own_mean(left + right)

    def _factors(self, C, G):
        """Newton's factors at the nodes of (C, G) (``chain_newton.ArcSolves.solve`` keeps
        them for the next stage's predictor): ``ghat``'s dict G (``_newton_x``'s) with
        ``basis.newton_factors`` (none where the eigenbasis fails, or where a subclass solves
        in its own ``_newton_basis``)."""
        fac = dict(G)
        if type(self)._newton_basis is Alg1Chain._newton_basis:
            try:
                fac.update(basis.newton_factors(self, G, C))
            except np.linalg.LinAlgError:       # a singular Chat or P: ``_newton`` in X
                pass
        return fac

    def _newton(self, G, rhs, tol=_NEWTON_GMRES):
        """(I - J)^-1 rhs at the nodes of ``_factors``' G, rhs (N, M, K, K), to GMRES's
        tolerance where it gets there (an inexact Newton step elsewhere: the residual test
        decides): in the eigenbasis of the local steps (``basis``, step 4), the nodes where
        that fails by GMRES in the original unknowns (``_newton_x``)."""
        try:
            out, ok = self._newton_basis(G, rhs, tol)
        except np.linalg.LinAlgError:       # a singular Chat or P in the batch
            out, ok = np.empty_like(rhs), np.zeros(rhs.shape[0], bool)
        if not ok.all():
            bad = np.flatnonzero(~ok)
            out[bad] = self._newton_x({k: v[bad] for k, v in G.items()}, rhs[bad], tol)
        return out

    def _newton_basis(self, G, rhs, tol):
        """(X, ok): ``basis.newton`` with G's factors (formed here if G lacks them; covariate
        shift's chain: its own, per client)."""
        return basis.newton(self, G if "Rinv" in G else basis.newton_factors(self, G, G["C"]),
                            rhs, tol)

    def _newton_x(self, G, rhs, tol):
        """``_newton`` by GMRES on I - J in the original unknowns."""
        # B = Chat D~ (``sigma_chain``'s right factor), formed here only: the eigenbasis
        # (``basis``) does not need it, and the nodes' factors are what fills the memory.
        B = G["C"][:, None] @ G["Dm"]
        L, R = (G["A"], G["a"], G["e"]), (B, G["b"], G["d"])
        shape = rhs.shape
        out = np.empty_like(rhs)
        # Chunks of nodes: the Krylov bases hold _KRYLOV + 1 vectors of M K^2 per node.
        chunk = max(1, int(_CHUNK_BYTES / (16.0 * rhs[0].size * (_KRYLOV + 4))))
        for c0 in range(0, shape[0], chunk):
            sl = slice(c0, c0 + chunk)

            def apply(x, idx):
                return self._apply([f[sl][idx] for f in L], [f[sl][idx] for f in R],
                                   x.reshape((-1,) + shape[1:])).reshape(x.shape)
            out[sl] = gmres(apply, rhs[sl].reshape(-1, rhs[0].size),
                            tol=tol)[0].reshape(rhs[sl].shape)
        return out

    # --- two points (module docstring, step 3) ---------------------------------------------
    def _vectors(self, G, X, full):
        """Ghat x at the nodes of G: ``full`` False: X (M, nb), x_i on client i's blocks (local
        order), or a pair (X, x0) with x0 (M,) on block 0 too, returns (P = (D_i^-1 x_i)[cols]
        (N, a, M, K), S = (D_i^-1 x_i)[s_i] (N, a, M), y0 (N, a, M)), Ghat x_i = (y0_i,
        delta_ij D_i^-1 x_i - u_j y0_i), y0_i = (x0_i - wr_i x_i) / sigma; True: X (n,),
        returns (Ghat x [cols_j] (N, a, M, K), Ghat x [s_j] (N, a, M), Ghat x [0] (N, a)).
        s_j: the local block ``own``."""
        Di, sig = G["Di"], G["sigma"]
        if full:
            xl = X[1:].reshape(self.M, self.nb)
            y0 = (X[0] - np.einsum("namk,mk->na", G["wr"], xl)) / sig
            Dx = np.einsum("namkl,ml->namk", Di, xl) - G["u"] * y0[..., None, None]
            return Dx[..., self.lc], Dx[..., self.own], y0
        X, x0 = X if isinstance(X, tuple) else (X, 0.0)
        Dx = np.einsum("namkl,ml->namk", Di, X)
        y0 = (x0 - np.einsum("namk,mk->nam", G["wr"], X)) / sig[..., None]
        return Dx[..., self.lc], Dx[..., self.own], y0

    @staticmethod
    def _terms(c, full, v2, v1, a2, a1, b2, b1, hs):
        """Right-hand side E_H[s Ghat2 F Ghat1^T [cols_j, cols_j]] (P, M, K, K) and the blocks
        (Ghat2 F Ghat1^T)_(m, m) (P, a, M + 1) of one term F = sum_i c_i w_i v_i^T (module
        docstring, step 3); v = ``_vectors``' output at the pairs, a = alpha, b = u[s]."""
        (P2, S2, y2), (P1, S1, y1) = v2, v1
        hs = hs[:, None, None]
        if full:
            rhs = c[0] * basis.outer_sum(P2, hs * P1)
            return rhs, c[0] * np.concatenate([(y2 * y1)[..., None], S2 * S1], axis=-1)
        cyy = np.einsum("m,pam,pam->pa", c, y2, y1)
        cy1, cy2 = c * y1, c * y2
        # (delta_ij P2_i - a2_j y2_i)(delta_ij P1_i - a1_j y1_i)^T summed over i: P2 (c P1 -
        # c y1 a1)^T + a2 (cyy a1 - c y2 P1)^T, one product.
        rhs = basis.outer_sum(np.concatenate([P2, a2], axis=1), np.concatenate(
            [hs * (c[:, None] * P1 - cy1[..., None] * a1),
             hs * (cyy[..., None, None] * a1 - cy2[..., None] * P1)], axis=1))
        own = c * (S2 * S1 - S2 * b1 * y1 - b2 * y2 * S1) + b2 * b1 * cyy[..., None]
        return rhs, np.concatenate([cyy[..., None], own], axis=-1)

    def two_point(self, one, couplings, chunk_bytes=_CHUNK_BYTES, columns=None):
        """H[f, lam, m][u, v] = E_H[lam(s) Ghat12(s)_(m, m)] for the nodes u of ``one`` (N,)
        and v of them and their conjugates (2 N), lam in (s, 1), m = 0 and every s_l (M + 1):
        shape (len(couplings), 2, M + 1, N, 2 N). ``couplings``: each a list of terms (c, W,
        V, full) (``_vectors``; W at v, V at u) whose sum F is symmetric (module docstring,
        step 3), so only the pairs (u, v) and (u, conj v) with v >= u are solved; with
        ``columns`` (indices among the 2 N), only the pairs (u, v), v in ``columns``, every u
        (F need not be symmetric), shape (len(couplings), 2, M + 1, N, len(columns))."""
        C, G = one
        N, M, K, nf = G["sigma"].shape[0], self.M, self.K, len(couplings)
        hs, gm = self.h * self.s, self.gam
        lam = np.stack([hs, self.h])
        # The pencil is real: at a conjugate node v >= N every factor is the conjugate of node
        # v - N's (``basis.conj_at``, read per chunk; W and V are real, so ``_vectors`` too):
        # nothing is held twice (the factors at the nodes are most of the route's memory).
        vecs = [[(np.asarray(c, float), full, self._vectors(G, W, full),
                  self._vectors(G, V, full)) for c, W, V, full in cp] for cp in couplings]
        b1 = G["u"][..., self.own]
        # The eigenbasis of the local steps (``basis``): GMRES on W, X = P_v W P_u^T.
        try:
            fac = basis.node_factors(self, G, C)
        except np.linalg.LinAlgError:       # a singular P: every system in X
            fac = None
        # Rows and columns in that basis per node (``basis.in_basis``: outputs read W).
        tvecs, ta, te, tf = basis.in_basis(fac, G, vecs)
        if columns is None:
            U_all = np.repeat(np.arange(N), 2 * N)
            V_all = np.tile(np.arange(2 * N), N)
            keep = (V_all % N) >= U_all
            U_all, V_all = U_all[keep], V_all[keep]
        else:
            U_all = np.repeat(np.arange(N), len(columns))
            V_all = np.tile(np.asarray(columns), N)
        # Each pair's column of the output (``columns``: its place among them).
        W_all = V_all if columns is None else np.tile(np.arange(len(columns)), N)
        out = np.zeros((nf, 2, M + 1, N, 2 * N if columns is None else len(columns)), complex)
        # Per pair as ``sigma_chain.two_point``'s (the reduced system's Krylov basis counted).
        per_pair = 16.0 * M * K * K * (self.s.size * 8 + nf * 46) \
            + 16.0 * nf * (_KRYLOV + 1) * 2 * self.s.size * M * K
        chunk = max(1, int(chunk_bytes / per_pair))
        for c0 in range(0, U_all.size, chunk):
            U, Vv, Wc = U_all[c0:c0 + chunk], V_all[c0:c0 + chunk], W_all[c0:c0 + chunk]
            P = U.size

            def at_v(x):
                return basis.conj_at(x, Vv, N)
            a1, a2 = G["alpha"][U], at_v(G["alpha"])
            rhs, Ct, base = [], [], []
            for cp, tcp in zip(vecs, tvecs):      # in X (for the bound) and in the basis
                r, ct, bs = 0.0, 0.0, 0.0
                for (c, full, v2, v1), (t2, t1) in zip(cp, tcp):
                    rt, bt = self._terms(c, full, [at_v(x) for x in v2], [x[U] for x in v1],
                                         a2, a1, at_v(b1), b1[U], hs)
                    r, bs = r + rt, bs + bt
                    ct = ct + self._terms(c, full, [at_v(x) for x in t2], [x[U] for x in t1],
                                          at_v(ta), ta[U], at_v(b1), b1[U], hs)[0]
                rhs.append(r)
                Ct.append(ct)
                base.append(bs)
            rhs = np.stack(rhs, axis=1).reshape(P * nf, M, K, K)
            Ct = np.stack(Ct, axis=1).reshape(P * nf, M, K, K)
            if fac is None:
                Y, unsure = np.zeros_like(rhs), np.arange(P * nf)
            else:
                Y, unsure = basis.solve_pairs(self.gam, self.h * self.s ** 2,
                                              basis.take(fac, Vv, N), basis.take(fac, U), rhs,
                                              nf, _RESIDUAL, Ct)
            if unsure.size:     # solved again in X (``basis``, step 3)
                # The factors in X at these systems' pairs only.
                up = unsure // nf
                Lp = [basis.conj_at(G[k], Vv[up], N) for k in ("A", "a", "e")]
                Rp = [G["A"][U[up]].swapaxes(-1, -2), G["e"][U[up]], G["a"][U[up]]]
                Yx, ok = gmres(lambda x, idx: self._apply(
                    [f[idx] for f in Lp], [f[idx] for f in Rp],
                    x.reshape(-1, M, K, K)).reshape(x.shape), rhs[unsure].reshape(unsure.size, -1))
                Y[unsure] = Yx.reshape(-1, M, K, K)          # X there (``basis.outputs``)
                if not ok.all():
                    raise SolverError(f"{self.what}: GMRES on the two-point system did not "
                                      "converge")
            Y = Y.reshape(P, nf, M, K, K)
            # The rows Ghat[m, rows_k] Chat_k: -e_k / sigma (m = 0), delta_lk f_l + beta_l e_k /
            # sigma (m = s_l), beta_l = u_l[s_l]; read in the basis (e, f there: ``in_basis``).
            bb1, bb2 = b1[U], at_v(b1)
            for f in range(nf):
                ee, ff, fe, ef = basis.outputs(G, te, tf, Y[:, f], U, Vv, N, unsure, nf, f)
                see = ee @ gm
                corr = np.concatenate([see[..., None], gm * (ff + bb1 * fe + bb2 * ef)
                                       + bb2 * bb1 * see[..., None]], axis=-1)
                val = base[f] + self.s[None, :, None] * corr               # (P, a, M + 1)
                out[f, :, :, U, Wc] = np.einsum("la,pam->plm", lam, val)
        if columns is None:
            iu, iv = np.tril_indices(N, -1)
            out[..., iu, iv] = out[..., iv, iu]
            out[..., iu, N + iv] = out[..., iv, N + iu].conj()
        return out


def chain_parts(gam, r, sigma, p, signal, lam, eta, K, g, spectrum, c, scans):
    """``sigma.algorithm1.curves._dense_parts`` through the chain pencil (module docstring) on the
    contour ``c`` (``algorithm1.contour.contour``): the two-point functions H (M + 1, 3, 2,
    N + 1, 2 N + 1) and the single-contour terms (M + 1, M, N + 1) at the upper nodes z (N,)
    and z = 1, and None (no dense solution; paper 004, ``004_98172ed3646eef14.txt``, eqs.
    10-11, K local steps under ``spectrum``).

    Raises
    ------
    ValueError
        Beyond MAX_SECONDS of estimated time or the memory budget (``budget``).
    """
    M, z, n = gam.size, c["z"], c["n"]
    atoms, hw = spectrum.atoms, spectrum.weights
    _affordable(M, K, atoms.size, n, c["t_max"], scans)
    pen = c["pencil"](atoms, hw, gam, p, lam, eta, K, g, zcheck=c["low"] < 0.0)
    c["memory"] = memory_check(M, K, atoms.size, n, n <= c["t_max"] + 24)
    C, G, couplings, au = solved_couplings(pen, c, gam, r, sigma, signal, eta, lam)
    s, h = pen.s, pen.h
    N = z.size
    # (3, 2, M + 1, N + 1, 2 N + 1) -> (M + 1, 3, 2, N + 1, 2 N + 1)
    H = columns_in_order(pen.two_point((C, G), couplings), N).transpose(2, 0, 1, 3, 4)
    P = H.shape[-2] - N
    if P > 1:       # the circle around z = 1 (pooled N < d): its mean there
        H = at_one(H, N, P)
    # tau(Sigma Y(au_i)) of each model at every node: (Ghat au_i)_m = y0_i (m = 0), delta_il
    # S_i - u_l[s_l] y0_i (m = s_l).
    _, S, y0 = pen._vectors(G, au, False)
    cross = np.concatenate([np.einsum("a,nai->in", h * s, y0)[None],
                            np.einsum("a,nal->ln", h * s, S)[:, None, :] * np.eye(M)[:, :, None]
                            - np.einsum("a,nal,nai->lin", h * s, G["u"][..., 0], y0)])
    if P > 1:
        cross = ring_mean(cross, N)
    return H, cross, None
