"""Issue 32, fuzz40 (logi3): what this fuzz found, each test failing before."""

import time

import pytest

import riskcalc

#: Two clients, the first separable (gamma 0.5 above its Candes-Sur threshold 0.33).
SEPARABLE = dict(gamma=[0.5, 1.0], r=[1.0, 0.5], signal=1.0, global_lam=0.1, method="rtfa")


def test_fine_tuning_rule_not_built_past_max_seconds():
    # F1: RTFA at lam = 1e-300 with max_seconds = 5 ran 10.3 s and 2.2 GB (two-point:1,4,0.5
    # 8.9 s, 1.9 GB): building a 3-d rule of 3.8e7 nodes took 5.3 s, unseen by the deadline
    # (checked between residual evaluations). Rule3 is now not built when building it and one
    # evaluation would end past the deadline (lam = 1e-12, max_seconds = 1: built a 3.1e7-node
    # rule first, refused after 3.9 s). On a loaded machine the deadline can pass before the
    # rule is reached: its own refusal then, equally in time (session 40's whole-suite run).
    begun = time.perf_counter()
    # the deadline's refusal reads "(1.33 s): its solution's norm grows" once past it, or
    # "(0.9 s: its next residual evaluation ...): its solution's ..." when predicted.
    with pytest.raises(ValueError, match=r"max_seconds = 1 \(.*: (its next quadrature "
                                         r"rule, of .* nodes, built and evaluated once, would "
                                         r"have|its solution's norm grows as lam falls)"):
        riskcalc.logistic_clients_limit(lam=1e-12, max_seconds=1, **SEPARABLE)
    assert time.perf_counter() - begun < 3.0


def test_simulated_fit_refuses_a_lam_too_small_to_hold_it():
    # F2: on separable data (gamma 0.5, d = 50) the simulated pipeline's ridge fits stopped at
    # Newton's gradient tolerance 1e-10 where the loss alone is flat: lam = 1e-20 and 1e-300
    # returned the same w_hat (risk 13157.6, its next Newton step 5.7 long), not their
    # minimizers (the risk grows as lam falls: 4013 at 1e-8). Now refused, naming lam.
    from montecarlo.logistic.pipeline import simulate_replicate

    with pytest.raises(ValueError, match=r"rtfa: the simulated fit at lam = 1e-300 stopped .* "
                                         r"give a larger lam"):
        simulate_replicate(gammas=[0.5, 1.0], rs=[1.0, 0.5], signal=1.0, lams=[1e-300],
                           global_lam=0.1, d=50, seed=0, rep=0)


def test_simulated_logistic_limit_refuses_a_lam_too_small_to_hold_its_fit():
    # F3 (F2's twin in montecarlo.logistic.ridge, the simulator of logistic_limit): prox's
    # Newton stops at a gradient tolerance, so lam = 1e-20 and 1e-300 gave the same risk
    # 13157.6 at gamma 0.5, d = 50 (12083.8 at lam 1e-12, 4013.2 at 1e-8). Now refused.
    from montecarlo.logistic.ridge import simulate_replicate

    with pytest.raises(ValueError, match=r"ridge fit toward centre_scale \* w_0: the simulated "
                                         r"fit at lam = 1e-300 .* give a larger lam"):
        simulate_replicate(gamma=0.5, signal=1.0, r=1.0, lams=[1e-300], d=50, seed=0, rep=0)


def test_warm_started_fixed_point_falls_back_to_the_ladder(monkeypatch):
    # F4: logistic_lam_path(gamma=0.5, signal=r=1, lams=[1, 1e-3, 1e-300], max_seconds=3)
    # failed "a quadrature rule of 1.39e+09 nodes ...: the iterate left the solution's scales"
    # (3.1 s): the direct solve from lam = 1e-3's root outgrew every rule, and that
    # SolverError skipped the continuation in lam that lam = 1e-300 alone takes (its overtime
    # refusal, "give a larger lam"). Replayed cheaply: the direct attempt's rule cap, forced.
    from riskcalc.errors import SolverError
    from riskcalc.logistic import fixed_point

    real, calls = fixed_point._root_resolved, []

    def capped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise SolverError("logistic fixed point: a quadrature rule of 1.39e+09 nodes")
        return real(*args, **kwargs)

    expected = fixed_point.solve_fixed_point(0.5, 1.0, 1.0, 0.5)[0]
    monkeypatch.setattr(fixed_point, "_root_resolved", capped)
    x = fixed_point.solve_fixed_point(0.5, 1.0, 1.0, 0.5, start=expected + 1.0)[0]
    assert x == pytest.approx(expected, rel=1e-8)


def test_rtfa_at_a_subnormal_lam_is_its_lam_zero_limit_below_the_threshold():
    # F5: RTFA at lam = 1e-300 (or 5e-324) with clients whose MLE exists (gamma [0.05, 0.1]
    # below the Candes-Sur threshold) failed "logistic fine-tuning: no convergence at lam =
    # 1.30975e-26 (residual 4.63e-04)" while lam = 0 and pFedMe at 1e-300 answered: log kappa_hg
    # left the residuals' window. Below MLE_LAM = 1e-20 it is now the lam = 0 limit (the MLE).
    res = riskcalc.logistic_clients_limit(gamma=[0.05, 0.1], r=[1.0, 0.5], signal=1.0,
                                          global_lam=0.1, lam=1e-300, method="rtfa")
    assert res.risk == pytest.approx([0.33600653, 0.73514615], rel=1e-6)


def test_spectral_rtfa_at_a_subnormal_lam_is_its_lam_zero_limit_below_the_threshold():
    # F6 (F5's twin under a spectrum): two-point:1,4,0.5 at lam = 1e-300 failed "logistic
    # fine-tuning with a spectrum: no convergence at lam = 1.32158e-26" where lam = 0 answered.
    res = riskcalc.logistic_clients_limit(gamma=[0.05, 0.1], r=[1.0, 0.5], signal=1.0,
                                          global_lam=0.1, lam=1e-300, method="rtfa",
                                          spectrum="two-point:1,4,0.5")
    assert res.risk == pytest.approx([0.2838686, 0.60554135], rel=1e-6)
    assert res.params["lam"] == 1e-300
