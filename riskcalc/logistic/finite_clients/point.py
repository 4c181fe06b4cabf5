"""One federation's finite-M logistic limits (``riskcalc.logistic.finite_clients``, whose
docstring names the fixed points and their modules): ``solve_point`` solves the global model
(remembered per federation), then each wanted client's estimator, with or without a
neighbouring point's warm start (``finite_clients.spectral`` does the same with a covariance
spectrum); ``client_limits`` turns an estimate's geometry (a, rho) into the reported limits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import unique_rows
from riskcalc.logistic.blocks.fedprox import no_joint_root, solve_fedprox
from riskcalc.logistic.blocks.finetune import GlobalView, solve_finetune
from riskcalc.logistic.fixed_point import settle, solve_fixed_point, test_error
from riskcalc.logistic.engine.gaussian import NODES, Rule, label_reach
from riskcalc.logistic.blocks.pooled import Federation, separability_margin, solve_pooled
from riskcalc.logistic.result import QUANTITIES
from riskcalc.logistic.ranges import MLE_LAM, mle_lam
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.engine.deadline import Overtime, elapsed
from riskcalc.logistic.work import finite_seconds, refuse_growing


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
                        # Undefined at w_i = 0 (signal 0, r 0): was a / norm ~ 1e-25 printed.
                        cosine_uncentred=a / norm if norm > 0 and kappa > 0 else float("nan"),
                        test_logloss=rule.expect(np.logaddexp(0.0, -(a * rule.s + rho * rule.g))),
                        test_error=err, a=float(a), rho=float(rho))


def _federation(gam, rr, signal, weights, global_lam):
    rows, inverse, count = unique_rows(np.column_stack([gam, rr]))
    fed = Federation(rows[:, 0].copy(), rows[:, 1].copy(), count, signal, weights)
    if global_lam == 0.0:
        margin = separability_margin(fed)
        if not margin > 1.0:
            raise ValueError(
                "global_lam = 0: the pooled logistic problem has no finite minimizer: the "
                "clients' pooled data are separable with probability -> 1 (Gordon's margin "
                f"{margin:.6g} <= 1, riskcalc.logistic.blocks.pooled); use global_lam > 0")
    return fed, inverse


def pooled_lam(gam, rr, signal, global_lam, root=1.0):
    """``global_lam``, or 0 where ``0 < global_lam < MLE_LAM`` and the pooled MLE exists
    (Gordon's margin > 1; the norms times ``root = sqrt(<s>)`` under a spectrum): the global
    model's lam = 0 limit, within O(global_lam), as ``ranges.mle_lam`` for one client (FedAvg
    at global_lam = 1e-300 was refused as 11.9 s of work, or took 3.5 s, where 0 took 0.2 s)."""
    if global_lam is None or not 0.0 < global_lam < MLE_LAM:
        return global_lam
    pairs = unique_rows(np.column_stack([gam, rr]))
    return 0.0 if _pooled_mle(tuple(pairs[0][:, 0]), tuple(pairs[0][:, 1] * root),
                              tuple(pairs[2]), float(signal * root)) else global_lam


@lru_cache(maxsize=64)
def _pooled_mle(gamma, r, count, signal) -> bool:
    """Whether the pooled MLE exists (Gordon's margin > 1), remembered: advise's searches ask
    at every call (7.5 s of its 14.8 s at global_lam = 1e-300, 2 clients)."""
    fed = Federation(np.array(gamma), np.array(r), np.array(count), signal, "samples")
    return separability_margin(fed) > 1.0


@lru_cache(maxsize=16)
def _pooled(gamma, r, count, signal, weights, global_lam, max_seconds):
    """``solve_pooled``, remembered: the methods and penalties of one federation share their
    global model (a pure function of these arguments)."""
    return solve_pooled(Federation(np.array(gamma), np.array(r), np.array(count), signal,
                                   weights), global_lam, max_seconds=max_seconds)




def _group_limits(fed, state, c, method, lam, spectrum=None, start=None, memory=None,
                  deadline=None, begun=None):
    """Limits of group ``c``'s client as the target: (ClientLimits, evaluations, residual,
    the fine-tuning's path root or None). ``start``, ``memory``: a warm start of the
    fine-tuning and the grid's ``warm.JacobianMemory``; ``deadline``: every solve's
    (``time.perf_counter``'s clock), past which ``deadline.Overtime``; ``begun``: when the
    call's ``max_seconds`` began (local ridge's refusals name it: was the seconds left,
    "max_seconds = 0.499549" for 0.5)."""
    gamma, kappa = float(fed.gamma[c]), float(fed.kappa[c])
    if spectrum is not None:            # local ridge (checked by the caller)
        from riskcalc.logistic.spectrum.limits import spectrum_limit

        res = spectrum_limit(gamma, fed.signal, float(fed.r[c]), lam, spectrum, theta=0.0,
                             deadline=deadline)
        return ClientLimits(res.risk, res.sigma_risk, res.cosine_uncentred, res.test_logloss,
                            res.test_error, res.a, float(np.hypot(res.b, res.q))), 0, \
            res.diagnostics["residual"], None
    if method == "fedavg":
        return client_limits(kappa, state.alpha[c], state.rho[c]), 0, 0.0, None
    if method == "rtfa":        # the fine-tuning's log kappa_hg leaves its window there
        lam = mle_lam(lam, gamma, kappa)
    if method == "local_ridge" or lam == 0.0:
        # lam = 0: fine-tuning is the local MLE whatever the centre. Local ridge does not
        # depend on the global model (``state`` None).
        begun = time.perf_counter() if begun is None else begun
        limit = None if deadline is None else max(deadline - begun, 1e-9)
        r = float(fed.r[c])
        x, _, (k, c_e, C) = solve_fixed_point(gamma, fed.signal, r, lam, scale=0.0,
                                              max_seconds=limit, begun=begun)
        # The ladder's accuracy check, as without clients (the first rule's root alone was
        # 5.6e-9 off the finest rules' at gamma 0.5, signal 2, r 0.5, lam 0.05).
        x, _, _ = settle(x, k, gamma, fed.signal, r, lam, c_e, C, deadline)
        return client_limits(kappa, x[0], float(np.hypot(x[1], np.exp(x[2])))), 0, 0.0, None
    view = GlobalView(float(state.alpha[c]), float(state.rho[c]), float(state.mu[c]), kappa,
                      gamma)
    ft = solve_finetune(view, lam, start, memory, deadline)
    return client_limits(kappa, ft.A_h, ft.nu_h), ft.iterations, ft.residual, ft.path_y


def _global_summary(fed, state):
    S = fed.signal
    dist = (state.a - S) ** 2 + np.sum(fed.count * state.b ** 2) + state.q ** 2
    return (state.a / S if S > 0 else float("nan")), float(dist)


def check_reach(signal, targets, spectrum=None) -> None:
    """ValueError, before any solve, when a wanted client's margin scale ``||w_i||_Sigma``
    (``||w_i|| sqrt(<s>)``, ``||w_i|| = sqrt(signal^2 + r_i^2)``) is beyond
    ``gaussian.label_reach(NODES[-1])`` (about 1692): ``client_limits`` computes every target's
    test metrics on the ladder's finest 2-d rule, whose label-weight panels alone would
    exceed ``MAX_RULE_NODES``. Was: the whole solve first (24 s unloaded, 71 s loaded at
    signal 1700, M = 2), then ``Rule``'s SolverError, or a time refusal blaming separable
    data at lam = 1."""
    root = 1.0 if spectrum is None else float(np.sqrt(spectrum.mean))
    reach = label_reach(NODES[-1])
    kappa = root * float(np.max(np.hypot(signal, targets)))
    if not kappa <= reach:
        under = "" if spectrum is None else f" x sqrt(mean eigenvalue) {root:.4g}"
        raise ValueError(f"signal = {signal:g} and r up to {float(np.max(targets)):g} put "
                         f"||w_i||{under} at {kappa:.6g}, beyond {reach:.4g}: the finite-M "
                         f"limits' test metrics need the quadrature rule of ladder level "
                         f"{NODES[-1]}, whose label-weight panels reach ||w_i|| <= {reach:.4g} "
                         "(riskcalc.logistic.engine.gaussian.label_reach); lower signal and r")


def check_work(gam, rr, signal, lam, global_lam, method, targets, max_seconds, spectrum=None):
    """``riskcalc.logistic.work.refuse`` for one solve of this federation. With a
    ``spectrum``, the margins ``x.w`` have standard deviation ``||w|| sqrt(<s>)`` (isotropic
    directions), so the rules are those of ``Sigma = I`` at norms times ``sqrt(<s>)``, as
    ``spectrum.limits.check_work`` (was: no estimate, ``max_seconds`` ignored: scaled:1e4
    answered in 14-51 s with ``max_seconds = 5``, the oracle limit there refused)."""
    root = 1.0 if spectrum is None else float(np.sqrt(spectrum.mean))
    if method == "local_ridge":     # below MLE_LAM as solved (``ranges.mle_lam``)
        lam = mle_lam(lam, float(np.max(gam)), root * float(np.max(np.hypot(signal, targets))))
    else:
        global_lam = pooled_lam(gam, rr, signal, global_lam, root)

    def at(t):
        t = t * root
        return finite_seconds(gam, t * rr, t * signal, lam, global_lam, method, t * targets)
    groups = np.unique(np.stack(np.broadcast_arrays(gam, rr), axis=1), axis=0).shape[0]
    under = "" if spectrum is None else (f"; under this spectrum (mean eigenvalue "
                                         f"{spectrum.mean:.3g}) the margins' scale is "
                                         f"{root:.3g} ||w_i||")
    refuse_growing(at, max_seconds, f"the finite-M logistic limit (signal = {signal:g}, r up "
                   f"to {float(np.max(rr)):g}, {groups} distinct clients{under})",
                   _growing(gam, signal, targets, lam, root) if method == "local_ridge"
                   else (), root * root,
                   fewer="fewer distinct clients (equal gamma and r are solved once)")


def _growing(gam, signal, targets, lam, root):
    """Local ridge's points that grow on separable data (``work.refuse_growing``'s
    ``growing``): each target at its smallest separable gamma (a bound), ``root = sqrt(<s>)``."""
    gam = np.asarray(gam, float).ravel()
    for rt in np.unique(np.asarray(targets, float)):
        kappa = root * float(np.hypot(signal, rt))
        separable = gam[gam >= mle_threshold(kappa)] if kappa <= 1e3 else gam[:0]
        if separable.size:
            yield float(separable.min()), kappa, lam, 1


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
    the body of ``logistic_clients_limit``, and one point of
    ``riskcalc.logistic.finite_clients.grid``.

    ``warm``: a neighbouring point's ``Point.warm`` (or a prediction from two of them), with
    ``warm["memory"]`` the grid's ``warm.JacobianMemory`` per fixed point; each fixed point
    then first tries a direct root from it and falls back to its own path when that root
    misses ``TOL`` (the checks are the solvers' own either way). ``pooled``: the global model's
    solver ``pooled(fed, global_lam, start)`` (default: ``_pooled``, remembered).
    ``max_seconds``: the limit of ``riskcalc.logistic.work``, checked before solving (with
    ``estimate``; a grid checks its whole work instead) and along the global model's path.
    """
    warm = warm or {}
    begun = time.perf_counter()
    local = method == "local_ridge"
    check_reach(signal, rr[wanted])
    if estimate and max_seconds is not None:
        check_work(gam, rr, signal, lam, global_lam, method, rr[wanted], max_seconds)
    global_lam = None if local else pooled_lam(gam, rr, signal, global_lam)
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
        # One joint fixed point gives every client (riskcalc.logistic.blocks.fedprox).
        start = np.concatenate([state.alpha, np.log(state.rho), np.log(fed.gamma / (lam + 0.2))])
        near, solved = warm.get("fedprox"), None
        # By the call's deadline: lam = 1e-8 (3 clients at gamma 0.5, separable) ran 36 s
        # with max_seconds = 5 and then failed; its estimate cannot see the norms grow.
        deadline = None if max_seconds is None else begun + max_seconds
        try:
            if near is not None and np.size(near) == start.size:
                try:
                    solved = solve_fedprox(fed, lam, global_lam, near, deadline)
                except SolverError:
                    pass        # the neighbour's root was too far: the global model's view
            try:
                alpha, rho, mu, n, res = solved or solve_fedprox(fed, lam, global_lam, start,
                                                                 deadline)
            except SolverError as exc:
                raise no_joint_root(exc, fed, inverse, lam, lambda v: solve_fedprox(
                    fed, v, global_lam, start, deadline)) from None
        except Overtime:
            raise ValueError(
                f"pfedme (lam = {lam:g}, global_lam = {global_lam:g}) was still solving at "
                f"max_seconds = {max_seconds:g} "
                f"{elapsed(time.perf_counter() - begun, max_seconds)}: the "
                "joint point's norms grow as lam falls on nearly separable data; give a "
                "larger lam, or raise max_seconds (in Python; --max-minutes on the command "
                "line)") from None
        first = np.searchsorted(np.repeat(np.arange(fed.gamma.size), fed.count),
                                np.arange(fed.gamma.size))
        per_group = {c: client_limits(float(fed.kappa[c]), alpha[first[c]], rho[first[c]])
                     for c in groups}
        out_warm["fedprox"] = np.concatenate([alpha[first], np.log(rho[first]),
                                              np.log(mu[first])])
        iterations, residual = iterations + n, max(residual, res)
    for c in groups if method != "pfedme" else ():
        try:
            per_group[c], n, res, out_warm["finetune"][c] = _group_limits(
                fed, state, c, method, lam, start=warm.get("finetune", {}).get(c),
                memory=memory.get(("finetune", c)),
                deadline=None if max_seconds is None else begun + max_seconds, begun=begun)
        except Overtime as exc:
            # RTFA's fine-tuning at lam = 1e-12 (2 clients at gamma 2) ran 31 s with
            # max_seconds = 3: its estimate cannot see the norms grow as lam falls.
            raise ValueError(
                f"{method} (lam = {lam:g}) was still solving at max_seconds = "
                f"{max_seconds:g} {elapsed(time.perf_counter() - begun, max_seconds, exc)}: its "
                "solution's norm grows as lam falls on nearly separable data; give a larger "
                "lam, or raise max_seconds (in Python; --max-minutes on the command line)"
            ) from None
        iterations, residual = iterations + n, max(residual, res)
    rows = [per_group[inverse[j]] for j in wanted]
    values = {q: np.array([getattr(row, q) for row in rows]) for q in QUANTITIES}
    overlap, dist = (None, None) if local else _global_summary(fed, state)
    return Point(values, overlap, dist, iterations, residual, out_warm)
