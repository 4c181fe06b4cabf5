"""Issue 32, fuzz41 (fuzz): what this fuzz found, each test failing before."""

import io
import json
import os
import stat
import sys

import numpy as np
import pytest

from riskcalc.cli import main
from tests.helpers import run_cli


def _federation(tmp_path, spectrum=None):
    """Two clients of gamma 0.5 and 0.8 (pooled N > d), each of covariance ``spectrum``."""
    clients = [{"name": "a", "gamma": 0.5, "r": 1.0, "sigma": 0.5},
               {"name": "b", "gamma": 0.8, "r": 0.5, "sigma": 0.5}]
    for c in clients:
        if spectrum is not None:
            c["spectrum"] = spectrum
    path = tmp_path / f"fed{'' if spectrum is None else '_spectrum'}.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
    return str(path)


@pytest.mark.parametrize("verb", [["predict"], ["compare", "--d", "40", "--reps", "2"]])
def test_a_route_beside_a_federation_is_checked_as_at_finite_m(verb, tmp_path, capsys):
    """F1: ``predict ftfa --clients 3 --route kappa`` is refused (the finite-M limit has one
    route) and ``--route closed`` under a spectrum too; beside ``--federation`` predict refused
    kappa naming --clients-file, and took closed under the file's two-point spectrum; compare
    (and sweep) ignored both under ``--global federated``. Now one check names the option."""
    plain = _federation(tmp_path)
    code, out, err = run_cli([*verb[:1], "ftfa", "--federation", plain, "--route", "kappa",
                              *verb[1:]], capsys)
    option = "--federation" if verb == ["predict"] else "--global federated"
    assert code == 2 and f"--route kappa does not apply with {option}" in err and not out
    spec = _federation(tmp_path, "two-point:1,4,0.5")
    code, out, err = run_cli([*verb[:1], "ftfa", "--federation", spec, "--route", "closed",
                              *verb[1:]], capsys)
    assert code == 2 and "holds for Sigma = I only" in err and not out
    code, out, _ = run_cli(["predict", "ftfa", "--federation", plain, "--route", "closed"],
                           capsys)
    assert code == 0 and "risk      0.25" in out     # Sigma = I: closed still answers


def test_a_name_outside_the_outputs_encoding_is_escaped_not_an_error(tmp_path, monkeypatch):
    """F2: a client named 'é客' printed by ``advise`` to an ASCII stdout (PYTHONIOENCODING=ascii,
    or a Windows code page) stopped the table halfway with "error: 'ascii' codec can't encode
    characters ...", exit 2; now the name is escaped and the advice printed whole."""
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"name": "é客", "gamma": 0.5, "r": 1.0, "sigma": 0.5},
        {"name": "b", "gamma": 0.8, "r": 0.5, "sigma": 0.5}]}), encoding="utf-8")
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    code = main(["advise", "--federation", str(fed), "--methods", "fedavg", "--no-progress"])
    sys.stdout.flush()
    out = raw.getvalue().decode("ascii")
    assert code == 0 and "client 0 (\\xe9\\u5ba2): fedavg" in out and "weights p_j" in out


@pytest.mark.parametrize("argv", [["--plugin", ""], ["--plugin= "]])
def test_an_empty_plugin_name_is_refused_by_name_not_as_the_working_folder(argv, capsys):
    """F3: ``riskcalc --plugin '' predict ...`` (or ``--plugin=``) said "plugin /work/dir: no
    such file", naming the working folder, which exists; ``plugins.load_plugin(".")`` too."""
    from riskcalc import plugins

    code, out, err = run_cli([*argv, "predict", "ftfa", "--gamma", "2", "--r", "1",
                              "--sigma", "0.5"], capsys)
    assert code == 2 and err == "error: --plugin needs a file name, got an empty one\n"
    with pytest.raises(ValueError, match="needs a file name, got an empty one"):
        plugins.load_plugin("")
    with pytest.raises(ValueError, match="a folder, not a Python file"):
        plugins.load_plugin(".")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_figures_refuse_a_pipe_where_the_set_writes_a_file(tmp_path):
    """F4: ``figures p003-region --out DIR`` with a named pipe at DIR/p003-region.csv replaced
    the pipe by the CSV (the set's renames), where ``--out FILE`` refuses a device, pipe or
    socket and a directory there is refused; now refused before drawing (``check_targets``,
    which ``riskcalc figures`` runs on every set first), the pipe kept."""
    from figures.install import check_targets, set_files

    os.mkfifo(tmp_path / "p003-region.csv")
    with pytest.raises(ValueError, match="p003-region.csv is not a regular file"):
        check_targets(set_files("p003-region", tmp_path, ("png",)), tmp_path)
    assert stat.S_ISFIFO(os.lstat(tmp_path / "p003-region.csv").st_mode)


def test_a_simulation_budget_refusal_advises_only_options_that_apply(tmp_path, capsys):
    """F5: ``compare``/``sweep``'s refusal of a long simulation advised "lower --reps, --d or
    --clients" under the oracle global model (where --clients is refused: "applies with
    --global federated only") and beside --federation (refused there too: "give --clients M
    or --federation, not both"); the rounds path already named the federation's clients."""
    argv = ["rtfa", "--lam", "0.5", "--d", "100000", "--reps", "2", "--no-progress"]
    code, _, err = run_cli(["compare", *argv, "--gamma", "2", "--r", "1", "--sigma", "0.5"],
                           capsys)
    assert code == 2 and "lower --reps or --d, or raise --gamma" in err
    assert "--clients" not in err
    for verb in ("compare", "sweep"):
        code, _, err = run_cli([verb, *argv, "--federation", _federation(tmp_path)], capsys)
        assert code == 2 and "lower --reps, --d or the federation's clients" in err
        assert "--clients" not in err


@pytest.mark.parametrize("option, said", [
    ("--gamma", "read it as 0: --gamma must lie in [1e-100, 1e+100]\n"),
    ("--max-minutes", "read it as 0: give a number above 1e-300, or 0 where 0 is allowed\n"),
    ("--sigma", "read it as 0: give a number above 1e-300, or 0 where 0 is allowed\n")])
def test_a_number_below_the_floats_gets_advice_that_fits_the_option(option, said, tmp_path,
                                                                      capsys):
    """F6: ``--gamma 1e-400`` (or ``--max-minutes``, ``--step-size``, and ``"gamma": 1e-400``
    in a federation file) was told "give 0 or a number above 1e-300", values its range
    refuses ("--max-minutes must be a finite number > 0"); the advice now fits the option."""
    argv = {"--gamma": "2", "--r": "1", "--sigma": "0.5", option: "1e-400"}
    code, out, err = run_cli(["predict", "ftfa", *(x for kv in argv.items() for x in kv)],
                             capsys)
    assert code == 2 and not out and err.endswith(said) and err.count("\n") == 1
    fed = tmp_path / "fed.json"
    fed.write_text('{"fedrisk_federation": 1, "clients": [{"gamma": 1e-400, "r": 1, "sigma": 1},'
                   ' {"gamma": 0.5, "r": 1, "sigma": 1}]}')
    code, out, err = run_cli(["predict", "ftfa", "--federation", fed], capsys)
    assert code == 2 and err.endswith("read it as 0: gamma must lie in [1e-100, 1e+100]\n")


def test_a_csv_keeps_integer_client_ids_past_2_53_exact(tmp_path):
    """F7: a data CSV's client ids past 2^53 (64-bit hashes, 2^62 + k) were read through
    floats: three clients became one and were refused as "client ids given as floating-point
    numbers must lie below 2^53 ..., got 4.6116860184273879e+18", a number the file does not
    hold, where a .npz keeps the same integer ids exact; now the CSV keeps them too."""
    from riskcalc.estimate.files import load

    ids = [2 ** 62, 2 ** 62 + 1, 2 ** 62 + 2, 2 ** 53 + 1]
    path = tmp_path / "d.csv"
    path.write_text("client,y,x0\n" + "".join(f"{c},1.0,{k}.5\n" for k, c in enumerate(ids)))
    X, y, client = load(str(path))
    assert client.dtype == np.int64 and client.tolist() == ids and X[:, 0].tolist()[1] == 1.5
    path.write_text("client,y,x0\n" + "".join(f"{c}.0,1.0,2\n" for c in ids))
    assert load(str(path))[2].dtype == float       # written as floats: read as floats


def test_a_federation_count_whose_text_is_no_integer_is_refused(tmp_path, capsys):
    """F8: ``"n": 200.00000000000001`` in a federation file (a float reads it as 200.0) was
    taken as 200 samples, where the command line refuses ``--clients 200.00000000000001``
    ("must be an integer"); a number key written so stays the number it rounds to."""
    fed = tmp_path / "fed.json"
    fed.write_text('{"fedrisk_federation": 1, "d": 100, "clients": [{"n": 200.00000000000001, '
                   '"r": 1, "sigma": 0.5}, {"n": 150, "r": 0.5, "sigma": 0.50000000000000001}]}')
    code, out, err = run_cli(["predict", "ftfa", "--federation", fed], capsys)
    assert code == 2 and not out
    assert "client 0: n must be an integer, got 200.00000000000001 (a float reads it as 200)" in err
    fed.write_text(fed.read_text().replace("200.00000000000001", "2e2"))
    code, out, err = run_cli(["predict", "ftfa", "--federation", fed], capsys)
    assert code == 0 and "sigma = 0.5" in out, err


def test_from_object_takes_a_numpy_integer_version_as_its_counts():
    """F9: ``federation_file.from_object`` takes numpy numbers for every count and number of a
    dict built in Python (``"n": np.int32(20)``), but refused ``"fedrisk_federation":
    np.int64(1)`` as "must be the integer 1, got np.int64(1)"."""
    from riskcalc.federation_file import from_object

    ff = from_object({"fedrisk_federation": np.int64(1), "d": np.int64(10), "clients": [
        {"n": np.int32(20), "r": 1.0, "sigma": 0.5}]}, "fed")
    assert ff.versioned and ff.d == 10 and ff.clients[0]["n"] == 20
    with pytest.raises(ValueError, match="must be the integer 1, got np.True_"):
        from_object({"fedrisk_federation": np.True_, "clients": [{"gamma": 1.0}]}, "fed")


def test_a_plugin_path_holding_the_path_separator_reaches_the_workers(tmp_path, monkeypatch):
    """F10: ``riskcalc --plugin 'p/sh:rk.py' compare ... --jobs 2``: the plugin files are
    passed to the worker processes in FEDRISK_PLUGINS, joined by os.pathsep, and split there
    ("plugin .../p/sh: no such file", a traceback from every worker, exit 1); a list holding
    the separator is now recorded as JSON, and read back whole."""
    from riskcalc import plugins

    monkeypatch.setenv(plugins.ENV, "")     # restored after the test, whatever load sets
    path = tmp_path / f"sh{os.pathsep}rk" / "fz41p.py"
    path.parent.mkdir()
    path.write_text("X = 1\n")
    plugins.load([str(path)])
    seen = []
    monkeypatch.setattr(plugins, "load_plugin", seen.append)
    plugins.load_from_env()
    assert seen == [str(path.resolve())]
