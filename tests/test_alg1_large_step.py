"""Paper 004's Algorithm 1 with K warm-started local steps of size eta above Thm 2's
1 / (L + lam), up to 0.9 of the local steps' stability edge 2 / (L + lam)
(``riskcalc.linear.dynamics.algorithm1.rate``, module docstring: the round map's spectrum stays
real for even K, or odd K with g lam <= 1), against independent routes: one client's literal
2 x 2 recursion integrated by scipy quad, the extrapolation of the polynomial in eta that the
risk at fixed T is (fitted where the old derivation holds), the finite-M pFedMe joint
objective (T = inf), the eigenvalues of the round map at finite d, and the literal algorithm
at two d."""

import numpy as np
import pytest
from scipy.integrate import quad

import riskcalc
from montecarlo.linear.decomposition import decompose
from montecarlo.linear.rounds import simulate_rounds
from montecarlo.linear.rounds_columns import client_basis
from montecarlo.linear.rounds_propagate import Propagation
from riskcalc.linear.dynamics import algorithm1_contraction
from riskcalc.linear.dynamics.algorithm1.rate import fast_contraction
from tests.helpers import top_is_bracketed

GAM = np.array([0.5, 2.0, 1.5])
R = np.array([0.3, 0.6, 1.0])
SIG = np.array([0.4, 0.6, 1.0])
LAM = 0.8
L = (1 + np.sqrt(GAM.max())) ** 2
P = (1 / GAM) / np.sum(1 / GAM)


def _mp(f, gam):
    """E f(S) under MP(gam) by scipy quad on the density (and the atom at 0)."""
    a, b = (1 - np.sqrt(gam)) ** 2, (1 + np.sqrt(gam)) ** 2
    val = quad(lambda s: f(s) * np.sqrt((b - s) * (s - a)) / (2 * np.pi * gam * s), a, b,
               epsabs=1e-14, epsrel=1e-13, limit=400)[0]
    return val + (max(0.0, 1 - 1 / gam) * f(0.0) if gam > 1 else 0.0)


def _response(s, T, lam, eta, K, g, own):
    """w_T (or v_T) along one eigenvector of S (eigenvalue s), b = 1 there: the literal 2 x 2
    recursion v <- a v + c (lam w + 1), w <- (1 - g lam) w + g lam v from 0."""
    a = (1 - eta * (s + lam)) ** K
    c = (1 - a) / (s + lam)
    w = v = 0.0
    for _ in range(int(T)):
        v = a * v + c * (lam * w + 1.0)
        w = (1 - g * lam) * w + g * lam * v
    return v if own else w


@pytest.mark.parametrize("K, gl", [(1, 1.0), (5, 0.6), (2, 2.5), (1, 2.0), (3, 1.5)])
def test_one_client_is_the_two_by_two_recursion(K, gl):
    """M = 1 at eta = 0.9 of the edge 2 / (L + lam), where a(s) < 0 on part of the spectrum
    (odd K) or a(s) is not monotone (even K): risk E_s[(s w_T - 1)^2] (signal^2 + r^2) +
    sigma^2 gamma E_s[s w_T^2], the server's and the client's own model."""
    gam, r, sig, sgn, lam = 0.6, 0.7, 0.5, 1.2, 0.8
    top = (1 + np.sqrt(gam)) ** 2
    eta = 0.9 * 2 / (top + lam)
    assert (1 - eta * (top + lam)) ** K < 0 or K % 2 == 0
    rounds = [1, 2, 5, 30]
    res = riskcalc.rounds_limit("fedprox", gamma=gam, r=r, sigma=sig, signal=sgn, rounds=rounds,
                                local_steps=K, step_size=eta, lam=lam, global_step=gl / lam)
    for t, T in enumerate(rounds):
        for own, got in ((False, res.global_risk), (True, res.risk)):
            def w(s, T=T, own=own):
                return _response(s, T, lam, eta, K, gl / lam, own)
            want = (_mp(lambda s: (s * w(s) - 1) ** 2, gam) * (sgn ** 2 + r ** 2)
                    + sig ** 2 * gam * _mp(lambda s: s * w(s) ** 2, gam))
            assert got[0, t] == pytest.approx(want, rel=1e-9)


def _values(u, K, rounds):
    res = riskcalc.rounds_limit("fedprox", gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=rounds,
                                local_steps=K, step_size=u / (L + LAM), lam=LAM)
    return np.concatenate([res.risk.ravel(), res.global_risk.ravel()])


@pytest.mark.parametrize("K, rounds", [(3, [1]), (2, [1, 2])])
def test_polynomial_in_eta_extrapolates(K, rounds):
    """At fixed T every model is a polynomial of degree <= T K in eta (a(s) and c(s) are of
    degree K, the rounds compose them), so the risks are polynomials of degree <= 2 T K. Fitted
    by Lagrange interpolation at Chebyshev nodes of eta (L + lam) in [0.6, 1] (Thm 2's region,
    the old derivation), extrapolated to 1.4 and 1.8 (this module's). Each value is accurate to
    the subordination rule's 1e-11 (relative); the extrapolation amplifies errors of the
    values by at most the Lebesgue sum sum_i abs(l_i(u)), which sets the tolerance."""
    deg = 2 * max(rounds) * K
    x = np.cos(np.pi * (np.arange(deg + 1) + 0.5) / (deg + 1))
    nodes = 0.8 + 0.2 * x
    vals = np.array([_values(u, K, rounds) for u in nodes])
    for u in (1.4, 1.8):
        lag = np.array([np.prod([(u - nodes[k]) / (nodes[i] - nodes[k])
                                 for k in range(deg + 1) if k != i]) for i in range(deg + 1)])
        got = _values(u, K, rounds)
        tol = np.abs(lag).sum() * 1e-11 * np.abs(vals).max()
        assert tol < 1e-2 * np.abs(got - vals[-1]).max()     # the check has teeth
        np.testing.assert_allclose(lag @ vals, got, rtol=0, atol=tol)


def test_continuous_at_thm2_step():
    """eta just below and just above 1 / (L + lam): the same values to first order in the
    step (the risk is a polynomial in eta: a relative step of 1e-7 moves it by ~1e-7)."""
    below = _values(1.0 - 1e-7, 3, [1, 3, 10])
    above = _values(1.0 + 1e-7, 3, [1, 3, 10])
    np.testing.assert_allclose(above, below, rtol=1e-5)


@pytest.mark.parametrize("K, gl", [(3, 1.0), (2, 2.0)])
def test_fixed_point_is_the_joint_objective(K, gl):
    """T = inf at eta = 0.9 of the edge: the finite-M pFedMe / FedProx joint minimizer
    (``clients_limit("pfedme")``, its own subordination), whatever K and eta."""
    res = riskcalc.rounds_limit("fedprox", gamma=GAM, r=R, sigma=SIG, signal=0.0,
                                rounds=[5, np.inf], local_steps=K, step_size=1.8 / (L + LAM),
                                lam=LAM, global_step=gl / LAM)
    want = riskcalc.clients_limit("pfedme", gamma=GAM, r=R, sigma=SIG, lam=LAM,
                                  weights="samples")
    assert res.converges and res.distance_to_fixed_point[-1] == 0.0
    np.testing.assert_allclose(res.risk[:, -1], want.risk, rtol=1e-8)
    np.testing.assert_allclose(res.bias[:, -1], want.bias, rtol=1e-8)


def _designs(d, gam, seed):
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return [rng.standard_normal((int(round(d / gj)), d)) for gj in gam]


def _round_map_eigenvalues(d, K, eta, g, seed=3, gam=GAM, lam=LAM):
    """The eigenvalues of the literal round map Phi on (w, v_1, ..., v_M) at dimension d
    (sample weights)."""
    M, p = gam.size, (1 / gam) / np.sum(1 / gam)
    phi = np.zeros(((M + 1) * d, (M + 1) * d))
    mean_c = np.zeros((d, d))
    for j, X in enumerate(_designs(d, gam, seed)):
        e, U = np.linalg.eigh(X.T @ X / X.shape[0])
        a = (1 - eta * (e + lam)) ** K
        A, C = (U * a) @ U.T, (U * ((1 - a) / (e + lam))) @ U.T
        blk = slice((j + 1) * d, (j + 2) * d)
        phi[blk, blk], phi[blk, :d], phi[:d, blk] = A, lam * C, g * lam * p[j] * A
        mean_c += p[j] * C
    phi[:d, :d] = (1 - g * lam) * np.eye(d) + g * lam ** 2 * mean_c
    return np.linalg.eigvals(phi)


@pytest.mark.parametrize("K, gl, old_route", [(1, 1.0, True), (5, 0.5, False),
                                              (2, 2.0, False)])
def test_spectrum_is_real_and_its_top_is_the_limit(K, gl, old_route):
    """At d = 120 the round map's eigenvalues are real to rounding (the characteristic
    polynomial of a symmetric matrix, odd K with g lam <= 1; the symmetrizing scaling, even
    K), inside [lower, top] of the limit up to the finite-d edge fluctuation (d^(-2/3), below
    0.05 here), and the fold route's top is the bracketing route's (K = 1: its partial
    fractions cost seconds for larger K)."""
    eta = 1.8 / (L + LAM)
    ev = _round_map_eigenvalues(120, K, eta, gl / LAM)
    assert np.abs(ev.imag).max() <= 1e-8
    lim = fast_contraction(GAM, P, LAM, eta, K, gl / LAM)
    if old_route:
        # The bracketing route's edge equation changes sign within 1e-9 of the fold's top.
        assert top_is_bracketed(lim["top"], GAM, P, LAM, eta, K, gl)
    assert abs(ev.real.max() - lim["top"]) < 0.05 and ev.real.min() > lim["lower"] - 0.05
    assert lim["exact"] and lim["contraction"] == pytest.approx(np.abs(ev).max(), abs=0.05)


@pytest.mark.parametrize("K, gl", [(1, 1.0), (3, 0.6), (1, 2.0)])
def test_simulated_contraction_from_the_same_polynomial(K, gl):
    """Odd K at eta = 0.9 of the edge (some a < 0: no symmetrizing scaling), g lam <= 1: the
    round map of ``Propagation`` is replaced by the symmetric E + F F^T of its module docstring
    (clients with N_j < d included), whose eigenvalues are the literal map's; g lam > 1 (complex
    eigenvalues) keeps the general eigenvalue problem."""
    d, s = 12, np.ones(12)
    X = _designs(d, GAM, 5)
    basis = [client_basis(dec) for dec in decompose(X, s, eager_v=True)]
    assert min(mu.size for _, mu in basis) < d
    eta = 1.8 / (L + LAM)
    prop = Propagation("fedprox", basis, [np.zeros((mu.size, 0)) for _, mu in basis],
                       [np.zeros((d, 0))] * 3, s, P, K, eta, gl / LAM, LAM, True)
    phi = _round_map_eigenvalues(d, K, eta, gl / LAM, seed=5)
    assert any(np.any(a < 0) for a, *_ in prop.f)
    same = prop._symmetric_map()
    assert (same is None) == (gl > 1)
    if same is not None:
        np.testing.assert_allclose(np.linalg.eigvalsh(same), np.sort(phi.real), rtol=0,
                                   atol=1e-12)
    assert prop.contraction() == pytest.approx(np.abs(phi).max(), rel=1e-12)


def test_steps_past_the_stability_edge_are_refused():
    """eta (L + lam) >= 2: the local steps diverge (odd K with g lam > 1 below it is covered:
    ``test_alg1_complex``)."""
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[3], lam=LAM)
    with pytest.raises(ValueError, match=r"step_size < 2 / \(L \+ lam\)"):
        riskcalc.rounds_limit("fedprox", local_steps=2, step_size=2.0 / (L + LAM), **kw)
    with pytest.raises(ValueError, match=r"step_size < 2 / \(L \+ lam\)"):
        algorithm1_contraction(gamma=GAM, lam=LAM, local_steps=2,
                                        step_size=2.1 / (L + LAM))


WELL = np.array([0.1, 0.2, 0.3])    # well-conditioned clients: the bottom can dominate


def test_contraction_bound_when_the_bottom_may_dominate():
    """Odd K with top < -inf a: the contraction reported is the bound max(top, -inf a) = 0.8,
    flagged; at d = 120 the literal map's spectral radius lies below it (and near it)."""
    lw = 0.5
    Lw = (1 + np.sqrt(WELL.max())) ** 2
    res = riskcalc.rounds_limit("fedprox", gamma=WELL, r=0.5, sigma=0.5, signal=1.0,
                                rounds=[1, 20], local_steps=1, step_size=1.8 / (Lw + lw),
                                lam=lw)
    assert res.diagnostics["contraction_is_bound"] and res.contraction == pytest.approx(0.8)
    ev = _round_map_eigenvalues(120, 1, 1.8 / (Lw + lw), 1.0 / lw, gam=WELL, lam=lw)
    assert np.abs(ev.imag).max() <= 1e-8
    assert 0.7 < np.abs(ev).max() <= 0.8 + 1e-9 and ev.real.max() < 0.75


def test_cli_says_when_the_contraction_is_a_bound(capsys):
    """The CLI's text and JSON carry the bound flag (and only where it applies)."""
    import json

    from riskcalc.cli import main

    argv = ["predict", "fedprox", "--gamma", "0.1", "--clients", "3", "--r", "0.5", "--sigma",
            "0.5", "--signal", "1", "--lam", "0.5", "--rounds", "1,inf", "--local-steps", "1"]
    assert main([*argv, "--local-step-size", "0.8"]) == 0
    assert "an upper bound" in capsys.readouterr().out
    assert main([*argv, "--local-step-size", "0.8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(r["diagnostics"]["contraction_is_bound"] for r in rows)
    assert main([*argv, "--local-step-size", "0.3", "--json"]) == 0     # below 1 / (L + lam)
    assert all("contraction_is_bound" not in r["diagnostics"]
               for r in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("gam, K, gl, shrinks", [(GAM, 3, 1.0, True), (GAM, 2, 2.0, True),
                                                 (WELL, 1, 1.0, False), (GAM, 1, 2.0, True)])
def test_simulation_at_two_d(gam, K, gl, shrinks):
    """The literal algorithm (exact given the designs) at d = 100 (4 designs) and 200 (3), eta
    = 0.9 of the edge: within 4 s.e. + 1/d of the limit at every round, the error shrinking
    with d (the
    third federation's contraction is the flagged bound: the curves do not use the bottom; its
    clients hold 3-10 times more samples than d, and its gap at d = 100, 0.35%, is already at
    the designs' noise, so only the bound is asserted there)."""
    top = (1 + np.sqrt(gam.max())) ** 2
    kw = dict(gamma=gam, r=R, sigma=SIG, signal=1.2, rounds=[1, 2, 5, 10], local_steps=K,
              step_size=1.8 / (top + LAM), lam=LAM, global_step=gl / LAM)
    lim = riskcalc.rounds_limit("fedprox", **kw)
    gaps = {}
    for d, reps in ((100, 4), (200, 3)):
        sim = simulate_rounds("fedprox", d=d, reps=reps, seed=7, measure="conditional", **kw)
        for got, se, want in ((sim.risk, sim.risk_se, lim.risk),
                              (sim.global_risk, sim.global_risk_se, lim.global_risk)):
            assert np.all(np.abs(got - want) <= 4 * se + want / d)
        gaps[d] = max(np.max(np.abs(sim.risk / lim.risk - 1)),
                      np.max(np.abs(sim.global_risk / lim.global_risk - 1)))
    assert gaps[200] < gaps[100] or not shrinks
