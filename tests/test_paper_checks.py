"""The claim catalogue's structure and the ``riskcalc check`` command (paper_checks)."""

import json

import pytest

import paper_checks
import riskcalc.cli
from paper_checks.core import CORRECTED, ERRATA, KINDS, PAPERS, Outcome, judge_erratum
from paper_checks.report import read_verdicts, render


TR = ("independent", "rests on words")


@pytest.fixture
def cli():
    return riskcalc.cli.main


def test_catalogue_covers_the_four_papers():
    claims = paper_checks.CLAIMS
    assert len(claims) >= 40
    for pid in PAPERS:
        assert sum(c.paper_id == pid for c in claims.values()) >= 3, pid
    for cid, c in claims.items():
        assert c.id == cid and c.paper == PAPERS[c.paper_id]
        assert c.kind in KINDS and c.location and c.statement


def test_seeds_depend_on_the_id_only():
    seeds = [c.seed for c in paper_checks.CLAIMS.values()]
    assert len(set(seeds)) == len(seeds)


def test_outcome_validates_verdicts():
    with pytest.raises(ValueError):
        Outcome("maybe", "x")
    with pytest.raises(ValueError):
        Outcome("erratum", "x", transcription=TR)      # an erratum needs its corrected form
    with pytest.raises(ValueError):
        Outcome("holds", "x", corrected="y")
    for level in CORRECTED:                 # loose and harmless errata carry their form too
        with pytest.raises(ValueError):
            Outcome(level, "x", transcription=TR if level in ERRATA else None)
    with pytest.raises(ValueError):
        Outcome("finding", "x", corrected="y")


def test_judge_erratum_levels():
    for level in CORRECTED:
        tr = TR if level in ERRATA else None
        assert judge_erratum(True, True, "s", {}, "c", level=level,
                             transcription=tr).verdict == level
    assert judge_erratum(False, True, "s", {}, "c", level="loose").verdict == "holds"
    assert judge_erratum(True, False, "s", {}, "c", level="erratum-harmless",
                         transcription=TR).verdict == "fails"
    with pytest.raises(ValueError, match="level"):
        judge_erratum(True, True, "s", {}, "c", level="wrong")
    with pytest.raises(ValueError, match="transcription"):
        judge_erratum(True, True, "s", {}, "c", level="erratum")


def test_select():
    assert {c.paper_id for c in paper_checks.select("002")} == {"000"}
    with pytest.raises(ValueError, match="paper must be one of"):
        paper_checks.select("999")
    with pytest.raises(ValueError, match="unknown claim"):
        paper_checks.select(None, ["003.nope"])


def test_report_roundtrip(tmp_path):
    res = paper_checks.run_claims(paper_checks.select(None, ["000.lemma7.mu0",
                                                             "003.sec5.experiments"]))
    path = tmp_path / "r.md"
    path.write_text(render(res, mode="quick", seconds=1.0))
    assert read_verdicts(path) == {"000.lemma7.mu0": "erratum-harmless",
                                   "003.sec5.experiments": "not checkable"}


def test_cli_json_contract(cli, capsys):
    assert cli(["check", "--claim", "000.lemma7.mu0", "--claim", "004.table1.middle-column",
                "--json", "--quick"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out] == ["000.lemma7.mu0", "004.table1.middle-column"]
    for r in out:
        assert set(r) == {"id", "paper", "location", "statement", "kind", "verdict", "evidence",
                          "corrected", "transcription", "transcription_note"}
        assert r["verdict"] in CORRECTED and r["corrected"]
        assert "summary" in r["evidence"]
    # an erratum states what it rests on; other verdicts carry null
    mu0, table = out
    assert mu0["transcription"] == "depends" and "PDF must show" in mu0["transcription_note"]
    assert table["transcription"] == "independent" and table["transcription_note"]


def test_errata_state_their_transcription(cli, capsys):
    # The three issue-21 cases: eq. (15) of paper 003 rests on squares the extraction may have
    # lost; eq. (16) holds whatever they were (its missing factor c0 is ordinary text).
    assert cli(["check", "--claim", "003.sec63.eq15-bias", "--claim", "003.sec63.eq16-variance",
                "--claim", "000.lemma7.loss-sup", "--json", "--quick"]) == 0
    out = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert out["003.sec63.eq15-bias"]["transcription"] == "depends"
    assert out["003.sec63.eq16-variance"]["transcription"] == "independent"
    for r in out.values():
        assert r["verdict"] in ("erratum", "erratum-harmless") and r["transcription_note"]
    assert cli(["check", "--claim", "003.sec63.eq15-bias", "--quick", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "rests on: the accusation assumes the extracted text is faithful" in out


def test_outcome_requires_transcription_for_errata():
    with pytest.raises(ValueError, match="transcription"):
        Outcome("erratum", "x", corrected="y")
    with pytest.raises(ValueError, match="transcription"):
        Outcome("erratum-harmless", "x", corrected="y", transcription=("maybe", "note"))
    with pytest.raises(ValueError, match="transcription"):
        Outcome("loose", "x", corrected="y", transcription=("depends", "note"))
    assert Outcome("erratum", "x", corrected="y",
                   transcription=("depends", "the PDF must show z")).transcription[0] == "depends"


def test_cli_table_and_list(cli, capsys):
    assert cli(["check", "--paper", "001", "--list"]) == 0
    assert "001.thm31.hypothesis" in capsys.readouterr().out
    assert cli(["check", "--claim", "001.thm43.katyusha-optimality", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "erratum" in out and "corrected:" in out and "1 claim (quick" in out
    assert "rests on: the accusation assumes the extracted text is faithful" in out


def test_cli_bad_input(cli, capsys):
    assert cli(["check", "--paper", "999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: paper must be one of") and err.count("\n") == 1
    assert cli(["check", "--claim", "003.nope"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown claim")


# --- Paper 001 Thms 4.2 / 4.4, paper 004 Thm 1 (adaptive lambda), Thm 2 and Cor. 1 (exact limits): verdicts
# (read from the session's one quick run of the whole catalogue, fixture quick_catalogue, which
# the regression test compares with REPORT.md).

@pytest.mark.parametrize("cid, verdict", [
    ("001.thm42.outer-rate", "holds"),
    ("001.thm42.complexities", "holds"),
    ("001.table1.iapgd-agd-optimality", "holds"),
    ("001.thm44.al2sgd-complexities", "holds"),
    ("001.thm44.communication-optimality", "loose"),
    ("001.thm44.local-optimality", "holds"),
    ("004.thm1.adaptive-lambda", "holds"),
    ("004.thm2.exact-limit-rate", "holds"),
    ("004.cor1.rounds-exact-limit", "holds"),
    ("004.thm2.inner-steps-exact", "holds"),
    ("004.cor1.computation-exact", "holds"),
])
def test_hanzely_and_adaptive_lambda_verdicts(quick_catalogue, cid, verdict):
    res = quick_catalogue[cid]
    assert res["verdict"] == verdict, res["evidence"]["summary"]


def test_iapgd_schedule_sum_matches_closed_form():
    # The term-by-term sum of ceil(T_k) exceeds the closed form of
    # riskcalc.minimax.iapgd_agd_complexity by at most one step per round.
    from paper_checks.p001 import _agd_schedule_sum
    from riskcalc import minimax

    c = minimax.iapgd_agd_complexity(100.0, 1.0, 10.0, 5, 1e-6)
    total = _agd_schedule_sum(100.0, 1.0, 10.0, 5, c["rounds"])
    assert 0 <= total - c["local_steps"] <= c["rounds"]


# --- Paper 000 Thms 4, 6, 11, 12: simulated scaling of the upper bounds (quick sizes; the
# results come from the session's one run of the catalogue, fixture quick_catalogue).

@pytest.mark.parametrize("cid", ["000.thm4.local-rate", "000.thm6.fedavg-rate",
                                 "000.thm11.fedprox-aer", "000.thm12.fedprox-ier"])
def test_paper000_upper_bound_verdicts(quick_catalogue, cid):
    res = quick_catalogue[cid]
    assert res["verdict"] == "holds", res["evidence"]["summary"]


def test_mc_exponents_recover_a_power_law():
    # Independent points y = 3 n^-1 m^0.5 with 5% multiplicative noise: the interval from the
    # Monte Carlo errors covers the exponents and has the width the noise implies.
    import numpy as np
    from paper_checks.p000_common import _mc_exponents

    rng = np.random.default_rng(0)
    n = np.array([100.0, 200, 400, 100, 200, 400])
    m = np.array([2.0, 2, 2, 8, 8, 8])
    samples = (3 / n * np.sqrt(m))[:, None] * (1 + 0.05 * rng.standard_normal((6, 400)))
    fit = _mc_exponents({"n": n, "m": m}, samples)
    assert fit["ci"]["n"][0] <= -1.0 <= fit["ci"]["n"][1]
    assert fit["ci"]["m"][0] <= 0.5 <= fit["ci"]["m"][1]
    assert fit["ci"]["n"][1] - fit["ci"]["n"][0] < 0.05


def test_check_shows_progress_unless_asked_not_to(capsys):
    from riskcalc.cli import main

    argv = ["check", "--claim", "000.lemma7.mu0", "--claim", "000.lemma7.loss-sup"]
    assert main(argv) == 0
    assert "claims" in capsys.readouterr().err
    assert main([*argv, "--no-progress", "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "2 claims" in out


def test_no_false_accusation_issue21():
    # Sec. 2's (m + sqrt(m L~/mu)) log 1/eps is Lan & Zhou's lower bound, not an error; eq. (18)
    # is judged against its printed form (ratio 9.0 at n = (4, 4000 x 9), growing like m).
    res = {r["id"]: r for r in paper_checks.run_claims(paper_checks.select(
        None, ["001.sec2.summand-lower-bound", "000.eq18.general-weights"]))}
    assert res["001.sec2.summand-lower-bound"]["verdict"] == "holds"
    eq18 = res["000.eq18.general-weights"]
    assert eq18["verdict"] == "erratum" and eq18["transcription"] == "depends"
    ratios = [row["ratio"] for row in eq18["evidence"]["rows"]]
    assert abs(ratios[0] - 9.008) < 0.01 and ratios[-1] > 900


def test_default_is_quick_and_results_come_in_the_order_asked(cli, capsys):
    ids = ["004.table1.middle-column", "000.lemma7.mu0", "003.sec5.experiments"]
    argv = ["check", *[a for i in ids for a in ("--claim", i)], "--no-progress"]
    assert cli([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out] == ids
    assert {r["evidence"]["mode"] for r in out} == {"quick"}
    assert cli([*argv, "--quick", "--json"]) == 0          # the alias: the same run
    assert [r["verdict"] for r in json.loads(capsys.readouterr().out)] == [r["verdict"]
                                                                           for r in out]
    with pytest.raises(SystemExit):
        cli([*argv, "--quick", "--full"])
    capsys.readouterr()


def test_text_lines_carry_location_statement_and_legend(cli, capsys):
    assert cli(["check", "--claim", "004.table1.middle-column", "--claim",
                "003.sec5.experiments", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = [ln for ln in lines if ln.startswith("erratum ")][0]
    # the verdict, the id, the location and the statement on one line
    assert "004.table1.middle-column (Table 1, column" in head and "min{R^2, 1/(mn)}" in head
    assert not any(" ^ " in ln or " v " in ln for ln in lines)     # min/max in words
    legend = lines[lines.index("Verdicts:") + 1:]
    assert [ln.split()[0] for ln in legend] == ["holds", "loose", "erratum-harmless",
                                                "erratum", "fails", "not", "finding", "check"]


def test_full_announces_its_time_estimate(cli, capsys):
    assert cli(["check", "--claim", "000.lemma7.mu0", "--full", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("full run of 1 claim: about ") and "last full run" in err
    assert "1 claim (full" in out


def test_statements_write_min_and_max_as_words():
    # ASCII '^' and 'v' between terms read as a power and a letter; statements use min{a, b}
    # and max{a, b} (the summaries are checked on two claims in the text test above).
    for c in paper_checks.CLAIMS.values():
        assert " ^ " not in c.statement and " v " not in c.statement, c.id


def test_a_check_that_raises_is_a_check_error_not_a_verdict_on_the_paper(cli, capsys,
                                                                        monkeypatch):
    import dataclasses

    def broken(cfg, seed):
        raise AttributeError("a route of this toolkit is broken")

    cid = "000.lemma7.mu0"
    monkeypatch.setitem(paper_checks.CLAIMS, cid,
                        dataclasses.replace(paper_checks.CLAIMS[cid], check=broken))
    assert cli(["check", "--claim", cid, "--json", "--no-progress"]) == 1
    out, err = capsys.readouterr()
    (row,) = json.loads(out)
    assert row["verdict"] == "check error" and "AttributeError" in row["evidence"]["summary"]
    assert err.strip().endswith(f"not of the papers): {cid}") and err.startswith("error: 1 ")
