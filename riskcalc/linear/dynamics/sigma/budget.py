"""The time budget of the rounds routes under a covariance spectrum.

Every route estimates its work before it solves (``sigma_chain.chain_seconds``,
``algorithm1.cost``, ``guards.dense_k_seconds``, ``personalize_sigma.personal_seconds``) and
refuses an estimate beyond its default limit. ``rounds_limit(..., max_seconds=S)`` (the command
line's ``--max-minutes``) sets one limit S for all of them, through ``time_budget`` around the
solve and around the result's lazily computed own models and personalizations: a larger S lets
the largest federations run (measured costs in the routes' docstrings), a smaller one refuses
sooner. A context variable rather than an argument threaded through every route: the guards sit
three to five calls below ``rounds_limit``, in code that does not otherwise know of a budget.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_BUDGET: ContextVar = ContextVar("fedrisk_rounds_budget", default=None)

#: What a refusal by time adds to the changes that would fit.
MORE_TIME = "or allow more time (rounds_limit's max_seconds; the command line's --max-minutes)"


@contextmanager
def time_budget(seconds):
    """Within the block, every time guard of the spectrum routes allows ``seconds`` of
    estimated work (None: each route's own default)."""
    token = _BUDGET.set(seconds)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def allowed(default: float) -> float:
    """The seconds a route may be estimated to take: the budget of ``time_budget`` if one is
    set, else the route's ``default``."""
    given = _BUDGET.get()
    return default if given is None else given
