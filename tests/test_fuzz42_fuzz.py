"""Issue 32, fuzz42 (fuzz): what this fuzz found, each test failing before."""

import pytest

from tests.helpers import run_cli


@pytest.mark.parametrize("argv", [
    ["predict", "rtfa", "--model", "logistic", "--gamma", "1", "--signal", "1", "--r", "1",
     "--lam", "0.5"],
    ["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.5",
     "--rounds", "3", "--local-steps", "2", "--local-step-size", "0.1", "--signal", "1"]])
def test_max_minutes_whose_seconds_overflow_sets_no_limit(argv, capsys):
    """F1: ``--max-minutes 1e308`` (finite, beyond a year: docs/safety.rst says it sets no
    timer) overflowed to inf seconds: the logistic limit said "max_seconds must be a number in
    (0, inf], got nan" and the rounds "... finite number in (0, inf), got inf", naming neither
    the option nor what was given. It now answers as at 1e300."""
    code, out, err = run_cli(argv + ["--max-minutes", "1e308"], capsys)
    assert code == 0 and "error" not in err and "risk" in out


def test_a_comma_list_of_claims_is_told_to_give_each_alone(capsys):
    """F2: ``check --claim A,B`` (two known ids) was "unknown claim id(s): 'A,B' (did you mean
    'B'?)", offering one of the two claims asked for; it now says to give each id alone."""
    ids = "003.thm1.isotropic-bias,003.thm1.isotropic-variance"
    code, out, err = run_cli(["check", "--claim", ids], capsys)
    assert code == 2 and "did you mean" not in err
    assert "--claim 003.thm1.isotropic-bias --claim 003.thm1.isotropic-variance" in err
