"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 5 (App. C): bilevel FedProx with 100 and
1,000 clients and 10% client sampling per round, total error along the communication rounds at
several heterogeneity levels R (synthetic logistic regression, Sec. 6.1).

The paper's reading (App. C, after Fig. 5): smaller lam converges faster in the first rounds,
larger lam needs more rounds, and as R grows smaller lam overtakes larger lam."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.logistic import add_summary
from figures.p004_common import METHODS, NOTES, P004, PRESET, caption_params, overrides, settings

FEDPROX = [(k, label) for k, label in METHODS if k.startswith("fedprox")]
SAMPLING = 0.1  # App. C: 10% of the clients each round


def fig5_settings(ctx) -> dict:
    """Client counts, R grid and budgets (quick: CI mode, fewer and smaller everything)."""
    return {**settings(ctx), "clients": ctx.pick((20, 100), (100, 1000)),
            "R": ctx.pick([0.0, 3.0], [0.0, 1.0, 3.0]), "reps": ctx.pick(1, 3),
            "n_test": ctx.pick(50, 100), "fedprox_rounds": ctx.pick(15, 100)}


def relative(rows) -> list:
    """Rows with the total error and the exact minimizer's error divided by the error of the
    zero start of the same run (the clients' mean ||w_*^(i)||^2): the replicates differ mostly
    by that scale, which would hide the differences between the λ."""
    start = {(r["method"], r["rep"], r["value"]): r["local_stat_err"] for r in rows
             if r["checkpoint"] == 0}
    return [dict(r, relative_err=r["local_stat_err"] / s0,
                 relative_floor=r["exact_local_stat_err"] / s0)
            for r in rows for s0 in [start[(r["method"], r["rep"], r["value"])]]]


@register("p004-fig5", paper="004", title="FedProx with 100 and 1,000 clients, 10% client "
          "sampling", source=f"{P004}, Fig. 5 (App. C), Thm 2")
def make(ctx):
    s = fig5_settings(ctx)
    table = Table()
    panels = []
    for m in s["clients"]:
        per_round = max(1, round(SAMPLING * m))
        # One preset run per R: with 1,000 clients a batched R grid would hold every R's data
        # and trajectories in memory at once.
        for R in s["R"]:
            ov = overrides({**s, "R": [R]}, methods=[k for k, _ in FEDPROX],
                           m=m, **{"*.clients_per_round": per_round})
            rows = relative(ctx.preset(PRESET, ov, s["reps"], trajectory=True))
            panel = f"m = {m}, R = {R:g}"
            panels.append(panel)
            for key, label in FEDPROX:
                add_summary(table, rows, panel=panel, method=key, series=label,
                            x_col="rounds", x_name="round", y_col="relative_err", kind="path")
                floor = [r["relative_floor"] for r in rows
                         if r["method"] == key and r["checkpoint"] == 0]
                table.add(panel, label, "reference", "round", 0.0, "relative_floor",
                          sum(floor) / len(floor), reps=len(floor))
    colors = style.Colors(table.series())
    ncols = len(s["R"])
    fig, axes = style.figure(ncols, len(s["clients"]))
    for ax, panel in zip(axes.ravel(), panels):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlim(0, s["fedprox_rounds"])
    for ax in axes[-1]:
        ax.set_xlabel("communication round $t$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"total error / error at $t = 0$")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=len(FEDPROX))
    params = caption_params(s)
    for key in ("GlobalTrain", "LocalTrain", "adaptive λ"):
        del params[key]
    params["m"] = list(s["clients"])
    params["clients per round"] = f"{SAMPLING:.0%} of m, uniformly without replacement"
    return Output(fig, table, Caption(
        f"Paper 004 Fig. 5: bilevel FedProx with 10% client sampling, "
        f"{' and '.join(f'{m:,}' for m in s['clients'])} clients",
        "Lines: total error, the squared distance of the round-t local models to the true "
        "models averaged over all clients (the ones not sampled keep their last model), "
        "divided by its value at the zero start t = 0 (the clients' mean ||w_*^(i)||^2) of the "
        "same replicate; mean over replicates (band: 95% Student-t interval). Dashed: the same "
        "ratio for the exact FedProx minimizer (Newton), the floor each λ converges to. Rows: "
        "number of clients; columns: R.",
        params, notes=[n for n in NOTES if not n.startswith("m, n, d")]
        + ["n, d are not stated in the paper: 200, 60 (Li et al.'s dimension)."]))
