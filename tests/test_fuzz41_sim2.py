"""Issue 32, fuzz41 (sim2): what this fuzz found, each test failing before."""

import numpy as np

from montecarlo.experiments.objectives import minimize
from montecarlo.experiments.objectives.losses import ClientLosses
from montecarlo.experiments.problems import quadratic_instance


def _logistic_clients(l2):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 30, 3))
    y = np.where(rng.normal(size=(4, 30)) + X[..., 0] > 0, 1.0, -1.0)
    return ClientLosses(X, y, loss="logistic", l2=l2)


def test_f1_logistic_fedprox_global_model_at_small_lam():
    # F1: the logistic FedProx minimizer returned w_g = 0 from lam 1e-12 (its envelope gradient
    # lam (w_g - mean prox) under tol = 1e-10 at the start), and w_g 3.8e-9 from mean(W) at
    # lam 1e-6; both losses' w_g was 0.1-0.5 off at a subnormal lam (5e-324). Minimizing over
    # w_g gives mean(W) at any lam, and as lam -> 0 W tends to the local minimizers.
    for l2 in (0.0, 0.1):
        losses = _logistic_clients(l2)
        w_loc, W_loc = minimize(losses, "local")
        for lam in (1e-6, 1e-12, 1e-300, 5e-324):
            wg, W = minimize(losses, "fedprox", lam)
            assert np.max(abs(wg - W.mean(0))) <= 1e-10, (l2, lam)
            if lam < 1e-10:
                assert np.max(abs(wg - w_loc)) < 1e-8, (l2, lam)
    losses = quadratic_instance(m=3, d=4).train
    w_loc, _ = minimize(losses, "local")
    for lam in (1e-310, 5e-324):
        wg, W = minimize(losses, "fedprox", lam)
        assert np.max(abs(wg - w_loc)) < 1e-12 and np.max(abs(wg - W.mean(0))) < 1e-14, lam
