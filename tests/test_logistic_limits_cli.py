"""``riskcalc predict/compare rtfa --model logistic``: the JSON contract (DESIGN.md, "Contracts
added in the second round"), the table, and one-line errors with exit 2 for every new option."""

import json

import pytest

import riskcalc
from riskcalc.cli import main
from tests.helpers import run_cli

BASE = ["rtfa", "--model", "logistic", "--gamma", "1", "--signal", "1", "--r", "1",
        "--lam", "0.5"]


def test_predict_json_contract(capsys):
    code, out, _ = run_cli(["predict", *BASE, "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    ref = riskcalc.logistic_limit(gamma=1, signal=1, r=1, lam=0.5)
    for key in ("risk", "cosine", "test_logloss", "test_error"):
        assert got[key] == ref.__getattribute__(key)
    assert got["model"] == "logistic" and got["params"]["signal"] == 1.0


def test_predict_table(capsys):
    code, out, _ = run_cli(["predict", *BASE], capsys)
    assert code == 0 and "risk" in out and "test_error" in out


def test_linear_stays_default(capsys):
    code, out, _ = run_cli(["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--lam", "0.5", "--json"], capsys)
    assert code == 0 and json.loads(out)["risk"] == riskcalc.limit(
        "rtfa", gamma=2, r=1, sigma=0.5, lam=0.5).risk


def test_compare_json(capsys):
    code, out, _ = run_cli(["compare", *BASE, "--d", "40", "--reps", "3", "--seed", "2", "--json"],
                           capsys)
    assert code == 0
    got = json.loads(out)
    assert got["simulated"]["d"] == 40 and got["simulated"]["n"] == 40
    for q in ("risk", "cosine", "test_logloss", "test_error"):
        assert got["simulated"][q + "_se"] > 0
        assert isinstance(got["comparison"][q]["inside_ci95"], bool)


def test_compare_table(capsys):
    code, out, _ = run_cli(["compare", *BASE, "--d", "30", "--reps", "2"], capsys)
    assert code == 0 and "in 95% CI" in out and "test_logloss" in out


def _replace(args, flag, value):
    args = list(args)
    if flag in args:
        i = args.index(flag)
        if value is None:
            del args[i:i + 2]
        else:
            args[i + 1] = value
    else:
        args += [flag, value]
    return args


@pytest.mark.parametrize("command, flag, value, message", [
    ("predict", "--model", "quadratic", "invalid choice"),
    ("predict", "--signal", "-1", "signal"),
    ("predict", "--signal", "abc", "--signal"),
    ("predict", "--signal", None, "needs --signal"),
    ("predict", "--r", None, "needs --r"),
    ("predict", "--lam", None, "needs --lam"),
    ("predict", "--lam", "-0.1", "lam"),
    ("predict", "--gamma", "0", "gamma"),
    ("predict", "--sigma", "1", "--sigma does not apply"),
    # --spectrum applies to --model logistic since issue 33 (DESIGN.md, fourth round); a bad
    # SPEC is refused.
    ("predict", "--spectrum", "two-point:1,2,-0.5", "two-point weight"),
    ("predict", "--steps", "3", "--steps does not apply"),
    ("predict", "--lam", "0", "no finite minimizer"),
    ("compare", "--d", "1", "--d"),
    ("compare", "--reps", "1", "--reps"),
    ("compare", "--global", "federated", "--global federated needs --clients"),
    ("compare", "--measure", "empirical", "--measure does not apply"),
    ("compare", "--lam", "0", "no finite minimizer"),
])
def test_bad_input_exit_2_one_line(command, flag, value, message, capsys):
    args = _replace(BASE, flag, value)
    if command == "compare" and flag != "--d":
        args += ["--d", "20"]
    if flag == "--lam" and value == "0":    # beyond the MLE transition at ||w_i|| = 2.8
        args = _replace(_replace(args, "--signal", "2"), "--r", "2")
    try:
        code = main([command, *args])
    except SystemExit as exc:          # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_other_method_rejected(capsys):
    code, _, err = run_cli(["predict", "ftfa", "--model", "logistic", "--gamma", "1", "--signal",
                            "1", "--r", "1", "--lam", "1"], capsys)
    assert code == 2 and "rtfa and local_ridge without M clients" in err


def test_signal_with_linear_rejected(capsys):
    code, _, err = run_cli(["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                            "--lam", "0.5", "--signal", "1"], capsys)
    assert code == 2 and "--signal applies to --model logistic or along the rounds" in err


def test_linear_still_needs_sigma(capsys):
    code, _, err = run_cli(["predict", "rtfa", "--gamma", "2", "--r", "1", "--lam", "0.5"], capsys)
    assert code == 2 and "--sigma" in err
