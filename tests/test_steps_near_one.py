"""Finite gradient steps (``steps_limit``, Sigma = I) at gamma near 1.

Was: ``predict local --gamma 0.9999 --steps 1`` ended in "finite-step quadrature did not settle
with 262144 nodes": the Marchenko-Pastur density's 1 / s has poles at t = +-i ln(gamma) / 2 in
the quadrature's variable, so the rule converged as gamma^(n / 2). The golden values are exact:
K steps of size eta from 0 give a polynomial filter, whose integrals are the law's moments
m1 = 1, m2 = 1 + gamma, m3 = 1 + 3 gamma + gamma^2, m4 = 1 + 6 gamma + 6 gamma^2 + gamma^3
(computed here in exact rational arithmetic).
"""

from fractions import Fraction

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main


def exact_risk(gamma, rho, sigma, eta, steps):
    """rho^2 int (1 - eta s)^(2K) dF + sigma^2 gamma int f^2 / s dF, f = 1 - (1 - eta s)^K,
    for K = 1, 2 (the atom of F at 0 for gamma > 1 has f = 0 and weight in m0 = 1)."""
    g, e = Fraction(gamma), Fraction(eta)
    m = [1, 1, 1 + g, 1 + 3 * g + g ** 2, 1 + 6 * g + 6 * g ** 2 + g ** 3]
    if steps == 1:      # (1 - e s)^2; f^2 / s = e^2 s
        bias = m[0] - 2 * e * m[1] + e ** 2 * m[2]
        var = e ** 2 * m[1]
    else:               # (1 - e s)^4; f = 2 e s - e^2 s^2, f^2 / s = s (2 e - e^2 s)^2
        bias = m[0] - 4 * e * m[1] + 6 * e ** 2 * m[2] - 4 * e ** 3 * m[3] + e ** 4 * m[4]
        var = 4 * e ** 2 * m[1] - 4 * e ** 3 * m[2] + e ** 4 * m[3]
    return float(Fraction(rho) ** 2 * bias + Fraction(sigma) ** 2 * g * var)


@pytest.mark.parametrize("gamma", [0.9999, 1.0001, 0.999999, 1.0 + 1e-7, 0.99, 1.0])
@pytest.mark.parametrize("steps", [1, 2])
def test_steps_near_gamma_one_match_the_moments(gamma, steps):
    res = riskcalc.steps_limit("local", gamma=gamma, rho=1.2, sigma=0.5, steps=steps,
                               step_size=0.3)
    assert res.risk == pytest.approx(exact_risk(gamma, 1.2, 0.5, 0.3, steps), rel=1e-13)


def test_many_steps_near_gamma_one_are_continuous_across_it():
    """1000 steps (no closed form at hand): increasing in gamma and Lipschitz across 0.9999 ..
    1.0001 with twice the slope of the secant over [0.99, 1.01] (a route that dropped the atom
    at 0 for gamma > 1, or a near pole, would jump; measured 1.09e-4 on each side of 1)."""
    gammas = np.array([0.99, 0.9999, 1.0, 1.0001, 1.01])
    risks = np.array([riskcalc.steps_limit("local", gamma=g, rho=1.2, sigma=0.5, steps=1000,
                                           step_size=0.1).risk for g in gammas])
    assert np.all(np.diff(risks) > 0)
    slope = (risks[4] - risks[0]) / 0.02
    assert np.all(np.diff(risks)[1:3] <= 2.0 * slope * np.diff(gammas)[1:3])


def test_predict_local_steps_at_gamma_near_one(capsys):
    assert main(["predict", "local", "--gamma", "0.9999", "--rho", "1", "--sigma", "0.5",
                 "--steps", "1", "--step-size", "0.1"]) == 0
    risk = [line.split()[1] for line in capsys.readouterr().out.splitlines()
            if line.split()[:1] == ["risk"]][0]
    assert float(risk) == pytest.approx(exact_risk(0.9999, 1, 0.5, 0.1, 1), rel=1e-7)
