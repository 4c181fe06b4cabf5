"""Each pipeline's candidates for ``riskcalc.advise.advise``: FedAvg and FTFA (``untuned``),
RTFA with per-client penalties (``rtfa``), MAML-FL and pFedMe at a shared tuning (``own``), local
ridge (``local_ridge``) and fine-tuning stopped early (``ftfa_steps``), each with sample, uniform
and optimal weights where a global model is solved (paper 003, ``003_4b976ddf5225c17e.txt``,
eqs. 6-14, Thms 1-4, Cor. 3.1, Sec. 7 at finite M; the tuning and the weights derived here).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from riskcalc.advise import tune, weights as wopt
from riskcalc.advise.gradients import exact_gradient
from riskcalc.advise.result import Candidate
from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.model import LAM_RANGE
from riskcalc.linear.tuning import optimal_limit


def untuned(method, fed, starts, skipped):
    """FedAvg or FTFA with the three weightings."""
    def mean(p, extra):
        return clients_limit(method, weights=p, **fed.limit_kwargs()).mean_risk

    out = []
    for name in ("samples", "uniform"):
        res = clients_limit(method, weights=name, **fed.limit_kwargs())
        out.append(Candidate(method, {}, name, starts[name], res.risk, notes=res.notes))
    gradient = exact_gradient(method, fed)
    try:
        p, _, _ = wopt.optimize(mean, [(starts[k], []) for k in ("samples", "uniform")], fed.m,
                                gradient=gradient)
    except SolverError:
        skipped.append(f"{method} with optimal weights: the mean risk is infinite for every "
                       "weighting (a client at the interpolation threshold gamma = 1)")
        return out
    res = clients_limit(method, weights=p, **fed.limit_kwargs())
    out.append(Candidate(method, {}, "optimal", p, res.risk,
                         notes=res.notes + wopt.gain_note(fed.m, 0, gradient)))
    return out


def rtfa(fed, starts, skipped, near=None):
    """RTFA with each client's lam_j tuned on its finite-M curve, for the three weightings;
    ``near``: further weights to start the optimal weights' search from on its L-BFGS-B
    route (``weights.optimize``'s ``more``), with the penalties tuned there."""
    out, tuned = [], {}
    for name in ("samples", "uniform"):
        lam, risk = tune.rtfa_lams(fed, name)
        tuned[name] = lam
        shown, notes = tune.shown_lams(fed, name, lam, risk)
        out.append(Candidate("rtfa", {"lam": shown.tolist()}, name, starts[name], risk,
                             notes=notes))
    lo, hi = np.log(LAM_RANGE[0]), np.log(LAM_RANGE[1])

    def risks(p, loglam):
        return clients_limit("rtfa", lam=np.exp(loglam), weights=p, **fed.limit_kwargs()).risk

    def mean(p, loglam):
        return clients_limit("rtfa", lam=np.exp(loglam), weights=p,
                             **fed.limit_kwargs()).mean_risk

    def log_start(lam):
        # lam = 0 (interpolation best) starts from a small penalty instead.
        return np.log(np.where(lam > 0, lam, 1e-8 * np.max(lam, initial=1e-8)))

    def more():
        return [] if near is None else [(near, log_start(tune.rtfa_lams(fed, near)[0]))]

    gradient = exact_gradient("rtfa", fed)
    try:
        # Client j's risk depends on its own lam_j only (the FedAvg global model does not
        # involve lam): finite differences in the penalties take one evaluation.
        p, _, _ = wopt.optimize(mean, [(starts[k], log_start(tuned[k])) for k in tuned], fed.m,
                                extra_bounds=[(lo, hi)] * fed.m,
                                gradient=gradient, separable=risks, more=more)
    except SolverError as exc:
        skipped.append(f"rtfa with optimal weights: {exc}")
        return out
    lam, risk = tune.rtfa_lams(fed, p)
    shown, notes = tune.shown_lams(fed, p, lam, risk)
    out.append(Candidate("rtfa", {"lam": shown.tolist()}, "optimal", p, risk,
                         notes=tuple(notes) + wopt.gain_note(fed.m, fed.m, gradient)))
    return out


def own(method, fed, starts, skipped, near=None):
    """MAML-FL or pFedMe (own global objectives) at the shared alpha / lam
    minimizing the mean risk, for the three weightings; ``near``: further weights to start the
    optimal weights' search from on its L-BFGS-B route (``weights.optimize``'s ``more``), with
    each of the tunings found."""
    name = "alpha" if method == "maml_fl" else "lam"
    if method == "maml_fl":
        # alpha up to 2 / (the top of the clients' limiting sample spectra).
        top = float(np.max(fed.top_eigenvalues() * (1 + np.sqrt(fed.gamma)) ** 2))
        grid = np.logspace(-3, np.log10(2.0), 9) / top
    else:
        # The oracle lam* = sigma^2 gamma / r^2 (paper 003, Thm 2); a client with
        # r_j = sigma_j = 0 (0/0: its risk does not depend on lam) counts as 1, as in
        # ``tune.rtfa_lams``.
        with np.errstate(divide="ignore", invalid="ignore"):
            oracle = fed.sigma ** 2 * fed.gamma / fed.r ** 2
        scale = np.median(np.clip(np.where(np.isnan(oracle), 1.0, oracle), 1e-6, 1e6))
        grid = scale * np.logspace(-3, 3, 9)
    out = []
    for wname in ("samples", "uniform"):
        try:
            value, res = tune.shared_tuning(method, fed, wname, grid)
        except SolverError as exc:
            skipped.append(f"{method} with {wname} weights: {exc}")
            continue
        out.append(Candidate(method, {name: value}, wname, starts[wname], res.risk,
                             notes=res.notes))
    if not out:
        return out

    def mean(p, extra):
        return clients_limit(method, weights=p, **fed.limit_kwargs(),
                             **{name: float(np.exp(extra[0]))}).mean_risk

    begin = [(c.p, [np.log(c.tuning[name])]) for c in out]
    # The tunings found beyond the grid's ends (``tune.shared_tuning``) widen the bounds.
    bounds = [(min(float(np.log(grid[0])), *(t[0] for _, t in begin)),
               max(float(np.log(grid[-1])), *(t[0] for _, t in begin)))]
    gradient = exact_gradient(method, fed)
    p, x, _ = wopt.optimize(mean, begin, fed.m, extra_bounds=bounds, gradient=gradient,
                            more=lambda: [] if near is None else [(near, t) for _, t in begin])
    value = float(np.exp(x[0]))
    res = clients_limit(method, weights=p, **fed.limit_kwargs(), **{name: value})
    out.append(Candidate(method, {name: value}, "optimal", p, res.risk,
                         notes=res.notes + wopt.gain_note(fed.m, 1, gradient)))
    return out


def local_ridge(fed):
    """Local ridge at each client's lam* in its own covariance (no global model)."""
    lam, risk = np.empty(fed.m), np.empty(fed.m)
    for spectrum, idx in fed.spectrum_groups():
        res = optimal_limit("local_ridge", gamma=fed.gamma[idx], sigma=fed.sigma[idx],
                            rho=fed.rho[idx], spectrum=spectrum)
        lam[idx], risk[idx] = res.params["lam"], res.risk
    return Candidate("local_ridge", {"lam": lam.tolist()}, "none", None, risk,
                     limit="exact (no global model)")


def ftfa_steps(fed, starts, skipped):
    """Fine-tuning from the finite-M FedAvg model, each client stopping at its best step."""
    out = []
    for wname in ("samples", "uniform"):
        if wname == "uniform" and out and out[-1].weights == "samples" and np.all(
                fed.gamma == fed.gamma[0]):
            # Equal gammas make the two weightings one (p_j = 1 / M): the same steps and
            # risks (as in ``riskcalc.advise.logistic``); half the quadrature (bootstrap draws
            # of equal-size clients, ``advise.uncertainty``).
            out.append(replace(out[-1], weights="uniform", p=starts["uniform"]))
            continue
        try:
            k, eta, risk, at_max = tune.optimal_steps(fed, wname)
        except (SolverError, ValueError) as exc:
            skipped.append(f"ftfa_steps with {wname} weights: {exc}")
            continue
        notes = ("one step size for the federation: 1 / the top of the clients' limiting "
                 "sample spectra",)
        if at_max.any():
            notes += ("the risk still decreases at the largest number of steps tried for "
                      f"client(s) {', '.join(map(str, np.flatnonzero(at_max)))}",)
        out.append(Candidate("ftfa_steps", {"steps": k.tolist(), "step_size": eta}, wname,
                             starts[wname], risk, notes=notes))
    return out
