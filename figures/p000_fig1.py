"""Paper 000 (``000_7ff2ed2592df3b60.txt``), Fig. 1 (Sec. 3.3-3.4, Appendix D): test accuracy
against the heterogeneity R of federated logistic regression.

Left: FedAvg, PureLocalTraining and FedAvg followed by local fine-tuning; right: FedProx
(Alg. 2) with lam in {0, 0.44, 4}. Runs ``montecarlo.experiments.presets`` "paper000-fig1" (Appendix D's
hyperparameters: m = 5, n_i = 100, d = 100, T = 20 rounds, global step 0.8, 5 local epochs at
0.2, batch 16; 100 local epochs; 15 fine-tuning epochs).
"""

import numpy as np

from figures import style
from figures.core import Caption, Output, Table, register
from figures.logistic import add_summary
from riskcalc.papers import cite

P000 = cite("000")
LEFT = (("fedavg", "FedAvg"), ("local", "PureLocalTraining"), ("finetune", "FedAvg + fine-tuning"))
RIGHT = (("fedprox_0", "FedProx, λ = 0"), ("fedprox_0.44", "FedProx, λ = 0.44"),
         ("fedprox_4", "FedProx, λ = 4"))


@register("p000-fig1", paper="000", title="accuracy vs heterogeneity R: FedAvg, local, "
          "fine-tuning (left), FedProx (right)", source=f"{P000}, Fig. 1 and Appendix D")
def make(ctx):
    R = np.linspace(0, 20, ctx.pick(5, 21))
    reps = ctx.pick(2, 100)
    n_test = ctx.pick(1000, 5000)
    rows = ctx.preset("paper000-fig1", {"R": R.tolist(), "n_test": n_test}, reps)
    table = Table()
    panels = ("FedAvg, local training, fine-tuning", "FedProx (Alg. 2)")
    for panel, methods in zip(panels, (LEFT, RIGHT)):
        for key, label in methods:
            add_summary(table, rows, panel=panel, method=key, series=label, x_col="value",
                        x_name="R", y_col="accuracy")
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, sharey=True)
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors)
        for label in {r["series"] for r in table.select(panel=panel)}:
            sel = table.select(panel=panel, series=label)
            ax.plot([r["x"] for r in sel], [r["y"] for r in sel], color=colors[label][0],
                    lw=1.0, alpha=0.7)
        ax.set_xlabel("heterogeneity $R$ (distance of $w_*^{(i)}$ from $w_*$)")
    axes[0, 0].set_ylabel("test accuracy (mean over clients)")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Paper 000 Fig. 1: test accuracy against heterogeneity R (federated logistic "
        "regression)",
        "Markers joined by thin lines: accuracy on fresh test features (labels integrated out "
        "exactly), averaged over the m clients, mean over replicates with 95% Student-t error "
        "bars. Left: FedAvg, PureLocalTraining and FedAvg + fine-tuning; right: FedProx "
        "(Alg. 2) with λ = 0, 0.44, 4.",
        {"R": R, "m": 5, "n_i": 100, "d": 100, "n_test per client": n_test,
         "labels": "Bernoulli (logistic model)", "rounds T": 20, "global step": 0.8,
         "local SGD": "5 epochs, step 0.2, batch 16", "PureLocalTraining": "100 epochs",
         "fine-tuning": "15 epochs, step 0.2", "FedProx": "T = 20, global step 0.8, "
         "K_t = 5 epochs, local step 0.2", "l2": 0, "reps": reps},
        notes=["Appendix D does not say how v_i is drawn: v_i = -sign(u_i'w*) u_i with u_i "
               "uniform on the sphere (montecarlo.experiments.problems.paper000_instance).",
               "K_t = 5 'local rounds' of FedProx read as 5 epochs (equal local work to "
               "FedAvg); Alg. 2's swapped branch corrected (see montecarlo.experiments.algorithms.fedprox)."]))
