"""Paper 003 (``003_4b976ddf5225c17e.txt``), Cor. 3.1: the zero-collaboration baselines.

Local min-norm interpolation (eq. 9) and local ridge regression (eq. 10) on the client's own
data, whose signal is rho = ||theta_i||. Theory from ``riskcalc.limit("local" /
"local_ridge")``; points: simulated clients.
"""

import numpy as np

from figures.core import Caption, Output, register
from figures.linear import P003, SIGMA, sizes, sweep_figure
from montecarlo.linear.instances import Setting

RHO = 1.0
LAM = 0.3
GAMMAS = (0.5, 2.0)


@register("p003-cor31-local", paper="003",
          title="local baselines (min-norm, ridge) vs gamma and vs lam (Cor. 3.1)",
          source=f"{P003}, Cor. 3.1 (eqs. 9-10)")
def make(ctx):
    sz = sizes(ctx)
    g_sim = ctx.pick([1.5, 2.0, 4.0], [1.5, 2.0, 3.0, 4.0, 6.0])
    l_theory = np.geomspace(1e-2, 10.0, 80)
    l_sim = np.geomspace(1e-2, 10.0, ctx.pick(4, 7))
    base = {"rho": RHO, "sigma": SIGMA}
    fig, table = sweep_figure(
        ctx, setting=Setting(d=sz["d"]), reps=sz["reps"],
        gamma_series=[("local min-norm", "local", base),
                      (f"local ridge, λ = {LAM:g}", "local_ridge", {**base, "lam": LAM})],
        tuning_series=[(f"local ridge, γ = {g:g}", "local_ridge", {**base, "gamma": g})
                       for g in GAMMAS],
        gamma_theory=np.geomspace(1.2, 6.0, 80), gamma_sim=g_sim, tuning_theory=l_theory,
        tuning_sim=l_sim, with_fedavg=False)
    for ax in fig.axes[::2]:
        ax.set_ylim(0, 2.5)
    return Output(fig, table, Caption(
        "Paper 003 Cor. 3.1: risk of local training (min-norm and ridge) against gamma and lam",
        "Lines: the limits of Cor. 3.1 (eqs. 9-10; Σ = I closed form, general Σ through Sec. "
        "6.3); markers: mean risk of simulated clients, error bars 95% Student-t intervals. "
        "Left panels: γ > 1 (the interpolation regime of the paper).",
        {"ρ = ||θ_i||": RHO, "σ": SIGMA, "λ (left, ridge)": LAM, "γ (right)": list(GAMMAS),
         "γ (theory)": "1.2 to 6 (80 values)", "γ (simulation)": g_sim,
         "λ (theory)": l_theory, "λ (simulation)": l_sim, "d": sz["d"], "n": "round(d/γ)",
         "reps": sz["reps"], "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
