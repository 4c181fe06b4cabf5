"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 1(a): global and local "statistical error"
against heterogeneity R, as the authors ran it (``figures.p004_common``; the authors' plot,
``src/simulation/visualize_stat_error.py``, draws the last round's ATR and ITR at every second
R of linspace(0.1, 3, 10))."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.p004_common import (NOTES, P004, caption_params, floors, run_stat, stat_runs,
                                 stat_settings)

PANELS = (("global", "atr", "global error ATR"), ("local", "itr", "local error ITR"))


def error_vs_R(ctx, runs, s, extra=None):
    """Table and figure of the last-round errors of ``runs`` (plus ``extra``: key -> (label,
    result)) against R, with the exact floor."""
    res = run_stat(ctx, s, runs)
    series = [(label, res[key]) for key, label, _ in runs] + list((extra or {}).values())
    table = Table()
    floor = floors(s["R"])
    for j, (panel, col, _) in enumerate(PANELS):
        for label, r in series:
            table.add(panel, label, "simulation", "R", s["R"], col, [v[-1] for v in r[col]],
                      reps=1)
        table.add(panel, "floor (no method goes below)", "theory", "R", s["R"], col,
                  floor[:, j])
    colors = style.Colors(table.series())
    fig, axes = style.figure(2)
    for ax, (panel, _, ylabel) in zip(axes[0], PANELS):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel("heterogeneity R (std of the true models' entries)")
        ax.set_ylabel(ylabel)
    style.label_panels(axes, [p for p, _, _ in PANELS])
    style.legend(fig, table, colors, ncol=2, kinds=False)
    return fig, table


@register("p004-fig1a", paper="004", title="statistical error vs heterogeneity R, the authors' "
          "setup (GlobalTrain, LocalTrain, FedProx as run and as described)",
          source=f"{P004}, Fig. 1(a), Sec. 6.2, App. C; ZLHe0/fedprox-bilevel")
def make(ctx):
    s = stat_settings(ctx)
    fig, table = error_vs_R(ctx, stat_runs(s), s)
    params = caption_params(s)
    params["GlobalTrain"] = f"FedAvg, {s['rounds']} rounds × {s['local_epochs']} steps, lr 0.01"
    params["LocalTrain"] = (f"{s['local_rounds']} × {s['local_epochs']} GD steps, "
                            f"lr {s['lr_localtrain']:g}")
    params["λ"] = list(s["lams"])
    return Output(fig, table, Caption(
        "Paper 004 Fig. 1(a) as the authors ran it: errors after the last round against R",
        "Markers: ATR = ||w_g − mean_k W_k^T||_F (left) and ITR = mean_k ||w_k / s_k − W_k^T||_F "
        "(right) of the last round, one deterministic run "
        "(the authors' seeds; no error bars). 'as run': the published code (no server step); "
        "'as described': Alg. 1's server step. Line: the exact floor. The authors plot every "
        "second R; all are drawn here. Quick mode shortens every horizon (and LocalTrain uses "
        "lr 0.01 for the same lr × steps): LocalTrain's error depends on the horizon (it has no "
        "minimizer); GlobalTrain's and FedProx's approach their minimizers' errors.",
        params, notes=list(NOTES)))
