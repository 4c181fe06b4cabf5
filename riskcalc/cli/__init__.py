"""The ``riskcalc`` command (app layer): parses arguments, calls theory or simulation, prints.

Each subcommand is a module of this package exposing ``add_parser(subparsers)`` (which sets
``func`` on its parser); ``main`` only wires them together and turns bad input into one line
``error: ...`` on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from riskcalc.errors import SolverError

# Subcommand modules, in the order ``riskcalc --help`` lists them.
COMMANDS = ("predict", "compare", "sweep", "simulate", "bounds", "check", "check_method",
            "figures")


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors follow the one-line ``error: ...`` convention."""

    def error(self, message):
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="riskcalc",
        description="Asymptotic risk of personalized federated learning: predict, simulate, check.",
    )
    parser.add_argument("--plugin", action="append", metavar="FILE.py",
                        help="load a method registered by this Python file (repeatable; "
                             "also loaded: the fedrisk.methods entry points)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"riskcalc.cli.{name}").add_parser(sub)
    return parser


def main(argv=None) -> int:
    from riskcalc.cli import plugins

    try:
        # Before the parser exists: registered methods become METHOD choices.
        argv = plugins.load(sys.argv[1:] if argv is None else list(argv))
    except ValueError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    args = build_parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except BrokenPipeError:
        # The reader closed the pipe (``riskcalc ... | head``): nothing left to report.
        sys.stderr.close()
        return 0
    except (ValueError, SolverError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
