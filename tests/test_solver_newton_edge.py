"""``solvers.increasing_root`` stops at a Newton step below RTOL even where the step's end
rounds onto the bracket's edge (the point just evaluated): it used to bisect from there
through the whole bracket (~45 steps instead of ~8 for the effective ridge of clients with a
tiny lam and gamma near 1, RTFA's penalty searches under covariate shift, issue 30), and
stopped at a bracket of width RTOL: 9e-13 relative off the root here instead of rounding."""

import numpy as np

import riskcalc
from riskcalc import solvers
from riskcalc.linear.engine import kappa


def test_effective_ridge_small_lam_near_gamma_one_in_few_steps():
    # One atom s = 2 (``scaled:2``): (*) of ``engine.kappa`` is lam = k (2 (1 - g) + k) / (2 + k),
    # the quadratic k^2 + b k - 2 lam = 0, b = 2 (1 - g) - lam: its positive root written
    # without cancellation, k = 4 lam / (b + sqrt(b^2 + 8 lam)) (b > 0 here), an independent
    # route to the same kappa.
    gamma = np.array([0.9971953360997131, 0.9828593240029393, 0.921454636238231, 0.4054])
    lam = np.full(gamma.size, 1.5848931924611133e-08)
    b = 2.0 * (1.0 - gamma) - lam
    exact = 4.0 * lam / (b + np.sqrt(b * b + 8.0 * lam))
    with solvers.record() as log:
        got = kappa.effective_ridge(gamma, lam, riskcalc.Spectrum([2.0], weights=[1.0]))
    np.testing.assert_allclose(got, exact, rtol=1e-13, atol=0)     # the old stop: 9.0e-13
    # Bracket [lam / 2, 2 (lam + 2 g)]: ~20 in log scale, quadratic convergence once inside
    # (measured 9-11 steps); the bisection from the edge took 44-50.
    assert log["effective ridge kappa"]["iterations"] <= 15
