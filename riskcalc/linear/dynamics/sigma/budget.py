"""The time and memory budgets of the rounds routes under a covariance spectrum.

Time. Every route estimates its work before it solves (``chain_cost.chain_seconds``,
``algorithm1.cost``, ``guards.dense_k_seconds``, ``personalize_sigma.personal_seconds``) and
refuses an estimate beyond its default limit. ``rounds_limit(..., max_seconds=S)`` (the command
line's ``--max-minutes``) sets one limit S for all of them, through ``time_budget`` around the
solve and around the result's lazily computed own models and personalizations: a larger S lets
the largest federations run (measured costs in the routes' docstrings), a smaller one refuses
sooner. A context variable rather than an argument threaded through every route: the guards sit
three to five calls below ``rounds_limit``, in code that does not otherwise know of a budget.

Node pairs. ``pairs_refused``: the refusal of a double contour beyond a route's most node pairs,
with the federation's numbers (the routes blamed "pooled N near d" also at N / d = 5/6).

Memory. The chain routes and the dense pencils estimate the PEAK memory their solve adds to the
process (``memory``: the nodes' factors, the two-point chunks, the outputs; counted, and checked
against measured peak resident memory) and refuse an estimate beyond ``MAX_GIGABYTES`` (4 GB by
default), or beyond ``rounds_limit(..., max_gigabytes=G)`` (the command line's
``--max-memory``), set the same way (``memory_budget``); the refusal names the estimate, the
limit and each change that alone would fit. Why 4 GB: a default should let every federation of
the audit grid run (M = 3-20 clients, K = 1-50 local steps, T up to 200 rounds, two-point
spectra: the largest estimate there is FedAvg's M = 20, K = 50, T = 200, 3.5 GB; Algorithm 1's
1.7 GB) and refuse, before minutes of work, what would crowd a laptop of 8-16 GB shared with
other programs or fail on a small cloud machine. A policy of the estimate, the same on every
machine (the interpreter and the imports, about 85 MB, are not counted). Before it a fixed
0.4 GB check counted one array of the nodes' factors: it refused the grid's corners (FedAvg
M = 10, K = 50, T = 200, which measured 0.39 GB) while letting FedAvg M = 20, K = 20, T = 200
take 1.1 GB. The personalizations (``personalize_sigma.personal_bytes``) and the own models of
Algorithm 1 with exact prox (``prox_sigma``) are counted as dense pencils too; until session 32
they kept a fixed 0.4 GB check on one array's count, which measured 0.06-0.35 of their numpy
peak for the personalizations and 0.01-0.04 for the prox own models.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from riskcalc._validate import max_time

_BUDGET: ContextVar = ContextVar("fedrisk_rounds_budget", default=None)
_MEMORY: ContextVar = ContextVar("fedrisk_rounds_memory", default=None)

#: What a refusal by time adds to the changes that would fit.
MORE_TIME = "or allow more time (rounds_limit's max_seconds; the command line's --max-minutes)"
#: What a refusal by memory adds to the changes that would fit.
MORE_MEMORY = ("or allow more memory (rounds_limit's max_gigabytes; the command line's "
               "--max-memory)")
#: The default limit of a route's estimated peak memory, in GB (module docstring).
MAX_GIGABYTES = 4.0


@contextmanager
def time_budget(seconds):
    """Within the block, every time guard of the spectrum routes allows ``seconds`` of
    estimated work (None: each route's own default)."""
    token = _BUDGET.set(seconds)
    try:
        yield
    finally:
        _BUDGET.reset(token)


@contextmanager
def memory_budget(gigabytes):
    """Within the block, every memory guard of the spectrum routes allows ``gigabytes`` of
    estimated peak memory (None: ``MAX_GIGABYTES``)."""
    token = _MEMORY.set(gigabytes)
    try:
        yield
    finally:
        _MEMORY.reset(token)


@contextmanager
def budgets(seconds=None, gigabytes=None):
    """``time_budget`` and ``memory_budget`` together."""
    with time_budget(seconds), memory_budget(gigabytes):
        yield


def allowed(default: float) -> float:
    """The seconds a route may be estimated to take: the budget of ``time_budget`` if one is
    set, else the route's ``default``."""
    given = _BUDGET.get()
    return default if given is None else given


def allowed_bytes() -> float:
    """The bytes of estimated peak memory a route may take: ``memory_budget``'s if set, else
    ``MAX_GIGABYTES``."""
    given = _MEMORY.get()
    return 1e9 * (MAX_GIGABYTES if given is None else given)


def largest(lo: int, hi: int, fits) -> int | None:
    """The largest x in lo..hi - 1 with ``fits(x)``, or None, by bisection: the estimates grow
    with local_steps, clients and contour nodes, so ``fits`` holds up to some x and no further.
    O(log(hi - lo)) calls (a scan of every local_steps below K took 8 s to refuse K = 10^6 under
    a spectrum and did not end at 2^53)."""
    if hi <= lo or not fits(lo):
        return None
    while hi - lo > 1:      # fits(lo); no answer at hi or above
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def check_memory(estimate, sizes, what, nodes_follow_rounds=True):
    """ValueError when ``estimate(M, K, nodes)`` (bytes) exceeds ``allowed_bytes``, at
    ``sizes`` = (M, K, nodes), naming the estimate, the limit and each change that alone would
    fit (fewer local_steps, rounds or clients; rounds only where the contour's nodes follow
    them: ``nodes`` - 16); ``what`` describes the solve. Returns the estimate."""
    M, K, nodes = sizes
    limit, need = allowed_bytes(), estimate(M, K, nodes)
    if need <= limit:
        return need
    fits = []
    k = largest(1, K, lambda k: estimate(M, k, nodes) <= limit)
    if k is not None:
        fits.append(f"local_steps <= {k}")
    if nodes_follow_rounds:
        n = largest(17, nodes, lambda n: estimate(M, K, n) <= limit)
        if n is not None:
            fits.append(f"rounds up to about {n - 16}")
    m = largest(1, M, lambda m: estimate(m, K, nodes) <= limit)
    if m is not None:
        fits.append(f"clients <= {m}")
    # Where no one change fits it says so (was "give fewer local_steps, clients or rounds" at
    # max_gigabytes=1e-9 with one client and K = 2, none of which fits; fuzz42 path F11)
    raise ValueError(f"spectrum: {what} would hold about {need / 1e9:.3g} GB at its peak "
                     f"(estimated; more than the {limit / 1e9:.3g} GB allowed); "
                     + (f"give {', or '.join(fits)}, {MORE_MEMORY}" if fits else
                        "no fewer local_steps, clients or rounds alone fits: "
                        + MORE_MEMORY[3:]))


def gigabytes(value) -> float | None:
    """``max_gigabytes`` validated by the one rule of every Python limit (``_validate.max_time``:
    None, or a number > 0 read as every real parameter is, ``Decimal("0.5")`` too; inf = no
    limit), else ValueError naming it (inf was refused though 1e300 was taken, where
    max_seconds takes inf; fuzz42 seams3 F1)."""
    try:
        return max_time("max_gigabytes", value)
    except ValueError as exc:
        raise ValueError(f"{exc} (or None: {MAX_GIGABYTES:g} GB)") from None


def pairs_refused(where: str, pairs: float, limit: float, a: float, b: float, mu0: float,
                  t_max, gam, what: str = "") -> ValueError:
    """The refusal of a double contour of more than ``limit`` node pairs (``sigma.fedavg.curves``,
    ``shift.curves``, ``sigma.fedavg.one_step``), saying what is true: its nodes grow with the
    rounds (up to ``t_max``) and as the round map's nonzero spectrum [a, b] nears 0, with
    pooled N / d = sum_j 1/gamma_j and D's atom at 0 ``mu0`` (pooled N < d: the directions no
    client sees, outside the contour) stated (was "pooled N near d" also at N / d = 5/6).
    Where the rounds alone account for the nodes (n nodes, n^2 / 2 pairs, at most 2 T + 24,
    as ``fedavg.round_map_curves``' own models judge) it says so and no more (was "comes too
    close to 0" at bottom / top = 1, T = 400)."""
    inv = float(np.sum(1.0 / np.asarray(gam, float)))
    atom = (f"; its atom at 0 ({mu0:.3g} of it: pooled N < d, the directions no client sees) "
            "is outside the contour" if mu0 > 1e-12 else "")
    head = f"{where}: the double contour needs {pairs:.3g} node pairs (more than {limit:.0g}){what}"
    if np.sqrt(2.0 * pairs) <= 2 * t_max + 24:
        return ValueError(f"{head}: its nodes grow with the rounds, up to T = {t_max:.0f} here "
                          f"(the round map's nonzero spectrum [{a:.3g}, {b:.3g}]; pooled N / d = "
                          f"sum_j 1/gamma_j = {inv:.4g}{atom}); ask for fewer rounds")
    return ValueError(f"{head}: the round map's spectrum comes too close to 0 (its "
                      f"nonzero part [{a:.3g}, {b:.3g}], bottom / top = {a / b:.2g}; pooled N / "
                      f"d = sum_j 1/gamma_j = {inv:.4g}{atom}) or the rounds are too many (up "
                      f"to T = {t_max:.0f} here); "
                      + ("ask for fewer rounds, or " if t_max > 10 else "")
                      + "move gamma further from pooled N = d (bottom / top rises)")
