"""Algorithm 1's chain pencil solved in the eigenbasis of its local steps
(``riskcalc.linear.dynamics.sigma.algorithm1.basis``) against the same pencil solved in the
original unknowns (GMRES with ``sigma_chain``'s product, the route before the basis and still
its fallback): the factorization of step 1, and the fixed point and two-point functions at
nodes around the spectrum with every two-point system, or every Newton step, sent to the
original unknowns. The whole curves through this basis are checked against the dense pencil
(an independent route) in ``tests/test_rounds_sigma_alg1_routes.py``."""

import numpy as np
import pytest

from riskcalc.linear.dynamics.sigma.algorithm1 import basis
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
# The federation of the routes' test, whose curves this file's solves feed.
from tests.test_rounds_sigma_alg1_routes import GAM, L, P, R, SIG, SPEC


def test_one_basis_diagonalizes_every_atom():
    """Step 1 (Woodbury): Ghat[cols, rows](s) Chat = P diag(lam / (1 + s lam)) P^-1 for every
    atom, at complex nodes and a random complex Chat (K = 4, three atoms). Both sides are
    products of K x K inverses of matrices with entries O(1): 1e-10 relative holds with room
    (measured 4e-15 on the ghat side)."""
    rng = np.random.default_rng(3)
    pen = Alg1Chain([0.5, 1.0, 3.0], [0.2, 0.3, 0.5], GAM, P, 0.8, 0.1, 4, 1.0)
    x = np.array([0.3 + 0.4j, -0.2 + 1.5j])
    C = 0.3 * (rng.normal(size=(2, 3, 4, 4)) + 1j * rng.normal(size=(2, 3, 4, 4)))
    G = pen.ghat(x, C)
    Pm, Pinv, D = basis.eigenbasis(pen, G, C)
    rebuilt = (Pm[:, None] * D[..., None, :]) @ Pinv[:, None]
    np.testing.assert_allclose(rebuilt, G["A"], rtol=0, atol=1e-10 * np.abs(G["A"]).max())


def _solved():
    """Algorithm 1's chain pencil (M = 3, K = 4, two atoms, lam = 0.8, eta at 0.9 of Thm 2's
    bound, g lam = 1) solved at four nodes around the spectrum (``chain_parts``' path from far
    above), and its two-point functions there with ``chain_parts``' three couplings."""
    K = 4
    pen = Alg1Chain(SPEC.atoms, SPEC.weights, GAM, P, 0.8, 0.9 / (L + 0.8), K, 1.25)
    z = np.array([1.3 + 0.4j, 0.6 + 0.3j, 0.1 + 0.5j, -0.4 + 0.2j])
    path = list(4.0 * np.geomspace(1.0, 1e-3 * 0.2 / 4.0, 24)) + [0.0]
    tau, C, G = pen.solve(lambda y: z + 1j * y, path)
    nb, M = pen.nb, GAM.size
    cf, au = np.zeros((M, nb)), np.zeros((M, nb))
    cf[:, pen.lr] = -0.1
    au[:, 1], au[:, pen.lr[:-1]], au[:, pen.lr[-1]] = 1.0, 0.08, -0.9
    c_th = np.zeros(pen.n)
    c_th[0], c_th[1 + nb * np.arange(M)] = -1.0, -1.0
    couplings = [[(R ** 2, au, au, False)],
                 [(SIG ** 2, au, cf, False), (SIG ** 2, cf, au, False)],
                 [([1.0], c_th, c_th, True)]]
    return tau, pen.two_point((C, G), couplings)


@pytest.fixture(scope="module")
def eigen():
    """``_solved`` with a record of the systems the basis left to X: none, or a broken basis
    would pass the comparisons below through its fallback."""
    solve, newton, left = basis.solve_pairs, basis.newton, []

    def pairs(*a, **k):
        X, unsure = solve(*a, **k)
        left.append(unsure.size)
        return X, unsure

    def steps(*a, **k):
        X, ok = newton(*a, **k)
        left.append(int(np.sum(~ok)))
        return X, ok
    basis.solve_pairs, basis.newton = pairs, steps
    try:
        out = _solved()
    finally:
        basis.solve_pairs, basis.newton = solve, newton
    assert len(left) > 30 and sum(left) == 0
    return out


def test_two_point_systems_in_the_basis_equal_those_in_x(eigen, monkeypatch):
    """Every two-point system solved again in X (``solve_pairs``' ``unsure`` set to all of
    them). GMRES stops at 1e-13 of the right-hand side in both routes and the values are O(1)
    sums of O(1) products: 1e-10 relative to the largest holds with room (measured 4e-14 on
    whole curves, M = 3, K = 20)."""
    solve = basis.solve_pairs

    def in_x(*a, **k):
        X, _ = solve(*a, **k)
        return X, np.arange(X.shape[0])
    monkeypatch.setattr(basis, "solve_pairs", in_x)
    _, H_x = _solved()
    _, H = eigen
    np.testing.assert_allclose(H, H_x, rtol=0, atol=1e-10 * np.abs(H_x).max())


def test_newton_steps_in_the_basis_equal_those_in_x(eigen, monkeypatch):
    """Every Newton (and predictor) step sent to GMRES in X (``basis.newton`` reporting failure
    everywhere): the same fixed points to Newton's tolerance 1e-12 (1 + abs(tau))."""
    newton = basis.newton

    def failing(*a, **k):
        X, ok = newton(*a, **k)
        return X, np.zeros_like(ok)
    monkeypatch.setattr(basis, "newton", failing)
    tau_x, _ = _solved()
    tau, _ = eigen
    np.testing.assert_allclose(tau, tau_x, rtol=0, atol=1e-10 * (1.0 + np.abs(tau_x).max()))


def test_a_singular_basis_falls_back_to_x(eigen, monkeypatch):
    """A singular Chat or P (``numpy.linalg.LinAlgError`` from the basis) sends the batch's
    Newton steps and two-point systems to the original unknowns: the same values."""
    def singular(*a, **k):
        raise np.linalg.LinAlgError("Singular matrix")
    monkeypatch.setattr(basis, "eigenbasis", singular)
    tau_x, H_x = _solved()
    tau, H = eigen
    np.testing.assert_allclose(tau, tau_x, rtol=0, atol=1e-10 * (1.0 + np.abs(tau_x).max()))
    np.testing.assert_allclose(H, H_x, rtol=0, atol=1e-10 * np.abs(H_x).max())


def test_predictors_reuse_the_last_newton_factors(monkeypatch):
    """``Alg1Chain`` on ``chain_newton``'s Newton paths: each predictor solves with the
    eigenbasis of the node's last Newton step (``solve_arc`` hands it to the neighbour), so
    fewer node eigendecompositions (``basis.eigenbasis``) than the Newton-GMRES solves they
    serve (``basis.newton``; one each without the reuse: equal counts), and the arc's values
    equal every node followed down from far above (2 of 40 nodes down, the rest along the
    arc); Newton stops at 1e-12 (1 + abs(tau)): 1e-10 holds with room."""
    pen = Alg1Chain(SPEC.atoms, SPEC.weights, GAM, P, 0.8, 0.9 / (L + 0.8), 4, 1.25)
    theta = np.pi * (np.arange(40) + 0.5) / 40
    z = 0.45 + 0.9 * np.cos(theta) + 0.3j * np.sin(theta)
    ys = list(4.0 * np.geomspace(1.0, 1e-3 * 0.3 * np.sin(theta[0]) / 4.0, 24)) + [0.0]
    counts = {"eigenbasis": 0, "newton": 0}
    for name in counts:
        def counted(*a, _f=getattr(basis, name), _n=name, **k):
            counts[_n] += a[1]["z"].size if _n == "eigenbasis" else a[2].shape[0]
            return _f(*a, **k)
        monkeypatch.setattr(basis, name, counted)
    t2, _, G2 = pen.solve_arc(z, ys)
    assert counts["eigenbasis"] <= 0.8 * counts["newton"]
    monkeypatch.undo()
    t1, _, G1 = pen.solve(lambda y: z + 1j * y, ys)
    np.testing.assert_allclose(t2, t1, rtol=0, atol=1e-10 * (1.0 + np.abs(t1).max()))
    np.testing.assert_allclose(pen.column0(G2), pen.column0(G1), rtol=0,
                               atol=1e-10 * np.abs(pen.column0(G1)).max())
