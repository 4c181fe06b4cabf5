"""Issue 32, fuzz41 (path): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

BASE = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)


@pytest.mark.parametrize("K", [1, 2])
def test_step_floor_is_step_times_the_covariances_top(K):
    """F1: under scaled:1e100 a step of 1e-101 (step x top 0.1, an ordinary step) was refused as
    "filter lost to rounding": the floor 1e-12 was on the step alone. It is now on step x the
    covariance's largest eigenvalue, and the answer is Sigma = I's with the models times
    sqrt(c) and the step times c."""
    kw = dict(gamma=[0.5, 2.0], sigma=0.5, rounds=[1, 5, np.inf], local_steps=K)
    big = riskcalc.rounds_limit("fedavg", **kw, r=1.0, signal=1.0, step_size=1e-101,
                                spectrum="scaled:1e100")
    unit = riskcalc.rounds_limit("fedavg", **kw, r=1e50, signal=1e50, step_size=0.1)
    assert np.allclose(big.risk, unit.risk, rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=r"step_size: step_size times the largest eigenvalue "
                                         r"of the spectrum is 3e-101, below 1e-12"):
        riskcalc.rounds_limit("fedavg", **kw, r=1.0, signal=1.0, step_size=1e-101,
                              spectrum="two-point:1,3,0.5")


def test_step_floor_on_the_command_line_under_a_spectrum(capsys):
    """F1: the command line refused --local-step-size 1e-101 under scaled:1e100 on its own
    floor before the limit saw the spectrum; Sigma = I keeps its refusal, named as the option."""
    argv = ["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1",
            "--rounds", "1,5", "--local-steps", "2", "--local-step-size", "1e-101"]
    code, out, err = run_cli(argv + ["--spectrum", "scaled:1e100"], capsys)
    assert code == 0 and "1.123576e+100" in out, err
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and err.startswith("error: --local-step-size must be >= 1e-12 with "
                                        "finite --local-steps, got 1e-101"), err
