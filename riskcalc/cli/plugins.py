"""``--plugin FILE.py``: methods from outside the package for the ``riskcalc`` command.

The command loads every ``fedrisk.methods`` entry point and every ``--plugin`` file
(``riskcalc.plugins``) before it builds its parser, so the new names are valid METHOD choices
of predict, compare and sweep.
"""

from __future__ import annotations

from riskcalc import plugins

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


def load(argv: list) -> list:
    """Load the entry points and the ``--plugin`` files of ``argv``; the remaining arguments."""
    files, rest = split_plugins(argv)
    plugins.load(files)
    return rest
