"""Simulation experiments behind the minimax-rate checks (issue 5, part 4).

Each function returns a grid of simulated errors or round counts together with the bound it is
checked against (``riskcalc.minimax``); the fitting (exponents with confidence intervals,
``[c, C]`` bands) is ``riskcalc.minimax.ratecheck``'s. Two kinds of claim, two kinds of simulation:

* statistical claims (paper 000 Thm 8 and Thms 4, 6, 11, 12; paper 004 Thm 1), this module, use
  the *exact* minimizers of ``montecarlo.experiments.objectives`` (global objective for FedAvg, local
  objectives for PureLocalTraining, FedProx objective at the prescribed lambda), so no
  optimization error enters the measured rate; fine-tuning is the one iterative method there,
  because its claim (paper 000 Sec. 3.3) is about its trajectory;
* round-count claims (paper 004 Cor. 1; paper 001 Thm 3.1 and Sec. 4.1),
  ``montecarlo.experiments.rates_rounds``, run the iterative algorithms of ``montecarlo.experiments.algorithms`` and
  count communication rounds to a relative accuracy with
  ``montecarlo.experiments.metrics.rounds_to_accuracy``.

The instances (paper 000 Lemma 7's logistic federations, ``lemma7_instance``, and their exact
population quantities) are ``montecarlo.experiments.rates_instances``'s. The names of both modules stay
importable from here.
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS, Trajectory
from montecarlo.experiments.problems import Instance
from montecarlo.experiments.metrics import evaluate
from montecarlo.experiments.objectives import minimize
from montecarlo.experiments.rates_instances import (MAX_ENUMERATED_DIM, fedprox_theorem1_constants,
                                                    fisher_information, lemma7_instance, sign_vectors,
                                                    true_models)
from montecarlo.experiments.rates_rounds import aligned_quadratic, apgd_rounds, bilevel_rounds
from riskcalc._validate import as_array, positive, positive_int
from riskcalc.minimax import (dichotomy_threshold, fedprox_lambda, fedprox_proof_lambda,
                              logistic_constants, lower_bound_ier)

__all__ = [
    "BASELINES", "HETEROGENEITY_METHODS", "MAX_ENUMERATED_DIM", "aligned_quadratic",
    "apgd_rounds", "bilevel_rounds", "crossover", "crossover_table",
    "fedprox_theorem1_constants", "fisher_information", "heterogeneity_grid",
    "homogeneous_grid", "lemma7_instance", "paper000_fedprox_grid", "sign_vectors",
    "true_models",
]

# The selectable methods of heterogeneity_grid and baselines of paper000_fedprox_grid.
HETEROGENEITY_METHODS = ("fedavg", "local", "fedprox", "finetune")
BASELINES = ("fedavg", "local")


def _exact_metrics(instance, W):
    """``montecarlo.experiments.metrics.evaluate`` of the models ``W`` (shape (..., m, d)), one checkpoint."""
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
        As in :func:`~montecarlo.experiments.rates_instances.lemma7_instance`.

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


def heterogeneity_grid(ns, r2_over_d_n, *, m: int = 4, d: int = 5, reps: int = 20,
                       c_x: float = 1.0, l2: float = 1e-4, finetune_epochs: int = 40,
                       seed: int = 0, methods=HETEROGENEITY_METHODS) -> dict:
    """FedAvg, PureLocalTraining, FedProx (paper 004 Thm 1 lambda) and fine-tuning over
    ``(n, R)``, checked against paper 000 Thm 8 eq. (15), ``min(d/n_i, R^2) + d/N``.

    For each ``n`` the radii are ``R^2 = f d / n`` for ``f`` in ``r2_over_d_n``, so every
    ``n`` sees the same position relative to Thm 8's kink ``R^2 = d/n_i``.

    * FedAvg, local: exact minimizers of the global / local objectives;
    * FedProx: exact minimizer of paper 000 eq. (20) = paper 004 eq. (1) at
      ``lam = fedprox_lambda(L, mu, rho, R, n, m)`` (the smallest admissible lambda when
      ``R <= 1/sqrt(n)``, the largest otherwise), ``L, mu, rho`` from
      :func:`~montecarlo.experiments.rates_instances.fedprox_theorem1_constants`;
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
        As in :func:`~montecarlo.experiments.rates_instances.lemma7_instance`.
    finetune_epochs : int
        Local gradient steps after FedAvg.
    methods : str or sequence of {"fedavg", "local", "fedprox", "finetune"}
        The methods to simulate (default all). Each is computed on the same instances whatever
        the others (none spends a random draw), so a selection's numbers are those of the full
        grid; fine-tuning alone was 44% of the time of claim 004.thm1.adaptive-lambda, which
        never reads it.

    Returns
    -------
    dict
        ``n`` (len(ns),), ``R`` (len(ns), len(f)); errors ``{method}_err`` and
        ``{method}_ier`` of shape (len(ns), len(f), reps) for ``fedavg``, ``local``,
        ``fedprox`` (with ``lam``, FedProx's lambda), and ``finetune_err`` (len(ns), len(f))
        (replicate mean at the best checkpoint), each only when in ``methods``;
        ``lower_bound`` Thm 8's ``min(d/n, R^2) + d/N``; ``fisher_trace_inv`` ``tr(H_i^-1)``
        averaged over clients (len(ns), len(f)).
    """
    f = as_array("r2_over_d_n", r2_over_d_n, low=0.0, low_open=True)
    finetune_epochs = positive_int("finetune_epochs", finetune_epochs)
    methods = _selection("methods", methods, HETEROGENEITY_METHODS)
    plain = [(name, objective) for name, objective in (("fedavg", "global"), ("local", "local"))
             if name in methods]
    keys = (tuple(f"{name}_{q}" for name, _ in plain for q in ("err", "ier"))
            + (("fedprox_err", "fedprox_ier", "lam") if "fedprox" in methods else ())
            + (("finetune_err",) if "finetune" in methods else ())
            + ("R", "lower_bound", "fisher_trace_inv"))
    out = {k: [] for k in keys}
    for cell, n in enumerate(ns):
        R = np.sqrt(f * d / n)
        inst = lemma7_instance(R, reps=reps, m=m, n=n, d=d, c_x=c_x, l2=l2, seed=seed,
                               cell=cell)
        for name, objective in plain:
            err, ier = _exact_errors(inst, minimize(inst.train, objective)[1])
            out[f"{name}_err"].append(err.T)
            out[f"{name}_ier"].append(ier.T)
        if "fedprox" in methods:
            lams, prox_err, prox_ier = [], [], []
            for j, r in enumerate(R):
                c = fedprox_theorem1_constants(inst.w_star[j], d, c_x)
                lam = float(fedprox_lambda(c["L"], c["mu"], c["rho"], r, n, m).lam)
                point = Instance(inst.train.take(np.s_[:, j]),
                                 inst.w_star[j], inst.test_X, inst.labels)
                err, ier = _exact_errors(point, minimize(point.train, "fedprox", lam)[1])
                lams.append(lam)
                prox_err.append(err)
                prox_ier.append(ier)
            out["lam"].append(lams)
            out["fedprox_err"].append(prox_err)
            out["fedprox_ier"].append(prox_ier)
        if "finetune" in methods:
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
                          seed: int = 0, baselines=BASELINES) -> dict:
    """FedAvg, PureLocalTraining and FedProx at the penalties of paper 000's proofs over
    ``(n, m, R)``: the simulations behind Thms 6 (eq. 11), 11 (eq. 30) and 12 (eq. 29).

    For each ``(n, m)`` the radii are ``R^2 = f / n`` for ``f`` in ``r2_times_n``, so every
    cell sees the same position relative to the thresholds of the proofs' events (``f = 1`` and
    ``f = 1/m^2`` for Thm 11, ``f = 1`` for Thm 12). FedAvg and local are the exact minimizers
    of the global and local objectives, FedProx the exact minimizer of eq. (20) at
    ``riskcalc.minimax.fedprox_proof_lambda`` (so no optimization error enters: the theorems choose the
    rounds of Alg. 2 to make it negligible), with ``mu`` the smallest eigenvalue of the
    population Hessians at the truth
    (:func:`~montecarlo.experiments.rates_instances.fedprox_theorem1_constants`), the curvature that sets
    the errors.

    Parameters
    ----------
    ns, ms : sequence of int
        Samples per client, numbers of clients (even); every pair is simulated.
    r2_times_n : sequence of float
        ``R^2 n``, > 0; >= 0 when ``theorems`` is empty (``R = 0``: the instances of
        :func:`homogeneous_grid`).
    theorems : int or sequence of {11, 12}
        Whose FedProx penalties to simulate (each costs one exact FedProx solve per radius,
        and the constants ``mu`` one Fisher information per radius).
    baselines : str or sequence of {"fedavg", "local"}
        The baselines to solve (default both; ``()``: FedProx alone). Each is computed on the
        same instances whatever the others (no random draw is spent on any), so a selection's
        numbers are those of the full grid to the bit.
    d, reps, c_x, l2, seed
        As in :func:`~montecarlo.experiments.rates_instances.lemma7_instance`; cell ``k`` of the
        ``(n, m)`` product uses data stream ``cell = k``.

    Returns
    -------
    dict
        ``n``, ``m`` (cells,); ``R`` (cells, len(f)), and ``mu`` too when ``theorems`` is not
        empty; for ``method`` in ``baselines`` and ``fedprox_thm{t}`` (``t`` in ``theorems``,
        with its ``lam_thm{t}``):
        ``{method}_aer`` (client average of the exact IER, i.e. ``AER_p`` with ``p_i = 1/m``),
        shape (cells, len(f), reps), and ``{method}_ier_worst`` (cells, len(f)), the largest
        over clients of the replicate-mean IER (``max_i E_S[IER_i]``, what "for every i"
        bounds; the mean of the per-replicate maximum would add an extreme-value bias growing
        with ``m``).
    """
    theorems = _selection("theorems", theorems, (11, 12))
    f = as_array("r2_times_n", r2_times_n, low=0.0, low_open=bool(theorems))
    baselines = _selection("baselines", baselines, BASELINES)
    plain = [(name, objective) for name, objective in (("fedavg", "global"), ("local", "local"))
             if name in baselines]
    methods = tuple(name for name, _ in plain) + tuple(f"fedprox_thm{t}" for t in theorems)
    out = {k: [] for k in ("n", "m", "R") + (("mu",) if theorems else ())
           + tuple(f"lam_thm{t}" for t in theorems)
           + tuple(f"{k}_{q}" for k in methods for q in ("aer", "ier_worst"))}
    for cell, (n, m) in enumerate(itertools.product(ns, ms)):
        R = np.sqrt(f / n)
        inst = lemma7_instance(R, reps=reps, m=m, n=n, d=d, c_x=c_x, l2=l2, seed=seed,
                               cell=cell)
        for name, objective in plain:
            met = _exact_metrics(inst, minimize(inst.train, objective)[1])
            out[f"{name}_aer"].append(met["aer"].T)
            out[f"{name}_ier_worst"].append(met["ier"].mean(0).max(-1))
        mus = [fedprox_theorem1_constants(inst.w_star[j], d, c_x)["mu"]
               for j in range(len(R) if theorems else 0)]
        for thm in theorems:
            lams, aer, ier = [], [], []
            for j, r in enumerate(R):
                lam = float(fedprox_proof_lambda(r, n, m, mus[j], theorem=thm))
                point = Instance(inst.train.take(np.s_[:, j]),
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
        if theorems:
            out["mu"].append(mus)
    return {k: np.array(v, float) for k, v in out.items()}


def _selection(name, value, allowed) -> tuple:
    """``value`` (one item of ``allowed`` or a sequence of them) as a tuple in the order of
    ``allowed``; ValueError naming ``name`` otherwise (a bool is no selection)."""
    chosen = (value,) if isinstance(value, (str, int)) else value
    try:
        ok = all(not isinstance(v, bool) and v in allowed for v in chosen)
    except TypeError:       # not iterable, or items that cannot be compared
        ok = False
    if not ok:
        raise ValueError(f"{name} must be a subset of {allowed}, got {value!r}")
    return tuple(v for v in allowed if v in chosen)


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
    r2 = np.atleast_1d(positive("r2", r2, ndim=1))
    errs = [np.atleast_1d(positive(k, v, ndim=1)) for k, v in (("fedavg_err", fedavg_err),
                                                                 ("local_err", local_err))]
    # Was: a decreasing grid interpolated silently, a shorter error list numpy's broadcast
    # error, a 2-d grid an IndexError (fuzz41 sim F4).
    if any(e.shape != r2.shape for e in errs):
        raise ValueError(f"fedavg_err and local_err must have one value per r2 value "
                         f"({r2.size}), got {errs[0].size} and {errs[1].size}")
    if np.any(np.diff(r2) <= 0):
        raise ValueError(f"r2 must be increasing, got {r2.tolist()}")
    gap = np.log(errs[0]) - np.log(errs[1])
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
