"""Issue 32, fuzz38 (paper): what this fuzz found, each test failing before."""

import math

import numpy as np
import pytest

from paper_checks.core import Config
from paper_checks.errata import thm42_local_order_scale
from paper_checks.p001 import table1_iapgd, thm42_grid
from paper_checks.p001_iapgd import eq4_prox_sign
from paper_checks.p001_lower import sec32
from riskcalc import minimax as mm
from tests.helpers import run_cli


@pytest.mark.parametrize("call, message", [
    (lambda: mm.al2sgd_complexity(4, 1, 1, 0.5, 0.5),
     "m must lie in [1, 1e+100] (a count), got 0.5"),
    (lambda: mm.iapgd_agd_complexity(4, 1, 2, 1e-100, 0.5), "n must lie in [1, 1e+100]"),
    (lambda: mm.local_aer_weighted(1, 1, 1, [0.5, 0.5], [0.5, 10]), "n must lie in [1, 1e+100]"),
    (lambda: mm.fedprox_global_error_bound(1, 1, 1, 0, 0.25, 8), "n must lie in [1, 1e+100]"),
    (lambda: mm.evaluate("lower_bound_aer", d=0.5, N=10, m=2, R=0), "d must lie in [1, 1e+100]"),
])
def test_python_bounds_refuse_counts_below_one(call, message):
    """F1: the Python bounds answered for half a client or 1e-100 samples
    (``al2sgd_complexity(m=0.5)``: local_order 1.44) where every theorem counts at least one
    client, sample, summand or dimension and the command line refuses (whole numbers)."""
    with pytest.raises(ValueError) as exc:
        call()
    assert message in str(exc.value)


def test_cli_and_python_name_the_same_range_for_a_count(capsys):
    """F1: ``bounds ... --m 0`` said "[1e-100, 1e+100]" (the magnitudes), where 0.5 in Python
    is now refused as below 1: one range for a count on both routes."""
    code, out, err = run_cli(["bounds", "al2sgd_complexity", "--L_tilde", "4", "--mu", "1",
                              "--lam", "1", "--m", "0", "--eps", "0.5"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "error: m must lie in [1, 1e+100] (a count), got 0.0"


def test_thm42_local_order_is_scale_free():
    """F2: paper 001 Thm 4.2's local order was encoded as printed, log(L lam n / mu): rescaling
    every f_i (L, mu, lam times 1e-60) moved it from 2.2e7 to -7.3e7 (negative) while the
    schedule's sum (local_steps, 6.9e7) and the rounds stay; now log(L lam n / mu^2), the
    schedule's own order (ERRATA), equal at mu = 1 and under every rescaling."""
    one = mm.iapgd_agd_complexity(1, 1, 1e10, 10, 1e-3)
    tiny = mm.iapgd_agd_complexity(1e-60, 1e-60, 1e-50, 10, 1e-3)
    assert tiny["local_steps"] == pytest.approx(one["local_steps"], rel=1e-12)
    assert tiny["local_order"] == pytest.approx(one["local_order"], rel=1e-12)
    assert one["local_order"] == pytest.approx(
        math.sqrt(1 + 1e10) * math.log(1e3) * (math.log(1e11) + math.log(1e3)), rel=1e-12)


def test_thm42_local_order_erratum_is_recorded():
    """F2: the erratum is a claim of the catalogue (its check, 0.1 s): the schedule's sum over
    the printed order leaves any band over rescaled instances; over the corrected one it stays
    within x10; graded harmless (the O~ conclusion stands) and resting on the extraction."""
    out = thm42_local_order_scale(Config(True), 0)
    assert out.verdict == "erratum-harmless", out.summary
    assert out.transcription[0] == "depends"


def test_al2sgd_answers_below_mu_as_its_theorem_states(capsys):
    """F3: AL2SGD+ (paper 001, Thm 4.4) refused lam < mu as "optimal against Theorem 3.1's
    bound for lam >= mu": Thm 3.1's hypothesis restricts the lower bound, Thm 4.4 states none
    (p = lam/(lam + L~) is defined for every lam), and the refusal also hid its local order,
    which holds for every lam. It answers the printed orders again (Notes: what they mean
    below mu)."""
    out = mm.al2sgd_complexity(4, 1, 1e-2, 16, math.exp(-1))
    # fuzz39 paper F6: below mu the order is max{1, sqrt(lam/mu)} log 1/eps (erratum)
    assert out["rounds_order"] == pytest.approx(1.0, rel=1e-12)
    assert out["local_order"] == pytest.approx(16 + math.sqrt(16 * 4.01), rel=1e-12)
    code, out, err = run_cli(["bounds", "al2sgd_complexity", "--L_tilde", "4", "--mu", "1",
                              "--lam", "1e-2", "--m", "16", "--eps", "0.5"], capsys)
    assert code == 0 and err == "" and "rounds_order=0.693147" in out


def test_thm42_check_rejects_a_communication_order_without_its_log():
    """F4 (referee's audit): 001.thm42.complexities accepts a stated order when rounds over it
    stay within x10 over its grid; with eps in [1e-12, 1e-2] log(1/eps) moved only x6, so the
    wrong order sqrt(lam/mu) (no log 1/eps) passed as well (verdict unchanged under that
    mutation of the check). Its grid now reaches eps = 1e-60, where that order leaves the band
    and the stated one stays in it."""
    for quick in (True, False):
        grid = thm42_grid(Config(quick))
        rounds = np.array([mm.iapgd_agd_complexity(L, 1.0, lam, n, eps)["rounds"]
                           for L, lam, n, eps in grid], float)
        lam, eps = np.array([g[1] for g in grid]), np.array([g[3] for g in grid])
        stated_order, no_log = rounds / (np.sqrt(lam) * np.log(1 / eps)), rounds / np.sqrt(lam)
        assert stated_order.max() / stated_order.min() < 10 < no_log.max() / no_log.min()


def test_gradient_lower_bound_check_sees_the_log_factor():
    """F5 (referee's audit): 001.sec32.lower-bounds measured the fewest gradient calls over
    sqrt(kappa) log(1/eps) at one eps (1e-6) only, so a stated bound without its log(1/eps)
    (calls / sqrt(kappa): 3.50, 3.48, 3.46) stayed in the check's x1.5 band as well. It now
    measures at eps = 1e-3 and 1e-12: the stated rate stays flat, the log-less one moves x4."""
    out = sec32(Config(True), 0)
    rows = out.evidence["gradient_oracle"]
    stated_rate = [r["lower_over_rate"] for r in rows]
    no_log = [r["lower_calls"] / math.sqrt(r["kappa"]) for r in rows]
    assert out.verdict == "holds" and max(stated_rate) / min(stated_rate) < 1.5
    assert max(no_log) / min(no_log) > 1.5


def test_eq4_prox_step_sign_is_recorded():
    """F6 (recount of paper 001's numbered equations): eq. (4) prints PGD's step as argmin
    phi(x) - L_h/2 ||x - v||^2, which has no minimizer (Hessian eigenvalue -1 on the
    quadratic instance: unbounded below); with + it is the prox and gives (5) and (6) exactly
    (to 2e-16). No claim checked eqs. (4)-(6): now 001.eq4.prox-sign, erratum-harmless."""
    out = eq4_prox_sign(Config(True), 0)
    assert out.verdict == "erratum-harmless", out.summary
    rows = out.evidence["rows"]
    assert all(r["error_plus"] < 1e-12 and r["least_eig_minus"] < 0 for r in rows.values())


def test_thm31_refusal_names_the_point_of_a_grid(capsys):
    """F7: ``bounds communication_lower_bound --L 1e4,50 ...`` refused with Thm 3.1's corrected
    hypothesis but named no point, so a grid's user could not tell which failed (L = 50); the
    refusals of both Thm 3.1 routes now give it, as the other bounds' refusals do."""
    code, out, err = run_cli(["bounds", "communication_lower_bound", "--L", "1e4,50", "--mu",
                              "1", "--lam", "1e4", "--eps", "1e-3"], capsys)
    assert code == 2 and out == "" and err.strip().endswith("got L=50, mu=1, lam=10000")
    with pytest.raises(ValueError, match=r"got L=2, mu=1, lam=10000 \(entry 1 of 2\)"):
        mm.thm31_distance_lower_bound([1e4, 2], 1, 1e4, 3)


def test_table1_check_sees_the_local_log_factor():
    """F9 (referee's audit): 001.table1.iapgd-agd-optimality compared IAPGD+AGD's local
    gradients with sqrt(L/mu) log(1/eps) times the allowed log factor at one n (10), where that
    factor hardly moves over lam <= L, so a match WITHOUT it passed the x3 band too (ratios 71,
    80, 118). It now also measures at n = 1e40: with the factor the ratios stay in [2.26,
    3.41], without it they spread x5.7."""
    out = table1_iapgd(Config(True), 0)
    ev = out.evidence
    lam = ev["lam"][ev["lam"] <= 1e4]
    with_log = np.concatenate([ev["local_over_lower"][:lam.size], ev["local_over_lower_n1e40"]])
    factor = np.concatenate([np.log(1e4 * lam * n) + np.log(1e6) for n in (10, 1e40)])
    no_log = with_log * factor
    assert out.verdict == "holds" and with_log.max() / with_log.min() < 3
    assert no_log.max() / no_log.min() > 3


def _no_run(*args, **kwargs):
    raise AssertionError("the catalogue ran before the options were checked")


@pytest.mark.parametrize("module, argv, message", [
    ("report", ["--quick", "--no-sensitivity", "--out", "/nonexistent-h38/r.md"],
     "--out /nonexistent-h38/r.md: folder /nonexistent-h38 does not exist"),
    ("report", ["--quick", "--jobs", "0"], "--jobs must be an integer >= 1, got 0"),
    ("sensitivity", ["--claim", "001.nope"], "unknown claim id(s): '001.nope'"),
    ("sensitivity", ["--claim", "001.eq4.prox-sign", "--jobs", "0"], "--jobs must be"),
])
def test_paper_checks_commands_refuse_before_running(module, argv, message, monkeypatch,
                                                      capsys):
    """F8: ``python -m paper_checks.report --out DIR/r.md`` with no DIR ran the catalogue (a
    minute and more) and then died with a FileNotFoundError traceback; ``--jobs 0`` and
    ``python -m paper_checks.sensitivity --claim 001.nope`` were tracebacks too. Each is now a
    usage error (exit 2) before any claim runs; the report is written atomically."""
    import importlib

    import paper_checks

    mod = importlib.import_module(f"paper_checks.{module}")
    monkeypatch.setattr(paper_checks, "run_claims", _no_run)
    monkeypatch.setattr(mod, "sensitivity", _no_run, raising=False)
    with pytest.raises(SystemExit) as exc:
        mod.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
