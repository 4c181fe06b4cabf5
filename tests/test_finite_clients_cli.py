"""The finite-clients options of the CLI: predict --clients/--clients-file/--weights, compare
--global federated (finite-M prediction), sweep --clients lists, and their bad input."""

import csv
import io
import json

import pytest

import riskcalc
from tests.helpers import run_cli

FED = [{"gamma": 1.0, "r": 2.0, "sigma": 0.3}, {"gamma": 4.0, "r": 0.5, "sigma": 1.0},
       {"gamma": 0.8, "r": 1.5, "sigma": 0.2}]
MODEL = ["--gamma", "2", "--r", "1", "--sigma", "0.5"]


@pytest.fixture
def fed_file(tmp_path):
    path = tmp_path / "clients.json"
    path.write_text(json.dumps(FED))
    return str(path)


@pytest.mark.parametrize("weights", [None, "uniform"])
def test_predict_clients_json(weights, capsys):
    extra = [] if weights is None else ["--weights", weights]
    code, out, _ = run_cli(["predict", "ftfa", *MODEL, "--clients", "5", "--json", *extra], capsys)
    assert code == 0
    obj = json.loads(out)
    ref = riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5, clients=5, weights=weights)
    assert obj["risk"] == pytest.approx(ref.risk, rel=1e-15)
    assert obj["params"]["clients"] == 5
    assert obj["params"]["weights"] == (weights or "samples")


def test_predict_clients_file(fed_file, capsys):
    code, out, _ = run_cli(["predict", "rtfa", *MODEL, "--lam", "0.5", "--clients-file", fed_file,
                            "--weights", "uniform", "--json"], capsys)
    assert code == 0
    obj = json.loads(out)
    ref = riskcalc.clients_limit("rtfa", gamma=[2.0] + [c["gamma"] for c in FED],
                                 r=[1.0] + [c["r"] for c in FED],
                                 sigma=[0.5] + [c["sigma"] for c in FED], lam=0.5,
                                 weights="uniform")
    assert obj["risk"] == pytest.approx(ref.risk[0], rel=1e-15)
    assert obj["federation"]["mean"]["risk"] == pytest.approx(ref.mean_risk, rel=1e-15)
    code, out, _ = run_cli(["predict", "rtfa", *MODEL, "--lam", "0.5", "--clients-file",
                            fed_file], capsys)
    assert code == 0 and "population average over the 4 clients" in out


def test_clients_file_takes_the_spectrum(tmp_path, capsys):
    # Four identical clients in a file (the target and three others) are --clients 4: the
    # heterogeneous path must use --spectrum exactly as the identical-clients path does.
    path = tmp_path / "same.json"
    path.write_text(json.dumps([{"gamma": 2.0, "r": 1.0, "sigma": 0.5}] * 3))
    spec = ["--spectrum", "two-point:1,10,0.5", "--json"]
    _, from_file, _ = run_cli(["predict", "ftfa", *MODEL, "--clients-file", str(path), *spec],
                              capsys)
    _, identical, _ = run_cli(["predict", "ftfa", *MODEL, "--clients", "4", *spec], capsys)
    _, isotropic, _ = run_cli(["predict", "ftfa", *MODEL, "--clients", "4", "--json"], capsys)
    risk = json.loads(from_file)["risk"]
    assert risk == pytest.approx(json.loads(identical)["risk"], rel=1e-12)
    assert abs(risk / json.loads(isotropic)["risk"] - 1) > 0.1


def test_compare_federated_predicts_finite_m(fed_file, capsys):
    code, out, _ = run_cli(["compare", "ftfa", *MODEL, "--d", "60", "--reps", "2",
                            "--global", "federated", "--clients", "5", "--json"], capsys)
    assert code == 0
    obj = json.loads(out)
    ref = riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5, clients=5, weights="uniform")
    assert obj["predicted"]["risk"] == pytest.approx(ref.risk, rel=1e-15)
    code, out, _ = run_cli(["compare", "ftfa", *MODEL, "--d", "60", "--reps", "2",
                            "--global", "federated", "--clients-file", fed_file, "--json"], capsys)
    obj = json.loads(out)
    assert obj["params"]["clients"] == 4
    code, out, _ = run_cli(["compare", "maml_fl", *MODEL, "--alpha", "0.1", "--d", "40", "--reps",
                            "2", "--global", "federated", "--clients", "30", "--json"], capsys)
    ref = riskcalc.limit("maml_fl", gamma=2, r=1, sigma=0.5, alpha=0.1, clients=30)
    assert json.loads(out)["predicted"]["risk"] == pytest.approx(ref.risk, rel=1e-15)
    code, out, _ = run_cli(["compare", "ftfa", *MODEL, "--d", "40", "--reps", "2", "--global",
                            "federated", "--clients", "30", "--spectrum", "two-point:1,10,0.5",
                            "--json"], capsys)
    ref = riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5, clients=30, weights="uniform",
                         spectrum=riskcalc.Spectrum.two_point(1.0, 10.0, 0.5))
    assert code == 0 and json.loads(out)["predicted"]["risk"] == pytest.approx(ref.risk,
                                                                                rel=1e-15)
    code, out, _ = run_cli(["compare", "maml_fl", *MODEL, "--alpha", "0.1", "--d", "40", "--reps",
                            "2", "--global", "federated", "--clients", "30", "--spectrum",
                            "two-point:1,10,0.5", "--json"], capsys)
    ref = riskcalc.limit("maml_fl", gamma=2, r=1, sigma=0.5, alpha=0.1, clients=30,
                         spectrum=riskcalc.Spectrum.two_point(1.0, 10.0, 0.5))
    assert code == 0 and json.loads(out)["predicted"]["risk"] == pytest.approx(ref.risk,
                                                                                rel=1e-15)


def test_compare_covariate_shift_maml(tmp_path, capsys):
    """MAML-FL under covariate shift: compare predicts the finite-M limit of clients_limit
    with the clients' spectra (the agreement: tests/test_finite_clients_shift.py)."""
    path = tmp_path / "clients.json"
    path.write_text(json.dumps([{"gamma": 2, "r": 1, "sigma": 0.5, "spectrum": "scaled:2"}] * 3))
    code, out, _ = run_cli(["compare", "maml_fl", *MODEL, "--alpha", "0.1", "--d", "40", "--reps",
                            "2", "--global", "federated", "--clients-file", str(path), "--json"],
                           capsys)
    res = json.loads(out)
    ref = riskcalc.clients_limit("maml_fl", gamma=[2.0] * 4, r=1.0, sigma=0.5, alpha=0.1,
                                 weights=res["setting"]["weights"],
                                 spectra=res["setting"]["spectra"])
    assert code == 0 and res["predicted"]["risk"] == pytest.approx(ref.risk[0], rel=1e-12)


def test_sweep_clients_list(capsys):
    code, out, _ = run_cli(["sweep", "ftfa", *MODEL, "--d", "60", "--reps", "2", "--global",
                            "federated", "--clients", "5,20", "--no-progress"], capsys)
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [int(r["clients"]) for r in rows] == [5, 20]
    for r in rows:
        ref = riskcalc.limit("ftfa", gamma=2, r=1, sigma=0.5, clients=int(r["clients"]))
        assert float(r["predicted_risk"]) == pytest.approx(ref.risk, rel=1e-12)


def _bad_files(tmp_path):
    (tmp_path / "bad.json").write_text("[{")
    (tmp_path / "keys.json").write_text(json.dumps([{"gamma": 1.0, "r": 1.0}]))
    (tmp_path / "obj.json").write_text(json.dumps({"gamma": [1.0]}))
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    ("predict ftfa {m} --clients 0", "clients must be an integer >= 1"),
    ("predict ftfa {m} --clients 2.5", "--clients must be an integer, got '2.5'"),
    ("predict ftfa {m} --clients 2", "sum_j 1/gamma_j > 1"),
    ("predict ftfa {m} --weights uniform", "--weights applies with --clients"),
    ("predict ftfa {m} --clients 5 --weights equal", "invalid choice"),
    ("predict ftfa {m} --clients 5 --clients-file {t}/keys.json", "not both"),
    ("predict fedavg {m} --clients 5 --steps 2 --step-size 0.1",
     "one of ftfa, rtfa, local, local_ridge for finite steps"),
    ("predict ftfa {m} --clients 5 --steps 2", "--steps and --step-size go together"),
    ("predict ftfa {m} --clients-file {t}/missing.json", "No such file"),
    ("predict ftfa {m} --clients-file {t}/bad.json", "not valid JSON"),
    ("predict ftfa {m} --clients-file {t}/keys.json", "exactly the keys gamma, r, sigma"),
    ("predict ftfa {m} --clients-file {t}/obj.json", "non-empty JSON list"),
    ("compare ftfa {m} --d 40 --global federated --clients 5 --clients-file {t}/keys.json",
     "not both"),
    ("compare ftfa {m} --d 40 --clients 5", "--global federated only"),
    ("sweep ftfa {m} --d 40 --clients 2.5,5", "list of integers"),
    ("sweep ftfa {m} --d 40 --clients a", "comma-separated list"),
])
def test_bad_input_exits_2_with_one_line(argv, message, tmp_path, capsys):
    t = _bad_files(tmp_path)
    code, out, err = run_cli(argv.format(m=" ".join(MODEL), t=t).split(), capsys)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err
