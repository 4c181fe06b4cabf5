"""FedAvg with K = 5 local steps under a two-point spectrum: the simulated risk's gap to the
exact limit (``riskcalc.linear.dynamics.sigma.fedavg.curves``) at d = 100, 200, 400, 800 (issue 29
item 5): does it shrink like 1 / d, and does the extrapolation in 1 / d agree?

Three heterogeneous clients (gamma = 0.5, 2, 4, so n_j = d / gamma_j is an integer at every d),
sample weights, g = 1, spectrum {0.5, 3} (weights 1/2), eta at 0.8 of the local stability edge
2 / max_j top(S_j), rounds 0, 1, 3, 10, 30, inf; ``montecarlo.linear.rounds`` exact given the
designs (200, 100, 50, 25 replicates). Prints per d the largest relative gap, d times the gap
per client and round (constant for a 1 / d effect), and the extrapolation from consecutive
pairs of d in standard errors.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_rounds_sigma_k_scaling.py`` (about 2 minutes).

``--cost``: the exact routes' cost against K (K = 5, 10, 20, 50; M = 3, 10; two-point spectrum;
T_max = 200, i.e. N = 2 T_max + 16 = 416 contour nodes and N / 2 x N = 86528 node pairs): the
dense pencil (``sigma_pencil``, (M K^2)^3 per node and pair) and the chain route
(``sigma_chain``, O(M K^3) per operator product, GMRES). Measured on a sample (dense: 8 nodes
followed down 24 stages; chain: 64 nodes along an arc, ``solve_arc``; 8 x 16 pairs, both
couplings) and extrapolated linearly in the nodes and pairs (the work is per node and per pair;
the chain route solves the fixed point at the upper halves of the N nodes and of the N2 =
T_max + 16 = 216 nodes of its double contour, plus about 550 solves of the edges, and only the
N2 / 2 (N2 / 2 + 1) pairs its symmetry leaves, ``sigma.fedavg.curves.pencil_curves``,
``sigma_chain.ChainPencil.two_point``); routes whose sample would exceed the budget are
skipped and say so. ``--against DIR``: the chain's samples also by the package in DIR (a
checkout of older code, e.g. ``git archive``), in a child process, with the ratios old / new.
Measured (loaded 2-core machine, eigenbasis solves of ``chain_basis`` against the previous
release): chain s/node 0.0070, 0.0144, 0.0342, 0.239 and s/pair 0.00058, 0.00186, 0.00417,
0.021 at M = 3, K = 5, 10, 20, 50 (ratios old / new: per node 0.77, 0.84, 1.19, 1.82; per
pair 2.15, 3.51, 5.50, 4.64); M = 10, K = 5, 10, 20, 50: s/node 0.012, 0.0265, 0.0841,
0.608, s/pair 0.00131, 0.00444, 0.00748, 0.0376 (K = 5: old / new 0.78 and 3.34).

``--end-to-end``: ``rounds_limit`` on a few federations, process CPU against the estimates that
guard the routes (``chain_cost.fedavg_chain_seconds``, ``guards.dense_k_seconds``).
"""

from __future__ import annotations

import time

import numpy as np

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics.sigma.fedavg.curves import local_stability

SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5])
GAMMA = [0.5, 2.0, 4.0]
DIMS = [(100, 200), (200, 100), (400, 50), (800, 25)]


def _sample_cost(route, M, K, budget=120.0):
    """(seconds per node of the fixed point, seconds per pair of the two-point system) of a
    route, from a sample; None when the sample's estimated cost exceeds ``budget`` seconds."""
    from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    size = M * K * K
    if route == "dense" and (8 * 24 * 4 + 256) * (size ** 3 / 3 + 2 * size ** 2 * K) / 2e9 > budget:
        return None
    gam = np.array([0.5, 2.0, 4.0, 1.5, 3.0, 0.8, 2.5, 6.0, 1.2, 5.0][:M])
    p = np.ones(M) / M
    eta = 0.8 * 2.0 / local_stability(SPEC, gam, 1.0)
    cls = SigmaPencil if route == "dense" else ChainPencil
    if route == "dense":   # the dense route's guard stands in the way of the measurement only
        import riskcalc.linear.dynamics.sigma.sigma_pencil as sp
        sp.MAX_UNKNOWNS = max(sp.MAX_UNKNOWNS, size)
    pen = cls(SPEC.atoms, SPEC.weights, gam, p, eta, K)
    # A thin ellipse over [0.05, 1.15]: 8 nodes followed down 24 stages (dense), or 64 nodes
    # of its upper half along the arc (chain, ``solve_arc``, as ``sigma.fedavg.curves``; a node in
    # 8 followed down), 8 of which give the pairs.
    m = 8 if route == "dense" else 64
    theta = np.pi * (np.arange(m) + 0.5) / m
    z = 0.6 + 0.55 * np.cos(theta) + 0.05j * np.sin(theta)
    ys = list(4.0 * 1.2 * np.geomspace(1.0, 1e-3 * 0.05 / 1.2, 24)) + [0.0]
    clock = time.process_time()
    if route == "dense":
        _, C, G = pen.solve(lambda y: z + 1j * y, ys)
    else:
        _, C, G = pen.solve_arc(z, ys)
        C, G = C[::8], {k: v[::8] for k, v in G.items()}
    per_node = (time.process_time() - clock) / z.size
    v = np.zeros((M, pen.n))
    v[:, 0], v[np.arange(M), pen.rows[:, -1]] = 1.0, -1.0
    wn = np.zeros((M, pen.n))
    wn[:, 0] = eta
    for j in range(M):
        wn[j, pen.rows[j, :-1]] = eta
    clock = time.process_time()
    pen.two_point((C, G), pen.conj_join((C, G)), [(p ** 2, v, v), (p ** 2, wn, v)])
    return per_node, (time.process_time() - clock) / (8 * 16)


def _chain_sample_elsewhere(tree, M, K):
    """``_sample_cost("chain", M, K)`` run by the package in ``tree`` (another checkout), in a
    child process: (s/node, s/pair)."""
    import os
    import subprocess
    import sys

    code = ("import sys; sys.path.insert(0, %r); sys.path.insert(0, %r); "
            "import bench_rounds_sigma_k_scaling as b; print(*b._sample_cost('chain', %d, %d))"
            % (os.path.dirname(os.path.abspath(__file__)), tree, M, K))
    env = dict(os.environ, PYTHONPATH=tree, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[-2]), float(out[-1])


def cost(against=None, grid=((3, (5, 10, 20, 50)), (10, (5, 10, 20, 50)))) -> None:
    """The table of the module docstring; ``against``: a checkout of the old code, whose chain
    samples run in the same call (ratios old / new)."""
    from riskcalc.linear.dynamics.sigma.chain_cost import fedavg_chain_seconds

    nodes = 2 * 200 + 16
    pairs = nodes // 2 * nodes
    print(f"T_max = 200: {nodes} nodes, {pairs} pairs (chain: {nodes} + 216 nodes, 11772 "
          "pairs solved); seconds (process CPU, OMP_NUM_THREADS=1)")
    print(f"{'M':>3} {'K':>3} {'M K^2':>6} {'route':>6} {'s/node':>9} {'s/pair':>9} "
          f"{'est. total':>11} {'chain_seconds':>13}" + ("  old s/node  s/pair  ratios"
                                                          if against else ""))
    for M, Ks in grid:
        for K in Ks:
            for route in ("dense", "chain"):
                got = _sample_cost(route, M, K)
                if got is None:
                    print(f"{M:>3} {K:>3} {M * K * K:>6} {route:>6}  (sample beyond budget)")
                    continue
                n2 = 200 + 16
                # The chain: the upper halves of both contours and about 550 solves of
                # the edges (``chain_cost.fedavg_chain_seconds``), half the pairs.
                tot = (got[0] * nodes + got[1] * pairs if route == "dense" else
                       got[0] * (nodes // 2 + n2 // 2 + 550)
                       + got[1] * (n2 // 2) * (n2 // 2 + 1))
                line = (f"{M:>3} {K:>3} {M * K * K:>6} {route:>6} {got[0]:9.3g} {got[1]:9.3g} "
                        f"{tot:11.3g}")
                if route == "chain":
                    line += f" {fedavg_chain_seconds(M, K, 2, n2):13.3g}"
                    if against:
                        old = _chain_sample_elsewhere(against, M, K)
                        line += (f"  {old[0]:9.3g} {old[1]:9.3g}  {old[0] / got[0]:.2f} "
                                 f"{old[1] / got[1]:.2f}")
                print(line, flush=True)


def end_to_end(cases=((3, 20, 2, 50), (3, 12, 2, 100), (4, 8, 3, 60), (10, 10, 2, 40),
                       (3, 50, 2, 20), (10, 3, 3, 50), (4, 5, 2, 100), (20, 2, 2, 100))) -> None:
    """``rounds_limit`` (FedAvg, rounds 0, 1, 5, T) end to end, process CPU, against the
    estimate that guards it: ``chain_cost.fedavg_chain_seconds`` (M K^2 >
    ``DENSE_UNKNOWNS``, with the double contour's node count of the run) or
    ``guards.dense_k_seconds`` (2 T + 16 nodes); cases (M, K, atoms, T), atoms spread over
    [0.5, 3]."""
    import riskcalc.linear.dynamics.sigma.fedavg.curves as fk
    from riskcalc.linear.dynamics.sigma.guards import dense_k_seconds

    seen = []
    chain_seconds = fk.fedavg_chain_seconds

    def record(*args):
        seen.append(args)
        return chain_seconds(*args)
    fk.fedavg_chain_seconds = record
    print(f"{'M':>3} {'K':>3} {'atoms':>5} {'T':>4} {'route':>6} {'nodes':>6} {'CPU s':>8} "
          f"{'estimate':>9}")
    for M, K, atoms, T in cases:
        spec = riskcalc.Spectrum(np.linspace(0.5, 3.0, atoms), weights=np.ones(atoms) / atoms)
        gam = np.resize([0.5, 2.0, 4.0, 1.5, 3.0, 0.8, 2.5, 6.0, 1.2, 5.0], M)
        eta = 0.8 * 2.0 / local_stability(spec, gam, 1.0)
        seen.clear()
        clock = time.process_time()
        riskcalc.rounds_limit("fedavg", gamma=gam, r=np.linspace(0.3, 0.9, M),
                              sigma=np.linspace(0.4, 1.0, M), signal=1.2, rounds=[0, 1, 5, T],
                              local_steps=K, step_size=eta, spectrum=spec, weights="uniform")
        cpu = time.process_time() - clock
        if seen:
            route, nodes, est = "chain", seen[-1][3], chain_seconds(*seen[-1])
        else:
            route, nodes = "dense", 2 * T + 16
            est = dense_k_seconds(M, K, atoms, nodes)
        print(f"{M:>3} {K:>3} {atoms:>5} {T:>4} {route:>6} {nodes:>6} {cpu:8.1f} {est:9.1f}",
              flush=True)
    fk.fedavg_chain_seconds = chain_seconds


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
    import sys

    if "--cost" in sys.argv:
        old = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
        cost(old)
    elif "--end-to-end" in sys.argv:
        end_to_end()
    else:
        main()
