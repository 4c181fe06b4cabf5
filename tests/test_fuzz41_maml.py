"""Issue 32, fuzz41 (maml): what this fuzz found, each test failing before."""

import pytest

from riskcalc import limit
from riskcalc.errors import IllConditioned


def test_pfedme_wide_span_variance_lost_to_rounding_is_refused():
    """F1: pFedMe at gamma 2 (3 clients) on two-point:1,1e6,0.5 at lam 1e-80 with r = 0 (the
    risk is the variance): the variance is a cancellation of terms of the size of the own
    ridge variance (500 sigma^2) whose chains carry rounding grown by the span; an exact
    power-of-two rescaling of Sigma moved the risk by 5e-8 (1.5e-6 on 1,1e7,0.5), answered
    silently. Now the scale identity Sigma -> 3 Sigma (as under covariate shift) refuses it;
    a well-posed client on a wider span (gamma 2.5 on 1,1e8,0.5) still answers."""
    with pytest.raises(IllConditioned, match=r"pfedme under a spectrum: the limits lose "
                                             r"their digits .* span of 1e\+06"):
        limit("pfedme", gamma=2.0, r=0.0, sigma=0.5, lam=1e-80, clients=3,
              spectrum="two-point:1,1e6,0.5")
    res = limit("pfedme", gamma=2.5, r=0.0, sigma=0.5, lam=1e-80, clients=3,
                spectrum="two-point:1,1e8,0.5")
    assert res.risk == pytest.approx(1.625, rel=1e-7)
