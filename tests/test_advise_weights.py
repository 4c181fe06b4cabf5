"""The optimal weights of ``riskcalc advise`` (issue 30, item 1): no worse than the
finite-difference optimizer or scipy's given the same exact gradients, ``simplex_newton`` at
the KKT point of a quadratic, and the default advice without scipy.optimize."""

import numpy as np
import pytest

from riskcalc.advise import Federation, advise, tune, weights as wopt
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from tests.test_advise_speed import GAM, P, R, SIG, TUNING, _mean


@pytest.mark.parametrize("method", ["fedavg", "rtfa", "pfedme"])
def test_optimal_weights_no_worse_than_finite_differences(method):
    """The optimizer given exact gradients ends no higher than SLSQP with finite differences
    (the former optimizer) from the same starts, to rounding (1e-12 relative)."""
    fed = Federation(gamma=GAM, r=R, sigma=SIG)
    tun = TUNING[method]
    k = 0 if tun is None else np.size(tun)

    def value(p, x):
        return _mean(method, p, None if tun is None else
                     (np.exp(x) if method == "rtfa" else float(np.exp(x[0]))))

    def gradient(p, x):
        t = None if tun is None else (np.exp(x) if method == "rtfa" else float(np.exp(x[0])))
        mean, gp, gt = mean_risk_gradient(method, gamma=GAM, sigma=SIG, r=R, weights=p,
                                          tuning=t)
        return mean, gp, [] if gt is None else np.atleast_1d(gt * t)

    x0 = [] if tun is None else np.log(np.atleast_1d(tun))
    starts = [(np.full(fed.m, 1 / fed.m), x0), (P, x0)]
    bounds = [(-12.0, 5.0)] * k
    _, _, old = wopt.optimize(value, starts, fed.m, extra_bounds=bounds)
    _, _, new = wopt.optimize(value, starts, fed.m, extra_bounds=bounds, gradient=gradient)
    assert new <= old * (1 + 1e-12)


def test_simplex_newton_reaches_the_kkt_point_of_a_quadratic():
    """``simplex_newton.minimize`` on F = sum_i a_i (y_i - c_i)^2 / 2 over the simplex (with p_j >=
    0.01) times a box, against the closed form (the KKT conditions): p_j = clip(c_j - mu / a_j,
    0.01, 1) with mu solving sum p_j = 1 (bisection here), x = clip(c_x, box). The centres put
    two weights and one tuning variable on their bounds, so the working set is exercised."""
    from riskcalc.advise import simplex_newton

    a = np.array([1.0, 3.0, 0.5, 2.0, 1.5, 4.0, 2.0])
    c = np.array([0.6, -0.3, 0.5, 0.2, -0.1, 3.0, -7.0])
    m = 5
    lower = np.array([0.01] * m + [-5.0, -5.0])
    upper = np.array([1.0] * m + [5.0, 5.0])

    def fun_grad(y):
        return 0.5 * np.sum(a * (y - c) ** 2), a * (y - c)

    y, f = simplex_newton.minimize(fun_grad, np.array([0.2] * m + [0.0, 0.0]), m, lower,
                                   upper)
    lo, hi = -10.0, 10.0
    for _ in range(200):
        mu = 0.5 * (lo + hi)
        lo, hi = (mu, hi) if np.clip(c[:m] - mu / a[:m], 0.01, 1).sum() > 1 else (lo, mu)
    want = np.concatenate([np.clip(c[:m] - mu / a[:m], 0.01, 1), np.clip(c[m:], -5, 5)])
    assert np.sum(want[:m] == 0.01) == 2 and want[-1] == -5.0
    # The stop is on F (predicted decrease < 1e-15 |F|), so y is within ~sqrt(1e-15 / a).
    assert f <= fun_grad(want)[0] + 1e-14
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-7)
    assert abs(y[:m].sum() - 1) < 1e-14 and np.all(y >= lower) and np.all(y <= upper)


def _remembered(fun):
    """``fun`` computing each distinct positional call once (arrays by their bytes, other
    objects by identity: one federation)."""
    seen = {}

    def call(*args):
        key = tuple(a.tobytes() if isinstance(a, np.ndarray) else
                    a if isinstance(a, str) else id(a) for a in args)
        if key not in seen:
            seen[key] = fun(*args)
        return seen[key]

    return call


@pytest.mark.parametrize("seed", [0, 1])
def test_newton_weights_no_worse_than_scipy_with_exact_gradients(seed, monkeypatch):
    """The optimal weights of ``simplex_newton`` (what advise uses up to ``NEWTON_MAX``
    variables) against scipy's L-BFGS-B given the same exact gradients (what advise
    used before): every pipeline's optimal mean risk no higher, to rounding (1e-12
    relative), on random federations (gamma in [0.05, 6], r in [0, 2.5], sigma in [0, 2])."""
    rng = np.random.default_rng(seed)
    m = 3 + seed
    fed = Federation(gamma=np.exp(rng.uniform(np.log(0.05), np.log(6), m)),
                     r=rng.uniform(0, 2.5, m), sigma=rng.uniform(0, 2, m))
    methods = ["fedavg", "ftfa", "rtfa", "maml_fl", "pfedme"]

    def optimal():
        return {c.method: c.mean_risk for c in advise(fed, methods=methods).candidates
                if c.weights == "optimal"}

    # The tunings at the sample and uniform weights (the optimizers' starts) do not involve
    # the optimizer: the second advice reuses the first's (the same calls, so the same
    # numbers), 0.4 s of CPU less per federation.
    for name in ("rtfa_lams", "shared_tuning"):
        monkeypatch.setattr(tune, name, _remembered(getattr(tune, name)))
    new = optimal()
    monkeypatch.setattr(wopt, "NEWTON_MAX", 0)
    old = optimal()
    assert new.keys() == old.keys() == set(methods)
    for method in methods:
        assert new[method] <= old[method] * (1 + 1e-12), (method, new[method], old[method])


def test_default_advise_does_not_import_scipy_optimize():
    """A small federation at Sigma = I is advised without importing scipy.optimize (a third
    of the 5-client command's CPU time: the speed goal's margin)."""
    import subprocess
    import sys

    code = ("import sys; from riskcalc.advise import advise, Federation; "
            "advise(Federation(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.0], sigma=[1.0, 0.5, 0.5], "
            "rho=[1.1, 1.4, 1.4])); print('scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
