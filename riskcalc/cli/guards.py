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


def jobs(value, option: str = "--jobs") -> int:
    """A validated worker count, capped at ``cores()`` (a note on stderr says so): more
    processes than cores only add memory and start-up time."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{option} must be an integer >= 1, got {value!r}")
    from montecarlo.runner.budget import cores

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


#: Default of --max-minutes: a command is interactive; longer runs are asked for explicitly.
MAX_MINUTES = 10.0


def add_budget_option(parser) -> None:
    """Add ``--max-minutes`` (the time a simulation may take, estimated before it starts)."""
    parser.add_argument("--max-minutes", type=float, default=MAX_MINUTES, metavar="M",
                        help="refuse a simulation estimated to take longer than M minutes of "
                             f"wall time (default {MAX_MINUTES:g}); the estimate is printed "
                             "with the refusal")


def budget(args, tasks: int, seconds_each: float, what: str, advice: str) -> None:
    """Check ``--max-minutes`` and cap ``args.jobs`` (in place) before a simulation of
    ``tasks`` tasks of about ``seconds_each`` seconds each."""
    from montecarlo.runner.budget import check_tasks, check_time

    minutes = getattr(args, "max_minutes", MAX_MINUTES)
    if not (isinstance(minutes, float) and math.isfinite(minutes) and minutes > 0):
        raise ValueError(f"--max-minutes must be a finite number > 0, got {minutes!r}")
    if getattr(args, "scheduler", None) is not None:
        if getattr(args, "jobs", None) not in (None, 1):
            raise ValueError("--jobs does not apply with --scheduler (the cluster's workers "
                             "run the tasks)")
        workers = 1   # unknown: the estimate assumes one
    else:
        given = getattr(args, "jobs", None)
        workers = jobs(1 if given is None else given)
        if hasattr(args, "jobs"):
            args.jobs = workers
    check_tasks(tasks, what, advice)
    check_time(tasks, seconds_each, workers, 60.0 * minutes, what,
               advice + ", or allow more time with --max-minutes")


def simulation_options(args) -> None:
    """Options of ``compare``/``sweep`` that have no effect in the chosen mode are errors:
    the federation's options under ``--global oracle`` (the centre is theta_0 itself), a
    federated global model for a method that has none, ``--df`` without Student-t draws."""
    from montecarlo.linear.estimators import get_estimator

    if args.global_model != "federated":
        unused(args, ("clients", "clients_file", "weights"),
               "applies with --global federated only (the oracle global model is the centre "
               "theta_0 itself, whatever the other clients)")
    elif not get_estimator(args.method).centered:
        raise ValueError(f"--global federated does not apply to {args.method}: it uses no "
                         "global model")
    if "student-t" not in (args.features, args.noise):
        unused(args, ("df",), "applies with --features student-t or --noise student-t only")


def linear_budget(args, setting, gamma, points: int) -> None:
    """``budget`` for ``points`` x --reps replicates of the linear model (``compare``,
    ``sweep``)."""
    from montecarlo.linear.instances import linear_replicate_seconds
    from montecarlo.linear.estimators import get_estimator

    reps = args.reps if isinstance(args.reps, int) and args.reps > 0 else 1
    budget(args, reps * points,
           linear_replicate_seconds(setting, gamma, get_estimator(args.method).centered),
           f"{reps} replicate(s) x {points} point(s) at d = {setting.d}"
           + (f" with {setting.clients} clients" if setting.global_model == "federated"
              else ""),
           "lower --reps, --d or --clients")


def predict_options(args) -> None:
    """``predict``: ``--d`` sizes ``powerlaw:P`` and the clients file's per-client spectra
    (expanded to d eigenvalues) only; every other SPEC ignores it."""
    spec = str(getattr(args, "spectrum", "identity")).strip().lower()
    files = (getattr(args, "clients_file", None), getattr(args, "federation", None))
    if getattr(args, "d", None) is not None and files == (None, None) \
            and not (spec.startswith("powerlaw:") and "," not in spec):
        raise ValueError("--d applies with --spectrum powerlaw:P or with --clients-file (the "
                         "number of eigenvalues of the spectra); otherwise nothing uses it")
