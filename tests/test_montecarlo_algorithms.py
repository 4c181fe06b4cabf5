"""The iterative algorithms of paper 003 (003_4b976ddf5225c17e.txt), Sec. 7, converge to the
closed forms of eqs. (6)-(14) on small problems."""

import numpy as np
import pytest

from montecarlo.linear import algorithms as alg
from montecarlo.linear.estimators import global_model, personalize, pfedme_joint
from montecarlo.runner.seeding import replicate_rng


@pytest.fixture
def problem():
    rng = replicate_rng(0, 0)
    d, ns = 8, [6, 7, 8, 9, 10]
    Xs = [rng.standard_normal((n, d)) for n in ns]
    theta0 = rng.standard_normal(d)
    ys = [X @ (theta0 + 0.5 * rng.standard_normal(d)) + 0.3 * rng.standard_normal(X.shape[0])
          for X in Xs]
    p = np.array(ns) / sum(ns)
    return Xs, ys, p


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_fedavg_full_batch_converges_to_eq6(problem):
    Xs, ys, p = problem
    exact = global_model(Xs, ys, p, "fedavg")
    # Rounding reached by 1000 rounds (3e-15, as at 3000; 4e-10 at 600).
    assert rel(alg.fedavg(Xs, ys, p, rounds=1000, lr=0.1), exact) < 1e-8
    # K > 1 local steps drift from eq. (6) at a fixed step; a decaying step removes the drift.
    drift = alg.fedavg(Xs, ys, p, rounds=3000, local_steps=5, lr=0.05, lr_decay=0.01)
    assert rel(drift, exact) < 5e-3


def test_fedavg_sgd_partial_participation_approaches_eq6(problem):
    Xs, ys, p = problem
    exact = global_model(Xs, ys, p, "fedavg")
    sgd = alg.fedavg(Xs, ys, p, rounds=4000, local_steps=2, lr=0.05, batch=3,
                     clients_per_round=3, lr_decay=0.02, rng=replicate_rng(0, 1))
    assert rel(sgd, exact) < 0.05


def test_fine_tuning_converges_to_eqs_7_and_8(problem):
    Xs, ys, p = problem
    center = global_model(Xs, ys, p, "fedavg")
    X, y = Xs[0], ys[0]
    ftfa = alg.fine_tune(X, y, center, steps=5000, lr=0.2)
    assert rel(ftfa, personalize(X, y, center, 0.0)) < 1e-8
    # SGD interpolates too (no noise at an interpolant): the interpolant closest to the start.
    sgd = alg.fine_tune(X, y, center, steps=20000, lr=0.1, batch=2, rng=replicate_rng(0, 2))
    assert rel(sgd, personalize(X, y, center, 0.0)) < 1e-6
    rtfa = alg.fine_tune(X, y, center, steps=5000, lr=0.2, lam=0.3)
    assert rel(rtfa, personalize(X, y, center, 0.3)) < 1e-8


@pytest.mark.parametrize("variant", ["hf", "fo"])
def test_maml_fl_converges(problem, variant):
    Xs, ys, p = problem
    alpha = 0.05
    # Rounding reached by 1500 rounds (2e-15 and 4e-15, as at 4000; 3e-11 at 800).
    got = alg.maml_fl(Xs, ys, p, alpha=alpha, rounds=1500, lr=0.1, variant=variant)
    if variant == "hf":
        target = global_model(Xs, ys, p, "maml_fl", alpha)  # eq. (12)
    else:
        d = Xs[0].shape[1]
        lhs, rhs = np.zeros((d, d)), np.zeros(d)
        for X, y, pj in zip(Xs, ys, p):
            S, b = X.T @ X / X.shape[0], X.T @ y / X.shape[0]
            lhs += pj * S @ (np.eye(d) - alpha * S)
            rhs += pj * (np.eye(d) - alpha * S) @ b
        target = np.linalg.solve(lhs, rhs)
    assert rel(got, target) < 1e-6
    if variant == "fo":
        assert rel(got, global_model(Xs, ys, p, "maml_fl", alpha)) > 1e-4


def test_pfedme_converges_to_eq14(problem):
    Xs, ys, p = problem
    theta0, thetas = pfedme_joint(Xs, ys, p, 0.5)
    # Rounding reached by 300 rounds (1e-12 at 200, as at 3000 rounds: 7e-16).
    got0, got = alg.pfedme(Xs, ys, p, lam=0.5, rounds=300, lr=1.0)
    assert rel(got0, theta0) < 1e-8
    assert all(rel(a, b) < 1e-8 for a, b in zip(got, thetas))
    # Several local steps with server mixing beta < 1 and batches still get close.
    approx0, _ = alg.pfedme(Xs, ys, p, lam=0.5, rounds=3000, local_steps=3, lr=0.2, beta=0.5,
                            batch=4, rng=replicate_rng(0, 3))
    assert rel(approx0, theta0) < 0.1


def test_bad_variant(problem):
    Xs, ys, p = problem
    with pytest.raises(ValueError, match="variant"):
        alg.maml_fl(Xs, ys, p, alpha=0.1, rounds=1, lr=0.1, variant="so")
