"""Good input at the edges of every verb prints a result: finite numbers at the extremes of the
ranges, a divergent FTFA as a result without warnings, standard JSON (no Infinity or NaN) and
one default for the clients' weights and count."""

import json
import subprocess
import sys

import pytest

from riskcalc.cli import main


def test_in_range_extremes_print_finite_json(capsys):
    for args in ("--gamma 1e100 --r 1e100 --sigma 1e100 --lam 1e-100",
                 "--gamma 1e-100 --r 1e100 --sigma 1e100 --lam 1e100"):
        assert main(["predict", "rtfa", *args.split(), "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert all(isinstance(res[q], float) for q in ("bias", "variance", "risk"))


def test_divergent_steps_print_a_result_without_warnings():
    # Was an error after numpy's warnings (issues 22, 32): divergence is now a result, with
    # nothing on stderr (the overflow is the value, not a warning).
    proc = subprocess.run([sys.executable, "-m", "riskcalc", "predict", "ftfa", "--gamma", "2",
                           "--r", "1", "--sigma", "0.5", "--steps", "200", "--step-size", "5"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "converges: false" in proc.stdout and "risk      overflow" in proc.stdout


def _strict(text):
    """Parse standard JSON only: Infinity and NaN are not JSON."""
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("command", [
    "predict ftfa --gamma 1 --r 1 --sigma 0.5 --json",
    "predict local --gamma 1 --rho 1 --sigma 0.5 --json",
    "compare ftfa --gamma 1 --r 1 --sigma 0.5 --d 40 --reps 2 --no-progress --json",
    "bounds table1_rates --R 1 --n 1e20 --m 1e20 --D 1 --loss_sup 1 --json",
    "bounds --list --json",
    "sweep ftfa --gamma 1,2 --r 1 --sigma 0.5 --d 40 --reps 2 --no-progress --format jsonl",
])
def test_json_is_standard(command, capsys):
    assert main(command.split()) == 0
    for line in capsys.readouterr().out.splitlines():
        _strict(line)


def test_an_infinite_prediction_is_inside_no_interval(capsys):
    assert main("compare ftfa --gamma 1 --r 1 --sigma 0.5 --d 40 --reps 3 --no-progress "
                "--json".split()) == 0
    res = _strict(capsys.readouterr().out)
    assert res["predicted"]["variance"] is None
    assert res["comparison"]["variance"]["inside_ci95"] is False
    assert main("compare ftfa --gamma 1 --r 1 --sigma 0.5 --d 40 --reps 3 "
                "--no-progress".split()) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if "variance" in line][0]
    assert row.split()[1] == "inf" and row.split()[-1] == "no"


def test_sweep_jsonl_file_is_standard(tmp_path):
    out = tmp_path / "s.jsonl"
    assert main(["sweep", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "0.5", "--d", "40",
                 "--reps", "2", "--no-progress", "--out", str(out)]) == 0
    row = _strict(out.read_text())
    assert row["predicted_variance"] is None and row["variance_inside_ci95"] is False


def test_one_default_for_weights_and_clients(tmp_path, capsys):
    # Issue 22: predict used sample weights, compare --global federated uniform ones.
    from montecarlo.linear.instances import Setting

    fed = tmp_path / "fed.json"
    fed.write_text('[{"gamma": 0.5, "r": 0.5, "sigma": 1.0}, {"gamma": 4, "r": 2, "sigma": 0.2}]')
    model = "ftfa --gamma 2 --r 1 --sigma 0.5 --json --clients-file".split() + [str(fed)]
    assert main(["predict", *model]) == 0
    predicted = json.loads(capsys.readouterr().out)["risk"]
    assert main(["compare", *model, "--global", "federated", "--d", "40", "--reps", "2",
                 "--no-progress"]) == 0
    assert json.loads(capsys.readouterr().out)["predicted"]["risk"] == predicted
    assert Setting(d=10).weights == "samples" and Setting(d=10).clients == 100


def test_oracle_sweep_has_no_clients_column_value(tmp_path):
    out = tmp_path / "s.csv"
    assert main(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--d", "40",
                 "--reps", "2", "--no-progress", "--out", str(out)]) == 0
    import csv
    row = next(csv.DictReader(out.open()))
    assert row["global_model"] == "oracle" and row["clients"] == ""
