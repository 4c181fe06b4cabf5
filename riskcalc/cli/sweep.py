"""``riskcalc sweep METHOD ...``: predicted vs simulated over a parameter grid.

``--model logistic`` sweeps the logistic family instead (``riskcalc.cli.logistic.sweep``).

Comma-separated values of --gamma, --r/--rho, --sigma, --lam/--alpha (and --clients) span the
grid (outer product); each grid point is compared as by ``riskcalc compare`` (paper 003,
``003_4b976ddf5225c17e.txt``, Thms 1-4 vs eq. 3). A progress bar runs on stderr; rows are
written as CSV or JSON lines (--out; stdout without it), and --cache makes an interrupted sweep
resume where it stopped.
"""

from __future__ import annotations

import math
import sys

from montecarlo.sweep import FORMATS, cached_tasks, sweep_settings, write_csv, write_rows
from riskcalc._validate import parameter
from riskcalc._text import Overflow, Underflow, decimal, distinct, integer
from riskcalc.cli import COMMANDS, underflow
from riskcalc.cli.options import families, fedargs
from riskcalc.cli.shared import guards
from riskcalc.cli.compare import add_simulation_options, setting_from_args
from riskcalc._files import atomic_path, stream
from riskcalc.cli.shared.outputs import check_writable, not_an_input, same_file
from riskcalc.cli.predict import add_model_options, require_parameters, spectrum_from_args


def _floats(name: str, text):
    """A comma-separated list of numbers (None stays None)."""
    if text is None:
        return None
    try:
        values = [decimal(x, finite=True) for x in str(text).split(",")]
    except Underflow as exc:
        raise ValueError(underflow(f"--{name}", name, exc)) from None
    except Overflow as exc:     # 1e400 said "got inf" (fuzz41 api F6)
        raise ValueError(f"--{name}: {exc}") from None
    except ValueError:
        raise ValueError(f"--{name} must be a comma-separated list of numbers, got {text!r}"
                         ) from None
    return distinct(f"--{name}", values)     # --gamma 0.5,0.5 simulated twice


def integers(name: str, text):
    """A comma-separated list of integers, each read as every integer option reads one
    (``_text.integer``: 20.0 is 20, 20.0000000000000001 none); None stays None."""
    if text is None:
        return None
    try:
        values = [integer(x, f"--{name}") for x in str(text).split(",")]
    except ValueError:
        raise ValueError(f"--{name} must be a comma-separated list of integers, got {text!r}"
                         ) from None
    return distinct(f"--{name}", values)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "sweep", help=COMMANDS["sweep"],
        description="Compare predicted and simulated bias, variance and risk at every point of "
                    "the grid spanned by comma-separated --gamma, --r/--rho, --sigma, "
                    "--lam/--alpha values.")
    add_model_options(p, multi=True, sigma_required=False)   # or from --federation
    families.add_options(p, "sweep")
    add_simulation_options(p, reps=10, multi=True)
    p.add_argument("--out", metavar="PATH",
                   help="output file (default, or - or /dev/stdout: stdout)")
    p.add_argument("--format", choices=FORMATS,
                   help="csv or jsonl (default: jsonl for an --out name ending in .jsonl or "
                        ".json, either case, csv otherwise); jsonl is JSON lines, one object "
                        "a row, also in a .json file (not one JSON document)")
    p.add_argument("--cache", metavar="PATH",
                   help="JSON-lines file of finished tasks: a rerun resumes from it")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.out == "-" or (args.out and stream(args.out) == "stdout"):
        # stdout, as the convention goes (was: a file named "-"); /dev/stdout is written
        # as the stream, not renamed over the file a shell's ">> log" opened
        args.out = None
    not_an_input(args, ("out", "cache"))
    fedargs.resolve(args, args.model, multi=True)
    fedargs.require_d(args)
    check_writable(args.out, "--out", dash=True)
    check_writable(args.cache, "--cache")
    if args.out is not None and args.cache is not None and same_file(args.out, args.cache):
        raise ValueError("--out and --cache must be different files")
    family = families.select(args, "sweep")
    if family is not None:
        return family.sweep(args)
    values = {k: _floats(k, getattr(args, k))
              for k in ("gamma", "sigma", "r", "rho", "lam", "alpha")}
    if values["gamma"] is None:
        raise ValueError("the following arguments are required: --gamma (or --federation)")
    if values["sigma"] is None:
        raise ValueError("the following arguments are required: --sigma (or --federation)")
    require_parameters(args.method, values)
    for name in ("gamma", "sigma", "r", "rho"):
        # The one range of each parameter (riskcalc._validate.RANGES), before the budget:
        # --gamma 1e-300,2 was "estimated 7.41e+290 days of work".
        if values[name] is not None:
            parameter(name, values[name], ndim=1)
    clients = integers("clients", args.clients) or [None]
    settings = [setting_from_args(args, clients=m) for m in clients]
    points = 1      # a replicate measures every --lam / --alpha value (one decomposition)
    for k in ("gamma", "sigma", "r", "rho"):
        points *= len(values[k]) if values[k] else 1
    spectrum = spectrum_from_args(args, d=args.d)
    for setting in settings:
        fedargs.simulated_route(args, args.method, setting, spectrum)
    run = dict(spectrum=spectrum, reps=args.reps, seed=args.seed, measure=args.measure,
               steps=args.steps, step_size=args.step_size, **values)
    # The time of the tasks --cache does not hold: a resumed sweep is not refused for the
    # work it will not do (it was, so it resumed only with the --max-minutes it began with).
    cached = cached_tasks(args.method, settings, cache=args.cache, **run) if args.cache else 0
    guards.linear_budget(args, settings, values["gamma"], points, cached=cached)
    # Stopped in flight at --max-minutes, as compare is: the estimate counts the simulation
    # only, and a finite-M prediction (maml_fl, 41 clients under powerlaw:1,200) ran 26.6 s
    # past a 12 s limit. A fully cached sweep does no work the limit counts (its predictions
    # aside) and sets no timer: it runs at any --max-minutes (fuzz39 fuzz2 F1).
    work = cached < args.reps * points * len(settings)
    try:
        with guards.time_limit(guards.max_seconds(args) if work else math.inf):
            # Every setting's grid checked and predicted before any is simulated.
            rows = sweep_settings(args.method, settings, route=args.route, n_jobs=args.jobs,
                                  scheduler=args.scheduler, progress=not args.no_progress,
                                  cache=args.cache, max_minutes=None, **run)  # checked above
    except guards.OutOfTime as exc:
        kept = (f"finished tasks are kept in {args.cache}: the same command resumes from it"
                if args.cache else "nothing was kept: give --cache FILE to resume")
        raise guards.OutOfTime(f"{exc} before the sweep was done; nothing was written, and "
                               f"{kept}. Allow more time with --max-minutes, or ask for less "
                               "(fewer --reps or grid points, a smaller --d, fewer clients)"
                               ) from None
    return emit(args, rows)


def emit(args, rows) -> int:
    """Write the rows to --out (atomically) or print them, as CSV or JSON lines; the
    predictions' notes (``SweepRows.notes``) on stderr, one ``note:`` line each, as
    ``compare`` prints them."""
    for note in getattr(rows, "notes", ()):
        sys.stderr.write(f"note: {note}\n")
    if args.out:
        # Either case: o.JSONL was written as CSV.
        fmt = args.format or ("jsonl" if args.out.lower().endswith((".jsonl", ".json"))
                              else "csv")
        with atomic_path(args.out) as tmp:
            write_rows(rows, tmp, fmt)
        sys.stderr.write(f"wrote {len(rows)} rows ({fmt}) to {args.out}\n")
    elif args.format == "jsonl":
        for row in rows:
            print(guards.dumps(row))
    else:
        write_csv(rows, sys.stdout)
    return 0
