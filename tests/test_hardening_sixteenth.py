"""Issue 32, sixteenth hardening pass: the leftovers of the fifteenth (note20's "Noticed and
left alone": duplicate figure ids) and what this pass's fuzz found. Each test pins a case
mishandled before this pass (the old behaviour in its comment); bad input is one line
``error: ...`` with exit status 2 on the command line.
"""

import json
import re
import time

import numpy as np
import pytest

import riskcalc
from tests.helpers import run_cli
from tests.test_hardening_ninth import _one_error_line

LINEAR = ["--gamma", "0.5", "--r", "1", "--sigma", "1"]


# was: built once each, the repetition unsaid (a value given twice in a command-line list is
# refused everywhere else, docs/safety.rst); check --claim merged its repeats the same way.
def test_an_id_given_twice_is_refused(capsys):
    line = _one_error_line(["figures", "p003-thm1-ftfa", "p003-region", "p003-thm1-ftfa"],
                           capsys)
    assert line == ("error: figure id 'p003-thm1-ftfa' given twice: give each figure once "
                    "(each is built once)")
    claim = "003.alg8.pfedme-inner"
    line = _one_error_line(["check", "--claim", claim, "--claim", claim, "--list"], capsys)
    assert line.startswith(f"error: --claim {claim} given twice")


# was: "--signal applies to --model logistic only" when the rounds options came without
# --rounds (the rounds take --signal; the missing option was --rounds).
def test_rounds_options_without_rounds_name_the_missing_option(capsys):
    line = _one_error_line(["predict", "fedavg", *LINEAR, "--signal", "1", "--local-steps", "1",
                            "--local-step-size", "0.1"], capsys)
    assert line.startswith("error: predict along the rounds needs --rounds ")
    line = _one_error_line(["predict", "fedavg", *LINEAR, "--signal", "1"], capsys)
    assert line == ("error: --signal applies to --model logistic or along the rounds (with "
                    "--rounds)")


# was: refused ("the logistic family takes no per-client covariance") for a federation file
# whose clients all give one spectrum, as riskcalc estimate --json writes it.
def test_logistic_federation_file_with_one_shared_spectrum(tmp_path, capsys):
    spec = "two-point:1,4,0.5"
    clients = [{"gamma": 0.5, "r": 1}, {"gamma": 1.5, "r": 0.5}]
    plain, shared = tmp_path / "plain.json", tmp_path / "shared.json"
    plain.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
    shared.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        dict(c, spectrum=spec) for c in clients]}))
    argv = ["predict", "rtfa", "--model", "logistic", "--signal", "1", "--lam", "0.5",
            "--global-lam", "0.5", "--json", "--federation"]
    code, out, err = run_cli([*argv, shared], capsys)
    assert code == 0, err
    code, expected, err = run_cli([*argv, plain, "--spectrum", spec], capsys)
    assert code == 0, err
    assert json.loads(out)["risk"] == json.loads(expected)["risk"]
    shifted = tmp_path / "shift.json"
    shifted.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        dict(clients[0], spectrum=spec), clients[1]]}))
    line = _one_error_line([*argv, str(shifted)], capsys)
    assert "client 0: spectrum 'two-point:1,4,0.5': the logistic family takes one" in line


# was: SolverError "no convergence at global_lam = 10" (the continuation's previous point led
# the root finder off along rho -> 0; 56 of 240 points of a grid of gamma, signal, r, spectra,
# global_lam failed so). Checked against the identity's own solver (riskcalc.logistic.blocks.pooled,
# an independent route): x ~ N(0, c I) is x' = x / sqrt(c) ~ N(0, I) with w' = sqrt(c) w, so
# signal and r scale by sqrt(c), both ridges by 1 / c and the risk ||w_hat - w_i||^2 by 1 / c.
def test_logistic_global_model_with_a_spectrum_near_the_identity():
    c = 1.0001
    near = riskcalc.logistic_limit(gamma=0.05, signal=1, r=0.3, lam=0.1, clients=4,
                                   global_lam=0.1, spectrum=f"scaled:{c}")
    exact = riskcalc.logistic_limit(gamma=0.05, signal=c ** 0.5, r=0.3 * c ** 0.5, lam=0.1 / c,
                                    clients=4, global_lam=0.1 / c)
    np.testing.assert_allclose(near.risk, exact.risk / c, rtol=1e-12)


# was: the same with infinitely many clients (riskcalc.logistic.spectrum.fixed_point), both
# centres: "no convergence at lam = 0.1" (25 of 288 grid points failed so); the same check.
def test_logistic_infinite_clients_with_a_spectrum_near_the_identity():
    c = 1.0001
    for centre in ("oracle", "fedavg"):
        near = riskcalc.logistic_limit(gamma=0.2, signal=4, r=0.3, lam=0.01, centre=centre,
                                       spectrum=f"scaled:{c}")
        exact = riskcalc.logistic_limit(gamma=0.2, signal=4 * c ** 0.5, r=0.3 * c ** 0.5,
                                        lam=0.01 / c, centre=centre)
        np.testing.assert_allclose(near.risk, exact.risk / c, rtol=1e-12)


# was: 'nan' for a quantile of the per-client risks next to an infinite one (clients at the
# interpolation threshold gamma = 1; numpy's interpolation takes inf - inf).
def test_advise_quantiles_reach_infinite_risks(tmp_path, capsys):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 0.5, "r": 1, "sigma": 1}] * 10 + [{"gamma": 1, "r": 1, "sigma": 1}] * 2}))
    code, out, err = run_cli(["advise", "--federation", path, "--methods", "ftfa",
                              "--no-progress"], capsys)
    assert code == 0, err
    row = out.splitlines()[2].split()        # rank, method, weights, mean, worst, q10-q90
    assert row[:3] == ["1", "ftfa", "samples"] and row[3:] == ["inf", "inf", "1", "1", "inf"]
    assert "nan" not in out


# was: MemoryError "Unable to allocate 95.5 TiB" (a traceback): from the guessed start the
# root finder ran to rho = e^600 and a quadrature rule of 1.3e13 nodes was built. Now the start
# takes a few fixed-point sweeps, and a rule beyond gaussian.MAX_RULE_NODES is a SolverError.
def test_logistic_spectral_global_model_from_a_swept_start():
    from riskcalc.errors import SolverError
    from riskcalc.logistic.engine.gaussian import MAX_RULE_NODES, Rule

    kw = dict(gamma=0.2, r=0.5, lam=0.01, clients=5, global_lam=0.01, spectrum="powerlaw:1,50")
    low, mid, high = (riskcalc.logistic_limit(signal=s, **kw).risk for s in (1.99, 2.0, 2.01))
    assert np.isfinite(mid) and low < mid < high
    assert abs(mid / (0.5 * (low + high)) - 1) < 1e-4        # one smooth branch, no jump
    with pytest.raises(SolverError, match=re.escape(f"beyond {MAX_RULE_NODES:.0e}")):
        Rule(1.0, 56, a_scale=1e9, rho_scale=1e9)       # was built: ~1e14 nodes


# was: two progress lines every interval (a terminal: two live lines over each other) where
# predict's progress held the rounds' own ("riskcalc predict fedavg" and "... along the rounds").
def test_nested_progress_is_one_line(monkeypatch, capsys):
    from riskcalc.cli.shared import guards

    monkeypatch.setattr(guards, "PROGRESS_LOG", (0.02, 0.02))
    err = ""
    with guards.working("outer"):
        with guards.working("inner"):
            for _ in range(500):            # until two beats (a loaded machine: later)
                time.sleep(0.01)
                err += capsys.readouterr().err
                if err.count("\n") >= 2:
                    break
    lines = err.splitlines()        # (the outer's own line may follow the inner's end)
    assert len(lines) >= 2 and all(line.startswith("progress: inner: computing") for line in lines)


# was: taken, and advise's per-client row of that client split over two lines.
def test_a_client_name_must_be_printable(tmp_path, capsys):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 0.5, "r": 1, "sigma": 1, "name": "a\nb"}, {"gamma": 1.5, "r": 1, "sigma": 1}]}))
    line = _one_error_line(["advise", "--federation", str(path), "--no-progress"], capsys)
    assert "client 0 ('a\\nb'): name must be printable (no line breaks" in line
