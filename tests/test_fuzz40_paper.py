"""Issue 32, fuzz40 (paper): what this fuzz found, each test failing before."""

from tests.helpers import run_cli


def test_a_huge_jobs_is_capped_in_a_short_note(capsys):
    """F1: ``check --jobs 1e100`` printed all 101 digits of 10**100 in its capping note."""
    code, _, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--jobs", "1e100"], capsys)
    assert code == 0
    note = err.splitlines()[0]
    assert note.startswith("note: --jobs 1e+100 capped at the") and len(note) < 80
