"""Shared pieces of the iterative algorithms: the trajectory record and local SGD."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from montecarlo.experiments.objectives import ClientLosses
from riskcalc._validate import positive_int

# Every algorithm draws from stream 10 of its replicate, so that two algorithms run with the same
# (seed, rep) see the same mini-batches: FedAvg inside "finetune" is exactly ``fedavg``.
ALGORITHM_STREAM = 10


@dataclass(frozen=True)
class Trajectory:
    """The iterates of a federated algorithm at its checkpoints (after each round or epoch).

    Attributes
    ----------
    method : str
        Algorithm name.
    objective : str
        The objective the algorithm minimizes ("local", "global" or "fedprox", see
        ``montecarlo.experiments.objectives``); ``montecarlo.experiments.metrics`` measures optimization error against
        its exact minimizer.
    lam : float
        FedProx / mixing coupling of that objective (0 unless ``objective == "fedprox"``).
    local : ndarray, shape (K+1, ..., m, d)
        Personalized models ``w^(i)`` at checkpoints 0..K (checkpoint 0 is the initialization).
        For FedAvg it is the global model broadcast to every client (its output, paper 000
        Alg. 1).
    global_model : ndarray, shape (K+1, ..., d)
        The server model (for local training, the mean of the local models).
    rounds : ndarray of int, shape (K+1,)
        Communication rounds so far: server aggregations of client uploads. The final broadcast
        of a trained global model is not counted.
    grad_evals : ndarray, shape (K+1,)
        Local gradient-oracle calls (full or mini-batch) per client so far, averaged over
        clients (so partial participation counts fractions).
    prox_evals : ndarray, shape (K+1,)
        Local proximal-oracle calls per client so far (APGD1 of paper 001).
    params : dict
        The hyperparameters used.
    """

    method: str
    objective: str
    lam: float
    local: np.ndarray
    global_model: np.ndarray
    rounds: np.ndarray
    grad_evals: np.ndarray
    prox_evals: np.ndarray
    params: dict = field(default_factory=dict)


class Recorder:
    """Accumulates checkpoints and builds the ``Trajectory``."""

    def __init__(self, method, objective, lam, params):
        self.head = (method, objective, float(lam))
        self.params = params
        self.local, self.glob, self.rounds, self.grads, self.proxes = [], [], [], [], []

    def add(self, W, wg, rounds, grads, proxes=0.0):
        self.local.append(np.array(W))
        self.glob.append(np.array(wg))
        self.rounds.append(int(rounds))
        self.grads.append(float(grads))
        self.proxes.append(float(proxes))

    def build(self) -> Trajectory:
        return Trajectory(*self.head, np.stack(self.local), np.stack(self.glob),
                          np.array(self.rounds), np.array(self.grads), np.array(self.proxes),
                          self.params)


def client_losses(data) -> ClientLosses:
    """The training losses of an ``Instance`` (or a ``ClientLosses`` itself)."""
    losses = getattr(data, "train", data)
    if not isinstance(losses, ClientLosses):
        raise ValueError("data must be a montecarlo.experiments.problems.Instance or an "
                         f"objectives.ClientLosses, got {type(data).__name__}")
    return losses


def zeros(losses):
    """The zero initialization of the local models, shape (..., m, d)."""
    return np.zeros(losses.batch_shape + (losses.m, losses.d))


def check_batch(batch_size, n):
    """``None`` (full batch) or an integer in [1, n]."""
    if batch_size is None:
        return n
    b = positive_int("batch_size", batch_size)
    if b > n:
        raise ValueError(f"batch_size must lie in [1, n] = [1, {n}] (or None for full batch), "
                         f"got {batch_size!r}")
    return b


def check_participation(clients_per_round, m):
    """``None`` (full participation) or an integer in [1, m]."""
    if clients_per_round is None:
        return m
    c = positive_int("clients_per_round", clients_per_round)
    if c > m:
        raise ValueError(f"clients_per_round must lie in [1, m] = [1, {m}], got {c!r}")
    return c


def sample_clients(rng, m, count):
    """Paper 000 Alg. 1 / paper 003 Alg. 4: ``count`` clients uniformly without replacement,
    as a boolean mask of shape (m,) (all True under full participation, drawing nothing)."""
    if count == m:
        return np.ones(m, bool)
    mask = np.zeros(m, bool)
    mask[rng.choice(m, size=count, replace=False)] = True
    return mask


def local_sgd(losses, W, rng, *, epochs, batch_size, lr, lam=0.0, center=None, active=None,
              radius=None):
    """Epochs of mini-batch SGD on every client at once (paper 000 Alg. 1 inner loop and
    SoftLocalSGD of Alg. 2).

    Each epoch shuffles each client's samples and takes ``ceil(n / B)`` steps on consecutive
    mini-batches; the step on client ``i`` is
    ``w <- P_W[w - lr (mean-batch grad f_i(w) + lam (w - center))]``.

    Parameters
    ----------
    losses : ClientLosses
    W : ndarray, shape (..., m, d)
        Starting local models (not modified).
    rng : numpy.random.Generator
        Shuffles (unused for full batch, which is deterministic gradient descent).
    epochs : int
    batch_size : int
        Already checked, in [1, n].
    lr : float
    lam : float
        Proximal coupling to ``center`` (shape (..., d)); 0 for plain SGD.
    active : ndarray of bool, shape (m,), optional
        Clients that train; the others keep their model.
    radius : float, optional
        Projection onto the ball of this radius (the compact domain W of paper 000
        Assumption A(a)); None for no projection.

    Returns
    -------
    W : ndarray, shape (..., m, d)
    steps : int
        Gradient evaluations per training client.
    """
    n, B = losses.n, batch_size
    for _ in range(epochs):
        if B == n:
            batches = [(losses.X, losses.y)]
        else:
            Xp, yp = losses.shuffled(rng.permuted(np.broadcast_to(np.arange(n), (losses.m, n)),
                                                  axis=1))
            batches = [(Xp[..., s:s + B, :], yp[..., s:s + B]) for s in range(0, n, B)]
        for Xb, yb in batches:
            G = losses.grad(W, Xb, yb)
            if lam:
                G = G + lam * (W - center[..., None, :])
            W_new = W - lr * G
            if radius is not None:
                norm = np.linalg.norm(W_new, axis=-1, keepdims=True)
                W_new = W_new * np.minimum(1.0, radius / np.maximum(norm, 1e-300))
            W = W_new if active is None else np.where(active[:, None], W_new, W)
    return W, epochs * -(-n // B)

