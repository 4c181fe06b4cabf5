"""Issue 32, fifteenth hardening pass: the leftovers of the fourteenth (note19's "Noticed and
left alone") and what this pass's fuzz found. Each test pins a case mishandled before this
pass (the old behaviour in its comment); bad input is one line ``error: ...`` with exit status
2 on the command line and a ValueError naming the parameter in Python.
"""

import dataclasses
import json

import numpy as np
import pytest

import riskcalc
from riskcalc.spectrum import Spectrum
from tests.helpers import run_cli
from tests.test_hardening_ninth import _one_error_line

ROUNDS = ["--gamma", "0.5", "--r", "1", "--sigma", "1", "--signal", "1", "--local-steps", "1"]


# was: taken and dropped (the federation the same at every d); advise --d refused it.
def test_federation_from_file_refuses_a_d_nothing_uses(tmp_path):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps([{"gamma": 0.5, "r": 1, "sigma": 1},
                                {"gamma": 1.5, "r": 1, "sigma": 1}]))
    with pytest.raises(ValueError, match=r"d = 50: nothing in the file uses it"):
        riskcalc.Federation.from_file(path, d=50)
    path.write_text(json.dumps([{"n": 100, "r": 1, "sigma": 1}, {"n": 30, "r": 1, "sigma": 1}]))
    assert riskcalc.Federation.from_file(path, d=50).gamma.tolist() == [0.5, 50 / 30]


# was: "spectrum must be a riskcalc.Spectrum or None, got str" from limit, optimal_lambda and
# logistic_limit, where clients_limit and rounds_limit read the SPEC; rounds_limit refused d
# beside a shared powerlaw:P ("d applies to powerlaw:P in spectra only").
def test_every_entry_reads_a_spec_string():
    spec = "two-point:1,4,0.5"
    parsed = Spectrum.parse(spec)
    kw = dict(gamma=2.0, r=1.0, sigma=0.5)
    assert riskcalc.limit("ftfa", **kw, spectrum=spec).risk == \
        riskcalc.limit("ftfa", **kw, spectrum=parsed).risk
    assert riskcalc.optimal_lambda("rtfa", **kw, spectrum=spec) == \
        riskcalc.optimal_lambda("rtfa", **kw, spectrum=parsed)
    logistic = dict(gamma=0.5, signal=1.0, r=1.0, lam=0.1)
    assert riskcalc.logistic_limit(**logistic, spectrum=spec).risk == \
        riskcalc.logistic_limit(**logistic, spectrum=parsed).risk
    rounds = dict(gamma=[0.5], r=1.0, sigma=0.5, signal=1.0, rounds=[2], local_steps=1,
                  step_size=0.1)
    assert riskcalc.rounds_limit("fedavg", **rounds, spectrum="powerlaw:1", d=5).risk == \
        riskcalc.rounds_limit("fedavg", **rounds, spectrum=Spectrum.parse("powerlaw:1", d=5)).risk
    with pytest.raises(ValueError, match="spectrum must be a riskcalc.Spectrum or a SPEC"):
        riskcalc.limit("ftfa", **kw, spectrum=3)


# was: --gam read as --gamma, and advise --clients '[...]' as --clients-file (a file named
# '[...]' was looked for).
def test_options_are_not_abbreviated(capsys):
    line = _one_error_line(["predict", "ftfa", "--gam", "2", "--r", "1", "--sigma", "1"], capsys)
    assert "unrecognized arguments: --gam 2" in line
    line = _one_error_line(["advise", "--clients", '[{"gamma": 1}]'], capsys)
    assert "--clients-file --federation --data is required" in line


# was: three identical rows for --rounds 1,1,1; a grid point simulated twice for --gamma 0.5,0.5.
def test_a_value_given_twice_in_a_list_is_refused(monkeypatch, capsys):
    def ran(*args, **kwargs):
        raise AssertionError("the simulation started")
    monkeypatch.setattr("montecarlo.sweep.run_tasks", ran)
    line = _one_error_line(["predict", "fedavg", *ROUNDS, "--local-step-size", "0.1",
                            "--rounds", "1,1,1"], capsys)
    assert line.startswith("error: --rounds lists 1 twice: give each value once")
    line = _one_error_line(["sweep", "ftfa", "--gamma", "0.5,5e-1", "--r", "1", "--sigma", "1",
                            "--d", "10", "--reps", "2", "--no-progress"], capsys)
    assert line.startswith("error: --gamma lists 0.5 twice")


# was: 'inf' cells with no word, and values past 1e+100 one character wider than their column.
def test_the_rounds_table_says_where_the_curve_overflows(capsys):
    code, out, err = run_cli(["predict", "fedavg", *ROUNDS, "--local-step-size", "3",
                              "--rounds", "1,100,300"], capsys)
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.split()[:1] in (["1"], ["100"], ["300"])]
    assert len(rows) == 3 and len({len(line) for line in rows}) == 1, rows   # aligned
    assert "inf" not in out.replace("info", "") and rows[2].split()[1:] == ["overflow"] * 5
    assert "overflow: past the floating-point range" in out and "converges: false" in out


# was: 'discrete[0.5@1, 0.5@4]' for both: the signal weights (and different limits) unsaid.
def test_spectrum_describe_names_the_signal_weights():
    uniform = Spectrum([1.0, 4.0], [0.5, 0.5])
    tilted = Spectrum([1.0, 4.0], [0.5, 0.5], [0.9, 0.1])
    assert tilted.describe() == "discrete[0.5@1, 0.5@4; signal weights 0.9@1, 0.1@4]"
    assert uniform.describe() == "discrete[0.5@1, 0.5@4]"
    many = Spectrum(np.arange(1.0, 11.0), None, np.r_[np.ones(5), np.zeros(5)] / 5)
    assert many.describe().endswith("signal weights of mean eigenvalue 3]")


# was: FedAvg's own models under a spectrum (K >= 2) solved with no estimate before, as long
# again as the curves (13.5 s of CPU for powerlaw:1 at d = 30, K = 3).
def test_own_models_under_a_spectrum_are_estimated_before_solving(monkeypatch):
    def solved(*args, **kwargs):
        raise AssertionError("the own models were solved")
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5], r=1.0, sigma=1.0, signal=1.0,
                                rounds=[5], local_steps=2, step_size=0.1,
                                spectrum="two-point:1,4,0.5")
    monkeypatch.setattr("riskcalc.linear.dynamics.sigma.fedavg.own.assemble", solved)
    tight = dataclasses.replace(res, _budget=(0.5, None))      # curves done; 0.5 s left
    with pytest.raises(ValueError, match=r"the clients' own models .* would take .* min"):
        tight.local_risk


# --- found by this pass's fuzz ------------------------------------------------------------

# was: to_frame raised "could not convert string to float: 'identity'" under covariate shift,
# and the params of a shared spectrum did not name it.
def test_clients_limit_names_its_covariance():
    kw = dict(gamma=[0.5, 2.0], r=1.0, sigma=0.5)
    shift = riskcalc.clients_limit("ftfa", **kw, spectra=["identity", "scaled:2"])
    assert shift.to_frame()["spectrum"].tolist() == ["identity", "scaled:2"]
    shared = riskcalc.clients_limit("ftfa", **kw, spectrum="two-point:1,4,0.5")
    assert shared.params["spectrum"] == "discrete[0.5@1, 0.5@4]"


# was: client ids read through floats, so 2^62, 2^62 + 1 and 2^62 + 2 were one client ("the
# data hold 1 client"), and CSV ids 2^53 and 2^53 + 1 were merged.
def test_estimate_tells_large_client_ids_apart(tmp_path):
    from riskcalc.estimate import estimate_file

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    np.savez(tmp_path / "d.npz", X=X, y=y, client=np.repeat(np.arange(3), 20) + 2 ** 62)
    ids = [c["id"] for c in estimate_file(tmp_path / "d.npz").as_dict()["clients"]]
    assert ids == [2 ** 62, 2 ** 62 + 1, 2 ** 62 + 2]
    # A CSV's integer ids are kept exact as well (fuzz41 fuzz F7: they were read as floats,
    # 2^53 + 1 as 2^53, and refused); written as floats, past 2^53 they are refused.
    (tmp_path / "d.csv").write_text("client,y,x0\n" + "".join(
        f"{2 ** 53 + j % 3},{v},{u}\n" for j, (v, u) in enumerate(zip(y, X[:, 0]))))
    ids = [c["id"] for c in estimate_file(tmp_path / "d.csv").as_dict()["clients"]]
    assert ids == [2 ** 53, 2 ** 53 + 1, 2 ** 53 + 2]
    (tmp_path / "d.csv").write_text("client,y,x0\n" + "".join(
        f"{2 ** 53 + j % 2}.0,{v},{u}\n" for j, (v, u) in enumerate(zip(y, X[:, 0]))))
    with pytest.raises(ValueError, match="client ids given as floating-point numbers must lie"):
        estimate_file(tmp_path / "d.csv")


# was: arrays of length 0 (rounds_limit refuses rounds=[]; steps_limit answered steps=[]).
def test_an_empty_list_of_steps_is_refused():
    with pytest.raises(ValueError, match="steps must be an integer or a non-empty array"):
        riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=1.0, steps=[], step_size=0.1)


# was: taken silently when every client shared the file (a shared spectrum), though a file
# of other than d eigenvalues was refused under covariate shift.
def test_a_spectrum_file_must_have_d_eigenvalues(tmp_path, capsys):
    (tmp_path / "eig.txt").write_text("1 2 3 4\n")
    client = {"r": 1, "sigma": 1, "spectrum": "file:eig.txt"}
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {**client, "gamma": 0.5}, {**client, "gamma": 1.5}]}))
    line = _one_error_line(["predict", "ftfa", "--federation", str(fed), "--d", "5"], capsys)
    assert "has 4 eigenvalues for d = 5" in line
    with pytest.raises(ValueError, match="has 4 eigenvalues for d = 5"):
        riskcalc.Federation.from_file(fed, d=5)
    with pytest.raises(ValueError, match="has 4 eigenvalues for d = 5"):
        riskcalc.clients_limit("ftfa", gamma=[0.5, 1.5], r=1.0, sigma=1.0,
                               spectrum=f"file:{tmp_path / 'eig.txt'}", d=5)
    code, out, err = run_cli(["predict", "ftfa", "--federation", fed, "--d", "4"], capsys)
    assert code == 0 and "4 atoms" in out, err


# was: "FAIL limit vectorized identity max_rel_diff nan" for the built-in local at --gamma 0.5:
# the check's grid (0.75, 1, 2 x gamma) met the threshold gamma = 1, whose limit is infinite.
def test_check_method_grid_across_the_threshold_passes():
    from montecarlo.registry_checks import _vectorized     # the row, without the simulations

    row = _vectorized(riskcalc.get_method("local"), 0.5, 1.0, 1.0, 0.5)
    assert row["ok"] and row["max_rel_diff"] == 0.0, row


def test_rtfa_lam_zero_along_the_rounds_says_why():
    """RTFA's lam' = 0 after the rounds was refused as "lam must lie in (0, inf)" with no
    reason (RTFA at convergence takes it): the message says what lam' = 0 is."""
    with pytest.raises(ValueError, match="lam = 0 is the limit lam -> 0"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.5], r=1.0, sigma=1.0, signal=1.0,
                              rounds=[1], local_steps=1, step_size=0.1).personalized_risk(lam=0)


def test_estimate_reads_a_quoted_csv_header(tmp_path):
    """A spreadsheet's quoted header ("client","y","x0") was refused as lacking 'client'."""
    from riskcalc.estimate.files import _load_csv

    path = tmp_path / "q.csv"
    path.write_text('"client","y","x0","x1"\n0,1.0,0.5,0.2\n1,0.3,0.1,0.9\n')
    X, y, ids = _load_csv(str(path))
    np.testing.assert_array_equal(X, [[0.5, 0.2], [0.1, 0.9]])
    np.testing.assert_array_equal(y, [1.0, 0.3])
    np.testing.assert_array_equal(ids, [0, 1])
