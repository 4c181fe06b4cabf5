"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 1: FTFA's asymptotic risk against gamma.

FTFA = FedAvg's global model fine-tuned to the client's min-norm interpolant (eqs. 6-7).
Theory lines from ``riskcalc.limit("ftfa")``; points: simulated clients with the oracle
global model theta_0 (the setting of the theorem), for three noise levels and two covariances.
"""

import numpy as np

from figures import style
from figures.core import Caption, Output, register
from figures.linear import (P003, R, RISK_LABEL, TWO_POINT, XLABELS, Curve, fedavg_reference,
                            sizes, spectrum_name, theory_vs_simulation)
from montecarlo.linear.instances import Setting

SIGMAS = (0.25, 0.5, 1.0)


@register("p003-thm1-ftfa", paper="003", title="FTFA risk vs gamma (Thm 1), theory vs simulation",
          source=f"{P003}, Thm 1 (eqs. 5-7)")
def make(ctx):
    sz = sizes(ctx)
    g_theory = np.geomspace(1.2, 6.0, 80)
    g_sim = ctx.pick([1.5, 2.0, 4.0], [1.5, 2.0, 3.0, 4.0, 6.0])
    setting = Setting(d=sz["d"])
    curves = [Curve(spectrum_name(sp), f"FTFA, σ = {s:g}", "ftfa", "gamma", g_theory, g_sim,
                    {"r": R, "sigma": s}, sp, setting)
              for sp in (None, TWO_POINT) for s in SIGMAS]
    table = theory_vs_simulation(ctx, curves, sz["reps"])
    fedavg_reference(table, table.panels(), "none")
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, sharey=True)
    for ax, panel in zip(axes[0], table.panels()):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel(XLABELS["gamma"])
        ax.set_ylim(0, 2.0)
    axes[0, 0].set_ylabel(RISK_LABEL)
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Paper 003 Thm 1: risk of fine-tuned FedAvg (FTFA) against gamma = d/n",
        "Lines: the limit r²(1 - 1/γ) + σ²/(γ - 1) (Σ = I) and its general-covariance form; "
        "markers: mean risk of simulated clients with the oracle global model θ0, error bars "
        "95% Student-t intervals over replicates. The dashed line is FedAvg's risk r² (Cor. 3.1): FTFA "
        "wins where its curve is below it.",
        {"r = ||θ_i - θ0||": R, "σ": list(SIGMAS), "γ (theory)": g_theory,
         "γ (simulation)": g_sim, "d": sz["d"], "n": "round(d/γ)", "reps": sz["reps"],
         "global model": "oracle θ0", "features": "Gaussian", "covariances": "I; two-point "
         "eigenvalues {0.25, 1.75} with mass 1/2 each"}))
