"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 2 (Sec. 6.3): effect of the number of local
updates K per round on bilevel FedProx, for a small and a large lam (Cor. 1: more
personalization, i.e. smaller lam, benefits more from local computation)."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.logistic import add_summary
from figures.p004_common import NOTES, P004, PRESET, caption_params, overrides, settings

LAMS = (("fedprox_0.02", 0.02), ("fedprox_0.5", 0.5))
KS = (1, 5, 20, 50)
R_FIG = 1.0


@register("p004-fig2", paper="004", title="effect of local updates K on FedProx",
          source=f"{P004}, Fig. 2, Sec. 6.3, Cor. 1")
def make(ctx):
    s = {**settings(ctx), "R": [R_FIG]}
    ks = ctx.pick(KS[:3], KS)
    table = Table()
    panels = [f"FedProx, λ = {lam:g}" for _, lam in LAMS]
    for K in ks:
        ov = overrides(s, methods=[k for k, _ in LAMS], **{"*.inner_steps": K})
        rows = ctx.preset(PRESET, ov, s["reps"], trajectory=True)
        for panel, (key, _) in zip(panels, LAMS):
            add_summary(table, rows, panel=panel, method=key, series=f"K = {K}",
                        x_col="rounds", x_name="round", y_col="local_opt_err", kind="path")
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, sharey=True)
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors, logy=True)
        ax.set_xlabel("communication round $t$")
    axes[0, 0].set_ylabel(r"optimization error, mean $\|w_t^{(i)} - \tilde w^{(i)}\|^2$")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=len(ks))
    params = caption_params(s)
    params["inner steps K"] = list(ks)
    return Output(fig, table, Caption(
        "Paper 004 Fig. 2: FedProx with K local gradient steps per round, small vs large λ",
        "Lines: squared distance of the round-t local models to the exact FedProx minimizer "
        "(Newton), averaged over clients, mean over replicates (band: 95% Student-t "
        "interval). The paper plots the error to the true models; the distance to the "
        "minimizer isolates the optimization effect of K that the figure is about.",
        params, notes=list(NOTES)))
