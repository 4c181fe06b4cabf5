"""Issue 32, fuzz41 (measure): what this fuzz found, each test failing before."""

import numpy as np

from montecarlo.linear.instances import Instance
from montecarlo.linear.measure import measure


def _two_point_instance(d, n, seed=0):
    """One client, Sigma = diag(1e-8 (first half), 1e8), r = 1, sigma = 0, oracle center."""
    s = np.repeat([1e-8, 1e8], d // 2)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.sqrt(s)
    return Instance(s=s, X=[X], r=np.ones(1), sigma=np.zeros(1), a=np.ones(1) / n,
                    u=np.zeros((1, d)), c=np.full(d, 1.0 / d), xi=[np.zeros(n)],
                    federated=False)


def test_f1_conditional_bias_not_lost_to_cancellation_against_trace_sigma():
    # compare ftfa --spectrum two-point:1e-8,1e8,0.5 --steps 1000 --step-size 1e-9 --d 400
    # printed the simulated bias 8.1e-9 +- 7.8e-10 (predicted 6.67e-9): the conditional bias
    # r^2/d (tr(Sigma) - (2f - f^2).A) lost its 1e-9 to rounding against tr(Sigma) ~ 1e10.
    # Independent route: r^2/d tr(Sigma M M^T) with M = (I - eta X^T X / n)^k, a sum of
    # squares (E[u u^T] = I/d).
    d, n, k, eta = 40, 80, 1000, 1e-9
    inst = _two_point_instance(d, n)
    X, s = inst.X[0], inst.s
    M = np.linalg.matrix_power(np.eye(d) - eta * (X.T @ X) / n, k)
    exact = float(((np.sqrt(s)[:, None] * M) ** 2).sum()) / d
    got = measure(inst, "ftfa", [0.0], steps=k, step_size=eta)["bias"][0]
    assert abs(got - exact) <= 1e-3 * exact, (got, exact)
