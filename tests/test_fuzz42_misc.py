"""Issue 32, fuzz42 (misc): what this fuzz found, each test failing before."""

import json

import pytest

from tests.helpers import run_cli

PRINTING = '''
import numpy as np
import riskcalc
from montecarlo.linear.estimators import Estimator, fedavg_weight, register_estimator
print("plugin loading")
def limit(spec, route):
    print("plugin limit")
    res = riskcalc.limit("ftfa", gamma=spec.gamma, sigma=spec.sigma, r=spec.r,
                         spectrum=spec.spectrum, route=route)
    return np.asarray(res.bias), np.asarray(res.variance)
def personal_filter(mu, t):
    print("plugin filter")
    return np.ones_like(mu)
riskcalc.register_method(riskcalc.Method("{name}", "x", "r", None, True, "x", limit))
register_estimator(Estimator("{name}", fedavg_weight, False, True, False, True, "x",
                             personal_filter=personal_filter))
'''


@pytest.mark.parametrize("verb", ["predict", "compare"])
def test_f1_a_plugins_print_goes_to_stderr_under_json(verb, tmp_path, capsys, monkeypatch):
    """F1: a plugin's own ``print`` (at load, in its limit, in its filter) went to stdout and
    ``--json``'s output did not parse; it goes to stderr now, and to stdout without --json."""
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    name = f"pr42{verb}"
    path = tmp_path / f"{name}.py"
    path.write_text(PRINTING.format(name=name))
    extra = ["--d", "20", "--reps", "2", "--no-progress"] if verb == "compare" else []
    argv = ["--plugin", path, verb, name, "--gamma", "2", "--r", "1", "--sigma", "0.5", *extra]
    code, out, err = run_cli(argv + ["--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["method"] == name
    assert "plugin loading" in err and "plugin limit" in err
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "plugin limit" in out      # without --json: the plugin's stdout


@pytest.mark.parametrize("cache", ["/dev/null", "/dev/stdout", "/dev/zero"])
def test_f2_python_cache_on_a_device_is_refused_as_on_the_command_line(cache):
    """F2: ``run_tasks(..., cache="/dev/null")`` (so ``compare``/``sweep`` from Python) was
    taken: every finished task written to the device, nothing kept (``/dev/stdout``: the JSON
    lines in the output); ``--cache /dev/null`` was refused. One rule now: the same message."""
    from montecarlo.runner.tasks import run_tasks

    with pytest.raises(ValueError, match=f"cache {cache}: (not a regular file|an open stream)"):
        run_tasks(dict, [{"x": 1}], cache=cache, progress=False)


def _zero_column(tmp_path, name="zero.npz"):
    """Four clients of 40 rows in d = 10 (every n_j >= 1.5 d), feature 3 zero everywhere."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.standard_normal((160, 10))
    X[:, 3] = 0.0
    y = X @ (rng.standard_normal(10) / np.sqrt(10)) + 0.5 * rng.standard_normal(160)
    np.savez(tmp_path / name, X=X, y=y, client=np.repeat(np.arange(4), 40))
    return tmp_path / name


def test_f3_estimate_says_why_auto_took_moments(tmp_path, capsys):
    """F3: with every n_j >= 1.5 d, ``auto`` takes least squares, but a zero column (a design
    of rank d - 1) switched it to moments, and only "route: moments" said so; the reason is
    now a note (text) and ``estimate.notes`` (JSON, ``Estimate.notes``)."""
    path = _zero_column(tmp_path)
    code, out, err = run_cli(["estimate", "--data", path], capsys)
    assert code == 0, err
    assert "note: route auto took moments, not least squares" in out
    assert "client 0's design has rank 9 < d = 10" in out
    code, out, err = run_cli(["estimate", "--data", path, "--json"], capsys)
    notes = json.loads(out)["estimate"]["notes"]
    assert len(notes) == 1 and "rank 9" in notes[0]


@pytest.mark.parametrize("method", ["fedavg", "ftfa", "rtfa --lam 0.5"])
def test_f4_clients_at_gamma_1e_100_and_1e100_answer(method, tmp_path, capsys):
    """F4: two clients at gamma 1e-100 and 1e100 (sample weights: p = 1, 1e-200; u = 1e200)
    were refused by FedAvg, FTFA and RTFA, "the subordination derivative overflowed (Q =
    nan)" (x^3 and p^2 underflowed, (1 - gamma + u)^2 overflowed; RTFA's traces divided by
    delta^2 then p^2), where pFedMe answered. Now computed rescaled: the data-rich client
    is its own least squares, sigma^2 gamma / (1 - gamma); the data-less one keeps the
    other's model, r^2 + r^2 = 2."""
    other = tmp_path / "other.json"
    for target, them, want in [(1e-100, 1e100, 0.25e-100), (1e100, 1e-100, 2.0)]:
        other.write_text(json.dumps([{"gamma": them, "r": 1, "sigma": 0.5}]))
        code, out, err = run_cli(["predict", *method.split(), "--gamma", target, "--r", 1,
                                  "--sigma", 0.5, "--clients-file", other, "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["risk"] == pytest.approx(want, rel=1e-12)


def test_f5_a_bad_scheduler_address_is_refused_at_once(capsys):
    """F5: ``--scheduler tcp://:1`` (no host) waited dask's 30 s connection timeout; the
    address is now checked before dask is imported (its scheme, host and port), and a host
    name that does not resolve (``nonsense:1`` also waited 30 s) is refused naming it."""
    import time

    address, said = "tcp://:1", "no host in the address"
    start = time.perf_counter()
    code, out, err = run_cli(["compare", "ftfa", "--gamma", 2, "--r", 1, "--sigma", 0.5, "--d",
                              20, "--reps", 2, "--no-progress", "--scheduler", address], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"error: scheduler '{address}': {said}" in err
    assert time.perf_counter() - start < 5


def test_f5_tls_without_its_configuration_is_one_error_line():
    """F5: ``tls://HOST:PORT`` without dask's TLS configuration was a TypeError traceback
    (``TLS expects a ssl_context argument``); now one error naming the scheduler."""
    pytest.importorskip("dask.distributed")
    from montecarlo.runner.dask_backend import _DaskBackend

    with pytest.raises(ValueError, match=r"^scheduler 'tls://127.0.0.1:1': .*ssl"):
        _DaskBackend("tls://127.0.0.1:1")


def test_f6_no_figure_module_imports_pyplot_at_import():
    """F6: ``figures --list`` (9 s under load) is import-bound: 1.36 s of CPU quiet, of which
    pyplot, imported at the top of ``figures.style``, ~0.3 s, for a listing that draws
    nothing. pyplot is now imported where a figure is drawn (1.0 s); no figures module
    imports it at its top level."""
    import ast
    import pathlib

    import figures

    for path in pathlib.Path(figures.__file__).parent.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) else [])
            assert "matplotlib.pyplot" not in names, path.name


def test_f7_a_client_copied_under_a_second_id_is_noted(tmp_path, capsys):
    """F7: client 1 holding client 0's rows (a client copied under a second id) was estimated
    as two clients at r = 0 from each other (their least-squares fits equal) without a word;
    a note now names the two clients (test_hardening_twentythird keeps rows shared across
    clients estimated, not refused)."""
    import numpy as np

    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 5))
    y = X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(20)
    np.savez(tmp_path / "copy.npz", X=np.vstack([X, X]), y=np.r_[y, y],
             client=np.repeat([0, 1], 20))
    code, out, err = run_cli(["estimate", "--data", tmp_path / "copy.npz"], capsys)
    assert code == 0, err
    assert ("note: 20 rows of a client repeat a row of another (the same x and y; clients 0 "
            "and 1 first)") in out


def test_f8_federation_messages_stay_one_short_line(tmp_path, capsys):
    """F8: a --target that names no client listed every name (5000 named clients: one error
    line of 80 kB), and a 100,000-character name was printed whole in every message naming
    its client; now the first 10 names and a count, a long name by its start and length."""
    clients = [{"name": f"client-{k:03d}", "gamma": 0.5, "r": 1, "sigma": 0.5}
               for k in range(30)]
    clients[0]["name"] = "x" * 1000
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
    code, out, err = run_cli(["predict", "ftfa", "--federation", path, "--target", "nobody"],
                             capsys)
    assert code == 2 and len(err) < 600 and "'client-009', ... (20 more))" in err
    code, out, err = run_cli(["predict", "local", "--federation", path, "--target", 0], capsys)
    assert code == 2 and len(err) < 300
    assert "client 0 ('xxxxxxxxxxxxxxxxxxxx'...(1000 characters)): missing key rho" in err


def test_f9_a_client_whose_x_is_zero_is_refused(tmp_path, capsys):
    """F9: a client whose X is 0 in every row (X zero everywhere is refused) was estimated:
    its sigma as y's spread with a confident standard error (0.62 +- 0.094 for 0.5), and the
    spectrum's m1 dragged to 0.53 for 1; refused, naming the client."""
    import numpy as np

    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 5))
    y = X @ rng.standard_normal(5) + 0.5 * rng.standard_normal(60)
    client = np.repeat([0, 1, 2], 20)
    X[client == 1] = 0.0
    np.savez(tmp_path / "blank.npz", X=X, y=y, client=client)
    code, out, err = run_cli(["estimate", "--data", tmp_path / "blank.npz"], capsys)
    assert code == 2 and out == "" and "client 1's X is 0 in every row" in err


def test_f10_python_plugin_path_of_a_device_says_what_it_is():
    """F10: ``plugins.load(["/dev/null"])`` said "no such file" for a file that exists (the
    command line's ``--plugin /dev/null`` says it is a device); now the same reason."""
    from riskcalc import plugins

    with pytest.raises(plugins.PluginError, match=r"^plugin /dev/null: a device, pipe or socket"):
        plugins.load(["/dev/null"])


def test_f11_an_in_process_scheduler_address_points_to_local():
    """F11: ``scheduler="inproc://x"`` was dask's "not enough values to unpack (expected 3,
    got 1)", naming no cause; now refused before dask's import, pointing to 'local'."""
    from montecarlo.runner.dask_backend import _DaskBackend

    with pytest.raises(ValueError, match=r"^scheduler 'inproc://x': an in-process address; .*"
                                         r"give 'local'$"):
        _DaskBackend("inproc://x")
