"""The estimated cost of one replicate of a preset (the cost model of
``montecarlo.runner.budget``'s module docstring, with its constants), kept beside the presets
and algorithms it inspects so that the runner imports no experiment."""

from __future__ import annotations

import inspect

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.experiments.presets import BUILDERS, PRESETS
from montecarlo.runner.budget import ITERATIONS, PRESET_SECONDS

#: Seconds of one iteration (a round, epoch or inner step of one method at one grid value)
#: whatever the size: measured 75-100 us at m = d = 2 (paper001-fig2's APGD1, paper004's
#: FedAvg rounds with n = n_test = 2); 2x that. Below the presets' recorded times at their
#: defaults (8.4 s of paper000-fig1's 10 s), which include it.
STEP_SECONDS = 2e-4


def preset_replicate_seconds(spec: dict) -> float:
    """Estimated seconds of one replicate of a resolved preset (``presets.resolve``)."""
    base = PRESETS[spec["preset"]]

    def size(builder, params):
        full = {k: v.default for k, v in inspect.signature(BUILDERS[builder]).parameters.items()}
        full.update(params)
        m, d = float(full["m"]), float(full["d"])
        if builder == "quadratic":
            return m * d * d
        return m * (float(full["n"]) + float(full["n_test"])) * d

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
    # At least each iteration's fixed cost, which the size does not scale: at m = d = 2
    # (n = 2) apgd1.iterations=1e9 was estimated at 164 s and global.rounds=1e9 at 6 s, for
    # about a day each.
    return max(PRESET_SECONDS.get(spec["preset"], 60.0) * ratio,
               STEP_SECONDS * points * iterations(spec["methods"]))
