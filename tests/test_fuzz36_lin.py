"""Issue 32, fuzz36 (lin): what this fuzz found, each test failing before."""

import pytest

import riskcalc


@pytest.mark.parametrize("spectrum", [None, riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])])
@pytest.mark.parametrize("gamma, lam", [(1.0, 1e-60), (1.0, 1e-30), (1.0 + 1e-12, 1e-40)])
def test_paper_route_keeps_its_digits_near_gamma_one_at_tiny_lam(spectrum, gamma, lam):
    """F1: the paper route's equation for a = 1 - gamma + gamma lam m(-lam) rounded 1 - u to 0
    (gamma = 1, lam = 1e-60: bias 9.4e-31 and variance 4.7e29 for 5e-31 and 5e29, silently);
    the two-point values are those of an 80-digit evaluation (6.32455532034e-21 at 1e-40)."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, lam=lam, spectrum=spectrum)
    paper = riskcalc.limit("rtfa", route="paper", **args)
    kappa = riskcalc.limit("rtfa", route="kappa", **args)
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-10)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-10)
