"""FedAvg along the rounds simulated under covariate shift (``montecarlo.linear.rounds`` with
``spectra``, ``montecarlo.linear.rounds_shift``) against independent routes: the shared-Sigma
simulator (equal covariances), a literal iteration of the algorithm on the sources' columns
(exact given the designs), the joint measure of the theory (alignment), the limit of
``riskcalc.linear.dynamics.shift.one_step`` (K = 1), and ``riskcalc compare`` under shift."""

import json

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import QUANTITIES, simulate_rounds
from montecarlo.linear.rounds_shift import shift_eigenvalues
from montecarlo.runner.seeding import replicate_rng
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.spectrum import ordered_eigenvalues
from tests.helpers import run_cli

GAM = [0.5, 1.2, 2.0, 0.8]
R = [0.5, 1.0, 0.3, 0.8]
SIG = [0.5, 1.0, 0.3, 0.7]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5", "identity", "two-point:1,4,0.5"]
KW = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, local_steps=1, step_size=0.1)


def test_equal_covariances_are_the_shared_simulator():
    """Every Sigma_j equal: the per-client route (its own metric per client, designs drawn per
    client) reproduces the shared-spectrum simulator on the same seed, K = 3 and the fixed
    point included; measured equal to the last bit. The covariances are given as the shared
    route's eigenvalue list (``Spectrum.eigenvalues``, largest first): a SPEC in ``spectra``
    expands in the shared basis order (``ordered_eigenvalues``, smallest first for this one),
    the same law on other columns of the same draws."""
    kw = dict(gamma=GAM[:3], r=R[:3], sigma=SIG[:3], signal=1.2, rounds=[0, 2, 7, np.inf],
              local_steps=3, step_size=0.15, global_step=0.9, d=24, reps=3, seed=5)
    spec = riskcalc.Spectrum.parse("two-point:0.5,3,0.4", 24)
    shift = simulate_rounds("fedavg", **kw, spectra=[spec.eigenvalues(24)] * 3)
    shared = simulate_rounds("fedavg", **kw, spectrum=spec)
    for key in QUANTITIES:
        np.testing.assert_allclose(shift.samples[key], shared.samples[key], rtol=1e-12,
                                   atol=1e-14)
    np.testing.assert_allclose(shift.contraction, shared.contraction, rtol=1e-12)


def test_alignment_is_the_joint_measure_of_the_theory():
    """The rows of the simulated covariances, read coordinate by coordinate, have the joint
    measure ``rounds_limit`` integrates (``joint_spectrum``): anti-aligned two-point spectra
    give the atoms (1, 4) and (4, 1), not (1, 1) and (4, 4)."""
    d = 40
    S = shift_eigenvalues(ANTI, None, np.array(GAM), d)
    joint = joint_spectrum(ANTI, d)
    tuples, counts = np.unique(S[np.unique(joint.types, return_index=True)[1]].T, axis=0,
                               return_counts=True)
    ref = sorted(zip(map(tuple, joint.values.T), joint.weights))
    assert [tuple(t) for t in tuples] == [t for t, _ in ref]
    np.testing.assert_allclose(counts / d, [w for _, w in ref], rtol=1e-12)
    assert {tuple(t) for t in tuples} == {(1.0, 4.0, 1.0), (4.0, 1.0, 1.0)}


def _literal(X, S, p, r, sigma, signal, T, K, eta, g):
    """Client i's risks after T rounds, exactly given the designs X: FedAvg's K gradient steps
    and server step applied literally to a matrix whose columns are the sources (theta_0, each
    u_j, each noise coordinate) scaled by their standard deviations; the expectation of a
    quadratic form is the sum over the columns. Returns (risk, bias, variance, local_risk),
    each (M,)."""
    m, d = len(X), X[0].shape[1]
    n = [x.shape[0] for x in X]
    nsig = (m + 1) * d
    c = nsig + sum(n)
    theta, y = [], []
    for j in range(m):
        th = np.zeros((d, c))
        th[:, :d] = signal / np.sqrt(d) * np.eye(d)
        th[:, (j + 1) * d:(j + 2) * d] = r[j] / np.sqrt(d) * np.eye(d)
        e = np.zeros((n[j], c))
        start = nsig + sum(n[:j])
        e[:, start:start + n[j]] = sigma[j] * np.eye(n[j])
        theta.append(th)
        y.append(X[j] @ th + e)
    w = np.zeros((d, c))
    local = [w] * m
    for _ in range(T):
        local = []
        for j in range(m):
            v = w.copy()
            for _ in range(K):
                v = v - eta * X[j].T @ (X[j] @ v - y[j]) / n[j]
            local.append(v)
        w = w + g * sum(pj * (v - w) for pj, v in zip(p, local))
    err = [S[i][:, None] * (w - theta[i]) ** 2 for i in range(m)]
    bias = np.array([e[:, :nsig].sum() for e in err])
    var = np.array([e[:, nsig:].sum() for e in err])
    own = np.array([np.sum(S[i][:, None] * (local[i] - theta[i]) ** 2) for i in range(m)])
    return bias + var, bias, var, own


@pytest.mark.parametrize("K", [1, 2])
def test_risk_given_the_designs_is_the_literal_iteration(K):
    """Rounds 0, 1 and 3 of three clients with three different covariances (n_j below and
    above d, given weights, g != 1): the closed form in the eigenbasis of D with client i's
    metric Sigma_i against the algorithm run literally on the sources (``_literal``), designs
    X_j = Z_j diag(sqrt(s_j)) rebuilt from the seed's streams; measured agreement 1e-15."""
    d, seed, specs = 6, 11, ["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"]
    gam, r, sig, p = [0.5, 1.5, 0.8], [0.5, 1.0, 0.7], [0.6, 0.3, 0.9], [0.5, 0.3, 0.2]
    rounds = [0, 1, 3]
    sim = simulate_rounds("fedavg", gamma=gam, r=r, sigma=sig, signal=1.3, rounds=rounds,
                          local_steps=K, step_size=0.12, global_step=0.8, weights=p,
                          spectra=specs, d=d, reps=2, seed=seed)
    S = [ordered_eigenvalues(spec, d) for spec in specs]
    assert len({tuple(s) for s in S}) == 3
    for rep in range(2):
        X = [replicate_rng(seed, rep, j, 0).standard_normal((round(d / g), d)) * np.sqrt(S[j])
             for j, g in enumerate(gam)]
        for t, T in enumerate(rounds):
            risk, bias, var, own = _literal(X, S, p, r, sig, 1.3, T, K, 0.12, 0.8)
            for key, ref in (("risk", risk), ("bias", bias), ("variance", var),
                             ("local_risk", own)):
                np.testing.assert_allclose(sim.samples[key][rep, :, t], ref, rtol=1e-11)


def test_prediction_matches_simulation_at_small_d():
    """Four clients, anti-aligned two-point spectra, K = 1, d = 60, 150 replicates: within 4
    standard errors plus the finite-d bias, measured d |sim - pred| / pred <= 0.48 over rounds
    1, 10, 50 at d = 20, 40, 80 (seed 3; 2000, 1000, 400 replicates), allowed 0.8 / d. The
    prediction of the ALIGNED federation (client 1 with client 0's spectrum) fails the same
    check at rounds 10 and 50 for every client (measured 1.7 to 13 bands away): the check
    tells the couplings apart."""
    d, rounds = 60, [1, 10, 50]
    sim = simulate_rounds("fedavg", **KW, rounds=rounds, spectra=ANTI, d=d, reps=150, seed=4)
    pred = riskcalc.rounds_limit("fedavg", **KW, rounds=rounds, spectra=ANTI)
    band = 4 * sim.risk_se + 0.8 / d * pred.risk
    assert np.all(np.abs(sim.risk - pred.risk) <= band)
    aligned = ["two-point:1,4,0.5"] * 2 + ANTI[2:]
    wrong = riskcalc.rounds_limit("fedavg", **KW, rounds=rounds, spectra=aligned)
    assert np.all((np.abs(sim.risk - wrong.risk) > band)[:, 1:])


def _fed(tmp_path):
    clients = [{"name": f"c{j}", "gamma": g, "r": r, "sigma": s, "spectrum": spec}
               for j, (g, r, s, spec) in enumerate(zip(GAM, R, SIG, ANTI))]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "signal": 1.0, "clients": clients}))
    return str(path)


CLI = ["--local-steps", "1", "--local-step-size", "0.1", "--rounds", "1,10", "--d", "40",
       "--reps", "3", "--seed", "2", "--no-progress"]


def test_cli_compare_under_shift(capsys, tmp_path):
    """Both columns: the JSON rows carry rounds_limit's prediction at d (at the ratios d / n_j
    simulated) and simulate_rounds' values on the same seed; the table prints predicted and simulated for each T."""
    path = _fed(tmp_path)
    code, out, err = run_cli(["compare", "fedavg", "--federation", path, "--target", "1",
                              *CLI, "--json"], capsys)
    assert code == 0, err
    rows = json.loads(out)
    order = [1, 0, 2, 3]
    fed = {k: [v[j] for j in order] for k, v in (("gamma", GAM), ("r", R), ("sigma", SIG),
                                                   ("spectra", ANTI))}
    kw = dict(**fed, signal=1.0, rounds=[1, 10], local_steps=1, step_size=0.1)
    # d: the simulation's (no powerlaw:P); at the ratios it realizes (1.2 is 40 / 33).
    pred = riskcalc.rounds_limit("fedavg", **{**kw, "gamma": [40 / round(40 / g)
                                                               for g in fed["gamma"]]})
    sim = simulate_rounds("fedavg", **kw, d=40, reps=3, seed=2)
    assert [r["predicted"]["risk"] for r in rows] == pytest.approx(pred.risk[0], rel=1e-12)
    assert [r["simulated"]["risk"] for r in rows] == pytest.approx(sim.risk[0], rel=1e-12)
    assert [r["simulated"]["risk_se"] for r in rows] == pytest.approx(sim.risk_se[0],
                                                                      rel=1e-12)
    assert [r["predicted"]["local_risk"] for r in rows] == pytest.approx(pred.local_risk[0],
                                                                        rel=1e-12)
    code, out, _ = run_cli(["compare", "fedavg", "--federation", path, *CLI], capsys)
    assert code == 0 and "predicted" in out and "simulated" in out
    table = [line.split() for line in out.splitlines() if line.split()[:1] in (["1"], ["10"])]
    assert len(table) == 2 and all(len(cells) == 5 for cells in table)


@pytest.mark.parametrize("argv, match", [
    (["--local-steps", "2", "--local-step-size", "0.9"], "diverges on a client under its"),
])
def test_cli_compare_refusals_in_one_line(capsys, tmp_path, argv, match):
    """A divergent local step under shift has no prediction (compare refuses, as predict; K =
    inf is ``shift.kinf``'s, personalization after round T ``shift.personalize``'s)."""
    code, _, err = run_cli(["compare", "fedavg", "--federation", _fed(tmp_path), *argv,
                            "--rounds", "1", "--d", "20",
                            "--reps", "2", "--no-progress"], capsys)
    assert code == 2 and err.startswith("error: ") and match in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("kw, match", [
    (dict(spectrum="identity"), "not both"),
    (dict(spectra=ANTI[:2]), "2 client spectra for 4 clients"),
])
def test_simulator_refusals(kw, match):
    args = dict(method="fedavg", **KW, rounds=[1], spectra=ANTI, d=20, reps=2)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        simulate_rounds(args.pop("method"), **args)
