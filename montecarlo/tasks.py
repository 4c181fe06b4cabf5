"""Running many independent simulation tasks: in parallel, with progress, resumable.

One interface for every sweep of the toolkit (DESIGN.md, "Simulation"): a task is a
JSON-serializable dict, ``fn(task)`` returns a JSON-serializable dict, and each task carries
everything its randomness depends on (its seed and replicate index, see
``montecarlo.seeding``), so results never depend on the number of workers.

Local runs use joblib (processes); cluster runs use dask.distributed through joblib's ``dask``
backend, selected by ``scheduler=``. With ``cache=PATH``, every finished task is appended to a
JSON-lines file as soon as it completes; a rerun with the same file skips the tasks already
there, so an interrupted sweep resumes without losing finished work.

BLAS threads: every task runs with one BLAS thread (``montecarlo.threads.small_blas``),
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
import signal
import sys
from contextlib import contextmanager

from joblib import Parallel, delayed, parallel_config
from tqdm.auto import tqdm

from montecarlo.threads import small_blas
from riskcalc._validate import positive_int


def task_key(task: dict) -> str:
    """A stable identifier of a task: the SHA-1 of its canonical JSON."""
    return hashlib.sha1(json.dumps(task, sort_keys=True).encode()).hexdigest()


def load_cache(path) -> dict:
    """Results already stored in a JSON-lines cache, by task key.

    A line that is not a record ``{"key": str, "result": ...}`` (cut short by an interruption,
    or valid JSON of another shape) is skipped: that task simply reruns.
    """
    done = {}
    if path is None or not os.path.exists(path):
        return done
    with open(path) as fh:
        for line in fh:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("key"), str) and "result" in rec:
                done[rec["key"]] = rec["result"]
    return done


def _open_cache(path):
    """The cache opened for appending, its last line terminated first: a line torn by an
    interruption must not swallow the next record."""
    with open(path, "a+b") as fh:
        if fh.tell() > 0:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
    return open(path, "a")


def run_tasks(fn, tasks, *, cache=None, n_jobs: int = 1, scheduler: str | None = None,
              progress: bool = True, desc: str = "tasks") -> list:
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
        Number of local worker processes (joblib); 1 runs in this process.
    scheduler : str, optional
        Address of a dask.distributed scheduler (``tcp://host:port``), or ``"local"`` for an
        in-process dask cluster; tasks then run on its workers through joblib's dask backend.
    progress : bool
        Show a progress bar on stderr.
    desc : str
        Label of the progress bar.
    """
    n_jobs = positive_int("jobs", n_jobs)
    tasks = list(tasks)
    keys = [task_key(t) for t in tasks]
    done = load_cache(cache)
    todo = [i for i, k in enumerate(keys) if k not in done]
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, file=sys.stderr,
               disable=not progress, leave=False)
    sink = _open_cache(cache) if cache is not None else None
    try:
        with _backend(scheduler, n_jobs) as jobs:
            runner = Parallel(n_jobs=jobs, return_as="generator_unordered")
            # The call starts joblib's workers and returns (the tasks run while iterating).
            with _sigint_blocked():
                outputs = runner(delayed(_indexed)(fn, i, tasks[i]) for i in todo)
            for i, result in outputs:
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


def _indexed(fn, i, task):
    with small_blas():
        return i, fn(task)


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
    """SIGINT blocked in this thread for the duration (processes started meanwhile inherit
    the mask); a Ctrl-C meanwhile is delivered when it ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _LocalBackend:
    """Context: joblib's process workers (loky), started with ``_ignore_sigint``."""

    def __init__(self, n_jobs):
        self._n_jobs = n_jobs
        self._config = parallel_config(backend="loky", initializer=_ignore_sigint)

    def __enter__(self):
        self._config.__enter__()
        return self._n_jobs

    def __exit__(self, *exc):
        self._config.__exit__(*exc)


class _DaskBackend:
    """Context: a dask.distributed client whose workers joblib uses for the duration."""

    def __init__(self, address):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ValueError("scheduler needs dask.distributed: pip install 'fedrisk[cluster]'"
                             ) from None
        self._cluster = (LocalCluster(n_workers=1, threads_per_worker=1, processes=False)
                         if address == "local" else None)
        self._client = Client(self._cluster if self._cluster is not None else address)
        self._config = parallel_config(backend="dask")

    def __enter__(self):
        self._config.__enter__()
        return -1

    def __exit__(self, *exc):
        self._config.__exit__(*exc)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
