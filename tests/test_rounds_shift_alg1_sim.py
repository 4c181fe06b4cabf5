"""Paper 004's Algorithm 1 along the rounds under covariate shift, simulated
(``montecarlo.linear.rounds`` with ``spectra``; issue 29).

Independent route: Algorithm 1 run literally (``004_98172ed3646eef14.txt``, eqs. 10-11: K
warm-started gradient steps of size eta on h_j(v) = f_j(v) + lam/2 ||v - w||^2, then the server
step w <- w - g lam sum_j p_j (w - v_j)), with explicit loops over rounds and local steps on the
raw designs X_j, every client's risk measured in its own Sigma_j. The conditional measure is
checked by running the loops on the sources' basis (theta_0, u_j and eps_j one coordinate at a
time, scaled by their standard deviations: the expectation over them is the sum of the
columns' squared errors), the empirical measure on the replicate's own sampled draw."""

from __future__ import annotations

import numpy as np
import pytest

from montecarlo.linear.rounds import sample_designs, sample_draw, simulate_rounds
from riskcalc.spectrum import Spectrum

D = 30
KW = dict(gamma=[0.6, 1.5], r=[0.7, 0.4], sigma=[0.5, 0.8], signal=1.1, weights=[0.3, 0.7])
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5"]
ROUNDS = [0, 1, 3, 7]


def brute(X, theta, eps, p, metric, lam, eta, K, g, rounds):
    """Every client's (risk of the server model, risk of its own model) after each round of
    ``rounds``, summed over the columns of theta (M, d, c) and eps (list of (n_j, c)): the
    algorithm with explicit loops (K = inf: the exact prox (S_j + lam)^-1 (b_j + lam w))."""
    m, d, c = theta.shape
    y = [X[j] @ theta[j] + eps[j] for j in range(m)]
    w, own = np.zeros((d, c)), [np.zeros((d, c)) for _ in range(m)]
    out = np.zeros((2, m, len(rounds)))

    def record(t):
        for i, col in ((0, w), (1, None)):
            for j in range(m):
                err = (col if col is not None else own[j]) - theta[j]
                out[i, j, [k for k, x in enumerate(rounds) if x == t]] = metric[j] @ err ** 2 \
                    @ np.ones(c)
    for t in range(max(rounds) + 1):
        if t:
            for j in range(m):
                n = X[j].shape[0]
                if np.isinf(K):
                    own[j] = np.linalg.solve(X[j].T @ X[j] / n + lam * np.eye(d),
                                             X[j].T @ y[j] / n + lam * w)
                    continue
                v = own[j]
                for _ in range(int(K)):
                    v = v - eta * (X[j].T @ (X[j] @ v - y[j]) / n + lam * (v - w))
                own[j] = v
            w = w - g * lam * sum(p[j] * (w - own[j]) for j in range(m))
        if t in rounds:
            record(t)
    return out


def source_basis(X, r, sigma, signal):
    """theta (M, d, c) and eps (n_j, c) of the scaled source basis: theta_0's d coordinates,
    each u_j's, each client's noise coordinates (covariances signal^2/d I, r_j^2/d I,
    sigma_j^2 I)."""
    m, d = len(X), X[0].shape[1]
    ns = [x.shape[0] for x in X]
    c = (m + 1) * d + sum(ns)
    theta = np.zeros((m, d, c))
    eps = [np.zeros((n, c)) for n in ns]
    for j in range(m):
        theta[j][:, :d] = signal / np.sqrt(d) * np.eye(d)
        theta[j][:, (j + 1) * d:(j + 2) * d] = r[j] / np.sqrt(d) * np.eye(d)
        start = (m + 1) * d + sum(ns[:j])
        eps[j][:, start:start + ns[j]] = sigma[j] * np.eye(ns[j])
    return theta, eps


@pytest.mark.parametrize("K", [3, np.inf])
def test_conditional_against_literal_algorithm(K):
    """Server and own models' risks, exact given the designs, against the literal loops on the
    source basis (K = 3: the column propagation; K = inf: the closed form)."""
    lam, eta, g = 0.8, 0.12, 1.1
    sim = simulate_rounds("pfedme", **KW, rounds=ROUNDS, local_steps=K,
                          step_size=eta if np.isfinite(K) else None, lam=lam, global_step=g,
                          spectra=ANTI, d=D, reps=2, seed=5, measure="conditional")
    S = np.asarray(sim.params["s"])
    assert S.shape == (2, D) and not np.allclose(S[0], S[1])
    for rep in range(2):
        X = sample_designs(KW["gamma"], S, 5, rep)
        theta, eps = source_basis(X, KW["r"], KW["sigma"], KW["signal"])
        ref = brute(X, theta, eps, np.asarray(sim.params["p"]), S, lam, eta, K, g, ROUNDS)
        np.testing.assert_allclose(sim.samples["global_risk"][rep], ref[0], rtol=1e-10)
        np.testing.assert_allclose(sim.samples["local_risk"][rep], ref[1], rtol=1e-10)


def test_empirical_against_literal_algorithm():
    """One sampled draw per design: the replicate's own (theta, noise) through the loops."""
    lam, eta, K, g = 1.3, 0.1, 4, 0.6
    sim = simulate_rounds("fedprox", **KW, rounds=ROUNDS, local_steps=K, step_size=eta,
                          lam=lam, global_step=g, spectra=ANTI[::-1], d=D, reps=2, seed=9,
                          measure="empirical")
    S = np.asarray(sim.params["s"])
    for rep in range(2):
        X = sample_designs(KW["gamma"], S, 9, rep)
        th, noise = sample_draw(X, S, KW["r"], KW["sigma"], KW["signal"], 9, rep)
        ref = brute(X, th[:, :, None], [e[:, None] for e in noise], np.asarray(sim.params["p"]),
                    S, lam, eta, K, g, ROUNDS)
        np.testing.assert_allclose(sim.samples["global_risk"][rep], ref[0], rtol=1e-10)
        np.testing.assert_allclose(sim.samples["local_risk"][rep], ref[1], rtol=1e-10)


@pytest.mark.parametrize("K", [2, np.inf])
def test_equal_spectra_reproduce_shared_spectrum(K):
    """Every client on one covariance: the shared-spectrum simulation, same designs (the
    shared spectrum's eigenvalues, in its order, given to each client as a list)."""
    ev = Spectrum.parse(ANTI[0], D).eigenvalues(D).tolist()
    kw = dict(**KW, rounds=[0, 2, 5, np.inf], local_steps=K,
              step_size=0.04 if np.isfinite(K) else None, lam=0.9, d=D, reps=2, seed=3)
    shared = simulate_rounds("pfedme", spectrum=ANTI[0], **kw)
    shift = simulate_rounds("pfedme", spectra=[ev, ev], **kw)
    for k in ("risk", "global_risk", "local_risk", "distance_to_fixed_point"):
        np.testing.assert_allclose(shift.samples[k], shared.samples[k], rtol=1e-12, atol=0)
    np.testing.assert_allclose(shift.contraction, shared.contraction, rtol=1e-12)
