"""riskcalc.rounds_limit("pfedme") (paper 004's Algorithm 1 with exact local solves, eq. 10)
against independent routes: the finite-M pFedMe limit of ``clients_limit`` (a different
derivation: the joint objective's own subordination, ``finite_clients.own``), the prox filter's
expectations by Marchenko-Pastur quadrature, free moments of the first round, and the exact
conditional risk of the literal algorithm at finite d (``montecarlo.linear.rounds``)."""

import numpy as np
import pytest

import riskcalc
import riskcalc.linear.dynamics
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics.prox_laws import ProxLaws
from riskcalc.linear.engine.mp_quadrature import mp_expect
from tests.test_rounds_alg1_pooled import _round_map

GAM = [0.5, 2.0, 1.5]
R = [0.3, 0.6, 1.0]
SIG = [0.4, 0.6, 1.0]


@pytest.mark.parametrize("weights, lam, g", [("uniform", 0.7, None), ("samples", 2.0, 0.3),
                                             ([0.2, 0.5, 0.3], 0.3, 2.5)])
def test_fixed_point_is_the_pfedme_joint_objective(weights, lam, g):
    """T = inf: the server model is the minimizer of sum_j p_j F_j (F_j the Moreau envelope,
    paper 004 eq. 8) and each client's own model its prox, i.e. pFedMe's finite-M limit."""
    res = riskcalc.rounds_limit("fedprox", gamma=GAM, r=R, sigma=SIG, signal=1.3,
                                rounds=[np.inf], local_steps=np.inf, lam=lam,
                                global_step=g, weights=weights)
    want = riskcalc.clients_limit("pfedme", gamma=GAM, r=R, sigma=SIG, lam=lam,
                                  weights=weights)
    np.testing.assert_allclose(res.risk[:, 0], want.risk, rtol=1e-9)
    np.testing.assert_allclose(res.bias[:, 0], want.bias, rtol=1e-8, atol=1e-12)
    assert res.converges and res.distance_to_fixed_point[0] == 0.0


def test_prox_filter_expectations_against_quadrature():
    """The partial-fraction expectations of ``ProxLaws`` equal MP quadrature of the
    integrands at points off the spectrum (both atoms: gamma < 1 and gamma > 1)."""
    gam, p, lam = np.array([0.5, 2.0]), np.array([0.4, 0.6]), 0.7
    laws = ProxLaws(gam, p, lam)
    om = np.array([[0.3 + 0.2j, 1.0 + 0.05j], [0.2 + 0.3j, -0.1 + 0.1j]])
    E0, dE0 = laws.cauchy(om)
    P, S = laws.families(om, E0)
    for j in range(2):
        for k in range(2):
            w, pj = om[j, k], p[j]

            def f(s):
                q = s / (s + lam)
                base = 1.0 / (w - pj * q)
                return (base, base ** 2, q ** 2 * base, base / (s + lam),
                        s / (s + lam) ** 2 * base)
            ref = [mp_expect(gam[j:j + 1], lambda s: tuple(part(x) for x in f(s)))[:, 0]
                   for part in (np.real, np.imag)]
            ref = ref[0] + 1j * ref[1]
            got = [E0[j, k], -dE0[j, k], P[2][j, k], S[1][j, k], S[2][j, k]]
            np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-13)


def test_first_round_is_a_free_moment_formula():
    """T = 1: w_1 = g lam sum_j p_j q_j S_j^+ b_j; by freeness of the S_j its risk for client i
    is a polynomial in per-client MP moments of q(s) = s / (s + lam) (no subordination)."""
    gam, r, sig, s, lam, g = np.array(GAM), np.array(R), np.array(SIG), 1.1, 0.8, 0.9
    p = (1 / gam) / np.sum(1 / gam)
    m = mp_expect(gam, lambda x: (x / (x + lam), (x / (x + lam)) ** 2, x / (x + lam) ** 2))
    q1, q2, q2s = m
    gl = g * lam
    tau_D, tau_D2 = np.sum(p * q1), np.sum(p ** 2 * q2) + np.sum(p * q1) ** 2 \
        - np.sum(p ** 2 * q1 ** 2)
    bias = (s ** 2 * (1 - 2 * gl * tau_D + gl ** 2 * tau_D2) + gl ** 2 * np.sum(p ** 2 * r ** 2
            * q2) - 2 * gl * p * r ** 2 * q1 + r ** 2)
    var = gl ** 2 * np.sum(p ** 2 * sig ** 2 * gam * q2s)
    res = riskcalc.rounds_limit("pfedme", gamma=gam, r=r, sigma=sig, signal=s, rounds=1,
                                local_steps=np.inf, lam=lam, global_step=g)
    np.testing.assert_allclose(res.global_risk[:, 0], bias + var, rtol=1e-10)


def test_against_the_literal_algorithm_at_finite_d():
    """The exact conditional risk of the literal Algorithm 1 (column propagation, 3 draws) at
    d = 60 and 240 approaches the limit, server and own models alike; at d = 240 within 1.5%
    (measured: 0.5% at d = 80, 0.2% at d = 320)."""
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.3, rounds=[1, 3, 10, np.inf],
              local_steps=np.inf, lam=0.7, global_step=1.2)
    lim = riskcalc.rounds_limit("pfedme", **kw)
    gaps = {}
    for d in (60, 240):
        sim = simulate_rounds("fedprox", step_size=None, d=d, reps=3, seed=7,
                              measure="conditional", **kw)
        gaps[d] = max(np.max(np.abs(sim.risk / lim.risk - 1)),
                      np.max(np.abs(sim.global_risk / lim.global_risk - 1)))
    assert gaps[240] < 0.015 and gaps[240] < gaps[60]


def test_contraction_and_divergence():
    """The round map's step is gamma lam (eq. 10): with gamma lam above 2 / top of D the curve
    diverges and is reported so, and its fixed point is refused."""
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, local_steps=np.inf, lam=0.5)
    ok = riskcalc.rounds_limit("pfedme", rounds=[5], global_step=1.0 / 0.5, **kw)
    top = ok.diagnostics["edges"][1]
    assert ok.converges and np.isclose(ok.contraction, max(abs(1 - ok.diagnostics["edges"][0]),
                                                           abs(1 - top)))
    bad = riskcalc.rounds_limit("pfedme", rounds=[5, 50], global_step=2.2 / (0.5 * top), **kw)
    assert not bad.converges and bad.global_risk[0, 1] > bad.global_risk[0, 0]
    with pytest.raises(ValueError, match="diverges"):
        riskcalc.rounds_limit("pfedme", rounds=[np.inf], global_step=2.2 / (0.5 * top), **kw)


@pytest.mark.parametrize("bad, match", [
    ({"lam": None}, "needs lam"), ({"lam": 0.0}, "lam"),
    ({"local_steps": 4, "step_size": 0.3}, r"step_size < 2 / \(L \+ lam\)"),
    ({"global_step": 0.0}, "global_step"), ({"method": "maml_fl"}, "method")])
def test_bad_input(bad, match):
    kw = dict(method="pfedme", gamma=[0.5, 2.0], r=[0.3, 0.4], sigma=0.5, signal=1.0,
              rounds=3, local_steps=np.inf, lam=1.0, global_step=1.5)
    kw.update(bad)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit(kw.pop("method"), **kw)


def _two_by_two_radius(gam, lam, eta, K, g):
    """One client: along each eigenvector of S (eigenvalue s) the round map is the 2 x 2
    matrix [[1 - g lam + g lam^2 c, g lam a], [lam c, a]]; its spectral radius, maximized over
    a dense grid of the Marchenko-Pastur support."""
    s = np.linspace((1 - np.sqrt(gam)) ** 2, (1 + np.sqrt(gam)) ** 2, 200001)
    a = (1 - eta * (s + lam)) ** K
    c = (1 - a) / (s + lam)
    m = np.array([[1 - g * lam + g * lam ** 2 * c, g * lam * a], [lam * c, a]]).transpose(2, 0, 1)
    return np.abs(np.linalg.eigvals(m)).max()


@pytest.mark.parametrize("K, g", [(1, 1.2), (3, 3.0), (10, 1.2)])
def test_finite_k_rate_of_one_client_is_the_two_by_two_radius(K, g):
    lam, gam = 0.7, 0.5
    eta = 1 / ((1 + np.sqrt(gam)) ** 2 + lam)
    got = riskcalc.linear.dynamics.algorithm1_contraction(gamma=gam, lam=lam, local_steps=K,
                                                          step_size=eta, global_step=g)
    assert got["contraction"] == pytest.approx(_two_by_two_radius(gam, lam, eta, K, g),
                                               rel=1e-9)


def test_finite_k_rate_tends_to_the_exact_prox_rate():
    kw = dict(gamma=[0.5], lam=0.7, global_step=1.2)
    eta = 1 / ((1 + np.sqrt(0.5)) ** 2 + 0.7)
    exact = riskcalc.linear.dynamics.algorithm1_contraction(local_steps=np.inf, step_size=eta,
                                                            **kw)["contraction"]
    rates = [riskcalc.linear.dynamics.algorithm1_contraction(local_steps=K, step_size=eta,
                                                             **kw)["contraction"]
             for K in (1, 5, 25, 400)]
    assert np.all(np.diff(rates) < 0) and rates[-1] == pytest.approx(exact, rel=1e-9)


def test_finite_k_rate_against_the_literal_round_map():
    """Two clients: the extreme eigenvalues of the literal (M + 1) d round map at d = 400 (all
    real, as the symmetrization says) are within 1% of the limit's edges (measured: 0.1% at
    the top; the bottom -0.7467, -0.7476, -0.7491 at d = 200, 400, 800 against -0.7508)."""
    gam, p, lam, K, g = np.array([0.5, 1.5]), np.array([0.4, 0.6]), 0.7, 4, 3.0
    eta = 1 / ((1 + np.sqrt(1.5)) ** 2 + lam)
    lim = riskcalc.linear.dynamics.algorithm1_contraction(
        gamma=gam, lam=lam, local_steps=K, step_size=eta, global_step=g, weights=p)
    assert lim["bottom"] is not None and lim["bottom"] < 0
    rng = np.random.default_rng(np.random.SeedSequence(4).spawn(1)[0])
    d, eye = 400, np.eye(400)
    blocks = []
    for gm in gam:
        X = rng.standard_normal((int(round(d / gm)), d))
        S = X.T @ X / X.shape[0]
        A = np.linalg.matrix_power(eye - eta * (S + lam * eye), K)
        blocks.append((A, (eye - A) @ np.linalg.inv(S + lam * eye)))
    big = np.zeros((3 * d, 3 * d))
    big[:d, :d] = (1 - g * lam) * eye + g * lam ** 2 * sum(pj * C for pj, (_, C) in
                                                          zip(p, blocks))
    for j, (A, C) in enumerate(blocks):
        big[:d, (j + 1) * d:(j + 2) * d] = g * lam * p[j] * A
        big[(j + 1) * d:(j + 2) * d, :d] = lam * C
        big[(j + 1) * d:(j + 2) * d, (j + 1) * d:(j + 2) * d] = A
    ev = np.linalg.eigvals(big)
    assert np.abs(ev.imag).max() < 1e-8
    assert np.abs(ev).max() == pytest.approx(lim["contraction"], rel=1e-2)
    assert ev.real.min() == pytest.approx(lim["bottom"], rel=1e-2)


def test_finite_k_rate_refuses_what_it_does_not_cover():
    with pytest.raises(ValueError, match="step_size"):
        riskcalc.linear.dynamics.algorithm1_contraction(gamma=[0.5, 1.5], lam=0.7,
                                                        local_steps=3, step_size=0.5)
    # Pooled N < d: refused beyond global_step * lam = 1 (was refused as a whole); within it
    # the top on the pooled range, against the literal round map's eigenvalues with the null
    # space's taken out (``tests/test_rounds_alg1_pooled.py``).
    with pytest.raises(ValueError, match="global_step"):
        riskcalc.linear.dynamics.algorithm1_contraction(gamma=[3.0, 3.0], lam=0.7,
                                                        local_steps=3, step_size=0.05,
                                                        global_step=2.0)
    lim = riskcalc.linear.dynamics.algorithm1_contraction(gamma=[3.0, 3.0], lam=0.7,
                                                          local_steps=3, step_size=0.12)
    big, a0 = _round_map([3.0, 3.0], [0.5, 0.5], 0.7, 0.12, 3, 1 / 0.7, 300, 2)
    ev = np.linalg.eigvals(big).real
    rest = ev[np.all([np.abs(ev - v) > 1e-9 for v in (1.0, a0, 0.0)], axis=0)]
    assert abs(rest.max() - lim["contraction"]) < 0.35 * (1.0 - lim["contraction"])
