"""Issue 32, fuzz37 (logi2): what this fuzz found, each test failing before."""

import pytest

from riskcalc import Spectrum


@pytest.mark.parametrize("signal, kw", [(1e50, {}), (1e200, {}),
                                        (1e4, {"spectrum": Spectrum([1e3])})])
def test_ridge_simulation_refuses_signals_beyond_the_label_rule(signal, kw):
    """F1: ``montecarlo.logistic.ridge.simulate`` at signal 1e50 reported risk 0.0 (``r u``
    vanished beside ``w_0`` in floating point); now refused up front beyond the logistic
    limits' reach ``LABEL_KAPPA_MAX`` (with a spectrum: times the largest eigenvalue's root)."""
    from montecarlo.logistic.ridge import simulate

    with pytest.raises(ValueError, match=r"signal = .* and r = 1 .*signal \+ r must lie in "
                                         r"\[0, "):
        simulate(gamma=0.5, signal=signal, r=1.0, lams=[1.0], d=4, reps=2, **kw)


@pytest.mark.parametrize("signal", [3000.0, 1e200])
def test_pipeline_simulation_refuses_signals_beyond_its_measurement_rule(signal):
    """F1: ``simulate_pipeline`` at signal 1e200 raised an OverflowError from ``axis_key``, at
    3000 the theory solver's "quadrature rule of 8.86e+07 nodes ... the iterate left the
    solution's scales" after solving; now a ValueError up front naming signal, r and the range
    (1692: the exact test metrics' rule within ``MAX_RULE_NODES``)."""
    from montecarlo.logistic.pipeline import simulate_pipeline

    with pytest.raises(ValueError, match=r"signal = .* and r = 1 .*test metrics.*signal \+ r "
                                         r"must lie in \[0, 1692\]"):
        simulate_pipeline(gamma=0.5, signal=signal, r=1.0, lams=[1.0], global_lam=1.0, d=4,
                          reps=2)


def test_logistic_solvers_stop_before_the_command_timer(monkeypatch, capsys):
    """F2: with --max-minutes the solvers' deadline was the command's timer's own moment, and
    the timer's generic "stopped at the --max-minutes limit" won over the solver's reason
    (``predict rtfa --model logistic --gamma 0.49995 --signal 0 --r 0 --lam 0 --max-minutes
    0.02``: just below the separability threshold). The solvers now get 0.95 of the limit.
    Recorded here, without solving: the timer's seconds and the solver's ``max_seconds``."""
    from contextlib import contextmanager

    import riskcalc
    from riskcalc.cli.shared import guards
    from tests.helpers import run_cli

    timers = []

    @contextmanager
    def timer(seconds):
        timers.append(seconds)
        yield

    def solver(**kw):
        raise ValueError(f"solver given {kw['max_seconds']:g} s")

    monkeypatch.setattr(guards, "time_limit", timer)
    monkeypatch.setattr(riskcalc, "logistic_limit", solver)
    code, out, err = run_cli(["predict", "rtfa", "--model", "logistic", "--gamma", "0.49995",
                              "--signal", "0", "--r", "0", "--lam", "0", "--max-minutes", "1"],
                             capsys)
    assert code == 2 and out == "" and timers == [60.0]
    assert err == "error: solver given 57 s\n"


def test_the_python_logistic_sweep_takes_max_minutes():
    """F3: ``montecarlo.logistic.sweep.sweep_logistic`` had no ``max_minutes`` (the linear
    ``montecarlo.sweep.sweep`` has): 2 points x 1000 replicates at d = 2000, estimated at
    about 5000 minutes, started. Now refused before any work (default 10 minutes, as the
    linear sweep), the limit checked as there."""
    from montecarlo.logistic.sweep import sweep_logistic

    kw = dict(gamma=[0.01, 0.02], r=1.0, signal=1.0, lam=1.0, d=2000, progress=False)
    with pytest.raises(ValueError, match=r"^max_minutes = 10: 2 grid points x 1000 replicates "
                                         r"at d = 2000 are estimated at .* min of work"):
        sweep_logistic("rtfa", reps=1000, max_minutes=10, **kw)
    with pytest.raises(ValueError, match=r"max_minutes must lie in \(0, inf\]"):
        sweep_logistic("rtfa", reps=2, max_minutes=0, **kw)


def test_ridge_replicate_cosine_at_the_centre_is_undefined_not_a_warning():
    """F4: at signal 1000, r 1, lam 1 (d = 4) the ridge estimate is the centre itself (the
    log-loss gradient there is below Newton's tolerance), and the cosine between
    ``w_hat - c`` and ``w_i - c`` was 0 / 0: numpy's RuntimeWarning and a NaN; now None (as
    at ``w_i = c``), the other quantities measured."""
    import warnings

    from montecarlo.logistic.ridge import simulate_replicate

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = simulate_replicate(gamma=0.5, signal=1000.0, r=1.0, lams=[1.0], d=4, seed=0,
                                 rep=0, n_test=100)
    assert out["cosine"] == [None] and out["risk"] == [pytest.approx(1.0)]


def test_the_logistic_sweep_checks_the_simulations_reach_before_predicting():
    """F5: ``sweep_logistic`` ran the pipeline's replicates without F1's check: at signal
    1800 with M = 2 clients the predictions ran first (at 2000 estimated at 66 s), then a
    replicate failed with the theory solver's "quadrature rule of 5.32e+07 nodes ... the
    iterate left the solution's scales". Now refused before any prediction (here the limits
    are held to 1e-9 s: they would refuse first)."""
    from montecarlo.logistic.sweep import sweep_logistic

    with pytest.raises(ValueError, match=r"signal = 1800 and r = 0.5 .*signal \+ r must lie in "
                                         r"\[0, 1692\]"):
        sweep_logistic("rtfa", gamma=1.0, r=[0.5, 1.0], signal=1800.0, lam=1.0, d=4, reps=2,
                       clients=2, global_lam=1.0, progress=False, max_seconds=1e-9)


def test_a_signal_beyond_the_ladder_levels_reach_is_named():
    """F6: ``compare rtfa --model logistic --global federated --clients 2 --gamma 1 --signal
    1700 --r 1 --lam 1 --global-lam 1 --d 4 --reps 2 --max-minutes 5`` failed after 24 s with
    "a quadrature rule of 5.02e+07 nodes (feature scales 1.7e+03 and 0.556), beyond 5e+07:
    the iterate left the solution's scales": it had not; the label weight at ||w_i|| = 1700
    alone needs that rule at ladder level 190. Now the message says so, and the reach."""
    from riskcalc.errors import SolverError
    from riskcalc.logistic.engine.gaussian import Rule

    with pytest.raises(SolverError, match=r"signal strength \|\|w_i\|\| = 1700 needs a "
                                          r"quadrature rule of 5.02e\+07 nodes at ladder level "
                                          r"190 .*reaches \|\|w_i\|\| <= 1692; lower signal"):
        Rule(1700.0, 190)


def test_the_logistic_sweep_with_a_cache_refuses_a_missing_signal(tmp_path):
    """F7: ``sweep_logistic(signal=None, cache=...)`` was a TypeError ("float() argument must
    be a string or a real number, not 'NoneType'") from counting the cached tasks (F3) before
    the limits named it; now the signal is checked first."""
    from montecarlo.logistic.sweep import sweep_logistic

    kw = dict(gamma=2.0, r=1.0, lam=1.0, d=4, reps=2, progress=False,
              cache=tmp_path / "c.jsonl")
    sweep_logistic("rtfa", signal=1.0, **kw)        # a cache holding tasks
    with pytest.raises(ValueError, match="^signal must be a real number, got None"):
        sweep_logistic("rtfa", signal=None, **kw)


def test_the_logistic_sweep_with_a_cache_names_a_missing_global_lam(tmp_path):
    """F8: as F7, ``sweep_logistic(clients=2, global_lam=None)`` (or "x") with a cache
    holding tasks was a TypeError (ValueError "could not convert string to float") from
    counting the cached tasks (F3) before the limits named global_lam; the count now follows
    the limits."""
    from montecarlo.logistic.sweep import sweep_logistic

    kw = dict(gamma=2.0, r=1.0, signal=1.0, lam=1.0, d=4, reps=2, progress=False, clients=2,
              cache=tmp_path / "c.jsonl")
    sweep_logistic("rtfa", global_lam=1.0, **kw)        # a cache holding tasks
    with pytest.raises(ValueError, match=r"^global_lam \(the global model's ridge toward 0, "
                                         r">= 0\) is required with clients"):
        sweep_logistic("rtfa", global_lam=None, **kw)
    with pytest.raises(ValueError, match="^global_lam must be a real number, got 'x'"):
        sweep_logistic("rtfa", global_lam="x", **kw)


@pytest.mark.parametrize("gamma, said", [
    (None, r"^gamma \(the target client's d / n, > 0\) is required"),
    (0.0, r"^gamma must lie in \(0, inf\), got 0.0"),
    ([1.0, 0.0], r"^gamma must lie in \(0, inf\)")])
def test_the_logistic_sweep_names_a_missing_or_zero_gamma(gamma, said):
    """F9: ``sweep_logistic(gamma=None)`` was a TypeError (float(None)) and ``gamma=0`` a
    ZeroDivisionError (d / gamma); now ValueErrors naming gamma (-1 already said "gamma must
    lie in (0, inf)")."""
    from montecarlo.logistic.sweep import sweep_logistic

    with pytest.raises(ValueError, match=said):
        sweep_logistic("rtfa", gamma=gamma, r=1.0, signal=1.0, lam=1.0, d=4, reps=2,
                       progress=False)


@pytest.mark.parametrize("bad, said", [
    ({"lams": [[1.0, 2.0]]}, "^lam must be a 1-d list of numbers, got an array of shape"),
    ({"signal": [[1.0]]}, "^signal must be a number, got an array of shape"),
    ({"global_lam": [1.0]}, "^global_lam must be a number, got an array of shape")])
@pytest.mark.parametrize("route", ["ridge", "pipeline"])
def test_the_logistic_simulations_refuse_matrices(route, bad, said):
    """F10: a matrix of penalties was flattened into a list (both simulations ran), and a
    signal [[1.0]] or global_lam [1.0] read as a number (numpy's DeprecationWarning; the
    ridge's r [1.0] likewise); now refused naming the parameter."""
    from montecarlo.logistic.pipeline import simulate_pipeline
    from montecarlo.logistic.ridge import simulate

    if route == "ridge" and "global_lam" in bad:
        bad, said = {"r": [1.0]}, "^r must be a number, got an array of shape"
    kw = dict(gamma=1.0, r=1.0, signal=1.0, lams=[1.0], d=4, reps=2, **(
        {} if route == "ridge" else {"global_lam": 1.0}))
    with pytest.raises(ValueError, match=said):
        (simulate if route == "ridge" else simulate_pipeline)(**{**kw, **bad})


@pytest.mark.parametrize("others, said", [
    ({"gamma": [1.0]}, r"^others must be a dict \{"),
    ([1.0], r"^others must be a dict \{"),
    ({"gamma": [1.0], "r": [1.0, 2.0]}, "^others must list as many r as gamma values"),
    ({"gamma": [0.0], "r": [1.0]}, r"^others\['gamma'\] must lie in \(0, inf\)"),
    ({"gamma": "1", "r": "1"}, r"^others\['gamma'\] must be a real number, got '1'")])
def test_the_logistic_sweep_checks_the_other_clients(others, said):
    """F11: ``sweep_logistic(others=...)`` was unchecked: a missing "r" a KeyError, unequal
    lengths an IndexError, a gamma 0 a ZeroDivisionError, a list a TypeError, and strings
    "1" ran as numbers."""
    from montecarlo.logistic.sweep import sweep_logistic

    with pytest.raises(ValueError, match=said):
        sweep_logistic("rtfa", gamma=1.0, r=1.0, signal=1.0, lam=1.0, d=4, reps=2,
                       global_lam=1.0, others=others, progress=False)
