"""The coverage count of paper_checks (issue 21): per paper full / partial / none over the
distinct checkable main-text statements, every cited claim registered."""

import json

import paper_checks
from paper_checks.coverage import STATEMENTS, STATUSES, coverage, main, overall


def test_every_cited_claim_exists_and_statuses_are_valid():
    for paper, loc, what, status, ids, note in STATEMENTS:
        assert paper in paper_checks.PAPERS and loc and what, (paper, loc)
        assert status in STATUSES
        for cid in ids:
            assert cid in paper_checks.CLAIMS, cid
        # a statement checked (fully or partly) names its claims; one not fully checked says
        # what is missing, or why it cannot be checked
        assert (status in ("full", "partial")) <= bool(ids), (paper, loc)
        assert (status != "full") <= bool(note), (paper, loc)


def test_counts_and_share():
    cov = coverage(claim_ids=set(paper_checks.CLAIMS))
    total, share = overall(cov)
    assert total >= 95 and share >= 0.85
    for row in cov.values():
        assert len(row["statements"]) == (row["full"] + row["partial"] + row["none"]
                                          + row["not_checkable"])
    # 001 Fig. 1 (LIBSVM data) is listed as not checkable, with its reason
    fig1 = [s for s in cov["001"]["statements"] if s["location"] == "Sec. 5, Fig. 1"]
    assert fig1 and fig1[0]["status"] == "not checkable" and "LIBSVM" in fig1[0]["note"]


def test_unregistered_claims_count_as_none():
    rows = [("000", "x", "y", "full", ["000.nope"], "")]
    cov = coverage(rows, claim_ids=set(paper_checks.CLAIMS))
    assert cov["000"]["none"] == 1 and cov["000"]["share"] == 0.0


def test_json_contract(capsys):
    assert main(["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == set(paper_checks.PAPERS)
    for row in out.values():
        assert {"full", "partial", "none", "statements"} <= set(row)
