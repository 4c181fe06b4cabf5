"""RTFA's closed-form traces at large penalties (``finite_clients.target_traces.ridge_traces``).

The trace nu(f S (b+t)^-1) was once computed as lam^2 (C - lam (A_2 - C) / delta), whose two
terms are each ~ B_1 / lam and cancel to ~1/lam^2: at lam = 1e12 it was wrong in the 4th
digit, at 4e15 by 70%, and the optimal-weights search of ``advise`` found a spurious RTFA
optimum there (risk below FedAvg's, which RTFA tends to as lam -> inf). Golden values: mpmath
quadrature of the Marchenko-Pastur density at 30 digits.
"""

import mpmath as mp
import numpy as np
import pytest

import riskcalc
from riskcalc.linear.finite_clients.target_traces import ridge_traces


def _nu_golden(gamma, lam, u):
    """nu(lam^2 s / ((s + lam)^2 (s + u))) over the continuous part of the MP law of ratio
    gamma (density sqrt((b - s)(s - a)) / (2 pi gamma s)), s = c + h cos(theta)."""
    with mp.workdps(30):
        g, lam, u = mp.mpf(gamma), mp.mpf(lam), mp.mpf(u)
        a, b = (1 - mp.sqrt(g)) ** 2, (1 + mp.sqrt(g)) ** 2
        c, h = (a + b) / 2, (b - a) / 2

        def integrand(t):
            s = c + h * mp.cos(t)
            dens = h * mp.sin(t) / (2 * mp.pi * g * s)
            return dens * lam ** 2 * s / ((s + lam) ** 2 * (s + u)) * h * mp.sin(t)

        return float(mp.quad(integrand, [0, mp.pi / 2, mp.pi]))


@pytest.mark.parametrize("gamma", [0.84, 2.5])
@pytest.mark.parametrize("lam", [1e3, 1e8, 1e12, 4e15])
def test_fifth_trace_matches_mpmath_at_large_penalties(gamma, lam):
    p, u = 0.2, 0.7
    J = ridge_traces(np.array([gamma]), np.array([lam]), np.array([p]), np.array([u]))
    golden = _nu_golden(gamma, lam, u)
    # Both routes ~ nu(s / (s + u)) at this scale; the stable form loses no digits to lam.
    assert J[4, 0] * p == pytest.approx(golden, rel=1e-10)
    assert J[5, 0] * p * lam == pytest.approx(golden, rel=1e-10)


def test_rtfa_tends_to_fedavg_as_the_penalty_grows():
    """RTFA at lam -> inf is the FedAvg global model: the gap shrinks like 1/lam (to rounding)
    instead of turning round, as it did past lam ~ 1e10."""
    fed = dict(gamma=[0.84, 0.77, 0.11, 4.77], r=[0.69, 0.34, 0.11, 0.44],
               sigma=[5.0, 1.6, 1.3, 1.7])
    fedavg = riskcalc.clients_limit("fedavg", **fed).risk
    gaps = [np.abs(riskcalc.clients_limit("rtfa", lam=[lam] * 4, **fed).risk - fedavg)
            for lam in (1e6, 1e9, 1e12, 1e15)]
    assert np.all(gaps[1] <= 2e-3 * gaps[0] + 1e-13)
    assert np.all(gaps[3] <= 1e-12 * fedavg)
