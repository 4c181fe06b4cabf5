"""Loading methods defined outside the package: plugin files and ``fedrisk.methods`` entry
points.

A plugin is Python code that registers a method when it is loaded (``riskcalc.register_method``
for its limit, ``montecarlo.register_estimator`` for its estimator). An entry point of the
group ``fedrisk.methods`` names a module (imported for its registrations) or a callable (called
with no arguments). ``load`` records what it loaded in the environment variable ``ENV``, and
``montecarlo`` calls ``load_from_env`` when it is imported, so that worker processes started
afterwards (``--jobs``) know the same methods.

Plugins run behind one boundary: whatever a plugin raises while it loads (SystemExit included)
becomes a ``PluginError`` naming it, and every callable it registers (a method's ``limit``, an
estimator's weights and filter) is wrapped (``guard``) so that an exception inside it, or a
result that is not a finite array of numbers, is a ``PluginError`` naming the plugin and the
method too, in this process and in worker processes alike. ``add_registry`` lets a layer above
(``montecarlo``'s estimators) put its registry behind the same boundary.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pathlib
import sys
from dataclasses import replace
from functools import lru_cache

import numpy as np

from riskcalc._files import unreadable, user_path
from riskcalc.errors import Stop
from riskcalc.linear.methods import METHODS

GROUP = "fedrisk.methods"
ENV = "FEDRISK_PLUGINS"
#: The process id of the one that called ``load``: its workers defer a plugin's failure.
ENV_PID = ENV + "_PID"
_LOADED: set = set()
#: "1" while the command prints JSON: plugin code's own ``print`` goes to stderr then, in this
#: process and in the worker processes (which inherit the environment).
ENV_STDERR = ENV + "_STDOUT_TO_STDERR"
#: A worker's deferred plugin failure (``load_from_env``), raised by ``check_worker``.
_DEFERRED: list = []


class PluginError(ValueError):
    """A plugin failed while loading, or a callable it registered failed or returned a
    non-finite or non-numeric result."""


def _user_code(call):
    """``call()``, its writes to stdout sent to stderr while ``ENV_STDERR`` is "1" (a plugin's
    ``print`` broke ``--json``'s output: fuzz42 misc F1)."""
    if os.environ.get(ENV_STDERR) != "1":
        return call()
    with contextlib.redirect_stdout(sys.stderr):
        return call()


@contextlib.contextmanager
def stdout_to_stderr(on: bool):
    """While inside, plugin code's stdout goes to stderr if ``on`` (``ENV_STDERR``); the
    environment is restored on leaving."""
    before = os.environ.get(ENV_STDERR)
    os.environ[ENV_STDERR] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_STDERR, None)
        else:
            os.environ[ENV_STDERR] = before


def guard(fn, origin: str, what: str, check=None):
    """``fn`` wrapped so that any exception it raises (but Ctrl-C), SystemExit included,
    becomes a ``PluginError`` saying ``origin: what raised ...``; ``check(result)`` (returning
    an error text or None) vets its result."""
    def guarded(*args, **kwargs):
        try:
            out = _user_code(lambda: fn(*args, **kwargs))
            problem = check(out) if check is not None else None
        except (KeyboardInterrupt, Stop, PluginError):
            # A PluginError already names its plugin: wrapped again at every level, a limit
            # that recursed into itself gave a 12,575-character message (fuzz40 api F7). A
            # deadline (Stop) is no failure of the plugin: "limit raised OutOfTime" (F10).
            raise
        except BaseException as exc:   # noqa: B036  SystemExit of user code included
            raise PluginError(f"{origin}: {what} raised {type(exc).__name__}: {exc}") from None
        if problem:
            raise PluginError(f"{origin}: {what} returned {problem}")
        return out
    guarded.__wrapped__ = fn
    guarded.origin = origin     # named by the checks of its caller (riskcalc.linear.limits)
    return guarded


#: What an array of a dtype kind other than int or float holds, for the error message.
_KINDS = {"b": "booleans", "c": "complex numbers", "U": "text", "S": "bytes",
          "O": "Python objects"}


def finite_arrays(out, count=None):
    """None if ``out`` is a finite float array (or ``count`` of them), else what is wrong."""
    parts = out if count is not None else (out,)
    if count is not None and (not isinstance(out, (tuple, list)) or len(out) != count):
        return f"{type(out).__name__}, expected {count} arrays"
    for part in parts:
        try:
            arr = np.asarray(part)
        except (TypeError, ValueError):     # ragged sequences
            return f"{type(part).__name__} data, expected numbers"
        # The kind before any cast: a float cast read "0.5" and True as numbers and dropped
        # the imaginary part of a complex array (bias 0.5 + 1j printed as 0.5).
        if arr.dtype.kind not in "iuf":
            what = _KINDS.get(arr.dtype.kind, f"{arr.dtype} data")
            return f"{what} ({type(part).__name__}), expected real numbers"
        if not np.all(np.isfinite(arr)):
            return "a non-finite number (NaN or inf)"
    return None


def _limit_problem(out):
    """None if ``out`` is a (bias, variance) pair of finite arrays >= 0, else what is wrong
    (a negative one named: the limit checks' "a non-finite or negative bias" named neither
    the plugin nor which of the two, fuzz41 left F3)."""
    problem = finite_arrays(out, 2)
    for name, part in zip(("bias", "variance"), () if problem else out):
        if np.any(np.asarray(part) < 0):
            return f"a negative {name} ({np.min(part):.6g}), expected a number >= 0"
    return problem


def _guard_method(method, origin):
    if method.limit is None:
        return method
    return replace(method, limit=guard(method.limit, origin, f"method {method.name}: limit",
                                       _limit_problem))


#: Registries behind the boundary: [registry dict, wrap(entry, origin), keys when added].
_REGISTRIES: list = [[METHODS, _guard_method, set(METHODS)]]


def add_registry(registry: dict, wrap) -> None:
    """Put ``registry`` behind the plugin boundary: entries a plugin adds to it are replaced
    by ``wrap(entry, origin)``."""
    if all(r is not registry for r, _, _ in _REGISTRIES):
        _REGISTRIES.append([registry, wrap, set(registry)])


def _run_plugin(origin: str, body) -> None:
    """Run ``body()`` (a plugin's code) behind the boundary."""
    before = {id(r): set(r) for r, _, _ in _REGISTRIES}
    try:
        _user_code(body)
    except (KeyboardInterrupt, Stop):
        raise
    except BaseException as exc:   # noqa: B036  any failure of user code, SystemExit too
        raise PluginError(f"{origin}: {type(exc).__name__}: {exc}") from None
    for registry, wrap, at_add in _REGISTRIES:
        for name in set(registry) - before.get(id(registry), at_add):
            registry[name] = wrap(registry[name], origin)


def load_plugin(path) -> None:
    """Execute the plugin file ``path`` as a module named after it (once per process).

    Raises
    ------
    PluginError
        A ValueError: when the file does not exist, is not a ``.py`` file, or raises (or
        exits) while loading; the message names the file and the exception, e.g. a method
        name registered twice.
    """
    if not isinstance(path, (str, bytes, os.PathLike)):    # None was pathlib's TypeError
        raise PluginError(f"plugin path must be a str or os.PathLike, got "
                          f"{type(path).__name__} {path!r:.40}")
    if not user_path(path).strip():     # was "plugin /work/dir: no such file": the cwd
        raise PluginError("plugin path needs a file name, got an empty one")
    path = pathlib.Path(user_path(path)).resolve()      # '~/p.py' was a folder named ~
    if str(path) in _LOADED:
        return
    why = unreadable(path)      # a 5000-character name: OSError from is_file, a traceback
    if why or not path.is_file():
        raise PluginError(f"plugin {path}: " + (
            why if why and why != "does not exist" else
            "a folder, not a Python file (.py) that registers methods" if path.is_dir()
            # /dev/null was "no such file" (the command line said what it is: fuzz42 misc F10)
            else "a device, pipe or socket, not a Python file (.py) that registers methods"
            if path.exists() else "no such file"))
    if path.suffix != ".py":
        raise PluginError(f"plugin {path}: expected a Python file (.py) that registers "
                          "methods")
    spec = importlib.util.spec_from_file_location(f"fedrisk_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    _run_plugin(f"plugin {path}", lambda: spec.loader.exec_module(module))
    _LOADED.add(str(path))


@lru_cache(maxsize=1)
def installed() -> tuple:
    """The installed entry points of the ``fedrisk.methods`` group, looked up once per process:
    the lookup reads every installed distribution's metadata (15 ms on a quiet machine, 60 ms
    on a busy one), and the command line's ``main`` asks at every call."""
    from importlib.metadata import entry_points

    return tuple(entry_points(group=GROUP))


def load_entry_points() -> None:
    """Load every installed entry point of the ``fedrisk.methods`` group (once per process; one
    that failed is tried again at the next call)."""
    for ep in installed():
        key = f"entry point {ep.name} = {ep.value}"
        if key in _LOADED:
            continue

        def body(ep=ep):
            obj = ep.load()
            if callable(obj):
                obj()
        _run_plugin(f"{key} of {GROUP}", body)
        _LOADED.add(key)


def load(files) -> None:
    """Load the entry points and the plugin ``files`` (a list of paths), and record the files
    in ``ENV``. One path, not in a list, is refused: its characters were loaded one by one
    ("plugin /: no such file" for "/x/p.py"; fuzz40 api F6)."""
    if isinstance(files, (str, bytes, os.PathLike)):
        raise PluginError(f"plugins.load takes a list of plugin files, got one path "
                          f"{files!r:.60}: write load([path])")
    try:
        files = list(files)     # a generator was spent before ENV recorded it
    except TypeError:           # None: "'NoneType' object is not iterable" (fuzz41 left F12)
        raise PluginError(f"plugins.load takes a list of plugin files, got "
                          f"{type(files).__name__} {files!r:.60}") from None
    load_entry_points()
    for path in files:
        load_plugin(path)
    paths = [str(pathlib.Path(user_path(p)).resolve()) for p in files]
    # A path holding the separator ("sh:rk.py") was split in the workers ("plugin .../sh: no
    # such file", a traceback from every worker): such a list is recorded as JSON instead (an
    # absolute path never starts with "[").
    os.environ[ENV] = (json.dumps(paths) if any(os.pathsep in p for p in paths)
                       else os.pathsep.join(paths))
    os.environ[ENV_PID] = str(os.getpid())


def load_from_env() -> None:
    """In a process started by one that called ``load``: load the same plugins. A failure
    there (a plugin that fails only in a worker) is deferred to ``check_worker``."""
    files = os.environ.get(ENV)
    if files is None:
        return
    try:
        load_entry_points()
        for path in (json.loads(files) if files.startswith("[")
                     else filter(None, files.split(os.pathsep))):
            load_plugin(path)
    except PluginError as exc:
        if os.environ.get(ENV_PID, str(os.getpid())) == str(os.getpid()):
            raise
        # Raised at import (montecarlo's), it killed every worker: TerminatedWorkerError, a
        # traceback and exit 1 from ``compare --jobs 2`` (fuzz41 left F2).
        _DEFERRED[:] = [PluginError(f"{exc} (in a worker process; it loaded in the main "
                                    "one)")]


def check_worker() -> None:
    """Raise the plugin failure ``load_from_env`` deferred in this worker process, if any."""
    if _DEFERRED:
        raise _DEFERRED[0]
