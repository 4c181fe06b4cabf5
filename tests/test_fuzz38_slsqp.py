"""Issue 32, fuzz38 (slsqp): what this fuzz found, each test failing before.

The optimal weights with exact gradients take L-BFGS-B (with the gain stop) from
``weights.NEWTON_MAX`` + 1 variables: scipy's SLSQP, up to 300 variables before, cost 1.6-1.9x
as much there for the same recommendations (``benchmarks/bench_advise_measured.txt``,
twenty-fourth round).
"""

import numpy as np
import pytest

from riskcalc.advise import cost
from riskcalc.advise import weights as wopt


def _quadratic(m):
    target = np.linspace(1.0, 2.0, m) / np.linspace(1.0, 2.0, m).sum()

    def grad(p, extra):
        return float(np.sum((p - target) ** 2)), 2 * (p - target), np.zeros(0)

    return grad, target


@pytest.mark.parametrize("m", [wopt.NEWTON_MAX + 1, 60])
def test_exact_gradients_past_newton_take_lbfgs(m, monkeypatch):
    """F1: at 33-300 variables with exact gradients the search was scipy's SLSQP (dense
    subproblems, 1.6-1.9x L-BFGS-B's CPU at 60-291 clients); now L-BFGS-B with the gain stop,
    its note given, and the result on the simplex above the floor."""
    import scipy.optimize

    seen = []
    real = scipy.optimize.minimize

    def spy(*args, **kw):
        seen.append(kw["method"])
        return real(*args, **kw)

    monkeypatch.setattr(scipy.optimize, "minimize", spy)
    grad, target = _quadratic(m)
    p, _, value = wopt.optimize(lambda p, extra: grad(p, extra)[0],
                                [(np.full(m, 1 / m), [])], m, gradient=grad)
    assert seen == ["L-BFGS-B"]
    assert wopt.gain_note(m, 0, grad) != ()
    assert abs(p.sum() - 1) < 1e-12 and p.min() >= wopt.P_MIN / m
    assert value < 1e-12 * np.sum(target ** 2)


def test_slsqp_cost_term_gone():
    """F1: the cost model's SLSQP term (7e-4 s a client up to 300 variables) went with the
    route: ``SLSQP_MAX`` and ``SLSQP_PER_CLIENT`` are no longer there."""
    assert not hasattr(wopt, "SLSQP_MAX") and not hasattr(cost, "SLSQP_PER_CLIENT")
