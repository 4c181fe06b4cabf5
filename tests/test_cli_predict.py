"""``riskcalc predict``: the human table, the JSON contract, and one-line errors with exit 2."""

import json
import subprocess
import sys

import pytest

import riskcalc
from riskcalc.cli import main
from tests.helpers import run_cli


def test_json_contract(capsys):
    code, out, _ = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--spectrum", "two-point:1,4,0.5", "--json"], capsys)
    assert code == 0
    obj = json.loads(out)
    assert set(obj) >= {"method", "params", "bias", "variance", "risk"}
    ref = riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5,
                         spectrum=riskcalc.Spectrum.two_point(1, 4, 0.5))
    assert obj["risk"] == pytest.approx(ref.risk, rel=1e-15)
    assert obj["params"]["gamma"] == 2.0 and obj["method"] == "ftfa"


def test_table(capsys):
    code, out, _ = run_cli(["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--lam", "0.5"], capsys)
    assert code == 0
    assert "risk" in out and "0.6403882032" in out


def test_routes_agree_from_the_command_line(capsys):
    risks = []
    for route in ("kappa", "paper"):
        _, out, _ = run_cli(["predict", "rtfa", "--gamma", "3", "--r", "1", "--sigma", "1",
                             "--lam", "0.2", "--spectrum", "powerlaw:1,500", "--route", route,
                             "--json"], capsys)
        risks.append(json.loads(out)["risk"])
    assert risks[0] == pytest.approx(risks[1], rel=1e-10)


def test_infinite_variance_is_null_with_a_note(capsys):
    _, out, _ = run_cli(["predict", "local", "--gamma", "1", "--rho", "1", "--sigma", "1",
                         "--json"], capsys)
    obj = json.loads(out)
    assert obj["variance"] is None and obj["notes"]


def test_finite_steps(capsys):
    # One step of size 0.2 at gamma = 2: bias 1 - 2 eta + 3 eta^2 = 0.72 and variance
    # sigma^2 gamma eta^2 = 0.02 (Marchenko-Pastur moments 1 and 1 + gamma).
    _, out, _ = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                         "--steps", "1", "--step-size", "0.2", "--json"], capsys)
    obj = json.loads(out)
    assert obj["bias"] == pytest.approx(0.72, rel=1e-12)
    assert obj["variance"] == pytest.approx(0.02, rel=1e-12)
    assert obj["params"]["steps"] == 1
    # Eigenvalues {1, 4}: bias int t dH - 2 eta int t^2 dH + eta^2 (int t^3 dH + gamma
    # int t dH int t^2 dH) = 2.5 - 0.4 * 8.5 + 0.04 * 75 = 2.1; variance gamma eta^2 int t^2 dH.
    _, out, _ = run_cli(["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                         "--steps", "1", "--step-size", "0.2", "--spectrum", "two-point:1,4,0.5",
                         "--json"], capsys)
    obj = json.loads(out)
    assert obj["bias"] == pytest.approx(2.1, rel=1e-10)
    assert obj["variance"] == pytest.approx(0.25 * 2 * 0.04 * 8.5, rel=1e-10)


@pytest.mark.parametrize("argv, word", [
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--steps", "3"],
     "--step-size"),
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--step-size", "0.1"],
     "--steps"),
    (["predict", "maml_fl", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--alpha", "0.1",
      "--steps", "3", "--step-size", "0.1"], "method"),
    (["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5"], "needs --lam"),
    (["predict", "rtfa", "--gamma", "-2", "--r", "1", "--sigma", "0.5", "--lam", "1"], "gamma"),
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "1"], "lam"),
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--spectrum", "bad"],
     "spectrum"),
    (["predict", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--spectrum",
      "powerlaw:1"], "powerlaw"),
    (["predict", "nope", "--gamma", "2", "--r", "1", "--sigma", "0.5"], "METHOD"),
    (["predict", "ftfa", "--gamma", "x", "--r", "1", "--sigma", "0.5"], "gamma"),
    (["predict", "ftfa", "--r", "1", "--sigma", "0.5"], "gamma"),
])
def test_bad_input_is_one_line_and_exit_2(argv, word, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse-level errors
        code = exc.code
    _, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0]


def test_console_script_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "riskcalc", "predict", "rtfa", "--gamma", "0",
                           "--r", "1", "--sigma", "1", "--lam", "1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
