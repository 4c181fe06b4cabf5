"""Issue 32, fuzz37 (out2): what this fuzz found, each test failing before."""

import csv
import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

DIVERGING = ["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--d", "40",
             "--reps", "2", "--steps", "200", "--step-size", "1.5", "--no-progress"]


def test_sweep_csv_leaves_a_missing_standard_error_empty(tmp_path, capsys):
    """F1: the sweep's CSV (file or stdout) wrote ``nan`` for the standard errors of a
    simulation past the floats, where its JSON lines write null and its own CSV leaves a
    missing ``rel_diff`` empty; an infinite value stays ``inf``."""
    with warnings.catch_warnings():         # the steps' overflow, which the test is about
        warnings.simplefilter("ignore", RuntimeWarning)
        code, out, err = run_cli(DIVERGING, capsys)
        assert code == 0, err
        code, _, err = run_cli(DIVERGING + ["--out", tmp_path / "s.csv"], capsys)
    assert code == 0, err
    with open(tmp_path / "s.csv", newline="") as fh:
        text = fh.read()
    assert text.replace("\r\n", "\n") == out.replace("\r\n", "\n")
    row = list(csv.DictReader(text.splitlines()))[0]
    assert "nan" not in text and row["risk_se"] == "" and row["bias_rel_diff"] == ""
    assert row["simulated_risk"] == "inf" and row["predicted_risk"] == "inf"


def test_diverging_steps_note_says_overflow_as_the_tables(capsys):
    """F2: the note of diverging steps said values past the floats "are infinite (JSON null)"
    under a table printing them ``overflow`` (the rounds tables' word,
    ``riskcalc.cli.tables.rounds.OVERFLOW``)."""
    code, out, err = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--steps", "200", "--step-size", "1.5"], capsys)
    assert code == 0, err
    assert "risk      overflow" in out and "1.8e+308" in out
    note = next(line for line in out.splitlines() if line.startswith("  note: step_size"))
    assert "overflow in tables, null in JSON" in note and "are infinite" not in note
    code, out, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--signal", "1", "--rounds", "1", "--local-steps", "1",
                              "--local-step-size", "0.1", "--steps", "300", "--step-size", "1.5"],
                             capsys)
    assert code == 0 and "overflow where its growth passes 1e250" in out, (out, err)


def test_compare_notes_any_clients_moved_ratio_once():
    """F3: the finite-M prediction is at every client's simulated ratio d / round(d / gamma_j),
    but its note came only when the target's ratio moved: at d = 10 beside clients at gamma
    0.3 and 0.45 (simulated at 10 / 33 and 10 / 22) nothing was said. The note names the
    clients and both ratios, once, with the target's among them."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = riskcalc.ClientSpec("fedavg", gamma=2.0, r=1.0, sigma=0.5)
    setting = Setting(d=10, clients=4, gammas=(0.3, 0.45), global_model="federated")
    notes = compare(spec, setting, reps=2).limit.notes
    moved = [n for n in notes if n.startswith("predicted at the simulated ratios")]
    assert len(moved) == 1 and "clients 1, 3 (gamma = 0.3 asked): 10 / 33 = 0.30303" in moved[0]
    assert "client 2 (gamma = 0.45 asked): 10 / 22 = 0.454545" in moved[0]
    assert compare(spec, replace(setting, d=18), reps=2).limit.notes == ()
    notes = compare(replace(spec, gamma=3.0), replace(setting, d=10), reps=2).limit.notes
    assert sum("simulated ratio" in n for n in notes) == 1
    assert "the target (gamma = 3 asked): 10 / 3 = 3.33333" in notes[-1]


def test_rounds_limit_as_dict_is_the_json_of_the_command_line(capsys):
    """F4: ``RoundsLimit`` had no ``as_dict()`` while every other result has one (the CLI built
    its JSON rows itself). It gives strict JSON (the diverging map's overflow and the fixed
    point's round as None), the content of ``predict --rounds --json`` for every client."""
    kw = dict(r=1.0, sigma=0.5, signal=1.0, local_steps=np.inf, step_size=None)
    out = riskcalc.rounds_limit("fedavg", gamma=[2.0, 0.5], rounds=[1, 2000], global_step=3.0,
                                **kw).as_dict()
    json.dumps(out, allow_nan=False)
    assert out["risk"][0][1] is None and out["params"]["local_steps"] is None
    assert out["diagnostics"] == {"contraction": 2.0, "converges": False}
    one = riskcalc.rounds_limit("fedavg", gamma=[2.0], rounds=[1, np.inf], **kw)
    out = one.as_dict(local=True)
    assert out["rounds"] == [1, None] and np.shape(out["local_risk"]) == (1, 2)
    code, text, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                               "--signal", "1", "--rounds", "1,inf", "--local-steps", "inf",
                               "--json"], capsys)
    assert code == 0, err
    for t, row in enumerate(json.loads(text)):
        assert row["rounds"] == out["rounds"][t] and row["params"] == out["params"]
        assert all(row[k] == out[k][0][t] for k in ("bias", "risk", "global_risk",
                                                    "local_risk", "variance"))
        assert row["diagnostics"] == out["diagnostics"]


def test_write_rows_reads_the_extension_in_either_case_and_refuses_no_rows(tmp_path):
    """F5: ``montecarlo.sweep.write_rows(rows, "o.JSONL")`` wrote CSV (the command line takes
    the extension in either case), and no rows was an IndexError traceback (CSV) after the
    file was opened and emptied; now JSON lines, and a ValueError leaving the file as it was."""
    from montecarlo.sweep import write_rows

    assert write_rows([{"risk": float("inf")}], tmp_path / "o.JSONL") == "jsonl"
    assert (tmp_path / "o.JSONL").read_text() == '{"risk": null}\n'
    kept = tmp_path / "kept.csv"
    kept.write_text("x\n")
    with pytest.raises(ValueError, match="rows is empty: nothing to write"):
        write_rows([], kept)
    assert kept.read_text() == "x\n"
