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


# was: simulated and returned column 5 twice, where rounds_limit refuses [5, 5] (session 23)
def test_simulate_rounds_refuses_a_round_given_twice_as_rounds_limit_does():
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=[0.5, 2.0], r=0.3, sigma=0.4, signal=1.0, local_steps=2, step_size=0.1)
    with pytest.raises(ValueError, match="rounds lists 5 twice") as sim:
        simulate_rounds("fedavg", rounds=[0, 5, 5], d=20, reps=1, seed=0, **kw)
    with pytest.raises(ValueError) as lim:
        riskcalc.rounds_limit("fedavg", rounds=[0, 5, 5], **kw)
    assert str(sim.value) == str(lim.value)
