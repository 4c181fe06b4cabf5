"""Paper 004's synthetic experiment as the authors ran it (``montecarlo.experiments.paper004``): data,
gradient, the two server variants and the exact invariant behind the figures' floor."""

import numpy as np
import pytest

from montecarlo.experiments.paper004 import (AUTHORS_L, authors_data, authors_errors, authors_floor,
                                             authors_run, authors_start, same_training_data, softmax_grad)


@pytest.fixture(scope="module")
def data():
    return authors_data(1.5)


def test_data_as_generated(data):
    X, Y, W, s = data["X"], data["Y"], data["W"], data["scale"]
    assert X.shape == (10, 199, 10) and Y.shape == (10, 199, 2) and W.shape == (10, 2, 10)
    np.testing.assert_allclose(X.std(axis=1), 1.0, rtol=1e-12)        # StandardScaler scale
    raw = X * s[:, None, :]
    assert np.array_equal(Y.argmax(-1), np.argmax(np.einsum("knd,kcd->knc", raw, W), -1))
    # first client's draws from the legacy generator seeded 0 + 1 * 10, first row dropped
    rs = np.random.RandomState(10)
    np.testing.assert_array_equal(W[0], rs.normal(0, 1.5, (2, 10)))
    v = rs.normal(0, 1, 10)
    np.testing.assert_allclose(raw[0].mean(0), v, atol=4 * 1.0 / np.sqrt(199))


def test_training_data_do_not_depend_on_R():
    assert same_training_data([0.1, 0.7, 3.0])
    a, b = authors_data(1.0, seed=1), authors_data(1.0, seed=2)
    assert not np.array_equal(a["X"], b["X"])


def test_binary_gradient_matches_softmax_and_finite_difference(data):
    X, Y = data["X"][:2], data["Y"][:2]
    W = np.random.default_rng(0).normal(size=(2, 10, 2))
    g = softmax_grad(X, Y, W)
    Z = X @ W
    P = np.exp(Z) / np.exp(Z).sum(-1, keepdims=True)
    np.testing.assert_allclose(g, X.swapaxes(-1, -2) @ (P - Y) / 199, rtol=1e-10, atol=1e-13)

    def loss(w):
        z = X[0] @ w
        return np.mean(np.log(np.exp(z).sum(-1)) - (z * Y[0]).sum(-1))
    e = np.zeros((10, 2))
    e[3, 1] = 1e-6
    fd = (loss(W[0] + e) - loss(W[0] - e)) / 2e-6
    assert abs(fd - g[0, 3, 1]) < 1e-7


@pytest.mark.parametrize("method, kw", [("FedAvg", {}), ("LocalTrain", {}),
                                        ("FedProx", {"lam": 0.1}),
                                        ("FedProx", {"lam": 0.5, "variant": "as-described"})])
def test_column_sums_fixed_and_floor(data, method, kw):
    out = authors_run(data, method, rounds=4, local_epochs=10, **kw)
    s0 = authors_start(10, 2).sum(1)
    np.testing.assert_allclose(out["W"].sum(-1), np.broadcast_to(s0, out["W"].shape[:-1]),
                               atol=1e-12)
    np.testing.assert_allclose(out["G"].sum(-1), np.broadcast_to(s0, out["G"].shape[:-1]),
                               atol=1e-12)
    atr, itr = authors_errors(data, out["G"], out["W"])
    f_atr, f_itr = authors_floor(data)
    assert np.all(atr >= f_atr - 1e-12) and np.all(itr >= f_itr - 1e-12)


def test_server_step_variants(data):
    lam = 0.5
    run = authors_run(data, "FedProx", lam=lam, rounds=1, local_epochs=5)
    desc = authors_run(data, "FedProx", lam=lam, rounds=1, local_epochs=5,
                       variant="as-described")
    np.testing.assert_array_equal(run["W"], desc["W"])    # same local steps in round 1
    g0 = authors_start(10, 2)
    mean = run["W"][0].mean(0)
    np.testing.assert_allclose(run["G"][0], mean, rtol=1e-14)
    np.testing.assert_allclose(desc["G"][0], g0 + (1 + lam / AUTHORS_L) * (mean - g0),
                               rtol=1e-13)


def test_adaptive_lambda_rule(data):
    out = authors_run(data, "FedProx", lam=0.1, rounds=2, local_epochs=5, adapt=True)
    r = np.linalg.norm(out["W"][0] - out["G"][0], axis=(-2, -1)).mean()
    expected = 5 / (200 * r ** 2) if r >= 1 / np.sqrt(200) else 5 / np.sqrt(200 * r ** 2)
    assert out["lam"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("kw, name", [({"method": "SGD"}, "method"),
                                      ({"method": "FedProx"}, "lam"),
                                      ({"method": "FedAvg", "variant": "x"}, "variant"),
                                      ({"method": "FedAvg", "sampling_rate": 0}, "sampling_rate")])
def test_bad_input(data, kw, name):
    with pytest.raises(ValueError, match=name):
        authors_run(data, rounds=1, local_epochs=1, **kw)
    with pytest.raises(ValueError, match="R"):
        authors_data(-1.0)
