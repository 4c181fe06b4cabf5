"""FedAvg with K >= 2 local steps along the rounds under covariate shift
(``riskcalc.linear.dynamics.shift.curves``, the pencil ``shift.pencil``) against independent
routes: K = 1 against ``shift.one_step`` (the D-valued subordination), equal covariances
against the shared-spectrum pencil route ``sigma.fedavg.curves``, and the simulated algorithm
(``simulate_rounds(spectra=...)``) at finite d; refusals and the command line."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.cli import main
from riskcalc.linear.dynamics.shift.curves import shift_k_curves
from riskcalc.linear.dynamics.shift.one_step import shift_curves
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

GAM = np.array([0.5, 1.2, 2.0, 0.8])
R = np.array([0.5, 1.0, 0.3, 0.8])
SIG = np.array([0.5, 1.0, 0.3, 0.7])
P = (1 / GAM) / np.sum(1 / GAM)
MIXED = ["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "two-point:1,2,0.5", "identity"]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5", "identity"]
KW = dict(gamma=[0.5, 1.2, 0.8], r=[0.5, 1.0, 0.8], sigma=[0.5, 1.0, 0.7], signal=1.0,
          step_size=0.08)


def _close(a, b, rtol):
    np.testing.assert_allclose(a["edges"], b["edges"], rtol=1e-10)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(a[key], b[key], rtol=rtol, atol=1e-14)


def test_one_local_step_is_the_subordination_route():
    """K = 1 through the pencil with per-client eigenvalues (four clients, four covariances on
    three joint atoms, g != 1) equals ``shift.one_step``'s D-valued subordination (another
    derivation: one unknown per covariance, closed-form two-point traces); measured 2.4e-13."""
    rounds = np.array([0.0, 1, 5, 20, np.inf])
    joint = joint_spectrum(MIXED)
    _close(shift_k_curves(GAM, R, SIG, P, 1.5, 0.15, 1, 1.2, rounds, joint),
           shift_curves(GAM, R, SIG, P, 1.5, 0.15, 1.2, rounds, joint), 1e-9)


def test_equal_covariances_are_the_shared_spectrum_pencil():
    """Every client with one covariance: ``sigma.fedavg.curves`` (``sigma_pencil``, one s per
    atom) with K = 3, given weights; measured 5e-15."""
    gam, r, sig = GAM[:3], R[:3], SIG[:3]
    p = np.array([0.5, 0.2, 0.3])
    rounds = np.array([0.0, 1, 5, 20, np.inf])
    joint = joint_spectrum(["two-point:0.5,2,0.6"] * 3)
    _close(shift_k_curves(gam, r, sig, p, 1.5, 0.15, 3, 1.2, rounds, joint),
           fedavg_sigma_k_curves(gam, r, sig, p, 1.5, 0.15, 3, 1.2, rounds, joint.marginal(0)),
           1e-9)


def test_prediction_matches_simulation_and_tells_the_couplings_apart():
    """Three clients, anti-aligned two-point spectra against an identity, K = 2 and 3, d = 200,
    40 replicates (seed 3): within 4 standard errors plus 1.5 / d of the prediction (measured
    at most 0.36 of that band; max relative gap 0.0039 at d = 200 and 0.0010 at d = 400, 20
    replicates). The prediction with the two-point spectra ALIGNED (client 1 with client 0's)
    falls outside the band from round 20 on for every client (measured 6.7 to 17 bands), the
    K = 2 prediction outside the K = 3 simulation at round 1 (9 to 22 bands): the check can
    fail."""
    d, rounds = 200, [1, 5, 20, np.inf]
    pred, sim = {}, {}
    for K in (2, 3):
        pred[K] = riskcalc.rounds_limit("fedavg", **KW, local_steps=K, rounds=rounds,
                                        spectra=ANTI)
        sim[K] = simulate_rounds("fedavg", **KW, local_steps=K, rounds=rounds, spectra=ANTI,
                                 d=d, reps=40, seed=3)
        band = 4 * sim[K].risk_se + 1.5 / d * pred[K].risk
        assert np.all(np.abs(sim[K].risk - pred[K].risk) <= band)
        assert pred[K].converges and pred[K].params["local_steps"] == K
    aligned = riskcalc.rounds_limit("fedavg", **KW, local_steps=2, rounds=rounds,
                                    spectra=["two-point:1,4,0.5"] * 2 + ["identity"])
    band = 4 * sim[2].risk_se + 1.5 / d * pred[2].risk
    assert np.all((np.abs(sim[2].risk - aligned.risk) > band)[:, 2:])
    band = 4 * sim[3].risk_se + 1.5 / d * pred[3].risk
    assert np.all((np.abs(sim[3].risk - pred[2].risk) > band)[:, 0])


@pytest.mark.parametrize("kw, match", [
    (dict(local_steps=2.5), "local_steps must be one integer"),
    (dict(local_steps=0), "local_steps"),
    (dict(local_steps=np.inf), "fedavg with finite local_steps only"),
    (dict(rounds=[np.inf], global_step=10.0), "rounds=inf: the iteration diverges"),
    (dict(step_size=0.3), "step_size: local gradient descent diverges on a client"),
    (dict(local_steps=9), "M K\\^2 = 243"),
    (dict(gamma=[2.0, 3.0, 8.0]), "pooled N > d"),
    (dict(max_seconds=1e-3), "would take about .* allow more time"),
])
def test_refusals(kw, match):
    args = dict(gamma=[0.5, 1.2, 0.8], r=0.5, sigma=0.5, signal=1.0, rounds=[3],
                local_steps=2, step_size=0.08, spectra=ANTI)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", **args)


def test_own_models_refused_with_the_reason():
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.2], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[2], local_steps=2, step_size=0.1,
                                spectra=["identity", "two-point:1,2,0.5"])
    assert np.all(np.isfinite(res.risk))
    with pytest.raises(ValueError, match="own models"):
        res.local_risk
    with pytest.raises(ValueError, match="not covered"):
        res.personalized_risk(steps=2, step_size=0.1)


def test_cli_compare_runs_local_steps_under_shift(capsys, tmp_path):
    """``riskcalc compare fedavg --federation F --local-steps 2``: the prediction column is
    rounds_limit's (target first), the simulated one simulate_rounds' on the same seed."""
    clients = [{"gamma": g, "r": r, "sigma": s, "spectrum": spec}
               for g, r, s, spec in zip(KW["gamma"], KW["r"], KW["sigma"], ANTI)]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": clients}))
    assert main(["compare", "fedavg", "--federation", str(path), "--local-steps", "2",
                 "--local-step-size", "0.08", "--rounds", "1,10", "--d", "30", "--reps", "2",
                 "--seed", "1", "--no-progress", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    kw = dict(gamma=KW["gamma"], r=KW["r"], sigma=KW["sigma"], spectra=ANTI, signal=1.0,
              rounds=[1, 10], local_steps=2, step_size=0.08)
    pred = riskcalc.rounds_limit("fedavg", **kw)
    sim = simulate_rounds("fedavg", **kw, d=30, reps=2, seed=1)
    assert [r["predicted"]["risk"] for r in rows] == pytest.approx(pred.risk[0], rel=1e-12)
    assert [r["simulated"]["risk"] for r in rows] == pytest.approx(sim.risk[0], rel=1e-12)
