"""The tangent of a pencil's fixed point at a complex step, in real arithmetic
(riskcalc.linear.engine.block_pencil.solve(real=), ``_tangent``): against Newton's iteration in
complex arithmetic from the real fixed point (the route it replaced, independent code: complex
inverses at every step), and against central differences of real solves."""

import numpy as np

from riskcalc.linear.engine import block_pencil as bp
from riskcalc.linear.engine import pencil_assembly as pa

H2 = np.array([0.3, 0.7])
# gamma, p, alpha, the shifts t at the two atoms, the member's eigenvalues there.
MEMBERS = [(1.5, 0.3, 0.05, [0.4, 1.1], [1.0, 4.0]), (0.7, 0.1, 0.2, [0.2, 0.3], [4.0, 1.0]),
           (3.0, 0.6, 0.1, [1.3, 0.5], [2.0, 2.5])]
STEP = 1e-30


def companions(p, alpha, t):
    """E, Lhat of the companion pencils of (t + p s (1 - alpha s)^2)^-1 (a batch; p, alpha, t
    per member, complex allowed)."""
    B, n = t.shape
    dtype = np.result_type(p, alpha, t, float)
    E = np.zeros((B, 3, 3), dtype)
    E[:, 0, 0] = E[:, 1, 1] = 1.0
    E[:, 2, 2] = alpha ** 2 * p
    L = np.zeros((B, n, 3, 3), dtype)
    L[:, :, 0, 1] = L[:, :, 1, 2] = -1.0
    L[:, :, 2, 0], L[:, :, 2, 1] = t, p[:, None]
    L[:, :, 2, 2] = -2.0 * alpha[:, None] * p[:, None]
    return E, L


def inputs(shift=0.0):
    """gamma, atoms, p, alpha, t of the batch, every p, alpha and t moved by ``shift`` times
    its own direction (one direction through E and Lhat both)."""
    g = np.array([m[0] for m in MEMBERS])
    s = np.array([m[4] for m in MEMBERS], float)
    p = np.array([m[1] for m in MEMBERS]) * (1 + 0.7 * shift)
    alpha = np.array([m[2] for m in MEMBERS]) * (1 - 0.4 * shift)
    t = np.array([m[3] for m in MEMBERS]) * (1 + np.array([0.3, -0.5]) * shift)
    return g, s, p, alpha, t


def equals_whole_pencil_step(new, g, s, Ec, Lc, real):
    """``new`` (an assembled pencil's complex step: companion, projection row, companion,
    couplings -s (1 + 0.5 i STEP) and -1) against the same arrays as one 7 x 7 pencil solved
    by Newton's iteration in complex arithmetic from the real root ``real`` (the route the
    assembled pencils' tangents replaced): T' and Qhat' to 1e-9 relative."""
    B, n = g.size, H2.size
    Ef, Lf = np.zeros((B, 7, 7), complex), np.zeros((B, n, 7, 7), complex)
    for a, b in ((0, 3), (4, 7)):
        Ef[:, a:b, a:b], Lf[:, :, a:b, a:b] = Ec, Lc
    Ef[:, 3, 3], Lf[:, :, 3, 3] = 1.0, 1.0
    Lf[:, :, 2, 3] -= s * (1.0 + 0.5j * STEP)
    Lf[:, :, 3, 4] -= 1.0
    old = bp.solve(g, s, H2, Ef, Lf, np.array([1, 1, 1, 0, 1, 1, 1.0]), real.T)
    for a, b in ((new.T, old.T), (new.Q, old.Q)):
        scale = np.max(np.abs(b.imag))
        assert scale > 0
        np.testing.assert_allclose(a.imag, b.imag, rtol=1e-9, atol=1e-12 * scale)

def test_companion_tangent_equals_complex_iteration_and_differences():
    """T, Qhat, C and the Jacobian I - J (``response``) at a complex step of E and Lhat: the
    real-arithmetic tangent against the complex iteration to 1e-10 relative, and T' and
    Qhat' against central differences of real solves."""
    g, s, p, alpha, t = inputs()
    E, L = companions(p, alpha, t)
    real = pa.continuation(g, s, H2, E, L)
    _, _, pc, ac, tc = inputs(1j * STEP)
    Ec, Lc = companions(pc, ac, tc)
    new = bp.solve(g, s, H2, Ec, Lc, real=real, response=True)
    old = bp.solve(g, s, H2, Ec, Lc, T0=real.T)             # Newton in complex arithmetic
    for a, b in ((new.T, old.T), (new.Q, old.Q), (new.C, old.C), (new.lhs, old.lhs)):
        np.testing.assert_allclose(a.real, b.real, rtol=1e-12, atol=1e-14)
        scale = np.max(np.abs(b.imag))
        assert scale > 0
        np.testing.assert_allclose(a.imag, b.imag, rtol=1e-10, atol=1e-12 * scale)
    eps = 1e-5
    up, dn = (bp.solve(g, s, H2, *companions(*inputs(e)[2:]), T0=real.T) for e in (eps, -eps))
    for a, u, d in ((new.T, up.T, dn.T), (new.Q, up.Q, dn.Q)):
        fd = (u - d) / (2 * eps)
        np.testing.assert_allclose(a.imag / STEP, fd, rtol=1e-7, atol=1e-8 * np.max(np.abs(fd)))
    # Its linear response to t (the companions' L = -dG/dt) follows the step too.
    resp = bp.local_response(new, (2, 0), (0, 2))
    ref = bp.local_response(old, (2, 0), (0, 2))
    np.testing.assert_allclose(resp.imag, ref.imag, rtol=1e-9,
                               atol=1e-12 * np.max(np.abs(ref.imag)))


def test_assembled_pencil_tangent_equals_complex_iteration():
    """A block upper triangular pencil (companion, projection row, companion; ``unknowns``)
    at a complex step of its blocks and a coupling: the tangent against Newton's complex
    iteration on every entry of the same pencil."""
    g, s, p, alpha, t = inputs()
    live = g > 1
    g, s, p, alpha, t = g[live], s[live], p[live], alpha[live], t[live]
    E, L = companions(p, alpha, t)
    sol = pa.continuation(g, s, H2, E, L)
    tp = pa.projection_trace(g, s, H2)
    _, _, pc, ac, tc = (x[live] for x in inputs(1j * STEP))
    Ec, Lc = companions(pc, ac, tc)

    def assembled(E2, L2, weight):
        pen = pa.Pencil(g, s, H2)
        k1, j1, k2 = pen.solved(sol, E2, L2), pen.projection(tp), pen.solved(sol, E2, L2)
        pen.couple(k1 + 2, j1, lhat=-s * weight)
        pen.couple(j1, k2, lhat=-1.0)
        return pen

    real = assembled(E, L, 1.0).solve()
    assert real.unknowns is not None
    new = assembled(Ec, Lc, 1.0 + 0.5j * STEP).solve(real=real)
    # The same arrays as one full pencil, iterated in complex arithmetic from the real root.
    equals_whole_pencil_step(new, g, s, Ec, Lc, real)


def test_levels_route_solves_without_iterating():
    """``pencil_assembly._by_levels`` (one Newton step per superdiagonal level) reaches the
    residual tolerance itself (no fallback) and the root of Newton's iteration on every
    unknown; without ``response`` its I - J is not computed."""
    g, s, p, alpha, t = (x[inputs()[0] > 1] for x in inputs())
    E, L = companions(p, alpha, t)
    sol = pa.continuation(g, s, H2, E, L)
    tp = pa.projection_trace(g, s, H2)
    pen = pa.Pencil(g, s, H2)
    k1, j1, j2, k2 = (pen.solved(sol, E, L), pen.projection(tp), pen.projection(tp),
                      pen.solved(sol, E, L))
    pen.couple(k1 + 2, j1, lhat=-1.0)
    pen.couple(j1, j2, lhat=-s)
    pen.couple(j2, k2, lhat=-1.0)
    calls = []
    original = pa._by_levels

    def spy(*args):
        calls.append(original(*args))
        return calls[-1]

    pa._by_levels = spy
    try:
        fast, cheap = pen.solve(), pen.solve(response=False)
    finally:
        pa._by_levels = original
    assert len(calls) == 2 and all(c is not None for c in calls)
    assert np.all(np.isnan(cheap.lhs)) and np.all(np.isfinite(fast.lhs))
    np.testing.assert_array_equal(cheap.T, fast.T)
    # Newton's iteration on every unknown from the same start (``solve(unknowns=)``).
    B, k, n = g.size, 8, H2.size
    Ef, Lf, T0 = (np.zeros((B, k, k)), np.zeros((B, n, k, k)), np.zeros((B, k, k)))
    for a, b in ((0, 3), (5, 8)):
        Ef[:, a:b, a:b], Lf[:, :, a:b, a:b], T0[:, a:b, a:b] = E, L, sol.T
    for a in (3, 4):
        Ef[:, a, a], Lf[:, :, a, a], T0[:, a, a] = 1.0, 1.0, tp
    Lf[:, :, 2, 3] -= 1.0
    Lf[:, :, 3, 4] -= s
    Lf[:, :, 4, 5] -= 1.0
    delta = np.array([1, 1, 1, 0, 0, 1, 1, 1.0])
    ref = bp.solve(g, s, H2, Ef, Lf, delta, T0, unknowns=fast.unknowns)
    np.testing.assert_allclose(fast.T, ref.T, rtol=1e-12, atol=5e-14)
    np.testing.assert_allclose(fast.lhs, ref.lhs, rtol=1e-10, atol=1e-13)
    # Its inverses by block back substitution (``_upper_inverse``) against the dense ones.
    np.testing.assert_allclose(fast.Q, ref.Q, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fast.C, ref.C, rtol=1e-12, atol=1e-13)
