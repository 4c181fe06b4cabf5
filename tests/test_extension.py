"""The public extension API: methods registered from outside the package (riskcalc side, montecarlo
side, the riskcalc --plugin option and the fedrisk.methods entry points) and check_method."""

import importlib.metadata
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import montecarlo
import riskcalc
from montecarlo.linear.estimators import Estimator, fedavg_weight
from riskcalc import plugins as rplugins
from riskcalc.cli import main
from riskcalc.cli.shared import plugins

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture(autouse=True)
def no_plugin_environment():
    """riskcalc.plugins.load records plugin files in the environment (for worker processes):
    undone after each test (the value from before the test put back), so that no later
    subprocess or worker loads a deleted tmp file."""
    saved = os.environ.pop(rplugins.ENV, None)
    yield
    os.environ.pop(rplugins.ENV, None)
    if saved is not None:
        os.environ[rplugins.ENV] = saved


@pytest.fixture
def clean_registry():
    """Remove whatever a test registered, so that tests stay independent."""
    before = set(riskcalc.METHODS), set(montecarlo.ESTIMATORS)
    yield
    for name in set(montecarlo.ESTIMATORS) - before[1]:
        montecarlo.unregister_estimator(name)
    for name in set(riskcalc.METHODS) - before[0]:
        riskcalc.unregister_method(name)


def scaled_ftfa(name, factor):
    """FTFA under a new name, its variance limit multiplied by ``factor`` (1: correct)."""
    def limit(spec, route):
        res = riskcalc.limit("ftfa", gamma=spec.gamma, sigma=spec.sigma, r=spec.r,
                             spectrum=spec.spectrum, route=route)
        return np.asarray(res.bias), factor * np.asarray(res.variance)
    riskcalc.register_method(riskcalc.Method(name, "FTFA again", "r", None, True, "test", limit))
    montecarlo.register_estimator(Estimator(name, fedavg_weight, False, True, False, True,
                                            "test", personal_filter=lambda mu, t: np.ones_like(mu)))


@pytest.mark.parametrize("name", sorted(riskcalc.linear.methods.BUILTIN))
def test_builtin_methods_pass_check_method(name):
    # The machinery on every built-in method at a reduced size (the defaults, d = 200 and 400
    # with 100 replicates each, take ~15 s per method: measured in montecarlo.registry_checks).
    rows = montecarlo.check_method(name, reps=10, d=100)
    assert {row["check"] for row in rows} >= {"registry", "limit vectorized", "limit routes",
                                             "estimator shapes", "simulation risk"}


def test_registered_method_passes_and_a_wrong_limit_fails(clean_registry):
    scaled_ftfa("ftfa_copy", 1.0)
    rows = montecarlo.check_method("ftfa_copy", reps=20)
    sim = [row for row in rows if row["check"] == "simulation variance"]
    assert len(sim) == 2 and all(row["ok"] for row in sim)
    scaled_ftfa("ftfa_wrong", 1.1)  # a 10% error in the variance limit must be caught
    with pytest.raises(AssertionError, match="simulation variance"):
        montecarlo.check_method("ftfa_wrong", reps=20)


def test_registry_rejects_clashes_and_malformed_entries(clean_registry):
    limit = lambda spec, route: (spec.gamma, spec.gamma)  # noqa: E731
    with pytest.raises(ValueError, match="already registered .built-in"):
        riskcalc.register_method(riskcalc.Method("rtfa", "x", "r", "lam", True, "x", limit))
    with pytest.raises(ValueError, match="signal must be one of r, rho"):
        riskcalc.register_method(riskcalc.Method("new", "x", "s", None, True, "x", limit))
    with pytest.raises(ValueError, match="tuning must be one of"):
        riskcalc.register_method(riskcalc.Method("new", "x", "r", "eta", True, "x", limit))
    with pytest.raises(ValueError, match="callable limit"):
        riskcalc.register_method(riskcalc.Method("new", "x", "r", None, True, "x"))
    with pytest.raises(ValueError, match="lower-case identifier"):
        riskcalc.register_method(riskcalc.Method("New-1", "x", "r", None, True, "x", limit))
    with pytest.raises(ValueError, match="method must be one of"):
        montecarlo.register_estimator(Estimator("new", fedavg_weight, False, True, False, True,
                                                "x"))
    riskcalc.register_method(riskcalc.Method("new", "x", "r", None, True, "x", limit))
    with pytest.raises(ValueError, match="already registered"):
        riskcalc.register_method(riskcalc.Method("new", "x", "r", None, True, "x", limit))
    with pytest.raises(ValueError, match="centered=False"):
        montecarlo.register_estimator(Estimator("new", fedavg_weight, False, True, False, False,
                                                "x"))
    with pytest.raises(ValueError, match="built-in"):
        riskcalc.unregister_method("ftfa")
    with pytest.raises(ValueError, match="built-in"):
        montecarlo.unregister_estimator("ftfa")


def test_limit_of_a_faulty_plugin_is_refused(clean_registry):
    bad = lambda spec, route: (np.zeros(3), np.zeros(3))  # noqa: E731  wrong shape
    riskcalc.register_method(riskcalc.Method("bad_shape", "x", "r", None, True, "x", bad))
    with pytest.raises(ValueError, match="shape"):
        riskcalc.limit("bad_shape", gamma=2.0, r=1.0, sigma=0.5)
    neg = lambda spec, route: (-np.ones(()), np.zeros(()))  # noqa: E731
    riskcalc.register_method(riskcalc.Method("bad_sign", "x", "r", None, True, "x", neg))
    with pytest.raises(ValueError, match="negative bias"):
        riskcalc.limit("bad_sign", gamma=2.0, r=1.0, sigma=0.5)


def test_plugin_through_the_command_line(tmp_path, capsys, clean_registry):
    """The docs example, copied outside the package: check_method, then compare via --plugin
    (``riskcalc.cli.main`` in this process), then the same compare by ``python -m riskcalc``
    on 2 worker processes, which load the plugin themselves (a fresh interpreter: no worker
    of an earlier test, started without the plugin, is reused)."""
    plugin = tmp_path / "my_plugin.py"
    shutil.copy(EXAMPLES / "shrunk_ftfa.py", plugin)
    assert main(["--plugin", str(plugin), "check-method", "shrunk_ftfa", "--reps", "6", "--d",
                 "100", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(row["ok"] for row in rows) and len(rows) == 10
    assert main(["--plugin", str(plugin), "compare", "shrunk_ftfa", "--gamma", "2", "--r", "1",
                 "--sigma", "0.5", "--lam", "1", "--d", "400", "--reps", "10", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    # Derived limit (docs/extending.rst): w = 1/2, B = r^2 (1 - (2w - w^2)/gamma),
    # V = w^2 sigma^2 / (gamma - 1).
    assert res["predicted"]["bias"] == pytest.approx(0.625, rel=1e-14)
    assert res["predicted"]["variance"] == pytest.approx(0.0625, rel=1e-14)
    for q in ("bias", "variance", "risk"):
        sim, se, pred = res["simulated"][q], res["simulated"][q + "_se"], res["predicted"][q]
        assert abs(sim - pred) <= 5 * se + 0.02 * pred
    # Worker processes load the plugin too, and give the same numbers (seeded replicates).
    out = subprocess.run(
        [sys.executable, "-m", "riskcalc", "--plugin", str(plugin), "compare", "shrunk_ftfa",
         "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "1", "--d", "400", "--reps",
         "10", "--json", "--jobs", "2"], capture_output=True, text=True, check=True,
        env={k: v for k, v in os.environ.items() if k != rplugins.ENV})   # (main's record)
    par = json.loads(out.stdout)["simulated"]
    for q in ("bias", "variance", "risk"):
        assert par[q] == pytest.approx(res["simulated"][q], rel=1e-12)


def test_check_method_command_fails_on_a_wrong_limit(tmp_path, capsys, clean_registry):
    plugin = tmp_path / "wrong.py"
    plugin.write_text("from tests.test_extension import scaled_ftfa\n"
                      "scaled_ftfa('ftfa_wrong_cli', 1.1)\n")
    assert main(["--plugin", str(plugin), "check-method", "ftfa_wrong_cli", "--reps", "20"]) == 1
    out = capsys.readouterr().out
    assert "FAIL simulation variance" in out and "ok   simulation bias" in out


def test_plugin_methods_are_cli_choices(tmp_path, capsys, clean_registry):
    plugin = tmp_path / "p.py"
    shutil.copy(EXAMPLES / "shrunk_ftfa.py", plugin)
    assert main(["--plugin", str(plugin), "predict", "shrunk_ftfa", "--gamma", "2", "--r", "1",
                 "--sigma", "0.5", "--lam", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["risk"] == pytest.approx(0.6875, rel=1e-14)
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "shrunk_ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam",
                 "0,1", "--d", "100", "--reps", "2", "--out", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 3


@pytest.mark.parametrize("body, message", [
    (None, "no such file"),
    ("raise RuntimeError('boom')", "RuntimeError: boom"),
    ("import riskcalc\nriskcalc.register_method(riskcalc.Method('ftfa', 'x', 'r', None, True, "
     "'x', lambda s, r: (0, 0)))", "already registered"),
])
def test_bad_plugin_is_one_error_line(tmp_path, capsys, body, message, clean_registry):
    plugin = tmp_path / "plugin.py"
    if body is not None:
        plugin.write_text(body)
    assert main(["--plugin", str(plugin), "predict", "ftfa", "--gamma", "2", "--r", "1",
                 "--sigma", "0.5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: plugin ") and message in err


def test_entry_points_are_loaded(monkeypatch, clean_registry):
    calls = []

    class EntryPoint:
        name, value = "mine", "mine:register"

        def load(self):
            return lambda: calls.append(scaled_ftfa("ftfa_ep", 1.0))

    looked = []

    def entry_points(group):
        looked.append(group)
        return [EntryPoint()] if group == rplugins.GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    # A process's first lookup (``installed`` keeps what it found for the process).
    rplugins.installed.cache_clear()
    try:
        assert plugins.load(["predict", "ftfa_ep"]) == ["predict", "ftfa_ep"]
        assert plugins.load(["predict", "ftfa_ep"]) == ["predict", "ftfa_ep"]
    finally:
        rplugins.installed.cache_clear()
    assert calls and "ftfa_ep" in riskcalc.METHODS and "ftfa_ep" in montecarlo.ESTIMATORS
    assert looked == [rplugins.GROUP]       # once per process, not at every command


def test_tutorial_runs():
    # With sphinx and numpydoc installed (the [test] extra) tests/test_docs.py runs the
    # tutorial in the docs build (its script-output fails the build when the script fails) and
    # checks this line on the page: one run per suite.
    if importlib.util.find_spec("sphinx") and importlib.util.find_spec("numpydoc"):
        pytest.skip("the docs build runs the tutorial (tests/test_docs.py)")
    out = subprocess.run([sys.executable, str(EXAMPLES / "tutorial_shrunk_ftfa.py")],
                         capture_output=True, text=True, check=True)
    assert "lam* = 0.500000" in out.stdout
