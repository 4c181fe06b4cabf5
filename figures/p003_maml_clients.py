"""Paper 003 (``003_4b976ddf5225c17e.txt``), Thm 3: MAML-FL approaches FTFA as clients grow.

With M simulated clients the global models of FedAvg (eq. 6) and MAML-FL (eq. 12) are fitted,
then both are fine-tuned to the client's min-norm interpolant (eqs. 7, 13). As M grows both
global models approach theta_0 and the simulated risks approach the common limit of Thms 1
and 3 (a riskcalc line); for Sigma = I the exact finite-M limits of both global models
(``riskcalc.limit(..., clients=M)``) are the lines through the points. Points: simulation means
with 95% intervals.
"""

import numpy as np

import riskcalc
from figures.core import Caption, Output, Table, register
from figures.linear import P003, R, SIGMA, TWO_POINT, clients_figure, spectrum_name
from montecarlo.linear.instances import Setting

GAMMA = 2.0
ALPHAS = (0.05, 0.2)


@register("p003-maml-clients", paper="003",
          title="MAML-FL approaching FTFA as the number of clients grows (Thm 3)",
          source=f"{P003}, Thms 1 and 3 (eqs. 6-7, 11-13)")
def make(ctx):
    d = ctx.pick(60, 200)
    reps = ctx.pick(5, 20)
    # M = 2 would make N = sum n_j = d: the global least squares is exactly determined and its
    # risk unbounded, so M starts at 4 (N = 2d).
    clients = ctx.pick([4, 16, 64], [4, 8, 16, 32, 64, 128])
    methods = [("FTFA", "ftfa", {})] + [(f"MAML-FL, α = {a:g}", "maml_fl", {"alpha": a})
                                        for a in ALPHAS]
    table, points, where = Table(), [], []
    for sp in (None, TWO_POINT):
        panel = spectrum_name(sp)
        limit = riskcalc.limit("ftfa", gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp).risk
        table.add(panel, "limit, Thms 1 and 3 (M → ∞)", "reference", "clients", np.nan, "risk",
                  limit)
        for label, method, extra in methods:
            if sp is None:
                # The exact finite-M limit of each global model (riskcalc.limit(clients=M)).
                for m in np.unique(np.geomspace(clients[0], clients[-1], 40).round()):
                    table.add(panel, label, "theory", "clients", m, "risk", riskcalc.limit(
                        method, gamma=GAMMA, r=R, sigma=SIGMA, clients=int(m), **extra).risk)
            for m in clients:
                spec = riskcalc.ClientSpec(method, gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp,
                                           **extra)
                setting = Setting(d=d, clients=m, global_model="federated")
                where.append((panel, label, m))
                points.append((spec, [extra.get("alpha", 0.0)], setting, None, None))
    fig = clients_figure(ctx, table, where, points, reps, clients)
    return Output(fig, table, Caption(
        "Paper 003 Thm 3: MAML-FL's risk approaches FTFA's limit as the number of clients M "
        "grows",
        "Markers: mean risk of one client after fitting the global model over M clients "
        "(FedAvg's for FTFA, MAML-FL's for MAML-FL) and fine-tuning to the min-norm "
        "interpolant; error bars 95% Student-t intervals. Lines (Σ = I): the exact finite-M "
        "limits of each global model (riskcalc.limit(..., clients=M); none is implemented for "
        "the two-point spectrum). Dashed: the common limit of Thms 1 and 3 (the M → ∞ risk, "
        "independent of α).",
        {"γ": GAMMA, "r": R, "σ": SIGMA, "α": list(ALPHAS), "M": clients, "d": d,
         "n per client": round(d / GAMMA), "client weights": "uniform", "reps": reps,
         "global model": "federated (eqs. 6, 12)", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
