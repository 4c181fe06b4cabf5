"""Sensitivity (mutation) testing of the checks: does each check reject a wrong statement?

``python -m paper_checks.sensitivity [--json] [--full] [--claim ID]... [--jobs N]
[--max-minutes M] [--no-progress]`` (estimated first, refused above M) runs every
claim whose verdict is ``holds``, ``loose`` or an erratum once as it is, then once per mutant
it declares (``Claim.mutants``; ``paper_checks.core.stated`` is the seam the mutant replaces):
an equality scaled by 1.5, an upper bound divided by 100, a lower bound multiplied by 100, an
exponent moved by 0.5; an erratum's mutant is applied to its corrected form. A check rejects a
mutant when its verdict changes and the mutant was actually applied (the seam was reached); a
claim is sensitive when it rejects all its mutants. A claim that declares no mutant is
reported with ``"mutant": null`` and is not sensitive: its check cannot show that it would
fail, and ``paper_checks.coverage`` does not count it as full.

``--json`` prints a list of ``{"id", "verdict", "mutant", "sensitive"}``, one record per
(claim, mutant), in catalogue order (DESIGN.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from joblib import delayed
from tqdm.auto import tqdm

from montecarlo.runner.tasks import parallel_results
from montecarlo.runner.threads import small_blas
from paper_checks.core import _ACTIVE, CORRECTED, VERDICTS, Config, Mutant
from paper_checks.runner import checked_arguments, finished
from riskcalc._validate import flag
from riskcalc._text import claims_once

#: The verdicts a mutant is run against: a statement the evidence accepts (as printed, or in
#: its corrected form).
TESTED = ("holds",) + CORRECTED


def _verdict(claim, quick: bool, role: str | None) -> tuple[str, int]:
    mutant = Mutant(role) if role else None
    token = _ACTIVE.set(mutant)
    try:
        with small_blas():
            verdict = claim.check(Config(quick), claim.seed).verdict
    except Exception:  # a check that breaks on a mutant has not accepted it
        verdict = "fails"
    finally:
        _ACTIVE.reset(token)
    return verdict, (mutant.hits if mutant else 0)


def _claim_records(claim_id: str, quick: bool, base: str | None = None) -> list:
    from paper_checks import CLAIMS

    claim = CLAIMS[claim_id]
    if base is None:
        base, _ = _verdict(claim, quick, None)
    if base not in TESTED:
        return []
    if not claim.mutants:
        return [{"id": claim.id, "verdict": base, "mutant": None, "sensitive": False}]
    out = []
    for role in claim.mutants:
        verdict, hits = _verdict(claim, quick, role)
        out.append({"id": claim.id, "verdict": base, "mutant": Mutant(role).name,
                    "sensitive": bool(hits > 0 and verdict != base),
                    "mutant_verdict": verdict, "seam_uses": hits})
    return out


def sensitivity(claims, *, quick: bool = True, n_jobs: int = 1, verdicts=None, done=None,
                progress: bool = False) -> list:
    """One record per (claim, mutant) of ``claims`` (see the module docstring), with the
    mutated run's verdict (``mutant_verdict``) and the number of times the seam was reached
    (``seam_uses``) for the reader.

    ``verdicts``, optional: ``{claim id: verdict}`` of an unmutated run at the same sizes
    (``paper_checks.run_claims``, which runs the same check on the same seed); a claim found
    there is not run once more as it is. Claims missing from it are run unmutated here.

    ``done``, optional: ``{claim id: its records}``, filled in place as each claim finishes;
    the claims already in it are not run again (a stopped ``python -m paper_checks.report``
    keeps it to resume). ``progress`` shows a bar on stderr."""
    # quick="no" made every check raise, read as "fails", and returned no record: nothing
    # tested, silently; n_jobs=0 was taken, a list of ids an AttributeError (fuzz41 paper F7).
    quick, n_jobs = checked_arguments(claims, quick, n_jobs)
    progress, done = flag("progress", progress), finished(done)
    verdicts = {} if verdicts is None else verdicts
    # A string was an AttributeError, an unknown verdict left its claim untested in silence
    # (fuzz42 report F5).
    if not (isinstance(verdicts, dict)
            and all(isinstance(v, str) and v in VERDICTS for v in verdicts.values())):
        raise ValueError("verdicts must be a dict {claim id: verdict} (verdicts of "
                         f"paper_checks.VERDICTS) or None, got {verdicts!r:.60}")
    todo = [c for c in claims if c.id not in done]
    with tqdm(total=len(todo), desc="mutants", file=sys.stderr, disable=not progress,
              leave=False) as bar:
        for claim, recs in zip(todo, parallel_results(
                (delayed(_claim_records)(c.id, quick, verdicts.get(c.id)) for c in todo),
                n_jobs=n_jobs if len(todo) > 1 else 1, ordered=True)):
            done[claim.id] = recs
            bar.update(1)
    return [r for c in claims for r in done[c.id]]


def sensitive_claims(records) -> dict:
    """``{claim id: True if it rejected every mutant it declares}``."""
    out = {}
    for r in records:
        out[r["id"]] = out.get(r["id"], True) and r["sensitive"]
    return out


def main(argv=None) -> int:
    from paper_checks import select
    from riskcalc.cli.shared import guards
    # The module's importable copy, not __main__'s: the workers import it by name.
    from paper_checks.sensitivity import sensitivity

    ap = argparse.ArgumentParser(prog="python -m paper_checks.sensitivity",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="one JSON record per (claim, mutant)")
    ap.add_argument("--full", action="store_true", help="the full sizes (default quick)")
    ap.add_argument("--claim", action="append", metavar="ID", help="only this claim")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    guards.add_budget_option(ap, stop="prints the claims already tested")
    args = ap.parse_args(argv)
    try:
        limit = guards.max_seconds(args)
        # --jobs 0 was a traceback, as an unknown --claim; --jobs 99999 started that many
        # workers: capped at the cores, as riskcalc check does (fuzz41 bounds F4).
        args.jobs = guards.jobs(args.jobs)
        claims_once(args.claim)     # was merged, where riskcalc check refuses it (fuzz41 paper F3)
        claims = select(None, args.claim)
    except ValueError as exc:
        ap.error(str(exc))
    # No estimate, progress or limit: --full ran every claim once per mutant at the full sizes
    # (hours) with nothing shown (fuzz42 report F8).
    from paper_checks.estimate import mutation_seconds

    wall = mutation_seconds(claims, not args.full, True) / min(args.jobs, len(claims))
    if wall > limit:
        from montecarlo.runner.budget import cores

        advice = (["fewer claims (--claim)"] if len(claims) > 1 else []) + (
            [f"more workers (--jobs {cores()})"] if args.jobs < cores() else []) + (
            ["the quick sizes (without --full)"] if args.full else [])
        what = f"the mutation tests of {len(claims)} claim{'s' * (len(claims) > 1)}"
        more = f"allow more time with --max-minutes {math.ceil(wall / 60)}"
        ap.error(f"{what}: estimated {guards.duration(wall)} with --jobs {args.jobs}, more than "
                 f"the {guards.duration(limit)} allowed; "
                 + ", ".join(advice + [f"or {more}" if advice else more]))
    done = {}
    try:
        with guards.time_limit(limit):
            records = sensitivity(claims, quick=not args.full, n_jobs=args.jobs, done=done,
                                  progress=not args.no_progress)
    except guards.OutOfTime as exc:
        if done:
            _print([r for c in claims for r in done.get(c.id, [])], args)
        missing = [c.id for c in claims if c.id not in done]
        ap.exit(2, f"error: {exc}: {len(done)} of {len(claims)} claims tested"
                   f"{' (printed above)' if done else ''}; "
                   f"not run: {', '.join(missing[:6])}{' and more' if len(missing) > 6 else ''}"
                   ". Rerun those with --claim, or allow more time with --max-minutes\n")
    # A claim asked for by --claim whose verdict is not tested left no record and no word
    # ("0 claims tested" for --claim 003.sec5.experiments; fuzz40 paper F6).
    untested = [c for c in args.claim or [] if c not in {r["id"] for r in records}]
    if untested:
        print(f"note: not tested: {', '.join(untested)}: a verdict other than "
              f"{', '.join(TESTED)} (only a statement the evidence accepts has mutants to "
              "reject)", file=sys.stderr)
    _print(records, args)
    return 0


def _print(records, args) -> None:
    """``records`` as JSON (``--json``) or one line each and a count."""
    if args.json:
        print(json.dumps([{k: r[k] for k in ("id", "verdict", "mutant", "sensitive")}
                          for r in records]))
        return
    for r in records:
        what = (f"mutant {r['mutant']}: {'rejected' if r['sensitive'] else 'ACCEPTED'} "
                f"(verdict {r['mutant_verdict']}, seam reached {r['seam_uses']} times)"
                if r["mutant"] else "no mutant declared")
        print(f"{r['id']:<45} {r['verdict']:<17} {what}")
    per = sensitive_claims(records)
    print(f"{len(per)} claims tested, {sum(per.values())} sensitive (rejected all their "
          f"mutants), {sum(r['mutant'] is None for r in records)} without a declared mutant")


if __name__ == "__main__":
    sys.exit(main())
