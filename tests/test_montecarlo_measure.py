"""The fast measurement (montecarlo.linear.measure) against the literal closed forms, and exact
finite-n facts (paper 003, 003_4b976ddf5225c17e.txt, eqs. 3, 6-14)."""

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.estimators import (ESTIMATORS, fit, get_estimator, global_model, personalize,
                                          pfedme_joint)
from montecarlo.linear.algorithms import fine_tune
from montecarlo.linear.instances import Setting, sample_instance
import montecarlo.linear.decomposition as dm
import montecarlo.linear.measure as mm
from montecarlo.linear.measure import measure, measure_many

PARAMS = {"fedavg": dict(r=1.0), "local": dict(rho=1.2), "local_ridge": dict(rho=1.2, lam=0.3),
          "ftfa": dict(r=1.0), "rtfa": dict(r=1.0, lam=0.3), "maml_fl": dict(r=1.0, alpha=0.2),
          "pfedme": dict(r=1.0, lam=0.3)}
TWO_POINT = riskcalc.Spectrum([0.5, 2.0], weights=[0.5, 0.5])


def test_registry_matches_riskcalc():
    assert set(ESTIMATORS) == set(riskcalc.METHODS) == set(PARAMS)


def _dense(inst, method, tuning, p):
    """Conditional bias/variance by applying the dense estimator to basis vectors (the error is
    linear in every u_j and xi_j), and the empirical parts for the sampled u, xi."""
    est = get_estimator(method)
    m = len(inst.X) if inst.federated and est.centered else 1
    Xs, d, sig = inst.X[:m], inst.d, np.diag(inst.s)
    center = None if inst.federated and est.centered else np.zeros(d)

    def err(thetas, xis):
        ys = [X @ th + xi for X, th, xi in zip(Xs, thetas, xis)]
        return fit(method, Xs, ys, p[:m], tuning, center=center) - thetas[0]

    zth, zxi = [np.zeros(d)] * m, [np.zeros(X.shape[0]) for X in Xs]
    bias = var = 0.0
    for j in range(m):
        for k in range(d):
            th = list(zth)
            th[j] = inst.r[j] * np.eye(d)[k]
            e = err(th, zxi)
            bias += inst.c[k] * (e @ sig @ e)
        for k in range(Xs[j].shape[0]):
            xi = list(zxi)
            xi[j] = inst.sigma[j] * np.eye(Xs[j].shape[0])[k]
            e = err(zth, xi)
            var += e @ sig @ e
    th = [inst.r[j] * inst.u[j] for j in range(m)]
    eb, ev = err(th, zxi), err(zth, inst.xi[:m])
    return bias, var, eb @ sig @ eb, ev @ sig @ ev, (eb + ev) @ sig @ (eb + ev)


# n < d for every client (n x n decompositions), or n > d for the target and some clients
# (decompositions through X^T X).
SHAPES = {"n<d": dict(gamma=2.0, d=12, clients=5, gammas=(1.5, 3.0), seed=3, rep=1),
          "n>d": dict(gamma=0.5, d=10, clients=4, gammas=(0.75, 2.0), seed=5, rep=2)}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("glob", ["oracle", "federated"])
@pytest.mark.parametrize("method", sorted(PARAMS))
def test_fast_measure_equals_dense_closed_forms(method, glob, shape):
    kw, sh = PARAMS[method], SHAPES[shape]
    spec = riskcalc.ClientSpec(method, gamma=sh["gamma"], sigma=0.7, spectrum=TWO_POINT, **kw)
    setting = Setting(d=sh["d"], clients=sh["clients"], global_model=glob, gammas=sh["gammas"],
                      rs=(0.5,), sigmas=(0.3, 1.0), weights="samples")
    inst = sample_instance(spec, setting, sh["seed"], sh["rep"], federated=glob == "federated")
    assert (inst.n[0] > inst.d) == (shape == "n>d")
    p = inst.n / inst.n.sum()
    t = kw.get("lam", kw.get("alpha", 0.0))
    cond = measure(inst, method, [t])
    emp = measure(inst, method, [t], kind="empirical")
    b, v, eb, ev, risk = _dense(inst, method, t, p)
    # atol: FTFA/local with n > d interpolate theta exactly (an oracle bias of 0 up to rounding)
    np.testing.assert_allclose([cond["bias"][0], cond["variance"][0]], [b, v], rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose([emp["bias"][0], emp["variance"][0], emp["risk"][0]],
                               [eb, ev, risk], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("glob", ["oracle", "federated"])
@pytest.mark.parametrize("kind", ["conditional", "empirical"])
def test_measure_many_is_measure_per_method(kind, glob, shape, monkeypatch):
    """measure_many decomposes every design once for all its methods, solves each distinct
    federated global model once, and returns, bit for bit, what measure returns per method:
    oracle-centered methods (local, local_ridge) before and after federated ones, a method
    twice, a lam grid, finite steps; a spectrum != I so that some methods form V lazily."""
    sh = SHAPES[shape]
    spec = riskcalc.ClientSpec("rtfa", gamma=sh["gamma"], sigma=0.7, r=1.0, lam=0.3,
                               spectrum=TWO_POINT)
    setting = Setting(d=sh["d"], clients=sh["clients"], global_model=glob, gammas=sh["gammas"],
                      rs=(0.5,), sigmas=(0.3, 1.0), weights="samples")
    inst = sample_instance(spec, setting, sh["seed"], sh["rep"], federated=glob == "federated")
    requests = [("local", [0.0]), *[(m, [PARAMS[m].get("lam", PARAMS[m].get("alpha", 0.0))])
                                   for m in sorted(PARAMS)], ("rtfa", [0.1, 1.0]),
                ("local", [0.0])]
    for steps, step_size in ((None, None), (3, 0.1)):
        alone = [measure(inst, m, t, kind=kind, steps=steps, step_size=step_size)
                 for m, t in requests]
        made, real, systems, accumulate = [], dm.Decomposition, [], mm._accumulate
        monkeypatch.setattr(dm, "Decomposition", lambda X, s: made.append(X) or real(X, s))
        monkeypatch.setattr(mm, "_accumulate", lambda *a: systems.append(1) or accumulate(*a))
        many = measure_many(inst, requests, kind=kind, steps=steps, step_size=step_size)
        monkeypatch.setattr(dm, "Decomposition", real)
        monkeypatch.setattr(mm, "_accumulate", accumulate)
        assert len(made) == (sh["clients"] if glob == "federated" else 1)
        # One global model for FedAvg, FTFA and RTFA (eq. 6), one each for MAML-FL and pFedMe.
        assert len(systems) == (3 if glob == "federated" else 0)
        assert len(many) == len(alone)
        for one, both in zip(alone, many):
            assert one.keys() == both.keys()
            for q in one:
                assert np.array_equal(one[q], both[q]), (q, one[q], both[q])


def test_pfedme_moreau_envelope_equals_joint_minimizer():
    rng = np.random.default_rng(0)
    Xs = [rng.standard_normal((n, 8)) for n in (5, 6, 7)]
    ys = [X @ rng.standard_normal(8) + rng.standard_normal(X.shape[0]) for X in Xs]
    p = np.array([0.2, 0.3, 0.5])
    theta0, thetas = pfedme_joint(Xs, ys, p, 0.4)
    np.testing.assert_allclose(global_model(Xs, ys, p, "pfedme", 0.4), theta0, rtol=1e-10)
    np.testing.assert_allclose(personalize(Xs[0], ys[0], theta0, 0.4), thetas[0], rtol=1e-10)


def test_lam_grid_equals_one_value_at_a_time():
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.1, spectrum=TWO_POINT)
    for glob in ("oracle", "federated"):
        inst = sample_instance(spec, Setting(d=40, clients=6, global_model=glob), 0, 0)
        lams = [0.01, 0.1, 1.0]
        grid = measure(inst, "rtfa", lams)
        single = [measure(inst, "rtfa", [lam])["risk"][0] for lam in lams]
        np.testing.assert_allclose(grid["risk"], single, rtol=1e-10)


def test_finite_steps_filter_equals_gradient_descent():
    """The risk after P personalization steps (paper 003, Algs. 5-6, Figs. 5-6)."""
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.2)
    inst = sample_instance(spec, Setting(d=30), 1, 0)
    X, theta = inst.X[0], inst.theta[0]
    for steps in (1, 5, 40):
        emp = measure(inst, "rtfa", [0.2], kind="empirical", steps=steps, step_size=0.2)
        fitted = fine_tune(X, X @ theta + inst.xi[0], np.zeros(30), steps=steps, lr=0.2,
                           lam=0.2)
        e = fitted - theta
        assert emp["risk"][0] == pytest.approx(e @ (inst.s * e), rel=1e-9)
    conv = measure(inst, "rtfa", [0.2])["risk"][0]
    path = [measure(inst, "rtfa", [0.2], steps=k, step_size=0.2)["risk"][0]
            for k in (0, 10, 1000)]
    assert path[-1] == pytest.approx(conv, rel=1e-8)
    assert path[0] == pytest.approx(measure(inst, "fedavg", [0.0])["risk"][0])


def test_ftfa_exact_finite_n_facts():
    """Gaussian isotropic X: the FTFA bias is r^2 (1 - n/d) for every X, and the variance
    sigma^2 tr((X X^T)^-1) has mean sigma^2 n / (d - n - 1) (inverse Wishart)."""
    d, n, reps = 120, 40, 60
    spec = riskcalc.ClientSpec("ftfa", gamma=d / n, sigma=0.5, r=1.3)
    vals = np.array([[measure(sample_instance(spec, Setting(d=d), 7, rep), "ftfa", [0.0])[q][0]
                      for q in ("bias", "variance")] for rep in range(reps)])
    np.testing.assert_allclose(vals[:, 0], 1.3 ** 2 * (1 - n / d), rtol=1e-10)
    exact = 0.25 * n / (d - n - 1)
    se = vals[:, 1].std(ddof=1) / np.sqrt(reps)
    assert abs(vals[:, 1].mean() - exact) < 3.5 * se


def test_empirical_is_unbiased_for_conditional():
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.3, spectrum=TWO_POINT)
    diffs = []
    for rep in range(200):
        inst = sample_instance(spec, Setting(d=40), 5, rep)
        c, e = measure(inst, "rtfa", [0.3]), measure(inst, "rtfa", [0.3], kind="empirical")
        diffs.append([e[q][0] - c[q][0] for q in ("bias", "variance", "risk")])
    diffs = np.array(diffs)
    se = diffs.std(0, ddof=1) / np.sqrt(len(diffs))
    assert np.all(np.abs(diffs.mean(0)) < 3.5 * se)


def test_bad_input():
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.3)
    inst = sample_instance(spec, Setting(d=20), 0, 0)
    with pytest.raises(ValueError, match="measure must be"):
        measure(inst, "rtfa", [0.3], kind="exact")
    with pytest.raises(ValueError, match="step size"):
        measure(inst, "rtfa", [0.3], steps=3)
    with pytest.raises(ValueError, match="lam > 0"):
        fed = sample_instance(riskcalc.ClientSpec("pfedme", gamma=2.0, sigma=0.5, r=1.0, lam=0.0),
                              Setting(d=20, clients=5, global_model="federated"), 0, 0)
        measure(fed, "pfedme", [0.0])


def test_aligned_signal_spectrum_matches_riskcalc():
    """A signal distribution G != H (signal concentrated on some eigenspaces)."""
    sp = riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5], signal_weights=[0.9, 0.1])
    spec = riskcalc.ClientSpec("rtfa", gamma=2.0, sigma=0.5, r=1.0, lam=0.3, spectrum=sp)
    inst = sample_instance(spec, Setting(d=400), 0, 0)
    np.testing.assert_allclose(inst.c.sum(), 1.0)
    np.testing.assert_allclose((inst.u[0] ** 2)[inst.s == 0.5].sum(), 0.9)
    risk = np.mean([measure(sample_instance(spec, Setting(d=400), 0, rep), "rtfa", [0.3])["risk"]
                    for rep in range(4)])
    assert risk == pytest.approx(riskcalc.spec_limit(spec).risk, rel=0.02)
    small = sample_instance(spec, Setting(d=10), 1, 0)
    b, v, eb, _, _ = _dense(small, "rtfa", 0.3, [1.0])
    assert measure(small, "rtfa", [0.3])["bias"][0] == pytest.approx(b, rel=1e-8)
    assert measure(small, "rtfa", [0.3], kind="empirical")["bias"][0] == pytest.approx(eb)
