"""Algorithms for the mixing objective of paper 001 (eq. 2): L2GD, APGD1 and APGD2 (Sec. 4.1).

Paper 001 writes, for ``m`` clients (its ``n``) with local objectives ``f_i``
(``L``-smooth, ``mu``-strongly convex),

    F(x) = (1/m) sum_i f_i(x_i) + lam/(2m) sum_i ||x_i - xbar||^2,   xbar = mean_i x_i,

whose minimizer is the local part of the FedProx minimizer (``montecarlo.experiments.objectives``). Every
iteration of APGD1 and APGD2 costs one communication round (the clients upload, the server
averages and broadcasts ``ybar``).

Paper 001's Algorithms 2-3 are in its appendix, absent from the extracted text; they are
re-derived here from Sec. 4.1: accelerated proximal gradient with constant momentum
``(sqrt(kappa) - 1) / (sqrt(kappa) + 1)`` (Nesterov 2018, Sec. 2.2; Beck 2017) applied to two
splittings ``h + phi`` of ``m F``:

* APGD2: ``h = sum f_i`` (``L``-smooth, ``mu``-strongly convex), ``phi = lam psi``. The prox
  step is eq. (5): ``x_i = (L z_i + lam zbar) / (L + lam)`` with ``z = y - grad f(y) / L``;
  ``kappa = L / mu`` does not depend on ``lam``: O(sqrt(L/mu) log 1/eps) rounds.
* APGD1: ``h = lam psi + mu/2 ||x||^2`` (``(lam + mu)``-smooth, ``mu``-strongly convex),
  ``phi = sum f_i - mu/2 ||x||^2``. The prox step reduces to eq. (6),
  ``x_i = prox_{f_i/lam}(ybar)`` (paper 001 Lemma C.3; derivation: the gradient step of ``h`` at
  ``y`` gives ``lam ybar / (lam + mu)`` for every client, and completing the square in
  ``f_i - mu/2||x||^2 + (lam + mu)/2 ||x - lam ybar/(lam + mu)||^2`` leaves
  ``f_i + lam/2 ||x - ybar||^2``); ``kappa = (lam + mu) / mu``: O(sqrt(lam/mu) log 1/eps)
  rounds, better than APGD2 exactly when ``lam < L`` (paper 001 Fig. 2).
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms._core import (ALGORITHM_STREAM, Recorder, client_losses,
                                                     zeros)
from montecarlo.experiments.objectives import prox
from montecarlo.runner.seeding import replicate_rng
from riskcalc._validate import as_array, nonnegative, positive, positive_int


def _constants(losses, L, mu):
    L = losses.smoothness().max(-1) if L is None else np.broadcast_to(
        positive("L", L), losses.batch_shape)
    mu = losses.strong_convexity().min(-1) if mu is None else np.broadcast_to(
        nonnegative("mu", mu), losses.batch_shape)
    if np.any(mu <= 0):
        raise ValueError("mu must be > 0: the mixing-objective algorithms need strongly convex "
                         "f_i (set l2 > 0 or pass mu)")
    return np.asarray(L, float), np.asarray(mu, float)


def _momentum(kappa):
    root = np.sqrt(kappa)
    return ((root - 1.0) / (root + 1.0))[..., None, None]


def _check(lam, iterations, record_every):
    return (float(positive("lam", lam)), positive_int("iterations", iterations, minimum=0),
            positive_int("record_every", record_every))


def apgd1(data, *, lam: float, iterations: int = 100, mu=None, record_every: int = 1):
    """APGD1 (paper 001 Sec. 4.1, Alg. 2): accelerated FedProx-type iteration (eq. 6).

    ``y = x_k + beta (x_k - x_{k-1})``, ``x_{k+1,i} = prox_{f_i/lam}(ybar)``, with
    ``beta = (sqrt(kappa) - 1)/(sqrt(kappa) + 1)``, ``kappa = (lam + mu)/mu``. One communication
    and one local prox call (solved exactly by Newton) per iteration.

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Mixing strength, > 0.
    iterations : int
        Iterations (= communication rounds), >= 0.
    mu : float or None
        Strong convexity of the ``f_i``, > 0; default ``ClientLosses.strong_convexity().min()``.
    record_every : int
        Keep every ``record_every``-th iterate (and the last).

    Returns
    -------
    Trajectory
        Objective ``"fedprox"`` with this ``lam``.
    """
    losses = client_losses(data)
    lam, iterations, every = _check(lam, iterations, record_every)
    _, mu = _constants(losses, 1.0, mu)
    beta = _momentum((lam + mu) / mu)
    rec = Recorder("apgd1", "fedprox", lam, dict(lam=lam, iterations=iterations,
                                                 mu=mu.tolist(), record_every=every))
    x = x_prev = zeros(losses)
    rec.add(x, x.mean(-2), 0, 0.0, 0.0)
    for k in range(1, iterations + 1):
        y = x + beta * (x - x_prev)
        ybar = np.broadcast_to(y.mean(-2, keepdims=True), y.shape)
        x_prev, x = x, prox(losses, ybar, lam, x, tol=1e-12)
        if k % every == 0 or k == iterations:
            rec.add(x, x.mean(-2), k, 0.0, k)
    return rec.build()


def apgd2(data, *, lam: float, iterations: int = 100, L=None, mu=None, record_every: int = 1):
    """APGD2 (paper 001 Sec. 4.1, Alg. 3): accelerated version of the gradient-mixing step (5).

    ``y = x_k + beta (x_k - x_{k-1})``, ``z_i = y_i - grad f_i(y_i) / L``,
    ``x_{k+1,i} = (L z_i + lam zbar) / (L + lam)``, with
    ``beta = (sqrt(L/mu) - 1)/(sqrt(L/mu) + 1)``. One communication and one local gradient per
    iteration.

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Mixing strength, > 0.
    iterations : int
        Iterations (= communication rounds), >= 0.
    L, mu : float or None
        Smoothness and strong convexity of the ``f_i``; default from ``ClientLosses``.
    record_every : int
        Keep every ``record_every``-th iterate (and the last).

    Returns
    -------
    Trajectory
        Objective ``"fedprox"`` with this ``lam``.
    """
    losses = client_losses(data)
    lam, iterations, every = _check(lam, iterations, record_every)
    L, mu = _constants(losses, L, mu)
    if np.any(mu > L):
        # Was: run with a negative momentum and the step 1/L, diverging silently to 1e7 in 3
        # iterations at L = 0.001, mu = 0.01 (fuzz41 sim F9).
        raise ValueError(f"mu must be <= L (strong convexity below smoothness), got mu = "
                         f"{float(np.max(mu)):g}, L = {float(np.min(L)):g}")
    beta = _momentum(L / mu)
    Lx = L[..., None, None]
    rec = Recorder("apgd2", "fedprox", lam, dict(lam=lam, iterations=iterations, L=L.tolist(),
                                                 mu=mu.tolist(), record_every=every))
    x = x_prev = zeros(losses)
    rec.add(x, x.mean(-2), 0, 0.0)
    for k in range(1, iterations + 1):
        y = x + beta * (x - x_prev)
        z = y - losses.grad(y) / Lx
        x_prev, x = x, (Lx * z + lam * z.mean(-2, keepdims=True)) / (Lx + lam)
        if k % every == 0 or k == iterations:
            rec.add(x, x.mean(-2), k, k)
    return rec.build()


def l2gd(data, *, lam: float, iterations: int = 1000, p=None, step=None, L=None,
         record_every: int = 1, seed: int = 0, rep: int = 0):
    """Loopless local gradient descent, L2GD (Hanzely & Richtarik 2020; paper 001 Table 1,
    paper 004 Table 2) on the mixing objective.

    Each iteration flips a coin: with probability ``1 - p`` every client takes a local step
    ``x_i <- x_i - step / (m (1 - p)) grad f_i(x_i)``; with probability ``p`` the server
    averages and every client moves ``x_i <- x_i - step lam / (m p) (x_i - xbar)``. This is SGD
    on ``F`` with the unbiased estimator ``grad f / (1-p)`` or ``lam grad psi / p``. A
    communication round is counted when an averaging step follows a local step (consecutive
    averaging steps reuse the same ``xbar``).

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Mixing strength, > 0.
    iterations : int
        Iterations, >= 0.
    p : float or None
        Averaging probability in (0, 1); default ``lam / (L + lam)`` (Hanzely & Richtarik's
        optimal choice).
    step : float or None
        Step size ``alpha``, > 0; default ``1 / (2 cal_L)`` with
        ``cal_L = max(L / (1 - p), lam / p) / m``.
    L : float or None
        Smoothness of the ``f_i``; default ``ClientLosses.smoothness().max()``.
    record_every : int
    seed, rep : int
        Coin flips from ``replicate_rng(seed, rep, 10)``.

    Returns
    -------
    Trajectory
        Objective ``"fedprox"``. With a constant step the iterates reach a neighbourhood of the
        minimizer whose size shrinks with ``step`` (the estimator's variance at the optimum is
        not zero).
    """
    losses = client_losses(data)
    lam, iterations, every = _check(lam, iterations, record_every)
    L, _ = _constants(losses, L, 1.0)
    Lmax = float(np.max(L))
    p = lam / (Lmax + lam) if p is None else float(as_array("p", p, low=0.0, high=1.0,
                                                             low_open=True, high_open=True))
    m = losses.m
    step = (m / (2.0 * max(Lmax / (1 - p), lam / p)) if step is None
            else float(positive("step", step)))
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("l2gd", "fedprox", lam, dict(lam=lam, iterations=iterations, p=p, step=step,
                                                L=Lmax, record_every=every, seed=seed, rep=rep))
    x = zeros(losses)
    rounds, grads, last_local = 0, 0, True
    rec.add(x, x.mean(-2), 0, 0.0)
    for k in range(1, iterations + 1):
        if rng.random() < p:
            rounds += last_local
            last_local = False
            x = x - step * lam / (m * p) * (x - x.mean(-2, keepdims=True))
        else:
            last_local = True
            grads += 1
            x = x - step / (m * (1 - p)) * losses.grad(x)
        if k % every == 0 or k == iterations:
            rec.add(x, x.mean(-2), rounds, grads)
    return rec.build()
