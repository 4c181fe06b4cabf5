"""Issue 32, fuzz42 (steps): what this fuzz found, each test failing before."""

import json

import pytest

from riskcalc import Spectrum, optimal_steps, steps_limit
from riskcalc.errors import SolverError
from riskcalc.linear.steps import contour
from tests.helpers import run_cli


def test_a_decayed_upper_band_is_resolved_not_left_to_the_one_contour():
    """F1: 1690 steps of 3.3e-16 at gamma 0.7 under atoms 0.063, 2.6e14 gave bias 0.2626953125
    (rounding level: nearby steps gave multiples of 1/8192) for 0.2647659 (the density Im g(x +
    i0) / pi from Silverstein's equation, integrated with mpmath over both bands at 50 digits):
    the upper band's ellipse reached half the gap below it, where the 1690-th power had grown
    1e6-fold, its rounding failed the tolerance and the one contour's value (to 1e-13 of the
    mean eigenvalue 1.8e14) stood. Now a band's ellipse stops where that power grew by e^2."""
    sp = Spectrum([0.06327093141259471, 263780825918277.62],
                  weights=[0.307925838824031, 0.692074161175969])
    res = steps_limit("ftfa", gamma=0.7, r=1, sigma=0, steps=1690,
                      step_size=3.3106317419940244e-16, spectrum=sp)
    assert res.bias == pytest.approx(0.26476594259173308, rel=1e-10)


def test_a_step_far_past_the_edge_answers_under_a_split_spectrum(capsys):
    """F2: ``predict ftfa --gamma 2 --spectrum two-point:1e-8,1e8,0.5 --steps 1 --step-size
    0.1`` (2e7 times past the stability edge) said "Silverstein's equation: the fixed point did
    not settle" after 3 s: the contour around [0, x_hi] reached only 1 / (step_size steps) = 10
    beyond its foci (the bound for the growth of the power LEFT of 0, where past the edge it is
    largest right of the support), too thin an ellipse for the fixed point. Now past the edge
    it reaches as far as on the right: the divergent result, exact for one step as moments of
    nu: B = m0 - 2 eta m1 + eta^2 m2 = 5e7 - 1e15 + 1e22, V = gamma eta^2 m1 = 1e14."""
    code, out, err = run_cli(["predict", "ftfa", "--gamma", 2, "--r", 1, "--sigma", 1,
                              "--spectrum", "two-point:1e-8,1e8,0.5", "--steps", 1,
                              "--step-size", 0.1, "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["diagnostics"]["converges"] is False
    assert res["bias"] == pytest.approx(1e22 - 1e15 + 5e7, rel=1e-12)
    assert res["variance"] == pytest.approx(1e14, rel=1e-12)
    rtfa = steps_limit("rtfa", gamma=2, r=1, sigma=1, lam=10.0, steps=10, step_size=10.0,
                       spectrum=Spectrum.parse("two-point:1e-8,1e8,0.5"))
    assert rtfa.bias == pytest.approx(3.282061782862e197, rel=1e-9)


def test_decayed_steps_at_sigma_identity_print_no_rounding_floor():
    """F5: FTFA at gamma 0.5 after 1e4 steps of 0.1 (and any more) printed bias 1.466e-33 for
    mpmath's 8.85e-80 (0 from 1e5 on): the quadrature summed (1 - f)^2 with f = 1 - q^k
    rounded near 1. Now 1 - f = (lam + s q^k) / (s + lam); after 1000 steps the bias is
    within 1e-13 of mpmath's 5.845267298845412e-11 (was 1e-12 off)."""
    kw = dict(gamma=0.5, r=1.0, sigma=1.0, step_size=0.1)
    assert steps_limit("ftfa", steps=10 ** 4, **kw).bias < 1e-78
    assert steps_limit("ftfa", steps=10 ** 5, **kw).bias == 0.0
    assert steps_limit("ftfa", steps=1000, **kw).bias == pytest.approx(5.845267298845412e-11,
                                                                        rel=1e-13)


def test_a_decayed_upper_band_needing_over_256_nodes_is_still_banded():
    """F6: 7773 steps of 1.255e-16 at gamma 0.488 under atoms 0.257, 2.8e14 (a random search
    of 230 wide spectra against the real-axis density, after F1) gave bias 0.061462 for
    mpmath's 0.0606272482611441 (+1.4%; and 2.2e-4 off in another draw): the upper band's
    ellipse, F1's thin one, was estimated at 265 nodes, over the bands' 256, and the one
    contour's value (to 1e-13 of the mean 2.4e14) stood. Bands now take up to 4096 nodes."""
    sp = Spectrum([0.2569743143735715, 277813340625648.75],
                  weights=[0.13644921387324307, 0.863550786126757])
    res = steps_limit("ftfa", gamma=0.48827137245700375, r=1, sigma=0, steps=7773,
                      step_size=1.2550138277979724e-16, spectrum=sp)
    assert res.bias == pytest.approx(0.060627248261144093, rel=1e-10)


def test_a_bias_below_one_contours_resolution_is_refused_where_the_bands_fail(monkeypatch):
    """F7: 499066 steps of 7.28e-15 at gamma 0.7 under an atom 1 (weight 0.001) and 60 atoms
    log-spaced over [1e10, 1e14] printed bias 0 where the bands resolved with 32768 nodes give
    2257.2 (65 s; five more such settings printed 0 likewise): its bands need more than 4096
    nodes, and the one contour around the support, which resolves only 1e-13 of the mass
    1.15e13, stood. Now refused, naming why and what answers (that input takes ~1 s: here F1's
    with the bands held to 32 nodes, which printed F1's 0.2627 for 0.2648)."""
    monkeypatch.setattr(contour, "BAND_NODES", 32)
    sp = Spectrum([0.06327093141259471, 263780825918277.62],
                  weights=[0.307925838824031, 0.692074161175969])
    with pytest.raises(SolverError, match="bands between the gaps .* fewer steps or a smaller"):
        steps_limit("ftfa", gamma=0.7, r=1, sigma=0, steps=1690,
                    step_size=3.3106317419940244e-16, spectrum=sp)


def test_a_step_far_past_the_edge_answers_at_sigma_identity():
    """F9: ``steps_limit("ftfa", gamma=2, steps=[1, 2], step_size=1e10)`` (3e10 times past the
    stability edge) was refused "would need more than 262144 nodes ... at the stability edge
    (... = 5.828e+10)": the quadrature sized the filter's peak at the top as at the edge, 1 /
    (eta k) wide, where past it the k-th power varies on abs(1 - eta x_hi) / (eta k). Now the
    divergent values, exact as Marchenko-Pastur moments (m1 = 1, m2 = 3, m4 = 45 at gamma 2):
    B_1 = 1 - 2 eta + 3 eta^2, V_1 = gamma eta^2, B_2 ~ 45 eta^4."""
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=[1, 2], step_size=1e10)
    assert res.bias[0] == pytest.approx(1.0 - 2e10 + 3e20, rel=1e-12)
    assert res.variance[0] == pytest.approx(2e20, rel=1e-12)
    assert res.bias[1] == pytest.approx(45e40, rel=1e-9)
    assert not res.converges.any()


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("step_size", [1e308, 1e300])
def test_optimal_steps_far_past_the_edge_answer_without_warnings(step_size):
    """F8: ``optimal_steps("ftfa", gamma=2, step_size=1e308, max_steps=5)`` warned "overflow
    encountered in scalar multiply" twice and was refused "would take about inf min ...
    give max_steps <= 0" (1e300: "1.99e+144 min"): its estimate sized the edge's peak for
    any step past it, where steps_limit answers at once (k = 0 best: the risk grows without
    bound from k = 1). Now k = 0, quietly (the peak estimated as ``filter_integrals``' F9)."""
    res = optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=1.0, step_size=step_size, max_steps=5)
    assert res.params["steps"] == 0 and res.risk == 1.0 and res.converges is False


def test_the_variance_under_a_spectrum_of_large_mean_is_resolved_to_its_own_scale():
    """F10: 3337 steps of 1.36e-14 at gamma 8.83 under atoms 0.0041, 1.08e13 (draw 73 of a
    random search against the real-axis density) gave variance 0.6570625 for mpmath's
    0.6570580 (6.9e-6 off): the contour settled the variance, a ratio of traces free of the
    scale of Sigma, to 1e-13 of the mean eigenvalue 3.1e12 (0.31), like the bias. Now to
    1e-13 itself."""
    sp = Spectrum([0.0041387766362306014, 10833203365128.023],
                  weights=[0.7144475375247425, 0.2855524624752575])
    res = steps_limit("ftfa", gamma=8.831776989396838, r=1, sigma=1, steps=3337,
                      step_size=1.3610615956620947e-14, spectrum=sp)
    assert res.variance == pytest.approx(0.657057996241186050, rel=1e-10)
