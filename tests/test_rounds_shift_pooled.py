"""riskcalc.rounds_limit("fedavg", local_steps=K, spectra=...) with pooled N < d (sum_j 1 /
gamma_j < 1): D's atom at 0 (where the clients' null spaces meet) held apart by the pencil's
edges (``shift.curves``: the contour's mass is 1 - the atom; K = 1 through the same pencil,
``shift.one_step``'s walk stops at the atom) against the shared spectrum's routes for equal
covariances (``sigma.fedavg.one_step``, K = 1). The literal
algorithm simulated on the anti-aligned federation (gamma 4, 5, K = 2, step 0.05, rounds 0, 1,
5, 20) was measured outside the suite: largest gaps of the server model, own models and RTFA
(lam' = 0.7) 0.0053 / 0.0033 / 0.0031 at d = 100, 0.0046 / 0.0050 / 0.0037 at d = 200, 0.0018 /
0.0011 / 0.0015 at d = 400, within 0.36 of 4 s.e. + 1 / d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.shift.curves import shift_k_curves
from riskcalc.linear.dynamics.sigma.fedavg.one_step import fedavg_sigma_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

GAM, R, SIG, P = np.array([4.0, 5.0]), np.array([0.3, 0.7]), np.array([0.4, 0.6]), [0.4, 0.6]
SPEC = "two-point:0.7,3.1,0.3"


def test_equal_covariances_are_the_shared_spectrum_route():
    """Two clients on one covariance, gamma 4, 5: D's atom at 0 of mass 0.55; the server model
    (K = 1, through the pencil) against the shared spectrum's K = 1 closed form. Measured 9e-14
    (outside the suite: K = 2 against ``sigma.fedavg.curves`` 7e-16, own models and RTFA after
    round T 1e-15). K = 1 under shift reaches this pencil through ``rounds_limit``."""
    T = np.array([0.0, 1, 5, np.inf])
    args = (GAM, R, SIG, np.array(P), 1.1, 0.05)
    new = shift_k_curves(*args, 1, 1.0, T, joint_spectrum([SPEC] * 2))
    ref = fedavg_sigma_curves(*args, 1.0, T, joint_spectrum([SPEC]).marginal(0))
    assert new["atom"] == pytest.approx(0.55)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], ref[key], rtol=0, atol=1e-11, err_msg=key)
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.1, rounds=T,
                                local_steps=1, step_size=0.05, weights=P,
                                spectra=["two-point:1,4,0.5", "two-point:4,1,0.5"])
    assert res.diagnostics["atom_at_zero"] == pytest.approx(0.55)
    assert np.all(np.isfinite(res.risk)) and np.all(np.diff(res.risk[:, :3]) < 0)
