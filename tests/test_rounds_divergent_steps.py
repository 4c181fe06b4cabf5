"""Issue 32 / 29 (fuzz pass 17): FTFA after the rounds with a divergent step, and the options
around it, read and refused the same way on every route: ``--steps`` named as the option without
--rounds as with it, and a step size given with exact local solves (``local_steps=inf``, no
step) refused by ``rounds_limit`` as the command line refuses ``--local-step-size`` there.
"""

import numpy as np
import pytest

import riskcalc
from tests.test_hardening_ninth import _one_error_line


# was: "error: steps must lie in [0, inf), got -1.0" (the Python name, the float).
@pytest.mark.parametrize("extra", [[], ["--clients", "3"]])
def test_plain_steps_named_as_the_option(extra, capsys):
    line = _one_error_line(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                            "--steps", "-1", "--step-size", "0.1", *extra], capsys)
    assert line == "error: --steps must be an integer >= 0 and <= 9007199254740992, got -1"


# was: accepted and dropped (the same curve at every step_size).
@pytest.mark.parametrize("method, kw", [("fedavg", {}), ("pfedme", {"lam": 1.0}),
                                        ("fedavg", {"spectrum": "two-point:1,4,0.5"})])
def test_step_size_with_exact_local_solves_is_refused(method, kw):
    args = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5, signal=1.0, rounds=[1], **kw)
    with pytest.raises(ValueError, match=r"^step_size = 0\.1: local_steps=inf is the exact "
                       r"local solve, no step: step_size applies to finite local_steps only; "
                       r"leave it out$"):
        riskcalc.rounds_limit(method, local_steps=np.inf, step_size=0.1, **args)
    # Without it the exact local solve answers.
    assert np.isfinite(riskcalc.rounds_limit(method, local_steps=np.inf, **args).risk).all()
