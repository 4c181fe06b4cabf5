"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 2: RTFA's asymptotic risk against gamma and lam.

RTFA = FedAvg's global model followed by ridge regression toward it with penalty lam (eqs. 6,
8). Theory from ``riskcalc.limit("rtfa")``; points: simulated clients with the oracle global
model theta_0, for Σ = I and a two-point covariance.
"""

import numpy as np

import riskcalc
from figures.core import Caption, Output, register
from figures.linear import P003, R, SIGMA, sizes, sweep_figure
from montecarlo.linear.instances import Setting

LAMS = (0.1, 1.0)
GAMMAS = (0.5, 2.0)


@register("p003-thm2-rtfa", paper="003", title="RTFA risk vs gamma and vs lam (Thm 2)",
          source=f"{P003}, Thm 2 (eqs. 6, 8)")
def make(ctx):
    sz = sizes(ctx)
    g_theory, g_sim = np.geomspace(0.2, 6.0, 80), ctx.pick([0.5, 2.0, 4.0],
                                                           [0.25, 0.5, 1.0, 2.0, 4.0])
    l_theory = np.geomspace(1e-2, 10.0, 80)
    l_sim = np.geomspace(1e-2, 10.0, ctx.pick(4, 7))
    fig, table = sweep_figure(
        ctx, setting=Setting(d=sz["d"]), reps=sz["reps"],
        gamma_series=[(f"RTFA, λ = {lam:g}", "rtfa", {"lam": lam, "r": R, "sigma": SIGMA})
                      for lam in LAMS],
        tuning_series=[(f"RTFA, γ = {g:g}", "rtfa", {"gamma": g, "r": R, "sigma": SIGMA})
                       for g in GAMMAS],
        gamma_theory=g_theory, gamma_sim=g_sim, tuning_theory=l_theory, tuning_sim=l_sim,
        optimum=optimum)
    return Output(fig, table, Caption(
        "Paper 003 Thm 2: risk of ridge-tuned FedAvg (RTFA) against gamma and against lam",
        "Lines: the limit of Thm 2 (Σ = I closed form; general Σ through the effective "
        "regularization of Sec. 6.3); markers: mean risk of simulated clients with the oracle "
        "global model θ0, error bars 95% Student-t intervals. Right panels: the minimum sits "
        "at λ* = σ²γ/r² (the same for both covariances: the signal direction is uniform), "
        "marked by a star on each curve. Dashed: FedAvg's risk r².",
        {"r": R, "σ": SIGMA, "λ (left)": list(LAMS), "γ (right)": list(GAMMAS),
         "γ (theory)": g_theory, "γ (simulation)": g_sim, "λ (theory)": l_theory,
         "λ (simulation)": l_sim, "d": sz["d"], "n": "round(d/γ)", "reps": sz["reps"],
         "global model": "oracle θ0", "features": "Gaussian",
         "λ* (right)": ", ".join(f"{SIGMA ** 2 * g / R ** 2:g} (γ = {g:g})" for g in GAMMAS),
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))


def optimum(method, params, spectrum):
    """(lam*, risk at lam*) of one right-panel series: ``riskcalc.optimal_limit``."""
    res = riskcalc.optimal_limit(method, gamma=params["gamma"], r=params["r"],
                                 sigma=params["sigma"], spectrum=spectrum)
    return res.params["lam"], res.risk
