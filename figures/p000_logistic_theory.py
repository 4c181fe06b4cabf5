"""Personalized logistic regression (the model of paper 000 Sec. 3.2 with a ridge toward the
centre): ||w_hat - w_i||^2 against lam and against gamma, exact limits through simulations.

Theory: ``riskcalc.logistic_limit`` (CGMT fixed point, ``riskcalc/logistic/fixed_point.py``);
points: ``montecarlo.logistic.ridge`` (exact Newton solves, oracle centre w_0), mean over
replicates with 95% Student-t intervals.
"""

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from riskcalc.papers import cite
from montecarlo.logistic.ridge import replicate_task
from montecarlo.runner.stats import mean_se, t_half_width

SIGNAL = 1.0
RS = (0.5, 1.0)
GAMMA = 1.0            # left panel
LAMS_GAMMA = (0.1, 1.0)   # right panel
R_GAMMA = 1.0
RISK = r"$\|\hat{w} - w_i\|^2$"
PLAIN = FuncFormatter(lambda v, _: f"{v:g}")    # 0.01, 0.5, 20 rather than 10^-2 ...


def _simulate(ctx, points, d, reps):
    """Mean, se and 95% interval of the risk for every (gamma, r, lams) point."""
    tasks = [dict(gamma=g, signal=SIGNAL, r=r, lams=list(lams), d=d, seed=ctx.seed, rep=k)
             for g, r, lams in points for k in range(reps)]
    res = ctx.run(replicate_task, tasks, desc="replicates")
    out = []
    for i in range(len(points)):
        risk = np.array([row["risk"] for row in res[i * reps:(i + 1) * reps]])
        mean, se = mean_se(risk)
        out.append((mean, se, t_half_width(se, reps)))
    return out


@register("p000-logistic-theory", paper="000",
          title="Personalized logistic regression: exact limits vs simulation",
          source="riskcalc.logistic (CGMT; Salehi-Abbasi-Hassibi 2019, Sur-Candes 2019); "
                 f"model of {cite('000', 'Sec. 3.2')} with w_i = w_0 + r u")
def make(ctx):
    d, reps = ctx.pick(60, 400), ctx.pick(4, 20)
    # Theory on fine grids (each point one CGMT solve; the lam path warm-starts) so that the
    # lines are smooth curves, not polylines through a few points.
    lam_theory = np.geomspace(1e-2, 1e2, ctx.pick(25, 61))
    lam_sim = np.geomspace(1e-2, 1e2, ctx.pick(3, 7))
    g_theory = np.geomspace(0.25, 4.0, ctx.pick(17, 41))
    g_sim = ctx.pick([0.5, 2.0], [0.25, 0.5, 1.0, 2.0, 4.0])
    table = Table()
    left, right = "risk vs λ (γ = 1)", f"risk vs γ (r = {R_GAMMA:g})"
    points, where = [], []
    for r in RS:
        label = f"r = {r:g}"
        th = [res.risk for res in riskcalc.logistic_lam_path(gamma=GAMMA, signal=SIGNAL, r=r,
                                                                 lams=lam_theory)]
        table.add(left, label, "theory", "lam", lam_theory, "risk", th)
        table.add(left, f"{label}: centre w₀ (r² = {r ** 2:g})", "reference", "lam", np.nan,
                  "risk", r ** 2)
        points.append((GAMMA, r, lam_sim))
        where += [(left, label, "lam", v, k) for k, v in enumerate(lam_sim)]
    for lam in LAMS_GAMMA:
        label = f"λ = {lam:g}"
        th = [riskcalc.logistic_limit(gamma=g, signal=SIGNAL, r=R_GAMMA, lam=lam).risk
              for g in g_theory]
        table.add(right, label, "theory", "gamma", g_theory, "risk", th)
    for g in g_sim:
        points.append((g, R_GAMMA, LAMS_GAMMA))
        where += [(right, f"λ = {lam:g}", "gamma", g, k) for k, lam in enumerate(LAMS_GAMMA)]
    sims = _simulate(ctx, points, d, reps)
    flat = [(m[k], s[k], h[k]) for (m, s, h), (_, _, lams) in zip(sims, points)
            for k in range(len(lams))]
    for (panel, label, x_name, x, _), (m, s, h) in zip(where, flat):
        table.add(panel, label, "simulation", x_name, x, "risk", m, se=s, lo=m - h, hi=m + h,
                  reps=reps)
    # Each centre's reference line takes the colour of its series (same r).
    colors = style.Colors(table.series(), same={f"r = {r:g}: centre w₀ (r² = {r ** 2:g})":
                                                f"r = {r:g}" for r in RS})
    fig, axes = style.figure(2, height=2.9)
    for ax, panel, x_name in zip(axes[0], (left, right), ("lam", "gamma")):
        style.draw_panel(ax, table, panel, colors, logx=True, logy=x_name == "lam")
        ax.set_xlabel("ridge penalty λ" if x_name == "lam" else "γ = d/n (parameters per sample)")
        ax.set_ylabel(f"excess risk {RISK}")
        ax.xaxis.set_major_formatter(PLAIN)
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax_lam, ax_gamma = axes[0]
    ax_lam.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax_lam.yaxis.set_major_formatter(PLAIN)
    ax_lam.yaxis.set_minor_formatter(NullFormatter())
    ax_gamma.set_xticks([0.25, 0.5, 1.0, 2.0, 4.0])
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Personalized logistic regression: ‖ŵ − w_i‖² of ridge toward the centre, limit vs "
        "simulation",
        "x ~ N(0, I_d), P(y = 1 | x) = sigmoid(x·w_i), w_i = w_0 + r u (‖w_0‖ = S, "
        "u uniform), ŵ = argmin (1/n) Σ log(1 + exp(−y x·w)) + λ/2 ‖w − w_0‖². Lines: the "
        "CGMT limit "
        "(riskcalc.logistic_limit); markers: exact Newton solves, mean over replicates with "
        "95% Student-t intervals; dashed: the centre's risk r² (λ → ∞).",
        {"S = ‖w_0‖": SIGNAL, "r (left)": list(RS), "γ (left)": GAMMA,
         "λ (right)": list(LAMS_GAMMA), "r (right)": R_GAMMA, "λ (theory)": lam_theory,
         "λ (simulation)": lam_sim, "γ (theory)": g_theory, "γ (simulation)": g_sim,
         "d": d, "n": "round(d/γ)", "reps": reps, "centre": "oracle w_0"}))
