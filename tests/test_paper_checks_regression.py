"""The quick catalogue must reproduce every verdict of the committed report.

A regression in a formula (riskcalc), a simulation (montecarlo) or a bound (riskcalc.minimax)
shows up here as a changed verdict. The committed ``paper_checks/REPORT.md`` is the full run;
the quick run uses smaller sizes but the same checks and tolerances, so the verdicts agree.
Runs the whole catalogue on 2 worker processes (about 2 minutes); regenerate the report with
``python -m paper_checks.report`` after an intended change.
"""

import paper_checks
from paper_checks.report import REPORT, read_verdicts


def test_quick_verdicts_match_committed_report():
    committed = read_verdicts(REPORT)
    assert len(committed) >= 40, "REPORT.md missing or unparsable: regenerate it"
    results = paper_checks.run_claims(paper_checks.select(), quick=True, n_jobs=2)
    now = {r["id"]: r["verdict"] for r in results}
    assert set(now) == set(committed), "claims added or removed: regenerate REPORT.md"
    changed = {cid: (committed[cid], now[cid], r["evidence"]["summary"])
               for r in results for cid in [r["id"]] if now[cid] != committed[cid]}
    assert not changed, changed
