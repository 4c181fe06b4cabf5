"""The federated logistic pipeline at finite M (``montecarlo.logistic.pipeline``) against
independent routes: KKT residuals written out per client, the one-client ridge simulation
(``montecarlo.logistic.ridge``, another solver) on the same seed, pooling when every client has
the same model, Monte Carlo test samples for the exact population metrics, and the
separability certificate at global_lam = 0."""

import numpy as np
import pytest
from scipy.special import expit

from montecarlo.logistic import ridge as logistic_ridge
from montecarlo.logistic.pipeline import (
                                          draw_federation, fedprox_model, global_model, population_metrics, simulate_pipeline,
                                          simulate_replicate)
from riskcalc.errors import SolverError


def _grad(X, y, c_blocks, lam, w, centre=0.0):
    """Gradient of sum_j c_j sum_{block j} l(y x.w) + lam/2 ||w - centre||^2, block by block."""
    g = lam * (w - centre)
    for Xj, yj, cj in zip(X, y, c_blocks):
        g = g - cj * Xj.T @ (yj * expit(-yj * (Xj @ w)))
    return g


@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_global_model_kkt(weights):
    gammas, rs = [1.0, 2.0, 0.5], [0.5, 1.0, 2.0]
    _, _, X, y = draw_federation(gammas=gammas, rs=rs, signal=1.5, d=30, seed=3, rep=1)
    n = np.array([len(b) for b in y])
    assert list(n) == [30, 15, 60]
    wg = global_model(X, y, global_lam=1e-3, weights=weights)
    c = 1.0 / n.sum() * np.ones(3) if weights == "samples" else 1.0 / (3 * n)
    assert np.max(np.abs(_grad(X, y, c, 1e-3, wg))) < 1e-9
    # The other weighting is a different minimizer (n_j differ): the check can fail.
    other = global_model(X, y, global_lam=1e-3,
                         weights="uniform" if weights == "samples" else "samples")
    assert np.max(np.abs(_grad(X, y, c, 1e-3, other))) > 1e-4


def test_one_client_equals_logistic_ridge():
    """M = 1: local ridge and FedAvg (its ridge is global_lam) are the one-client ridge
    estimates of montecarlo.logistic.ridge (damped Newton on ClientLosses) at centre 0."""
    kw = dict(signal=1.0, d=40, seed=5, rep=2)
    res = simulate_replicate(gammas=[1.5], rs=[1.0], lams=[0.3, 2.0], global_lam=0.7, **kw)
    ref = logistic_ridge.simulate_replicate(gamma=1.5, r=1.0, lams=[0.3, 2.0, 0.7],
                                            centre_scale=0.0, **kw)
    for q in ("risk", "cosine_uncentred"):
        np.testing.assert_allclose(res["local_ridge"][q], ref[q][:2], rtol=1e-8)
        np.testing.assert_allclose(res["fedavg"][q], ref[q][2], rtol=1e-8)
    # Test metrics: exact population integrals vs ref's 4000 fresh samples.
    assert abs(res["fedavg"]["test_error"] - ref["test_error"][2]) < 0.02


def test_identical_clients_pool():
    """r_j = 0: M clients at gamma hold one client's worth of data at gamma / M (the streams
    continue block after block), so FedAvg's model is that client's ridge estimate."""
    kw = dict(signal=1.5, d=20, seed=1, rep=0)
    res = simulate_replicate(gammas=[2.0] * 4, rs=[0.0] * 4, lams=[1.0], global_lam=0.2, **kw)
    ref = logistic_ridge.simulate_replicate(gamma=0.5, r=0.0, lams=[0.2], centre_scale=0.0,
                                            **kw)
    np.testing.assert_allclose(res["fedavg"]["risk"], ref["risk"][0], rtol=1e-8)


def test_finetune_and_local_kkt():
    gammas, rs, d = [1.0] * 3, [1.0] * 3, 25
    w0, W, X, y = draw_federation(gammas=gammas, rs=rs, signal=1.0, d=d, seed=2, rep=0)
    wg = global_model(X, y, global_lam=1e-3)
    res = simulate_replicate(gammas=gammas, rs=rs, signal=1.0, lams=[0.5], global_lam=1e-3,
                             d=d, seed=2, rep=0, target=1)
    # Reconstruct the estimates' risks from an independent solve (scipy L-BFGS on the same
    # objectives) to the solvers' shared accuracy.
    from scipy.optimize import minimize

    def solve(centre):
        f = lambda w: np.mean(np.logaddexp(0, -y[1] * (X[1] @ w))) \
            + 0.25 * np.sum((w - centre) ** 2)
        g = lambda w: _grad([X[1]], [y[1]], [1.0 / len(y[1])], 0.5, w, centre)
        return minimize(f, centre, jac=g, method="L-BFGS-B",
                        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000}).x
    for name, centre in (("rtfa", wg), ("local_ridge", np.zeros(d))):
        w = solve(centre)
        assert np.max(np.abs(_grad([X[1]], [y[1]], [1 / len(y[1])], 0.5, w, centre))) < 1e-8
        np.testing.assert_allclose(res[name]["risk"][0], np.sum((w - W[1]) ** 2), rtol=1e-6)


def test_fedprox_fixed_point():
    """Stationarity of the joint objective: each w_j's gradient vanishes and w is the weighted
    mean of the w_j shrunk by the global ridge."""
    gammas, rs, lam, lg = [1.0, 2.0], [1.0, 0.5], 0.8, 0.05
    _, _, X, y = draw_federation(gammas=gammas, rs=rs, signal=1.0, d=20, seed=4, rep=0)
    w, Ws = fedprox_model(X, y, lam=lam, global_lam=lg, weights="samples")
    n = np.array([20, 10])
    p = n / n.sum()
    for Xj, yj, wj in zip(X, y, Ws):
        assert np.max(np.abs(_grad([Xj], [yj], [1 / len(yj)], lam, wj, w))) < 1e-9
    np.testing.assert_allclose(w, lam * (p[0] * Ws[0] + p[1] * Ws[1]) / (lam + lg),
                               atol=1e-9)


def test_population_metrics_match_test_samples():
    rng = np.random.default_rng(0)
    w_i, w_hat = rng.standard_normal(6), rng.standard_normal(6)
    got = population_metrics(w_hat, w_i)
    Z = rng.standard_normal((400_000, 6))
    p, z = expit(Z @ w_i), Z @ w_hat
    ll = p * np.logaddexp(0, -z) + (1 - p) * np.logaddexp(0, z)
    err = np.where(z > 0, 1 - p, p)
    for q, v in (("test_logloss", ll), ("test_error", err)):
        assert abs(got[q] - v.mean()) < 5 * v.std() / np.sqrt(v.size)
    assert got["cosine_uncentred"] == pytest.approx(w_hat @ w_i / np.linalg.norm(w_hat)
                                          / np.linalg.norm(w_i), rel=1e-12)


def test_separable_pool_raises_and_finite_one_runs():
    kw = dict(signal=1.0, lams=[1.0], global_lam=0.0, seed=0, rep=0)
    with pytest.raises(SolverError, match="separable.*global_lam"):
        simulate_replicate(gammas=[2.0, 2.0], rs=[1.0, 1.0], d=30, **kw)
    # Pooled d / N = 0.1, far below the existence threshold (about 0.3 at ||w|| = 1.4).
    res = simulate_replicate(gammas=[0.5] * 5, rs=[1.0] * 5, d=20, **kw)
    assert np.isfinite(res["fedavg"]["risk"])


def test_jobs_and_cache_do_not_change_results(tmp_path):
    kw = dict(gamma=1.0, signal=1.0, r=[1.0, 0.5], lams=[0.5], global_lam=1e-3, d=16, reps=3,
              seed=7)
    one = simulate_pipeline(**kw, n_jobs=1, cache=tmp_path / "c.jsonl")
    two = simulate_pipeline(**kw, n_jobs=2)
    again = simulate_pipeline(**kw, cache=tmp_path / "c.jsonl")   # all from the cache
    for res in (two, again):
        for name in ("fedavg", "rtfa", "local_ridge"):
            for q in ("risk", "test_error"):
                np.testing.assert_array_equal(one[name][q][0], res[name][q][0])
    assert one["n"] == [16, 16] and one["clients"] == 2


@pytest.mark.parametrize("kw, message", [
    (dict(clients=0), "clients"),
    (dict(clients=3, r=[1.0, 1.0]), "clients = 3"),
    (dict(gamma=[1.0, 2.0], r=[1.0, 1.0, 1.0]), "different numbers"),
    (dict(global_lam=-1.0), "global_lam"),
    (dict(lams=[0.0]), "lam"),
    (dict(weights="equal"), "weights"),
    (dict(target=2), "target"),
    (dict(signal=-1.0), "signal"),
    (dict(d=10**7), "GiB"),
])
def test_bad_input(kw, message):
    base = dict(gamma=1.0, signal=1.0, r=1.0, lams=[1.0], global_lam=1e-3, d=10, reps=2,
                clients=2)
    with pytest.raises(ValueError, match=message):
        simulate_pipeline(**{**base, **kw})


@pytest.mark.parametrize("M", [2, 5, 20])
@pytest.mark.parametrize("S, r, lam", [(1.0, 1.0, 1.0), (2.0, 0.5, 0.1)])
def test_prediction_grid(M, S, r, lam):
    """Issue 19's acceptance grid (gamma = 1, global_lam = 1e-3, d = 400): the simulated
    pipeline against riskcalc's finite-M limits, risk and test error of RTFA and FedAvg, within
    3% + 3 s.e. (the issue's criterion), and the global model's overlap w_g.w_0 / S^2 for
    M >= 5. At M = 2 the pooled data are close to separable (pooled d/N = 0.5; ||w_g||^2 ~ 100)
    and the overlap varies too much between replicates for 3 of them to pin it (this seed:
    6% low; 12 replicates at d = 400 agree: 3.73 +- 0.12 vs 3.61 at S = 1, 2.89 +- 0.05 vs
    2.86 at S = 2)."""
    import riskcalc

    sim = simulate_pipeline(gamma=1.0, signal=S, r=r, lams=[lam], global_lam=1e-3, d=400,
                            reps=3, clients=M, seed=11)
    th = {m: riskcalc.logistic_limit(gamma=1.0, signal=S, r=r, clients=M, global_lam=1e-3,
                                     method=m, **({"lam": lam} if m == "rtfa" else {}))
          for m in ("rtfa", "fedavg")}
    for m in ("rtfa", "fedavg"):
        for q in ("risk", "test_error"):
            mean, se = (np.ravel(v)[0] for v in sim[m][q])
            assert abs(mean - getattr(th[m], q)) <= 0.03 * getattr(th[m], q) + 3 * se, (m, q)
    mean, se = sim["global"]["overlap"]
    assert M == 2 or abs(mean - th["fedavg"].global_overlap) <= 0.03 * th["fedavg"].global_overlap + 3 * se
