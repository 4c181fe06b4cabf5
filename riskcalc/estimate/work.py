"""The time ``riskcalc.estimate.estimate`` takes, estimated before the work (``seconds``) and
refused beyond a limit (``check_seconds``), saying what would bring it under.

The work of N rows of d features from m clients (``riskcalc.estimate.estimator``): the checks,
the sort of the rows for repeats and the sums of X y, about N d entries each; the jackknife's
Gram traces, N d^2 + (``GROUPS`` + 1) d^3 multiply-adds (with N < d, from the N x N Gram:
N^2 d + (``GROUPS`` + 1) N^3); a pass over the N rows per client; and on the least-squares
route the clients' ranks and inverses (about 3 (N d^2 + m d^3)), the contractions of their
coefficients ((3 m + 1) m d^2 + (3 m + 1)^2 m d, and (3 m + 1)^2 m^2 terms,
``riskcalc.estimate.lsq``). Calibrated on one core (CPU seconds; d = 20-1600, N = 300-64000,
m = 4-300): within 0.75-1.5x of the measured time (8000 x 400 moments: 0.36 s estimated, 0.33
s measured; 10000 x 20 from 300 clients, least squares: 8.9 s estimated and measured).
"""

from __future__ import annotations

from riskcalc.estimate.data import GROUPS

#: Seconds per entry of the N x d data (checks, the repeated-rows sort, sums of X y).
PER_ENTRY = 8e-8
#: Seconds per multiply-add of the matrix products (Gram matrices, their traces, inverses).
PER_FLOP = 5.5e-11
#: Seconds per row and client (the per-client passes over the rows).
PER_ROW_CLIENT = 3e-9
#: Seconds per term of the least-squares covariance's (3 m + 1)^2 m^2 contraction.
PER_PAIR_TERM = 1.2e-10


def seconds(N, d, m, least_squares: bool = False) -> float:
    """Estimated seconds of ``estimate`` on N rows of d features from m clients (module
    docstring), on the least-squares route when ``least_squares``."""
    N, d, m = float(N), float(d), float(m)
    small = min(N, d)
    flops = N * d * small + (GROUPS + 1) * small ** 3
    total = PER_ENTRY * N * d + PER_FLOP * flops + PER_ROW_CLIENT * 3 * m * N
    if least_squares:
        total += PER_FLOP * (3 * (N * d * d + m * d ** 3) + (3 * m + 1) * m * d * d
                             + (3 * m + 1) ** 2 * m * d)
        total += PER_PAIR_TERM * (3 * m + 1) ** 2 * m * m
    return total


def check_seconds(N, d, m, least_squares: bool, max_seconds) -> None:
    """ValueError when ``seconds`` exceeds ``max_seconds`` (None: no limit), naming the rows
    (a subsample of each client's), features, clients or route that would fit."""
    if max_seconds is None:
        return
    need = seconds(N, d, m, least_squares)
    if need <= max_seconds:
        return
    advice = []
    rows = _largest(lambda n: seconds(n, d, m, least_squares), N, max_seconds)
    if rows >= 3 * m:
        advice.append(f"a subsample of each client's rows (about {rows} of the {N:g} rows)")
    feats = _largest(lambda k: seconds(N, k, m, least_squares), d, max_seconds)
    if feats >= 1:
        advice.append(f"about {feats} of the {d:g} features")
    clients = _largest(lambda k: seconds(N, d, k, least_squares), m, max_seconds)
    if clients >= 2:
        advice.append(f"about {clients} of the {m} clients")
    if least_squares and seconds(N, d, m) <= max_seconds:
        advice.append(f"route moments (estimated {_duration(seconds(N, d, m))})")
    advice.append("allow more time (max_seconds; --max-minutes on the command line)")
    raise ValueError(f"N = {N:g} rows of d = {d:g} features from m = {m} clients"
                     + (" (least-squares route)" if least_squares else "")
                     + f": estimated {_duration(need)} of work, more than the "
                     f"{_duration(max_seconds)} allowed; what fits: {', or '.join(advice)}")


def _duration(seconds: float) -> str:
    """``seconds`` in s, or in min beyond a minute, 3 digits."""
    return f"{seconds / 60:.3g} min" if seconds >= 60 else f"{seconds:.3g} s"


def _largest(cost, top, limit) -> int:
    """The largest integer x in [0, top) with ``cost(x) <= limit`` (cost rising in x), or 0."""
    low, high = 0, int(top)
    while high - low > 1:
        mid = (low + high) // 2
        if cost(mid) <= limit:
            low = mid
        else:
            high = mid
    return low
