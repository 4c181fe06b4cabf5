"""The tangent solve of a block upper triangular pencil by superdiagonal levels
(riskcalc.linear.engine.block_pencil._by_level, used by ``solve(real=)`` on the solutions of
``pencil_assembly.Pencil.solve``): I - J is block lower triangular by level (checked on the
Jacobian itself), the level-by-level solve equals one dense solve with the whole I - J, and
the tangent it gives equals the one solved densely."""

from dataclasses import replace

import numpy as np

from riskcalc.linear.engine import block_pencil as bp
from riskcalc.linear.engine import pencil_assembly as pa
from tests.test_pencil_tangent import H2, STEP, companions, inputs


def target_pencil(E, L, g, s, sol, tp, weight=1.0):
    """MAML-FL's W pencil (companion, two projection rows, companion: 8 x 8, levels 0-3)."""
    pen = pa.Pencil(g, s, H2)
    k1, j1, j2, k2 = (pen.solved(sol, E, L), pen.projection(tp), pen.projection(tp),
                      pen.solved(sol, E, L))
    pen.couple(k1 + 2, j1, lhat=-1.0 * weight)
    pen.couple(j1, j2, lhat=-s)
    pen.couple(j2, k2, lhat=-1.0)
    return pen


def real_and_step():
    g, s, p, alpha, t = (x[inputs()[0] > 1] for x in inputs())
    E, L = companions(p, alpha, t)
    sol = pa.continuation(g, s, H2, E, L)
    tp = pa.projection_trace(g, s, H2)
    real = target_pencil(E, L, g, s, sol, tp).solve()
    _, _, pc, ac, tc = (x[inputs()[0] > 1] for x in inputs(1j * STEP))
    Ec, Lc = companions(pc, ac, tc)
    return target_pencil(Ec, Lc, g, s, sol, tp, 1.0 + 0.5j * STEP), real


def test_jacobian_is_block_lower_triangular_by_level():
    """Entry (a, b) of T moves with entries (c, d) of levels no higher than its own: the
    entries of I - J above that structure vanish (to rounding of its largest entry), and
    some below it do not (the solve has something to move)."""
    _, real = real_and_step()
    assert real.levels is not None and sorted(np.unique(real.levels)) == [0, 1, 2, 3]
    above = real.levels[:, None] < real.levels[None, :]
    scale = np.max(np.abs(real.lhs))
    assert np.max(np.abs(real.lhs[:, above])) <= 1e-15 * scale
    below = real.levels[:, None] > real.levels[None, :]
    assert np.max(np.abs(real.lhs[:, below])) > 1e-3 * scale


def test_level_solve_equals_dense_solve():
    """``_by_level`` against numpy's dense solve with the whole I - J, for several
    right-hand sides (1e-12 relative: two factorizations of a well-conditioned system), its
    cut blocks kept for the next call."""
    _, real = real_and_step()
    rng = np.random.default_rng(5)
    parts = []
    for _ in range(3):
        rhs = rng.normal(size=real.lhs.shape[:2])
        ref = np.linalg.solve(real.lhs, rhs[..., None])[..., 0]
        got = bp._by_level(real.lhs, rhs, real.levels, parts)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-13 * np.max(np.abs(ref)))
        assert len(parts) == 4


def test_tangent_by_levels_equals_dense_tangent():
    """The complex step's T and Qhat from the level solve equal those from the dense solve
    (the same solution without its levels)."""
    step, real = real_and_step()
    new = step.solve(real=real)
    dense = step.solve(real=replace(real, levels=None))
    for a, b in ((new.T, dense.T), (new.Q, dense.Q)):
        scale = np.max(np.abs(b.imag))
        assert scale > 0
        np.testing.assert_allclose(a.imag, b.imag, rtol=1e-11, atol=1e-13 * scale)
        np.testing.assert_array_equal(a.real, b.real)
