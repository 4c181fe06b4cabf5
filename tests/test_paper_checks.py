"""The claim catalogue's structure and the ``riskcalc check`` command (paper_checks)."""

import json

import pytest

import paper_checks
import riskcalc.cli
from paper_checks.core import KINDS, PAPERS, VERDICTS, Outcome
from paper_checks.report import read_verdicts, render


@pytest.fixture
def cli(monkeypatch):
    # The lead registers "check" in riskcalc.cli.COMMANDS; until then the tests add it.
    if "check" not in riskcalc.cli.COMMANDS:
        monkeypatch.setattr(riskcalc.cli, "COMMANDS", riskcalc.cli.COMMANDS + ("check",))
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
        Outcome("erratum", "x")          # an erratum needs its corrected form
    with pytest.raises(ValueError):
        Outcome("holds", "x", corrected="y")


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
    assert read_verdicts(path) == {"000.lemma7.mu0": "erratum",
                                   "003.sec5.experiments": "not checkable"}


def test_cli_json_contract(cli, capsys):
    assert cli(["check", "--claim", "000.lemma7.mu0", "--claim", "004.table1.middle-column",
                "--json", "--quick"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in out] == ["000.lemma7.mu0", "004.table1.middle-column"]
    for r in out:
        assert set(r) == {"id", "paper", "location", "statement", "kind", "verdict", "evidence",
                          "corrected"}
        assert r["verdict"] in VERDICTS and r["verdict"] == "erratum" and r["corrected"]
        assert "summary" in r["evidence"]


def test_cli_table_and_list(cli, capsys):
    assert cli(["check", "--paper", "001", "--list"]) == 0
    assert "001.thm31.hypothesis" in capsys.readouterr().out
    assert cli(["check", "--claim", "001.thm43.katyusha-optimality", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "erratum" in out and "corrected:" in out and "1 claims (quick" in out


def test_cli_bad_input(cli, capsys):
    assert cli(["check", "--paper", "999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: paper must be one of") and err.count("\n") == 1
    assert cli(["check", "--claim", "003.nope"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown claim")
