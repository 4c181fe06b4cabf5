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
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-10, abs=0)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-10, abs=0)


@pytest.mark.parametrize("spectrum", [None, riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])])
@pytest.mark.parametrize("gamma", [1.0 + 1e-10, 1e10, 1e20, 1e100])
def test_paper_route_c0_keeps_its_digits_at_large_gamma(spectrum, gamma):
    """F2: c0's equation 1 - 1/gamma = int 1/(1 + c0 gamma s) dH rounded to 0 at large gamma
    (gamma = 1e20: variance 5e-21 for sigma^2 / (gamma - 1) = 1e-20; 6e-7 off at 1e10) and
    lost 1e-10 near gamma = 1."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, spectrum=spectrum)
    paper = riskcalc.limit("ftfa", route="paper", **args)
    kappa = riskcalc.limit("ftfa", route="kappa", **args)
    assert paper.bias == pytest.approx(kappa.bias, rel=1e-12, abs=0)
    assert paper.variance == pytest.approx(kappa.variance, rel=1e-12, abs=0)
    if spectrum is None:
        assert paper.variance == pytest.approx(1.0 / (gamma - 1.0), rel=1e-12, abs=0)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("gamma, lam", [(1e-60, 1e-60), (1e-100, 1e-100), (1e70, 1e-100),
                                        (1e100, 1e-100), (1e60, 1e-100)])
def test_paper_route_answers_at_the_ends_of_the_ranges(gamma, lam):
    """F3: at gamma = lam = 1e-60 the rewritten equation of F1 rounded 1 - gamma to 1 and lost
    its bracket; at gamma = 1e70, lam = 1e-100 a / (1 + gamma lam i1) underflowed (variance 0
    for 1e-70; 1e-5 off at 1e60); at gamma = 1e100 Newton's log steps from the bracket 1 crawled
    (no convergence in 200 steps); m'(-lam) overflowed on the way to 1e200 (a RuntimeWarning
    printed). Sigma = I: the closed forms."""
    args = dict(gamma=gamma, sigma=1.0, r=1.0, lam=lam)
    paper = riskcalc.limit("rtfa", route="paper", **args)
    closed = riskcalc.limit("rtfa", route="closed", **args)
    assert paper.bias == pytest.approx(closed.bias, rel=1e-10, abs=0)
    assert paper.variance == pytest.approx(closed.variance, rel=1e-10, abs=0)
