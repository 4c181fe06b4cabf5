"""Issue 32, fuzz41 (steps): what this fuzz found, each test failing before."""

import pytest

from riskcalc import Spectrum, steps_limit
from riskcalc.linear.engine import weighted_mp


def test_mixed_one_client_steps_count_the_diverging_points_among_all():
    """F1: ``steps_limit(clients=[1, 4, 5])`` past the edge (gamma 0.5, 10 steps of 0.8) noted
    "2 of 2 points diverge" beside three points (the one client's, which stay put, left out
    of the count's total); now "2 of 3"."""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=10, step_size=0.8,
                      clients=[1, 4, 5])
    assert list(res.converges) == [True, False, False]
    assert "2 of 3 points diverge" in res.notes[0] and res.notes[1].startswith("one client")


def test_steps_under_a_spectrum_split_by_a_gap_resolve_the_lower_band():
    """F2: 1000 steps of 1e-9 at gamma 0.5 under two-point:1e-8,1e8,0.5 gave bias 5.79e-9 for
    6.666666672e-9 (mpmath: the density Im g(x + i0) / pi from Silverstein's equation as a
    cubic, integrated over both bands at 40 digits; a simulation at d = 800: 6.665e-9 +-
    4e-12): the one contour settled to 1e-13 of the mean eigenvalue 5e7, the band under the
    gap unresolved. Now each band on its own ellipse (``contour._banded``); RTFA at lam 1e-10
    was 7.9% off, and with atoms 1e-12, 1 (weights 0.999, 0.001) at gamma 2 1.3e-7 off
    (mpmath 1.0010020087007e-12)."""
    sp = Spectrum.parse("two-point:1e-8,1e8,0.5")
    kw = dict(gamma=0.5, r=1.0, sigma=1.0, steps=1000, step_size=1e-9, spectrum=sp)
    res = steps_limit("ftfa", **kw)
    assert res.bias == pytest.approx(6.666666672045491e-09, rel=1e-9)
    assert res.variance == pytest.approx(0.3333333333332778, rel=1e-12)
    assert steps_limit("rtfa", lam=1e-10, **kw).bias == pytest.approx(6.66666667204550e-09,
                                                                        rel=1e-9)
    sp = Spectrum([1e-12, 1.0], [0.999, 0.001])
    top = weighted_mp.support_edges(2.0, sp)[1]
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=10, step_size=1.0 / top,
                      spectrum=sp)
    assert res.bias == pytest.approx(1.0010020087007e-12, rel=1e-9)


def test_support_gaps_are_silverstein_choi_edges():
    """F2: the gap of two-point:1e-8,1e8,0.5 at gamma 0.5 (mpmath: (1.866025403784e-8,
    2.5e7)), none where the support is one interval (two-point:1,4,0.3 at gamma 0.5)."""
    (lo, hi, j), = weighted_mp.support_gaps(0.5, Spectrum.parse("two-point:1e-8,1e8,0.5"))
    assert (lo, hi, j) == (pytest.approx(1.8660254037844386e-08, rel=1e-12),
                           pytest.approx(2.5e7, rel=1e-12), 0)
    assert weighted_mp.support_gaps(0.5, Spectrum.parse("two-point:1,4,0.3")) == []


def test_steps_past_the_edge_under_a_split_spectrum_answer():
    """F3: under two-point:1e-8,1e8,0.5 at gamma 0.5, 10 steps of 0.1 (far past the edge,
    finite values) failed "Silverstein's equation: the fixed point did not settle in 20000
    iterations at 25 points" (the one contour's nodes beside the band under the gap; also from
    ``compare``), and one step took 91-145 s to answer. Past the edge the bands go first:
    mpmath's 6.96788474075483e152 (and 4.1677213664450e143 for sigma = 0.5), one step the
    moments' closed form E t - 2 eta E t^2 + eta^2 (E t^3 + gamma E t^2 E t)."""
    kw = dict(gamma=0.5, r=1.0, sigma=0.5, spectrum=Spectrum.parse("two-point:1e-8,1e8,0.5"))
    res = steps_limit("ftfa", steps=10, step_size=0.1, **kw)
    assert res.converges is False
    assert res.bias == pytest.approx(6.96788474075483e152, rel=1e-9)
    assert res.variance == pytest.approx(4.1677213664450298e143, rel=1e-9)
    one = steps_limit("ftfa", steps=1, step_size=0.1, **kw)
    assert one.bias == pytest.approx(5e7 - 0.2 * 5e15 + 0.01 * (5e23 + 0.5 * 5e15 * 5e7),
                                     rel=1e-12)


def test_an_upper_band_does_not_swamp_the_bias_below_it():
    """F2 follow-up (the merge's review): under two-point:1e-8,1e8,0.9 (weights 0.9, 0.1) at
    gamma 2 after 1000 steps of 1e-9, each band settled to ATOL_GENERAL of its own mass: the
    upper band's bias, ~0, came out -5.4e-9 within its 1e-6 and the bias 5.88e-9, where a
    plain numpy simulation (the SVD of X, the exact filter per direction) gives 1.1272e-8,
    1.1260e-8, 1.1247e-8 and 1.1242e-8 at d = 400, 800, 1600, 3200 (the single contour,
    before F2: 1.1154e-8). Now an upper band settles to RTOL_GENERAL of the bias below it."""
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.0, steps=1000, step_size=1e-9,
                      spectrum=Spectrum.parse("two-point:1e-8,1e8,0.9"))
    assert res.bias == pytest.approx(1.1245e-8, rel=2e-3)
