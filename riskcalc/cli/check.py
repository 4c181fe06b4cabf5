"""``riskcalc check``: every checkable claim of the papers, with its verdict and key numbers.

Runs the catalogue of ``paper_checks`` (a consumer layer the theory never imports; it is
imported here, in the app layer, only when the command runs). The default is the quick
configuration (well under a minute of checks on one core); ``--full`` runs the larger sizes of
the committed report, announcing its time estimate (from the last full run's per-claim
times, ``paper_checks.report.read_seconds``) first.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from riskcalc.cli import COMMANDS, guards

#: Width at which a claim's statement is cut to keep it on one line.
STATEMENT_WIDTH = 110


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help=COMMANDS["check"],
        description="Check every claim of papers 003, 000 (= 002), 004 and 001 numerically: "
                    "holds / loose / erratum-harmless / erratum (with the corrected form) / "
                    "fails / not checkable, and the toolkit's own findings. Quick sizes by "
                    "default; --full for the sizes of the committed report.")
    p.add_argument("--paper", metavar="ID", help="only this paper (003, 000, 002, 004, 001)")
    p.add_argument("--claim", metavar="ID", action="append",
                   help="only this claim id (repeatable; results in the order given)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="small sizes (the default; kept as an explicit alias)")
    size.add_argument("--full", action="store_true",
                      help="the committed report's sizes: tens of minutes (the estimate is "
                           "printed first), with a progress bar on stderr")
    p.add_argument("--json", action="store_true",
                   help='print a JSON list of {"id", "paper", "location", "statement", "kind", '
                        '"verdict", "evidence", "corrected", "transcription", '
                        '"transcription_note"}; "transcription" is "independent" or "depends" '
                        'for an erratum (does it rest on the PDF text extraction?), else null')
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--list", action="store_true", help="list the claim ids and exit")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    p.set_defaults(func=run)


def run(args) -> int:
    from paper_checks import run_claims, select

    args.jobs = guards.jobs(args.jobs)
    claims = select(args.paper, args.claim)
    if args.list:
        for c in claims:
            print(f"{c.id:<45} {c.kind:<32} {c.location}")
        return 0
    quick = not args.full
    if not quick:
        print(_estimate(claims, args.jobs), file=sys.stderr)
    start = time.perf_counter()
    results = run_claims(claims, quick=quick, n_jobs=args.jobs,
                         progress=not args.no_progress)
    seconds = time.perf_counter() - start
    if args.json:
        print(guards.dumps(results))
        return 0
    print("\n".join(render_text(results, mode="quick" if quick else "full", seconds=seconds)))
    return 0


def _estimate(claims, jobs: int) -> str:
    """One line: the full run's expected wall time, from the last full run's times."""
    from paper_checks.report import read_seconds

    recorded = read_seconds()
    known = [recorded[c.id] for c in claims if c.id in recorded]
    typical = sorted(known)[len(known) // 2] if known else 10.0
    total = sum(known) + typical * (len(claims) - len(known))
    wall = total / jobs
    when = f"{wall / 60:.0f} min" if wall >= 90 else f"{wall:.0f} s"
    return (f"full run of {len(claims)} claims: about {when} with --jobs {jobs} on a quiet "
            f"machine (the last full run's per-claim times, paper_checks.report.read_seconds; "
            f"{len(claims) - len(known)} claims without a recorded time counted at "
            f"{typical:.0f} s each)")


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
    lines.append(f"{len(results)} claims ({mode}, {seconds:.0f} s): "
                 + ", ".join(f"{k} {counts[k]}" for k in LEGEND if counts[k]))
    lines.append("Verdicts:")
    lines += [f"  {k:<{max(map(len, LEGEND))}}  {v}" for k, v in LEGEND.items()]
    return lines
