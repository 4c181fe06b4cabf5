"""``riskcalc simulate PRESET``: run a named federated simulation preset and write a CSV (JSON
lines for an ``--out`` name ending in ``.jsonl`` or ``.json``, either case, as ``sweep`` writes).

The presets (``montecarlo.experiments.presets``) are the papers' logistic and quadratic experiments: paper
000 Fig. 1 (FedAvg / local training / fine-tuning / FedProx against heterogeneity R), paper 004
Sec. 6.1 (bilevel FedProx on its synthetic data), paper 001 Fig. 2 (APGD1 vs APGD2 rounds).
"""

from __future__ import annotations

import csv
import math
import sys

import numpy as np

from montecarlo.experiments.cost import check_rows, preset_replicate_seconds
from montecarlo.experiments.metrics import GROWTH
from montecarlo.experiments.presets import PRESETS, parse_value, resolve
from montecarlo.experiments.presets_run import (COLUMNS, preset_tasks, run_preset, summarize,
                                                valid_rows)
from montecarlo.runner.tasks import cached_count
from montecarlo.sweep import write_rows
from riskcalc._validate import positive_int, seed_integer
from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards
from riskcalc._files import atomic
from riskcalc.cli.shared.outputs import check_writable, not_an_input, same_file


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate", help=COMMANDS["simulate"],
        description="Run REPS replicates of a simulation preset, write one CSV row per "
                    "replicate x grid value x method (x checkpoint with --trajectory), and print "
                    "the mean of the preset's summary metric. Presets: see --list.")
    p.add_argument("preset", nargs="?", metavar="PRESET", help="preset name (see --list)")
    p.add_argument("--list", action="store_true", help="list the presets and exit")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                   help="override a setting: an instance parameter (R=0:20:21, R=0,5,10, "
                        "m=10, l2=0.01), a method hyperparameter (fedavg.rounds=10, "
                        "*.batch_size=null), methods=a,b, exact=true, target=1e4; repeatable, in "
                        "layers: a later KEY overrides an earlier one, as fedavg.rounds=10 "
                        "after *.rounds=3 does, and so does the same KEY (--set lam=1 --set "
                        "lam=2 simulates lam = 2), where a repeated option (--reps) is refused")
    p.add_argument("--reps", type=int, default=1, help="replicates (default 1)")
    p.add_argument("--seed", type=int, default=0, help="experiment seed >= 0 (default 0)")
    p.add_argument("--out", metavar="PATH",
                   help="output file (required unless --list): JSON lines for a name ending in "
                        ".jsonl or .json (either case), CSV otherwise")
    p.add_argument("--trajectory", action="store_true",
                   help="one row per checkpoint (round / epoch) instead of the final one")
    p.add_argument("--jobs", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--scheduler", metavar="ADDR",
                   help="dask.distributed scheduler address, or 'local'")
    p.add_argument("--cache", metavar="JSONL",
                   help="resumable cache of finished replicates (JSON lines)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    guards.add_budget_option(p)
    p.set_defaults(func=run)


#: Largest magnitude of a number given with --set: beyond it the logistic instances overflow
#: (R = 1e308 wrote NaN rows), as the theory's inputs do beyond 1e100.
MAX_VALUE = 1e100


def parse_settings(items) -> dict:
    """``KEY=VALUE`` strings to a dict (values through ``montecarlo.experiments.presets.parse_value``);
    every number must be finite and of magnitude at most ``MAX_VALUE``. In the order of each
    KEY's last setting, the order the layers apply in: a repeated KEY kept its first place, so
    ``*.iterations=50 apgd1.iterations=5 *.iterations=60`` ran apgd1 at 5 (fuzz42 api2 F6)."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        out.pop(key.strip(), None)
        try:
            out[key.strip()] = parse_value(value.strip())
        except ValueError as exc:       # named (a range's message named no key)
            raise ValueError(f"--set {key.strip()}: {exc}") from None
        for v in np.atleast_1d(np.asarray(out[key.strip()], dtype=object)).ravel():
            if isinstance(v, (int, float)) and not isinstance(v, bool) \
                    and not abs(v) <= MAX_VALUE:
                raise ValueError(f"--set {key.strip()}: every number must be finite and of "
                                 f"magnitude at most {MAX_VALUE:g}, got {v!r}")
    return out


def run(args) -> int:
    if args.list:
        # --list only prints: an option that would run or write something was silently ignored.
        guards.listing(args, (), "the presets", ["PRESET"] * (args.preset is not None)
                       + ["--set"] * bool(args.settings))
        for name, p in PRESETS.items():
            print(f"{name}\n    {p.description}\n    source: {p.source}; grid: {p.grid}; "
                  f"methods: {', '.join(p.methods)}")
        return 0
    if args.preset is None:
        raise ValueError("PRESET is required (see --list)")
    if args.preset not in PRESETS:      # was: "--out is required" asked first
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {args.preset!r} "
                         "(see --list)")
    if args.out is None:
        raise ValueError("--out is required")
    positive_int("--reps", args.reps)       # named as the options (was "reps must be ...")
    seed_integer("--seed", args.seed)
    not_an_input(args, ("out", "cache"))   # its inputs: the --plugin files
    check_writable(args.out, "--out")
    check_writable(args.cache, "--cache")
    if args.cache is not None and same_file(args.out, args.cache):
        raise ValueError("--out and --cache must be different files")
    overrides = parse_settings(args.settings)
    spec = resolve(args.preset, overrides)  # bad settings fail before any work or file
    reps = args.reps if isinstance(args.reps, int) and args.reps > 0 else 1
    check_rows(spec, reps, args.trajectory, "--")
    # Only the replicates --cache lacks are timed: a resumed run keeps the default limit.
    cached = cached_count(args.cache, "simulate", preset_tasks(
        args.preset, overrides, reps=args.reps, seed=args.seed, trajectory=args.trajectory),
                          valid_rows) if args.cache is not None else 0
    guards.budget(args, reps, preset_replicate_seconds(spec),
                  f"{reps} replicate(s) of {args.preset}",
                  "lower --reps or the sizes and iteration counts given with --set"
                  + (", or --set exact=false (no exact minimizers)" if spec["exact"] else ""),
                  cached)
    rows = run_preset(args.preset, overrides, reps=args.reps, seed=args.seed,
                      trajectory=args.trajectory, n_jobs=args.jobs, scheduler=args.scheduler,
                      cache=args.cache, progress=not args.no_progress)
    # JSON lines for .jsonl/.json, as sweep's rule (was: CSV under any name; fuzz40 fuzz F1).
    jsonl = args.out.lower().endswith((".jsonl", ".json"))
    if jsonl:
        write_rows([{k: row.get(k) for k in COLUMNS} for row in rows], args.out, "jsonl")
    else:
        with atomic(args.out, newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    column = PRESETS[args.preset].summary
    counted = spec["exact"] and spec["target"] is not None    # rounds_to_target computed
    table = summarize(rows, column)
    methods = list(dict.fromkeys(m for m, _ in table))
    values = sorted({v for _, v in table})
    grid = rows[0]["grid"] if rows else "value"
    print(f"{column} (mean over {args.reps} replicate(s)); rows written to {args.out}")
    print(f"{grid:>10} " + " ".join(f"{m:>14}" for m in methods))
    for v in values:
        cells = (table.get((m, v), (math.nan, math.nan))[0] for m in methods)
        print(f"{v:>10.4g} " + " ".join(f"{_cell(c, column, counted):>14}" for c in cells))
    words = {_cell(c, column, counted) for c, _ in table.values() if not math.isfinite(c)}
    for word in sorted(words):
        print(f"{word}: {NOT_FINITE[word]} (" + ("null in the JSON lines" if jsonl
                                                 else f"{CSV[word]} in the CSV") + ")")
    sys.stdout.flush()
    return 0


#: What a mean that is not a number says, printed as a word under the table (was: nan, inf).
NOT_FINITE = {"not reached": "the target was not reached within the iterations run (in some "
                             "replicate); allow more iterations with --set",
              "not computed": "rounds_to_target needs a target and exact minimizers "
                              "(--set target=1e4 --set exact=true)",
              "diverged": f"the iterates overflowed, the objective grew past {GROWTH:g} "
                          "times its value at the start, or local steps expand every direction:"
                          " step sizes too large for the instance (gradient steps of size lr on "
                          "a loss plus (l2 + lam)/2 ||w - c||^2 diverge once lr (l2 + lam) > 2, "
                          "and may from lr (L + l2 + lam) > 2, L the loss's smoothness); lower "
                          "them with --set"}


#: What the CSV holds in the place of each word of ``NOT_FINITE``.
CSV = {"not reached": "inf", "not computed": "NaN", "diverged": "NaN or inf"}


def _cell(value: float, column: str, counted: bool = False) -> str:
    """A table cell: the number, or the word of ``NOT_FINITE`` for a mean that is none
    (``counted``: rounds_to_target was computed, so a NaN count is a run that diverged)."""
    if math.isfinite(value):
        return f"{value:.5g}"
    if column == "rounds_to_target" and value == math.inf:
        return "not reached"
    if column == "rounds_to_target" and not counted:
        return "not computed"
    return "diverged"
