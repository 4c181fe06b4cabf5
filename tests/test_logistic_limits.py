"""Limits of personalized logistic regression (riskcalc.logistic): every limit against an
independent route (mpmath golden values, the unreduced Gordon objective, exact large-lam
expansion, the Candes-Sur threshold against LP separability of simulated data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import riskcalc
from riskcalc.errors import SolverError
from riskcalc.logistic.fixed_point import centre_geometry, residuals, solve_fixed_point
from riskcalc.logistic.engine.gaussian import Rule, gauss_hermite
from riskcalc.logistic.engine.prox import prox_logistic, sigmoid

GOLDEN = Path(__file__).parent / "golden" / "logistic_limits.json"


@pytest.mark.parametrize("name, value", [("gamma", 0.0), ("gamma", -1.0), ("signal", -0.1),
                                         ("r", -1.0), ("lam", -0.5), ("lam", float("nan")),
                                         ("gamma", float("inf")), ("r", "x")])
def test_bad_parameters(name, value):
    kw = dict(gamma=1.0, signal=1.0, r=1.0, lam=1.0)
    kw[name] = value
    with pytest.raises(ValueError, match=name):
        riskcalc.logistic_limit(**kw)


def test_prox_optimality_and_bracket():
    v = np.linspace(-80.0, 80.0, 4001)
    for mu in (1e-9, 0.3, 33.45, 1e5):
        t = prox_logistic(v, mu)
        assert np.all((t >= v) & (t <= v + mu))
        assert np.max(np.abs(t - v - mu * sigmoid(-t)) / (1 + np.abs(v) + mu)) < 1e-11


def test_jacobian_matches_central_differences():
    rule = Rule(1.3, 40)
    x = np.array([0.7, 0.3, np.log(0.6), np.log(2.0)])
    args = (rule, 1.5, 0.3, 0.5, 0.4)
    _, jac = residuals(x, *args)
    h = 1e-6
    num = np.array([(residuals(x + e, *args)[0] - residuals(x - e, *args)[0]) / (2 * h)
                    for e in h * np.eye(4)]).T
    # central differences: error O(h^2 f''') + rounding O(eps / h) ~ 1e-10 here
    assert np.max(np.abs(jac - num)) < 1e-7


def _envelope(v, mu):
    t = prox_logistic(v, mu)
    return np.logaddexp(0.0, -t) + (t - v) ** 2 / (2 * mu)


@pytest.mark.parametrize("gamma, signal, r, lam", [(2.0, 1.0, 1.0, 0.1), (0.5, 0.0, 1.0, 0.3),
                                                   (1.0, 2.0, 0.5, 2.0)])
def test_stationary_point_of_gordon_objective(gamma, signal, r, lam):
    """(E1)-(E4) are the stationarity conditions of the scalar Gordon objective
    F(a, b, q, tau, beta) = E[M(a s + rho g; tau/beta)] + beta tau/2 - beta q sqrt(gamma)
    + lam/2 ((a - c_e)^2 + (b - C)^2 + q^2): its central-difference gradient (Moreau envelope
    values only, no Stein identity, no envelope derivatives) vanishes at the solution."""
    x, _, (kappa, c_e, C) = solve_fixed_point(gamma, signal, r, lam)
    a, b, q, mu = x[0], x[1], np.exp(x[2]), np.exp(x[3])
    tau = q * np.sqrt(gamma)
    beta = tau / mu
    rule = Rule(kappa, 126)

    def F(p):
        a, b, q, tau, beta = p
        rho = np.hypot(b, q)
        M = rule.expect(_envelope(a * rule.s + rho * rule.g, tau / beta))
        return (M + beta * tau / 2 - beta * q * np.sqrt(gamma)
                + lam / 2 * ((a - c_e) ** 2 + (b - C) ** 2 + q ** 2))

    p = np.array([a, b, q, tau, beta])
    h = 1e-5
    grad = [(F(p + e) - F(p - e)) / (2 * h) for e in h * np.eye(5)]
    assert np.max(np.abs(grad)) < 1e-7


def test_centre_zero_is_plain_ridge():
    """S = 0: the centre is 0, its orthogonal part vanishes and b = 0 (Salehi et al.'s ridge
    system, three unknowns); the risk is then ||w_hat - w_i||^2 = (a - r)^2 + q^2."""
    res = riskcalc.logistic_limit(gamma=0.5, signal=0.0, r=1.0, lam=0.3)
    assert res.b == 0.0
    assert res.risk == pytest.approx((res.a - 1.0) ** 2 + res.q ** 2, rel=1e-14)
    assert 0 < res.cosine < 1


def test_large_lam_expansion():
    """lam -> inf: w_hat -> c - grad L(c) / lam (population gradient), so
    risk = r^2 + (2/lam) (w_i - c).grad L(c) + O(1/lam^2) with
    (w_i - c).grad L(c) = -r^2 E[sigmoid'(kappa Z)] (Stein's lemma on the exact expectation,
    independent of the fixed point)."""
    gamma, signal, r = 1.0, 1.0, 0.8
    kappa = np.hypot(signal, r)
    z, w = gauss_hermite(200)
    slope = -2 * r ** 2 * np.sum(w * sigmoid(kappa * z) * sigmoid(-kappa * z))
    gaps = []
    for lam in (1e2, 1e3, 1e4):
        res = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam)
        gaps.append(abs(lam * (res.risk - r ** 2) - slope))
    # O(1/lam) remainder: the gap shrinks ~10x per decade
    assert gaps[2] < 1e-3 * abs(slope)
    assert gaps[1] / gaps[0] < 0.2 and gaps[2] / gaps[1] < 0.2


def test_mle_threshold_values():
    assert riskcalc.mle_threshold(0.0) == pytest.approx(0.5, abs=1e-12)   # Cover (1965)
    h = [riskcalc.mle_threshold(k) for k in (0.5, 1.0, 2.0, 5.0)]
    assert np.all(np.diff(h) < 0) and 0 < h[-1] < 0.5


def _separable(X, y):
    """LP feasibility of y_j x_j.w >= 1 for all j (strict linear separability)."""
    from scipy.optimize import linprog
    A = -(y[:, None] * X)
    res = linprog(np.zeros(X.shape[1]), A_ub=A, b_ub=-np.ones(len(y)),
                  bounds=[(None, None)] * X.shape[1], method="highs")
    return res.status == 0


def test_mle_threshold_against_lp_separability():
    """Independent route to h(kappa): simulated data at gamma = h/1.5 are not separable and at
    gamma = 1.5 h are (probabilities -> 0 and 1 as d grows; d = 120, 5 draws each)."""
    kappa, d = 1.5, 120
    h = riskcalc.mle_threshold(kappa)
    rng = np.random.default_rng(np.random.SeedSequence(14))
    w = rng.standard_normal(d)
    w *= kappa / np.linalg.norm(w)
    for factor, expected in ((1 / 1.5, False), (1.5, True)):
        n = int(round(d / (factor * h)))
        for _ in range(5):
            X = rng.standard_normal((n, d))
            y = np.where(rng.random(n) < sigmoid(X @ w), 1.0, -1.0)
            assert _separable(X, y) is expected


def test_no_finite_minimizer_beyond_transition():
    h = riskcalc.mle_threshold(np.sqrt(2.0))
    with pytest.raises(ValueError, match="no finite minimizer"):
        riskcalc.logistic_limit(gamma=1.01 * h, signal=1.0, r=1.0, lam=0.0)


def test_small_lam_tends_to_mle():
    mle = riskcalc.logistic_limit(gamma=0.2, signal=0.0, r=0.5, lam=0.0)
    near = riskcalc.logistic_limit(gamma=0.2, signal=0.0, r=0.5, lam=1e-6)
    assert near.risk == pytest.approx(mle.risk, rel=1e-4)
    # Sur-Candes: the MLE is inflated, a > ||w_i|| (alpha > 1)
    assert mle.a > 0.5


@pytest.mark.skipif(not GOLDEN.exists(), reason="golden file not generated")
@pytest.mark.parametrize("rec", json.loads(GOLDEN.read_text()) if GOLDEN.exists() else [])
def test_golden_fixed_point(rec):
    """34-digit mpmath fixed point (tests/golden/make_logistic_golden.py), kept to the digits
    where 120 and 160 nodes agree; the float solver is asked for 1e-9."""
    assert rec["digits"] >= 12
    res = riskcalc.logistic_limit(gamma=rec["gamma"], signal=rec["signal"], r=rec["r"],
                                  lam=rec["lam"])
    for k in ("a", "b", "q", "mu", "risk"):
        assert getattr(res, k) == pytest.approx(float(rec[k]), rel=1e-9, abs=1e-12), k


def test_test_metrics_against_adaptive_quadrature():
    """Test error (mpmath, 1-d) and test log-loss (scipy dblquad, adaptive) from the overlaps,
    against the Gauss-Hermite / quad values of logistic_limit."""
    import mpmath as mp
    from scipy.integrate import dblquad
    res = riskcalc.logistic_limit(gamma=1.0, signal=0.5, r=1.0, lam=1.0)
    kappa = centre_geometry(0.5, 1.0)[0]
    a, rho = res.a, float(np.hypot(res.b, res.q))
    mp.mp.dps = 20
    sig = lambda x: 1 / (1 + mp.exp(-x))                                     # noqa: E731
    err = mp.quad(lambda s: 2 * sig(kappa * s) * mp.npdf(s) * mp.ncdf(-a * s / rho),
                  [-mp.inf, 0, mp.inf])
    loss = dblquad(lambda g, s: 2 * sigmoid(kappa * s) * np.exp(-(s * s + g * g) / 2)
                   / (2 * np.pi) * np.logaddexp(0, -(a * s + rho * g)), -12, 12, -12, 12,
                   epsabs=1e-13, epsrel=1e-12)[0]
    assert res.test_error == pytest.approx(float(err), rel=1e-10)
    assert res.test_logloss == pytest.approx(loss, rel=1e-9)


def test_r_zero_cosine_noted():
    res = riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=0.0, lam=1.0)
    assert np.isnan(res.cosine) and res.notes
    assert res.as_dict()["cosine"] is None


def test_optimal_lambda_beats_grid():
    lam_star, risk_star = riskcalc.optimal_lambda_logistic(gamma=1.0, signal=1.0, r=1.0)
    for lam in (lam_star / 2, lam_star * 2):
        assert riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=lam).risk > risk_star
    assert risk_star < 1.0     # beats the centre (lam = inf, risk r^2)


def test_solver_error_never_garbage(monkeypatch):
    import riskcalc.logistic.fixed_point as fp
    monkeypatch.setattr(fp, "TOL", 0.0)     # an unreachable tolerance must raise
    with pytest.raises(SolverError):
        riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=0.5)


def test_lam_path_matches_single_calls():
    lams = [3.0, 0.0, 0.05, 0.5]
    path = riskcalc.logistic_lam_path(gamma=0.2, signal=0.5, r=0.5, lams=lams)
    for lam, res in zip(lams, path):
        one = riskcalc.logistic_limit(gamma=0.2, signal=0.5, r=0.5, lam=lam)
        assert res.params["lam"] == lam
        assert res.risk == pytest.approx(one.risk, rel=1e-9)


def test_fedavg_centre_scale_against_pooled_mle():
    """alpha w_0 is the population minimizer of the clients' mixture: the pooled logistic MLE
    of N = 60000 samples, each from its own client w_0 + r u_j (u_j uniform and orthogonal to
    w_0, the large-d geometry), lands on it within sampling error (sd ~ 0.01 here)."""
    from montecarlo.experiments.objectives import ClientLosses, minimize
    signal, r, d, N = 1.0, 1.5, 4, 60000
    alpha = riskcalc.fedavg_centre_scale(signal, r)
    rng = np.random.default_rng(np.random.SeedSequence(141))
    w0 = np.zeros(d)
    w0[0] = signal
    u = rng.standard_normal((N, d))
    u[:, 0] = 0.0
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    X = rng.standard_normal((N, d))
    z = X @ w0 + r * np.sum(X * u, axis=1)
    y = np.where(rng.random(N) < sigmoid(z), 1.0, -1.0)
    w_g, _ = minimize(ClientLosses(X[None], y[None]), "global")
    assert abs(w_g[0] / signal - alpha) < 0.04
    assert np.max(np.abs(w_g[1:])) < 0.04
    assert 0 < alpha < 1 and riskcalc.fedavg_centre_scale(signal, 0.0) == 1.0


def test_fedavg_centre_large_lam():
    """lam -> inf with the FedAvg centre: the risk tends to ||w_i - alpha w_0||^2
    = (1 - alpha)^2 S^2 + r^2."""
    alpha = riskcalc.fedavg_centre_scale(1.0, 1.0)
    res = riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1e5, centre="fedavg")
    assert res.risk == pytest.approx((1 - alpha) ** 2 + 1.0, rel=1e-4)
    assert res.params["centre_scale"] == alpha
    with pytest.raises(ValueError, match="centre"):
        riskcalc.logistic_limit(gamma=1.0, signal=1.0, r=1.0, lam=1.0, centre="median")
