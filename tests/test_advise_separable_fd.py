"""The optimal weights' finite differences when the mean risk is separable in the extra
variables (RTFA's per-client penalties under a spectrum or covariate shift:
``riskcalc.advise.weights._separable_jacobian``): the weights' part is scipy's own forward
difference bit for bit, the penalties' part equals the one-at-a-time forward difference of
the old route (SLSQP's internal ``approx_derivative``) to the rounding of the mean, a gradient
costs M + 1 evaluations instead of 2M, and the advice matches the old code's numbers."""

import numpy as np
import pytest
from scipy.optimize._numdiff import approx_derivative

from riskcalc.advise import Federation, advise
from riskcalc.advise.weights import _EPS, P_MIN, _separable_jacobian
from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.model import LAM_RANGE

BASE = dict(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.5], sigma=[1.0, 0.5, 0.5],
            rho=[1.1, 1.4, 1.8])
SPECS = ["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"]
EPS = np.finfo(float).eps


def _setup(m):
    lo, hi = np.log(LAM_RANGE[0]), np.log(LAM_RANGE[1])
    bounds = [(P_MIN / m, 1.0)] * m + [(lo, hi)] * m
    kw = {k: BASE[k] for k in ("gamma", "r", "sigma")}
    calls = []

    def risks(p, loglam):
        calls.append(1)
        return clients_limit("rtfa", lam=np.exp(loglam), weights=p, spectra=SPECS,
                             **kw).risk

    return bounds, risks, calls


@pytest.mark.parametrize("z", [
    np.array([0.5, 0.3, 0.2, np.log(0.3), np.log(2.0), np.log(5.0)]),
    # A weight at its upper bound (the step turns back), a penalty near its lower bound.
    np.array([1.0, 0.4, 0.1, np.log(1e-99), 0.0, np.log(40.0)]),
])
def test_separable_differences_equal_the_one_at_a_time_ones(z):
    m = 3
    bounds, risks, calls = _setup(m)
    fun, jac = _separable_jacobian(risks, m, bounds, penalty=1e6)
    f0 = fun(z)
    assert f0 < 1e6                     # a finite mean risk at z, not the penalty
    calls.clear()
    grad = jac(z)
    assert len(calls) == m + 1          # the weights' m steps and ONE for every penalty
    lower, upper = np.array(bounds).T
    old = approx_derivative(fun, z, f0=f0, method="2-point", abs_step=_EPS,
                            bounds=(lower, upper))
    np.testing.assert_array_equal(grad[:m], old[:m])
    # Both are forward differences at the same steps; the old numerator is the difference
    # of two sums of m values, each rounded to m eps max abs v (the new one divides one
    # client's difference by m): bound over the step, plus the quotient's own rounding.
    v = risks(z[:m] / z[:m].sum(), z[m:])
    h = np.where(z[m:] + _EPS > upper[m:], -_EPS, _EPS)
    dx = np.abs((z[m:] + h) - z[m:])
    tol = 4 * m * EPS * np.max(np.abs(v)) / dx + 4 * EPS * np.abs(old[m:])
    assert np.all(np.abs(grad[m:] - old[m:]) <= tol)
    # The bound is far below the nonzero derivatives themselves (the test has teeth; client
    # 0, gamma < 1 at a tiny penalty, does not move).
    nz = old[m:] != 0
    assert nz.sum() >= 2 and np.all(tol[nz] < 1e-3 * np.abs(old[m:][nz]))


def test_a_failing_joint_step_falls_back_to_one_at_a_time():
    m = 3
    x0 = np.array([0.1, -0.2, 0.3])

    def values(p, x):
        if np.count_nonzero(x != x0) > 1:
            raise SolverError("planted")
        return (p - 1 / m) ** 2 + (x - np.arange(m)) ** 2 + p @ p * np.sin(x)

    bounds = [(P_MIN / m, 1.0)] * m + [(-5.0, 5.0)] * m
    fun, jac = _separable_jacobian(values, m, bounds, penalty=1e6)
    z = np.concatenate([[0.2, 0.5, 0.3], x0])
    lower, upper = np.array(bounds).T
    old = approx_derivative(fun, z, f0=fun(z), method="2-point", abs_step=_EPS,
                            bounds=(lower, upper))
    np.testing.assert_array_equal(jac(z), old)


def test_rtfa_advice_under_shift_matches_the_old_code():
    """The old code (5fcbd35, one-at-a-time differences) on this federation: samples and
    uniform equal to rounding (bit for bit until the diagonal roots were started from the
    last ones: Newton's iteration from them ends within rounding of the root, the bracketed
    solve within its 1e-12 stopping width); the optimal weights' mean risk 1.7132613453247323
    there and 1.7132613453250798 here (+2.0e-13: the finite-difference SLSQP's path, ftol
    1e-12; 1.7132613453251864 with ftol 1e-10)."""
    adv = advise(Federation(**BASE, spectra=SPECS, d=100), ["rtfa"])
    got = {c.weights: c for c in adv.candidates}
    assert got["samples"].mean_risk == pytest.approx(1.7734156317719159, rel=1e-13, abs=0)
    assert got["uniform"].mean_risk == pytest.approx(1.9756110161865894, rel=1e-13, abs=0)
    old = 1.7132613453247323
    assert abs(got["optimal"].mean_risk - old) <= 1e-9 * old
    assert got["optimal"].mean_risk < got["samples"].mean_risk
