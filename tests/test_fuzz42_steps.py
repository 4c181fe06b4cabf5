"""Issue 32, fuzz42 (steps): what this fuzz found, each test failing before."""

import pytest

from riskcalc import Spectrum, steps_limit


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

