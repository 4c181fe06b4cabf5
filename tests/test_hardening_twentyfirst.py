"""Issue 32, third pass, session 25: divergence reported the same way on every route; work
estimated before solving where it grows with the number of distinct clients."""

import numpy as np
import pytest

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


# was: predict rtfa --model logistic --federation F with 500 distinct clients ran for minutes
# under the 60 s default (estimated 16 s: the global model's evaluations counted as fixed, over
# the distinct r only), while advise refused F at once. Measured (RTFA, lam = global_lam = 0.1,
# signal 1, Gauss-Hermite rules): 5.6 s at 50 distinct clients, 18.6 s at 100 (estimated 7.4
# and 25.7 s now, 1.6 and 3.3 s before).
def test_logistic_work_estimate_grows_with_the_joint_fixed_point():
    from riskcalc.logistic.work import finite_seconds

    rng = np.random.default_rng(0)
    g, r = rng.uniform(0.3, 3.0, 200), rng.uniform(0.2, 2.0, 200)

    def est(m):
        return finite_seconds(g[:m], r[:m], 1.0, 0.1, 0.1, "rtfa", r[:1])

    assert est(100) >= 18.6 and est(50) >= 5.6
    assert est(200) > 3.5 * est(100)            # quadratic in the distinct clients
    # Equal gamma and r are one group: 100 copies of one client cost one client's solve.
    assert finite_seconds(np.full(100, 2.0), np.full(100, 1.0), 1.0, 0.1, 0.1, "rtfa",
                          [1.0]) == finite_seconds([2.0], [1.0], 1.0, 0.1, 0.1, "rtfa", [1.0])


def test_logistic_many_distinct_clients_refused_at_once():
    rng = np.random.default_rng(1)
    with pytest.raises(ValueError, match=r"500 distinct clients\): estimated at .* over the "
                                         r"limit max_seconds = 60; fewer distinct clients"):
        riskcalc.logistic_clients_limit(gamma=rng.uniform(0.3, 3.0, 500),
                                        r=rng.uniform(0.2, 2.0, 500), signal=1.0, lam=0.1,
                                        global_lam=0.1)


# was: the logistic continuation below lam = 1e-4 predicted each stage to cost the last one,
# so at gamma 0.5, signal = r = 1, lam = 1e-8 (stages 3.1, 6.8, 22 s, ... on this machine) a
# 99 s stage ran before the 60 s budget was found spent (refused at 124 s). The growth of the
# last two stages now enters the prediction. On a fake clock: stages of 0.5, 1, 3, 9, 27 s.
def test_logistic_continuation_refused_before_an_overlong_stage(monkeypatch):
    from riskcalc.logistic import fixed_point as fp

    clock = [0.0]
    cost = {1e-4: 0.5, 1e-5: 1.0, 1e-6: 3.0, 1e-7: 9.0, 1e-8: 27.0}

    def fake_root(x, kappa, nodes, gamma, lam, c_e, C, deadline=None):
        clock[0] += next((v for k, v in cost.items() if np.isclose(lam, k)), 0.0)
        return x, 0.0, None

    monkeypatch.setattr(fp, "_root_resolved", fake_root)
    monkeypatch.setattr(fp.time, "perf_counter", lambda: clock[0])
    # Refused at 1e-7, before its 27 s stage (the ladder's stages: ranges.ladder).
    with pytest.raises(ValueError, match=r"^lam = 1e-08: the continuation in lam reached "
                                         r"1e-07 in 13.5 s, and the 1 stages left"):
        fp.solve_fixed_point(0.5, 1.0, 1.0, 1e-8, max_seconds=30.0)
    # Below the separability threshold (gamma 0.2 < h) the stages' growth is not projected.
    clock[0] = 0.0
    fp.solve_fixed_point(0.2, 1.0, 1.0, 1e-8, max_seconds=100.0)
