"""Batched pencils (riskcalc.linear.engine.block_pencil on a leading batch axis), MAML-FL's
companion blocks solved as one batch and warm-started from the last solution
(riskcalc.linear.finite_clients.maml_sigma), and diagonal roots started from a guess
(riskcalc.linear.engine.resolvent_chain.diagonal_roots(guess=)): each against the same
quantity solved alone and cold (one pencil at a time, continuation from gamma = 0, the
bracketed root), and the batched derivative against central differences."""

import numpy as np
import pytest

from riskcalc import solvers
from riskcalc.errors import SolverError
from riskcalc.linear.engine import block_pencil as bp
from riskcalc.linear.engine import pencil_assembly as pa
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.resolvent_chain import diagonal_roots
from riskcalc.linear.finite_clients import maml_sigma

H2 = np.array([0.5, 0.5])
# Per member: gamma, p, alpha, the shifts t at the two atoms, the member's own eigenvalues.
MEMBERS = [(1.5, 0.3, 0.05, [0.4, 1.1], [1.0, 4.0]), (0.7, 0.1, 0.2, [0.2, 0.3], [4.0, 1.0]),
           (3.0, 0.6, 0.1, [1.3, 0.5], [2.0, 2.0]), (1.1, 0.05, 0.0, [0.6, 0.6], [1.0, 4.0])]


def companion(s, p, alpha, t):
    """E, Lhat of the companion pencil of (t + p s (1 - alpha s)^2)^-1."""
    E = np.diag([1.0, 1.0, alpha ** 2 * p])
    L = np.zeros((s.size, 3, 3))
    L[:, 0, 1] = L[:, 1, 2] = -1.0
    L[:, 2, 0], L[:, 2, 1], L[:, 2, 2] = t, p, -2 * alpha * p
    return E, L


def batch():
    g = np.array([m[0] for m in MEMBERS])
    s = np.array([m[4] for m in MEMBERS], dtype=float)
    E, L = zip(*(companion(np.array(m[4], float), m[1], m[2], np.array(m[3])) for m in MEMBERS))
    return g, s, np.array(E), np.array(L)


def test_batch_equals_one_at_a_time():
    """continuation, local_response and an assembled Pencil (companion, projection row,
    couplings) of a batch: each member as solved alone (the members converge in different
    numbers of steps; each stops at its own tolerance)."""
    g, s, E, L = batch()
    sol = pa.continuation(g, s, H2, E, L)
    resp = bp.local_response(sol, (2, 0), (0, 2))
    live = g > 1
    pen = pa.Pencil(g[live], s[live], H2)
    k1, j1 = pen.solved(sol.take(live), E[live], L[live]), pen.projection()
    pen.couple(k1 + 2, j1, lhat=-s[live])
    chain = pen.solve()
    for b in range(len(MEMBERS)):
        one = pa.continuation(g[b], s[b], H2, E[b], L[b])
        np.testing.assert_allclose(sol.T[b], one.T, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(sol.Q[b], one.Q, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(resp[b], bp.local_response(one, (2, 0), (0, 2)),
                                   rtol=1e-12, atol=1e-15)
        if live[b]:
            alone = pa.Pencil(g[b], s[b], H2)
            a1, a2 = alone.solved(one, E[b], L[b]), alone.projection()
            alone.couple(a1 + 2, a2, lhat=-s[b])
            i = int(np.flatnonzero(np.flatnonzero(live) == b)[0])
            assert chain.trace(k1, j1)[i] == pytest.approx(alone.solve().trace(a1, a2),
                                                            rel=1e-12)


def test_batched_response_is_the_derivative():
    """-dG/dt_a of every member by central differences of batched solves."""
    g, s, E, L = batch()
    sol = pa.continuation(g, s, H2, E, L)
    jac = bp.local_response(sol, (2, 0), (0, 2))
    eps = 1e-5
    for a in range(2):
        up, dn = L.copy(), L.copy()
        up[:, a, 2, 0] += eps
        dn[:, a, 2, 0] -= eps
        Gu = bp.solve(g, s, H2, E, up, T0=sol.T).Q[:, :, 0, 2]
        Gd = bp.solve(g, s, H2, E, dn, T0=sol.T).Q[:, :, 0, 2]
        np.testing.assert_allclose(jac[:, :, a], (Gu - Gd) / (2 * eps), rtol=1e-6, atol=1e-9)


def test_one_singular_member_raises():
    """A batch with one pencil that has no inverse ends in SolverError naming its gamma, not
    garbage; without it the others solve."""
    g, s, E, L = batch()
    L = L.copy()
    E = E.copy()
    E[2], L[2] = 0.0, 0.0
    L[2, :, 0, 0] = 1.0
    with pytest.raises(SolverError, match="did not converge .gamma = 3"):
        bp.solve(g, s, H2, E, L)
    keep = [0, 1, 3]
    assert np.all(np.isfinite(bp.solve(g[keep], s[keep], H2, E[keep], L[keep]).T))


def shift_case():
    joint = joint_spectrum(["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"], 100)
    gam = np.array([1.5, 0.7, 2.5, 3.0, 1.2, 0.9])
    r = np.array([1.0, 0.5, 1.2, 0.8, 1.5, 0.3])
    sigma = np.array([0.5, 0.3, 0.4, 1.0, 0.2, 0.7])
    return gam, r, sigma, np.ones(6), joint, np.arange(6) % 3


def test_maml_warm_start_equals_cold():
    """MAML-FL under covariate shift at weights and alpha reached from another solution (the
    optimal weights' and the tuning's successive calls) equals the same limits solved from
    alpha = 0 (no last solution)."""
    gam, r, sigma, count, joint, typ = shift_case()
    w = np.array([0.1, 0.25, 0.15, 0.2, 0.2, 0.1])
    maml_sigma._LAST.clear()
    maml_sigma.maml_shift_group_limits(gam, r, sigma, count, 0.05, "samples", joint, typ)
    assert maml_sigma._LAST                          # remembered for the next call
    warm = maml_sigma.maml_shift_group_limits(gam, r, sigma, count, 0.08, w, joint, typ)
    maml_sigma._LAST.clear()
    cold = maml_sigma.maml_shift_group_limits(gam, r, sigma, count, 0.08, w, joint, typ)
    np.testing.assert_allclose(warm, cold, rtol=1e-11, atol=1e-15)
    # The weights and alpha matter (the warm start did not return the last call's limits).
    maml_sigma._LAST.clear()
    first = maml_sigma.maml_shift_group_limits(gam, r, sigma, count, 0.05, "samples", joint,
                                               typ)
    assert np.max(np.abs(np.array(first) - np.array(cold))) > 1e-3


def test_diagonal_roots_from_a_guess():
    """Newton's iteration from nearby roots gives the bracketed roots (to the bracketed
    solve's 1e-12 stopping width) in a few steps; a guess far off, NaN or non-positive falls
    back to the bracketed solve."""
    rng = np.random.default_rng(np.random.SeedSequence(7))
    B = 40
    g = np.exp(rng.uniform(np.log(0.3), np.log(4.0), B))
    s = np.tile([1.0, 4.0], (B, 1))
    p = rng.dirichlet(np.ones(B))
    lam = rng.uniform(0.5, 2.0, (B, 2))
    cold = diagonal_roots(g, s, H2, 1.0 / p, lam)
    with solvers.record() as log:
        warm = diagonal_roots(g, s, H2, 1.0 / p, lam, guess=cold * (1 + 1e-3))
    np.testing.assert_allclose(warm, cold, rtol=5e-12)
    assert log["resolvent chain diagonal"]["iterations"] <= 5
    for bad in (cold * 1e6, np.full(B, np.nan), -cold):
        np.testing.assert_allclose(diagonal_roots(g, s, H2, 1.0 / p, lam, guess=bad), cold,
                                   rtol=5e-12)


def test_joint_measure_remembered_but_not_for_files(tmp_path):
    """The joint measure is remembered by its distinct spectra (the same arrays again, read
    only) but a file's is read again: a file changed between calls gives the new measure."""
    specs = ["two-point:1,4,0.5", "scaled:2", "two-point:1,4,0.5"]
    a, again = joint_spectrum(specs, 100), joint_spectrum(specs, 100)
    b = joint_spectrum(specs[1:], 100)                      # other types: another measure
    np.testing.assert_array_equal(a.types, [0, 1, 0])
    np.testing.assert_array_equal(b.types, [0, 1])
    assert again.values is a.values
    np.testing.assert_array_equal(a.values, b.values[::-1])
    with pytest.raises(ValueError):
        a.weights[0] = 1.0
    path = tmp_path / "eig.txt"
    path.write_text("1\n2\n3\n4\n")
    first = joint_spectrum([f"file:{path}", "scaled:1"])
    path.write_text("1\n1\n3\n3\n")
    second = joint_spectrum([f"file:{path}", "scaled:1"])
    np.testing.assert_array_equal(np.unique(first.values[0]), [1, 2, 3, 4])
    np.testing.assert_array_equal(np.unique(second.values[0]), [1, 3])


def test_triangular_unknowns_are_the_full_newton():
    """An assembled block upper triangular Pencil (companion, projection row, companion,
    chained) moves only T's blocks on and above the diagonal: the same fixed point, and the
    same complex step (``real=``), as Newton's iteration on every entry of the same arrays."""
    g, s, E, L = batch()
    live = g > 1
    sol = pa.continuation(g, s, H2, E, L).take(live)
    g, s, E, L = g[live], s[live], E[live], L[live]
    tp = pa.projection_trace(g, s, H2)

    def assembled(L2):
        pen = pa.Pencil(g, s, H2)
        k1, j1, k2 = pen.solved(sol, E, L2), pen.projection(tp), pen.solved(sol, E, L2)
        pen.couple(k1 + 2, j1, lhat=-s)
        pen.couple(j1, k2, lhat=-1.0)
        return pen

    tri = assembled(L).solve()
    assert tri.unknowns is not None and tri.unknowns.size == 9 + 3 + 9 + 1 + 3 + 9
    B, n = g.size, H2.size
    Ef, Lf, T0 = np.zeros((B, 7, 7)), np.zeros((B, n, 7, 7)), np.zeros((B, 7, 7))
    for a, b in ((0, 3), (4, 7)):
        Ef[:, a:b, a:b], Lf[:, :, a:b, a:b], T0[:, a:b, a:b] = E, L, sol.T
    Ef[:, 3, 3], Lf[:, :, 3, 3], T0[:, 3, 3] = 1.0, 1.0, tp
    Lf[:, :, 2, 3] -= s
    Lf[:, :, 3, 4] -= 1.0
    delta = np.array([1, 1, 1, 0, 1, 1, 1.0])
    full = bp.solve(g, s, H2, Ef, Lf, delta, T0)
    assert full.unknowns is None
    # (the assembled pencil is solved one level at a time: entries that vanish to rounding,
    # ~1e-14 against T's O(1), differ in their rounding)
    np.testing.assert_allclose(tri.T, full.T, rtol=1e-12, atol=5e-14)
    # A complex step of the companions' shift entry from each real solution.
    Lc = L.astype(complex)
    Lc[:, :, 2, 0] += 1e-30j
    step = assembled(Lc).solve(real=tri)
    Lfc = Lf.astype(complex)
    Lfc[:, :, 2, 0] += 1e-30j
    Lfc[:, :, 6, 4] += 1e-30j
    ref = bp.solve(g, s, H2, Ef, Lfc, delta, T0, real=full)
    np.testing.assert_allclose(step.T.real, ref.T.real, rtol=1e-12, atol=5e-14)
    # (the full iteration leaves rounding, ~1e-15 of the tangent, below the diagonal)
    scale = np.max(np.abs(ref.T.imag))
    assert scale > 0
    np.testing.assert_allclose(step.T.imag, ref.T.imag, rtol=1e-10, atol=1e-12 * scale)
    with pytest.raises(ValueError, match="full Jacobian"):
        bp.local_response(tri, (2, 0), (0, 2))
