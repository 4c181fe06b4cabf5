"""Work and memory estimates made before a simulation starts (issue 22: bounded work).

Every simulation of the toolkit is a list of tasks (``montecarlo.runner.tasks.run_tasks``); its cost
is the number of tasks times the cost of one, divided by the workers. This module estimates
both from the problem sizes alone, so that a command refuses, before any work, a run that would
outgrow the machine's memory or take longer than the time it was given (the comparison with
``--max-minutes``, and the stop in flight, are the command line's: ``riskcalc.cli.guards``):

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
  iteration counts (rounds, epochs, iterations, inner steps) relative to the defaults.
"""

from __future__ import annotations

import os

from riskcalc._validate import as_array

#: Memory held per task while a run lasts (task dict, key, result, cache line), measured
#: ~2.5 KB for the linear replicates; rounded up.
TASK_BYTES = 4096
REPLICATE_SECONDS = 5e-3
CLIENT_SECONDS = 3e-3
FLOP_SECONDS = 2e-9
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


def check_tasks(count: int, what: str, advice: str) -> None:
    """Refuse, before building the task list, more tasks than memory can hold the
    bookkeeping of (``count * TASK_BYTES`` beyond half the physical memory)."""
    need = float(count) * TASK_BYTES
    if need > physical_memory() / 2:
        raise ValueError(f"{what} make {count:.3g} tasks, whose bookkeeping alone needs about "
                         f"{need / 2**30:.3g} GiB (half this machine's memory is "
                         f"{physical_memory() / 2**31:.3g} GiB); {advice}")


def logistic_replicate_seconds(d: int, gamma: float) -> float:
    """Estimated seconds of one replicate of ``montecarlo.logistic.ridge`` (exact Newton
    solves: a few tens of d x d systems built from n x d data): ``REPLICATE_SECONDS`` plus
    ``1e-7 (n d^2 + d^3)``. Measured: d = 50, 200, 400 at gamma = 2: 0.06, 1.8 (first call),
    2.7 s; estimated 0.02, 1.2, 9.6 s."""
    n = max(1.0, d / float(as_array("gamma", gamma, low=0.0, low_open=True)))
    return REPLICATE_SECONDS + 1e-7 * (n * d * d + float(d) ** 3)
