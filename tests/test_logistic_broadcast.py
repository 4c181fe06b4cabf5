"""``riskcalc.logistic_limit`` over arrays (``riskcalc.logistic.broadcast``): every grid point
equals the one-point solver (scipy's Powell hybrid per point, continuation from lam = 100,
another route through the same equations) to far below the quadrature tolerance; shapes
broadcast; bad entries are named."""

import json

import numpy as np
import pytest

import riskcalc
from riskcalc.logistic import broadcast
from riskcalc.logistic.engine.gaussian import Rule, batch_moments
from riskcalc.logistic.engine.prox import prox_logistic, prox_near

FIELDS = ("risk", "cosine", "test_logloss", "test_error", "a", "b", "q", "mu")


def _check_points(res, grid, centre="oracle"):
    for idx in np.ndindex(res.risk.shape):
        kw = {k: float(np.broadcast_to(v, res.risk.shape)[idx]) for k, v in grid.items()}
        one = riskcalc.logistic_limit(**kw, centre=centre)
        for f in FIELDS:
            # Both solve the same discrete equations to residual 1e-11 on the same rule.
            assert getattr(res, f)[idx] == pytest.approx(getattr(one, f), rel=1e-8, abs=1e-10), \
                (f, kw)


def test_grid_equals_scalar_solves():
    # lam = 0 (the MLE) where it exists: gamma = 0.15 below the Candes-Sur threshold at
    # every ||w_i|| here (about 0.43 at 1.1, 0.25 at 2.2).
    grid = dict(gamma=np.array([[0.15], [2.0]]), signal=1.0, r=np.array([0.5, 1.0, 2.0]),
                lam=np.array([[0.0, 0.02, 3.0], [1e-3, 0.3, 10.0]]))
    res = riskcalc.logistic_limit(**grid)
    assert res.risk.shape == (2, 3) and res.params["lam"].shape == (2, 3)
    _check_points(res, grid)


def test_fedavg_centre_grid():
    grid = dict(gamma=1.0, signal=np.array([0.0, 2.0]), r=1.0, lam=np.array([0.1, 1.0]))
    res = riskcalc.logistic_limit(**grid, centre="fedavg")
    assert res.params["centre_scale"][0] == 1.0 and res.params["centre_scale"][1] < 1.0
    _check_points(res, grid, centre="fedavg")


def test_fallback_to_one_point_solver(monkeypatch):
    """Points the grid Newton leaves unsolved go to the one-point solver."""
    monkeypatch.setattr(broadcast, "MAXITER", 0)
    grid = dict(gamma=1.0, signal=1.0, r=1.0, lam=np.array([0.05, 2.0]))
    _check_points(riskcalc.logistic_limit(**grid), grid)


def test_broadcast_shapes_and_json():
    res = riskcalc.logistic_limit(gamma=np.ones((1, 2)), signal=1.0, r=0.0,
                                  lam=np.array([[1.0], [2.0], [4.0]]))
    assert res.risk.shape == res.test_error.shape == (3, 2)
    assert np.all(np.isnan(res.cosine)) and res.notes       # r = 0: cosine undefined
    out = json.loads(json.dumps(res.as_dict()))
    assert np.shape(out["risk"]) == (3, 2) and out["cosine"][0][0] is None
    assert out["params"]["lam"] == [[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]


@pytest.mark.parametrize("kw, message", [
    (dict(lam=[0.1, -1.0]), r"lam must lie in \[0, inf\), got -1.0 \(entry 1 of 2\)"),
    (dict(gamma=[1.0, np.nan]), "gamma must be a finite number"),
    (dict(r=[1.0, -2.0]), "r must lie"),
    (dict(signal=[[1.0, -1.0]]), "signal must lie"),
    (dict(lam=[1.0, 2.0, 3.0], r=[1.0, 2.0]), "do not broadcast"),
    (dict(lam=[1.0, 0.0], gamma=5.0), "lam = 0 at grid entry 1"),
])
def test_bad_entries_named(kw, message):
    base = dict(gamma=1.0, signal=1.0, r=1.0, lam=1.0)
    with pytest.raises(ValueError, match=message):
        riskcalc.logistic_limit(**{**base, **kw})


def test_batch_moments_equal_rule():
    rng = np.random.default_rng(1)
    kappa, a, rho = rng.uniform(0.5, 3, 5), rng.uniform(-1, 2, 5), rng.uniform(0.1, 2, 5)
    mu = rng.uniform(0.01, 50, 5)
    m, dm, t = batch_moments(kappa, a, rho, mu, 30)
    m_only = batch_moments(kappa, a, rho, mu, 30, start=t, derivatives=False)[0]
    for k in range(5):
        m1, dm1 = Rule(kappa[k], 30).moments(a[k], rho[k], mu[k])
        np.testing.assert_allclose(m[k], m1, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(m_only[k], m1, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(dm[k], dm1, rtol=1e-10, atol=1e-13)


def test_rule_moments_equal_one_expectation_each():
    """``Rule.moments`` sums all its integrands in one array: the documented expectations, each
    by ``Rule.expect``, within summation rounding (the same products over the same nodes, summed
    in another layout: at most log2(nodes) eps of the sum of magnitudes, 1e-13 of it allowed);
    ``derivatives=False`` the same ``m``, bitwise (the same code on the same rows)."""
    for kappa, a, rho, mu, scales in ((1.2, 0.7, 0.9, 3.0, (0.0, 0.0)),
                                      (6.0, 5.0, 1.1, 0.2, (6.5, 5.0))):
        rule = Rule(kappa, 30, *scales)
        t = prox_logistic(a * rule.s + rho * rule.g, mu)
        p = 1.0 / (1.0 + np.exp(t))
        h = p * (1.0 - p)
        k = 1.0 / (1.0 + mu * h)
        E = rule.expect
        m = [E(h * k), E((mu * p) ** 2), E(p * rule.s)]
        dh_dt = -(1.0 - 2.0 * p) * h
        f = (k * k * dh_dt, 2.0 * mu * mu * p * -h, rule.s * -h)
        dm = [[E(fi * tj) for tj in (rule.s * k, rule.g * k, p * k)] for fi in f]
        dm[0][2] -= E((h * k) ** 2)
        dm[1][2] += E(2.0 * mu * p * p)
        # the sums of magnitudes, each at most the sum of its terms' magnitudes
        m_abs = [E(np.abs(h * k)), E((mu * p) ** 2), E(np.abs(p * rule.s))]
        dm_abs = [[E(np.abs(fi * tj)) for tj in (rule.s * k, rule.g * k, p * k)] for fi in f]
        dm_abs[0][2] += E((h * k) ** 2)
        dm_abs[1][2] += E(np.abs(2.0 * mu * p * p))
        # the same proximal points for both (``moments`` warm-starts its own)
        fixed = _fixed_prox(rule, t, p)
        m1, dm1 = fixed.moments(a, rho, mu)
        m2, none = fixed.moments(a, rho, mu, derivatives=False)
        assert np.all(np.abs(m1 - np.array(m)) <= 1e-13 * np.array(m_abs))
        assert np.all(np.abs(dm1 - np.array(dm)) <= 1e-13 * np.array(dm_abs))
        np.testing.assert_array_equal(m2, m1)
        assert none is None


def _fixed_prox(rule, t, p):
    """``rule`` with its prox replaced by the given points."""
    class Fixed(Rule):
        def _prox(self, v, mu):
            return t, p
    fixed = object.__new__(Fixed)
    fixed.__dict__.update(rule.__dict__)
    return fixed


def test_prox_near_leaves_its_start_unchanged():
    """``prox_near`` iterates in its own buffers: the start (a rule's last points) is kept."""
    v = np.linspace(-8, 8, 2 * 25).reshape(2, 5, 5)
    mu = np.array([0.5, 40.0])[:, None, None]
    start = prox_logistic(v, mu) + 0.2
    kept = start.copy()
    t, _ = prox_near(v, mu, start)
    np.testing.assert_array_equal(start, kept)
    np.testing.assert_allclose(t, prox_logistic(v, mu), rtol=0, atol=1e-11 * 50)


def test_batch_prox_from_table_and_warm_starts():
    v = np.linspace(-60, 60, 3 * 49).reshape(3, 7, 7)
    mu = np.array([1e-6, 3.0, 1e4])[:, None, None]
    for start in (None, prox_logistic(v, mu) + 0.3):
        t, p = prox_near(v, mu, start)
        np.testing.assert_allclose(t, prox_logistic(v, mu), rtol=0, atol=1e-11 * (1 + 60 + 1e4))
        np.testing.assert_array_equal(p, 1.0 / (1.0 + np.exp(t)))


def test_test_errors_against_mpmath():
    """The composite rule against mpmath (20 digits, breakpoints at the kink's scale),
    including kinks far narrower (rho / a = 1e-6, 2e-4) and sigmoids far steeper (kappa = 50)
    than the grid produces; scipy's adaptive quad, used before, was 3e-5 off at 2e-4."""
    import mpmath as mp

    kappa = np.array([0.7, 50.0, 1.5, 2.0])
    a = np.array([-0.4, 1.0, 1.0, 5.0])
    rho = np.array([2.0, 2.0, 1e-6, 1e-3])
    got = broadcast.test_errors(kappa, a, rho)
    with mp.workdps(20):
        for k in range(len(kappa)):
            w = rho[k] / abs(a[k])
            pts = sorted({0.0, *(sg * w * 4.0 ** j for sg in (1, -1) for j in range(-3, 4))})
            ref = mp.quad(lambda s: 2 / (1 + mp.exp(-kappa[k] * s)) * mp.npdf(s)
                          * mp.ncdf(-a[k] * s / rho[k]), [-mp.inf, *pts, mp.inf])
            assert got[k] == pytest.approx(float(ref), rel=1e-11, abs=1e-15), k
