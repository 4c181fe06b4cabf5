"""``optimal_rounds`` and ``rounds_to_eps``: the number of rounds read from one exact curve of
``rounds_limit`` (issue 29, item 4: early stopping and the rounds-to-accuracy trade-off;
paper 004, Cor. 1's epsilon).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc._validate import positive, positive_int
from riskcalc.linear.dynamics.api import RoundsLimit, rounds_limit
from riskcalc.linear.dynamics.inputs import check_work, client_arrays


#: The smallest eps of ``rounds_to_eps`` relative to the values it compares: the rounds limits
#: hold to about 1e-12 relative (the routes against one another, ``docs/rounds.rst``), below
#: which a gap is rounding.
RESOLUTION = 1e-12


@dataclass(frozen=True)
class RoundsChoice:
    """``optimal_rounds`` / ``rounds_to_eps``: the number of rounds T, the gradient
    evaluations per client T K (None with exact local solves, ``local_steps=numpy.inf``, from
    T = 1 on: an exact solve is no number of gradient steps; 0 at T = 0), the value reached,
    and the curve it was read from."""

    rounds: int
    gradient_evaluations: float | None
    value: float
    curve: RoundsLimit


def optimal_rounds(method: str, *, objective="target", target=0, max_rounds=200,
                   **kwargs) -> RoundsChoice:
    """The risk-minimizing number of rounds T in 0..``max_rounds`` (early stopping).

    Evaluates the exact curve of ``rounds_limit`` at every T (one solve) and takes the argmin
    of client ``target``'s risk (``objective="target"``), the clients' mean risk (``"mean"``)
    or the worst client's (``"worst"``). Derived here (``riskcalc.linear.dynamics.fedavg``).

    Parameters
    ----------
    method, **kwargs
        As for ``rounds_limit`` (without ``rounds``).
    objective : {"target", "mean", "worst"}
    target : int
        0-based client index for ``objective="target"``.
    max_rounds : int
        >= 0.

    Returns
    -------
    RoundsChoice
    """
    curve, values = _curve(method, objective, target, max_rounds, kwargs)
    t = int(np.argmin(values))
    return RoundsChoice(t, _evaluations(t, curve), float(values[t]), curve)


def rounds_to_eps(method: str, *, eps, of="risk", target=0, max_rounds=1000,
                  **kwargs) -> RoundsChoice:
    """The fewest rounds T (and gradient evaluations T K per client) reaching accuracy eps.

    ``of="risk"``: abs(risk_T' - risk_inf) <= eps for client ``target`` at every T' from T to
    ``max_rounds`` (the fixed point must exist; a curve that dips below risk_inf crosses it
    early, which is not reaching it); ``of="best"``: risk_T <= min over 0..max_rounds + eps
    (the first such T); ``of="distance"``: the limit of ||w_T' - w_inf||^2 <= eps from T on
    (paper 004, Cor. 1's epsilon; decreasing in T when the iteration converges). Derived here
    from ``rounds_limit``'s exact curve.

    Raises
    ------
    ValueError
        For eps <= 0, an unknown ``of``, or when eps is not reached within ``max_rounds``.
    """
    eps = float(positive("eps", eps, ndim=0))
    if of not in ("risk", "best", "distance"):
        raise ValueError(f"of must be 'risk', 'best' or 'distance'; got {of!r}")
    curve, values = _curve(method, "target", target, max_rounds, kwargs,
                           extra_inf=of != "best")
    if of == "distance":
        gap = curve.distance_to_fixed_point[:-1]
    elif of == "risk":
        gap = np.abs(values[:-1] - values[-1])
    else:
        gap = values - values.min()
    within = gap <= eps
    if of != "best":    # within eps from T on (the risk at T = 8 of a curve dipping from 0.31
        within = np.logical_and.accumulate(within[::-1])[::-1]   # to 0.277 and back was taken)
    hit = np.flatnonzero(within)
    scale = float(np.max(np.abs(curve.distance_to_fixed_point if of == "distance" else values)))
    if eps < RESOLUTION * scale:    # before "not reached" (eps 1e-300 was told that: more
        # rounds would not reach it either; fuzz41 path F9)
        # The curves hold to about 1e-12 relative (the routes against one another), and from
        # rho^T < 1e-16 on they are the fixed point to rounding: eps = 1e-18 answered T = 943
        # (a risk gap 0.0 to rounding) where the gap falls like rho^T to 1e-18 only past 1000.
        raise ValueError(f"eps = {eps:g} is below what the curve resolves ({RESOLUTION:g} of "
                         f"its largest value {scale:.3g}: the limits hold to about that, and "
                         "the last rounds are the fixed point to rounding); give eps >= "
                         f"{RESOLUTION * scale:.3g}")
    if not hit.size:
        raise ValueError(f"eps = {eps:g} is not reached within max_rounds = {max_rounds}")
    t = int(hit[0])
    return RoundsChoice(t, _evaluations(t, curve), float(values[t]), curve)


def _evaluations(t: int, curve) -> float | None:
    """Gradient evaluations per client in t rounds of K local steps: t K; with exact local
    solves (K = inf) None for t >= 1 (was inf: the cost of an exact solve is its solver's, not
    a count of full-batch gradients; issue 32) and 0 for t = 0 (no round run; t K was NaN)."""
    K = curve.params["local_steps"]
    if t == 0:
        return 0.0
    return None if np.isinf(K) else float(t * K)


def _curve(method, objective, target, max_rounds, kwargs, extra_inf=False):
    if objective not in ("target", "mean", "worst"):
        raise ValueError(f"objective must be 'target', 'mean' or 'worst'; got {objective!r}")
    max_rounds = positive_int("max_rounds", max_rounds, minimum=0)
    if "rounds" in kwargs:
        raise ValueError("rounds is chosen here; give max_rounds")
    target = positive_int("target", target, minimum=0)
    if all(k in kwargs for k in ("gamma", "r", "sigma")):     # before the curve is solved
        m = client_arrays(kwargs["gamma"], kwargs["r"], kwargs["sigma"])[0].size
        if target >= m:
            raise ValueError(f"target must be a client index in 0..{m - 1}, got {target!r}")
    check_work(max_rounds + 1 + extra_inf, max_rounds, f"max_rounds = {max_rounds}",
                "give max_rounds <= 3000")      # before the list is built
    rounds = list(range(max_rounds + 1)) + ([np.inf] if extra_inf else [])
    curve = rounds_limit(method, rounds=rounds, **kwargs)
    m = curve.risk.shape[0]
    if target >= m:
        raise ValueError(f"target must be a client index in 0..{m - 1}, got {target!r}")
    values = {"target": curve.risk[target], "mean": curve.risk.mean(axis=0),
              "worst": curve.risk.max(axis=0)}[objective]
    return curve, values
