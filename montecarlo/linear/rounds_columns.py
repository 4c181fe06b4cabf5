"""The column blocks that ``rounds_propagate``'s round maps act on: each client's range basis
and the sources' columns.

Every model of FedAvg with local GD and of paper 004's Algorithm 1 is linear in b_j = X_j^T y_j /
n_j, which lies in the range of S_j = X_j^T X_j / n_j = R_j diag(mu_j) R_j^T (``client_basis``).
``source_columns``: an orthonormal basis of the sources scaled by their standard deviations,
whose propagated squared Sigma-norms sum to the exact expectation given the designs
(``rounds_propagate``'s docstring); ``draw_columns``: sampled draws, one column each for their
signal and noise; ``propagation_flops``: the cost of propagating ``source_columns``.
"""

from __future__ import annotations

import numpy as np


def client_basis(dec):
    """(R, mu): S = X^T X / n = R diag(mu) R^T from a
    ``montecarlo.linear.decomposition.Decomposition``."""
    return dec.V.T / np.sqrt(dec.nmu), dec.mu


def source_columns(basis, n, s, r, sigma, signal):
    """(beta, targets) of the scaled source basis (``rounds_propagate`` docstring): columns
    theta_0 (d), u_1..u_M (d each), then each client's noise (k_j each)."""
    m, d = len(basis), np.shape(s)[-1]
    ks = [mu.size for _, mu in basis]
    cs, c = (m + 1) * d, (m + 1) * d + sum(ks)
    beta, targets = [], []
    for j, (R, mu) in enumerate(basis):
        b = np.zeros((mu.size, c))
        b[:, :d] = mu[:, None] * R.T * (signal / np.sqrt(d))
        b[:, (j + 1) * d:(j + 2) * d] = mu[:, None] * R.T * (r[j] / np.sqrt(d))
        start = cs + sum(ks[:j])
        b[:, start:start + mu.size] = np.diag(sigma[j] * np.sqrt(mu / n[j]))
        t = np.zeros((d, cs))
        t[:, :d] = np.eye(d) * (signal / np.sqrt(d))
        t[:, (j + 1) * d:(j + 2) * d] = np.eye(d) * (r[j] / np.sqrt(d))
        beta.append(b)
        targets.append(t)
    return beta, targets


def draw_columns(basis, X, draws):
    """(beta, targets) of sampled draws ``[(theta, eps), ...]``: their signal columns, then
    their noise columns."""
    beta, targets = [], []
    for j, ((R, mu), x) in enumerate(zip(basis, X)):
        th = np.column_stack([t[j] for t, _ in draws])
        noise = np.column_stack([e[j] for _, e in draws])
        beta.append(np.hstack([mu[:, None] * (R.T @ th), R.T @ (x.T @ noise) / x.shape[0]]))
        targets.append(th)
    return beta, targets


def propagation_flops(d, ks, rounds, method) -> float:
    """Flops of the exact column propagation (``source_columns``) over ``rounds``."""
    m, kt = len(ks), float(sum(ks))
    finite = [t for t in rounds if not np.isinf(t)]
    per = (6 if method == "fedprox" else 4) * d * kt * ((m + 1) * d + kt)
    return per * (max(finite, default=0) + 1)
