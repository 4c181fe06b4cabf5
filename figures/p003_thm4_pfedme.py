"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 4: pFedMe's asymptotic risk.

pFedMe minimizes the clients' losses plus lam/2 ||theta_j - theta_0||^2 jointly (eq. 14).
Thm 4: its limit equals RTFA's at the same lam. The oracle global model would make pFedMe
identical to RTFA, so the points here solve the joint problem over M simulated clients.
"""

import numpy as np

from figures.core import Caption, Output, register
from figures.linear import P003, R, SIGMA, federated_sizes, sweep_figure
from montecarlo.linear.instances import Setting

LAMS = (0.1, 1.0)
GAMMAS = (0.5, 2.0)


@register("p003-thm4-pfedme", paper="003", title="pFedMe risk vs gamma and vs lam (Thm 4)",
          source=f"{P003}, Thm 4 (eq. 14)")
def make(ctx):
    sz = federated_sizes(ctx)
    # gamma >= 0.5: below, n = d/gamma per client times M clients makes each replicate slow.
    g_sim = ctx.pick([0.5, 2.0], [0.5, 1.0, 2.0, 4.0])
    l_theory = np.geomspace(1e-2, 10.0, 80)
    l_sim = np.geomspace(1e-2, 10.0, ctx.pick(3, 6))
    setting = Setting(d=sz["d"], clients=sz["clients"], global_model="federated")
    fig, table = sweep_figure(
        ctx, setting=setting, reps=sz["reps"],
        gamma_series=[(f"pFedMe, λ = {lam:g}", "pfedme", {"lam": lam, "r": R, "sigma": SIGMA})
                      for lam in LAMS],
        tuning_series=[(f"pFedMe, γ = {g:g}", "pfedme", {"gamma": g, "r": R, "sigma": SIGMA})
                       for g in GAMMAS],
        gamma_theory=np.geomspace(0.2, 6.0, 80), gamma_sim=g_sim, tuning_theory=l_theory,
        tuning_sim=l_sim)
    return Output(fig, table, Caption(
        "Paper 003 Thm 4: risk of pFedMe against gamma and against lam",
        "Lines: the limit of Thm 4 (equal to RTFA's at the same λ); markers: mean risk of a "
        "simulated client of the joint pFedMe solution (eq. 14) over M clients with the same "
        "γ, r, σ, error bars 95% Student-t intervals. Points sit slightly above the lines by "
        "the finite-M error of the global model. Dashed: FedAvg's risk r².",
        {"r": R, "σ": SIGMA, "λ (left)": list(LAMS), "γ (right)": list(GAMMAS),
         "γ (theory)": "0.2 to 6 (80 values)", "γ (simulation)": g_sim,
         "λ (theory)": l_theory, "λ (simulation)": l_sim, "d": sz["d"], "n": "round(d/γ)",
         "clients M": sz["clients"], "client weights": "uniform", "reps": sz["reps"],
         "global model": "federated (eq. 14)", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
