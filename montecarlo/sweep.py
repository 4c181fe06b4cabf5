"""Predicted vs simulated over a grid of parameters (``riskcalc sweep``).

The grid is the outer product of the values of gamma, the signal (r or rho), sigma and the
tuning parameter (lam or alpha). One task per (gamma, signal, sigma, replicate) measures every
tuning value from one decomposition per client (``montecarlo.linear.measure``); replicate ``rep`` of
every grid point draws the same random numbers (common random numbers, ``montecarlo.runner.seeding``),
so differences along the grid are not blurred by independent noise. Tasks run through
``montecarlo.runner.tasks.run_tasks`` (parallel, progress bar, resumable cache).
"""

from __future__ import annotations

import csv
import itertools
import json
import numbers
import os
from collections.abc import Mapping
from dataclasses import replace
from types import SimpleNamespace

import numpy as np

import riskcalc
from montecarlo.compare import (MAX_MINUTES, QUANTITIES, replicate_task, spec_to_dict,
                                task_inputs, valid_replicate)
from montecarlo.compare_checks import (as_setting, check_minutes, check_run, conditional_signal,
                                       federation_unused, measure_keyword)
from montecarlo.runner.budget import check_tasks
from montecarlo.runner.stats import none_if_nan, summarize
from montecarlo.linear.estimators import get_estimator
from montecarlo.linear.instances import Setting, check_memory
from montecarlo.prediction import predicted, simulated_spec
from montecarlo.runner.seeding import check_seed
from montecarlo.runner.tasks import cached_count, run_tasks
from riskcalc import _frames
from riskcalc._files import atomic
from riskcalc._validate import canonical_method, path as file_path, real
from riskcalc.linear.steps import limits as finite_steps
from riskcalc.linear.model import ClientSpec

FORMATS = ("csv", "jsonl")


class SweepRows(list):
    """The rows of ``sweep`` (one dict per grid point and tuning value), as a list; ``notes``
    holds the predictions' notes, each once (``compare`` prints them beside its one row: a
    prediction that is the converged limit beside a simulation of steps said nothing)."""

    notes: tuple = ()

    def to_frame(self):
        """The rows as a pandas DataFrame, one column per key; a column of numbers with None
        where a value is undefined (``rel_diff`` beside a prediction of 0, ``clients`` under
        the oracle global model) is float with NaN (all None was a column of Python objects,
        which numpy's ``isnan`` refuses). Needs pandas (``pip install 'fedrisk[frames]'``)."""
        frame = _frames.pandas().DataFrame(list(self))
        for k in frame.columns:
            if frame[k].dtype == object and all(
                    v is None or isinstance(v, numbers.Real) and not isinstance(v, bool)
                    for v in frame[k]):
                frame[k] = frame[k].astype(float)
        return frame


def grid_values(name, v) -> list:
    """The values of grid parameter ``name`` (``[None]`` when not given): a number or a 1-d
    list of at least one (``riskcalc._validate.real``: a boolean, string, complex value or
    matrix is refused naming it; they were read as numbers, a matrix flattened into a grid)."""
    if v is None:
        return [None]
    arr = np.atleast_1d(real(name, v, ndim=1))
    if arr.size == 0:
        raise ValueError(f"{name} needs at least one value")
    return [float(x) for x in arr]


def sweep(method: str, *, gamma, sigma, setting: Setting, r=None, rho=None, lam=None,
          alpha=None, spectrum=None, reps: int = 10, seed: int = 0,
          measure: str | None = None, steps: int | None = None,
          step_size: float | None = None, route: str = "auto", n_jobs: int = 1,
          scheduler: str | None = None, progress: bool = True, cache=None,
          max_minutes: float | None = MAX_MINUTES, kind: str | None = None) -> list[dict]:
    """Predicted and simulated bias, variance and risk at every point of a parameter grid.

    Paper 003 (``003_4b976ddf5225c17e.txt``): the limits of Thms 1-4 / Cor. 3.1
    (``riskcalc.spec_limit``) against the measurement of eq. (3) (``montecarlo.linear.measure``).

    Parameters
    ----------
    method : str
        A ``riskcalc.METHODS`` name.
    gamma, sigma, r, rho, lam, alpha : float or sequence of float
        Grid values (each a scalar or a list); the method's required parameters as in
        ``ClientSpec``.
    setting : Setting
        d, clients, global model, distributions.
    spectrum : Spectrum or SPEC str, optional
        Covariance spectrum (None: identity), as in ``ClientSpec``.
    reps, seed, measure, steps, step_size, route
        As in ``montecarlo.compare.compare`` (``kind``: the deprecated alias of ``measure``,
        a DeprecationWarning).
    n_jobs, scheduler, progress, cache
        Passed to ``run_tasks``; ``cache`` makes an interrupted sweep resumable.
    max_minutes : float or None
        Refuse a sweep estimated to take longer (``montecarlo.compare_checks.check_minutes``; None:
        no limit).

    Returns
    -------
    SweepRows
        A list with one dict per grid point (``to_frame()`` gives a DataFrame): the
        parameters, ``d``, ``n``, ``reps``, and per quantity q ``predicted_q``,
        ``simulated_q``, ``q_se``, ``q_rel_diff``, ``q_inside_ci95``.
    """
    return sweep_settings(method, [setting], gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam,
                          alpha=alpha, spectrum=spectrum, reps=reps, seed=seed,
                          measure=measure_keyword(measure, kind), steps=steps,
                          step_size=step_size, route=route, n_jobs=n_jobs,
                          scheduler=scheduler, progress=progress, cache=cache,
                          max_minutes=max_minutes)


def sweep_settings(method: str, settings, *, gamma, sigma, r=None, rho=None, lam=None,
                   alpha=None, spectrum=None, reps: int = 10, seed: int = 0,
                   measure: str | None = None, steps: int | None = None,
                   step_size: float | None = None, route: str = "auto", n_jobs: int = 1,
                   scheduler: str | None = None, progress: bool = True, cache=None,
                   max_minutes: float | None = MAX_MINUTES,
                   kind: str | None = None) -> list[dict]:
    """``sweep`` over each of ``settings`` in turn (``riskcalc sweep --clients M1,M2``), the
    rows of all in one ``SweepRows``: every setting's grid is checked and predicted before
    any is simulated (was: the command ran M1's simulation, then refused M2's prediction,
    losing M1's rows), and ``max_minutes`` bounds each setting's run."""
    method = canonical_method(method)     # the rows name pfedme for fedprox, as compare's
    kind = measure_keyword(measure, kind)
    if not isinstance(settings, (list, tuple)) or not settings:
        # [] gave no rows, silently; one Setting "'Setting' object is not iterable" (F24)
        raise ValueError("settings must be a non-empty list of Setting (sweep takes one as "
                         f"setting=), got {type(settings).__name__} {settings!r:.40}")
    plans = [_plan(method, setting, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam,
                   alpha=alpha, spectrum=spectrum, reps=reps, seed=seed, kind=kind, steps=steps,
                   step_size=step_size, route=route, n_jobs=n_jobs, scheduler=scheduler,
                   max_minutes=max_minutes, cache=cache) for setting in settings]
    rows = SweepRows()
    rows.notes = tuple(dict.fromkeys(n for plan in plans for limit in plan["limits"]
                                     for n in limit.notes))
    for plan in plans:
        rows += _rows(plan, run_tasks(replicate_task, plan["tasks"], cache=cache,
                                      n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                                      desc=f"sweep {method}", command="sweep",
                                      valid=valid_replicate))
    return rows


def cached_tasks(method: str, settings, *, cache, gamma, sigma, r=None, rho=None, lam=None,
                 alpha=None, spectrum=None, reps: int = 10, seed: int = 0,
                 measure: str | None = None, steps: int | None = None,
                 step_size: float | None = None, kind: str | None = None) -> int:
    """How many replicate tasks of ``sweep_settings`` (same arguments) the JSON-lines
    ``cache`` already holds: ``riskcalc sweep`` estimates only the others' time (a fully cached
    sweep was refused at --max-minutes for the work it would not do, so a long run resumed only
    with the limit it was started with). Nothing is predicted or simulated."""
    method = canonical_method(method)
    kind = measure_keyword(measure, kind)
    return cached_count(cache, "sweep", (
        task for setting in settings
        for task in _grid(method, setting, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam,
                          alpha=alpha, spectrum=spectrum, reps=reps, seed=seed, kind=kind,
                          steps=steps, step_size=step_size)["tasks"]), valid_replicate)


def _plan(method, setting, *, gamma, sigma, r, rho, lam, alpha, spectrum, reps, seed, kind,
          steps, step_size, route, n_jobs, scheduler, max_minutes, cache) -> dict:
    """The checked grid of one setting, its predictions and its tasks (nothing simulated);
    ``max_minutes`` bounds the tasks ``cache`` does not hold."""
    plan = _grid(method, setting, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam, alpha=alpha,
                 spectrum=spectrum, reps=reps, seed=seed, kind=kind, steps=steps,
                 step_size=step_size)
    points, reps = plan["points"], plan["reps"]
    cached = 0 if max_minutes is None else cached_count(cache, "sweep", plan["tasks"],
                                                        valid_replicate)
    check_minutes(max_minutes, len(points) * reps - cached, setting,
                  grid_values("gamma", gamma), method, n_jobs, scheduler,
                  f"{len(points)} grid points x {reps} replicates"
                  + (f" ({cached} of them in cache)" if cached else ""))
    # The predictions first: a point the theory refuses (pooled N <= d with a federated global
    # model, ...) was refused after its whole simulation had run.
    info, tune, tunings = riskcalc.get_method(method), plan["tune"], plan["tunings"]
    plan["limits"] = []
    for g, sig, s in points:
        try:
            plan["limits"].append(_limits(
                ClientSpec(method, gamma=g, sigma=s, spectrum=plan["spectrum"],
                           **{info.signal: sig, **({tune: tunings} if tune else {})}),
                setting, route, plan["steps"], plan["step_size"], tunings))
        except ValueError as exc:
            # A grid's refusal named no point (gamma 2, 5 over 3 clients: which was pooled N
            # <= d?) (fuzz41 api F15).
            if len(points) == 1:
                raise
            where = (f"gamma = {g:g}, {info.signal} = {sig:g}, sigma = {s:g}"
                     + (f", clients = {setting.clients}"
                        if setting.global_model == "federated" else ""))
            raise ValueError(f"at {where}: {exc}") from None
    return plan


def _grid(method, setting, *, gamma, sigma, r, rho, lam, alpha, spectrum, reps, seed, kind,
          steps, step_size) -> dict:
    """The checked grid of one setting and its replicate tasks (nothing predicted)."""
    federation_unused(as_setting(setting, "sweep"), method)
    reps, steps, step_size = check_run(reps, kind, steps, step_size, method)
    seed = check_seed(seed)
    info = riskcalc.get_method(method)
    given = {"r": r, "rho": rho, "lam": lam, "alpha": alpha}
    grids = {k: grid_values(k, v) for k, v in given.items()}
    tune = info.tuning
    # Validate every grid value once, through the same ClientSpec the simulation uses; the
    # spectrum as it reads it (a SPEC string, read by compare, was a Spectrum to the rows'
    # label: AttributeError after the whole grid had been simulated; fuzz39 fuzz F3).
    if isinstance(spectrum, str):   # powerlaw:P sized by setting.d, as compare's (F16)
        spectrum = riskcalc.Spectrum.parse(spectrum, d=setting.d)
    spectrum = ClientSpec(method, gamma=grid_values("gamma", gamma),
                          sigma=grid_values("sigma", sigma), spectrum=spectrum,
                          **{k: (None if v is None else grids[k])
                             for k, v in given.items()}).spectrum
    conditional_signal(kind, spectrum, setting, "sweep")
    check_memory(setting, grid_values("gamma", gamma))
    tunings = grids[tune] if tune else [0.0]
    points = list(itertools.product(grid_values("gamma", gamma), grids[info.signal],
                                    grid_values("sigma", sigma)))
    check_tasks(len(points) * reps, f"{len(points)} grid points x {reps} replicates",
                "lower reps or the grid")
    tasks, inputs = [], task_inputs(info.name, setting)    # read once, not at every point
    for g, sig, s in points:
        spec = ClientSpec(method, gamma=g, sigma=s, spectrum=spectrum,
                          **{info.signal: sig, **({tune: tunings[0]} if tune else {})})
        base = {"spec": spec_to_dict(spec), "setting": setting.as_dict(), "seed": seed,
                "kind": kind, "tunings": tunings, "steps": steps, "step_size": step_size,
                **inputs}
        tasks += [{**base, "rep": rep} for rep in range(reps)]
    return dict(method=method, setting=setting, spectrum=spectrum, reps=reps, seed=seed,
                kind=kind, points=points, tunings=tunings, tune=tune, steps=steps,
                step_size=step_size, tasks=tasks)


def _rows(plan, results) -> list:
    """The rows of one setting's grid (``_plan``) from its replicates' ``results``."""
    method, setting, reps, tunings = (plan[k] for k in ("method", "setting", "reps", "tunings"))
    info, spectrum = riskcalc.get_method(method), plan["spectrum"]
    tune = info.tuning
    label = "identity" if spectrum is None else spectrum.record()
    glob = setting.global_model if get_estimator(method).centered else "none"
    rows = []
    for i, (g, sig, s) in enumerate(plan["points"]):
        res, limit = results[i * reps:(i + 1) * reps], plan["limits"][i]
        summ = {q: summarize([x[q] for x in res], np.broadcast_to(getattr(limit, q),
                                                                   len(tunings)),
                             scale=np.broadcast_to(limit.risk, len(tunings)))
                for q in QUANTITIES}
        for k, t in enumerate(tunings):
            row = {"method": method, "gamma": g, info.signal: sig, "sigma": s}
            if tune:
                row[tune] = t
            row.update(spectrum=label, d=setting.d, n=res[0]["n"], reps=reps,
                       seed=plan["seed"], measure=plan["kind"],
                       **({} if plan["steps"] is None else
                          {"steps": plan["steps"], "step_size": plan["step_size"]}),
                       global_model=glob,
                       # The number of clients exists only for a federated global model.
                       clients=setting.clients if glob == "federated" else None)
            for q in QUANTITIES:
                row[f"predicted_{q}"] = float(np.atleast_1d(getattr(limit, q))[k])
                row[f"simulated_{q}"] = float(summ[q]["mean"][k])
                row[f"{q}_se"] = float(summ[q]["se"][k])
                row[f"{q}_rel_diff"] = none_if_nan(summ[q]["rel_diff"][k])
                row[f"{q}_inside_ci95"] = bool(summ[q]["inside"][k])
            rows.append(row)
    return rows


def _limits(spec, setting, route, steps, step_size, tunings):
    """The predictions of a grid point, one per tuning value, as ``compare`` predicts
    (``montecarlo.prediction.predicted``): the finite-M limit with a federated global model,
    the limit after ``steps`` gradient steps (paper 003, Sec. 7; was the converged limit,
    beside a simulation after the steps), all at the ratio d / n the simulation realizes (the
    row's d and n; a moved ratio is a note, ``SweepRows.notes``). Steps that no finite-step
    limit covers are refused (``compare`` predicts the converged limit there, with a note
    beside its one row; a sweep's rows, written to a file, would compare silently)."""
    if steps is not None and not (finite_steps.supports(spec) and (
            setting.spectra is None or setting.global_model != "federated")):
        raise ValueError(
            f"steps = {steps}: no finite-step limit covers {spec.method} here (they cover "
            f"{', '.join(finite_steps.METHODS)} with theta in a uniform direction, without "
            "covariate shift), and a sweep's rows would compare the simulation after the steps "
            "with the converged limit silently; compare notes it, or leave out steps")
    if steps is None and (setting.global_model != "federated"
                          or not get_estimator(spec.method).centered):
        at, moved = simulated_spec(spec, setting)     # the one vectorized solve
        limit = riskcalc.spec_limit(at, route=route)
        return replace(limit, notes=limit.notes + moved)
    tune = spec.info.tuning
    each = [predicted(replace(spec, **({tune: t} if tune else {})), route, steps, step_size,
                      setting) for t in tunings]
    return SimpleNamespace(**{q: np.array([getattr(x, q) for x in each])
                              for q in QUANTITIES},
                           notes=tuple(dict.fromkeys(n for x in each for n in x.notes)))


def write_rows(rows: list[dict], path, fmt: str | None = None) -> str:
    """Write sweep rows as CSV or JSON lines; ``fmt`` defaults from the extension
    (``.jsonl``/``.json`` in either case -> jsonl, as on the command line, otherwise csv).
    Returns the format used. No rows is a ValueError, before the file is opened; the file is
    written atomically (``riskcalc._files.atomic``): complete, or as it was. ``rows`` may be
    any iterable of dicts, their numbers numpy scalars (a generator, a numpy int64 and a folder
    for ``path`` were TypeErrors and an IsADirectoryError naming the temporary file; fuzz39
    fuzz F4). A leading ``~`` is the home folder, as on the command line."""
    path = str(file_path("path", path))
    fmt = fmt or ("jsonl" if path.lower().endswith((".jsonl", ".json")) else "csv")
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a folder, expected a file path")
    # One dict, or rows that are no dicts, were an AttributeError ('str' object has no
    # attribute 'items'); a CSV row with a column the first lacks, csv's "dict contains fields
    # not in fieldnames" naming no row (fuzz40 fuzz F6).
    if isinstance(rows, (Mapping, str, bytes)):
        raise ValueError(f"rows must be an iterable of dicts, one a row; got one "
                         f"{type(rows).__name__} (a single row goes in a list)")
    rows = list(rows)
    for j, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ValueError(f"rows must be dicts, one a row; row {j} is a "
                             f"{type(row).__name__}")
        extra = [k for k in row if k not in rows[0]]
        if fmt == "csv" and extra:
            raise ValueError(f"row {j} has column(s) {', '.join(map(str, extra))} that row 0 "
                             f"lacks: CSV rows take the first row's columns (JSON lines take "
                             "any)")
    rows = [{k: v.item() if isinstance(v, np.generic) else v for k, v in row.items()}
            for row in rows]
    if not len(rows):
        raise ValueError(f"rows is empty: nothing to write to {path} (a sweep gives a row per "
                         "grid point and tuning)")
    # Atomically (was: from Python, a failure mid-write left the file half-written; the
    # command line wrote through its own temporary file only).
    with atomic(path, "w", newline="") as fh:
        if fmt == "jsonl":
            for row in rows:
                # Standard JSON: a non-finite number (inf at gamma = 1) is null.
                fh.write(json.dumps({k: None if isinstance(v, float) and not np.isfinite(v)
                                     else v for k, v in row.items()}, allow_nan=False) + "\n")
        else:
            write_csv(rows, fh)
    return fmt


def write_csv(rows: list[dict], fh) -> None:
    """Write sweep rows as CSV to the open text file ``fh``. A number without a value (the
    standard error of a simulation past the floats, NaN; JSON lines write null) is an empty
    cell, as a missing ``rel_diff`` or ``clients`` is and as the figures' CSV writes one
    (``figures.core.Table.write``); an infinite limit stays ``inf``."""
    writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows({k: "" if isinstance(v, float) and v != v else v for k, v in row.items()}
                     for row in rows)
