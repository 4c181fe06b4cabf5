"""``riskcalc figures``: regenerate the papers' figures (PNG, PDF, CSV data, caption).

``--list`` prints every figure id with its source, then the papers' figures that cannot be
regenerated here and why. ``ID...`` or ``--all`` builds figures into ``--out DIR``; ``--quick``
shrinks grids and replicates; ``--formats png`` (or ``pdf``) writes that image alone with the CSV
and the caption (the PDF, fonts embedded, costs about 0.5 s a figure); an earlier build's other
image is removed with the new set unless that build wrote the same CSV and caption (so no
picture of other data stays beside the CSV). Simulations are cached in
``DIR/.cache`` by parameters and seed, so a re-run only redraws.

``--max-minutes``: the build is estimated before it starts from each figure's recorded build
time (``figures/seconds.json``, one worker; a figure whose caption in DIR shows it was built in
the same mode and seed from a cache file not written since counts as a redraw at its quick
time) and refused
above the limit, naming what fits; a build still going at the limit stops there, keeping the
figures already built (each a complete set) and the finished simulations in DIR/.cache.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from riskcalc._validate import seed_integer
from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards
from riskcalc.cli.shared.outputs import make_folder


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "figures", help=COMMANDS["figures"],
        description="Regenerate the papers' synthetic figures and paper 003's theory-vs-"
                    "simulation figures: ID.png, ID.pdf, ID.csv (the data drawn) and ID.txt "
                    "(caption with every parameter and the seed).")
    p.add_argument("ids", nargs="*", metavar="ID", help="figure ids (see --list)")
    p.add_argument("--list", action="store_true", help="list figure ids and exit")
    p.add_argument("--all", action="store_true", help="build every figure")
    p.add_argument("--out", metavar="DIR", help="output directory (required to build)")
    p.add_argument("--quick", action="store_true",
                   help="reduced grids and replicates (minutes instead of tens of minutes)")
    p.add_argument("--seed", type=int, default=0, help="experiment seed (default 0)")
    from montecarlo.runner.budget import cores

    p.add_argument("--jobs", type=int, default=cores(), metavar="N",
                   help="worker processes (default: all cores)")
    p.add_argument("--no-cache", action="store_true",
                   help="do not read or write the simulation cache DIR/.cache")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--formats", default="png,pdf", metavar="LIST",
                   help="images to write, png and/or pdf, comma-separated (default png,pdf; "
                        "the CSV and the caption always; an earlier build's other image "
                        "is removed unless its data and caption were the same)")
    guards.add_budget_option(p, stop="keeps the figures already built and the finished "
                                     "simulations (DIR/.cache)")
    p.set_defaults(func=run)


def run(args) -> int:
    guards.max_seconds(args)            # a bad --max-minutes before any other work
    twice = [i for i in args.ids if args.ids.count(i) > 1]     # was: merged silently
    if twice:
        raise ValueError(f"figure id {twice[0]!r} given twice: give each figure once (each is "
                         "built once)")
    if args.list:
        # --list only prints: ids or a build option given with it built nothing, silently.
        guards.listing(args, (), "the figures", args.ids)
    seed_integer("--seed", args.seed)       # was "seed must be ...", the library's name
    import figures

    registry = figures.load_all()
    if args.list:
        for spec in registry.values():
            print(f"{spec.id:<20} paper {spec.paper}  {spec.title}  [{spec.source}]")
        print("\nnot reproducible here:")
        for name, why in figures.NOT_REPRODUCIBLE.items():
            print(f"  {name}: {why}")
        return 0
    if args.all == bool(args.ids):
        # both given was told "give figure ids or --all" too (fuzz41 left F13)
        raise ValueError("give figure ids or --all (or --list)" + (
            f", not both (--all and {args.ids[0]})" if args.all else ""))
    ids = list(registry) if args.all else args.ids
    for fig_id in ids:
        figures.get_figure(fig_id)  # a bad id first (was: "--out DIR is required", then this)
    if not args.out:    # --out "" was told "--out DIR is required" (fuzz41 left F14)
        raise ValueError("--out DIR is required to build figures" if args.out is None else
                         "--out needs a folder name, got an empty one")
    from figures.core import image_formats
    from figures.install import check_targets, set_files

    try:
        formats = image_formats(args.formats)
    except ValueError as exc:
        raise ValueError(f"--{exc}") from None
    args.jobs = guards.jobs(args.jobs)
    seconds = estimate_seconds(ids, args)
    guards.budget(args, len(ids), sum(seconds.values()) / len(ids),
                  f"{len(ids)} figure(s) in {'quick' if args.quick else 'full'} mode",
                  _advice(seconds, args))
    make_folder(args.out, "--out")
    cache = Path(args.out) / ".cache"
    if not args.no_cache and os.path.lexists(cache) and not cache.is_dir():
        # Was the raw "[Errno 17] File exists: 'DIR/.cache'", naming no option.
        raise ValueError(f"--out {args.out}: .cache is not a folder, where the simulation "
                         "cache goes: move it away, or build with --no-cache")
    for fig_id in ids:      # every set checked before the first is drawn
        try:
            check_targets(set_files(fig_id, args.out, formats), args.out)
        except ValueError as exc:
            raise ValueError(f"--out {exc}") from None
    done = []
    try:
        with guards.time_limit(guards.max_seconds(args)):
            for fig_id in ids:
                built = figures.build(fig_id, args.out, quick=args.quick, seed=args.seed,
                                      cache=not args.no_cache, n_jobs=args.jobs,
                                      progress=not args.no_progress, formats=formats)
                done.append(fig_id)
                print(f"{fig_id}: {built.seconds:.1f} s -> {built.files[formats[0]]}",
                      flush=True)
    except guards.OutOfTime as exc:
        rest = [i for i in ids if i not in done]
        kept = ("its finished simulations are kept in DIR/.cache, so a rerun resumes"
                if not args.no_cache else "nothing of it is kept (--no-cache)")
        raise guards.OutOfTime(
            f"{exc}: built {len(done)} of {len(ids)} figure(s)"
            + (f" ({', '.join(done)}, each a complete set)" if done else "")
            + f"; not built: {', '.join(rest)} ({rest[0]} was being built: {kept}). Allow "
            "more time with --max-minutes") from None
    sys.stdout.flush()
    return 0


def estimate_seconds(ids, args) -> dict:
    """Estimated seconds of each figure of ``ids`` with one worker (module docstring): its
    recorded time in this mode, a redraw from the cache at its quick time; a figure without a
    record at the slowest recorded one. ``guards.budget`` divides the sum by the workers (each
    figure's simulation tasks run in parallel)."""
    import figures

    record = json.loads(Path(figures.__file__).with_name("seconds.json").read_text())
    mode = record["quick" if args.quick else "full"]
    out = {}
    for fig_id in ids:
        if not args.no_cache and _built_before(fig_id, args):
            out[fig_id] = record["quick"].get(fig_id, max(record["quick"].values()))
        else:
            out[fig_id] = mode.get(fig_id, max(mode.values()))
    return out


def _built_before(fig_id: str, args) -> bool:
    """Whether DIR holds this figure built in this mode and seed from its simulation cache,
    complete then: its caption (ID.txt, written once every simulation had finished) records
    the mode and seed, and its cache file was not written after it. A figure whose
    simulations are cached under a preset's name, or that has none, counts as a full build
    (the estimate errs on the long side)."""
    out = Path(args.out)
    caption = out / f"{fig_id}.txt"
    cache = out / ".cache" / f"{fig_id}{'-quick' if args.quick else ''}.jsonl"
    try:
        text = caption.read_text()
        complete = cache.stat().st_mtime <= caption.stat().st_mtime
    except (OSError, UnicodeDecodeError):
        return False
    mode = "Mode: quick" if args.quick else "Mode: full"
    return complete and mode in text and f"seed = {args.seed}." in text


def _advice(seconds: dict, args) -> str:
    """What would bring the build under --max-minutes: the slowest figures to leave out, more
    workers, the quick mode."""
    from montecarlo.runner.budget import cores

    limit = guards.max_seconds(args)
    kept = dict(seconds)
    while kept and sum(kept.values()) / args.jobs > limit:
        kept.pop(max(kept, key=kept.get))
    slow = sorted((i for i in seconds if i not in kept), key=seconds.get, reverse=True)
    parts = [f"build fewer figures at once (the slowest: {', '.join(slow[:5])})"]
    if args.jobs < cores():
        parts.append(f"use more workers (--jobs {cores()})")
    if not args.quick:
        parts.append("build them in --quick mode")
    return ", ".join(parts)
