"""Risk vs the number of clients M with the FedAvg global model solved over M clients.

Paper 003 (``003_4b976ddf5225c17e.txt``) predicts the M -> infinity limits (Thms 1-2); the
exact finite-M limits (``riskcalc.limit(..., clients=M)``, derived in
``riskcalc/linear/finite_clients/__init__.py`` for Sigma = I and ``finite_clients.sigma.py`` for a
general spectrum) are the theory lines through the simulated points, in both panels.
"""

import numpy as np

import riskcalc
from figures.core import Caption, Output, Table, register
from figures.linear import P003, R, SIGMA, TWO_POINT, clients_figure, spectrum_name
from montecarlo.linear.instances import Setting

GAMMA = 2.0
LAM = 0.5


@register("p003-finite-clients", paper="003",
          title="FTFA and RTFA vs the number of clients: exact finite-M limits",
          source=f"{P003}, Thms 1-2 (eqs. 6-8); finite M: riskcalc/linear/finite_clients/__init__.py, "
                 "finite_clients/sigma.py")
def make(ctx):
    d = ctx.pick(60, 300)
    reps = ctx.pick(4, 12)
    # gamma = 2 needs M >= 3 for a pooled N = M d / 2 > d.
    clients = ctx.pick([3, 10, 50], [3, 5, 10, 20, 50, 100, 200])
    grid = np.unique(np.geomspace(3, 200, 60).round().astype(int))
    methods = [("FTFA", "ftfa", {}), (f"RTFA, λ = {LAM:g}", "rtfa", {"lam": LAM})]
    table, points, where = Table(), [], []
    for sp in (None, TWO_POINT):
        panel = spectrum_name(sp)
        for label, method, extra in methods:
            for m in grid:
                table.add(panel, label, "theory", "clients", m, "risk", riskcalc.limit(
                    method, gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp, clients=int(m),
                    **extra).risk)
            table.add(panel, f"{label}, M → ∞ (Thms 1-2)", "reference", "clients", np.nan,
                      "risk", riskcalc.limit(method, gamma=GAMMA, r=R, sigma=SIGMA,
                                             spectrum=sp, **extra).risk)
            for m in clients:
                spec = riskcalc.ClientSpec(method, gamma=GAMMA, r=R, sigma=SIGMA, spectrum=sp,
                                           **extra)
                where.append((panel, label, m))
                points.append((spec, [extra.get("lam", 0.0)],
                               Setting(d=d, clients=m, global_model="federated"), None, None))
    fig = clients_figure(ctx, table, where, points, reps, clients)
    return Output(fig, table, Caption(
        "FTFA and RTFA with the FedAvg global model fitted over M clients: the exact finite-M "
        "limits against simulation",
        "Markers: mean risk of one client (one of the M clients) after fitting the FedAvg "
        "global model over the M clients and fine-tuning (min-norm for FTFA, ridge for RTFA); "
        "error bars 95% Student-t intervals. Lines: the exact finite-M limits "
        "(riskcalc.limit(..., clients=M), with the covariance spectrum of the panel). Dashed: "
        "paper 003's M → ∞ limits.",
        {"γ": GAMMA, "r": R, "σ": SIGMA, "λ": LAM, "M": clients, "d": d,
         "n per client": round(d / GAMMA), "client weights": "uniform (= samples here)",
         "reps": reps, "global model": "federated (eq. 6)", "features": "Gaussian",
         "covariances": "I; two-point eigenvalues {0.25, 1.75} with mass 1/2 each"}))
