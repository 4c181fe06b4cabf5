"""Loading methods defined outside the package: plugin files and ``fedrisk.methods`` entry
points.

A plugin is Python code that registers a method when it is loaded (``riskcalc.register_method``
for its limit, ``montecarlo.register_estimator`` for its estimator). An entry point of the
group ``fedrisk.methods`` names a module (imported for its registrations) or a callable (called
with no arguments). ``load`` records what it loaded in the environment variable ``ENV``, and
``montecarlo`` calls ``load_from_env`` when it is imported, so that worker processes started
afterwards (``--jobs``) know the same methods.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib

GROUP = "fedrisk.methods"
ENV = "FEDRISK_PLUGINS"
_LOADED: set = set()


def load_plugin(path) -> None:
    """Execute the plugin file ``path`` as a module named after it (once per process).

    Raises
    ------
    ValueError
        When the file does not exist or raises while loading (the message names the file and
        the exception, e.g. a method name registered twice).
    """
    path = pathlib.Path(path).resolve()
    if str(path) in _LOADED:
        return
    if not path.is_file():
        raise ValueError(f"plugin {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"fedrisk_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any failure of user code becomes one error line
        raise ValueError(f"plugin {path}: {type(exc).__name__}: {exc}") from exc
    _LOADED.add(str(path))


def load_entry_points() -> None:
    """Load every installed entry point of the ``fedrisk.methods`` group (once per process)."""
    from importlib.metadata import entry_points  # ~20 ms: only when plugins are looked for

    for ep in entry_points(group=GROUP):
        key = f"entry point {ep.name} = {ep.value}"
        if key in _LOADED:
            continue
        try:
            obj = ep.load()
            if callable(obj):
                obj()
        except Exception as exc:  # any failure of user code becomes one error line
            raise ValueError(f"{key} of {GROUP}: {type(exc).__name__}: {exc}") from exc
        _LOADED.add(key)


def load(files) -> None:
    """Load the entry points and the plugin ``files``, and record the files in ``ENV``."""
    load_entry_points()
    for path in files:
        load_plugin(path)
    os.environ[ENV] = os.pathsep.join(str(pathlib.Path(p).resolve()) for p in files)


def load_from_env() -> None:
    """In a process started by one that called ``load``: load the same plugins."""
    files = os.environ.get(ENV)
    if files is None:
        return
    load_entry_points()
    for path in filter(None, files.split(os.pathsep)):
        load_plugin(path)
