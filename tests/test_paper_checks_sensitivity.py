"""Sensitivity (mutation) testing of the paper checks (issue 31): the seam, the records, and a
quick run of cheap claims whose mutants must be rejected (or, for two known weak checks,
accepted: which is why they are not counted full)."""

import json

import pytest

import paper_checks
from paper_checks.core import Mutant, _ACTIVE, stated
from paper_checks.numbered import MUTANT_PASSES
from paper_checks.sensitivity import main, sensitive_claims, sensitivity


def test_the_seam_is_the_identity_outside_a_sensitivity_run():
    assert stated(2.0, "equality") == 2.0
    token = _ACTIVE.set(m := Mutant("upper"))
    try:
        assert stated(2.0, "upper") == 0.02 and stated(2.0, "lower") == 2.0
        assert stated(1.0, "exponent") == 1.0       # another role: untouched
    finally:
        _ACTIVE.reset(token)
    assert m.hits == 1
    with pytest.raises(ValueError, match="role"):
        stated(1.0, "bigger")


CHEAP = ["003.thm2.mp-closed-form", "003.thm2.lambda-limits", "003.thm2.rtfa-beats-ftfa",
         "000.eq18-19.proportional-weights", "001.sec2.summand-lower-bound",
         "000.lemma19.minibatch-variance", "004.lemma7.outer-contraction",
         "003.lemma62.moment-bound", "000.lemma7.proof-monotonicity"]


def test_quick_sensitivity_of_cheap_claims(quick_sensitivity, monkeypatch):
    records = quick_sensitivity(CHEAP)
    per = sensitive_claims(records)
    assert set(per) == set(CHEAP)
    for cid in CHEAP[:7]:
        assert per[cid], [r for r in records if r["id"] == cid]
    # the loose bound of Lemma 6.2: its /100 mutant passes (graded partial in coverage)
    assert per["003.lemma62.moment-bound"] is False
    assert "003.lemma62.moment-bound" in MUTANT_PASSES
    # Lemma 7's word swap declares its turning point since fuzz42 bounds F7 (it declared none)
    mono = [{k: r[k] for k in ("id", "verdict", "mutant", "sensitive")} for r in records
            if r["id"] == "000.lemma7.proof-monotonicity"]
    assert mono == [{"id": "000.lemma7.proof-monotonicity", "verdict": "erratum-harmless",
                     "mutant": "equality x1.5", "sensitive": True}]
    # a claim without a declared mutant is reported, and is not sensitive (that claim with
    # its mutants taken away; its verdict given, so nothing runs)
    from dataclasses import replace

    from paper_checks.sensitivity import _claim_records

    cid = "000.lemma7.proof-monotonicity"
    monkeypatch.setitem(paper_checks.CLAIMS, cid, replace(paper_checks.CLAIMS[cid], mutants=()))
    assert _claim_records(cid, True, "erratum-harmless") == [
        {"id": cid, "verdict": "erratum-harmless", "mutant": None, "sensitive": False}]


def test_every_holds_claim_declares_a_mutant():
    # the catalogue's quick verdicts are those of REPORT.md: every claim that holds there
    # must be testable by a mutant
    from paper_checks.report import read_verdicts

    holds = [cid for cid, v in read_verdicts().items() if v == "holds"]
    assert len(holds) >= 60
    assert [cid for cid in holds if not paper_checks.CLAIMS[cid].mutants] == []


def test_known_verdicts_replace_only_the_unmutated_run():
    # verdicts= stands in for the unmutated run: the records are those of the full route when
    # it is the true verdict, and a verdict that is not tested (here a false one) is taken
    # as given, so no mutant runs.
    claims = paper_checks.select(None, ["003.thm2.lambda-limits"])
    full = sensitivity(claims)
    assert full[0]["verdict"] == "holds" and full[0]["sensitive"]
    assert sensitivity(claims, verdicts={"003.thm2.lambda-limits": "holds"}) == full
    assert sensitivity(claims, verdicts={"003.thm2.lambda-limits": "fails"}) == []


def test_json_contract(capsys):
    assert main(["--json", "--claim", "003.thm2.lambda-limits"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == [{"id": "003.thm2.lambda-limits", "verdict": "holds",
                    "mutant": "equality x1.5", "sensitive": True}]


def test_quick_sensitivity_in_ci(quick_sensitivity):
    # The sensitivity run of the catalogue's cheaper two thirds (by the times the committed
    # report recorded; the mutants only, as the unmutated verdicts are the session's quick
    # run of the catalogue): every claim tested rejects all its mutants, except those recorded
    # in MUTANT_PASSES (not counted full) and errata that declare none.
    from paper_checks.report import _TIME, REPORT

    times = {m.group(1): float(m.group(2)) for m in _TIME.finditer(REPORT.read_text())}
    cheap = sorted(times, key=times.get)[: 2 * len(times) // 3]
    assert len(cheap) >= 60
    records = quick_sensitivity(cheap)
    per = sensitive_claims(records)
    undeclared = {r["id"] for r in records if r["mutant"] is None}
    bad = {cid for cid, ok in per.items()
           if not ok and cid not in MUTANT_PASSES and cid not in undeclared}
    assert not bad, [r for r in records if r["id"] in bad]
    assert all(paper_checks.CLAIMS[cid].mutants == () for cid in undeclared)

