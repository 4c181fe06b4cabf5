"""Issue 32, fuzz37 (cache): what this fuzz found, each test failing before."""

import pytest

from tests.helpers import run_cli

#: 6 microseconds: no replicate fits.
TINY = ["--max-minutes", "1e-7"]
SIMULATE = ["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=2", "--set", "lam=1",
            "--set", "*.iterations=50", "--no-progress"]
LOGISTIC = ["sweep", "rtfa", "--model", "logistic", "--r", "1", "--signal", "1", "--lam", "1",
            "--d", "20", "--reps", "2", "--no-progress"]


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path, monkeypatch):
    """Each test runs in its own folder: an --out never.csv that a regression let through
    lands there, not in the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("argv, limit, grown, said", [
    (SIMULATE + ["--reps", "1"], TINY, ["--reps", "2"],
     "2 replicate(s) of paper001-fig2, 1 of them"),
    # 20 replicates are estimated at 0.14 s, the limit's solve at 0.06 s: 0.09 s lets the
    # limit be solved (a cached sweep still predicts, held to --max-minutes: F11).
    (LOGISTIC[:-3] + ["--reps", "20", "--no-progress", "--gamma", "2"],
     ["--max-minutes", "0.0015"], ["--gamma", "2,3"],
     "20 replicate(s) x 2 point(s) of the logistic model at d = 20, 20 of them")])
def test_a_resumed_run_is_timed_for_the_tasks_its_cache_lacks(argv, limit, grown, said,
                                                               tmp_path, capsys):
    """F1: ``simulate`` and the logistic ``sweep`` timed every task against --max-minutes,
    also those already in --cache (the linear sweep no longer did, fuzz36 lead F9): a fully
    cached run was refused for the work it would not do, so a long run resumed only with the
    limit it began with. Now only the missing tasks are timed."""
    cache = ["--cache", tmp_path / "c.jsonl"]
    code, _, err = run_cli(argv + cache + ["--out", tmp_path / "a.csv"], capsys)
    assert code == 0, err
    code, _, err = run_cli(argv + cache + ["--out", tmp_path / "b.csv"] + limit, capsys)
    assert code == 0, err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    grown_argv = argv[:-2] + grown if argv[-2] == grown[0] else argv + grown
    code, out, err = run_cli(grown_argv + cache + ["--out", tmp_path / "c.csv"] + limit, capsys)
    assert code == 2 and out == "" and f"{said} in --cache: estimated" in err


def test_the_python_sweep_and_compare_time_what_their_cache_lacks(tmp_path):
    """F1: ``montecarlo.sweep(..., cache=)`` and ``montecarlo.compare.compare(..., cache=)``
    checked ``max_minutes`` against every replicate, the cached ones included."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep
    from riskcalc.linear.model import ClientSpec

    kw = dict(reps=2, progress=False)
    cache = tmp_path / "s.jsonl"
    first = sweep("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, setting=Setting(d=20),
                  cache=cache, **kw)
    assert sweep("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, setting=Setting(d=20),
                 cache=cache, max_minutes=1e-7, **kw) == first
    with pytest.raises(ValueError, match=r"2 grid points x 2 replicates \(2 of them in cache"):
        sweep("rtfa", gamma=[2.0, 3.0], r=1.0, sigma=0.5, lam=0.5, setting=Setting(d=20),
              cache=cache, max_minutes=1e-7, **kw)
    spec, cache = ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5), tmp_path / "c.jsonl"
    first = compare(spec, Setting(d=20), cache=cache, **kw).as_dict()
    assert compare(spec, Setting(d=20), cache=cache, max_minutes=1e-7, **kw).as_dict() == first


@pytest.mark.parametrize("verb, option", [
    ("sweep", ["--measure", "conditional"]), ("compare", ["--eigvecs", "aligned"]),
    ("compare", ["--route", "auto"]), ("sweep", ["--features", "gaussian"]),
    ("compare", ["--noise", "gaussian"])])
def test_an_option_given_at_its_default_is_checked_as_given(verb, option, capsys):
    """F2: the family check saw only a value other than the parser default:
    ``--model logistic --measure empirical`` was refused, ``--measure conditional`` (the
    default) taken and ignored. The parser now keeps which options the command line gave."""
    code, out, err = run_cli([verb, "rtfa", "--model", "logistic", "--gamma", "2", "--r", "1",
                              "--signal", "1", "--lam", "1", "--d", "20", "--reps", "2",
                              "--no-progress"] + option, capsys)
    assert code == 2 and out == "" and f"{option[0]} does not apply to --model logistic" in err


@pytest.mark.parametrize("argv, said", [
    (["simulate", "--list", "--set", "m=2"], "--set does"),
    (["simulate", "--list", "--reps", "3", "--max-minutes", "0"], "--reps, --max-minutes do"),
    (["simulate", "--list", "--jobs", "1", "--trajectory"], "--jobs, --trajectory do"),
    (["figures", "--list", "--quick", "--seed", "3"], "--quick, --seed do"),
    (["figures", "--list", "--no-cache"], "--no-cache does"),
    (["check", "--list", "--paper", "001", "--full"], "--full does"),
    (["check", "--list", "--paper", "001", "--jobs", "2"], "--jobs does")])
def test_list_refuses_every_run_option_it_ignores(argv, said, capsys):
    """F3: ``--list`` refused only a few options (simulate: PRESET, --out, --cache; figures:
    ids, --all, --out) and printed the list ignoring the others, --set, --reps, --seed,
    --jobs, --max-minutes 0, --full included. Now every option it does not use is named."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and f"{said} not apply with it" in err



def test_a_sweep_with_steps_predicts_after_the_steps():
    """F5: ``sweep --steps K --step-size ETA`` predicted the converged limit (RTFA bias 0.553)
    beside a simulation after K steps (0.706; compare and predict: 0.697), silently: every
    row "outside the 95% interval". Now the finite-step limit, as compare; a method no
    finite-step limit covers is refused (a row has no note to say so)."""
    import riskcalc
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep
    from riskcalc.linear.model import ClientSpec

    kw = dict(gamma=2.0, r=1.0, sigma=0.5, setting=Setting(d=20), reps=2, steps=3,
              step_size=0.1, progress=False)
    rows = sweep("rtfa", lam=[0.5, 1.0], **kw)
    for row in rows:
        spec = ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=row["lam"])
        assert row["predicted_bias"] == pytest.approx(
            riskcalc.spec_steps_limit(spec, 3, 0.1).bias, rel=1e-12)
    with pytest.raises(ValueError, match="no finite-step limit covers maml_fl"):
        sweep("maml_fl", alpha=0.5, **kw)


def test_the_fedprox_alias_is_taken_by_sweep_and_check_method(capsys):
    """F6: ``fedprox`` (pfedme's alias everywhere) was refused by ``montecarlo.sweep``,
    ``montecarlo.check_method`` and ``riskcalc check-method`` ("method must be one of ...,
    pfedme; got 'fedprox'"), while predict, compare and the command line's sweep took it:
    ``get_estimator`` read no alias."""
    from montecarlo.linear.estimators import get_estimator
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep

    assert get_estimator("fedprox") is get_estimator("pfedme")
    rows = sweep("fedprox", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, setting=Setting(d=20),
                 reps=2, progress=False)
    assert rows[0]["method"] == "pfedme"
    code, out, err = run_cli(["check-method", "fedprox", "--d", "8", "--reps", "2",
                              "--spectrum", "identity", "--max-minutes", "1e-7"], capsys)
    assert code == 2 and "estimated" in err and "must be one of" not in err


@pytest.mark.parametrize("argv", [
    ["check-method", "rtfa", "--d", "20", "--reps", "2", "--gamma", "1e-6"],
    LOGISTIC + ["--gamma", "1e-9"], ["compare"] + LOGISTIC[1:] + ["--gamma", "1e-9"]])
def test_a_refusal_for_many_samples_says_raise_gamma(argv, capsys):
    """F7: ``check-method --gamma 1e-6`` (n = d / gamma = 4e7 samples) and the logistic sweep
    at --gamma 1e-9 were told "lower --reps or --d" only, as the linear sweep was before
    (guards.linear_budget says "or raise --gamma"); one helper now words it for all three."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and "samples for gamma = 1e-0" in err
    assert "or raise --gamma, or allow more time with --max-minutes" in err


SWEEP = ["sweep", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.5", "--d",
         "20", "--reps", "2", "--no-progress"]


@pytest.mark.parametrize("argv, result", [
    (SWEEP, None), (SWEEP, {"bias": [], "variance": [], "risk": [], "n": 10}),
    (SIMULATE, {}), (SIMULATE, {"rows": [{}]}), (LOGISTIC + ["--gamma", "2"], "x")])
def test_a_cached_result_of_another_layout_reruns(argv, result, tmp_path, capsys):
    """F8: a cache record whose result is not what the task returns (an earlier fedrisk's
    layout, or an edited file: null, {}, a string, empty lists) was taken and read: a
    traceback (TypeError, KeyError, IndexError) where the rows were built. Now it reruns
    with a warning, as a torn line does."""
    import json

    cache = tmp_path / "c.jsonl"
    code, _, err = run_cli(argv + ["--cache", cache, "--out", tmp_path / "a.csv"], capsys)
    assert code == 0, err
    head, *records = cache.read_text().splitlines()
    cache.write_text("\n".join([head] + [json.dumps({**json.loads(line), "result": result})
                                         for line in records]) + "\n")
    code, _, err = run_cli(argv + ["--cache", cache, "--out", tmp_path / "b.csv"], capsys)
    assert code == 0 and "hold a result of another layout" in err and "Traceback" not in err
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize("value, said", [
    ("2", "a string is not a number"), (True, "a boolean is not a number"),
    (2 + 0j, "gamma must be a real number"), ([[2.0, 3.0]], "a 1-d list of numbers")])
def test_grid_values_are_real_numbers(value, said):
    """F9: ``montecarlo.sweep`` and ``sweep_logistic`` read their grids with
    ``numpy.asarray(v, dtype=float)``: gamma="2" and gamma=True were simulated as 2 and 1, a
    matrix [[2, 3]] was flattened into a grid, a complex value raised TypeError; compare and
    riskcalc.limit refuse them. One reader (``montecarlo.sweep.grid_values``) for both."""
    from montecarlo.linear.instances import Setting
    from montecarlo.logistic.sweep import sweep_logistic
    from montecarlo.sweep import sweep

    with pytest.raises(ValueError, match=said):
        sweep("rtfa", gamma=value, r=1.0, sigma=0.5, lam=0.5, setting=Setting(d=20), reps=2,
              progress=False)
    with pytest.raises(ValueError, match=said):
        sweep_logistic("rtfa", gamma=value, r=1.0, signal=1.0, lam=1.0, d=20, reps=2,
                       progress=False)


def test_a_scheduler_without_scheme_or_with_a_bad_port_is_refused_at_once():
    """F10: ``--scheduler 127.0.0.1:PORT`` (dask reads host:port as tcp) with nothing
    listening, and ``tcp://localhost:99999`` (no such port), waited for dask's 30 s timeout;
    ``tcp://127.0.0.1:PORT`` was refused at once."""
    import socket

    from montecarlo.runner.dask_backend import _refused

    with socket.socket() as sock:           # a port that was just free: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ValueError, match="connection refused, nothing listens there"):
        _refused(f"127.0.0.1:{port}")
    with pytest.raises(ValueError, match="the port is not a number in 0-65535"):
        _refused("tcp://localhost:99999")


def test_the_logistic_sweep_holds_its_limits_to_max_minutes(tmp_path, capsys):
    """F11: ``sweep --model logistic`` did not pass --max-minutes to the limits' solvers, as
    predict and compare do: they kept their own 60 s, and a refusal past it said "raise
    max_seconds (--max-minutes on the command line)" to a user who had given --max-minutes
    1000; a cached sweep took --max-minutes 1e-7 for a solve estimated at 0.06 s."""
    from montecarlo.logistic.sweep import sweep_logistic

    with pytest.raises(ValueError, match=r"over the limit max_seconds = 1e-06"):
        sweep_logistic("rtfa", gamma=2.0, r=1.0, signal=1.0, lam=1.0, d=20, reps=2,
                       progress=False, max_seconds=1e-6)
    argv = LOGISTIC + ["--gamma", "2", "--cache", tmp_path / "c.jsonl"]
    assert run_cli(argv, capsys)[0] == 0
    code, out, err = run_cli(argv + TINY, capsys)
    assert code == 2 and out == "" and "over the limit max_seconds = 6e-06" in err


def test_simulate_estimates_what_the_iterations_do_not_scale(capsys):
    """F12: ``simulate``'s estimate scaled the defaults' time by the iterations, so the d^3
    work that does not depend on them vanished with few iterations: paper004-synthetic at d =
    800, m = 2 with one round was estimated at 0.001 s and took 16 s (its exact FedProx
    minimizers), 5.75 s at d = 1600 without them (FedProx's smoothness constants),
    paper001-fig2 at d = 800, m = 2 with one iteration 0.05 s for 5.4 s (its instance's
    orthogonal factors); at d = 4000 an hour of work started under the 10 minutes."""
    from montecarlo.experiments.cost import preset_replicate_seconds
    from montecarlo.experiments.presets import resolve

    few = {"R": 0.0, "m": 2, "n": 20, "n_test": 10, "d": 800}
    p004 = resolve("paper004-synthetic", {**few, "*.rounds": 1, "*.epochs": 1,
                                          "*.inner_steps": 1})
    assert preset_replicate_seconds(p004) > 16.0
    p004 = resolve("paper004-synthetic", {**few, "d": 1600, "exact": False, "*.rounds": 1,
                                          "*.epochs": 1, "*.inner_steps": 1})
    assert preset_replicate_seconds(p004) > 5.75        # 0.001 s: the smoothness constants
    p001 = resolve("paper001-fig2", {"m": 2, "d": 800, "*.iterations": 1, "lam": 1.0})
    assert preset_replicate_seconds(p001) > 5.4
    code, out, err = run_cli(["simulate", "paper004-synthetic", "--set", "d=4000", "--set",
                              "m=2", "--set", "n=20", "--set", "n_test=10", "--set", "R=0",
                              "--out", "never.csv"], capsys)
    assert code == 2 and out == "" and "or --set exact=false" in err


@pytest.mark.parametrize("argv, said", [
    (SWEEP[:-3] + ["--reps", "1"], "--reps must be an integer >= 2"),
    (["compare"] + SWEEP[1:] + ["--seed", "-1"], "--seed must be an integer >= 0"),
    (SWEEP + ["--steps", "-1", "--step-size", "0.1"], "--steps must be an integer >= 0"),
    (SWEEP + ["--steps", "2", "--step-size", "0"], "--step-size must lie in (0, inf)"),
    (SWEEP + ["--df", "4", "--noise", "student-t"], "--df must lie in (4, inf)"),
    (SIMULATE + ["--reps", "0", "--out", "never.csv"], "--reps must be an integer >= 1"),
    (LOGISTIC + ["--gamma", "2", "--seed", "-3"], "--seed must be an integer >= 0"),
    (["check-method", "rtfa", "--seed", "-1"], "--seed must be an integer >= 0"),
    (["compare"] + LOGISTIC[1:] + ["--gamma", "2", "--seed", "-1"], "--seed must be")])
def test_simulation_counts_are_named_as_options(argv, said, capsys):
    """F13: compare, sweep and simulate named their counts by the Python names ("reps must
    be ...", "seed must ...", "step size must ...", "df must lie in ..."), while check-method
    and the logistic family say "--reps", "--d"."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.startswith(f"error: {said}")


ROUNDS = ["compare", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma", "0.5", "--signal", "1",
          "--d", "20", "--reps", "2", "--clients", "3", "--rounds", "5", "--local-steps", "2",
          "--local-step-size", "0.1", "--no-progress"]


@pytest.mark.parametrize("extra, said", [
    (["--global", "oracle"], "--global oracle does not apply with --rounds"),
    (["--seed", "-1"], "--seed must be an integer >= 0")])
def test_compare_along_the_rounds_checks_global_and_seed(extra, said, capsys):
    """F14: ``compare fedavg --rounds ... --global oracle`` simulated the federated model,
    the oracle taken and ignored (--measure and the like are refused there), and ``--seed -1``
    said "seed must be ...", not the option."""
    code, out, err = run_cli(ROUNDS + extra, capsys)
    assert code == 2 and out == "" and err.startswith(f"error: {said}")


def test_check_method_refuses_an_infinite_limit_in_python():
    """F15: ``montecarlo.check_method("ftfa", gamma=1.0)`` passed: its simulation rows were
    "ok" against the infinite ridgeless variance with a tolerance of inf, a verdict with
    nothing checked (``riskcalc check-method`` refused it, in a copy of its own). One check,
    ``montecarlo.registry_checks.finite_limits``, for both."""
    import montecarlo

    with pytest.raises(ValueError, match="variance of ftfa is infinite at gamma = 1 .*"
                                         "choose another gamma$"):
        montecarlo.check_method("ftfa", d=8, reps=2, gamma=1.0)


@pytest.mark.parametrize("method, kw", [("rtfa", dict(gamma=1e100)),
                                        ("pfedme", dict(tuning=1e100))])
def test_check_method_refuses_its_grid_out_of_range_in_python(method, kw):
    """F15: ``montecarlo.check_method("pfedme", tuning=1e100)`` failed the method
    (AssertionError: "limit vectorized: lam must lie in ...") for the check's own grid at
    2e100, which the command line refuses in a copy of its own; one check for both."""
    import montecarlo

    with pytest.raises(ValueError, match="the checks evaluate the limit at 0.75 to 2 times "):
        montecarlo.check_method(method, d=8, reps=2, **kw)


def test_sweep_times_every_clients_value_and_not_the_tunings(tmp_path, capsys):
    """F16: the linear sweep timed every --clients value as the last one: --clients 2000,3 at
    d = 200 was estimated at 3.5 s for about 17 minutes of work (started under the 10-minute
    default), --clients 3,2000 at twice its time; and each --lam value as a replicate of its
    own, though one replicate measures them all, so a fully cached sweep over three lams was
    still timed for 4 replicates and refused."""
    fed = ["sweep", "rtfa", "--gamma", "0.5", "--r", "1", "--sigma", "0.5", "--lam", "0.5",
           "--d", "200", "--reps", "10", "--no-progress", "--global", "federated"] + TINY
    for clients in ("2000,3", "3,2000"):
        code, out, err = run_cli(fed + ["--clients", clients], capsys)
        assert code == 2 and "x 2 point(s) at d = 200 with 3 to 2000 clients: estimated 1" in err
        assert " min of work" in err
    lams = SWEEP[:8] + ["--lam", "0.1,0.5,1"] + SWEEP[10:] + ["--cache", tmp_path / "c.jsonl"]
    assert run_cli(lams + ["--out", tmp_path / "a.csv"], capsys)[0] == 0
    code, _, err = run_cli(lams + ["--out", tmp_path / "b.csv"] + TINY, capsys)
    assert code == 0, err


def test_an_output_under_a_file_says_it_is_a_file(tmp_path, capsys):
    """F17: ``--out FILE/x.csv`` (or --cache) with FILE an existing file said "folder FILE
    does not exist", though it exists: it is a file."""
    (tmp_path / "eig.txt").write_text("1\n")
    for option in ("--out", "--cache"):
        code, out, err = run_cli(SWEEP + [option, tmp_path / "eig.txt" / "x.csv"], capsys)
        assert code == 2 and out == "" and "eig.txt is a file, not a folder" in err


def test_preset_settings_are_checked_on_a_small_instance(monkeypatch, capsys):
    """F18: ``simulate``'s settings were checked by building the whole instance, before the
    time estimate: ``paper001-fig2 --set m=2 --set d=6000`` spent minutes on two 6000 x 6000
    QR factors per client (twice: the cache lookup resolved again) before its refusal. The
    check now builds one of at most 2 clients, samples and dimensions."""
    import functools

    from montecarlo.experiments import presets

    real, seen = presets.BUILDERS["quadratic"], []

    @functools.wraps(real)
    def spy(**kw):
        seen.append(kw["d"])
        return real(**{**kw, "m": 2, "d": 2})
    monkeypatch.setitem(presets.BUILDERS, "quadratic", spy)
    code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=6000",
                              "--out", "never.csv", "--no-progress"], capsys)
    assert code == 2 and "estimated" in err and seen and max(seen) <= 2


def test_simulate_bounds_the_memory_of_its_rows(monkeypatch, capsys):
    """F19: the rows of ``simulate`` were not counted: at m = d = 2, --trajectory with 1000
    lams and 3 replicates made 12 million rows (one per checkpoint: 2001 per method), about
    25 GB, with nothing checked but the time. They are now counted against half the memory
    (here 8 GiB) before any work, as the tasks' bookkeeping is."""
    from montecarlo.experiments import cost

    monkeypatch.setattr(cost, "physical_memory", lambda: 8.0 * 2**30)
    argv = ["simulate", "paper001-fig2", "--set", "m=2", "--set", "d=2", "--set",
            "lam=0.01:100:1000", "--reps", "3", "--out", "never.csv", "--no-progress"]
    code, out, err = run_cli(argv + ["--trajectory"], capsys)
    assert code == 2 and out == "" and "rows (one per checkpoint)" in err
    assert "or leave out --trajectory" in err
    code, out, err = run_cli(argv + TINY, capsys)       # 6000 rows: refused for time only
    assert code == 2 and "rows" not in err and "estimated" in err


@pytest.mark.parametrize("kw, said", [
    (dict(trajectory="no"), "trajectory must be True or False"),
    (dict(trajectory=2), "trajectory must be True or False"),
    (dict(overrides=[("m", 2)]), "overrides must be a dict"),
    (dict(name=["paper001-fig2"]), "preset must be one of")])
def test_run_preset_reads_its_arguments_strictly(kw, said):
    """F20: ``run_preset(trajectory="no")`` (or 2) ran with trajectories (read as true), a
    list of overrides was an AttributeError and a list of names a TypeError."""
    from montecarlo.experiments.presets_run import run_preset

    args = {"name": "paper001-fig2", "overrides": {"m": 2, "d": 2, "lam": 1.0}, **kw}
    with pytest.raises(ValueError, match=said):
        run_preset(args.pop("name"), args.pop("overrides"), **args)
