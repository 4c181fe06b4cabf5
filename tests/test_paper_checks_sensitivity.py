"""Sensitivity (mutation) testing of the paper checks (issue 31): the seam, the records, and a
quick run of cheap claims whose mutants must be rejected (or, for two known weak checks,
accepted: which is why they are not counted full)."""

import json

import pytest

import paper_checks
from paper_checks.core import Mutant, _ACTIVE, stated
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
         "003.lemma62.moment-bound", "003.a3.worked-examples", "000.lemma7.mu0"]


def test_quick_sensitivity_of_cheap_claims():
    records = sensitivity(paper_checks.select(None, CHEAP))
    per = sensitive_claims(records)
    assert set(per) == set(CHEAP)
    for cid in CHEAP[:5]:
        assert per[cid], [r for r in records if r["id"] == cid]
    # the loose bound of Lemma 6.2: its /100 mutant passes (graded partial in coverage)
    assert per["003.lemma62.moment-bound"] is False
    # a claim without a declared mutant is reported, and is not sensitive
    a3 = [r for r in records if r["id"] == "003.a3.worked-examples"]
    assert a3 == [{"id": "003.a3.worked-examples", "verdict": "holds", "mutant": None,
                   "sensitive": False}]


def test_json_contract(capsys):
    assert main(["--json", "--claim", "003.thm2.lambda-limits"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == [{"id": "003.thm2.lambda-limits", "verdict": "holds",
                    "mutant": "equality x1.5", "sensitive": True}]
