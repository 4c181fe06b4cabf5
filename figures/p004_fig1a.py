"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 1(a): statistical error of the exact
minimizers against heterogeneity R (synthetic logistic regression, Sec. 6.1 / App. C):
GlobalTrain, LocalTrain, FedProx with lam in {0.02, 0.1, 0.5} and the adaptive lam of Thm 1."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.logistic import add_summary
from figures.p004_common import (ADAPTIVE, METHODS, NOTES, P004, caption_params, run,
                                 run_adaptive, settings)


def final(rows):
    """Rows at each run's last checkpoint (the exact-minimizer columns are per run)."""
    last = {}
    for r in rows:
        key = (r["method"], r["rep"], r["value"])
        if key not in last or r["checkpoint"] > last[key]["checkpoint"]:
            last[key] = r
    return list(last.values())


def error_vs_R(ctx, *, methods, adaptive: bool):
    s = settings(ctx)
    rows = final(run(ctx, s)) + (final(run_adaptive(ctx, s)) if adaptive else [])
    table = Table()
    panels = (("personalized models", "exact_local_stat_err"),
              ("global model", "exact_global_stat_err"))
    labels = list(methods) + ([("adaptive", ADAPTIVE)] if adaptive else [])
    for panel, col in panels:
        for key, label in labels:
            add_summary(table, rows, panel=panel, method=key, series=label, x_col="value",
                        x_name="R", y_col=col)
    colors = style.Colors(table.series())
    fig, axes = style.figure(2)
    for ax, (panel, col) in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors, logy=True)
        for label in table.series():
            sel = table.select(panel=panel, series=label)
            ax.plot([r["x"] for r in sel], [r["y"] for r in sel], color=colors[label][0],
                    lw=1.0, alpha=0.7)
        ax.set_xlabel(r"heterogeneity $R$ (per-coordinate variance of $w_k - u$)")
    axes[0, 0].set_ylabel(r"mean $\|\tilde w^{(i)} - w_*^{(i)}\|^2$")
    axes[0, 1].set_ylabel(r"$\|\tilde w^{(g)} - w_*^{(g)}\|^2$")
    style.label_panels(axes, [p for p, _ in panels])
    style.legend(fig, table, colors, ncol=3)
    return fig, table, s


@register("p004-fig1a", paper="004", title="statistical error vs heterogeneity R "
          "(GlobalTrain, LocalTrain, FedProx)", source=f"{P004}, Fig. 1(a), Sec. 6.2, App. C")
def make(ctx):
    fig, table, s = error_vs_R(ctx, methods=METHODS, adaptive=True)
    return Output(fig, table, Caption(
        "Paper 004 Fig. 1(a): statistical error of the exact minimizers against R",
        "Markers joined by thin lines: squared distance of the exact minimizer of each "
        "objective (Newton) to the true models, left averaged over clients, right for the "
        "global model (w_*^(g) = mean of the w_*^(i)); mean over replicates with 95% "
        "Student-t error bars (none with one replicate). Log y.",
        caption_params(s), notes=list(NOTES)))
