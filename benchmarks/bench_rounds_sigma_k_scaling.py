"""FedAvg with K = 5 local steps under a two-point spectrum: the simulated risk's gap to the
exact limit (``riskcalc.linear.dynamics.sigma.fedavg_sigma_k``) at d = 100, 200, 400, 800 (issue 29
item 5): does it shrink like 1 / d, and does the extrapolation in 1 / d agree?

Three heterogeneous clients (gamma = 0.5, 2, 4, so n_j = d / gamma_j is an integer at every d),
sample weights, g = 1, spectrum {0.5, 3} (weights 1/2), eta at 0.8 of the local stability edge
2 / max_j top(S_j), rounds 0, 1, 3, 10, 30, inf; ``montecarlo.linear.rounds`` exact given the
designs (200, 100, 50, 25 replicates). Prints per d the largest relative gap, d times the gap
per client and round (constant for a 1 / d effect), and the extrapolation from consecutive
pairs of d in standard errors.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_sigma_k_scaling.py`` (about 2 minutes).
"""

from __future__ import annotations

import time

import numpy as np

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics.sigma.fedavg_sigma_k import local_stability

SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5])
GAMMA = [0.5, 2.0, 4.0]
DIMS = [(100, 200), (200, 100), (400, 50), (800, 25)]


def main() -> None:
    eta = 0.8 * 2.0 / local_stability(SPEC, np.array(GAMMA), 1.0)
    kw = dict(gamma=GAMMA, r=[0.3, 0.6, 0.9], sigma=[0.5, 0.8, 0.3], signal=1.2,
              rounds=[0, 1, 3, 10, 30, np.inf], local_steps=5, step_size=eta,
              weights="samples", spectrum=SPEC, global_step=1.0)
    clock = time.process_time()
    theory = riskcalc.rounds_limit("fedavg", **kw)
    print(f"eta = {eta:.4f}, contraction {theory.contraction:.5f}, prediction "
          f"{time.process_time() - clock:.1f} s CPU")
    np.set_printoptions(precision=3, suppress=True, linewidth=120)
    sims = {}
    for d, reps in DIMS:
        sim = simulate_rounds("fedavg", d=d, reps=reps, seed=11, **kw)
        sims[d] = sim
        gap = sim.risk - theory.risk
        print(f"\nd = {d} ({reps} replicates): largest |gap| / risk "
              f"{np.max(np.abs(gap) / theory.risk):.2e}; d * gap (rows: clients; columns: T):")
        print(d * gap)
    ds = [d for d, _ in DIMS]
    for a, b in zip(ds[:-1], ds[1:]):
        extrap = 2 * sims[b].risk - sims[a].risk
        se = np.hypot(2 * sims[b].risk_se, sims[a].risk_se)
        live = se > 1e-12          # T = 0 is exact
        print(f"extrapolated from d = {a}, {b}: largest |gap| / risk "
              f"{np.max(np.abs(extrap - theory.risk) / theory.risk):.2e}, largest |gap| / s.e. "
              f"{np.max(np.abs(extrap - theory.risk)[live] / se[live]):.2f}")


if __name__ == "__main__":
    main()
