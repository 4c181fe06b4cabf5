"""Work and memory estimates made before a simulation starts (issue 22: bounded work).

Every simulation of the toolkit is a list of tasks (``montecarlo.runner.tasks.run_tasks``); its cost
is the number of tasks times the cost of one, divided by the workers. This module estimates
both from the problem sizes alone, so that a command refuses, before any work, a run that would
outgrow the machine's memory or take longer than the time it was given (the comparison with
``--max-minutes``, and the stop in flight, are the command line's: ``riskcalc.cli.shared.guards``):

* bookkeeping: every task holds a dict, its key and its result in memory (``TASK_BYTES``);
* one linear replicate (``montecarlo.compare``): ``REPLICATE_SECONDS`` plus, per simulated
  client j with n_j samples, ``CLIENT_SECONDS + FLOP_SECONDS (n_j d k_j + k_j^3)``,
  k_j = min(n_j, d) (its design, the Gram matrix and its eigendecomposition), plus
  ``FLOP_SECONDS d^3`` for a federated global model. Measured on a loaded 2-core machine
  (one BLAS thread per task, as ``run_tasks`` runs them; gamma = 2): d = 100, 400, 1600 with
  one client: 7 ms, 42 ms, 3.0 s (estimated 8.8 ms, 56 ms, 3.1 s); d = 100 with 1000
  clients: 3.4 s (3.8 s); d = 400 with 100 clients: 4.4 s (5.1 s); d = 20 with 3000 clients:
  3.4 s (9.0 s). The estimates err on the long side, by at most 3x on these.
* one replicate of a preset (``montecarlo.experiments.presets``): its measured time at the preset's
  defaults (``PRESET_SECONDS``) scaled by the problem size (m (n + n_test) d for the logistic
  builders, m d^2 for the quadratic one), the grid length, the number of methods and the
  iteration counts (rounds, epochs, iterations, inner steps) relative to the defaults, and
  at least 0.2 ms an iteration at any size (``montecarlo.experiments.cost.STEP_SECONDS``),
  plus the work the iterations do not scale: a quadratic instance's construction (m d^3),
  the smoothness constants some algorithms compute and the exact minimizers (m (n d^2 + d^3)
  each; ``cost.SPECTRAL_SECONDS``, ``cost.EXACT_SECONDS``).
"""

from __future__ import annotations

import os

from riskcalc._validate import as_array, max_time, positive_int

#: Memory held per task while a run lasts (task dict, key, result, cache line), measured
#: ~2.5 KB for the linear replicates; rounded up.
TASK_BYTES = 4096
REPLICATE_SECONDS = 5e-3
CLIENT_SECONDS = 3e-3
FLOP_SECONDS = 2e-9
#: The logistic replicates' terms in d (test draws) and in n d^2 + d^3 (Newton steps):
#: ``logistic_replicate_seconds``.
LOGISTIC_D_SECONDS = 1e-4
LOGISTIC_FLOP_SECONDS = 2.5e-10
#: Seconds per replicate at the presets' defaults (measured: 10, 39 and 92 s on a loaded
#: 2-core machine).
PRESET_SECONDS = {"paper000-fig1": 10.0, "paper004-synthetic": 40.0, "paper001-fig2": 92.0}
#: Hyperparameters that multiply an algorithm's work.
ITERATIONS = ("rounds", "local_epochs", "epochs", "iterations", "inner_steps",
              "finetune_epochs", "final_epochs")


def cores() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def physical_memory() -> float:
    """Bytes of physical memory of this machine."""
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def require_memory(need: float, what: str, advice: str) -> None:
    """Raise ValueError if ``need`` bytes per replicate exceed the machine's physical memory;
    the message names ``what`` needs it and gives ``advice``."""
    total = physical_memory()
    if need > total:
        raise ValueError(f"{what} needs about {need / 2**30:.3g} GiB per replicate, more than "
                         f"this machine's {total / 2**30:.3g} GiB; {advice}")


def check_tasks(count: int, what: str, advice: str) -> None:
    """Refuse, before building the task list, more tasks than memory can hold the
    bookkeeping of (``count * TASK_BYTES`` beyond half the physical memory)."""
    need = float(count) * TASK_BYTES
    if need > physical_memory() / 2:
        raise ValueError(f"{what} make {count:.3g} tasks, whose bookkeeping alone needs about "
                         f"{need / 2**30:.3g} GiB (half this machine's memory is "
                         f"{physical_memory() / 2**31:.3g} GiB); {advice}")


def check_minutes(max_minutes, seconds: float, n_jobs, scheduler, what: str,
                  advice: str) -> None:
    """Refuse, before any work, replicates estimated at ``seconds`` of one worker's time to
    take longer than ``max_minutes`` on ``n_jobs`` workers (one with a ``scheduler``); None:
    no limit (the command line checks --max-minutes itself and passes None). The one check of
    the simulations' Python entries (``montecarlo.compare``, ``montecarlo.sweep``, the logistic
    sweep and simulators), which held two copies of it (and the logistic simulators none)."""
    if max_minutes is None:
        return
    limit = 60.0 * max_time("max_minutes", max_minutes)
    workers = 1 if scheduler is not None else min(positive_int("n_jobs", n_jobs), cores())
    total = seconds / workers
    if total > limit:
        raise ValueError(f"max_minutes = {max_minutes:g}: {what} are estimated at "
                         f"{total / 60.0:.3g} min of work on {workers} worker(s); {advice}, "
                         "or raise max_minutes (None: no limit)")


def logistic_replicate_seconds(d: int, gamma: float, lams: int = 1) -> float:
    """Estimated seconds of one replicate of ``montecarlo.logistic.ridge`` at n = d / gamma
    with ``lams`` penalties (exact Newton fits, each step an n x d Hessian product and a d x d
    solve, plus the test draws): ``lams (REPLICATE_SECONDS + LOGISTIC_FLOP_SECONDS (n d^2 +
    d^3)) + LOGISTIC_D_SECONDS d``; also the fits' share of ``logistic_pipeline_seconds``.
    Every penalty is counted as a full fit, though each starts from the previous one's
    minimizer (measured, d = 200 and 400, gamma = 1, ten lams in [0.01, 10]: 4.2x and 5.8x
    the time of one; estimated 1.3x and 1.4x that).

    Fitted to measurements (``benchmarks/bench_logistic_budget.py``; one BLAS thread, as
    ``run_tasks`` runs a task; process CPU time, median of 3 after a warm-up, on the shared
    2-core machine of this project at load 1.5-3): one ridge replicate (S = r = 1, lam = 1)
    at d = 50, 100, 200, 400, 800 x gamma = 0.25, 1, 4 and d = 1600, gamma = 1, from 5.7 ms
    (d = 50) through 0.083 s (d = 400, gamma = 0.25) to 0.93 s (d = 1600); and the pipeline
    (``logistic_pipeline_seconds``) at d = 100, 400 x gamma = 1, 4 x M = 2, 5, 20 and d = 800,
    gamma = 1, M = 5, with and without FedProx (0.41 s at d = 400, gamma = 1, M = 20; 5.0 s
    for FedProx at d = 800, M = 5). The estimates are 1.06-3.3x the measured CPU time at every
    point with d >= 200 (1.06-19x at d <= 100, where they are milliseconds: the constant
    terms); the previous model (1e-7 (n d^2 + d^3)) was 200-1100x long there. Re-measured
    with this model at load average 8.9 (six sessions on two cores, CPU time inflated ~1.5x
    by the sharing): 0.70-0.93x at d = 200-400 (oracle), 0.9-2.9x elsewhere with d >= 200;
    wall time there was 2-4x the CPU time, which no estimate from the sizes can know."""
    n = max(1.0, d / float(as_array("gamma", gamma, low=0.0, low_open=True)))
    return lams * (REPLICATE_SECONDS + LOGISTIC_FLOP_SECONDS * (n * d * d + float(d) ** 3)) \
        + LOGISTIC_D_SECONDS * d


#: Outer Newton steps of the joint FedProx solve counted as a proximal fit of every client
#: each (``logistic_pipeline_seconds``; fitted with the measurements of
#: ``logistic_replicate_seconds``).
FEDPROX_STEPS = 4


#: Seconds per node of the exact test metrics' rule, one ``population_metrics`` call of
#: ``montecarlo.logistic.pipeline`` (``Rule(kappa, NODES[-1])``: Gauss-Legendre panels along the
#: label weight beyond ``GH_REACH``): measured 1.4-3.9e-8 at ||w_i|| = 100-1691, d = 4 (1.9 s
#: a call at 1691, 5e7 nodes).
METRIC_NODE_SECONDS = 4e-8


def logistic_pipeline_seconds(d: int, gamma: float, gammas, fedprox: bool = False,
                              lams: int = 1, kappa: float | None = None) -> float:
    """Estimated seconds of one replicate of ``montecarlo.logistic.pipeline`` (``gammas``: the
    M clients' d / n_j, ``gamma`` the target's) with ``lams`` penalties: the pooled global fit
    over N = d sum_j 1 / gamma_j samples, the target's fits (one for the first penalty, two,
    fine-tuning and local ridge, for every further one) and, with ``fedprox``,
    ``FEDPROX_STEPS`` proximal fits of every client per penalty. Measured with ten lams (five
    for FedProx), d = 200 and 400, M = 5, gamma = 1: 3.6x the time of one lam (FedProx 3.5x,
    3.8x); estimated 1.9x and 1.7x that (FedProx 2.5x, 1.7x).

    ``kappa``: the target's ``||w_i||_Sigma``, whose exact test metrics are computed on a rule
    of ``rule_nodes(kappa, NODES[-1], 0, 0)`` nodes once for the global model and once per
    estimator and penalty (``METRIC_NODE_SECONDS`` a node): negligible up to ``GH_REACH``, it
    was the whole replicate at ||w_i|| = 1691 (12 s at d = 4, estimated at milliseconds);
    None: not counted."""
    gammas = [float(g) for g in gammas]
    pooled = 1.0 / sum(1.0 / g for g in gammas)
    seconds = (logistic_replicate_seconds(d, gamma, lams=2 * lams - 1)
               + logistic_replicate_seconds(d, pooled))
    if fedprox:
        seconds += FEDPROX_STEPS * sum(logistic_replicate_seconds(d, g, lams=lams)
                                       for g in gammas)
    if kappa is not None:
        from riskcalc.logistic.engine.gaussian import NODES, rule_nodes

        calls = 1 + (3 if fedprox else 2) * lams
        seconds += calls * METRIC_NODE_SECONDS * rule_nodes(kappa, NODES[-1], 0.0, 0.0)
    return seconds
