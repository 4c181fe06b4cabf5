"""Issue 32, fuzz42 (logi2): what this fuzz found, each test failing before."""

import pytest

import riskcalc


def test_lam_path_is_estimated_as_a_whole_and_names_a_lam():
    # F1: logistic_lam_path(gamma=0.5, signal=r=1, lams=[1e-3, 1e-300], max_seconds=5) had
    # no estimate (max_seconds held each lam apart): refused after 8 s at its deadline naming
    # no lam; now refused up front by the path's estimate, naming the lam that fits.
    with pytest.raises(ValueError, match=r"^the logistic lam path \(2 penalties, down to lam "
                       r"= 1e-300\).*over the limit max_seconds = 5; a larger lam .*lam >= "
                       r"[0-9.e-]+ fits"):
        riskcalc.logistic_lam_path(gamma=0.5, signal=1, r=1, lams=[1e-3, 1e-300],
                                   max_seconds=5)


def test_lam_path_estimate_adds_up_its_lams():
    # F1: eight lams 0.1 .. 1e-8 at gamma 2 (separable data), max_seconds 3: each lam alone
    # fits its own 3 s, the path did not (was: solved lam by lam, each with its own 3 s).
    lams = [10.0 ** -k for k in range(1, 9)]
    with pytest.raises(ValueError, match=r"^the logistic lam path \(8 penalties.*estimated at "
                       r"[0-9.]+ s.*lam >= [0-9.e-]+ fits"):
        riskcalc.logistic_lam_path(gamma=2, signal=1, r=1, lams=lams, max_seconds=3)
