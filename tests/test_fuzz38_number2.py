"""Issue 32, fuzz38 (number2): what this fuzz found, each test failing before.

The coverage counted from the papers' own numbering left out their numbered equations (paper
001's (4)-(6) had no check until this session): ``paper_checks.numbered`` now finds every
numbered equation in the texts (``paper_checks.equations``), classifies each (claim,
definition, proof step, with the line), and the coverage is reported both ways.
"""

import pytest

import paper_checks
from paper_checks.coverage import main, numbered_coverage, overall
from paper_checks.equations import EQUATION_COUNT, EQUATIONS, find_equations, span
from paper_checks.numbered import RESULTS, papers_dir

KINDS = ("claim", "definition", "proof step")


def test_every_numbered_equation_is_found_once_in_order_with_no_gap():
    if papers_dir() is None:
        pytest.skip("the papers' text files are not beside the repository")
    for pid in paper_checks.PAPERS:
        found = find_equations(pid)
        assert [int(n) for n, _ in found] == list(range(1, EQUATION_COUNT[pid] + 1)), pid
        lines = dict(found)
        for paper, number, line, *_ in EQUATIONS:
            if paper == pid:
                assert lines[str(span(number)[0])] == line, (paper, number)


def test_every_equation_is_classified_once_and_graded():
    for pid, count in EQUATION_COUNT.items():
        listed = [k for r in EQUATIONS if r[0] == pid for k in span(r[1])]
        assert sorted(listed) == list(range(1, count + 1)), pid
    for paper, number, line, kind, status, ids, note in EQUATIONS:
        assert kind in KINDS and note and all(c in paper_checks.CLAIMS for c in ids)
        if kind == "claim":
            assert status in ("full", "partial", "none") and (status == "none") != bool(ids)
            assert len(span(number)) == 1, (paper, number)
        else:
            assert status == "", (paper, number)


def test_coverage_is_reported_with_and_without_the_equations(capsys):
    ids = set(paper_checks.CLAIMS)
    results, both = numbered_coverage(claim_ids=ids), numbered_coverage(claim_ids=ids,
                                                                        equations=True)
    claims = sum(r[3] == "claim" for r in EQUATIONS)
    assert overall(both)[0] == overall(results)[0] + claims
    assert overall(results)[0] == sum(r[4] != "not checkable" for r in RESULTS)
    # 001's eq. (4) counts through 001.eq4.prox-sign; 004's eq. (4) is demoted (its mutant passes)
    rows = {(p, s["location"].split(" (line")[0]): s for p, r in both.items()
            for s in r["statements"]}
    assert rows["001", "eq. (4)"]["status"] == "full"
    assert rows["004", "eq. (4)"]["status"] == "partial"
    demoted = numbered_coverage(insensitive={"001.eq4.prox-sign"}, equations=True)
    eq5 = [s for s in demoted["001"]["statements"] if s["statement"] == "eq. (5)"][0]
    assert eq5["status"] == "partial" and "001.eq4.prox-sign" in eq5["note"]
    assert main([]) == 0
    out = capsys.readouterr().out
    assert f"{overall(both)[0]} checkable numbered results and equations" in out


def test_eq12_maml_objective_has_its_own_check():
    # 003's eq. (12) (MAML-FL's objective (11) with the least-squares loss) had no check of
    # its own: the new claim evaluates (11) by finite differences against (12)
    from paper_checks.core import Config

    out = paper_checks.CLAIMS["003.eq12.maml-linear-objective"].check(Config(quick=True), 0)
    assert out.verdict == "holds", out.summary
    row = [r for r in EQUATIONS if r[:2] == ("003", "12")][0]
    assert row[4] == "full" and "003.eq12.maml-linear-objective" in row[5]


def test_eq14_pfedme_converges_to_the_joint_problem():
    # 003's eq. (14) (pFedMe run to convergence is the joint problem) was partial: only the
    # limits of (14) were checked, pFedMe's iterations never run to it
    from paper_checks.core import Config

    out = paper_checks.CLAIMS["003.eq14.pfedme-joint-problem"].check(Config(quick=True), 0)
    assert out.verdict == "holds" and out.evidence["gap"] < 1e-10, out.summary
    row = [r for r in EQUATIONS if r[:2] == ("003", "14")][0]
    assert row[4] == "full" and "003.eq14.pfedme-joint-problem" in row[5]
