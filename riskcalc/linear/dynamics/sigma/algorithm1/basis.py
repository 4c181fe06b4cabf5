"""Algorithm 1's chain pencil: its two-point systems in the eigenbasis of the local steps
(derived here), as ``chain_basis`` does for FedAvg's.

``Alg1Chain.two_point`` (``sigma.algorithm1.chain``, step 3) solves, for every pair of nodes
(z1 = u, z2 = v), the system of ``sigma_chain``'s operator X - J X with the left factors (A, a,
e) at v and the right ones (A^T, e, a) at u, where A = Ghat[cols, rows](s) Chat per atom s and
client j (K x K), a = alpha / sigma and e = Chat^T w (K-vectors). In the original unknowns every
GMRES product costs O(M K^3) per atom and pair; here O(M K^2).

1. One basis for every atom. Client j's block of the pencil is D_j(s) = D0z + s U Chat V^T,
   with U, V the columns of the identity at the chain's rows and columns and D0z the s-free part
   (z on the state block where the pencil puts it). Woodbury, with Q = V^T D0z^-1 U (K x K, a
   function of the node only): Ghat[cols, rows](s) = V^T D_j(s)^-1 U = Q (I + s Chat Q)^-1, so
   A(s) = N (I + s N)^-1 with N = Q Chat. Where N = P Lam P^-1 (per node and client; s-free),
   A(s) = P Delta(s) P^-1, Delta(s) = diag(lam_k / (1 + s lam_k)), for every atom at once.
2. Coordinates. Write X_j = P_v W_j P_u^T. Then A_v X A_u^T = P_v (Dv W Du) P_u^T (Dv = Delta
   at v, Du at u), A_v X e_u = P_v Dv W beta, e_v^T X A_u^T = eps^T W Du P_u^T and e_v^T X e_u =
   eps^T W beta, with beta = P_u^T e_u and eps = P_v^T e_v. Multiplying the system by P_v^-1 on
   the left and P_u^-T on the right (at = P_v^-1 a_v, dt = P_u^-1 a_u) ::

       W_j - W_j o Omega_j - sum_a w_a [gamma_j ((Dv_a W_j beta_a) dt_a^T
           + at_a (eps_a^T W_j Du_a)) + at_a dt_a^T c_a] = P_v^-1 C_j P_u^-T,

   c_a = sum_k gamma_k eps_a^T W_k beta_a, Omega_j[k, l] = gamma_j sum_a w_a Dv_a[k] Du_a[l]:
   ``chain_basis``'s system (its step 2) with its alpha~ = -at and delta~ = -dt (A is similar
   to +Delta, where FedAvg's B is similar to -Delta), solved by its reduced system on xi (its
   step 3: 2 atoms M K unknowns per pair).
3. Honesty. W's residual R_W in the system of step 2 is computed (with W's rounding); X's is
   R_X = P_v R_W P_u^T, so ||R_X|| <= smax(P_v) smax(P_u) ||R_W|| per client (Frobenius norms,
   the largest singular values of P per node and client). A system whose bound exceeds
   ``sigma_chain._RESIDUAL`` (1e-10) times its right-hand side's norm in X (an ill-conditioned
   P: N near a defective matrix) is solved again in X by GMRES with the original product, so the
   basis cannot pass an inaccurate solution.

4. Newton's systems (``sigma_chain``, step 2) at one node have the left factors (A, a, e) of
   step 1 and the right ones (B, b, d) = (Chat Ghat[cols, rows], Chat alpha, w / sigma); B =
   Chat Q (I + s Chat Q)^-1 = R Delta(s) R^-1 with R = Chat P (Chat invertible), so X = P W
   R^-1 makes the main term diagonal as in step 2, with beta = R^-1 b, eps = P^T e, at = P^-1
   a, dt = R^T d (and the same signs). Newton's method is inexact there anyway (its residual
   test decides); a node whose GMRES in W does not converge (or gives a non-finite step) is
   solved again in X.

Checked (``tests/test_rounds_sigma_alg1_basis.py``) against the solve in X on random and
contour nodes (Algorithm 1's pencil and FedAvg's own-model pencil, which shares it).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma.chain_basis import (apply_xi, batch_view, compress, flat,
                                                         gmres, lift, pair_factors, solve_xi,
                                                         unflat)


def eigenbasis(pen, G, C):
    """(P, Pinv, D) at the nodes of (C, G) (``Alg1Chain.ghat``'s dict, with the nodes' z):
    N = Q Chat = P Lam P^-1 (N, M, K, K) and D = Lam / (1 + s Lam) (N, atoms, M, K) (module
    docstring, step 1)."""
    z = G["z"]
    D0 = np.broadcast_to(pen.D0, (z.size,) + pen.D0.shape).astype(complex)
    if pen.zlocal:
        D0[:, pen.own, pen.own] += z
    Q = np.linalg.inv(D0)[:, pen.lc[:, None], pen.lr[None, :]]            # (N, K, K)
    lam, P = np.linalg.eig(Q[:, None] @ C)                                 # N = Q Chat
    Pinv = np.linalg.inv(P)
    return P, Pinv, lam[:, None] / (1.0 + pen.s[None, :, None, None] * lam[:, None])


def node_factors(pen, G, C):
    """``eigenbasis`` at the nodes of (C, G) as a dict of P, Pinv, D, smax (N, M) and the
    vectors of step 2 for either side: the left ones (at = -P^-1 a, eps = P^T e) and the right
    ones (beta = P^T e, dt = -P^-1 a)."""
    P, Pinv, D = eigenbasis(pen, G, C)
    Pa = -np.einsum("nmkl,naml->namk", Pinv, G["a"])
    Pe = np.einsum("nmlk,naml->namk", P, G["e"])
    return {"P": P, "Pinv": Pinv, "smax": np.linalg.norm(P, ord=2, axis=(-2, -1)), "D": D,
            "left": (D, Pa, Pe), "right": (D, Pe, Pa)}


#: ``newton_factors``' bases (the others are GMRES's, which ``batch_view`` selects).
_BASES = ("P", "Pinv", "R", "Rinv")


def newton_factors(pen, G, C):
    """The eigenbasis factors of Newton's systems at the nodes of (C, G) (``Alg1Chain``'s
    ``ghat``, module docstring, step 4): a dict of arrays with the nodes first (P, Pinv, R^-1,
    R and ``pair_factors``')."""
    P, Pinv, D = eigenbasis(pen, G, C)
    R = C @ P
    Rinv = np.linalg.inv(R)
    F = pair_factors(pen.gam, pen.h * pen.s ** 2,
                     (D, -np.einsum("nmkl,naml->namk", Pinv, G["a"]),
                      np.einsum("nmlk,naml->namk", P, G["e"])),
                     (D, np.einsum("nmkl,naml->namk", Rinv, G["b"]),
                      -np.einsum("nmlk,naml->namk", R, G["d"])))
    return dict(F, P=P, Pinv=Pinv, R=R, Rinv=Rinv)


def newton(pen, F, rhs, tol):
    """(X, ok): Newton's systems (I - J) X = rhs (N, M, K, K) at N nodes in the eigenbasis
    (module docstring, step 4) with their ``newton_factors`` F, to GMRES's tolerance ``tol``
    where ``ok``."""
    Ct = F["Pinv"] @ rhs @ F["R"]
    view = batch_view({k: v for k, v in F.items() if k not in _BASES}, rhs.shape[0])

    def apply(x, idx):
        return apply_xi(pen.gam, view(idx), x)
    xi, ok = gmres(apply, flat(*compress(F, Ct * F["iDg"])), tol=tol)
    X = F["P"] @ ((Ct - lift(pen.gam, F, *unflat(F, xi))) * F["iDg"]) @ F["Rinv"]
    return X, ok & np.all(np.isfinite(X), axis=(1, 2, 3))


def solve_pairs(gam, w2, fv, fu, rhs, nf, residual, Ct):
    """(W, unsure): the two-point systems of ``nf`` couplings per pair, right-hand sides ``rhs``
    (P nf, M, K, K) in X and ``Ct`` = P_v^-1 rhs P_u^-T in the basis (``in_basis``), solved
    there (module docstring, steps 2-3: X = P_v W P_u^T) with ``fv`` and ``fu`` the
    ``node_factors`` of each pair's v and u nodes (entries (P, ...)); ``unsure`` the systems
    whose residual bound in X exceeds ``residual`` times the norm of their right-hand side (the
    caller solves them again in X)."""
    sysp = np.repeat(np.arange(rhs.shape[0] // nf), nf)           # the pair of each system
    F = pair_factors(gam, w2, [a[sysp] for a in fv["left"]], [a[sysp] for a in fu["right"]])
    xi = solve_xi(gam, F, Ct * F["iDg"])
    W = (Ct - lift(gam, F, *unflat(F, xi))) * F["iDg"]
    Rw = Ct - F["Dg"] * W - lift(gam, F, *compress(F, W))
    bound = np.sqrt(np.sum((fv["smax"][sysp] * fu["smax"][sysp]) ** 2
                           * np.sum(np.abs(Rw) ** 2, axis=(-1, -2)), axis=1))
    unsure = np.flatnonzero(~(bound <= residual * np.linalg.norm(
        rhs.reshape(rhs.shape[0], -1), axis=1)))
    return W, unsure


def in_basis(fac, G, vecs):
    """The vectors of ``Alg1Chain.two_point`` in the basis at every node: for each coupling's
    terms (``_vectors``' outputs at W and V) the pairs of them with their first entries
    (columns) times P^-1, alpha times P^-1 (so ``_terms`` gives Ct = P_v^-1 rhs P_u^-T from
    them: a sum of outer products), and the output rows e / sigma and f times P^T (e_v^T X
    e_u = (P_v^T e_v)^T W (P_u^T e_u)). With ``fac`` None (no basis) P = I."""
    def inv(x):
        return x if fac is None else np.einsum("nmkl,naml->namk", fac["Pinv"], x)

    def tr(x):
        return x if fac is None else np.einsum("nmlk,naml->namk", fac["P"], x)
    tvecs = [[tuple((inv(v[0]),) + tuple(v[1:]) for v in (v2, v1)) for _, _, v2, v1 in cp]
             for cp in vecs]
    return tvecs, inv(G["alpha"]), tr(G["e"] / G["sigma"][..., None, None]), tr(G["f"])


def outputs(G, te, tf, Yf, U, V, N, unsure, nf, f):
    """``bilinear``'s four products for coupling f at ``Alg1Chain.two_point``'s chunk of pairs
    (U, V; V among the N nodes and their conjugates): in the basis (``in_basis``' te, tf) where
    Yf holds W, and in X (e / sigma and f themselves) at the pairs of the systems ``unsure``,
    solved again in X, where Yf holds X (mapped back to W through an ill-conditioned P, as at
    the own models' node at infinity, X would lose what its solve kept)."""
    out = bilinear(conj_at(te, V, N), conj_at(tf, V, N), Yf, te[U], tf[U])
    p = unsure[unsure % nf == f] // nf
    if p.size:
        e = G["e"] / G["sigma"][..., None, None]
        for o, x in zip(out, bilinear(conj_at(e, V[p], N), conj_at(G["f"], V[p], N), Yf[p],
                                      e[U[p]], G["f"][U[p]])):
            o[p] = x
    return out


def bilinear(e2, f2, W, e1, f1):
    """(e2^T W e1, f2^T W f1, f2^T W e1, e2^T W f1) per pair, atom and client: vectors (P,
    atoms, M, K), W (P, M, K, K); outputs (P, atoms, M)."""
    a = e2.shape[1]
    rows = np.moveaxis(np.concatenate([e2, f2], axis=1), 1, -2)            # (P, M, 2a, K)
    Q = rows @ W @ np.moveaxis(np.concatenate([e1, f1], axis=1), 1, -1)    # (P, M, 2a, 2a)
    d = np.arange(a)
    return tuple(np.moveaxis(Q[..., i + d, j + d], -1, 1)
                 for i, j in ((0, 0), (a, a), (a, 0), (0, a)))


def outer_sum(L, R):
    """sum_a L[p, a, m] R[p, a, m]^T (P, M, K, K) for L, R (P, atoms, M, K): one product."""
    return np.moveaxis(L, 1, -1) @ np.moveaxis(R, 1, -2)


def conj_at(x, idx, N):
    """x (nodes first) at ``idx`` among the N nodes and their conjugates: idx >= N reads the
    conjugate of node idx - N's (the pencils are real, so every factor at a conjugate node is
    the conjugate; nothing is held twice)."""
    out = x[idx % N]
    low = idx >= N
    out[low] = out[low].conj()
    return out


def take(fac, idx, N=None):
    """``node_factors``' entries at the nodes ``idx`` (with ``N``: ``conj_at``)."""
    def at(x):
        return x[idx] if N is None else conj_at(x, idx, N)
    return {k: (tuple(at(x) for x in v) if isinstance(v, tuple) else at(v))
            for k, v in fac.items()}
