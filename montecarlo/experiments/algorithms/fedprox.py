"""FedProx: the two-stage version of paper 000 (Alg. 2) and the one-stage bilevel version of
paper 004 (Alg. 1, step sizes of Thm 2 / Cor. 1). Both minimize paper 000 eq. 20 (= paper 004
eq. 1) with ``p_i = 1/m``."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.algorithms._core import (ALGORITHM_STREAM, Recorder, check_batch,
                                                     check_participation, client_losses, local_sgd,
                                                     sample_clients, zeros)
from montecarlo.runner.seeding import replicate_rng
from riskcalc._validate import nonnegative, positive, positive_int

STEP_RULES = ("corollary1", "section6")


def fedprox(data, *, lam: float, rounds: int = 20, local_epochs: int = 5,
            final_epochs: int | None = None, batch_size: int | None = 16, lr: float = 0.2,
            global_lr: float = 0.8, clients_per_round: int | None = None,
            radius: float | None = None, seed: int = 0, rep: int = 0):
    """FedProx, general version (paper 000 Alg. 2): joint training, then final local training.

    Stage I, each round: the sampled clients run SoftLocalSGD from their own model,
    ``w_i <- P_W[w_i - lr (batch grad f_i(w_i) + lam (w_i - w_g))]`` for ``local_epochs``
    epochs; the server moves ``w_g <- w_g - lam * global_lr * mean_{i in C_t}(w_g - w_i)``
    (Alg. 2's ``lam m eta / B sum p_i (...)`` with ``p_i = 1/m``). Stage II: every client runs
    ``final_epochs`` epochs of SoftLocalSGD around the final global model. Defaults: paper 000
    Appendix D (T = 20, global step 0.8, K_t = 5, local step 0.2, batch 16).

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Coupling lambda, >= 0 (Appendix D / Fig. 1 right: 0, 0.44, 4).
    rounds : int
        Stage I rounds T, >= 0.
    local_epochs : int
        SoftLocalSGD epochs per round (K_t), >= 1.
    final_epochs : int or None
        Stage II epochs (K_T), >= 0; None means ``local_epochs``.
    batch_size : int or None
        Mini-batch size in [1, n]; None for full batch.
    lr, global_lr : float
        Local and global step sizes, > 0. SoftLocalSGD is stable for ``lr < 2 / (L + lam)``.
    clients_per_round : int or None
        ``|C_t|`` in [1, m]; None for full participation.
    radius : float or None
        Radius of the ball W onto which P_W projects; None for no projection.
    seed, rep : int
        Randomness from ``replicate_rng(seed, rep, 10)``.

    Returns
    -------
    Trajectory
        Objective ``"fedprox"``; checkpoints: initialization, each round, then Stage II.

    Notes
    -----
    ERRATA (paper 000 Alg. 2, as extracted): "if i in C_t then w_{t+1} <- w_t else
    SoftLocalSGD" has the branches swapped: the sampled clients train, the others keep their
    model (as in Alg. 1). Appendix D calls K_t = 5 "local rounds" next to FedAvg's "5 epochs";
    K_t is read here as epochs, so that FedProx and FedAvg do equal local work.
    At ``lam = 0`` the server never moves and Stage I + II is PureLocalTraining for
    ``T K + K_T`` epochs; as ``lam`` grows the local models are pulled onto the global one.
    """
    losses = client_losses(data)
    lam = float(nonnegative("lam", lam))
    rounds = positive_int("rounds", rounds, minimum=0)
    local_epochs = positive_int("local_epochs", local_epochs)
    final_epochs = local_epochs if final_epochs is None else positive_int(
        "final_epochs", final_epochs, minimum=0)
    B = check_batch(batch_size, losses.n)
    lr, global_lr = float(positive("lr", lr)), float(positive("global_lr", global_lr))
    count = check_participation(clients_per_round, losses.m)
    radius = None if radius is None else float(positive("radius", radius))
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("fedprox", "fedprox", lam, dict(
        lam=lam, rounds=rounds, local_epochs=local_epochs, final_epochs=final_epochs,
        batch_size=B, lr=lr, global_lr=global_lr, clients_per_round=count, radius=radius,
        seed=seed, rep=rep))
    W = zeros(losses)
    wg, grads = W.mean(-2), 0.0
    rec.add(W, wg, 0, 0.0)
    for t in range(rounds):
        active = sample_clients(rng, losses.m, count)
        W, steps = local_sgd(losses, W, rng, epochs=local_epochs, batch_size=B, lr=lr, lam=lam,
                             center=wg, active=active, radius=radius)
        wg = wg - lam * global_lr * (wg - W[..., active, :].mean(-2))
        grads += steps * count / losses.m
        rec.add(W, wg, t + 1, grads)
    W, steps = local_sgd(losses, W, rng, epochs=final_epochs, batch_size=B, lr=lr, lam=lam,
                         center=wg, radius=radius)
    rec.add(W, wg, rounds, grads + steps)
    return rec.build()


def bilevel_constants(losses, lam, *, L=None, mu=None):
    """Smoothness and strong-convexity constants of paper 004 Lemma 2 for the bilevel form.

    Returns a dict of arrays over the instance grid (shape ``losses.batch_shape``): ``L``,
    ``mu`` (of the clients' ``f_i``: max / min over clients unless given), ``L_g = lam L /
    (lam + L)``, ``mu_g = lam mu / (lam + mu)`` (the Moreau envelopes ``F_i``), ``L_l = L +
    lam``, ``mu_l = mu + lam`` (the inner problems ``h_i``), ``L_w = lam / (lam + mu)`` (the
    prox map).
    """
    L = losses.smoothness().max(-1) if L is None else np.broadcast_to(
        positive("L", L), losses.batch_shape)
    mu = losses.strong_convexity().min(-1) if mu is None else np.broadcast_to(
        nonnegative("mu", mu), losses.batch_shape)
    return dict(L=L, mu=mu, L_g=lam * L / (lam + L), mu_g=lam * mu / (lam + mu), L_l=L + lam,
                mu_l=mu + lam, L_w=lam / (lam + mu))


def theorem2_inner_steps(c, lam, lr, global_lr):
    """Smallest K satisfying paper 004 Thm 2 eq. (12):
    ``(2 + 64 L_w^2 lam^2 / mu_g^2) (1 - lr mu_l)^K <= (1 - global_lr L_g)^4``, maximized over
    the instance grid. Since ``L_w lam / mu_g = lam / mu`` the factor is ``2 + 64 (lam/mu)^2``.
    """
    if np.any(c["mu"] <= 0):
        raise ValueError("inner_steps must be given when mu = 0 (paper 004 Thm 2 needs strong "
                         "convexity; set l2 > 0)")
    gap = 1.0 - global_lr * c["L_g"]
    if np.any(gap <= 0):
        raise ValueError("inner_steps must be given when global_lr >= 1/L_g: paper 004 eq. (12) "
                         "has no finite solution there (see ERRATA in fedprox_bilevel)")
    step = lr * c["mu_l"]
    if np.any(step > 1):    # was: int(nan), "cannot convert float NaN to integer"
        raise ValueError("inner_steps must be given when lr > 1/mu_l = 1/(mu + lam): paper 004 "
                         "eq. (12) takes lr <= 1/L_l = 1/(L + lam)")
    # In logs: (lam/mu)^2 overflowed past lam/mu ~ 1e154 (l2 = 1e-300 gave K = inf,
    # "cannot convert float infinity to integer"; fuzz42 sim F10).
    need = 4.0 * np.log(gap) - np.logaddexp(np.log(2.0),
                                            np.log(64.0) + 2.0 * np.log(lam / c["mu"]))
    # At lr mu_l = 1 (mu = L, or lam past ~1e16 L) one step solves the inner problem: K = 1
    # (was: log1p(-1) = -inf gave K = 0 steps and a FedProx that never moved; fuzz41 sim F3).
    with np.errstate(divide="ignore"):
        return max(1, int(np.max(np.ceil(need / np.log1p(-step)))))


def fedprox_bilevel(data, *, lam: float, rounds: int = 100, inner_steps: int | None = None,
                    step_rule: str = "corollary1", lr=None, global_lr=None, L=None, mu=None,
                    clients_per_round: int | None = None, seed: int = 0, rep: int = 0):
    """One-stage bilevel FedProx (paper 004 Alg. 1, App. B.1), full local gradients.

    Round t: every client warm-starts from its last local model and takes ``K`` gradient steps
    on ``h_i(w) = f_i(w) + lam/2 ||w - w_g||^2`` with step ``lr``; it uploads
    ``lam (w_g - w_i)``, an estimate of the Moreau-envelope gradient (paper 004 Lemma 3); the
    server steps ``w_g <- w_g - global_lr * mean_i lam (w_g - w_i)`` (eq. 10).

    With ``clients_per_round`` (paper 004 App. C, Fig. 5: 10% client sampling) the server
    samples that many clients uniformly without replacement each round; only they train and
    upload, the mean runs over them, and the others keep their last local model (Alg. 1 has
    every client participate; the sampled variant is the one Fig. 5 describes).

    Parameters
    ----------
    data : Instance or ClientLosses
    lam : float
        Coupling, > 0.
    rounds : int
        Communication rounds T, >= 0.
    inner_steps : int or None
        K; None takes the smallest K allowed by Thm 2 eq. (12) (needs ``mu > 0``).
    step_rule : {"corollary1", "section6"}
        Defaults for the step sizes: Cor. 1's ``lr = 1/(L + lam)``, ``global_lr = 1/(2 L_g)``,
        or Sec. 6.1 / App. C's ``lr = 1/(L + lam)``, ``global_lr = 1/L_g``.
    lr, global_lr : float or None
        Explicit step sizes (override ``step_rule``), > 0.
    L, mu : float or None
        Smoothness / strong convexity of the ``f_i``; default
        ``ClientLosses.smoothness().max()`` and ``strong_convexity().min()`` per grid point.
    clients_per_round : int or None
        Clients sampled per round, in [1, m]; None for full participation (Alg. 1).
    seed, rep : int
        Client sampling from ``replicate_rng(seed, rep, 10)`` (unused under full
        participation, which is deterministic).

    Returns
    -------
    Trajectory
        Objective ``"fedprox"``; checkpoint t holds ``w_{t+1}^(g)`` and ``w_{t,K}^(i)``;
        ``grad_evals`` counts ``K`` per round per participating client, averaged over clients.

    Notes
    -----
    ERRATA (paper 004): (i) Sec. 6.1 and App. C run the synthetic experiment with
    ``gamma = (lam + L) / (lam L) = 1 / L_g``, the boundary that Thm 2 excludes
    (``gamma < 1/L_g``): there ``1 - gamma L_g = 0`` and eq. (12) holds for no finite K; Cor. 1's
    ``1/(2 L_g)`` is the default here. (ii) App. C takes ``L = Lambda_max(X'X)/4`` with ``X`` the
    client's design; for the averaged empirical risk ``L_i`` of eq. 2 the bound is
    ``Lambda_max(X'X / n)/4``, which ``ClientLosses.smoothness`` uses.
    """
    losses = client_losses(data)
    lam = float(positive("lam", lam))
    rounds = positive_int("rounds", rounds, minimum=0)
    if step_rule not in STEP_RULES:
        raise ValueError(f"step_rule must be one of {STEP_RULES}, got {step_rule!r}")
    c = bilevel_constants(losses, lam, L=L, mu=mu)
    u = np.finfo(float).eps / 2
    if lam * u > np.min(c["L"]):
        # The upload lam (w_g - w_i) carries the models' rounding u ||w|| times lam, past the
        # envelope gradient's scale L_g ||w|| <= L ||w||: the runs stalled from lam ~ 1e16 and
        # grew to 1e34 at lam 1e50, "diverged" at 1e100 (fuzz41 sim2 F6).
        raise ValueError(f"lam = {lam:g} rounds bilevel FedProx's upload lam (w_g - w_i) "
                         f"(lam u ||w||, u = {u:.3g}) past its envelope gradient (at most "
                         f"L ||w||): lam must be at most L/u = {np.min(c['L']) / u:.3g}")
    lr = 1.0 / c["L_l"] if lr is None else np.broadcast_to(positive("lr", lr),
                                                            losses.batch_shape)
    if global_lr is None:
        factor = 0.5 if step_rule == "corollary1" else 1.0
        with np.errstate(divide="ignore", over="ignore"):
            global_lr = factor / c["L_g"]
        if not np.all(np.isfinite(global_lr)):
            # Was: inf times lam, NaN iterates reported as "diverged" at lam = 5e-324 (fuzz41
            # sim2 F5). L_g is about lam for lam << L.
            raise ValueError(f"lam = {lam:g} makes the default global_lr = {factor:g}/L_g (L_g "
                             "= lam L / (lam + L), paper 004 Lemma 2) overflow: lam must be at "
                             f"least about {factor / np.finfo(float).max:.3g}, or give global_lr")
    else:
        global_lr = np.broadcast_to(positive("global_lr", global_lr), losses.batch_shape)
    K = (theorem2_inner_steps(c, lam, lr, global_lr) if inner_steps is None
         else positive_int("inner_steps", inner_steps))
    count = check_participation(clients_per_round, losses.m)
    rng = replicate_rng(seed, rep, ALGORITHM_STREAM)
    rec = Recorder("fedprox_bilevel", "fedprox", lam, dict(
        lam=lam, rounds=rounds, inner_steps=K, step_rule=step_rule,
        lr=np.asarray(lr).tolist(), global_lr=np.asarray(global_lr).tolist(),
        clients_per_round=count, seed=seed, rep=rep))
    eta, gamma = np.asarray(lr)[..., None, None], np.asarray(global_lr)[..., None]
    W = zeros(losses)
    wg = W.mean(-2)
    rec.add(W, wg, 0, 0.0)
    for t in range(rounds):
        # Gradients only on the sampled clients: with 10% sampling of 1,000 clients, computing
        # all of them and masking would cost ten times the work.
        idx = np.flatnonzero(sample_clients(rng, losses.m, count))
        X, y, Wa = losses.X[..., idx, :, :], losses.y[..., idx, :], W[..., idx, :]
        for _ in range(K):
            Wa = Wa - eta * (losses.grad(Wa, X, y) + lam * (Wa - wg[..., None, :]))
        W[..., idx, :] = Wa
        wg = wg - gamma * lam * (wg - Wa.mean(-2))
        rec.add(W, wg, t + 1, K * (t + 1) * count / losses.m)
    return rec.build()

