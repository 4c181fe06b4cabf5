"""Issue 32, fourteenth hardening pass: the leftovers of the thirteenth (note18's "Noticed and
left alone") and a fuzz of unusual inputs across the verbs and the Python API. Each test pins
a case that was mishandled before this pass (the old behaviour in its comment); bad input is
one line ``error: ...`` with exit status 2 on the command line and a ValueError naming the
parameter in Python.
"""

import json

import pytest

import montecarlo
import riskcalc
from montecarlo.linear.instances import Setting
from montecarlo.linear.rounds import simulate_rounds
from montecarlo.sweep import sweep
from tests.helpers import run_cli
from tests.test_hardening_ninth import _one_error_line

ROUNDS = dict(signal=1.0, rounds=[1, 3], local_steps=1, step_size=0.1)
LOGISTIC = ["predict", "rtfa", "--model", "logistic", "--gamma", "0.5", "--r", "1",
            "--signal", "1", "--lam", "0.1"]


# was: "spectra lists 2 client spectra for 3 clients" (gamma's length taken for the clients'
# count) where gamma has 3 entries beside r and sigma of 2 (simulate_rounds named them).
@pytest.mark.parametrize("call", [
    lambda kw: riskcalc.clients_limit("fedavg", **kw),
    lambda kw: riskcalc.rounds_limit("fedavg", **ROUNDS, **kw),
])
def test_mismatched_lists_beside_spectra_are_named(call):
    kw = dict(gamma=[0.5, 1.0, 1.5], r=[1.0, 1.0], sigma=[1.0, 1.0],
              spectra=["identity", "two-point:1,4,0.5"])
    with pytest.raises(ValueError, match=r"one length, got gamma: 3, .*r: 2.*sigma: 2|"
                                         r"one length, got gamma: 3, sigma: 2, r: 2"):
        call(kw)


# was: "no convergence at lam = 100" (the continuation's first step, never given) for the
# logistic limit under scaled:1e-100 at lam = 0.1, naming no spectrum.
@pytest.mark.parametrize("extra", [[], ["--clients", "3", "--global-lam", "0.1"]])
def test_logistic_refusal_names_the_spectrum_and_its_scale(extra, capsys):
    line = _one_error_line(LOGISTIC + extra + ["--spectrum", "scaled:1e-100"], capsys)
    assert "spectrum discrete[1@1e-100] (mean eigenvalue 1e-100)" in line
    assert "the lam = 0.1 asked" in line or "the global_lam = 0.1 asked" in line
    assert "scale this far from 1" in line


# was: taken silently (the answer the same at every d): --d beside a clients file whose spectra
# have no size. A file with a powerlaw:P client, and a federation file's own d, still take it.
def test_predict_refuses_a_d_that_nothing_uses(tmp_path, capsys):
    client = {"gamma": 1.5, "r": 1, "sigma": 1}
    sized, unsized, fed = (tmp_path / f"{n}.json" for n in ("sized", "unsized", "fed"))
    sized.write_text(json.dumps([{**client, "spectrum": "powerlaw:1"}]))
    unsized.write_text(json.dumps([{**client, "spectrum": "two-point:4,1,0.5"}]))
    fed.write_text(json.dumps({"fedrisk_federation": 1, "d": 50, "clients": [
        {"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": "two-point:1,4,0.5"}, client]}))
    target = ["predict", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma", "1"]
    line = _one_error_line(target + ["--clients-file", str(unsized), "--d", "50"], capsys)
    assert line.startswith("error: --d 50: nothing uses it") and "leave it out" in line
    for argv in (target + ["--clients-file", str(sized), "--d", "50"],
                 ["predict", "fedavg", "--federation", str(fed)]):
        code, out, err = run_cli(argv, capsys)
        assert code == 0 and "risk" in out, err


# was: simulate_rounds(d=1) simulated a 1-dimensional problem where the command line (and
# check, the logistic simulations) need d >= 2.
def test_simulate_rounds_takes_the_command_lines_d_range():
    with pytest.raises(ValueError, match="^d must be an integer >= 2"):
        simulate_rounds("fedavg", gamma=0.5, r=1, sigma=1, **ROUNDS, d=1, reps=2)


# was: an explicit --max-minutes 10 (the default's value) read as "not given", so the logistic
# solvers kept their own 60 s limit.
def test_an_explicit_max_minutes_10_is_taken(capsys):
    argv = LOGISTIC + ["--spectrum", "scaled:1e100"]
    assert "max_seconds = 60;" in _one_error_line(argv, capsys)
    # The solvers get --max-minutes less a margin (cli.logistic.family.SOLVER_MARGIN): 600 - 30 s.
    assert "max_seconds = 570;" in _one_error_line(argv + ["--max-minutes", "10"], capsys)


# was: montecarlo.compare / sweep ran whatever they were given (625 estimated minutes here);
# the estimate and limit were the command line's alone.
@pytest.mark.parametrize("call", [
    lambda **kw: montecarlo.compare("ftfa", gamma=2.0, r=1.0, sigma=0.5, d=5000, reps=400, **kw),
    lambda **kw: sweep("ftfa", gamma=[0.5, 2.0], r=1.0, sigma=0.5, setting=Setting(d=3000),
                       reps=100, progress=False, **kw),
])
def test_python_simulations_refuse_beyond_max_minutes(call, monkeypatch):
    def ran(*args, **kwargs):
        raise AssertionError("the simulation started")
    for module in ("montecarlo.compare", "montecarlo.sweep"):
        monkeypatch.setattr(f"{module}.run_tasks", ran)
    with pytest.raises(ValueError, match=r"^max_minutes = 10: .* estimated at .* min of work"):
        call()
    with pytest.raises(ValueError, match=r"^max_minutes must lie in \(0, inf\]"):
        call(max_minutes=0)


# --- found by this pass's fuzz ------------------------------------------------------------

# was: a file named "-" written ("wrote 1 rows (csv) to -").
def test_sweep_out_dash_is_stdout(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                              "--d", "10", "--reps", "2", "--out", "-", "--format", "jsonl",
                              "--no-progress"], capsys)
    assert code == 0 and json.loads(out.splitlines()[0])["method"] == "ftfa", err
    assert not (tmp_path / "-").exists()


# was: every replicate simulated, then the prediction refused (pooled N <= d at M = 2).
def test_sweep_refuses_what_the_theory_refuses_before_simulating(monkeypatch):
    def ran(*args, **kwargs):
        raise AssertionError("the simulation started")
    monkeypatch.setattr("montecarlo.sweep.run_tasks", ran)
    with pytest.raises(ValueError, match="pooled N > d"):
        sweep("rtfa", gamma=2.0, r=1.0, sigma=1.0, lam=0.1, reps=2, progress=False,
              setting=Setting(d=10, clients=2, global_model="federated"))


# was: refused as 'gives n: the file needs "d"' with --d given (advise --d turned n into
# gamma, predict did not).
def test_predict_d_turns_a_files_n_into_gamma(tmp_path, capsys):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"n": 100, "r": 1, "sigma": 1}, {"gamma": 1.5, "r": 1, "sigma": 1}]}))
    code, out, err = run_cli(["predict", "ftfa", "--federation", str(path), "--d", "50"],
                             capsys)
    assert code == 0 and "gamma = 0.5" in out, err


# was: "--out is required" (figures: "--out DIR is required") before the unknown name, which
# was named only once --out was added.
@pytest.mark.parametrize("argv, message", [
    (["simulate", "paper000-fig"], "preset must be one of"),
    (["figures", "p003-regio"], "unknown figure 'p003-regio'"),
])
def test_an_unknown_name_is_named_before_missing_options(argv, message, capsys):
    assert message in _one_error_line(argv, capsys)


# was: --clients 3,2 simulated M = 3's whole grid, then refused M = 2's prediction (its rows
# lost); every setting is now predicted before any is simulated.
def test_sweep_checks_every_clients_value_before_simulating(monkeypatch, capsys):
    def ran(*args, **kwargs):
        raise AssertionError("the simulation started")
    monkeypatch.setattr("montecarlo.sweep.run_tasks", ran)
    line = _one_error_line(["sweep", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "1",
                            "--lam", "0.1", "--d", "10", "--reps", "2", "--clients", "3,2",
                            "--global", "federated", "--no-progress"], capsys)
    assert "pooled N > d" in line


# was: "spectrum = {'atoms': [0.2503..., ... 30 numbers], 'weights': [...]}" on the line.
def test_rounds_print_a_spectrum_by_its_description(capsys):
    code, out, err = run_cli(["predict", "fedavg", "--gamma", "0.5", "--r", "1", "--sigma", "1",
                              "--rounds", "5", "--local-steps", "1", "--local-step-size", "0.1",
                              "--signal", "1", "--spectrum", "powerlaw:1", "--d", "30"], capsys)
    assert code == 0 and "spectrum = discrete[30 atoms in [0.25, 7.51], mean 1]" in out, err
    assert "'atoms'" not in out


# was: a file named "-" created (sweep --cache -, simulate --out -).
@pytest.mark.parametrize("argv", [
    ["sweep", "ftfa", "--gamma", "2", "--r", "1", "--sigma", "1", "--d", "10", "--reps", "2",
     "--cache", "-"],
    ["simulate", "paper000-fig1", "--out", "-"],
])
def test_a_dash_is_no_file_name(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert "-: give a file name" in _one_error_line(argv, capsys)
    assert not (tmp_path / "-").exists()
