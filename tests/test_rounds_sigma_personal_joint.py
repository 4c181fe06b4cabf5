"""FedAvg's and Algorithm 1's personalization after round T under a SHARED spectrum beyond the
extended pencil's M (K + k)^2 = 200 unknowns: ``RoundsLimit._personalized_joint`` (covariate
shift's route with one covariance type). Checked against the shared spectrum's own routes below
the threshold, and its routing beyond it (the joint route's pieces beyond 200 are checked in
``tests/test_rounds_shift_own_chain.py`` and ``tests/test_rounds_shift_alg1_pers_chain.py``)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.result import RoundsLimit
from riskcalc.linear.dynamics.sigma import personalize_sigma
from riskcalc.spectrum import Spectrum

KW = dict(r=[1.0, 0.7], sigma=[0.5, 0.8], signal=1.0, global_step=1.0,
          spectrum="two-point:1,4,0.5")


def test_joint_route_equals_the_shared_pencil():
    """M = 2, K = 2: personalize_sigma's extended pencil (M (K + k)^2 = 18 and 32) against
    the joint route called below the threshold, FTFA (RTFA: Algorithm 1's test below)."""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.5], rounds=[0, 3, np.inf],
                                local_steps=2, step_size=0.1, **KW)
    spectrum = Spectrum(res.params["spectrum"]["atoms"], weights=res.params["spectrum"]["weights"])
    bias, variance = res._personalized_joint(
        {"personalization": "ftfa", "steps": 2, "step_size": 0.1}, spectrum)
    np.testing.assert_allclose(bias + variance, res.personalized_risk(steps=2, step_size=0.1),
                               rtol=1e-10, atol=0)


def test_joint_route_equals_algorithm1s_shared_pencil():
    """Algorithm 1, M = 2, K = 2, RTFA: ``sigma.algorithm1.personalize`` against the joint
    route called below the threshold (``shift.algorithm1.curves`` with one covariance type)."""
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 1.5], rounds=[0, 4, np.inf],
                                local_steps=2, step_size=0.1, lam=0.5, **KW)
    spectrum = Spectrum(res.params["spectrum"]["atoms"], weights=res.params["spectrum"]["weights"])
    bias, variance = res._personalized_joint({"personalization": "rtfa", "lam": 0.7}, spectrum)
    np.testing.assert_allclose(bias + variance, res.personalized_risk(lam=0.7), rtol=1e-10,
                               atol=0)
    with pytest.raises(ValueError, match="FTFA's steps diverge on a client"):  # beyond 200
        res.personalized_risk(steps=9, step_size=0.4)


def test_beyond_the_pencil_takes_the_joint_route(monkeypatch):
    """FedAvg, M (K + k)^2 = 242 > 200 (K = 1, FTFA k = 10) reaches the joint route (was refused by
    ``personal_unknowns``); below 200 the shared pencil still answers. (The joint route beyond
    it, measured once, loaded machine: M = 3, K = 5, FTFA with (k, eta') = (K, eta) from w_T
    against ``local_risk`` of round T + 1, T = 0 and 3: 4.0e-14; M = 2, K = 6: 2.8e-14; M = 4,
    K = 4: 2.9e-14; ~17-26 s each, too long for the suite.)"""
    called = []
    monkeypatch.setattr(RoundsLimit, "_personalized_joint",
                        lambda self, kw, spectrum: called.append(kw) or (0.0, 0.0))
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.5], rounds=[0, 3],
                                local_steps=1, step_size=0.1, **KW)
    res.personalized_risk(steps=10, step_size=0.05)
    assert called == [{"personalization": "ftfa", "steps": 10, "step_size": 0.05}]
    res.personalized_risk(steps=2, step_size=0.05)
    assert len(called) == 1
    with pytest.raises(ValueError, match="unknowns"):
        personalize_sigma.personal_unknowns(2, 1, "ftfa", 10)
