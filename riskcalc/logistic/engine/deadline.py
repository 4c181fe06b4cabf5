"""A fixed-point solve's deadline: ``by_deadline`` wraps a residual so that calling it past the
deadline raises ``Overtime``, which the limits turn into a refusal saying what would answer
(``work.overtime``). Below every solver of the family (``work`` imports the solvers' sizes).
"""

from __future__ import annotations

import time


class Overtime(Exception):
    """A fixed-point solve still running at its deadline (``fixed_point._root``)."""


def by_deadline(fun, deadline):
    """``fun`` raising ``Overtime`` when called past ``deadline`` (``time.perf_counter``'s
    clock); ``fun`` itself for None: the residuals of the spectrum's solvers, whose one stage
    can take all the time (near a separability threshold, at small penalties)."""
    if deadline is None:
        return fun

    def checked(*args):
        if time.perf_counter() > deadline:
            raise Overtime
        return fun(*args)
    return checked
