"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 3: MAML-FL's asymptotic risk.

MAML-FL fits the global model to the losses after one gradient step of size alpha (eqs.
11-12), then fine-tunes like FTFA (eq. 13). Thm 3: its limit equals FTFA's and does not depend
on alpha. The oracle global model would make MAML-FL identical to FTFA, so the points here fit
the MAML-FL global model over M simulated clients.
"""

import numpy as np

from figures.core import Caption, Output, register
from figures.linear import P003, R, SIGMA, federated_sizes, sweep_figure
from montecarlo.linear.instances import Setting

ALPHAS = (0.02, 0.1)
GAMMAS = (1.5, 3.0)


@register("p003-thm3-maml", paper="003", title="MAML-FL risk vs gamma and vs alpha (Thm 3)",
          source=f"{P003}, Thm 3 (eqs. 11-13)")
def make(ctx):
    sz = federated_sizes(ctx)
    g_sim = ctx.pick([1.5, 3.0], [1.5, 2.0, 3.0, 4.0, 6.0])
    a_theory = np.geomspace(1e-2, 0.3, 40)
    a_sim = np.geomspace(1e-2, 0.3, ctx.pick(3, 5))
    setting = Setting(d=sz["d"], clients=sz["clients"], global_model="federated")
    fig, table = sweep_figure(
        ctx, setting=setting, reps=sz["reps"],
        gamma_series=[(f"MAML-FL, α = {a:g}", "maml_fl", {"alpha": a, "r": R, "sigma": SIGMA})
                      for a in ALPHAS],
        tuning_series=[(f"MAML-FL, γ = {g:g}", "maml_fl", {"gamma": g, "r": R, "sigma": SIGMA})
                       for g in GAMMAS],
        gamma_theory=np.geomspace(1.2, 6.0, 80), gamma_sim=g_sim, tuning_theory=a_theory,
        tuning_sim=a_sim)
    for ax in fig.axes:
        ax.set_ylim(0, 1.6)
    return Output(fig, table, Caption(
        "Paper 003 Thm 3: risk of MAML-FL against gamma and against its step size alpha",
        "Lines: the limit of Thm 3, equal to FTFA's and flat in α; markers: mean risk of "
        "a simulated client whose MAML-FL global model (eq. 12) is fitted over M clients "
        "with the same γ, r, σ, error bars 95% Student-t intervals. The points lie slightly "
        "above the lines: the finite-M error of the global model, which vanishes as M grows "
        "(p003-maml-clients). Dashed: FedAvg's risk r².",
        {"r": R, "σ": SIGMA, "α (left)": list(ALPHAS), "γ (right)": list(GAMMAS),
         "γ (theory)": "1.2 to 6 (80 values)", "γ (simulation)": g_sim,
         "α (theory)": a_theory, "α (simulation)": a_sim, "d": sz["d"], "n": "round(d/γ)",
         "clients M": sz["clients"], "client weights": "uniform", "reps": sz["reps"],
         "global model": "federated (eq. 12)", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
