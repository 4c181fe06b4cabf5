"""Issue 32, third pass, session 26: one rule for exact numeric types (Decimal, Fraction),
integer options written as integral decimals, a clear refusal of a cache in /proc, and a
continuation ladder without a repeated stage."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import riskcalc


# --- the continuation ladder of the logistic fixed point ----------------------------------

# was: at lam = 10^-k below 1e-4 the ladder divided 1e-4 by 10 until it passed lam and then
# appended lam: 1e-05, 1.0000000000000002e-06, 1e-06 (a root solved twice at one penalty).
@pytest.mark.parametrize("lam", [1e-6, 1e-8, 1e-13, 1e-25, 0.0])
def test_the_continuation_solves_each_penalty_once(lam, monkeypatch):
    from riskcalc.logistic import fixed_point
    from riskcalc.logistic.work import stages

    solved = []

    def fake_root(x0, kappa, nodes, gamma, lam_k, c_e, C):   # records the stage, no solve
        solved.append(lam_k)
        return np.asarray(x0, float), 0.0, None

    monkeypatch.setattr(fixed_point, "_root_resolved", fake_root)
    fixed_point.solve_fixed_point(0.1, 1.0, 1.0, lam)   # below the MLE threshold
    assert solved[0] == fixed_point.LAM_START and solved[-1] == lam
    assert all(b < a / 9.99 for a, b in zip(solved, solved[1:-1])), solved   # factors of 10
    assert solved[-1] < solved[-2] / 9.99 or lam == 0.0, solved
    assert len(solved) == stages(lam), solved      # the work estimate's own count


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
