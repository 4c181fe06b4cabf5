"""Issue 32, third pass, session 25: divergence reported the same way on every route."""

import numpy as np

import riskcalc


# was: NaN bias, variance and risk (printed "nan", beside a note saying values beyond the
# floating point range are infinite) for FTFA / RTFA fine-tuning steps from a finite-M FedAvg
# centre with a divergent step size, once the traces overflow (inf / inf in the assembly).
def test_finite_clients_steps_overflow_is_infinite_not_nan():
    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=[2, 100],
                               step_size=[0.1, 10.0], clients=3)
    assert res.converges.tolist() == [True, False]
    assert np.isfinite(res.risk[0]) and res.risk[0] > 0
    assert res.bias[1] == res.variance[1] == res.risk[1] == np.inf
    res = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.1, steps=100,
                               step_size=10.0, clients=3)
    assert res.converges is False and res.risk == np.inf
