"""Paper 004's communication claim, exactly: Algorithm 1's risk along the rounds for small,
medium and large lam (exact local solves), on a heterogeneous linear federation.

Paper 004 (``004_98172ed3646eef14.txt``, Sec. 6.3 and Fig. 1, bottom row; Cor. 1, eq. 13): the
larger lam (less personalization), the more communication rounds Algorithm 1 needs. Here the
algorithm is run with exact prox (K = infinity, eq. 10) at the paper's synthetic-data steps
gamma = (lam + L)/(lam L) (Sec. 6.1), on least-squares clients with d / n_j = gamma_j < 1 (L the
top of the clients' limiting sample spectra). Lines: the exact limits along the rounds
(``riskcalc.rounds_limit("pfedme")``, derived here); dashed: each lam's fixed point (the FedProx
/ pFedMe joint minimizer); markers: simulated federations (``montecarlo.linear.rounds``).
"""

import numpy as np

import riskcalc
from figures.core import Caption, Output, Table, register
from figures.p004_rounds_drift import add_curve, draw
from montecarlo.linear.rounds import simulate_rounds

GAMMA = [0.3, 0.5, 0.7, 0.9]
R_J = [0.5, 1.0, 1.5, 2.0]
SIGMA_J = [0.5, 0.5, 0.5, 0.5]
SIGNAL = 1.0
LAMS = (0.1, 1.0, 10.0)
TOP = (1.0 + np.sqrt(max(GAMMA))) ** 2       # L: the top of the clients' limiting spectra
T_THEORY = np.arange(0, 61)
PANELS = {"risk": "client 0's own model (γ = 0.3, r = 0.5)",
          "global_risk": "the server model, for client 0"}


@register("p004-rounds-lam-theory", paper="004",
          title="Algorithm 1 (exact prox) along the rounds for small, medium and large lam",
          source="004_98172ed3646eef14.txt, Sec. 6.3, Fig. 1 bottom row, Cor. 1 eq. (13); "
                 "derived here: riskcalc.rounds_limit (riskcalc/linear/dynamics/prox_laws)")
def make(ctx):
    d, reps = ctx.pick(60, 400), ctx.pick(3, 20)
    t_sim = ctx.pick([1, 5, 20], [1, 2, 5, 10, 20, 40, 60])
    fed = dict(gamma=GAMMA, r=R_J, sigma=SIGMA_J, signal=SIGNAL, local_steps=np.inf,
               weights="uniform")
    table = Table()
    for lam in LAMS:
        label = f"λ = {lam:g}"
        g = (lam + TOP) / (lam * TOP)
        curve = riskcalc.rounds_limit("pfedme", rounds=list(T_THEORY) + [np.inf], lam=lam,
                                      global_step=g, **fed)
        sim = simulate_rounds("fedprox", rounds=t_sim, lam=lam, global_step=g, step_size=None,
                              d=d, reps=reps, seed=ctx.seed, jobs=ctx.n_jobs,
                              cache=ctx.cache(), progress=ctx.progress, **fed)
        for field, panel in PANELS.items():
            add_curve(table, panel, label, T_THEORY, getattr(curve, field)[0], t_sim,
                      getattr(sim, field)[0], getattr(sim, field + "_se")[0], reps)
    fig = draw(table, "client 0's risk")
    return Output(fig, table, Caption(
        "Paper 004's Algorithm 1 along the rounds, exactly: more rounds as λ grows",
        "Lines: the exact limit (d, n_j -> infinity with d/n_j = γ_j, four clients, uniform "
        "weights) of client 0's risk E||w − θ_0'||² (θ_0' its own true model) of its own model "
        "after the local phase of round T (left: the prox of the server model) and of the "
        "server model after T rounds (right), Algorithm 1 with exact local solves (K = ∞, "
        "paper 004 eq. 10) and the paper's synthetic-data global step γ = (λ + L)/(λ L) "
        "(riskcalc.rounds_limit); dashed: the fixed point T = ∞ (the FedProx joint minimizer); "
        "markers: simulated federations at dimension d, 95% Student-t intervals. What differs "
        "from the paper's Fig. 1 (bottom row): least-squares clients with Σ = I and exact prox "
        "instead of logistic clients with Σ_jj = j^-1.2 and K local steps (Algorithm 1 with "
        "K < ∞ warm-started steps is not covered by the exact limits yet), risk instead of the "
        "total error. x axis: symmetric log (linear below 1).",
        {"γ_j": GAMMA, "r_j": R_J, "σ_j": SIGMA_J, "||θ0||": SIGNAL, "λ": list(LAMS),
         "L": TOP, "global step γ": "(λ + L)/(λ L)", "K": "∞ (exact prox)",
         "T simulated": t_sim, "d": d, "reps": reps, "weights": "uniform",
         "covariance": "identity"}))
