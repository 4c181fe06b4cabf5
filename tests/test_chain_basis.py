"""The chain route's solves in the eigenbasis of the local steps (``sigma.chain_basis``) against
independent routes: Newton's systems against the dense Jacobian of ``sigma_pencil`` (dense
(M K^2) x (M K^2) matrix, numpy's solve), and the two-point systems against the same systems
solved by GMRES in the original coordinates (the route of the previous release, kept as the
fallback: forced here for every system)."""

import numpy as np

from riskcalc.linear.dynamics.sigma import sigma_chain
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

Z = np.array([0.9 + 0.4j, 0.25 + 0.05j, 1.6 + 0.3j, 0.05 + 0.2j])
ARGS = (np.array([0.4, 1.0, 2.5]), np.array([0.2, 0.5, 0.3]), np.array([0.5, 2.0]),
        np.array([0.4, 0.6]), 0.1, 4)


def _solved():
    chain = ChainPencil(*ARGS)
    path = list(40.0 * np.geomspace(1.0, 1e-3, 14)) + [0.0]
    return chain, chain.solve(lambda y: Z + 1j * y, path)


def test_newton_steps_in_the_eigenbasis_equal_the_dense_jacobian_solve():
    """(I - J)^-1 rhs at four nodes (three atoms, two clients, K = 4: 32 unknowns): the
    eigenbasis solve (its reduced system of 48 unknowns solved directly by ``gmres`` at this
    size, to a residual 1e-13) against numpy's solve with ``SigmaPencil._jacobian``.
    Measured: 4.2e-14 relative (8.8e-14 by GMRES; I - J is well conditioned, eigenvalues
    about 0.2..1.3)."""
    chain, (tau, C, G) = _solved()
    dense = SigmaPencil(*ARGS)
    rhs = np.random.default_rng(3).standard_normal(tau.shape) * (1 + 0.5j)
    got = chain._newton(chain._factors(C, G), rhs, tol=1e-13)
    jac = dense._jacobian(C, dense.ghat(Z, C))
    want = np.linalg.solve(jac, rhs.reshape(Z.size, -1, 1)).reshape(rhs.shape)
    assert np.max(np.abs(got - want)) <= 1e-11 * np.max(np.abs(want))


def test_two_point_in_the_eigenbasis_equals_the_solve_in_x(monkeypatch):
    """Both couplings at every pair of the four nodes and their conjugates: the eigenbasis
    solve against GMRES in the original coordinates (every system sent to the fallback by a
    zero residual allowance). Measured: 1.7e-15 relative (3e-15 against the dense pencil)."""
    chain, (_, C, G) = _solved()
    M, eta = chain.M, chain.eta
    v = np.zeros((M, chain.n))
    v[:, 0], v[np.arange(M), chain.rows[:, -1]] = 1.0, -1.0
    wn = np.zeros((M, chain.n))
    wn[:, 0] = eta
    for j in range(M):
        wn[j, chain.rows[j, :-1]] = eta
    cp = [(np.array([0.1, 0.3]), v, v), (np.array([0.2, 0.05]), wn, v)]
    new = chain.two_point((C, G), chain.conj_join((C, G)), cp)
    monkeypatch.setattr(sigma_chain, "_RESIDUAL", 0.0)
    old = chain.two_point((C, G), chain.conj_join((C, G)), cp)
    assert np.max(np.abs(new - old)) <= 1e-11 * np.max(np.abs(old))


def test_residual_bound_spares_the_product_in_x(monkeypatch):
    """The residual of X = S_v^T W S_u bounded from W's residual and the singular values of S
    (``sigma_chain.ChainPencil.two_point``): on this well-conditioned case no system needs the
    O(M K^3) check in X, and the values equal those of the check forced for every system
    (``_RESIDUAL`` = 0 sends each to GMRES in X). Measured: 1.7e-15 relative."""
    chain, (_, C, G) = _solved()
    M = chain.M
    v = np.zeros((M, chain.n))
    v[:, 0], v[np.arange(M), chain.rows[:, -1]] = 1.0, -1.0
    cp = [(np.array([0.1, 0.3]), v, v)]
    checked, check = [], ChainPencil._check_in_x
    monkeypatch.setattr(ChainPencil, "_check_in_x",
                        lambda self, idx, *a: checked.append(idx.size) or check(self, idx, *a))
    new = chain.two_point((C, G), chain.conj_join((C, G)), cp)
    assert checked == []
    monkeypatch.setattr(sigma_chain, "_RESIDUAL", 0.0)
    old = chain.two_point((C, G), chain.conj_join((C, G)), cp)
    assert sum(checked) == Z.size * 2 * Z.size
    assert np.max(np.abs(new - old)) <= 1e-11 * np.max(np.abs(old))


def test_gmres_direct_and_krylov_routes_against_numpy_solve():
    """``chain_basis.gmres`` on batches of random complex systems (3 I plus a random matrix of
    spectral radius about 1.4): the direct route (its matrices formed from the products on
    unit vectors: n = 6 at P = 200, n = 40 at P = 5), the Krylov route (n = 70, and
    ``_krylov`` itself on the same batches), and a singular system in the batch (the direct
    route's LU fails, GMRES keeps the others and says ok False for it), each against numpy's
    solve; the products each route takes."""
    from riskcalc.linear.dynamics.sigma import chain_basis as cb
    rng = np.random.default_rng(11)
    for P, n in ((200, 6), (5, 40), (3, 70)):
        A = np.eye(n) * 3 + (rng.standard_normal((P, n, n))
                             + 1j * rng.standard_normal((P, n, n))) / np.sqrt(n)
        b = rng.standard_normal((P, n)) + 1j * rng.standard_normal((P, n))
        if n == 40:
            A[1] = 0.0
            A[1, :, 0] = 1.0                  # rank one: no solution for b[1]
        calls = []

        def apply(x, idx, A=A):
            calls.append(x.shape[0])
            return (A[idx] @ x[..., None])[..., 0]
        good = np.setdiff1d(np.arange(P), [1] if n == 40 else [])
        want = np.linalg.solve(A[good], b[good, :, None])[..., 0]
        scale = np.max(np.abs(want)) * np.linalg.cond(A[good]).max()
        for solve in (cb.gmres, lambda f, v: cb._krylov(f, v, cb._GMRES_TOL, cb._KRYLOV)):
            calls.clear()
            x, ok = solve(apply, b)
            assert np.array_equal(np.flatnonzero(ok), good)
            assert np.max(np.abs(x[good] - want)) <= 1e-12 * scale
            if solve is cb.gmres and n == 6:       # direct: 3 groups of 85 systems, a check
                assert calls == [510, 510, 180, 200]
            elif solve is cb.gmres and n == 40:    # LU fails: Krylov, every product P rows
                assert calls[0] == 200 and max(calls[1:]) <= P
            elif solve is cb.gmres:
                assert max(calls) <= P
    # The first restart's residual at x = 0 is b itself: the identity takes one Arnoldi
    # product and the check at the next restart.
    calls.clear()
    x, ok = cb._krylov(lambda v, idx: calls.append(v.shape[0]) or v, b, cb._GMRES_TOL, 8)
    assert ok.all() and np.allclose(x, b, rtol=1e-14, atol=0) and calls == [P, P]
