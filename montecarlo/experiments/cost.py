"""The estimated cost of one replicate of a preset (the cost model of
``montecarlo.runner.budget``'s module docstring, with its constants), kept beside the presets
and algorithms it inspects so that the runner imports no experiment."""

from __future__ import annotations

import inspect

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.experiments.presets import BUILDERS, PRESETS
from montecarlo.runner.budget import ITERATIONS, PRESET_SECONDS, physical_memory

#: Seconds of one iteration (a round, epoch or inner step of one method at one grid value)
#: whatever the size: measured 75-100 us at m = d = 2 (paper001-fig2's APGD1, paper004's
#: FedAvg rounds with n = n_test = 2); 2x that. Below the presets' recorded times at their
#: defaults (8.4 s of paper000-fig1's 10 s), which include it.
STEP_SECONDS = 2e-4


#: Seconds per unit m (n d^2 + d^3) of the exact minimizer of one method's objective at one
#: grid value (``exact=true``: damped Newton on d x d Hessians,
#: ``montecarlo.experiments.objectives.minimize``), ``FEDPROX_FACTOR`` times that for a FedProx
#: objective (0 < lam < inf: a prox solve within each outer step). Measured with n = 20 (a
#: loaded 2-core machine, one BLAS thread): local at d = 400, m = 4 and d = 800, m = 2: 0.44
#: and 0.85 s (estimated 0.54 and 2.1 s); FedAvg's 0.27 and 0.8 s (the same); FedProx at m = 2,
#: d = 400 and 800: 0.82 and 4.3 s (1.1 and 8.4 s). The iteration scaling below missed it:
#: paper004-synthetic at d = 800 was estimated at 0.001 s and took 16 s.
EXACT_SECONDS = 2e-9
FEDPROX_FACTOR = 4.0
#: Seconds per unit m d^3 of building a quadratic instance (two d x d orthogonal factors and
#: their product per client, built twice), and per unit m (n d^2 + d^3) of the clients'
#: smoothness that the algorithms of ``SPECTRAL`` compute once per call (Gram matrices and
#: their top eigenvalue; n = d for a quadratic client). Measured (wall, loaded machine):
#: paper001-fig2 at m = 2, one iteration, d = 400 and 800: 0.9 and 5.4 s (estimated 0.8 and
#: 7.1 s; it was 0.05 s at d = 800); paper004-synthetic without exact minimizers, m = 2,
#: n = 20, one round, d = 800 and 1600: 0.81 and 5.75 s (1.6 and 12.5 s; it was 0.001 s).
QUADRATIC_SECONDS = 5e-9
SPECTRAL_SECONDS = 5e-10
SPECTRAL = ("fedprox_bilevel", "pfedme", "apgd1", "apgd2", "l2gd")


def preset_replicate_seconds(spec: dict) -> float:
    """Estimated seconds of one replicate of a resolved preset (``presets.resolve``): the
    measured time at the defaults scaled by sizes and iterations (at least ``STEP_SECONDS`` an
    iteration), plus what does not scale with the iterations: a quadratic instance's
    construction, the smoothness constants and the exact minimizers (``QUADRATIC_SECONDS``,
    ``SPECTRAL_SECONDS``, ``EXACT_SECONDS``)."""
    base = PRESETS[spec["preset"]]

    def sizes(builder, params):
        """m, n (d for a quadratic client's d x d design), d and n_test (0 for one)."""
        full = {k: v.default for k, v in inspect.signature(BUILDERS[builder]).parameters.items()}
        full.update(params)
        return tuple(float(full.get(k, full["d"] if k == "n" else 0.0))
                     for k in ("m", "n", "d", "n_test"))

    def size(builder, params):
        m, n, d, n_test = sizes(builder, params)
        return m * d * d if builder == "quadratic" else m * (n + n_test) * d

    def grid(params, values, name):
        return max(np.size(params[name]) if name in params else len(values), 1)

    def iterations(methods):
        total = 0.0
        for algo, hyper in methods.values():
            sig = inspect.signature(ALGORITHMS[algo]).parameters
            work = 1.0
            for k in ITERATIONS:
                if k in sig:
                    v = hyper.get(k, sig[k].default)
                    work *= max(float(v), 1.0) if isinstance(v, (int, float)) else 1.0
            total += work
        return total

    default_methods = {k: list(v) for k, v in base.methods.items()}
    points = grid(spec["params"], spec["grid_values"], spec["grid"])
    ratio = (size(spec["builder"], spec["params"]) / size(base.builder, base.params)
             * points / grid(base.params, base.grid_values, base.grid)
             * iterations(spec["methods"]) / iterations(default_methods))
    m, n, d, _ = sizes(spec["builder"], spec["params"])
    quadratic = spec["builder"] == "quadratic"
    calls = points if spec["grid"] not in spec["params"] else 1    # a hyperparameter's grid
    fixed = (QUADRATIC_SECONDS * m * d ** 3 if quadratic else 0.0) + sum(
        SPECTRAL_SECONDS * calls * m * (n * d * d + d ** 3)
        for algo, _ in spec["methods"].values() if algo in SPECTRAL)
    if spec["exact"] and not quadratic:    # a quadratic's is closed-form
        weight = sum(FEDPROX_FACTOR if _prox(spec, algo, hyper) else 1.0
                     for algo, hyper in spec["methods"].values())
        fixed += EXACT_SECONDS * points * weight * m * (n * d * d + d ** 3)
    # At least each iteration's fixed cost, which the size does not scale: at m = d = 2
    # (n = 2) apgd1.iterations=1e9 was estimated at 164 s and global.rounds=1e9 at 6 s, for
    # about a day each.
    return fixed + max(PRESET_SECONDS.get(spec["preset"], 60.0) * ratio,
                       STEP_SECONDS * points * iterations(spec["methods"]))


def _prox(spec: dict, algo: str, hyper: dict) -> bool:
    """Whether a method's objective is FedProx's with 0 < lam < inf (its own lam, its
    algorithm's default, or the grid's when the grid is lam)."""
    sig = inspect.signature(ALGORITHMS[algo]).parameters
    if "lam" not in sig:
        return False
    if spec["grid"] == "lam" and "lam" not in spec["params"]:
        return True
    lam = hyper.get("lam", sig["lam"].default)
    return isinstance(lam, (int, float)) and 0.0 < float(lam) < float("inf")


#: Memory of one row of ``run_preset`` (a dict of ``COLUMNS``) while the run lasts: measured
#: 1.3-1.6 KB (paper001-fig2, m = d = 2, 100 lams, --trajectory: 400,000 rows, 624 MB).
ROW_BYTES = 2048


def check_rows(spec: dict, reps: int, trajectory: bool, option: str = "") -> None:
    """ValueError, before any work, where the rows of ``reps`` replicates of a resolved preset
    would fill more than half the machine's memory: one per grid value, method and, with
    ``trajectory``, checkpoint (the largest iteration count over ``record_every``). At m = d =
    2 a run of 1000 lams with --trajectory fitted the time limit and made 4 million rows, about
    6 GB, unchecked. ``option``: the prefix of the names in the message (``--``)."""
    points = max(np.size(spec["params"].get(spec["grid"], spec["grid_values"])), 1)
    rows = 0
    for algo, hyper in spec["methods"].values():
        sig = inspect.signature(ALGORITHMS[algo]).parameters
        steps = [hyper.get(k, sig[k].default) for k in ITERATIONS if k in sig]
        steps = max([float(v) for v in steps if isinstance(v, (int, float))] or [1.0])
        every = hyper.get("record_every", sig["record_every"].default
                          if "record_every" in sig else 1)
        rows += steps // max(float(every), 1.0) + 1 if trajectory else 1
    rows *= points * reps
    half = physical_memory() / 2
    if rows * ROW_BYTES > half:
        raise ValueError(f"{reps} replicate(s) of {spec['preset']} make about {rows:.3g} rows"
                         + (" (one per checkpoint)" if trajectory else "") + ", which need "
                         f"about {rows * ROW_BYTES / 2**30:.3g} GiB of memory (half this "
                         f"machine's is {half / 2**30:.3g} GiB); lower {option}reps, the grid "
                         "or the iteration counts" + (f", or leave out {option}trajectory"
                                                      if trajectory else ""))
