"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 1(d): total error along the communication
rounds (distance of the round-t local models to the true models), at low and high
heterogeneity R (synthetic logistic regression, Sec. 6.3 / App. C)."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.logistic import add_summary
from figures.p004_common import METHODS, NOTES, P004, caption_params, run, settings


@register("p004-fig1d", paper="004", title="total error vs communication rounds",
          source=f"{P004}, Fig. 1(d), Sec. 6.3, App. C")
def make(ctx):
    s = settings(ctx)
    rows = run(ctx, s)
    r_values = (min(s["R"]), max(s["R"]))
    table = Table()
    panels = [f"R = {R:g}" for R in r_values]
    for panel, R in zip(panels, r_values):
        for key, label in METHODS:
            if key == "local":  # no communication rounds to plot against
                continue
            add_summary(table, [r for r in rows if r["value"] == R], panel=panel,
                        method=key, series=label, x_col="rounds", x_name="round",
                        y_col="local_stat_err", kind="path")
    colors = style.Colors(table.series())
    fig, axes = style.figure(2)
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors, logy=True)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlim(0, s["fedprox_rounds"] * 4)
        ax.set_xlabel("communication round $t$")
    axes[0, 0].set_ylabel(r"total error, mean $\|w_t^{(i)} - w_*^{(i)}\|^2$")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=3)
    return Output(fig, table, Caption(
        "Paper 004 Fig. 1(d): total error of the local models along the communication rounds",
        "Lines: squared distance of the round-t local models to the true models, averaged "
        "over clients, mean over replicates (band: 95% Student-t interval). LocalTrain does "
        "not communicate and is not shown. x axis: symmetric log, cut at "
        f"{s['fedprox_rounds'] * 4} rounds.",
        caption_params(s), notes=list(NOTES)))
