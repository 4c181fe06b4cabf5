"""Peak memory of the rounds routes under a two-point spectrum against their estimates
(``riskcalc.linear.dynamics.sigma.memory``, refused beyond ``budget.MAX_GIGABYTES``).

One case per process (the peak resident memory ``ru_maxrss`` only grows): the process's peak
after ``rounds_limit`` minus its value after the imports (the interpreter, numpy and riskcalc,
about 85 MB, which the estimates do not count), with the budgets lifted so that any case runs;
also the process CPU against the time estimate that guards the route.

Clients gamma = 0.5, 2, 4, 1.5, 3, 0.8, 2.5, 6, 1.2, 5 (repeated beyond 10), sample weights,
r and sigma spread from 0.3 to 0.9 and 0.4 to 1, signal 1.2, spectrum {0.5, 3} (weights 0.3,
0.7), rounds 0, 1, 3, 10, T, inf. FedAvg: eta at 0.8 of the local stability edge, g = 1;
Algorithm 1 (``pfedme``): lam = 0.8, eta at 0.9 of Thm 2's bound 1 / (L + lam), g lam = 1.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_memory.py METHOD M K T [own] [atoms=A]``
(one line of JSON; ``own``: FedAvg's own models, ``local_risk``, too; ``atoms=A``: A evenly
spaced eigenvalues over [0.5, 3] instead of the two-point spectrum). The estimate printed is
the largest that the run's memory checks computed (``memory.estimate``). The measured lines and
the fit: ``sigma.memory``'s docstring.
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

import riskcalc
from riskcalc.linear.dynamics.fedavg import _contour, round_horizon
from riskcalc.linear.dynamics.sigma import memory
from riskcalc.linear.dynamics.sigma.algorithm1.cost import alg1_chain_seconds
from riskcalc.linear.dynamics.sigma.chain_cost import chain_seconds
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])


def _peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0


def run(method, M, K, T, own=False, atoms=None):
    """One line: measured peak (added to the process) and CPU against the estimates."""
    spec = SPEC if atoms is None else riskcalc.Spectrum.from_eigenvalues(
        np.linspace(0.5, 3.0, atoms))
    gam = np.array([0.5, 2.0, 4.0, 1.5, 3.0, 0.8, 2.5, 6.0, 1.2, 5.0] * 3)[:M]
    top = stable_top(spec.atoms, spec.weights, gam).max()
    kw = dict(gamma=gam, r=np.linspace(0.3, 0.9, M), sigma=np.linspace(0.4, 1.0, M),
              signal=1.2, rounds=sorted({0, 1, 3, 10, T}) + [np.inf], local_steps=K,
              spectrum=spec, weights="samples", max_seconds=1e9, max_gigabytes=1e6)
    if method == "fedavg":
        kw.update(step_size=0.8 * 2.0 / top)
    else:
        kw.update(step_size=0.9 / (top + 0.8), lam=0.8, global_step=1.0 / 0.8)
    estimates = []
    estimate = memory.estimate

    def recorded(*args, **kw):
        estimates.append(estimate(*args, **kw))
        return estimates[-1]
    memory.estimate = recorded
    base = _peak()
    clock = time.process_time()
    res = riskcalc.rounds_limit(method, **kw)
    if own:
        res.local_risk
    cpu = time.process_time() - clock
    added = _peak() - base
    n, a = res.diagnostics["contour_nodes"], spec.atoms.size
    est = max(estimates, default=np.nan)
    if method == "fedavg":
        lo, hi = res.diagnostics["edges"]
        # The rounds the contour resolves (beyond the fixed point to rounding: none).
        t_max = round_horizon(res.contraction, np.array(kw["rounds"], float))[3]
        n2 = int(_contour(lo, hi, 1.0, res.contraction, t_max, degree=1)[3])
        seconds = chain_seconds(M, K, a, n2)
    else:
        n2, seconds = n, alg1_chain_seconds(M, K, a, n)
    print(json.dumps({"method": method, "M": M, "K": K, "T": T, "own": own, "atoms": a,
                      "nodes": [n, n2],
                      "added_MB": round(added / 1e6), "estimate_MB": round(est / 1e6),
                      "measured/estimate": round(added / est, 2), "base_MB": round(base / 1e6),
                      "cpu_s": round(cpu, 1), "time_estimate_s": round(seconds, 1)}),
          flush=True)


if __name__ == "__main__":
    extra = sys.argv[5:]
    run(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), "own" in extra,
        next((int(x[6:]) for x in extra if x.startswith("atoms=")), None))
