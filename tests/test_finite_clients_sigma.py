"""Finite-M limits for a general covariance spectrum (riskcalc.linear.finite_clients.sigma)
against independent routes: the Sigma = I closed forms of finite_clients, the oracle limit of
riskcalc.linear.engine.kappa (M -> infinity), local least squares (M = 1), FedAvg's scaling with
the signal mean (the freeness of Sigma from white Wishart matrices), the other clients' noise as
a weight derivative; every point of a batch as if solved alone. The resolvent-chain engine:
tests/test_finite_clients_sigma_engine.py; direct and pipeline simulation:
tests/test_finite_clients_sigma_simulation.py."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.finite_clients.identity import group_limits, subordination
from riskcalc.linear.engine.resolvent_chain import chain_trace
from tests.conftest import SPECTRA


TWO = riskcalc.Spectrum.two_point(1.0, 10.0, 0.5)
ALIGNED = SPECTRA["two-point-aligned"]
CASES = [("fedavg", None), ("ftfa", None), ("rtfa", 0.5), ("rtfa", 4.0)]


# --- reductions: Sigma = I, M -> infinity, M = 1, FedAvg -------------------------------------

GROUPS = [([2.0], [5]), ([0.5], [2]), ([1.5], [20]), ([0.5], [1]),
          ([2.0, 1.0, 4.0, 0.8], [1, 1, 1, 1]), ([3.0, 0.7], [4, 2])]


@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("gammas,counts,weights", [(g, c, "samples") for g, c in GROUPS] + [
    (g, c, "uniform") for g, c in GROUPS[4:]])
def test_identity_spectrum_reproduces_closed_forms(method, lam, gammas, counts, weights):
    """Sigma = I given as a one-atom spectrum at 2 (Sigma = 2 I) scales the bias by 2 and
    leaves the variance unchanged: against the Marchenko-Pastur closed forms of
    finite_clients (which the general route never calls)."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    k = len(gammas)
    r, sigma, lam = np.linspace(0.5, 2.0, k), np.linspace(0.2, 1.0, k), np.full(k, lam or 0.0)
    lam2 = 2.0 * lam       # Sigma = 2 I: ridge lam on S = 2 W is ridge lam / 2 on W
    b, v = sigma_group_limits(method, gammas, r, sigma, counts, lam2, weights,
                              riskcalc.Spectrum([2.0]))
    rb, rv = group_limits(method, gammas, r, sigma, counts, lam, weights)
    np.testing.assert_allclose(b, 2.0 * rb, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, rv, rtol=1e-10)


@pytest.mark.parametrize("name,method,lam,gamma", [
    (name, method, lam, gamma) for name in ("two-point", "two-point-aligned")
    for method, lam in CASES for gamma in (0.5, 2.0)] + [
    ("powerlaw-cond1e4", "ftfa", None, 2.0), ("powerlaw-cond1e4", "rtfa", 0.5, 0.5)])
def test_many_clients_recover_oracle(name, method, lam, gamma):
    """M -> infinity: the oracle general-spectrum limit (riskcalc.linear.engine.kappa, and tau(Y) for
    FedAvg) to 1e-6 at M = 1e8; the finite-M excess is O(1/M)."""
    sp = SPECTRA[name]
    kw = dict(gamma=gamma, r=1.3, sigma=0.7, spectrum=sp, **({"lam": lam} if lam else {}))
    oracle = riskcalc.limit(method, **kw)
    big = riskcalc.limit(method, clients=10 ** 8, **kw)
    for q in ("bias", "variance", "risk"):
        assert getattr(big, q) == pytest.approx(getattr(oracle, q), rel=1e-6, abs=1e-7)
    e4, e5 = (M * (riskcalc.limit(method, clients=M, **kw).risk - oracle.risk)
              for M in (10 ** 4, 10 ** 5))
    assert e5 == pytest.approx(e4, rel=2e-3)


@pytest.mark.parametrize("name", ["two-point", "two-point-aligned"])
@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("gamma", [0.3, 0.8])
def test_single_client_is_least_squares(name, method, lam, gamma):
    """M = 1, n > d: the global model is least squares, which every method keeps: bias 0 and
    variance sigma^2 gamma tau(Sigma S^-1) = sigma^2 gamma / (1 - gamma) for any spectrum (for
    RTFA the own, cross and global variance terms must add up to it exactly)."""
    res = riskcalc.limit(method, gamma=gamma, r=1.3, sigma=0.7, clients=1,
                         spectrum=SPECTRA[name], **({"lam": lam} if lam else {}))
    assert abs(res.bias) <= 1e-12
    assert res.variance == pytest.approx(0.49 * gamma / (1 - gamma), rel=1e-10)


@pytest.mark.parametrize("name", ["two-point", "two-point-aligned", "empirical-10k"])
@pytest.mark.parametrize("gammas,counts", GROUPS[:3] + GROUPS[4:])
def test_fedavg_scales_with_the_signal_mean(name, gammas, counts):
    """FedAvg: Sigma is free from the W_j, so its bias is int s dG times the Sigma = I bias and
    its variance is unchanged (also with G != H); and the engine's K-only chains equal the
    freeness shortcuts the FedAvg branch uses."""
    sp = SPECTRA[name]
    k = len(gammas)
    r, sigma = np.linspace(0.5, 2.0, k), np.linspace(0.2, 1.0, k)
    gen = riskcalc.clients_limit("fedavg", gamma=np.repeat(gammas, counts),
                                 r=np.repeat(r, counts), sigma=np.repeat(sigma, counts),
                                 spectrum=sp)
    iso = riskcalc.clients_limit("fedavg", gamma=np.repeat(gammas, counts),
                                 r=np.repeat(r, counts), sigma=np.repeat(sigma, counts))
    np.testing.assert_allclose(gen.bias, sp.signal_mean * iso.bias, rtol=1e-12)
    np.testing.assert_allclose(gen.variance, iso.variance, rtol=1e-12)
    gam, cnt = np.asarray(gammas, float), np.asarray(counts, float)
    p, g, x, u, var_r = subordination(gam, cnt, "samples")
    a, w = sp.atoms, sp.weights
    y = a * a * np.divide(sp.signal_weights, w, out=np.zeros_like(w), where=w > 0)
    for i in range(k):
        K = (1.0 / p[i], p[i] * u[i] * a)              # (p S + omega Sigma)^-1, omega = p u
        k0 = (x[i] ** 2 + var_r[i]) / p[i] ** 2
        kk = [1 / p[i], 1 / p[i]], [K[1], K[1]]
        assert chain_trace(gam[i], a, w, *kk, [y, a]) == pytest.approx(k0 * sp.signal_mean,
                                                                       rel=1e-9)
        assert chain_trace(gam[i], a, w, *kk, [a, a]) == pytest.approx(k0, rel=1e-9)
        assert chain_trace(gam[i], a, w, [1 / p[i]], [K[1]], [a]) == pytest.approx(g, rel=1e-9)


@pytest.mark.parametrize("method,lam", CASES[1:])
def test_other_clients_noise_is_a_weight_derivative(method, lam):
    """Second route for the noise of client j != i: A + e S_j is the same federation with
    p_j + e, so tau(F A^-1 S_j A^-1) = (d omega / d p_j) tau(F K Sigma K), omega the target's
    subordination shift (differentiated implicitly through sum_l p_l g / (1 + gamma_l p_l g)
    = 1) and the trace a chain (the engine); the module conditions on everything but W_j
    instead."""
    gam = np.array([2.0, 1.5, 4.0, 3.0])
    p, g = subordination(gam, np.ones(4), "uniform")[:2]
    q = 1.0 + gam * p * g
    omega = np.sum((p / q)[1:])
    dg = -(g / q ** 2) / np.sum(p / q ** 2)             # d g / d p_j
    domega = 1.0 / q ** 2 - np.sum((gam * p ** 2 / q ** 2)[1:]) * dg
    a, w, one = TWO.atoms, TWO.weights, np.ones(2)
    R = (lam or 0.0, one)
    K = (1.0 / p[0], omega * a)
    t2 = chain_trace(gam[0], a, w, [R[0], R[0], K[0], K[0]], [R[1], R[1], K[1], K[1]],
                     [a, one, a, one])
    for j in (1, 2, 3):
        var = riskcalc.clients_limit(method, gamma=gam, r=1.0, sigma=np.eye(4)[j], lam=lam,
                                     weights="uniform", spectrum=TWO).variance[0]
        assert var == pytest.approx(p[j] ** 2 * gam[j] * domega[j] * t2, rel=1e-9)


# --- batches: every point of a batch as if solved alone ------------------------------------------

BATCH_SPECTRA = {"identity": riskcalc.Spectrum([2.0]), "two-point": TWO,
                 "power-law": riskcalc.Spectrum.power_law(1.0, 300)}


@pytest.mark.parametrize("name", list(BATCH_SPECTRA))
def test_chain_batch_equals_points_alone(name, monkeypatch):
    """chain_traces over 40 points (gamma on both sides of 1, ridge, projection and K blocks,
    shifts and middles varying per point) equals chain_traces on each point alone to 1e-12
    relative, also given the diagonal roots from diagonal_roots; small memory blocks make the
    batch span several blocks. Both calls converge the same per-point Newton iterations, so
    only summation order may differ (a few ulps)."""
    from riskcalc.linear.engine import kappa
    from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots
    sp = BATCH_SPECTRA[name]
    a, w = sp.atoms, sp.weights
    rng = np.random.default_rng(7)
    n_pts = 40
    gamma = rng.choice([0.3, 0.9, 1.0, 1.1, 2.5, 6.0], n_pts)
    ridge = rng.uniform(0.01, 5.0, n_pts)
    eta = np.column_stack([np.where(gamma > 1, 0.0, ridge)] * 2 + [1 / rng.uniform(0.01, 1.0,
                                                                                    n_pts)] * 2)
    omega = rng.uniform(0.05, 3.0, n_pts)[:, None] * a
    shifts = np.stack([np.ones((n_pts, a.size))] * 2 + [omega] * 2, axis=1)
    middles = np.stack([a * rng.uniform(0.5, 2.0, (n_pts, 1)), np.ones((n_pts, a.size)),
                        a ** rng.uniform(0.0, 2.0, (n_pts, 1)), 1 / (1 + a) + 0 * omega], axis=1)
    alone = np.array([chain_traces(gamma[i], a, w, eta[i], shifts[i], middles[i])
                      for i in range(n_pts)])
    monkeypatch.setattr(kappa, "_BLOCK", 7 * 4 * a.size)  # blocks of 7 points
    batch = chain_traces(gamma, a, w, eta, shifts, middles)
    roots = np.column_stack([diagonal_roots(gamma, a, w, eta[:, j], shifts[:, j])
                             for j in range(4)])
    given = chain_traces(gamma, a, w, eta, shifts, middles, roots)
    assert np.all(np.isfinite(alone)) and np.ptp(alone) > 0
    np.testing.assert_allclose(batch, alone, rtol=1e-12, atol=0)
    np.testing.assert_allclose(given, alone, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", list(BATCH_SPECTRA))
@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_group_batch_equals_groups_alone(name, weights):
    """sigma_group_limits for all 9 groups of a heterogeneous federation (gamma on both sides
    of 1, including 1, with r, sigma (one 0), RTFA's lam and counts varying) equals its
    targets=[i] calls one group at a time to 1e-12 relative, for FedAvg, FTFA and RTFA."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    rng = np.random.default_rng(8)
    gam = np.array([0.4, 0.8, 1.0, 1.3, 2.0, 3.0, 5.0, 0.6, 8.0])
    r, sigma = rng.uniform(0.2, 2.0, gam.size), rng.uniform(0.1, 1.0, gam.size)
    sigma[3] = 0.0
    count, lam = rng.integers(1, 4, gam.size), rng.uniform(0.05, 3.0, gam.size)
    for method in ("fedavg", "ftfa", "rtfa"):
        args = (method, gam, r, sigma, count, lam, weights, BATCH_SPECTRA[name])
        batch = np.array(sigma_group_limits(*args))
        alone = np.column_stack([sigma_group_limits(*args, targets=[i]) for i in range(gam.size)])
        fin = np.isfinite(alone)
        assert np.array_equal(np.isfinite(batch), fin) and fin.sum() >= 2 * gam.size - 1
        np.testing.assert_allclose(batch[fin], alone[fin], rtol=1e-12, atol=0)


def test_batch_bad_input():
    """A bad point fails the whole batch with a message naming it; so do shapes that do not
    broadcast and out-of-range targets."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots
    a, w, one = TWO.atoms, TWO.weights, np.ones((1, 2))
    with pytest.raises(ValueError, match="projection block .* got gamma = 0.7"):
        chain_traces([2.0, 0.7], a, w, [0.0], one, one)
    with pytest.raises(ValueError, match="one number of points"):
        chain_traces([2.0, 3.0], a, w, [[1.0]] * 3, one, one)
    with pytest.raises(ValueError, match=r"shape \(1, 2\) \(or \(points, 1, 2\)\)"):
        chain_traces([2.0, 3.0], a, w, [1.0], np.ones((2, 2, 2)), one)
    with pytest.raises(ValueError, match=r"roots must have shape \(1,\) or \(points, 1\)"):
        chain_traces([2.0, 3.0], a, w, [1.0], one, one, roots=[[1.0, 1.0]])
    with pytest.raises(ValueError, match="projection block .* got gamma = 0.5"):
        diagonal_roots([2.0, 0.5], a, w, 0.0, [1.0, 1.0])
    # Lam = 0 at gamma > 1: c eta + gamma > 1 for every c, no bracket.
    with pytest.raises(riskcalc.SolverError, match="no bracket"):
        chain_traces([2.0, 3.0], a, w, [1.0], np.array([[[1.0, 1.0]], [[0.0, 0.0]]]), one)
    with pytest.raises(ValueError, match=r"targets must be group indices in \[0, 1\]"):
        sigma_group_limits("ftfa", [2.0, 1.5], [1.0] * 2, [0.5] * 2, [1, 1], [0.0] * 2,
                           "samples", TWO, targets=[2])
