"""Issue 32, fuzz41 (left): what this fuzz found, each test failing before."""
import json

import numpy as np

import pytest

from riskcalc.advise import from_clients
from tests.helpers import run_cli

BARE = [{"name": "a", "id": 3, "gamma": 0.5, "r": 1, "sigma": 0.5},
        {"name": "b", "gamma": 0.7, "r": 1, "sigma": 0.5}]


def test_bare_list_client_labels_are_ignored_and_unknown_keys_named(tmp_path, capsys):
    """F1: ``advise --clients-file`` on a bare list whose clients carry "name" (a key of the
    file's schema) said "client 0 must have r, sigma and one of gamma, n ...; got gamma, name,
    r, sigma", naming nothing wrong; the labels (name, id, se) are now ignored as in a versioned
    file, and ``from_clients`` names an unknown key."""
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(BARE))
    code, out, err = run_cli(["advise", "--clients-file", path, "--methods", "ftfa", "--json"],
                             capsys)
    assert code == 0 and err == "" and json.loads(out)
    with pytest.raises(ValueError, match=r"client 1: unknown key 'foo' \(client keys: gamma"):
        from_clients([BARE[1], dict(BARE[1], foo=1)])


def test_a_plugin_failing_only_in_the_workers_fails_their_first_task(tmp_path, monkeypatch):
    """F2: a ``--plugin`` file that raises only in worker processes (``compare ... --jobs 2``)
    raised while the worker imported montecarlo: every worker died (TerminatedWorkerError, a
    traceback and exit 1); the worker now keeps the failure and its first task raises it, a
    PluginError naming the plugin (one ``error:`` line, exit 2)."""
    from montecarlo.runner import tasks
    from riskcalc import plugins

    path = tmp_path / "fz41w.py"
    path.write_text("raise RuntimeError('no display in a worker')\n")
    monkeypatch.setenv(plugins.ENV, str(path))
    monkeypatch.setenv(plugins.ENV_PID, "1")            # loaded by another (main) process
    monkeypatch.setattr(plugins, "_DEFERRED", [])
    plugins.load_from_env()
    with pytest.raises(plugins.PluginError, match=r"plugin .*fz41w\.py: RuntimeError: no "
                       r"display in a worker \(in a worker process; it loaded in the main"):
        tasks._indexed(len, 0, [])
    monkeypatch.delenv(plugins.ENV_PID)                 # set by hand in this process: raised
    with pytest.raises(plugins.PluginError, match="fz41w.py: RuntimeError"):
        plugins.load_from_env()


def test_a_plugin_limit_returning_a_negative_variance_names_the_plugin_and_which(
        tmp_path, capsys, monkeypatch):
    """F3: a plugin's limit returning a negative bias or variance was refused as "the limit of
    method M returned a non-finite or negative bias": neither the plugin file nor which of the
    two; now the plugin, the method, which one and its value."""
    import riskcalc
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = tmp_path / "fz41neg.py"
    path.write_text("import numpy as np, riskcalc\nriskcalc.register_method(riskcalc.Method("
                    "'fz41neg', 'x', 'r', None, True, 'x', lambda spec, route: "
                    "(np.zeros(()), -np.ones(()))))\n")
    try:
        code, out, err = run_cli(["--plugin", path, "predict", "fz41neg", "--gamma", "2",
                                  "--r", "1", "--sigma", "0.5"], capsys)
    finally:
        riskcalc.unregister_method("fz41neg")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (f"error: plugin {path.resolve()}: method fz41neg: limit returned a negative "
            "variance (-1), expected a number >= 0") in err
    riskcalc.register_method(riskcalc.Method("fz41neg", "x", "r", None, True, "x",
                                             lambda spec, route: (np.ones(()), -np.ones(()))))
    try:
        with pytest.raises(ValueError, match=r"fz41neg returned a negative variance \(-1\)"):
            riskcalc.limit("fz41neg", gamma=2.0, r=1.0, sigma=0.5)
    finally:
        riskcalc.unregister_method("fz41neg")


@pytest.mark.parametrize("argv, text", [
    (["estimate", "--data", "-"], "--data -: give a file name (--data reads a file, not "
                                  "standard input; --data /dev/stdin reads it)"),
    (["advise", "--federation", "-"], "--federation -: give a file name"),
    (["advise", "--clients-file", " - "], "--clients-file /dev/stdin reads it"),
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--spectrum",
      "File: -"], "--spectrum file:-: give a file name (a file: spectrum is read from a "
                  "regular .npy or text file, not standard input)"),
    (["--plugin", "-", "predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"],
     "--plugin -: give a Python file (.py) that registers methods (--plugin reads no "
     "standard input)")])
def test_a_dash_for_an_input_file_says_standard_input_is_not_read(argv, text, capsys):
    """F4: ``-`` as an input file said "--data -: no such file", "--clients-file -: No such
    file or directory", "spectrum file '-' does not exist", "plugin /cwd/-: no such file"
    (three wordings, none saying why): it now says that the option reads no standard input,
    and where /dev/stdin reads it, that (as ``--csv -`` says for an output)."""
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and text in err


def test_one_client_is_singular_and_figures_seed_is_named_as_the_option(tmp_path, capsys):
    """F5: ``compare ... --global federated --clients 1`` printed "federated global model over
    1 clients" (the logistic compare "FedAvg's exact global model over 1 clients");
    ``figures ID --seed -1`` said "seed must be an integer >= 0", not "--seed" as the other
    verbs do."""
    code, out, err = run_cli(["compare", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma",
                              "0.5", "--d", "6", "--reps", "2", "--global", "federated",
                              "--clients", "1", "--no-progress"], capsys)
    assert code == 0 and "federated global model over 1 client\n" in out
    code, out, err = run_cli(["compare", "rtfa", "--model", "logistic", "--gamma", "2",
                              "--signal", "1", "--r", "1", "--lam", "0.5", "--clients", "1",
                              "--global-lam", "0.1", "--global", "federated", "--d", "6",
                              "--reps", "2", "--no-progress"], capsys)
    assert code == 0 and "exact global model over 1 client (global_lam" in out
    code, out, err = run_cli(["figures", "p000-fig1", "--seed", "-1", "--out", tmp_path],
                             capsys)
    assert code == 2 and err == "error: --seed must be an integer >= 0, got -1\n"


@pytest.mark.parametrize("call", ["compare", "sweep"])
def test_a_federated_setting_for_a_local_baseline_is_refused_on_every_route(call):
    """F6: ``montecarlo.compare.compare(local spec, Setting(global_model="federated"))`` (and
    ``montecarlo.sweep.sweep``, which reported "global_model: none") simulated silently while
    ``compare_method`` refused the same request: one rule now."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep
    from riskcalc import ClientSpec

    setting = Setting(d=10, global_model="federated", clients=3)
    with pytest.raises(ValueError, match="^global_model='federated' does not apply to local: "
                                         "it uses no global model$"):
        if call == "compare":
            compare(ClientSpec("local", gamma=0.5, rho=1.0, sigma=0.5), setting, reps=2)
        else:
            sweep("local", setting=setting, gamma=[0.5], rho=[1.0], sigma=[0.5], reps=2,
                  progress=False)


@pytest.mark.parametrize("lam", [-1, [0.1, -2.0]])
def test_clients_limit_states_limits_range_of_lam(lam):
    """F7: ``clients_limit(lam=-1)`` said "lam must lie in [0, inf)" where ``limit`` (and the
    same check a line later, for 1e-200) says "0 or [1e-100, 1e+100]": one range now."""
    import riskcalc

    with pytest.raises(ValueError, match=r"^lam must be 0 or lie in \[1e-100, 1e\+100\], got "
                                         r"-\d\.0$"):
        riskcalc.clients_limit("rtfa", gamma=[0.5, 0.5], r=[1, 1], sigma=[1, 1], lam=lam)


def _plugin(tmp_path, name, returned):
    """A plugin file registering method ``name`` whose limit returns ``returned`` (an
    expression of b = 1 and v = 0.5, arrays of the parameters' shape)."""
    path = tmp_path / f"{name}.py"
    path.write_text(f"import numpy as np, riskcalc\ndef limit(spec, route):\n"
                    f"    b = np.ones(np.shape(spec.gamma)); v = b / 2\n    return {returned}\n"
                    f"riskcalc.register_method(riskcalc.Method({name!r}, 'x', 'r', None, "
                    "True, 'x', limit))\n")
    return path


def _predict_plugin(path, name, capsys):
    import riskcalc

    try:
        return run_cli(["--plugin", path, "predict", name, "--gamma", "2", "--r", "1",
                        "--sigma", "0.5"], capsys)
    finally:
        if name in riskcalc.METHODS:
            riskcalc.unregister_method(name)


def test_every_check_of_a_plugin_limit_names_the_plugin(tmp_path, capsys, monkeypatch):
    """F8: a plugin's limit returning a bias of the wrong shape (or of text, a masked array)
    was refused as "the limit of method M returned bias of shape (1,), ...", naming the
    method but not the plugin file (the boundary's own checks name it): every check of
    ``limits._registered`` now names it."""
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = _plugin(tmp_path, "fz41shape", "(np.atleast_1d(b), np.atleast_1d(v))")
    code, out, err = _predict_plugin(path, "fz41shape", capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: plugin {path.resolve()}: the limit of method fz41shape "
                          "returned bias of shape (1,), expected")


def test_a_plugin_limit_whose_risk_is_past_the_floats_is_refused(tmp_path, capsys,
                                                                 monkeypatch):
    """F9: a plugin's limit returning bias 1e308 and variance 1e308 (each finite) printed
    "risk inf" (``--json``: "risk": null) as a result; the sum past the floats is refused."""
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = _plugin(tmp_path, "fz41big", "(b * 1e308, v * 2 * 1e308)")
    code, out, err = _predict_plugin(path, "fz41big", capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert ("fz41big returned bias 1e+308 and variance 1e+308, whose sum, the risk, is past "
            "the floats") in err


def test_the_deadline_is_no_failure_of_a_plugin():
    """F10: ``--max-minutes`` passing inside a plugin's limit (a slow one) was reported as the
    plugin's failure, "plugin P: method M: limit raised OutOfTime: stopped at the
    --max-minutes limit" (the plugin boundary caught every BaseException); the deadline
    (``riskcalc.errors.Stop``) now passes through, to the command's own message."""
    from riskcalc import plugins
    from riskcalc.cli.shared.guards import OutOfTime

    def slow():
        raise OutOfTime("stopped at the --max-minutes limit (3 s)")

    with pytest.raises(OutOfTime):
        plugins.guard(slow, "plugin p.py", "method m: limit")()
    with pytest.raises(OutOfTime):
        plugins._run_plugin("plugin p.py", slow)


def test_an_estimator_of_the_wrong_shape_names_the_plugin(tmp_path, capsys, monkeypatch):
    """F11: a plugin estimator's personal_filter (or global_weight) returning an array not of
    mu's shape (3 values for 5 eigenvalues, or a scalar) failed later as "error: matmul:
    Input operand 1 has a mismatch in its core dimension 0, ...", naming neither the plugin
    nor the filter; the boundary now checks the shape."""
    import montecarlo
    import riskcalc
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    path = tmp_path / "fz41est.py"
    path.write_text(
        "import numpy as np, riskcalc\n"
        "from montecarlo.linear.estimators import Estimator, fedavg_weight, register_estimator\n"
        "def limit(spec, route):\n    b = np.ones(np.shape(spec.gamma))\n    return b, b\n"
        "riskcalc.register_method(riskcalc.Method('fz41est', 'x', 'r', None, True, 'x', "
        "limit))\nregister_estimator(Estimator('fz41est', fedavg_weight, False, True, False, "
        "True, 'x', personal_filter=lambda mu, t: np.ones(3)))\n")
    try:
        code, out, err = run_cli(["--plugin", path, "compare", "fz41est", "--gamma", "2",
                                  "--r", "1", "--sigma", "0.5", "--d", "10", "--reps", "2",
                                  "--no-progress"], capsys)
    finally:
        for registry, drop in ((riskcalc.METHODS, riskcalc.unregister_method),
                               (montecarlo.ESTIMATORS, montecarlo.unregister_estimator)):
            if "fz41est" in registry:
                drop("fz41est")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (f"plugin {path.resolve()}: estimator fz41est: personal_filter returned shape "
            "(3,), expected mu's shape (5,) (one value per eigenvalue)") in err


@pytest.mark.parametrize("files", [None, 5])
def test_plugins_load_of_no_list_is_a_plugin_error(files):
    """F12: ``riskcalc.plugins.load(None)`` (or a number) raised TypeError "'NoneType' object
    is not iterable"; it is now the PluginError (a ValueError) that one path gets."""
    from riskcalc import plugins

    with pytest.raises(plugins.PluginError, match="^plugins.load takes a list of plugin "
                                                  f"files, got {type(files).__name__} "):
        plugins.load(files)


def test_figures_all_with_ids_says_not_both(capsys):
    """F13: ``figures --all p000-fig1 --out DIR`` was refused as "give figure ids or --all
    (or --list)", as if neither were given; it now says not both."""
    code, out, err = run_cli(["figures", "--all", "p000-fig1", "--out", "x"], capsys)
    assert code == 2 and err == ("error: give figure ids or --all (or --list), not both "
                                 "(--all and p000-fig1)\n")


def test_figures_empty_out_is_named_empty(capsys):
    """F14: ``figures ID --out ""`` said "--out DIR is required to build figures" though it
    was given; now that its name is empty (as the other options of a path say)."""
    code, out, err = run_cli(["figures", "p000-fig1", "--out", ""], capsys)
    assert code == 2 and err == "error: --out needs a folder name, got an empty one\n"
