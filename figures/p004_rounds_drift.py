"""Client drift along FedAvg's rounds: the exact risk after T rounds of K local steps.

FedAvg with K full-batch local gradient steps per round on a heterogeneous linear federation
(paper 003's model, Sigma = I); paper 004 (``004_98172ed3646eef14.txt``, Sec. 5 after Thm 2, and
Cor. 1) studies the same rounds-versus-local-computation trade-off for its proximal Algorithm 1
on logistic losses. With K = 1 the rounds are gradient descent on the pooled objective and reach
the pooled least-squares model; with K > 1 each round drifts toward the clients' own solutions,
so the fixed point is another, data-dependent estimator, reached in fewer rounds. Lines: the
exact limits along the rounds (``riskcalc.rounds_limit``, derived here); dashed: each K's fixed
point (T = infinity); markers: simulated clients (``montecarlo.linear.rounds``).
"""

import numpy as np

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from montecarlo.linear.rounds import simulate_rounds
from montecarlo.runner.stats import t_half_width

GAMMA = [0.5, 1.0, 2.0, 4.0]
R_J = [0.3, 0.6, 1.0, 1.5]
SIGMA_J = [0.5, 0.5, 0.5, 0.5]
SIGNAL = 1.0
STEP_SIZE = 0.1     # eta (1 + sqrt(gamma_j))^2 <= 0.9 < 2: every client's local GD is stable
LOCAL_STEPS = (1, 5, 50)
T_THEORY = np.arange(0, 201)
PANELS = {0: "client 0 (γ = 0.5, r = 0.3)", 3: "client 3 (γ = 4, r = 1.5)"}


def add_curve(table, panel, label, t_theory, theory, t_sim, mean, se, reps):
    """The rows of one curve along the rounds: the exact limit at ``t_theory`` followed by its
    fixed point (``theory``'s last entry, a reference line) and the simulated means with 95%
    Student-t intervals at ``t_sim``."""
    table.add(panel, label, "theory", "rounds", t_theory, "risk", theory[:-1])
    table.add(panel, label, "reference", "rounds", np.nan, "risk", theory[-1])
    half = t_half_width(se, reps)
    table.add(panel, label, "simulation", "rounds", t_sim, "risk", mean, se=se,
              lo=mean - half, hi=mean + half, reps=reps)


def draw(table, ylabel):
    """One panel per table panel of risk against rounds (symmetric log axis), labelled, with
    the legend."""
    colors = style.Colors(table.series())
    fig, axes = style.figure(len(table.panels()))
    for ax, panel in zip(axes[0], table.panels()):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("communication rounds T")
    axes[0, 0].set_ylabel(ylabel)
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=3)
    return fig


@register("p004-rounds-drift", paper="004",
          title="client drift: FedAvg's risk along the rounds for K = 1, 5, 50 local steps",
          source="004_98172ed3646eef14.txt, Sec. 5 after Thm 2 and Cor. 1 (rounds vs local computation); "
                 "derived here: riskcalc.rounds_limit (riskcalc/linear/dynamics)")
def make(ctx):
    d, reps = ctx.pick(100, 400), ctx.pick(4, 20)
    t_sim = ctx.pick([1, 5, 20, 100], [1, 2, 5, 10, 20, 50, 100, 200])
    fed = dict(gamma=GAMMA, r=R_J, sigma=SIGMA_J, signal=SIGNAL, step_size=STEP_SIZE)
    table = Table()
    for K in LOCAL_STEPS:
        label = f"K = {K}"
        curve = riskcalc.rounds_limit("fedavg", rounds=list(T_THEORY) + [np.inf],
                                      local_steps=K, **fed)
        sim = simulate_rounds("fedavg", rounds=t_sim, local_steps=K, d=d, reps=reps,
                              seed=ctx.seed, jobs=ctx.n_jobs, cache=ctx.cache(),
                              progress=ctx.progress, **fed)
        for j, panel in PANELS.items():
            add_curve(table, panel, label, T_THEORY, curve.risk[j], t_sim, sim.risk[j],
                      sim.risk_se[j], reps)
    fig = draw(table, "risk of the server model")
    return Output(fig, table, Caption(
        "Client drift: FedAvg's risk after T rounds of K local gradient steps",
        "Lines: the exact limit (d, n_j -> infinity with d/n_j = γ_j, four clients) of the "
        "client's risk E||w_T − θ_j||² of the server model after T rounds, each round K "
        "full-batch gradient steps of size η on every client's least-squares loss from the "
        "server model, then sample-weighted averaging (riskcalc.rounds_limit); dashed: the "
        "fixed point T = ∞ of each K (K = 1: the pooled least-squares model; K > 1: drifted "
        "toward the clients' own solutions); markers: simulated federations at dimension d, "
        "exact given the designs, 95% Student-t intervals. Paper 004 studies the same "
        "rounds-versus-local-computation trade-off for its proximal Algorithm 1 on logistic "
        "losses; here FedAvg on the linear model, where the limits are exact. x axis: "
        "symmetric log (linear below 1).",
        {"γ_j": GAMMA, "r_j": R_J, "σ_j": SIGMA_J, "||θ0||": SIGNAL, "η": STEP_SIZE,
         "K": list(LOCAL_STEPS), "T simulated": t_sim, "d": d, "reps": reps,
         "weights": "samples (n_j / N)", "covariance": "identity"}))
