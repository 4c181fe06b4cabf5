"""Paper 004's Algorithm 1 with finite local steps when the pooled samples do not span R^d
(``riskcalc.linear.dynamics.algorithm1.pooled``: the common null space held apart), Sigma = I,
against independent routes: the round map's eigenvalues at finite d, the exact prox's D, the
polynomial in gamma that every finite-T risk is (fitted where the samples span), the pooled
min-norm interpolator at T = inf (FedAvg's K = 1 fixed point, the exact prox's), the exact prox
as K grows, and the literal algorithm at three d."""

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.pooled import _top_gap, pooled_atom, pooled_contraction
from riskcalc.linear.dynamics.prox_laws import ProxLaws

GAM = np.array([3.0, 2.5])                     # sum 1 / gamma = 0.733: mu0 = 0.267
R, SIG = [0.3, 0.5], [0.4, 0.2]
KW = dict(gamma=GAM.tolist(), r=R, sigma=SIG, signal=1.0, lam=0.7)


def _round_map(gam, p, lam, eta, K, g, d, seed):
    """Phi of ``algorithm1.rate`` at finite d (its w row and v_j rows), and a0."""
    rng = np.random.default_rng(seed)
    M, eye = len(gam), np.eye(d)
    big = np.zeros(((M + 1) * d,) * 2)
    gl = g * lam
    big[:d, :d] = (1.0 - gl) * eye
    for j, gj in enumerate(gam):
        X = rng.standard_normal((int(round(d / gj)), d))
        S = X.T @ X / X.shape[0]
        A = np.linalg.matrix_power(eye - eta * (S + lam * eye), K)
        C = np.linalg.solve(S + lam * eye, eye - A)
        blk = slice((j + 1) * d, (j + 2) * d)
        big[:d, :d] += gl * p[j] * lam * C
        big[:d, blk], big[blk, :d], big[blk, blk] = gl * p[j] * A, lam * C, A
    return big, (1.0 - eta * lam) ** K


def test_edge_on_the_pooled_range():
    """The top of the round map's spectrum on the pooled range against the eigenvalues of Phi
    at d = 200 with the null space's (1, a0, a0 (1 - g lam), d mu0 each) taken out, and its
    equation at z = 1 against the exact prox's D (its gap edge, ``subordination.edges``)."""
    p = (1.0 / GAM) / np.sum(1.0 / GAM)
    lam, eta, K, g = 0.7, 0.05, 5, 0.8 / 0.7
    sp = pooled_contraction(GAM, p, lam, eta, K, g)
    assert sp["atom"] == pytest.approx(1.0 - 1.0 / 3.0 - 1.0 / 2.5)
    a, _, mu0 = subordination.edges(ProxLaws(GAM, p, lam))
    assert mu0 == pytest.approx(sp["atom"])
    assert _top_gap(GAM, p, lam, eta, K, g, 1.0) == pytest.approx(a, rel=1e-10)
    big, a0 = _round_map(GAM, p, lam, eta, K, g, 200, 1)
    ev = np.linalg.eigvals(big)
    assert np.abs(ev.imag).max() < 1e-8
    ev = ev.real
    null = [np.abs(ev - v) < 1e-9 for v in (1.0, a0, a0 * (1.0 - g * lam))]
    assert [int(m.sum()) for m in null] == [round(200 * mu0)] * 3
    rest = ev[~np.any(null, axis=0)]
    assert abs(rest.max() - sp["top"]) < 0.15 * (1.0 - sp["top"])
    assert sp["top"] < 1.0 and sp["contraction"] == sp["top"]


def test_fixed_point_is_the_pooled_min_norm_interpolator():
    """T = inf: the server and every own model are the pooled min-norm interpolator
    (``algorithm1.pooled``, step 4), whatever the weights (uniform here, not the pooled
    objective's): FedAvg's K = 1 fixed point and the exact prox's."""
    weights = "uniform"
    lim = riskcalc.rounds_limit("pfedme", local_steps=3, step_size=0.1, rounds=[np.inf],
                                weights=weights, **KW)
    fedavg = riskcalc.rounds_limit("fedavg", local_steps=1, step_size=0.1, rounds=[np.inf],
                                   weights=weights, **{k: v for k, v in KW.items()
                                                       if k != "lam"})
    prox = riskcalc.rounds_limit("pfedme", local_steps=np.inf, rounds=[np.inf],
                                 weights=weights, **KW)
    for got in (lim.global_risk, lim.risk, prox.global_risk, prox.risk):
        np.testing.assert_allclose(got, fedavg.global_risk, rtol=1e-9)
    assert lim.diagnostics["atom_at_zero"] == pytest.approx(pooled_atom(GAM))


def test_one_polynomial_in_gamma_across_pooled_n_equal_d():
    """At finite T the risk is a polynomial in gamma_j (free moments of Marchenko-Pastur laws;
    weights fixed): with K = 2, T = 1 of degree 3 (degree 2 K in S). Fitted on four
    federations whose samples span, it must give the pooled N < d one (sum_j 1 / gamma_j
    = 0.67) to rounding: no jump across the boundary (a lost signal^2 mu0 would be 0.33).
    gamma_2 = 2.6 (0.72) ran the same branches nearer the fit, 1.2 s."""
    kw = dict(KW, lam=2.0, weights="uniform", local_steps=2, step_size=0.095, rounds=[1])
    pooled = [3.0]
    for g2, (got, fitted) in zip(pooled, continuation(kw, 3.0, [0.2, 0.35, 0.5, 0.65], pooled)):
        assert pooled_atom([3.0, g2]) > 0.25
        np.testing.assert_allclose(got, fitted, rtol=0, atol=1e-9)


def continuation(kw, gamma_1, span, targets):
    """(Algorithm 1's risks at T = rounds of kw, server and own models, at gamma = (gamma_1,
    t), the cubic in gamma_2 through their values at ``span`` evaluated at t) for each t of
    ``targets``: at finite T the risks are polynomials in gamma_j, so across pooled N = d the
    two agree to rounding (the pooled routes' continuation checks)."""
    def risks(g2):
        lim = riskcalc.rounds_limit("pfedme", **{**kw, "gamma": [gamma_1, g2]})
        return np.concatenate([lim.global_risk.ravel(), lim.risk.ravel()])
    coef = np.polynomial.polynomial.polyfit(span, np.array([risks(x) for x in span]), 3)
    return [(risks(t), np.polynomial.polynomial.polyval(t, coef)) for t in targets]


def literal_gaps(pooled, ds, rounds, **kw):
    """({d: the largest relative gap of the literal algorithm's server, own-model and
    RTFA-personalized (lam' = 0.5) risks to the ``pooled`` prediction at d}, the last
    simulation): ``montecarlo.linear.rounds`` at each d of ``ds`` (3 designs, seed 11, exact
    expectation over theta and noise given the designs; the pooled spectrum and shift routes'
    simulation checks). ``pooled`` holds ``rounds`` and then T = inf."""
    gaps, rtfa = {}, pooled.personalized_risk(lam=0.5)[:, :-1]
    for d in ds:
        sim = simulate_rounds("fedprox", d=d, reps=3, seed=11, measure="conditional",
                              rounds=rounds, personalize=({"lam": 0.5},), **kw)
        gaps[d] = max(np.max(np.abs(sim.global_risk / pooled.global_risk[:, :-1] - 1)),
                      np.max(np.abs(sim.risk / pooled.risk[:, :-1] - 1)),
                      np.max(np.abs(sim.personalized_risk(lam=0.5) / rtfa - 1)))
    return gaps, sim


def test_many_local_steps_approach_the_exact_prox():
    """K -> inf: the curves approach the exact prox's (``rounds_limit(local_steps=inf)``, the
    symmetric route with D's atom held apart) geometrically, like a0^K = (1 - eta lam)^K
    (measured: gaps 0.079, 0.029, 0.0060 at K = 3, 6, 12, ratios 0.37, 0.20 against a0^3 =
    0.51, a0^6 = 0.26; 3.6e-4 at K = 24)."""
    kw = dict(KW, lam=2.0, rounds=[1, 3])
    prox = riskcalc.rounds_limit("pfedme", local_steps=np.inf, **kw)
    gaps = []
    for K in (3, 6, 12):
        lim = riskcalc.rounds_limit("pfedme", local_steps=K, step_size=0.1, **kw)
        gaps.append(max(np.abs(lim.global_risk - prox.global_risk).max(),
                        np.abs(lim.risk - prox.risk).max()))
    a0 = 1.0 - 0.1 * 2.0
    assert gaps[2] < 0.01, gaps
    for k, step in ((1, 3), (2, 6)):
        assert 0.5 * a0 ** step < gaps[k] / gaps[k - 1] < 1.5 * a0 ** step, gaps


MC = dict(KW, rounds=[1, 3, 10, 30], local_steps=5, step_size=0.05)


@pytest.fixture(scope="module")
def mc_limit():
    """The curves of the simulation check below with T = 0 in front, solved once for it and
    for round zero's check (their rounds cost nothing: the solve is the edges and contour)."""
    return riskcalc.rounds_limit("pfedme", **{**MC, "rounds": [0] + MC["rounds"]})


def test_monte_carlo_gap_shrinks_in_d(mc_limit):
    """The literal algorithm (``montecarlo.linear.rounds``, exact expectation over theta and
    noise given the designs) at d = 50, 100, 200: server, own and RTFA-personalized models
    (the null space's signal^2 mu0 = 0.27 in each) within 1% at d = 200 and closer than at
    d = 50 (measured at d = 60, 120, 240: largest gaps 0.45%, 0.26%, 0.18%)."""
    rtfa = mc_limit.personalized_risk(lam=0.5)[:, 1:]
    gaps = {}
    for d in (50, 100, 200):
        sim = simulate_rounds("fedprox", d=d, reps=3, seed=11, measure="conditional",
                              personalize=({"lam": 0.5},), **MC)
        gaps[d] = max(np.max(np.abs(sim.global_risk / mc_limit.global_risk[:, 1:] - 1)),
                      np.max(np.abs(sim.risk / mc_limit.risk[:, 1:] - 1)),
                      np.max(np.abs(sim.personalized_risk(lam=0.5) / rtfa - 1)))
    assert gaps[200] < 0.01 and gaps[200] < gaps[50], gaps


def test_refused_outside_the_held_apart_scope():
    """Pooled N < d is covered for global_step * lam <= 1 and step_size (L + lam) <= 1 (a shared
    spectrum: ``tests/test_rounds_sigma_alg1_pooled.py``; covariate shift:
    ``tests/test_rounds_shift_alg1_pooled.py``)."""
    kw = dict(KW, rounds=[1], local_steps=2)
    with pytest.raises(ValueError, match="global_step"):
        riskcalc.rounds_limit("pfedme", step_size=0.05, global_step=2.0, **kw)
    with pytest.raises(ValueError, match="step_size <= 1 / "):
        riskcalc.rounds_limit("pfedme", step_size=0.15, **kw)


def test_personalization_at_round_zero_counts_the_null_space_once(mc_limit):
    """At T = 0 every server model is 0, so FTFA / RTFA from it are the same for Algorithm 1 and
    FedAvg; the pooled route's constant signal^2 mu0 belongs to T >= 1 only (it was added at
    T = 0 too, on top of the exact T = 0 value: RTFA 1.23 for 0.88 with gamma = (4, 2.5),
    mu0 = 0.35; here mu0 = 0.27, the K = 5 solve of the simulation check)."""
    fedavg = riskcalc.rounds_limit("fedavg", local_steps=1, step_size=0.1, rounds=[0],
                                   **{k: v for k, v in KW.items() if k != "lam"})
    for how in (dict(lam=0.7), dict(steps=3, step_size=0.1)):
        np.testing.assert_allclose(mc_limit.personalized_risk(**how)[:, 0],
                                   fedavg.personalized_risk(**how)[:, 0], rtol=1e-12)
