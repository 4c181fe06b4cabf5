"""Issue 32, fuzz38 (maml): what this fuzz found, each test failing before."""

import pytest

import riskcalc

TWO_POINT = "two-point:1,4,0.3"


def test_maml_fl_near_pooled_n_equal_d_says_why_its_pencils_fail():
    """F1: 4 clients on two-point:1,4,0.3 at gamma 3.85 (N/d - 1 = 0.039), alpha 0.1: the
    shifts converge, then the noise source's coupled pencil stalls at rounding (residual 2-4
    times the tolerance, condition numbers ~1e6) and the refusal said only "the
    deterministic-equivalent fixed point did not converge", with no cause or way out."""
    with pytest.raises(riskcalc.SolverError,
                       match=r"did not converge .*: near pooled N = d \(N/d - 1 = 0\.039\) "
                             r"the risk's coupled pencils are ill-conditioned .*; a gamma "
                             r"further from pooled N = d or a smaller alpha answers"):
        riskcalc.limit("maml_fl", gamma=3.85, r=1.0, sigma=1.0, alpha=0.1, clients=4,
                       spectrum=TWO_POINT)
