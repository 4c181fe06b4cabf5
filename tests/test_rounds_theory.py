"""riskcalc.rounds_limit (FedAvg with K local steps along the rounds, Sigma = I) against
independent routes: existing limits (steps_limit, clients_limit, isotropic factors), free
moments computed by Marchenko-Pastur quadrature without any subordination, the exact
finite-d algebra of the literal algorithm, and finite-d spectra."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.client_laws import ClientLaws
from riskcalc.linear.engine.marchenko_pastur import isotropic_factors
from riskcalc.linear.engine.mp_quadrature import mp_expect

GAM = np.array([0.5, 2.0, 1.5])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])


def _moments(gam, eta, K):
    """E[q], E[q^2], E[q^3], E[q^2 / s] under MP(gamma) by quadrature (no subordination)."""
    def q(s):
        return 1.0 - (1.0 - eta * s) ** K
    out = mp_expect(np.asarray(gam, float), lambda s: (
        q(s), q(s) ** 2, q(s) ** 3, q(s) ** 4,
        np.where(s > 0, q(s) ** 2 / np.where(s > 0, s, 1.0), 0.0),
        np.where(s > 0, q(s) ** 3 / np.where(s > 0, s, 1.0), 0.0),
        np.where(s > 0, q(s) ** 4 / np.where(s > 0, s, 1.0), 0.0)))
    return out


def test_one_client_one_step_is_steps_limit_local():
    T = [0, 1, 2, 5, 20, 100]
    for gam, g in [(2.0, 1.3), (0.4, 0.7)]:
        res = riskcalc.rounds_limit("fedavg", gamma=gam, r=0.7, sigma=0.5, signal=1.1, rounds=T,
                                    local_steps=1, step_size=0.2, global_step=g)
        ref = riskcalc.steps_limit("local", gamma=gam, sigma=0.5, rho=np.hypot(1.1, 0.7),
                                   steps=T, step_size=0.2 * g)
        np.testing.assert_allclose(res.bias[0], ref.bias, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.variance[0], ref.variance, rtol=0, atol=1e-12)


@pytest.mark.parametrize("weights", ["samples", "uniform", [0.2, 0.5, 0.3]])
def test_fixed_point_with_one_local_step_is_the_fedavg_minimizer(weights):
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.3,
                                rounds=np.inf, local_steps=1, step_size=0.25,
                                weights=weights)
    ref = riskcalc.clients_limit("fedavg", gamma=GAM, r=R, sigma=SIG, weights=weights)
    assert res.converges
    np.testing.assert_allclose(res.bias[:, 0], ref.bias, rtol=0, atol=1e-11)
    np.testing.assert_allclose(res.variance[:, 0], ref.variance, rtol=0, atol=1e-11)
    assert res.distance_to_fixed_point[0] == 0.0


def test_fixed_point_below_the_threshold_is_min_norm_least_squares():
    """M = 1, gamma > 1: gradient descent from 0 stays in the range: ridgeless limits."""
    res = riskcalc.rounds_limit("fedavg", gamma=3.0, r=0.6, sigma=0.5, signal=0.8,
                                rounds=np.inf, local_steps=4, step_size=0.15)
    b, v = isotropic_factors(3.0, 0.0)
    np.testing.assert_allclose(res.bias[0, 0], (0.8 ** 2 + 0.6 ** 2) * b, rtol=1e-11)
    np.testing.assert_allclose(res.variance[0, 0], 0.25 * v, rtol=1e-11)


def test_exact_local_solves_one_round_is_one_shot_averaging():
    gam = np.array([0.5, 2.0, 3.0, 1.5])
    r, sig, s = np.array([0.3, 0.8, 0.5, 0.2]), np.array([0.4, 0.6, 1.0, 0.3]), 1.2
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=r, sigma=sig, signal=s, rounds=1,
                                local_steps=np.inf)
    p = (1 / gam) / np.sum(1 / gam)
    alpha = np.minimum(1.0, 1.0 / gam)          # tau(P_j); free projections
    tD = np.sum(p * alpha)
    tD2 = np.sum(p ** 2 * alpha) + tD ** 2 - np.sum((p * alpha) ** 2)
    _, vfac = isotropic_factors(gam, 0.0)        # sigma^2 gamma tau(S^+) = local LS variance
    bias = (s ** 2 * (1 - 2 * tD + tD2) + np.sum(p ** 2 * r ** 2 * alpha)
            - 2 * p * r ** 2 * alpha + r ** 2)
    var = np.sum(p ** 2 * sig ** 2 * vfac)
    np.testing.assert_allclose(res.bias[:, 0], bias, rtol=1e-12)
    np.testing.assert_allclose(res.variance[:, 0], var, rtol=1e-12)


@pytest.mark.parametrize("K", [1, 3, 7])
def test_first_two_rounds_match_free_moments(K):
    """T = 1 and T = 2 are polynomials of degree <= 4 in D: free mixed moments of the
    independent q(S_j), each a Marchenko-Pastur quadrature (no subordination, no contour)."""
    eta, g, s = 0.3, 1.4, 0.9
    p = np.array([0.5, 0.2, 0.3])
    m1, m2, m3, m4, h2, h3, h4 = _moments(GAM, eta, K)
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=s, rounds=[1, 2],
                                local_steps=K, step_size=eta, global_step=g, weights=p)
    # T = 1: w_1 = g sum p_j q_j (theta_j + noise), tau((1 - gD)^2) from tau(D), tau(D^2).
    tD = np.sum(p * m1)
    tD2 = np.sum(p ** 2 * m2) + tD ** 2 - np.sum((p * m1) ** 2)
    bias1 = (s ** 2 * (1 - 2 * g * tD + g ** 2 * tD2) + g ** 2 * np.sum(p ** 2 * R ** 2 * m2)
             - 2 * g * p * R ** 2 * m1 + R ** 2)
    var1 = g ** 2 * np.sum(p ** 2 * SIG ** 2 * GAM * h2)
    np.testing.assert_allclose(res.bias[:, 0], bias1, rtol=1e-10)
    np.testing.assert_allclose(res.variance[:, 0], var1, rtol=1e-10)

    # T = 2: R_2(x) = g (2 - g x); traces tau(h_j D) and tau(h_j D^2) of a client function
    # h_j of S_j: with S = sum_{k != j} p_k m1_k and freeness,
    # tau(h D) = p_j tau(h q_j) + tau(h) S,
    # tau(h D^2) = p_j^2 tau(h q_j^2) + 2 p_j tau(h q_j) S + tau(h) (sum_{k != j} p_k^2 m2_k
    #              + S^2 - sum_{k != j} p_k^2 m1_k^2).
    S = tD - p * m1
    rest = np.sum(p ** 2 * m2) - p ** 2 * m2 + S ** 2 - (np.sum((p * m1) ** 2) - (p * m1) ** 2)

    def tr_R(h0, h1):                         # tau(h R_2(D)), h1 = tau(h q_j)
        return g * (2 * h0 - g * (p * h1 + h0 * S))

    def tr_R2(h0, h1, h2_):                   # tau(h R_2(D)^2), h2_ = tau(h q_j^2)
        hD = p * h1 + h0 * S
        hD2 = p ** 2 * h2_ + 2 * p * h1 * S + h0 * rest
        return g ** 2 * (4 * h0 - 4 * g * hD + g ** 2 * hD2)

    theta0 = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=0.0,
                                   rounds=[2], local_steps=K, step_size=eta, global_step=g,
                                   weights=p)
    bias2 = (np.sum(p ** 2 * R ** 2 * tr_R2(m2, m3, m4)) - 2 * p * R ** 2 * tr_R(m1, m2)
             + R ** 2)
    var2 = np.sum(p ** 2 * SIG ** 2 * GAM * tr_R2(h2, h3, h4))
    np.testing.assert_allclose(theta0.bias[:, 0], bias2, rtol=1e-10)
    np.testing.assert_allclose(theta0.variance[:, 0], var2, rtol=1e-10)
    np.testing.assert_allclose(res.variance[:, 1], var2, rtol=1e-10)


# ---- finite d ---------------------------------------------------------------------------

def _draw(rng, d, gam, eta, K):
    Xs, Ss, Qs = [], [], []
    for gm in gam:
        n = int(round(d / gm))
        X = rng.standard_normal((n, d))
        S = X.T @ X / n
        A = np.linalg.matrix_power(np.eye(d) - eta * S, K)
        Xs.append(X), Ss.append(S), Qs.append(np.eye(d) - A)
    return Xs, Ss, Qs


def _trace_formula(Ss, Qs, Xs, p, r, sig, s, g, T):
    """Step 2 of ``fedavg``'s derivation at finite d (eigendecomposition of D), all T."""
    d = Ss[0].shape[0]
    D = sum(pj * Q for pj, Q in zip(p, Qs))
    lam, V = np.linalg.eigh(D)
    T = np.asarray(T, float)[:, None]
    A = (1 - g * lam) ** (2 * T)
    Rt = np.where(lam > 1e-10, (1 - (1 - g * lam) ** T) / np.where(lam > 1e-10, lam, 1),
                  g * T)
    others_b, var, own = 0.0, 0.0, []
    for pj, rj, sj, Q, S, X in zip(p, r, sig, Qs, Ss, Xs):
        Qt = V.T @ Q @ V
        others_b = others_b + pj ** 2 * rj ** 2 * (Rt ** 2 @ np.sum(Qt * Qt, axis=0)) / d
        own.append(Rt @ np.diag(Qt) / d)
        Sp = np.linalg.pinv(S, hermitian=True)
        N = V.T @ Q @ Sp @ Q @ V
        var = var + pj ** 2 * sj ** 2 * (Rt ** 2 @ np.diag(N)) / X.shape[0]
    bias = np.array([s ** 2 * A.sum(axis=1) / d + others_b - 2 * pj * rj ** 2 * o + rj ** 2
                     for pj, rj, o in zip(p, r, own)])
    return bias, np.broadcast_to(var, bias.shape)


def test_trace_formula_is_the_literal_algorithm_at_finite_d():
    """Steps 1-2 of the derivation: run the algorithm itself on coefficient matrices (theta_0,
    u_j, eps_j as identity blocks) and read off the exact conditional risk."""
    rng = np.random.default_rng(np.random.SeedSequence(29).spawn(1)[0])
    d, gam, eta, K, g = 30, np.array([2.0, 0.5, 1.0]), 0.2, 3, 1.2
    p, r, sig, s = np.array([0.2, 0.5, 0.3]), np.array([0.3, 0.7, 0.4]), \
        np.array([0.5, 0.2, 0.8]), 0.9
    Xs, Ss, Qs = _draw(rng, d, gam, eta, K)
    ns = [X.shape[0] for X in Xs]
    cols = d * (1 + len(gam)) + sum(ns)
    offs = np.cumsum([0, d] + [d] * len(gam) + ns)
    w = np.zeros((d, cols))
    lit_b, lit_v = [], []
    for T in range(6):
        bs, vs = [], []
        for i in range(len(gam)):
            e = w.copy()
            e[:, offs[0]:offs[1]] -= np.eye(d)
            e[:, offs[1 + i]:offs[2 + i]] -= np.eye(d)
            bs.append(s ** 2 * np.sum(e[:, :d] ** 2) / d + sum(
                r[j] ** 2 * np.sum(e[:, offs[1 + j]:offs[2 + j]] ** 2) / d
                for j in range(len(gam))))
            vs.append(sum(sig[j] ** 2 * np.sum(e[:, offs[1 + len(gam) + j]:
                                                     offs[2 + len(gam) + j]] ** 2)
                          for j in range(len(gam))))
        lit_b.append(bs), lit_v.append(vs)
        new = (1 - g) * w
        for j, (X, S) in enumerate(zip(Xs, Ss)):
            y = np.zeros((ns[j], cols))              # y_j = X_j theta_0 + X_j u_j + eps_j
            y[:, :d] = X
            y[:, offs[1 + j]:offs[2 + j]] = X
            y[:, offs[1 + len(gam) + j]:offs[2 + len(gam) + j]] = np.eye(ns[j])
            v = w.copy()
            for _ in range(K):
                v = v - eta * (S @ v - X.T @ y / ns[j])
            new = new + g * p[j] * v
        w = new
    bias, var = _trace_formula(Ss, Qs, Xs, p, r, sig, s, g, range(6))
    np.testing.assert_allclose(bias, np.array(lit_b).T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, np.array(lit_v).T, rtol=1e-10, atol=1e-12)


def test_limit_against_finite_d_spectra():
    """The exact conditional risk at d = 100 and 400 (3 draws each) approaches the limit; at
    d = 400 the gap is below 1.5% of the risk plus 3 standard errors (measured: the gap
    shrinks roughly like 1/d)."""
    gam, eta, K, g = GAM, 0.3, 4, 1.1
    T = [0, 1, 3, 10, 30]
    p = (1 / gam) / np.sum(1 / gam)
    lim = riskcalc.rounds_limit("fedavg", gamma=gam, r=R, sigma=SIG, signal=1.0, rounds=T,
                                local_steps=K, step_size=eta, global_step=g)
    gaps = {}
    for d, seed in [(100, 1), (400, 2)]:
        draws = []
        for child in np.random.SeedSequence(seed).spawn(3):
            Xs, Ss, Qs = _draw(np.random.default_rng(child), d, gam, eta, K)
            b, v = _trace_formula(Ss, Qs, Xs, p, R, SIG, 1.0, g, T)
            draws.append(b + v)
        draws = np.array(draws)
        mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
        gaps[d] = np.abs(mean - lim.risk)
        if d == 400:
            assert np.all(gaps[d] <= 0.015 * lim.risk + 3 * se)
    assert gaps[400].max() < gaps[100].max()


def test_support_edges_against_a_large_draw():
    """The contraction comes from the edges of D's spectrum: against eigenvalues at d = 600
    (edge fluctuations O(d^{-2/3}))."""
    gam, eta, K = np.array([2.0, 3.0, 4.0]), 0.2, 3
    p = (1 / gam) / np.sum(1 / gam)
    a, b, mu0 = subordination.edges(ClientLaws(gam, p, eta, K))
    rng = np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0])
    _, _, Qs = _draw(rng, 600, gam, eta, K)
    ev = np.linalg.eigvalsh(sum(pj * Q for pj, Q in zip(p, Qs)))
    assert mu0 == 0.0 and abs(ev.min() - a) < 0.01 * b and abs(ev.max() - b) < 0.02 * b
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=0.5, sigma=0.5, signal=1.0, rounds=1,
                                local_steps=K, step_size=eta, global_step=1.5)
    assert res.contraction == pytest.approx(max(abs(1 - 1.5 * a), abs(1 - 1.5 * b)))
    # Exact local solves, pooled N < d: D = sum p_j P_j has an atom 1/6 at 0 and a gap
    # below the rest (the edge on the branch omega_j in (0, p_j)).
    gam = np.array([2.0, 3.0])
    p = (1 / gam) / np.sum(1 / gam)
    a, b, mu0 = subordination.edges(ClientLaws(gam, p, eta, np.inf))
    Ps = []
    for gm in gam:
        X = rng.standard_normal((int(round(600 / gm)), 600))
        Ps.append(X.T @ np.linalg.solve(X @ X.T, X))
    ev = np.linalg.eigvalsh(p[0] * Ps[0] + p[1] * Ps[1])
    nonzero = ev[ev > 1e-9]
    assert mu0 == pytest.approx(1 / 6) and np.mean(ev <= 1e-9) == pytest.approx(1 / 6, abs=2e-3)
    assert abs(nonzero.min() - a) < 0.05 * a and abs(nonzero.max() - b) < 0.01


def test_point_spectrum_and_atom_at_zero():
    """K = inf with every gamma < 1: D = I exactly (one round solves); every gamma > 1 with
    sum 1/gamma < 1: an atom 1 - sum 1/gamma at 0 that no round ever learns."""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.8], r=0.4, sigma=0.3, signal=1.0,
                                rounds=[1, 5, np.inf], local_steps=np.inf)
    assert res.contraction == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(res.risk[:, 0], res.risk[:, 2], rtol=1e-10)
    res = riskcalc.rounds_limit("fedavg", gamma=[3.0, 4.0], r=0.0, sigma=0.0, signal=1.0,
                                rounds=[0, 50, np.inf], local_steps=2, step_size=0.1)
    atom = 1 - 1 / 3 - 1 / 4
    assert res.risk[0, 0] == pytest.approx(1.0) and res.risk[0, 2] == pytest.approx(atom, 1e-9)
    assert res.risk[0, 1] > atom


def test_diverging_iteration_is_a_result_and_its_fixed_point_an_error():
    kw = dict(gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0, local_steps=3, step_size=0.3,
              global_step=4.0)
    res = riskcalc.rounds_limit("fedavg", rounds=[0, 5, 100000], **kw)
    assert not res.converges and res.contraction > 1
    assert res.risk[0, 1] > res.risk[0, 0] and np.isinf(res.risk[0, 2])
    with pytest.raises(ValueError, match="diverges"):
        riskcalc.rounds_limit("fedavg", rounds=np.inf, **kw)


@pytest.mark.parametrize("bad, match", [
    ({"local_steps": 0}, "local_steps"), ({"local_steps": 2.5}, "local_steps"),
    ({"rounds": -1}, "rounds"), ({"rounds": 1.5}, "rounds"), ({"step_size": 0}, "step_size"),
    ({"step_size": 1.0}, "diverges on a client"), ({"global_step": -1}, "global_step"),
    ({"weights": "equal"}, "weights"), ({"lam": 0.1}, "lam"), ({"gamma": [1, 2, 3]}, "one length"),
    ({"method": "fedprox", "lam": None}, "needs lam"), ({"method": "ftfa"}, "method"),
    ({"gamma": [2.0, 2.0]}, "reaches 0")])
def test_bad_input(bad, match):
    kw = dict(method="fedavg", gamma=[0.5, 2.0], r=[0.3, 0.4], sigma=0.5, signal=1.0,
              rounds=3, local_steps=2, step_size=0.2)
    kw.update(bad)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit(kw.pop("method"), **kw)


def test_optimal_rounds_and_rounds_to_eps():
    kw = dict(gamma=[2.0, 3.0, 1.5], r=[0.2, 0.3, 0.25], sigma=1.0, signal=1.0,
              local_steps=5, step_size=0.2)
    best = riskcalc.optimal_rounds("fedavg", max_rounds=60, **kw)
    curve = riskcalc.rounds_limit("fedavg", rounds=range(61), **kw)
    assert best.rounds == int(np.argmin(curve.risk[0])) and best.gradient_evaluations == \
        5 * best.rounds
    worst = riskcalc.optimal_rounds("fedavg", objective="worst", max_rounds=60, **kw)
    assert worst.value == pytest.approx(curve.risk.max(axis=0).min())
    hit = riskcalc.rounds_to_eps("fedavg", eps=1e-3, of="distance", max_rounds=400, **kw)
    dist = hit.curve.distance_to_fixed_point
    assert dist[hit.rounds] <= 1e-3 < dist[hit.rounds - 1]
    assert np.all(np.diff(dist[:-1]) <= 0)
    with pytest.raises(ValueError, match="not reached"):
        riskcalc.rounds_to_eps("fedavg", eps=1e-6, of="distance", max_rounds=3, **kw)


# ---- the clients' own models after their local steps -------------------------------------

def test_local_models_identities():
    """M = 1, g = 1: the local model of round T is the server model after T rounds; T = 1:
    K local steps from 0 (steps_limit('local')); K = inf with gamma_i < 1: local least
    squares whatever the server model."""
    res = riskcalc.rounds_limit("fedavg", gamma=2.0, r=0.5, sigma=0.7, signal=1.0,
                                rounds=[0, 1, 2, 5, 20, np.inf], local_steps=3, step_size=0.2)
    np.testing.assert_allclose(res.local_risk, res.risk, rtol=0, atol=1e-12)
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[1],
                                local_steps=4, step_size=0.2, global_step=1.3)
    for i in range(3):
        ref = riskcalc.steps_limit("local", gamma=GAM[i], sigma=SIG[i], rho=np.hypot(1, R[i]),
                                   steps=4, step_size=0.2)
        assert res.local_risk[i, 0] == pytest.approx(ref.risk, abs=1e-12)
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.0,
                                rounds=[2, 7, np.inf], local_steps=np.inf)
    _, v = isotropic_factors(0.5, 0.0)
    np.testing.assert_allclose(res.local_risk[0], SIG[0] ** 2 * v, rtol=1e-10)


def _literal_local(d, seed, gam, p, r, sig, s, eta, K, g, rounds):
    """Exact conditional risk of every client's local model (round T from w_{T-1}), by
    running the algorithm on coefficient matrices (theta_0, u_j, eps_j as identity blocks)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    Xs, Ss, _ = _draw(rng, d, gam, eta, K)
    M, ns = len(gam), [X.shape[0] for X in Xs]
    offs = np.cumsum([0, d] + [d] * M + ns)
    w = np.zeros((d, offs[-1]))
    out = np.zeros((M, max(rounds) + 1))
    for T in range(1, max(rounds) + 1):
        new = (1 - g) * w
        for j, (X, S) in enumerate(zip(Xs, Ss)):
            y = np.zeros((ns[j], offs[-1]))
            y[:, :d] = X
            y[:, offs[1 + j]:offs[2 + j]] = X
            y[:, offs[1 + M + j]:offs[2 + M + j]] = np.eye(ns[j])
            v, Xy = w.copy(), X.T @ y / ns[j]
            for _ in range(K):
                v = v - eta * (S @ v - Xy)
            e = v.copy()
            e[:, :d] -= np.eye(d)
            e[:, offs[1 + j]:offs[2 + j]] -= np.eye(d)
            out[j, T] = (s ** 2 * np.sum(e[:, :d] ** 2) / d
                         + sum(r[k] ** 2 * np.sum(e[:, offs[1 + k]:offs[2 + k]] ** 2) / d
                               for k in range(M))
                         + sum(sig[k] ** 2 * np.sum(e[:, offs[1 + M + k]:offs[2 + M + k]] ** 2)
                               for k in range(M)))
            new = new + g * p[j] * v
        w = new
    return out[:, rounds]


def test_local_models_against_the_literal_algorithm():
    """Heterogeneous M = 3 (the two-point functions of D): the literal algorithm's exact
    conditional risk at d = 60 and 240 (2 draws each) approaches the limit; at d = 240 within
    2% (measured: the gap shrinks with d)."""
    gam, eta, K, g, s = GAM, 0.25, 3, 1.2, 1.0
    p = (1 / gam) / np.sum(1 / gam)
    rounds = [1, 2, 4, 6]
    lim = riskcalc.rounds_limit("fedavg", gamma=gam, r=R, sigma=SIG, signal=s, rounds=rounds,
                                local_steps=K, step_size=eta, global_step=g).local_risk
    gaps = {}
    for d in (60, 240):
        sim = np.mean([_literal_local(d, seed, gam, p, R, SIG, s, eta, K, g, rounds)
                       for seed in (d, d + 1)], axis=0)
        gaps[d] = np.max(np.abs(sim - lim) / lim)
    assert gaps[240] < 0.02 and gaps[240] < gaps[60]
