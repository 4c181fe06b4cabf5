"""The quick catalogue must reproduce every verdict of the committed report.

A regression in a formula (riskcalc), a simulation (montecarlo) or a bound (riskcalc.minimax)
shows up here as a changed verdict. The committed ``paper_checks/REPORT.md`` is the full run;
the quick run uses smaller sizes but the same checks and tolerances, so the verdicts agree.
The catalogue runs once per session on 2 worker processes (the ``quick_catalogue`` fixture
of ``tests/conftest.py``, shared with the tests of single verdicts); regenerate the report with
``python -m paper_checks.report`` after an intended change.
"""

import paper_checks
from paper_checks.report import REPORT, read_verdicts


def test_quick_verdicts_match_committed_report(quick_catalogue):
    committed = read_verdicts(REPORT)
    assert len(committed) >= 40, "REPORT.md missing or unparsable: regenerate it"
    results = list(quick_catalogue.values())
    assert [r["id"] for r in results] == [c.id for c in paper_checks.select()]
    now = {r["id"]: r["verdict"] for r in results}
    assert set(now) == set(committed), "claims added or removed: regenerate REPORT.md"
    changed = {cid: (committed[cid], now[cid], r["evidence"]["summary"])
               for r in results for cid in [r["id"]] if now[cid] != committed[cid]}
    assert not changed, changed
