"""The general linear-pencil engine (riskcalc.linear.engine.block_pencil) against independent routes:
triangular chains (resolvent_chain), the Marchenko-Pastur quadrature of a cubic filter
(Sigma = I), exact gamma = 0 values, and direct simulation with a two-point spectrum."""

import numpy as np
import pytest

from riskcalc.errors import SolverError
from riskcalc.linear.engine import block_pencil as bp
from riskcalc.linear.engine import pencil_assembly as pa
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.engine.resolvent_chain import chain_trace, diagonal_roots

S2, H2 = np.array([1.0, 4.0]), np.array([0.5, 0.5])


def companion(s, p, alpha, t):
    """E, Lhat of the companion pencil of (t + p s (1 - alpha s)^2)^-1."""
    E = np.diag([1.0, 1.0, alpha ** 2 * p])
    L = np.zeros((s.size, 3, 3))
    L[:, 0, 1] = L[:, 1, 2] = -1.0
    L[:, 2, 0], L[:, 2, 1], L[:, 2, 2] = t, p, -2 * alpha * p
    return E, L


@pytest.mark.parametrize("gamma", [1.3, 2.5])
def test_triangular_chain_matches_resolvent_chain(gamma):
    """A ridge residual, a middle, a projection and a closing middle: the (1, 2) block of a
    2 x 2 upper triangular pencil, assembled from solved diagonal blocks."""
    lam, m1 = 0.5, np.array([1.3, 0.7])
    ref = chain_trace(gamma, S2, H2, [lam, 0.0], np.ones((2, 2)), np.array([m1, S2]))
    pen = pa.Pencil(gamma, S2, H2)
    c = float(diagonal_roots(gamma, S2, H2, lam, np.ones(2)))
    i0 = pen.block([[1 / lam]], np.ones((2, 1, 1)), [1.0], [[H2 @ (S2 / (c * S2 + 1))]])
    i1 = pen.projection()
    pen.couple(i0, i1, lhat=-m1)
    sol = pen.solve()
    assert H2 @ (S2 * sol.conditional(i0, i1)) == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_companion_identity_matches_marchenko_pastur(gamma):
    """Sigma = I: E_D[K] = tau((t + p phi(S))^-1) and its derivative in t, -tau(K^2), by
    Marchenko-Pastur quadrature of the cubic filter."""
    p, alpha, t = 0.3, 0.05, 0.4
    one = np.ones(1)
    sol = pa.continuation(gamma, one, one, *companion(one, p, alpha, t))
    ref, ref2 = mp_expect(np.array([gamma]), lambda x: (
        1 / (t + p * x * (1 - alpha * x) ** 2), 1 / (t + p * x * (1 - alpha * x) ** 2) ** 2))
    assert sol.Q[0, 0, 2] == pytest.approx(ref[0], rel=1e-10)
    dG = bp.local_response(sol, (2, 0), (0, 2))
    assert dG[0, 0] == pytest.approx(-ref2[0], rel=1e-9)


def test_companion_linear_filter_matches_generalized_resolvent():
    """alpha = 0: K = (t + p S)^-1 = (S / eta + Lam)^-1 with eta = 1 / p, Lam = t, a
    generalized resolvent of resolvent_chain (a Sigma-dependent shift)."""
    gamma, p, t = 1.7, 0.4, np.array([0.3, 1.2])
    sol = pa.continuation(gamma, S2, H2, *companion(S2, p, 0.0, t))
    for mid in (np.ones(2), S2):
        ref = chain_trace(gamma, S2, H2, [1 / p], t[None], mid[None])
        assert H2 @ (mid * sol.Q[:, 0, 2]) == pytest.approx(ref, rel=1e-10)


def test_gamma_zero_is_exact():
    """gamma -> 0: S = Sigma, so E_D[K] = 1 / (t + p phi(s)) at each atom."""
    p, alpha, t = 0.3, 0.1, np.array([0.2, 0.5])
    sol = bp.solve(1e-12, S2, H2, *companion(S2, p, alpha, t))
    np.testing.assert_allclose(sol.Q[:, 0, 2], 1 / (t + p * S2 * (1 - alpha * S2) ** 2),
                               rtol=1e-9)


def test_local_response_is_the_derivative():
    """-dG/dt_a by central differences of G (the response solves the linearized fixed point)."""
    gamma, p, alpha = 1.5, 0.3, 0.05
    t = np.array([0.4, 1.1])
    sol = pa.continuation(gamma, S2, H2, *companion(S2, p, alpha, t))
    jac = bp.local_response(sol, (2, 0), (0, 2))
    eps = 1e-5
    for a in range(2):
        dt = np.zeros(2)
        dt[a] = eps
        up = bp.solve(gamma, S2, H2, *companion(S2, p, alpha, t + dt), T0=sol.T).Q[:, 0, 2]
        dn = bp.solve(gamma, S2, H2, *companion(S2, p, alpha, t - dt), T0=sol.T).Q[:, 0, 2]
        np.testing.assert_allclose(jac[:, a], (up - dn) / (2 * eps), rtol=1e-6, atol=1e-9)


def test_companion_two_point_matches_simulation():
    """E_D[(t + p S (1 - alpha S)^2)^-1] with a two-point spectrum and a shift that differs
    between the eigenspaces, against d = 800 sample covariances (two replicates): the
    deterministic equivalent is off by O(1/d) and each atom's average by O(d^-1), far inside
    1%."""
    gamma, p, alpha = 1.5, 0.3, 0.05
    t = np.array([0.4, 1.1])
    sol = pa.continuation(gamma, S2, H2, *companion(S2, p, alpha, t))
    rng = np.random.default_rng(np.random.SeedSequence(2026))
    d = 800
    n = int(d / gamma)
    sig, tt = np.repeat(S2, d // 2), np.repeat(t, d // 2)
    sims = []
    for _ in range(2):
        X = rng.standard_normal((n, d)) * np.sqrt(sig)
        S = X.T @ X / n
        R = np.eye(d) - alpha * S
        K = np.diag(np.linalg.inv(np.diag(tt) + p * S @ R @ R))
        sims.append([K[:d // 2].mean(), K[d // 2:].mean()])
    np.testing.assert_allclose(np.mean(sims, axis=0), sol.Q[:, 0, 2], rtol=0.01)


def test_singular_pencil_raises():
    """A pencil with no inverse (a zero row) ends in SolverError, not garbage."""
    L = np.zeros((2, 2, 2))
    L[:, 0, 0] = 1.0
    with pytest.raises(SolverError, match="did not converge"):
        bp.solve(1.5, S2, H2, np.zeros((2, 2)), L)
