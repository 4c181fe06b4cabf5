"""Personalization after round T under a shared covariance spectrum
(``riskcalc.linear.dynamics.sigma.personalize_sigma``: FTFA and RTFA from the round-T server
model through an extended pencil) against independent routes: the Sigma = I scalar route of
``personalize`` (quadrature of the scalar subordination), the clients' own models of
``sigma.fedavg.own``/``prox_sigma`` (another pencil: the local phase of round T + 1 is a
personalization of w_T), the local baselines from zero and the finite-M RTFA and FTFA limits
under the spectrum (other modules entirely), and the literal algorithm simulated at two d."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.sigma.personalize_sigma import personalized_sigma


INF = np.inf
SPEC = riskcalc.Spectrum([1.0, 2.5], weights=[0.5, 0.5])
GAM, R, SIG = [0.5, 2.0], [0.4, 0.8], [0.5, 1.0]


@pytest.mark.parametrize("method, gam, kw, pers", [
    ("fedavg", [0.5, 2.0], dict(local_steps=1, step_size=0.15), dict(steps=2, step_size=0.25)),
    ("fedavg", [3.0, 4.0], dict(local_steps=2, step_size=0.15), dict(lam=0.4)),
    ("pfedme", [0.5, 2.0], dict(local_steps=INF, lam=0.7), dict(steps=1, step_size=0.3)),
    ("pfedme", [3.0, 4.0], dict(local_steps=INF, lam=0.7), dict(lam=0.4))])
def test_identity_spectrum_is_the_scalar_route(method, gam, kw, pers):
    """Sigma = I through the extended pencil (the spectrum passed as one atom, which
    ``rounds_limit`` would short-circuit) against ``personalize``'s scalar route, every T
    including 0 and inf; pooled N > d and N < d (D's atom at 0). Measured: 1.5e-14."""
    gam, r, sig, p = np.array(gam), np.array([0.3, 0.8]), np.array([0.4, 0.6]), np.array([.3, .7])
    rounds = np.array([0, 1, 4, 12, INF])
    scalar = riskcalc.rounds_limit(method, gamma=gam, r=r, sigma=sig, signal=1.3,
                                   rounds=rounds, weights=p, global_step=1.2, **kw)
    ref = scalar.personalized_risk(**pers)
    edges = (*scalar.diagnostics["edges"], scalar.diagnostics["atom_at_zero"])
    k = dict(kind="rtfa", lam2=pers["lam"]) if "lam" in pers else dict(
        kind="ftfa", k=pers["steps"], eta2=pers["step_size"])
    bias, var = personalized_sigma(method, gam, r, sig, p, 1.3, rounds, riskcalc.Spectrum([1.0]),
                                   g=1.2, spectrum_edges=edges, **kw, **k)
    np.testing.assert_allclose(bias + var, ref, rtol=0, atol=1e-10)


def test_the_local_phase_is_a_personalization_of_the_previous_round():
    """FedAvg's own model of round T + 1 (``sigma.fedavg.own``'s pencil) is FTFA with (k, eta') =
    (K, eta) from w_T; Algorithm 1's (``prox_sigma``'s) is RTFA with lam' = lam. Measured:
    2e-15."""
    rounds = [0, 1, 4, 5, INF]
    fed = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=rounds,
                                local_steps=2, step_size=0.1, spectrum=SPEC)
    pers = fed.personalized_risk(steps=2, step_size=0.1)
    np.testing.assert_allclose(pers[:, [0, 2, 4]], fed.local_risk[:, [1, 3, 4]], rtol=1e-10)
    alg = riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=rounds,
                                local_steps=INF, lam=0.5, global_step=1.5, spectrum=SPEC)
    pers = alg.personalized_risk(lam=0.5)
    np.testing.assert_allclose(pers[:, [0, 2, 4]], alg.risk[:, [1, 3, 4]], rtol=1e-10)


@pytest.fixture(scope="module")
def fedavg_k1():
    """FedAvg with one local step under SPEC, from zero and at the fixed point."""
    return riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0,
                                 rounds=[0, INF], local_steps=1, step_size=0.15, spectrum=SPEC)


def test_from_zero_and_from_the_fixed_point_are_the_finite_m_limits(fedavg_k1):
    """T = 0: FTFA and RTFA from w_0 = 0 are the local baselines under the spectrum
    (``steps_limit("local")``, ``limit("local_ridge")``, rho^2 = signal^2 + r_i^2); FedAvg
    K = 1, T = inf: the server model is the FedAvg minimizer, so RTFA from it is
    ``clients_limit("rtfa", spectrum=...)`` (heterogeneous clients) and FTFA
    ``steps_limit("ftfa", clients=M, spectrum=...)`` (identical clients); FTFA with 0 steps is
    the server model (``risk``, the scalar route of ``sigma.fedavg.one_step``). Measured: 8e-15, 4e-14."""
    res = fedavg_k1
    ftfa, rtfa = res.personalized_risk(steps=2, step_size=0.1), res.personalized_risk(lam=0.4)
    for i in range(2):
        rho = np.hypot(1.0, R[i])
        steps = riskcalc.steps_limit("local", gamma=GAM[i], sigma=SIG[i], rho=rho, steps=2,
                                     step_size=0.1, spectrum=SPEC)
        ridge = riskcalc.limit("local_ridge", gamma=GAM[i], sigma=SIG[i], rho=rho, lam=0.4,
                               spectrum=SPEC)
        assert ftfa[i, 0] == pytest.approx(steps.risk, rel=1e-10)
        assert rtfa[i, 0] == pytest.approx(ridge.risk, rel=1e-10)
    # No steps: the server model itself (the chain is its root row alone).
    np.testing.assert_allclose(res.personalized_risk(steps=0, step_size=0.1), res.risk,
                               rtol=1e-10)
    ref = riskcalc.clients_limit("rtfa", gamma=GAM, r=R, sigma=SIG, lam=0.4, spectrum=SPEC)
    np.testing.assert_allclose(rtfa[:, 1], ref.risk, rtol=1e-10)
    same = riskcalc.rounds_limit("fedavg", gamma=[0.8] * 2, r=0.7, sigma=0.5, signal=1.0,
                                 rounds=[INF], local_steps=1, step_size=0.15, spectrum=SPEC)
    ref = riskcalc.steps_limit("ftfa", gamma=0.8, r=0.7, sigma=0.5, steps=2, step_size=0.2,
                               clients=2, spectrum=SPEC)
    np.testing.assert_allclose(same.personalized_risk(steps=2, step_size=0.2)[:, 0], ref.risk,
                               rtol=1e-10)


def test_against_the_simulated_algorithm_at_two_d():
    """The literal FedAvg with K = 2 local steps (``montecarlo.linear.rounds``, exact given the
    designs), two heterogeneous clients, a two-point spectrum, then FTFA (2 steps) and RTFA
    from the server model of round T: within 4 s.e. plus the finite-d gap 1 / d at d = 100 and
    200, 40 designs each (measured: the largest gap 0.37 of that allowance, 3.2e-3 at d = 200
    against s.e. 9e-4), and the personalization changes the risk (by more than 5e-3)."""
    from montecarlo.linear.rounds import simulate_rounds

    ftfa, rtfa = dict(steps=2, step_size=0.12), dict(lam=0.5)
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0, 1, 4, INF], local_steps=2,
              step_size=0.15, spectrum=SPEC)
    pred = riskcalc.rounds_limit("fedavg", **kw)
    # The limits do not depend on d: solved once, compared with both simulations.
    wants = [pred.personalized_risk(**pk) for pk in (ftfa, rtfa)]
    for want in wants:
        assert np.all(np.abs(want - pred.risk) > 5e-3)
    for d in (100, 200):
        sim = simulate_rounds("fedavg", d=d, reps=40, seed=3, personalize=[ftfa, rtfa], **kw)
        for pk, want in zip((ftfa, rtfa), wants):
            gap = np.abs(sim.personalized_risk(**pk) - want)
            assert np.all(gap <= 4 * sim.personalized_risk_se(**pk) + 1.0 / d), (d, pk, gap)


def test_refusals_and_command_line(capsys, tmp_path, fedavg_k1):
    """FTFA whose filter overflows at the top of a client's sample spectrum under H is inf (as
    with Sigma = I) without any solve; a pencil beyond ``MAX_UNKNOWNS`` is refused;
    ``predict rtfa --rounds ... --spectrum`` prints the personalized column (the same numbers
    as the Python route)."""
    from riskcalc.cli import main

    res = riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0, 2],
                                local_steps=INF, lam=0.5, spectrum=SPEC)
    assert np.all(res.personalized_risk(steps=200, step_size=3.0) == np.inf)
    with pytest.raises(ValueError, match="M \\(K \\+ k\\)\\^2 = 288 unknowns"):
        res.personalized_risk(steps=11, step_size=0.05)
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps({"fedrisk_federation": 1, "clients": [
        {"name": "a", "gamma": GAM[0], "r": R[0], "sigma": SIG[0]},
        {"name": "b", "gamma": GAM[1], "r": R[1], "sigma": SIG[1]}]}))
    argv = ["predict", "rtfa", "--lam", "0.4", "--federation", str(fed), "--target", "b",
            "--rounds", "0,inf", "--local-steps", "1", "--local-step-size", "0.15", "--signal",
            "1", "--spectrum", "two-point:1,2.5,0.5", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    want = fedavg_k1.personalized_risk(lam=0.4)[1]
    assert [row["personalized_risk"] for row in rows] == pytest.approx(want, rel=1e-12)
