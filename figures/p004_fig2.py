"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 2 (Sec. 6.3): FedProx's total error along the
rounds for several numbers of local updates, as the authors ran it
(``notebooks/simulation_main_local_epochs.ipynb`` of ZLHe0/fedprox-bilevel: lam = 0.5, R = 1,
10 clients, 20 rounds, local epochs 25..150)."""

from figures import style
from figures.core import Caption, Output, Table, register
from figures.p004_common import NOTES, P004, caption_params
from montecarlo.experiments.paper004 import (AUTHORS_PRESETS, authors_data, authors_errors,
                                             authors_run)

EPOCHS = AUTHORS_PRESETS["paper004-authors-epochs"]


def epochs_task(task: dict) -> dict:
    """Per-round ATR and ITR of FedProx with ``task['local_epochs']`` local steps."""
    data = authors_data(task["R"])
    out = authors_run(data, "FedProx", lam=task["lam"], rounds=task["rounds"],
                      local_epochs=task["local_epochs"], variant=task["variant"])
    atr, itr = authors_errors(data, out["G"], out["W"])
    return {"atr": list(atr), "itr": list(itr)}


def settings(ctx):
    return {"R": EPOCHS["R"], "lam": EPOCHS["lams"][0], "rounds": EPOCHS["rounds"],
            "epochs": ctx.pick(EPOCHS["epochs_grid"][::2], EPOCHS["epochs_grid"])}


@register("p004-fig2", paper="004", title="effect of local updates on FedProx, the authors' "
          "setup", source=f"{P004}, Fig. 2, Sec. 6.3, Cor. 1; ZLHe0/fedprox-bilevel")
def make(ctx):
    s = settings(ctx)
    tasks = [{"R": s["R"][0], "lam": s["lam"], "rounds": s["rounds"], "local_epochs": K,
              "variant": v} for v in ("as-run", "as-described") for K in s["epochs"]]
    res = ctx.run(epochs_task, tasks, desc="local epochs")
    table = Table()
    panels = ("global total error (as run)", "local total error (as run)",
              "local total error (as described)")
    for t, r in zip(tasks, res):
        label = f"{t['local_epochs']} local updates"
        cols = (("global", "atr"), ("local", "itr")) if t["variant"] == "as-run" else \
            (("local", "itr"),)
        for kind, col in cols:
            panel = f"{kind} total error ({t['variant'].replace('-', ' ')})"
            table.add(panel, label, "path", "round", range(1, s["rounds"] + 1), col, r[col],
                      reps=1)
    colors = style.Colors(table.series())
    fig, axes = style.figure(3)
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel("communication round")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=len(s["epochs"]))
    params = caption_params({"R": s["R"], "rounds": s["rounds"], "local_epochs": s["epochs"]})
    params["λ"] = s["lam"]
    return Output(fig, table, Caption(
        "Paper 004 Fig. 2 as the authors ran it: FedProx with several numbers of local updates",
        "Lines: ATR / ITR after each round, one deterministic run (the authors' seeds).",
        params, notes=list(NOTES[:4])))
