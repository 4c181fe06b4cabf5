"""Issue 32, fuzz37 (unbound): what this fuzz found, each test failing before."""

import pytest

import riskcalc

TWO_POINT = "two-point:1,4,0.3"


@pytest.mark.parametrize("gamma", [3.9, 3.96])
def test_maml_fl_near_pooled_n_equal_d_starts_on_the_physical_branch(gamma):
    """F1: MAML-FL over 4 clients sharing two-point:1,4,0.3 at gamma 3.9 (N/d - 1 = 0.026):
    the companion pencil, continued in gamma at the small starting shifts, landed on an
    unphysical root (E_D[K] < 0), and the shifts' Newton iteration chased t -> 0 until
    "the subordination fixed point did not converge" (alpha = 0 and 0.01; at 0.1 after
    10-219 s). At alpha = 0 the global model is FedAvg's: the limit is FTFA's."""
    kw = dict(gamma=gamma, r=1.0, sigma=1.0, clients=4, spectrum=TWO_POINT)
    maml = riskcalc.limit("maml_fl", alpha=0.0, **kw).risk
    assert maml == pytest.approx(riskcalc.limit("ftfa", **kw).risk, rel=1e-10)
    assert riskcalc.limit("maml_fl", alpha=0.01, **kw).risk == pytest.approx(maml, rel=1e-2)
