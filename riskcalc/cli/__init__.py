"""The ``riskcalc`` command (app layer): parses arguments, calls theory or simulation, prints.

Each subcommand is a module of this package exposing ``add_parser(subparsers)`` (which sets
``func`` on its parser); ``main`` only wires them together and turns bad input into one line
``error: ...`` on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import io
import re
import sys

from riskcalc._files import user_path
from riskcalc._text import Overflow, Underflow, decimal, integer
from riskcalc._version import __version__
from riskcalc.cli.shared import guards, outputs
from riskcalc.errors import SolverError

# Subcommands, in the order ``riskcalc --help`` lists them, with their one-line help. Each lives
# in the module of the same name (``-`` -> ``_``), imported only when that subcommand runs (or
# for ``--help``): compare, sweep and simulate pull in the simulation code and scipy, which
# ``riskcalc predict`` should not pay for at start-up.
COMMANDS = {
    "predict": "asymptotic bias, variance and risk of a method",
    "compare": "predicted vs simulated bias, variance and risk",
    "sweep": "predicted vs simulated over a parameter grid",
    "simulate": "run a federated simulation preset (logistic / quadratic)",
    "bounds": "evaluate a minimax rate or complexity bound (papers 000, 004, 001)",
    "check": "check the papers' claims: verdicts with evidence",
    "check-method": "run the registry's common checks on a method",
    "figures": "regenerate the papers' figures",
    "advise": "rank the candidate pipelines of a federation by predicted risk",
    "estimate": "estimate a federation's gamma_j, sigma_j, r_j and spectrum from data",
}


#: A negative number or comma-separated list of numbers (``-1e-3``, ``-.5``, ``-inf``, ``-1,2``).
_NEGATIVE = re.compile(r"^-(?:\d|\.\d|inf|nan)[\w.,+-]*$", re.IGNORECASE)


#: Where ``_Once`` notes, during one parse, which option set each destination (removed after).
_GIVEN = "_riskcalc_given"
#: Where the parsed namespace keeps the destinations the command line gave (``_Once``), at
#: whatever value, with the option string that gave each (None: a positional): ``families.
#: given`` takes ``--measure conditional``, the default, as given; ``guards.listing`` names them.
GIVEN = "given_dests"


class _Once:
    """An option that may be given once (mixed into argparse's store actions): argparse keeps
    the last of ``--gamma 2 --gamma 3`` silently, so a command edited by appending an option
    answered for a value the user may not have meant. A flag repeated (``--json --json``)
    says the same thing twice and stays accepted; two flags that set one destination
    differently are refused like two values."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        value = self.const if self.nargs == 0 else values
        if self.dest in given:
            before, old = given[self.dest]
            if not (self.nargs == 0 and old == value and before == option_string):
                said = (f" ({before} {_shown(old)}, then {option_string} {_shown(value)})"
                        if self.nargs != 0 else f" ({before}, then {option_string})")
                raise argparse.ArgumentError(
                    self, f"given twice{said}: give it once (the command would otherwise "
                          "keep only the last)")
        given[self.dest] = (option_string, value)
        super().__call__(parser, namespace, values, option_string)


def _shown(value) -> str:
    """A value as parsed (``2.0`` for ``2``), for the message of ``_Once``; long ones cut."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_ONCE = {name: type(f"_Once{cls.__name__}", (_Once, cls), {}) for name, cls in (
    ("store", argparse._StoreAction), ("store_const", argparse._StoreConstAction),
    ("store_true", argparse._StoreTrueAction), ("store_false", argparse._StoreFalseAction))}


def underflow(name: str, dest: str, exc) -> str:
    """The message of option ``name`` (``dest``) given a nonzero number below the floats
    (``_text.Underflow``): its advice "give a number above 1e-300, or 0 where 0 is allowed"
    does not fit an option whose range starts above 0 (--gamma), which is named instead."""
    from riskcalc._validate import RANGES

    low, high = RANGES.get(dest, (None, None))
    if low is None or low == 0:
        return f"{name}: {exc}"
    said = str(exc).partition(": give ")[0]
    return f"{name}: {said}: {name} must lie in [{low:g}, {high:g}]"


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors follow the one-line ``error: ...`` convention,
    that takes no abbreviated option names, whose options may be given once each (``_Once``;
    ``--plugin``, ``--set`` and ``--claim`` add up, as their help says), and whose option
    values may be any negative number:
    argparse reads only ``-1`` and ``-.5`` as numbers, so ``--gamma -1e-3``, ``--r -inf`` or
    ``--gamma -1,2`` said "expected one argument" instead of the value's range (no option of
    this command starts with a digit, a dot, inf or nan)."""

    def __init__(self, *args, **kwargs):
        # No abbreviations: ``advise --clients '[...]'`` was read as --clients-file, and an
        # option added later would change what an abbreviation meant.
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE
        for name, cls in _ONCE.items():
            self.register("action", name, cls)
        self.register("action", None, _ONCE["store"])
        # type=float reads decimal notation only: float() took "1_0" as 10 (_text.decimal).
        self.register("type", float, decimal)

    def _get_value(self, action, arg_string):
        # type=int reads an integral decimal too (--d 20.0, as d=20.0 in Python), and refuses
        # other text naming the option: "--d must be an integer, got '20.5'" (argparse's own
        # type=int said "argument --d: invalid int value: '20.0'").
        name = action.option_strings[-1] if action.option_strings else action.metavar
        if action.type is float:
            try:
                # finite: "--gamma 1e400" said "got inf", not what was typed (fuzz41 api F6);
                # --max-minutes says itself how to ask for no limit (guards.max_seconds).
                return decimal(arg_string, finite=action.dest != "max_minutes")
            except Underflow as exc:     # argparse said only "invalid float value: '1e-400'"
                raise argparse.ArgumentError(None, underflow(name or action.dest, action.dest,
                                                             exc)) from None
            except Overflow as exc:
                raise argparse.ArgumentError(None, f"{name or action.dest}: {exc}") from None
            except ValueError:
                pass
        if action.type is not int:
            return super()._get_value(action, arg_string)
        try:
            return integer(arg_string, name or action.dest)
        except ValueError as exc:
            raise argparse.ArgumentError(None, str(exc)) from None

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        given = {dest: flag for dest, (flag, _) in namespace.__dict__.pop(_GIVEN, {}).items()}
        if given:   # a subcommand's, copied into its parent's namespace by argparse
            setattr(namespace, GIVEN, {**getattr(namespace, GIVEN, {}), **given})
        return namespace, extras

    def error(self, message):
        _error(message)
        raise SystemExit(2)


def _error(message) -> None:
    """Write the one line ``error: MESSAGE``; a line break inside it (from a file name holding
    one) is written as ``\\n`` (it split the line in two)."""
    text = str(message).replace("\r", "\\r").replace("\n", "\\n")
    sys.stderr.write(f"error: {text}\n")


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The ``riskcalc`` parser. Given ``argv``, only the subcommand it names (if any) is built
    in full, the others are listed by name and help; without ``argv``, all are built."""
    parser = _Parser(
        prog="riskcalc",
        description="Asymptotic risk of personalized federated learning: predict, simulate, check.",
    )
    parser.add_argument("--version", action="version", version=f"riskcalc {__version__}",
                        help="print the fedrisk version and exit")
    parser.add_argument("--plugin", action="append", metavar="FILE.py",
                        help="load a method registered by this Python file (repeatable; "
                             "also loaded: the fedrisk.methods entry points)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for name, summary in COMMANDS.items():
        if argv is None or name == chosen:
            importlib.import_module(f"riskcalc.cli.{name.replace('-', '_')}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return parser


#: What a Ctrl-C leaves behind, per verb: joblib has already stopped the workers, and
#: ``montecarlo.runner.tasks.run_tasks`` has written every finished task to its cache, named
#: (``_kept``; was "the --cache file, if one was given", also when none was). A verb not listed
#: keeps nothing.
INTERRUPTED = {
    "sweep": "finished tasks are kept in {cache}: the same command resumes from it",
    "simulate": "finished tasks are kept in {cache}: the same command resumes from it",
    "figures": "figures already built are complete, and finished simulations are kept in "
               "DIR/.cache (unless --no-cache): a rerun resumes",
    "check": "the claims already checked are printed (stdout); rerun the others with --claim",
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A client name outside the output's encoding (PYTHONIOENCODING=ascii, a Windows code
        # page) stopped advise's table halfway: "error: 'ascii' codec can't encode ...".
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        return _run(argv)
    except KeyboardInterrupt:
        kept = _kept(argv)
        sys.stderr.write("\nerror: interrupted" + (f"; {kept}" if kept else "") + "\n")
        return 130


def _kept(argv: list):
    """What ``INTERRUPTED`` says for the verb of ``argv``, its ``--cache`` file named, or that
    nothing is kept where none was given."""
    kept = INTERRUPTED.get(_command(argv))
    if kept is None or "{cache}" not in kept:
        return kept
    given = [b for a, b in zip(argv, argv[1:]) if a == "--cache"] + [
        a.split("=", 1)[1] for a in argv if a.startswith("--cache=")]
    return (kept.format(cache=given[-1]) if given else
            "nothing is kept: give --cache FILE to keep finished tasks and resume")


def _command(argv: list):
    """The verb of ``argv`` (None if none is named): the first word that is a verb and does
    not follow ``--plugin`` (whose FILE.py could be named like one)."""
    for before, word in zip([None] + argv, argv):
        if word in COMMANDS and before != "--plugin":
            return word
    return None


#: The destinations of the options that name files or folders (``riskcalc._files.user_path``).
PATHS = ("federation", "clients_file", "data", "out", "cache", "csv")


def _run(argv: list) -> int:
    from riskcalc import plugins as registry
    from riskcalc.cli.shared import plugins

    try:
        files, rest = plugins.split_plugins(argv)
    except ValueError as exc:
        _error(exc)
        return 2
    # Under --json a plugin's own print went into the JSON output (fuzz42 misc F1).
    with registry.stdout_to_stderr("--json" in rest):
        return _run_verb(argv, files)


def _run_verb(argv: list, files: list) -> int:
    from riskcalc.cli.shared import plugins

    try:
        # Before the parser exists: registered methods become METHOD choices.
        argv = plugins.load(argv, _command(argv))
    except ValueError as exc:
        _error(exc)
        return 2
    args = build_parser(argv).parse_args(argv)
    for dest in PATHS:      # --out=~/r.csv: the shell expands "~" only at a word's start
        if isinstance(getattr(args, dest, None), str):
            setattr(args, dest, user_path(getattr(args, dest)))
    args.plugin = files     # inputs as well: no output may be written over them (not_an_input)
    try:
        outputs.no_stdin(args)
        with guards.no_warnings_first():
            return args.func(args) or 0
    except BrokenPipeError:
        # The reader closed the pipe (``riskcalc ... | head``): nothing left to report.
        sys.stderr.close()
        return 0
    except (ValueError, SolverError, OSError) as exc:
        _error(exc)
        return 2
    except guards.OutOfTime as exc:
        # Stopped in flight at --max-minutes; the verb's message says what it kept.
        _error(exc)
        return 2
    except MemoryError as exc:
        # The estimates before allocating (--d, presets' d) leave this to inputs they miss.
        sys.stderr.write(f"error: not enough memory ({exc}); make the problem smaller\n")
        return 2
