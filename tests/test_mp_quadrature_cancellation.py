"""mp_expect where F(0) dwarfs F on the spectrum (a pole of F just left of 0), against mpmath.

The references are independent routes: mpmath.quad at 30 digits of F against the
Marchenko-Pastur density sqrt((b - s)(s - a)) / (2 pi gamma s) on [a, b] (substituted
s = a + (b - a) sin^2(theta / 2), which removes the square-root endpoints), plus the atom
(1 - 1/gamma) F(0) for gamma > 1, and the Stieltjes transform in closed form. Before the fix, F(0) + int (F - F(0)) / s lost everything to
cancellation: gamma = 0.3, u = 1e-7 returned 0.15625 for 0.1354153027...
"""

import mpmath as mp
import numpy as np
import pytest

from riskcalc.errors import SolverError
from riskcalc.linear.engine.mp_quadrature import mp_expect

LAM = 0.1


def _integrands(u):
    """F1 = (lam / ((s + lam)(s + u)))^2 (the reported trace), s F1 and 1 / (s + u): poles at
    -u. The last one's reference is the closed form ``_stieltjes``, the others' ``_mp_tau``."""
    return (lambda s: (LAM / ((s + LAM) * (s + u))) ** 2,
            lambda s: s * (LAM / ((s + LAM) * (s + u))) ** 2,
            lambda s: 1 / (s + u))


def _mp_tau(gamma, F):
    with mp.workdps(30):
        g = mp.mpf(gamma)
        a, b = (1 - mp.sqrt(g)) ** 2, (1 + mp.sqrt(g)) ** 2

        def h(t):
            s = a + (b - a) * mp.sin(t / 2) ** 2
            return F(s) / s * (b - a) ** 2 * mp.sin(t) ** 2 / (8 * mp.pi * g)

        # F varies on the scale theta ~ sqrt(u / (b - a)) near the lower edge: split there.
        v = mp.quad(h, [0] + [mp.mpf(10) ** k for k in range(-7, 0)] + [mp.pi])
        if g > 1:
            v += (1 - 1 / g) * F(mp.mpf(0))
        return v


def _stieltjes(gamma, u):
    """tau((S + u)^-1) = m, the positive root of gamma u m^2 + (1 - gamma + u) m - 1 = 0 (the
    Marchenko-Pastur Stieltjes equation at z = -u, atom included), at 30 digits."""
    with mp.workdps(30):
        g, u = mp.mpf(gamma), mp.mpf(u)
        return (-(1 - g + u) + mp.sqrt((1 - g + u) ** 2 + 4 * g * u)) / (2 * g * u)


@pytest.mark.parametrize("gamma", [0.3, 0.9, 0.999, 1.001, 2.0, 10.0])
@pytest.mark.parametrize("u", [1e-3, 1e-7, 1e-10])
def test_pole_near_zero_against_mpmath(gamma, u):
    Fs = _integrands(u)
    got = mp_expect(np.array([gamma]), lambda s: tuple(F(s) for F in Fs))[:, 0]
    refs = [_mp_tau(gamma, F) for F in Fs[:2]] + [_stieltjes(gamma, u)]
    for v, ref in zip(got, refs):
        # The quadrature's own tolerance is 1e-12 (1 + |value|); measured errors <= 5e-13.
        assert abs(v - float(ref)) <= 1e-10 * abs(float(ref)), (gamma, u, v, ref)


def test_reported_case_per_row_args():
    """The reported row (gamma 0.3, u 1e-7, true 0.13541530271...) inside a batch with args."""
    gam = np.array([0.3, 0.9, 2.0])
    u = np.array([[1e-7], [1e-3], [1e-7]])
    got = mp_expect(gam, lambda s, uu: ((LAM / ((s + LAM) * (s + uu))) ** 2,), u)[0]
    for g, uu, v in zip(gam, u[:, 0], got):
        ref = float(_mp_tau(g, _integrands(uu)[0]))
        assert abs(v - ref) <= 1e-10 * abs(ref)


def test_exact_identity_unchanged():
    """A well-conditioned integrand: tau(S) = 1 and tau(S^2) = 1 + gamma (MP moments)."""
    gam = np.array([0.3, 0.999, 1.0, 1.001, 4.0])
    m1, m2 = mp_expect(gam, lambda s: (s, s * s))
    np.testing.assert_allclose(m1, 1.0, rtol=1e-13)
    np.testing.assert_allclose(m2, 1.0 + gam, rtol=1e-13)


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_unresolvable_cancellation_raises(gamma):
    """tau(1e8 (S - 1)) = 0, from terms of size ~1e8: no double-precision sum resolves it to
    1e-12; the old code returned 3e-8 (gamma 2: 32768 for 1e20 (S - 1)) as converged."""
    for k in (1e8, 1e20):
        with pytest.raises(SolverError):
            mp_expect(np.array([gamma]), lambda s: (k * (s - 1),))
    out = mp_expect(np.array([gamma, gamma]), lambda s, k: (k * (s - 1),),
                    np.array([[1.0], [1e8]]), strict=False)[0]
    assert abs(out[0]) <= 1e-14 and np.isnan(out[1])


def test_pole_at_the_spectrum_raises():
    """gamma = 1 (a = 0) with a pole at -u = -1e-6: neither subtraction converges within
    _QUAD_MAX nodes; mp_expect raises (strict) or returns NaN."""
    F = _integrands(1e-6)[0]
    with pytest.raises(SolverError):
        mp_expect(np.array([1.0]), lambda s: (F(s),))
    assert np.isnan(mp_expect(np.array([1.0]), lambda s: (F(s),), strict=False)[0, 0])
