"""FedAvg (one local step) along the rounds under covariate shift
(``riskcalc.linear.dynamics.shift.one_step``) against independent routes: the shared-spectrum
closed forms (one covariance), the Sigma = I scalar subordination (Sigma_j = c_j I), the
finite-M FedAvg limit under shift (T = inf) and the exact Wishart moments of round 1."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.cli import main
from riskcalc.linear.dynamics.shift.one_step import shift_curves
from riskcalc.linear.dynamics.sigma.fedavg.one_step import fedavg_sigma_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

GAM = np.array([0.5, 1.2, 2.0, 0.8])
R = np.array([0.5, 1.0, 0.3, 0.8])
SIG = np.array([0.5, 1.0, 0.3, 0.7])
P = (1 / GAM) / np.sum(1 / GAM)
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5", "identity", "two-point:1,4,0.5"]
MIXED = ["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "two-point:1,2,0.5", "identity"]


def test_one_covariance_is_the_shared_spectrum_route():
    """One type: the closed forms of ``sigma.fedavg.one_step`` (its own edges by a secular
    equation, its two-point functions in closed form); measured 4e-15."""
    joint = joint_spectrum(["two-point:0.5,2,0.6"] * 3)
    rounds = np.array([0.0, 1, 5, 20, 60, np.inf])
    gam, r, sig = GAM[:3], R[:3], SIG[:3]
    p = (1 / gam) / np.sum(1 / gam)
    a = shift_curves(gam, r, sig, p, 1.5, 0.2, 1.3, rounds, joint)
    b = fedavg_sigma_curves(gam, r, sig, p, 1.5, 0.2, 1.3, rounds, joint.marginal(0))
    np.testing.assert_allclose(a["edges"], b["edges"], rtol=1e-12)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-11, atol=1e-14)


def test_scaled_identities_are_sigma_identity_with_reweighted_clients():
    """Sigma_j = c_j I: FedAvg on X_j = sqrt(c_j) Z_j is FedAvg with Sigma = I, weights
    p_j c_j / C, step eta C (C = sum p c) and noise sigma_j / sqrt(c_j); client i's risk
    is c_i times its Sigma = I risk, the distance unchanged (the same iterates)."""
    gam, r, sig = GAM[:3], R[:3], SIG[:3]
    c = np.array([0.5, 2.0, 1.3])
    p = (1 / gam) / np.sum(1 / gam)
    C = float(np.sum(p * c))
    kw = dict(gamma=gam, r=r, signal=1.5, rounds=[0, 1, 7, 40, np.inf], local_steps=1)
    a = riskcalc.rounds_limit("fedavg", sigma=sig, step_size=0.2,
                              spectra=[f"scaled:{x}" for x in c], **kw)
    b = riskcalc.rounds_limit("fedavg", sigma=sig / np.sqrt(c), step_size=0.2 * C,
                              weights=list(p * c / C), **kw)
    np.testing.assert_allclose(a.risk, c[:, None] * b.risk, rtol=1e-11)
    np.testing.assert_allclose(a.distance_to_fixed_point, b.distance_to_fixed_point,
                               rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(a.diagnostics["edges"], b.diagnostics["edges"], rtol=1e-11)
    assert a.params["spectra"] == [f"scaled:{x}" for x in c]


@pytest.mark.parametrize("specs", [ANTI, MIXED])
def test_fixed_point_is_the_finite_m_fedavg_limit_under_shift(specs):
    """T = inf through the contour (R = 1 / x in every double integral) equals
    ``clients_limit("fedavg", spectra=...)`` (``finite_clients.shift``: pooled least squares,
    another derivation); measured 3e-15."""
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.5,
                                rounds=[np.inf], local_steps=1, step_size=0.15, spectra=specs)
    ref = riskcalc.clients_limit("fedavg", gamma=GAM, sigma=SIG, r=R, spectra=specs)
    np.testing.assert_allclose(res.risk[:, 0], ref.risk, rtol=1e-10)
    assert res.converges and res.distance_to_fixed_point[0] == 0.0


def _round_one(joint, gam, r, sig, p, signal, eta, g):
    """Client i's risk after one round from the exact Wishart moments (valid at every d):
    E[S_j] = Sigma_j, E[S_j M S_j] = Sigma_j M Sigma_j + gamma_j tau(Sigma_j M) Sigma_j for
    diagonal M, independent clients."""
    v, h, t = joint.values, joint.weights, joint.types

    def E(*rows):
        return float(np.prod([v[t[k]] for k in rows], axis=0) @ h)

    M, ge = gam.size, g * eta
    out = np.empty(M)
    for i in range(M):
        SA = sum(p[j] * E(i, j) for j in range(M))
        SAA = sum(p[j] * p[k] * (E(i, j, k) if j != k else E(i, j, j) + gam[j] * E(j) * E(i, j))
                  for j in range(M) for k in range(M))
        bias = (signal ** 2 * (E(i) - 2 * ge * SA + ge ** 2 * SAA)
                + sum(p[j] ** 2 * r[j] ** 2 * ge ** 2 * (E(i, j, j) + gam[j] * E(j) * E(i, j))
                      for j in range(M))
                - 2 * p[i] * r[i] ** 2 * ge * E(i, i) + r[i] ** 2 * E(i))
        var = sum(p[j] ** 2 * sig[j] ** 2 * gam[j] * ge ** 2 * E(i, j) for j in range(M))
        out[i] = bias + var
    return out


@pytest.mark.parametrize("specs, g", [(ANTI, 1.0), (MIXED, 1.7)])
def test_round_one_is_the_exact_wishart_moments(specs, g):
    """Finite T with several covariances on several joint atoms: round 1 in closed form."""
    joint = joint_spectrum(specs)
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.5, rounds=[1],
                                local_steps=1, step_size=0.15, global_step=g, spectra=specs)
    np.testing.assert_allclose(res.risk[:, 0], _round_one(joint, GAM, R, SIG, P, 1.5, 0.15, g),
                               rtol=1e-11)


@pytest.mark.parametrize("kw, match", [
    (dict(local_steps=np.inf, step_size=None, gamma=[0.5, 1.0]), "gamma_j away from 1"),
    (dict(spectrum="two-point:1,2,0.5"), "not both"),
    (dict(gamma=[2.0, 3.0]), "too close to 0"),    # pooled N < d: D near its atom at 0
    (dict(gamma=0.5), "2 client spectra for 1 clients"),
    (dict(spectra=["identity", "two-point:1,2,0.5", "identity"]), "3 client spectra for 2"),
])
def test_refusals(kw, match):
    args = dict(gamma=[0.5, 1.2], r=0.5, sigma=0.5, signal=1.0, rounds=[1], local_steps=1,
                step_size=0.1, spectra=["identity", "two-point:1,2,0.5"])
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", **args)


def test_own_models_and_personalization_answer():
    # Covered: ``shift.own``, ``shift.personalize`` (tests/test_rounds_shift_own.py).
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.2], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[2], local_steps=1, step_size=0.1,
                                spectra=["identity", "two-point:1,2,0.5"])
    assert np.all(np.isfinite(res.local_risk))
    assert np.all(np.isfinite(res.personalized_risk(lam=1.0)))


def _fed(tmp_path):
    clients = [{"gamma": 0.5, "r": 0.5, "sigma": 1.0, "spectrum": "two-point:1,4,0.5"},
               {"gamma": 1.5, "r": 1.0, "sigma": 0.5, "spectrum": "two-point:4,1,0.5"},
               {"gamma": 2.0, "r": 1.5, "sigma": 0.5, "spectrum": "scaled:2"}]
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": clients}))
    return str(path), clients


ARGS = ["--rounds", "0,5,inf", "--local-step-size", "0.1", "--signal", "1"]


def test_cli_predict_reads_the_clients_spectra(capsys, tmp_path):
    path, clients = _fed(tmp_path)
    assert main(["predict", "fedavg", "--federation", path, "--target", "1", "--local-steps",
                 "1", *ARGS, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    order = [1, 0, 2]
    ref = riskcalc.rounds_limit(
        "fedavg", gamma=[clients[j]["gamma"] for j in order], r=[clients[j]["r"] for j in order],
        sigma=[clients[j]["sigma"] for j in order], signal=1.0, rounds=[0, 5, np.inf],
        local_steps=1, step_size=0.1, spectra=[clients[j]["spectrum"] for j in order])
    assert [row["risk"] for row in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    assert rows[0]["params"]["spectra"][0] == "two-point:4,1,0.5"
    assert [row["local_risk"] for row in rows] == pytest.approx(ref.local_risk[0], rel=1e-12)


@pytest.mark.parametrize("argv, match", [
    (["predict", "fedavg", "--local-steps", "2", "--local-step-size", "0.9"],
     "diverges on a client under its covariance"),
    (["compare", "fedavg", "--local-steps", "2", "--local-step-size", "0.9", "--d", "50",
      "--reps", "2"], "diverges on a client under its covariance"),
])
def test_cli_refusals_in_one_line(capsys, tmp_path, argv, match):
    path, _ = _fed(tmp_path)
    # The step size asked replaces ARGS' (argparse would take the last).
    i = ARGS.index("--local-step-size")
    args = ARGS[:i] + ARGS[i + 2:] if "--local-step-size" in argv else ARGS
    assert main([*argv[:2], "--federation", path, *argv[2:], *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and match in err and "\n" not in err


@pytest.mark.parametrize("rounds, seconds, match", [
    (100, 1e-3, "the round map's edges for 2 distinct covariances"),
    (1000, 0.9, "node pairs for 2 clients")])
def test_time_budget_refuses_with_what_would_fit(rounds, seconds, match):
    """The estimates against rounds_limit's max_seconds, before solving: the edges' scan
    (``edge_seconds``), then, once the edges fix the contour, the pairs (``shift_seconds``)."""
    with pytest.raises(ValueError, match=f"{match}.*would take about .* allow more time"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.2], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[rounds], local_steps=1, step_size=0.1,
                              spectra=["identity", "two-point:1,2,0.5"], max_seconds=seconds)


def test_edges_time_estimate_covers_many_covariances(monkeypatch):
    """Many distinct covariances are refused by the edges' estimate before any scan (it
    would take ~10^3 s here): a Newton step on the real axis fails the test."""
    from riskcalc.linear.dynamics.shift.one_step import ShiftLaws, edge_seconds

    def scan(*args):
        raise AssertionError("the edges' scan started")

    monkeypatch.setattr(ShiftLaws, "newton", scan)

    m = 1300
    specs = [f"two-point:{0.3 + j / m:g},{2 + 2 * j / m:g},{0.2 + 0.5 * j / m:g}"
             for j in range(m)]
    assert edge_seconds(m, m + 1) > 600
    with pytest.raises(ValueError, match="edges for 1300 distinct covariances on 1301 joint"):
        riskcalc.rounds_limit("fedavg", gamma=[2.0] * m, r=1.0, sigma=1.0, signal=1.0,
                              rounds=[5], local_steps=1, step_size=0.05, spectra=specs)


def test_chunks_of_the_upper_nodes_sum_to_the_whole(monkeypatch):
    """The double integrals summed one node row at a time equal the one-chunk sums."""
    from riskcalc.linear.dynamics.shift import one_step

    joint = joint_spectrum(MIXED)
    rounds = np.array([2.0, 15.0, np.inf])
    whole = shift_curves(GAM, R, SIG, P, 1.5, 0.15, 1.2, rounds, joint)
    monkeypatch.setattr(one_step, "CHUNK_BYTES", 1.0)
    rows = shift_curves(GAM, R, SIG, P, 1.5, 0.15, 1.2, rounds, joint)
    for key in ("bias", "variance"):
        np.testing.assert_allclose(rows[key], whole[key], rtol=1e-12)


def test_a_band_outside_the_contour_is_detected(monkeypatch):
    """Two bands (two-point 0.05 / 20, small gamma): the edges found enclose both (the
    contour's mass is 1); a bottom edge moved into the gap leaves half the spectrum outside,
    which the mass check reports instead of returning curves."""
    from riskcalc.errors import SolverError
    from riskcalc.linear.dynamics.shift import one_step

    gam = np.array([0.1, 0.2, 0.15])
    p = (1 / gam) / np.sum(1 / gam)
    joint = joint_spectrum(["two-point:0.05,20,0.5", "two-point:0.05,20,0.5", "scaled:0.06"])
    args = (gam, np.full(3, 0.5), np.full(3, 0.5), p, 1.0, 0.05, 1.0, np.array([1.0, 10.0]))
    a, b = one_step.ShiftLaws(joint, gam, p).edges()
    assert a < 0.06 and b > 15.0          # measured at d = 2000: 0.0372 and 19.35
    shift_curves(*args, joint)
    monkeypatch.setattr(one_step.ShiftLaws, "edges", lambda self: (1.0, b))
    with pytest.raises(SolverError, match="encloses 0.5"):
        shift_curves(*args, joint)


def test_a_power_laws_outlying_eigenvalues_stay_inside_the_contour():
    """A power law against flat spectra: its few largest eigenvalues make a narrow band far
    above the bulk, which a walk in growing steps steps over (the real branch is stable in
    the gap too); the per-atom sign test stops it there. T = inf equals the finite-M limit."""
    specs = ["identity", "two-point:1,2,0.5", "powerlaw:1.0,200"]
    gam = [0.5, 1.2, 0.8]
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=0.5, sigma=0.5, signal=1.0,
                                rounds=[3, np.inf], local_steps=1, step_size=0.04,
                                spectra=specs)
    ref = riskcalc.clients_limit("fedavg", gamma=gam, sigma=0.5, r=0.5, spectra=specs)
    np.testing.assert_allclose(res.risk[:, 1], ref.risk, rtol=1e-10)


def test_powerlaw_spectra_take_d(capsys, tmp_path):
    """``powerlaw:P`` in a client's spectrum needs the dimension: rounds_limit's d, the
    command line's --d (passed through, as predict does for the finite-M limits). d = 10: ten
    atoms, where the own models the command line also prints cost 1 s of CPU (measured, loaded:
    2.7 s at d = 20, 6.8 s at d = 40, 38 s and 6 GB resident at d = 100)."""
    path = tmp_path / "fed.json"
    path.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"gamma": 0.5, "r": 0.5, "sigma": 0.5, "spectrum": "powerlaw:1"},
        {"gamma": 1.5, "r": 0.5, "sigma": 0.5, "spectrum": "identity"}]}))
    assert main(["predict", "fedavg", "--federation", str(path), "--local-steps", "1", *ARGS,
                 "--d", "10", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ref = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.5], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[0, 5, np.inf], local_steps=1, step_size=0.1,
                                spectra=["powerlaw:1", "identity"], d=10)
    assert [row["risk"] for row in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    with pytest.raises(ValueError, match="d applies to powerlaw:P in spectra"):
        riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.5], r=0.5, sigma=0.5, signal=1.0,
                              rounds=[1], local_steps=1, step_size=0.1, d=100)
