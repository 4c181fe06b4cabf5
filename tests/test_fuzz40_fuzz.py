"""Issue 32, fuzz40 (fuzz): what this fuzz found, each test failing before."""

import json

import numpy as np
import pytest

from tests.helpers import run_cli

SIMULATE = ["simulate", "paper001-fig2", "--set", "lam=1", "--set", "m=3", "--set", "d=3",
            "--set", "*.iterations=100", "--no-progress"]


def test_simulate_writes_json_lines_for_a_jsonl_name(tmp_path, capsys):
    """F1: ``simulate --out x.jsonl`` (or .JSON) wrote CSV under the JSON-lines name; now JSON
    lines, one object a row in the CSV's columns, a non-finite number null (as ``sweep``
    writes); any other name stays CSV (test_cli_simulate)."""
    code, out, err = run_cli(SIMULATE + ["--out", tmp_path / "x.JSONL"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "x.JSONL").read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["preset"] == "paper001-fig2"
    assert rows[0]["accuracy"] is None and rows[0]["rounds_to_target"] > 0


def _square(task):
    return task * task


def test_python_paths_take_a_leading_tilde_as_the_home_folder(monkeypatch, tmp_path):
    """F2: in Python, ``cache="~/c.jsonl"`` (``montecarlo`` runs), ``figures`` folders and
    ``montecarlo.sweep.write_rows(rows, "~/o.csv")`` took ``~`` literally (a folder named "~"
    in the working folder, or "folder ~ does not exist") where the command line reads it as
    the home folder; one helper (``riskcalc._validate.path``) now expands it for all."""
    from figures.core import folder
    from montecarlo.runner.tasks import cached_count, run_tasks
    from montecarlo.sweep import write_rows

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert run_tasks(_square, [2, 3], cache="~/c.jsonl", progress=False) == [4, 9]
    assert (home / "c.jsonl").is_file() and cached_count("~/c.jsonl", None, [2, 3]) == 2
    assert folder("out_dir", "~/figs") == home / "figs"
    write_rows([{"a": 1.0}], "~/o.csv")
    assert (home / "o.csv").is_file() and not (tmp_path / "~").exists()


def _federation(shift=0.0, intercept=0.0, seed=0):
    """Three clients of 40 rows, d = 6, of paper 003's model; X shifted by ``shift``, y by
    ``intercept``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 6))
    client = np.repeat([0, 1, 2], 40)
    theta = rng.normal(size=(3, 6)) / 2
    y = np.einsum("nd,nd->n", X, theta[client]) + 0.5 * rng.normal(size=120)
    return X + shift, y + intercept, client


def test_estimate_says_when_the_data_are_not_mean_zero(tmp_path, capsys):
    """F3: the model has mean-zero features and no intercept; ``estimate`` read X + 5 as a
    covariance with a large eigenvalue (two-point:1.08,246.8,0.9 on a larger federation) without
    a word. Now two exact tests (features: F(h, h (N - 1)); y: F(1, n_j - 1) per client) give
    ``Estimate.mean_test`` and a note (``estimate``, ``advise --data``); centred data none."""
    from riskcalc.estimate import estimate

    plain = estimate(*_federation())
    assert plain.mean_test["features_p"] > 1e-3 and plain.centring_note() is None
    shifted = estimate(*_federation(shift=5.0))
    assert shifted.mean_test["features_p"] < 1e-9 < shifted.mean_test["y_p"]
    assert "features' pooled mean is not 0" in shifted.centring_note()
    assert "y has a mean" in estimate(*_federation(intercept=3.0)).centring_note()
    X, y, client = _federation(shift=5.0)
    np.savez(tmp_path / "f.npz", X=X, y=y, client=client)
    code, out, err = run_cli(["estimate", "--data", tmp_path / "f.npz"], capsys)
    assert code == 0 and "note: the features' pooled mean is not 0" in out, err
    code, out, _ = run_cli(["estimate", "--data", tmp_path / "f.npz", "--json"], capsys)
    assert json.loads(out)["estimate"]["mean_test"]["features_p"] < 1e-9


def test_a_federation_client_that_is_no_object_is_refused_not_a_traceback(tmp_path, capsys):
    """F4: ``"clients": [[{...}]]`` (a list in a list) or ``[3]`` in a federation file was an
    AttributeError traceback (naming the client for the message called ``.get`` on it); now
    one error line naming the client and what it is."""
    for clients, kind in (([[{"gamma": 2, "r": 1, "sigma": 0.5}]], "a list"), ([3], "a number")):
        path = tmp_path / "f.json"
        path.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
        code, _, err = run_cli(["predict", "rtfa", "--lam", "0.5", "--federation", path], capsys)
        assert code == 2 and f"client 0: must be an object, got {kind}" in err, err


def test_compare_by_keywords_names_an_unknown_keyword():
    """F5: ``montecarlo.compare(..., kind="empirical")`` (``kind`` is the measure's name in
    ``compare(spec, setting)``) or any unknown keyword was a TypeError naming
    ``Setting.__init__``; now a ValueError naming the keyword and what is taken."""
    import montecarlo

    for key, said in (("kind", "the measure is measure= here"), ("bogus", "eigvecs")):
        with pytest.raises(ValueError, match=f"unknown keyword.*{key}.*{said}"):
            montecarlo.compare("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, d=20, reps=2,
                               **{key: "empirical"})


def test_write_rows_names_rows_that_are_no_dicts_or_add_a_csv_column(tmp_path):
    """F6: ``montecarlo.sweep.write_rows({"a": 1}, path)`` (one row, not a list of rows) was
    an AttributeError ('str' object has no attribute 'items'), and a CSV row with a column the
    first row lacks csv's "dict contains fields not in fieldnames" naming neither row nor file;
    now ValueErrors saying so, and the file is not written."""
    from montecarlo.sweep import write_rows

    out = tmp_path / "o.csv"
    with pytest.raises(ValueError, match="iterable of dicts.*got one dict"):
        write_rows({"a": 1}, out)
    with pytest.raises(ValueError, match="row 1 is a list"):
        write_rows([{"a": 1}, [2]], out)
    with pytest.raises(ValueError, match="row 1 has column.*b that row 0 lacks"):
        write_rows([{"a": 1}, {"a": 2, "b": 3}], out)
    assert not out.exists()
    assert write_rows([{"a": 1}, {"b": 2}], tmp_path / "o.jsonl") == "jsonl"


def test_bootstrap_intervals_of_22_characters_do_not_run_together(tmp_path, capsys):
    """F7: ``advise --data --bootstrap`` printed the mean and worst risks' intervals in fields
    of 22 characters, which an interval such as [1.069e-32, 5.738e-17] (noise-free data) fills:
    the two ran together ("...e-17][3.206e-32..."); now a space precedes each."""
    X, _, client = _federation()
    y = X @ np.ones(6)           # noise free: risks at rounding level, long intervals
    np.savez(tmp_path / "f.npz", X=X, y=y, client=client)
    code, out, err = run_cli(["advise", "--data", tmp_path / "f.npz", "--bootstrap", "3",
                              "--methods", "ftfa", "--no-progress"], capsys)
    assert code == 0, err
    rows = out[out.index("intervals (parametric"):].splitlines()[2:4]
    assert rows and all("][" not in row for row in rows), rows


def test_a_cache_line_nested_too_deep_or_with_a_huge_integer_is_no_record(tmp_path):
    """F8: a task cache whose first line is JSON nested 100,000 levels deep was a
    RecursionError traceback, and a line holding a 5000-digit integer stopped the run with
    Python's "Exceeds the limit (4300 digits) ... use sys.set_int_max_str_digits()", naming
    neither file nor line; now the first is "not a fedrisk cache", the second a line that is
    no record (its task reruns, with the warning naming the line)."""
    from montecarlo.runner.tasks import FORMAT, CacheWarning, load_cache

    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100000 + "]" * 100000 + "\n")
    with pytest.raises(ValueError, match="is not a fedrisk cache"):
        load_cache(deep, "sweep")
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"fedrisk_cache": FORMAT, "command": "sweep"}) + "\n"
                    + '{"key": "' + "a" * 40 + '", "result": ' + "9" * 5000 + "}\n")
    with pytest.warns(CacheWarning, match="line 2 is not a complete record"):
        assert load_cache(huge, "sweep") == {}


@pytest.mark.parametrize("text, said", [
    ('{"fedrisk_federation": 1, "clients": NaN}', "list of client objects, got NaN"),
    ('{"fedrisk_federation": ' + "9" * 5000 + ', "clients": []}',
     "must be the integer 1, got an integer of 5000 digits"),
    ('{"fedrisk_federation": 1, "clients": [{"name": "a", "gamma": 2, "r": 1, "sigma": 0.5, '
     '"se": Infinity}]}', "se must be an object of standard errors, got Infinity")])
def test_a_federation_file_non_number_is_named_by_its_text_not_a_class(text, said, tmp_path,
                                                                      capsys):
    """F9: where a federation file has NaN, Infinity or a 5000-digit integer in the place of a
    list, an object or the version, the message said what it got was "NonFinite" (the parser's
    marker class: "got an integer of 5000 digits (NonFinite)"); now its text."""
    path = tmp_path / "f.json"
    path.write_text(text)
    code, _, err = run_cli(["predict", "rtfa", "--lam", "0.5", "--federation", path], capsys)
    assert code == 2 and said in err and "NonFinite" not in err, err


def test_a_set_integer_past_pythons_digit_limit_is_refused_without_its_advice(tmp_path,
                                                                              capsys):
    """F10: ``simulate --set m=<5000 digits>`` said "Exceeds the limit (4300 digits) for
    integer string conversion ...; use sys.set_int_max_str_digits() to increase the limit",
    advice for Python programmers that no setting can use; now the key and the reason."""
    code, _, err = run_cli(["simulate", "paper001-fig2", "--set", "m=" + "9" * 5000, "--out",
                            tmp_path / "o.csv"], capsys)
    assert code == 2 and "--set m: holds an integer of more than 4300 digits" in err, err
    assert "set_int_max_str_digits" not in err


def test_a_setting_refuses_a_matrix_of_the_other_clients_values():
    """F11: ``Setting(gammas=[[2, 3]])`` (or rs, sigmas, spectra) was flattened into two clients'
    values; a list of one value a client is asked for, so a matrix is refused now."""
    from montecarlo.linear.instances import Setting

    with pytest.raises(ValueError, match=r"sigmas must be a flat list.*\(1, 2\)"):
        Setting(d=20, clients=3, global_model="federated", sigmas=[[0.5, 1.0]])
    with pytest.raises(ValueError, match=r"spectra must be a flat list"):
        Setting(d=20, clients=3, global_model="federated", spectra=[["identity", "scaled:2"]])
    assert Setting(d=20, clients=3, global_model="federated", gammas=[2.0, 3.0]).gammas == (
        2.0, 3.0)


def test_a_data_csv_with_every_field_quoted_is_read_as_its_numbers(tmp_path):
    """F12: ``estimate --data`` read a quoted header ("client","y",...) but refused the quoted
    numbers a spreadsheet writes with it ('"0"' is not a number); now the same estimate as the
    unquoted file, and a quoted field that is no number is still named."""
    from riskcalc.estimate import estimate_file

    X, y, client = _federation()
    rows = [["client", "y"] + [f"x{k}" for k in range(6)]]
    rows += [[repr(int(c)), repr(float(v))] + [repr(float(x)) for x in xs]
             for c, v, xs in zip(client, y, X)]
    plain, quoted = tmp_path / "p.csv", tmp_path / "q.csv"
    plain.write_text("\n".join(",".join(r) for r in rows) + "\n")
    quoted.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n")
    a, b = estimate_file(plain), estimate_file(quoted)
    np.testing.assert_array_equal(a.values["sigma2"], b.values["sigma2"])
    rows[3][4] = "x"
    quoted.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in rows) + "\n")
    with pytest.raises(ValueError, match=r"line 4, column 5 \('x2'\): 'x' is not a number"):
        estimate_file(quoted)
