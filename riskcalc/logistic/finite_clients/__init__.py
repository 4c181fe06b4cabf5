"""The federated logistic pipeline with a FINITE number M of clients: the public interface.

FedAvg's logistic global model over M clients (the target's block included) is the fixed point
of ``riskcalc.logistic.blocks.pooled``; the target's fine-tuning toward it (RTFA with the logistic
loss) shares the target's data with it and is the coupled fixed point of
``riskcalc.logistic.blocks.finetune``; local ridge (centre 0) is ``riskcalc.logistic.fixed_point``'s
system with centre 0; the FedProx / pFedMe joint objective (method ``pfedme``, alias ``fedprox``)
is ``riskcalc.logistic.blocks.fedprox``. Their docstrings hold the derivations (derived here, for
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

This package's front (argument checks, per-client lists, results) is here; the solve of one
federation's limits (``solve_point``, also one point of ``riskcalc.logistic.finite_clients.grid``)
is ``riskcalc.logistic.finite_clients.point`` (under a spectrum ``spectral``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from riskcalc._validate import (METHOD_ALIASES, as_array, one_of, parameter,
                                per_client, positive_int, real)
from riskcalc.logistic.finite_clients.point import (ClientLimits, Point, check_reach,
                                                    check_work, client_limits, solve_point)
from riskcalc.logistic.finite_clients.spectral import _spectral_clients
from riskcalc.logistic.finite_clients.grid import clients_grid, finite_grid
from riskcalc.logistic.blocks.pooled import WEIGHTS
from riskcalc.logistic.ranges import (SPECTRUM_LAM_MAX, check_gamma, check_global_lam,
                                      check_lam, identical_clients)
from riskcalc.logistic.ranges import check_reach as check_mu_reach
from riskcalc.logistic.result import QUANTITIES, FiniteLogisticResult, LogisticClientsResult
from riskcalc.logistic.work import MAX_SECONDS, check_max_seconds

__all__ = ["ALIASES", "METHODS", "ClientLimits", "Point", "canonical_method", "check_work",
           "client_limits", "finite_logistic_limit", "logistic_clients_limit", "solve_point"]

#: Estimators of the target client at finite M.
METHODS = ("rtfa", "fedavg", "local_ridge", "pfedme")
#: Other accepted names -> the canonical one (DESIGN.md: ``pfedme`` canonical for the joint
#: objective, ``fedprox`` an alias everywhere).
ALIASES = METHOD_ALIASES


def canonical_method(method) -> str:
    """The canonical name of ``method`` (``ALIASES``), checked against ``METHODS``."""
    method = ALIASES.get(method, method) if isinstance(method, str) else method
    if not one_of(method, METHODS):
        raise ValueError(f"method must be one of {', '.join(METHODS)} (alias: "
                         + ", ".join(f"{k} = {v}" for k, v in ALIASES.items())
                         + f"); got {method!r}")
    return method


def _check(method, lam, global_lam, weights):
    if not one_of(weights, WEIGHTS):
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}; got {weights!r}")
    if global_lam is None and method == "local_ridge":
        # Local ridge has no global model: global_lam is not needed (nor used).
        if lam is None:
            _no_lam(method)
        check_lam(lam)          # measured: ``ranges``
        return None, float(as_array("lam", lam, low=0.0))
    if global_lam is None:
        raise ValueError("global_lam (the global model's ridge toward 0, >= 0) is required "
                         "with clients")
    global_lam = float(check_global_lam(global_lam, method))   # measured: ``ranges``
    if method == "fedavg":
        if lam is not None:
            raise ValueError("method fedavg does not take lam (the global model has "
                             "global_lam)")
        return global_lam, None
    if lam is None:
        _no_lam(method)
    if method == "pfedme":
        return global_lam, float(as_array("lam", lam, low=0.0, low_open=True))
    check_lam(lam)              # RTFA's fine-tuning (``ranges``)
    return global_lam, float(as_array("lam", lam, low=0.0))


def _presence(method, lam, global_lam, weights) -> str:
    """The canonical method, after ``_check``'s verdict on which penalties it takes (the
    scalar messages; the ranges are checked entry by entry by ``as_array``)."""
    method = canonical_method(method)
    _check(method, None if lam is None else 1.0, None if global_lam is None else 1.0, weights)
    return method


def _no_lam(method):
    raise ValueError(f"method {method} needs lam (its ridge penalty, >= 0)")


def finite_logistic_limit(*, gamma, signal, r, lam=None, clients, global_lam=None,
                          weights: str = "samples", method: str = "rtfa",
                          spectrum=None, max_seconds=MAX_SECONDS) -> FiniteLogisticResult:
    """Limits of ``method`` for one client of M identical clients (``logistic_limit``'s
    ``clients=`` form); derivations in ``riskcalc.logistic.blocks.pooled`` and ``finetune``.

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
        (``riskcalc.logistic.finite_clients.grid.finite_grid``).

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
        return _noted(finite_grid(gamma=gamma, signal=signal, r=r, lam=lam, clients=clients,
                                  global_lam=global_lam, weights=weights,
                                  method=_presence(method, lam, global_lam, weights),
                                  solve=solve_point, max_seconds=max_seconds), global_lam)
    clients = identical_clients(clients)
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
        for j, c in enumerate(clients):
            # Other keys were dropped silently ({"gamma", "r", "signal": 5}: the shared
            # signal answered, as if a client's own had been taken).
            other = sorted(set(c) - {"gamma", "r"}) if isinstance(c, Mapping) else ()
            if other:
                raise ValueError(f"client {j}: unknown key(s) {', '.join(map(repr, other))}; "
                                 "a client entry takes 'gamma' and 'r' only")
        gamma, r = [p[0] for p in pairs], [p[1] for p in pairs]
    if gamma is None or r is None:
        raise ValueError("per-client gamma and r are required")
    # per_client: the strict layer on each list before it is made float (a boolean inside a
    # list, gamma=[0.3, True], was computed as 1).
    lists = per_client({"gamma": gamma, "r": r})
    return check_gamma(lists["gamma"]), parameter("r", lists["r"])


def logistic_clients_limit(*, gamma=None, r=None, signal, lam=None, global_lam=None,
                           weights: str = "samples", method: str = "rtfa", clients=None,
                           target=None, spectrum=None,
                           max_seconds=MAX_SECONDS) -> LogisticClientsResult:
    """Every client's limits in a heterogeneous logistic federation at finite M.

    Client j has ``n_j = d / gamma_j`` samples and ``w_j = w_0 + r_j u_j`` (one ``S = ||w_0||``);
    each client in turn is the target of ``method`` with FedAvg's logistic global model fitted
    on all M clients' data, its own included (derived here: ``riskcalc.logistic.blocks.pooled``,
    ``riskcalc.logistic.blocks.finetune``).

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
        As in ``finite_logistic_limit``.

    Returns
    -------
    LogisticClientsResult
        Array ``signal``, ``lam``, ``global_lam`` or per-client arrays of rank 2 or more make
        a grid (numpy broadcasting over the leading axes; Sigma = I), solved with warm starts
        along it (``riskcalc.logistic.finite_clients.grid.clients_grid``): the per-client fields
        have shape ``grid + (M,)``, ``mean`` and the global model's fields shape ``grid``.

    Raises
    ------
    ValueError
        Inconsistent lists, out-of-range values, ``global_lam = 0`` with separable pooled
        data, or an estimated work beyond ``max_seconds``.
    SolverError
        A fixed point did not converge.
    """
    max_seconds = check_max_seconds(max_seconds)
    # real first: a ragged gamma or r was numpy's "setting an array element with a sequence",
    # naming neither.
    ranks = {k: 0 if v is None else real(k, v).ndim for k, v in (
        ("signal", signal), ("lam", lam), ("global_lam", global_lam), ("gamma", gamma),
        ("r", r))}
    if any(ranks[k] for k in ("signal", "lam", "global_lam")) or ranks["gamma"] > 1 \
            or ranks["r"] > 1:
        if spectrum is not None or clients is not None:
            raise ValueError("spectrum, clients: the finite-M grids (array signal, lam, "
                             "global_lam, or per-client gamma, r of shape (..., M)) take gamma "
                             "and r arrays and Sigma = I")
        return _noted(clients_grid(
            gamma=gamma, r=r, signal=signal, lam=lam, global_lam=global_lam, weights=weights,
            method=_presence(method, lam, global_lam, weights), target=target,
            solve=solve_point, max_seconds=max_seconds), global_lam)
    method = canonical_method(method)
    global_lam, lam = _check(method, lam, global_lam, weights)
    gam, rr = _client_lists(gamma, r, clients)
    signal = float(parameter("signal", signal))
    m = gam.size
    if target is not None:
        target = positive_int("target", target, minimum=0)
        if target >= m:
            raise ValueError(f"target must be a client index in [0, {m - 1}], got {target}")
    if spectrum is not None:
        from riskcalc.logistic.spectrum.limits import check_spectrum, naming_spectrum

        spectrum = check_spectrum(spectrum)
    if method == "local_ridge":
        # Each wanted client's own fixed point: (E1)'s reach before the estimate, which named
        # 'lam >= 5.09e-13 fits' for lam 1e-14 at gamma 2 (solved to the continuation's
        # refusal at a larger max_seconds).
        check_mu_reach(gam if target is None else gam[[target]], lam, spectrum)
    if spectrum is not None:
        if method == "local_ridge":         # the spectrum's one-point solver (``ranges``)
            check_lam(lam, SPECTRUM_LAM_MAX)
        targets = rr if target is None else rr[[target]]
        check_reach(signal, targets, spectrum)
        if max_seconds is not None:
            check_work(gam, rr, signal, lam, global_lam, method, targets, max_seconds, spectrum)
        return _noted(naming_spectrum(spectrum, _spectral_clients, method, gam, rr, signal,
                                      lam, global_lam, weights, target, spectrum, max_seconds),
                      global_lam)
    wanted = np.arange(m) if target is None else np.array([target])
    point = solve_point(gam, rr, signal, lam, global_lam, weights, method, wanted,
                        max_seconds=max_seconds)
    params = dict(gamma=gam.tolist(), r=rr.tolist(), signal=signal, lam=lam,
                  global_lam=global_lam, weights=weights, clients=m,
                  targets=wanted.tolist())
    return _noted(LogisticClientsResult(
        method, params, **point.values,
        mean={q: float(np.mean(v)) for q, v in point.values.items()},
        global_overlap=point.overlap, global_dist=point.dist, iterations=int(point.iterations),
        residual=float(point.residual), notes=()), global_lam)


#: Said where local ridge is given a global model's penalty (taken silently in Python).
LOCAL_NOTE = "local_ridge uses no global model: global_lam plays no part"


def _noted(res, global_lam):
    """``res`` with ``LOCAL_NOTE`` added where it is local ridge's and ``global_lam`` was
    given (the command line noted it; Python answered as if it counted)."""
    if res.method != "local_ridge" or global_lam is None or LOCAL_NOTE in res.notes:
        return res
    return replace(res, notes=tuple(res.notes) + (LOCAL_NOTE,))
