"""``SigmaPencil.two_point`` with several couplings on several blocks (each block's couplings
share its adjoint solve) against step 3 of ``sigma.sigma_pencil`` computed pair by pair: the
affine map Y -> E_H[s Ghat12(s)[r_j, r_j]] built column by column from Ghat12's formula, its
fixed point by numpy's solve, and the traces read from Ghat12 itself."""

import numpy as np

from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

Z = np.array([0.9 + 0.4j, 0.25 + 0.05j, 1.6 + 0.3j])
PEN = SigmaPencil(np.array([0.4, 2.5]), np.array([0.3, 0.7]), np.array([0.5, 2.0]),
                  np.array([0.4, 0.6]), 0.1, 2)


def _ghat12(pen, c1, g1, c2, g2, F, Y):
    """Ghat12 on every atom (atoms, n, n) of the pair's one-point values, given Y (M, K, K)."""
    X = np.zeros((pen.s.size, pen.n, pen.n), complex) + F
    for k in range(pen.M):
        cc = np.ix_(pen.cols[k], pen.cols[k])
        X[:, cc[0], cc[1]] += (pen.s * pen.gam[k])[:, None, None] * (c2[k].T @ Y[k] @ c1[k])
    return np.swapaxes(g2, 1, 2) @ X @ g1


def _pair(pen, c1, g1, c2, g2, coupling):
    """(2,) values E_H[lam(s) Ghat12(s)_ab], lam in (s, 1), of one pair, brute force."""
    c, W, V = coupling[:3]
    a, b = coupling[3]
    F = W.T @ np.diag(c) @ V

    def image(Y):
        G12 = _ghat12(pen, c1, g1, c2, g2, F, Y)
        return np.array([np.einsum("a,axy->xy", pen.h * pen.s,
                                   G12[:, pen.rows[j]][:, :, pen.rows[j]])
                         for j in range(pen.M)])

    shape = (pen.M, pen.K, pen.K)
    zero = image(np.zeros(shape, complex))
    cols = [image(e.reshape(shape)) - zero for e in np.eye(zero.size)]
    Y = np.linalg.solve(np.eye(zero.size) - np.array(cols).reshape(zero.size, -1).T,
                        zero.ravel()).reshape(shape)
    G12 = _ghat12(pen, c1, g1, c2, g2, F, Y)[:, a, b]
    return np.array([pen.h * pen.s, pen.h]) @ G12


def test_blocks_and_couplings_equal_the_pair_by_pair_solve():
    """Three couplings on two blocks (the first and third on (0, 0), so the block groups are
    not in the couplings' order) at 3 x 6 pairs (nodes and their conjugates; two atoms, two
    clients, K = 2). Measured: 2.0e-14 relative (the brute force's own rounding: the
    previous route, one solve for Y with every coupling's right-hand side, 2.1e-14)."""
    pen = PEN
    path = list(40.0 * np.geomspace(1.0, 1e-3, 12)) + [0.0]
    _, C, G = pen.solve(lambda y: Z + 1j * y, path)
    one1, one2 = (C, G), pen.conj_join((C, G))
    rng = np.random.default_rng(5)
    cps = [(np.array([0.3, -0.2]), rng.standard_normal((2, pen.n)),
            rng.standard_normal((2, pen.n)), (0, 0)),
           (np.array([0.5]), rng.standard_normal((1, pen.n)), rng.standard_normal((1, pen.n)),
            (pen.rows[1, 0], 0)),
           (np.array([1.0]), rng.standard_normal((1, pen.n)), rng.standard_normal((1, pen.n)),
            (0, 0))]
    got = pen.two_point(one1, one2, cps)
    want = np.array([[[_pair(pen, one1[0][u], one1[1][u], one2[0][v], one2[1][v], f)
                       for v in range(2 * Z.size)] for u in range(Z.size)] for f in cps])
    assert np.max(np.abs(got - want.transpose(0, 3, 1, 2))) <= 1e-12 * np.max(np.abs(want))


def test_symmetric_pairs_mirror_the_pair_by_pair_solve():
    """``two_point(symmetric=True)``: the pairs (u, v), (u, conj v) with v >= u solved, the
    others copied from their mirrors, against the brute force at every pair. Couplings on
    the diagonal blocks (0, 0) and (r, r), each with its W and V swapped as its mirror (tau(Sigma
    X^T) = tau(Sigma X): H_(W, V)(z1, z2) = H_(V, W)(z2, z1)), and one with W = V its own; four
    nodes, so the chunks of rows (at most a quarter of them here) leave pairs v < u to copy.
    Measured: 2.0e-14 relative, as every pair solved; 1.7e-2 with each coupling its own
    mirror."""
    pen = PEN
    z = np.concatenate([Z, [0.5 + 0.2j]])
    path = list(40.0 * np.geomspace(1.0, 1e-3, 12)) + [0.0]
    _, C, G = pen.solve(lambda y: z + 1j * y, path)
    one1, one2 = (C, G), pen.conj_join((C, G))
    rng = np.random.default_rng(7)
    r = pen.rows[1, 0]
    W, V, U = (rng.standard_normal((2, pen.n)) for _ in range(3))
    c = np.array([0.3, -0.2])
    cps = [(c, W, V, (0, 0)), (c, V, W, (0, 0)), (c, U, U, (r, r)), (c, W, V, (r, r)),
           (c, V, W, (r, r))]
    got = pen.two_point(one1, one2, cps, symmetric=True, mirror=[1, 0, 2, 4, 3])
    want = np.array([[[_pair(pen, one1[0][u], one1[1][u], one2[0][v], one2[1][v], f)
                       for v in range(2 * z.size)] for u in range(z.size)] for f in cps])
    assert np.max(np.abs(got - want.transpose(0, 3, 1, 2))) <= 1e-12 * np.max(np.abs(want))
