"""Issue 32, fuzz39 (fuzz2): what this fuzz found, each test failing before."""

import time

import pytest

from tests.helpers import run_cli

SWEEP = ["sweep", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.5", "--d",
         "20", "--reps", "2", "--no-progress"]


def test_sweep_stops_in_flight_but_a_cached_sweep_runs_at_any_limit(monkeypatch, tmp_path,
                                                                   capsys):
    """F1: ``sweep``'s --max-minutes estimate counts the simulation only, and nothing stopped
    the rest: a finite-M maml_fl prediction of 41 clients under powerlaw:1,200 ran 26.6 s
    against a 12 s limit (compare stops there). Now the sweep stops in flight, writing
    nothing and naming its cache; a fully cached sweep still runs at any limit."""
    import montecarlo.sweep as ms

    cache, out = tmp_path / "c.jsonl", tmp_path / "a.csv"
    assert run_cli(SWEEP + ["--cache", cache, "--out", out], capsys)[0] == 0
    real = ms._limits

    def slow(*a, **kw):
        time.sleep(0.3)
        return real(*a, **kw)

    monkeypatch.setattr(ms, "_limits", slow)
    tiny = ["--max-minutes", "0.001"]        # 0.06 s
    other = SWEEP[:3] + ["3"] + SWEEP[4:]     # --gamma 3: not in the cache
    code, stdout, err = run_cli(other + tiny, capsys)
    assert code == 2 and stdout == "" and "stopped at the --max-minutes limit" in err
    assert "nothing was kept: give --cache FILE" in err and len(err.splitlines()) == 1
    code, _, err = run_cli(other + ["--cache", cache] + tiny, capsys)
    assert code == 2 and f"finished tasks are kept in {cache}" in err
    code, _, err = run_cli(SWEEP + ["--cache", cache, "--out", out] + tiny, capsys)
    assert code == 0, err


@pytest.mark.parametrize("step, said", [
    (["--gamma", "1", "--eta", "100"], "got eta=100.0, 1/L_l=0.5"),
    (["--gamma", "3", "--eta", "0.1"], "got gamma=3.0, 1/L_g=2.0")])
def test_inner_loop_iterations_names_the_step_and_its_bound(step, said, capsys):
    """F2: ``bounds inner_loop_iterations --L 1 --mu 1 --lam 1 --gamma 1 --eta 100`` said
    "eta must lie in (0, 1/L_l]" without eta or 1/L_l (outer_rate's message gives both), and
    gamma past 1/L_g likewise."""
    code, out, err = run_cli(["bounds", "inner_loop_iterations", "--L", "1", "--mu", "1",
                              "--lam", "1"] + step, capsys)
    assert code == 2 and out == "" and said in err


def test_a_set_range_of_one_point_must_not_drop_its_stop(tmp_path, capsys):
    """F3: ``simulate --set lam=1:2:1`` ran lam = 1 alone (numpy's linspace of one point is its
    start), silently dropping the stop 2. A one-point range now needs start = stop; the
    message names the key."""
    from montecarlo.experiments.presets import parse_value

    assert parse_value("1:1:1") == [1.0] and parse_value("2:1:2") == [2.0, 1.0]
    code, out, err = run_cli(["simulate", "paper001-fig2", "--set", "lam=1:2:1", "--out",
                              tmp_path / "a.csv"], capsys)
    assert code == 2 and out == "" and "--set lam: the range '1:2:1' has 1 point" in err


def test_an_inconsistent_cached_replicate_reruns(tmp_path, capsys):
    """F4: an edited ``--cache`` record whose numbers are valid but inconsistent (bias 5.0
    beside a risk of 0.69, where the conditional measure's risk is bias + variance exactly;
    or a negative variance, a quadratic form) was taken into the rows' means silently. Such a
    record now reruns with the cache's warning, as one of another layout does."""
    import json

    from montecarlo.replicates import valid_replicate

    cache, out = tmp_path / "c.jsonl", tmp_path / "a.jsonl"
    assert run_cli(SWEEP + ["--cache", cache, "--out", out], capsys)[0] == 0
    first = out.read_text()
    lines = cache.read_text().splitlines()
    record = json.loads(lines[1])
    task, result = record["task"], record["result"]
    assert valid_replicate(task, result)
    assert not valid_replicate(task, {**result, "variance": [-0.01]})
    record["result"]["bias"] = [5.0]
    cache.write_text("\n".join(lines[:1] + [json.dumps(record)] + lines[2:]) + "\n")
    code, _, err = run_cli(SWEEP + ["--cache", cache, "--out", out], capsys)
    assert code == 0 and "1 record(s) hold a result" in err
    assert out.read_text() == first


def test_compare_by_keywords_takes_a_cache(tmp_path):
    """F5: ``montecarlo.compare("rtfa", ..., cache=PATH)`` (the keyword form) was a TypeError
    naming ``Setting.__init__`` (the option fell into the setting's), though
    ``montecarlo.compare.compare`` takes ``cache`` and ``scheduler``; it now passes both on,
    and a rerun is read from the cache."""
    import montecarlo

    kw = dict(gamma=2.0, r=1.0, sigma=0.5, lam=0.5, d=20, reps=2, cache=tmp_path / "c.jsonl")
    first = montecarlo.compare("rtfa", **kw)
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 3
    again = montecarlo.compare("rtfa", max_minutes=1e-7, scheduler=None, **kw)
    assert again.summary["risk"]["mean"] == first.summary["risk"]["mean"]


def test_a_bound_parameter_below_the_floats_range_is_not_told_it_may_be_0(capsys):
    """F6: ``bounds fedprox_complexity ... --eps 1e-300`` said "--eps must be 0 or of magnitude
    in [1e-100, 1e+100]", and then ``--eps 0`` "eps must lie in [1e-100, 1e+100]": the first
    refusal offered what the second refused. 0 is now offered only where the bound takes it."""
    argv = ["bounds", "fedprox_complexity", "--L", "1", "--mu", "1", "--lam", "1", "--dist0",
            "1", "--eps"]
    code, out, err = run_cli(argv + ["1e-300"], capsys)
    assert code == 2 and "must be 0 or" not in err and "(or 0, where the bound takes 0)" in err


@pytest.mark.parametrize("preset, setting, said", [
    ("paper001-fig2", "lam=[[1,2]]", "lam must be a 1-d list of numbers"),
    ("paper000-fig1", "R=[[1,2]]", "R must be a 1-d list of numbers"),
    ("paper000-fig1", "fedavg.lr=[1]", "fedavg.lr: a method setting takes one value")])
def test_simulate_refuses_nested_grids_and_listed_method_settings(preset, setting, said,
                                                                   tmp_path, capsys):
    """F7: ``simulate --set lam=[[1,2]]`` (and a preset's R grid nested likewise) was a
    TypeError traceback, and ``--set fedavg.lr=[1]`` one in a worker, after the progress bar
    had started. Each is now one error line naming the setting, before any work."""
    code, out, err = run_cli(["simulate", preset, "--set", "m=2", "--set", "d=2", "--set",
                              setting, "--no-progress", "--out", tmp_path / "a.csv"], capsys)
    assert code == 2 and out == "" and said in err and len(err.splitlines()) == 1
    assert not (tmp_path / "a.csv").exists()


def test_a_target_without_exact_minimizers_is_refused():
    """F8: ``simulate paper000-fig1 --set target=5`` (exact minimizers off, the preset's
    default) ran with the target taken and unused: rounds_to_target NaN in the CSV, no note
    (an option without effect). It now asks for exact=true; with it the target is kept."""
    from montecarlo.experiments.presets import resolve

    with pytest.raises(ValueError, match="add --set exact=true, or leave out target"):
        resolve("paper000-fig1", {"target": 5, "m": 2})
    assert resolve("paper000-fig1", {"target": 5, "exact": True, "m": 2})["target"] == 5.0
    assert resolve("paper001-fig2", {"exact": False, "m": 2})["target"] == 1e4   # its default


def test_a_bound_keeps_the_shape_of_the_parameters_given_as_arrays():
    """F9: ``outer_rate(L=[1, 2], mu=1, lam=1, gamma=0.5)`` was one number (the rate does not
    depend on L), where every other bound answers an array per array parameter; and
    ``bilevel_constants(L=[], ...)`` mixed numbers with empty arrays. Results now take the
    parameters' broadcast shape."""
    import numpy as np

    from riskcalc.minimax import fedprox_bilevel as fb

    assert np.shape(fb.outer_rate([1, 2], 1, 1, 0.5)) == (2,)
    assert np.shape(fb.outer_rate(np.ones((2, 2)), 1, 1, 0.5)) == (2, 2)
    assert isinstance(fb.outer_rate(1, 1, 1, 0.5), float)
    assert all(np.shape(v) == (0,) for v in fb.bilevel_constants(np.array([]), 1, 1).values())


def test_rate_check_names_a_bad_bound_array_as_the_bound():
    """F10: ``rate_check(grid, errors, bound=-1/N, c=0.5, C=2)`` said "C must lie in [0, inf),
    got -0.01": the bound array was checked under the name of its fitted constant, "C",
    which is also the band's upper edge (given valid). It is now named "bound"."""
    import numpy as np

    from riskcalc.minimax.ratecheck import rate_check

    N = np.array([100.0, 200.0, 400.0, 800.0])
    with pytest.raises(ValueError, match=r"^bound must lie in \[0, inf\), got -0.01"):
        rate_check({"N": N}, 1 / N, -1 / N, 0.5, 2.0)
    assert rate_check({"N": N}, 1 / N, 1 / N, 0.5, 2.0).within
