"""The clients' own models after the local steps of round T under covariate shift
(``riskcalc.linear.dynamics.shift.own``, FedAvg with K >= 1) against independent routes: equal
covariances against the shared-spectrum route ``sigma.fedavg.own``, and the simulated algorithm
(``simulate_rounds(spectra=...)``, exact given the designs) on an anti-aligned federation, where
the aligned (shared-spectrum) prediction is rejected, together with the server model's check
there (K = 2, 3: one solve and one simulation per K for both); refusals and the command line."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.cli import main
from riskcalc.linear.dynamics.shift.curves import shift_k_curves
from riskcalc.linear.dynamics.shift.own import own_models_shift
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves
from riskcalc.linear.dynamics.sigma.personalize_sigma import personalized_sigma
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5", "identity"]
ALIGNED = ["two-point:1,4,0.5", "two-point:1,4,0.5", "identity"]
KW = dict(gamma=[0.5, 1.2, 0.8], r=[0.5, 1.0, 0.8], sigma=[0.5, 1.0, 0.7], signal=1.0,
          step_size=0.08)


EQUAL = (np.array([0.5, 2.0]), np.array([0.5, 1.0]), np.array([0.5, 0.3]), np.array([0.7, 0.3]),
         1.5, 0.15)
EQUAL_ROUNDS = np.array([0.0, 1, 5, np.inf])


@pytest.fixture(scope="module")
def equal():
    """K -> ``shift_k_curves`` with every client on one covariance (``EQUAL``, g = 1.2, T =
    ``EQUAL_ROUNDS``), solved once per K for the own models' and the personalizations' checks
    (the same K = 1 solve was made three times)."""
    kept, joint = {}, joint_spectrum(["two-point:0.5,2,0.6"] * 2)

    def run(K):
        if K not in kept:
            kept[K] = shift_k_curves(*EQUAL, K, 1.2, EQUAL_ROUNDS, joint)
        return kept[K], joint
    return run


@pytest.mark.parametrize("K", [1, 2])
def test_equal_covariances_are_the_shared_spectrum_own_models(equal, K):
    """Every client with one covariance: ``sigma.fedavg.own`` (``OwnPencil`` with one s per
    atom, ``SigmaPencil.two_point``) for the own models, given weights, g != 1, T = 0 (the zero
    model) to inf; measured 3e-15 (K = 1), 2e-15 (K = 2)."""
    out, joint = equal(K)
    ours = out["local"]()
    ref = fedavg_sigma_k_curves(*EQUAL, K, 1.2, EQUAL_ROUNDS, joint.marginal(0))["local"]()
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


ROUNDS = [0, 1, 5, 10, 20, np.inf]
PERS = [dict(steps=2, step_size=0.1), dict(lam=2.0)]


@pytest.fixture(scope="module")
def anti():
    """K -> (prediction, simulation at d = 200, seed 3, aligned prediction; K = 1, 2) on ANTI
    at T = ``ROUNDS``, each solved once for the own models', the server model's and the command
    line's checks (the simulation personalized at K = 2; the replicates draw their designs from
    the seed alone, so the rounds each check added left the others' numbers equal within
    rounding: measured 4e-16). 40 replicates at K = 2, whose aligned predictions are the
    nearest to the band; 20 at K = 1 and 3, whose wrong predictions miss it by 9 bands or more
    (half the simulations' CPU)."""
    kept = {}

    def run(K):
        if K not in kept:
            kept[K] = (riskcalc.rounds_limit("fedavg", **KW, local_steps=K, rounds=ROUNDS,
                                             spectra=ANTI),
                       simulate_rounds("fedavg", **KW, local_steps=K, rounds=ROUNDS,
                                       spectra=ANTI, d=200, reps=40 if K == 2 else 20, seed=3,
                                       personalize=PERS if K == 2 else []),
                       riskcalc.rounds_limit("fedavg", **KW, local_steps=K, rounds=ROUNDS,
                                             spectra=ALIGNED) if K < 3 else None)
        return kept[K]
    return run


@pytest.mark.parametrize("K", [1, 2])
def test_against_the_simulation_anti_aligned(anti, K):
    """Two two-point covariances anti-aligned and an identity (the clients' eigenvalues on
    opposite coordinates), K = 1 (``rounds_limit``'s K = 1 route through the pencil) and 2:
    every client's own model within 4 s.e. + 1.5 / d of the simulation at d = 200 (20 reps at
    K = 1, 40 at K = 2; measured at most 0.42 (K = 1; 0.35 with 40 reps), 0.41 (K = 2) of that
    band, 0.39 and 0.42 at d = 400), while the aligned prediction (both two-point clients on
    the same coordinates) is rejected at T = 0, 1, 10, inf (measured up to 12.3 (K = 1; 12.7
    with 40 reps) and 4.5 (K = 2) bands at d = 200, 27 and 9.7 at d = 400). K = 2 also
    personalized from the server model of round T by FTFA (2 steps of 0.1) and RTFA (lam' =
    2): within the band (measured at most 0.42 (FTFA) and 0.50 (RTFA, lam' = 0.5) of it, 0.42
    / 0.49 at d = 400), the aligned prediction up to 4.1 (FTFA) and 3.0 (RTFA) bands away at d
    = 200 (FTFA 8.5 at d = 400)."""
    pred, sim, aligned = anti(K)
    d, old = 200, np.isin(ROUNDS, [0, 1, 10, np.inf])
    band = 4 * sim.local_risk_se + 1.5 / d * pred.local_risk
    assert np.all(np.abs(sim.local_risk - pred.local_risk) <= band)
    # T = 0 is the zero model: (signal^2 + r_i^2) tau(Sigma_i), exactly.
    np.testing.assert_allclose(pred.local_risk[:, 0], (1.0 + np.square(KW["r"]))
                               * np.array([2.5, 2.5, 1.0]), rtol=1e-13)
    miss = np.abs(sim.local_risk - aligned.local_risk) / band
    assert miss[:, old].max() > 4.0, miss
    for q in PERS if K == 2 else []:
        band = 4 * sim.personalized_risk_se(**q) + 1.5 / d * pred.personalized_risk(**q)
        assert np.all(np.abs(sim.personalized_risk(**q) - pred.personalized_risk(**q)) <= band)
        miss = np.abs(sim.personalized_risk(**q) - aligned.personalized_risk(**q)) / band
        assert miss[:, old].max() > 3.0, (q, miss)


def test_server_model_against_the_simulation_tells_the_couplings_apart(anti):
    """The server model on the same federation, K = 2 and 3 (the pencil with K >= 2 local
    steps, ``shift.curves``; moved here from tests/test_rounds_shift_k.py to share the solves
    and simulations above): within 4 standard errors plus 1.5 / d of the prediction (measured
    at most 0.42 of that band (K = 3, 20 replicates; 0.36 with 40); max relative gap 0.0039 at
    d = 200 and 0.0010 at d = 400, 20 replicates). The prediction with the two-point spectra
    ALIGNED (client 1 with client 0's) falls outside the band from round 20 on for every client
    (measured 6.7 to 17 bands), the K = 2 prediction outside the K = 3 simulation at round 1
    (9.5 to 20 bands; 9.8 to 22 with 40 replicates): the check can fail."""
    d, late = 200, np.array(ROUNDS) >= 20
    for K in (2, 3):
        pred, sim, _ = anti(K)
        band = 4 * sim.risk_se + 1.5 / d * pred.risk
        assert np.all(np.abs(sim.risk - pred.risk) <= band)
        assert pred.converges and pred.params["local_steps"] == K
    (pred2, sim2, aligned), (pred3, sim3, _) = anti(2), anti(3)
    band = 4 * sim2.risk_se + 1.5 / d * pred2.risk
    assert np.all((np.abs(sim2.risk - aligned.risk) > band)[:, late])
    band = 4 * sim3.risk_se + 1.5 / d * pred3.risk
    assert np.all((np.abs(sim3.risk - pred2.risk) > band)[:, ROUNDS.index(1)])


def test_cli_compare_runs_local_steps_under_shift(anti, capsys, tmp_path):
    """``riskcalc compare fedavg --federation F --local-steps 2``: the prediction column is
    rounds_limit's (target first; the K = 2 solve above, read at T = 1, 10), the simulated one
    simulate_rounds' on the same seed (moved here from tests/test_rounds_shift_k.py). d = 36:
    every d / gamma_j an integer, so the ratios simulated are the gammas solved above."""
    clients = [{"gamma": g, "r": r, "sigma": s, "spectrum": spec}
               for g, r, s, spec in zip(KW["gamma"], KW["r"], KW["sigma"], ANTI)]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": clients}))
    assert main(["compare", "fedavg", "--federation", str(path), "--local-steps", "2",
                 "--local-step-size", "0.08", "--rounds", "1,10", "--d", "36", "--reps", "2",
                 "--seed", "1", "--no-progress", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    pred = anti(2)[0].risk[0, [ROUNDS.index(1), ROUNDS.index(10)]]
    sim = simulate_rounds("fedavg", **KW, spectra=ANTI, rounds=[1, 10], local_steps=2, d=36,
                          reps=2, seed=1)
    assert [r["predicted"]["risk"] for r in rows] == pytest.approx(pred, rel=1e-12)
    assert [r["simulated"]["risk"] for r in rows] == pytest.approx(sim.risk[0], rel=1e-12)


@pytest.mark.parametrize("kw", [dict(kind="ftfa", k=1, eta2=0.2), dict(kind="rtfa", lam2=0.7)])
def test_equal_covariances_are_the_shared_spectrum_personalization(equal, kw):
    """FTFA and RTFA after round T with one covariance for every client, K = 1: against
    ``sigma.personalize_sigma`` (its own dense pencil and contour), T = 0 (from w_0 = 0) to
    inf; measured 8e-16."""
    (out, joint), (gam, r, sig, p, signal, eta) = equal(1), EQUAL
    ref = personalized_sigma("fedavg", gam, r, sig, p, signal, EQUAL_ROUNDS, joint.marginal(0),
                             local_steps=1, step_size=eta, g=1.2,
                             spectrum_edges=(*out["edges"], 0.0), **kw)
    for a, b in zip(out["personalize"](**kw), ref):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


def test_beyond_the_dense_extended_pencil_refused():
    """M K^2 above ``sigma_pencil.MAX_UNKNOWNS``: refused before any solve, naming the count."""
    pen = SimpleNamespace(M=2, K=11, h=np.ones(2), eta=0.02, V=np.ones((2, 2)))
    with pytest.raises(ValueError, match="M K\\^2 = 242 unknowns"):
        own_models_shift(pen, {}, *([np.ones(2)] * 4), 1.0, np.array([1.0]))


def test_cli_predict_prints_the_own_models(tmp_path, capsys):
    clients = [{"gamma": g, "r": r, "sigma": s, "spectrum": spec}
               for g, r, s, spec in zip(KW["gamma"], KW["r"], KW["sigma"], ANTI)]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": clients}))
    argv = ["predict", "fedavg", "--federation", str(path), "--target", "1", "--local-steps",
            "1", "--local-step-size", "0.08", "--rounds", "1,10"]
    assert main(argv + ["--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    order = [1, 0, 2]
    ref = riskcalc.rounds_limit("fedavg", **{k: [KW[k][j] for j in order] for k in
                                             ("gamma", "r", "sigma")},
                                spectra=[ANTI[j] for j in order], signal=1.0, rounds=[1, 10],
                                local_steps=1, step_size=0.08)
    assert [row["local_risk"] for row in rows] == pytest.approx(ref.local_risk[0], rel=1e-12)
    # FTFA diverges on the target (step 0.2 times the top of its sample spectrum under
    # two-point:4,1 at gamma 1.2, about 13, > 2; under the identity's top, 4.4, it would converge).
    assert main(argv + ["--steps", "2", "--step-size", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "n/a" not in out and "not covered" not in out, out
    cells = out.splitlines()[-4].split()          # T = 10
    assert float(cells[-2]) == pytest.approx(ref.local_risk[0, 1], rel=1e-7), out
    assert float(cells[-1]) == pytest.approx(ref.personalized_risk(steps=2, step_size=0.2)[0, 1],
                                             rel=1e-7), out
    assert "FTFA diverges (converges: false): step_size times the top of its sample" in out
