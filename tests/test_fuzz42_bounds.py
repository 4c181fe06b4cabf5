"""Issue 32, fuzz42 (bounds): what this fuzz found, each test failing before."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from riskcalc import minimax as mm
from tests.helpers import run_cli

_IER = ["bounds", "fedprox000_ier", "--beta", "1", "--mu", "1", "--loss_sup", "1", "--sigma2",
        "1", "--D", "1", "--R", "0.1"]


@pytest.mark.parametrize("sizes, message", [
    (["--n_i", "4", "--N", "8", "--m", "1"], "N must equal n_i when m = 1"),
    (["--n_i", "4", "--N", "7", "--m", "2"], "N must be >= n_i + (m - 1)*4*beta/mu"),
    (["--n_i", "4", "--N", "4", "--m", "4"], "got n_i=4, N=4, m=4, beta=1, mu=1"),
])
def test_fedprox000_ier_refuses_a_federation_that_cannot_exist(sizes, message, capsys):
    """F1: paper 000's FedProx IER (Thm 12) answered for one client holding n_i = 4 of N = 8
    samples alone (m = 1), and for m = 4 clients sharing N = 4 with n_i = 4: N = n_1 + ... +
    n_m (eq. 2) and every n_j >= 4 beta/mu, so N >= n_i + (m - 1) 4 beta/mu, N = n_i at
    m = 1."""
    code, out, err = run_cli(_IER + sizes, capsys)
    assert code == 2 and out == "" and message in err and len(err.splitlines()) == 1
    code, out, _ = run_cli(_IER + ["--n_i", "4", "--N", "8", "--m", "2"], capsys)
    assert code == 0 and "value=2.04099" in out
    assert mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, 4, 4, 1) == pytest.approx(2.7)
    with pytest.raises(ValueError, match=r"entry 1 of 2"):
        mm.fedprox_ier_bound(1, 1, 1, 1, 1, 0.1, [4, 8], [8, 16], [2, 4])


@pytest.mark.parametrize("count", ["9007199254740993e0", "9.007199254740993e15",
                                   "90071992547409930e-1", "1234567890123456789e1"])
def test_bounds_count_in_exponent_form_keeps_its_digits(count, capsys):
    """F2: a count written with an exponent was read through a float whatever its digits:
    --N 9007199254740993e0 computed and printed N=9007199254740992.0 where the same digits
    without the exponent were refused. One rule now: the double must keep every significant
    digit written (1e100 and 100000000000000000000000 keep their one digit)."""
    argv = ["bounds", "lower_bound_ier", "--d", "10", "--n_i", "10", "--R", "1", "--N"]
    code, out, err = run_cli(argv + [count], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"error: --N is a total number of samples: {count} is not a double")
    for kept, shown in (("1e23", "N=1e+23 "), ("100000000000000000000000", "N=1e+23 "),
                        ("123456789012345e10", "N=1.23456789012345e+24 ")):
        code, out, err = run_cli(argv + [kept], capsys)
        assert code == 0 and shown in out, err


def test_bounds_echoes_minus_zero_as_zero(capsys):
    """F3: --R -0 was echoed R=-0 (and "R": -0.0 in JSON): a radius of -0 is the radius 0."""
    argv = ["bounds", "lower_bound_ier", "--d", "10", "--n_i", "10", "--N", "100", "--R", "-0"]
    code, out, _ = run_cli(argv, capsys)
    assert code == 0 and " R=0  ->  value=0.1" in out
    code, out, _ = run_cli(argv + ["--json"], capsys)
    assert code == 0 and '"R": 0.0' in out and "-0" not in out


@pytest.mark.parametrize("module", ["paper_checks.core", "paper_checks.p001"])
def test_a_catalogue_module_run_as_a_command_says_so_without_a_warning(module):
    """F4: ``python -m paper_checks.core`` printed runpy's RuntimeWarning ("found in
    sys.modules after import of package 'paper_checks'"; the package imports every catalogue
    module) and did nothing; ``-m paper_checks.p001`` printed it before its own refusal. Now
    one line naming the module and the commands, exit 2, before the catalogue loads (a
    subprocess: only ``python -m`` shows it; 0.1 s)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", module],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: {module} is part of the claim catalogue, not a "
                                  "command") and proc.stderr.count("\n") == 1


def _verdict(claim_id, monkeypatch, name, mutant):
    """The quick verdict of ``claim_id`` with ``riskcalc.minimax.NAME``'s output mapped by
    ``mutant(out, *args)`` (benchmarks/paper_formula_mutants.py's injection)."""
    import paper_checks
    from paper_checks.core import Config

    fn = getattr(mm, name)
    monkeypatch.setattr(mm, name, lambda *a, **k: mutant(fn(*a, **k), *a))
    claim = paper_checks.CLAIMS[claim_id]
    return claim.check(Config(True), claim.seed).verdict


def test_lemma7_beta_check_rejects_a_lost_square_on_c_x(monkeypatch):
    """F5: 000.lemma7.beta-sigma checked beta = sigma^2 = c_X^2 d/4 at c_X = 1 only, where a
    lost square (beta = c_X d/4, a formula mutant) reads the same: the check held it. Now
    c_X = 0.5."""
    assert _verdict("000.lemma7.beta-sigma", monkeypatch, "logistic_constants",
                    lambda out, cx, D, d: {**out, "beta": cx * d / 4}) == "fails"


def test_table1_chen_check_rejects_a_lost_root_on_m(monkeypatch):
    """F6: 004.table1.chen-column compared the corrected row ||l||/(n sqrt m) with paper 000's
    eq. (29) in its n exponent only (m = 10): ||l||/(n m), a root lost on m, was accepted as
    the corrected form. Now its m exponent too (m = 10 -> 1000)."""
    assert _verdict("004.table1.chen-column", monkeypatch, "table1_rates",
                    lambda out, R, n, m, *a: {**out, "chen": out["chen"] / m ** 0.5}) == "fails"


def test_lemma7_word_swap_declares_a_mutant_and_rejects_it():
    """F7: 000.lemma7.proof-monotonicity (x/(1 + x)^2 rises on (0, 1), falls beyond) declared
    no mutant, so nothing showed its check would reject a wrong corrected form; its turning
    point 1 now goes through the seam, and the check rejects it moved (x1.5)."""
    from paper_checks.sensitivity import _claim_records

    [rec] = _claim_records("000.lemma7.proof-monotonicity", True)
    assert rec["mutant"] == "equality x1.5" and rec["sensitive"], rec


@pytest.mark.parametrize("call, name", [
    (lambda: mm.fedavg_weighted_bounds(1, 1, 1, 1, [0.1, 0.2], [0.5, 0.5], [4, 8]), "R"),
    (lambda: mm.fedprox_aer_bound_weighted(1, [1, 0.5], 1, 0.1, [0.5, 0.5], [8, 16]), "mu"),
    (lambda: mm.local_aer_weighted([1, 2], 1, 1, [0.5, 0.5], [8, 16]), "beta"),
    (lambda: mm.fedprox_aer_bound_weighted(1, 1, 1, [0.1], [0.5, 0.5], [4, 8]), "R"),
])
def test_weighted_bounds_take_one_number_per_constant(call, name):
    """F8: paper 000's bounds for general weights (Thms 4, 6, 11) sum over the clients' p and
    n; a list for beta, mu, loss_sup, sigma2 or R was numpy's TypeError "only 0-dimensional
    arrays can be converted to Python scalars" (or "The truth value of an array ... is
    ambiguous"), naming nothing. Now a ValueError naming the parameter."""
    with pytest.raises(ValueError, match=f"^{name} must be a number, got an array of shape"):
        call()
    assert mm.fedprox_aer_bound_weighted(1, 1, 1, 0.1, [0.5, 0.5], [4, 8]) == pytest.approx(
        0.27410254037844384, rel=1e-15)


def test_record_results_take_the_parameters_shape():
    """F9: the bounds that return a record (paper 004 Thm 1's constants and lambda) kept the
    shape of each field: fedprox_constants(L=[1, 2]) gave C1 = 32.0 beside C2 = [32, 128], and
    fedprox_lambda(L=[200, 300]) is_lower = True beside two lambdas (results of dicts were
    spread to the parameters' shape already)."""
    c = mm.fedprox_constants([1.0, 2.0], 1, 1)
    assert [v.tolist() for v in c] == [[32, 32], [32, 128], [192, 192], [198, 792]]
    lam = mm.fedprox_lambda([200, 300], 1, 1, 0.1, 16, 2)
    assert lam.is_lower.tolist() == [True, True] and lam.lam.shape == (2,)
    assert mm.fedprox_constants(1, 1, 1).C1 == 32.0         # numbers stay numbers


def test_overall_coverage_of_no_checkable_statement():
    """F10: ``paper_checks.coverage.overall`` divided by the number of checkable statements:
    an empty listing, or one whose statements are all not checkable, was a ZeroDivisionError;
    now share 1 as ``coverage`` gives per paper."""
    from paper_checks.coverage import coverage, overall

    for rows in ([], [("003", "Sec. 5", "real data", "not checkable", [], "private")]):
        cov = coverage(rows)
        assert all(r["share"] == 1.0 for r in cov.values())
        assert overall(cov) == (0, 1.0)
