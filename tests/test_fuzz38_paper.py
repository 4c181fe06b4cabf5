"""Issue 32, fuzz38 (paper): what this fuzz found, each test failing before."""

import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli


@pytest.mark.parametrize("call, message", [
    (lambda: mm.al2sgd_complexity(4, 1, 1, 0.5, 0.5),
     "m must lie in [1, 1e+100] (a count), got 0.5"),
    (lambda: mm.iapgd_agd_complexity(4, 1, 2, 1e-100, 0.5), "n must lie in [1, 1e+100]"),
    (lambda: mm.local_aer_weighted(1, 1, 1, [0.5, 0.5], [0.5, 10]), "n must lie in [1, 1e+100]"),
    (lambda: mm.fedprox_global_error_bound(1, 1, 1, 0, 0.25, 8), "n must lie in [1, 1e+100]"),
    (lambda: mm.evaluate("lower_bound_aer", d=0.5, N=10, m=2, R=0), "d must lie in [1, 1e+100]"),
])
def test_python_bounds_refuse_counts_below_one(call, message):
    """F1: the Python bounds answered for half a client or 1e-100 samples
    (``al2sgd_complexity(m=0.5)``: local_order 1.44) where every theorem counts at least one
    client, sample, summand or dimension and the command line refuses (whole numbers)."""
    with pytest.raises(ValueError) as exc:
        call()
    assert message in str(exc.value)


def test_cli_and_python_name_the_same_range_for_a_count(capsys):
    """F1: ``bounds ... --m 0`` said "[1e-100, 1e+100]" (the magnitudes), where 0.5 in Python
    is now refused as below 1: one range for a count on both routes."""
    code, out, err = run_cli(["bounds", "al2sgd_complexity", "--L_tilde", "4", "--mu", "1",
                              "--lam", "1", "--m", "0", "--eps", "0.5"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "error: m must lie in [1, 1e+100] (a count), got 0.0"
