"""pFedMe (Dinh et al. 2020; paper 003 Alg. 8; compared against in paper 004 App. C)."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms._core import (ALGORITHM_STREAM, Recorder, check_batch,
                                                     check_participation, client_losses, sample_clients)
from montecarlo.runner.seeding import replicate_rng
from riskcalc._validate import as_array, positive, positive_int


def pfedme(data, *, lam: float, rounds: int = 20, local_steps: int = 5,
           batch_size: int | None = 16, lr: float = 0.2, inner_steps: int = 5,
           inner_lr: float | None = None, beta: float = 1.0,
           clients_per_round: int | None = None, seed: int = 0, rep: int = 0):
    """pFedMe: local steps on the Moreau envelope, personalized models from an inner prox.

    Round r: the server sends ``w`` to the sampled clients; each sets ``w_i = w`` and repeats
    ``local_steps`` times: draw a mini-batch ``D`` of size B, approximate
    ``theta_i = argmin_theta f_i^D(theta) + lam/2 ||theta - w_i||^2`` by ``inner_steps`` gradient
    steps of size ``inner_lr`` (warm-started at the previous ``theta_i``), then
    ``w_i <- w_i - lr lam (w_i - theta_i)``. The server sets
    ``w <- (1 - beta) w + beta mean_i w_i``. The personalized model is ``theta_i``.

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Coupling, > 0. pFedMe minimizes ``mean_i min_theta f_i(theta) + lam/2||theta - w||^2``,
        the bilevel form of FedProx (paper 004 eq. 8), so its fixed point with full batches, an
        exact inner solve and ``local_steps = 1`` is the FedProx minimizer.
    rounds : int
        Communication rounds, >= 0.
    local_steps : int
        Local steps per round (paper 003's K), >= 1.
    batch_size : int or None
        Mini-batch size in [1, n]; None for full batch.
    lr : float
        Local step on the envelope, > 0 (stable for ``lr lam < 2``).
    inner_steps : int
        Gradient steps of the inner prox problem, >= 1.
    inner_lr : float or None
        Their step size; default ``1 / (L_B + lam)`` with ``L_B`` a smoothness bound of the
        mini-batch loss (the full-data bound for full batches, the largest per-sample bound
        otherwise).
    beta : float
        Server mixing in (0, 1] (paper 003 Alg. 8 line 13; 1 is plain averaging).
    clients_per_round : int or None
        ``|S_r|`` in [1, m]; None for all.
    seed, rep : int
        Randomness from ``replicate_rng(seed, rep, 10)``.

    Returns
    -------
    Trajectory
        Objective ``"fedprox"``; ``local`` holds the personalized ``theta_i`` after each round.

    Notes
    -----
    ERRATA (paper 003 Alg. 8 line 8): the inner problem is written with ``grad F`` inside the
    argmin; the argmin is of the loss ``F`` itself plus the proximal term (Dinh et al. 2020,
    eq. 7).
    """
    losses = client_losses(data)
    lam = float(positive("lam", lam))
    rounds = positive_int("rounds", rounds, minimum=0)
    local_steps = positive_int("local_steps", local_steps)
    inner_steps = positive_int("inner_steps", inner_steps)
    B = check_batch(batch_size, losses.n)
    lr = float(positive("lr", lr))
    beta = float(as_array("beta", beta, low=0.0, high=1.0, low_open=True))
    count = check_participation(clients_per_round, losses.m)
    if inner_lr is None:
        if B == losses.n:
            smooth = float(np.max(losses.smoothness()))
        else:
            scale = 0.25 if losses.loss == "logistic" else 1.0
            smooth = scale * float(np.max(np.sum(losses.X ** 2, -1))) + losses.l2
        inner_lr = 1.0 / (smooth + lam)
    inner_lr = float(positive("inner_lr", inner_lr))
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("pfedme", "fedprox", lam, dict(
        lam=lam, rounds=rounds, local_steps=local_steps, batch_size=B, lr=lr,
        inner_steps=inner_steps, inner_lr=inner_lr, beta=beta, clients_per_round=count,
        seed=seed, rep=rep))
    shape = losses.batch_shape + (losses.m, losses.d)
    wg = np.zeros(losses.batch_shape + (losses.d,))
    theta, grads = np.zeros(shape), 0.0
    rec.add(theta, wg, 0, 0.0)
    for r in range(rounds):
        active = sample_clients(rng, losses.m, count)
        W = np.broadcast_to(wg[..., None, :], shape)
        th = theta
        for _ in range(local_steps):
            if B == losses.n:
                Xb, yb = losses.X, losses.y
            else:
                perm = rng.permuted(np.broadcast_to(np.arange(losses.n), (losses.m, losses.n)),
                                    axis=1)[:, :B]
                Xb, yb = losses.shuffled(perm)
            for _ in range(inner_steps):
                th = th - inner_lr * (losses.grad(th, Xb, yb) + lam * (th - W))
            W = W - lr * lam * (W - th)
        theta = np.where(active[:, None], th, theta)
        wg = (1.0 - beta) * wg + beta * W[..., active, :].mean(-2)
        grads += local_steps * inner_steps * count / losses.m
        rec.add(theta, wg, r + 1, grads)
    return rec.build()
