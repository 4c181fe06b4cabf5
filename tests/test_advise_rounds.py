"""advise with rounds (issue 30, item 5): FedAvg stopped early, its rounds T and local steps K
chosen on the exact curves of ``riskcalc.rounds_limit``."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import Candidate, Federation, advise
from riskcalc.advise import rounds
from riskcalc.advise.rounds import pfedme_rounds_candidates
from riskcalc.cli import main

FED = dict(gamma=[0.5, 1.5, 2.0, 3.0], r=[0.3, 0.5, 1.0, 1.5], sigma=[1.0, 0.5, 0.5, 0.8])
#: The rounds of ``fedavg_rounds`` (FedAvg's best T is 2-8, pFedMe's 4-5).
ROUNDS = 100


@pytest.fixture(scope="module")
def fedavg_rounds():
    """FedAvg's and pFedMe's advice with ROUNDS rounds on FED, computed once (also the CLI
    test's reference; FedAvg's rounds candidates do not depend on the other methods, and
    advise(rounds=...) computes them whichever are asked: one advise for the FedAvg and
    pFedMe tests saves the second's 14 FedAvg curves, 0.9 s)."""
    return advise(Federation(**FED), methods=["fedavg", "pfedme"], rounds=ROUNDS, signal=1.0)


def test_early_stopping_is_no_worse_than_the_minimizer_and_reads_its_curve(fedavg_rounds):
    """With K = 1 and T -> inf the rounds reach FedAvg's minimizer, so the best (T, K) within
    100 rounds is at most the minimizer's mean risk plus the distance left at T = 100; the
    candidate's risks are those of its curve at its (T, K) (the best T is 2-8: 400 rounds
    checked the same at 0.4 s more)."""
    adv = fedavg_rounds
    for weights in ("samples", "uniform"):
        early = next(c for c in adv.candidates
                     if c.method == "fedavg_rounds" and c.weights == weights)
        plain = next(c for c in adv.candidates if c.method == "fedavg" and c.weights == weights)
        tail = riskcalc.rounds_limit("fedavg", **FED, signal=1.0, rounds=[ROUNDS, np.inf],
                                     local_steps=1, step_size=early.tuning["step_size"],
                                     weights=weights).risk.mean(axis=0)
        assert early.mean_risk <= plain.mean_risk + abs(tail[0] - tail[1]) + 1e-12
        K, eta_early = early.tuning["local_steps"] or np.inf, early.tuning["step_size"]
        curve = riskcalc.rounds_limit("fedavg", **FED, signal=1.0, rounds=range(ROUNDS + 1),
                                      local_steps=K, weights=weights,
                                      step_size=None if np.isinf(K) else eta_early)
        T = early.tuning["rounds"]
        np.testing.assert_allclose(early.risks, curve.risk[:, T], rtol=1e-12)
        assert early.mean_risk == pytest.approx(curve.risk.mean(axis=0).min(), rel=1e-12)


def test_rounds_need_the_signal():
    with pytest.raises(ValueError, match="signal"):
        advise(Federation(**FED), methods=["fedavg"], rounds=50)
    with pytest.raises(ValueError, match="rounds"):
        advise(Federation(**FED), methods=["fedavg"], rounds=0, signal=1.0)


def test_rounds_under_covariate_shift_take_one_local_step_and_read_their_curve():
    """Covariate shift, 150 rounds: K = 1 (``shift.one_step``; K = 2 too costly there:
    estimated 6.1 s, past ``SIGMA_K_ALLOWANCE``), eta = 0.9 * 2 / the largest client top edge
    (here scaled:2 at gamma = 3: 2 (1 + sqrt 3)^2 in closed form, above the two-point clients'
    at most 2 (1 + sqrt 2)^2); the candidate's risks are its curve's at its T, and within 150
    rounds it is at most the minimizer's mean risk (``clients_limit`` under the same spectra:
    another derivation) plus the distance the curve has left at T = 150 (the best T is 9-13:
    300 rounds checked the same at 1.3 s more). A curve estimated beyond ``SHIFT_ALLOWANCE``
    is skipped, with the reason (the next test)."""
    spectra = ["two-point:0.5,2,0.5", "scaled:2"] * 2
    adv = advise(Federation(**FED, spectra=spectra, d=100), methods=["fedavg"], rounds=150,
                 signal=1.0)
    for weights in ("samples", "uniform"):
        early = next(c for c in adv.candidates
                     if c.method == "fedavg_rounds" and c.weights == weights)
        assert early.tuning["local_steps"] == 1
        assert early.tuning["step_size"] == pytest.approx(0.9 / (1 + np.sqrt(3)) ** 2,
                                                          rel=1e-12)
        # T = 0..150 and inf in one call (the same values as separate calls, bit for bit).
        curve = riskcalc.rounds_limit("fedavg", **FED, signal=1.0,
                                      rounds=list(range(151)) + [np.inf], local_steps=1,
                                      step_size=early.tuning["step_size"], weights=weights,
                                      spectra=spectra)
        np.testing.assert_allclose(early.risks, curve.risk[:, early.tuning["rounds"]],
                                   rtol=1e-12)
        mean = curve.risk.mean(axis=0)
        assert early.mean_risk == pytest.approx(mean[:151].min(), rel=1e-12)
        p = [1.0 / g for g in FED["gamma"]] if weights == "samples" else [1.0] * 4
        minimizer = riskcalc.clients_limit("fedavg", **FED, weights=p,
                                           spectra=spectra).risk.mean()
        assert mean[-1] == pytest.approx(minimizer, rel=1e-9)
        assert early.mean_risk <= minimizer + abs(mean[-1] - mean[150]) + 1e-12



def _curves(monkeypatch):
    """The ``(kwargs, result)`` of every ``rounds_limit`` call advise makes, recorded as it
    makes them: a test reads the curves advise computed (checking the arguments it gave)
    instead of computing them a second time."""
    import riskcalc.linear.dynamics as dynamics

    calls, real = [], dynamics.rounds_limit

    def record(*args, **kwargs):
        assert args == ("fedavg",)
        out = real(*args, **kwargs)
        calls.append((kwargs, out))
        return out

    monkeypatch.setattr(dynamics, "rounds_limit", record)
    return calls


def _read(calls, weights, expect):
    """The curves of ``calls`` (``_curves``) at ``weights``, by K, each call's arguments
    checked against ``expect`` (those a direct ``rounds_limit`` call would be given)."""
    out = {}
    for kwargs, curve in calls:
        if kwargs["weights"] != weights:
            continue
        assert kwargs.keys() - {"local_steps"} == expect.keys(), kwargs.keys()
        for key, value in expect.items():
            assert np.array_equal(kwargs[key], value), (key, kwargs[key], value)
        out[kwargs["local_steps"]] = curve.risk
    return out


def test_rounds_under_covariate_shift_try_the_affordable_local_steps(monkeypatch):
    """Covariate shift, 20 rounds: K = 2 is affordable (``spectrum_local_steps``) and wins on
    this federation; the candidate's risks are the K = 2 curve's at its T (``shift.curves``),
    its mean no higher than the K = 1 curve's best, and its notes name the K left out. The
    curves are advise's own ``rounds_limit`` calls (``_curves``), their arguments checked to
    be a direct call's (eta = 0.9 / (1 + sqrt 3)^2, the covariate shift test's closed form):
    computing them again cost 1.2 s."""
    spectra = ["two-point:0.5,2,0.5", "scaled:2"] * 2
    calls = _curves(monkeypatch)
    adv = advise(Federation(**FED, spectra=spectra, d=100), methods=["fedavg"], rounds=20,
                 signal=1.0)
    eta = 0.9 / (1 + np.sqrt(3)) ** 2
    for weights in ("samples", "uniform"):
        early = next(c for c in adv.candidates
                     if c.method == "fedavg_rounds" and c.weights == weights)
        assert early.tuning["local_steps"] == 2
        assert early.tuning["step_size"] == pytest.approx(eta, rel=1e-12)
        curves = _read(calls, weights, dict(FED, signal=1.0, rounds=range(21),
                                            step_size=early.tuning["step_size"],
                                            weights=weights, spectrum=None, spectra=spectra,
                                            max_seconds=rounds.SHIFT_ALLOWANCE))
        assert sorted(curves) == [1, 2]
        np.testing.assert_allclose(early.risks, curves[2][:, early.tuning["rounds"]],
                                   rtol=1e-12)
        assert early.mean_risk <= curves[1].mean(axis=0).min()
        assert "K in {1, 2} under covariate shift; left out: K = 5" in early.notes[0]


def test_rounds_under_covariate_shift_beyond_their_allowance_are_skipped(monkeypatch):
    monkeypatch.setattr(rounds, "SHIFT_ALLOWANCE", 1e-6)
    adv = advise(Federation(**FED, spectra=["two-point:0.5,2,0.5", "scaled:2"] * 2, d=100),
                 methods=["fedavg"], rounds=20, signal=1.0)
    assert all(c.method != "fedavg_rounds" for c in adv.candidates)
    # K = 1 and K = 2 (affordable at 20 rounds), both weightings.
    assert sum("fedavg along the rounds" in s and "advise allows 1e-06 s" in s
               for s in adv.skipped) == 4, adv.skipped


def test_rounds_under_a_spectrum_take_one_local_step_and_reach_the_minimizer():
    """A shared covariance spectrum, 300 rounds: K = 1 (K >= 2 too costly there); the rounds' fixed
    point is FedAvg's minimizer (a different derivation: ``clients_limit``, to 1e-9), and as
    for Sigma = I the best T within 300 rounds is at most that minimizer's mean risk plus the
    distance left at T = 300 on the curve; the risks are the curve's at T."""
    spec = riskcalc.Spectrum.parse("two-point:0.5,2,0.5")
    adv = advise(Federation(**FED, spectrum=spec), methods=["fedavg"], rounds=300, signal=1.0)
    for weights in ("samples", "uniform"):
        early = next(c for c in adv.candidates
                     if c.method == "fedavg_rounds" and c.weights == weights)
        plain = next(c for c in adv.candidates if c.method == "fedavg" and c.weights == weights)
        # K = 2 over 300 rounds is estimated past rounds.SIGMA_K_ALLOWANCE: K = 1 alone.
        assert early.tuning["local_steps"] == 1
        assert any("K in {1} under the covariance spectrum; left out: K = 2" in n
                   for n in early.notes)
        curve = riskcalc.rounds_limit("fedavg", **FED, signal=1.0, rounds=list(range(301)) + [
            np.inf], local_steps=1, step_size=early.tuning["step_size"], weights=weights,
            spectrum=spec)
        mean = curve.risk.mean(axis=0)
        assert mean[-1] == pytest.approx(plain.mean_risk, rel=1e-9)
        assert early.mean_risk <= plain.mean_risk + abs(mean[300] - mean[-1]) + 1e-12
        T = early.tuning["rounds"]
        np.testing.assert_allclose(early.risks, curve.risk[:, T], rtol=1e-12)
        assert early.mean_risk == pytest.approx(mean[:301].min(), rel=1e-12)


def test_cli_reads_the_signal_from_the_federation_file(tmp_path, capsys, fedavg_rounds):
    path = tmp_path / "fed.json"
    clients = [{"gamma": g, "r": r, "sigma": s} for g, r, s in zip(*FED.values())]
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": clients}))
    assert main(["advise", "--federation", str(path), "--methods", "fedavg", "--rounds",
                 str(ROUNDS), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    early = [c for c in out["candidates"] if c["method"] == "fedavg_rounds"]
    assert len(early) == 2 and all(c["limit"] == "rounds" for c in early)
    want = {c.weights: c.mean_risk for c in fedavg_rounds.candidates
            if c.method == "fedavg_rounds"}
    assert {c["weights"]["name"]: c["mean_risk"] for c in early} == pytest.approx(want)
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
    assert main(["advise", "--federation", str(path), "--methods", "fedavg",
                 "--rounds", "60"]) == 2
    assert "signal" in capsys.readouterr().err


def test_pfedme_rounds_reach_the_pfedme_minimizer_and_read_their_curve(fedavg_rounds):
    """pFedMe stopped early (paper 004's Algorithm 1, exact prox) at each pFedMe candidate's
    lam and weights: its rounds' fixed point is pFedMe's minimizer (``clients_limit``, a
    different derivation, to 1e-9), so the best T within ROUNDS = 100 rounds is at most the
    pFedMe candidate's mean risk plus the distance left at T = 100; the risks are the curve's
    at T (the best T is 4-5: 150 rounds checked the same)."""
    adv = fedavg_rounds
    plain = {c.weights: c for c in adv.candidates if c.method == "pfedme"}
    early = {c.weights: c for c in adv.candidates if c.method == "pfedme_rounds"}
    assert set(early) == set(plain) == {"samples", "uniform", "optimal"}
    for name, c in early.items():
        lam = plain[name].tuning["lam"]
        assert c.tuning["lam"] == lam and c.tuning["global_step"] == 1.0 / lam
        np.testing.assert_array_equal(c.p, plain[name].p)
        curve = riskcalc.rounds_limit("pfedme", **FED, signal=1.0,
                                      rounds=list(range(ROUNDS + 1)) + [np.inf],
                                      local_steps=np.inf, lam=lam,
                                      weights=c.p if name == "optimal" else name)
        mean = curve.risk.mean(axis=0)
        np.testing.assert_allclose(curve.risk[:, -1], plain[name].risks, rtol=1e-9)
        assert c.mean_risk <= plain[name].mean_risk + abs(mean[ROUNDS] - mean[-1]) + 1e-12
        np.testing.assert_allclose(c.risks, curve.risk[:, c.tuning["rounds"]], rtol=1e-12)
        assert c.mean_risk == pytest.approx(mean[:ROUNDS + 1].min(), rel=1e-12)


def test_pfedme_rounds_under_a_spectrum_reach_the_pfedme_minimizer():
    """A shared two-point spectrum: the rounds' fixed point (``prox_sigma``, the own models) is
    the pFedMe candidate's risks (``clients_limit("pfedme", spectrum=...)``, a different
    derivation; measured 1e-14) to 1e-9, and the best T within 30 rounds is no worse than the
    candidate plus the distance left at T = 30. Covariate shift: skipped with its reason. The
    candidate is pFedMe's at lam = 1.3 with sample weights (advise tunes 1.33 here; the fixed
    point is the minimizer at any lam: built from clients_limit instead of advise's 0.75 s;
    advise's own pFedMe candidates go through this route in the Sigma = I test above)."""
    spec = riskcalc.Spectrum.parse("two-point:0.5,2,0.5")
    fed = Federation(**FED, spectrum=spec)
    gam = np.array(FED["gamma"])
    plain = Candidate("pfedme", {"lam": 1.3}, "samples", (1 / gam) / np.sum(1 / gam),
                      riskcalc.clients_limit("pfedme", **FED, lam=1.3, weights="samples",
                                             spectrum=spec).risk)
    skipped = []
    (early,) = pfedme_rounds_candidates(fed, 1.0, 30, Candidate, skipped, [plain])
    assert skipped == []
    curve = riskcalc.rounds_limit("pfedme", **FED, signal=1.0, rounds=[30, np.inf],
                                  local_steps=np.inf, lam=plain.tuning["lam"],
                                  weights="samples", spectrum=spec)
    np.testing.assert_allclose(curve.risk[:, -1], plain.risks, rtol=1e-9)
    mean = curve.risk.mean(axis=0)
    assert early.mean_risk <= plain.mean_risk + abs(mean[0] - mean[1]) + 1e-12
    shift = Federation(**FED, spectra=["two-point:0.5,2,0.5", "two-point:1,3,0.5"] * 2)
    assert pfedme_rounds_candidates(shift, 1.0, 20, Candidate, skipped, [plain]) == []
    assert len(skipped) == 1 and "covariate shift" in skipped[0]


def test_advise_checks_rounds_before_the_pipelines():
    """advise(rounds=...) refuses a bad rounds or signal before any pipeline runs (no
    progress reported), not after them."""
    from riskcalc.advise import Federation, advise

    fed = Federation(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.0], sigma=[1.0, 0.5, 0.5])
    for kw, match in ((dict(rounds=-1, signal=1.0), "rounds must be an integer >= 1"),
                      (dict(rounds=2.5, signal=1.0), "rounds must be an integer >= 1"),
                      (dict(rounds=True, signal=1.0), "rounds must be an integer >= 1"),
                      (dict(rounds=float("nan"), signal=1.0), "rounds must be an integer"),
                      (dict(rounds=3), "needs signal"),
                      (dict(rounds=3, signal=-1.0), "signal must lie in")):
        done = []
        with pytest.raises(ValueError, match=match):
            advise(fed, progress=done.append, **kw)
        assert done == []


def test_rounds_under_a_spectrum_tune_the_local_steps_that_fit(monkeypatch):
    """A shared spectrum and few clients and rounds: K = 2 (``sigma.fedavg.curves``, exact) is
    tried beside K = 1, the candidate is the best (T, K) of the two curves (advise's own
    ``rounds_limit`` calls, ``_curves``, their arguments checked to be a direct call's with
    eta = 0.9 * 2 / the clients' top edge, ``weighted_mp.support_edges``), the K left out are
    named with their estimates, and the cost estimate counts the K = 2 curves."""
    from riskcalc.advise import cost
    from riskcalc.advise.rounds import sigma_k_seconds
    from riskcalc.linear.engine import weighted_mp

    spec = riskcalc.Spectrum.parse("two-point:0.5,2,0.5")
    two = dict(gamma=[0.5, 1.5], r=[0.3, 1.0], sigma=[1.0, 0.5])
    fed = Federation(**two, spectrum=spec)
    calls = _curves(monkeypatch)
    adv = advise(fed, methods=["fedavg"], rounds=20, signal=1.0)
    weights = "uniform"
    early = next(c for c in adv.candidates
                 if c.method == "fedavg_rounds" and c.weights == weights)
    eta = early.tuning["step_size"]
    assert eta == pytest.approx(1.8 / weighted_mp.support_edges(1.5, spec)[1], rel=1e-12)
    curves = _read(calls, weights, dict(two, signal=1.0, rounds=range(21), step_size=eta,
                                        weights=weights, spectrum=spec))
    best = min((curves[K].mean(axis=0).min(), K) for K in (1, 2))
    assert early.mean_risk == pytest.approx(best[0], rel=1e-12)
    assert early.tuning["local_steps"] == best[1]
    assert any("K in {1, 2}" in n and "K = 5 (estimated" in n for n in early.notes)
    with_k2 = cost.estimate_seconds(fed, ["fedavg"], 20)["rounds"]
    assert with_k2 >= cost.SAFETY * 2 * sigma_k_seconds(2, 2, 20)
