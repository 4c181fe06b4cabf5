"""Running many independent simulation tasks: in parallel, with progress, resumable.

One interface for every sweep of the toolkit (DESIGN.md, "Simulation"): a task is a
JSON-serializable dict, ``fn(task)`` returns a JSON-serializable dict, and each task carries
everything its randomness depends on (its seed and replicate index, see
``montecarlo.runner.seeding``), so results never depend on the number of workers.

Local runs use joblib (processes); cluster runs use dask.distributed through joblib's ``dask``
backend, selected by ``scheduler=``. With ``cache=PATH``, every finished task is appended to a
JSON-lines file as soon as it completes; a rerun with the same file skips the tasks already
there, so an interrupted sweep resumes without losing finished work. The file's first line
identifies it (``FORMAT``, the command): any other file (a results CSV, binary data) is refused,
never appended to. ``parallel_results`` is the worker mechanism alone, Ctrl-C handling
included, for callers whose units of work are not JSON tasks (``paper_checks.run_claims``).

BLAS threads: every task runs with one BLAS thread (``montecarlo.runner.threads.small_blas``),
in this process (n_jobs = 1) and in every worker alike. A threaded BLAS splits its sums
differently with another thread count, so results would otherwise differ in the last bits
between ``n_jobs = 1`` (all the library's threads) and loky workers (started with
cpu_count // n_jobs threads): one thread per task makes them byte-identical for any number of
workers, and parallelism comes from the workers instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import warnings
from contextlib import contextmanager

from joblib import Parallel, delayed, parallel_config
from tqdm.auto import tqdm

from montecarlo.runner.budget import cores
from montecarlo.runner.dask_backend import _DaskBackend
from montecarlo.runner.threads import small_blas
from riskcalc._files import no_special_file
from riskcalc._validate import flag, path, positive_int
from riskcalc.plugins import check_worker


def task_key(task: dict) -> str:
    """A stable identifier of a task: the SHA-1 of its canonical JSON."""
    return hashlib.sha1(json.dumps(task, sort_keys=True).encode()).hexdigest()


#: Version of the cache format: line 1 is the header ``{"fedrisk_cache": FORMAT, "command":
#: ...}``, then one record ``{"key", "task", "result"}`` per line. Version 1 had no header;
#: such a file (its first line a record) is still read and resumed.
FORMAT = 2


class CacheWarning(UserWarning):
    """A line of a task cache that is not a complete record (its task reruns)."""


def load_cache(path, command: str | None = None) -> dict:
    """Results already stored in a JSON-lines cache, by task key.

    Raises
    ------
    ValueError
        When ``path`` is not a fedrisk cache (no header line, e.g. a results CSV), was
        written by another format version or by another ``command``, or holds binary data
        (reported with its line number): such a file is never appended to.

    A text line that is not a record ``{"key": str, "result": ...}`` (cut short by an
    interruption, or valid JSON of another shape) is skipped with a ``CacheWarning`` naming its
    line number: that task simply reruns (no warning once a later line holds its task).
    """
    done = {}
    if path is None or not os.path.exists(path) or os.path.getsize(path) == 0:
        return done
    bad = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                rec = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise ValueError(f"cache {path}: line {number} is binary data, not a fedrisk "
                                 "cache line; give another file or delete this one") from None
            except (ValueError, RecursionError):
                # Not JSON, or JSON no cache writes: nested past the recursion limit (a
                # RecursionError traceback) or an integer past 4300 digits (an error naming
                # neither file nor line; fuzz40 fuzz F8). Its task reruns.
                rec = None
            if number == 1:
                _check_header(path, rec, command)
                if isinstance(rec, dict) and "fedrisk_cache" in rec:
                    continue
            if isinstance(rec, dict) and isinstance(rec.get("key"), str) and "result" in rec:
                done[rec["key"]] = rec["result"]
            elif raw.strip():
                bad.append((number, _TORN_KEY.match(raw)))
    # A torn line whose task a later line holds (its rerun) is no news: every run after the
    # rerun said "its task reruns" again.
    bad = [number for number, key in bad if not (key and key.group(1).decode() in done)]
    if bad:
        lines = ", ".join(map(str, bad[:5])) + (f" and {len(bad) - 5} more" if len(bad) > 5
                                                 else "")
        what = ("are not complete records (torn by an interruption?); their tasks rerun "
                "unless other lines hold them" if len(bad) > 1 else
                "is not a complete record (torn by an interruption?); its task reruns unless "
                "another line holds it")
        warnings.warn(f"cache {path}: line{'s' if len(bad) > 1 else ''} {lines} {what}",
                      CacheWarning, stacklevel=2)
    return done


def cached_count(cache, command: str | None, tasks, valid=None) -> int:
    """How many of ``tasks`` (an iterable, not consumed when the cache is empty) the
    ``cache`` file already holds with a ``valid`` result (``run_tasks``), nothing run: the
    time limits estimate only the others (a resumed run was refused for the work it would not
    do)."""
    done = load_cache(_check_paths(cache, None, 1), command)
    return sum(key in done and (valid is None or valid(task, done[key]))
               for task, key in ((task, task_key(task)) for task in tasks)) if done else 0


#: The key that starts a record line (``run_tasks`` writes it first: a torn line keeps it).
_TORN_KEY = re.compile(rb'\{"key": "([0-9a-f]{40})"')


def _check_header(path, rec, command) -> None:
    """Refuse a first line that is neither a fedrisk cache header of this format (and
    command) nor a record of a version-1 cache."""
    if isinstance(rec, dict) and "fedrisk_cache" in rec:
        if rec["fedrisk_cache"] != FORMAT:
            raise ValueError(f"cache {path}: format version {rec['fedrisk_cache']!r}, this "
                             f"fedrisk reads version {FORMAT}; give another file")
        if command is not None and rec.get("command") != command:
            raise ValueError(f"cache {path} was written by {rec.get('command')!r}, not "
                             f"{command!r}; give another file")
        return
    if isinstance(rec, dict) and isinstance(rec.get("key"), str) and "result" in rec:
        return   # version 1: no header
    raise ValueError(f"cache {path} is not a fedrisk cache (its first line is not a fedrisk "
                     "cache header); it is never appended to: give a new file name")


def _open_cache(path, command: str):
    """The cache opened for appending: a new (or empty) file gets the header line; an
    existing one has its last line terminated first (a line torn by an interruption must not
    swallow the next record)."""
    try:
        with open(path, "a+b") as fh:
            if fh.tell() == 0:
                fh.write((json.dumps({"fedrisk_cache": FORMAT, "command": command}) + "\n")
                         .encode())
            else:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    fh.write(b"\n")
        return open(path, "a")
    except OSError as exc:
        # /proc/version passes every check before opening and then refuses ([Errno 22]).
        raise ValueError(f"cache {path}: cannot be appended to ({exc.strerror or exc})") \
            from None


def run_tasks(fn, tasks, *, cache=None, n_jobs: int = 1, scheduler: str | None = None,
              progress: bool = True, desc: str = "tasks", command: str | None = None,
              valid=None) -> list:
    """Run ``fn`` on every task and return the results in task order.

    Parameters
    ----------
    fn : callable
        A module-level function (picklable) mapping a task dict to a result dict.
    tasks : list of dict
        JSON-serializable task descriptions.
    cache : path-like, optional
        JSON-lines file of finished tasks: read first (finished tasks are skipped), appended to
        as tasks complete.
    n_jobs : int
        Number of local worker processes (joblib); 1 runs in this process. Capped at the
        cores this process may use (more only add memory and start-up time).
    scheduler : str, optional
        Address of a dask.distributed scheduler (``tcp://host:port``), or ``"local"`` for an
        in-process dask cluster; tasks then run on its workers through joblib's dask backend.
    progress : bool
        Show a progress bar on stderr.
    desc : str
        Label of the progress bar.
    command : str, optional
        What writes the cache: its header names it, and a cache whose header names another
        command is refused. Default: no check, the header names the first word of ``desc``
        (figures share cache files between figures).
    valid : callable, optional
        ``valid(task, result)``: whether a cached result has the layout ``fn`` returns; one
        that has not (an earlier fedrisk's, or edited) reruns, with a ``CacheWarning`` (was: a
        traceback, or NaN rows, where it was read). Default: any result is taken.
    """
    n_jobs = positive_int("n_jobs", n_jobs)    # the Python name (was "jobs": fuzz42 api2 F5)
    cache = _check_paths(cache, scheduler, n_jobs)
    n_jobs = min(n_jobs, cores())
    progress = flag("progress", progress)     # progress="no" drew the bar
    tasks = list(tasks)
    keys = [task_key(t) for t in tasks]
    done = load_cache(cache, command)
    stale = {k for task, k in zip(tasks, keys)
             if valid is not None and k in done and not valid(task, done[k])}
    if stale:
        warnings.warn(f"cache {cache}: {len(stale)} record(s) hold a result of another layout "
                      "or numbers their task cannot return (an earlier fedrisk's, or edited); "
                      "their tasks rerun", CacheWarning,
                      stacklevel=2)
    todo = [i for i, k in enumerate(keys) if k not in done or k in stale]
    # The cache is opened before the progress bar is drawn: a file that cannot be appended
    # to is one error line, with no bar before it.
    sink = (_open_cache(cache, command or (desc.split() or ["tasks"])[0])
            if cache is not None else None)
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, file=sys.stderr,
               disable=not progress, leave=False)
    try:
        outputs = parallel_results((delayed(_indexed)(fn, i, tasks[i]) for i in todo),
                                   n_jobs=n_jobs, scheduler=scheduler)
        for i, result, caught in outputs:
            _rewarn(caught)
            done[keys[i]] = result
            if sink is not None:
                sink.write(json.dumps({"key": keys[i], "task": tasks[i], "result": result})
                           + "\n")
                sink.flush()
            bar.update(1)
    finally:
        bar.close()
        if sink is not None:
            sink.close()
    return [done[k] for k in keys]


def _check_paths(cache, scheduler, n_jobs):
    """``cache`` as a Path (``~`` the home folder: ``riskcalc._validate.path``), or None; or
    ValueError for a ``cache`` not a file path (cache=3 wrote to file descriptor 3), a
    ``scheduler`` not an address, ``n_jobs`` beside a ``scheduler`` (as ``--jobs``)."""
    cache = None if cache is None else path("cache", cache)
    if cache is not None and os.path.isdir(cache):
        raise ValueError(f"cache {cache}: is a folder, expected a file path")
    if cache is not None:       # the command line's rule: no device, pipe or open stream
        no_special_file(cache, "cache")
    if scheduler is not None and not isinstance(scheduler, str):
        raise ValueError("scheduler must be the address of a dask scheduler (tcp://host:port) "
                         f"or 'local', got {scheduler!r}")
    if scheduler is not None and n_jobs != 1:
        raise ValueError(f"n_jobs = {n_jobs} does not apply with a scheduler (the cluster's "
                         "workers run the tasks): leave it 1")
    return cache


def parallel_results(calls, *, n_jobs: int, scheduler: str | None = None,
                     ordered: bool = False):
    """Run joblib ``calls`` (``delayed(f)(...)``) and yield their results, with Ctrl-C left to
    this process: the one worker mechanism of ``run_tasks`` and ``paper_checks.run_claims``.

    The workers (loky processes, or a dask scheduler's) start with SIGINT ignored
    (``_LocalBackend``, ``_sigint_blocked``), so a terminal's Ctrl-C, which reaches the whole
    foreground process group, raises ``KeyboardInterrupt`` here only; joblib then terminates
    the workers, and the command line turns it into one ``error:`` line and exit code 130
    (``riskcalc.cli.main``).

    Parameters
    ----------
    calls : iterable
        ``joblib.delayed`` calls.
    n_jobs : int
        Local worker processes; 1 runs the calls in this process.
    scheduler : str, optional
        As in :func:`run_tasks`.
    ordered : bool
        Yield in the order of ``calls`` (else as they finish).

    Yields
    ------
    object
        The result of each call.
    """
    with _backend(scheduler, n_jobs) as jobs:
        runner = Parallel(n_jobs=jobs, return_as="generator" if ordered else
                          "generator_unordered")
        # The call starts joblib's workers and returns (the tasks run while iterating).
        with _sigint_blocked():
            outputs = runner(calls)
        yield from outputs


def _indexed(fn, i, task):
    # Warnings are recorded and handed to the parent with the result (``_rewarn``): a worker
    # writing them to the terminal itself would put them ahead of the command's output or
    # error line.
    check_worker()              # a plugin that failed to load in this worker
    with small_blas(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(task)
    return i, result, [(w.category, str(w.message)) for w in caught]


def _rewarn(caught) -> None:
    for category, message in caught:
        warnings.warn(message, category, stacklevel=3)


def _backend(scheduler, n_jobs):
    if scheduler is None:
        return _LocalBackend(n_jobs)
    return _DaskBackend(scheduler)


def _ignore_sigint():
    """Worker initializer: Ctrl-C belongs to the parent, which stops the workers itself.

    A terminal's Ctrl-C reaches every process of the foreground group; a worker that got it
    while waiting for a task would print a traceback. The workers are started with SIGINT
    blocked (``_sigint_blocked``), so none arrives before this ignores it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _sigint_blocked():
    """SIGINT blocked in this thread and ignored for the duration: processes started
    meanwhile inherit both (the mask alone did not reach every loky worker: some printed a
    KeyboardInterrupt traceback while still importing; an ignored SIGINT stays ignored in a
    new Python process). A Ctrl-C meanwhile stays pending and is delivered when it ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:       # not the main thread: only the mask
        handler = None
    try:
        yield
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


#: loky's resource tracker (a process of its own, writing to this terminal after this process
#: has exited) warns at shutdown about a semaphore that a worker registered and never
#: unregistered because Ctrl-C ended it mid-import, then unlinks it anyway: the warning is
#: bookkeeping a user cannot act on, and it broke the interrupt's one-line contract (seen once
#: in CI). The tracker's command line takes this interpreter's -W options when it is launched.
_QUIET_TRACKER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


class _LocalBackend:
    """Context: joblib's process workers (loky), started with ``_ignore_sigint``, and loky's
    resource tracker launched without its shutdown warnings (``_QUIET_TRACKER``)."""

    def __init__(self, n_jobs):
        self._n_jobs = n_jobs
        self._config = parallel_config(backend="loky", initializer=_ignore_sigint)

    def __enter__(self):
        if _QUIET_TRACKER not in sys.warnoptions:
            sys.warnoptions.append(_QUIET_TRACKER)
        self._config.__enter__()
        return self._n_jobs

    def __exit__(self, *exc):
        self._config.__exit__(*exc)
