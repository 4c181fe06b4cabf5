"""``riskcalc advise --model logistic`` (riskcalc.advise.logistic): the recommendation against a
Monte Carlo of the exact minimizers, the 1-D search against the oracle tuning's own search, and
the command's outputs and refusals."""

import csv
import json

import numpy as np
import pytest

import riskcalc
from montecarlo.logistic import pipeline
from riskcalc.advise.logistic import LogisticFederation, advise_logistic
from riskcalc.cli import main
from riskcalc.logistic.tuning import optimal_lambda_logistic


def test_the_pick_is_the_simulated_best():
    # One client at the centre, one far from it (r = 3): predicted mean risks rtfa 3.41, local
    # ridge 3.68, pfedme 3.83, fedavg 4.77 (gaps of 8% and more).
    fed = LogisticFederation(gamma=[0.5, 0.5], r=[0.0, 3.0], signal=2.0, global_lam=0.05)
    adv = advise_logistic(fed)
    assert adv.recommended.method == "rtfa"
    best = {c.method: c for c in adv.candidates if c.weights in ("samples", "none")}
    lam = best["rtfa"].tuning["lam"]
    for j in range(fed.m):          # each client's lam_j is a minimum of its own risk
        # (at lam_j: the candidate's risk, the same solve as fed.limit(..., lam[j], target=j))
        near = [fed.limit("rtfa", "samples", lam[j] * f, target=j).risk[0] for f in (1 / 1.5, 1.5)]
        assert best["rtfa"].risks[j] <= min(near)
    # Exact Newton minimizers at d = 100 with the advised tunings, paired over replicates
    # (30: the variance of a replicate's risk goes as 1 / d, so the s.e. are those of 20 at
    # d = 150, measured 0.065-0.072 against 0.054-0.076, and the paired t of local ridge and
    # pFedMe 7.0 and 16.7 against 5.2 and 8.6, for 1.0 s of CPU less).
    d, reps = 100, 30
    sims = {m: [] for m in best}
    for rep in range(reps):
        per = {m: [] for m in best}
        _, W, X, y = pipeline.draw_federation(gammas=list(fed.gamma), rs=list(fed.r),
                                              signal=fed.signal, d=d, seed=3, rep=rep)
        _, Wp = pipeline.fedprox_model(X, y, lam=best["pfedme"].tuning["lam"],
                                       global_lam=fed.global_lam, weights="samples")
        for j in range(fed.m):
            out = pipeline.simulate_replicate(
                gammas=list(fed.gamma), rs=list(fed.r), signal=fed.signal,
                lams=[lam[j], best["local_ridge"].tuning["lam"][j]],
                global_lam=fed.global_lam, d=d, seed=3, rep=rep, target=j)
            per["rtfa"].append(out["rtfa"]["risk"][0])
            per["local_ridge"].append(out["local_ridge"]["risk"][1])
            per["fedavg"].append(out["fedavg"]["risk"])
            per["pfedme"].append(float(np.sum((Wp[j] - W[j]) ** 2)))
        for m in best:
            sims[m].append(np.mean(per[m]))
    sims = {m: np.array(v) for m, v in sims.items()}
    assert min(sims, key=lambda m: sims[m].mean()) == "rtfa"
    for m in best:
        if m != "rtfa":
            diff = sims[m] - sims["rtfa"]
            assert diff.mean() > 3 * diff.std(ddof=1) / np.sqrt(reps), m
        # and each prediction within 3 s.e. + 5% (finite d = 100) of its simulation
        se = sims[m].std(ddof=1) / np.sqrt(reps)
        assert abs(sims[m].mean() - best[m].mean_risk) <= 3 * se + 0.05 * best[m].mean_risk, m


def test_local_ridge_search_matches_the_oracle_tuning():
    # Local ridge toward 0 is the infinite-client limit with signal 0 and r = ||w_j||; its
    # tuning there is optimal_lambda_logistic's (a grid bracketing the minimum, then a 1e-6
    # bounded search: 5 points find the 13 points' lam* to 2e-7 and its risk to 3e-15
    # relative, for 0.6 s of CPU less; the slow fixed points are the small lam).
    fed = LogisticFederation(gamma=[0.5, 2.0], r=[0.5, 1.5], signal=1.0, global_lam=0.05)
    cand = advise_logistic(fed, methods=["local_ridge"]).recommended
    for j in range(fed.m):
        lam, risk = optimal_lambda_logistic(gamma=fed.gamma[j], signal=0.0, grid=5,
                                            r=float(np.hypot(fed.signal, fed.r[j])))
        assert cand.tuning["lam"][j] == pytest.approx(lam, rel=0.05)
        assert risk <= cand.risks[j] <= risk * (1 + 1e-5)


# Two clients, n > d and n < d (a third, gamma = 1, cost 0.5 s more of local ridge search in
# test_cli_outputs, whose routes are the same at any M >= 2).
FED = {"fedrisk_federation": 1, "signal": 1.5,
       "clients": [{"name": "a", "gamma": 0.5, "r": 0.5, "sigma": 1.0},
                   {"name": "c", "gamma": 2.0, "r": 2.0}]}


@pytest.fixture
def fed_file(tmp_path):
    path = tmp_path / "fed.json"
    path.write_text(json.dumps(FED))
    return str(path)


def test_cli_outputs(fed_file, tmp_path, capsys):
    argv = ["advise", "--model", "logistic", "--federation", fed_file, "--global-lam", "0.05",
            "--no-progress"]
    path = tmp_path / "rows.csv"
    assert main(argv + ["--methods", "fedavg,local_ridge", "--json", "--csv", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    direct = riskcalc.logistic_clients_limit(gamma=[0.5, 2.0], r=[0.5, 2.0],
                                             signal=1.5, global_lam=0.05, method="fedavg")
    samples = next(c for c in out["candidates"]
                   if (c["method"], c["weights"]["name"]) == ("fedavg", "samples"))
    assert samples["risks"] == pytest.approx(direct.risk, rel=1e-12)
    assert samples["test_errors"] == pytest.approx(direct.test_error, rel=1e-12)
    assert samples["mean_test_error"] == pytest.approx(np.mean(direct.test_error), rel=1e-12)
    assert out["federation"]["names"] == ["a", "c"]
    means = [c["mean_risk"] for c in out["candidates"]]
    assert len(means) == 3 and means == sorted(means)
    assert out["recommended"]["mean_risk"] == means[0]
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 3 * 2 and {r["name"] for r in rows} == {"a", "c"}
    assert [float(r["test_error"]) for r in rows if (r["method"], r["weights"]) ==
            ("fedavg", "samples")] == pytest.approx(direct.test_error, rel=1e-12)
    assert main(argv + ["--methods", "fedavg"]) == 0
    text = capsys.readouterr().out
    assert "predicted test error" in text and "recommended for the federation: fedavg" in text


@pytest.mark.parametrize("extra, message", [
    ([], "needs --global-lam"),
    (["--global-lam", "0.1", "--signal", "2"], "--signal does not apply"),
    (["--global-lam", "0.1", "--methods", "ftfa"], "methods must be among"),
    (["--global-lam", "0.1", "--max-minutes", "0.001"], "--max-minutes"),
])
def test_cli_refusals(fed_file, extra, message, capsys):
    assert main(["advise", "--model", "logistic", "--federation", fed_file] + extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0], err


@pytest.mark.parametrize("text, match", [
    ("", "an empty name"), ("fedavg,,rtfa", "an empty name"), (" , ", "an empty name"),
    ("fedavg,fedavg", "fedavg more than once"), ("rtfa, pfedme ,rtfa", "rtfa more than once"),
    ("pfedme,fedprox", "pfedme more than once"), ("ftfa", "'ftfa'")])
def test_methods_lists_refused_as_in_the_linear_advise(fed_file, capsys, text, match):
    """--methods under --model logistic: an empty, unknown or repeated pipeline (also under
    its alias) is one error line and exit 2, as in the linear advise, and advise_logistic
    refuses the same list (before anything is solved)."""
    assert main(["advise", "--model", "logistic", "--federation", fed_file, "--global-lam",
                 "0.1", "--methods", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: methods must be among fedavg, rtfa, pfedme, local_ridge "
                          "(fedprox: alias of pfedme), each named once") and match in err
    assert err.count("\n") == 1
    fed = LogisticFederation(gamma=[0.5, 1.0], r=[0.5, 1.0], signal=1.5, global_lam=0.1)
    with pytest.raises(ValueError, match=match):
        advise_logistic(fed, methods=text.split(","))


def test_methods_alias_names_its_pipeline():
    from riskcalc.advise import pipelines
    from riskcalc.advise.logistic import PIPELINES
    from riskcalc.logistic.finite_clients import ALIASES

    assert pipelines(" fedprox,rtfa", PIPELINES, ALIASES) == ("pfedme", "rtfa")
    assert pipelines(None, PIPELINES, ALIASES) == PIPELINES


def test_cli_refuses_logistic_options_in_the_linear_advise(fed_file, capsys):
    assert main(["advise", "--federation", fed_file, "--global-lam", "0.1"]) == 2
    assert "--global-lam applies to --model logistic only" in capsys.readouterr().err
    assert main(["advise", "--model", "logistic", "--data", fed_file, "--global-lam",
                 "0.1"]) == 2
    assert "--data does not apply to --model logistic" in capsys.readouterr().err


def test_a_global_model_that_does_not_exist_is_skipped_with_its_reason():
    # global_lam = 0 with a separable pooled problem (Gordon's margin 0.28 <= 1): FedAvg has no
    # minimizer; local ridge needs none and stays.
    fed = LogisticFederation(gamma=[2.0, 2.0], r=[1.0, 1.0], signal=3.0, global_lam=0.0)
    adv = advise_logistic(fed, methods=["fedavg", "local_ridge"])
    assert [(c.method, c.weights) for c in adv.candidates] == [("local_ridge", "none")]
    assert len(adv.skipped) == 2 and all("separable" in s for s in adv.skipped)
    with pytest.raises(ValueError, match="no candidate could be evaluated"):
        advise_logistic(fed, methods=["fedavg"])
