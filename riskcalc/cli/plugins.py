"""Methods from outside the package for the ``riskcalc`` command: ``--plugin FILE.py`` and the
``fedrisk.methods`` entry-point group.

A plugin is Python code that registers a method on both sides (``riskcalc.register_method``
for its limit, ``montecarlo.register_estimator`` for its estimator) when it is loaded. The
command loads every installed ``fedrisk.methods`` entry point (a module, loaded for its
registrations, or a callable, then called with no arguments) and every ``--plugin`` file before
it builds its parser, so the new names are valid METHOD choices of predict, compare and sweep.
Plugins load in the command's process: simulations with ``--jobs`` > 1 or ``--scheduler``
run their workers without them.
"""

from __future__ import annotations

import importlib.util
import pathlib
from importlib.metadata import entry_points

GROUP = "fedrisk.methods"
OPTION = "--plugin"


def split_plugins(argv: list) -> tuple[list, list]:
    """``(files, rest)``: the values of every ``--plugin FILE`` / ``--plugin=FILE`` in
    ``argv`` and the other arguments, in order."""
    files, rest, it = [], [], iter(argv)
    for arg in it:
        if arg == OPTION:
            value = next(it, None)
            if value is None:
                raise ValueError(f"{OPTION} needs a file name")
            files.append(value)
        elif arg.startswith(OPTION + "="):
            files.append(arg[len(OPTION) + 1:])
        else:
            rest.append(arg)
    return files, rest


def load_plugin(path) -> None:
    """Execute the plugin file ``path`` as a module named after it.

    Raises
    ------
    ValueError
        When the file does not exist or raises while loading (the message names the file
        and the exception, e.g. a name registered twice).
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"plugin {path}: no such file")
    spec = importlib.util.spec_from_file_location(f"fedrisk_plugin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any failure of user code becomes one error line
        raise ValueError(f"plugin {path}: {type(exc).__name__}: {exc}") from exc


def load_entry_points() -> None:
    """Load every installed entry point of the ``fedrisk.methods`` group (see module doc)."""
    for ep in entry_points(group=GROUP):
        try:
            obj = ep.load()
            if callable(obj):
                obj()
        except Exception as exc:  # any failure of user code becomes one error line
            raise ValueError(f"entry point {ep.name} ({ep.value}) of {GROUP}: "
                             f"{type(exc).__name__}: {exc}") from exc


def load(argv: list) -> list:
    """Load the entry points and the ``--plugin`` files of ``argv``; the remaining arguments."""
    files, rest = split_plugins(argv)
    load_entry_points()
    for path in files:
        load_plugin(path)
    return rest
