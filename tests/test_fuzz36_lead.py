"""Issue 32, fuzz36 (lead): what this fuzz found, each test failing before."""

import argparse

import pytest

from riskcalc.cli import build_parser


def _subparsers():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_max_minutes_help_names_the_logistic_limit_only_where_there_is_a_model_option():
    """``--max-minutes``' help said "with --model logistic the solvers' own 60 s" in every
    verb, also in check, figures, simulate and check-method, which take no ``--model``."""
    seen = set()
    for name, p in _subparsers().items():
        opts = {o: a for a in p._actions for o in a.option_strings}
        if "--max-minutes" not in opts:
            continue
        logistic = "--model" in opts and "logistic" in (opts["--model"].choices or ())
        assert ("--model logistic" in opts["--max-minutes"].help) == logistic, name
        seen.add((name, logistic))
    assert {n for n, lg in seen if lg} == {"predict", "compare", "sweep", "advise"}
    assert {n for n, lg in seen if not lg} >= {"check", "figures", "simulate", "check-method"}


def test_logistic_lam_zero_near_the_threshold_stops_at_max_seconds(monkeypatch):
    """lam = 0 just below the Candes-Sur threshold h: ||w_hat|| grows without bound as gamma ->
    h, and the one stage from lam = 1e-4 to 0 (on ever larger rules) ran for minutes (38 s at
    gamma = h (1 - 1e-4), signal = r = 0), past max_seconds: the time was checked only between
    stages. Now every residual evaluation checks the deadline. A clock advancing 1 s per
    reading makes the stage outlast max_seconds = 25 s here, deterministically (the real
    stage takes ~0.5 s)."""
    import types

    import riskcalc
    from riskcalc.logistic import fixed_point, path
    from riskcalc.logistic.transition import mle_threshold

    ticks = iter(range(10 ** 6))
    clock = types.SimpleNamespace(perf_counter=lambda: float(next(ticks)))
    # One clock for the solver and the lam path that starts its deadline (h42logi moved the
    # path out of fixed_point; the real clock there put the deadline out of the fake's reach).
    monkeypatch.setattr(fixed_point, "time", clock)
    monkeypatch.setattr(path, "time", clock)
    h = mle_threshold(0.0)
    with pytest.raises(ValueError, match="was still solving at max_seconds = 25 .*Candes-Sur "
                                         "threshold h = 0.5, where the MLE's norm grows"):
        riskcalc.logistic_limit(gamma=h * (1 - 1e-2), signal=0.0, r=0.0, lam=0.0,
                                max_seconds=25.0)
    assert next(ticks) < 200          # stopped at the deadline, not after the stage


def test_a_method_refusing_its_settings_is_named(tmp_path, capsys):
    """``simulate paper000-fig1 --set n=10``: FedAvg's default batch_size 16 exceeds n, and the
    refusal said "batch_size must lie in [1, n] = [1, 10] ..., got 16", naming neither the
    method nor where 16 came from (the user never set it)."""
    from tests.helpers import run_cli

    code, out, err = run_cli(["simulate", "paper000-fig1", "--set", "n=10", "--set", "R=1",
                              "--reps", "2", "--out", tmp_path / "s.csv", "--no-progress"],
                             capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("error: method fedavg (algorithm fedavg, its defaults): batch_size "
                          "must lie in [1, n] = [1, 10]")
    assert "--set fedavg.PARAM=VALUE" in err
    assert not (tmp_path / "s.csv").exists()


def test_signal_without_rounds_names_the_rounds_where_the_verb_has_them(capsys):
    """``predict fedavg ... --signal 1`` said "--signal applies to --model logistic only",
    though ``--rounds`` takes it too; sweep, which has no rounds, still says "only"."""
    from tests.helpers import run_cli

    linear = ["fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1"]
    for verb in ("predict", "compare"):
        code, _, err = run_cli([verb, *linear] + (["--d", "100"] if verb == "compare" else []),
                               capsys)
        assert (code, err) == (2, "error: --signal applies to --model logistic or along the "
                                  "rounds (with --rounds)\n"), verb
    code, _, err = run_cli(["sweep", *linear, "--d", "100"], capsys)
    assert (code, err) == (2, "error: --signal applies to --model logistic only\n")


@pytest.mark.parametrize("verb", ["compare", "sweep"])
def test_a_method_with_a_limit_alone_is_not_called_unknown(verb, tmp_path, capsys,
                                                           monkeypatch):
    """A plugin's method registered with a limit and no estimator: compare and sweep said
    "method must be one of fedavg, ...; got 'fz36l'", as if it did not exist (check-method
    said so too until fuzz36 rest F9; now all three read ``get_estimator``'s message)."""
    import riskcalc
    from riskcalc import plugins
    from tests.helpers import run_cli

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = tmp_path / "fz36l.py"
    path.write_text("import riskcalc\n"
                    "def limit(spec, route):\n"
                    "    res = riskcalc.limit('ftfa', gamma=spec.gamma, sigma=spec.sigma, "
                    "r=spec.r)\n"
                    "    return res.bias, res.variance\n"
                    "riskcalc.register_method(riskcalc.Method('fz36l', 'x', 'r', None, True, "
                    "'x', limit))\n")
    try:
        code, out, err = run_cli(["--plugin", path, verb, "fz36l", "--gamma", "2", "--r", "1",
                                  "--sigma", "0.5", "--d", "20", "--reps", "2"], capsys)
    finally:
        if "fz36l" in riskcalc.METHODS:
            riskcalc.unregister_method("fz36l")
    assert (code, out) == (2, "")
    assert err == ("error: method fz36l has a limit but no finite-sample estimator to "
                   "simulate: register one with montecarlo.register_estimator (docs: "
                   "extending)\n")


@pytest.mark.parametrize("bad", ["lam", ["lam"], 3, [{"lam": 1.0}, "x"]])
def test_simulate_rounds_personalize_of_another_type_is_named(bad):
    """``simulate_rounds(personalize="lam")`` said "dictionary update sequence element #0 has
    length 1" (seen by helper f36rounds); now personalize's forms are named."""
    import numpy as np

    from montecarlo.linear.rounds import simulate_rounds

    with pytest.raises(ValueError, match=r"^personalize takes a dict \(\{'steps': k"):
        simulate_rounds("fedavg", gamma=[2.0, 3.0], r=1.0, sigma=0.5, signal=1.0, rounds=[1],
                        local_steps=np.inf, step_size=None, d=20, reps=2, personalize=bad,
                        progress=False)


def test_d_with_a_powerlaw_of_its_own_size_says_so(capsys):
    """``predict ... --spectrum powerlaw:1,100 --d 100`` was told "--d applies with
    --spectrum powerlaw:P", which it had given (seen by helper g36docs)."""
    from tests.helpers import run_cli

    code, _, err = run_cli(["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--lam", "0.5", "--spectrum", "powerlaw:1,100", "--d", "100"],
                           capsys)
    assert code == 2 and err.count("\n") == 1
    assert "powerlaw:P (no D of its own)" in err
    assert err.rstrip().endswith("powerlaw:P,D gives its own D eigenvalues")


def test_a_range_that_takes_inf_says_so():
    """``rounds_limit(..., rounds=[nan])`` said "rounds must be a finite number in [0, inf)",
    though ``rounds=[inf]`` answers (seen by helper f36rounds): a range with allow_inf now
    shows inf as taken."""
    import numpy as np

    import riskcalc
    from riskcalc._validate import as_array

    with pytest.raises(ValueError, match=r"^rounds must be a number in \[0, inf\], got nan"):
        riskcalc.rounds_limit("fedavg", gamma=[2.0, 3.0], r=1.0, sigma=0.5, signal=1.0,
                              rounds=[np.nan], local_steps=np.inf)
    with pytest.raises(ValueError, match=r"^x must be a finite number in \[0, inf\), got inf"):
        as_array("x", np.inf, low=0.0)


def test_a_resumed_sweep_is_budgeted_for_the_tasks_its_cache_lacks(tmp_path, capsys):
    """``--max-minutes`` counted the tasks already in ``--cache``: a fully cached sweep was
    refused for the work it would not do, so a long run resumed only with the limit it began
    with (seen by helper g36seeds). Now only the missing tasks are estimated."""
    from tests.helpers import run_cli

    cache = tmp_path / "c.jsonl"
    common = ["sweep", "rtfa", "--r", "1", "--sigma", "0.5", "--lam", "0.5", "--d", "20",
              "--reps", "2", "--cache", cache, "--no-progress"]
    code, _, _ = run_cli(common + ["--gamma", "1,2", "--out", tmp_path / "a.csv"], capsys)
    assert code == 0
    tiny = ["--max-minutes", "1e-7"]        # 6 microseconds: no replicate fits
    code, _, err = run_cli(common + ["--gamma", "1,2", "--out", tmp_path / "b.csv"] + tiny,
                           capsys)
    assert code == 0, err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    code, _, err = run_cli(common + ["--gamma", "1,2,3", "--out", tmp_path / "c.csv"] + tiny,
                           capsys)
    assert code == 2 and "2 replicate(s) x 3 point(s) at d = 20, 4 of them in --cache" in err
