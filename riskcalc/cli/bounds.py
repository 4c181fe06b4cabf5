"""``riskcalc bounds``: list and evaluate the minimax rates and complexity bounds of
:mod:`riskcalc.minimax` by name.

``riskcalc bounds --list`` lists them; ``riskcalc bounds NAME --param value ... [--json]``
evaluates one. A comma-separated value (``--R 0,0.1,1``) makes a grid: the outer product over
every parameter given several values, one output row per grid point.
"""

from __future__ import annotations

import itertools
from decimal import Decimal
from math import isfinite


import numpy as np

from riskcalc._text import Overflow, Underflow, decimal, distinct, integer
from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards
from riskcalc.minimax._common import MAGNITUDE
from riskcalc.minimax.registry import BOUNDS, evaluate, to_jsonable

_PARAMS = sorted({p for spec in BOUNDS.values() for p in spec.params})


def add_parser(subparsers):
    """Add the ``bounds`` subcommand to ``subparsers`` (sets ``func=run``)."""
    parser = subparsers.add_parser(
        "bounds", allow_abbrev=False,
        help=COMMANDS["bounds"],
        description="Evaluate a bound of riskcalc.minimax by name; --list shows them all. "
                    "Comma-separated values span a grid.")
    parser.add_argument("name", nargs="?", metavar="NAME", help="bound name (see --list)")
    parser.add_argument("--list", action="store_true", help="list the bounds and exit")
    parser.add_argument("--json", action="store_true", help="print JSON")
    group = parser.add_argument_group("bound parameters (each bound takes a subset)")
    for name in _PARAMS:
        group.add_argument(f"--{name}", dest=f"param_{name}", metavar="X[,X...]", default=None)
    parser.set_defaults(func=run)
    return parser


#: Magnitudes a parameter may take (0 aside), as for ``riskcalc predict``: within them the
#: bounds' products and quotients of a few parameters stay finite or overflow detectably. The
#: Python functions take the same (``riskcalc.minimax._common.MAGNITUDE``); here the message
#: names the option.
RANGE = MAGNITUDE
#: Largest grid (outer product of the comma-separated values) one command evaluates.
MAX_ROWS = 100_000
#: Parameters that count something, so take whole numbers only (the Python functions accept
#: real sizes, for rate curves over continuous grids; on the command line 0.5 clients is a
#: typing error, not a rate question).
COUNTS = {"d": "a dimension", "N": "a total number of samples", "m": "a number of clients",
          "n_i": "a client's number of samples", "rounds": "a number of communication rounds",
          "n": "a number of samples or clients"}


def _values(name: str, text: str) -> list[float]:
    try:
        # finite: --d 1e400 was told "got inf", not what was typed (fuzz41 bounds F3).
        # + 0.0: --R -0 was echoed R=-0 ("R": -0.0 in JSON; fuzz42 bounds F3).
        vals = [decimal(part, finite=True) + 0.0 for part in text.split(",")]
    except (Underflow, Overflow) as exc:
        raise ValueError(f"--{name}: {exc}") from None
    except ValueError:
        raise ValueError(f"--{name} must be a number or comma-separated numbers, "
                         f"got {text!r}") from None
    for part, v in zip(text.split(","), vals):
        # The range first: it refuses nan and inf, which are no integers either. A finite
        # count is left to the Python functions' range, [1, 1e100] (minimax._common.sizes):
        # --n 1.5e100 was told "magnitude in [1e-100, 1e+100] (or 0, ...)" (fuzz41 paper F5).
        if not (v == 0 or RANGE[0] <= abs(v) <= RANGE[1] or name in COUNTS and isfinite(v)):
            # "0 or" only where the bound takes 0 (--eps 1e-300 was told "must be 0 or ...",
            # then --eps 0 "must lie in [1e-100, 1e+100]"; fuzz39 fuzz2 F6).
            raise ValueError(f"--{name} must be of magnitude in [{RANGE[0]:g}, {RANGE[1]:g}] "
                             f"(or 0, where the bound takes 0), got {v!r}")
        if name in COUNTS:
            exact = _whole(part)
            if exact is None:
                raise ValueError(f"--{name} is {COUNTS[name]}: it must be a whole number, got "
                                 f"{part.strip()!r}")
            if not _kept(exact, v):
                # --n_i 9007199254740993 was read, computed and printed as ...992, and so was
                # --N 9007199254740993e0 (fuzz42 bounds F2): one rule for both notations.
                raise ValueError(f"--{name} is {COUNTS[name]}: {part.strip()} is not a double "
                                 f"(it reads as {v:.17g}) and the bounds compute in floating "
                                 "point: give a whole number up to 2**53 = 9007199254740992 "
                                 "or one of at most 15 significant digits")
    return distinct(f"--{name}", vals)      # a grid point given twice was printed twice


def _whole(text: str) -> int | None:
    """The whole number ``text`` writes exactly (``_text.integer``), or None: the float it
    reads as was tested, so --n_i 4.0000000000000001 (4.0 as a float) passed for 4 samples."""
    try:
        return integer(text, "")
    except ValueError:
        return None


def _kept(exact: int, value: float) -> bool:
    """Whether the double ``value`` keeps every significant digit of the whole number
    ``exact`` it was read from: rounded to as many significant digits as ``exact`` has (its
    trailing zeros aside), it writes ``exact``. 1e100 and 100000000000000000000000 (no double
    is 10^23) keep their one digit; 9007199254740993, in any notation, reads as ...992."""
    digits = len(str(abs(exact)).rstrip("0"))
    return exact == value or Decimal(f"{value:.{max(digits, 1) - 1}e}") == exact


def _finite(name: str, params: dict, out: dict) -> None:
    """Refuse an output that overflowed (inf) or lost every digit (NaN)."""
    for key, value in out.items():
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            pars = ", ".join(f"{k}={_shown(v)}" for k, v in params.items())
            raise ValueError(f"bound {name!r}: {key} is not a finite number at {pars} "
                             "(overflow); use less extreme parameters")


#: Grid points evaluated by one call on arrays (the bounds broadcast): a grid of 100,000
#: points took 10-20 s of CPU point by point (fuzz41 bounds F1).
CHUNK = 4096


def _chunk(name: str, keys: list, combos: list) -> list:
    """``(params, values)`` of each grid point of ``combos`` (tuples of ``keys``' values), by
    one call on arrays (every parameter one entry per point, so a point's numbers do not depend
    on the grid around it: numpy's scalar and array routes differ in the last bit, mu0 of
    logistic_constants_printed). Where that call refuses or overflows, or an output is not one
    entry per point, the points run one by one as numbers, so a refusal names its grid point
    as before."""
    points = [dict(zip(keys, combo)) for combo in combos]
    columns = dict(zip(keys, np.array(combos, dtype=float).reshape(len(combos), -1).T))
    try:
        with np.errstate(all="ignore"):
            out = evaluate(name, **columns)
    except ValueError:
        out = None
    if out is not None and all(_whole_column(v, len(combos)) for v in out.values()):
        return [(p, {k: to_jsonable(v[i]) for k, v in out.items()})
                for i, p in enumerate(points)]
    rows = []
    for params in points:
        out = evaluate(name, **params)
        _finite(name, params, out)
        rows.append((params, {k: to_jsonable(v) for k, v in out.items()}))
    return rows


def _whole_column(value, size: int) -> bool:
    """Whether ``value`` is one finite entry per grid point whose type a point alone gives."""
    arr = np.asarray(value)
    if arr.shape != (size,) or arr.dtype.kind not in "biuf":
        return False
    if arr.dtype.kind != "f":
        return True
    if not np.all(np.isfinite(arr)):
        return False
    # counts(): a point alone below 2**63 is an int, in a chunk with a larger one a float.
    return not np.any((arr < 2.0 ** 63) & (arr == np.round(arr))) or not np.any(arr >= 2.0 ** 63)


def _shown(value: float) -> str:
    """A parameter as given: ``%g``, or every digit where ``%g`` rounds it (--R 0.1000000001
    and --R 0.1 both printed R=0.1, one row above the other with different lambdas)."""
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def _list(as_json: bool) -> None:
    rows = [{"name": k, "params": list(s.params), "defaults": s.defaults,
             "description": s.description, "ref": s.ref} for k, s in BOUNDS.items()]
    if as_json:
        print(guards.dumps(rows))
        return
    width = max(len(k) for k in BOUNDS)
    for row in rows:
        print(f"{row['name']:<{width}}  {row['description']}  [{row['ref']}]")
        print(f"{'':<{width}}  params: {' '.join(row['params'])}")


def _format(value) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0 and arr.dtype.kind == "f":
        return f"{float(arr):.6g}"
    return str(arr.tolist()) if arr.ndim else str(arr.item())


def run(args) -> int:
    """Print the bound list or the requested evaluation; return 0."""
    if args.list:
        # --list only prints: a NAME or a parameter given with it was silently ignored.
        given = ([args.name] if args.name else []) + [
            f"--{p}" for p in _PARAMS if getattr(args, f"param_{p}") is not None]
        if given:
            raise ValueError(f"--list only lists the bounds: {', '.join(given)} does not apply "
                             "with it")
        _list(args.json)
        return 0
    if not args.name:
        raise ValueError("give a bound NAME or --list")
    if args.name not in BOUNDS:
        raise ValueError(f"unknown bound {args.name!r}; see `riskcalc bounds --list`")
    spec = BOUNDS[args.name]
    extra = [p for p in _PARAMS if p not in spec.params and getattr(args, f"param_{p}") is not None]
    if extra:
        raise ValueError(f"bound {args.name!r} takes {', '.join(spec.params)}; "
                         f"unexpected: {', '.join(extra)}")
    given = {p: _values(p, getattr(args, f"param_{p}")) for p in spec.params
             if getattr(args, f"param_{p}") is not None}
    size = int(np.prod([len(v) for v in given.values()], dtype=float))
    if size > MAX_ROWS:
        raise ValueError(f"the grid has {size:.3g} points, more than {MAX_ROWS}; give fewer "
                         "comma-separated values")
    combos = list(itertools.product(*given.values()))
    rows = []
    for start in range(0, len(combos), CHUNK):
        for params, values in _chunk(args.name, list(given), combos[start:start + CHUNK]):
            rows.append({"bound": args.name, "ref": spec.ref, "params": params,
                         "values": values})
    if args.json:
        print(guards.dumps(rows[0] if len(rows) == 1 else rows))
        return 0
    print(f"{args.name}: {spec.description}  [{spec.ref}]")
    for row in rows:
        pars = " ".join(f"{k}={_shown(v)}" for k, v in row["params"].items())
        vals = " ".join(f"{k}={_format(v)}" for k, v in row["values"].items())
        print(f"  {pars}  ->  {vals}")
    return 0
