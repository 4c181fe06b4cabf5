"""Paper 004's Algorithm 1 with K warm-started local steps under COVARIATE SHIFT, solved through
its pencil's client structure (derived here): ``shift.algorithm1.curves``'s curves beyond the
dense route's M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``.

``sigma.algorithm1.chain``'s derivation (paper ``004_98172ed3646eef14.txt``, eqs. 10-11) with
client j's eigenvalue v_j(a) on the joint atoms in place of the shared s, as ``shift.chain``
does for FedAvg's chain (``shift.algorithm1.pencil``, step 2: v_j scales client j's rows):

1. Schur complement on block 0: D_j(a) = D0 + v_j(a) Chat_j on (chain, (c_j, (j,1..K-1)))
   (``client_atoms``); the rest of step 1 (u_j, wr_j, sigma, alpha_j, w_j) is unchanged, and
   tau_j = E[v_j Ghat[c_j, r_j]] (``own_weights``), the predictor's dres/dz weighted the same.
2. Newton's operator: ``shift.chain``'s (step 2 there: the dense Jacobian's weights h v_j v_k
   split as gamma_j v_j^2 on client j's own terms and v_j gamma_k v_k across clients) with
   Algorithm 1's factors (A, a, e) and (B, b, d) (``ShiftChain._apply``). Solved in the
   eigenbasis of ``sigma.algorithm1.basis`` (its step 4): N = Q Chat = P Lam P^-1 does not
   depend on the atom, so client j's Delta_j(a) = Lam / (1 + v_j(a) Lam) and the reduced
   system is ``shift.chain``'s (its step 3: h v_j^2 gamma_j on the diagonal, h v_j and
   gamma_k v_k across clients); a node where that fails is solved by GMRES in X
   (``Alg1Chain._newton_x``).
3. Two points (``sigma.algorithm1.chain``, step 3, with ``shift.algorithm1.pencil``, step 3):
   Ghat12 = Ghat2 (F + sum_k gamma_k v_k Chat2_k Y_k Chat1_k^T) Ghat1^T, Y_j = E[v_j
   Ghat12[cols_j, cols_j]]: the right-hand side's client-j block weighted h v_j (P1 and alpha1
   scaled by it before ``Alg1Chain._terms``, whose terms are linear in them), the operator of
   step 2, and the outputs' corrections at the block (m, m): sum_k gamma_k v_k ee_k (m = 0) and
   gamma_l v_l (ff_l + b1_l fe_l + b2_l ef_l) + b2_l b1_l sum_k gamma_k v_k ee_k (m = s_l),
   each read with every client's metric h v_i and with h (``lams``). The systems are solved by
   GMRES in X (``ShiftChain._apply``), each checked by GMRES's residual (1e-13 relative; a
   system that misses it raises).
4. Nodes and edges: ``sigma.algorithm1.chain``, step 4, with this pencil (the edges' windows
   from each client's own sample spectrum, ``client_ends``, as the dense shift route).

Cost: ``shift.algorithm1.cost``. Checks (``tests/test_rounds_shift_alg1_chain.py``): the dense
shift pencil where both apply, equal covariances against ``sigma.algorithm1.chain``, the literal
algorithm simulated on an anti-aligned federation.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.shift.chain import ShiftChain, _apply_xi, _lift, _pairs
from riskcalc.linear.dynamics.sigma.algorithm1 import basis
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
from riskcalc.linear.dynamics.sigma.algorithm1.couplings import columns_in_order, solved_couplings
from riskcalc.linear.dynamics.sigma.chain_basis import (_KRYLOV, batch_view, compress, flat,
                                                         gmres, unflat)

_CHUNK_BYTES = 1.5e8


class ShiftAlg1Chain(Alg1Chain):
    """``Alg1Chain`` with client j's eigenvalue v_j(a) (``V`` (M, atoms)) on its rows (module
    docstring); ``atoms`` the weights' positive mean sum_j p_j v_j / sum_j p_j (the edges'
    density and the branch check, as ``ShiftAlg1Pencil``), the other arguments ``Alg1Chain``'s."""

    what = "Algorithm 1 with local steps under covariate shift (chain route)"

    def __init__(self, V, atoms, weights, gam, p, lam, eta, K, g, shift=0.0, sign=1.0,
                 zcheck=False):
        super().__init__(atoms, weights, gam, p, lam, eta, K, g, shift=shift, sign=sign,
                         zcheck=zcheck)
        self.V = np.asarray(V, float)

    client_atoms = ShiftChain.client_atoms
    own_weights = ShiftChain.own_weights
    _apply = ShiftChain._apply

    def _newton_basis(self, G, rhs, tol):
        """(X, ok): Newton's systems (I - J) X = rhs (N, M, K, K) at the nodes of G in the
        eigenbasis of the local steps (module docstring, step 2; ``Alg1Chain._newton`` solves
        the nodes where this fails in X): ``sigma.algorithm1.basis.newton`` with client j's
        v_j(a) in Delta_j(a) = Lam / (1 + v_j(a) Lam) and ``shift.chain``'s per-client reduced
        system (its step 3)."""
        # N = Q Chat = P Lam P^-1 from the s-free part of the pencil (basis, step 1: s = 0).
        P, Pinv, lam = basis.eigenbasis(SimpleNamespace(**{**vars(self), "s": np.zeros(1)}),
                                        G, G["C"])
        D = lam / (1.0 + self.V.T[None, :, :, None] * lam)
        R = G["C"] @ P
        Rinv = np.linalg.inv(R)
        F = _pairs(self.gam, self.h, self.V,
                   (D, -np.einsum("nmkl,naml->namk", Pinv, G["a"]),
                    np.einsum("nmlk,naml->namk", P, G["e"])),
                   (D, np.einsum("nmkl,naml->namk", Rinv, G["b"]),
                    -np.einsum("nmlk,naml->namk", R, G["d"])))
        Ct = Pinv @ rhs @ R
        N = rhs.shape[0]

        def apply(x, idx):
            return _apply_xi(F if idx.size == N else {k: f[idx] if f.shape[0] == N else f
                                                      for k, f in F.items()}, x)
        xi, ok = gmres(apply, flat(*compress(F, Ct / F["Dg"])), tol=tol)
        X = P @ ((Ct - _lift(F, *unflat(F, xi))) / F["Dg"]) @ Rinv
        return X, ok & np.all(np.isfinite(X), axis=(1, 2, 3))

    def two_point(self, one, couplings, lams, columns=None, diagonal=False):
        """H[f, l, m][u, v] = E[lams[l] Ghat12_(m, m)] for the nodes u of ``one`` (N,) and v of
        them and their conjugates (2 N), m = 0 and every s_l (M + 1), each measure of ``lams``
        (L, atoms): shape (len(couplings), L, M + 1, N, 2 N); ``couplings`` and ``columns`` as
        ``Alg1Chain.two_point``'s (each F symmetric: the pairs v >= u solved; module docstring,
        step 3; with ``columns``, the pairs (u, v), v in ``columns``, last axis len(columns)).
        ``diagonal`` (L = M): only H[f, l, l + 1], shape (len(couplings), M, N, 2 N): client
        l's block in its own measure, what the own models use (``shift.own_chain``); the full
        array held M + 1 times more (300 clients, 56 nodes: 6.4 GB, beyond the memory estimate
        ``sigma.memory.own_chain_count``, which counts the diagonal)."""
        C, G = one
        N, M, K, nf = G["sigma"].shape[0], self.M, self.K, len(couplings)
        atoms = self.s.size
        wv = (self.h * self.V).T[:, :, None]                  # h v_j(a): (atoms, M, 1)
        gv = self.gam[:, None] * self.V                       # gamma_k v_k(a): (M, atoms)
        ones = np.ones(atoms)
        lams = np.asarray(lams, float)
        vecs = [[(np.asarray(c, float), full, self._vectors(G, W, full),
                  self._vectors(G, Vc, full)) for c, W, Vc, full in cp] for cp in couplings]
        b1 = G["u"][..., self.own]
        e, fr = G["e"] / G["sigma"][..., None, None], G["f"]
        U_all, V_all, W_all = _pairs_asked(N, columns)
        width = 2 * N if columns is None else len(columns)
        out = np.zeros((nf, M, N, width) if diagonal else (nf, lams.shape[0], M + 1, N, width),
                       complex)
        # Per pair: the systems' factors in X (three K x K per atom and client on either side)
        # and GMRES's Krylov basis.
        per_pair = 16.0 * nf * M * K * K * (6 * atoms + _KRYLOV + 6)
        chunk = max(1, int(_CHUNK_BYTES / per_pair))
        for c0 in range(0, U_all.size, chunk):
            U, Vv, Wc = U_all[c0:c0 + chunk], V_all[c0:c0 + chunk], W_all[c0:c0 + chunk]
            P = U.size

            def at_v(x):
                return basis.conj_at(x, Vv, N)
            a1, a2 = G["alpha"][U], at_v(G["alpha"])
            rhs, base = [], []
            for cp in vecs:
                r, bs = 0.0, 0.0
                for c, full, v2, v1 in cp:
                    P1, S1, y1 = (x[U] for x in v1)
                    rt, bt = self._terms(c, full, [at_v(x) for x in v2], (wv * P1, S1, y1), a2,
                                         wv * a1, at_v(b1), b1[U], ones)
                    r, bs = r + rt, bs + bt
                rhs.append(r)
                base.append(bs)
            rhs = np.stack(rhs, axis=1).reshape(P * nf, M, K, K)
            sysp = np.repeat(np.arange(P), nf)
            Lp = [basis.conj_at(G[k], Vv[sysp], N) for k in ("A", "a", "e")]
            Rp = [G["A"][U[sysp]].swapaxes(-1, -2), G["e"][U[sysp]], G["a"][U[sysp]]]
            # The factors of GMRES's batch selected once per change of it (``batch_view``),
            # were selected anew at every product.
            view = batch_view(dict(enumerate(Lp + Rp)), P * nf)

            def apply(x, idx):
                F = view(idx)
                return self._apply([F[i] for i in range(3)], [F[i] for i in range(3, 6)],
                                   x.reshape(-1, M, K, K)).reshape(x.shape)
            Y, ok = gmres(apply, rhs.reshape(P * nf, -1))
            if not ok.all():
                raise SolverError(f"{self.what}: GMRES on the two-point system did not converge")
            Y = Y.reshape(P, nf, M, K, K)
            bb1, bb2 = b1[U], at_v(b1)
            for f in range(nf):
                ee, ff, fe, ef = basis.bilinear(at_v(e), at_v(fr), Y[:, f], e[U], fr[U])
                see = np.einsum("pam,ma->pa", ee, gv)
                corr = np.concatenate([see[..., None], gv.T * (ff + bb1 * fe + bb2 * ef)
                                       + bb2 * bb1 * see[..., None]], axis=-1)
                if diagonal:
                    out[f, :, U, Wc] = np.einsum("la,pal->pl", lams, (base[f] + corr)[..., 1:])
                else:
                    out[f, :, :, U, Wc] = np.einsum("la,pam->plm", lams, base[f] + corr)
        if columns is None:
            iu, iv = np.tril_indices(N, -1)
            out[..., iu, iv] = out[..., iv, iu]
            out[..., iu, N + iv] = out[..., iv, N + iu].conj()
        return out


def _pairs_asked(N, columns):
    """(u, v, output column) of the pairs ``ShiftAlg1Chain.two_point`` solves, u < N, v < 2 N:
    v mod N >= u (``columns`` None), else every v in ``columns``."""
    if columns is None:
        u, v = np.nonzero(np.arange(2 * N)[None, :] % N >= np.arange(N)[:, None])
        return u, v, v
    cols = np.asarray(columns)
    return np.repeat(np.arange(N), cols.size), np.tile(cols, N), np.tile(np.arange(cols.size), N)


def shift_chain_parts(gam, r, sigma, p, signal, lam, eta, K, g, V, h, c):
    """The two-point functions H (M + 1 models, 3, M + 1 metrics, N + 1, 2 N + 1) and the
    single-contour terms (metric l, model m, target k, N + 1) of ``shift.algorithm1.curves``
    (its dense route's shapes) through the chain pencil (module docstring) on the contour ``c``
    (``shift.algorithm1.curves._contour``), at the upper nodes z (N,) and z = 1, and (Chat
    there, the couplings) for the personalization (``shift.algorithm1.personalize_chain``)."""
    M = gam.size
    pen = ShiftAlg1Chain(V, c["pooled"], h, gam, p, lam, eta, K, g, zcheck=c["low"] < 0.0)
    C, G, couplings, au = solved_couplings(pen, c, gam, r, sigma, signal, eta, lam)
    hv = np.vstack([h * V, h])                  # client i's metric, then tau itself
    H = columns_in_order(pen.two_point((C, G), couplings, hv), c["z"].size)
    H = H.transpose(2, 0, 1, 3, 4)                # (models, 3, metrics, N + 1, 2 N + 1)
    # tau(Sigma_l Y(au_k)) of each model m: (Ghat au_k)_m = y0_k (m = 0), delta_mk S_k -
    # u_m[s_m] y0_k (m = s_m).
    _, S, y0 = pen._vectors(G, au, False)
    hV = h * V
    cross = np.concatenate([np.einsum("la,nak->lkn", hV, y0)[:, None],
                            np.einsum("la,nam->lmn", hV, S)[:, :, None, :]
                            * np.eye(M)[None, :, :, None]
                            - np.einsum("la,nam,nak->lmkn", hV, G["u"][..., 0], y0)], axis=1)
    return H, cross, (C, couplings)
