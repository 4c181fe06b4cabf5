"""The ``riskcalc bounds`` subcommand, run through the dispatcher."""

import json

import pytest

import riskcalc.cli as cli
from riskcalc.minimax import BOUNDS


@pytest.fixture
def main():
    return cli.main


def test_list(main, capsys):
    assert main(["bounds", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in BOUNDS)
    assert main(["bounds", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(BOUNDS)
    assert next(r for r in rows if r["name"] == "lower_bound_aer")["params"] == ["d", "N", "m", "R"]


def test_evaluate_text(main, capsys):
    assert main(["bounds", "fedprox_constants", "--L", "2", "--mu", "1", "--rho", "1"]) == 0
    out = capsys.readouterr().out
    assert "C1=32 C2=128 C3=192 C4=792" in out


def test_evaluate_json_single_and_grid(main, capsys):
    # min(2*4/100, 0.01) + 2/100 = 0.03
    assert main(["bounds", "lower_bound_aer", "--d", "2", "--N", "100", "--m", "4",
                 "--R", "0.1", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["params"] == {"d": 2.0, "N": 100.0, "m": 4.0, "R": 0.1}
    assert row["values"]["value"] == pytest.approx(0.03)
    assert main(["bounds", "lower_bound_aer", "--d", "2", "--N", "100", "--m", "4",
                 "--R", "0,0.1,1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["values"]["value"] for r in rows] == pytest.approx([0.02, 0.03, 0.10])


def test_evaluate_mixed_outputs(main, capsys):
    assert main(["bounds", "fedprox_lambda", "--L", "1", "--mu", "1", "--rho", "1", "--R", "0,1",
                 "--n", "100", "--m", "10", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["values"]["lam"] for r in rows] == pytest.approx([63, 0.01])
    assert [r["values"]["is_lower"] for r in rows] == [True, False]
    assert main(["bounds", "communication_lower_bound", "--L", "10001", "--mu", "1",
                 "--lam", "10000", "--eps", "0.001"]) == 0
    assert "value=52" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["bounds"], "NAME or --list"),
    (["bounds", "nope"], "unknown bound"),
    (["bounds", "lower_bound_aer", "--d", "1", "--N", "100", "--m", "4"], "needs R"),
    (["bounds", "lower_bound_aer", "--d", "1", "--N", "100", "--m", "4", "--R", "x"],
     "--R must be a number"),
    (["bounds", "lower_bound_aer", "--d", "1", "--N", "100", "--m", "4", "--R", "-1"], "R must"),
    (["bounds", "lower_bound_aer", "--d", "1", "--N", "100", "--m", "4", "--R", "1",
      "--lam", "2"], "unexpected: lam"),
    (["bounds", "thm31_lower_bound", "--L", "2", "--mu", "1", "--lam", "1", "--rounds", "1"],
     "lam > 100"),
])
def test_bad_input_one_line_error(main, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_unknown_option_is_usage_error(main, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bounds", "lower_bound_aer", "--foo", "1"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.startswith("error: ")
