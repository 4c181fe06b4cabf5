"""The synthetic experiment of paper 004 (``004_98172ed3646eef14.txt``, Sec. 6.1, App. C) as
its authors ran it, re-implemented from their public code (github.com/ZLHe0/fedprox-bilevel:
``src/simulation/generate_data.py``, ``src/simulation/simulation_main.py``,
``notebooks/simulation_main_{stat,total,local_epochs}.ipynb``; read, not copied). Figures
(``figures.p004_*``) and claim checks (``paper_checks.p004``) share it, so that a check judges
exactly what a figure draws.

Two facts of that setup decide what its figures measure: the labels are argmax of X W^T (every
client's classes are separable, so LocalTrain's logistic minimizer does not exist and its
"statistical error" is the distance after a given number of steps, growing without bound with
the horizon; the pooled data are not separable, so GlobalTrain's and FedProx's minimizers exist),
and every R gives the same training data (``same_training_data``): R only rescales the true
models the error is measured against.

The earlier reconstruction (d = 60, Bernoulli labels, a shared centre, ridge 1e-2) remains the
preset ``paper004-synthetic`` of ``montecarlo.experiments.presets``.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------------
# The experiment as the authors ran it (github.com/ZLHe0/fedprox-bilevel, read, not copied):
# src/simulation/generate_data.py, src/simulation/simulation_main.py and the notebooks
# notebooks/simulation_main_{stat,total,local_epochs}.ipynb.
# --------------------------------------------------------------------------------------------

AUTHORS_L = 9.13       # the notebooks' smoothness constant (steps 1/lam + 1/L, 1/(L + lam))
AUTHORS_SEED = 1       # the notebooks' random_seed
AUTHORS_PRESETS = {
    # notebooks/simulation_main_stat.ipynb: Fig. 1(a)/(d) and the data of Fig. 3
    "paper004-authors": dict(
        m=10, n=200, d=10, classes=2, R=[float(r) for r in np.linspace(0.1, 3, 10)],
        lams=(0.02, 0.1, 0.5), local_epochs=150, rounds=50, local_rounds=500,
        lr_localtrain=0.001, lr_fedavg=0.01, sampling_rate=1.0),
    # notebooks/simulation_main_total.ipynb: Fig. 5 (client sampling)
    "paper004-authors-total": dict(
        m=1000, n=200, d=10, classes=2, R=[2.0], lams=(0.02, 0.25, 0.5), local_epochs=150,
        rounds=100, sampling_rate=0.1),
    # notebooks/simulation_main_local_epochs.ipynb: Fig. 2
    "paper004-authors-epochs": dict(
        m=10, n=200, d=10, classes=2, R=[1.0], lams=(0.5,), local_epochs=150, rounds=20,
        epochs_grid=(25, 50, 75, 100, 125, 150), sampling_rate=1.0),
}
# "as run": the published code's `if args.method == "FedAvg" or "LocalTrain":` is always true,
# so the server step never runs and the global model is the plain mean of ALL client models;
# "as described": Alg. 1's server step w_g <- w_g - gamma lam mean_{sampled}(w_g - w_i).
VARIANTS = ("as-run", "as-described")


def authors_data(R, *, m=10, n=200, d=10, classes=2, seed=AUTHORS_SEED):
    """Clients' data of paper 004's synthetic experiment exactly as the authors generated it.

    Re-implements ``src/simulation/generate_data.py`` and ``load_and_scale_data`` of
    ``src/simulation/simulation_main.py`` (ZLHe0/fedprox-bilevel): client k draws, from the
    legacy generator seeded ``k + seed m``, W_k ~ N(0, R^2) entrywise of shape (classes, d) (R
    is numpy's scale, the standard deviation), v_k ~ N(0, I_d), X_k ~ N(v_k, diag(j^-1.2))
    (n rows), labels argmax_c (X_k W_k^T)_c (no label noise). The CSV is written without a
    header and read back with pandas' default header row, so the first sample is lost: n - 1
    rows are used. Features are divided by their per-client standard deviation
    (``StandardScaler(with_mean=False)``, ddof 0), not centred. The same draws as the authors'
    files, up to LAPACK's sign convention in ``multivariate_normal``'s SVD.

    Returns
    -------
    dict with ``X`` (m, n-1, d) scaled features, ``Y`` (m, n-1, classes) one-hot labels,
    ``scale`` (m, d), ``W`` (m, classes, d) true models (unscaled coordinates).
    """
    if not R >= 0:
        raise ValueError(f"R must be >= 0, got {R!r}")
    sigma = np.diag(np.arange(1, d + 1, dtype=float) ** -1.2)
    X, Y, W = [], [], []
    for k in range(m):
        rs = np.random.RandomState(k + seed * m)
        w = rs.normal(0, R, size=(classes, d))
        v = rs.normal(0, 1, size=d)
        x = rs.multivariate_normal(v, sigma, size=n)[1:]
        X.append(x)
        Y.append(np.eye(classes)[np.argmax(x @ w.T, axis=1)])
        W.append(w)
    X, scale = np.array(X), np.array(X).std(axis=1)
    return {"X": X / scale[:, None, :], "Y": np.array(Y), "scale": scale, "W": np.array(W)}


def softmax_grad(X, Y, W):
    """Gradient of the mean multinomial cross-entropy (no intercept, no ridge) in W (d, classes),
    batched over leading axes: X^T (softmax(X W) - Y) / n (``simulation_main.py``). With two
    classes it is computed as the logistic gradient of w_1 - w_0 (the same number, 4x faster)."""
    if W.shape[-1] == 2:
        u = np.einsum("...nd,...d->...n", X, W[..., 1] - W[..., 0])
        g1 = np.einsum("...nd,...n->...d", X, 0.5 + 0.5 * np.tanh(u / 2) - Y[..., 1])
        return np.stack([-g1, g1], axis=-1) / X.shape[-2]
    Z = X @ W
    P = np.exp(Z - Z.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    return X.swapaxes(-1, -2) @ (P - Y) / X.shape[-2]


def same_training_data(R_values, **kw):
    """True when the clients' training data (X, labels) of ``authors_data`` are identical for
    every R in ``R_values`` and the true models are R times those of R = 1.

    They are: each client's generator is seeded by its index only, W_k = R Z_k with the same
    Z_k, and argmax(X W_k^T) does not change when W_k is scaled by R > 0. In the authors'
    experiment R changes only the target the error is measured against, never the data the
    methods train on."""
    base = authors_data(1.0, **kw)
    for R in R_values:
        ds = authors_data(R, **kw)
        if not (np.array_equal(ds["X"], base["X"]) and np.array_equal(ds["Y"], base["Y"])
                and np.allclose(ds["W"], R * base["W"], rtol=1e-12, atol=0)):
            return False
    return True


def authors_errors(data, G, W):
    """The two errors the authors plot (``simulation_main.py``, ``record_error == 'stat'``),
    for models G (..., d, c) and W (..., m, d, c) (e.g. one per round).

    ATR = ||w_g - mean_k W_k^T||_F (the global model in the scaled coordinates against the
    unscaled true mean: the published code does not unscale it); ITR = mean_k ||w_k / s_k -
    W_k^T||_F. Norms, not the squared norms Sec. 6.1 and App. C define.
    """
    atr = np.linalg.norm(G - data["W"].mean(0).T, axis=(-2, -1))
    itr = np.linalg.norm(W / data["scale"][..., None] - data["W"].swapaxes(-1, -2),
                         axis=(-2, -1)).mean(-1)
    return atr, itr


def authors_start(d, classes):
    """The common start: ``np.random.seed(1); np.random.randn(d, classes)``."""
    return np.random.RandomState(1).randn(d, classes)


def authors_floor(data):
    """Lower bounds (ATR, ITR) that no method goes below, from an exact invariant.

    With 2 classes the softmax depends on W only through W[:, 1] - W[:, 0], and every gradient
    X^T (P - Y) has rows summing to 0; FedAvg, LocalTrain and FedProx (prox steps and either
    server step) are affine combinations of the common start and of gradients, so the column
    sum W[:, 0] + W[:, 1] of every model stays at the start's. The error's component along
    (1, 1)/sqrt 2 is therefore fixed by the random start and the true models' sums (N(0, 2 R^2)
    per coordinate): it grows with R whatever the method and whatever the horizon.
    """
    s0 = authors_start(data["X"].shape[-1], data["Y"].shape[-1]).sum(1)
    W = data["W"]
    itr = np.linalg.norm(s0 / data["scale"] - W.sum(-2), axis=-1).mean() / np.sqrt(2)
    atr = np.linalg.norm(s0 - W.mean(0).sum(0)) / np.sqrt(2)
    return float(atr), float(itr)


def authors_run(data, method, *, rounds, local_epochs, lam=None, lr=None, variant="as-run",
                sampling_rate=1.0, adapt=False, rng=None):
    """The models after every round of one method, as ``simulation_main.py`` trains them.

    Parameters
    ----------
    data : dict from ``authors_data``
    method : "FedAvg" (GlobalTrain: every sampled client restarts from w_g), "LocalTrain"
        (clients keep their models, no proximal term) or "FedProx" (clients keep their models
        and take ``local_epochs`` gradient steps on f_i + lam/2 ||w - w_g||^2).
    rounds, local_epochs : int
    lam : float, FedProx only
    lr : float
        Local step; default the notebooks' (FedProx 1/(L + lam), FedAvg 0.01, LocalTrain 0.001).
    variant : "as-run" (w_g = mean of all client models, the published code) or
        "as-described" (FedProx: w_g <- w_g - gamma lam mean_sampled(w_g - w_i), gamma =
        1/lam + 1/L; the other methods average in both).
    sampling_rate : float
        Share of clients drawn (without replacement) each round.
    adapt : bool
        The code's ``--adapt_mu`` (Fig. 3): from round rounds/2 on, lam = 5/(n R^2) if R >=
        1/sqrt n else 5/sqrt(n R^2), with R the mean ||w_i - w_g||_F (n = 200 hard-coded);
        the local step stays 1/(L + lam_start).
    rng : numpy Generator (client sampling; the code's unseeded ``random.sample``)

    Returns
    -------
    dict with ``G`` (rounds, d, c) and ``W`` (rounds, m, d, c), the models after each round
    (errors: ``authors_errors``), and ``lam`` (the last used).
    """
    if method not in ("FedAvg", "LocalTrain", "FedProx"):
        raise ValueError(f"method must be FedAvg, LocalTrain or FedProx, got {method!r}")
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if method == "FedProx" and not (lam is not None and lam > 0):
        raise ValueError(f"lam must be > 0 for FedProx, got {lam!r}")
    if not 0 < sampling_rate <= 1:
        raise ValueError(f"sampling_rate must be in (0, 1], got {sampling_rate!r}")
    X, Y = data["X"], data["Y"]
    m, d, c = X.shape[0], X.shape[-1], Y.shape[-1]
    if lr is None:
        lr = {"FedAvg": 0.01, "LocalTrain": 0.001}.get(method) or 1 / (AUTHORS_L + lam)
    lam = float(lam) if method == "FedProx" else 0.0
    G = authors_start(d, c)
    W = np.repeat(G[None], m, axis=0)
    k = max(int(sampling_rate * m), 1)
    G_path, W_path = np.empty((rounds, d, c)), np.empty((rounds, m, d, c))
    for t in range(rounds):
        if adapt and t == int(rounds * 0.5):
            r_est = np.linalg.norm(W - G, axis=(-2, -1)).mean()
            lam = 5 * (1 / (200 * r_est ** 2) if r_est >= 1 / np.sqrt(200)
                       else 1 / np.sqrt(200 * r_est ** 2))
        s = np.arange(m) if k == m else np.sort(rng.choice(m, k, replace=False))
        Ws = np.repeat(G[None], k, axis=0) if method == "FedAvg" else W[s]
        Xs, Ys = X[s], Y[s]
        for _ in range(local_epochs):
            g = softmax_grad(Xs, Ys, Ws)
            if method == "FedProx":
                g += lam * (Ws - G)
            Ws -= lr * g
        W[s] = Ws
        if method == "FedProx" and variant == "as-described":
            # gamma lam = (1/lam + 1/L) lam
            G = G - (1 + lam / AUTHORS_L) * np.mean(G - Ws, axis=0)
        else:
            G = W.mean(0)
        G_path[t], W_path[t] = G, W
    return {"G": G_path, "W": W_path, "lam": lam}
