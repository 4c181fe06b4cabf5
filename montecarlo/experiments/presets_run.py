"""Running the named simulation presets (``montecarlo.experiments.presets``): replicates, their
rows and the summary over replicates.

One replicate of a preset is one task of ``montecarlo.runner.tasks.run_tasks``: it carries
everything its random numbers depend on (``seed``, ``rep``), so results do not depend on the
number of workers, and a cache file makes a long run resumable. ``run_preset`` resolves a
preset's overrides (``presets.resolve``), runs ``reps`` replicates (``run_rep``) and returns one
row per replicate x grid value x method x reported checkpoint (``COLUMNS``); ``summarize``
gives the mean and standard error of a column over replicates.
"""

from __future__ import annotations

import inspect
from dataclasses import replace

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.experiments.cost import check_rows
from montecarlo.experiments.metrics import evaluate, exact_solution, rounds_to_accuracy
from montecarlo.experiments.presets import BUILDERS, resolve
from montecarlo.runner.budget import check_tasks
from montecarlo.runner.seeding import check_seed
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks
from montecarlo.runner.threads import small_blas
from riskcalc._validate import flag, positive_int



def run_rep(task: dict) -> dict:
    """One replicate of a resolved preset (the ``run_tasks`` worker): builds the instance,
    runs every method, and returns ``{"rows": [...]}`` (one row per grid point x method x
    reported checkpoint)."""
    # Batches of small matrices only (per-client d x d Hessians, m x d gradients).
    with small_blas():
        return _run_rep(task)


def _run_rep(task):
    seed, rep = task["seed"], task["rep"]
    params = dict(task["params"])
    batched = task["grid"] in params
    if batched:
        # A single grid value (``--set R=5``) is a grid of one: the instance keeps its batch axis.
        params[task["grid"]] = np.atleast_1d(np.asarray(params[task["grid"]], float))
    inst = BUILDERS[task["builder"]](**params, seed=seed, rep=rep)
    values = params[task["grid"]] if batched else np.asarray(task["grid_values"], float)
    rows, cache = [], {}
    for label, (algo, hyper) in task["methods"].items():
        fn = ALGORITHMS[algo]
        extra = {k: v for k, v in (("seed", seed), ("rep", rep))
                 if k in inspect.signature(fn).parameters}
        runs = ([(slice(None), dict(hyper))] if batched else
                [(j, dict(hyper, **{task["grid"]: float(v)})) for j, v in enumerate(values)])
        for where, hp in runs:
            try:
                traj = fn(inst, **hp, **extra)
            except ValueError as exc:
                # Named: "batch_size must lie in [1, n] = [1, 10] ..., got 16" for
                # paper000-fig1 with --set n=10 named neither the method nor that 16 is its
                # algorithm's default, which the user never set.
                raise ValueError(f"method {label} (algorithm {algo}, {_shown(hp)}): {exc}; "
                                 f"change it with --set {label}.PARAM=VALUE (or *.PARAM for "
                                 "every method)") from None
            exact = None
            if task["exact"]:
                key = (traj.objective, traj.lam)
                if key not in cache:
                    cache[key] = exact_solution(traj, inst)
                exact = cache[key]
            picks = (np.arange(len(traj.rounds)) if task["trajectory"]
                     else np.array([len(traj.rounds) - 1]))
            met = evaluate(traj, inst, exact=exact, checkpoints=picks)
            target = (rounds_to_accuracy(traj, exact, task["target"])
                      if task["target"] and exact is not None else None)
            if target is not None:
                # Not reached because diverged: NaN, "diverged" (was inf, "not reached ...
                # allow more iterations" for paper001-fig2's apgd2.L=0.5; fuzz42 sim F7).
                target = np.where(np.isinf(target) & met["diverged"][-1], np.nan, target)
            exact_met = (evaluate(_as_trajectory(traj, exact), inst, checkpoints=[0])
                         if exact is not None else None)
            rows += _rows(task, label, algo, values, where, batched, met, target, exact_met,
                          picks)
    return {"rows": rows}


def _as_trajectory(traj, exact):
    return replace(traj, local=exact[1][None], global_model=exact[0][None],
                   rounds=traj.rounds[:1], grad_evals=traj.grad_evals[:1],
                   prox_evals=traj.prox_evals[:1])


COLUMNS = ("preset", "rep", "grid", "value", "method", "algorithm", "checkpoint", "rounds",
           "grad_evals", "prox_evals", "accuracy", "aer", "ier_max", "local_stat_err",
           "local_stat_err_max", "global_stat_err", "local_opt_err", "global_opt_err",
           "exact_local_stat_err", "exact_global_stat_err", "exact_aer", "rounds_to_target")


def _rows(task, label, algo, values, where, batched, met, target, exact_met, checkpoints):
    rows = []
    grid_idx = range(len(values)) if batched else [where]
    ks = range(len(met["rounds"]))
    for j in grid_idx:
        sel = (lambda a, k: a[k][j]) if batched else (lambda a, k: a[k])
        for k in ks:
            row = {"preset": task["preset"], "rep": task["rep"], "grid": task["grid"],
                   "value": float(values[j]), "method": label, "algorithm": algo,
                   "checkpoint": int(checkpoints[k]),
                   "rounds": int(met["rounds"][k]), "grad_evals": float(met["grad_evals"][k]),
                   "prox_evals": float(met["prox_evals"][k])}
            for col, src in (("accuracy", "accuracy_mean"), ("aer", "aer"),
                             ("ier_max", "ier_max"), ("local_stat_err", "local_stat_err_mean"),
                             ("local_stat_err_max", "local_stat_err_max"),
                             ("global_stat_err", "global_stat_err"),
                             ("local_opt_err", "local_opt_err_mean"),
                             ("global_opt_err", "global_opt_err")):
                row[col] = float(sel(met[src], k))
            nan = float("nan")
            row["exact_local_stat_err"] = (float(sel(exact_met["local_stat_err_mean"], 0))
                                           if exact_met else nan)
            row["exact_global_stat_err"] = (float(sel(exact_met["global_stat_err"], 0))
                                            if exact_met else nan)
            row["exact_aer"] = float(sel(exact_met["aer"], 0)) if exact_met else nan
            row["rounds_to_target"] = (float(target[j] if batched else target)
                                       if target is not None else nan)
            rows.append(row)
    return rows


def run_preset(name: str, overrides: dict | None = None, *, reps: int = 1, seed: int = 0,
               trajectory: bool = False, n_jobs: int = 1, scheduler: str | None = None,
               cache=None, progress: bool = False) -> list:
    """Run ``reps`` replicates of a preset and return all rows (see ``COLUMNS``).

    Parameters
    ----------
    name : str
        A key of ``PRESETS``.
    overrides : dict, optional
        Settings (``presets`` module docstring).
    reps : int
        Replicates, >= 1 (replicate ``r`` uses ``replicate_rng(seed, r, ...)``).
    seed : int
        Non-negative experiment seed.
    trajectory : bool
        Report every checkpoint instead of the final one.
    n_jobs, scheduler, cache, progress
        Passed to ``montecarlo.runner.tasks.run_tasks``.

    Returns
    -------
    list of dict
        Rows with the keys ``COLUMNS``; NaN where a metric does not apply.
    """
    results = run_tasks(run_rep, preset_tasks(name, overrides, reps=reps, seed=seed,
                                              trajectory=trajectory),
                        cache=cache, n_jobs=n_jobs, scheduler=scheduler, progress=progress,
                        desc=name, command="simulate", valid=valid_rows)
    return [row for res in results for row in res["rows"]]


def valid_rows(task: dict, result) -> bool:
    """Whether a cached ``result`` has the layout ``run_rep`` returns, ``{"rows": [...]}``
    with every ``COLUMNS`` key in each row (``run_tasks(valid=)``: another layout reruns)."""
    rows = result.get("rows") if isinstance(result, dict) else None
    return isinstance(rows, list) and all(isinstance(row, dict) and set(COLUMNS) <= row.keys()
                                          for row in rows)


def preset_tasks(name: str, overrides: dict | None = None, *, reps: int = 1, seed: int = 0,
                 trajectory: bool = False) -> list:
    """The replicate tasks of ``run_preset`` (same arguments), checked, nothing run: also
    what ``riskcalc simulate`` looks up in its --cache, to time only the others."""
    spec = resolve(name, overrides)
    reps, seed = positive_int("reps", reps), check_seed(seed)
    trajectory = flag("trajectory", trajectory)     # "no" and 2 were read as True
    check_tasks(reps, f"{reps} replicates", "lower reps")
    check_rows(spec, reps, trajectory)
    return [dict(spec, seed=seed, rep=r, trajectory=trajectory) for r in range(reps)]


def summarize(rows, column: str = "accuracy") -> dict:
    """Mean and standard error of ``column`` over replicates, keyed by (method, grid value),
    at the final checkpoint of each run (rows come in checkpoint order, the last one wins)."""
    groups = {}
    for row in rows:
        groups.setdefault((row["method"], row["value"]), {})[row["rep"]] = row[column]
    out = {}
    for key, by_rep in groups.items():
        vals = np.array(list(by_rep.values()), float)
        mean, se = mean_se(vals) if len(vals) > 1 else (vals.mean(), float("nan"))
        out[key] = (float(mean), float(se))
    return out


def _shown(hyper: dict) -> str:
    """A method's settings as given (its algorithm's defaults for the others)."""
    if not hyper:
        return "its defaults"
    return ", ".join([f"{k}={v}" for k, v in hyper.items()] + ["its defaults otherwise"])
