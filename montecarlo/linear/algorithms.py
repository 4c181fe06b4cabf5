"""The iterative federated algorithms of paper 003, Sec. 7, for the linear model.

Paper 003 (``003_4b976ddf5225c17e.txt``): FedAvg with local SGD (Alg. 4), FTFA and RTFA
fine-tuning by SGD (Algs. 5-6), MAML-FL (Alg. 7; Hessian-free and first-order variants of
[FMO20]) and pFedMe (Alg. 8). Client j's empirical loss is L_j(theta) = ||X_j theta - y_j||^2
/ (2 n_j) (the normalization of eqs. 6-14), so full-batch gradient steps with a small enough
step converge to the closed forms of ``montecarlo.linear.estimators`` (tested on small problems).

Common arguments: ``Xs``, ``ys`` (lists of client designs and responses), ``p`` (client weights
of the global objective; the server averages the sampled clients' models with p renormalized
over the sample, which is Algs. 4 and 7's n_j / sum n_j when p_j = n_j / N), ``rounds``,
``local_steps`` (K), ``lr`` (eta), ``batch`` (B; None = full batch), ``clients_per_round`` (D;
None = all), ``lr_decay`` (eta_r = eta / (1 + lr_decay r), which removes the client drift of
K > 1 local steps and the SGD noise in the limit), and ``rng`` (a ``numpy.random.Generator``;
draw it from ``montecarlo.runner.seeding``).
"""

from __future__ import annotations

import numpy as np

VARIANTS = ("hf", "fo")


def _grad(X, y, theta, idx=None):
    """Gradient of ||X theta - y||^2 / (2 |batch|) on the rows ``idx`` (all when None)."""
    if idx is not None:
        X, y = X[idx], y[idx]
    return X.T @ (X @ theta - y) / X.shape[0]


def _batch(rng, n, batch):
    return None if batch is None or batch >= n else rng.choice(n, size=batch, replace=False)


def _federate(local_update, Xs, p, rounds, lr, lr_decay, clients_per_round, rng, init):
    """The server loop shared by Algs. 4 and 7: sample D clients, run their local updates from
    the current model, average the results with the weights p renormalized over the sample."""
    m, d = len(Xs), Xs[0].shape[1]
    p = np.asarray(p, dtype=float)
    theta = np.zeros(d) if init is None else np.array(init, dtype=float)
    for r in range(rounds):
        eta = lr / (1.0 + lr_decay * r)
        chosen = (np.arange(m) if clients_per_round is None or clients_per_round >= m
                  else rng.choice(m, size=clients_per_round, replace=False))
        w = p[chosen] / p[chosen].sum()
        theta = sum(wj * local_update(j, theta.copy(), eta) for j, wj in zip(chosen, w))
    return theta


def fedavg(Xs, ys, p, *, rounds, local_steps=1, lr, batch=None, clients_per_round=None,
           lr_decay=0.0, rng=None, init=None) -> np.ndarray:
    """Federated Averaging with local SGD (paper 003, Alg. 4); converges to eq. (6).

    Returns
    -------
    ndarray (d,)
        The global model after ``rounds`` communication rounds.
    """
    rng = np.random.default_rng() if rng is None else rng

    def local(j, theta, eta):
        for _ in range(local_steps):
            theta -= eta * _grad(Xs[j], ys[j], theta, _batch(rng, Xs[j].shape[0], batch))
        return theta

    return _federate(local, Xs, p, rounds, lr, lr_decay, clients_per_round, rng, init)


def fine_tune(X, y, init, *, steps, lr, lam=0.0, batch=None, lr_decay=0.0,
              rng=None) -> np.ndarray:
    """``steps`` SGD steps on L_i(theta) + lam/2 ||theta - init||^2 from ``init``.

    Paper 003, Alg. 5 (FTFA, lam = 0: converges to the interpolant closest to ``init``,
    eq. 7) and Alg. 6 (RTFA, converges to eq. 8). Full-batch steps of size ``lr`` keep the
    fraction 1 - (1 - lr (mu + lam))^steps of each data direction
    (``montecarlo.linear.estimators.spectral_filter``).
    """
    rng = np.random.default_rng() if rng is None else rng
    init = np.asarray(init, dtype=float)
    theta = init.copy()
    for k in range(steps):
        eta = lr / (1.0 + lr_decay * k)
        g = _grad(X, y, theta, _batch(rng, X.shape[0], batch)) + lam * (theta - init)
        theta -= eta * g
    return theta


def maml_fl(Xs, ys, p, *, alpha, rounds, local_steps=1, lr, variant="hf", batch=None,
            clients_per_round=None, lr_decay=0.0, delta=1e-3, rng=None,
            init=None) -> np.ndarray:
    """MAML-FL / Per-FedAvg (paper 003, Alg. 7, after [FMO20]): FedAvg on the one-step-adapted
    losses F_j(theta) = L_j(theta - alpha grad L_j(theta)) of eq. (11).

    ``variant="hf"``: the Hessian-free gradient (I - alpha H_j) grad L_j(theta'), with
    H_j v from a central difference of gradients at step ``delta`` (exact for quadratics),
    theta' = theta - alpha grad L_j(theta); converges to the closed form (12). ``"fo"``: the
    first-order variant drops the Hessian term, grad L_j(theta'); it converges to the root of
    sum_j p_j (S_j (I - alpha S_j) theta - (I - alpha S_j) b_j) instead (S_j = X_j^T X_j / n_j,
    b_j = X_j^T y_j / n_j). Independent batches are drawn for the inner gradient, the outer
    gradient and the Hessian, as in [FMO20].
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    rng = np.random.default_rng() if rng is None else rng

    def local(j, theta, eta):
        X, y, n = Xs[j], ys[j], Xs[j].shape[0]
        for _ in range(local_steps):
            inner = theta - alpha * _grad(X, y, theta, _batch(rng, n, batch))
            g = _grad(X, y, inner, _batch(rng, n, batch))
            if variant == "hf":
                idx = _batch(rng, n, batch)
                hv = (_grad(X, y, theta + delta * g, idx)
                      - _grad(X, y, theta - delta * g, idx)) / (2 * delta)
                g = g - alpha * hv
            theta -= eta * g
        return theta

    return _federate(local, Xs, p, rounds, lr, lr_decay, clients_per_round, rng, init)


def pfedme(Xs, ys, p, *, lam, rounds, local_steps=1, lr, beta=1.0, batch=None,
           clients_per_round=None, rng=None, init=None):
    """pFedMe (paper 003, Alg. 8, after [DTN20]); converges to the joint minimizer of eq. (14).

    Each local step solves the personalized problem on a batch exactly (a ridge regression
    toward the local copy w, the linear case of [DTN20]'s inner solve), then moves
    w <- w - lr lam (w - theta_j(w)); the server mixes theta_0 <- (1 - beta) theta_0 + beta
    (p-weighted mean of the w's).

    Returns
    -------
    theta0 : ndarray (d,)
        The global model.
    thetas : list of ndarray (d,)
        Each client's personalized model theta_j(theta0) on its full data.
    """
    rng = np.random.default_rng() if rng is None else rng
    m, d = len(Xs), Xs[0].shape[1]
    p = np.asarray(p, dtype=float)

    def prox(X, y, w):
        n = X.shape[0]
        return np.linalg.solve(X.T @ X / n + lam * np.eye(d), X.T @ y / n + lam * w)

    theta0 = np.zeros(d) if init is None else np.array(init, dtype=float)
    for _ in range(rounds):
        chosen = (np.arange(m) if clients_per_round is None or clients_per_round >= m
                  else rng.choice(m, size=clients_per_round, replace=False))
        weights = p[chosen] / p[chosen].sum()
        avg = np.zeros(d)
        for j, wj in zip(chosen, weights):
            w = theta0.copy()
            for _ in range(local_steps):
                idx = _batch(rng, Xs[j].shape[0], batch)
                X, y = (Xs[j], ys[j]) if idx is None else (Xs[j][idx], ys[j][idx])
                w -= lr * lam * (w - prox(X, y, w))
            avg += wj * w
        theta0 = (1.0 - beta) * theta0 + beta * avg
    return theta0, [prox(X, y, theta0) for X, y in zip(Xs, ys)]
