"""Personalization (FTFA, RTFA) from the round-T server model of paper 004's Algorithm 1 under
covariate shift (``shift.algorithm1.personalize``; ``RoundsLimit.personalized_risk``) against
the shared-spectrum route for equal covariances. The literal algorithm simulated on an
anti-aligned federation: tests/test_rounds_shift_alg1.py
(``test_personalized_against_the_simulated_algorithm``, sharing that file's solves)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.shift.algorithm1.curves import shift_alg1_curves
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]


def test_equal_covariances_are_the_shared_spectrum_route():
    """Both clients on one covariance (non-dyadic atoms, given weights, K = 2, g lam = 1.3):
    FTFA (2 steps) and RTFA against ``sigma.algorithm1.personalize``. Measured 1.6e-14."""
    gam, r, sig, p = np.array([0.5, 1.5]), np.array([0.3, 0.7]), np.array([0.4, 0.9]), \
        np.array([0.4, 0.6])
    joint = joint_spectrum(["two-point:0.7,3.1,0.3"] * 2)
    eta = 0.9 / (3.1 * (1 + np.sqrt(1.5)) ** 2 + 0.6)
    args = (gam, r, sig, p, 1.1, 0.6, eta, 2, 1.3 / 0.6, np.array([0.0, 1, 4, 15, np.inf]))
    new = shift_alg1_curves(*args, joint)["personalize"]
    ref = algorithm1_sigma_k_curves(*args, joint.marginal(0))["personalize"]
    for kw in (dict(kind="ftfa", k=2, eta2=0.05), dict(kind="rtfa", lam2=0.7)):
        for mine, other in zip(new(**kw), ref(**kw)):
            np.testing.assert_allclose(mine, other, rtol=0, atol=1e-10)


def test_divergent_ftfa_refused():
    """FTFA's steps diverging on a client under its own covariance: one ValueError (FedAvg's
    personalizations under shift are ``shift.personalize``'s, tests/test_rounds_shift_own.py)."""
    kw = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, rounds=[1], local_steps=2,
              step_size=0.02, spectra=ANTI)
    res = riskcalc.rounds_limit("pfedme", lam=0.8, **kw)
    with pytest.raises(ValueError, match="diverge on a client under its covariance"):
        res.personalized_risk(steps=2, step_size=0.2)
