"""Shared evidence: simulated bias/variance/risk with standard errors, and tolerance tests.

The simulations are montecarlo's (``montecarlo.linear.instances.sample_instance`` +
``montecarlo.linear.measure.measure_many``): the exact conditional bias and variance given the
design of paper 003, eq. (3), one replicate per seed of ``montecarlo.runner.seeding``. A check
compares a formula with a simulation mean through ``agreement``: the tolerance is ``z``
standard errors plus an explicit finite-size allowance, both reported, so a reader sees how
strongly a claim holds (the z-score) and how far a rejected form is (its z-score too).
"""

from __future__ import annotations

import numpy as np

import riskcalc
from montecarlo.linear.instances import Setting, sample_instance
from montecarlo.linear.measure import measure_many
from montecarlo.runner.stats import mean_se
from paper_checks.core import stated

#: Standard errors a simulated mean may be from a correct limit (with 30-60 comparisons in a
#: catalogue, 4 s.e. keeps the chance of a spurious failure below 0.2%).
Z = 4.0


def spec(method: str, *, gamma, sigma, signal, tuning=0.0, spectrum=None):
    """A ``ClientSpec`` with the method's signal (r or rho) and tuning (lam or alpha) filled."""
    info = riskcalc.get_method(method)
    kw = {info.signal: signal}
    if info.tuning:
        kw[info.tuning] = tuning
    return riskcalc.ClientSpec(method, gamma=gamma, sigma=sigma, spectrum=spectrum, **kw)


def simulate(method: str, *, tunings=(0.0,), **kw) -> dict:
    """Per-replicate bias, variance and risk of the target client (paper 003, eq. 3).

    Parameters as ``simulate_many``'s, for one method.

    Returns
    -------
    dict
        ``bias``, ``variance``, ``risk``: arrays (reps, len(tunings)); ``n``: the target's
        sample size. Replicate ``rep`` uses the same design for every tuning value and every
        method (common random numbers), so paired differences are sharp.
    """
    return simulate_many([(method, tunings)], **kw)[0]


def simulate_many(requests, *, gamma, sigma, signal, spectrum=None, d: int, reps: int,
                  seed: int, global_model: str = "oracle", clients: int = 1, steps=None,
                  step_size=None) -> list:
    """``simulate`` for several ``(method, tunings)`` requests on the same instances: each
    replicate sampled and decomposed once (``montecarlo.linear.measure.measure_many``), not
    once per method. The instance depends on gamma, sigma, signal and the spectrum, not on the
    method (``sample_instance``), and ``measure_many`` is bit-identical to ``measure`` on each:
    the results are those of ``simulate`` per request, bit for bit. One dict per request."""
    tunings = [np.atleast_1d(np.asarray(t, float)) for _, t in requests]
    sp = spec(requests[0][0], gamma=gamma, sigma=sigma, signal=signal,
              tuning=float(tunings[0][0]), spectrum=spectrum)
    setting = Setting(d=d, clients=clients, global_model=global_model)
    rows = [{"bias": [], "variance": [], "risk": []} for _ in requests]
    n = None
    for rep in range(reps):
        inst = sample_instance(sp, setting, seed, rep)
        n = int(inst.n[0])
        outs = measure_many(inst, [(m, t) for (m, _), t in zip(requests, tunings)],
                            steps=steps, step_size=step_size)
        for row, out in zip(rows, outs):
            for k in row:
                row[k].append(np.asarray(out[k], float))
    res = [{k: np.array(v) for k, v in row.items()} for row in rows]
    for r in res:
        r["n"] = n
    return res


def agreement(predicted, samples, *, slack: float = 0.0, z: float = Z,
              role: str | None = None) -> dict:
    """Does the mean of ``samples`` (replicates on axis 0) agree with ``predicted``?

    With ``role`` (``paper_checks.core.stated``), ``predicted`` is what the paper states and
    passes through the seam a sensitivity run replaces; without, it is not a statement under
    test (e.g. the printed form an erratum rejects).

    The tolerance is ``z * se + slack * |predicted|``: ``slack`` is the allowance for the
    finite-d bias of the simulated quantity (O(1/n) for the traces of paper 003), stated by
    the caller. ``zscore`` = (mean - predicted) / se says how strongly.
    """
    mean, se = mean_se(samples)
    pred = np.asarray(predicted if role is None else stated(predicted, role), float)
    tol = z * se + slack * np.abs(pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        zs = np.where(se > 0, (mean - pred) / se, np.where(mean == pred, 0.0, np.inf))
    return {"predicted": pred, "mean": mean, "se": se, "tol": tol, "zscore": zs,
            "ok": bool(np.all(np.abs(mean - pred) <= tol))}


def fmt(x, digits: int = 4) -> str:
    """Compact number formatting for summaries."""
    x = float(x)
    if x == 0 or not np.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"
