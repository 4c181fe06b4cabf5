"""Paper 004's Algorithm 1 along the rounds under covariate shift through its chain structure
(``shift.algorithm1.chain``, the route for M K^2 > 200) against independent routes: the dense
shift pencil (``shift.algorithm1.pencil``) where both apply, the shared spectrum's chain
(``sigma.algorithm1.chain``) for equal covariances, and the literal algorithm simulated
(``montecarlo.linear.rounds``) on an anti-aligned federation at K = 12; and its time estimate
(``shift.algorithm1.cost``), refused before the edge scans."""

import time

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.shift.algorithm1.cost import shift_alg1_seconds
from riskcalc.linear.dynamics.shift.algorithm1.curves import shift_alg1_curves
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from tests.test_rounds_shift_alg1 import ANTI, ETA, GAM, LAM, SIG, R


def _gap(new, ref):
    """Largest difference of the server curves, distance, own models and edges."""
    out = max(np.max(np.abs(new[k] - ref[k])) for k in ("bias", "variance", "distance"))
    out = max([out] + [np.max(np.abs(a - b)) for a, b in zip(new["local"](), ref["local"]())])
    return max(out, np.max(np.abs(np.subtract(new["edges"], ref["edges"]))))


@pytest.mark.parametrize("K, g", [(3, 1.0), (2, 1.5 / LAM)])
def test_chain_is_the_dense_shift_pencil(K, g):
    """Anti-aligned clients, given weights, T = 0 .. inf: the chain against the dense shift
    pencil (K = 3; K = 2 with g lam = 1.5: a negative band). Measured 1.6e-12 / 1.2e-13."""
    args = (GAM, R, SIG, np.array([0.4, 0.6]), 1.1, LAM, ETA, K, g,
            np.array([0.0, 1, 3, 10, 25, np.inf]), joint_spectrum(ANTI))
    assert _gap(shift_alg1_curves(*args, route="chain"),
                shift_alg1_curves(*args, route="dense")) < 1e-11


def test_equal_covariances_are_the_shared_spectrum_chain():
    """Every client on one covariance (three clients, non-dyadic atoms and weights, K = 3, g =
    1): the shared spectrum's chain (``Alg1Chain``), server and own models, distance, edges.
    Measured 1.2e-14 (5e-15 with g lam = 1.3, a negative band, at 7 s each)."""
    gam, r, sig = np.array([0.5, 1.5, 3.0]), np.array([0.3, 0.7, 0.5]), np.array([0.4, 0.9, 0.6])
    joint = joint_spectrum(["two-point:0.7,3.1,0.3"] * 3)
    eta = 0.9 / (3.1 * (1 + np.sqrt(3.0)) ** 2 + 0.6)
    args = (gam, r, sig, np.array([0.5, 0.2, 0.3]), 1.1, 0.6, eta, 3, 1.0,
            np.array([0.0, 1, 4, 15, np.inf]))
    assert _gap(shift_alg1_curves(*args, joint, route="chain"),
                algorithm1_sigma_k_curves(*args, joint.marginal(0), route="chain")) < 1e-11


def test_against_the_simulated_algorithm_k12():
    """M K^2 = 288 (the chain, chosen by rounds_limit; even K: its edges as folds, 3 times
    cheaper than K = 11's bisection, which test_chain_is_the_dense_shift_pencil's K = 3 keeps):
    the literal Algorithm 1
    (``montecarlo.linear.rounds``, exact given the designs, each client's risk in its own
    Sigma_j) at d = 200, 4 replicates: the server and own models' risks within 4 s.e. + 1 / d
    (measured: at most 0.11 of the band), and RTFA (lam' = 1) after the rounds through the
    chain (``shift.algorithm1.personalize_chain``; measured: at most 0.05 of the band, FTFA
    with 2 steps of 0.05 outside the suite, K = 11: 0.17)."""
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=[0, 1, 3, 10], local_steps=12,
              step_size=ETA, lam=LAM, global_step=1.0)
    theory = riskcalc.rounds_limit("fedprox", spectra=ANTI, **kw)
    sim = simulate_rounds("pfedme", spectra=ANTI, d=200, reps=4, seed=7,
                          measure="conditional", personalize=[dict(lam=1.0)], **kw)
    for q in ("risk", "global_risk"):
        band = 4 * getattr(sim, q + "_se") + 1.0 / 200
        gap = np.abs(getattr(sim, q) - getattr(theory, q))
        assert np.all(gap <= band), (q, gap, band)
    band = 4 * sim.personalized_risk_se(lam=1.0) + 1.0 / 200
    gap = np.abs(sim.personalized_risk(lam=1.0) - theory.personalized_risk(lam=1.0))
    assert np.all(gap <= band), (gap, band)


def test_time_estimate_refuses_before_the_edges():
    """A budget below the estimate: refused in well under a second (before the edge scans,
    which take seconds here), naming what would fit, which the estimate accepts at the
    fewest nodes a contour takes (40)."""
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0, 1, 3, 10], local_steps=20,
              step_size=ETA, lam=LAM, spectra=ANTI)
    start = time.process_time()
    with pytest.raises(ValueError, match="would take about .* give local_steps <= ") as err:
        riskcalc.rounds_limit("fedprox", max_seconds=5.0, **kw)
    assert time.process_time() - start < 1.0
    k = int(str(err.value).split("local_steps <= ")[1].split(",")[0])
    assert shift_alg1_seconds(2, k, 2, 40) <= 5.0 < shift_alg1_seconds(2, k + 1, 2, 40)
