"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 2 with the optimal lam against the baselines.

RTFA at lam* (``riskcalc.optimal_lambda``; sigma^2 gamma / r^2 for Σ = I) against FTFA (Thm 1),
FedAvg and local training (Cor. 3.1; local ridge also at its own optimal lam), over gamma.
Points: simulated clients with the oracle global model; each gamma simulated at its own lam*.
"""

import numpy as np

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from figures.linear import (P003, R, RISK_LABEL, SIGMA, TWO_POINT, XLABELS, Curve, sizes,
                            spectrum_name, simulate)
from montecarlo.linear.instances import Setting

# ||theta_i||^2 = ||theta_0||^2 + r^2 with ||theta_0|| = 1: the local baselines' signal.
RHO = float(np.sqrt(1.0 + R ** 2))


def _series(spectrum):
    """(label, method, fixed params, tuned): tuned methods are run at their optimal lam."""
    return [("RTFA, λ = λ*", "rtfa", {"r": R}, True),
            ("FTFA", "ftfa", {"r": R}, False),
            ("FedAvg", "fedavg", {"r": R}, False),
            ("local ridge, λ = λ*", "local_ridge", {"rho": RHO}, True),
            ("local min-norm", "local", {"rho": RHO}, False)]


@register("p003-optimal", paper="003",
          title="RTFA at lam* vs FTFA, FedAvg and local training (Thm 2, Cor. 3.1)",
          source=f"{P003}, Thms 1-2, Cor. 3.1, optimal lambda (Sec. 3)")
def make(ctx):
    sz = sizes(ctx)
    g_theory = np.geomspace(0.2, 6.0, 80)
    g_sim = ctx.pick([0.5, 2.0, 4.0], [0.25, 0.5, 1.5, 2.0, 3.0, 4.0, 6.0])
    setting = Setting(d=sz["d"])
    table, points, where = Table(), [], []
    for sp in (None, TWO_POINT):
        panel = spectrum_name(sp)
        for label, method, fixed, tuned in _series(sp):
            ridgeless = method in ("ftfa", "local")
            gt = g_theory[g_theory > 1.15] if ridgeless else g_theory
            if tuned:
                res = riskcalc.optimal_limit(method, gamma=gt, sigma=SIGMA, spectrum=sp, **fixed)
            else:
                res = Curve(panel, label, method, "gamma", gt, params={**fixed, "sigma": SIGMA},
                            spectrum=sp).limit(gt)
            table.add(panel, label, "theory", "gamma", gt, "risk", res.risk)
            for g in g_sim:
                if ridgeless and g <= 1:
                    continue
                lam = (float(riskcalc.optimal_lambda(method, gamma=g, sigma=SIGMA,
                                                     spectrum=sp, **fixed)) if tuned else None)
                spec = riskcalc.ClientSpec(method, gamma=g, sigma=SIGMA, spectrum=sp,
                                           **fixed, **({"lam": lam} if tuned else {}))
                where.append((panel, label, g))
                points.append((spec, [lam if tuned else 0.0], setting, None, None))
    for (panel, label, g), s in zip(where, simulate(ctx, points, sz["reps"])):
        r = s["risk"]
        table.add(panel, label, "simulation", "gamma", g, "risk", r["mean"], se=r["se"],
                  lo=r["low"], hi=r["high"], reps=sz["reps"])
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, sharey=True, height=2.9)
    for ax, panel in zip(axes[0], table.panels()):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel(XLABELS["gamma"])
        ax.set_ylim(0, 2.2)
    axes[0, 0].set_ylabel(RISK_LABEL)
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=4)
    return Output(fig, table, Caption(
        "Paper 003: RTFA at the optimal λ against FTFA, FedAvg and local training",
        "Lines: limits (Thms 1-2, Cor. 3.1), tuned methods at their optimal λ "
        "(riskcalc.optimal_lambda, per γ); markers: mean risk of simulated clients at the "
        "same λ with the oracle global model, error bars 95% Student-t intervals. RTFA at λ* "
        "is never worse than FTFA or FedAvg (Sec. 6.9). Ridgeless methods are shown for "
        "γ > 1.15 only (their risk is infinite at γ = 1).",
        {"r = ||θ_i - θ0||": R, "ρ = ||θ_i|| (local)": RHO, "σ": SIGMA,
         "γ (theory)": g_theory, "γ (simulation)": g_sim, "d": sz["d"], "n": "round(d/γ)",
         "reps": sz["reps"], "global model": "oracle θ0", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
