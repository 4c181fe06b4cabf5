"""``--model`` as a family of the model verbs (``riskcalc.cli.options.families``): the logistic
family's modes (infinitely many clients with --centre, M clients with --clients/--clients-file and
--global-lam), its options refused where they do not apply, the linear family refusing them,
and one-line errors with exit 2."""

import json

import pytest

import riskcalc
from riskcalc.cli.options import families
from tests.helpers import run_cli

BASE = ["--model", "logistic", "--gamma", "1", "--signal", "2", "--r", "0.5"]


def test_families_registry():
    assert set(families.FAMILIES) == {"linear", "logistic"}
    from riskcalc.cli.logistic import family as logistic
    assert set(logistic.VERBS) == {"predict", "compare", "sweep", "advise"}
    assert set(logistic.OPTIONS) == {"signal", "global_lam", "centre"}


@pytest.mark.parametrize("centre", ["oracle", "fedavg"])
def test_predict_centre(centre, capsys):
    code, out, _ = run_cli(["predict", "rtfa", *BASE, "--lam", "0.3", "--centre", centre,
                            "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    ref = riskcalc.logistic_limit(gamma=1, signal=2, r=0.5, lam=0.3, centre=centre)
    assert got["risk"] == ref.risk and got["test_error"] == ref.test_error
    assert got["params"].get("centre", "oracle") == centre


def test_compare_fedavg_centre_simulates_that_centre(capsys):
    code, out, _ = run_cli(["compare", "rtfa", *BASE, "--lam", "0.3", "--centre", "fedavg", "--d",
                            "30", "--reps", "2", "--no-progress", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    from montecarlo.logistic.ridge import simulate
    sim = simulate(gamma=1, signal=2, r=0.5, lams=[0.3], d=30, reps=2, seed=0,
                   centre_scale=riskcalc.fedavg_centre_scale(2, 0.5))
    assert got["simulated"]["risk"] == pytest.approx(float(sim["risk"][0][0]), rel=1e-12)


def _file(tmp_path, data):
    path = tmp_path / "fed.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.parametrize("argv, message", [
    (["predict", "rtfa", *BASE, "--lam", "1", "--global-lam", "1"],
     "--global-lam does not apply to --model logistic without --clients"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--weights", "uniform"],
     "--weights does not apply to --model logistic without --clients"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--clients", "5", "--centre", "fedavg",
      "--global-lam", "1"], "--centre does not apply to --model logistic with --clients"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--clients", "5"], "needs --global-lam"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--clients", "0", "--global-lam", "1"],
     "--clients must be an integer >= 1"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--clients", "2", "--global-lam", "1",
      "--clients-file", "x.json"], "not both"),
    (["predict", "fedavg", *BASE, "--lam", "1", "--clients", "5", "--global-lam", "1"],
     "--lam does not apply to METHOD fedavg"),
    (["predict", "fedavg", *BASE], "rtfa and local_ridge without M clients"),
    (["predict", "ftfa", *BASE, "--clients", "2", "--global-lam", "1"], "has no method ftfa"),
    (["predict", "pfedme", *BASE, "--lam", "1"], "rtfa and local_ridge without M clients"),
    (["predict", "local_ridge", *BASE, "--clients", "5", "--global-lam", "1"], "needs --lam"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--steps", "2"], "--steps does not apply"),
    (["predict", "rtfa", *BASE, "--lam", "1", "--centre", "pooled"], "invalid choice"),
    (["compare", "rtfa", *BASE, "--lam", "1", "--d", "20", "--clients", "5"],
     "--clients does not apply to --model logistic with --global oracle"),
    (["compare", "rtfa", *BASE, "--lam", "1", "--d", "20", "--global", "federated",
      "--centre", "fedavg", "--clients", "3", "--global-lam", "1"],
     "--centre does not apply to --model logistic with --global federated"),
    (["compare", "rtfa", *BASE, "--lam", "1", "--d", "20", "--measure", "empirical"],
     "--measure does not apply"),
    (["predict", "rtfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--lam", "1",
      "--global-lam", "1"], "--global-lam applies to --model logistic only"),
    (["predict", "rtfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--lam", "1",
      "--centre", "oracle"], "--centre applies to --model logistic only"),
    (["compare", "rtfa", "--gamma", "1", "--r", "1", "--sigma", "1", "--lam", "1", "--d",
      "10", "--global-lam", "1"], "--global-lam applies to --model logistic only"),
])
def test_options_that_do_not_apply(argv, message, capsys):
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("data, message", [
    ("[", "not valid JSON"),
    ([], "non-empty JSON list"),
    ([{"gamma": 1, "r": 1, "sigma": 1}], "exactly the keys gamma, r"),
    ([{"gamma": 1}], "exactly the keys gamma, r"),
    ([{"gamma": "1", "r": 1}], "gamma must be a number"),
    ([{"gamma": 1, "r": True}], "r must be a number"),
])
def test_clients_file_errors(tmp_path, data, message, capsys):
    code, _, err = run_cli(["predict", "rtfa", *BASE, "--lam", "1", "--global-lam", "1",
                            "--clients-file", _file(tmp_path, data)], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err, err


FED = ["--clients", "3", "--global-lam", "0.01"]


def test_predict_clients_json(capsys):
    code, out, _ = run_cli(["predict", "rtfa", *BASE, "--lam", "1", *FED, "--json"], capsys)
    assert code == 0
    ref = riskcalc.logistic_limit(gamma=1, signal=2, r=0.5, lam=1, clients=3, global_lam=0.01)
    assert json.loads(out) == json.loads(json.dumps(ref.as_dict()))
    code, out, _ = run_cli(["predict", "rtfa", *BASE, "--lam", "1", *FED], capsys)
    assert code == 0 and "global_overlap" in out and "clients = 3" in out


def test_predict_fedavg_uniform_weights(capsys):
    code, out, _ = run_cli(["predict", "fedavg", *BASE, *FED, "--weights", "uniform", "--json"],
                           capsys)
    got = json.loads(out)
    ref = riskcalc.logistic_limit(gamma=1, signal=2, r=0.5, clients=3, global_lam=0.01,
                                  weights="uniform", method="fedavg")
    assert code == 0 and got["params"]["weights"] == "uniform" and got["risk"] == ref.risk


def test_predict_clients_file(tmp_path, capsys):
    path = _file(tmp_path, [{"gamma": 2.0, "r": 1.0}])
    code, out, _ = run_cli(["predict", "local_ridge", *BASE, "--lam", "1", "--global-lam", "0.01",
                            "--clients-file", path, "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    pop = riskcalc.logistic_clients_limit(gamma=[1.0, 2.0], r=[0.5, 1.0], signal=2, lam=1,
                                          global_lam=0.01, method="local_ridge")
    assert got["risk"] == pop.risk[0] and got["params"]["clients"] == 2
    assert got["federation"]["mean"]["risk"] == pytest.approx(float(pop.mean["risk"]))


def test_compare_federated(capsys):
    code, out, _ = run_cli(["compare", "rtfa", *BASE, "--lam", "1", "--global", "federated", *FED,
                            "--d", "30", "--reps", "2", "--seed", "4", "--no-progress", "--json"],
                           capsys)
    assert code == 0
    got = json.loads(out)
    from montecarlo.logistic.pipeline import simulate_pipeline
    sim = simulate_pipeline(gamma=1, signal=2, r=0.5, lams=[1.0], global_lam=0.01, clients=3,
                            d=30, reps=2, seed=4)
    assert got["simulated"]["risk"] == float(sim["rtfa"]["risk"][0][0])
    assert got["simulated"]["global_overlap"] == float(sim["global"]["overlap"][0])
    ref = riskcalc.logistic_limit(gamma=1, signal=2, r=0.5, lam=1, clients=3, global_lam=0.01)
    assert got["predicted"]["risk"] == ref.risk
    assert set(got["comparison"]) == {"risk", "cosine_uncentred", "test_logloss", "test_error",
                                      "global_overlap", "global_dist"}


def test_compare_pfedme_is_the_joint_objective(capsys):
    """METHOD pfedme: the FedProx / pFedMe joint objective (riskcalc's method "fedprox"),
    simulated by the exact joint minimizer."""
    code, out, _ = run_cli(["compare", "pfedme", *BASE, "--lam", "1", "--global", "federated",
                            "--clients", "2", "--global-lam", "0.01", "--d", "20", "--reps", "2",
                            "--no-progress", "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    from montecarlo.logistic.pipeline import simulate_pipeline
    sim = simulate_pipeline(gamma=1, signal=2, r=0.5, lams=[1.0], global_lam=0.01, clients=2,
                            d=20, reps=2, seed=0, fedprox=True)
    ref = riskcalc.logistic_limit(gamma=1, signal=2, r=0.5, lam=1, clients=2, global_lam=0.01,
                                  method="fedprox")
    assert got["method"] == "pfedme" and got["predicted"]["risk"] == ref.risk
    assert got["simulated"]["risk"] == float(sim["pfedme"]["risk"][0][0])
