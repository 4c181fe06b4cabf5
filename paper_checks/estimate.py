"""Time estimates of a selection of claims, before it runs (``riskcalc check --max-minutes``).

Recorded per-claim times: the last full run's (``paper_checks.report.read_seconds``) for the
full sizes, the committed report's own when it records a quick run. Claims without a recorded
time count at the median of the recorded ones.
"""

from __future__ import annotations


def recorded_seconds(quick: bool) -> dict:
    """``{claim id: seconds}`` recorded for each claim: the last full run's
    (``paper_checks.report.read_seconds``) for ``quick=False``, else the committed report's
    own times when it records a quick run."""
    from paper_checks import report

    if not quick:
        return report.read_seconds()
    try:
        text = report.REPORT.read_text()
    except FileNotFoundError:
        return {}
    if "Mode: **quick**" not in text:
        return {}
    return {m.group(1): float(m.group(2)) for m in report._TIME.finditer(text)}


def estimate(claims, quick: bool):
    """({claim id: estimated seconds}, claims without a recorded time, the time they are
    counted at: the median of the recorded ones)."""
    recorded = recorded_seconds(quick)
    known = [recorded[c.id] for c in claims if c.id in recorded]
    typical = sorted(known)[len(known) // 2] if known else (1.0 if quick else 10.0)
    return ({c.id: recorded.get(c.id, typical) for c in claims},
            sum(c.id not in recorded for c in claims), typical)


def slowest_out(seconds: dict, workers: int, limit: float) -> tuple[list, list]:
    """(the slowest claims of ``seconds`` to leave out, slowest first, so that the others fit
    in ``limit`` seconds on ``workers`` workers; the claims kept)."""
    slow = sorted(seconds, key=seconds.get, reverse=True)
    kept = sum(seconds.values())
    cut = []
    while slow and kept / workers > limit:
        cut.append(slow.pop(0))
        kept -= seconds[cut[-1]]
    return cut, slow


def report_seconds(claims, kept: dict, quick: bool, jobs: int, mutants: bool) -> tuple:
    """(estimated seconds of the ``claims`` not yet in ``kept["claims"]``, of the sensitivity
    run of those not in ``kept["sensitivity"]``, or 0 if not ``mutants``) for
    ``python -m paper_checks.report`` on ``jobs`` workers: a sensitivity run is one quick run
    per mutant, plus the unmutated one after a full run."""
    todo = [c for c in claims if c.id not in kept["claims"]]
    run = sum(estimate(todo, quick)[0].values()) if todo else 0.0
    todo = [c for c in claims if c.id not in kept["sensitivity"]] if mutants else []
    sens = mutation_seconds(todo, True, unmutated=not quick)
    workers = max(min(jobs, len(claims)), 1)
    return run / workers, sens / workers


def mutation_seconds(claims, quick: bool, unmutated: bool) -> float:
    """Estimated seconds of ``paper_checks.sensitivity`` on ``claims`` at the quick or full
    sizes on one worker: one run per mutant a claim declares, plus its unmutated run when
    ``unmutated`` (no verdicts of the same sizes given)."""
    each = estimate(claims, quick)[0] if claims else {}
    return sum(each[c.id] * (len(c.mutants) + unmutated) for c in claims)
