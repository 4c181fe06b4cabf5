"""The shortcuts of the exact gradients under covariate shift (``riskcalc.advise``'s optimal
weights), each against the route it replaced:

* an assembled pencil's complex step whose blocks carry their own steps' solutions takes their
  tangents as they are (``pencil_assembly.Pencil.solve`` -> ``block_pencil.solve(known=)``),
  against Newton's iteration in complex arithmetic on the whole pencil;
* a superdiagonal level's few entries of I - J formed alone (``block_pencil._jacobian``),
  against the same entries of the dense k^2 x k^2 Jacobian;
* what does not involve lam kept between limits at the same weights (``shift_group_limits``'
  memo), against the limits solved afresh (bit for bit).
"""

import numpy as np

from riskcalc.linear.engine import block_pencil as bp
from riskcalc.linear.engine import pencil_assembly as pa
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients.shift import chains as shift_chains, limits as shift
from tests.test_pencil_tangent import (H2, STEP, companions, equals_whole_pencil_step,
                                       inputs)


def test_stepped_blocks_tangent_equals_complex_iteration():
    """Companion, projection row, companion (7 x 7) at a complex step of the companions and
    a coupling, the companions given their own complex step's solution: the level-0 tangents
    are taken from them (the ``known`` route is used), and T and Qhat equal Newton's complex
    iteration on the whole pencil from the real root."""
    g, s, p, alpha, t = (x[inputs()[0] > 1] for x in inputs())
    E, L = companions(p, alpha, t)
    sol = pa.continuation(g, s, H2, E, L)
    tp = pa.projection_trace(g, s, H2)
    _, _, pc, ac, tc = (x[inputs()[0] > 1] for x in inputs(1j * STEP))
    Ec, Lc = companions(pc, ac, tc)
    stepped = bp.solve(g, s, H2, Ec, Lc, real=sol)

    def assembled(E2, L2, blocks, weight):
        pen = pa.Pencil(g, s, H2)
        k1, j1, k2 = pen.solved(blocks, E2, L2), pen.projection(tp), pen.solved(blocks, E2, L2)
        pen.couple(k1 + 2, j1, lhat=-s * weight)
        pen.couple(j1, k2, lhat=-1.0)
        return pen

    real = assembled(E, L, sol, 1.0).solve()
    seen = []
    original = bp._by_level

    def spy(lhs, rhs, levels, parts, known=None):
        seen.append(known is not None)
        return original(lhs, rhs, levels, parts, known)

    bp._by_level = spy
    try:
        new = assembled(Ec, Lc, stepped, 1.0 + 0.5j * STEP).solve(real=real)
    finally:
        bp._by_level = original
    assert seen == [True]
    equals_whole_pencil_step(new, g, s, Ec, Lc, real)


def test_level_jacobian_equals_dense_entries():
    """I - J at a few entries (the small-level route) and at many (the product route) equal
    those entries of the dense Jacobian."""
    rng = np.random.default_rng(2)
    B, n, k = 4, 3, 8
    g, s = rng.uniform(0.5, 2.0, B), rng.uniform(0.5, 3.0, (B, n))
    h = np.array([0.2, 0.3, 0.5])
    C, Q = rng.normal(size=(B, k, k)), rng.normal(size=(B, n, k, k))
    dense = bp._jacobian(g, s, h, C, Q)
    for size in (7, 40):
        idx = np.sort(rng.choice(k * k, size, replace=False))
        got = bp._jacobian(g, s, h, C, Q, idx)
        np.testing.assert_allclose(got, dense[:, idx][:, :, idx], rtol=1e-13, atol=1e-13)


def test_fixed_parts_between_penalties_are_exact():
    """RTFA at two penalty vectors and the same weights: the second limits, with the first's
    lam-free parts kept, equal the limits solved afresh bit for bit."""
    specs = ["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"] * 3
    joint = joint_spectrum(specs, None)
    rng = np.random.default_rng(4)
    m = len(specs)
    gam, r, sig = rng.uniform(0.3, 4.0, m), rng.uniform(0.2, 2.0, m), rng.uniform(0.1, 1.5, m)
    lams = np.exp(rng.uniform(-3, 2, (2, m)))

    def limits(lam):
        return shift.shift_group_limits("rtfa", gam, r, sig, np.ones(m), lam, "samples",
                                        joint, joint.types)

    shift_chains._MEMO.clear()
    limits(lams[0])
    kept = limits(lams[1])
    shift_chains._MEMO.clear()
    fresh = limits(lams[1])
    for a, b in zip(kept, fresh):
        np.testing.assert_array_equal(a, b)
