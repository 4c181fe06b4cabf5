"""Simulation cost of the paper 003 theorem figures: the current code against the previous one.

Collects the replicate tasks of a figure (``figures/p003_thm*.py``, without drawing it), runs
the first ``--reps`` replicates of every point in this process with one BLAS thread (what
each of joblib's workers has on a 2-core machine) and prints the time of

* baseline: the code before the speed-ups, rebuilt here: every client decomposed through
  its n x n matrix X X^T (even when n > d), the global systems accumulated by general
  products V^T diag(w) V, and one task per point of the figure (a point of a lam = 0.1 curve,
  of a lam = 1 curve and of a lam sweep at the same gamma each decomposing the same
  instance);
* current: ``montecarlo.linear.measure`` as is (the d x d Gram matrix when n > d, symmetric rank-k
  updates) and ``figures.linear.simulate``'s tasks (points sharing an instance share a task);

their ratio, and the largest relative difference between the two answers (rounding only).
Run: ``python benchmarks/bench_figures.py [p003-thm4-pfedme ...] [--reps 1]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk
from threadpoolctl import threadpool_limits

import figures
import figures.linear as fl
import montecarlo.linear.decomposition as dm
import montecarlo.linear.measure as mm
from figures.core import Context
from montecarlo.compare import replicate_task, spec_to_dict

FIGURES = ("p003-thm4-pfedme", "p003-thm3-maml", "p003-thm2-rtfa")


class OldDecomposition(dm.Decomposition):
    """The previous decomposition: always the n x n eigenproblem of X X^T."""

    def __init__(self, X, s):
        self.X, self.s = X, s
        n, d = X.shape
        ev, U = sla.eigh(dsyrk(1.0, X.T, trans=1), lower=False, driver="evd",
                         overwrite_a=True, check_finite=False)
        keep = ev > ev[-1] * max(n, d) * np.finfo(float).eps
        self.n, self.mu, self._U = n, ev[keep] / n, U[:, keep]
        self._V = self._R = None


def old_accumulate(decs, weights):
    """The previous accumulation: general products V^T (w V)."""
    d = decs[0].X.shape[1]
    out = [np.zeros((d, d)) for _ in weights[0]]
    block, wblock, rows = [], [], 0

    def flush():
        V = np.vstack(block)
        for q, acc in enumerate(out):
            w = np.concatenate([wb[q] for wb in wblock])
            acc += V.T @ (w[:, None] * V)

    for dec, w in zip(decs, weights):
        block.append(dec.V)
        wblock.append(w)
        rows += dec.V.shape[0]
        if rows >= mm._CHUNK_ROWS:
            flush()
            block, wblock, rows = [], [], 0
    if block:
        flush()
    return out


class _Collect(Context):
    """A figure context that records the tasks instead of running them."""

    def run(self, fn, tasks, desc=""):
        self.tasks = list(tasks)
        return [{"bias": [0.0] * len(t["tunings"]), "variance": [0.0] * len(t["tunings"]),
                 "risk": [1.0] * len(t["tunings"]), "n": 1} for t in tasks]


def figure_points(fig_id):
    """The ``simulate`` points of a figure (its full-mode grid)."""
    seen = []
    real = fl.simulate

    def spy(ctx, points, reps, desc="replicates"):
        seen.append((list(points), reps))
        return real(_Collect(ctx.fig_id), points, reps, desc)

    fl.simulate = spy
    try:
        figures.load_all()[fig_id].make(_Collect(fig_id))
    finally:
        fl.simulate = real
    (points, reps), = seen
    return points, reps


def old_tasks(points, reps, seed=0):
    tasks = []
    for spec, tunings, setting, steps, step_size in points:
        base = {"spec": spec_to_dict(spec), "setting": setting.as_dict(), "seed": seed,
                "kind": "conditional", "tunings": [float(t) for t in tunings],
                "steps": steps, "step_size": step_size}
        tasks += [{**base, "rep": rep} for rep in range(reps)]
    return tasks


def new_tasks(points, reps):
    ctx = _Collect("bench")
    with warnings.catch_warnings():  # summarizing the placeholder results of one replicate
        warnings.simplefilter("ignore", RuntimeWarning)
        fl.simulate(ctx, points, reps)
    return ctx.tasks


def values(tasks, results, points, reps):
    """risk per (point, rep, tuning), looked up by task content."""
    table = {}
    for t, r in zip(tasks, results):
        for k, tun in enumerate(t["tunings"]):
            key = (str({**t["spec"], "lam": None, "alpha": None}), str(t["setting"]),
                   t["rep"], tun)
            table[key] = (r["bias"][k], r["variance"][k], r["risk"][k])
    out = []
    for spec, tunings, setting, *_ in points:
        sd = {**spec_to_dict(spec), "lam": None, "alpha": None}
        for rep in range(reps):
            for tun in tunings:
                out.append(table[(str(sd), str(setting.as_dict()), rep, float(tun))])
    return np.array(out)


def run(tasks):
    t = time.perf_counter()
    res = [replicate_task(task) for task in tasks]
    return time.perf_counter() - t, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="*", default=list(FIGURES))
    ap.add_argument("--reps", type=int, default=1, help="replicates per point (default 1)")
    args = ap.parse_args(argv)
    for fig_id in args.ids:
        points, full_reps = figure_points(fig_id)
        olds, news = old_tasks(points, args.reps), new_tasks(points, args.reps)
        with threadpool_limits(1):
            saved = dm.Decomposition, mm._accumulate
            dm.Decomposition, mm._accumulate = OldDecomposition, old_accumulate
            try:
                t_old, r_old = run(olds)
            finally:
                dm.Decomposition, mm._accumulate = saved
            t_new, r_new = run(news)
        a, b = values(olds, r_old, points, args.reps), values(news, r_new, points, args.reps)
        rel = np.max(np.abs(a - b) / np.abs(a))
        print(f"{fig_id}: {args.reps} of {full_reps} replicates, {len(olds)} -> {len(news)} "
              f"tasks: baseline {t_old:7.2f} s, current {t_new:7.2f} s, ratio "
              f"{t_old / t_new:5.2f}x; max relative difference {rel:.1e}", flush=True)


if __name__ == "__main__":
    main()
