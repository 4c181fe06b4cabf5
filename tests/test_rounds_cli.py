"""The command line along the rounds (issue 29, DESIGN.md fourth round): predict and compare
METHOD --rounds ... --local-steps K --local-step-size ETA --signal S."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

BASE = ["--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1", "--local-steps", "5",
        "--local-step-size", "0.1"]


def test_predict_rows_per_round_in_the_order_given(capsys):
    code, out, _ = run_cli(["predict", "fedavg", *BASE, "--clients", "3",
                            "--rounds", "10,0,inf", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert [r["rounds"] for r in rows] == [10, 0, None]
    ref = riskcalc.rounds_limit("fedavg", gamma=[2.0] * 3, r=1.0, sigma=0.5, signal=1.0,
                                rounds=[10, 0, np.inf], local_steps=5, step_size=0.1)
    for t, row in enumerate(rows):
        assert row["risk"] == pytest.approx(ref.risk[0, t], rel=1e-12)
        assert row["bias"] + row["variance"] == pytest.approx(row["risk"], rel=1e-12)
        assert row["diagnostics"] == {"contraction": pytest.approx(ref.contraction),
                                      "converges": True}
    assert rows[1]["risk"] == pytest.approx(2.0)      # T = 0: the zero model, signal^2 + r^2


def test_federation_file_and_target(capsys, tmp_path):
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"name": "a", "gamma": 0.5, "r": 0.3, "sigma": 0.5},
        {"name": "b", "gamma": 4, "r": 1.5, "sigma": 0.5}]}))
    code, out, _ = run_cli(["predict", "fedavg", "--federation", str(fed), "--target", "b",
                            "--signal", "1", "--rounds", "5", "--local-steps", "2",
                            "--local-step-size", "0.1", "--json"], capsys)
    assert code == 0
    ref = riskcalc.rounds_limit("fedavg", gamma=[0.5, 4.0], r=[0.3, 1.5], sigma=0.5,
                                signal=1.0, rounds=5, local_steps=2, step_size=0.1)
    assert json.loads(out)[0]["risk"] == pytest.approx(ref.risk[1, 0], rel=1e-12)


def test_compare_agrees_with_simulation(capsys):
    code, out, _ = run_cli(["compare", "fedavg", *BASE, "--clients", "3", "--rounds",
                            "1,20,inf", "--d", "100", "--reps", "4", "--no-progress",
                            "--json"], capsys)
    assert code == 0
    for row in json.loads(out):
        sim = row["simulated"]
        for q in ("risk", "local_risk"):
            # d = 100: finite-d error ~0.1% (benchmarks/bench_rounds_agreement.py); 3% is loose.
            pred = row["predicted"][q]
            assert abs(sim[q] - pred) <= 5 * sim[q + "_se"] + 0.03 * pred, q



def test_compare_predicts_at_the_ratios_the_simulation_realizes(capsys, tmp_path):
    """d = 100 simulates gamma 3 as n = 33 samples, gamma 100 / 33 = 3.0303 (and 0.7 as 143):
    compare predicts there (as the compare of one client does) and says so; a d where every
    d / gamma_j is an integer predicts at the gammas asked."""
    def federation(gammas):
        path = tmp_path / f"fed{gammas[1]}.json"
        path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
            {"name": "a", "gamma": gammas[0], "r": 1, "sigma": 0.5},
            {"name": "b", "gamma": gammas[1], "r": 0.5, "sigma": 0.5}]}))
        return ["compare", "fedavg", "--federation", str(path), "--signal", "1",
                "--local-steps", "2", "--local-step-size", "0.2", "--rounds", "5",
                "--reps", "2", "--no-progress"]

    kw = dict(r=[1.0, 0.5], sigma=0.5, signal=1.0, rounds=5, local_steps=2, step_size=0.2)
    realized = riskcalc.rounds_limit("fedavg", gamma=[100 / 33, 100 / 143], **kw).risk[0, 0]
    nominal = riskcalc.rounds_limit("fedavg", gamma=[3.0, 0.7], **kw).risk[0, 0]
    assert abs(realized - nominal) > 1e-3 * nominal
    code, out, _ = run_cli([*federation([3, 0.7]), "--d", "100", "--json"], capsys)
    assert code == 0
    row, = json.loads(out)
    assert row["predicted"]["risk"] == pytest.approx(realized, rel=1e-12, abs=0)
    assert row["params"]["gamma"] == [100 / 33, 100 / 143]
    code, out, _ = run_cli([*federation([3, 0.7]), "--d", "100"], capsys)
    assert code == 0 and "note: predicted at the simulated ratios" in out and "100 / 33" in out
    code, out, _ = run_cli([*federation([3, 0.5]), "--d", "300"], capsys)
    assert code == 0 and "simulated ratios" not in out


def test_divergent_curve_is_a_result_and_its_fixed_point_an_error(capsys):
    argv = ["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1",
            "--local-steps", "1", "--local-step-size", "0.1", "--global-step", "5"]
    code, out, _ = run_cli([*argv, "--rounds", "1,5000", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert rows[-1]["risk"] is None and rows[-1]["diagnostics"]["converges"] is False
    code, _, err = run_cli([*argv, "--rounds", "inf"], capsys)
    assert code == 2 and err.startswith("error: ") and "diverges" in err


@pytest.mark.parametrize("extra, message", [
    (["--rounds", "1.5"], "--rounds"),
    (["--rounds", "-1"], "--rounds"),
    (["--rounds", "3", "--local-steps", "0"], "--local-steps"),
    (["--rounds", "3", "--local-steps", "2.5"], "--local-steps"),
    (["--rounds", "3", "--local-step-size", "0"], "--local-step-size"),
    (["--rounds", "3", "--rho", "1"], "--rho"),
    (["--rounds", "3", "--local-steps", "inf", "--spectrum", "two-point:1,4,0.5"],
     "one client with gamma > 1"),
])
def test_bad_input_is_one_clear_error(capsys, extra, message):
    good = ["--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1", "--local-steps", "2",
            "--local-step-size", "0.1"]
    # The bad value replaces the good one (an option given twice is itself an error); with
    # --local-steps inf the local step size is left out (it is refused there).
    drop = set(extra) | ({"--local-step-size"} if "inf" in extra else set())
    argv = ["predict", "fedavg"] + [x for k in range(0, len(good), 2) if good[k] not in drop
                                    for x in good[k:k + 2]]
    code, out, err = run_cli([*argv, *extra], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err


def test_missing_pieces_and_other_methods(capsys):
    code, _, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma",
                            "0.5", "--rounds", "3"], capsys)
    assert code == 2 and "--local-steps" in err and "--signal" in err
    code, _, err = run_cli(["predict", "ftfa", *BASE, "--rounds", "3"], capsys)
    assert code == 2 and "fedavg" in err
    code, _, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma",
                            "0.5", "--signal", "1"], capsys)
    assert code == 2 and "--signal" in err


def test_algorithm1_with_exact_prox(capsys):
    """fedprox (paper 004's Algorithm 1) with --local-steps inf needs no local step size; its
    rows are those of rounds_limit("pfedme"), with K < inf too (warm-started local steps);
    a local step size at or beyond the local steps' edge 2 / (L + lam) is refused with one
    line."""
    argv = ["predict", "fedprox", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--signal",
            "1", "--clients", "3", "--lam", "0.7", "--rounds", "0,5,inf", "--local-steps", "inf"]
    code, out, _ = run_cli([*argv, "--json"], capsys)
    assert code == 0
    ref = riskcalc.rounds_limit("fedprox", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                                rounds=[0, 5, np.inf], local_steps=np.inf, lam=0.7)
    rows = json.loads(out)
    assert [r["risk"] for r in rows] == pytest.approx(list(ref.risk[0]), rel=1e-12)
    assert [r["global_risk"] for r in rows] == pytest.approx(list(ref.global_risk[0]), rel=1e-12)
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and "server risk" in out and "prox of the server model" in out
    code, out, _ = run_cli([*argv[:-1], "5", "--local-step-size", "0.2", "--json"], capsys)
    ref = riskcalc.rounds_limit("fedprox", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                                rounds=[0, 5, np.inf], local_steps=5, step_size=0.2, lam=0.7)
    rows = json.loads(out)
    assert code == 0 and [r["risk"] for r in rows] == pytest.approx(list(ref.risk[0]), rel=1e-12)
    assert [r["global_risk"] for r in rows] == pytest.approx(list(ref.global_risk[0]), rel=1e-12)
    code, _, err = run_cli([*argv[:-1], "5", "--local-step-size", "0.6"], capsys)
    assert code == 2 and err.count("\n") == 1 and "step_size < 2 / (L + lam)" in err


def test_ftfa_after_round_t(capsys):
    """--steps/--step-size along the rounds: FTFA from the server model of round T (compare:
    tests/test_montecarlo_rounds_personalize.py)."""
    argv = ["predict", "fedavg", *BASE, "--clients", "3", "--rounds", "0,5,inf", "--steps",
            "10", "--step-size", "0.2"]
    code, out, _ = run_cli([*argv, "--json"], capsys)
    assert code == 0
    ref = riskcalc.rounds_limit("fedavg", gamma=[2.0] * 3, r=1.0, sigma=0.5, signal=1.0,
                                rounds=[0, 5, np.inf], local_steps=5, step_size=0.1)
    want = ref.personalized_risk(steps=10, step_size=0.2)[0]
    assert [r["personalized_risk"] for r in json.loads(out)] == pytest.approx(list(want),
                                                                             rel=1e-12)
    code, _, err = run_cli(argv[:-2], capsys)
    assert code == 2 and "go together" in err
