"""Paper 003 theory-vs-simulation curves: riskcalc limits as lines, montecarlo replicates as
points with 95% intervals.

A ``Curve`` is one series of one panel: a method, the swept variable (gamma, or its tuning
parameter lam / alpha), the fixed parameters, and the instance ``Setting`` of its simulated
points. ``theory_vs_simulation`` evaluates every curve's limit with ``riskcalc.limit``
(vectorized over the grid) and simulates every point through ``simulate``, the one place the
figures call the simulation: replicates are ``montecarlo.compare.replicate_task`` tasks (paper
003 eq. 3 measured on instances of Sec. 2), all curves of a figure in one ``run_tasks`` call,
and a tuning sweep shares one decomposition per replicate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

import riskcalc
from figures import style
from figures.core import Table
from montecarlo.compare import replicate_task, spec_to_dict, summarize
from montecarlo.linear.instances import Setting
from riskcalc.papers import cite

P003 = cite("003")

# Default model of the paper 003 figures: ||theta_i - theta_0|| = 1 and noise 0.5 (so FTFA beats
# FedAvg for gamma > 4/3, see p003_region); a two-point covariance of mean 1 and condition
# number 7 as the non-identity case.
R, SIGMA = 1.0, 0.5
TWO_POINT = riskcalc.Spectrum.two_point(0.25, 1.75, 0.5)

XLABELS = {
    "gamma": r"$\gamma = d / n$ (parameters per sample)",
    "lam": r"ridge penalty $\lambda$",
    "alpha": r"MAML step size $\alpha$",
    "clients": r"number of clients $M$",
    "steps": "personalization gradient steps $k$",
    "snr": r"signal-to-noise $r^2/\sigma^2$",
}
RISK_LABEL = r"excess risk $\mathbb{E}\,\|\hat\theta_i - \theta_i\|_\Sigma^2$"


def spectrum_name(spectrum) -> str:
    return "Σ = I" if spectrum is None else "Σ two-point {0.25, 1.75}"


@dataclass
class Curve:
    """One series of one panel.

    Attributes
    ----------
    panel, series : str
        Panel title and legend label.
    method : str
        ``riskcalc.METHODS`` name.
    x_name : {"gamma", "lam", "alpha"}
        Swept variable.
    x_theory, x_sim : sequence of float
        Grid of the theory line and of the simulated points (empty: theory only).
    params : dict
        Fixed parameters (gamma or the tuning value, r or rho, sigma).
    spectrum : Spectrum or None
    setting : Setting or None
        Instances of the simulated points (None: theory only).
    """

    panel: str
    series: str
    method: str
    x_name: str
    x_theory: object
    x_sim: object = ()
    params: dict = field(default_factory=dict)
    spectrum: object = None
    setting: Setting | None = None

    def limit(self, x):
        return riskcalc.limit(self.method, spectrum=self.spectrum,
                              **{**self.params, self.x_name: np.asarray(x, float)})


def simulate(ctx, points, reps: int, desc: str = "replicates") -> list[dict]:
    """Simulated bias, variance and risk at each point, ``reps`` replicates each.

    Points that differ only in their tuning values (e.g. the gamma = 0.5 point of a lam = 0.1
    curve, of a lam = 1 curve and of a lam sweep at gamma = 0.5) sample the very same
    instances (the tuning does not enter ``sample_instance``), so they share one task per
    replicate that measures the union of their tunings on one decomposition per client. Each
    tuning value is measured separately from the others, so the numbers are those of separate
    tasks (up to floating-point rounding of the vectorized oracle formulas).

    Parameters
    ----------
    ctx : figures.core.Context
    points : list of (ClientSpec, tunings, Setting, steps, step_size)
        A scalar spec, the tuning values sharing its replicates' decompositions (lam or
        alpha; ``[0.0]`` for untuned methods), the instance setting, and optional finite
        personalization (``steps``, ``step_size``; None for the converged estimator).
    reps : int

    Returns
    -------
    list of dict
        Per point, per quantity (bias, variance, risk): ``summarize`` output (mean, se, low,
        high; arrays over the tunings).
    """
    groups, where = {}, []
    for spec, tunings, setting, steps, step_size in points:
        sd = spec_to_dict(spec)
        tune = _tuning_name(spec.method)
        key = json.dumps([{**sd, **({tune: None} if tune else {})}, setting.as_dict(), steps,
                          step_size], sort_keys=True)
        if key not in groups:
            groups[key] = ({"spec": sd, "setting": setting.as_dict(), "seed": ctx.seed,
                            "kind": "conditional", "steps": steps, "step_size": step_size},
                           [])
        values = groups[key][1]
        idx = []
        for t in tunings:
            if float(t) not in values:
                values.append(float(t))
            idx.append(values.index(float(t)))
        where.append((key, idx))
    tasks, first = [], {}
    for key, (base, values) in groups.items():
        first[key] = len(tasks)
        tasks += [{**base, "tunings": values, "rep": rep} for rep in range(reps)]
    results = ctx.run(replicate_task, tasks, desc)
    out = []
    for key, idx in where:
        res = results[first[key]:first[key] + reps]
        out.append({q: summarize([np.asarray(r[q])[idx] for r in res], np.zeros(len(idx)))
                    for q in ("bias", "variance", "risk")})
    return out


def clients_figure(ctx, table: Table, where, points, reps: int, clients):
    """Simulate the federated ``points`` (labelled by ``where``: (panel, series, M) each), add
    them to ``table`` and draw the risk against the number of clients M, one panel per
    spectrum (log M axis ticked at ``clients``); returns the figure."""
    for (panel, label, m), s in zip(where, simulate(ctx, points, reps)):
        r = s["risk"]
        table.add(panel, label, "simulation", "clients", m, "risk", r["mean"], se=r["se"],
                  lo=r["low"], hi=r["high"], reps=reps)
    series = table.series()
    # A series' M -> infinity reference line ("LABEL, M → ∞ ...") takes the series' colour.
    colors = style.Colors(series, same={ref: base for ref in series for base in series
                                        if ref.startswith(f"{base}, M → ∞")})
    fig, axes = style.figure(2, sharey=True)
    for ax, panel in zip(axes[0], table.panels()):
        style.draw_panel(ax, table, panel, colors, logx=True)
        ax.set_xticks(clients, [str(m) for m in clients])
        ax.minorticks_off()
        ax.set_xlabel(XLABELS["clients"])
    axes[0, 0].set_ylabel(RISK_LABEL)
    style.label_panels(axes, table.panels())
    style.legend(fig, table, colors, ncol=2)
    return fig


def _tuning_name(method):
    return riskcalc.get_method(method).tuning


def theory_vs_simulation(ctx, curves, reps: int, table: Table | None = None,
                         quantity: str = "risk") -> Table:
    """Fill a table with every curve's theory line and simulated points (one simulation run)."""
    table = Table() if table is None else table
    points, where = [], []
    for c in curves:
        if c.setting is None or len(c.x_sim) == 0:
            continue
        tune = _tuning_name(c.method)
        fixed = dict(c.params)
        if c.x_name == "gamma":
            tval = fixed.pop(tune, 0.0) if tune else 0.0
            for g in c.x_sim:
                spec = riskcalc.ClientSpec(c.method, gamma=float(g), spectrum=c.spectrum,
                                           **({tune: tval} if tune else {}), **fixed)
                where.append((c, [float(g)], len(points)))
                points.append((spec, [tval], c.setting, None, None))
        else:
            spec = riskcalc.ClientSpec(c.method, spectrum=c.spectrum,
                                       **{c.x_name: float(c.x_sim[0])}, **fixed)
            where.append((c, [float(x) for x in c.x_sim], len(points)))
            points.append((spec, list(c.x_sim), c.setting, None, None))
    sims = simulate(ctx, points, reps)
    for c in curves:
        table.add(c.panel, c.series, "theory", c.x_name, c.x_theory, quantity,
                  getattr(c.limit(c.x_theory), quantity))
    for c, xs, i in where:
        s = sims[i][quantity]
        # A gamma sweep has one point per simulation (one tuning); a tuning sweep one point per
        # tuning value of a single simulation.
        table.add(c.panel, c.series, "simulation", c.x_name, xs, quantity, s["mean"],
                  se=s["se"], lo=s["low"], hi=s["high"], reps=reps)
    return table


def sizes(ctx) -> dict:
    """Dimension and replicates of the paper 003 simulations (quick: CI mode)."""
    return {"d": ctx.pick(100, 400), "reps": ctx.pick(6, 40)}


def federated_sizes(ctx) -> dict:
    """Dimension, clients and replicates when the global model is actually fitted over M
    simulated clients (each replicate solves a d x d system over all of them)."""
    return {"d": ctx.pick(60, 200), "clients": ctx.pick(20, 100), "reps": ctx.pick(5, 20)}


def fedavg_reference(table: Table, panels, x_name: str) -> None:
    """FedAvg's risk r² (zero personalization, Cor. 3.1) as a dashed reference in each panel."""
    for panel in panels:
        table.add(panel, "FedAvg (r²)", "reference", x_name, np.nan, "risk", R ** 2)


def sweep_figure(ctx, *, gamma_series, tuning_series, setting, reps: int, gamma_theory,
                 gamma_sim, tuning_theory, tuning_sim, with_fedavg=True, optimum=None):
    """The 2 x 2 layout of the Thm 2-4 / Cor. 3.1 figures: rows Σ = I and two-point Σ;
    left column risk vs gamma, right column risk vs the tuning parameter (lam or alpha).

    ``gamma_series`` and ``tuning_series`` are lists of (label, method, fixed parameters).
    ``optimum(method, params, spectrum) -> (tuning*, risk*)``, when given, marks each
    right-panel curve's minimum with a star (table kind ``optimum``).
    Returns (figure, table).
    """
    tune = _tuning_name(tuning_series[0][1])
    curves, panels = [], []
    for sp in (None, TWO_POINT):
        pg = f"{spectrum_name(sp)}, vs γ"
        pt = f"{spectrum_name(sp)}, vs {'λ' if tune == 'lam' else 'α'}"
        panels += [(pg, "gamma"), (pt, tune)]
        curves += [Curve(pg, lab, m, "gamma", gamma_theory, gamma_sim, p, sp, setting)
                   for lab, m, p in gamma_series]
        curves += [Curve(pt, lab, m, tune, tuning_theory, tuning_sim, p, sp, setting)
                   for lab, m, p in tuning_series]
    table = theory_vs_simulation(ctx, curves, reps)
    for c in curves:
        if optimum is not None and c.x_name == tune:
            x, y = optimum(c.method, c.params, c.spectrum)
            table.add(c.panel, c.series, "optimum", tune, x, "risk", y)
    if with_fedavg:
        fedavg_reference(table, [p for p, _ in panels], "none")
    colors = style.Colors(table.series())
    fig, axes = style.figure(2, 2)
    for ax, (panel, x_name) in zip(axes.ravel(), panels):
        style.draw_panel(ax, table, panel, colors, logx=x_name != "gamma")
        ax.set_xlabel(XLABELS[x_name])
        ax.set_ylabel(RISK_LABEL)
    style.label_panels(axes, [p for p, _ in panels])
    style.legend(fig, table, colors, ncol=3)
    return fig, table
