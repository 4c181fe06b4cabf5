"""Issue 32, third pass, session 26: one rule for exact numeric types (Decimal, Fraction),
integer options written as integral decimals, a clear refusal of a cache in /proc, and a
continuation ladder without a repeated stage."""

import os
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import riskcalc
from tests.test_hardening_ninth import _run


# --- the continuation ladder of the logistic fixed point ----------------------------------

# was: at lam = 10^-k below 1e-4 the ladder divided 1e-4 by 10 until it passed lam and then
# appended lam: 1e-05, 1.0000000000000002e-06, 1e-06 (a root solved twice at one penalty).
@pytest.mark.parametrize("lam", [1e-6, 1e-8, 1e-13, 1e-25, 0.0])
def test_the_continuation_solves_each_penalty_once(lam, monkeypatch):
    from riskcalc.logistic import fixed_point, ranges
    from riskcalc.logistic.work import stages

    solved = []

    def fake_root(x0, kappa, nodes, gamma, lam_k, c_e, C, deadline=None):   # records, no solve
        solved.append(lam_k)
        return np.asarray(x0, float), 0.0, None

    monkeypatch.setattr(fixed_point, "_root_resolved", fake_root)
    fixed_point.solve_fixed_point(0.1, 1.0, 1.0, lam)   # below the MLE threshold
    lam = ranges.mle_lam(lam, 0.1, np.hypot(1.0, 1.0))   # 1e-25: the MLE's lam = 0 (fuzz41 F3)
    assert solved[0] == ranges.LAM_START and solved[-1] == lam
    assert all(b < a / 9.99 for a, b in zip(solved, solved[1:-1])), solved   # factors of 10
    assert solved[-1] < solved[-2] / 9.99 or lam == 0.0, solved
    assert len(solved) == stages(lam), solved      # the work estimate's own count


@pytest.mark.parametrize("lam", [1e3, 100.0, 50.0, 3e-3, 1e-3, 1e-6, 1e-25, 0.0])
@pytest.mark.parametrize("ratio, stop", [(10.0, 0.0), (10.0 ** 0.5, 1e-4)])
def test_one_ladder_strictly_decreasing_to_its_floor(lam, ratio, stop):
    """``ranges.ladder``, the path of every logistic fixed point (was five copies, four with
    the repeated stage at 10^-k or at lam >= 100): from ``LAM_START`` by factors of ``ratio``
    to max(lam, stop) (1e-4 for lam = 0), then 0 for lam = 0."""
    from riskcalc.logistic.ranges import LAM_START, ladder

    lams = ladder(lam, ratio, stop)
    floor = max(lam if lam > 0 else 1e-4, stop)
    ends = [floor, 0.0] if lam == 0.0 else [floor]
    assert lams[-len(ends):] == ends and lams[0] == max(lam, LAM_START)
    assert all(b < a for a, b in zip(lams, lams[1:])), lams
    steps = [a / b for a, b in zip(lams, lams[1:len(lams) - len(ends) + 1])]
    assert all(abs(q - ratio) < 1e-9 * ratio for q in steps[:-1]), lams
    assert not steps or 1.0 < steps[-1] <= ratio * (1 + 1e-9), lams


def test_the_global_model_solves_each_penalty_once(monkeypatch):
    """``pooled.solve_pooled``'s path at global_lam = 1e-6 solved 1.0000000000000002e-06 and
    then 1e-06 (the duplicate stage fixed in ``fixed_point`` above, in its own copy)."""
    from riskcalc.logistic.blocks import pooled

    solved = []

    def fake_root(x0, fed, lam_g, nodes, memory=None, maxfev=0):    # records, no solve
        solved.append(lam_g)
        return np.asarray(x0, float), 0.0, 0

    monkeypatch.setattr(pooled, "_root_resolved", fake_root)
    fed = pooled.Federation(np.array([0.5, 2.0]), np.array([1.0, 0.5]), np.array([1, 1]), 1.0,
                            "samples")
    pooled.solve_pooled(fed, 1e-6)
    path = solved[:-1]                  # the last: the quadrature ladder's first level
    assert all(a / b > 9.99 for a, b in zip(path, path[1:])) and path[-1] == 1e-6, path


# --- exact numeric types: one rule ---------------------------------------------------------

# was: Fraction(1, 2) accepted (a numbers.Real) while Decimal("0.5") was refused as "not a
# number", and clients=Decimal("3") accepted (an integral count): one rule now, each read as
# its nearest float.
@pytest.mark.parametrize("exact", [Decimal, Fraction])
def test_decimal_and_fraction_are_numbers(exact):
    ref = riskcalc.limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.1, clients=3)
    res = riskcalc.limit("rtfa", gamma=exact(2), r=exact(1), sigma=exact("0.5"),
                         lam=exact("0.1"), clients=exact(3))
    assert (res.bias, res.variance, res.risk) == (ref.bias, ref.variance, ref.risk)
    both = riskcalc.limit("ftfa", gamma=[exact(2), 3.0], r=1, sigma=0.5)
    ref = riskcalc.limit("ftfa", gamma=[2.0, 3.0], r=1, sigma=0.5)
    assert both.risk.tolist() == ref.risk.tolist()


@pytest.mark.parametrize("gamma, message", [
    (Decimal("1e400"), r"gamma must be a real number of magnitude below 1e308, got "
                       r"Decimal\('1E\+400'\)"),        # was: read as inf, silently
    (Fraction(10 ** 400), "gamma must be a real number of magnitude below 1e308"),
    ([Decimal("1e400"), 2.0], "gamma must be a real number of magnitude below 1e308"),
    (Decimal("NaN"), "gamma must be a finite number"),
    (Decimal("sNaN"), r"gamma must be a finite real number, got Decimal\('sNaN'\)"),
    (Decimal("-Infinity"), "gamma must be a finite number"),
])
def test_an_exact_number_no_float_holds_is_refused(gamma, message):
    with pytest.raises(ValueError, match=message):
        riskcalc.limit("ftfa", gamma=gamma, r=1, sigma=0.5)


# --- integer options written as integral decimals -------------------------------------------

P = "predict ftfa --gamma 2 --r 1 --sigma 0.5"
R = ("predict fedavg --gamma 2 --r 1 --sigma 0.5 --signal 1 --local-step-size 0.1 "
     "--local-steps 1")


def _cli(argv, capsys):
    return _run(argv.split(), capsys)


# was: "error: argument --d: invalid int value: '20.0'" while d=20.0 is the integer 20 in
# Python; every type=int option reads through one helper (riskcalc._text.integer), and
# --rounds / --local-steps / a --clients list through it too.
@pytest.mark.parametrize("integral, plain", [
    (f"{P} --clients 3.0", f"{P} --clients 3"),
    (f"{P} --steps 2.0 --step-size 0.1", f"{P} --steps 2 --step-size 0.1"),
    (f"{P} --steps 2e0 --step-size 0.1", f"{P} --steps 2 --step-size 0.1"),
    (f"{R} --rounds 2.0,3", f"{R} --rounds 2,3"),
    (R.replace("--local-steps 1", "--local-steps 1.0") + " --rounds 2", f"{R} --rounds 2"),
])
def test_an_integral_decimal_is_an_integer_on_the_command_line(integral, plain, capsys):
    code, out, err = _cli(integral, capsys)
    assert code == 0, err
    assert (code, out, err) == _cli(plain, capsys)


@pytest.mark.parametrize("argv, line", [
    (f"{P} --clients 2.5", "error: --clients must be an integer, got '2.5'"),
    (f"{P} --steps 20.5 --step-size 0.1", "error: --steps must be an integer, got '20.5'"),
    # exact, not through a float (which rounds it to 20.0)
    (f"{P} --steps 20.0000000000000001 --step-size 0.1",
     "error: --steps must be an integer, got '20.0000000000000001'"),
    (f"{P} --steps 1_0 --step-size 0.1", "error: --steps must be an integer, got '1_0'"),
    (f"{P} --steps inf --step-size 0.1", "error: --steps must be an integer, got 'inf'"),
    (f"{P} --steps 1e1000000000 --step-size 0.1",       # not read into a billion-digit int
     "error: --steps must be an integer of at most 300 digits, got '1e1000000000'"),
    ("compare ftfa --gamma 2 --r 1 --sigma 0.5 --d 20.5",
     "error: --d must be an integer, got '20.5'"),
    ("compare ftfa --gamma 2 --r 1 --sigma 0.5 --d 20 --seed 1.5",
     "error: --seed must be an integer, got '1.5'"),
    (f"{R} --rounds 2.5", "error: --rounds takes integers in 0..9007199254740992 (2^53) and "
                          "inf, comma-separated; got '2.5'"),
    ("sweep ftfa --gamma 2 --r 1 --sigma 0.5 --d 40 --global federated --clients 3.0,2.5",
     "error: --clients must be a comma-separated list of integers, got '3.0,2.5'"),
])
def test_a_non_integer_is_refused_naming_the_option(argv, line, capsys):
    code, out, err = _cli(argv, capsys)
    assert (code, out, err.strip()) == (2, "", line)


# --- a cache where no file can be made -------------------------------------------------------

# was: "--cache /proc/version: cannot create a file in /proc (No such file or directory)", of a
# folder that exists (and "[Errno 22]" before outputs were probed). As root the probe answers;
# as another user /proc is "not writable" before it.
@pytest.mark.skipif(not os.path.isfile("/proc/version"), reason="no /proc")
def test_a_cache_in_proc_is_refused_with_its_reason(tmp_path, capsys):
    code, out, err = _cli(f"sweep ftfa --gamma 1,2 --r 1 --sigma 0.5 --d 50 --reps 2 --cache "
                          f"/proc/version --out {tmp_path}/o.csv", capsys)
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --cache /proc/version: "), err
    assert err.strip().endswith(("(a kernel file system: it takes no new files); give a file "
                                 "in a writable folder", ": not writable")), err
    assert not os.path.exists(tmp_path / "o.csv")
