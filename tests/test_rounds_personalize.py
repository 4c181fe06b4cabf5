"""RoundsLimit.personalized_risk (FTFA / RTFA from the server model of round T) against
independent routes: the local baselines at T = 0, the finite-M FTFA (steps) and RTFA limits at
T = infinity, the clients' own models of the rounds (another computation: exact families
instead of quadrature), and the literal algorithm at finite d."""

import numpy as np
import pytest

import riskcalc

GAM = [0.5, 2.0, 1.5]
R = [0.3, 0.6, 1.0]
SIG = [0.4, 0.6, 1.0]


def test_from_the_zero_model_is_the_local_baselines():
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0],
                                local_steps=3, step_size=0.2)
    ftfa, rtfa = res.personalized_risk(steps=7, step_size=0.3), res.personalized_risk(lam=0.4)
    for i in range(3):
        rho = np.hypot(1.0, R[i])
        steps = riskcalc.steps_limit("local", gamma=GAM[i], sigma=SIG[i], rho=rho, steps=7,
                                     step_size=0.3)
        ridge = riskcalc.limit("local_ridge", gamma=GAM[i], sigma=SIG[i], rho=rho, lam=0.4)
        assert ftfa[i, 0] == pytest.approx(steps.risk, rel=1e-10)
        assert rtfa[i, 0] == pytest.approx(ridge.risk, rel=1e-10)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_from_the_fixed_point_is_finite_m_rtfa(weights):
    """K = 1, T = inf: the server model is the FedAvg minimizer, and RTFA from it is
    ``clients_limit("rtfa")`` (heterogeneous clients)."""
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0,
                                rounds=[np.inf], local_steps=1, step_size=0.2, weights=weights)
    ref = riskcalc.clients_limit("rtfa", gamma=GAM, r=R, sigma=SIG, lam=0.4, weights=weights)
    np.testing.assert_allclose(res.personalized_risk(lam=0.4)[:, 0], ref.risk, rtol=1e-10)


def test_from_the_fixed_point_is_finite_m_ftfa_steps():
    res = riskcalc.rounds_limit("fedavg", gamma=[1.5] * 3, r=0.7, sigma=0.5, signal=1.0,
                                rounds=[np.inf], local_steps=1, step_size=0.2)
    ref = riskcalc.steps_limit("ftfa", gamma=1.5, r=0.7, sigma=0.5, steps=5, step_size=0.25,
                               clients=3)
    np.testing.assert_allclose(res.personalized_risk(steps=5, step_size=0.25)[:, 0], ref.risk,
                               rtol=1e-10)


def test_the_local_phase_is_a_personalization_of_the_previous_round():
    """FedAvg's own model of round T + 1 is FTFA with (K, eta) from w_T; Algorithm 1's is RTFA
    with lam from w_T: the families route and the quadrature route agree."""
    rounds = list(range(8)) + [np.inf]
    fed = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0,
                                rounds=rounds, local_steps=4, step_size=0.2, global_step=1.2)
    pers = fed.personalized_risk(steps=4, step_size=0.2)
    np.testing.assert_allclose(pers[:, :7], fed.local_risk[:, 1:8], rtol=1e-10)
    np.testing.assert_allclose(pers[:, -1], fed.local_risk[:, -1], rtol=1e-10)
    alg = riskcalc.rounds_limit("pfedme", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=rounds,
                                local_steps=np.inf, lam=0.7, global_step=1.2)
    np.testing.assert_allclose(alg.personalized_risk(lam=0.7)[:, :7], alg.risk[:, 1:8],
                               rtol=1e-10)


def _literal(d, seed, gam, p, r, sig, s, eta, K, g, T, pi_steps, pi_eta):
    """Exact conditional risk of FTFA (pi_steps steps of size pi_eta) from the FedAvg server
    model after T rounds, on coefficient matrices (theta_0, u_j, eps_j as identity blocks)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    M = len(gam)
    Xs = [rng.standard_normal((int(round(d / gm)), d)) for gm in gam]
    ns = [X.shape[0] for X in Xs]
    offs = np.cumsum([0, d] + [d] * M + ns)
    ys = []
    for j, X in enumerate(Xs):
        y = np.zeros((ns[j], offs[-1]))
        y[:, :d] = X
        y[:, offs[1 + j]:offs[2 + j]] = X
        y[:, offs[1 + M + j]:offs[2 + M + j]] = np.eye(ns[j])
        ys.append(y)

    def gd(v, j, steps, step):
        X = Xs[j]
        for _ in range(steps):
            v = v - step * (X.T @ (X @ v - ys[j]) / ns[j])
        return v

    w = np.zeros((d, offs[-1]))
    for _ in range(T):
        w = (1 - g) * w + g * sum(p[j] * gd(w, j, K, eta) for j in range(M))
    out = []
    for j in range(M):
        e = gd(w, j, pi_steps, pi_eta)
        e[:, :d] -= np.eye(d)
        e[:, offs[1 + j]:offs[2 + j]] -= np.eye(d)
        out.append(s ** 2 * np.sum(e[:, :d] ** 2) / d
                   + sum(r[k] ** 2 * np.sum(e[:, offs[1 + k]:offs[2 + k]] ** 2) / d
                         for k in range(M))
                   + sum(sig[k] ** 2 * np.sum(e[:, offs[1 + M + k]:offs[2 + M + k]] ** 2)
                         for k in range(M)))
    return np.array(out)


def test_against_the_literal_algorithm():
    """FTFA (5 steps of 0.3) after T = 3 FedAvg rounds (K = 2, eta = 0.2, g = 1.2): the exact
    conditional risk at d = 60 and 240 (2 draws each) approaches the limit; within 2% at
    d = 240 (measured: the gap shrinks with d)."""
    gam, T = np.array(GAM), 3
    p = (1 / gam) / np.sum(1 / gam)
    lim = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[T],
                                local_steps=2, step_size=0.2, global_step=1.2)
    want = lim.personalized_risk(steps=5, step_size=0.3)[:, 0]
    gaps = {}
    for d in (60, 240):
        sim = np.mean([_literal(d, seed, gam, p, R, SIG, 1.0, 0.2, 2, 1.2, T, 5, 0.3)
                       for seed in (d, d + 1)], axis=0)
        gaps[d] = np.max(np.abs(sim - want) / want)
    assert gaps[240] < 0.02 and gaps[240] < gaps[60]


@pytest.mark.parametrize("kw, match", [
    ({}, "steps and step_size"), ({"steps": 3}, "steps and step_size"),
    ({"steps": 3, "step_size": 0.1, "lam": 1.0}, "not both"), ({"lam": 0.0}, "lam"),
    ({"steps": 2.5, "step_size": 0.1}, "steps"), ({"steps": -1, "step_size": 0.1}, "steps"),
    ({"steps": 3, "step_size": -0.1}, "step_size")])
def test_bad_input(kw, match):
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[2],
                                local_steps=2, step_size=0.2)
    with pytest.raises(ValueError, match=match):
        res.personalized_risk(**kw)
