"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 1(d): total error along the communication
rounds at low and high heterogeneity, as the authors ran it (``figures.p004_common``; the error
of every round's models, ``simulation_main.py`` ATR/ITR)."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.p004_common import NOTES, P004, caption_params, run_stat, stat_runs, stat_settings


@register("p004-fig1d", paper="004", title="total error vs communication rounds, the authors' "
          "setup", source=f"{P004}, Fig. 1(d), Sec. 6.3, App. C; ZLHe0/fedprox-bilevel")
def make(ctx):
    s = stat_settings(ctx)
    runs = [r for r in stat_runs(s) if r[0] != "local"]     # LocalTrain does not communicate
    res = run_stat(ctx, s, runs)
    ends = (0, len(s["R"]) - 1)
    table = Table()
    panels = [f"R = {s['R'][i]:.3g}" for i in ends]
    for panel, i in zip(panels, ends):
        for key, label, _ in runs:
            itr = res[key]["itr"][i]
            table.add(panel, label, "path", "round", range(1, len(itr) + 1), "itr", itr,
                      reps=1)
    colors = style.Colors(table.series())
    fig, axes = style.figure(2)
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel("communication round")
    axes[0, 0].set_ylabel("local total error mean ||w_k − W_k^T||")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=2)
    params = caption_params(s)
    params["GlobalTrain"] = f"FedAvg, {s['rounds']} rounds × {s['local_epochs']} steps, lr 0.01"
    return Output(fig, table, Caption(
        "Paper 004 Fig. 1(d) as the authors ran it: local total error along the rounds",
        "Lines: ITR after each round (one deterministic run, the authors' seeds) at the "
        "smallest and largest R drawn. LocalTrain does not communicate and is not shown.",
        params, notes=list(NOTES[:4])))
