"""riskcalc.rounds_limit("fedavg", local_steps=1, spectrum=...) (``sigma.fedavg.one_step``) against
independent routes: the Sigma = I scalar subordination of ``fedavg``, Sigma = c I by rescaling,
the finite-M FedAvg minimizer of ``clients_limit`` (T = inf), one client's gradient descent from
0 of ``steps_limit("local")``, exact Wishart moments at T = 1, the ridgeless kappa for the null
space, eigenvalues of a large draw for the edges, and the literal algorithm simulated at two d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.fedavg import fedavg_curves
from riskcalc.linear.dynamics.sigma.fedavg.one_step import _Laws, edges, fedavg_sigma_curves
from riskcalc.linear.engine.kappa import effective_ridge


GAM = np.array([0.5, 2.0, 1.5])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
ROUNDS = np.array([0, 1, 2, 5, 20, 100, np.inf])


def _moment(spec, k):
    return float(spec.weights @ spec.atoms ** k)


@pytest.mark.parametrize("gam", [GAM, np.array([3.0, 4.0, 6.0])])
def test_identity_spectrum_is_the_scalar_route(gam):
    """The spectrum route at Sigma = I against fedavg's scalar subordination (pooled N > d
    and N < d: the atom of D at 0)."""
    new = fedavg_sigma_curves(gam, R, SIG, P, 1.3, 0.25, 1.2, ROUNDS[:-1],
                              riskcalc.Spectrum([1.0]))
    old = fedavg_curves(gam, R, SIG, P, 1.3, 0.25, 1, 1.2, ROUNDS[:-1])
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-12)
    np.testing.assert_allclose(new["edges"], old["edges"][:2], rtol=1e-12)
    assert new["atom"] == pytest.approx(old["atom"], abs=1e-15)
    assert new["contraction"] == pytest.approx(old["contraction"], rel=1e-12)


def test_scaled_identity_is_a_rescaled_step():
    """Sigma = c I: D = eta c sum p_j W_j and X_j^T eps_j = sqrt(c) Z_j^T eps_j, so the curves
    are those of Sigma = I with step eta c and noise sigma / sqrt(c), the risk (Sigma-weighted)
    times c; the distance is unweighted."""
    c = 2.5
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.1, rounds=ROUNDS,
                                local_steps=1, step_size=0.08, weights=list(P),
                                spectrum=riskcalc.Spectrum([c]))
    ref = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG / np.sqrt(c), signal=1.1,
                                rounds=ROUNDS, local_steps=1, step_size=0.08 * c,
                                weights=list(P))
    np.testing.assert_allclose(res.risk, c * ref.risk, rtol=0, atol=1e-11)
    np.testing.assert_allclose(res.distance_to_fixed_point, ref.distance_to_fixed_point,
                               rtol=0, atol=1e-11)


@pytest.mark.parametrize("weights", ["samples", "uniform", [0.2, 0.5, 0.3]])
def test_fixed_point_is_the_fedavg_minimizer(weights):
    """K = 1: T = inf is gradient descent's limit on the pooled objective, the finite-M FedAvg
    limit with a spectrum (``finite_clients.sigma``)."""
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.3,
                                rounds=[np.inf, 30], local_steps=1, step_size=0.1,
                                weights=weights, spectrum=SPEC)
    ref = riskcalc.clients_limit("fedavg", gamma=GAM, r=R, sigma=SIG, weights=weights,
                                 spectrum=SPEC)
    assert res.converges
    np.testing.assert_allclose(res.bias[:, 0], ref.bias, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.variance[:, 0], ref.variance, rtol=0, atol=1e-10)
    assert res.distance_to_fixed_point[0] == 0.0 < res.distance_to_fixed_point[1]


@pytest.mark.parametrize("gam, g", [(2.0, 1.3), (0.4, 0.7)])
def test_one_client_is_steps_limit_local(gam, g):
    T = [0, 1, 2, 5, 20, 100]
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=0.7, sigma=0.5, signal=1.1, rounds=T,
                                local_steps=1, step_size=0.1, global_step=g, spectrum=SPEC)
    ref = riskcalc.steps_limit("local", gamma=gam, sigma=0.5, rho=np.hypot(1.1, 0.7), steps=T,
                               step_size=0.1 * g, spectrum=SPEC)
    np.testing.assert_allclose(res.bias[0], ref.bias, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.variance[0], ref.variance, rtol=0, atol=1e-12)


@pytest.mark.parametrize("gam", [GAM, np.array([3.0, 4.0, 6.0])])
def test_first_round_is_exact_wishart_moments(gam):
    """T = 1: w_1 = g eta sum_j p_j b_j, whose risk needs tau(Sigma S_j) = E s^2 and
    tau(Sigma S_j^2) = E s^3 + gamma_j E s E s^2 (E[W B W] = B + gamma tau(B) I), tau(Sigma
    S_j S_k) = E s^3 (j != k): every two-point function of the route at low order, M = 3."""
    eta, g, signal = 0.1, 1.4, 1.2
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=R, sigma=SIG, signal=signal, rounds=1,
                                local_steps=1, step_size=eta, global_step=g, weights=list(P),
                                spectrum=SPEC)
    m1, m2, m3 = (_moment(SPEC, k) for k in (1, 2, 3))
    sq = m3 + gam * m1 * m2                                         # tau(Sigma S_j^2)
    ge = g * eta
    bias = (signal ** 2 * (m1 - 2 * ge * m2 + ge ** 2 * (m3 + np.sum(P ** 2 * gam) * m1 * m2))
            + ge ** 2 * np.sum(P ** 2 * R ** 2 * sq) - 2 * P * R ** 2 * ge * m2 + R ** 2 * m1)
    variance = ge ** 2 * m2 * np.sum(P ** 2 * SIG ** 2 * gam)
    np.testing.assert_allclose(res.bias[:, 0], bias, rtol=1e-12)
    np.testing.assert_allclose(res.variance[:, 0], variance, rtol=1e-12)


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_null_space_keeps_its_sigma_weight(weights):
    """Pooled N < d: the fixed point misses theta_0 on the null space of the pooled design,
    tau(Sigma P_null) = E_H[s kappa / (s + kappa)] with the ridgeless kappa of the pooled
    ratio 1 / sum_j (1 / gamma_j), whatever the weights."""
    gam = np.array([3.0, 4.0, 6.0])
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=0.0, sigma=0.0, signal=1.5,
                                rounds=np.inf, local_steps=1, step_size=0.05, weights=weights,
                                spectrum=SPEC)
    kap = float(effective_ridge(1.0 / np.sum(1.0 / gam), 0.0, SPEC))
    ref = 1.5 ** 2 * float(SPEC.weights @ (SPEC.atoms * kap / (SPEC.atoms + kap)))
    np.testing.assert_allclose(res.bias[:, 0], ref, rtol=1e-11)
    assert res.diagnostics["atom_at_zero"] == pytest.approx(1 - np.sum(1 / gam), rel=1e-14)


def test_edges_and_deterministic_equivalent():
    """The edges of A = sum_j p_j S_j (real-axis parametrization) against the density of the
    complex solve: zero 0.5% outside [a, b], positive 0.5% inside; the closed form at
    Sigma = I, M = 1; and the complex solve, delta(z) = tau(Sigma (A - z)^-1), against one
    draw at d = 1200 (to 5 s.d. of its 1 / d fluctuations), with the atom at 0 counted there."""
    for g in (0.3, 2.0):
        np.testing.assert_allclose(edges([1.0], [1.0], np.array([g]), np.array([1.0]))[:2],
                                   [(1 - np.sqrt(g)) ** 2, (1 + np.sqrt(g)) ** 2], rtol=1e-12)
    rng = np.random.default_rng(np.random.SeedSequence(29))
    d = 1200
    s = np.repeat(SPEC.atoms, np.round(SPEC.weights * d).astype(int))
    for gam in (GAM, np.array([3.0, 4.0, 6.0])):
        a, b, mu0 = edges(SPEC.atoms, SPEC.weights, gam, P)
        laws = _Laws(SPEC.atoms, SPEC.weights, gam, P)
        x = np.array([a * 0.995, a * 1.005, b * 0.995, b * 1.005, 0.5 * b + 0.3j])
        _, m = laws.solve(lambda t: x + 1j * t, list(np.geomspace(10.0, 1e-10, 300)), b)
        density = m["delta"][:4].imag / np.pi
        assert np.all(density[[0, 3]] < 1e-6) and np.all(density[[1, 2]] > 1e-3)
        A = np.zeros((d, d))
        for gj, pj in zip(gam, P):
            n = int(round(d / gj))
            X = rng.standard_normal((n, d)) * np.sqrt(s)
            A += pj * X.T @ X / n
        ev, V = np.linalg.eigh(A)
        z = x[-1]
        emp = np.sum((V ** 2 * s[:, None]).sum(axis=0) / (ev - z)) / d
        # Measured fluctuation of this linear statistic: s.d. 5 / d (d = 300..2400).
        assert abs(emp - m["delta"][-1]) < 25.0 / d
        assert abs(np.mean(ev < 1e-8 * ev[-1]) - mu0) < 2.0 / d


@pytest.mark.parametrize("gam", [[0.5, 2.0, 4.0], [3.0, 4.0, 6.0]])
def test_against_the_simulated_algorithm_at_two_d(gam):
    """The literal FedAvg iteration (``montecarlo.linear.rounds``, exact given the designs),
    heterogeneous clients, a two-point spectrum, pooled N > d and N < d, given weights: within
    4 s.e. plus the finite-d gap 1 / d at each d (the risk and the unweighted distance to the
    fixed point), and within 4 s.e. after extrapolation in 1 / d."""
    from montecarlo.linear.rounds import simulate_rounds

    T, eta = [0, 1, 3, 10, 40, np.inf], 0.15
    kw = dict(gamma=gam, r=R, sigma=SIG, signal=1.3, rounds=T, local_steps=1, step_size=eta,
              weights=list(P), spectrum=riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5]))
    theory = riskcalc.rounds_limit("fedavg", **kw)
    sims = {d: simulate_rounds("fedavg", d=d, reps=40, seed=3, **kw) for d in (100, 200)}
    for d, sim in sims.items():
        gap = np.abs(sim.risk - theory.risk)
        assert np.all(gap <= 4 * sim.risk_se + 1.0 / d), (d, gap, sim.risk_se)
        gap = np.abs(sim.global_distance[0] - theory.distance_to_fixed_point)
        assert np.all(gap <= 4 * sim.global_distance_se[0] + 1.0 / d), (d, gap)
    extrap = 2 * sims[200].risk - sims[100].risk
    se = np.hypot(2 * sims[200].risk_se, sims[100].risk_se)
    assert np.all(np.abs(extrap - theory.risk) <= 4 * se + 1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(local_steps=np.inf, gamma=[1.0, 2.0, 1.5]), "gamma_j = 1"),
    (dict(local_steps=1, step_size=0.1,
          spectrum=riskcalc.Spectrum([1.0, 2.0], signal_weights=[0.9, 0.1])), "uniform signal"),
])
def test_refused(kwargs, match):
    args = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0, 5], spectrum=SPEC)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", **{**args, **kwargs})


@pytest.fixture(scope="module")
def three_clients():
    """FedAvg with one local step, three identical clients under SPEC, T = 0, 5, inf (what
    ``predict ... --clients 3`` below computes)."""
    return riskcalc.rounds_limit("fedavg", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                                 rounds=[0, 5, np.inf], local_steps=1, step_size=0.1,
                                 spectrum=SPEC)


def test_refused_beyond_the_own_models(three_clients):
    """The own models are covered (``test_rounds_sigma_local``), and personalization from the
    server model (``test_rounds_sigma_personalize``), and Algorithm 1's finite local steps
    (``test_rounds_sigma_alg1k``), and FedAvg's exact local solves
    (``test_rounds_sigma_kinf``)."""
    assert np.all(np.isfinite(three_clients.local_risk))


def test_command_line_predict_with_a_spectrum(capsys, three_clients):
    """``predict fedavg --rounds ... --local-steps 1 --spectrum SPEC --json``: rows of
    ``rounds_limit`` with the spectrum, the own models its ``local_risk``; K = inf likewise
    (K >= 2: ``test_rounds_sigma_k``)."""
    import json

    from riskcalc.cli import main

    argv = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
            "3", "--signal", "1", "--rounds", "0,5,inf", "--local-step-size", "0.1",
            "--spectrum", "two-point:0.5,3,0.3"]
    assert main([*argv, "--local-steps", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ref = three_clients
    assert [r["risk"] for r in rows] == pytest.approx(ref.risk[0], rel=1e-12)
    assert [r["local_risk"] for r in rows] == pytest.approx(ref.local_risk[0], rel=1e-12)
    assert rows[0]["params"]["spectrum"] == {"atoms": [0.5, 3.0], "weights": [0.3, 0.7]}
    no_eta = [a for k, a in enumerate(argv) if "--local-step-size" not in argv[k - 1:k + 1]]
    assert main([*no_eta, "--local-steps", "inf", "--json"]) == 0   # (no step size with inf)
    rows = json.loads(capsys.readouterr().out)
    exact = riskcalc.rounds_limit("fedavg", gamma=[0.5] * 3, r=0.3, sigma=0.5, signal=1.0,
                                  rounds=[0, 5, np.inf], local_steps=np.inf, spectrum=SPEC)
    assert [r["risk"] for r in rows] == pytest.approx(exact.risk[0], rel=1e-12)
