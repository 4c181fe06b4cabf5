"""The fast paths of the measurement agree with the plain ones (paper 003,
003_4b976ddf5225c17e.txt, eqs. 3, 6-14): the d x d Gram decomposition used when n > d (the
whole measurement with it: ``test_montecarlo_measure``), the symmetric accumulation of the global systems, the single-BLAS-thread decompositions, and
figures sharing one task between points that sample the same instances."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import riskcalc
import montecarlo.linear.decomposition as dm
import montecarlo.linear.measure as mm
from figures.core import Context
from figures.linear import simulate
from montecarlo.compare import replicate_task, spec_to_dict
from montecarlo.linear.estimators import get_estimator
from montecarlo.linear.instances import Setting, sample_instance


def _blas_threads():
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


@pytest.mark.parametrize("n, d", [(30, 12), (12, 12), (7, 12), (40, 5)])
def test_decomposition_both_paths(n, d):
    X = np.random.default_rng(n * d).standard_normal((n, d))
    dec = dm.Decomposition(X, np.ones(d))
    k = min(n, d)
    assert dec.mu.shape == (k,) and dec.U.shape == (n, k) and dec.V.shape == (k, d)
    np.testing.assert_allclose(dec.mu, np.linalg.eigvalsh(X @ X.T / n)[-k:], rtol=1e-10)
    np.testing.assert_allclose(dec.U.T @ dec.U, np.eye(k), atol=1e-10)
    np.testing.assert_allclose((dec.U * dec.mu) @ dec.U.T, X @ X.T / n, atol=1e-10)
    np.testing.assert_allclose(dec.V, dec.U.T @ X, atol=1e-10)


def test_accumulate_equals_general_products():
    rng = np.random.default_rng(0)
    decs = [dm.Decomposition(rng.standard_normal((n, 8)), np.ones(8)) for n in (5, 20, 8)]
    weights = [[rng.random(dec.mu.size), -rng.random(dec.mu.size)] for dec in decs]
    got = mm._accumulate(decs, weights)
    for q in range(2):
        want = sum(dec.V.T @ (w[q][:, None] * dec.V) for dec, w in zip(decs, weights))
        np.testing.assert_allclose(got[q], want, rtol=1e-12, atol=1e-12)
    assert np.array_equal(got[0], got[0].T)  # nonnegative weights: a symmetric rank-k update


@pytest.mark.parametrize("gamma, weight", [(2.0, "fedavg"), (0.5, "fedavg"), (2.0, "maml_fl")])
def test_center_terms_equal_dense_matrices(gamma, weight):
    """The federated center's M W and tr(Sigma M) (D (Q (D W)), <D Sigma D, Q>, F W by W^T W =
    I) against Mb and Mv formed as d x d matrices from an explicit G^-1, to rounding."""
    spec = riskcalc.ClientSpec("ftfa", gamma=gamma, r=1.3, sigma=0.7,
                               spectrum=riskcalc.Spectrum([0.5, 4.0], weights=[0.5, 0.5]))
    setting = Setting(d=14, clients=4, global_model="federated", gammas=(1.5, 3.0),
                      rs=(0.4, 2.0), sigmas=(0.2, 1.1), weights="samples")
    inst = sample_instance(spec, setting, 2, 1)
    decs = dm.decompose(inst.X, inst.s, eager_v=True)
    t, s, d, r, a0 = decs[0], inst.s, inst.d, inst.r[0], inst.a[0]
    om = [get_estimator(weight).global_weight(dec.mu, 0.3) for dec in decs]
    W = t.V.T / np.sqrt(t.nmu)
    got = mm._center_terms(inst, decs, om, W, s[:, None] * W)
    stack = [(inst.a[j], inst.r[j], inst.sigma[j], dec.V, o) for j, (dec, o) in
             enumerate(zip(decs, om))]
    D = np.linalg.inv(sum(a * V.T @ (o[:, None] * V) for a, _, _, V, o in stack))
    Q = sum((rj * a) ** 2 * V.T @ ((o ** 2 * (V ** 2).sum(1))[:, None] * V)
            for a, rj, _, V, o in stack)
    P = sum((sj * a) ** 2 * V.T @ ((o ** 2)[:, None] * V) for a, _, sj, V, o in stack)
    F = t.V.T @ (om[0][:, None] * t.V)
    Mb = (D @ Q @ D - r ** 2 * a0 * (D @ F + F @ D) + r ** 2 * np.eye(d)) / d
    Mv = D @ P @ D
    want = (s @ np.diag(Mb), Mb @ W, s @ np.diag(Mv), Mv @ W, np.diag(W.T @ (s[:, None] * D)
                                                                       @ W), W.T @ D @ W)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13 * np.abs(w).max())


def test_small_decompositions_use_one_blas_thread(monkeypatch):
    # The suite runs BLAS on one thread (conftest.py); two here, so that the limit is seen.
    with threadpool_limits(limits=2, user_api="blas"):
        _small_decompositions_use_one_blas_thread(monkeypatch)


def _small_decompositions_use_one_blas_thread(monkeypatch):
    before = _blas_threads()
    seen = []
    real = dm.Decomposition

    def spy(X, s):
        seen.append(_blas_threads())
        return real(X, s)

    monkeypatch.setattr(dm, "Decomposition", spy)
    rng = np.random.default_rng(1)
    dm.decompose([rng.standard_normal((6, 9)) for _ in range(3)], np.ones(9))
    assert seen == [1, 1, 1]
    assert _blas_threads() == before  # restored afterwards
    seen.clear()
    monkeypatch.setattr(dm, "SMALL_GRAM", 0)
    dm.decompose([rng.standard_normal((6, 9))], np.ones(9))
    assert seen == [before]


def test_figure_points_sharing_instances_share_tasks():
    # Three points on the same instances (two single lam values and a lam sweep containing
    # one of them): one task per replicate, and the numbers of separate tasks.
    setting = Setting(d=20, clients=4, global_model="federated")

    def spec(lam):
        return riskcalc.ClientSpec("pfedme", gamma=0.8, r=1.0, sigma=0.5, lam=lam)

    points = [(spec(0.1), [0.1], setting, None, None), (spec(1.0), [1.0], setting, None, None),
              (spec(0.3), [0.3, 1.0, 3.0], setting, None, None)]
    ran = []

    class Ctx(Context):
        def run(self, fn, tasks, desc=""):
            ran.extend(tasks)
            return [fn(t) for t in tasks]

    sims = simulate(Ctx("test"), points, reps=2)
    assert len(ran) == 2 and ran[0]["tunings"] == [0.1, 1.0, 0.3, 3.0]
    for (sp, tunings, *_), sim in zip(points, sims):
        sep = [replicate_task({"spec": spec_to_dict(sp), "setting": setting.as_dict(),
                               "seed": 0, "kind": "conditional", "tunings": tunings,
                               "steps": None, "step_size": None, "rep": rep})
               for rep in range(2)]
        np.testing.assert_allclose(sim["risk"]["mean"], np.mean([r["risk"] for r in sep], 0),
                                   rtol=1e-12)
