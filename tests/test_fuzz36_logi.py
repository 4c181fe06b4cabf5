"""Issue 32, fuzz36 (logi): what this fuzz found, each test failing before."""

import csv

import pytest

import riskcalc
from montecarlo.runner import budget
from tests.helpers import run_cli

SPEC = riskcalc.Spectrum([1.0, 4.0], weights=[0.5, 0.5])


@pytest.mark.parametrize("kw, name", [
    (dict(gamma=[], signal=1.0, r=1.0, lam=0.1), "gamma"),
    (dict(gamma=1.0, signal=1.0, r=1.0, lam=[], method="local_ridge"), "lam"),
    (dict(gamma=1.0, signal=[], r=1.0, lam=0.1, centre="fedavg"), "signal"),
    (dict(gamma=[], signal=1.0, r=1.0, lam=0.1, spectrum=SPEC), "gamma"),
    (dict(gamma=1.0, signal=1.0, r=[[1.0, 2.0], [1.0]], lam=0.1), "r"),
])
def test_empty_or_ragged_array_named(kw, name):
    """F1: an empty array was "not enough values to unpack (expected 3, got 0)" (an empty
    result under a spectrum), a ragged list numpy's message naming no parameter."""
    with pytest.raises(ValueError, match=f"^{name} must be"):
        riskcalc.logistic_limit(**kw)


def test_compare_memory_refused_before_allocating(monkeypatch, capsys):
    """F2: the one-client logistic simulation had no memory check (the pipeline's and the
    sweep's have one): ``compare rtfa --model logistic --gamma 1e-6 --d 100`` passed the time
    estimate and then printed numpy's "Unable to allocate 74.5 GiB". Here a 1 MiB machine."""
    monkeypatch.setattr(budget, "physical_memory", lambda: float(2 ** 20))
    code, out, err = run_cli(["compare", "rtfa", "--model", "logistic", "--gamma", "1",
                              "--signal", "1", "--r", "1", "--lam", "0.5", "--d", "100",
                              "--reps", "2", "--no-progress"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: the logistic simulation at d = 100 (n = d / gamma = 100 ")
    assert "raise gamma" in err and err.count("\n") == 1


def test_compare_federated_signal_zero_answers(capsys):
    """F3: ``compare --global federated --signal 0`` was "signal must lie in (0, inf)" (the
    pipeline's own check, naming no reason) while ``sweep`` and ``predict`` answer signal 0
    (the replicates measure it; the global model's overlap w_g.w_0 / S^2 is then undefined)."""
    code, out, err = run_cli(["compare", "fedavg", "--model", "logistic", "--gamma", "1",
                              "--signal", "0", "--r", "1", "--global", "federated",
                              "--clients", "2", "--global-lam", "0.1", "--d", "40",
                              "--reps", "2", "--no-progress"], capsys)
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[5:]}
    assert rows["global_overlap"] == ["n/a"] and rows["risk"][-1] in ("yes", "no")


def test_sweep_undefined_quantity_is_not_a_miss():
    """F4: the logistic sweep's ``cosine_inside_ci95`` at r = 0 (the cosine undefined: no
    prediction, no measurement) was False, a disagreement; compare says null."""
    from montecarlo.logistic.sweep import sweep_logistic

    rows = sweep_logistic("rtfa", gamma=[1.0], r=[0.0], signal=1.0, lam=[0.5], d=20, reps=2)
    row = rows[0]
    assert row["predicted_cosine"] is None and row["cosine_inside_ci95"] is None
    assert row["risk_inside_ci95"] in (True, False)


@pytest.mark.parametrize("kw, shown", [
    (dict(lam=100000000.1), "got 100000000.1:"),
    (dict(lam=10000.001, spectrum=SPEC), "got 10000.001:"),
    (dict(lam=0.1, clients=3, global_lam=1000.001), "got 1000.001:"),
])
def test_value_just_past_the_range_shown_apart(kw, shown):
    """F5: a value just past the logistic solvers' measured range was printed in %g, equal to
    the edge: "lam must lie in [0, 1e+08] ..., got 1e+08", "[0, 1000] for rtfa, got 1000"."""
    with pytest.raises(ValueError, match="must lie in") as info:
        riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, **kw)
    assert shown in str(info.value)


@pytest.mark.parametrize("value, why", [("-1", "must lie in [0, inf)"),
                                        ("nan", "must be a finite number")])
def test_advise_global_lam_named_as_the_option(tmp_path, capsys, value, why):
    """F9: ``advise --model logistic --global-lam -1`` said "--federation FED.json: global_lam
    must lie in [0, inf)", blaming the file, which has no global_lam."""
    fed = tmp_path / "fed.json"
    fed.write_text('{"fedrisk_federation": 1, "signal": 1, "clients": [{"gamma": 1, "r": 1}, '
                   '{"gamma": 2, "r": 0.5}]}')
    code, out, err = run_cli(["advise", "--model", "logistic", "--federation", fed,
                              "--global-lam", value, "--no-progress"], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"error: --global-lam {why}") and str(fed) not in err


def test_fedprox_singular_coupling_says_why():
    """F7: pFedMe with sample weights of clients at gamma 1e-16 and 1e10 (pi_j 1 and 1e-26)
    raised numpy's bare LinAlgError "Singular matrix" (``error: Singular matrix`` on the
    command line, "skipped: ... Singular matrix" in advise); then a SolverError naming the
    weights. Session 40 (fuzz40 logi F1): the coupling is inverted per group by
    Sherman-Morrison, never singular here, and the limit answers: client 1 as with a client
    at gamma 1 beside it (its weight 1e-26 moves nothing), client 2 as at gamma 1e6."""
    res = riskcalc.logistic_clients_limit(gamma=[1e-16, 1e10], r=[1.0, 1.0], signal=1.0,
                                          lam=0.5, global_lam=0.01, method="pfedme")
    assert res.risk == pytest.approx([0.0143538145, 1.8157528477], rel=1e-8)


def test_sweep_memory_advice_names_gamma(monkeypatch):
    """F8: the logistic sweep's memory refusal advised "lower --d or the number of clients"
    for an oracle sweep (no clients) at gamma = 1e-6, where n = d / gamma is the cause."""
    from montecarlo.logistic.sweep import sweep_logistic

    monkeypatch.setattr(budget, "physical_memory", lambda: float(2 ** 18))
    with pytest.raises(ValueError, match=r"samples in a replicate at d = 100\) needs .*; "
                                         r"lower d, raise gamma \(in Python; --d, --gamma on "
                                         r"the command line\)$"):
        sweep_logistic("rtfa", gamma=[1.0], r=[1.0], signal=1.0, lam=[0.5], d=100, reps=2)


def test_spectrum_finetune_at_a_zero_client_answers():
    """F10: RTFA at finite M under a spectrum for a client with w_i = 0 (signal 0, r 0) divided
    by ||w_i||_Sigma = 0: "no convergence at lam = 100 (residual nan)" while Sigma = I, FedAvg,
    local ridge and pFedMe answer. Checked by the exact rescaling Sigma = 4 I (lam / 4,
    global_lam / 4, ||.||^2 / 4)."""
    res = riskcalc.logistic_limit(gamma=1.0, signal=0.0, r=0.0, lam=0.2, clients=3,
                                  global_lam=0.08, spectrum=riskcalc.Spectrum([4.0]))
    iso = riskcalc.logistic_limit(gamma=1.0, signal=0.0, r=0.0, lam=0.05, clients=3,
                                  global_lam=0.02)
    assert res.risk == pytest.approx(iso.risk / 4, rel=1e-10)
    assert res.cosine_uncentred != res.cosine_uncentred        # undefined at w_i = 0: NaN


def test_finite_m_cosine_at_a_zero_client_is_undefined(capsys):
    """F11: at finite M (Sigma = I) the cosine between w_hat and w_i = 0 (signal 0, r 0) was
    printed as a number (-4e-25, 1.8e-25: rounding of 0 / norm) and averaged into the mean;
    the one-client route and the spectral routes say n/a."""
    res = riskcalc.logistic_clients_limit(gamma=[1.0, 2.0], r=[0.0, 1.0], signal=0.0,
                                          lam=0.1, global_lam=0.1)
    assert res.cosine_uncentred[0] != res.cosine_uncentred[0] and res.cosine_uncentred[1] > 0
    code, out, err = run_cli(["predict", "rtfa", "--model", "logistic", "--gamma", "1",
                              "--signal", "0", "--r", "0", "--lam", "0.1", "--clients", "3",
                              "--global-lam", "0.1"], capsys)
    assert code == 0 and "  cosine_uncentred n/a\n" in out


def test_pipeline_zero_client_measured(capsys, tmp_path):
    """F12: ``sweep --global federated --signal 0 --r 0`` (w_i = 0) ended in a
    ZeroDivisionError traceback in the pipeline's measurement (the margin along w_i / 0);
    now its undefined cosine is empty and the test error the coin's 0.5."""
    out_csv = tmp_path / "s.csv"
    code, out, err = run_cli(["sweep", "rtfa", "--model", "logistic", "--gamma", "1", "--r",
                              "0", "--signal", "0", "--lam", "0.5", "--global", "federated",
                              "--clients", "2", "--global-lam", "0.1", "--d", "20", "--reps",
                              "2", "--no-progress", "--out", out_csv], capsys)
    assert code == 0, err
    row = next(csv.DictReader(out_csv.open()))
    assert row["simulated_cosine_uncentred"] == "" and row["simulated_test_error"] == "0.5"


def test_one_client_simulation_zero_client_no_warning():
    """F13: ``montecarlo.logistic.ridge.simulate`` at w_i = 0 (signal 0, r 0) formed the
    undefined cosine as 0 / 0, with numpy's "invalid value encountered" RuntimeWarning."""
    import warnings

    from montecarlo.logistic.ridge import simulate

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim = simulate(gamma=1.0, signal=0.0, r=0.0, lams=[0.5], d=20, reps=2)
    assert sim["cosine_uncentred"][0][0] != sim["cosine_uncentred"][0][0]
