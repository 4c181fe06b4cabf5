"""Issue 32, fuzz39 (maml): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from riskcalc.errors import IllConditioned
from riskcalc.linear.engine.stieltjes import c0
from riskcalc.spectrum import Spectrum

TWO_POINT = "two-point:1,4,0.3"


def test_maml_fl_heavy_clients_at_pooled_n_equal_d_solve_from_scratch(monkeypatch):
    """F1: weights [1e-3, 1, 1] at gamma 2 under a spectrum: the equal-weight N/d - 1 is 0.5,
    so the route warm-started from the last solution, but the two heavy clients alone sit at
    pooled N = d (the weighted N/d - 1 is 0.012) and the risks moved 3.2e-9 relative between
    a cold solve at alpha 0.1 and one after alpha 0.05 (1e-2: 4e-11). The weighted N/d - 1 now
    triggers the near-pooled rule too: from scratch, checked by a second path."""
    from riskcalc.linear.finite_clients import maml_sigma

    def warm(*args):
        raise AssertionError("warm-started near pooled N = d")

    monkeypatch.setattr(maml_sigma, "_warm", warm)
    out = riskcalc.clients_limit("maml_fl", gamma=[2.0, 2.0, 2.0], r=1.0, sigma=1.0,
                                 alpha=0.05, weights=[1e-3, 1.0, 1.0], spectrum=TWO_POINT)
    assert out.risk[1] == pytest.approx(39.25208953 + 25.46947607, rel=1e-8)


@pytest.mark.parametrize("excess", [1e-9, 1e-10])
def test_projection_trace_answers_near_gamma_one(excess):
    """F2: the projection row's trace at gamma 1 + 1e-9 or 1 + 1e-10 said "resolvent chain
    diagonal: the equation has no root in its bracket (inputs beyond floating point
    range?)" (the bracket's upper end is a root to O((gamma - 1)^2), below rounding); it is
    E_H[s / (c s + 1)] with c = gamma c0 and c ~ E_H[1/s] / (gamma - 1)."""
    from riskcalc.linear.engine.pencil_assembly import projection_trace
    s, w = np.array([1.0, 4.0]), np.array([0.3, 0.7])
    gamma = 1.0 + excess
    c = gamma * c0(np.array([gamma]), Spectrum(s, w))[0]
    assert c == pytest.approx(((1 / s) @ w) / excess, rel=1e-6)
    assert projection_trace(gamma, s, w) == pytest.approx((s / (c * s + 1)) @ w, rel=1e-12)


def test_maml_fl_client_near_gamma_one_under_a_spectrum_answers():
    """F2: MAML-FL with a client at gamma 1 + 1e-12 beside 1.5 under a spectrum refused
    ("no root in its bracket") where Sigma = I answers: its min-norm variance ~ 1 / (gamma -
    1) dominates, the same (to the input's rounding of gamma - 1) under any spectrum."""
    kw = dict(gamma=[1 + 1e-12, 1.5], r=[1.0, 1.0], sigma=[1.0, 1.0], alpha=0.1)
    out = riskcalc.clients_limit("maml_fl", spectrum=TWO_POINT, **kw)
    assert out.risk[0] == pytest.approx(riskcalc.clients_limit("maml_fl", **kw).risk[0],
                                        rel=1e-9)


def test_pfedme_under_a_spectrum_refuses_lam_whose_digits_it_loses_at_gamma_one():
    """F3: pFedMe with a client at gamma 1 beside 1.5 under a spectrum: its variance grows
    like lam^-1/2 with coefficient 1.5309 (lam 1e-8 to 1e-18), but the route's relative
    errors grow like eps times the client's own ridge variance: the coefficient read 1.5540
    at lam = 1e-28, 0.86 at 1e-30 and 0.73 at 1e-38 (53% off), silently. Refused beyond
    1e-8 (lam below ~1e-16 at gamma 1); 1e-12 still answers on the lam^-1/2 law."""
    kw = dict(gamma=[1.0, 1.5], r=[1.0, 1.0], sigma=[1.0, 1.0], spectrum=TWO_POINT)
    with pytest.raises(IllConditioned,
                       match=r"the client at gamma = 1 has an own ridge variance of 7\.25e\+14 "
                             r"sigma\^2 at lam = 1e-30 .* answers up to 1e-08\): give a larger "
                             r"lam or a gamma further from 1"):
        riskcalc.clients_limit("pfedme", lam=1e-30, **kw)
    coefficient = riskcalc.clients_limit("pfedme", lam=1e-12, **kw).variance[0] * 1e-6
    assert coefficient == pytest.approx(1.530931, rel=1e-6)
