"""Issue 32, fuzz37 (twins): what this fuzz found, each test failing before."""

import csv
import json
import warnings

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

pd = pytest.importorskip("pandas")

ROUNDS = dict(gamma=[2.0, 0.5], r=[1.0, 0.5], sigma=0.5, signal=1.0, local_steps=2,
              step_size=0.1)


def test_rounds_limit_has_a_frame_of_the_arrays_it_holds():
    """F2: RoundsLimit had no to_frame() while every other result has one; it has one row per
    client and round (client-major, the rounds in the order given), holding its arrays."""
    res = riskcalc.rounds_limit("fedavg", rounds=[5, 0, np.inf], weights=[0.25, 0.75],
                                **ROUNDS)
    frame = res.to_frame()
    assert len(frame) == 6 and list(frame["client"]) == [0, 0, 0, 1, 1, 1]
    assert list(frame["rounds"]) == [5, 0, np.inf] * 2
    for k in ("bias", "variance", "risk", "global_risk"):
        np.testing.assert_array_equal(frame[k], getattr(res, k).ravel())
    np.testing.assert_array_equal(frame["distance_to_fixed_point"],
                                  np.tile(res.distance_to_fixed_point, 2))
    assert list(frame["gamma"]) == [2.0] * 3 + [0.5] * 3 and list(frame["r"]) == [1.0] * 3 + [
        0.5] * 3
    assert list(frame["weights"]) == [0.25] * 3 + [0.75] * 3
    assert set(frame["contraction"]) == {res.contraction} and frame["converges"].all()
    assert frame["method"].iloc[0] == "fedavg" and set(frame["local_steps"]) == {2}


def test_rounds_frame_names_each_clients_covariance():
    """F2: under covariate shift the frame's ``spectrum`` is each client's SPEC (as in
    ``ClientsLimit.to_frame``); a shared spectrum is its label."""
    res = riskcalc.rounds_limit("fedavg", rounds=[1], **{**ROUNDS, "local_steps": 1},
                                spectra=["identity", "scaled:2"])
    assert list(res.to_frame()["spectrum"]) == ["identity", "scaled:2"]


def test_figure_csv_leaves_a_theory_rows_error_cells_empty(tmp_path):
    """F4, F12: a figure CSV wrote ``nan`` in y_se, y_lo and y_hi of every theory row, which
    reads as an estimate that failed, and in x of every reference line; they are empty cells
    (as ``reps``), a simulation's stay."""
    from figures.core import Table

    table = Table()
    table.add("a", "s", "theory", "x", [1.0, 2.0], "y", [0.5, 0.25])
    table.add("a", "s", "simulation", "x", 1.0, "y", 0.5, se=0.01, lo=0.48, hi=0.52, reps=4)
    table.add("a", "r", "reference", "x", np.nan, "y", 1.0)
    table.write(tmp_path / "t.csv")
    frame = pd.read_csv(tmp_path / "t.csv", dtype=str, keep_default_na=False)
    assert list(frame["y_se"]) == ["", "", "0.01", ""]
    assert list(frame["y_hi"]) == ["", "", "0.52", ""]
    assert list(frame["x"]) == ["1", "2", "1", ""] and frame["y"].iloc[-1] == "1"
    assert "nan" not in (tmp_path / "t.csv").read_text()


@pytest.mark.parametrize("make", [
    lambda: riskcalc.limit("ftfa", gamma=[2.0, 3.0], r=1.0, sigma=0.5),
    lambda: riskcalc.clients_limit("ftfa", gamma=[2.0, 0.5], r=1.0, sigma=0.5),
    lambda: riskcalc.rounds_limit("fedavg", rounds=[1, 2], **ROUNDS),
    lambda: riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=0.0, lam=0.5),
])
def test_the_same_limit_is_the_same_result(make):
    """F5: ``==`` of two results holding arrays raised "The truth value of an array with more
    than one element is ambiguous" (the dataclasses compared their fields as tuples), and a
    result holding a NaN (the undefined cosine at r = 0) was unequal to itself."""
    assert make() == make()
    other = riskcalc.limit("ftfa", gamma=[2.0, 4.0], r=1.0, sigma=0.5)
    assert make() != other


def test_sweep_with_steps_predicts_the_steps_limit(capsys):
    """F6: ``sweep --steps K --step-size ETA`` simulated K gradient steps but its CSV's
    predicted columns held the converged limit (0.75 beside a simulated 0.664 at K = 3: -11%,
    'outside the 95% interval'), with no column saying steps were taken; ``compare`` with the
    same options predicted the steps limit. The rows now predict it and name steps, step_size."""
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep

    rows = sweep("rtfa", gamma=[2.0], r=1.0, sigma=0.5, lam=[0.1, 1.0], setting=Setting(d=40),
                 reps=2, steps=3, step_size=0.2, progress=False)
    want = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=[0.1, 1.0], steps=3,
                                step_size=0.2)
    assert [row["predicted_risk"] for row in rows] == list(want.risk)
    assert [(row["steps"], row["step_size"]) for row in rows] == [(3, 0.2)] * 2


def test_figure_folders_are_named_folders(tmp_path, monkeypatch):
    """F7: ``figures.build(ID, "")`` wrote the figure into the working directory (Path("") is
    "."), ``figures.build(ID, FILE)`` was a FileExistsError from mkdir, and ``run_tasks(...,
    cache="")`` a FileNotFoundError; ``riskcalc figures --out`` refuses both by name."""
    import figures
    from montecarlo.runner.tasks import run_tasks

    monkeypatch.chdir(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out, words in (("", "out_dir needs a folder name, got an empty one"),
                       (afile, "exists and is not a folder")):
        with pytest.raises(ValueError, match=f"^{words}" if out == "" else words):
            figures.build("p003-region", out, quick=True, cache=False, formats="png")
    with pytest.raises(ValueError, match="cache_dir .*afile: exists and is not a folder"):
        figures.draw("p003-region", quick=True, cache_dir=afile)
    with pytest.raises(ValueError, match="^cache needs a file name, got an empty one$"):
        run_tasks(abs, [1], cache=" ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"] and afile.read_text() == "x"


@pytest.mark.parametrize("jobs", [0, -1, True, 1.5])
def test_figures_check_n_jobs_by_its_name(jobs, tmp_path):
    """F8: ``figures.draw("p003-region", n_jobs=0)`` (a theory figure) drew, while a simulated
    figure refused it as "jobs" after its theory lines; both refuse it as n_jobs first."""
    import figures

    with pytest.raises(ValueError, match="^n_jobs must be"):
        figures.draw("p003-region", quick=True, n_jobs=jobs)
    with pytest.raises(ValueError, match="^n_jobs must be"):
        figures.build("p003-region", tmp_path / "out", quick=True, n_jobs=jobs)
    assert not (tmp_path / "out").exists()


def test_advise_csv_writes_an_infinite_risk_as_inf(tmp_path, capsys):
    """F9: ``advise --csv`` wrote FTFA's infinite risk (every client at gamma = 1) as an empty
    cell, which reads as missing, while its table printed inf, its own local_steps column
    writes inf for the exact local solve and the sweep's CSV writes inf."""
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 1.0, "r": 1.0, "sigma": 0.5}, {"gamma": 1.0, "r": 0.5, "sigma": 0.5}]}))
    code, _, err = run_cli(["advise", "--federation", fed, "--methods", "ftfa,fedavg",
                            "--csv", tmp_path / "a.csv", "--no-progress"], capsys)
    assert code == 0, err
    with open(tmp_path / "a.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["risk"] for r in rows if r["method"] == "ftfa"} == {"inf"}
    assert all(float(r["risk"]) == 0.875 for r in rows if r["method"] == "fedavg")


def test_logistic_clients_frame_names_its_method_and_parameters():
    """F10: ``logistic_clients_limit(...).to_frame()`` without a grid had no method, signal,
    lam, global_lam, weights or spectrum column (``ClientsLimit.to_frame`` has its method and
    every parameter): the frames of two runs at different lam read the same."""
    frame = riskcalc.logistic_clients_limit(gamma=[0.5, 1.5], r=[1.0, 0.5], signal=1.0,
                                            global_lam=1.0, lam=2.0).to_frame()
    assert list(frame["method"]) == ["rtfa"] * 2 and list(frame["lam"]) == [2.0, 2.0]
    assert list(frame["signal"]) == [1.0, 1.0] and list(frame["global_lam"]) == [1.0, 1.0]
    assert set(frame["weights"]) == {"samples"} and list(frame["client"]) == [0, 1]


def test_comparison_as_dict_is_strict_json():
    """F11: ``Comparison.as_dict()`` (DESIGN.md's JSON of ``riskcalc compare``) held inf and
    NaN where the simulation of diverging steps passed the floats (``json.dumps`` wrote
    Infinity and NaN, not JSON) while ``LimitResult.as_dict`` gives None there."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = riskcalc.ClientSpec("ftfa", gamma=2.0, r=1.0, sigma=0.5)
    with warnings.catch_warnings():     # the steps' overflow, which the test is about
        warnings.simplefilter("ignore", RuntimeWarning)
        out = compare(spec, Setting(d=40), reps=2, steps=200, step_size=1.5).as_dict()
    json.dumps(out, allow_nan=False)
    assert out["simulated"]["risk"] is None and out["comparison"]["risk"]["ci95"] == [None] * 2


def test_steps_frame_says_which_points_converge():
    """F13: ``steps_limit(...).to_frame()`` had no ``converges`` column while ``as_dict``
    carries it: a diverging step size's finite first steps read as a usable limit."""
    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=[1, 1000],
                               step_size=[[0.2], [1.5]])
    frame = res.to_frame()
    assert list(frame["converges"]) == [True, True, False, False]
    assert list(frame["converges"]) == list(np.ravel(res.as_dict()["diagnostics"]["converges"]))
    assert "converges" not in riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5).to_frame()


def test_compare_table_of_diverging_steps_prints_no_nan(capsys):
    """F11 (follow-up): the compare table read the simulated mean from as_dict, whose
    overflowed inf F11 made None: it printed nan."""
    code, out, _ = run_cli(["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--d", "40", "--reps", "2", "--steps", "200", "--step-size", "1.5",
                            "--no-progress"], capsys)
    assert code == 0 and "nan" not in out


def test_steps_tables_print_overflow_as_the_rounds_tables(capsys):
    """F14: FTFA after 200 diverging steps is finite, past the floats: the rounds tables print
    such a value ``overflow`` with a line saying so, the steps tables of predict and compare
    printed ``inf`` (the word of the ridgeless variance's infinite limit at gamma = 1, which
    stays)."""
    args = ["ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"]
    steps = ["--steps", "200", "--step-size", "1.5"]
    sim = ["--d", "40", "--reps", "2", "--no-progress"]
    for argv in (["predict", *args, *steps], ["compare", *args, *steps, *sim]):
        code, out, _ = run_cli(argv, capsys)
        rows = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["risk"]]
        assert code == 0 and "inf" not in out.replace("infinite", "") and "overflow" in rows[0]
        assert "  overflow: past the floating-point range" in out
    code, out, _ = run_cli(["predict", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "0.5"],
                           capsys)
    assert "risk      inf" in out and "overflow" not in out


def test_sweep_says_what_its_predictions_are(tmp_path, capsys):
    """F15: ``sweep maml_fl --steps 3`` simulated the steps beside the converged limit (no
    finite-step limit for MAML-FL: -11.5%, 'outside the 95% interval') without a word, where
    ``compare`` notes 'the prediction is the converged limit'; the sweep refuses it (merged
    with fuzz37 cache F5: rows written to a file would compare silently), and prints the
    predictions' other notes on stderr (``SweepRows.notes``)."""
    argv = ["sweep", "maml_fl", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--alpha", "0.1",
            "--d", "40", "--reps", "2", "--steps", "3", "--step-size", "0.2", "--no-progress",
            "--out", tmp_path / "s.csv"]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and "no finite-step limit covers maml_fl" in err
    assert not (tmp_path / "s.csv").exists()
    # the ratio d / n it predicts at, as compare notes (follow-up)
    code, _, err = run_cli(["sweep", "ftfa", "--gamma", "3", "--r", "1", "--sigma", "0.5",
                            "--d", "40", "--reps", "2", "--no-progress", "--out",
                            tmp_path / "t.csv"], capsys)
    assert code == 0 and "note: predicted at the simulated ratio gamma = d / n = 40 / 13" in err


def test_rounds_frame_says_when_the_contraction_is_a_bound():
    """F2 (follow-up): Algorithm 1's contraction with an odd K above 1 / (L + lam) is an upper
    bound, which the JSON rows flag; the frame says so in ``contraction_is_bound``."""
    gam, lam = [0.1, 0.2, 0.3], 0.5
    eta = 1.8 / ((1 + np.sqrt(0.3)) ** 2 + lam)
    res = riskcalc.rounds_limit("fedprox", gamma=gam, r=0.5, sigma=0.5, signal=1.0,
                                rounds=[1], local_steps=1, step_size=eta, lam=lam)
    assert res.to_frame()["contraction_is_bound"].all()
    assert not riskcalc.rounds_limit("fedavg", rounds=[1], **ROUNDS).to_frame()[
        "contraction_is_bound"].any()


def test_finite_logistic_frame_holds_nan_not_none():
    """F16: ``logistic_limit(..., clients=M).to_frame()`` read its values from ``as_dict``:
    the undefined global_overlap at signal 0 was None in a column of Python objects (float
    NaN in ``LogisticResult.to_frame``'s undefined cosine)."""
    frame = riskcalc.logistic_limit(gamma=1.0, signal=0.0, r=1.0, lam=0.5, clients=3,
                                    global_lam=1e-3).to_frame()
    assert frame["global_overlap"].dtype == float and frame["global_overlap"].isna().all()
    assert frame["iterations"].dtype == np.int64 and frame["risk"].dtype == float


def test_sweep_frame_columns_of_undefined_numbers_are_float():
    """F17: ``SweepRows.to_frame()``: a column whose every value is undefined (``rel_diff``
    beside a prediction of 0, ``clients`` under the oracle global model) was a column of
    Python objects (None), which ``numpy.isnan`` refuses; it is float NaN. Text stays text."""
    from montecarlo.sweep import SweepRows

    frame = SweepRows([{"method": "ftfa", "clients": None, "bias_rel_diff": None, "d": 40,
                        "bias_inside_ci95": True}] * 2).to_frame()
    assert np.isnan(frame["bias_rel_diff"]).all() and np.isnan(frame["clients"]).all()
    assert frame["d"].dtype == np.int64 and frame["bias_inside_ci95"].dtype == bool
    assert list(frame["method"]) == ["ftfa"] * 2
