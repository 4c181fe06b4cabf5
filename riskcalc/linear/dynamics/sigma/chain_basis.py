"""The chain pencil's two-point system in the eigenbasis of its local steps (derived here).

``sigma_chain`` (step 3) solves, for every pair of nodes (z1 = u, z2 = v), the linear system
X_j - sum_a w_a [gamma_j (A X_j B + (A X_j b) d^T + a (e^T X_j B)) + a d^T c_a] = C_j with
c_a = sum_k gamma_k e^T X_k b, w_a = h_a s_a^2, the left factors (A, a, e) = (B_j^T, d_j,
b'_j) at v and the right ones (B, b, d) = (B_j, b'_j, d_j) at u, all per atom s_a and client
j (K x K and K-vectors); each product costs O(M K^3) per atom.

1. The atoms share one basis. With E = Z - I (Z the down shift, E invertible) and F = -Chat_j
   Z, B_j(s) = (I + s Chat_j) Z - I = E - s F, so B_j(s)^-1 = (I - s N)^-1 E^-1 with N = E^-1
   F. Where N = P Lam P^-1 (eigenvalues lam_k; computed per node and client), B_j(s)^-1 = P
   Delta(s) P^-1 E^-1 with Delta(s) = diag(1 / (1 - s lam_k)), and the right factor
   B = Chat Z B_j^-1 = R Delta(s) S with R = Chat Z P and S = P^-1 E^-1, where S R = P^-1
   E^-1 Chat Z P = -Lam.
2. Coordinates. Write X_j = S_v^T W_j S_u (S at v on the left, at u on the right; S^-1 =
   E P). Then R_v^T X_j R_u = Lam_v W_j Lam_u, so A X B = S_v^T (Dv_a W_j Du_a) S_u with
   D_a = Lam Delta(s_a) diagonal: the main term is diagonal in W. The others are rank one:
   A X b = -S_v^T Dv_a W beta_a, e^T X B = -eps_a^T W Du_a S_u, e^T X b = eps_a^T W beta_a,
   with beta_a = S_u b and eps_a = S_v e. Multiplying the system by S_v^-T on the left and
   S_u^-1 on the right (alpha~ = S_v^-T a, delta~ = S_u^-T d) ::

       W_j - W_j o Omega_j + sum_a w_a [gamma_j ((Dv_a W_j beta_a) delta~_a^T + alpha~_a
           (eps_a^T W_j Du_a)) - alpha~_a delta~_a^T c_a] = S_v^-T C_j S_u^-1,

   Omega_j[k, l] = gamma_j sum_a w_a Dv_a[k] Du_a[l], c_a = sum_k gamma_k eps^T W_k beta:
   every product O(M K^2) per atom (matrix-vector products), against O(M K^3) in X. The
   right-hand sides are sums of outer products of rows, transformed row by row; the outputs
   q2^T X q1 = (S_v q2)^T W (S_u q1).
3. Reduced system. The terms beyond the diagonal read W only through xi = (W beta_a, eps_a^T
   W) (2 atoms K numbers per client), so with Dg = 1 - Omega the system reads W = (C~ -
   lift(xi)) / Dg, and xi solves (I + compress(lift(. ) / Dg)) xi = compress(C~ / Dg): a system
   of 2 atoms M K unknowns (against M K^2), whose GMRES iterations are those of the system in W
   with the diagonal as preconditioner (the same Krylov spaces), at a Gram-Schmidt cost
   K / (2 atoms) times smaller.
4. Honesty. GMRES runs on xi; W = (C~ - lift(xi)) / Dg and its residual R_W = C~ - Dg o W -
   lift(compress(W)) in the W system are computed (O(M K^2) per atom, with the rounding of
   W). The residual of X = S_v^T W S_u in the original system is S_v^T R_W S_u and its
   right-hand side S_v^T C~ S_u, so per client ||R_X|| <= smax(S_v) smax(S_u) ||R_W|| and
   ||C|| >= smin(S_v) smin(S_u) ||C~|| (Frobenius norms, singular values of S per node and
   client): where this bound on ||R_X|| / ||C|| is below 1e-10 no product in X is needed;
   the other systems are mapped back, their residual in X computed (one O(M K^3) product) and
   those that miss 1e-10 (an ill-conditioned basis, Dg near 0) solved again by GMRES in X, so
   the basis's conditioning cannot pass an inaccurate solution.
5. Newton's systems (``sigma_chain``, step 2) at one node have the left factors (A, a, e) =
   (D_j Chat_j, alpha_j / sigma, Chat_j^T w_j) with D_j = Z B_j^-1 = Z P Delta S, and the right
   ones (B_j, b'_j, d_j) of step 1. With V = Chat^-1 E P, V^-1 A V = S Chat Z P Delta = -Lam
   Delta (and S B S^-1 = -Lam Delta), so X = V W S makes the main term diagonal as in step 2
   with S_v^T replaced by V: alpha~ = V^-1 a = S Chat a, eps = V^T e; the same reduced system
   (step 3) gives Newton's steps (an inexact Newton method: its residual test decides).

``gmres``: restarted GMRES batched over systems (classical Gram-Schmidt twice), for both; a
system leaves the batch when its residual estimate reaches the tolerance, so chunks of many
pairs cost no more products than pairs one by one; ``batch_view`` selects the factors of the
systems left once per change of the batch (at every product before: 8% of FedAvg's edges at
M = 20, K = 50, measured). ``unsure_systems``: step 4's bound, and
where it misses S_v^T R_W S_u formed (2 K^3 per client) before the check in X (at M = 20, K =
50 the bound missed for about a third of the systems, whose check in X was a fifth of the
pairs' time). ``rows_product`` and ``bilinear_sum``: ``sigma_chain.two_point``'s right-hand
sides and outputs as matrix products.

Measured (``benchmarks/bench_rounds_sigma_k_scaling.py --cost --against``, M = 3, K = 50, two
atoms, one run): per pair of nodes 0.021 s against 0.0975 s in X, per node 0.239 s against
0.436 s (the eigendecompositions and Ghat's inverses now about half of it); two-point values
within 2.3e-13 of the solve in X; the eigenvector matrices P there and at K = 20 have condition
numbers <= 45. Issue 29's corner M = 20, K = 50 (``sigma_chain.two_point`` on its 48 upper
nodes of T = 10, replayed; process CPU, OMP 1, a loaded 2-core machine): 37.5 ms per pair with
the matrix products and chunks without the X room, 25-31 ms with ``unsure_systems`` and
``gmres``'s exits, against 54 ms before (equal to 5.7e-15). Newton's steps have no fallback:
an ill-conditioned P makes them inexact, which Newton's residual test turns into a
SolverError, never into a wrong value.

Small batches (``gmres``, ``_direct``): where the batch's matrices take at most 512 rows of
products (n <= 64), or n <= 8, each system's matrix is formed by products on the unit vectors
and solved by LU, its residual checked against the same tolerance (GMRES where it misses).
Krylov solves there took about 7 products a system, and their Python work per step (the
rotations, Gram-Schmidt on a few systems) outweighed the products: measured (process CPU, OMP
1, a loaded 2-core machine) ``tests/test_rounds_sigma_kbig.py`` 19.2 -> 15.6 s,
``tests/test_sigma_chain_arc.py`` 8.9 -> 6.2 s; their outputs within 2.2e-15 relative of
GMRES's (edges 1.1e-12, their bisection's brackets). Beyond (thousands of pairs at n = 24,
Newton's systems at n = 108) LU was measured slower than GMRES.
"""

from __future__ import annotations

import numpy as np

#: GMRES's relative residual (``gmres``), Krylov dimension and restarts.
_GMRES_TOL = 1e-13
_KRYLOV = 40
_RESTARTS = 12
#: ``gmres``: systems of at most ``_DIRECT_N`` unknowns solved directly (``_direct``) where
#: their matrices take at most ``_DIRECT_ROWS`` rows of products, or at most ``_DIRECT_ALL``
#: unknowns each (no more products than a Krylov solve's, about 7 a system).
_DIRECT_N = 64
_DIRECT_ROWS = 512
_DIRECT_ALL = 8


def gmres(apply, b, tol=_GMRES_TOL, m=_KRYLOV):
    """(x, ok): x with ||apply(x, idx) - b|| <= tol ||b|| (where ok; 1e3 tol allowed) for a
    batch b (P, n); ``apply(X, idx)`` the operator of the systems ``idx`` on the rows of X.
    Systems of at most ``_DIRECT_N`` unknowns are solved directly (``_direct``), those whose
    residual then misses tol by ``_krylov``: restarted GMRES(m)."""
    P, n = b.shape
    if n > _DIRECT_N or (P * n > _DIRECT_ROWS and n > _DIRECT_ALL):
        return _krylov(apply, b, tol, m)
    x, ok = _direct(apply, b, tol)
    bad = np.flatnonzero(~ok)
    if bad.size:
        x[bad], ok[bad] = _krylov(lambda v, idx: apply(v, bad[idx]), b[bad], tol, m)
    return x, ok


def _direct(apply, b, tol):
    """(x, ok) of ``gmres`` by LU: each system's matrix from the products on the unit vectors
    (``_DIRECT_ROWS`` rows per product), ok where the residual reaches tol (all False where
    LU fails). At n <= 64 the Krylov route's Python overhead per step outweighed the n
    products: its systems took about 7 products each (module docstring, Measured)."""
    P, n = b.shape
    x = np.zeros_like(b)
    group = max(1, _DIRECT_ROWS // n)
    try:
        for g0 in range(0, P, group):
            idx = np.arange(g0, min(P, g0 + group))
            A = apply(np.tile(np.eye(n, dtype=b.dtype), (idx.size, 1)), np.repeat(idx, n))
            x[idx] = np.linalg.solve(A.reshape(idx.size, n, n).swapaxes(1, 2),
                                     b[idx, :, None])[..., 0]
    except np.linalg.LinAlgError:
        return x, np.zeros(P, bool)
    every = np.arange(P)
    res = np.linalg.norm(b - apply(x, every), axis=1)
    return x, res <= tol * np.linalg.norm(b, axis=1)


def _krylov(apply, b, tol, m):
    """``gmres`` by restarted GMRES(m), Givens rotations; a system whose residual estimate
    reaches the tolerance within a cycle takes its update there and leaves the batch (the
    others iterate on without it; every system's true residual is checked at the next
    restart)."""
    P, n = b.shape
    m = min(m, n)
    x = np.zeros_like(b)
    bn = np.linalg.norm(b, axis=1)
    act = np.flatnonzero(bn > 0)
    for cycle in range(_RESTARTS):
        if act.size == 0:
            return x, np.ones(P, bool)
        # At x = 0 the residual is b itself: no product (one of about 8 per system).
        r = b[act] - apply(x[act], act) if cycle else b[act]
        beta = np.linalg.norm(r, axis=1)
        keep = beta > tol * bn[act]
        act, r, beta = act[keep], r[keep], beta[keep]
        if act.size == 0:
            return x, np.ones(P, bool)
        p, cur = act.size, act
        V = np.zeros((p, m + 1, n), complex)
        H = np.zeros((p, m + 1, m), complex)
        # The rotations (cs, sn) and the factors (conj cs, -conj sn) of their second rows,
        # one row per rotation: the loop over the earlier ones indexes rows, not columns.
        cs, sn, csc, nsn = np.zeros((4, m, p), complex)
        g = np.zeros((p, m + 1), complex)
        g[:, 0] = beta
        V[:, 0] = r / beta[:, None]
        k = 0
        for k in range(m):
            w = apply(V[:, k], cur)
            Vk = V[:, :k + 1]
            for _ in range(2):           # classical Gram-Schmidt, twice (orthogonal to rounding)
                h = (Vk @ w.conj()[:, :, None])[..., 0].conj()  # batched BLAS, not einsum
                w = w - (h[:, None, :] @ Vk)[:, 0]
                H[:, :k + 1, k] += h
            hn = np.linalg.norm(w, axis=1)
            H[:, k + 1, k] = hn
            V[:, k + 1] = w / np.where(hn > 0, hn, 1.0)[:, None]
            col = H[:, :k + 1, k].T.copy()
            for i in range(k):           # the earlier rotations on the new column
                t = cs[i] * col[i] + sn[i] * col[i + 1]
                col[i + 1] = nsn[i] * col[i] + csc[i] * col[i + 1]
                col[i] = t
            H[:, :k + 1, k] = col.T
            den = np.hypot(np.abs(H[:, k, k]), np.abs(H[:, k + 1, k]))
            den = np.where(den > 0, den, 1.0)
            cs[k] = H[:, k, k].conj() / den
            sn[k] = H[:, k + 1, k].conj() / den
            csc[k], nsn[k] = cs[k].conj(), -sn[k].conj()
            H[:, k, k] = cs[k] * H[:, k, k] + sn[k] * H[:, k + 1, k]
            H[:, k + 1, k] = 0.0
            g[:, k + 1] = nsn[k] * g[:, k]
            g[:, k] = cs[k] * g[:, k]
            done = (np.abs(g[:, k + 1]) <= 0.1 * tol * bn[cur]) | (hn == 0)
            if done.all():
                break
            if done.sum() * 8 >= cur.size:   # these leave the batch with their update
                _update(x, cur[done], V[done], H[done], g[done], k + 1)
                Vn = np.zeros((cur.size - done.sum(), m + 1, n), complex)
                Vn[:, :k + 2] = V[~done, :k + 2]           # the vectors so far only
                V, (H, g, cur) = Vn, (a[~done] for a in (H, g, cur))
                cs, sn, csc, nsn = (a[:, ~done] for a in (cs, sn, csc, nsn))
        _update(x, cur, V, H, g, k + 1)

    ok = np.ones(P, bool)
    ok[act] = np.linalg.norm(b[act] - apply(x[act], act), axis=1) <= 1e3 * tol * bn[act]
    return x, ok


def _update(x, idx, V, H, g, k):
    """GMRES's update of the systems ``idx`` from their first k Arnoldi vectors: x[idx] +=
    V^T y, y solving the rotated (upper triangular) Hessenberg system."""
    y = np.linalg.solve(np.triu(H[:, :k, :k]) + np.eye(k) * (np.abs(H[:, :k, :k].diagonal(
        axis1=1, axis2=2)) == 0)[:, None, :], g[:, :k, None])[..., 0]
    x[idx] += np.einsum("pkn,pk->pn", V[:, :k], y)


def eigen_factors(C, K):
    """(lam, S, Sinv) per node and client (step 1) from Chat C (N, M, K, K): lam (N, M, K),
    S = P^-1 E^-1 and Sinv = E P (N, M, K, K)."""
    Z = np.eye(K, k=-1)
    E = Z - np.eye(K)
    lam, P = np.linalg.eig(-np.linalg.solve(E, C @ Z))
    return lam, np.linalg.solve(P, np.linalg.inv(E)), E @ P


def side_factors(G, C, s, left, eig=None):
    """The vectors of step 2 at the nodes of one side: (D (N, a, M, K), first, second, Sinv^T,
    S) where for the left side (z2 = v, factors (B^T, d, b)) first = alpha~ = S^-T d, second =
    eps = S b; for the right side (z1 = u, (B, b, d)) first = beta = S b, second = delta~ = S^-T
    d; then the map of the right-hand sides' rows (S^-T) and S. ``eig``: ``eigen_factors(C)``
    if known."""
    lam, S, Sinv = eigen_factors(C, C.shape[-1]) if eig is None else eig
    D = lam[:, None] / (1.0 - s[None, :, None, None] * lam[:, None])
    SinvT = Sinv.swapaxes(-1, -2)
    Sb = np.einsum("nmkl,naml->namk", S, G["b"])
    Sd = np.einsum("nmkl,naml->namk", SinvT, G["d"])
    return (D, Sd, Sb, SinvT, S) if left else (D, Sb, Sd, SinvT, S)


def pair_factors(gam, w2, Lv, Ru):
    """The factors of steps 2 and 3 for pairs (left ones Lv = (Dv, alpha~, eps) at v, right
    ones Ru = (Du, beta, delta~) at u, each (P, atoms, M, K)) in matrix layouts per client:
    a dict of arrays (P, M, K, atoms) or (P, M, atoms, K), Dg = 1 - Omega (P, M, K, K) and
    iDg = 1 / Dg."""
    Dv, al, ep = Lv
    Du, be, de = Ru
    gw = w2[None, :, None, None] * gam[None, None, :, None]          # (1, atoms, M, 1)
    col, row = (lambda a: np.ascontiguousarray(np.moveaxis(a, 1, -1)),
                lambda a: np.ascontiguousarray(np.moveaxis(a, 1, -2)))
    Dg = 1.0 - np.einsum("pamk,paml->pmkl", gw * Dv, Du)
    return {"be": col(be), "ep": row(ep), "gDv": col(gw * Dv), "al": col(al), "de": row(de),
            "gDu": row(gw * Du), "wde": row(w2[None, :, None, None] * de), "Dg": Dg,
            "iDg": 1.0 / Dg}


def compress(F, W):
    """xi = (W beta_a, eps_a^T W) of W (P, M, K, K): ((P, M, K, atoms), (P, M, atoms, K)),
    all that the rank-one terms of step 2 read of W."""
    return W @ F["be"], F["ep"] @ W


def lift(gam, F, x, y):
    """The rank-one terms of step 2 from (x, y) = ``compress(F, W)``: (P, M, K, K), one
    product with inner dimension 2 atoms."""
    c = np.einsum("pmak,pmka->pa", F["ep"], x * gam[None, :, None, None])        # c_a
    left = np.concatenate([F["gDv"] * x, F["al"]], axis=-1)
    right = np.concatenate([F["de"], F["gDu"] * y - F["wde"] * c[:, None, :, None]], axis=-2)
    return left @ right


def flat(x, y):
    """(x, y) as one vector per system (P, 2 atoms M K)."""
    return np.concatenate([x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)], axis=1)


def unflat(F, v):
    """The inverse of ``flat`` for the layouts of F."""
    n = int(np.prod(F["be"].shape[1:]))
    return v[:, :n].reshape((-1,) + F["be"].shape[1:]), v[:, n:].reshape((-1,) + F["ep"].shape[1:])


def apply_xi(gam, F, v):
    """The reduced operator of step 3 on flat xi: xi + compress(lift(xi) / Dg) (times 1 / Dg,
    computed once: a complex division costs about four multiplications here)."""
    x, y = unflat(F, v)
    return v + flat(*compress(F, lift(gam, F, x, y) * F["iDg"]))


def rows_product(L, R):
    """sum over atoms a and rows m of L[p, a, m, j] R[p, a, m, j]^T: (P, M, K, K) from the rows
    (P, atoms, m, M, K) of ``sigma_chain.two_point``'s right-hand sides, as one product per
    pair and client (inner dimension atoms m)."""
    P, a, m, M, K = L.shape
    return (L.reshape(P, a * m, M, K).transpose(0, 2, 3, 1)
            @ R.reshape(P, a * m, M, K).transpose(0, 2, 1, 3))


def bilinear_sum(gam, q2, W, q1):
    """sum_m gam_m q2[p, a, m]^T W[p, m] q1[p, a, m]: (P, atoms), vectors (P, atoms, M, K)."""
    return np.einsum("pmak,pamk,m->pa", np.swapaxes(q2, 1, 2) @ W, q1, gam)


def batch_view(F, P):
    """``view(idx)``: the factors F (a dict of arrays over P systems) of the systems ``idx``
    (``gmres``'s batch), the last selection kept (the batch changes only when systems leave
    it: copied once then, not at every product)."""
    last = [np.arange(P), F]

    def view(idx):
        if not (idx.size == last[0].size and np.array_equal(idx, last[0])):
            last[0], last[1] = idx, F if idx.size == P else {k: f[idx] for k, f in F.items()}
        return last[1]
    return view


def solve_xi(gam, F, B):
    """xi of the pair systems of F (``pair_factors``, one entry per system) with right-hand
    sides B / Dg (the W system's C~ / Dg, (P, M, K, K)): the reduced system of step 3 by
    GMRES."""
    view = batch_view(F, B.shape[0])

    def apply(x, idx):
        return apply_xi(gam, view(idx), x)
    return gmres(apply, flat(*compress(F, B)))[0]


def unsure_systems(Rw, C, v, u, residual):
    """The systems (indices) whose residual in X may exceed ``residual`` times their right-hand
    side's norm there (step 4): R_W (S, M, K, K) and C~ in the basis; v, u = (largest and
    smallest singular values (N, M), S (N, M, K, K), each system's node). First the bound
    ||R_X|| <= smax_v smax_u ||R_W||, ||C|| >= smin_v smin_u ||C~|| per client; where it
    misses, R_X = S_v^T R_W S_u and C = S_v^T C~ S_u themselves (2 K^3 per client each, against
    the check in X's O(M K^3) products and rows): the same residual, not bounded."""
    (smax_v, smin_v, Sv, nv), (smax_u, smin_u, Su, nu) = v, u

    def norms(A, wv, wu):
        return np.sqrt(np.sum((wv * wu) ** 2 * np.sum(np.abs(A) ** 2, axis=(-1, -2)), axis=1))
    out = np.flatnonzero(~(norms(Rw, smax_v[nv], smax_u[nu])
                           <= residual * norms(C, smin_v[nv], smin_u[nu])))
    if out.size == 0:
        return out
    SvT, Su_ = Sv[nv[out]].swapaxes(-1, -2), Su[nu[out]]
    one = np.ones(out.size)[:, None]
    return out[~(norms(SvT @ Rw[out] @ Su_, one, one)
                 <= residual * norms(SvT @ C[out] @ Su_, one, one))]
