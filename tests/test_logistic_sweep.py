"""``riskcalc sweep --model logistic`` (montecarlo.logistic.sweep): the predicted column is the
public limits called point by point, the simulated column is the logistic pipeline's own
simulation, and an interrupted sweep resumes without recomputing finished tasks."""

import pytest

import riskcalc
from montecarlo.logistic import sweep as logistic_sweep
from montecarlo.logistic.pipeline import simulate_pipeline
from montecarlo.logistic.sweep import sweep_logistic
from montecarlo.runner.tasks import load_cache
from riskcalc.cli import main

FEDERATED = ("risk", "cosine_uncentred", "test_logloss", "test_error", "global_overlap",
             "global_dist")


def test_rows_are_direct_limit_calls_and_the_pipelines_simulation():
    rows = sweep_logistic("rtfa", gamma=[1.0, 2.0], r=1.0, signal=1.5, lam=[1.0, 3.0], d=30,
                          clients=[2, 3], global_lam=0.05, reps=2, progress=False)
    assert [(r["gamma"], r["clients"], r["lam"]) for r in rows] == [
        (g, m, lam) for g in (1.0, 2.0) for m in (2, 3) for lam in (1.0, 3.0)]
    for row in rows:
        res = riskcalc.logistic_limit(gamma=row["gamma"], signal=1.5, r=1.0, lam=row["lam"],
                                      clients=row["clients"], global_lam=0.05, method="rtfa")
        for q in FEDERATED:
            assert row[f"predicted_{q}"] == pytest.approx(getattr(res, q), rel=1e-12, abs=0)
    # The simulated column: simulate_pipeline's means with the same seed (its own tasks).
    sim = simulate_pipeline(gamma=2.0, r=1.0, clients=3, signal=1.5, lams=[1.0, 3.0],
                            global_lam=0.05, d=30, reps=2, seed=0)
    for k, row in enumerate(rows[6:]):
        assert row["simulated_risk"] == pytest.approx(sim["rtfa"]["risk"][0][k], rel=1e-12)
        assert row["simulated_global_dist"] == pytest.approx(sim["global"]["dist"][0],
                                                             rel=1e-12)


def test_heterogeneous_and_infinite_client_rows():
    others = {"gamma": [0.5, 2.0], "r": [0.5, 2.0]}
    rows = sweep_logistic("fedavg", gamma=1.0, r=[0.5, 1.0], signal=1.5, d=30, others=others,
                          global_lam=0.05, reps=2, progress=False)
    for row in rows:
        res = riskcalc.logistic_clients_limit(gamma=[1.0, 0.5, 2.0], r=[row["r"], 0.5, 2.0],
                                              signal=1.5, global_lam=0.05, method="fedavg")
        assert row["clients"] == 3 and "lam" not in row
        assert row["predicted_risk"] == pytest.approx(res.risk[0], rel=1e-12)
        assert row["predicted_test_error"] == pytest.approx(res.test_error[0], rel=1e-12)
        assert row["predicted_global_dist"] == pytest.approx(res.global_dist, rel=1e-12)
    rows = sweep_logistic("rtfa", gamma=1.0, r=1.0, signal=1.5, lam=[0.5, 2.0], d=30,
                          centre="fedavg", reps=2, progress=False)
    for row in rows:
        res = riskcalc.logistic_limit(gamma=1.0, signal=1.5, r=1.0, lam=row["lam"],
                                      centre="fedavg")
        assert row["predicted_cosine"] == pytest.approx(res.cosine, rel=1e-12)
        assert row["predicted_risk"] == pytest.approx(res.risk, rel=1e-12)
        assert "global_dist_se" not in row


ARGV = ("sweep rtfa --model logistic --gamma 1,2 --r 1 --signal 1.5 --lam 1,3 --global "
        "federated --clients 2 --global-lam 0.05 --d 30 --reps 3 --no-progress").split()


def test_cli_sweep_resumes_after_an_interrupt(tmp_path, monkeypatch, capsys):
    real = logistic_sweep.replicate_task
    calls = []

    def stop_after_two(task):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(task)
        return real(task)

    cache, out = tmp_path / "c.jsonl", tmp_path / "resumed.csv"
    monkeypatch.setattr(logistic_sweep, "replicate_task", stop_after_two)
    assert main(ARGV + ["--cache", str(cache), "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert len(load_cache(cache)) == 2 and not out.exists()

    calls.clear()
    monkeypatch.setattr(logistic_sweep, "replicate_task", lambda t: calls.append(t) or real(t))
    assert main(ARGV + ["--cache", str(cache), "--out", str(out)]) == 0
    assert len(calls) == 6 - 2                  # 2 grid points x 3 replicates, 2 cached
    assert len(load_cache(cache)) == 6
    fresh = tmp_path / "fresh.csv"
    assert main(ARGV + ["--out", str(fresh)]) == 0
    assert out.read_text() == fresh.read_text()
    assert len(out.read_text().splitlines()) == 1 + 4     # 2 points x 2 lams


@pytest.mark.parametrize("extra, message", [
    ("--sigma 1", "--sigma does not apply to --model logistic"),
    ("--max-minutes 0.0001", "--max-minutes"),
])
def test_cli_sweep_refusals(extra, message, capsys):
    assert main(ARGV + extra.split()) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and message in err[0]


@pytest.mark.parametrize("argv, message", [
    ("sweep ftfa --model logistic --gamma 1 --r 1 --signal 1 --lam 1 --d 20",
     "has no method ftfa: its methods are rtfa and local_ridge without M clients"),
    ("sweep fedavg --model logistic --gamma 1 --r 1 --signal 1 --lam 1 --d 20 --global "
     "federated --clients 2 --global-lam 0.1", "fedavg does not take lam"),
    ("sweep rtfa --model logistic --gamma 1 --r 1 --signal 1 --lam 1 --d 20 --global "
     "federated --clients 2", "needs --global-lam"),
    ("sweep rtfa --model logistic --gamma 1 --r 1 --lam 1 --d 20", "needs --signal"),
    ("sweep rtfa --model logistic --gamma 1 --r 1 --signal 1 --lam 0,1 --d 20",
     "simulates lam > 0 only"),
    ("sweep rtfa --model logistic --gamma 1 --r 1 --signal 1 --lam 1 --d 20 --global "
     "federated --clients 2.5 --global-lam 0.1", "list of integers"),
    ("sweep ftfa --gamma 1 --r 1 --sigma 1 --d 20 --global-lam 0.1",
     "--global-lam applies to --model logistic only"),
])
def test_cli_sweep_bad_input(argv, message, capsys):
    assert main(argv.split()) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_a_spectrum_reaches_both_sides():
    spec = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])
    rows = sweep_logistic("rtfa", gamma=1.0, r=1.0, signal=1.5, lam=1.0, d=30, spectrum=spec,
                          reps=2, progress=False)
    res = riskcalc.logistic_limit(gamma=1.0, signal=1.5, r=1.0, lam=1.0, spectrum=spec)
    assert rows[0]["predicted_sigma_risk"] == pytest.approx(res.sigma_risk, rel=1e-12)
    # The simulation draws x ~ N(0, Sigma): its Sigma-weighted error is not its plain one.
    from montecarlo.logistic.ridge import simulate
    sim = simulate(gamma=1.0, signal=1.5, r=1.0, lams=[1.0], d=30, reps=2, spectrum=spec)
    assert rows[0]["simulated_sigma_risk"] == pytest.approx(sim["sigma_risk"][0][0], rel=1e-12)
    assert rows[0]["simulated_sigma_risk"] != pytest.approx(rows[0]["simulated_risk"], rel=0.1)


def test_predictions_at_the_ratios_the_simulation_realizes():
    """The sweep simulates n_j = round(d / gamma_j) samples, so it predicts at gamma_j = d / n_j
    (as the linear sweep and ``compare --model logistic`` do): at d = 20, gamma 3 has n = 7,
    d / n = 2.857, whose limit differs from gamma 3's by more than the comparison resolves."""
    d, others = 20, {"gamma": [0.7, 2.2], "r": [0.5, 1.0]}
    ratios = [20 / 7, 20 / 29, 20 / 9]       # n = 7, 29, 9 for gamma 3, 0.7, 2.2
    rtfa, = sweep_logistic("rtfa", gamma=3.0, r=1.0, signal=1.0, lam=0.5, d=d, reps=2,
                           progress=False)
    pfedme, = sweep_logistic("pfedme", gamma=3.0, r=1.0, signal=1.0, lam=0.5, d=d,
                             others=others, global_lam=0.5, reps=2, progress=False)
    assert rtfa["n"] == pfedme["n"] == 7 and rtfa["gamma"] == 3.0
    alone = [riskcalc.logistic_limit(gamma=g, signal=1.0, r=1.0, lam=0.5).risk
             for g in (ratios[0], 3.0)]
    fed = [riskcalc.logistic_clients_limit(gamma=g, r=[1.0, 0.5, 1.0], signal=1.0, lam=0.5,
                                           global_lam=0.5, method="pfedme", target=0).risk[0]
           for g in (ratios, [3.0, 0.7, 2.2])]
    for row, (realized, nominal) in ((rtfa, alone), (pfedme, fed)):
        assert row["predicted_risk"] == pytest.approx(realized, rel=1e-12, abs=0)
        assert abs(nominal - realized) > 1e-3 * realized
