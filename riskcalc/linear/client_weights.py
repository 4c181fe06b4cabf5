"""The clients' weights p_j of the FedAvg objective (paper 003, ``003_4b976ddf5225c17e.txt``,
Sec. 3.1): named ("samples": n_j / N, "uniform": 1 / M) or given; the federated global
model's need for pooled N > d (``check_pooled``). Kept apart from
``finite_clients`` (which re-exports them) so that ``rounds_limit`` reads its weights without
loading the finite-M routes."""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, one_of
from riskcalc._text import shown_apart

#: Named client weights p_j of the FedAvg objective (paper 003, Sec. 3.1); ``clients_limit``
#: also takes any positive p_j (e.g. the optimal weights of ``riskcalc.advise``).
WEIGHTS = ("samples", "uniform")


def check_weights(weights) -> str:
    """``weights`` must name a ``WEIGHTS`` entry."""
    if not one_of(weights, WEIGHTS):
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}; got {weights!r}")
    return weights


#: Smallest weight relative to the largest that explicit client weights may give (advise's
#: optimal weights stay above 1e-4 / M of the simplex: 1e-8 at 10,000 clients). Below about
#: 1e-11 the finite-M limits lose the client to rounding when the others' pooled problem is
#: underdetermined (gamma (0.5, 1.5), weights (w, 1): the risk 1.04996 at w = 1e-12, 0.90 at
#: 1e-16, 0.45 at 1e-20, for about 1.05).
MIN_RELATIVE_WEIGHT = 1e-9


def client_weight_vector(weights, m: int) -> np.ndarray:
    """Explicit client weights: M positive finite numbers, returned normalized to sum one."""
    p = np.ravel(as_array("weights", weights, low=0.0, low_open=True, ndim=1))
    if p.size != m:
        raise ValueError(f"weights must name one of {', '.join(WEIGHTS)} or give one positive "
                         f"number per client ({m}); got {p.size}")
    p = p / p.max()          # first: a sum of weights near 1e308 would overflow to inf
    if p.min() < MIN_RELATIVE_WEIGHT:
        j = int(np.argmin(p))
        raise ValueError(f"weights: client {j}'s weight is {p[j]:.3g} of the largest, below "
                         f"{MIN_RELATIVE_WEIGHT:g}: the limits lose it to rounding (measured: "
                         "1e-16 gave a risk of 0.90 for 1.05); raise it or leave the client out")
    return p / p.sum()


def client_weights(gam, count, weights):
    """p_l of one client of each group: n_l / N (``samples``), 1/M (``uniform``), or the
    given array of per-group weights (normalized by ``clients_limit``: sum count p = 1)."""
    if not isinstance(weights, str):
        return np.asarray(weights, dtype=float)
    if weights == "samples":
        return (1.0 / gam) / np.sum(count / gam)
    return np.full(gam.shape, 1.0 / count.sum())


def check_pooled(gam, count) -> float:
    """sum_l count_l / gamma_l - 1 = N/d - 1 > 0, else ValueError (pooled N <= d)."""
    total = float(np.sum(count / gam))
    excess = total - 1.0
    if not excess > 1e-12:
        # shown_apart: 0.99999999975 was printed "got sum_j 1/gamma_j = 1".
        raise ValueError("the federated global model needs N = sum n_j >= d, and its "
                         "finite-M limit pooled N > d: sum_j 1/gamma_j > 1 (by more than "
                         f"1e-12); got sum_j 1/gamma_j = {shown_apart(total, 1.0, 6)} (add "
                         "clients or lower gamma)")
    return excess
