"""Finite personalization steps from the finite-M FedAvg model
(riskcalc.linear.steps.finite_clients) and the general pencil engine behind it
(riskcalc.linear.engine.resolvent_pencil)."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc import ClientSpec, Spectrum
from riskcalc.linear.steps import limits as finite_steps
from riskcalc.linear.finite_clients.identity import assemble, subordination
from riskcalc.linear.finite_clients.sigma import sigma_group_limits
from riskcalc.linear.steps.finite_clients import clients_steps_limit, steps_group_limits
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.engine.resolvent_chain import chain_traces
from riskcalc.linear.engine.resolvent_pencil import pencil_traces
from tests.helpers import run_cli

TWO = Spectrum.two_point(1.0, 4.0, 0.5)
THREE = Spectrum([0.5, 1.0, 3.0], weights=[0.3, 0.4, 0.3])


def _pencil(k, n_atoms):
    E = np.zeros((1, k, k))
    L = np.zeros((1, k, k, n_atoms))
    L[0, np.arange(k), np.arange(k)] = 1.0
    return E, L


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_pencil_exact_moments(gamma):
    """tau(Sigma S) = E_H[s^2] and tau(Sigma S Sigma S) = E_H[s^4] + gamma E_H[s^2]^2 (the
    second moment of a Wishart matrix), from a pencil of identity blocks and S couplings."""
    s, w = THREE.atoms, THREE.weights
    E, L = _pencil(4, s.size)
    E[0, 0, 1] = E[0, 2, 3] = -1.0          # N = S
    L[0, 1, 2] = -s                          # N = Sigma
    T = pencil_traces([gamma], s, w, E, L)[0]
    m2, m4 = w @ s ** 2, w @ s ** 4
    assert T[0, 1] == pytest.approx(m2, rel=1e-13)
    assert T[0, 3] == pytest.approx(m4 + gamma * m2 ** 2, rel=1e-13)


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_pencil_matches_resolvent_chain(gamma):
    """A bidiagonal chain of resolvents (diagonal E): the general pencil's C = E (I + gamma T
    E)^-1 against resolvent_chain's (diag(eta) + gamma T)^-1."""
    s, w = TWO.atoms, TWO.weights
    lam, p, om = 0.5, 0.3, 0.7
    mids = [s, np.ones(2), s * s, s]
    ref = chain_traces(gamma, s, w, np.array([lam, lam, 1 / p, 1 / p]),
                       np.array([np.ones(2), np.ones(2), om * s, om * s]), np.array(mids))
    E, L = _pencil(4, 2)
    E[0, [0, 1, 2, 3], [0, 1, 2, 3]] = [1 / lam, 1 / lam, p, p]
    L[0, 2, 2] = L[0, 3, 3] = om * s
    for a in range(3):
        L[0, a, a + 1] = -mids[a]
    assert pencil_traces([gamma], s, w, E, L)[0, 0, 3] == pytest.approx(float(ref), rel=1e-12)


def test_pencil_matches_simulation():
    """A mixed chain tau(Sigma q(S)^2 K Sigma K q(S)) (polynomial and resolvent blocks) against
    its sample value at d = 1000 (fluctuations O(1/d))."""
    rng = np.random.default_rng(3)
    d, gamma, eta, p, om = 1000, 2.0, 0.1, 0.4, 0.8
    s = np.repeat(TWO.atoms, d // 2)
    X = rng.standard_normal((int(d / gamma), d)) * np.sqrt(s)
    S = X.T @ X / X.shape[0]
    q = np.eye(d) - eta * S
    K = np.linalg.inv(p * S + om * np.diag(s))
    sample = np.trace(np.diag(s) @ q @ q @ K @ np.diag(s) @ K @ q) / d
    E, L = _pencil(6, 2)
    for a in (0, 1, 4):
        E[0, a, a + 1], L[0, a, a + 1] = eta, -1.0            # N = q = 1 - eta S
    E[0, 2, 2] = E[0, 3, 3] = p
    L[0, 2, 2] = L[0, 3, 3] = om * TWO.atoms
    L[0, 2, 3], L[0, 3, 4] = -TWO.atoms, -1.0
    theory = pencil_traces([gamma], TWO.atoms, TWO.weights, E, L)[0, 0, 5]
    assert sample == pytest.approx(theory, rel=0.02)


@pytest.mark.parametrize("spectrum", [None, TWO])
@pytest.mark.parametrize("gamma", [0.5, 1.5])
@pytest.mark.parametrize("clients", [2, 5, 20])
def test_zero_steps_is_fedavg(spectrum, gamma, clients):
    """k = 0 keeps the global model: the finite-M FedAvg limit."""
    res = riskcalc.steps_limit("rtfa", gamma=gamma, r=1.0, sigma=0.5, lam=0.3, steps=0,
                               step_size=0.1, spectrum=spectrum, clients=clients)
    ref = riskcalc.limit("fedavg", gamma=gamma, r=1.0, sigma=0.5, spectrum=spectrum,
                         clients=clients)
    assert res.bias == pytest.approx(ref.bias, rel=1e-12)
    assert res.variance == pytest.approx(ref.variance, rel=1e-12)


@pytest.mark.parametrize("spectrum", [TWO, THREE])
@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_many_steps_give_finite_clients_limit(spectrum, gamma):
    """k -> infinity: RTFA with the step size that balances the ends of the spectrum (the atom
    at 0 included for gamma > 1) converges geometrically at rate max |1 - eta (s + lam)| <= 0.8,
    so 100 steps leave a relative error < 1e-9."""
    lam = 3.0
    lo, hi = riskcalc.linear.engine.weighted_mp.support_edges(gamma, spectrum)
    lo = lo if gamma < 1 else 0.0
    eta = 2.0 / (lo + hi + 2 * lam)
    assert (hi - lo) / (hi + lo + 2 * lam) <= 0.8
    b, v = steps_group_limits("rtfa", [gamma], [1.0], [0.5], [5], [lam], "samples", spectrum,
                              100, eta)
    bi, vi = sigma_group_limits("rtfa", [gamma], [1.0], [0.5], [5], [lam], "samples", spectrum)
    assert b[0, -1] == pytest.approx(bi[0], rel=1e-9)
    assert v[0, -1] == pytest.approx(vi[0], rel=1e-9)


@pytest.mark.parametrize("method,lam", [("ftfa", None), ("rtfa", 0.5)])
@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_many_clients_give_oracle_steps_limit(method, lam, gamma):
    """M -> infinity: the oracle-centre steps limit (finite_steps, contour integrals), to the
    O(1/M) of the global model's error."""
    kw = dict(gamma=gamma, r=1.0, sigma=0.5, lam=lam, steps=[1, 7], step_size=0.08,
              spectrum=TWO)
    res = riskcalc.steps_limit(method, clients=10 ** 8, **kw)
    ref = riskcalc.steps_limit(method, **kw)
    np.testing.assert_allclose(res.bias, ref.bias, rtol=1e-6)
    np.testing.assert_allclose(res.variance, ref.variance, rtol=1e-6)


@pytest.mark.parametrize("method,lam", [("ftfa", None), ("rtfa", 0.5)])
def test_one_client_is_least_squares_for_every_k(method, lam):
    """M = 1, gamma < 1: the global model is the client's least squares, where the gradient
    vanishes, so every step keeps it (R_k + S g_k = I): bias 0, variance
    sigma^2 gamma / (1 - gamma) for any spectrum."""
    res = riskcalc.steps_limit(method, gamma=0.5, r=1.0, sigma=0.5, lam=lam,
                               steps=[0, 3, 12], step_size=0.05, spectrum=THREE, clients=1)
    np.testing.assert_allclose(res.bias, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.variance, 0.25, rtol=1e-12)


@pytest.mark.parametrize("method,lam", [("ftfa", 0.0), ("rtfa", 0.4)])
@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_identity_matches_marchenko_pastur_quadrature(method, lam, gamma):
    """Sigma = I: every trace is one Marchenko-Pastur integral of the polynomial filter
    R_k(s) = q^k + c sum_(m<k) q^m against the subordination of finite_clients.identity
    (its ``assemble``), by Gauss-Chebyshev quadrature: a route free of pencils."""
    k, eta, m = 6, 0.12, 5
    gam, r, sig, count = (np.array([x]) for x in (gamma, 1.0, 0.5, m))
    p, g, x, u, var_r = subordination(gam, count, "samples")
    P, U = p[:, None], u[:, None]
    c = eta * lam

    def R(s):
        q = 1.0 - eta * (s + lam)
        return q ** k + c * sum(q ** j for j in range(k))

    def f(s):
        return R(s) ** 2

    J = mp_expect(gam, lambda s: (
        f(s), f(s) / (P * (s + U)) ** 2, f(s) * s / (P * (s + U)) ** 2,
        f(s) * s * s / (P * (s + U)) ** 2, f(s) * s / (P * (s + U)),
        R(s) * (1 - R(s)) / (P * (s + U))))
    own = finite_steps.filter_integrals(gamma, lam, k, eta)[1]
    D = (x ** 2 + var_r) / p ** 2
    E1 = (x - u * (x ** 2 + var_r)) / p ** 2
    E2 = (1.0 - 2.0 * u * x + u ** 2 * (x ** 2 + var_r)) / p ** 2
    bias, var = assemble(r, sig, gam, p, count, g, D, var_r / p ** 2, E2, E1, J,
                         np.array([own]))
    res = riskcalc.steps_limit(method, gamma=gamma, r=1.0, sigma=0.5, steps=k, step_size=eta,
                               clients=m, lam=lam if method == "rtfa" else None)
    assert res.bias == pytest.approx(bias[0], rel=1e-10)
    assert res.variance == pytest.approx(var[0], rel=1e-10)


def test_heterogeneous_federation_matches_homogeneous():
    """clients_steps_limit with M equal clients is steps_limit(..., clients=M)."""
    b, v = clients_steps_limit("rtfa", gamma=[2.0] * 4, sigma=0.5, r=1.0, lam=0.3, steps=[2, 5],
                               step_size=0.1, spectrum=TWO)
    ref = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.3, steps=[2, 5],
                               step_size=0.1, spectrum=TWO, clients=4)
    np.testing.assert_allclose(b, ref.bias, rtol=1e-12)
    np.testing.assert_allclose(v, ref.variance, rtol=1e-12)


def test_divergent_step_size_keeps_value_with_note():
    """eta = 0.2 with {1, 4} at gamma = 2 is past the stability limit: the exact (huge,
    growing) value and a note saying the iteration diverges."""
    res = riskcalc.steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=[5, 10],
                               step_size=0.2, spectrum=TWO, clients=5)
    assert res.risk[1] > 100 * res.risk[0] > 0
    assert any("diverges" in n for n in res.notes)


def test_optimal_steps_minimizes_the_curve():
    """optimal_steps is the integer minimizer of the exact curve, interior here."""
    kw = dict(gamma=2.0, r=1.0, sigma=1.0, step_size=0.05, spectrum=TWO, clients=5)
    best = riskcalc.optimal_steps("ftfa", max_steps=40, **kw)
    curve = riskcalc.steps_limit("ftfa", steps=np.arange(41), **kw).risk
    k = best.params["steps"]
    assert 0 < k < 40 and best.risk == pytest.approx(curve.min(), rel=1e-14)
    assert curve[k] < curve[k - 1] and curve[k] <= curve[k + 1]


def test_cli_steps_with_clients(tmp_path, capsys):
    """predict --clients M --steps K --step-size ETA (and --clients-file) give the Python
    value; --steps with a method that has no steps limit is one clear error. In this process
    (``run_cli``): predict's entry point in a child process is tests/test_cli_predict.py's."""
    argv = ["predict", "rtfa", "--gamma", "2", "--r", "1", "--sigma", "0.5", "--lam", "0.5",
            "--spectrum", "two-point:1,4,0.5", "--steps", "10", "--step-size", "0.05", "--json"]
    code, out, err = run_cli([*argv, "--clients", "5"], capsys)
    assert code == 0, err
    res = riskcalc.steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.5, steps=10,
                               step_size=0.05, spectrum=TWO, clients=5)
    assert json.loads(out)["risk"] == pytest.approx(res.risk, rel=1e-12)
    fed = tmp_path / "fed.json"
    fed.write_text(json.dumps([{"gamma": 2.0, "r": 1.0, "sigma": 0.5}] * 4))
    code, out, err = run_cli([*argv, "--clients-file", fed], capsys)
    assert code == 0 and json.loads(out)["risk"] == pytest.approx(res.risk, rel=1e-12), err
    code, out, err = run_cli(["predict", "fedavg", "--gamma", "2", "--r", "1", "--sigma", "0.5",
                              "--clients", "5", "--steps", "3", "--step-size", "0.1"], capsys)
    assert code == 2 and out == "" and err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("method,gamma,clients", [("ftfa", 2.0, 5), ("rtfa", 0.5, 2)])
def test_simulation_after_federated_model(method, gamma, clients):
    """montecarlo: FedAvg over M simulated clients, then k gradient steps, exact conditional
    measure; the prediction is the finite-M steps limit, within 4 s.e. + 1% at d = 200 (the
    O(1/d) bias measured in benchmarks/bench_finite_clients_steps.py is < 0.5% there)."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = ClientSpec(method, gamma=gamma, r=1.0, sigma=0.5, spectrum=TWO,
                      **({"lam": 0.5} if method == "rtfa" else {}))
    c = compare(spec, Setting(d=200, clients=clients, global_model="federated",
                              weights="samples"), reps=6, steps=10, step_size=0.08)
    assert c.limit.route == "finite_clients_steps"
    s = c.summary["risk"]
    assert abs(s["mean"] - c.limit.risk) <= 4 * s["se"] + 0.01 * c.limit.risk
