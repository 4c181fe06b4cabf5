"""Issue 32, eighteenth hardening pass: cases found while landing session 23's work (the old
behaviour in each test's comment)."""

import numpy as np
import pytest

import riskcalc

NEAR = dict(gamma=[2.0, 1.0 / (0.5 + 1e-6)], r=0.3, sigma=0.4, signal=1.0, rounds=[1, 5],
            local_steps=np.inf)


# was: TypeError (None * float) from the divergent-step diagnosis, which read step_size before
# asking whether there were local steps at all; the message said "pooled N = d exactly".
def test_exact_local_solves_near_pooled_n_equal_d_get_the_gamma_error():
    with pytest.raises(ValueError, match=r"^gamma: the round map's spectrum reaches 0 to "
                                         r"rounding \(pooled N = d: sum_j 1/gamma_j = 1\.000001"):
        riskcalc.rounds_limit("fedavg", **NEAR)
