"""Issue 32, tenth hardening pass: the ninth pass's leftovers and a fresh fuzz (about 150 inputs,
none of the earlier passes') of every verb and the Python API. Each test pins a case that was
mishandled before this pass (the old behaviour in its comment); bad input is one line
``error: ...`` with exit status 2 on the command line and a ValueError naming the parameter in
Python.
"""

import json
import types

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from tests.test_hardening_ninth import _one_error_line


def _write(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(json.dumps(obj) if not isinstance(obj, str) else obj)
    return str(path)


# --- the ninth pass's leftovers -----------------------------------------------------------

# was: TypeError "only 0-dimensional arrays can be converted to Python scalars".
def test_mle_threshold_refuses_an_array_naming_kappa():
    with pytest.raises(ValueError, match=r"kappa must be a number, got an array of shape \(2,\)"):
        riskcalc.mle_threshold(np.array([0.1, 0.2]))
    assert riskcalc.mle_threshold(0.0) == pytest.approx(0.5, abs=1e-9)    # Cover's threshold


# was: grid=2.5 TypeError, grid=True one grid point (lam = 1e-3 returned as the optimum),
# grid=0 "attempt to get argmin of an empty sequence", 10**9 a billion solves.
@pytest.mark.parametrize("grid", [2.5, True, 10 ** 9, 0, 2, "13", None])
def test_optimal_lambda_logistic_grid_is_a_bounded_integer(grid):
    with pytest.raises(ValueError, match=r"grid must be an integer >= 3 and <= 1000"):
        riskcalc.optimal_lambda_logistic(gamma=0.3, signal=1.0, r=0.5, grid=grid)


# was: gamma=[0.3, True] computed with gamma_2 = 1 (the list was made float before the check).
@pytest.mark.parametrize("kw, name", [
    (dict(gamma=[0.3, True], r=0.5), "gamma"),
    (dict(gamma=[0.3, 0.2], r=[0.5, False]), "r"),
    (dict(clients=[(0.3, 0.5), (0.2, True)]), "r"),
])
def test_logistic_clients_limit_refuses_a_boolean_in_a_list(kw, name):
    with pytest.raises(ValueError, match=rf"{name} must be a list of real numbers.*boolean"):
        riskcalc.logistic_clients_limit(signal=1.0, lam=1.0, global_lam=0.1, **kw)


# was: AttributeError "'str' object has no attribute 'spectrum'" (and 'NoneType').
@pytest.mark.parametrize("spec", ["rtfa", None, {"method": "rtfa"}])
def test_spec_functions_refuse_what_is_not_a_client_spec(spec):
    with pytest.raises(ValueError, match=r"spec_limit: spec must be a riskcalc.ClientSpec"):
        riskcalc.spec_limit(spec)
    with pytest.raises(ValueError, match=r"spec_steps_limit: spec must be a riskcalc.ClientSpec"):
        riskcalc.spec_steps_limit(spec, 3, 0.1)


# was: d=True accepted (compared with the file's d as 1, or read as 1 for a bare list's n), and
# a bare list took d = 5.5 where the file's own d and advise --d are integers.
@pytest.mark.parametrize("d", [True, 5.5, 0, "5"])
@pytest.mark.parametrize("versioned", [False, True])
def test_federation_from_file_d_is_an_integer(tmp_path, d, versioned):
    clients = [{"n": 10, "r": 1, "sigma": 1}, {"n": 20, "r": 1, "sigma": 1}]
    obj = {"fedrisk_federation": 1, "d": 5, "clients": clients} if versioned else clients
    path = _write(tmp_path, "fed.json", obj)
    with pytest.raises(ValueError, match=r"fed.json: d must be an integer >= 1"):
        riskcalc.Federation.from_file(path, d=d)
    assert riskcalc.Federation.from_file(path, d=5.0).gamma.tolist() == [0.5, 0.25]


# was: the linear compare (and sweep, and compare along the rounds) simulated d = 1 where
# check and the logistic simulations refuse it (--d >= 2).
@pytest.mark.parametrize("argv", [
    "compare rtfa --gamma 0.5 --r 1 --sigma 0.5 --lam 1 --d 1",
    "sweep rtfa --gamma 0.5 --r 1 --sigma 0.5 --lam 1 --d 1 --out {tmp}/x.csv",
    "compare fedavg --rounds 3 --local-steps 1 --step-size 0.1 --gamma 0.5 --r 1 --sigma 0.5 "
    "--d 1",
    "compare rtfa --model logistic --gamma 0.5 --r 1 --signal 1 --lam 1 --d 1",
])
def test_simulation_d_is_at_least_two_in_every_family(argv, capsys, tmp_path):
    line = _one_error_line(argv.format(tmp=tmp_path).split(), capsys)
    assert line.startswith("error: --d must be an integer >= 2"), line
    assert not (tmp_path / "x.csv").exists()


def _stub_draw(data):
    """``figures.core.draw`` replaced by a tiny figure whose CSV holds ``data``."""
    def draw(fig_id, **kw):
        from matplotlib import pyplot as plt

        table = types.SimpleNamespace(write=lambda path: open(path, "w").write(data))
        return types.SimpleNamespace(figure=plt.figure(figsize=(1, 1)), table=table,
                                     text=f"caption of {data}")
    return draw


# was: --formats png after a full build left the old PDF, of other data, beside the new set.
def test_figures_formats_leave_no_image_of_other_data(tmp_path, monkeypatch):
    import figures.core as core

    def build(data, formats):
        monkeypatch.setattr(core, "draw", _stub_draw(data))
        core.build("p003-region", tmp_path, cache=False, formats=formats)
        return sorted(p.name for p in tmp_path.iterdir())

    full = ["p003-region.csv", "p003-region.pdf", "p003-region.png", "p003-region.txt"]
    assert build("a", ("png", "pdf")) == full
    # The same data and caption: the earlier PDF still shows them, and stays.
    assert build("a", ("png",)) == full
    # Other data: the old PDF goes with the new set.
    assert build("b", ("png",)) == [f for f in full if not f.endswith(".pdf")]
    assert (tmp_path / "p003-region.csv").read_text() == "b"
    assert build("c", ("pdf",)) == [f for f in full if not f.endswith(".png")]


# was: a federation file of 219 bytes (powerlaw:1 and identity at d = 10^7) took 32 s and
# 1.8 GB; three distinct power laws 47 s and 2.6 GB; 100 of them 5 s each in the reader.
def test_a_joint_measure_beyond_its_size_is_refused_before_expanding():
    from riskcalc.linear.engine import joint_spectrum as js

    with pytest.raises(ValueError, match=r"2 distinct spectra on 10000000 eigenvalue steps .* "
                                         r"what fits: at most 1 distinct spectra .* at most "
                                         r"5000000 eigenvalues"):
        js.joint_spectrum(["powerlaw:1,10000000", "powerlaw:2,10000000"])
    # 5000 distinct two-point spectra: small each, 2.5e7 values together.
    specs = [f"two-point:1,2,{0.5 + j * 1e-5:.6f}" for j in range(5000)]
    with pytest.raises(ValueError, match=r"5000 distinct spectra on 5001 eigenvalue steps"):
        js.joint_spectrum(specs)


def test_a_federation_file_names_the_client_whose_spectrum_overflows(tmp_path, monkeypatch,
                                                                     capsys):
    from riskcalc.linear.engine import joint_spectrum as js

    monkeypatch.setattr(js, "MAX_JOINT_VALUES", 1000)
    clients = [{"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": f"powerlaw:{p}"}
               for p in (1, 1.5)]
    path = _write(tmp_path, "fed.json", {"fedrisk_federation": 1, "d": 600, "clients": clients})
    line = _one_error_line(["predict", "ftfa", "--clients-file", path], capsys)
    assert "client 1: spectrum: the clients' 2 distinct spectra on 600 eigenvalue steps" in line
    assert "at most 500 eigenvalues each" in line


# was: 1000 clients with distinct two-point spectra (a 75 kB file) ran past 300 s (the T x T
# algebra of every target, T the distinct spectra), estimated at 0.1 s by predict's budget;
# pFedMe's arrays would have held 23 GiB.
def test_covariate_shift_work_is_bounded_before_solving(capsys, monkeypatch, tmp_path):
    from riskcalc.linear.finite_clients.shift import limits as shift

    specs = [f"two-point:1,2,{0.5 + j * 1e-5:.6f}" for j in range(1000)]
    with pytest.raises(ValueError, match=r"1000 distinct clients over 1000 distinct spectra "
                                         r"\(1001 joint atoms\) would take about 900 s .* what "
                                         r"fits: about 90\d distinct spectra"):
        riskcalc.clients_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, spectra=specs)
    with pytest.raises(ValueError, match=r"23.3 GiB .* about 350 distinct spectra"):
        riskcalc.clients_limit("pfedme", gamma=0.5, r=1.0, sigma=0.5, lam=1.0, spectra=specs)
    assert shift.check_work("maml_fl", 1000, 1000, 1001) == 0.0     # its own, cheaper route
    # predict's --max-minutes counts the same work.
    monkeypatch.setattr(shift, "MAX_SECONDS", 1e9)
    path = _write(tmp_path, "fed.json", [{"gamma": 0.5, "r": 1, "sigma": 0.5, "spectrum": s}
                                         for s in specs])
    line = _one_error_line(["predict", "ftfa", "--gamma", "0.5", "--r", "1", "--sigma", "0.5",
                            "--clients-file", path, "--max-minutes", "1"], capsys)
    assert "estimated 15 min" in line or "more than the 1 min allowed" in line, line


# --- the fresh fuzz ----------------------------------------------------------------------

# was: an empty list as a parameter returned an empty result (limit, logistic_lam_path) with
# no error; clients_limit(spectra=3 / {} / []) a TypeError, KeyError or IndexError and
# spectra=[None, None] "spectrum eigenvalue ... got nan"; Spectrum.from_file(None) a TypeError.
@pytest.mark.parametrize("call, message", [
    (lambda: riskcalc.limit("rtfa", gamma=0.5, r=1, sigma=1, lam=[]),
     "lam must be a number or a non-empty array"),
    (lambda: riskcalc.limit("ftfa", gamma=[], r=1, sigma=1),
     "gamma must be a number or a non-empty array"),
    (lambda: riskcalc.logistic_lam_path(gamma=0.3, signal=1, r=0.5, lams=[]),
     "lams must list at least one penalty"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 0.6], r=1, sigma=1, spectra=3),
     "spectra must be a SPEC, one SPEC"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 0.6], r=1, sigma=1, spectra={}),
     "spectra must be a SPEC, one SPEC"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 0.6], r=1, sigma=1, spectra=[]),
     "spectra must be a SPEC, one SPEC"),
    (lambda: riskcalc.clients_limit("ftfa", gamma=[0.5, 0.6], r=1, sigma=1,
                                    spectra=[None, None]),
     "the spectrum array must be a real number, got [None, None]"),
    (lambda: riskcalc.Spectrum.from_file(None), "path must be a file path"),
])
def test_api_empty_and_wrong_kind_inputs(call, message):
    with pytest.raises(ValueError) as exc:
        call()
    assert message in str(exc.value)


# was: "clients must be an integer ..." and "step_size must lie in (0, inf)": the Python
# names, not the options the user typed.
@pytest.mark.parametrize("extra, message", [
    ("--clients 0", "error: --clients must be an integer >= 1"),
    ("--steps 5 --step-size 0", "error: --step-size must lie in (0, inf), got 0.0"),
])
def test_predict_names_its_options(extra, message, capsys):
    line = _one_error_line(f"predict ftfa --gamma 0.5 --r 1 --sigma 0.5 {extra}".split(), capsys)
    assert line.startswith(message), line


def test_compare_along_the_rounds_names_reps(capsys):
    line = _one_error_line("compare fedavg --gamma 0.5 --r 1 --sigma 0.5 --signal 1 --rounds 5 "
                           "--local-steps 1 --local-step-size 0.1 --d 20 --reps 1".split(), capsys)
    assert line.startswith("error: --reps must be an integer >= 2"), line


# was: an extra array in the data file (w=..., weights the user meant to be used) was ignored.
def test_estimate_refuses_unknown_arrays(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 3)), rng.standard_normal(30)
    np.savez(tmp_path / "fed.npz", X=X, y=y, client=np.repeat([0, 1, 2], 10), w=y)
    line = _one_error_line(["estimate", "--data", str(tmp_path / "fed.npz")], capsys)
    assert "unknown array(s) w: the data are X (N x d), y (N,) and client (N,) only" in line


# was: d = 2000 with 30 rows took 22 s (d^3 products on d x d Grams, 0.35 GB): with fewer rows
# than d the traces come from the rows' Gram. Checked against the d x d route (an identity:
# tr (X^T X)^k = tr (X X^T)^k), for all rows and for each group left out.
def test_estimate_traces_from_the_rows_gram_when_rows_are_few():
    from riskcalc.estimate.estimator import _gram_traces

    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 40))
    rank = np.arange(12) % 3
    wide = _gram_traces(X, rank, 3)
    for g in (None, 0, 1, 2):
        rows = X if g is None else X[rank != g]
        S = rows.T @ rows / rows.shape[0]
        exact = (np.trace(S), np.sum(S * S), np.trace(S @ S @ S))
        np.testing.assert_allclose(wide(g), exact, rtol=1e-12)


# was: "--set R=nan": "R must be a real number, got 'nan': a string is not a number".
def test_simulate_set_nan_is_a_number_refused_as_not_finite(tmp_path, capsys):
    line = _one_error_line(["simulate", "paper000-fig1", "--out", str(tmp_path / "s.csv"),
                            "--set", "R=nan"], capsys)
    assert "--set R: every number must be finite" in line, line
    assert not (tmp_path / "s.csv").exists()


def test_logistic_limit_names_an_unknown_method():
    """Without clients an unknown method was refused for wanting clients (harden10's leftover):
    now the method's own check, as with clients."""
    for bad in ("nosuch", None):
        with pytest.raises(ValueError, match="method must be one of"):
            riskcalc.logistic_limit(method=bad, gamma=0.5, signal=1.0, r=1.0, lam=1.0)


def test_simulate_list_refuses_what_it_would_ignore(capsys):
    """``simulate --list --out x.csv`` listed the presets and ignored --out (harden10)."""
    assert main(["simulate", "--list", "--out", "x.csv"]) == 2
    assert "--out does not apply" in capsys.readouterr().err
