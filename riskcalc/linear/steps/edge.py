"""The stability edge of personalization gradient steps, eta (lam + x_hi) = 2, and the filter's
peak at the top of the spectrum of S near it (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7,
Algs. 5-6; derived here): one judgement of the edge for ``finite_clients.stability`` and the
quadratures of ``steps.limits`` and ``steps.contour``, and where the finite-M quadrature would
miss the peak.
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart
from riskcalc.errors import SolverError
from riskcalc.linear.engine import weighted_mp

#: The log of abs(1 - eta (lam + x_hi))^k above which the filter's k-th power peaks at the top
#: of the spectrum of S, within 1 / (eta k) of it (``top_power``): ``steps.limits.ATOL``.
PEAK_LOG = float(np.log(1e-16))
#: ``identity_steps_group_limits``' quadrature (32 nodes doubled) settles on that peak's absence
#: beyond ~2048 of 4 pi sqrt(eta k sqrt(gamma)) (gamma 0.2, 2, 4 at the edge, M = 1e6, against
#: the oracle's; 1024 resolved): refused beyond this (fuzz39 steps F2).
QUAD_PEAK = 1024.0


def power(x, k):
    """``(1 - x)^k``, the filter's k-th power, through log1p where x is in (0, 1/2) (there 1 - x
    rounds and the power's rounding grew like k eps; above, 1 - x is exact): one form for the
    quadratures of ``steps.limits`` and ``steps.identity``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.exp(k * np.log1p(-np.minimum(x, 0.5)))
    return np.where(x < 0.5, small, (1.0 - x) ** k)


def top_power(top, steps):
    """log abs(1 - top)^steps, the filter's k-th power at the top of the spectrum of S (``top`` =
    eta (lam + x_hi)); above ``PEAK_LOG`` (at or near the stability edge) the filter peaks there
    within 1 / (eta k), a peak a quadrature with too few nodes settles without (fuzz39 F1)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(steps, float) * np.log(np.abs(1.0 - np.asarray(top, float)))


def check_peak(gam, lam, steps, eta) -> None:
    """SolverError where ``steps.identity``'s quadrature would miss the peak of ``top_power``
    (at the edge: FTFA at gamma 0.5 with clients=1e6 after 1e5 steps of 2 / x_hi gave bias 0
    for the oracle's 3.2e-9 per unit r^2, 1.01 for 0 at r = 1e5 after 1e6; fuzz39 steps F2)."""
    root = np.sqrt(np.asarray(gam, float))
    top = eta * (np.asarray(lam, float) + (1.0 + root) ** 2)
    bad = ((top_power(top, steps) > PEAK_LOG)
           & (4 * np.pi * np.sqrt(eta * steps * root) > QUAD_PEAK))
    if np.any(bad):
        most = int((QUAD_PEAK / (4 * np.pi)) ** 2 / (eta * np.max(root[bad])))
        raise SolverError(
            f"finite-step quadrature from the finite-M model (steps up to {float(steps):g}): at "
            "the stability edge (step_size (lam + top of the spectrum of S) = "
            f"{shown_apart(np.max(top[bad]), 2.0)}) the filter peaks within 1 / (step_size "
            f"steps) of the top, finer than the rule resolves: at most {most} steps, or a step "
            "size farther below the edge, answer (the oracle route, without clients, resolves "
            "it)")


def past_edge(top):
    """Whether ``top`` = eta (lam + x_hi) lies past the stability edge 2 beyond its rounding
    (``weighted_mp.EDGE_RTOL``): where ``finite_clients.stability`` says gradient descent
    diverges, and where the quadratures of ``steps.limits`` take their divergent branch (they
    compared with 2.0 exactly, and refused or mis-settled within 8 eps of it; fuzz39 steps
    F1)."""
    return np.asarray(top) > 2.0 * (1.0 + weighted_mp.EDGE_RTOL)
