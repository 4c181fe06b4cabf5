"""Issue 32, fuzz39 (lead): what the lead's merges found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient


def test_maml_fl_gradient_with_one_over_alpha_inside_a_spectrum():
    """h39quad F1 made the MAML-FL limit answer where 1/alpha lies inside a client's
    Marchenko-Pastur support (gamma [1000, 0.5], alpha 2: phi's double zero, a peak the
    quadrature now grades), but advise's exact gradient solved the same subordination without
    that peak and refused ("pinned ... dwarfs"). Now its mean is the limit's and its alpha
    derivative a central difference of the limits'."""
    gam, sig, r = np.array([1000.0, 0.5]), np.full(2, 0.5), np.ones(2)
    p = (1 / gam) / np.sum(1 / gam)
    mean, _, d_alpha = mean_risk_gradient("maml_fl", gamma=gam, sigma=sig, r=r, weights=p,
                                          tuning=2.0)

    def limit(alpha):
        return riskcalc.clients_limit("maml_fl", gamma=gam, sigma=sig, r=r, alpha=alpha,
                                      weights=list(p)).mean_risk

    assert mean == pytest.approx(limit(2.0), rel=1e-10)
    h = 1e-5
    assert d_alpha == pytest.approx((limit(2.0 + h) - limit(2.0 - h)) / (2 * h), rel=1e-4)


def test_maml_fl_near_pooled_n_equal_d_refuses_rather_than_grading_its_peak():
    """The graded quadrature (h39quad F1) also served MAML-FL near pooled N = d, where every
    client's shift shrinks with N/d - 1 and its rounding is amplified by 1 / (N/d - 1): two
    clients at gamma 2 / (1 + 1e-7), alpha 0.3 answered risks 8.18e6 and 2.70e6 (times N/d - 1:
    0.818 and 0.270, where 1e-5 to 5e-7 give 1.715 for both), silently. Near N = d the peak is
    left to the Chebyshev rules again, which refuse it as before (and test_fuzz37_lead's
    message holds)."""
    gamma = 2 / (1 + 1e-7)
    with pytest.raises(riskcalc.SolverError, match=r"pooled N is near d"):
        riskcalc.clients_limit("maml_fl", gamma=[gamma, gamma], r=[1, 0.5], sigma=[1, 0.3],
                               alpha=0.3)
