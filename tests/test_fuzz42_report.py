"""Issue 32, fuzz42 (report): what this fuzz found, each test failing before."""

from __future__ import annotations

import json
import time

import pytest

import paper_checks
from paper_checks import estimate as timing
from paper_checks import report, runner


def _report(argv, capsys):
    """(exit code, stdout, stderr) of ``python -m paper_checks.report ARGV`` in this process."""
    try:
        code = report.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def _result(claim):
    return {"id": claim.id, "paper": claim.paper, "location": claim.location,
            "statement": claim.statement, "kind": claim.kind, "verdict": "holds",
            "evidence": {"summary": "fake", "seconds": 0.0}, "corrected": None,
            "transcription": None, "transcription_note": None}


def test_report_refuses_a_run_over_max_minutes_before_it_starts(tmp_path, capsys):
    """Item 1: ``python -m paper_checks.report`` (tens of minutes in full) had no estimate and
    no time limit: it is estimated from the recorded per-claim times and refused above
    ``--max-minutes``, naming what would fit; nothing is written."""
    out = tmp_path / "r.md"
    code, _, err = _report(["--out", out, "--max-minutes", "0.001", "--no-progress"], capsys)
    assert code == 2 and not out.exists()
    assert "the full report: 135 claims about" in err or "the full report: " in err
    line = err.strip().splitlines()[-1]
    assert "more than the 0.06 s allowed (--max-minutes)" in line
    assert "(--no-sensitivity)" in line and "(--quick)" in line
    assert "or allow more time with --max-minutes " in line


def test_report_stopped_at_the_limit_keeps_its_claims_and_resumes(monkeypatch, tmp_path,
                                                                   capsys):
    """Item 1: a report stopped at ``--max-minutes`` keeps the claims it finished in
    OUT.partial.json; ``--resume`` runs only the others and writes the report."""
    claims = paper_checks.select("003")[:3]
    calls = []

    def fake(claim, quick):
        calls.append(claim.id)
        if claim.id == claims[1].id and len(calls) == 2:
            time.sleep(30)          # stopped by the limit
        return _result(claim)

    monkeypatch.setattr(paper_checks, "select", lambda *a: claims)
    monkeypatch.setattr(runner, "_run_one", fake)
    monkeypatch.setattr(timing, "estimate",
                        lambda cs, quick: ({c.id: 0.01 for c in cs}, 0, 0.01))
    out = tmp_path / "r.md"
    argv = ["--quick", "--jobs", "1", "--no-sensitivity", "--no-progress", "--out", out]
    code, _, err = _report(argv + ["--max-minutes", "0.005"], capsys)
    assert code == 2 and not out.exists()
    assert "1 of 3 claims checked and 0 mutation-tested, kept in" in err
    kept = json.loads(runner.partial_path(out).read_text())
    assert kept["mode"] == "quick" and list(kept["claims"]) == [claims[0].id]
    code, stdout, err = _report(argv + ["--resume"], capsys)
    assert code == 0 and out.exists() and not runner.partial_path(out).exists()
    assert calls[2:] == [claims[1].id, claims[2].id]            # the first one not rerun
    assert report.read_verdicts(out) == {c.id: "holds" for c in claims}
    code, _, err = _report(argv + ["--resume"], capsys)         # nothing left to resume
    assert code == 2 and "--resume: no run to resume in" in err


def test_fedprox_bounds_check_the_shapes_m_exponent():
    """Item 2: ``000.thm11.fedprox-aer`` and ``000.thm12.fedprox-ier`` divided the error and
    the linearized prediction by the same shape, so the shape R m/N for R sqrt(m/N) was
    accepted. The checks now require the bound's constant (max over n_i, R of the
    linearized error / shape) not to grow with m between m = 256 and 4096: at most m^0.2,
    where the printed shapes give 0.02 and -0.06 and that mutant 0.42 and 0.39
    (deterministic; mu cancels)."""
    import numpy as np

    from paper_checks import p000_sec4 as sec4

    def mutant(n, m, N, R, thm):
        term = R * m / N
        if thm == 11:
            return sec4._D * (np.minimum(m / N, term) + 1 / N)
        return sec4._D * (np.minimum(term, 1 / n) + np.sqrt(m) / N)

    for thm in (11, 12):
        for mu in (0.05, 0.25):
            assert sec4._m_growth(thm, mu) < 0.05
            assert sec4._m_growth(thm, mu, mutant) > 0.35


def test_check_interrupted_prints_the_claims_already_checked(monkeypatch, capsys):
    """F3: a Ctrl-C in ``riskcalc check`` discarded the claims already checked (exit 130,
    "error: interrupted" and nothing else), which a stop at --max-minutes prints: they are
    printed, and the one error line says so."""
    from riskcalc.cli import check as check_cli
    from tests.helpers import run_cli

    first, second = [c.id for c in paper_checks.select("003")[:2]]

    def fake(claim, quick):
        if claim.id == second:
            raise KeyboardInterrupt
        return _result(claim)

    monkeypatch.setattr(check_cli, "check_one", fake)
    code, out, err = run_cli(["check", "--claim", first, "--claim", second, "--no-progress",
                              "--json"], capsys)
    assert code == 130 and [r["id"] for r in json.loads(out)] == [first]
    assert err.strip() == ("error: interrupted; the claims already checked are printed "
                           "(stdout); rerun the others with --claim")


def test_select_refuses_bytes_claim_ids():
    """F4: ``select(claim_ids=b"001.eq4.prox-sign")`` was read as its byte values ("unknown
    claim id(s): 48, 48, 49, ...")."""

    with pytest.raises(ValueError, match=r"claim_ids must be a claim id \(a str\) or a list"):
        paper_checks.select(claim_ids=b"001.eq4.prox-sign")


def test_done_and_verdicts_arguments_are_checked():
    """F5: ``run_claims(done=[])`` (and ``sensitivity``) was a TypeError after the claim ran,
    ``sensitivity(verdicts="holds")`` an AttributeError, and an unknown verdict in
    ``verdicts`` left its claim untested without a word."""

    from paper_checks.sensitivity import sensitivity

    claims = paper_checks.select(claim_ids=["001.eq4.prox-sign"])
    for bad in ([], "x"):
        with pytest.raises(ValueError, match="done must be a dict"):
            paper_checks.run_claims(claims, done=bad)
        with pytest.raises(ValueError, match="done must be a dict"):
            sensitivity(claims, done=bad)
    for bad in ("holds", {"001.eq4.prox-sign": "nonsense"}, {"001.eq4.prox-sign": []}):
        with pytest.raises(ValueError, match="verdicts must be a dict"):
            sensitivity(claims, verdicts=bad)


@pytest.mark.parametrize("kept", [
    {"mode": "quick"},
    {"mode": "quick", "seconds": 0, "claims": [], "sensitivity": {}},
    {"mode": "quick", "seconds": "x", "claims": {}, "sensitivity": {}},
    {"mode": "quick", "seconds": 0, "claims": {"003.x": {"id": "003.x"}}, "sensitivity": {}},
    {"mode": "quick", "seconds": 0, "claims": {"001.eq4.prox-sign": 5}, "sensitivity": {}}])
def test_report_resume_refuses_a_partial_file_it_did_not_write(kept, tmp_path, capsys):
    """F6 (of item 1's --resume): OUT.partial.json holding {"mode": "quick"} alone was a
    KeyError traceback, a list of claims a ValueError after the estimate, seconds "x" a
    TypeError after the run, an unknown claim id counted as done (134 claims estimated)."""
    out = tmp_path / "r.md"
    runner.partial_path(out).write_text(json.dumps(kept))
    code, _, err = _report(["--quick", "--no-sensitivity", "--no-progress", "--out", out,
                            "--max-minutes", "0.0001", "--resume"], capsys)
    assert code == 2 and "is not as a stopped run of this report writes it" in err


def test_select_names_paper_002_as_given(capsys):
    """F7: ``riskcalc check --paper 002 --claim 001.eq4.prox-sign`` was told "none of the
    claims 001.eq4.prox-sign is of paper 000", a paper not asked for; 002 is named, with
    what it stands for."""
    from tests.helpers import run_cli

    code, out, err = run_cli(["check", "--paper", "002", "--claim", "001.eq4.prox-sign"],
                             capsys)
    assert code == 2 and out == ""
    assert err.strip() == ("error: none of the claims 001.eq4.prox-sign is of paper 002 (the "
                           "same paper as 000; a claim id starts with its paper)")


def test_sensitivity_command_is_estimated_bounded_and_keeps_what_it_tested(monkeypatch,
                                                                           capsys):
    """F8: ``python -m paper_checks.sensitivity --full`` (about an hour on one worker) had no
    estimate, no progress and no time limit: it is refused above --max-minutes naming what
    would fit, and a run stopped at the limit prints the claims already tested."""
    from paper_checks import sensitivity as sens

    with pytest.raises(SystemExit) as exc:
        sens.main(["--full", "--max-minutes", "0.001"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "the mutation tests of 135 claims: estimated" in err or "claims: estimated" in err
    assert "the quick sizes (without --full), or allow more time with --max-minutes" in err

    first, second = [c.id for c in paper_checks.select("001")[:2]]

    def fake(claim_id, quick, base=None):
        if claim_id == second:
            time.sleep(30)
        return [{"id": claim_id, "verdict": "holds", "mutant": "x", "sensitive": True}]

    monkeypatch.setattr(sens, "_claim_records", fake)
    monkeypatch.setattr(timing, "estimate", lambda cs, quick: ({c.id: 0.0 for c in cs}, 0, 0))
    with pytest.raises(SystemExit) as exc:
        sens.main(["--claim", first, "--claim", second, "--json", "--no-progress",
                   "--max-minutes", "0.005"])
    assert exc.value.code == 2
    out, err = capsys.readouterr()
    assert [r["id"] for r in json.loads(out)] == [first]
    assert f"1 of 2 claims tested (printed above); not run: {second}." in err
