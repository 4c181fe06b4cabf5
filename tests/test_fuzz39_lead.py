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
