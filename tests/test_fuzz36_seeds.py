"""Issue 32, fuzz36 (seeds): what this fuzz found, each test failing before."""

import json
from pathlib import Path

import numpy as np
import pytest

from montecarlo.compare import compare
from montecarlo.linear.instances import Setting
from montecarlo.sweep import sweep
from riskcalc.linear.model import ClientSpec
from tests.helpers import run_cli


def test_sweep_cache_follows_a_client_spectrum_file(tmp_path):
    """F1: a sweep's task named another client's ``file:PATH`` spectrum (covariate shift), not
    its numbers: rerun with its ``--cache`` after the file changed, it took the former file's
    simulations beside the new file's predictions (simulated bias 0.849 for 2.37, predicted
    2.54), silently."""
    eig, cache = tmp_path / "eig.txt", tmp_path / "c.jsonl"
    setting = dict(d=8, clients=2, global_model="federated", gammas=(1.5,),
                   spectra=("identity", f"file:{eig}"))

    def run(cache_file):
        rows = sweep("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, reps=2,
                                setting=Setting(**setting), cache=cache_file, progress=False)
        return rows[0]["simulated_bias"]

    np.savetxt(eig, [1.0] * 4 + [4.0] * 4)
    first = run(cache)
    np.savetxt(eig, [1.0] * 4 + [100.0] * 4)
    assert run(cache) == run(None) != first


def test_compare_cache_follows_a_client_spectrum_file(tmp_path):
    """F1, ``montecarlo.compare``'s ``cache=`` (its tasks are the sweep's)."""
    eig, cache = tmp_path / "eig.txt", tmp_path / "c.jsonl"
    setting = Setting(d=8, clients=2, global_model="federated", gammas=(1.5,),
                      spectra=("identity", f"file:{eig}"))
    spec = ClientSpec("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5)

    def run(cache_file):
        return compare(spec, setting, reps=2, cache=cache_file).summary["bias"]["mean"]

    np.savetxt(eig, [1.0] * 4 + [4.0] * 4)
    first = run(cache)
    np.savetxt(eig, [1.0] * 4 + [100.0] * 4)
    assert run(cache) == run(None) != first


@pytest.mark.parametrize("model", [[], ["--model", "logistic", "--signal", "1"]])
def test_advise_seed_zero_without_bootstrap_is_refused_as_any_seed(tmp_path, capsys, model):
    """F2: ``advise --seed 3`` without ``--bootstrap`` was refused ("applies to --bootstrap
    only", "does not apply to --model logistic") but ``--seed 0``, the default's value, was
    taken silently (the advice ran, or the logistic family asked for --global-lam)."""
    fed = tmp_path / "f.json"
    fed.write_text(json.dumps([{"gamma": 0.5, "r": 1, "sigma": 1}] * 3))
    for seed in ("0", "3"):
        code, out, err = run_cli(["advise", "--clients-file", fed, "--seed", seed, *model],
                                 capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "--seed applies to --bootstrap only" in err or \
            "--seed does not apply to --model logistic" in err


def test_sweep_cache_follows_a_plugin_estimator(tmp_path, capsys, monkeypatch):
    """F3: a task named a plugin method, not its code: after the plugin's filter changed
    (w -> w^2), ``sweep --cache`` took the former plugin's simulations (simulated bias 0.556
    beside 0.654 without the cache), silently."""
    import riskcalc
    from montecarlo.linear.estimators import unregister_estimator
    from riskcalc import plugins

    monkeypatch.delenv(plugins.ENV, raising=False)
    source = (Path(__file__).parent.parent / "docs" / "examples" / "shrunk_ftfa.py").read_text()
    plugin, cache = tmp_path / "fz36_plug.py", tmp_path / "c.jsonl"

    def run(cache_file):
        argv = ["--plugin", plugin, "sweep", "shrunk_ftfa", "--gamma", "2", "--r", "1",
                "--sigma", "0.5", "--lam", "0.5", "--d", "8", "--reps", "2", "--no-progress"]
        try:
            code, out, err = run_cli(argv + (["--cache", cache_file] if cache_file else []),
                                     capsys)
        finally:
            if "shrunk_ftfa" in riskcalc.METHODS:
                unregister_estimator("shrunk_ftfa")
                riskcalc.unregister_method("shrunk_ftfa")
            plugins._LOADED.discard(str(plugin.resolve()))     # loaded anew at each run
        assert code == 0, err
        return out

    plugin.write_text(source)
    first = run(cache)
    plugin.write_text(source.replace("np.full_like(mu, shrink(lam))",
                                     "np.full_like(mu, shrink(lam) ** 2)"))
    assert run(cache) == run(None) != first


def _double(task):
    return {"x": 2 * task["a"]}


@pytest.mark.parametrize("kw, match", [
    (dict(cache=3), r"^cache must be a file path \(a str or os.PathLike\), got int$"),
    (dict(cache=True), "^cache must be a file path"),
    (dict(cache="."), r"^cache \.: is a folder, expected a file path$"),
    (dict(scheduler=5), "^scheduler must be the address of a dask scheduler"),
])
def test_run_tasks_cache_and_scheduler_types(kw, match, tmp_path, monkeypatch):
    """F4: ``run_tasks(cache=3)`` opened file descriptor 3 (whatever this process had open
    there) to append its header to, and closed it; a folder was a raw IsADirectoryError and
    ``scheduler=5`` an AttributeError ('int' object has no attribute 'decode')."""
    from montecarlo.runner.tasks import run_tasks

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=match):
        run_tasks(_double, [{"a": 1}], progress=False, **kw)


@pytest.mark.parametrize("desc", ["", "  "])
def test_run_tasks_cache_with_an_empty_label(desc, tmp_path):
    """F4: with a cache and no ``command``, the header named the label's first word, and an
    empty label was an IndexError."""
    from montecarlo.runner.tasks import run_tasks

    cache = tmp_path / "c.jsonl"
    assert run_tasks(_double, [{"a": 1}], cache=cache, desc=desc, progress=False) == [{"x": 2}]
    assert run_tasks(_double, [{"a": 1}], cache=cache, desc=desc, progress=False) == [{"x": 2}]
    assert json.loads(cache.read_text().splitlines()[0])["command"] == "tasks"


@pytest.mark.parametrize("seed, why", [(True, "a boolean"), (1.5, None), ("1", "a string"),
                                       (None, "None")])
@pytest.mark.parametrize("which", ["ridge", "pipeline"])
def test_logistic_simulations_read_the_seed_strictly(seed, why, which):
    """F5: the logistic simulations took ``int(seed)``: True, 1.5 and "1" ran as seed 1 (the
    linear ones refuse them through ``check_seed``), None was a raw TypeError."""
    from montecarlo.logistic import pipeline, ridge

    kw = dict(signal=1.0, lams=[0.5], d=6, reps=2, seed=seed, progress=False)
    match = "^seed must be an integer >= 0, got " + (f".*: {why}" if why else "1.5$")
    with pytest.raises(ValueError, match=match):
        if which == "ridge":
            ridge.simulate(gamma=1.0, r=1.0, **kw)
        else:
            pipeline.simulate_pipeline(gamma=[1.0, 1.0], r=[1.0, 1.0], global_lam=0.1, **kw)


@pytest.mark.parametrize("kw, match", [(dict(seed=True), "^seed must be an integer >= 0"),
                                       (dict(seed=-1), "^seed must be an integer >= 0"),
                                       (dict(d=1), "^d must be an integer >= 2"),
                                       (dict(reps=1), "^reps must be an integer >= 2")])
def test_check_method_refuses_its_own_bad_options(kw, match):
    """F6: ``montecarlo.check_method("rtfa", seed=True)`` (or d = 1, reps = 1) raised
    "AssertionError: check_method('rtfa') failed: simulation bias [identity]: error = seed
    must be ...": six failed checks blaming a correct method."""
    from montecarlo.registry_checks import check_method

    with pytest.raises(ValueError, match=match):
        check_method("rtfa", **kw)


@pytest.mark.parametrize("digits", [301, 5001])
def test_seed_beyond_the_command_lines_digits_is_refused(digits):
    """F7: ``--seed`` takes at most 300 digits; the Python API took any integer, and with a
    seed of 5001 digits ``compare`` failed building its tasks' keys ("Exceeds the limit (4300
    digits) for integer string conversion", naming no parameter)."""
    from montecarlo.runner.seeding import check_seed

    with pytest.raises(ValueError, match="^seed must be an integer >= 0 of at most 300 digits, "
                                         "got one of about"):
        check_seed(10 ** (digits - 1))
    assert check_seed(10 ** 300 - 1) == 10 ** 300 - 1


@pytest.mark.parametrize("value", [np.timedelta64(3), np.array(np.timedelta64(3))])
def test_a_timedelta_is_no_seed_nor_count(value):
    """F8: ``np.timedelta64(3).item()`` is the int 3: it was seed 3 (and d = 3, reps = 3),
    where every other non-number is refused (a datetime64 was)."""
    from montecarlo.runner.seeding import check_seed
    from riskcalc._validate import positive_int

    with pytest.raises(ValueError, match="^seed must be an integer >= 0, got"):
        check_seed(value)
    with pytest.raises(ValueError, match="^d must be an integer >= 1"):
        positive_int("d", value)


def test_a_figure_pdf_is_the_same_bytes_at_every_build(tmp_path, monkeypatch):
    """F9: ``figures --formats pdf`` wrote the build time (CreationDate) into the PDF: the same
    figure and seed were a different file at every build (the PNG, CSV and caption were
    byte-identical)."""
    from figures.style import figure, save

    pdfs = []
    for when in ("1000000000", "2000000000"):      # the clock matplotlib reads
        monkeypatch.setenv("SOURCE_DATE_EPOCH", when)
        fig, axes = figure()
        axes[0, 0].plot([0, 1], [1, 0])
        save(fig, {"pdf": tmp_path / f"{when}.pdf"})
        pdfs.append((tmp_path / f"{when}.pdf").read_bytes())
    assert pdfs[0] == pdfs[1]


def test_a_torn_line_whose_task_was_rerun_is_not_reported_again(tmp_path, recwarn):
    """F10: a line torn by an interruption was reported at every later run ("line 3 is not a
    complete record ...; its task reruns"), though its task had rerun and a later line held
    it: nothing reran."""
    from montecarlo.runner.tasks import CacheWarning, run_tasks, task_key

    cache = tmp_path / "c.jsonl"
    run_tasks(_double, [{"a": 1}], cache=cache, progress=False)
    with open(cache, "a") as fh:         # task {"a": 2}'s record, torn after its key
        fh.write(f'{{"key": "{task_key({"a": 2})}", "task": {{"a": 2}}, "res')
    args = ([{"a": 1}, {"a": 2}],)
    with pytest.warns(CacheWarning, match="line 3 is not a complete record .* its task reruns "
                                          "unless another line holds it$"):
        assert run_tasks(_double, *args, cache=cache, progress=False) == [{"x": 2}, {"x": 4}]
    recwarn.clear()
    assert run_tasks(_double, *args, cache=cache, progress=False) == [{"x": 2}, {"x": 4}]
    assert not [w for w in recwarn if issubclass(w.category, CacheWarning)]


def test_n_jobs_beside_a_scheduler_is_refused_as_jobs_is(capsys):
    """F11: ``--jobs 2 --scheduler local`` is refused on the command line; the Python API
    (``compare``, ``sweep``, ``run_tasks``) dropped n_jobs = 2 silently and ran on the
    cluster's one worker."""
    from montecarlo.runner.tasks import run_tasks

    with pytest.raises(ValueError, match="^n_jobs = 2 does not apply with a scheduler"):
        run_tasks(_double, [{"a": 1}], n_jobs=2, scheduler="local", progress=False)
