"""Model families of the model verbs (``predict``, ``compare``): ``--model FAMILY``.

DESIGN.md: "The CLI verbs take ``--model FAMILY``; each family supplies its parameters, limits
and simulation to the same verbs." The linear model of paper 003 is the verbs' own code
(``riskcalc.cli.predict``, ``riskcalc.cli.compare``); every other family is a module (in its
room, ``riskcalc.cli.logistic``) named in ``FAMILIES`` that provides

* ``OPTIONS``: its own options, as ``{dest: (flags, kwargs)}`` for ``add_argument``, added to
  every verb the family serves (``VERBS``);
* ``accepted(args, verb)``: the option dests that apply to this call (mode by mode);
* ``MODAL`` and ``mode_note(args, verb)``: the dests that apply in some modes only, and the
  words naming the present mode (added to the refusal of a ``MODAL`` option only);
* one function per verb (``predict(args)``, ``compare(args)``).

``select`` checks a call's options against its family, whichever family it is: an option given
(on the command line, or a value other than its parser default) that the family does not take
is an error, not silently ignored, and a family's own options are refused by the others.
"""

from __future__ import annotations

import importlib

from riskcalc.cli import GIVEN

#: Family name -> module (None: the verb's own code, the linear model).
FAMILIES = {"linear": None, "logistic": "riskcalc.cli.logistic.family"}


def _module(name):
    return importlib.import_module(FAMILIES[name])


def add_options(parser, verb: str) -> None:
    """Add ``--model`` and the options of every family serving ``verb``."""
    parser.add_argument("--model", choices=list(FAMILIES), default="linear",
                        help="model family: linear (paper 003, default) or logistic "
                             "(P(y=1|x) = sigmoid(x.w_i), w_i = w_0 + r u, ||w_0|| = --signal)")
    for name, module in FAMILIES.items():
        if module is None:
            continue
        fam = _module(name)
        if verb in fam.VERBS:
            skip = getattr(fam, "NOT_OFFERED", {}).get(verb, set())
            for dest, (flags, kwargs) in fam.OPTIONS.items():
                if dest not in skip:
                    parser.add_argument(*flags, **kwargs)
    parser.set_defaults(_family_parser=parser)


def flag(parser, dest: str) -> str:
    """The long option string of ``dest`` (``--global`` for ``global_model``)."""
    for action in parser._actions:
        if action.dest == dest and action.option_strings:
            return max(action.option_strings, key=len)
    return "--" + dest.replace("_", "-")


def given(args, dest: str) -> bool:
    """Whether option ``dest`` was given on the command line (at any value: an option given
    at its parser default passed where another value was refused) or holds a value other than
    its parser default."""
    if dest in getattr(args, GIVEN, ()):
        return True
    parser = args._family_parser
    for action in parser._actions:
        if action.dest == dest:
            return getattr(args, dest, action.default) != action.default \
                and getattr(args, dest) is not None
    return False


def _has(parser, option: str) -> bool:
    """Whether ``parser`` takes ``option``."""
    return any(option in a.option_strings for a in parser._actions)


def _options_given(args):
    parser = args._family_parser
    return [a.dest for a in parser._actions
            if a.option_strings and a.dest not in ("help", "model") and given(args, a.dest)]


def select(args, verb: str):
    """The family module serving this call (None for the linear model), after checking the
    options given against it."""
    parser = args._family_parser
    own = {name: set(_module(name).OPTIONS) for name, module in FAMILIES.items() if module}
    if args.model == "linear":
        # --signal (||theta_0||) is a linear option along the rounds (riskcalc.cli.options.rounds),
        # asked by any rounds option (was: --local-steps without --rounds "--signal applies to
        # --model logistic only" instead of the rounds' own "needs --rounds").
        rounds = ("rounds", "local_steps", "local_step_size", "global_step", "max_memory")
        shared = {"signal"} if any(getattr(args, k, None) is not None for k in rounds) else set()
        for name, dests in own.items():
            for dest in _options_given(args):
                if dest in dests - shared:
                    # --signal also along the rounds, where this verb has them (it said
                    # "--model logistic only", though --rounds takes it).
                    also = (" or along the rounds (with --rounds)"
                            if dest == "signal" and _has(parser, "--rounds") else " only")
                    raise ValueError(f"{flag(parser, dest)} applies to --model {name}{also}")
        return None
    fam = _module(args.model)
    if verb not in fam.VERBS:
        raise ValueError(f"--model {args.model} does not support {verb}")
    fam.check_method(args, verb)
    accepted = fam.accepted(args, verb)
    for dest in _options_given(args):
        if dest not in accepted:
            # The mode only for an option some mode takes (was: --sigma "without --clients",
            # then refused with --clients too).
            raise ValueError(f"{flag(parser, dest)} does not apply to --model {args.model}"
                             + (fam.mode_note(args, verb) if dest in fam.MODAL else ""))
    return fam
