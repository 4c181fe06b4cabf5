"""Issue 32, fuzz37 (minimax2): what this fuzz found, each test failing before."""

import json
import math

import numpy as np
import pytest

from riskcalc import minimax as mm
from riskcalc.minimax import ratecheck as rc
from riskcalc.minimax._common import from_logs
from tests.helpers import run_cli


@pytest.mark.parametrize("name, args, where", [
    ("apgd_complexity", ["--L", "1"], "Sec. 4.1 of paper 001"),
    ("iapgd_katyusha_complexity", ["--L_tilde", "1", "--m", "10"], "Theorem 4.3 of paper 001"),
])
def test_section4_orders_keep_lam_at_least_mu(name, args, where, capsys):
    """F1: paper 001's O() orders of APGD1 (Sec. 4.1) and IAPGD+Katyusha (Thm 4.3)
    answered lam = 1e-10 < mu = 1 with 6.9e-6 rounds (sqrt(lam/mu) log 2), under one
    round per log(1/eps), where Thm 3.1 (which they attain), IAPGD+AGD (Thm 4.2) and the
    prox-oracle bound (F10 of fuzz37 minimax) refuse lam < mu. lam = mu still answers.
    (AL2SGD+, Thm 4.4, was refused too until fuzz38 paper F3: its text states no lam >= mu.)"""
    code, out, err = run_cli(["bounds", name, *args, "--mu", "1", "--lam", "1e-10",
                              "--eps", "0.5"], capsys)
    assert code == 2 and out == ""
    assert f"lam must be >= mu ({where}" in err and "got lam=1e-10, mu=1" in err
    code, out, err = run_cli(["bounds", name, *args, "--mu", "1", "--lam", "1", "--eps", "0.5"],
                             capsys)
    assert code == 0 and "=0.693147" in out


def test_section4_orders_refuse_lam_below_mu_in_python():
    """F1, the Python route: an array with one lam below mu is refused, naming it."""
    with pytest.raises(ValueError, match=r"lam must be >= mu \(Theorem 4.3 .* lam=0.5, mu=1"):
        mm.iapgd_katyusha_complexity(10, 1, [2.0, 0.5], 100, 0.5)
    assert mm.al2sgd_complexity(4, 1, 1, 16, math.exp(-1))["rounds_order"] == pytest.approx(1)


@pytest.mark.parametrize("name, args", [
    ("iapgd_katyusha_complexity", ["--L_tilde", "4", "--m", "10"]),
    ("al2sgd_complexity", ["--L_tilde", "4", "--m", "10"]),
])
def test_section4_orders_are_named_orders(name, args, capsys):
    """F2: IAPGD+Katyusha (Thm 4.3) and AL2SGD+ (Thm 4.4) printed their O() orders as
    "rounds=0.693147 local=..." (a fraction of a round), where IAPGD+AGD (Thm 4.2) prints the
    count as rounds and the order as rounds_order; they are rounds_order and local_order."""
    code, out, err = run_cli(["bounds", name, *args, "--mu", "1", "--lam", "1", "--eps", "0.5",
                              "--json"], capsys)
    assert code == 0 and err == ""
    values = json.loads(out)["values"]
    assert values["rounds_order"] == pytest.approx(math.log(2))
    assert "rounds" not in values and "local" not in values and "local_order" in values


@pytest.mark.parametrize("argv, message", [
    (["apgd_complexity", "--L", "4", "--mu", "1", "--lam=-1", "--eps", "0.5"],
     "lam must lie in [1e-100, 1e+100] (the bounds' range), got -1.0"),
    (["fedavg_ier", "--beta", "1", "--mu", "1", "--sigma2", "1", "--R=-1e3", "--N", "4"],
     "R must be 0 or lie in [1e-100, 1e+100] (the bounds' range), got -1000.0"),
])
def test_a_negative_parameter_is_refused_with_the_bounds_range(argv, message, capsys):
    """F3: a negative parameter of a bound (the command line lets -1 through to the bound, the
    magnitude being in range) was refused as outside "(0, inf)" or "[0, inf)", not the range
    the bounds take, so the user corrected it into a second refusal (1e101)."""
    code, out, err = run_cli(["bounds", *argv], capsys)
    assert code == 2 and out == "" and message in err


X = np.array([1.0, 2.0, 4.0, 8.0, 16.0])


def test_rate_fits_refuse_a_constant_past_the_floats():
    """F4: ratecheck's fits of errors = x at x = 1e-320 * (1, 2, 4, 8, 16) returned the constant
    inf (exp of log 1e320, a RuntimeWarning); fit_constants of terms 1e-200 x for errors
    1e200 x (constant 1e400) was scipy's "Residuals are not finite in the initial point". Both
    are a ValueError giving the value; constants that are floats are kept (1e300 within 1e-12)."""
    with pytest.raises(ValueError, match=r"the fitted constant is 1.000e\+320, above the large"):
        rc.fit_power_law({"x": X * 1e-320}, X)
    with pytest.raises(ValueError, match=r"constants' scale is 1.000e\+400, above the largest"):
        rc.fit_constants({"a": 1e-200 * X}, 1e200 * X)
    assert rc.fit_power_law({"x": X}, 1e300 * X).constant == pytest.approx(1e300, rel=1e-12)
    assert rc.fit_constants({"a": 1e-100 * X}, 1e200 * X).constants["a"] == pytest.approx(
        1e300, rel=1e-12)


def test_a_value_past_the_floats_is_written_with_one_digit_before_the_point():
    """F5: from_logs wrote a value whose mantissa rounds up to 10 as 10.000e-321 (the constant
    1e-320 of errors 1e-320 x, its logarithm a hair below -320 log 10) and 9.9996e400 as
    10.000e+400; they are 1.000e-320 and 1.000e+401."""
    with pytest.raises(ValueError, match=r"the fitted constant is 1.000e-320, nonzero but below"):
        rc.fit_power_law({"x": X}, 1e-320 * X)
    with pytest.raises(ValueError, match=r"q is 1.000e\+401, above the largest float"):
        from_logs("q", np.inf, math.log(9.9996) + 400 * math.log(10))


@pytest.mark.parametrize("call, what", [
    (lambda: rc.fit_power_law([("x", X)], X), "predictors"),
    (lambda: rc.fit_power_law(None, X), "predictors"),
    (lambda: rc.fit_constants("C", X), "terms"),
    (lambda: rc.rate_check([("x", X)], X, X, 0.5, 2.0), "grid"),
])
def test_rate_fits_name_a_mapping_given_as_something_else(call, what):
    """F6: ratecheck's named inputs given as a list of pairs, None or a string were a
    TypeError ("list indices must be integers or slices, not tuple"), an AttributeError
    ("'list' object has no attribute 'items'") or an IndexError, naming no parameter."""
    with pytest.raises(ValueError, match=f"{what} must be a mapping"):
        call()
