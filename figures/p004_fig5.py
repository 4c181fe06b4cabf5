"""Paper 004 (``004_98172ed3646eef14.txt``), Fig. 5 (App. C): FedProx with many clients and 10%
client sampling, total error along the rounds, as the authors ran it
(``notebooks/simulation_main_total.ipynb`` of ZLHe0/fedprox-bilevel: 1,000 clients, R = 2,
lam in {0.02, 0.25, 0.5}, 100 rounds, 150 local epochs). The code's sampling is unseeded
(``random.sample``); ours is seeded from the figure seed."""

import numpy as np

from figures import style
from figures.core import Caption, Output, Table, register
from figures.p004_common import NOTES, P004, caption_params
from montecarlo.experiments.paper004 import (AUTHORS_PRESETS, authors_data, authors_errors,
                                             authors_run)
from montecarlo.runner.seeding import replicate_rng

TOTAL = AUTHORS_PRESETS["paper004-authors-total"]


def total_task(task: dict) -> dict:
    """Per-round ATR and ITR of one FedProx run with client sampling."""
    data = authors_data(task["R"], m=task["m"])
    rng = replicate_rng(task["seed"], 0)
    out = authors_run(data, "FedProx", lam=task["lam"], rounds=task["rounds"],
                      local_epochs=task["local_epochs"], variant=task["variant"],
                      sampling_rate=TOTAL["sampling_rate"], rng=rng)
    atr, itr = authors_errors(data, out["G"], out["W"])
    return {"atr": list(atr), "itr": list(itr)}


def settings(ctx):
    return {"m": ctx.pick(100, TOTAL["m"]), "R": TOTAL["R"], "lams": TOTAL["lams"],
            "rounds": ctx.pick(20, TOTAL["rounds"]),
            "local_epochs": ctx.pick(30, TOTAL["local_epochs"])}


@register("p004-fig5", paper="004", title="FedProx with many clients and 10% client sampling, "
          "the authors' setup", source=f"{P004}, Fig. 5 (App. C), Thm 2; ZLHe0/fedprox-bilevel")
def make(ctx):
    s = settings(ctx)
    tasks = [{"R": s["R"][0], "m": s["m"], "lam": lam, "rounds": s["rounds"],
              "local_epochs": s["local_epochs"], "variant": v, "seed": ctx.seed}
             for v in ("as-run", "as-described") for lam in s["lams"]]
    res = ctx.run(total_task, tasks, desc="client sampling")
    table = Table()
    for t, r in zip(tasks, res):
        for kind, col in (("global", "atr"), ("local", "itr")):
            table.add(f"{kind} total error", f"FedProx λ = {t['lam']:g} ({t['variant']})",
                      "path", "round", np.arange(1, s["rounds"] + 1), col, r[col],
                      reps=1)
    colors = style.Colors(table.series())
    fig, axes = style.figure(2)
    panels = ("global total error", "local total error")
    for ax, panel in zip(axes[0], panels):
        style.draw_panel(ax, table, panel, colors)
        ax.set_xlabel("communication round")
    style.label_panels(axes, panels)
    style.legend(fig, table, colors, ncol=2)
    params = caption_params(s, m=s["m"])
    params["clients per round"] = f"{TOTAL['sampling_rate']:.0%} of m, without replacement"
    params["λ"] = list(s["lams"])
    return Output(fig, table, Caption(
        f"Paper 004 Fig. 5 as the authors ran it: FedProx, {s['m']:,} clients, 10% sampling",
        "Lines: ATR / ITR after each round over all clients (the ones not sampled keep their "
        "last model; 'as run' averages all of them into w_g, as the published code does).",
        params, notes=list(NOTES[:4])))
