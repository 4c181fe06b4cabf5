"""Issue 32, fuzz40 (path): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc

BASE = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0)


@pytest.mark.parametrize("rounds", [[2 ** 53 + 1], 2 ** 53 + 1, np.array([2 ** 53 + 1]),
                                    [1, np.inf, 2 ** 53 + 1], [np.uint64(2 ** 53 + 1)]])
def test_rounds_past_two_to_the_53_refused_before_rounding(rounds):
    """F1: ``rounds_limit(rounds=[2**53 + 1])`` was solved as T = 2^53 (its float) and returned
    ``rounds`` [9.007e15]; the command line refused the same T."""
    with pytest.raises(ValueError, match="rounds must be integers in 0..9007199254740992"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=rounds, local_steps=1, step_size=0.1)


def test_local_steps_past_two_to_the_53_refused_before_rounding():
    """F1: ``local_steps=2**53 + 1`` was taken as K = 2^53 (``params`` said so)."""
    with pytest.raises(ValueError, match="local_steps must be one integer"):
        riskcalc.rounds_limit("fedavg", **BASE, rounds=[1], local_steps=2 ** 53 + 1,
                              step_size=0.1)
