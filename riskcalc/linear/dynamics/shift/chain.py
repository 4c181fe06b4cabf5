"""FedAvg's pencil with K local steps under covariate shift, solved through its chain structure
(derived here; for M K^2 beyond the dense ``shift.pencil``).

``sigma_chain``'s derivation (steps 1-4) with client j's eigenvalue v_j(a) on the joint atoms
in place of the shared s (``shift.pencil``, step 2):

1. Schur complement: client j's rows read (I + v_j Chat_j)(e_0 x_0 + Z x_j) - x_j = y_j, so
   B_j = (I + v_j Chat_j) Z - I and b_j = (I + v_j Chat_j) e_0 per atom (``ghat``); the rest
   of step 1 (u_j, w_j, sigma, alpha_j, D_j) is unchanged.
2. Newton's operator: the dense Jacobian's weights h v_j v_k (``shift.pencil``) split as the
   chain's: (J X)_j = E[gamma_j v_j^2 (A_j X_j B_j + A_j X_j b'_j d_j^T + a_j e_j^T X_j B_j)
   + v_j a_j d_j^T c], c = sum_k gamma_k v_k e_k^T X_k b'_k per atom (``_apply``).
3. The eigenbasis (``chain_basis``, steps 1-3): B_j(v) = E - v F_j, so Delta_j(a) =
   diag(1 / (1 - v_j(a) lam_k)) with client j's own eigenvalue (``_side``); in the reduced
   system the diagonal and the client's own rank-one terms carry h v_j^2 gamma_j, the
   cross-client term h v_j on the left and gamma_k v_k in c_a (``_pairs``, ``_lift``).
4. Two points: the right-hand sides' rows weighted by h v_j, the outputs sum_k gamma_k v_k
   q2_k^T Y_k q1_k per atom, read with any metric (``two_point``'s ``lams``).

Checked (``tests/test_rounds_shift_k.py``) against the dense ``shift.pencil`` at M K^2 where
both run.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.chain_basis import (compress, eigen_factors, flat, gmres,
                                                         unflat)
from riskcalc.linear.dynamics.sigma.sigma_chain import (_NEWTON_GMRES, _RESIDUAL, ChainPencil,
                                                         _CHUNK_BYTES, _KRYLOV)


def _pairs(gam, h, V, Lv, Ru):
    """``chain_basis.pair_factors`` with per-client weights (module docstring, step 3)."""
    Dv, al, ep = Lv
    Du, be, de = Ru
    gw = (h * V ** 2 * gam[:, None]).T[None, :, :, None]             # (1, atoms, M, 1)
    col, row = (lambda a: np.ascontiguousarray(np.moveaxis(a, 1, -1)),
                lambda a: np.ascontiguousarray(np.moveaxis(a, 1, -2)))
    Dg = 1.0 - np.einsum("pamk,paml->pmkl", gw * Dv, Du)
    return {"be": col(be), "ep": row(ep), "gDv": col(gw * Dv), "al": col(al), "de": row(de),
            "gDu": row(gw * Du), "wde": row((h * V).T[None, :, :, None] * de), "Dg": Dg,
            "iDg": 1.0 / Dg, "gv": (gam[:, None] * V)[None, :, None, :]}


def _lift(F, x, y):
    """``chain_basis.lift`` with c_a = sum_k gamma_k v_k(a) eps^T W_k beta."""
    c = np.einsum("pmak,pmka->pa", F["ep"], x * F["gv"])
    left = np.concatenate([F["gDv"] * x, F["al"]], axis=-1)
    right = np.concatenate([F["de"], F["gDu"] * y - F["wde"] * c[:, None, :, None]], axis=-2)
    return left @ right


def _apply_xi(F, v):
    """``chain_basis.apply_xi`` with ``_lift``."""
    x, y = unflat(F, v)
    return v + flat(*compress(F, _lift(F, x, y) * F["iDg"]))


def _solve_w(F, rhs, tol):
    """W = (rhs - lift(xi)) / Dg with xi by GMRES on the reduced system (``chain_basis``,
    step 3)."""
    P = rhs.shape[0]

    def apply(x, idx):
        # The systems GMRES still iterates (the others left its batch); "gv" is shared.
        return _apply_xi(F if idx.size == P else {k: f[idx] if f.shape[0] == P else f
                                                  for k, f in F.items()}, x)
    xi, _ = gmres(apply, flat(*compress(F, rhs / F["Dg"])), tol=tol)
    return (rhs - _lift(F, *unflat(F, xi))) / F["Dg"]


class ShiftChain(ChainPencil):
    """``ChainPencil`` with client j's eigenvalue v_j(a) on the joint atoms (module docstring)."""

    what = "rounds limit under covariate shift with local steps (chain)"

    def __init__(self, joint, gam, p, eta: float, K: int):
        V = np.asarray(joint.values, float)[np.asarray(joint.types)]
        super().__init__(np.asarray(p, float) @ V / np.sum(p), joint.weights, gam, p, eta, K)
        self.V = V

    def own_weights(self):
        return self.h * self.V

    def client_atoms(self):
        return self.V.T

    def _apply(self, L, R, X):
        """X - J X of step 2."""
        A, a, e = L
        B, b, d = R
        AX = A @ X[:, None]
        eX = e[..., None, :] @ X[:, None]
        inner = AX @ B + (AX @ b[..., None]) * d[..., None, :] + a[..., :, None] * (eX @ B)
        c = np.einsum("pam,m,ma->pa", (eX @ b[..., None])[..., 0, 0], self.gam, self.V)
        Vt = self.V.T[None, :, :, None, None]
        out = (Vt ** 2 * self.gam[:, None, None]) * inner \
            + Vt * a[..., :, None] * d[..., None, :] * c[..., None, None, None]
        return X - np.einsum("a,pamkl->pmkl", self.h, out)

    def _side(self, C):
        """(lam-based D (N, atoms, M, K), S, Sinv) with Delta_j(a) of client j's v_j(a)."""
        lam, S, Sinv = eigen_factors(C, self.K)
        return lam[:, None] / (1.0 - self.V.T[None, :, :, None] * lam[:, None]), S, Sinv

    def _factors(self, C, G):
        D, S, Sinv = self._side(C)
        V = np.linalg.solve(C, Sinv)
        SC = S @ C
        left = (D, np.einsum("nmkl,naml->namk", SC, G["a"]),
                np.einsum("nmlk,naml->namk", V, G["e"]))
        right = (D, np.einsum("nmkl,naml->namk", S, G["b"]),
                 np.einsum("nmlk,naml->namk", Sinv, G["d"]))
        return dict(_pairs(self.gam, self.h, self.V, left, right), V=V, S=S, SC=SC, Sinv=Sinv)

    def _newton(self, fac, rhs, tol=_NEWTON_GMRES):
        rhs = fac["SC"] @ rhs @ fac["Sinv"]
        return fac["V"] @ _solve_w(fac, rhs, tol) @ fac["S"]

    def two_point(self, one1, one2, couplings, lams, symmetric=False):
        """H[f, l][u, v] = E[lams[l] Ghat12_00] (``shift.pencil.ShiftPencil.two_point``'s
        output) by the chain's eigenbasis (module docstring, step 4; ``sigma_chain``, step 3,
        ``symmetric`` as there)."""
        (_, G1), (_, G2) = one1, one2
        N1, N2 = G1["sigma"].shape[0], G2["sigma"].shape[0]
        M, K, nf, atoms = self.M, self.K, len(couplings), self.s.size
        hv = self.h * self.V
        lams = np.asarray(lams)
        sides = []
        for (C, G), left in ((one2, True), (one1, False)):
            D, S, Sinv = self._side(C)
            Sb = np.einsum("nmkl,naml->namk", S, G["b"])
            Sd = np.einsum("nmkl,naml->namk", Sinv.swapaxes(-1, -2), G["d"])
            sides.append((D, Sd, Sb, Sinv.swapaxes(-1, -2), S) if left else
                         (D, Sb, Sd, Sinv.swapaxes(-1, -2), S))
        (Dv, alv, epv, SvT, Sv), (Du, beu, deu, SuT, Su) = sides
        facs = []
        for c, W, Vc in couplings:
            c, W, Vc = (np.asarray(x, float) for x in (c, W, Vc))
            lr, l0 = self._rows(G2, W)
            rr, r0 = self._rows(G1, Vc)
            facs.append((np.einsum("vjxy,vamjy->vamjx", SvT,
                                   np.einsum("ja,m,vamjx->vamjx", hv, c, lr)),
                         np.einsum("ujxy,uamjy->uamjx", SuT, rr), c * l0, r0))
        # The outputs' factors with v_k(a) on the right (step 4).
        Sq2 = np.einsum("nmkl,naml->namk", Sv, G2["b"] / G2["sigma"][..., None, None])
        Sq1 = np.einsum("nmkl,naml->namk", Su, G1["b"] / G1["sigma"][..., None, None]) \
            * self.V.T[None, :, :, None]
        out = np.zeros((nf, len(lams), N1, N2), complex)
        per_pair = 16.0 * atoms * M * K * K * (2 + 2 * nf) + 16.0 * nf * M * K * K * (
            _KRYLOV + 8) + 16.0 * nf * (_KRYLOV + 1) * 2 * atoms * M * K
        U_all, V_all = np.repeat(np.arange(N1), N2), np.tile(np.arange(N2), N1)
        if symmetric:
            keep = (V_all % N1) >= U_all
            U_all, V_all = U_all[keep], V_all[keep]
        chunk = max(1, int(_CHUNK_BYTES / per_pair))
        for c0 in range(0, U_all.size, chunk):
            U, Vv = U_all[c0:c0 + chunk], V_all[c0:c0 + chunk]
            P = U.size
            rhs = np.stack([np.einsum("pamjx,pamjy->pjxy", lt[Vv], rt[U], optimize=True)
                            for lt, rt, _, _ in facs], axis=1).reshape(P * nf, M, K, K)
            sysp = np.repeat(np.arange(P), nf)
            F = _pairs(self.gam, self.h, self.V, [a[Vv][sysp] for a in (Dv, alv, epv)],
                       [a[U][sysp] for a in (Du, beu, deu)])
            Y = _solve_w(F, rhs, 1e-13)
            X = Sv[Vv][sysp].swapaxes(-1, -2) @ Y @ Su[U][sysp]
            self._check(X, rhs, F, Sv[Vv][sysp], Su[U][sysp], one1, one2, U[sysp], Vv[sysp])
            Y = Y.reshape(P, nf, M, K, K)
            for f, (_, _, lb, rb) in enumerate(facs):
                base = np.einsum("pam,pam->pa", lb[Vv], rb[U])
                corr = np.einsum("m,pamk,pmkl,paml->pa", self.gam, Sq2[Vv], Y[:, f], Sq1[U])
                out[f, :, U, Vv] = (base + corr) @ lams.T
        if symmetric:
            iu, iv = np.tril_indices(N1, -1)
            out[..., iu, iv] = out[..., iv, iu]
            out[..., iu, N1 + iv] = out[..., iv, N1 + iu].conj()
        return out

    def _check(self, X, rhs, F, Sv, Su, one1, one2, pu, pv):
        """The two-point solutions X = S_v^T W S_u checked in the original system (step 2's
        product, ``_apply``): a relative residual beyond ``sigma_chain._RESIDUAL`` raises
        (no fallback here: measured within it where the dense route runs)."""
        (C1, G1), (C2, G2) = one1, one2
        rhs_x = Sv.swapaxes(-1, -2) @ rhs @ Su
        G1, G2 = ({k: v[p] for k, v in G.items()} for G, p in ((G1, pu), (G2, pv)))
        Lp = (self.right_factor(C2[pv], G2).swapaxes(-1, -2), G2["d"], G2["b"])
        Rp = (self.right_factor(C1[pu], G1), G1["b"], G1["d"])
        res = np.linalg.norm((rhs_x - self._apply(Lp, Rp, X)).reshape(X.shape[0], -1), axis=1)
        if np.any(res > _RESIDUAL * np.linalg.norm(rhs_x.reshape(X.shape[0], -1), axis=1)):
            raise SolverError(f"{self.what}: a two-point system's solution in the eigenbasis "
                              "misses its tolerance")
