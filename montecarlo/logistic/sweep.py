"""Predicted vs simulated over a parameter grid for the logistic family
(``riskcalc sweep METHOD --model logistic``).

The grid is the outer product of the target client's gamma and r, and of the number of clients
M (or one heterogeneous federation: the target and fixed other clients); the penalties ``lam``
are measured inside each task, largest first and warm started, as the single-point simulators
do. One task per (grid point, replicate), run by ``montecarlo.runner.tasks.run_tasks``
(parallel, progress bar, and with ``cache`` resumable after an interrupt). Replicate ``rep``
of every grid point draws from the same streams (``montecarlo.runner.seeding``: common random
numbers), so differences along the grid are not blurred by independent noise.

Two settings, as in ``riskcalc compare --model logistic``:

* infinitely many clients (no ``clients``): RTFA toward the oracle centre ``w_0`` or FedAvg's
  infinite-client centre, or local ridge (centre 0), ``riskcalc.logistic_limit`` against
  ``montecarlo.logistic.ridge``;
* M clients: FedAvg's exact logistic global model over the M clients (ridge ``global_lam``)
  and ``method`` ``rtfa``, ``fedavg``, ``local_ridge`` or ``pfedme`` (alias ``fedprox``),
  ``riskcalc.logistic_limit(..., clients=M)`` (identical clients) or
  ``riskcalc.logistic_clients_limit(..., target=0)`` (a heterogeneous federation) against
  ``montecarlo.logistic.pipeline``. Local ridge uses no global model: it is simulated by
  ``montecarlo.logistic.ridge`` with centre 0, which draws exactly the pipeline's client 0.

The predictions are computed point by point before any simulation runs, at the ratios the
simulation realizes, d / n_j with n_j = max(1, round(d / gamma_j)) (the rows' d and n; the
rows' gamma is the one asked), so a parameter the theory refuses (e.g. ``global_lam = 0`` with
separable pooled data) stops the sweep at once.
"""

from __future__ import annotations

import itertools

import numpy as np

import riskcalc
from montecarlo.compare import MAX_MINUTES
from montecarlo.runner.stats import none_if_nan, summarize
from montecarlo.logistic import pipeline, ridge
from montecarlo.logistic.fits import check_fedprox_lams
from montecarlo.prediction import simulated_ratios
from montecarlo.logistic.sweep_checks import (check_memory, check_minutes, check_reach_all,
                                              checked_others, federation)
from montecarlo.runner.budget import check_tasks
from montecarlo.runner.seeding import check_seed
from montecarlo.runner.tasks import cached_count, run_tasks
from montecarlo.sweep import SweepRows, grid_values
from riskcalc._validate import as_array, canonical_method, positive_int
from riskcalc.logistic.limits import UNFEDERATED
from riskcalc.logistic.work import MAX_SECONDS
from riskcalc.logistic.result import GLOBAL_FIELDS, measured_fields
from riskcalc.logistic.spectrum.limits import centre_scale
from riskcalc.spectrum import Spectrum

#: Methods at finite M; without clients ``riskcalc.logistic.limits.UNFEDERATED``.
METHODS = ("rtfa", "fedavg", "local_ridge", "pfedme")


def sweep_logistic(method: str, *, gamma, r, signal: float, lam=None, d: int,
                   clients=None, others=None, global_lam=None, weights: str = "samples",
                   centre: str = "oracle", spectrum=None, reps: int = 10, seed: int = 0,
                   n_jobs: int = 1, scheduler: str | None = None, progress: bool = True,
                   cache=None, max_seconds: float = MAX_SECONDS,
                   max_minutes: float | None = MAX_MINUTES) -> SweepRows:
    """Predicted and simulated logistic limits at every point of a grid (module docstring).

    CGMT limits of ``riskcalc.logistic`` (after Salehi, Abbasi & Hassibi 2019 and Sur &
    Candes 2019; finite M derived in ``riskcalc.logistic.blocks.pooled`` and ``finetune``) against
    exact-Newton simulations (``montecarlo.logistic.ridge``, ``montecarlo.logistic.pipeline``).

    Parameters
    ----------
    method : {"rtfa", "fedavg", "local_ridge", "pfedme"}
        ``fedprox`` is an alias of ``pfedme``; without ``clients`` and ``others``: rtfa or
        local_ridge (its limits do not depend on the federation: ``riskcalc.logistic_limit``).
    gamma, r : float or sequence of float
        The target client's ``d / n`` (> 0) and ``||w_i - w_0||`` (>= 0): grid values.
    signal : float
        ``||w_0||`` (> 0 with clients).
    lam : float or sequence of float
        Penalties (> 0 in the simulation); not taken by fedavg.
    d : int
        Dimension of the simulation, >= 2.
    clients : int or sequence of int, optional
        M >= 1 identical clients (the target among them), grid values.
    others : dict, optional
        Instead of ``clients``: the OTHER clients, ``{"gamma": [...], "r": [...]}`` (M = 1 +
        their number).
    global_lam : float
        Ridge of the global model toward 0, >= 0 (with clients; not needed by local_ridge).
    weights : {"samples", "uniform"}
        Client weights of the global objective.
    centre : {"oracle", "fedavg"}
        Without clients: the centre of RTFA (local_ridge's is 0; its rows' ``centre`` None).
    spectrum : Spectrum, optional
        Every client's ``x ~ N(0, Sigma)``, ``Sigma`` diagonal with ``spectrum.eigenvalues(d)``.
    reps, seed, n_jobs, scheduler, progress, cache
        As in ``montecarlo.sweep.sweep``; ``cache`` makes an interrupted sweep resumable.
    max_seconds : float
        The limits' work estimates are held to it, as in ``riskcalc.logistic_limit`` (the
        command line's --max-minutes where given; it was not passed: a sweep refused at the
        solvers' 60 s, saying "--max-minutes on the command line", whatever was given).
    max_minutes : float or None
        Refuse, before any replicate runs (the limits, each held to ``max_seconds``, are
        computed first), a sweep whose replicates ``cache`` lacks are estimated
        (``replicate_seconds``, the command line's estimate) to take longer on ``n_jobs``
        workers (one with a ``scheduler``); None: no limit (the command line checks
        --max-minutes itself). As ``montecarlo.sweep.sweep``'s (it had none: a sweep of hours
        ran).

    Returns
    -------
    SweepRows
        One dict per grid point and ``lam``: the parameters, ``d``, ``n``, ``reps``, ``seed``
        and per quantity ``q`` (``riskcalc.logistic.result.measured_fields``)
        ``predicted_q``, ``simulated_q``, ``q_se``, ``q_rel_diff``, ``q_inside_ci95`` (None
        where ``q`` is undefined: the cosine at r = 0, the global overlap at signal 0).

    Raises
    ------
    ValueError
        A parameter out of range, or the work does not fit in memory.
    SolverError
        A fixed point did not converge, or a simulated pooled problem has no minimizer.
    """
    method = canonical_method(method)
    federated = clients is not None or others is not None
    if method not in (METHODS if federated else UNFEDERATED):
        raise ValueError(f"method must be rtfa or local_ridge without clients, one of "
                         f"{', '.join(METHODS)} with clients; got {method!r}")
    if clients is not None and others is not None:
        raise ValueError("give clients (identical clients) or others (a federation), not both")
    others = checked_others(others)
    d = positive_int("d", d, minimum=2)
    spectrum = pipeline.logistic_spectrum(spectrum, d)     # a SPEC string was an AttributeError
    reps = positive_int("reps", reps, minimum=2)
    seed = check_seed(seed)
    lams = [] if method == "fedavg" else grid_values("lam", lam)
    if method != "fedavg" and lams == [None]:
        raise ValueError(f"method {method} needs lam (its ridge penalty)")
    if lams:        # the simulated minimizers need a penalty (lam = 0: the MLE may not exist)
        as_array("lam", lams, low=0.0, low_open=True)
    if method == "pfedme":
        check_fedprox_lams(lams)
    if method == "fedavg" and lam is not None:
        raise ValueError("method fedavg does not take lam (the global model has global_lam)")
    points = grid(gamma, r, clients, others)
    check_tasks(len(points) * reps, f"{len(points)} grid points x {reps} replicates",
                "lower reps or the grid")
    names = measured_fields(method, federated, spectrum)
    check_reach_all(method, points, others, signal, spectrum, d)
    simulated = pipeline.simulated_spectrum(spectrum, d)[0]     # the spectrum simulated
    preds, notes = zip(*(_noted(_predicted(method, g_sim, fed, rr, signal, lams, global_lam,
                                           weights, centre, simulated, names, max_seconds),
                                said)
                         for g, rr, m in points
                         for g_sim, fed, said in [_simulated_ratios(
                             g, federation(g, rr, m, others), d)]))
    tasks = _tasks(method, points, signal, lams, others, global_lam, weights, centre, d, seed,
                   reps, spectrum)
    # Listed once (a cache counts them) and after the time check where no cache is given:
    # 3e6 replicates were listed for minutes before their refusal.
    tasks = tasks if cache is None else list(tasks)
    valid = _layout(method, names, len(lams))
    if max_minutes is not None:     # after the limits, which name a missing global_lam
        check_minutes(max_minutes, method, points, others, d, reps, len(lams), n_jobs,
                      scheduler, cached_count(cache, "sweep", tasks, valid), signal, spectrum)
    tasks = list(tasks)
    check_memory(points, others, d, method)
    results = run_tasks(replicate_task, tasks, cache=cache, n_jobs=n_jobs, scheduler=scheduler,
                        progress=progress, desc=f"sweep {method} (logistic)", command="sweep",
                        valid=valid)
    label = "identity" if spectrum is None else spectrum.record()
    rows = []
    for i, (g, rr, m) in enumerate(points):
        res = results[i * reps:(i + 1) * reps]
        sim = {q: _column(res, method, q, len(lams)) for q in names}
        summ = {q: summarize(sim[q], preds[i][q]) for q in names}
        for k in range(max(1, len(lams))):
            row = {"model": "logistic", "method": method, "gamma": g, "r": rr,
                   "signal": float(signal)}
            if method != "fedavg":
                row["lam"] = lams[k]
            if federated:
                row.update(clients=1 + len(others["gamma"]) if others is not None else m,
                           global_lam=None if method == "local_ridge" else global_lam,
                           weights=None if method == "local_ridge" else weights)
            else:
                row["centre"] = None if method == "local_ridge" else centre
            row.update(spectrum=label, d=d, n=pipeline.client_sizes([g], d)[0], reps=reps,
                       seed=seed)
            for q in names:
                row[f"predicted_{q}"] = none_if_nan(preds[i][q][k])
                row[f"simulated_{q}"] = none_if_nan(summ[q]["mean"][k])
                row[f"{q}_se"] = none_if_nan(summ[q]["se"][k])
                row[f"{q}_rel_diff"] = none_if_nan(summ[q]["rel_diff"][k])
                # Undefined (the cosine at r = 0, the overlap at signal 0): neither inside nor
                # a miss, as compare's null (it was False, a disagreement).
                defined = row[f"predicted_{q}"] is not None and row[f"simulated_{q}"] is not None
                row[f"{q}_inside_ci95"] = bool(summ[q]["inside"][k]) if defined else None
            rows.append(row)
    rows = SweepRows(rows)
    # The predictions' notes, each once (local ridge's "global_lam plays no part" was dropped).
    rows.notes = tuple(dict.fromkeys(n for point in notes for n in point))
    return rows


def grid(gamma, r, clients=None, others=None) -> list:
    """The grid points ``(gamma, r, M)`` of ``sweep_logistic`` in row order (M None with
    ``others`` or without clients)."""
    ms = [None] if clients is None else \
        [positive_int("clients", m) for m in grid_values("clients", clients)]
    gammas = grid_values("gamma", gamma)
    if gammas == [None]:        # was a TypeError from float(None) (the limits named r)
        raise ValueError("gamma (the target client's d / n, > 0) is required")
    as_array("gamma", gammas, low=0.0, low_open=True)      # 0 was a ZeroDivisionError
    return list(itertools.product(gammas, grid_values("r", r), ms))


def cached_tasks(method: str, *, cache, gamma, r, signal: float, lam=None, d: int,
                 clients=None, others=None, global_lam=None, weights: str = "samples",
                 centre: str = "oracle", spectrum=None, reps: int = 10, seed: int = 0) -> int:
    """How many replicate tasks of ``sweep_logistic`` (same arguments) the JSON-lines
    ``cache`` holds, nothing predicted or simulated: ``riskcalc sweep --model logistic``
    times only the others (as the linear ``montecarlo.sweep.cached_tasks``)."""
    method = canonical_method(method)
    lams = [] if method == "fedavg" else grid_values("lam", lam)
    names = measured_fields(method, clients is not None or others is not None, spectrum)
    return cached_count(cache, "sweep", _tasks(
        method, grid(gamma, r, clients, others), signal, lams, others, global_lam,
        weights, centre, positive_int("d", d, minimum=2), check_seed(seed),
        positive_int("reps", reps, minimum=2), spectrum), _layout(method, names, len(lams)))


def _layout(method, names, n_lams):
    """``valid(task, result)`` for ``run_tasks``: whether a cached result holds every quantity
    of ``names`` for the ``n_lams`` penalties (another layout reruns; it was a traceback)."""
    def valid(task, result):
        try:
            return all(_column([result], method, q, n_lams).shape == (1, max(1, n_lams))
                       for q in names)
        except (KeyError, TypeError, IndexError, ValueError, AttributeError):
            return False
    return valid


def _tasks(method, points, signal, lams, others, global_lam, weights, centre, d, seed, reps,
           spectrum):
    """The replicate tasks of ``points``, in row order (a generator)."""
    for g, rr, m in points:
        fed = federation(g, rr, m, others)
        for rep in range(reps):
            yield _task(method, g, rr, signal, lams, fed, global_lam, weights, centre, d, seed,
                        rep, spectrum)


def _simulated_ratios(g, fed, d):
    """``(g, fed, notes)`` at the ratios d / n_j the simulation realizes (the rows' d and n;
    ``montecarlo.prediction.simulated_ratios`` with ``pipeline.client_sizes``); ``notes``: its
    note where they differ from those asked (dropped: gamma 2 at d = 41 was predicted at 41 /
    20 = 2.05 with nothing said, where the linear sweep and compare note it)."""
    ratio, note = simulated_ratios(d, [g], sizes=pipeline.client_sizes)
    if fed is not None:
        ratios, note = simulated_ratios(d, fed[0], sizes=pipeline.client_sizes)
        fed = (ratios, fed[1])
    return ratio[0], fed, () if note is None else (note,)


def _noted(prediction, said):
    """``prediction`` (``_predicted``'s pair) with the notes ``said`` first."""
    return prediction[0], tuple(said) + tuple(prediction[1])


def _predicted(method, g, fed, rr, signal, lams, global_lam, weights, centre, spectrum,
               names, max_seconds):
    """``({quantity: array over lams}, notes)`` (one entry for fedavg) by direct calls of the
    public limits, point by point; ``notes``: theirs, in order."""
    out, notes = {q: [] for q in names}, []
    for lam in (lams or [None]):
        if fed is None:
            res = riskcalc.logistic_limit(gamma=g, signal=signal, r=rr, lam=lam, centre=centre,
                                          method=method, spectrum=spectrum,
                                          max_seconds=max_seconds).as_dict()
        elif len(set(zip(*fed))) == 1:
            res = riskcalc.logistic_limit(gamma=g, signal=signal, r=rr, lam=lam,
                                          clients=len(fed[0]), global_lam=global_lam,
                                          weights=weights, method=method,
                                          spectrum=spectrum, max_seconds=max_seconds).as_dict()
        else:
            full = riskcalc.logistic_clients_limit(gamma=fed[0], r=fed[1], signal=signal,
                                                   lam=lam, global_lam=global_lam,
                                                   weights=weights, method=method, target=0,
                                                   spectrum=spectrum,
                                                   max_seconds=max_seconds).as_dict()
            res = {q: (full[q][0] if isinstance(full.get(q), list) and q not in GLOBAL_FIELDS
                       else full.get(q)) for q in names}
            res["notes"] = full["notes"]
        notes += res.get("notes") or ()
        for q in names:
            out[q].append(np.nan if res.get(q) is None else float(res[q]))
    return {q: np.array(v) for q, v in out.items()}, notes


def _task(method, g, rr, signal, lams, fed, global_lam, weights, centre, d, seed, rep,
          spectrum):
    """One replicate's task (a JSON dict holding everything its draws depend on)."""
    eig = {} if spectrum is None else {"eigenvalues": spectrum.eigenvalues(d).tolist()}
    if fed is None or method == "local_ridge":
        scale = 0.0 if method == "local_ridge" else centre_scale(
            signal, rr, spectrum or Spectrum.identity(), centre)
        extra = {} if scale == 1.0 else {"centre_scale": float(scale)}
        return {"simulator": "ridge", "kwargs": dict(gamma=g, signal=float(signal), r=rr,
                                                     lams=lams, d=d, seed=seed, rep=rep,
                                                     **extra, **eig)}
    return {"simulator": "pipeline",
            "kwargs": dict(gammas=fed[0], rs=fed[1], signal=float(signal), lams=lams,
                           global_lam=float(global_lam), d=d, seed=seed, rep=rep,
                           weights=weights, target=0, pfedme=method == "pfedme", **eig)}


def replicate_task(task: dict) -> dict:
    """Run one task of ``sweep_logistic`` (``montecarlo.runner.tasks.run_tasks``)."""
    sim = ridge if task["simulator"] == "ridge" else pipeline
    return sim.simulate_replicate(**task["kwargs"])


def _column(results, method, q, n_lams):
    """Replicates x lams samples of quantity ``q`` (None -> NaN)."""
    def one(res):
        if q in GLOBAL_FIELDS:
            v = res["global"][q.split("_")[1]]
            return [v] * max(1, n_lams)
        v = res[method][q] if method in res else res[q]
        return v if isinstance(v, list) else [v]
    return np.array([[np.nan if v is None else v for v in one(res)] for res in results],
                    dtype=float)
