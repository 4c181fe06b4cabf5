"""montecarlo.linear.rounds: the simulated curves of FedAvg with local GD and paper 004's Algorithm 1
against the literal algorithms iterated step by step, the closed-form estimators and the
existing paper algorithms; the contraction against the literal round map's spectrum. The
runner (seeds, workers, cache, bad input, averages over draws): test_montecarlo_rounds_runner.py,
which imports this file's federations."""

import numpy as np
import pytest

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.linear.estimators import global_model, pfedme_joint
from montecarlo.linear.instances import Instance
from montecarlo.linear.decomposition import decompose
from montecarlo.linear.measure import measure
from montecarlo.experiments.objectives import ClientLosses
from montecarlo.linear.rounds import sample_designs, sample_draw
from montecarlo.linear.rounds_fedavg import fedavg_conditional
from montecarlo.linear.rounds_columns import client_basis, draw_columns, source_columns
from montecarlo.linear.rounds_propagate import Propagation, curve
from riskcalc.spectrum import Spectrum


INF = np.inf
KEYS = ("risk", "bias", "variance", "local_risk", "global_risk", "distance_to_fixed_point",
        "global_distance")


def federation(gamma, d, spectrum=None, seed=3):
    s = np.ones(d) if spectrum is None else spectrum.eigenvalues(d)
    X = sample_designs(np.asarray(gamma, float), s, seed, 0)
    basis = [client_basis(dec) for dec in decompose(X, s, eager_v=True)]
    return X, s, basis, np.array([x.shape[0] for x in X])


def top(X):
    return max(np.linalg.eigvalsh(x.T @ x / x.shape[0])[-1] for x in X)


# --- the literal algorithms, step by step, on columns of responses -------------------------

def literal(method, X, Y, p, K, eta, g, lam, T_max):
    """[(server, [local_j])] after rounds 0..T_max, every gradient step taken explicitly."""
    d, c = X[0].shape[1], Y[0].shape[1]
    w, loc = np.zeros((d, c)), [np.zeros((d, c)) for _ in X]
    hist = [(w, loc)]
    for _ in range(T_max):
        new = []
        for j, (x, y) in enumerate(zip(X, Y)):
            n = x.shape[0]
            v = (w if method == "fedavg" else loc[j]).copy()
            if np.isinf(K):
                v = (w + np.linalg.pinv(x) @ (y - x @ w) if method == "fedavg" else
                     np.linalg.solve(x.T @ x / n + lam * np.eye(d), x.T @ y / n + lam * w))
            for _ in range(0 if np.isinf(K) else int(K)):
                grad = x.T @ (x @ v - y) / n
                v = v - eta * (grad if method == "fedavg" else grad + lam * (v - w))
            new.append(v)
        if method == "fedavg":
            w = w + g * sum(pj * (v - w) for pj, v in zip(p, new))
        else:
            w = w - g * lam * sum(pj * (w - v) for pj, v in zip(p, new))
        loc = new
        hist.append((w, loc))
    return hist


def literal_fixed_point(method, X, Y, p, K, eta, lam):
    """FedAvg: solve sum_j p_j (v_j(w) - w) = 0 with v_j(w) = (I - eta S_j)^K w + c_j built
    from matrix powers; Algorithm 1: the joint FedProx minimizer (estimators.pfedme_joint)."""
    d = X[0].shape[1]
    if method == "fedprox":
        cols = [pfedme_joint(X, [y[:, i] for y in Y], p, lam) for i in range(Y[0].shape[1])]
        return (np.column_stack([c[0] for c in cols]),
                [np.column_stack([c[1][j] for c in cols]) for j in range(len(X))])
    lhs, rhs, maps = np.zeros((d, d)), 0.0, []
    for pj, x, y in zip(p, X, Y):
        n = x.shape[0]
        if np.isinf(K):
            A, c = np.eye(d) - np.linalg.pinv(x) @ x, np.linalg.pinv(x) @ y
        else:
            step = np.eye(d) - eta * x.T @ x / n
            A = np.linalg.matrix_power(step, int(K))
            c = sum(np.linalg.matrix_power(step, i) for i in range(int(K))) @ (eta * x.T @ y / n)
        maps.append((A, c))
        lhs += pj * (A - np.eye(d))
        rhs = rhs - pj * c
    w = np.linalg.lstsq(lhs, rhs, rcond=1e-10)[0]
    return w, [A @ w + c for A, c in maps]


def literal_sources(X, s, r, sigma, signal):
    """Responses for an orthonormal basis of (theta_0, u_1..u_M, eps_1..eps_M), scaled by
    their standard deviations, and each client's target columns."""
    m, d = len(X), s.size
    ns = [x.shape[0] for x in X]
    cs, c = (m + 1) * d, (m + 1) * d + sum(ns)
    Y, T = [], []
    for j, x in enumerate(X):
        th = np.zeros((d, c))
        th[:, :d] = np.eye(d) * signal / np.sqrt(d)
        th[:, (j + 1) * d:(j + 2) * d] = np.eye(d) * r[j] / np.sqrt(d)
        y = x @ th
        start = cs + sum(ns[:j])
        y[:, start:start + ns[j]] = sigma[j] * np.eye(ns[j])
        Y.append(y)
        T.append(th)
    return Y, T, cs


def literal_curve(method, X, s, p, r, sigma, signal, rounds, K, eta, g, lam=None):
    """Expected risks (exact given X) from the literal iteration of the source basis."""
    Y, T, cs = literal_sources(X, s, r, sigma, signal)
    finite = [t for t in rounds if not np.isinf(t)]
    hist = literal(method, X, Y, p, K, eta, g, lam, int(max(finite)))
    fixed = literal_fixed_point(method, X, Y, p, K, eta, lam)
    out = {k: np.empty((len(X), len(rounds))) for k in KEYS}

    def mom(E):
        sq = s @ E ** 2
        return sq[:cs].sum(), sq[cs:].sum()

    for i, t in enumerate(rounds):
        w, loc = fixed if np.isinf(t) else hist[int(t)]
        for j in range(len(X)):
            gb, gv = mom(w - T[j])
            lb, lv = mom(loc[j] - T[j])
            gd = np.sum((w - fixed[0]) ** 2)
            if method == "fedavg":
                vals = (gb + gv, gb, gv, lb + lv, gb + gv, gd, gd)
            else:
                ld = np.sum((loc[j] - fixed[1][j]) ** 2)
                vals = (lb + lv, lb, lv, lb + lv, gb + gv, ld, gd)
            for k, v in zip(KEYS, vals):
                out[k][j, i] = v
    return out


def assert_curves(got, want, rtol=1e-10):
    for k in KEYS:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=rtol * np.abs(
            want[k]).max(), err_msg=k)


CASES = [  # gamma, spectrum, weights, K, eta factor (of 1 / top), g
    ((0.5, 1.25, 2.0), Spectrum.two_point(1.0, 4.0, 0.5), "uniform", 3, 0.9, 0.8),
    ((3.0, 4.0, 2.5), None, "samples", 2, 0.5, 1.3),        # pooled N = 17 < d = 18
    ((0.6, 0.8, 2.0), None, [0.2, 0.5, 0.3], INF, None, 1.0),
]


@pytest.mark.parametrize("gamma,spectrum,weights,K,eta,g", CASES)
def test_fedavg_closed_form_equals_literal_iteration(gamma, spectrum, weights, K, eta, g):
    X, s, basis, n = federation(gamma, 18, spectrum)
    p = (n / n.sum() if weights == "samples" else np.full(3, 1 / 3) if weights == "uniform"
         else np.array(weights))
    eta = None if eta is None else eta / top(X)
    r, sigma, rounds = np.array([0.5, 1.0, 1.5]), np.array([0.3, 1.0, 0.6]), [6, 0, 1, 3, INF]
    want = literal_curve("fedavg", X, s, p, r, sigma, 1.2, rounds, K, eta, g)
    assert_curves(fedavg_conditional(basis, n, s, p, r, sigma, 1.2, rounds, K, eta, g), want)
    beta, targets = source_columns(basis, n, s, r, sigma, 1.2)
    assert_curves(curve(Propagation("fedavg", basis, beta, targets, s, p, K, eta, g, None,
                                    True), rounds), want)


@pytest.mark.parametrize("K,lam,g", [(3, 0.5, 1.0 / 0.5), (1, 2.0, 0.3), (INF, 1.0, 1.0)])
def test_algorithm1_propagation_equals_literal_iteration(K, lam, g):
    X, s, basis, n = federation((0.5, 1.0, 1.5), 12, Spectrum.two_point(0.5, 2.0, 0.5))
    p, r, sigma = n / n.sum(), np.array([0.4, 1.0, 0.7]), np.array([0.5, 0.2, 1.0])
    eta, rounds = 0.8 / (top(X) + lam), [5, 0, 2, INF]
    want = literal_curve("fedprox", X, s, p, r, sigma, 0.9, rounds, K, eta, g, lam)
    beta, targets = source_columns(basis, n, s, r, sigma, 0.9)
    assert_curves(curve(Propagation("fedprox", basis, beta, targets, s, p, K, eta, g, lam,
                                    True), rounds), want)


def draw(gamma, d, spectrum=None, r=(0.5, 1.0, 1.5), sigma=(0.3, 1.0, 0.6), signal=1.0):
    X, s, basis, n = federation(gamma, d, spectrum)
    r, sigma = np.asarray(r, float), np.asarray(sigma, float)
    theta, eps = sample_draw(X, s, r, sigma, signal, 3, 0)
    return X, s, basis, n, theta, eps


def sampled_risk(s, models, theta):
    return np.array([s @ (w - t) ** 2 for w, t in zip(models, theta)])


@pytest.mark.parametrize("method", ["fedavg", "fedprox"])
def test_empirical_route_equals_literal_iteration_on_the_same_draw(method):
    X, s, basis, n, theta, eps = draw((0.7, 1.0, 2.5), 20, Spectrum.two_point(1.0, 3.0, 0.3))
    p, lam, K = np.full(3, 1 / 3), (0.7 if method == "fedprox" else None), 4
    eta = 0.9 / (top(X) + (lam or 0.0))
    g = 1.0 / lam if lam else 0.7
    rounds = [0, 4, 9]
    Y = [x @ t + e for x, t, e in zip(X, theta, eps)]
    hist = literal(method, X, [y[:, None] for y in Y], p, K, eta, g, lam, 9)
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    got = curve(Propagation(method, basis, beta, targets, s, p, K, eta, g, lam, False), rounds)
    for i, t in enumerate(rounds):
        w, loc = hist[t]
        np.testing.assert_allclose(got["global_risk"][:, i], sampled_risk(
            s, [w[:, 0]] * 3, theta), rtol=1e-10)
        np.testing.assert_allclose(got["local_risk"][:, i], sampled_risk(
            s, [v[:, 0] for v in loc], theta), rtol=1e-10)


def test_one_local_step_is_pooled_gradient_descent_with_step_g_eta():
    X, s, basis, n = federation((0.8, 1.5, 3.0), 16)
    p, r, sigma = n / n.sum(), np.array([0.5, 1.0, 2.0]), np.array([1.0, 0.5, 0.2])
    eta, g, T = 0.6 / top(X), 1.5, [0, 1, 4, 11]
    Y, Tg, cs = literal_sources(X, s, r, sigma, 1.0)
    w, risks = np.zeros((16, Y[0].shape[1])), []
    for t in range(12):
        if t in T:
            risks.append([s @ ((w - Tg[j]) ** 2).sum(1) for j in range(3)])
        # one gradient step on the pooled objective sum_j p_j f_j
        w = w - g * eta * sum(pj * x.T @ (x @ w - y) / x.shape[0] for pj, x, y in zip(p, X, Y))
    got = fedavg_conditional(basis, n, s, p, r, sigma, 1.0, T, 1, eta, g)
    np.testing.assert_allclose(got["risk"], np.array(risks).T, rtol=1e-10)


def test_fedavg_fixed_point_with_one_local_step_is_the_pooled_least_squares():
    # conditional: the pooled (federated FedAvg) estimator measured by montecarlo.linear.measure
    X, s, basis, n = federation((0.5, 1.0, 2.0), 24, Spectrum.two_point(1.0, 2.0, 0.5))
    p, r, sigma = np.array([0.5, 0.3, 0.2]), np.array([0.7, 1.0, 1.3]), np.array([1.0, .4, .8])
    got = fedavg_conditional(basis, n, s, p, r, sigma, 2.0, [INF, 4000], 1, 0.9 / top(X), 1.0)
    inst = Instance(s=s, X=X, r=r, sigma=sigma, a=p / n, u=np.zeros((3, 24)),
                    c=np.full(24, 1 / 24), xi=[np.zeros(k) for k in n], federated=True)
    ref = measure(inst, "fedavg", [0.0])
    for k in ("bias", "variance", "risk"):
        np.testing.assert_allclose(got[k][0, 0], ref[k][0], rtol=1e-10, err_msg=k)
    # empirical: the fixed point of one draw is estimators.global_model
    X, s, basis, n, theta, eps = draw((0.5, 1.0, 2.0), 24)
    Y = [x @ t + e for x, t, e in zip(X, theta, eps)]
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    w, _ = Propagation("fedavg", basis, beta, targets, s, p, 1, 0.1, 1.0, None,
                       False).fixed_point()
    np.testing.assert_allclose(w.sum(1), global_model(X, Y, p, "fedavg"), rtol=1e-10)


def test_exact_local_solves_one_round_average_local_least_squares():
    X, s, basis, n, theta, eps = draw((0.3, 0.5, 0.8), 15)
    p = n / n.sum()
    avg = sum(pj * np.linalg.lstsq(x, x @ t + e, rcond=None)[0]
              for pj, x, t, e in zip(p, X, theta, eps))
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    got = curve(Propagation("fedavg", basis, beta, targets, s, p, INF, None, 1.0, None, False),
                [1])
    np.testing.assert_allclose(got["risk"][:, 0], sampled_risk(s, [avg] * 3, theta),
                               rtol=1e-10)


def test_algorithm1_reaches_the_joint_fedprox_minimizer():
    lam = 0.8
    X, s, basis, n, theta, eps = draw((0.5, 0.8, 1.2), 20)
    p = np.full(3, 1 / 3)
    Y = [x @ t + e for x, t, e in zip(X, theta, eps)]
    w0, ws = pfedme_joint(X, Y, p, lam)
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    got = curve(Propagation("fedprox", basis, beta, targets, s, p, 30, 0.9 / (top(X) + lam),
                            1.0 / lam, lam, False), [600, INF])
    np.testing.assert_allclose(got["risk"][:, 1], sampled_risk(s, ws, theta), rtol=1e-10)
    np.testing.assert_allclose(got["global_risk"][:, 1], sampled_risk(s, [w0] * 3, theta),
                               rtol=1e-10)
    np.testing.assert_allclose(got["risk"][:, 0], got["risk"][:, 1], rtol=1e-8)
    assert got["distance_to_fixed_point"][:, 0].max() < 1e-16
    # conditional: T = inf is pFedMe's closed form (global weight lam/(lam+mu), ridge lam)
    r, sigma = np.array([0.5, 1.0, 1.5]), np.array([0.3, 1.0, 0.6])
    b, t = source_columns(basis, n, s, r, sigma, 1.0)
    got = curve(Propagation("fedprox", basis, b, t, s, p, 5, 0.5 / (top(X) + lam), 1.0 / lam,
                            lam, True), [INF])
    inst = Instance(s=s, X=X, r=r, sigma=sigma, a=p / n, u=np.zeros((3, 20)),
                    c=np.full(20, 1 / 20), xi=[np.zeros(k) for k in n], federated=True)
    ref = measure(inst, "pfedme", [lam])
    for k in ("bias", "variance", "risk"):
        np.testing.assert_allclose(got[k][0, 0], ref[k][0], rtol=1e-10, err_msg=k)


def test_existing_paper_algorithms_trace_the_same_models():
    # equal n and uniform weights: montecarlo.experiments.algorithms' full-batch fedavg and
    # fedprox_bilevel (paper 004 Alg. 1) run on the same draw
    X, s, basis, n, theta, eps = draw((1.0, 1.0, 1.0), 14)
    p, lam, K = np.full(3, 1 / 3), 0.6, 3
    Y = np.array([x @ t + e for x, t, e in zip(X, theta, eps)])
    losses = ClientLosses(np.array(X), Y, loss="squared")
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    eta = 0.9 / (top(X) + lam)
    runs = [("fedavg", ALGORITHMS["fedavg"](losses, rounds=6, local_epochs=K, batch_size=None,
                                            lr=eta, global_lr=0.7), 0.7, None),
            ("fedprox", ALGORITHMS["fedprox_bilevel"](losses, lam=lam, rounds=6, inner_steps=K,
                                                      lr=eta, global_lr=1.3), 1.3, lam)]
    for method, traj, g, lm in runs:
        got = curve(Propagation(method, basis, beta, targets, s, p, K, eta, g, lm, False),
                    list(range(7)))
        for t in range(7):
            np.testing.assert_allclose(got["global_risk"][:, t], sampled_risk(
                s, [traj.global_model[t]] * 3, theta), rtol=1e-10)
            if method == "fedprox":
                np.testing.assert_allclose(got["risk"][:, t], sampled_risk(
                    s, traj.local[t], theta), rtol=1e-10)


def literal_round_map(X, p, K, eta, g, lam):
    """Algorithm 1's homogeneous round map on (w, w_1..w_M) from matrix powers."""
    d, m = X[0].shape[1], len(X)
    Phi = np.zeros(((m + 1) * d, (m + 1) * d))
    top_left = (1.0 - g * lam) * np.eye(d)
    for j, x in enumerate(X):
        step = np.eye(d) - eta * (x.T @ x / x.shape[0] + lam * np.eye(d))
        A = np.linalg.matrix_power(step, K)
        C = sum(np.linalg.matrix_power(step, i) for i in range(K)) * eta * lam
        rows = slice((j + 1) * d, (j + 2) * d)
        Phi[rows, rows], Phi[rows, :d] = A, C
        top_left = top_left + g * lam * p[j] * C
        Phi[:d, rows] = g * lam * p[j] * A
    Phi[:d, :d] = top_left
    return Phi


@pytest.mark.parametrize("K,g_lam", [(1, 1.0), (4, 1.6), (2, 2.5)])
def test_contraction_is_the_spectral_radius_of_the_literal_round_map(K, g_lam, monkeypatch):
    import montecarlo.linear.rounds_propagate as rp
    X, s, basis, n = federation((0.5, 1.0, 2.0), 10, Spectrum.two_point(1.0, 3.0, 0.5))
    p, lam = n / n.sum(), 0.7
    eta = 1.6 / (top(X) + lam)
    want = np.abs(np.linalg.eigvals(literal_round_map(X, p, K, eta, g_lam / lam, lam))).max()
    beta = [np.zeros((mu.size, 1)) for _, mu in basis]
    prop = Propagation("fedprox", basis, beta, [np.zeros((10, 1))] * 3, s, p, K, eta,
                       g_lam / lam, lam, False)
    np.testing.assert_allclose(prop.contraction(), want, rtol=1e-10)
    monkeypatch.setattr(rp, "DENSE_STATE", 0)        # the ARPACK route
    np.testing.assert_allclose(prop.contraction(), want, rtol=1e-5)
    # FedAvg: max |1 - g delta| over the nonzero eigenvalues of D = sum_j p_j Q_j
    D = sum(pj * (np.eye(10) - np.linalg.matrix_power(np.eye(10) - eta * x.T @ x
                                                      / x.shape[0], K)) for pj, x in zip(p, X))
    want = np.abs(1.0 - g_lam * np.linalg.eigvalsh(D)).max()
    got = fedavg_conditional(basis, n, s, p, np.ones(3), np.ones(3), 1.0, [1], K, eta, g_lam)
    np.testing.assert_allclose(got["contraction"], want, rtol=1e-10)
    prop = Propagation("fedavg", basis, beta, [np.zeros((10, 1))] * 3, s, p, K, eta, g_lam,
                       None, False)
    np.testing.assert_allclose(prop.contraction(), want, rtol=1e-10)


@pytest.mark.parametrize("gamma, K, fac, symmetric", [
    ((0.5, 1.0, 2.0), 4, 1.6, True), ((3.0, 4.0), 2, 1.6, True), ((3.0, 4.0), 5, 0.3, True),
    ((0.5, 2.0), 1, 1.6, False), ((3.0, 4.0), 3, 1.6, False)])
def test_symmetric_form_of_the_algorithm1_map(gamma, K, fac, symmetric):
    """Where every a / c and a0 / c0 is positive (0 < a, a0 < 1) the symmetric matrix of
    ``Propagation._symmetric_map`` has the literal round map's whole spectrum (which is then
    real), clients with N_j < d (a null space, a0 / c0) included; where a step has
    eta (mu + lam) > 1 with odd K it is not offered and the contraction comes from the general
    eigenvalue problem. Measured: 4e-15."""
    X, s, basis, n = federation(gamma, 12, Spectrum.two_point(1.0, 3.0, 0.5))
    p, lam, g = n / n.sum(), 0.7, 1.6 / 0.7
    eta = fac / (top(X) + lam)
    phi = np.linalg.eigvals(literal_round_map(X, p, K, eta, g, lam))
    prop = Propagation("fedprox", basis, [np.zeros((mu.size, 1)) for _, mu in basis],
                       [np.zeros((12, 1))] * len(gamma), s, p, K, eta, g, lam, False)
    sym = prop._symmetric_map()
    assert (sym is not None) == symmetric
    if symmetric:
        np.testing.assert_allclose(np.linalg.eigvalsh(sym), np.sort(phi.real), rtol=0,
                                   atol=1e-12)
        assert np.abs(phi.imag).max() < 1e-12
    # On the pooled range: pooled N < d leaves the common null space's eigenvalue 1 out
    # (fuzz41 path2 F5; gamma (3, 4) here).
    _, sv, vt = np.linalg.svd(np.vstack(X), full_matrices=False)
    on = np.kron(np.eye(len(gamma) + 1), vt[sv > sv[0] * 1e-10].T)
    radius = np.abs(np.linalg.eigvals(on.T @ literal_round_map(X, p, K, eta, g, lam) @ on)).max()
    np.testing.assert_allclose(prop.contraction(), radius, rtol=1e-12)


def test_pooled_n_below_d_fixed_point_is_the_min_norm_pooled_least_squares():
    X, s, basis, n, theta, eps = draw((4.0, 5.0, 6.0), 18)
    assert n.sum() < 18
    p = n / n.sum()
    S = sum(pj * x.T @ x / x.shape[0] for pj, x in zip(p, X))
    b = sum(pj * x.T @ (x @ t + e) / x.shape[0] for pj, x, t, e in zip(p, X, theta, eps))
    beta, targets = draw_columns(basis, X, [(theta, eps)])
    prop = Propagation("fedavg", basis, beta, targets, s, p, 1, 0.9 / top(X), 1.0, None, False)
    w, _ = prop.fixed_point()
    np.testing.assert_allclose(w.sum(1), np.linalg.pinv(S, rcond=1e-10) @ b, rtol=1e-9)
    got = curve(prop, [5000, INF])
    np.testing.assert_allclose(got["risk"][:, 0], got["risk"][:, 1], rtol=1e-8)
