"""Checks and conversions every verb of the ``riskcalc`` command shares (the app layer).

* ``dumps``: the one JSON writer of ``--json``: standard JSON only (a non-finite number is
  null, never ``Infinity`` or ``NaN``, which ``json.dumps`` writes by default);
* ``jobs``: ``--jobs`` capped at the cores this process may use, with a note on stderr;
* ``unused``: an option given where it has no effect is an error, not silently ignored;
* ``no_warnings_first``: numpy's warnings are held back while a command runs, so that none
  precedes its ``error:`` line; after a successful run they follow the output, one line each;
* ``--max-minutes``: ``budget``/``check_time`` refuse, before any work, a run estimated to take
  longer (the estimates: ``montecarlo.runner.budget``, ``riskcalc.advise.cost``, the paper
  checks' and figures' recorded times); ``time_limit`` stops a run in flight once the time is up
  (``OutOfTime``), and the verb reports what it kept;
* ``working``: progress on stderr while a theory computation runs longer than a few seconds.
"""

from __future__ import annotations

import json
import math
import signal
import sys
import threading
import time
import warnings
from contextlib import contextmanager

from riskcalc.logistic.work import MAX_SECONDS as LOGISTIC_SECONDS
from riskcalc.errors import Stop


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
    if value == 1:
        return 1   # never capped: the theory verbs (advise) do not import montecarlo for it
    from montecarlo.runner.budget import cores

    n = cores()
    if value > n:
        # --jobs 1e100 printed all 101 digits of 10**100
        shown = value if value < 10**15 else f"{float(value):.3g}"
        sys.stderr.write(f"note: {option} {shown} capped at the {n} cores available\n")
        return n
    return value


def unused(args, names, why: str) -> None:
    """Raise ValueError if any option in ``names`` (attribute names of ``args``) was given:
    ``why`` says in which mode it would apply."""
    for name in names:
        if getattr(args, name, None) is not None:
            option = "--" + name.replace("_", "-")
            raise ValueError(f"{option.replace('--global-model', '--global')} {why}")


def listing(args, used, what: str, also=()) -> None:
    """``--list`` only prints: ValueError naming ``also`` (what the caller found given: a
    positional, an appending option) and every option the command line gave
    (``riskcalc.cli.GIVEN``) whose destination is not in ``used``; ``what`` is listed. Was:
    ``simulate --list --set m=2 --reps 3 --max-minutes 0`` printed the list and ignored them."""
    from riskcalc.cli import GIVEN

    given = list(also) + [flag for dest, flag in getattr(args, GIVEN, {}).items()
                          if flag is not None and dest not in {"list", *used}]
    if given:
        raise ValueError(f"--list only lists {what}: {', '.join(given)} "
                         f"{'does' if len(given) == 1 else 'do'} not apply with it")


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


def add_budget_option(parser, stop: str | None = None, logistic: bool = False) -> None:
    """Add ``--max-minutes`` (the time a simulation may take, estimated before it starts;
    ``stop``: what the command keeps when it is also stopped in flight at the limit;
    ``logistic``: the verb takes ``--model logistic``, whose default limit the help names)."""
    # Default None (read as MAX_MINUTES by ``max_seconds``): an explicit --max-minutes 10 is
    # then "given" (``families.given`` compares with the default; the logistic verbs keep their
    # solvers' own limit when it is not given, and took an explicit 10 for that).
    parser.add_argument("--max-minutes", type=float, default=None, metavar="M",
                        help="refuse a run estimated to take longer than M minutes of "
                             f"wall time (default {MAX_MINUTES:g}" + (
                                 f"; with --model logistic the solvers' own "
                                 f"{LOGISTIC_SECONDS:g} s unless given" if logistic else "")
                             + "); the estimate is printed with the refusal" + (
                                 "" if stop is None else
                                 f"; a run still going at M minutes stops there and {stop}"))


#: ``--max-minutes`` beyond this (docs/safety.rst: beyond a year) is read as this: its seconds
#: and the solvers' margins on them stay finite.
NO_LIMIT_MINUTES = 1e300


def max_seconds(args) -> float:
    """``--max-minutes`` of ``args`` (default ``MAX_MINUTES``) in seconds, validated."""
    minutes = getattr(args, "max_minutes", None)
    minutes = MAX_MINUTES if minutes is None else minutes
    if not (isinstance(minutes, float) and math.isfinite(minutes) and minutes > 0):
        # 1e400 reads as inf: was "got inf" alone, though the docs promise no timer beyond a
        # year; inf stays refused (fuzz40 small F1), the message says how to ask for no limit.
        hint = ("; a number past the float range such as 1e400 reads as inf: for no limit give "
                "one beyond a year, e.g. 1e300" if minutes == math.inf else "")
        raise ValueError(f"--max-minutes must be a finite number > 0, got {minutes!r}{hint}")
    # Past NO_LIMIT_MINUTES (no limit in practice) read as it: 1e308 minutes overflowed to inf
    # seconds, which the logistic and rounds solvers refused ("max_seconds ... got nan").
    return 60.0 * min(minutes, NO_LIMIT_MINUTES)


def check_time(tasks: int, seconds_each: float, workers: int, max_seconds: float | None,
               what: str, advice: str) -> float:
    """The estimated wall time of ``tasks`` tasks of ``seconds_each`` on ``workers`` workers;
    ValueError when it exceeds ``max_seconds`` (None: no limit), naming ``advice`` (what would
    bring it under)."""
    total = tasks * seconds_each / max(workers, 1)
    if max_seconds is not None and total > max_seconds:
        raise ValueError(f"{what}: estimated {duration(total)} of work on {workers} "
                         f"worker(s), more than the {duration(max_seconds)} allowed; {advice}")
    return total


def duration(seconds: float) -> str:
    """``seconds`` in the largest unit that keeps it >= 1 (s, min, h, days), 3 digits."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def budget(args, tasks: int, seconds_each: float, what: str, advice: str,
           cached: int = 0) -> None:
    """Check ``--max-minutes`` and cap ``args.jobs`` (in place) before a simulation of
    ``tasks`` tasks of about ``seconds_each`` seconds each, ``cached`` of which the --cache
    file holds (``montecarlo.runner.tasks.cached_count``): only the others are timed, so a
    resumed run needs no more than the limit of the work it has left."""
    limit = max_seconds(args)
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
    if tasks > 1:   # one task's bookkeeping (4 KiB) never fills half the memory
        from montecarlo.runner.budget import check_tasks

        check_tasks(tasks, what, advice)
    check_time(tasks - cached, seconds_each, workers, limit,
               what + (f", {cached} of them in --cache" if cached else ""),
               advice + ", or allow more time with --max-minutes")


#: Seconds before the first progress line of ``working`` and between lines: on a terminal a
#: live line (erased when the answer comes), in a log or pipe one line now and then.
PROGRESS_TTY = (2.0, 1.0)
PROGRESS_LOG = (10.0, 60.0)


#: The label of the running ``working`` line (empty: none runs).
_LABEL = []


@contextmanager
def working(what: str):
    """Progress on stderr while a theory computation runs (the limits under a spectrum may
    take tens of seconds: 1000 atoms, M = 10-30 clients, 13-50 s with nothing shown): after
    ``PROGRESS_TTY[0]`` s a terminal shows "``what``: computing, N s so far" updated every
    second and erased on leaving; a log gets one such line at ``PROGRESS_LOG[0]`` s and then
    one a minute. A call that ends sooner shows nothing. Nested in another ``working`` (the
    rounds inside ``predict``), it renames the outer line for its duration (was: a second
    line, or on a terminal two live lines over each other, every interval)."""
    if _LABEL:
        outer, _LABEL[-1] = _LABEL[-1], what
        try:
            yield
        finally:
            _LABEL[-1] = outer
        return
    stream = sys.stderr
    try:
        tty = bool(stream.isatty())
    except (AttributeError, ValueError):
        tty = False
    first, every = PROGRESS_TTY if tty else PROGRESS_LOG
    stop, start, width = threading.Event(), time.monotonic(), [0]

    def beat():
        wait = first
        while not stop.wait(wait):
            so_far = duration(round(time.monotonic() - start))
            text = f"{_LABEL[-1]}: computing, {so_far} so far (Ctrl-C stops it)"
            try:
                stream.write(f"\r{text}" if tty else f"progress: {text}\n")
                stream.flush()
            except (ValueError, OSError):       # the stream was closed: nothing to show
                return
            width[0], wait = len(text), every

    _LABEL.append(what)
    thread = threading.Thread(target=beat, name="riskcalc-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        _LABEL.pop()
        if tty and width[0]:
            stream.write("\r" + " " * width[0] + "\r")
            stream.flush()


#: Longest timer ``time_limit`` sets (a year); beyond it (--max-minutes 1e300, whose seconds
#: overflow the platform's timer) there is no limit in practice and none is set.
MAX_TIMER = 365 * 86400.0


class OutOfTime(Stop):
    """The ``--max-minutes`` limit passed while a command ran (``time_limit``).

    A BaseException (``riskcalc.errors.Stop``), like KeyboardInterrupt: no ``except Exception``
    of the work it stops, nor the plugin boundary, may take it for a failure of that work (a
    paper check reported as failing; "limit raised OutOfTime"), and joblib stops its workers
    on it as on a Ctrl-C. Its message says what the command kept.
    """


@contextmanager
def time_limit(seconds: float):
    """Raise ``OutOfTime`` in this thread once ``seconds`` of wall time have passed (a SIGALRM
    timer; no limit outside the main thread or where the platform has no interval timer).
    The timer is cancelled on leaving, so nothing fires after the block."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not \
            threading.main_thread() or seconds > MAX_TIMER:
        yield
        return

    def stop(signum, frame):
        raise OutOfTime(f"stopped at the --max-minutes limit ({duration(seconds)})")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def simulation_options(args) -> None:
    """Options of ``compare``/``sweep``: the counts and numbers of the simulation checked,
    named as the options, and those that have no effect in the chosen mode are errors
    (``montecarlo.compare_checks.unused_options``, the Python API's check, named as the options)."""
    from montecarlo.compare_checks import unused_options
    from riskcalc._validate import as_array, positive_int, seed_integer

    # Named as the options, as check-method and the logistic family name them (was "reps
    # must be ...", "seed must ...", "steps must ...", "df must lie in ...": Python names).
    positive_int("--reps", args.reps, minimum=2)
    seed_integer("--seed", args.seed)
    if args.steps is not None:
        positive_int("--steps", args.steps, minimum=0)
    if args.step_size is not None:
        as_array("--step-size", args.step_size, low=0.0, low_open=True, ndim=0)
    if (args.steps is None) != (args.step_size is None):    # Python's check_run says steps=
        raise ValueError("--steps needs --step-size" if args.step_size is None
                         else "--step-size is only used with --steps")
    if args.df is not None:
        as_array("--df", args.df, low=4.0, low_open=True, ndim=0)
    unused_options(args.method, args.global_model,
                   [k for k in ("clients", "clients_file", "weights", "df")
                    if getattr(args, k, None) is not None],
                   "student-t" in (args.features, args.noise), cli=True, noise=args.noise,
                   measure=args.measure, eigvecs=getattr(args, "eigvecs", "aligned"),
                   features=args.features)


def many_samples(d: int, gamma: float) -> str:
    """`` (n = d / gamma = ... samples for gamma = ...)`` where that is many (> 1e4), for a
    refusal of ``budget`` to add ", or raise --gamma" to its advice: a small gamma is many
    samples, and at --gamma 1e-100 the refusal named only --reps, --d and --clients for its
    3.7e+90 days (check-method and the logistic sweep at --gamma 1e-6 still did)."""
    n = d / gamma
    return f" (n = d / gamma = {n:.3g} samples for gamma = {gamma:g})" if n > 1e4 else ""


def linear_budget(args, settings, gamma, points: int, cached: int = 0) -> None:
    """``budget`` for ``points`` x --reps replicates of the linear model at each of
    ``settings`` (a ``Setting`` for ``compare``, one per --clients value for ``sweep``),
    ``cached`` of which the --cache file holds already. A replicate takes the settings' mean
    time (was the last setting's: --clients 2000,3 was timed as 3 clients, 3.5 s for about
    17 minutes of work, and --clients 3,2000 as 2000 clients, twice its time)."""
    import numpy as np

    from montecarlo.linear.instances import linear_replicate_seconds
    from montecarlo.linear.estimators import get_estimator

    settings = settings if isinstance(settings, (list, tuple)) else [settings]
    reps = args.reps if isinstance(args.reps, int) and args.reps > 0 else 1
    centered = get_estimator(args.method).centered
    seconds = [linear_replicate_seconds(s, gamma, centered) for s in settings]
    clients = sorted({s.clients for s in settings if s.global_model == "federated"})
    samples = many_samples(settings[0].d, float(np.min(gamma)))
    budget(args, reps * points * len(settings), sum(seconds) / len(seconds),
           f"{reps} replicate(s) x {points * len(settings)} point(s) at d = {settings[0].d}"
           + (f" with {clients[0]}" + (f" to {clients[-1]}" if len(clients) > 1 else "")
              + " clients" if clients else "") + samples,
           # --clients only where it applies: --global oracle refuses it, and a federation or
           # clients file's clients are the file's (--clients is refused beside it)
           ("lower --reps or --d" if not clients else "lower --reps, --d or " + (
               "the federation's clients" if getattr(args, "federation", None) is not None
               or getattr(args, "clients_file", None) is not None else "--clients"))
           + (", or raise --gamma" if samples else ""), cached)


def predict_options(args) -> None:
    """``predict``: --clients and --step-size named as options; ``--d`` sizes ``powerlaw:P``
    and the clients file's per-client spectra (expanded to d eigenvalues) only; every other
    SPEC ignores it."""
    from riskcalc._validate import positive, positive_int

    # The options' own names in their messages (was "clients must be ...", "step_size must
    # lie in (0, inf)": the Python names of the values).
    if getattr(args, "clients", None) is not None:
        positive_int("--clients", args.clients)
    if getattr(args, "step_size", None) is not None:
        positive("--step-size", args.step_size, ndim=0)
    from riskcalc.spectrum import spec_kind

    kind, arg = spec_kind(str(getattr(args, "spectrum", "identity")))
    files = (getattr(args, "clients_file", None), getattr(args, "federation", None))
    if getattr(args, "d", None) is not None and files == (None, None) \
            and not (kind == "powerlaw" and "," not in arg):
        # powerlaw:P,D was told "--d applies with --spectrum powerlaw:P", which it had given.
        own = "; powerlaw:P,D gives its own D eigenvalues" if kind == "powerlaw" else ""
        raise ValueError("--d applies with --spectrum powerlaw:P (no D of its own) or with "
                         "--clients-file (the number of eigenvalues of the spectra); otherwise "
                         f"nothing uses it{own}")


#: ``params_line`` shows a list of more entries by its first three and its last.
LIST_SHOWN = 8


def params_line(params: dict) -> str:
    """``  k = v, ...`` of a result's ``params``, a spectrum given as its atoms and weights
    shown by ``Spectrum.describe`` (was: the dict of every atom and weight, 30 of each for
    powerlaw:1 at d = 30, printed on the line), a list of more than ``LIST_SHOWN`` entries
    (one per client) by its first three and last ones and its length (300 clients' spectra
    made a line of 6 kB; ``--json`` holds them all)."""
    def shown(key, value):
        if key == "spectrum" and isinstance(value, dict) and "atoms" in value:
            from riskcalc.spectrum import Spectrum

            return Spectrum(value["atoms"], weights=value["weights"]).describe()
        if isinstance(value, (list, tuple)) and len(value) > LIST_SHOWN:
            head = ", ".join(repr(v) for v in value[:3])
            return f"[{head}, ..., {value[-1]!r}] ({len(value)} entries)"
        return value
    return "  " + ", ".join(f"{k} = {shown(k, v)}" for k, v in params.items())
