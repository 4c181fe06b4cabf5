"""The pair solves of the chain routes under a spectrum as made cheaper for issue 29's corners
(``sigma.chain_basis``, ``sigma_chain.ChainPencil.two_point``, ``sigma.algorithm1.basis``)
against independent routes on small cases: FedAvg's two-point functions against the dense
pencil (``sigma_pencil``: (M K^2) x (M K^2) solves), with chunks of one pair and the check in X
split into chunks of one system; the exact residual stage of ``unsure_systems`` against the
residual formed in X by brute force; Algorithm 1's right-hand sides and outputs read in the
eigenbasis against every system solved in X (GMRES with the product in the original
unknowns) and against the route with no basis at all (a singular basis: P = I)."""

import numpy as np

from riskcalc.linear.dynamics.sigma import chain_basis, sigma_chain
from riskcalc.linear.dynamics.sigma.algorithm1 import basis
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil
from tests.test_rounds_sigma_alg1_basis import _solved as alg1_solved
from tests.test_rounds_sigma_kbig import _couplings as kbig_couplings

Z = np.array([0.9 + 0.4j, 0.25 + 0.05j, 1.6 + 0.3j, 0.05 + 0.2j])
ARGS = (np.array([0.4, 1.0, 2.5]), np.array([0.2, 0.5, 0.3]), np.array([0.5, 2.0]),
        np.array([0.4, 0.6]), 0.1, 4)


def _couplings(pen):
    """FedAvg's two couplings (``tests/test_rounds_sigma_kbig``'s) with weights (0.1, 0.3) and
    (0.2, 0.05)."""
    return kbig_couplings(pen, np.ones(2), np.sqrt([0.1, 0.3]), np.sqrt([0.2, 0.05]), np.ones(2))


def test_fedavg_pairs_in_small_chunks_equal_the_dense_pencil(monkeypatch):
    """Both couplings at the pairs of four nodes and their conjugates (symmetric: half solved),
    chunks of one pair (``_CHUNK_BYTES`` = 1) and every system sent through the check in X in
    chunks of one (``_RESIDUAL`` = 0), against the dense pencil's two-point solve (numpy's
    solve on 32 unknowns per pair). GMRES stops at 1e-13 of the right-hand side and the values
    are O(1): 1e-10 relative to the largest holds with room (measured 3e-15)."""
    chain, dense = ChainPencil(*ARGS), SigmaPencil(*ARGS)
    path = list(40.0 * np.geomspace(1.0, 1e-3, 14)) + [0.0]
    _, C, G = chain.solve(lambda y: Z + 1j * y, path)
    _, Cd, Gd = dense.solve(lambda y: Z + 1j * y, path)
    cp = _couplings(chain)
    want = dense.two_point((Cd, Gd), dense.conj_join((Cd, Gd)), cp)
    fast = chain.two_point((C, G), chain.conj_join((C, G)), cp, symmetric=True)
    checked, check = [], ChainPencil._check_in_x
    monkeypatch.setattr(ChainPencil, "_check_in_x",
                        lambda self, idx, *a: checked.append(idx.size) or check(self, idx, *a))
    monkeypatch.setattr(sigma_chain, "_CHUNK_BYTES", 1.0)
    monkeypatch.setattr(sigma_chain, "_RESIDUAL", 0.0)
    small = chain.two_point((C, G), chain.conj_join((C, G)), cp, symmetric=True)
    pairs = Z.size * (Z.size + 1)
    assert checked == [1] * (2 * pairs)
    for got in (fast, small):
        assert np.max(np.abs(got - want)) <= 1e-10 * np.max(np.abs(want))


def test_exact_residual_stage_against_the_residual_in_x():
    """``unsure_systems``: with ill-conditioned bases S (singular values 1e-3..1e3) the
    singular-value bound misses for every system, and the systems it returns are exactly those
    whose residual S_v^T R_W S_u, formed here per system, exceeds 1e-10 times S_v^T C~ S_u's
    norm (residuals scaled so that both outcomes occur)."""
    rng = np.random.default_rng(5)
    N, M, K, S = 3, 2, 5, 12

    def basis_at():
        Q1, _ = np.linalg.qr(rng.normal(size=(N, M, K, K)))
        Q2, _ = np.linalg.qr(rng.normal(size=(N, M, K, K)))
        return Q1 * np.geomspace(1e-3, 1e3, K)[None, None, None, :] @ Q2
    Sv, Su = basis_at(), basis_at()
    sv = [np.linalg.svd(x, compute_uv=False) for x in (Sv, Su)]
    nv, nu = rng.integers(0, N, S), rng.integers(0, N, S)
    C = rng.normal(size=(S, M, K, K)) + 1j * rng.normal(size=(S, M, K, K))
    Rw = (rng.normal(size=(S, M, K, K)) + 1j * rng.normal(size=(S, M, K, K))) \
        * np.geomspace(1e-16, 1e-8, S)[:, None, None, None]
    got = chain_basis.unsure_systems(Rw, C, (sv[0][..., 0], sv[0][..., -1], Sv, nv),
                                     (sv[1][..., 0], sv[1][..., -1], Su, nu), 1e-10)
    rx = [np.linalg.norm(Sv[nv[i]].swapaxes(-1, -2) @ Rw[i] @ Su[nu[i]]) for i in range(S)]
    cx = [np.linalg.norm(Sv[nv[i]].swapaxes(-1, -2) @ C[i] @ Su[nu[i]]) for i in range(S)]
    want = np.flatnonzero(np.array(rx) > 1e-10 * np.array(cx))
    assert 0 < want.size < S
    np.testing.assert_array_equal(got, want)


def test_alg1_pairs_in_the_basis_equal_x_and_no_basis(monkeypatch):
    """Algorithm 1's chain (``tests/test_rounds_sigma_alg1_basis``'s case: M = 3, K = 4,
    four nodes, three couplings): the two-point functions with right-hand sides formed from
    vectors transformed at each node and outputs read in W (``basis.in_basis``,
    ``basis.bilinear``) against every system solved again in X (its right-hand side in X,
    GMRES with the product there, its outputs read in X: ``basis.outputs``) and against no basis at
    all (``eigenbasis`` raising: P = I, every system in X). 1e-10 relative (measured 4e-14)."""
    _, H = alg1_solved()
    solve = basis.solve_pairs

    def in_x(*a, **k):
        W, _ = solve(*a, **k)
        return W, np.arange(W.shape[0])
    monkeypatch.setattr(basis, "solve_pairs", in_x)
    _, H_x = alg1_solved()
    monkeypatch.undo()

    def singular(*a, **k):
        raise np.linalg.LinAlgError("Singular matrix")
    monkeypatch.setattr(basis, "eigenbasis", singular)
    _, H_none = alg1_solved()
    for other in (H_x, H_none):
        assert np.max(np.abs(H - other)) <= 1e-10 * np.max(np.abs(other))


def test_products_against_einsum():
    """``rows_product`` and ``bilinear_sum`` (matrix products) against the einsums they
    replace, on random complex arrays: equal to rounding."""
    rng = np.random.default_rng(2)

    def r(*shape):
        return rng.normal(size=shape) + 1j * rng.normal(size=shape)
    L, R = r(3, 2, 4, 5, 6), r(3, 2, 4, 5, 6)
    want = np.einsum("pamjx,pamjy->pjxy", L, R)
    assert np.max(np.abs(chain_basis.rows_product(L, R) - want)) <= 1e-13 * np.abs(want).max()
    gam, q2, W, q1 = rng.uniform(size=5), r(3, 2, 5, 6), r(3, 5, 6, 6), r(3, 2, 5, 6)
    want = np.einsum("m,pamk,pmkl,paml->pa", gam, q2, W, q1)
    got = chain_basis.bilinear_sum(gam, q2, W, q1)
    assert np.max(np.abs(got - want)) <= 1e-13 * np.abs(want).max()
    e2, f2, e1, f1 = r(3, 2, 5, 6), r(3, 2, 5, 6), r(3, 2, 5, 6), r(3, 2, 5, 6)
    got = basis.bilinear(e2, f2, W, e1, f1)
    for g, (a, b) in zip(got, ((e2, e1), (f2, f1), (f2, e1), (e2, f1))):
        want = np.einsum("pamk,pmkl,paml->pam", a, W, b)
        assert np.max(np.abs(g - want)) <= 1e-13 * np.abs(want).max()
