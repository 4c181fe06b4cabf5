"""Issue 32, fuzz38 (maml2): what this fuzz found, each test failing before."""

import pytest

import riskcalc
from riskcalc.errors import IllConditioned

TWO_POINT = "two-point:1,4,0.3"


def _maml(gamma, alpha):
    return riskcalc.limit("maml_fl", gamma=gamma, r=1.0, sigma=1.0, alpha=alpha, clients=4,
                          spectrum=TWO_POINT)


def test_maml_fl_near_pooled_n_equal_d_gives_the_same_answer_whatever_came_before():
    """F1: 4 clients on two-point:1,4,0.3 at gamma 3.8 (N/d - 1 = 0.053), alpha 0.04: solved
    from scratch and after a solve at alpha 0.05 (warm start) the risks differed by ~1e-10
    relative (1e-9 to 1e-8 at alpha 0.1), far above the M eps / (N/d - 1) = 2e-14 the
    near-pooled check assumes (alpha 0.01 after 0.02: 1.8e-12 apart). Near pooled N = d the
    route now always starts from scratch."""
    from riskcalc.linear.finite_clients import maml_sigma
    maml_sigma._LAST.clear()
    cold = _maml(3.8, 0.01)
    _maml(3.8, 0.02)
    warm = _maml(3.8, 0.01)
    assert (warm.bias, warm.variance) == (cold.bias, cold.variance)


def test_maml_fl_near_pooled_n_equal_d_refuses_digits_two_paths_disagree_on():
    """F1: at alpha 0.1 (gamma 3.8) two continuation paths' risks differ by 1.1e-8 relative
    (paths from first steps 1/7 to 1/20: spread 4.5e-9 in the bias, 9.7e-9 in the variance)
    and the route printed 10 digits; it now solves a second path and refuses beyond 1e-8."""
    with pytest.raises(IllConditioned,
                       match=r"near pooled N = d \(N/d - 1 = 0\.0526\) two continuation paths "
                             r"give risks .* apart relative \(it answers up to 1e-08\)"):
        _maml(3.8, 0.1)
