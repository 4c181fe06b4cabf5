"""``riskcalc check``: every checkable claim of the papers, with its verdict and key numbers.

Runs the catalogue of ``paper_checks`` (a consumer layer the theory never imports; it is
imported here, in the app layer, only when the command runs). The default is the quick
configuration (well under a minute of checks on one core), the sizes of the committed report
(``paper_checks/REPORT.md`` is a quick run); ``--full`` runs the larger sizes of a full report
(``python -m paper_checks.report`` without ``--quick``), announcing its time estimate first.

``--max-minutes``: the selection's time is estimated before it starts from recorded per-claim
times (``paper_checks.estimate``: the last full run's for ``--full``, the committed quick report's
otherwise) and refused above the limit, naming what fits; a run still going at the limit stops
there, prints the claims already checked and names those not run.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from riskcalc._text import claims_once
from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards

#: Width at which a claim's statement is cut to keep it on one line.
STATEMENT_WIDTH = 110


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help=COMMANDS["check"],
        description="Check every claim of papers 003, 000 (= 002), 004 and 001 numerically: "
                    "holds / loose / erratum-harmless / erratum (with the corrected form) / "
                    "fails / not checkable, and the toolkit's own findings. Quick sizes by "
                    "default (those of the committed report, a quick run); --full for the "
                    "sizes of a full report.")
    p.add_argument("--paper", metavar="ID", help="only this paper (003, 000, 002, 004, 001)")
    p.add_argument("--claim", metavar="ID", action="append",
                   help="only this claim id (repeatable; results in the order given)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="small sizes (the default; kept as an explicit alias)")
    size.add_argument("--full", action="store_true",
                      help="a full report's sizes (the committed one is a quick run): tens of "
                           "minutes (the estimate is printed first), with a progress bar on "
                           "stderr")
    p.add_argument("--json", action="store_true",
                   help='print a JSON list of {"id", "paper", "location", "statement", "kind", '
                        '"verdict", "evidence", "corrected", "transcription", '
                        '"transcription_note"}; "transcription" is "independent" or "depends" '
                        'for an erratum (does it rest on the PDF text extraction?), else null')
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--list", action="store_true",
                   help="list the claim ids and exit (with --json: a JSON list of {\"id\", "
                        "\"kind\", \"location\"})")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    guards.add_budget_option(p, stop="prints the claims already checked")
    p.set_defaults(func=run)


def run(args) -> int:
    guards.max_seconds(args)            # a bad --max-minutes before the catalogue loads
    args.jobs = guards.jobs(args.jobs)
    claims_once(args.claim)                     # was: merged silently
    if args.list:       # before the catalogue loads
        guards.listing(args, ("paper", "claim", "json"), "the claims")
    from paper_checks import estimate as timing
    from paper_checks import select

    claims = select(args.paper, args.claim)     # refuses --claim ids of another --paper
    if args.list:
        if args.json:       # was: the text table, under --json
            print(guards.dumps([{"id": c.id, "kind": c.kind, "location": c.location}
                                for c in claims]))
            return 0
        for c in claims:
            print(f"{c.id:<45} {c.kind:<32} {c.location}")
        return 0
    quick = not args.full
    # One process per claim (_run_claims): --jobs 2 halved the estimate of one claim, which
    # then started and ran past the limit (fuzz40 paper F7).
    args.jobs = min(args.jobs, len(claims))
    seconds, unknown, typical = timing.estimate(claims, quick)
    guards.budget(args, len(claims), sum(seconds.values()) / max(len(claims), 1),
                  _count(len(claims), f"{'quick' if quick else 'full'} claim check"),
                  _advice(seconds, args, quick))
    if not quick:
        wall = sum(seconds.values()) / args.jobs
        # was "; 0 claims without a recorded time counted at 0 s each" (fuzz41 paper F13)
        untimed = (f"; {_count(unknown, 'claim')} without a recorded time counted at "
                   f"{guards.duration(typical)} each" if unknown else "")
        print(f"full run of {_count(len(claims), 'claim')}: about {guards.duration(wall)} with "
              f"--jobs {args.jobs} on a quiet machine (the last full run's per-claim times, "
              f"paper_checks.report.read_seconds{untimed})", file=sys.stderr)
    start = time.perf_counter()
    results, stopped = _run_claims(claims, quick, args)
    seconds = time.perf_counter() - start
    # Stopped before any claim finished: nothing to print (the table of no claims was
    # "error: max() arg is an empty sequence" at --max-minutes 1e-300; fuzz40 paper F3).
    if results and args.json:
        print(guards.dumps(results))
    elif results:
        print("\n".join(render_text(results, mode="quick" if quick else "full",
                                    seconds=seconds)))
    if stopped is KeyboardInterrupt:
        raise KeyboardInterrupt
    if stopped is not None:
        done = {r["id"] for r in results}
        missing = [c.id for c in claims if c.id not in done]
        raise guards.OutOfTime(
            f"{stopped}: {len(results)} of {len(claims)} claims checked"
            f"{' (printed above)' if results else ''}; not run: {_ids(missing)}. Rerun those "
            "with --claim, or allow more time with --max-minutes")
    broken = [r["id"] for r in results if r["verdict"] == "check error"]
    if broken:
        print(f"error: {len(broken)} checks raised (a fault of fedrisk, not of the papers): "
              f"{_ids(broken)}", file=sys.stderr)
        return 1
    return 0


def check_one(claim, quick: bool) -> dict:
    """One claim through ``paper_checks.run_claims`` (the unit of work of ``_run_claims``)."""
    from paper_checks import run_claims

    return run_claims([claim], quick=quick)[0]


def _run_claims(claims, quick: bool, args):
    """The results of ``claims`` in their order, each claim in a worker of ``parallel_results``
    (a Ctrl-C stops them all), within ``--max-minutes``: (results, None), or at the limit
    (the results of the claims finished by then, the stop message), or at a Ctrl-C (those
    results, ``KeyboardInterrupt``)."""
    from joblib import delayed
    from tqdm.auto import tqdm

    from montecarlo.runner.tasks import parallel_results

    done = {}
    stopped = None
    with tqdm(total=len(claims), desc="claims", file=sys.stderr, leave=False,
              disable=args.no_progress) as bar:
        try:
            with guards.time_limit(guards.max_seconds(args)):
                for res in parallel_results((delayed(check_one)(c, quick) for c in claims),
                                            n_jobs=args.jobs if len(claims) > 1 else 1):
                    done[res["id"]] = res
                    bar.update(1)
        except guards.OutOfTime as exc:
            stopped = str(exc)
        except KeyboardInterrupt:
            # A Ctrl-C lost the claims already checked, which the limit prints (fuzz42 report
            # F3): kept as the limit keeps them, the interrupt raised again once printed.
            stopped = KeyboardInterrupt
    return [done[c.id] for c in claims if c.id in done], stopped


def _advice(seconds: dict, args, quick: bool) -> str:
    """What would bring the selection under --max-minutes: the slowest claims to leave out
    (or to run alone), more workers, the quick sizes."""
    from montecarlo.runner.budget import cores
    from paper_checks.estimate import slowest_out

    limit = guards.max_seconds(args)
    if len(seconds) == 1:       # was: "run fewer claims at once", "use more workers"
        parts = ["a claim runs in one process"]
    else:
        cut, slow = slowest_out(seconds, args.jobs, limit)
        parts = [f"leave out the slowest ({_ids(cut)}: select with --paper or --claim)"] \
            if slow else ["run fewer claims at once (--paper, --claim)"]
    if args.jobs < min(cores(), len(seconds)):
        parts.append(f"use more workers (--jobs {min(cores(), len(seconds))})")
    if not quick:
        parts.append("check the quick sizes (without --full)")
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural but for one (was "1 full claim checks", "1 claims")."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _ids(ids, shown: int = 6) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown
                                      else "")


def _one_line(text: str, width: int = STATEMENT_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def render_text(results, *, mode: str, seconds: float) -> list:
    """The lines of the text table: per claim, a head line (verdict, id, location and the
    statement on one line), then its numbers, corrected form and what an accusation rests on;
    a count and the legend of the verdicts at the end."""
    from paper_checks.core import LEGEND, RESTS_ON

    vwidth = max(len(r["verdict"]) for r in results)
    pad = " " * (vwidth + 2)
    lines = []
    for r in results:
        lines.append(f"{r['verdict']:<{vwidth}}  {r['id']} ({r['location']}): "
                     f"{_one_line(r['statement'])}")
        lines.append(f"{pad}numbers: {r['evidence']['summary']}")
        if r["corrected"]:
            lines.append(f"{pad}corrected: {r['corrected']}")
        if r["transcription"]:
            lines.append(f"{pad}rests on: {RESTS_ON[r['transcription']]} "
                         f"({r['transcription_note']})")
    counts = Counter(r["verdict"] for r in results)
    lines.append("")
    lines.append(f"{_count(len(results), 'claim')} ({mode}, {seconds:.0f} s): "
                 + ", ".join(f"{k} {counts[k]}" for k in LEGEND if counts[k]))
    lines.append("Verdicts:")
    lines += [f"  {k:<{max(map(len, LEGEND))}}  {v}" for k, v in LEGEND.items()]
    return lines
