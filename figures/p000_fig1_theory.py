"""Paper 000 (``000_7ff2ed2592df3b60.txt``), Fig. 1 left panel (Sec. 3.4, Appendix D) with
EXACT ridge-regularized minimizers and the finite-M limits: test accuracy of FedAvg, local
ridge and FedAvg + fine-tuning against the heterogeneity R.

Setting of Appendix D: m = 5 clients, n_i = d (gamma = 1), w_*^(i) = w_* + R v_i, logistic
labels; the estimators are the exact minimizers (``montecarlo.logistic.pipeline``): FedAvg's
global model (pooled log-loss + global_lam/2 ||w||^2), local ridge (lam toward 0) and
fine-tuning (lam toward the global model), instead of the paper's SGD runs. Lines: the
proportional-regime limits at M = 5 (``riskcalc.logistic_limit(..., clients=5)`` for FedAvg
and fine-tuning; local ridge is the one-client ridge limit with centre 0,
``riskcalc.logistic_limit(signal=0, r=||w_i||)``).

Left panel: Appendix D's own centre norm, ||w_*|| = sqrt(100) = 10, R from 0 to 20, limits
through simulated points (||w_i|| from 10 to 22: the limits' quadrature resolves the label
weight's width 1 / ||w_i|| with Gauss-Legendre panels, ``riskcalc.logistic.engine.gaussian``). Right
panel: the same geometry at S = 1.5 and R / S from 0 to 2 (Appendix D's range of R / ||w_*||).
"""

import numpy as np

import riskcalc
from figures import style
from figures.core import Caption, Output, Table, register
from montecarlo.logistic.pipeline import replicate_task
from montecarlo.runner.stats import mean_se, t_half_width
from riskcalc.papers import cite

P000 = cite("000")
M, GAMMA, LAM, GLOBAL_LAM = 5, 1.0, 0.1, 1e-3
S_PAPER, S_THEORY = 10.0, 1.5
SERIES = (("fedavg", "FedAvg (global model)"), ("local_ridge", "local ridge"),
          ("rtfa", "FedAvg + fine-tuning"))


def _simulate(ctx, signal, R, d, reps):
    """Mean accuracy, its se and 95% half-width per estimator and R (client 0)."""
    tasks = [dict(gammas=[GAMMA] * M, rs=[float(r)] * M, signal=signal, lams=[LAM],
                  global_lam=GLOBAL_LAM, d=d, seed=ctx.seed, rep=k, weights="samples",
                  target=0, pfedme=False) for r in R for k in range(reps)]
    res = ctx.run(replicate_task, tasks, desc=f"S = {signal:g}")
    out = {}
    for key, _ in SERIES:
        acc = np.array([[1.0 - np.ravel(row[key]["test_error"])[0]
                         for row in res[i * reps:(i + 1) * reps]] for i in range(len(R))])
        mean, se = mean_se(acc, axis=1)
        out[key] = (mean, se, t_half_width(se, reps))
    return out


def _theory(signal, R):
    """Limits of the accuracy at ``signal`` along R (one call per point; local ridge as a
    grid)."""
    out = {}
    for key in ("fedavg", "rtfa"):
        out[key] = np.array([1.0 - riskcalc.logistic_limit(
            gamma=GAMMA, signal=signal, r=float(r), clients=M, global_lam=GLOBAL_LAM,
            method=key, **({"lam": LAM} if key == "rtfa" else {})).test_error for r in R])
    out["local_ridge"] = 1.0 - riskcalc.logistic_limit(
        gamma=GAMMA, signal=0.0, r=np.hypot(signal, R), lam=LAM).test_error
    return out


@register("p000-fig1-theory", paper="000", title="Fig. 1 (left) with exact minimizers: "
          "accuracy vs R of FedAvg, local ridge, fine-tuning; finite-M limits",
          source=f"{P000}, Fig. 1 and Appendix D; riskcalc.logistic_limit(clients=5)")
def make(ctx):
    reps = ctx.pick(2, 20)
    d_paper, d_theory = ctx.pick(40, 100), ctx.pick(40, 200)
    R_paper = np.linspace(0.0, 20.0, ctx.pick(3, 6))
    R_sim = S_THEORY * np.linspace(0.0, 2.0, ctx.pick(3, 5))
    # Quick: the limits at 5 points in each panel, the simulated R among them (the lines
    # pass through the markers' x exactly); the finite-M solves are most of the build.
    R_th = S_THEORY * np.linspace(0.0, 2.0, ctx.pick(5, 25))
    R_th_paper = np.linspace(0.0, 20.0, ctx.pick(5, 21))
    left = f"Appendix D: ‖w_*‖ = {S_PAPER:g}"
    right = f"‖w_0‖ = {S_THEORY:g}, R/‖w_0‖ ≤ 2"
    table = Table()
    for panel, signal, R, d in ((left, S_PAPER, R_paper, d_paper),
                                (right, S_THEORY, R_sim, d_theory)):
        sim = _simulate(ctx, signal, R, d, reps)
        for key, label in SERIES:
            m, s, h = sim[key]
            table.add(panel, label, "simulation", "R", R, "accuracy", m, se=s, lo=m - h,
                      hi=m + h, reps=reps)
    for panel, signal, R in ((left, S_PAPER, R_th_paper), (right, S_THEORY, R_th)):
        th = _theory(signal, R)
        for key, label in SERIES:
            table.add(panel, label, "theory", "R", R, "accuracy", th[key])
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, height=2.9)
    for ax, panel in zip(axes[0], (left, right)):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel("heterogeneity R = ‖w_i − w_0‖")
    axes[0, 0].set_ylabel("test accuracy (client 0)")
    style.label_panels(axes, (left, right))
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Paper 000 Fig. 1 (left) with exact ridge-regularized minimizers: accuracy against R",
        "x ~ N(0, I_d), P(y = 1 | x) = sigmoid(x·w_i), w_i = w_0 + R u_i, m = 5 clients with "
        "n_i = d samples each (γ = 1). FedAvg: the exact minimizer of the pooled log-loss "
        f"+ (global_lam/2)‖w‖², global_lam = {GLOBAL_LAM:g}; local ridge: λ/2 ‖w‖²; "
        "fine-tuning: λ/2 ‖w − w_g‖², "
        f"λ = {LAM:g}. Markers: exact Newton solves, accuracy on the population (labels and "
        "features integrated out exactly), mean over replicates with 95% Student-t "
        "intervals; lines: the finite-M limits (d, n → ∞, M = 5). Differences from the "
        "paper's runs: the paper trains by SGD (FedAvg T = 20 rounds of 5 local epochs at "
        "step 0.2 and global step 0.8, batch 16; local training 100 epochs; fine-tuning 15 "
        "epochs), whose early stopping regularizes implicitly and whose iterates are not "
        "minimizers; here every estimator is an exact minimizer with an explicit ridge. The "
        "paper averages over the m clients, here client 0 (exchangeable); the paper's v_i is "
        "negatively correlated with w_* (a correlation of order 1/√d), here uniform.",
        {"m = M": M, "γ = d/n_i": GAMMA, "λ": LAM, "global_lam": GLOBAL_LAM,
         "weights": "samples", "‖w_*‖ (left)": S_PAPER, "R (left)": R_paper,
         "R (left, limits)": R_th_paper, "d (left)": d_paper, "‖w_0‖ (right)": S_THEORY,
         "R (right, simulation)": R_sim,
         "R (right, limits)": R_th, "d (right)": d_theory, "reps": reps},
        notes=["Left: Appendix D's ‖w_*‖ = √100 = 10 puts ‖w_i‖ between 10 and 22; the label "
               "weight sigmoid(‖w_i‖ s) turns over a width 1/‖w_i‖, which the limits resolve "
               "with Gauss-Legendre panels of width 2π/‖w_i‖ (a global Gauss-Hermite rule "
               "does not converge there).",
               "Right: Appendix D's geometry at ‖w_0‖ = 1.5 (R/‖w_0‖ from 0 to 2 as "
               "R/‖w_*‖ in Appendix D)."]))
