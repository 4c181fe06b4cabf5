"""Issue 32, fuzz39 (fuzz): what this fuzz found, each test failing before."""

import pytest

import montecarlo
from tests.helpers import run_cli


def test_linear_compare_and_sweep_predict_at_the_simulated_spectrum(capsys):
    """F1: the linear ``compare`` and ``sweep`` simulated Sigma's d eigenvalues
    (``Spectrum.eigenvalues(d)``, quantiles) but predicted at the spectrum asked:
    two-point:1,4,0.01 at d = 40 simulates Sigma = 4 I (bias exactly 2 = r^2 (1 - 1/gamma) 4)
    against a limit of 1.976 ("not in the 95% interval"), with no note; the logistic family
    already predicted at the realized spectrum. Now both predict there, with a note."""
    c = montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=40, reps=2,
                           spectrum="two-point:1,4,0.01")
    assert c.limit.bias == pytest.approx(2.0, rel=1e-12)
    assert c.summary["bias"]["inside"]
    assert any("the d = 40 eigenvalues the simulation realizes" in n for n in c.limit.notes)
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--d", "40", "--reps", "2", "--spectrum", "powerlaw:1,80",
                              "--no-progress"], capsys)
    assert code == 0, err
    assert "discrete[40 atoms" in err
    # A spectrum d realizes exactly is predicted as asked.
    exact = montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=40, reps=2,
                               spectrum="two-point:1,4,0.25")
    assert not exact.limit.notes


def test_an_interrupted_sweep_names_its_cache_or_says_nothing_is_kept(monkeypatch, capsys):
    """F2: Ctrl-C on ``sweep``/``simulate`` said "finished tasks are kept in the --cache file,
    if one was given" whether or not one was (docs/safety.rst: they name their cache file).
    Now the file is named, or the line says nothing is kept and how to keep it."""
    import riskcalc.cli as cli

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run", interrupted)
    assert cli.main(["sweep", "ftfa", "--cache", "runs/c.jsonl"]) == 130
    assert capsys.readouterr().err.strip() == (
        "error: interrupted; finished tasks are kept in runs/c.jsonl: the same command "
        "resumes from it")
    assert cli.main(["simulate", "paper000-fig1", "--out", "s.csv"]) == 130
    assert "nothing is kept: give --cache FILE" in capsys.readouterr().err


def test_the_python_sweep_takes_a_spec_string_as_compare_does():
    """F3: ``montecarlo.sweep.sweep(..., spectrum="two-point:1,4,0.5")`` (a SPEC string, as
    ``montecarlo.compare`` and ``ClientSpec`` take) simulated the whole grid, then raised
    AttributeError: 'str' object has no attribute 'record' writing the rows' label."""
    from montecarlo.linear.instances import Setting
    from montecarlo.sweep import sweep

    rows = sweep("ftfa", gamma=2.0, sigma=0.5, r=1.0, setting=Setting(d=20), reps=2,
                 spectrum="two-point:1,4,0.5", progress=False)
    assert rows[0]["spectrum"] == "discrete[0.5@1, 0.5@4]"


def test_write_rows_takes_numpy_numbers_and_any_iterable(tmp_path):
    """F4: ``montecarlo.sweep.write_rows`` raised TypeError for a numpy int64 in a row
    ("not JSON serializable") and for a generator of rows ("has no len()"), and
    IsADirectoryError naming its temporary file for a folder as ``path``."""
    import json

    import numpy as np

    from montecarlo.sweep import write_rows

    out = tmp_path / "r.jsonl"
    rows = ({"n": np.int64(3), "risk": np.float32("nan")} for _ in range(2))
    assert write_rows(rows, out) == "jsonl"
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {"n": 3, "risk": None}] * 2
    with pytest.raises(ValueError, match="is a folder, expected a file path"):
        write_rows([{"n": 1}], tmp_path)


def test_a_deterministic_quantity_at_the_risks_rounding_is_inside_its_interval():
    """F5: ``compare rtfa --gamma 0.5 --lam 1e-100``: predicted bias 8e-200 (lam^2 scale),
    simulated exactly 0 with no spread, was "not in the 95% interval" (rel.diff n/a since
    fuzz38 quad F2): both lie below the rounding of the risk, 0.25."""
    import numpy as np

    from montecarlo.compare import summarize

    out = summarize([[0.0], [0.0]], [8e-200], scale=[0.25])
    assert out["inside"][0] and np.isnan(out["rel_diff"][0])
    # Above the risk's rounding a zero-width miss is still a miss.
    assert not summarize([[0.0], [0.0]], [1e-6], scale=[0.25])["inside"][0]


def test_an_output_named_like_a_folder_is_refused_before_the_work(tmp_path, capsys):
    """F6: ``sweep ... --out out/x.csv/`` (a trailing slash, no such folder) simulated the
    whole grid, then failed: "[Errno 20] Not a directory: '.../..e_3h8kyo.tmp' ->
    'out/x.csv/'", naming a temporary file."""
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--d", "20", "--reps", "2", "--no-progress", "--out",
                              f"{tmp_path}/x.csv/"], capsys)
    assert code == 2 and err == f"error: --out {tmp_path}/x.csv/: ends in '/', a folder's " \
                                "name; give a file path\n"
    assert list(tmp_path.iterdir()) == []


def test_figures_out_dash_is_no_folder_name(tmp_path, monkeypatch):
    """F7: ``figures p003-region --out -`` built the figure into a new folder named "-"
    (printing "-> -/p003-region.png"), where every file output refuses "-" (the convention's
    stdout) naming the option. (``make_folder`` is the check ``figures`` runs on --out.)"""
    from riskcalc.cli.shared.outputs import make_folder

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"^--out -: give a folder name"):
        make_folder("-", "--out")
    assert list(tmp_path.iterdir()) == []


def test_a_cached_replicate_holding_nan_reruns():
    """F8: a ``sweep --cache`` record whose result held ``NaN`` (JSON's token, an edited or
    damaged file) was taken as a finished replicate: the row's simulated bias came out empty
    (NaN) and "not in the 95% interval". No replicate returns NaN: it now reruns, as a record
    of another layout does."""
    from montecarlo.replicates import valid_replicate

    task = {"tunings": [0.1]}
    good = {"bias": [0.5], "variance": [0.2], "risk": [float("inf")], "n": 50}
    assert valid_replicate(task, good)
    assert not valid_replicate(task, {**good, "bias": [float("nan")]})


def test_check_method_extrapolates_what_each_size_realizes():
    """F9: ``check-method ftfa --spectrum identity --d 25 --gamma 3`` FAILed a closed form:
    d = 25 simulates d / n = 25 / 8 = 3.125 and 2d = 50 / 17 = 2.94, whose exact biases 0.68
    and 0.66 extrapolated to 0.64 against 0.68 (two-point:1,4,0.3 at d = 25 likewise, rtfa's
    bias and risk). Each mean is now taken less its own prediction before extrapolating."""
    from montecarlo.registry_checks import run_checks

    rows = run_checks("ftfa", gamma=3.0, spectrum=(("identity", None),), d=25, reps=3)
    bias = next(r for r in rows if r["check"] == "simulation bias")
    assert bias["ok"] and bias["predicted"] == pytest.approx(2 / 3, rel=1e-12)
    assert bias["simulated"] == pytest.approx(2 / 3, rel=1e-9)


def test_compare_along_the_rounds_predicts_at_the_simulated_spectrum(capsys):
    """F10: F1 along the rounds: ``compare fedavg --rounds 0 ... --spectrum two-point:1,4,0.01
    --d 20`` simulated Sigma = 4 I (the zero model's risk (signal^2 + r^2) 4 = 8) against a
    prediction at the spectrum asked, 7.94."""
    import json

    code, out, err = run_cli(["compare", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma",
                              "0.5", "--d", "20", "--reps", "2", "--no-progress", "--rounds",
                              "0", "--local-steps", "inf", "--signal", "1", "--spectrum",
                              "two-point:1,4,0.01", "--json"], capsys)
    assert code == 0, err
    row = json.loads(out)[0]
    assert row["predicted"]["risk"] == pytest.approx(8.0, rel=1e-12)
    assert row["simulated"]["risk"] == pytest.approx(8.0, rel=1e-12)


def test_diverging_steps_simulate_zero_where_nothing_drives_the_error():
    """F11: ``compare ftfa --r 0 --sigma 0 --steps 2000 --step-size 10``: the limit is 0 (the
    fine-tuning starts at theta_i and sees no noise), the simulation printed overflow: 0 * inf
    was NaN, mapped to inf. With r = 0 (sigma = 0) the simulated bias (variance) is 0."""
    c = montecarlo.compare("ftfa", gamma=2.0, r=0.0, sigma=0.5, d=20, reps=2, steps=400,
                           step_size=10.0)
    assert c.summary["bias"]["mean"] == 0.0 and c.summary["bias"]["inside"]
    assert c.summary["variance"]["mean"] == float("inf")


def test_a_diverging_rounds_simulation_without_signal_or_noise_stays_at_zero():
    """F12: FedAvg's rounds at --local-step-size 10 (the round map diverges) with r = sigma =
    signal = 0: every model stays at 0 = theta_j, but the simulation printed overflow (0 * inf
    in its traces, NaN, mapped to inf for all but a noiseless variance)."""
    from montecarlo.linear.rounds import simulate_rounds

    sim = simulate_rounds("fedavg", gamma=[2.0, 2.0, 2.0], r=[0.0] * 3, sigma=[0.0] * 3,
                          signal=0.0, rounds=[300], local_steps=1, step_size=10.0, d=20,
                          reps=2, progress=False)
    assert sim.risk[0, 0] == 0.0 and sim.bias[0, 0] == 0.0


def test_compare_stops_at_max_minutes_whatever_its_estimate(monkeypatch, capsys):
    """F13: compare's --max-minutes estimate counts the simulation only, and nothing stopped
    the prediction: a finite-M maml_fl limit of 41 distinct clients under powerlaw:1,200 ran
    30 s past --max-minutes 0.2 (12 s), where predict stops at 12 s. A slow prediction now
    stops at the limit, nothing printed."""
    import time

    import montecarlo.compare as mc

    def slow(*args, **kwargs):
        time.sleep(5)

    monkeypatch.setattr(mc, "predicted", slow)
    code, out, err = run_cli(["compare", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--d", "20", "--reps", "2", "--no-progress", "--max-minutes",
                              "0.005"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: stopped at the --max-minutes limit (0.3 s) before the "
                          "comparison was ready; nothing was printed")


def test_a_simulated_bias_is_never_negative():
    """F14: ``compare fedavg --gamma 0.5 --clients 1 --global federated --d 200 --reps 3``
    printed the simulated bias -1.55431e-15 (FedAvg's exact bias is 0: the rounding of the
    quadratic form's differences). Each replicate's bias and variance are now >= 0."""
    c = montecarlo.compare("fedavg", gamma=0.5, r=1.0, sigma=0.5, d=200, reps=3, clients=1)
    assert c.summary["bias"]["mean"] >= 0.0 and c.summary["bias"]["inside"]
