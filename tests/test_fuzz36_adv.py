"""Issue 32, fuzz36 (adv): what this fuzz found, each test failing before."""

import csv
import json
from unittest import mock

import numpy as np
import pytest

from riskcalc import federation_file
from riskcalc.advise import Federation, advise
from riskcalc.advise.result import Advice, Candidate
from riskcalc.advise.uncertainty import bootstrap
from riskcalc.cli.tables import advise as advise_table
from riskcalc.estimate import data as estimate_data
from riskcalc.estimate import estimate
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from tests.helpers import run_cli


# --- F1: the exact gradient with every other client noiseless --------------------------------

@pytest.mark.parametrize("method, tuning", [("fedavg", None), ("rtfa", [0.3, 0.5, 0.7]),
                                            ("pfedme", 0.5)])
def test_gradient_with_the_other_clients_noiseless(method, tuning):
    """Client 2 is the only noisy one: its others' noise sum has real part 0, where NumPy's
    maximum on complex numbers dropped a negative complex step, and d mean / d p_2 was off by
    ~5e-3 (the optimal weights stopped 1e-4 above their minimum)."""
    kw = dict(gamma=np.array([0.5, 2.0, 1.5]), r=np.array([0.0, 1.0, 0.3]),
              sigma=np.array([0.0, 0.0, 0.2]))
    key = {"rtfa": "lam", "pfedme": "lam"}.get(method)
    extra = {} if key is None else {key: np.asarray(tuning)}
    p, h = np.array([0.5, 0.3, 0.2]), 1e-6

    def mean(q):
        return clients_limit(method, weights=q, **kw, **extra).mean_risk

    fd = [(mean(p + h * e) - mean(p - h * e)) / (2 * h) for e in np.eye(3)]
    got = mean_risk_gradient(method, weights=p, tuning=tuning, **kw)[1]
    np.testing.assert_allclose(got, fd, atol=1e-8)


# --- F2: the optimal weights in other units ----------------------------------------------------

@pytest.mark.parametrize("scale", [1e-4, 1e8, 1e100])
def test_optimal_weights_do_not_depend_on_the_units(scale):
    """r_j and sigma_j times c (y in other units) multiply every risk by c^2 and change
    nothing else. The optimizers stopped at the start at c = 1e-4 ('no gain over samples',
    FTFA's optimal mean 12% above its minimum) and overflowed their first step at 1e100."""
    def optimal(c):
        fed = Federation(gamma=[0.5, 2.0, 1.5], r=[0.1 * c, c, 0.3 * c],
                         sigma=[0.1 * c, 0.05 * c, 0.2 * c])
        res = advise(fed, methods=["ftfa"])
        return next(x.mean_risk for x in res.candidates if x.weights == "optimal")

    assert optimal(scale) / scale ** 2 == pytest.approx(optimal(1.0), rel=1e-7)


# --- F3: advise's arguments that did nothing or failed on an attribute ---------------------------

def test_advise_refuses_a_signal_without_rounds_and_what_is_no_federation(tmp_path, capsys):
    """signal= without rounds= was ignored, silently (the command line refuses --signal
    there); a dict for the federation was an AttributeError. A federation file's signal is
    used along the rounds only: without --rounds the command does not hand it to advise."""
    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[1.0, 1.0])
    with pytest.raises(ValueError, match="signal applies with rounds only"):
        advise(fed, methods=["fedavg"], signal=1.0)
    with pytest.raises(ValueError, match="federation must be a riskcalc.advise.Federation"):
        advise({"gamma": [0.5, 2.0], "r": [1.0, 1.0], "sigma": [1.0, 1.0]})
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": [
        {"gamma": 0.5, "r": 1.0, "sigma": 1.0}, {"gamma": 2.0, "r": 1.0, "sigma": 1.0}]}))
    code, out, err = run_cli(["advise", "--federation", str(path), "--methods", "fedavg"],
                             capsys)
    assert code == 0 and "recommended" in out


# --- F4: a gain of the optimal weights at rounding level -------------------------------------

def test_no_weight_gain_between_risks_at_rounding_level():
    """Noise-free data (y = X theta) give every risk ~1e-17 (rounding) at a risk scale ~0.4:
    the optimal weights' 'gain 0.23% over samples' there was rounding, reported as a gain."""
    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[0.0, 0.0])
    cands = tuple(Candidate("fedavg", {}, w, None, np.array([v, v]))
                  for w, v in (("optimal", 7.638e-18), ("samples", 7.656e-18)))
    gains = Advice(fed, cands, ()).weight_gains()
    assert gains[0]["gain_vs_samples"] == 0.0
    real = (Candidate("fedavg", {}, "optimal", None, np.array([0.9, 0.9])),
            Candidate("fedavg", {}, "samples", None, np.array([1.0, 1.0])))
    assert Advice(fed, real, ()).weight_gains()[0]["gain_vs_samples"] == pytest.approx(0.1)


# --- F5: Federation(spectrum=...) of other types -------------------------------------------------

@pytest.mark.parametrize("spectrum", [3.0, np.array([1.0, 4.0]), b"identity", {"a": 1}])
def test_federation_spectrum_of_another_type_is_one_error(spectrum):
    """A float was a TypeError, an array of eigenvalues an AttributeError, bytes and a dict
    'spectrum lists 8 clients' / '1 clients'."""
    with pytest.raises(ValueError, match="spectrum must be a riskcalc.Spectrum, a SPEC"):
        Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[1.0, 1.0], spectrum=spectrum)


def test_federation_spectrum_lists_spec_strings():
    """A list of one SPEC per client (the same covariance) was an AttributeError."""
    fed = Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[1.0, 1.0],
                     spectrum=["two-point:1,4,0.5", "two-point:1,4,0.5"])
    assert fed.spectrum.atoms.tolist() == [1.0, 4.0]
    with pytest.raises(ValueError, match="different covariance spectra"):
        Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[1.0, 1.0],
                   spectrum=["identity", "scaled:2"])


# --- F6: a client name with surrounding spaces -------------------------------------------------

def test_a_name_with_surrounding_spaces_is_refused(tmp_path, capsys):
    """Names 'a' and ' a' were both taken, and --target ' a' (stripped) answered for the client
    named 'a': another client's risk, silently."""
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"name": "a", "gamma": 0.5, "r": 0.5, "sigma": 1.0},
        {"name": " a", "gamma": 2.0, "r": 0.7, "sigma": 1.0}]}))
    code, out, err = run_cli(["predict", "rtfa", "--lam", "0.5", "--federation", str(path),
                              "--target", " a"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (f"error: --federation {path}: client 1 (' a'): name must not begin "
                           "or end with spaces (--target J names a client without them), got ' a'")


# --- F7: client ids past 2^53 -------------------------------------------------------------------

def test_estimates_ids_past_2_53_are_read_back(tmp_path, capsys):
    """riskcalc estimate keeps int64 client ids exact and writes them in its federation file,
    which the reader then refused past 2^53 (advise --data failed after estimating: 'id must
    be an integer <= 9007199254740992'); a float id there is refused (2^53 + 1 reads as 2^53)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    client = np.repeat(np.array([2 ** 53 + 1, -2 ** 62, 7]), 20)
    y = X @ np.ones(4) + 0.5 * rng.standard_normal(60) + 0.3 * (client == 7)
    ff = federation_file.from_object(estimate(X, y, client).as_dict(), "--data")
    assert sorted(c["id"] for c in ff.clients) == [-2 ** 62, 7, 2 ** 53 + 1]
    path = tmp_path / "fed.json"
    path.write_text('{"fedrisk_federation": 1, "clients": [{"gamma": 0.5, "r": 0.5, "sigma": 1.0,'
                    ' "id": 9007199254740993.0}, {"gamma": 2, "r": 0.5, "sigma": 1.0}]}')
    code, out, err = run_cli(["advise", "--federation", path], capsys)
    assert code == 2 and "exact below 2^53 only" in err


# --- F8: the rounds candidates' tuning in the table and the CSV -----------------------------------

def test_rounds_tuning_is_printed_and_written_whole(tmp_path):
    """With a huge signal (advise --rounds 2 --signal 1e100) the exact local solve (K = inf,
    local_steps None) wins: the table printed 'rounds=2 step_size=... global_step=1' without
    K, and the CSV rows of fedavg_rounds had no rounds, local steps or server step at all."""
    fed = Federation(gamma=[0.5, 2.0], r=[0.5, 1.5], sigma=[1.0, 0.5])
    early = Candidate("fedavg_rounds", {"rounds": 2, "local_steps": None, "step_size": 0.3,
                                        "global_step": 1.0}, "samples", np.array([0.8, 0.2]),
                      np.array([1.0, 2.0]), limit="rounds")
    assert advise_table._tuning(early) == "rounds=2 local_steps=inf step_size=0.3 global_step=1"
    advise_table.write_csv(Advice(fed, (early,), ()), tmp_path / "out.csv")
    with open(tmp_path / "out.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["rounds"], r["local_steps"], r["global_step"]) for r in rows] == [
        ("2", "inf", "1.0")] * 2


# --- F9: the memory bound of estimate's auto route ------------------------------------------------

def _clients(m, n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m * n, d))
    client = np.repeat(np.arange(m), n)
    theta = 1.0 + 0.3 * rng.standard_normal((m, d))
    return X, np.einsum("ij,ij->i", X, theta[client]) + 0.5 * rng.standard_normal(m * n), client


def test_auto_route_is_bounded_by_the_route_it_takes():
    """n_j = 1.4 d: auto estimates by moments, but its memory was bounded as least squares'
    (cubic in m: 1000 such clients refused at '112 GiB'); a refusal of least squares named 'a
    subsample of each client's rows', which does not cut its m^3 term."""
    with mock.patch.object(estimate_data, "memory_limit", lambda: 5e7):
        assert estimate(*_clients(100, 14, 10)).route == "moments"
        with pytest.raises(ValueError, match=r"needs about .* GiB .*; estimate from fewer "
                                             r"clients or route moments$"):
            estimate(*_clients(100, 30, 10))


# --- F10: estimate's notes with many clients ---------------------------------------------------

def test_estimate_notes_name_ten_clients_at_most(tmp_path, capsys):
    """Clients sharing one theta (r_j = 0): every r_j is within two standard errors of 0, and
    the note listed every client id and estimate on one line (1000 clients: 40,000
    characters)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30 * 8, 3))
    np.savez(tmp_path / "data.npz", X=X, y=X @ np.ones(3) + rng.standard_normal(240),
             client=np.repeat(np.arange(30), 8))
    code, out, err = run_cli(["estimate", "--data", tmp_path / "data.npz"], capsys)
    assert code == 0, err
    notes = [line for line in out.splitlines() if line.startswith("note: r of")]
    assert notes and " more (--json has them all)" in notes[0] and len(notes[0]) < 600


# --- F11: pooled N <= d and local ridge ----------------------------------------------------------

def test_pooled_n_below_d_says_where_local_ridge_is(tmp_path, capsys):
    """The refusal said '(only local ridge does not)' need N > d, and advise --methods
    local_ridge was then refused the same way: it now says where local ridge alone is."""
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 2.0, "r": 0.5, "sigma": 1.0, "rho": 1.0},
        {"gamma": 3.0, "r": 0.5, "sigma": 1.0, "rho": 1.0}]}))
    code, out, err = run_cli(["advise", "--federation", path, "--methods", "local_ridge"],
                             capsys)
    assert code == 2 and err.count("\n") == 1
    assert "(local ridge alone, which has no global model: riskcalc predict local_ridge for " \
           "each client)" in err


# --- F12: advise --data --spectrum of another dimension ----------------------------------------

def test_data_spectrum_lists_the_datas_d_eigenvalues(tmp_path, capsys):
    """Data of d = 4 beside --spectrum file:EIG of 3 eigenvalues (or powerlaw:1,3) were
    advised on, silently, where every other entry of a spectrum refuses a count other than
    d."""
    X, y, client = _clients(3, 20, 4)
    np.savez(tmp_path / "data.npz", X=X, y=y, client=client)
    (tmp_path / "eig.txt").write_text("1 2 4\n")
    for spec in (f"file:{tmp_path / 'eig.txt'}", "powerlaw:1,3"):
        code, out, err = run_cli(["advise", "--data", tmp_path / "data.npz", "--spectrum", spec,
                                  "--methods", "fedavg"], capsys)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"error: --spectrum {spec} (--data {tmp_path / 'data.npz'}: d = 4): " \
               f"spectrum '{spec}' has 3 eigenvalues for d = 4" in err


# --- F13: a file name holding a line break --------------------------------------------------------

def test_an_error_naming_a_file_with_a_line_break_is_one_line(tmp_path, capsys):
    """The error named the file as it is: a name holding a line break split it in two."""
    path = tmp_path / "bad\nname.json"
    path.write_text('{"fedrisk_federation": 2}')
    code, out, err = run_cli(["advise", "--clients-file", path], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: --clients-file {tmp_path}/bad\\nname.json: format version 2")


# --- F14: a bare --clients-file list with n -------------------------------------------------------

def test_a_bare_lists_n_is_turned_into_gamma_by_d(tmp_path, capsys):
    """predict --clients-file LIST --d D with clients giving n: --d was accepted as 'turning a
    client's n into gamma', then the client refused ('must have exactly the keys gamma, r,
    sigma')."""
    by_n, by_gamma = tmp_path / "n.json", tmp_path / "gamma.json"
    by_n.write_text('[{"n": 50, "r": 0.5, "sigma": 1.0}, {"n": 200, "r": 0.5, "sigma": 1.0}]')
    by_gamma.write_text('[{"gamma": 2, "r": 0.5, "sigma": 1.0}, '
                        '{"gamma": 0.5, "r": 0.5, "sigma": 1.0}]')
    base = ["predict", "ftfa", "--gamma", "1.5", "--r", "1", "--sigma", "1", "--json",
            "--clients-file"]
    code, out, err = run_cli(base + [by_n, "--d", "100"], capsys)
    assert code == 0, err
    assert json.loads(out)["risk"] == json.loads(run_cli(base + [by_gamma], capsys)[1])["risk"]
    code, out, err = run_cli(base + [by_n], capsys)
    assert code == 2 and "client 0: gives n: give --d to turn it into gamma = d/n" in err


# --- F15: estimates at rounding level ------------------------------------------------------------

def test_noise_free_estimates_at_rounding_have_no_standard_error():
    """y = X theta (noise-free, one theta): sigma_j^2 ~ 1e-31 and r_j^2 ~ 1e-17 are rounding
    of rho^2 ~ 4, yet sigma_j was printed 7.4e-16 +- 8.3e-17 and r_j 6.1e-09 +- 1.8e-17 (exact-
    noise standard errors, which do not bound rounding): resolved far from 0, as results."""
    X, _, client = _clients(3, 20, 4)
    est = estimate(X, X @ np.ones(4), client).as_dict()
    assert all(c["se"][k] is None for c in est["clients"] for k in ("sigma", "r"))
    assert all(c["se"]["rho"] is not None for c in est["clients"])


# --- F16: bootstrap's arguments -------------------------------------------------------------------

def test_bootstrap_refuses_another_federations_advice():
    """The advice of another federation was taken beside the estimates' draws (a 2-client
    ranking as the point of 3 clients' intervals), and est=None was an AttributeError."""
    est = estimate(*_clients(3, 20, 4))
    other = advise(Federation(gamma=[0.5, 2.0], r=[1.0, 1.0], sigma=[1.0, 1.0]),
                   methods=["fedavg"])
    with pytest.raises(ValueError, match="advice must be advise\\(\\) of the estimates'"):
        bootstrap(est, other, draws=2)
    with pytest.raises(ValueError, match="est must be a riskcalc.estimate.Estimate"):
        bootstrap(None, other, draws=2)


def test_a_bare_lists_n_under_the_logistic_family_says_what_applies(tmp_path, capsys):
    """F14's follow-up: the logistic family takes no --d beside --clients-file, so a bare
    list's n is refused naming gamma (it said 'give --d', then '--d does not apply')."""
    path = tmp_path / "n.json"
    path.write_text('[{"n": 50, "r": 0.5}, {"n": 200, "r": 0.5}]')
    base = ["predict", "rtfa", "--model", "logistic", "--lam", "1", "--gamma", "1", "--r", "1",
            "--signal", "1", "--global-lam", "0.1", "--clients-file", path]
    for extra in ([], ["--d", "100"]):
        code, out, err = run_cli(base + extra, capsys)
        assert code == 2 and "client 0: gives n: with --model logistic a bare list gives " \
                              "gamma (d / n; --d does not apply there)" in err
