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
