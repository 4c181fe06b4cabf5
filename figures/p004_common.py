"""Shared experiment of the paper 004 figures (``004_98172ed3646eef14.txt``, Sec. 6.1, App. C)
as the authors ran it: ``montecarlo.experiments.paper004.AUTHORS_PRESETS`` (re-implemented from
github.com/ZLHe0/fedprox-bilevel, ``src/simulation/simulation_main.py`` and
``notebooks/simulation_main_*.ipynb``), each FedProx run both "as run" (the published code:
w_g = mean of the client models) and "as described" (Alg. 1's server step).

In that experiment every R gives the same training data (``same_training_data``): R only scales
the true models the error is measured against. Each method is therefore trained once and its
models are scored against every R's true models, which is exactly what the authors' per-R runs
compute."""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.paper004 import (AUTHORS_L, AUTHORS_PRESETS, authors_data,
                                             authors_errors, authors_floor, authors_run)
from montecarlo.runner.tasks import run_tasks
from riskcalc.papers import cite

P004 = cite("004")
STAT = AUTHORS_PRESETS["paper004-authors"]
FEDPROX_STEPS = f"local 1/(L + λ), global γ = 1/λ + 1/L, L = {AUTHORS_L}"

NOTES = [
    "Setup of the authors' code (ZLHe0/fedprox-bilevel): W_k ~ N(0, R²) entrywise of shape "
    "(classes, d) (R is numpy's standard deviation), v_k ~ N(0, I), X_k ~ N(v_k, diag(j^-1.2)), "
    "labels argmax of X_k W_k^T (no noise), features divided by their per-client standard "
    "deviation (not centred), first sample dropped (CSV read back with a header row: n - 1 = "
    "199 used), start w ~ randn(d, classes) with seed 1, no ridge, no intercept.",
    "Every R gives the same training data (each client's seed is its index; labels are "
    "invariant to scaling W_k): R only scales the target. Each client's classes are separable, "
    "so LocalTrain's objective has no minimizer: its curve is the distance of the models after "
    "the stated number of steps, which grows without bound along the separating direction, and "
    "depends on the optimization horizon. The pooled data are not separable (a linear program "
    "is infeasible), so GlobalTrain's minimizer exists, and so do FedProx's for every λ > 0 "
    "(the proximal term bounds the clients' spread): those curves approach the minimizers' "
    "errors (paper_checks 004.sec61.statistical-error).",
    "The published code's `if args.method == \"FedAvg\" or \"LocalTrain\":` is always true: "
    "its FedProx never takes the server step (w_g = mean of all client models). 'as run' "
    "reproduces that, 'as described' takes Alg. 1's step w_g ← w_g − γλ mean(w_g − w_i).",
    "Plotted as the authors plot: norms ||·||_F, not the squared norms Sec. 6.1 defines; the "
    "global error compares the global model in standardized coordinates with the unscaled true "
    "mean (the code does not unscale it); the local one unscales each client's model.",
    "Dashed grey 'floor': an exact lower bound for every method: with 2 classes the column "
    "sum of every model stays at the random start's (gradients have zero row sums), so the "
    "error along (1, 1)/√2 is fixed and grows with R (montecarlo.experiments.paper004.authors_floor).",
]


def stat_settings(ctx) -> dict:
    """The stat notebook's budgets (quick: CI mode, shorter horizons, stated in captions)."""
    return {"R": ctx.pick(STAT["R"][::3], STAT["R"]),
            "rounds": ctx.pick(25, STAT["rounds"]),
            "local_epochs": ctx.pick(30, STAT["local_epochs"]),
            "local_rounds": ctx.pick(25, STAT["local_rounds"]),
            "lr_localtrain": ctx.pick(0.01, STAT["lr_localtrain"]), "lams": STAT["lams"]}


def stat_runs(s: dict) -> list[dict]:
    """The runs of the stat notebook: (key, label, authors_run keyword arguments)."""
    runs = [("global", "GlobalTrain (FedAvg)", dict(method="FedAvg", rounds=s["rounds"])),
            ("local", "LocalTrain", dict(method="LocalTrain", rounds=s["local_rounds"],
                                         lr=s["lr_localtrain"]))]
    for variant in ("as-run", "as-described"):
        runs += [(f"fedprox_{lam:g}_{variant}", f"FedProx λ = {lam:g} ({variant})",
                  dict(method="FedProx", lam=lam, rounds=s["rounds"], variant=variant))
                 for lam in s["lams"]]
    return runs


def stat_task(task: dict) -> dict:
    """One run of the stat experiment scored against every R: per-round ATR and ITR (lists
    over R of lists over rounds) and the final lam."""
    data = [authors_data(R) for R in task["R"]]
    out = authors_run(data[0], local_epochs=task["local_epochs"], **task["run"])
    atr, itr = zip(*(authors_errors(ds, out["G"], out["W"]) for ds in data))
    return {"atr": [list(a) for a in atr], "itr": [list(i) for i in itr], "lam": out["lam"]}


def run_stat(ctx, s: dict, runs: list) -> dict:
    """key -> result of ``stat_task``, cached per run in one file shared by the figures that
    draw these runs (p004-fig1a, -fig1d, -fig3)."""
    tasks = [{"R": list(s["R"]), "local_epochs": s["local_epochs"], "run": kw}
             for _, _, kw in runs]
    results = run_tasks(stat_task, tasks, cache=ctx.cache("paper004-authors"),
                        n_jobs=ctx.n_jobs, progress=ctx.progress,
                        desc=f"{ctx.fig_id} authors' runs")
    return {key: res for (key, _, _), res in zip(runs, results)}


def floors(R_values) -> np.ndarray:
    """(len(R), 2): the exact (ATR, ITR) floor at every R."""
    return np.array([authors_floor(authors_data(R)) for R in R_values])


def caption_params(s: dict, *, m=10, n=200) -> dict:
    return {"m (clients)": m, "n (samples per client, 199 used)": n, "d": 10, "classes": 2,
            "R (std of W_k entries)": s["R"],
            "FedProx": f"{s.get('rounds')} rounds × {s['local_epochs']} local GD steps, "
            + FEDPROX_STEPS, "reps": 1}
