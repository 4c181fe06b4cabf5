"""Every route against high-precision mpmath values (tests/golden/limits.json).

The reference (tests/golden/make_golden.py) solves the paper's equations at 60 digits, in m
itself, with m' by numerical differentiation: an implementation independent of riskcalc's
rearranged, implicitly differentiated forms.
"""

import json
import pathlib

import numpy as np
import pytest

from riskcalc import Spectrum
from riskcalc.linear.engine import kappa, marchenko_pastur, stieltjes
GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "limits.json").read_text())


def _spectrum(name):
    raw = GOLDEN["spectra"][name]
    if raw is None:  # powerlaw-1.5-40
        return Spectrum.power_law(1.5, 40)
    to_f = (lambda xs: None if xs is None else [float(x) for x in xs])
    return Spectrum(to_f(raw["atoms"]), weights=to_f(raw["weights"]),
                    signal_weights=to_f(raw["signal_weights"]))


ROWS = GOLDEN["rows"]
ROUTES = {"kappa": kappa.ridge_factors, "paper": stieltjes.ridge_factors}


def _ids(row):
    return f"{row['spectrum']}-g{row['gamma']}-l{row['lam']}"


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("row", ROWS, ids=_ids)
def test_general_routes_match_mpmath(row, route):
    bias, var = ROUTES[route](float(row["gamma"]), float(row["lam"]), _spectrum(row["spectrum"]))
    np.testing.assert_allclose(bias, float(row["bias"]), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(var, float(row["variance"]), rtol=1e-10)


@pytest.mark.parametrize("row", [r for r in ROWS if r["spectrum"] == "identity"], ids=_ids)
def test_closed_form_matches_mpmath(row):
    bias, var = marchenko_pastur.isotropic_factors(float(row["gamma"]), float(row["lam"]))
    np.testing.assert_allclose(bias, float(row["bias"]), rtol=1e-10, atol=1e-300)
    np.testing.assert_allclose(var, float(row["variance"]), rtol=1e-10)


def test_golden_grid_covers_the_hard_corners():
    gammas = {float(r["gamma"]) for r in ROWS}
    lams = {float(r["lam"]) for r in ROWS}
    assert {1.001, 1000.0} <= gammas and {1e-8, 1e8, 0.0} <= lams


@pytest.mark.parametrize("gamma, lam", [(0.5, 0.1), (2.0, 0.7), (1.0, 1e-3), (5.0, 3.0),
                                        (0.5, 1e-12), (0.9, 1e-9), (2.0, 1e-14)])
def test_variance_lam_derivative_matches_mpmath(gamma, lam):
    # An independent route: (*) solved by mpmath's findroot at 40 digits, the variance
    # df2 / (1 - df2) differentiated numerically by mpmath. At gamma < 1 and a tiny lam it
    # lost 1.2e-4 (lam 1e-12), subtracting two O(1 / lam) terms.
    import mpmath as mp
    with mp.workdps(40):
        s, w = [mp.mpf("0.3"), mp.mpf("2.5")], [mp.mpf("0.4"), mp.mpf("0.6")]

        def variance(x):
            k = mp.findroot(lambda k: k * (1 - gamma * sum(b * a / (a + k) for a, b in
                                                       zip(s, w))) - x, x + gamma)
            df2 = gamma * sum(b * (a / (a + k)) ** 2 for a, b in zip(s, w))
            return df2 / (1 - df2)

        gold = float(mp.diff(variance, mp.mpf(lam)))
    ours = kappa.ridge_variance_lam_derivative(gamma, lam, Spectrum.two_point(0.3, 2.5, 0.4))
    np.testing.assert_allclose(ours, gold, rtol=1e-12)
    with pytest.raises(ValueError, match="lam > 0"):
        kappa.ridge_variance_lam_derivative(gamma, 0.0, Spectrum.two_point(0.3, 2.5, 0.4))
