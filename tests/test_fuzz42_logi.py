"""Issue 32, fuzz42 (logi): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc


def test_mu_beyond_the_window_by_e1_is_refused_before_solving():
    # F3: gamma 2, signal = r = 1, lam 1e-14 under two-point:1,4,0.5 solved past 150 s (the
    # spectrum path has no stage check; the default deadline 60 s, then 'give a larger lam');
    # at Sigma = I lam 1e-300 spent seconds on its stages. By (E1) with D < 1 / mu, mu >
    # (gamma - 1) / lam (Sigma = I), beyond the residuals' window e^29: refused at once.
    with pytest.raises(ValueError, match=r"^lam = 1e-14 is out of the solver's reach at gamma "
                       r"= 2 under this spectrum: by \(E1\), mu = gamma <s / \(lam \+ D s\)> "
                       r".* give lam >= 1\.27e-12 \(mu <= gamma <s> / lam"):
        riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=1e-14,
                                spectrum="two-point:1,4,0.5", max_seconds=0.5)
    with pytest.raises(ValueError, match=r"^lam = 1e-300 is out of the solver's reach at gamma "
                       r"= 2: by \(E1\), mu \(lam \+ D\) = gamma .* give lam >= 5\.09e-13"):
        riskcalc.logistic_limit(gamma=[2.0], signal=1, r=1, lam=1e-300, max_seconds=0.5)
    from riskcalc.logistic.ranges import LOG_WINDOW, check_reach

    # The bound's edge: below (gamma - 1) / E refused, above it not (Sigma = I; a margin 1e-9
    # above rounding); none at gamma <= 1 (no bound there), at lam = 0 (the MLE's own
    # refusal), or where rounding alone would reach it (two-point:1e-100,1e100 at gamma 2,
    # lam 0.5: 1 - 2e-88 read as 1, where the bound is mu > 2).
    edge = (3.0 - 1.0) / np.exp(LOG_WINDOW[1] - 1.0)
    check_reach(3.0, edge * (1 + 1e-6))
    with pytest.raises(ValueError, match="out of the solver's reach"):
        check_reach(3.0, edge * (1 - 1e-6))
    check_reach(1.0, 1e-300)
    check_reach(3.0, 0.0)
    check_reach(2.0, 0.5, riskcalc.Spectrum([1e-100, 1e100], weights=[0.5, 0.5]))


def test_growth_below_the_floor_grows_with_the_stages():
    # F4: below lam / <s> = 1e-6 the growth term was held at its value there: gamma 0.5,
    # signal = r = 1 at lam 1e-13 was estimated at 14.1 s and ran 55 s (loaded) to the
    # continuation's refusal; lam 1e-300 under two-point:1,4,0.5 ~56 s. On separable data the
    # norm grows like log(1 / lam) below it: each stage (a factor 10) adds GROWTH_STAGE times
    # the growth at the floor, refused up front naming a lam the estimate fits.
    from riskcalc.logistic.work import GROWTH_FLOOR, growth_lam, growth_seconds

    # Since fuzz42 logi3 F1 the lam named is the smallest whose rules (fewer stages) and
    # growth fit, as where the rules alone are over (was 2.52e-07, from the rules at 1e-13).
    with pytest.raises(ValueError, match=r"estimated at 82 s .* \(on separable data the "
                       r"solution grows as lam falls: 81\.7 s of it here; lam >= 2\.45e-07 "
                       r"fits\)"):
        riskcalc.logistic_limit(gamma=0.5, signal=1, r=1, lam=1e-13, max_seconds=20)
    kappa = 2 ** 0.5
    at_floor = growth_seconds(0.5, kappa, GROWTH_FLOOR, 1.0)
    below = [growth_seconds(0.5, kappa, lam, 1.0) for lam in (1e-7, 1e-13, 1e-300, 5e-324)]
    assert at_floor < below[0] < below[1] < below[2] < below[3] < 1e4
    assert growth_seconds(0.5, kappa, GROWTH_FLOOR * (1 + 1e-12), 1.0) == pytest.approx(
        at_floor, rel=1e-9)
    # growth_lam inverts it on both sides of the floor, and names no lam below gamma <s> /
    # e^29, where mu may leave the window (gamma 2, lam 1e-100 named 4.9e-29 before; now
    # check_reach refuses such a lam first).
    for budget in (5.0, 20.0, 50.0):
        lam = growth_lam(0.5, kappa, 1.0, budget)
        assert growth_seconds(0.5, kappa, lam, 1.0) == pytest.approx(budget, rel=1e-9)
    assert growth_lam(0.5, kappa, 1.0, 1e4) == pytest.approx(0.5 * np.exp(-29.0), rel=1e-12)
    with pytest.raises(ValueError, match=r"^lam = 1e-100 is out of the solver's reach"):
        riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=1.0, lam=1e-100, max_seconds=1.0)


def test_rules_over_the_limit_at_a_tiny_lam_name_the_lam_that_fits():
    # F5: gamma 0.5, signal = r = 1, lam 1e-300, max_seconds 1.5: 'estimated at 5.74 s' (the
    # continuation's 300 stages) said only 'raise max_seconds'. Now the smallest lam whose
    # rules and growth fit is named, checked as printed (0.000109 was 1.5003 s).
    from riskcalc.logistic.work import growth_seconds, oracle_seconds

    # Since fuzz42 logi3 F1 the growth is counted with the rules (the same lam named).
    with pytest.raises(ValueError, match=r"over the limit max_seconds = 1\.5; a larger lam "
                       r"\(on separable data the solution grows as lam falls: \S+ s of it "
                       r"here; lam >= 0\.00011 fits\), or raise max_seconds"):
        riskcalc.logistic_limit(gamma=0.5, signal=1, r=1, lam=1e-300, max_seconds=1.5)
    assert oracle_seconds(1, 1, 1.1e-4) + growth_seconds(0.5, 2 ** 0.5, 1.1e-4, 1.0) <= 1.5


@pytest.mark.parametrize("signal", [1e-300, 1e-160])
def test_a_tiny_centre_at_r_zero_leaves_the_cosine_undefined(signal):
    # F6: signal = 1e-300, r = 0 (w_i = c): centre_geometry's signal^2 / kappa underflowed
    # c_e to 0 (1e-160: to a subnormal), so w_i - c was taken as w_i and cosine -1.05e-16 was
    # printed with no note, where the spectrum route (identity) said it is undefined.
    for spectrum in (None, "identity"):
        res = riskcalc.logistic_limit(gamma=0.5, signal=signal, r=0.0, lam=0.1,
                                      spectrum=spectrum)
        assert np.isnan(res.cosine) and "the cosine is undefined" in res.notes[0]


@pytest.mark.parametrize("spectrum", [None, "two-point:1,4,0.5"])
def test_finite_client_local_ridge_checks_the_reach_of_its_own_fixed_point(spectrum):
    # F7: local ridge with clients at gamma 2, signal = r = 1, lam 1e-14 (the clients' own
    # fixed points, where (E1) puts mu beyond the window: F3) was refused by its estimate as
    # 'lam >= 5.09e-13 fits' with max_seconds 20 (a solve at a larger one); now F3's refusal.
    with pytest.raises(ValueError, match=r"^lam = 1e-14 is out of the solver's reach at gamma "
                       r"= 2"):
        riskcalc.logistic_limit(gamma=2, signal=1, r=1, lam=1e-14, clients=2,
                                method="local_ridge", spectrum=spectrum, max_seconds=20)
    with pytest.raises(ValueError, match=r"^lam = 1e-14 is out of the solver's reach"):
        riskcalc.logistic_clients_limit(gamma=[0.5, 2], r=[1, 1], signal=1, lam=1e-14,
                                        method="local_ridge", target=1, max_seconds=20)


def test_one_point_under_a_spectrum_names_the_lam_whose_stages_fit():
    # F8: as F5 under a spectrum: gamma 0.5, signal = r = 1, lam 1e-300, two-point:1,4,0.5,
    # max_seconds 5 was 'estimated at 5.74 s ... raise max_seconds' alone.
    # Since fuzz42 logi3 F1 the growth is counted with the rules (the same lam named).
    with pytest.raises(ValueError, match=r"max_seconds = 5; a larger lam \(on separable data "
                       r"the solution grows as lam falls: \S+ s of it here; lam >= 9\.96e-06 "
                       r"fits\)"):
        riskcalc.logistic_limit(gamma=0.5, signal=1, r=1, lam=1e-300, max_seconds=5,
                                spectrum="two-point:1,4,0.5")


def test_the_sigma_identity_grid_keeps_its_deadline(monkeypatch):
    # F9: the Sigma = I grid had no deadline: gamma [0.5, 0.50001], signal = r = 1, lam 1e-5
    # with max_seconds 12 answered after 37 s (loaded). Its solves now check the call's
    # deadline, the batch between its parts (one point per part here, so that the second
    # part starts past a 6 ms limit the 5 ms estimate let through).
    from riskcalc.logistic import grid

    riskcalc.logistic_limit(gamma=0.05, signal=1, r=1, lam=1)      # imports, not timed
    monkeypatch.setattr(grid, "NEAR_CHUNK", 1)
    with pytest.raises(ValueError, match=r"^the logistic grid \(2 points\) was still solving "
                       r"at max_seconds = 0\.006 "):
        riskcalc.logistic_limit(gamma=[0.05, 0.06], signal=1, r=1, lam=0.1, max_seconds=0.006)
