"""A fixed-point solve's deadline: ``by_deadline`` wraps a residual so that calling it past the
deadline, or when the slowest evaluation so far would end past it, raises ``Overtime``, which
the limits turn into a refusal saying what would answer (``work.overtime``). Below every solver
of the family (``work`` imports the solvers' sizes).
"""

from __future__ import annotations

import time
from contextvars import ContextVar

#: ``(deadline, seconds)``: the slowest residual evaluation seen under ``deadline`` (one call of
#: the public limits spans several wrapped residuals: the ladder's levels, the fixed points of
#: the pipeline), so that the next is not started when it would end past the deadline.
_SLOWEST: ContextVar = ContextVar("fedrisk_logistic_slowest", default=(None, 0.0))
#: Evaluations shorter than this may start near the deadline: they overrun it by less than the
#: command line's margin (``riskcalc.cli.logistic.family.SOLVER_MARGIN``, 3 s), and a refusal before
#: the deadline would pre-empt a later stage's own (a lam = 0 solve's Candes-Sur advice).
PREDICTED_FROM = 1.0


class Overtime(Exception):
    """A fixed-point solve still running at its deadline (``fixed_point._root``), or stopped
    before a step predicted to end past it; its message, if any, names that step
    (``elapsed``)."""


def by_deadline(fun, deadline):
    """``fun`` raising ``Overtime`` when called past ``deadline`` (``time.perf_counter``'s
    clock), or when the slowest evaluation under this deadline so far (if at least
    ``PREDICTED_FROM`` seconds), started now, would end past it; ``fun`` itself for None: the
    residuals of the spectrum's solvers, whose one stage can take all the time (near a
    separability threshold, at small penalties). Checked between
    evaluations only, one evaluation on the largest rules (~20 s) started 3 s before the
    deadline overran it, and ``predict --max-minutes``'s timer stopped the command with its
    generic message before the solver's own (note37 2.4)."""
    if deadline is None:
        return fun

    def checked(*args):
        begun = time.perf_counter()
        held, slowest = _SLOWEST.get()
        slowest = slowest if held == deadline else 0.0
        if begun + (slowest if slowest >= PREDICTED_FROM else 0.0) > deadline:
            raise Overtime
        out = fun(*args)
        _SLOWEST.set((deadline, max(slowest, time.perf_counter() - begun)))
        return out
    return checked


def elapsed(seconds: float, max_seconds: float, step=None) -> str:
    """``(N s)`` for a refusal at ``max_seconds`` after ``seconds``, saying why it came early
    when ``by_deadline`` predicted the overrun ("was still solving at max_seconds = 60 (48.8
    s)" read as a contradiction); ``step``: the ``Overtime`` raised, whose message (if any)
    names the step predicted to overrun instead of the next residual evaluation."""
    if seconds >= max_seconds:
        return f"({seconds:.3g} s)"
    why = str(step or "") or ("its next residual evaluation, as slow as its slowest so far, "
                              "would have ended past it")
    return f"({seconds:.3g} s: {why})"
