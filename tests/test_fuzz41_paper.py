"""Issue 32, fuzz41 (paper): what this fuzz found, each test failing before."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from riskcalc import minimax
from tests.helpers import run_cli


def _alg1_rounds(t, eps):
    """Rounds exact-prox IAPGD (paper 001, Alg. 1, momentum (sqrt(lam) - sqrt(mu))/(sqrt(lam) +
    sqrt(mu))) needs to bring F(x^k) - F* below eps (F(x^0) - F*), in mpmath (60 digits), on the
    consensus direction of curvature mu = 1 (the slowest: the prox there is e -> lam/(mu + lam)
    e of the mean's error e, the gap is e^2/2; the clients' deviations are solved in one round)."""
    with mpmath.workdps(60):
        lam = mpmath.mpf(t)
        beta = (mpmath.sqrt(lam) - 1) / (mpmath.sqrt(lam) + 1)
        c = lam / (1 + lam)
        e = y = mpmath.mpf(1)
        for k in range(1, 10_000):
            new = c * y
            y, e = new + beta * (new - e), new
            if e * e <= eps:
                return k
    raise AssertionError("no convergence")


@pytest.mark.parametrize("t", ["1.0000000000000002", "1.5", "2"])
def test_iapgd_agd_rounds_cover_the_algorithm_near_mu(t):
    """F1: ``iapgd_agd_complexity`` counted rounds with Thm 4.2's printed rate 1 - sqrt(mu/lam),
    too fast below lam ~ 2.3 mu: 7 rounds to eps = 1e-100 at lam = mu (1 + 2e-16), where Alg.
    1 needs 167. The default is now the contraction 1 - sqrt(mu/(lam + mu)) of (6)'s condition
    number; ``printed=True`` keeps the paper's count."""
    need = _alg1_rounds(t, mpmath.mpf("1e-100"))
    out = minimax.iapgd_agd_complexity(10, 1, float(t), 10, 1e-100)
    with mpmath.workdps(60):
        q = 1 - mpmath.sqrt(1 / (mpmath.mpf(float(t)) + 1))
        want = int(mpmath.ceil(mpmath.log(8 / mpmath.mpf("1e-100")) / -mpmath.log(q)))
    assert out["rounds"] == want >= need
    printed = minimax.iapgd_agd_complexity(10, 1, float(t), 10, 1e-100, printed=True)
    assert printed["rounds"] < need


def test_bounds_lists_the_printed_iapgd_rate(capsys):
    """F1: the command line gives both counts (190 and the paper's 7 at lam = mu (1 + 2e-16))."""
    argv = ["bounds", "iapgd_agd_complexity", "--L", "10", "--mu", "1", "--lam",
            "1.0000000000000002", "--n", "10", "--eps", "1e-100"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and " rounds=190 " in out
    argv[1] = "iapgd_agd_complexity_printed"
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and " rounds=7 " in out


def test_outer_rate_check_reaches_the_edge_of_its_scope():
    """F2: ``001.thm42.outer-rate`` ran Thm 4.2's printed rate from lam = 3 mu only, saying
    nothing of 1 < lam/mu < 3. The printed rate holds exactly from lam/mu = (3 + sqrt(5))/2 =
    2.618 (where Alg. 1's squared spectral radius on the consensus direction meets 1 -
    sqrt(mu/lam)); the check runs from 2.7 mu and its mpmath route shows both sides of the
    edge, which its statement names."""
    from paper_checks import CLAIMS
    from paper_checks.p001_iapgd import consensus_ratio

    assert consensus_ratio(2.6, 2000) > 8 >= consensus_ratio(2.62, 2000)
    assert "2.618 mu" in CLAIMS["001.thm42.outer-rate"].statement


def test_sensitivity_refuses_a_claim_given_twice(capsys):
    """F3: ``python -m paper_checks.sensitivity --claim X --claim X`` ran X once, where
    ``riskcalc check`` refuses the repeat (a value given twice on a command line is refused,
    docs/safety.rst): one rule, ``riskcalc._text.claims_once``, refused before any run."""
    from paper_checks import sensitivity

    with pytest.raises(SystemExit) as exc:
        sensitivity.main(["--claim", "001.eq4.prox-sign", "--claim", "001.eq4.prox-sign"])
    assert exc.value.code == 2
    assert "--claim 001.eq4.prox-sign given twice" in capsys.readouterr().err


def test_check_counts_one_claim_in_the_singular(capsys):
    """F3: ``check --claim X --full --max-minutes 1e-6`` said "1 full claim checks"."""
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--full",
                              "--max-minutes", "1e-6", "--no-progress"], capsys)
    assert code == 2 and err.startswith("error: 1 full claim check: estimated")


def test_numbered_denominator_counts_figures_and_numbered_captions():
    """F4: the coverage denominator read from the texts (``paper_checks.numbered``) had no
    figure at all (17 numbered figures over the four texts: 000 Fig. 1 and 001 Fig. 2 are
    checked, the rest are real-data experiments) and missed paper 004's Table 3, whose caption
    follows the review copy's line number ("1777 Table 3: ..."). Each is now listed and graded,
    with the reason where it is not checkable."""
    from paper_checks.numbered import RESULTS, find_results, papers_dir

    if papers_dir() is None:
        pytest.skip("the papers' text files are not beside the repository")
    found = {(p, label) for p in ("003", "000", "001", "004") for label, _ in find_results(p)}
    assert {("004", "Table 3"), ("004", "Figure 2"), ("000", "Figure 1"),
            ("001", "Figure 2"), ("003", "Figure 12")} <= found
    graded = {(r[0], r[1]): r[4] for r in RESULTS}
    assert graded["001", "Figure 2"] == "full" and graded["004", "Table 3"] == "not checkable"
    assert sum(label.startswith("Figure") for _, label in found) == 17


def test_bounds_names_a_count_range_past_its_end(capsys):
    """F5: ``bounds ... --n 1.5e100`` (a count past its end) was told "must be of magnitude in
    [1e-100, 1e+100] (or 0, where the bound takes 0)", neither of which a count may take; the
    Python function names the count's range, as ``--n 0`` already did."""
    code, out, err = run_cli(["bounds", "iapgd_agd_complexity", "--L", "10", "--mu", "1",
                              "--lam", "2", "--n", "1.5e100", "--eps", "0.1"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "error: n must lie in [1, 1e+100] (a count), got 1.5e+100"


def test_a_value_below_the_floats_is_not_told_to_be_zero_where_zero_is_refused(capsys):
    """F6: ``check --max-minutes 1e-400`` was told "give 0 or a number above 1e-300", and
    ``--max-minutes 0`` "must be a finite number > 0" (two refusals contradicting each other;
    ``bounds ... --n 1e-400``, a count, the same): the advice gives 0 only where allowed."""
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--max-minutes",
                              "1e-400"], capsys)
    assert code == 2 and out == "" and "give 0 or" not in err
    assert err.strip().endswith("give a number above 1e-300, or 0 where 0 is allowed")


@pytest.mark.parametrize("kwargs, message", [
    ({"quick": "no"}, "quick must be True or False"),
    ({"n_jobs": 0}, "n_jobs must be an integer >= 1"),
])
def test_sensitivity_checks_its_arguments_as_run_claims_does(kwargs, message):
    """F7: ``sensitivity(claims, quick="no")`` made every check raise inside, read as "fails",
    and returned no record (nothing tested, silently); ``n_jobs=0`` was taken and a list of
    ids was an AttributeError. The arguments are checked as ``run_claims`` checks them."""
    from paper_checks import select
    from paper_checks.sensitivity import sensitivity

    with pytest.raises(ValueError, match=message):
        sensitivity(select(None, ["001.eq4.prox-sign"]), **kwargs)
    with pytest.raises(ValueError, match="claims must be a list of paper_checks.Claim"):
        sensitivity(["001.eq4.prox-sign"])


def test_numbered_coverage_reads_one_id_given_as_a_string():
    """F8: ``numbered_coverage(insensitive="000.thm4.local-rate")`` read the string as its
    characters and demoted nothing (Theorem 4 stayed full); ``coverage(claim_ids=...)``
    matched a string by substring. A string is one id, as in ``paper_checks.select``."""
    from paper_checks.coverage import coverage, numbered_coverage

    cov = numbered_coverage(insensitive="000.thm4.local-rate")
    thm4 = [s for s in cov["000"]["statements"] if s["statement"] == "Theorem 4"][0]
    assert thm4["status"] == "partial"
    rows = [("000", "x", "y", "full", ["000.thm4"], "")]
    assert coverage(rows, claim_ids="000.thm4.local-rate")["000"]["none"] == 1


def test_logistic_constants_take_a_dimension_as_the_other_bounds_do(capsys):
    """F9: ``logistic_constants(c_x, D, d=0.5)`` answered for half a coordinate where
    ``lower_bound_aer(d=0.5)`` and the command line refuse it, and ``bounds logistic_constants
    --d 0`` named the magnitudes, not a dimension's range."""
    with pytest.raises(ValueError, match=r"d must lie in \[1, 1e\+100\] \(a count\)"):
        minimax.logistic_constants(1, 1, 0.5)
    code, out, err = run_cli(["bounds", "logistic_constants", "--c_x", "1", "--D", "1", "--d",
                              "0"], capsys)
    assert code == 2 and err.strip() == "error: d must lie in [1, 1e+100] (a count), got 0.0"


def test_theorem_4_and_6_refusals_name_the_point():
    """F10: paper 000's Theorem 4 and 6 refusals printed the arguments' reprs (a whole list,
    ``beta=np.float32(100.0)``) or N alone; they name the offending point as the other bounds
    do (``_common._offending``)."""
    with pytest.raises(ValueError, match=r"got n_i=200, beta=100, mu=1 \(entry 1 of 2\)$"):
        minimax.local_ier_bound([1, 100], 1, 1, 200)
    with pytest.raises(ValueError, match=r"got N=200, beta=100, mu=1 \(entry 1 of 2\)$"):
        minimax.fedavg_ier_bound([1, 100], 1, 1, 1, 200)
    with pytest.raises(ValueError, match=r"got N=1, beta=1e\+100, mu=1e-100$"):
        minimax.fedavg_aer_bound(1e100, 1e-100, 1e100, 1e100, 1)


@pytest.mark.parametrize("args, message", [
    ((["001"],), "paper_id must be one of"),
    (("001", 5), "where must be a string"),
    (("001", None), "where must be a string"),
])
def test_cite_refuses_what_it_cannot_cite(args, message):
    """F11: ``riskcalc.papers.cite(["001"])`` was "TypeError: unhashable type: 'list'";
    ``cite("001", 5)`` printed ", 5" and ``cite("001", None)`` dropped the place silently."""
    from riskcalc.papers import cite

    with pytest.raises(ValueError, match=message):
        cite(*args)


def test_fit_constants_keeps_the_interval_of_an_identified_constant():
    """F12: ``fit_constants`` with one term 0 on the whole grid gave every constant an
    infinite interval, the one the errors pin (a = 2.04 here) too; only the unidentified
    constant's interval is infinite now."""
    from riskcalc.minimax.ratecheck import fit_constants

    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    fit = fit_constants({"a": x, "b": 0 * x}, 2 * x * np.exp(0.01 * np.arange(5)))
    lo, hi = fit.ci["a"]
    assert 1.9 < lo < fit.constants["a"] < hi < 2.2
    assert fit.ci["b"] == (0.0, np.inf)


def test_full_estimate_says_no_claim_is_untimed_only_when_some_is(capsys, monkeypatch):
    """F13: ``check --claim X --full`` announced "0 claims without a recorded time counted at
    0 s each" (a count of none, at a time rounded to 0); the clause is said only for claims
    without a recorded time, with their time to 3 digits."""
    from paper_checks import estimate as timing
    from riskcalc.cli import check

    monkeypatch.setattr(check, "_run_claims", lambda claims, quick, args: ([], None))
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--full",
                              "--no-progress"], capsys)
    assert code == 0 and "without a recorded time" not in err
    monkeypatch.setattr(timing, "recorded_seconds", lambda quick: {"001.sec2.summand-lower-bound":
                                                                  0.03})
    code, out, err = run_cli(["check", "--claim", "001.eq4.prox-sign", "--claim",
                              "001.sec2.summand-lower-bound", "--full", "--no-progress"], capsys)
    assert code == 0 and "; 1 claim without a recorded time counted at 0.03 s each)" in err
