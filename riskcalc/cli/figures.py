"""``riskcalc figures``: regenerate the papers' figures (PNG, PDF, CSV data, caption).

``--list`` prints every figure id with its source, then the papers' figures that cannot be
regenerated here and why. ``ID...`` or ``--all`` builds figures into ``--out DIR``; ``--quick``
shrinks grids and replicates. Simulations are cached in ``DIR/.cache`` by parameters and seed,
so a re-run only redraws.
"""

from __future__ import annotations

import sys

from riskcalc.cli import COMMANDS, guards
from riskcalc.cli.outputs import make_folder


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
    p.set_defaults(func=run)


def run(args) -> int:
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
        raise ValueError("give figure ids or --all (or --list)")
    if not args.out:
        raise ValueError("--out DIR is required to build figures")
    args.jobs = guards.jobs(args.jobs)
    ids = list(registry) if args.all else args.ids
    for fig_id in ids:
        figures.get_figure(fig_id)  # fail on a bad id before any work
    make_folder(args.out, "--out")
    for fig_id in ids:
        built = figures.build(fig_id, args.out, quick=args.quick, seed=args.seed,
                              cache=not args.no_cache, n_jobs=args.jobs,
                              progress=not args.no_progress)
        print(f"{fig_id}: {built.seconds:.1f} s -> {built.files['png']}", flush=True)
    sys.stdout.flush()
    return 0
