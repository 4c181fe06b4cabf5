"""Personalization (FTFA, RTFA) from the round-T server model of paper 004's Algorithm 1 with
the exact prox (local_steps = inf) under covariate shift (``shift.algorithm1.prox``, step 6)
against independent routes: the shared spectrum's ``sigma.personalize_sigma`` for equal
covariances, the exact identities RTFA with lam' = lam from w_T = the own model of round T + 1
(``local_risk``'s own-model pencil) and T = 0 = the local baselines under each client's own
covariance. Measured outside the suite: Algorithm 1 with K local steps (``shift.algorithm1.
personalize``) approaching it as K grows on the anti-aligned federation below (lam = 10, eta lam
= 0.44, each local step contracting the local error by at most 1 - eta lam): RTFA (lam' = 0.5)
gaps 0.042, 0.018, 0.0084 at K = 1, 2, 3, FTFA (one step of 0.05) 0.61, 0.25, 0.11; with two
FTFA steps, rounds 0, 1, 3: 0.0011 / 0.011 (RTFA / FTFA) at K = 6, 1.6e-4 / 1.5e-3 at K = 9.
The literal algorithm simulated (``simulate_rounds(personalize=...)``) on a
three-client shifted federation was measured outside the suite (rounds 0, 5, 20): the largest
gap 0.0061 / 0.0089 (RTFA / FTFA) at d = 100, 0.0023 / 0.0027 at d = 200, 0.0024 / 0.0029 at
d = 400 (mean gap 0.0030, 0.0009, 0.0008), all within 0.35 of 4 s.e. + 1 / d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.shift.algorithm1.prox import shift_prox_curves
from riskcalc.linear.dynamics.sigma.personalize_sigma import personalized_sigma
from riskcalc.linear.dynamics.sigma.prox_sigma import prox_sigma_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

R, SIG = np.array([0.3, 0.8]), np.array([0.4, 0.6])
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]
HOW = (dict(kind="rtfa", lam2=0.7),)


def test_equal_covariances_are_the_shared_spectrum_route():
    """Two clients on one covariance with pooled N < d (gamma 4, 5: D's atom at 0 of mass
    0.55, held apart by the edges), g lam = 1.3: ``sigma.prox_sigma`` (the server model; own
    models measured alike, 4e-16) and ``sigma.personalize_sigma``'s Algorithm 1 branch (RTFA;
    FTFA measured alike, 9e-16 with pooled N > d). Measured 4e-16."""
    gam, p = np.array([4.0, 5.0]), np.array([0.4, 0.6])
    joint = joint_spectrum(["two-point:0.7,3.1,0.3"] * 2)
    T = np.array([0.0, 2, np.inf])
    args = (gam, R, SIG, p, 1.1, 0.7, 1.3 / 0.7, T)
    new, ref = shift_prox_curves(*args, joint), prox_sigma_curves(*args, joint.marginal(0))
    assert new["atom"] == pytest.approx(0.55)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], ref[key], rtol=0, atol=1e-12, err_msg=key)
    mine = new["personalize"](**HOW[0])
    other = personalized_sigma("pfedme", gam, R, SIG, p, 1.1, T, joint.marginal(0), lam=0.7,
                               g=1.3 / 0.7, spectrum_edges=(*ref["edges"], ref["atom"]), **HOW[0])
    for a, b in zip(mine, other):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def anti():
    """(rounds_limit, its arguments) on the anti-aligned federation, exact prox lam = 10, g lam
    = 1, T = 0, 1, 2, inf."""
    kw = dict(gamma=np.array([0.5, 0.25]), r=R, sigma=SIG, signal=1.2, weights=[0.4, 0.6],
              lam=10.0, global_step=0.1, spectra=ANTI)
    return riskcalc.rounds_limit("fedprox", rounds=[0, 1, 2, np.inf], local_steps=np.inf,
                                 **kw), kw


def test_identities_on_the_anti_aligned_federation(anti):
    """RTFA with lam' = lam from w_T is the prox of round T + 1: the own model ``risk`` one
    round later (T = 0, 1, and inf), through a different pencil (measured 4e-15); from w_0 = 0
    (T = 0) FTFA and RTFA are ``steps_limit("local")`` and ``limit("local_ridge")`` under the
    client's own covariance, rho^2 = signal^2 + r_i^2 (measured 4e-16)."""
    res, kw = anti
    rt = res.personalized_risk(lam=10.0)
    np.testing.assert_allclose(rt[:, :2], res.risk[:, 1:3], rtol=0, atol=1e-11)
    np.testing.assert_allclose(rt[:, -1], res.risk[:, -1], rtol=0, atol=1e-11)
    ft, r2 = res.personalized_risk(steps=1, step_size=0.05), res.personalized_risk(lam=0.5)
    for i in range(2):
        rho, gam = float(np.hypot(1.2, R[i])), kw["gamma"][i]
        steps = riskcalc.steps_limit("local", gamma=gam, sigma=SIG[i], rho=rho, steps=1,
                                     step_size=0.05, spectrum=ANTI[i])
        ridge = riskcalc.limit("local_ridge", gamma=gam, sigma=SIG[i], rho=rho, lam=0.5,
                               spectrum=ANTI[i])
        assert abs(ft[i, 0] - np.atleast_1d(steps.risk)[-1]) < 1e-12
        assert abs(r2[i, 0] - ridge.risk) < 1e-12
    assert np.all(np.abs(np.diff(rt[:, :3], axis=1)) > 1e-3)      # the rounds move the model
