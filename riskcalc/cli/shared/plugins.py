"""``--plugin FILE.py``: methods from outside the package for the ``riskcalc`` command.

The command loads every ``fedrisk.methods`` entry point and every ``--plugin`` file
(``riskcalc.plugins``) before it builds its parser, so the new names are valid METHOD choices
of predict, compare and sweep (a verb of ``NO_REGISTRY`` loads them only with a ``--plugin``).
"""

from __future__ import annotations

import os

from riskcalc import plugins
from riskcalc._files import user_path

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
            files.append(user_path(value))
        elif arg.startswith(OPTION + "="):
            files.append(user_path(arg[len(OPTION) + 1:]))
        else:
            rest.append(arg)
    return files, rest


#: Verbs that take no METHOD of the registry (advise ranks its own fixed pipelines): without a
#: ``--plugin`` file they do not look for entry points (importlib.metadata and a scan of the
#: installed packages, ~20 ms of ``riskcalc advise``'s start).
NO_REGISTRY = frozenset({"advise"})


def load(argv: list, verb: str | None = None) -> list:
    """Load the entry points and the ``--plugin`` files of ``argv``; the remaining arguments.
    For a ``verb`` of ``NO_REGISTRY`` given no ``--plugin`` file, nothing is loaded."""
    files, rest = split_plugins(argv)
    for name in files:
        if not name.strip():    # was "plugin /work/dir: no such file", the working folder
            raise ValueError(f"{OPTION} needs a file name, got an empty one")
        if name.strip() == "-":     # was "plugin /work/dir/-: no such file"
            raise ValueError(f"{OPTION} -: give a Python file (.py) that registers methods "
                             f"({OPTION} reads no standard input)")
        # riskcalc.plugins says "no such file" for any path that is not a file: /dev/zero
        # and a folder exist.
        if os.path.exists(name) and not os.path.isfile(name):
            kind = "a folder" if os.path.isdir(name) else "a device, pipe or socket"
            raise ValueError(f"{OPTION} {name}: {kind}, not a Python file (.py) that "
                             "registers methods")
    if files or verb not in NO_REGISTRY:
        plugins.load(files)
    return rest
