"""The two-point solve of FedAvg's pencil under a shared spectrum (``SigmaPencil.two_point``;
its derivation is step 3 of ``sigma.sigma_pencil``'s module docstring): for each pair of
contour nodes the Woodbury step of the block upper triangular pencil gives a LINEAR system for
the Y_j, solved here transposed for the weights of the traces (one solve per pair serves every
coupling). The pencils of ``sigma.algorithm1`` and ``sigma.personal`` inherit it."""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma import memory


def two_point(pen, one1, one2, couplings, block=(0, 0), symmetric=False, mirror=None):
    """``pen.two_point(one1, one2, couplings, block, symmetric, mirror)`` of a ``SigmaPencil``
    ``pen`` (its docstring: the arguments and the (len(couplings), 2, N1, N2) values)."""
    blocks = [tuple(f[3]) if len(f) > 3 else tuple(block) for f in couplings]
    C1, G1 = one1
    C2, G2 = one2
    N1, N2 = G1.shape[0], G2.shape[0]
    M, K = pen.M, pen.K
    size = M * K * K
    A = pen.s.size
    # Chat_k G[c_k, r_j] at z2 with the weights gamma_k w_a as [v, j, k, (x, c), a] and at
    # z1 as [u, j, k, a, (d, b)]: the Jacobians' products (``_jacobian``) over the atoms.
    wg = pen.gam[:, None] * (pen.h * pen.s ** 2)[None, :]
    L2 = pen._chat_g(C2, G2).transpose(0, 4, 1, 5, 2, 3).reshape(N2, M, M, K * K, A)
    L2 = L2 * wg[:, None, :]
    R1 = pen._chat_g(C1, G1).transpose(0, 4, 1, 3, 2, 5).reshape(N1, M, M, A, K * K)
    # Chat_k G[c_k, b] at z1 as [u, k, d, a] and gamma_k Chat_k G[c_k, a] at z2 as
    # [v, k, c, a], for each block index used.
    q1 = {b: np.einsum("nkcd,nakd->nkca", C1, G1[:, :, pen.cols, b])
          for b in {bl[1] for bl in blocks}}
    q2 = {a: pen.gam[:, None, None] * np.einsum("nkcd,nakd->nkca", C2,
                                                  G2[:, :, pen.cols, a])
          for a in {bl[0] for bl in blocks}}
    lam = np.stack([pen.h * pen.s, pen.h])
    out = np.zeros((len(couplings), 2, N1, N2), complex)
    # Left and right factors of the right-hand sides: (w^T Ghat2)[., r_j], (v^T Ghat1).
    facs = []
    hs = pen.h * pen.s
    for f, (ia, ib) in zip(couplings, blocks):
        c, W, V = f[:3]
        c = np.asarray(c, float)
        left = np.einsum("mi,naij->namj", W, G2)     # (N2, a, m, n)
        right = np.einsum("mi,naij->namj", V, G1)    # (N1, a, m, n)
        # The weights go on the left factor; the rows r_j and blocks a, b taken once.
        # As matrices per client j: [j, (v, x), (a, m)] and [j, (a, m), u, y].
        lr = np.einsum("a,m,vamjx->jvxam", hs, c, left[:, :, :, pen.rows])
        rr = right[:, :, :, pen.rows].transpose(3, 1, 2, 0, 4)
        # The column b copied: a view would keep all of ``right`` alive.
        facs.append((lr.reshape(M, N2 * K, -1), rr, c[None, None, :] * left[:, :, :, ia],
                     right[:, :, :, ib].copy()))
    # Chunks of whole rows u (all v each): the right-hand sides are then matrix products;
    # rows u per product factor Z of the corrections (``memory.dense_pair_rows``).
    rows_u, rows_z = memory.dense_pair_rows(size, len(facs), A, N2)
    # The couplings grouped by block (``order``), each block's a slice of it.
    grouped = {}
    for f, bl in enumerate(blocks):
        grouped.setdefault(bl, []).append(f)
    order = [f for fs in grouped.values() for f in fs]
    ends = np.cumsum([len(fs) for fs in grouped.values()])
    by_block = {bl: (int(e) - len(fs), int(e)) for (bl, fs), e in zip(grouped.items(), ends)}
    # The pairs' values need Y only through Z^T Y (Z below: size x atoms per pair and
    # block), so each pair solves the transposed system for the weights (Z s lam^T, two
    # columns per block) instead of Y for every coupling: (I - J)^-T Z' then Z'^T Y =
    # ((I - J)^-T Z')^T rhs, the same algebra with 2 blocks columns against the couplings'
    # 16 to 24 (measured on the 86 calls of the rounds tests, one BLAS thread: the solves
    # 9.9 s -> 7.0 s; the values equal to 2.3e-14 relative).
    slam = (pen.s * lam).T                                         # (a, l)
    nb = len(by_block)
    if symmetric and N2 != 2 * N1:
        raise ValueError(f"one2: symmetric pairs need the nodes of one1 and their "
                         f"conjugates (2 N1 = {2 * N1} nodes), got {N2}")
    u0 = 0
    while u0 < N1:
        # ``symmetric``: the nodes v >= u0 of both halves only, in chunks of at most
        # ``memory.dense_pair_rows``' pairs (more rows as they shorten) and an eighth of the
        # rows (a chunk's pairs v < u are solved and then overwritten: about 1/8 more
        # pairs than half); otherwise every node v.
        vs = np.r_[u0:N1, N1 + u0:N2] if symmetric else slice(None)
        nv = N2 - 2 * u0 if symmetric else N2
        u1 = min(N1, u0 + (min(max(1, rows_u * N2 // nv), -(-N1 // 8)) if symmetric
                           else rows_u))
        nu, P = u1 - u0, (u1 - u0) * nv
        # Every pair (u, v) of the chunk, u major: p = (u - u0) nv + v.
        lhs = pen._one_minus((L2[vs][None] @ R1[u0:u1, None]).reshape(
            nu, nv, M, M, K, K, K, K))
        rhs = np.empty((len(facs), nu, nv, M, K, K), complex)
        base = np.empty((len(facs), P, 2), complex)
        for i, f in enumerate(order):
            lr, rr, lb, rb = facs[f]
            lv = lr.reshape(M, N2, K, -1)[:, vs].reshape(M, nv * K, -1)
            r = lv @ rr[:, :, :, u0:u1].reshape(M, lr.shape[2], -1)   # [j, (v, x), (u, y)]
            rhs[i] = r.reshape(M, nv, K, nu, K).transpose(3, 1, 0, 2, 4)
            base[i] = np.einsum("vam,uam->uva", lb[vs], rb[u0:u1]).reshape(P, A) @ lam.T
        # Z'[p, (k, c, d), (block, l)] = sum_a gamma_k q2[v, k, c, a] q1[u, k, d, a] s_a
        # lam_l(a), rows_z rows u at a time (Z per atom is the chunk's largest factor).
        Zl = np.empty((P, size, nb, 2), complex)
        for bi, (ia, ib) in enumerate(by_block):
            for z0 in range(u0, u1, rows_z):
                z1 = min(u1, z0 + rows_z)
                Z = q2[ia][vs][None, :, :, :, None, :] * q1[ib][z0:z1, None, :, None, :, :]
                Zl[(z0 - u0) * nv:(z1 - u0) * nv, :, bi] = Z.reshape(-1, size, A) @ slam
        Wt = np.linalg.solve(np.swapaxes(lhs, 1, 2), Zl.reshape(P, size, 2 * nb))
        Wt = np.swapaxes(Wt, 1, 2)                                  # (P, (block, l), size)
        rhs = rhs.reshape(len(facs), P, size)
        for bi, (i0, i1) in enumerate(by_block.values()):
            # (P, l, couplings of the block): one matrix product per pair.
            corr = Wt[:, 2 * bi:2 * bi + 2] @ rhs[i0:i1].transpose(1, 2, 0)
            for i in range(i0, i1):
                # out[f] first: its view takes the one index array ``vs`` last.
                out[order[i]][:, u0:u1, vs] = (base[i] + corr[:, :, i - i0]).T.reshape(
                    2, nu, nv)
        u0 = u1
    if symmetric:
        iu, iv = np.tril_indices(N1, -1)
        mirror = np.arange(len(couplings)) if mirror is None else np.asarray(mirror)
        out[..., iu, iv] = out[mirror][..., iv, iu]
        out[..., iu, N1 + iv] = out[mirror][..., iv, N1 + iu].conj()
    return out

