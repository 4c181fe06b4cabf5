"""Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 7 (Algs. 5-6): risk after k personalization
steps.

The client starts at the global model (k = 0 is FedAvg) and takes k full-batch gradient
steps on its loss (FTFA, Alg. 5) or its loss plus lam/2 ||theta - theta_0||^2 (RTFA, Alg. 6).
The risk falls from FedAvg's r^2 towards the converged limits of Thms 1-2 (riskcalc, dashed);
the lines are the exact finite-step limits (``riskcalc.steps_limit``: the Marchenko-Pastur
integral for Sigma = I, a contour integral of the Sigma-weighted spectrum otherwise), which
show FTFA overshooting: its risk is lowest after a few steps, not at convergence.
The paper's Figs. 5-6 show the same effect on pretrained networks (not reproducible here).
"""

import numpy as np

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from figures.linear import (P003, R, RISK_LABEL, SIGMA, TWO_POINT, XLABELS, simulate,
                            sizes, spectrum_name)
from montecarlo.linear.instances import Setting

GAMMA = 2.0
STEP_SIZE = 0.2  # below 2 / (largest eigenvalue of X X^T / n + lam) for gamma = 2: stable


@register("p003-finite-steps", paper="003",
          title="risk after k personalization steps (Sec. 7, Algs. 5-6)",
          source=f"{P003}, Sec. 7 Algs. 5-6 and Thms 1-2 (cf. Figs. 5-6)")
def make(ctx):
    sz = sizes(ctx)
    steps = ctx.pick([0, 1, 5, 25, 200], [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 2000])
    # The lines at k = 0 and about 11 (quick) or 36 (full) values of k a decade up to 2000:
    # the contour integrals under the two-point spectrum cost in proportion (quick:
    # 37 values, 0.8 CPU s; 93 were 1.6 s of a 3 s draw).
    k_theory = np.unique(np.round(np.concatenate(
        [[0], np.geomspace(1, 2000, ctx.pick(40, 120))])))
    table, points, where = Table(), [], []
    for sp in (None, TWO_POINT):
        panel = spectrum_name(sp)
        lam = float(riskcalc.optimal_lambda("rtfa", gamma=GAMMA, r=R, sigma=SIGMA,
                                            spectrum=sp))
        methods = [("FTFA", "ftfa", None), ("RTFA, λ = λ*", "rtfa", lam)]
        table.add(panel, "FedAvg (k = 0)", "reference", "steps", np.nan, "risk", R ** 2)
        for label, method, tune in methods:
            extra = {} if tune is None else {"lam": tune}
            spec = riskcalc.ClientSpec(method, gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp,
                                       **extra)
            table.add(panel, label, "reference", "steps", np.nan,
                      "risk", riskcalc.spec_limit(spec).risk)
            table.add(panel, label, "theory", "steps", k_theory, "risk", riskcalc.steps_limit(
                method, gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp, steps=k_theory,
                step_size=STEP_SIZE, **extra).risk)
            for k in steps:
                where.append((panel, label, k))
                points.append((spec, [tune or 0.0], Setting(d=sz["d"]), k, STEP_SIZE))
    for (panel, label, k), s in zip(where, simulate(ctx, points, sz["reps"])):
        r = s["risk"]
        table.add(panel, label, "simulation", "steps", k, "risk", r["mean"], se=r["se"],
                  lo=r["low"], hi=r["high"], reps=sz["reps"])
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, sharey=True)
    for ax, panel in zip(axes[0], table.panels()):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel(XLABELS["steps"])
    axes[0, 0].set_ylabel(RISK_LABEL)
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Paper 003: risk after k personalization gradient steps from the global model",
        "Markers: mean risk of simulated clients after k full-batch gradient steps of size "
        "η from the oracle global model θ0 (k = 0 is FedAvg), error bars 95% Student-t "
        "intervals; lines: the limit after k steps (riskcalc.steps_limit: the integral of the "
        "gradient-descent filter against the Σ-weighted limiting spectrum of X^T X / n, "
        "Marchenko-Pastur for Σ = I); dashed: FedAvg's r² and, "
        "in each method's colour, its converged limit (Thms 1-2). RTFA uses its optimal λ* "
        "for each covariance. x axis: symmetric log (linear below 1).",
        {"γ": GAMMA, "r": R, "σ": SIGMA, "η (step size)": STEP_SIZE, "k": steps,
         "d": sz["d"], "n": round(sz["d"] / GAMMA), "reps": sz["reps"],
         "global model": "oracle θ0", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
