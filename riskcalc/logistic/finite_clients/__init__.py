"""The federated logistic pipeline with a FINITE number M of clients: the public interface.

FedAvg's logistic global model over M clients (the target's block included) is the fixed point
of ``riskcalc.logistic.pooled``; the target's fine-tuning toward it (RTFA with the logistic
loss) shares the target's data with it and is the coupled fixed point of
``riskcalc.logistic.finetune``; local ridge (centre 0) is ``riskcalc.logistic.fixed_point``'s
system with centre 0; the FedProx / pFedMe joint objective (method ``pfedme``, alias ``fedprox``)
is ``riskcalc.logistic.fedprox``. Their docstrings hold the derivations (derived here, for
issue 19). With a covariance spectrum (``spectrum=``, one ``Sigma`` shared by the clients):
every method, by ``riskcalc.logistic.spectrum.fixed_point`` (local ridge), ``pooled_spectral`` (FedAvg),
``finetune_spectral`` (RTFA) and ``fedprox_spectral`` (pFedMe / FedProx).

Names (issue 33): ``cosine_uncentred`` is ``cos(w_hat, w_i)``, the one cosine defined at finite
M (``cosine`` of ``logistic_limit`` is centred at the deterministic centre, ``cos(w_hat - c,
w_i - c)``); ``risk`` is ``||w_hat - w_i||^2`` and ``sigma_risk`` the Sigma-weighted error; the
global model's fields are None for ``local_ridge``, which does not use it.

``logistic_clients_limit`` takes a heterogeneous federation (per-client gamma_j and r_j, one
signal S) and returns every client's limits and their mean; ``finite_logistic_limit`` is one
client of M identical clients, behind ``riskcalc.logistic_limit(..., clients=M)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from riskcalc._validate import METHOD_ALIASES, as_array, positive_int
from riskcalc.errors import SolverError
from riskcalc.logistic.fedprox import solve_fedprox
from riskcalc.logistic.finetune import GlobalView, solve_finetune
from riskcalc.logistic.finite_grid import clients_grid, finite_grid
from riskcalc.logistic.fixed_point import solve_fixed_point, test_error
from riskcalc.logistic.gaussian import NODES, Rule
from riskcalc.logistic.pooled import WEIGHTS, Federation, separability_margin, solve_pooled
from riskcalc.logistic.result import QUANTITIES, FiniteLogisticResult, LogisticClientsResult
from riskcalc.logistic.work import MAX_SECONDS, finite_seconds, refuse

#: Estimators of the target client at finite M.
METHODS = ("rtfa", "fedavg", "local_ridge", "pfedme")
#: Other accepted names -> the canonical one (DESIGN.md: ``pfedme`` canonical for the joint
#: objective, ``fedprox`` an alias everywhere).
ALIASES = METHOD_ALIASES


@dataclass(frozen=True)
class ClientLimits:
    """The four limits of one estimator of one client (module docstring).

    ``risk`` is ``||w_hat - w_i||^2``, ``sigma_risk`` its Sigma-weighted form,
    ``cosine_uncentred`` the cosine between ``w_hat`` and ``w_i``, ``test_logloss`` and
    ``test_error`` on a fresh sample; ``a``, ``rho``: ``w_hat``'s component along
    ``w_i/||w_i||`` and the norm of the rest (Sigma = I)."""

    risk: float
    sigma_risk: float
    cosine_uncentred: float
    test_logloss: float
    test_error: float
    a: float
    rho: float


def client_limits(kappa: float, a: float, rho: float) -> ClientLimits:
    """Risk, cosine, test log-loss and error of an estimate with ``(w_hat.e, ||rest||) =
    (a, rho)`` for client ``w_i = kappa e`` (fresh-sample margins ``(kappa s, a s + rho g)``,
    as in ``riskcalc.logistic.fixed_point``)."""
    rule = Rule.at(kappa, NODES[-1], a, rho)
    norm = float(np.hypot(a, rho))
    err = test_error(kappa, a, rho) if rho > 0 else float(rule.expect(a * rule.s < 0))
    risk = float((a - kappa) ** 2 + rho ** 2)
    return ClientLimits(risk=risk, sigma_risk=risk,
                        cosine_uncentred=a / norm if norm > 0 else float("nan"),
                        test_logloss=rule.expect(np.logaddexp(0.0, -(a * rule.s + rho * rule.g))),
                        test_error=err, a=float(a), rho=float(rho))


def canonical_method(method) -> str:
    """The canonical name of ``method`` (``ALIASES``), checked against ``METHODS``."""
    method = ALIASES.get(method, method) if isinstance(method, str) else method
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} (alias: "
                         + ", ".join(f"{k} = {v}" for k, v in ALIASES.items())
                         + f"); got {method!r}")
    return method


def _check(method, lam, global_lam, weights):
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}; got {weights!r}")
    if global_lam is None and method == "local_ridge":
        # Local ridge has no global model: global_lam is not needed (nor used).
        if lam is None:
            _no_lam(method)
        return None, float(as_array("lam", lam, low=0.0))
    if global_lam is None:
        raise ValueError("global_lam (the global model's ridge toward 0, >= 0) is required "
                         "with clients")
    global_lam = float(as_array("global_lam", global_lam, low=0.0))
    if method == "fedavg":
        if lam is not None:
            raise ValueError("method fedavg does not take lam (the global model has "
                             "global_lam)")
        return global_lam, None
    if lam is None:
        _no_lam(method)
    if method == "pfedme":
        return global_lam, float(as_array("lam", lam, low=0.0, low_open=True))
    return global_lam, float(as_array("lam", lam, low=0.0))


def _presence(method, lam, global_lam, weights) -> str:
    """The canonical method, after ``_check``'s verdict on which penalties it takes (the
    scalar messages; the ranges are checked entry by entry by ``as_array``)."""
    method = canonical_method(method)
    _check(method, None if lam is None else 1.0, None if global_lam is None else 1.0, weights)
    return method


def _federation(gam, rr, signal, weights, global_lam):
    rows, inverse, count = np.unique(np.column_stack([gam, rr]), axis=0, return_inverse=True,
                                     return_counts=True)
    fed = Federation(rows[:, 0].copy(), rows[:, 1].copy(), count, signal, weights)
    if global_lam == 0.0:
        margin = separability_margin(fed)
        if not margin > 1.0:
            raise ValueError(
                "global_lam = 0: the pooled logistic problem has no finite minimizer: the "
                "clients' pooled data are separable with probability -> 1 (Gordon's margin "
                f"{margin:.6g} <= 1, riskcalc.logistic.pooled); use global_lam > 0")
    return fed, inverse.ravel()


def _no_lam(method):
    raise ValueError(f"method {method} needs lam (its ridge penalty, >= 0)")


@lru_cache(maxsize=16)
def _pooled(gamma, r, count, signal, weights, global_lam, max_seconds):
    """``solve_pooled``, remembered: the methods and penalties of one federation share their
    global model (a pure function of these arguments)."""
    return solve_pooled(Federation(np.array(gamma), np.array(r), np.array(count), signal,
                                   weights), global_lam, max_seconds=max_seconds)


def _group_limits(fed, state, c, method, lam, spectrum=None, start=None, memory=None):
    """Limits of group ``c``'s client as the target: (ClientLimits, evaluations, residual,
    the fine-tuning's path root or None). ``start``, ``memory``: a warm start of the
    fine-tuning and the grid's ``warm.JacobianMemory``."""
    gamma, kappa = float(fed.gamma[c]), float(fed.kappa[c])
    if spectrum is not None:            # local ridge (checked by the caller)
        from riskcalc.logistic.spectrum.limits import spectrum_limit

        res = spectrum_limit(gamma, fed.signal, float(fed.r[c]), lam, spectrum, theta=0.0)
        return ClientLimits(res.risk, res.sigma_risk, res.cosine_uncentred, res.test_logloss,
                            res.test_error, res.a, float(np.hypot(res.b, res.q))), 0, \
            res.diagnostics["residual"], None
    if method == "fedavg":
        return client_limits(kappa, state.alpha[c], state.rho[c]), 0, 0.0, None
    if method == "local_ridge" or lam == 0.0:
        # lam = 0: fine-tuning is the local MLE whatever the centre. Local ridge does not
        # depend on the global model (``state`` None).
        x, _, _ = solve_fixed_point(gamma, fed.signal, float(fed.r[c]), lam, scale=0.0)
        return client_limits(kappa, x[0], float(np.hypot(x[1], np.exp(x[2])))), 0, 0.0, None
    view = GlobalView(float(state.alpha[c]), float(state.rho[c]), float(state.mu[c]), kappa,
                      gamma)
    ft = solve_finetune(view, lam, start, memory)
    return client_limits(kappa, ft.A_h, ft.nu_h), ft.iterations, ft.residual, ft.path_y


def _global_summary(fed, state):
    S = fed.signal
    dist = (state.a - S) ** 2 + np.sum(fed.count * state.b ** 2) + state.q ** 2
    return (state.a / S if S > 0 else float("nan")), float(dist)


def finite_logistic_limit(*, gamma, signal, r, lam=None, clients, global_lam=None,
                          weights: str = "samples", method: str = "rtfa",
                          spectrum=None, max_seconds=MAX_SECONDS) -> FiniteLogisticResult:
    """Limits of ``method`` for one client of M identical clients (``logistic_limit``'s
    ``clients=`` form); derivations in ``riskcalc.logistic.pooled`` and ``finetune``.

    Parameters
    ----------
    gamma, signal, r : float or array_like
        Every client's ``d / n_j`` (> 0), ``||w_0||`` (>= 0) and ``||w_j - w_0||`` (>= 0).
    lam : float or array_like
        RTFA's penalty toward the global model or local ridge's toward 0, >= 0 (not taken by
        fedavg).
    clients : int or array_like of int
        M >= 1 clients in the global model, the target among them.
    global_lam : float or array_like
        The global model's ridge toward 0, >= 0 (0 only where the pooled minimizer exists);
        not needed by local_ridge.
    weights : {"samples", "uniform"}
        Per-sample weights ``1/N`` or ``1/(M n_j)`` of the global objective.
    method : {"rtfa", "fedavg", "local_ridge", "pfedme"}
        ``pfedme`` (alias ``fedprox``): client j's ``w_j`` of the joint objective
        ``sum_j pi_j [f_j(w_j) + (lam/2) ||w_j - w||^2] + (global_lam/2) ||w||^2``
        (``pi_j`` the client weights; lam > 0).
    spectrum : Spectrum, optional
        Every client's ``x ~ N(0, Sigma)`` (module docstring).
    max_seconds : float or None
        Limit on the estimated work (``riskcalc.logistic.work``: large norms need
        Gauss-Legendre panels); beyond it a ValueError says what brings it under. None: no
        limit.

    Returns
    -------
    FiniteLogisticResult
        With array arguments (numpy broadcasting; Sigma = I) every field is an array of the
        broadcast shape, solved along the grid with warm starts
        (``riskcalc.logistic.finite_grid.finite_grid``).

    Raises
    ------
    ValueError
        Out-of-range input, ``global_lam = 0`` with separable pooled data, or an estimated
        work beyond ``max_seconds``.
    SolverError
        A fixed point did not converge.
    """
    if any(np.ndim(v) for v in (gamma, signal, r, lam, clients, global_lam)):
        if spectrum is not None:
            raise ValueError("spectrum: the finite-M grids (array arguments) are for Sigma = I;"
                             " with a spectrum give numbers")
        return finite_grid(gamma=gamma, signal=signal, r=r, lam=lam, clients=clients,
                           global_lam=global_lam, weights=weights,
                           method=_presence(method, lam, global_lam, weights),
                           solve=solve_point, max_seconds=max_seconds)
    clients = positive_int("clients", clients)
    res = logistic_clients_limit(gamma=[gamma] * clients, r=[r] * clients, signal=signal,
                                 lam=lam, global_lam=global_lam, weights=weights, method=method,
                                 target=0, spectrum=spectrum, max_seconds=max_seconds)
    params = dict(gamma=float(gamma), signal=float(signal), r=float(r), lam=res.params["lam"],
                  clients=clients, global_lam=res.params["global_lam"], weights=weights)
    if "spectrum" in res.params:
        params["spectrum"] = res.params["spectrum"]
    return FiniteLogisticResult(res.method, params,
                                *(float(getattr(res, q)[0]) for q in QUANTITIES),
                                res.global_overlap, res.global_dist, res.iterations,
                                res.residual, res.notes)


def _client_lists(gamma, r, clients):
    """Per-client ``gamma`` and ``r`` arrays from lists, scalars or ``clients`` mappings."""
    if clients is not None:
        if gamma is not None or r is not None:
            raise ValueError("give either clients (a list of {'gamma', 'r'} entries) or the "
                             "gamma and r lists, not both")
        try:
            pairs = [(c["gamma"], c["r"]) if isinstance(c, Mapping) else tuple(c)
                     for c in clients]
        except (KeyError, TypeError) as exc:
            raise ValueError("each client must be a mapping with 'gamma' and 'r' or a "
                             f"(gamma, r) pair ({exc})") from None
        if any(len(p) != 2 for p in pairs):
            raise ValueError("each client must be a (gamma, r) pair")
        gamma, r = [p[0] for p in pairs], [p[1] for p in pairs]
    if gamma is None or r is None:
        raise ValueError("per-client gamma and r are required")
    lengths = {k: np.size(v) for k, v in (("gamma", gamma), ("r", r)) if np.ndim(v) > 0}
    if len(set(lengths.values())) > 1:
        raise ValueError("per-client lists must have one length, got "
                         + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
    m = next(iter(lengths.values()), 1)
    if m == 0:
        raise ValueError("the federation needs at least one client")
    gam = as_array("gamma", np.broadcast_to(np.ravel(gamma), (m,)), low=0.0, low_open=True)
    rr = as_array("r", np.broadcast_to(np.ravel(r), (m,)), low=0.0)
    return gam, rr


def logistic_clients_limit(*, gamma=None, r=None, signal, lam=None, global_lam=None,
                           weights: str = "samples", method: str = "rtfa", clients=None,
                           target=None, spectrum=None,
                           max_seconds=MAX_SECONDS) -> LogisticClientsResult:
    """Every client's limits in a heterogeneous logistic federation at finite M.

    Client j has ``n_j = d / gamma_j`` samples and ``w_j = w_0 + r_j u_j`` (one ``S = ||w_0||``);
    each client in turn is the target of ``method`` with FedAvg's logistic global model fitted
    on all M clients' data, its own included (derived here: ``riskcalc.logistic.pooled``,
    ``riskcalc.logistic.finetune``).

    Parameters
    ----------
    gamma, r : float or sequence of float
        Per-client values (sequences of one length M; scalars repeated), or give ``clients``.
        Arrays of shape ``(..., M)``: a grid of federations (the last axis the clients).
    signal : float or array_like
        ``S``, >= 0.
    lam : float or array_like
        The penalty of rtfa / local_ridge (>= 0) or pfedme (> 0), shared by the clients.
    global_lam : float or array_like
        The global model's ridge toward 0, >= 0 (not needed by local_ridge).
    weights : {"samples", "uniform"}
        ``c_j = 1/N`` or ``1/(M n_j)``.
    method : {"rtfa", "fedavg", "local_ridge", "pfedme"}
        As in ``finite_logistic_limit`` (``fedprox``: an alias of ``pfedme``).
    clients : sequence, optional
        Instead of ``gamma`` and ``r``: per-client mappings ``{"gamma": ., "r": .}`` or pairs.
    target : int, optional
        Compute only this client (arrays of length 1, mean over it).
    spectrum : Spectrum, optional
        Every client's ``x ~ N(0, Sigma)`` (module docstring; ``w_0`` and the ``u_j`` isotropic
        in the original coordinates).
    max_seconds : float or None
        As in ``finite_logistic_limit`` (Sigma = I).

    Returns
    -------
    LogisticClientsResult
        Array ``signal``, ``lam``, ``global_lam`` or per-client arrays of rank 2 or more make
        a grid (numpy broadcasting over the leading axes; Sigma = I), solved with warm starts
        along it (``riskcalc.logistic.finite_grid.clients_grid``): the per-client fields have
        shape ``grid + (M,)``, ``mean`` and the global model's fields shape ``grid``.

    Raises
    ------
    ValueError
        Inconsistent lists, out-of-range values, ``global_lam = 0`` with separable pooled
        data, or an estimated work beyond ``max_seconds``.
    SolverError
        A fixed point did not converge.
    """
    if any(np.ndim(v) for v in (signal, lam, global_lam)) or np.ndim(gamma) > 1 \
            or np.ndim(r) > 1:
        if spectrum is not None or clients is not None:
            raise ValueError("spectrum, clients: the finite-M grids (array signal, lam, "
                             "global_lam, or per-client gamma, r of shape (..., M)) take gamma "
                             "and r arrays and Sigma = I")
        return clients_grid(gamma=gamma, r=r, signal=signal, lam=lam, global_lam=global_lam,
                            weights=weights, method=_presence(method, lam, global_lam, weights),
                            target=target, solve=solve_point, max_seconds=max_seconds)
    method = canonical_method(method)
    global_lam, lam = _check(method, lam, global_lam, weights)
    gam, rr = _client_lists(gamma, r, clients)
    signal = float(as_array("signal", signal, low=0.0))
    m = gam.size
    if target is not None:
        target = positive_int("target", target, minimum=0)
        if target >= m:
            raise ValueError(f"target must be a client index in [0, {m - 1}], got {target}")
    if spectrum is not None:
        from riskcalc.logistic.spectrum.limits import check_spectrum

        spectrum = check_spectrum(spectrum)
        return _spectral_clients(method, gam, rr, signal, lam, global_lam, weights, target,
                                 spectrum)
    wanted = np.arange(m) if target is None else np.array([target])
    point = solve_point(gam, rr, signal, lam, global_lam, weights, method, wanted,
                        max_seconds=max_seconds)
    params = dict(gamma=gam.tolist(), r=rr.tolist(), signal=signal, lam=lam,
                  global_lam=global_lam, weights=weights, clients=m,
                  targets=wanted.tolist())
    return LogisticClientsResult(method, params, **point.values,
                                 mean={q: float(np.mean(v)) for q, v in point.values.items()},
                                 global_overlap=point.overlap, global_dist=point.dist,
                                 iterations=int(point.iterations),
                                 residual=float(point.residual), notes=())


def check_work(gam, rr, signal, lam, global_lam, method, targets, max_seconds):
    """``riskcalc.logistic.work.refuse`` for one solve of this federation."""
    def at(t):
        return finite_seconds(gam, t * rr, t * signal, lam, global_lam, method, t * targets)
    refuse(at(1.0), max_seconds, f"the finite-M logistic limit (signal = {signal:g}, "
           f"r up to {float(np.max(rr)):g})", at)


@dataclass(frozen=True)
class Point:
    """``solve_point``'s answer: ``values`` (quantity -> array over the wanted clients), the
    global model's ``overlap`` and ``dist`` (None for local ridge), solver ``iterations`` and
    ``residual``, and ``warm``: the path roots a neighbouring point's solve starts from."""

    values: dict
    overlap: float
    dist: float
    iterations: int
    residual: float
    warm: dict


def solve_point(gam, rr, signal, lam, global_lam, weights, method, wanted, warm=None,
                pooled=None, max_seconds=None, estimate=True) -> Point:
    """The limits of the clients ``wanted`` of one federation (checked arguments, Sigma = I):
    the body of ``logistic_clients_limit``, and one point of ``riskcalc.logistic.finite_grid``.

    ``warm``: a neighbouring point's ``Point.warm`` (or a prediction from two of them), with
    ``warm["memory"]`` the grid's ``warm.JacobianMemory`` per fixed point; each fixed point
    then first tries a direct root from it and falls back to its own path when that root
    misses ``TOL`` (the checks are the solvers' own either way). ``pooled``: the global model's
    solver ``pooled(fed, global_lam, start)`` (default: ``_pooled``, remembered).
    ``max_seconds``: the limit of ``riskcalc.logistic.work``, checked before solving (with
    ``estimate``; a grid checks its whole work instead) and along the global model's path.
    """
    warm = warm or {}
    local = method == "local_ridge"
    if estimate and max_seconds is not None:
        check_work(gam, rr, signal, lam, global_lam, method, rr[wanted], max_seconds)
    fed, inverse = _federation(gam, rr, signal, weights, None if local else global_lam)
    if local:
        state = None
    elif pooled is None:
        state = _pooled(tuple(fed.gamma), tuple(fed.r), tuple(fed.count), signal, weights,
                        global_lam, max_seconds)
    else:
        state = pooled(fed, global_lam, warm.get("pooled"))
    memory = warm.get("memory", {})
    per_group = {}
    out_warm = {"pooled": None if local else state.path_x, "finetune": {}, "memory": memory}
    iterations, residual = (0, 0.0) if local else (state.iterations, state.residual)
    groups = np.unique(inverse[wanted])
    if method == "pfedme":
        # One joint fixed point gives every client (riskcalc.logistic.fedprox).
        start = np.concatenate([state.alpha, np.log(state.rho), np.log(fed.gamma / (lam + 0.2))])
        near, solved = warm.get("fedprox"), None
        if near is not None and np.size(near) == start.size:
            try:
                solved = solve_fedprox(fed, lam, global_lam, near)
            except SolverError:
                pass            # the neighbour's root was too far: the global model's view
        alpha, rho, mu, n, res = solved or solve_fedprox(fed, lam, global_lam, start)
        first = np.searchsorted(np.repeat(np.arange(fed.gamma.size), fed.count),
                                np.arange(fed.gamma.size))
        per_group = {c: client_limits(float(fed.kappa[c]), alpha[first[c]], rho[first[c]])
                     for c in groups}
        out_warm["fedprox"] = np.concatenate([alpha[first], np.log(rho[first]),
                                              np.log(mu[first])])
        iterations, residual = iterations + n, max(residual, res)
    for c in groups if method != "pfedme" else ():
        per_group[c], n, res, out_warm["finetune"][c] = _group_limits(
            fed, state, c, method, lam, start=warm.get("finetune", {}).get(c),
            memory=memory.get(("finetune", c)))
        iterations, residual = iterations + n, max(residual, res)
    rows = [per_group[inverse[j]] for j in wanted]
    values = {q: np.array([getattr(row, q) for row in rows]) for q in QUANTITIES}
    overlap, dist = (None, None) if local else _global_summary(fed, state)
    return Point(values, overlap, dist, iterations, residual, out_warm)


def _spectral_clients(method, gam, rr, signal, lam, global_lam, weights, target, spectrum):
    """``logistic_clients_limit`` with a spectrum (module docstring)."""
    from riskcalc.logistic.spectrum.pooled import client_views

    m = gam.size
    local = method == "local_ridge"
    fed, inverse = _federation(gam, rr, signal, weights, None)
    if not local and global_lam == 0.0:
        _federation(gam * 1.0, rr * np.sqrt(spectrum.mean), signal * np.sqrt(spectrum.mean),
                    weights, 0.0)           # separability of the whitened pool: raises
    wanted = np.arange(m) if target is None else np.array([target])
    groups = np.unique(inverse[wanted])
    iterations, residual, overlap, dist = 0, 0.0, None, None
    if local:
        per_group = {}
        for c in groups:
            per_group[c], _, res, _ = _group_limits(fed, None, c, method, lam, spectrum)
            residual = max(residual, res)
    else:
        # RTFA at lam = 0 is the local MLE whatever the centre (as without a spectrum); the
        # global model is still solved for its fields.
        mle = method == "rtfa" and lam == 0.0
        views, (overlap, dist, iterations, residual) = client_views(
            fed, spectrum, global_lam, "fedavg" if mle else method, lam, groups)
        per_group = {c: _group_limits(fed, None, c, "local_ridge", 0.0, spectrum)[0] if mle
                     else ClientLimits(**views[c]) for c in groups}
    rows = [per_group[inverse[j]] for j in wanted]
    values = {q: np.array([getattr(row, q) for row in rows]) for q in QUANTITIES}
    params = dict(gamma=gam.tolist(), r=rr.tolist(), signal=signal, lam=lam,
                  global_lam=global_lam, weights=weights, clients=m, targets=wanted.tolist(),
                  spectrum=spectrum.describe())
    return LogisticClientsResult(method, params, **values,
                                 mean={q: float(np.mean(v)) for q, v in values.items()},
                                 global_overlap=overlap, global_dist=dist,
                                 iterations=int(iterations), residual=float(residual), notes=())
