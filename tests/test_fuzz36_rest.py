"""Issue 32, fuzz36 (rest): what this fuzz found, each test failing before."""

import math

import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli


def test_thm31_bound_where_q_rounds_to_one():
    """F1: q = 1 - 10 sqrt(mu/lam) rounds to 1 below mu/lam ~ 1e-34, and q^(C+1) gave the
    bound 0.25 dist0 at mu/lam = 1e-40, C = 1e20 for its 0.25 e^-10 dist0 (paper 001,
    Thm 3.1, eq. 3: (1 - 1e-19)^(1e20 + 1) = e^-10)."""
    value = mm.thm31_distance_lower_bound(1e40, 1.0, 1e40, 1e20)
    assert value == pytest.approx(0.25 * math.exp(-10), rel=1e-9)


def test_communication_lower_bound_where_q_rounds_to_one(capsys):
    """F1: with q rounded to 1 the fewest rounds were 0 (mu/lam = 1e-40, eps = 1e-100) for
    ceil(log(4e-100)/log(1 - 1e-19) - 1) ~ 2.29e21, and past 2^63 astype(int) wrapped."""
    value = mm.communication_lower_bound(1e40, 1.0, 1e40, 1e-100)
    assert value == pytest.approx(math.log(4e-100) / math.log1p(-1e-19), rel=1e-9)
    code, out, err = run_cli(["bounds", "communication_lower_bound", "--L", "1e40", "--mu", "1",
                              "--lam", "1e40", "--eps", "1e-100", "--dist0", "1"], capsys)
    assert code == 0 and "value=2.28872e+21" in out
