"""``riskcalc check``: every checkable claim of the papers, with its verdict and key numbers.

Runs the catalogue of ``paper_checks`` (a consumer layer the theory never imports; it is
imported here, in the app layer, only when the command runs).
"""

from __future__ import annotations

import time
from collections import Counter
from riskcalc.cli import COMMANDS, guards


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "check", help=COMMANDS["check"],
        description="Check every claim of papers 003, 000 (= 002), 004 and 001 numerically: "
                    "holds / loose / erratum-harmless / erratum (with the corrected form) / "
                    "fails / not checkable, and the toolkit's own findings.")
    p.add_argument("--paper", metavar="ID", help="only this paper (003, 000, 002, 004, 001)")
    p.add_argument("--claim", metavar="ID", action="append",
                   help="only this claim id (repeatable)")
    p.add_argument("--quick", action="store_true", help="small sizes (CI, a few minutes)")
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
    start = time.perf_counter()
    results = run_claims(claims, quick=args.quick, n_jobs=args.jobs,
                         progress=not args.no_progress)
    seconds = time.perf_counter() - start
    if args.json:
        print(guards.dumps(results))
        return 0
    width = max(len(r["id"]) for r in results)
    vwidth = max(len(r["verdict"]) for r in results)
    for r in results:
        summary = r["evidence"]["summary"]
        if r["transcription"] == "depends":
            summary = "[depends on the transcription] " + summary
        print(f"{r['id']:<{width}}  {r['verdict']:<{vwidth}}  {summary}")
        if r["corrected"]:
            print(f"{'':<{width}}  {'':<{vwidth}}  corrected: {r['corrected']}")
        if r["transcription"]:
            print(f"{'':<{width}}  {'':<{vwidth}}  transcription ({r['transcription']}): "
                  f"{r['transcription_note']}")
    counts = Counter(r["verdict"] for r in results)
    mode = "quick" if args.quick else "full"
    print(f"{len(results)} claims ({mode}, {seconds:.0f} s): "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0
