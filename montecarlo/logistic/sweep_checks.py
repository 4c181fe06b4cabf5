"""The checks and the time estimate of a logistic sweep (``montecarlo.logistic.sweep``), all
made before any replicate runs: the other clients (``checked_others``), the simulations'
quadrature reach (``check_reach_all``), the estimated time against ``max_minutes``
(``check_minutes``, ``replicate_seconds``) and the memory (``check_memory``)."""

from __future__ import annotations

import numpy as np

from montecarlo.runner.budget import require_memory
from montecarlo.logistic import pipeline
from montecarlo.runner.budget import check_minutes as check
from montecarlo.runner.budget import logistic_pipeline_seconds, logistic_replicate_seconds
from riskcalc._validate import as_array
from riskcalc.logistic.engine.gaussian import LABEL_KAPPA_MAX, check_reach

def checked_others(others):
    """``others`` checked: None, or ``{"gamma": [...], "r": [...]}`` of equal lengths, each
    gamma > 0 and r >= 0 (a missing key was a KeyError, unequal lengths an IndexError, a gamma
    0 a ZeroDivisionError, a list a TypeError, and strings were read as numbers)."""
    if others is None:
        return None
    if not isinstance(others, dict) or set(others) != {"gamma", "r"}:
        raise ValueError('others must be a dict {"gamma": [...], "r": [...]} (the other '
                         f"clients), got {others!r:.80}")
    g = np.atleast_1d(as_array("others['gamma']", others["gamma"], low=0.0, low_open=True,
                               ndim=1))
    rr = np.atleast_1d(as_array("others['r']", others["r"], low=0.0, ndim=1))
    if g.size != rr.size:
        raise ValueError(f"others must list as many r as gamma values (one per other client), "
                         f"got {g.size} and {rr.size}")
    return {"gamma": g.tolist(), "r": rr.tolist()}


def federation(g, rr, m, others):
    """Per-client ``(gammas, rs)``, the target first, or None without clients."""
    if others is not None:
        return [g] + [float(x) for x in others["gamma"]], [rr] + [float(x) for x in others["r"]]
    return None if m is None else ([g] * m, [rr] * m)


def check_reach_all(method, points, others, signal, spectrum, d):
    """The simulations' ``gaussian.check_reach`` at every point, before any prediction: at
    signal 1800 with M = 2 clients the predictions ran (at 2000 estimated at 66 s), then the
    pipeline's replicate failed with the theory solver's "quadrature rule" refusal. An r
    missing or out of range is left to the limits' messages."""
    signal = float(as_array("signal", signal, low=0.0, ndim=0))  # an array: a TypeError
    root_max = 1.0 if spectrum is None else float(np.sqrt(np.max(spectrum.eigenvalues(d))))
    for g, rr, m in points:
        piped = federation(g, rr, m, others) is not None and method != "local_ridge"
        if rr is not None and rr >= 0:
            check_reach(signal, rr, root_max, pipeline.MEASURED_KAPPA_MAX if piped else
                        LABEL_KAPPA_MAX, "the exact test metrics' quadrature" if piped else
                        "the logistic limits' label expectations")


def check_minutes(max_minutes, method, points, others, d, reps, n_lams, n_jobs, scheduler,
                  cached, signal, spectrum):
    """``montecarlo.runner.budget.check_minutes`` for ``sweep_logistic``: ValueError when the
    ``reps`` replicates of ``points`` not ``cached`` are estimated (``replicate_seconds``)
    beyond ``max_minutes``."""
    if max_minutes is None:
        return
    seconds = (reps * len(points) - cached) / len(points) * replicate_seconds(
        method, points, others, d, max(1, n_lams), signal, spectrum)
    check(max_minutes, seconds, n_jobs, scheduler,
          f"{len(points)} grid points x {reps} replicates"
          + (f" ({cached} of them in cache)" if cached else "") + f" at d = {d}",
          "lower reps, d or the grid")


def check_memory(points, others, d, method):
    """The largest federation's pooled data and Newton matrices must fit (as
    ``montecarlo.logistic.pipeline.simulate_pipeline`` checks)."""
    feds = [federation(g, rr, m, others) or ([g], [rr]) for g, rr, m in points]
    pooled = max(sum(pipeline.client_sizes(fed[0], d)) for fed in feds)
    # FedProx keeps one d x d Hessian per client.
    square = 4 + (max(len(fed[0]) for fed in feds) if method == "pfedme" else 0)
    # The advice named the clients alone (an oracle sweep at gamma = 1e-6 has none): n = d /
    # gamma samples per client is the other factor. Named as a Python call's keywords beside the
    # options (was "lower --d, raise --gamma" to sweep_logistic(d=...); fuzz42 seams3 F3).
    require_memory(8.0 * (3 * pooled * d + square * d * d),
                   f"the logistic sweep (up to {pooled} samples in a replicate at d = {d})",
                   "lower d, raise gamma" + (" or lower the number of clients"
                                             if any(m for _, _, m in points) or others
                                             else "")
                   + " (in Python; --d, --gamma on the command line)")


def replicate_seconds(method, points, others, d, lams: int = 1, signal=None,
                      spectrum=None) -> float:
    """Estimated seconds of one replicate summed over the grid points, with ``lams``
    penalties per replicate: the target's Newton fits and, with a global model, the pooled fit,
    FedProx's proximal fits and the exact test metrics at ``||w_i||_Sigma`` (about
    ``sqrt(signal^2 + r^2)`` times the root of the d eigenvalues' mean;
    ``logistic_pipeline_seconds``). ``signal`` or an r None (not given): 0."""
    root = 1.0 if spectrum is None else float(np.sqrt(np.mean(spectrum.eigenvalues(d))))
    total = 0.0
    for g, rr, m in points:
        fed = federation(g, rr, m, others)
        if fed is not None and method != "local_ridge":
            kappa = root * float(np.hypot(signal or 0.0, rr or 0.0))
            total += logistic_pipeline_seconds(d, g, fed[0], fedprox=method == "pfedme",
                                               lams=lams, kappa=kappa)
        else:
            total += logistic_replicate_seconds(d, g, lams=lams)
    return total
