"""Issue 32, fuzz40 (paper): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import paper_checks
from paper_checks.core import Config
from riskcalc import minimax
from tests.helpers import run_cli


def test_a_huge_jobs_is_capped_in_a_short_note(capsys):
    """F1: ``check --jobs 1e100`` printed all 101 digits of 10**100 in its capping note."""
    code, _, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--jobs", "1e100"], capsys)
    assert code == 0
    note = err.splitlines()[0]
    assert note.startswith("note: --jobs 1e+100 capped at the") and len(note) < 80


def _fig2_rounds(cfg, seed):
    # the quick run's round counts (paper_checks.p001._rounds, 8 runs of 1200 iterations)
    return 1e-2, np.array([1e-2, 1e-1, 10.0, 100.0]), {
        "apgd1": np.array([6.0, 15.0, 212.0, 788.0]), "apgd2": np.array([79.0, 65.0, 44.0, 44.0])}


def test_fig2_rejects_apgd2_without_its_root(monkeypatch):
    """F2 (rejection audit): ``001.fig2.apgd1-vs-apgd2`` checked APGD2's rounds only against
    the budget sqrt(L/mu) log 1/eps from ``minimax.apgd_complexity``, an upper bound: the wrong
    order L/mu log 1/eps (the root dropped) is a larger budget and held too. APGD2's exponent
    in 1/mu is now measured over one decade of mu against the formula's."""
    from paper_checks import p001

    claim = paper_checks.CLAIMS["001.fig2.apgd1-vs-apgd2"]
    monkeypatch.setattr(p001, "_rounds", _fig2_rounds)
    assert claim.check(Config(True), claim.seed).verdict == "holds"
    right = minimax.apgd_complexity

    def no_root(L, mu, lam, eps):
        out = dict(right(L, mu, lam, eps))
        out["apgd2"] = out["apgd2"] * np.sqrt(L / mu)
        return out
    monkeypatch.setattr(minimax, "apgd_complexity", no_root)
    assert claim.check(Config(True), claim.seed).verdict == "fails"


def test_check_stopped_before_any_claim_says_so(capsys):
    """F3: ``check --max-minutes 1e-300`` stopped before the first claim finished, then drew
    the table of no claims: ``error: max() arg is an empty sequence``. Now the stop is the
    error, naming the claims not run (and no "(printed above)")."""
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--max-minutes", "1e-300",
                              "--no-progress"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: stopped at the --max-minutes limit") and "max()" not in err
    assert "0 of 1 claims checked; not run: 001.eq4.prox-sign" in err


def test_iapgd_agd_names_mu_and_the_entry_it_refuses():
    """F4: ``iapgd_agd_complexity`` refused lam <= mu as "got lam=[2, 1]" (neither mu nor the
    entry; ``bounds iapgd_agd_complexity --lam 0.5,2`` the same), where the other bounds of
    paper 001 name both, as ``_common._offending`` writes them."""
    with pytest.raises(ValueError, match=r"got lam=1, mu=1 \(entry 1 of 2\)$"):
        minimax.iapgd_agd_complexity(10, 1, [2, 1], 10, 0.5)


def _no_run(*args, **kwargs):
    raise AssertionError("the report ran: --out was not refused first")


@pytest.mark.parametrize("target", ["seconds", "paper"])
def test_report_never_writes_over_a_file_it_reads(target, tmp_path, monkeypatch, capsys):
    """F5: ``python -m paper_checks.report --out PATH`` took a file the run reads: a paper's
    text (replaced by the report after the run, as root even in the read-only papers folder)
    or ``full_seconds.json`` (a full run rewrote it over the report). Refused before the run."""
    import paper_checks.numbered
    from paper_checks import report

    (tmp_path / "papers").mkdir()
    for name in paper_checks.core.PAPERS.values():
        (tmp_path / "papers" / name).write_text("a paper\n")
    monkeypatch.setattr(paper_checks.numbered, "papers_dir", lambda: tmp_path / "papers")
    monkeypatch.setattr(paper_checks, "run_claims", _no_run)
    out = (report.FULL_SECONDS if target == "seconds"
           else tmp_path / "papers" / paper_checks.core.PAPERS["003"])
    with pytest.raises(SystemExit) as exc:
        report.main(["--quick", "--no-sensitivity", "--out", str(out)])
    assert exc.value.code == 2
    assert "is a file the report reads" in capsys.readouterr().err


def test_sensitivity_says_why_a_claim_asked_for_is_not_tested(capsys):
    """F6: ``python -m paper_checks.sensitivity --claim 003.sec5.experiments`` (not checkable)
    printed "0 claims tested" and nothing on the claim asked for; now a note names it and
    the verdicts that are tested."""
    from paper_checks.sensitivity import main

    assert main(["--claim", "003.sec5.experiments", "--json", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "[]"
    assert err.startswith("note: not tested: 003.sec5.experiments: a verdict other than holds")


def test_one_claim_is_timed_on_one_worker(monkeypatch, capsys):
    """F7: ``check --claim ID --jobs 2 --max-minutes M`` halved the claim's estimate (one claim
    runs in one process), so a claim estimated over the limit started and ran into it; and
    a single claim over the limit was advised to "run fewer claims at once" and "use more
    workers (--jobs 2)". Now one claim is timed on one worker, with advice that applies."""
    from paper_checks import estimate as timing

    monkeypatch.setattr(timing, "estimate",
                        lambda claims, quick: ({c.id: 10.0 for c in claims}, 0, 10.0))
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--jobs", "2",
                              "--max-minutes", "0.1", "--no-progress"], capsys)
    assert code == 2 and out == ""
    assert "estimated 10 s of work on 1 worker(s), more than the 6 s allowed" in err
    assert "a claim runs in one process, or allow more time" in err
    assert "--jobs" not in err and "fewer claims" not in err


def test_table1_iapgd_rejects_a_gradient_bound_without_its_root(monkeypatch):
    """F8 (rejection audit): ``001.table1.iapgd-agd-optimality`` compared IAPGD+AGD's local
    gradients with the lower bound at one L/mu only, where a bound L/mu log 1/eps (the root
    dropped) moved every ratio by one constant and the check held. A second L/mu (1e6) now
    makes the ratio's spread show it."""
    claim = paper_checks.CLAIMS["001.table1.iapgd-agd-optimality"]
    assert claim.check(Config(True), claim.seed).verdict == "holds"
    right = minimax.gradient_oracle_lower_bound
    monkeypatch.setattr(minimax, "gradient_oracle_lower_bound",
                        lambda L, mu, eps: right(L, mu, eps) * np.sqrt(L / mu))
    assert claim.check(Config(True), claim.seed).verdict == "fails"
