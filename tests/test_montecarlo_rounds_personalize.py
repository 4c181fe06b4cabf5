"""Personalization after round T in the rounds simulator (issue 29 item 3): FTFA (k gradient
steps on the client's own loss) and RTFA (ridge toward the server model) from the server model
w_T of FedAvg and of paper 004's Algorithm 1, measured on the same replicates as the curves
(``simulate_rounds(personalize=...)``), against the literal algorithms, exact per-draw
identities, ``RoundsLimit.personalized_risk`` at two d, and the command line."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.estimators import personalize as ridge_toward
from montecarlo.linear.rounds import simulate_rounds
from montecarlo.linear.rounds_fedavg import fedavg_conditional
from montecarlo.linear.rounds_columns import source_columns
from montecarlo.linear.rounds_inputs import personalization_filters, personalization_keys
from montecarlo.linear.rounds_propagate import Propagation, curve
from riskcalc.cli import main
from riskcalc.spectrum import Spectrum
from tests.test_montecarlo_rounds import (federation, literal, literal_fixed_point,
                                          literal_sources, top)

INF = np.inf
FTFA, RTFA = {"steps": 4, "step_size": 0.3}, {"lam": 0.6}
GAM, R, SIG = [0.5, 2.0, 1.5], [0.3, 0.6, 1.0], [0.4, 0.6, 1.0]


def literal_personalized(X, Y, targets, s, w, kw):
    """Each client's exact conditional risk of FTFA (explicit gradient steps) or RTFA (the
    dense ridge solve of ``estimators.personalize``) from the server columns w."""
    out = []
    for j, (x, y) in enumerate(zip(X, Y)):
        if "lam" in kw:
            v = ridge_toward(x, y, w, kw["lam"])
        else:
            v = w.copy()
            for _ in range(kw["steps"]):
                v = v - kw["step_size"] * x.T @ (x @ v - y) / x.shape[0]
        out.append(s @ ((v - targets[j]) ** 2).sum(1))
    return np.array(out)


@pytest.mark.parametrize("method,K,lam,g,spectrum", [
    ("fedavg", 3, None, 1.2, Spectrum.two_point(1.0, 3.0, 0.5)),
    ("fedavg", INF, None, 0.8, None),
    ("fedprox", INF, 0.7, 1.2, None),
    ("fedprox", 2, 1.0, 1.0, Spectrum.two_point(0.5, 2.0, 0.5))])
def test_both_routes_equal_the_literal_algorithm(method, K, lam, g, spectrum):
    """Exact given the designs (the source basis as columns): the FedAvg closed form and the
    column propagation against the literal rounds followed by literal FTFA steps / a dense
    ridge solve, at rounds 0 (from the zero model), 1, 4 and the fixed point."""
    X, s, basis, n = federation((0.6, 1.0, 2.0), 14, spectrum)
    p, r, sigma, signal = n / n.sum(), np.array([0.5, 1.0, 1.5]), np.array([0.3, 1.0, .6]), 1.1
    eta = 0.8 / (top(X) + (lam or 0.0))
    rounds, kws = [4, 0, 1, INF], [FTFA, RTFA, {"steps": 0, "step_size": 0.1}]
    Y, targets, _ = literal_sources(X, s, r, sigma, signal)
    hist = literal(method, X, Y, p, K, eta, g, lam, 4)
    fixed = literal_fixed_point(method, X, Y, p, K, eta, lam)
    want = np.array([[literal_personalized(X, Y, targets, s, fixed[0] if np.isinf(t)
                                           else hist[int(t)][0], kw) for t in rounds]
                     for kw in kws]).transpose(0, 2, 1)
    filters = personalization_filters(personalization_keys(kws))
    beta, tgt = source_columns(basis, n, s, r, sigma, signal)
    got = curve(Propagation(method, basis, beta, tgt, s, p, K, eta, g, lam, True), rounds,
                filters)["personalized"]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    if method == "fedavg":
        got = fedavg_conditional(basis, n, s, p, r, sigma, signal, rounds, K, eta, g,
                                 filters)["personalized"]
        np.testing.assert_allclose(got, want, rtol=1e-10)


@pytest.mark.parametrize("measure", ["conditional", "empirical"])
def test_identities_on_every_draw(measure):
    """Per replicate, to 1e-10: zero steps and RTFA with lam = 1e13 leave the server model;
    FedAvg's own model of round T + 1 is FTFA with its (K, eta) from w_T (T = 0: local GD
    from zero); Algorithm 1's (K = inf) is RTFA with its lam from w_T."""
    rounds = [0, 1, 2, 3]
    common = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=rounds, d=40, reps=2,
                  seed=5, measure=measure)
    same = [{"steps": 0, "step_size": 0.2}, {"lam": 1e13}]
    fed = simulate_rounds("fedavg", **common, local_steps=3, step_size=0.25,
                          personalize=same + [{"steps": 3, "step_size": 0.25}])
    alg = simulate_rounds("fedprox", **common, local_steps=INF, step_size=None, lam=0.7,
                          global_step=1.2, personalize=same + [{"lam": 0.7}])
    def samples(sim, kw):
        return sim.personalized[tuple(sorted(personalization_keys([kw])[0].items()))]["samples"]

    for sim in (fed, alg):
        for kw in same:
            np.testing.assert_allclose(samples(sim, kw), sim.samples["global_risk"], rtol=1e-10)
    np.testing.assert_allclose(samples(fed, {"steps": 3, "step_size": 0.25})[..., :-1],
                               fed.samples["local_risk"][..., 1:], rtol=1e-10)
    np.testing.assert_allclose(samples(alg, {"lam": 0.7})[..., :-1], alg.samples["risk"][..., 1:],
                               rtol=1e-10)


@pytest.mark.parametrize("method,kw", [
    ("fedavg", dict(local_steps=3, step_size=0.2, global_step=1.2)),
    ("pfedme", dict(local_steps=INF, step_size=None, lam=0.7, global_step=1.2))])
def test_simulation_approaches_the_limit_in_d(method, kw):
    """Exact conditional risks given the designs (4 replicates at d = 60, 3 at 240) against
    ``RoundsLimit.personalized_risk``, FTFA and RTFA, every client and round. The simulated
    risks carry an O(1/d) finite-size bias (real Gaussian designs; measured d * relative gap
    <= 2.2 at d = 60, 120, 240, 480 for FedAvg) and design-to-design spread of the same order,
    so each entry must lie within 3 s.e. + 3/d (relative) of the limit, and the largest
    relative gap must shrink with d (measured: FedAvg 2.8% at d = 60, 0.9% at 240; Algorithm 1
    2.2% and 0.9%)."""
    rounds = [0, 1, 3, INF]
    common = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=rounds, **kw)
    pred = riskcalc.rounds_limit(method, **common)
    gaps = {}
    for d, reps in ((60, 4), (240, 3)):
        sim = simulate_rounds(method, **common, d=d, reps=reps, seed=1, measure="conditional",
                              personalize=[FTFA, RTFA])
        gaps[d] = 0.0
        for pk in (FTFA, RTFA):
            want, got = pred.personalized_risk(**pk), sim.personalized_risk(**pk)
            gaps[d] = max(gaps[d], np.max(np.abs(got - want) / want))
            assert np.all(np.abs(got - want) <= 3 * sim.personalized_risk_se(**pk)
                          + 3.0 * want / d)
    assert gaps[240] < 0.6 * gaps[60], gaps


def test_compare_prints_predicted_and_simulated_ftfa(capsys):
    argv = ["compare", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1",
            "--clients", "3", "--local-steps", "5", "--local-step-size", "0.1", "--rounds",
            "0,3,inf", "--steps", "5", "--step-size", "0.2", "--d", "80", "--reps", "3",
            "--seed", "2", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    kw = dict(gamma=[2.0] * 3, r=[1.0] * 3, sigma=[0.5] * 3, signal=1.0, rounds=[0, 3, INF],
              local_steps=5, step_size=0.1)
    pred = riskcalc.rounds_limit("fedavg", **kw).personalized_risk(steps=5, step_size=0.2)
    sim = simulate_rounds("fedavg", **kw, d=80, reps=3, seed=2,
                          personalize=[{"steps": 5, "step_size": 0.2}])
    assert [r["rounds"] for r in rows] == [0, 3, None]
    for t, row in enumerate(rows):
        assert row["predicted"]["personalized_risk"] == pytest.approx(pred[0, t], rel=1e-12)
        assert row["simulated"]["personalized_risk"] == pytest.approx(
            sim.personalized_risk(steps=5, step_size=0.2)[0, t], rel=1e-12)
        assert row["simulated"]["personalized_risk_se"] > 0
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "FTFA: 5 steps of 0.2" in out and out.count("rel.diff") == 2
    fedprox = ["compare", "fedprox", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5",
               "--signal", "1", "--clients", "2", "--lam", "0.7", "--local-steps", "inf",
               "--rounds", "2", "--steps", "3", "--step-size", "0.3", "--d", "30", "--reps",
               "2", "--no-progress", "--json"]
    assert main(fedprox) == 0
    assert "personalized_risk" in json.loads(capsys.readouterr().out)[0]["simulated"]


@pytest.mark.parametrize("entry, match", [
    ({"steps": -1, "step_size": 0.1}, "steps"), ({"steps": 2.5, "step_size": 0.1}, "steps"),
    ({"steps": 3}, "steps and step_size"), ({"lam": 0.0}, "lam"),
    ({"steps": 3, "step_size": 0.1, "lam": 1.0}, "not both"), ({"alpha": 1.0}, "alpha")])
def test_bad_personalization(entry, match):
    with pytest.raises(ValueError, match=match):
        simulate_rounds("fedavg", gamma=[1.0], r=[1.0], sigma=[0.5], signal=1.0, rounds=[1],
                        local_steps=1, step_size=0.1, d=10, reps=2, personalize=[entry])


def test_bad_input_on_the_command_line_and_unsimulated_reads(capsys):
    argv = ["compare", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--signal", "1",
            "--local-steps", "2", "--local-step-size", "0.1", "--rounds", "1", "--d", "20",
            "--reps", "2", "--no-progress"]
    for extra, match in ((["--steps", "-1", "--step-size", "0.2"], "steps"),
                         (["--steps", "3", "--step-size", "0"], "step_size"),
                         (["--steps", "3"], "go together")):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and match in err
    sim = simulate_rounds("fedavg", gamma=[1.0], r=[1.0], sigma=[0.5], signal=1.0, rounds=[1],
                          local_steps=1, step_size=0.1, d=10, reps=2, personalize=[RTFA])
    with pytest.raises(ValueError, match="not simulated"):
        sim.personalized_risk(steps=1, step_size=0.1)
