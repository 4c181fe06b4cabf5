"""RTFA after round T on the command line: ``predict|compare rtfa --rounds ... --lam L`` runs
FedAvg's rounds and personalizes the server model of round T by the ridge L toward it
(``RoundsLimit.personalized_risk(lam=L)``), checked against independent limits at T = 0 and
T = infinity."""

import json

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli

FED = ["--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--signal", "1", "--clients", "3",
       "--local-steps", "1", "--local-step-size", "0.3"]


def test_predict_rtfa_after_round_t(capsys):
    """T = 0: RTFA from the zero model is the local ridge (``limit("local_ridge")``, rho^2 =
    signal^2 + r^2); T = inf with K = 1: from the pooled least-squares model, the finite-M RTFA
    limit (``clients_limit("rtfa")``); between, the Python API's value."""
    code, out, _ = run_cli(["predict", "rtfa", *FED, "--rounds", "0,7,inf", "--lam", "0.4",
                            "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    got = [r["personalized_risk"] for r in rows]
    assert all(r["personalization"] == {"method": "rtfa", "lam": 0.4} for r in rows)
    local = riskcalc.limit("local_ridge", gamma=0.5, sigma=0.5, rho=np.sqrt(1 + 0.3 ** 2),
                           lam=0.4).risk
    assert got[0] == pytest.approx(local, rel=1e-8)
    finite_m = riskcalc.clients_limit("rtfa", gamma=[0.5] * 3, r=[0.3] * 3, sigma=[0.5] * 3,
                                      lam=0.4).risk[0]
    assert got[2] == pytest.approx(finite_m, rel=1e-8)
    ref = riskcalc.rounds_limit("fedavg", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                                rounds=[7], local_steps=1, step_size=0.3)
    assert got[1] == pytest.approx(ref.personalized_risk(lam=0.4)[0, 0], rel=1e-12)
    code, out, _ = run_cli(["predict", "rtfa", *FED, "--rounds", "0,7", "--lam", "0.4"], capsys)
    assert code == 0 and "RTFA risk" in out and "ridge lam = 0.4" in out


@pytest.mark.parametrize("method,extra,message", [
    ("rtfa", [], "needs --lam"),
    ("rtfa", ["--lam", "0.4", "--steps", "3", "--step-size", "0.1"], "do not apply to rtfa"),
    ("fedavg", ["--lam", "0.4"], "predict rtfa --lam"),
    ("rtfa", ["--lam", "0"], "must lie in (0, inf) along the rounds; lam = 0 is the limit"),
])
def test_bad_rtfa_input_is_one_line(capsys, method, extra, message):
    code, _, err = run_cli(["predict", method, *FED, "--rounds", "3", *extra], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err


def test_compare_rtfa_simulates_the_same_personalization(capsys):
    """compare rtfa: the simulated RTFA after round T (``simulate_rounds(personalize=[{"lam":
    L}])``, exact given the designs) next to the prediction; at d = 120 within 4 s.e. + 3%
    (the O(1/d) gap of RTFA after the rounds: 0.2-0.3% at d = 100 measured)."""
    code, out, _ = run_cli(["compare", "rtfa", *FED, "--rounds", "0,5,inf", "--lam", "0.4",
                            "--d", "120", "--reps", "3", "--no-progress", "--json"], capsys)
    assert code == 0
    for row in json.loads(out):
        pred, sim = row["predicted"], row["simulated"]
        assert abs(sim["personalized_risk"] - pred["personalized_risk"]) <= \
            4 * sim["personalized_risk_se"] + 0.03 * pred["personalized_risk"]
