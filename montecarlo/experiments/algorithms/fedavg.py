"""FedAvg, PureLocalTraining, and FedAvg followed by local fine-tuning (paper 000 Sec. 1 and
3.3, Alg. 1 and Appendix D; paper 003 Algs 3-5)."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms._core import (ALGORITHM_STREAM, Recorder, check_batch,
                                                     check_participation, client_losses, local_sgd,
                                                     sample_clients, zeros)
from montecarlo.runner.seeding import replicate_rng
from riskcalc._validate import positive, positive_int


def _fedavg_rounds(losses, rng, rec, *, rounds, local_epochs, batch_size, lr, global_lr,
                   clients_per_round):
    wg = np.zeros(losses.batch_shape + (losses.d,))
    shape = losses.batch_shape + (losses.m, losses.d)
    grads = 0.0
    rec.add(np.broadcast_to(wg[..., None, :], shape), wg, 0, 0.0)
    for t in range(rounds):
        active = sample_clients(rng, losses.m, clients_per_round)
        start = np.broadcast_to(wg[..., None, :], shape)
        W, steps = local_sgd(losses, start, rng, epochs=local_epochs, batch_size=batch_size,
                             lr=lr, active=active)
        # paper 000 Alg. 1: w <- w - m eta / (N |C_t|) sum_{i in C_t} n_i (w - w_i); with equal
        # n_i this is w - eta * mean_{i in C_t} (w - w_i).
        wg = wg - global_lr * (wg - W[..., active, :].mean(-2))
        grads += steps * clients_per_round / losses.m
        rec.add(np.broadcast_to(wg[..., None, :], shape), wg, t + 1, grads)
    return wg, grads


def _check_fedavg(losses, rounds, local_epochs, batch_size, lr, global_lr, clients_per_round):
    return dict(rounds=positive_int("rounds", rounds, minimum=0),
                local_epochs=positive_int("local_epochs", local_epochs),
                batch_size=check_batch(batch_size, losses.n), lr=float(positive("lr", lr)),
                global_lr=float(positive("global_lr", global_lr)),
                clients_per_round=check_participation(clients_per_round, losses.m))


def fedavg(data, *, rounds: int = 20, local_epochs: int = 5, batch_size: int | None = 16,
           lr: float = 0.2, global_lr: float = 0.8, clients_per_round: int | None = None,
           seed: int = 0, rep: int = 0):
    """FedAvg with a global step size (paper 000 Alg. 1; paper 003 Alg. 4 is ``global_lr=1``).

    Each round the server samples ``clients_per_round`` clients; each runs ``local_epochs``
    epochs of mini-batch SGD (step ``lr``) from the global model; the server moves
    ``w <- w - global_lr * mean_{i in C_t}(w - w_i)``, which is Alg. 1's update
    ``w - m eta_t / (N |C_t|) sum n_i (w - w_i)`` for equal ``n_i``. Every client outputs the
    global model. Defaults: paper 000 Appendix D (T = 20, eta_t = 0.8, 5 epochs at 0.2,
    batch 16, full participation).

    Parameters
    ----------
    data : Instance or ClientLosses
    rounds : int
        Communication rounds T, >= 0.
    local_epochs : int
        Local SGD epochs per round, >= 1.
    batch_size : int or None
        Mini-batch size in [1, n]; None for full-batch gradient descent.
    lr, global_lr : float
        Local and global step sizes, > 0.
    clients_per_round : int or None
        Partial participation ``|C_t|`` in [1, m]; None for all clients.
    seed, rep : int
        Randomness (client sampling, shuffles) from ``replicate_rng(seed, rep, 10)``.

    Returns
    -------
    Trajectory
        Objective ``"global"``; one checkpoint per round.

    Notes
    -----
    With several local steps and heterogeneous clients FedAvg's fixed point is not the
    minimizer of the global objective (client drift); with ``local_epochs=1`` and
    ``batch_size=None`` it is gradient descent with step ``lr * global_lr`` and converges to it.
    """
    losses = client_losses(data)
    hp = _check_fedavg(losses, rounds, local_epochs, batch_size, lr, global_lr,
                       clients_per_round)
    rec = Recorder("fedavg", "global", 0.0, dict(hp, seed=seed, rep=rep))
    _fedavg_rounds(losses, replicate_rng(seed, rep, ALGORITHM_STREAM), rec, **hp)
    return rec.build()


def local_training(data, *, epochs: int = 100, batch_size: int | None = 16, lr: float = 0.2,
                   seed: int = 0, rep: int = 0):
    """PureLocalTraining: each client runs SGD on its own data, no communication
    (paper 000 eq. 3; paper 003 Alg. 3). Defaults: paper 000 Appendix D (100 epochs at 0.2).

    Parameters
    ----------
    data : Instance or ClientLosses
    epochs : int
        Epochs, >= 0.
    batch_size : int or None
        Mini-batch size in [1, n]; None for full-batch gradient descent.
    lr : float
        Step size, > 0.
    seed, rep : int
        Shuffles from ``replicate_rng(seed, rep, 10)``.

    Returns
    -------
    Trajectory
        Objective ``"local"``; one checkpoint per epoch; the global model is the mean of the
        local models.
    """
    losses = client_losses(data)
    epochs = positive_int("epochs", epochs, minimum=0)
    B, lr = check_batch(batch_size, losses.n), float(positive("lr", lr))
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("local", "local", 0.0, dict(epochs=epochs, batch_size=B, lr=lr, seed=seed,
                                               rep=rep))
    W, grads = zeros(losses), 0.0
    rec.add(W, W.mean(-2), 0, 0.0)
    for _ in range(epochs):
        W, steps = local_sgd(losses, W, rng, epochs=1, batch_size=B, lr=lr)
        grads += steps
        rec.add(W, W.mean(-2), 0, grads)
    return rec.build()


def finetune(data, *, rounds: int = 20, local_epochs: int = 5, batch_size: int | None = 16,
             lr: float = 0.2, global_lr: float = 0.8, clients_per_round: int | None = None,
             finetune_epochs: int = 15, finetune_lr: float = 0.2, seed: int = 0, rep: int = 0):
    """FedAvg followed by local fine-tuning (paper 000 Sec. 3.3, "Optimality of FedAvg followed
    by local fine tuning"; paper 003 Alg. 5 / FTFA).

    Runs ``fedavg`` with the same arguments (and the same random numbers, so its first ``rounds``
    checkpoints equal ``fedavg``'s), then every client runs ``finetune_epochs`` epochs of SGD on
    its own data from the global model. Defaults: paper 000 Appendix D (15 epochs at 0.2).

    Parameters
    ----------
    data, rounds, local_epochs, batch_size, lr, global_lr, clients_per_round, seed, rep
        As for ``fedavg``.
    finetune_epochs : int
        Local epochs after FedAvg, >= 0.
    finetune_lr : float
        Their step size, > 0.

    Returns
    -------
    Trajectory
        Objective ``"local"`` (the fine-tuned models converge to the local minimizers as
        ``finetune_epochs`` grows); checkpoints: FedAvg's rounds, then one per fine-tuning epoch.
    """
    losses = client_losses(data)
    hp = _check_fedavg(losses, rounds, local_epochs, batch_size, lr, global_lr,
                       clients_per_round)
    finetune_epochs = positive_int("finetune_epochs", finetune_epochs, minimum=0)
    finetune_lr = float(positive("finetune_lr", finetune_lr))
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("finetune", "local", 0.0, dict(hp, finetune_epochs=finetune_epochs,
                                                  finetune_lr=finetune_lr, seed=seed, rep=rep))
    wg, grads = _fedavg_rounds(losses, rng, rec, **hp)
    W = np.broadcast_to(wg[..., None, :], losses.batch_shape + (losses.m, losses.d))
    for _ in range(finetune_epochs):
        W, steps = local_sgd(losses, W, rng, epochs=1, batch_size=hp["batch_size"],
                             lr=finetune_lr)
        grads += steps
        rec.add(W, wg, hp["rounds"], grads)
    return rec.build()
