"""``riskcalc compare`` and ``riskcalc sweep``: output, the DESIGN.md JSON contract, errors."""

import json

import pytest

import riskcalc.cli as cli


def test_compare_text(capsys):
    assert cli.main("compare rtfa --gamma 2 --r 1 --sigma 0.5 --lam 0.5 --d 200 --reps 4 "
                    "--seed 0".split()) == 0
    out = capsys.readouterr().out
    assert "predicted" in out and "in 95% CI" in out
    for q in ("bias", "variance", "risk"):
        assert f"  {q}" in out


def test_compare_json_contract(capsys):
    assert cli.main("compare maml_fl --gamma 2 --r 1 --sigma 0.5 --alpha 0.1 --d 40 --clients 30 "
                    "--global federated --reps 2 --json".split()) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"method", "params", "bias", "variance", "risk", "predicted", "simulated"} <= set(out)
    assert set(out["predicted"]) == {"bias", "variance", "risk"}
    assert {"bias", "variance", "risk", "bias_se", "variance_se", "risk_se", "reps",
            "d"} <= set(out["simulated"])
    assert out["simulated"]["reps"] == 2 and out["simulated"]["d"] == 40
    assert out["setting"]["global_model"] == "federated"


def test_compare_powerlaw_and_steps(capsys):
    assert cli.main("compare ftfa --gamma 2 --r 1 --sigma 0.5 --spectrum powerlaw:0.5 --d 100 "
                    "--reps 2 --steps 5 --step-size 0.3 --measure empirical --json".split()) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["setting"]["steps"] == 5 and out["simulated"]["measure"] == "empirical"


def test_sweep_csv(tmp_path, capsys):
    path = tmp_path / "results.csv"
    assert cli.main(f"sweep rtfa --gamma 1.5,2 --r 1 --sigma 0.5 --lam 0.1,1 --d 60 --reps 2 "
                    f"--out {path}".split()) == 0
    lines = path.read_text().splitlines()
    assert len(lines) == 5 and "simulated_risk" in lines[0]
    assert "wrote 4 rows" in capsys.readouterr().err


def test_sweep_jsonl_stdout(capsys):
    assert cli.main("sweep local --gamma 2 --rho 1,2 --sigma 0.5 --d 40 --reps 2 --format jsonl "
                    "--no-progress".split()) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["rho"] for r in rows] == [1.0, 2.0]


@pytest.mark.parametrize("argv, message", [
    ("compare rtfa --gamma 10 --r 1 --sigma 0.5 --lam 1 --d 3 --reps 2", "too small"),
    ("compare rtfa --gamma 2 --r 1 --sigma 0.5 --lam 1 --d 40 --reps 1", "reps"),
    ("compare rtfa --gamma 2 --r 1 --sigma 0.5 --d 40", "needs --lam"),
    ("compare maml_fl --gamma 2 --r 1 --sigma 0.5 --d 40", "needs --alpha"),
    ("sweep rtfa --gamma 2,x --r 1 --sigma 0.5 --lam 1 --d 40", "comma-separated"),
    ("compare rtfa --gamma 2 --r 1 --sigma 0.5 --lam 1 --d 40 --global federated --clients 1",
     "clients"),
])
def test_bad_input_exit_2(argv, message, capsys):
    assert cli.main(argv.split()) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_compare_text_at_the_interpolation_threshold(capsys):
    # The predicted ridgeless variance is infinite at gamma = 1: the table prints inf.
    assert cli.main(["compare", "ftfa", "--gamma", "1", "--r", "1", "--sigma", "0.5", "--d", "20",
                     "--reps", "3"]) == 0
    out = capsys.readouterr().out
    assert "variance" in out and "inf" in out
