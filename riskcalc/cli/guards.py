"""Checks and conversions every verb of the ``riskcalc`` command shares (the app layer).

* ``dumps``: the one JSON writer of ``--json``: standard JSON only (a non-finite number is
  null, never ``Infinity`` or ``NaN``, which ``json.dumps`` writes by default);
* ``jobs``: ``--jobs`` capped at the cores this process may use, with a note on stderr;
* ``unused``: an option given where it has no effect is an error, not silently ignored;
* ``no_warnings_first``: numpy's warnings are held back while a command runs, so that none
  precedes its ``error:`` line; after a successful run they follow the output, one line each.
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
from contextlib import contextmanager


def jsonable(obj):
    """``obj`` with every non-finite float (and numpy scalar or array) made JSON-safe: NaN and
    infinities become None."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):
        return jsonable(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def dumps(obj) -> str:
    """Strict JSON text of ``obj`` (non-finite numbers as null)."""
    return json.dumps(jsonable(obj), allow_nan=False)


def cores() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def jobs(value, option: str = "--jobs") -> int:
    """A validated worker count, capped at ``cores()`` (a note on stderr says so): more
    processes than cores only add memory and start-up time."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{option} must be an integer >= 1, got {value!r}")
    n = cores()
    if value > n:
        sys.stderr.write(f"note: {option} {value} capped at the {n} cores available\n")
        return n
    return value


def unused(args, names, why: str) -> None:
    """Raise ValueError if any option in ``names`` (attribute names of ``args``) was given:
    ``why`` says in which mode it would apply."""
    for name in names:
        if getattr(args, name, None) is not None:
            option = "--" + name.replace("_", "-")
            raise ValueError(f"{option.replace('--global-model', '--global')} {why}")


@contextmanager
def no_warnings_first():
    """Hold back Python warnings for the duration; on a normal exit write them to stderr, one
    ``warning: ...`` line per distinct message, after the command's output. On an exception
    (the ``error:`` line) drop them. numpy's floating-point RuntimeWarnings are dropped in
    both cases: every result is checked for finiteness explicitly (``riskcalc`` raises rather
    than return a NaN), so they only repeat what the check says, or nothing."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = set()
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            continue
        text = str(w.message).splitlines()[0] if str(w.message) else w.category.__name__
        if text not in seen:
            seen.add(text)
            sys.stderr.write(f"warning: {text}\n")
