"""Simulation experiments behind the minimax-rate checks (issue 5, part 4).

Each function returns a grid of simulated errors or round counts together with the bound it is
checked against (``riskcalc.minimax``); the fitting (exponents with confidence intervals,
``[c, C]`` bands) is ``riskcalc.minimax.ratecheck``'s. Two kinds of claim, two kinds of simulation:

* statistical claims (paper 000 Thm 8 and Thms 4, 6, 11, 12; paper 004 Thm 1) use the *exact*
  minimizers of ``montecarlo.objectives`` (global objective for FedAvg, local objectives for
  PureLocalTraining, FedProx objective at the prescribed lambda), so no optimization error
  enters the measured rate; fine-tuning is the one iterative method there, because its claim
  (paper 000 Sec. 3.3) is about its trajectory;
* round-count claims (paper 004 Cor. 1; paper 001 Thm 3.1 and Sec. 4.1) run the iterative
  algorithms of ``montecarlo.algorithms`` and count communication rounds to a relative accuracy
  with ``montecarlo.metrics.rounds_to_accuracy``.

Instances (``lemma7_instance``) follow paper 000 Lemma 7: i.i.d. features bounded by ``c_X``
(Rademacher times ``c_X``), logistic labels, true models in a ball. The true models are fixed
by ``seed`` (drawn from ``replicate_rng(seed, 0, 0)``); replicate ``rep`` redraws only the data,
so replicate averages estimate ``E_S ||w_hat^(i) - w_*^(i)||^2`` at one fixed instance, the
quantity the bounds are about. Random streams: ``replicate_rng(seed, rep, 1, cell)`` features,
``replicate_rng(seed, rep, 2, cell)`` label uniforms, with ``cell`` the index of the sample-size
grid point; points of a heterogeneity grid share them (common random numbers).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import expit

from montecarlo.algorithms import ALGORITHMS, Trajectory
from montecarlo.logistic import Instance, quadratic_instance
from montecarlo.metrics import evaluate, rounds_to_accuracy
from montecarlo.objectives import ClientLosses, minimize
from montecarlo.seeding import check_seed, replicate_rng
from riskcalc._validate import as_array, nonnegative, positive, positive_int
from riskcalc.minimax import (communication_lower_bound, dichotomy_threshold, fedprox_complexity,
                              fedprox_lambda, fedprox_proof_lambda, logistic_constants,
                              lower_bound_ier)

# Enumerating the 2^d feature vectors gives population expectations exactly; beyond this the
# enumeration would cost more than the simulation it serves.
MAX_ENUMERATED_DIM = 12


def sign_vectors(d: int, c_x: float = 1.0) -> np.ndarray:
    """All ``2^d`` feature vectors of the Rademacher design, scaled by ``c_x``: shape (2^d, d).

    Each has probability ``2^-d``, so an average over them is the exact population expectation
    over features (used for the Fisher information and the excess risks).
    """
    d = positive_int("d", d)
    if d > MAX_ENUMERATED_DIM:
        raise ValueError(f"d must be <= {MAX_ENUMERATED_DIM} to enumerate the 2^d sign vectors, "
                         f"got {d}")
    return c_x * np.array(list(itertools.product((-1.0, 1.0), repeat=d)))


def true_models(R, *, m: int, d: int, seed: int = 0) -> np.ndarray:
    """True local models ``w_*^(i) = +-R v_k`` (antipodal pairs), shape ``(len(R), m, d)``.

    ``v_1, ..., v_{m/2}`` are uniform random unit vectors from ``replicate_rng(seed, 0, 0)``;
    client ``2k`` gets ``R v_k`` and client ``2k+1`` gets ``-R v_k``. The average model is then
    exactly 0 and ``||w_*^(i) - w_*^(g)|| = R`` for every client, so Assumptions B(a) and B(b)
    of paper 000 (and Assumption 1 of paper 004) hold with equality, and every model lies in the
    ball of radius ``R`` around the origin, the centre of Thm 8's packing construction. By the
    symmetry ``sigmoid(-t) = 1 - sigmoid(t)`` of the logistic model and of the Rademacher design,
    the population minimizer of the global objective is exactly 0, so FedAvg's population bias
    is exactly ``R^2`` for every client.
    """
    R = as_array("R", np.atleast_1d(R), low=0.0)
    m, d = positive_int("m", m, minimum=2), positive_int("d", d)
    if m % 2:
        raise ValueError(f"m must be even (antipodal pairs of clients), got {m}")
    v = replicate_rng(check_seed(seed), 0, 0).standard_normal((m // 2, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    directions = np.stack([v, -v], axis=1).reshape(m, d)
    return R[:, None, None] * directions


def lemma7_instance(R, *, reps: int, m: int = 4, n: int = 200, d: int = 5, c_x: float = 1.0,
                    l2: float = 1e-4, seed: int = 0, cell: int = 0) -> Instance:
    """Logistic instances of paper 000 Lemma 7, ``reps`` data replicates over an ``R`` grid.

    Features have i.i.d. coordinates ``c_X * Rademacher`` (centred, bounded by ``c_X``, as
    Lemma 7 asks); labels are Bernoulli with ``P(y = 1 | x) = sigmoid(x'w_*^(i))``; the true
    models are :func:`true_models`. The test features are all ``2^d`` sign vectors, so
    ``montecarlo.metrics.evaluate`` returns the exact individualized excess risk (paper 000
    Def. 1) with no test-sampling noise.

    Parameters
    ----------
    R : float or 1-d array
        Heterogeneity radii, >= 0.
    reps : int
        Data replicates (leading batch dimension).
    m, n, d : int
        Clients (even), samples per client, dimension (``d <= 12``).
    c_x : float
        Feature bound ``c_X``.
    l2 : float
        Ridge of the empirical risks, > 0: keeps the exact minimizers finite when a client's data
        happen to be separable (the constrained ERM over the domain of Lemma 7 plays this role
        in the paper). Its bias ``~ (l2 ||w|| / mu)^2`` must stay far below the errors measured.
    seed : int
        Experiment seed: fixes the true models; replicate ``r`` draws its data from
        ``replicate_rng(seed, r, 1 or 2, cell)``.
    cell : int
        Index of the sample-size grid point (separates the data streams of different ``n``).

    Returns
    -------
    Instance
        ``train`` with features ``(reps, 1, m, n, d)`` and labels ``(reps, len(R), m, n)``
        (batch shape ``(reps, len(R))``), ``w_star`` ``(len(R), m, d)``, ``test_X``
        ``(m, 2^d, d)``.
    """
    reps, n = positive_int("reps", reps), positive_int("n", n)
    c_x = float(positive("c_x", c_x))
    w_star = true_models(R, m=m, d=d, seed=seed)
    X = np.stack([c_x * (2.0 * replicate_rng(seed, r, 1, cell).integers(0, 2, (m, n, d)) - 1.0)
                  for r in range(reps)])[:, None]
    U = np.stack([replicate_rng(seed, r, 2, cell).random((m, n)) for r in range(reps)])[:, None]
    z = np.einsum("rjmnd,kmd->rkmn", X, w_star)
    y = np.where(U < expit(z), 1.0, -1.0)
    test_X = np.broadcast_to(sign_vectors(d, c_x), (m, 2 ** d, d))
    params = dict(R=np.atleast_1d(R).tolist(), reps=reps, m=m, n=n, d=d, c_x=c_x,
                  l2=float(l2), seed=seed, cell=cell)
    return Instance(ClientLosses(X, y, loss="logistic", l2=l2), w_star, test_X, "bernoulli",
                    params)


def fisher_information(w_star, c_x: float = 1.0) -> np.ndarray:
    """Population Hessian ``H_i = E[s'(x'w_*^(i)) x x']`` of client ``i``'s logistic risk at its
    true model (exact, by enumerating the Rademacher design), shape ``(..., m, d, d)``.

    For the well-specified logistic model this is the Fisher information, so the local MLE has
    ``n E||w_hat^(i) - w_*^(i)||^2 -> tr(H_i^-1)`` and ``E||grad l(w_*^(i), z)||^2 = tr(H_i)``
    (paper 004 Assumption 4's ``rho^2``).
    """
    w_star = np.asarray(w_star, float)
    x = sign_vectors(w_star.shape[-1], c_x)
    z = np.einsum("td,...d->...t", x, w_star)
    curvature = expit(z) * expit(-z)
    return np.einsum("...t,td,te->...de", curvature, x, x) / len(x)


def _exact_metrics(instance, W):
    """``montecarlo.metrics.evaluate`` of the models ``W`` (shape (..., m, d)), one checkpoint."""
    traj = Trajectory("exact", "local", 0.0, W[None], W.mean(-2)[None], np.zeros(1, int),
                      np.zeros(1), np.zeros(1))
    return {k: v[0] for k, v in evaluate(traj, instance, checkpoints=[0]).items()}


def _exact_errors(instance, W):
    """Statistical error and IER of models ``W`` (shape (..., m, d)), averaged over clients."""
    met = _exact_metrics(instance, W)
    return met["local_stat_err_mean"], met["aer"]


def homogeneous_grid(ns, ms, *, d: int = 5, reps: int = 20, c_x: float = 1.0,
                     l2: float = 1e-4, seed: int = 0) -> dict:
    """FedAvg and PureLocalTraining errors at ``R = 0`` over a full ``n x m`` grid.

    The claims (paper 000 Thm 8 eq. 15 at ``R = 0`` with Thm 6 eq. 11 and Thm 4): FedAvg's
    ``E||w_hat - w_*||^2 ~ d/N`` with ``N = m n`` (exponents -1 in ``n`` and -1 in ``m``), local
    training's ``~ d/n_i`` (exponent -1 in ``n``, 0 in ``m``). Estimators are the exact
    minimizers of the global and local objectives (``objectives.minimize``).

    Parameters
    ----------
    ns, ms : sequence of int
        Samples per client and numbers of clients (even); every pair is simulated.
    d, reps, c_x, l2, seed
        As in :func:`lemma7_instance`.

    Returns
    -------
    dict
        ``n``, ``m``, ``N`` (cells,); ``fedavg_err``, ``local_err``, ``fedavg_ier``,
        ``local_ier`` (cells, reps): per-replicate client averages of ``||w_hat - w_*||^2`` and
        of the exact IER; ``fisher_trace_inv`` ``tr(H^-1)`` at ``w = 0`` (``4 d / c_x^2``).
    """
    out = {k: [] for k in ("n", "m", "fedavg_err", "local_err", "fedavg_ier", "local_ier")}
    for cell, (n, m) in enumerate(itertools.product(ns, ms)):
        inst = lemma7_instance(0.0, reps=reps, m=m, n=n, d=d, c_x=c_x, l2=l2, seed=seed,
                               cell=cell)
        _, W_glob = minimize(inst.train, "global")
        _, W_loc = minimize(inst.train, "local")
        for name, W in (("fedavg", W_glob), ("local", W_loc)):
            err, ier = _exact_errors(inst, W)
            out[f"{name}_err"].append(err[:, 0])
            out[f"{name}_ier"].append(ier[:, 0])
        out["n"].append(n)
        out["m"].append(m)
    res = {k: np.array(v, float) for k, v in out.items()}
    res["N"] = res["n"] * res["m"]
    res["fisher_trace_inv"] = float(np.trace(np.linalg.inv(fisher_information(np.zeros(d),
                                                                                c_x))))
    return res


def fedprox_theorem1_constants(w_star, d: int, c_x: float = 1.0) -> dict:
    """``L, mu, rho`` at which paper 004 Thm 1's lambda (:func:`fedprox_lambda`) is evaluated.

    ``L = c_X^2 d / 4``: the per-sample smoothness of paper 004 Assumption 2 (``beta`` of paper
    000 Lemma 7, ``logistic_constants``); ``rho^2 = max_i tr(H_i)``: the exact
    ``E||grad l(w_*^(i), z)||^2`` of Assumption 4; ``mu = min_i lambda_min(H_i)``: the population
    curvature at the truth. Assumption 3 asks for *per-sample* ``mu``-strong convexity, which
    the logistic loss never has (each sample's Hessian has rank one); the population curvature
    is the substitute paper 000 Lemma 7 uses, and the one that sets the errors.

    Parameters
    ----------
    w_star : array_like, shape (m, d)
        True models of one grid point.
    d : int
    c_x : float

    Returns
    -------
    dict
        ``L``, ``mu``, ``rho``.
    """
    H = fisher_information(w_star, c_x)
    return {"L": float(logistic_constants(c_x, 1.0, d)["beta"]),
            "mu": float(np.linalg.eigvalsh(H)[..., 0].min()),
            "rho": float(np.sqrt(np.trace(H, axis1=-2, axis2=-1).max()))}


def heterogeneity_grid(ns, r2_over_d_n, *, m: int = 4, d: int = 5, reps: int = 20,
                       c_x: float = 1.0, l2: float = 1e-4, finetune_epochs: int = 40,
                       seed: int = 0) -> dict:
    """FedAvg, PureLocalTraining, FedProx (paper 004 Thm 1 lambda) and fine-tuning over
    ``(n, R)``, checked against paper 000 Thm 8 eq. (15), ``min(d/n_i, R^2) + d/N``.

    For each ``n`` the radii are ``R^2 = f d / n`` for ``f`` in ``r2_over_d_n``, so every
    ``n`` sees the same position relative to Thm 8's kink ``R^2 = d/n_i``.

    * FedAvg, local: exact minimizers of the global / local objectives;
    * FedProx: exact minimizer of paper 000 eq. (20) = paper 004 eq. (1) at
      ``lam = fedprox_lambda(L, mu, rho, R, n, m)`` (the smallest admissible lambda when
      ``R <= 1/sqrt(n)``, the largest otherwise), ``L, mu, rho`` from
      :func:`fedprox_theorem1_constants`;
    * fine-tuning (paper 000 Sec. 3.3): ``ALGORITHMS["finetune"]`` with full-batch gradient
      steps (FedAvg run to convergence, then ``finetune_epochs`` local steps); its claim is that
      *some* point of the fine-tuning trajectory is minimax optimal, so the checkpoint with the
      smallest replicate-mean error at each grid point is reported (the oracle stopping time
      the claim refers to, chosen per grid point, never per replicate).

    Parameters
    ----------
    ns : sequence of int
        Samples per client.
    r2_over_d_n : sequence of float
        ``R^2 / (d/n)``, > 0.
    m, d, reps, c_x, l2, seed
        As in :func:`lemma7_instance`.
    finetune_epochs : int
        Local gradient steps after FedAvg.

    Returns
    -------
    dict
        ``n`` (len(ns),), ``R`` (len(ns), len(f)); ``lam`` FedProx's lambda; errors
        ``{method}_err`` and ``{method}_ier`` of shape (len(ns), len(f), reps) for
        ``fedavg``, ``local``, ``fedprox``, and ``finetune_err`` (len(ns), len(f)) (replicate mean
        at the best checkpoint); ``lower_bound`` Thm 8's ``min(d/n, R^2) + d/N``;
        ``fisher_trace_inv`` ``tr(H_i^-1)`` averaged over clients (len(ns), len(f)).
    """
    f = as_array("r2_over_d_n", r2_over_d_n, low=0.0, low_open=True)
    finetune_epochs = positive_int("finetune_epochs", finetune_epochs)
    keys = ("fedavg_err", "fedavg_ier", "local_err", "local_ier", "fedprox_err", "fedprox_ier",
            "finetune_err", "lam", "R", "lower_bound", "fisher_trace_inv")
    out = {k: [] for k in keys}
    for cell, n in enumerate(ns):
        R = np.sqrt(f * d / n)
        inst = lemma7_instance(R, reps=reps, m=m, n=n, d=d, c_x=c_x, l2=l2, seed=seed,
                               cell=cell)
        for name, objective in (("fedavg", "global"), ("local", "local")):
            err, ier = _exact_errors(inst, minimize(inst.train, objective)[1])
            out[f"{name}_err"].append(err.T)
            out[f"{name}_ier"].append(ier.T)
        lams, prox_err, prox_ier = [], [], []
        for j, r in enumerate(R):
            c = fedprox_theorem1_constants(inst.w_star[j], d, c_x)
            lam = float(fedprox_lambda(c["L"], c["mu"], c["rho"], r, n, m).lam)
            point = Instance(ClientLosses(inst.train.X[:, 0], inst.train.y[:, j], l2=l2),
                             inst.w_star[j], inst.test_X, inst.labels)
            err, ier = _exact_errors(point, minimize(point.train, "fedprox", lam)[1])
            lams.append(lam)
            prox_err.append(err)
            prox_ier.append(ier)
        out["lam"].append(lams)
        out["fedprox_err"].append(prox_err)
        out["fedprox_ier"].append(prox_ier)
        out["finetune_err"].append(_finetune_best(inst, finetune_epochs))
        out["R"].append(R)
        out["lower_bound"].append(lower_bound_ier(d, n, m * n, R))
        H = fisher_information(inst.w_star, c_x)
        out["fisher_trace_inv"].append(np.trace(np.linalg.inv(H), axis1=-2, axis2=-1).mean(-1))
    res = {k: np.array(v, float) for k, v in out.items()}
    res["n"] = np.array(ns, float)
    res["m"], res["d"] = m, d
    return res


def _finetune_best(inst, epochs):
    losses = inst.train
    # Full-batch steps of 1/L_hat: FedAvg is then gradient descent on the global objective and
    # fine-tuning gradient descent on the local one. The curvature at the truth is >= 0.2 and
    # L_hat = lambda_max(X'X/n)/4 < 0.5 for n >= 20 d, so each round contracts the distance to
    # the global minimizer by at least 0.6 and 80 rounds reach it to rounding error.
    step = 1.0 / float(losses.smoothness().max())
    traj = ALGORITHMS["finetune"](inst, rounds=80, local_epochs=1, batch_size=None, lr=step,
                                  global_lr=1.0, finetune_epochs=epochs, finetune_lr=step)
    tail = len(traj.rounds) - epochs - 1
    err = evaluate(traj, inst, checkpoints=np.arange(tail, len(traj.rounds)))
    mean = err["local_stat_err_mean"].mean(1)                     # (K, len(R))
    return mean.min(0)


def paper000_fedprox_grid(ns, ms, r2_times_n, *, theorems=(11, 12), d: int = 5,
                          reps: int = 20, c_x: float = 1.0, l2: float = 1e-4,
                          seed: int = 0) -> dict:
    """FedAvg, PureLocalTraining and FedProx at the penalties of paper 000's proofs over
    ``(n, m, R)``: the simulations behind Thms 6 (eq. 11), 11 (eq. 30) and 12 (eq. 29).

    For each ``(n, m)`` the radii are ``R^2 = f / n`` for ``f`` in ``r2_times_n``, so every
    cell sees the same position relative to the thresholds of the proofs' events (``f = 1`` and
    ``f = 1/m^2`` for Thm 11, ``f = 1`` for Thm 12). FedAvg and local are the exact minimizers
    of the global and local objectives, FedProx the exact minimizer of eq. (20) at
    ``riskcalc.minimax.fedprox_proof_lambda`` (so no optimization error enters: the theorems choose the
    rounds of Alg. 2 to make it negligible), with ``mu`` the smallest eigenvalue of the
    population Hessians at the truth (:func:`fedprox_theorem1_constants`), the curvature that
    sets the errors.

    Parameters
    ----------
    ns, ms : sequence of int
        Samples per client, numbers of clients (even); every pair is simulated.
    r2_times_n : sequence of float
        ``R^2 n``, > 0.
    theorems : sequence of {11, 12}
        Whose FedProx penalties to simulate (each costs one exact FedProx solve per radius).
    d, reps, c_x, l2, seed
        As in :func:`lemma7_instance`; cell ``k`` of the ``(n, m)`` product uses data stream
        ``cell = k``.

    Returns
    -------
    dict
        ``n``, ``m`` (cells,); ``R``, ``mu`` (cells, len(f)); for ``method`` in ``fedavg``,
        ``local`` and ``fedprox_thm{t}`` (``t`` in ``theorems``, with its ``lam_thm{t}``):
        ``{method}_aer`` (client average of the exact IER, i.e. ``AER_p`` with ``p_i = 1/m``),
        shape (cells, len(f), reps), and ``{method}_ier_worst`` (cells, len(f)), the largest
        over clients of the replicate-mean IER (``max_i E_S[IER_i]``, what "for every i"
        bounds; the mean of the per-replicate maximum would add an extreme-value bias growing
        with ``m``).
    """
    f = as_array("r2_times_n", r2_times_n, low=0.0, low_open=True)
    if not set(theorems) <= {11, 12}:
        raise ValueError(f"theorems must be a subset of (11, 12), got {theorems!r}")
    methods = ("fedavg", "local") + tuple(f"fedprox_thm{t}" for t in theorems)
    out = {k: [] for k in ("n", "m", "R", "mu") + tuple(f"lam_thm{t}" for t in theorems)
           + tuple(f"{k}_{q}" for k in methods for q in ("aer", "ier_worst"))}
    for cell, (n, m) in enumerate(itertools.product(ns, ms)):
        R = np.sqrt(f / n)
        inst = lemma7_instance(R, reps=reps, m=m, n=n, d=d, c_x=c_x, l2=l2, seed=seed,
                               cell=cell)
        for name, objective in (("fedavg", "global"), ("local", "local")):
            met = _exact_metrics(inst, minimize(inst.train, objective)[1])
            out[f"{name}_aer"].append(met["aer"].T)
            out[f"{name}_ier_worst"].append(met["ier"].mean(0).max(-1))
        mus = [fedprox_theorem1_constants(inst.w_star[j], d, c_x)["mu"] for j in range(len(R))]
        for thm in theorems:
            lams, aer, ier = [], [], []
            for j, r in enumerate(R):
                lam = float(fedprox_proof_lambda(r, n, m, mus[j], theorem=thm))
                point = Instance(ClientLosses(inst.train.X[:, 0], inst.train.y[:, j], l2=l2),
                                 inst.w_star[j], inst.test_X, inst.labels)
                met = _exact_metrics(point, minimize(point.train, "fedprox", lam)[1])
                lams.append(lam)
                aer.append(met["aer"])
                ier.append(met["ier"].mean(0).max(-1))
            out[f"lam_thm{thm}"].append(lams)
            out[f"fedprox_thm{thm}_aer"].append(aer)
            out[f"fedprox_thm{thm}_ier_worst"].append(ier)
        out["n"].append(n)
        out["m"].append(m)
        out["R"].append(R)
        out["mu"].append(mus)
    return {k: np.array(v, float) for k, v in out.items()}


def crossover(r2, fedavg_err, local_err) -> float:
    """``R^2`` at which FedAvg's mean error first exceeds local training's, interpolated
    linearly in ``log R^2`` on ``log(fedavg / local)``.

    Parameters
    ----------
    r2 : array_like, shape (k,)
        Increasing ``R^2`` grid.
    fedavg_err, local_err : array_like, shape (k,)
        Mean errors on that grid.

    Returns
    -------
    float
        ``nan`` when the curves do not cross on the grid.
    """
    r2 = positive("r2", r2)
    gap = np.log(positive("fedavg_err", fedavg_err)) - np.log(positive("local_err", local_err))
    above = np.flatnonzero(gap > 0)
    if above.size == 0 or above[0] == 0:
        return float("nan")
    i = above[0]
    x0, x1 = np.log(r2[i - 1]), np.log(r2[i])
    return float(np.exp(x0 + (x1 - x0) * (-gap[i - 1]) / (gap[i] - gap[i - 1])))


def crossover_table(grid: dict, *, c_x: float = 1.0, D: float | None = None) -> dict:
    """Measured FedAvg/local crossovers of a :func:`heterogeneity_grid` against the thresholds.

    Per ``n``: the measured crossover ``R^2_x`` (:func:`crossover` on replicate means); Thm 8's
    kink ``d/n_i`` (where ``min(d/n_i, R^2)`` switches); the asymptotic prediction
    ``(1 - 1/m) tr(H^-1)/n`` (equal FedAvg bias ``R^2`` and variance ``tr(H^-1)/N`` to the local
    variance ``tr(H^-1)/n``, with ``tr(H^-1)`` the Fisher trace at the grid point nearest the
    crossover); and ``dichotomy_threshold(N, m, ||l||_inf, mu_0)`` (paper 000 Sec. 3.3) with
    Lemma 7's constants for the domain diameter ``D`` (default: ``2 max R`` of the grid).

    Returns
    -------
    dict of ndarray, shape (len(n),)
        ``measured``, ``kink``, ``asymptotic``, ``dichotomy``.
    """
    n, m, d = grid["n"], grid["m"], grid["d"]
    D = 2.0 * float(grid["R"].max()) if D is None else float(positive("D", D))
    const = logistic_constants(c_x, D, d)
    r2 = grid["R"] ** 2
    fa, lo = grid["fedavg_err"].mean(-1), grid["local_err"].mean(-1)
    measured = np.array([crossover(r2[k], fa[k], lo[k]) for k in range(len(n))])
    near = np.array([np.argmin(np.abs(np.log(r2[k] / x))) if np.isfinite(x) else 0
                     for k, x in enumerate(measured)])
    trace = grid["fisher_trace_inv"][np.arange(len(n)), near]
    return {"measured": measured, "kink": d / n, "asymptotic": (1 - 1 / m) * trace / n,
            "dichotomy": np.asarray(dichotomy_threshold(m * n, m, const["loss_sup"],
                                                        const["mu0"]))}


def aligned_quadratic(*, m: int = 4, d: int = 10, L: float = 1.0, mu: float = 1e-2,
                      R: float = 1.0, seed: int = 0, rep: int = 0) -> ClientLosses:
    """Quadratic clients sharing one Hessian ``diag(geomspace(mu, L, d))``.

    ``f_i(w) = ||X w - y_i||^2 / (2d)`` with ``X = sqrt(d) diag(sqrt(eig))`` and
    ``y_i = X w_i``, ``w_i = w_0 + R u_i / sqrt(d)`` (``w_0, u_i`` standard normal from
    ``replicate_rng(seed, rep, 0)``). With every client's Hessian the same, the Moreau envelopes of
    paper 004 Lemma 2 have exactly the constants ``mu_g, L_g`` (no averaging over clients makes
    the problem easier than the bound's worst case), so Cor. 1's ``kappa_g`` is the true
    condition number of the outer problem.
    """
    m, d = positive_int("m", m), positive_int("d", d)
    L, mu = float(positive("L", L)), float(positive("mu", mu))
    if mu > L:
        raise ValueError(f"mu must lie in (0, L] = (0, {L:g}], got {mu!r}")
    R = float(nonnegative("R", R))
    rng = replicate_rng(check_seed(seed), rep, 0)
    X = np.broadcast_to(np.sqrt(d) * np.diag(np.sqrt(np.geomspace(mu, L, d))), (m, d, d))
    w = rng.standard_normal(d) + R * rng.standard_normal((m, d)) / np.sqrt(d)
    return ClientLosses(X, np.einsum("mnd,md->mn", X, w), loss="squared")


def bilevel_rounds(lams, *, m: int = 4, d: int = 10, L: float = 1.0, mu: float = 1e-2,
                   eps: float = 1e-6, seed: int = 0) -> dict:
    """Rounds of bilevel FedProx (paper 004 Alg. 1, Cor. 1 steps, Thm 2's K) against Cor. 1.

    Runs ``ALGORITHMS["fedprox_bilevel"]`` on :func:`aligned_quadratic` and counts the rounds
    until the stacked local models are ``1/sqrt(eps)`` times closer to the exact FedProx
    minimizer (squared distance reduced by ``eps``). Cor. 1 (``fedprox_complexity``, relative
    target ``eps``, ``dist0 = 1``) is a sufficient number of rounds, so the simulation must not
    need more; its order is ``kappa_g log(1/eps)``.

    Returns
    -------
    dict of ndarray, shape (len(lams),)
        ``lam``, ``simulated``, ``corollary1`` (Cor. 1's rounds), ``kappa_g``, ``K`` (inner
        steps used).
    """
    lams = as_array("lams", lams, low=0.0, low_open=True)
    eps = float(as_array("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True))
    losses = aligned_quadratic(m=m, d=d, L=L, mu=mu, seed=seed)
    factor = 1.0 / np.sqrt(eps)
    sim, inner, bound, kappa_g = [], [], [], []
    for lam in lams:
        comp = fedprox_complexity(L, mu, lam, eps)
        # Run exactly Cor. 1's rounds: a target not reached by then is a violation (inf).
        traj = ALGORITHMS["fedprox_bilevel"](losses, lam=float(lam), L=L, mu=mu,
                                             rounds=int(comp["rounds"]))
        sim.append(float(rounds_to_accuracy(traj, minimize(losses, "fedprox", lam), factor)))
        inner.append(traj.params["inner_steps"])
        bound.append(comp["rounds"])
        kappa_g.append(L / mu * (lam + mu) / (lam + L))
    return {"lam": lams, "simulated": np.array(sim), "corollary1": np.array(bound, float),
            "kappa_g": np.array(kappa_g), "K": np.array(inner)}


def apgd_rounds(algorithm: str, lams, mus, *, instance: str = "aligned", m: int = 10,
                d: int = 20, L: float = 1.0, factor: float = 1e2, max_iterations: int = 3000,
                reps: int = 1, seed: int = 0) -> dict:
    """Rounds of APGD1 / APGD2 (paper 001 Sec. 4.1) against the Thm 3.1 lower bound.

    Runs ``ALGORITHMS[algorithm]`` for every ``(lam, mu)`` pair (``lams`` and ``mus`` broadcast
    together), counts the rounds until the iterate is ``factor`` times closer to the exact
    minimizer of the mixing objective (``rounds_to_accuracy``; squared distance reduced by
    ``factor^2``), and evaluates ``communication_lower_bound(L, mu, lam, factor^-2)``.
    Thm 3.1's hypotheses (corrected, see its ERRATA) need ``lam > 100 mu`` and ``L > 101 mu``.

    Parameters
    ----------
    algorithm : {"apgd1", "apgd2"}
    lams, mus : array_like
        Penalties and strong-convexity constants.
    instance : {"aligned", "paper001"}
        :func:`aligned_quadratic` (every client has the Hessian ``diag(geomspace(mu, L, d))``,
        so the consensus direction has curvature exactly ``mu``, as in the worst case), or
        ``quadratic_instance`` (paper 001 Fig. 2: each client's spectrum spans ``[mu, L]`` in its
        own random basis, so the average Hessian is far better conditioned than ``L/mu``).
    m, d, L : int, int, float
        Clients, dimension, smoothness.
    factor : float
        Required reduction of the distance.
    max_iterations : int
        Rounds run; ``inf`` is reported when the target is not reached.
    reps : int
        Instances per pair (replicate ``r`` draws its models, and for ``"paper001"`` its bases,
        from ``replicate_rng(seed, r, 0)``): how the initial error projects on the slowest
        modes moves the count by tens of percent, the genuine spread a fitted exponent must
        carry.
    seed : int

    Returns
    -------
    dict of ndarray
        ``lam``, ``mu``, ``lower_bound``, ``upper_order`` (Sec. 4.1: ``sqrt(lam/mu)`` for
        APGD1, ``sqrt(L/mu)`` for APGD2, times ``log(factor^2)``) of the broadcast shape, and
        ``simulated`` with a trailing replicate axis (``inf`` if not reached).
    """
    if algorithm not in ("apgd1", "apgd2"):
        raise ValueError(f"algorithm must be 'apgd1' or 'apgd2', got {algorithm!r}")
    if instance not in ("aligned", "paper001"):
        raise ValueError(f"instance must be 'aligned' or 'paper001', got {instance!r}")
    lams, mus = np.broadcast_arrays(as_array("lams", lams, low=0.0, low_open=True),
                                    as_array("mus", mus, low=0.0, low_open=True))
    eps = float(positive("factor", factor)) ** -2
    reps = positive_int("reps", reps)
    sim = []
    for (lam, mu), rep in itertools.product(zip(lams.ravel(), mus.ravel()), range(reps)):
        losses = (aligned_quadratic(m=m, d=d, L=L, mu=float(mu), seed=seed, rep=rep)
                  if instance == "aligned"
                  else quadratic_instance(m=m, d=d, L=L, mu=float(mu), seed=seed, rep=rep).train)
        traj = ALGORITHMS[algorithm](losses, lam=float(lam), iterations=max_iterations,
                                     mu=float(mu))
        sim.append(float(rounds_to_accuracy(traj, minimize(losses, "fedprox", lam), factor)))
    scale = np.sqrt((lams if algorithm == "apgd1" else L) / mus)
    return {"lam": lams, "mu": mus, "simulated": np.array(sim).reshape(lams.shape + (reps,)),
            "lower_bound": np.asarray(communication_lower_bound(L, mus, lams, eps)),
            "upper_order": scale * np.log(1 / eps)}
