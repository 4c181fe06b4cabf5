"""Issue 32, fuzz38 (advise): what this fuzz found, each test failing before.

The area was advise's speed at 100-1000 clients (``benchmarks/bench_advise_decision.py``
checks the decisions against a baseline tree); these tests pin the mechanisms."""

import numpy as np
import pytest

from riskcalc.advise import Federation, advise, estimate_seconds
from riskcalc.advise import weights as wopt
from riskcalc.linear.finite_clients import gradient, own


def _clients(m, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.3, 3, m), rng.uniform(0.1, 2, m), rng.uniform(0.1, 2, m)


@pytest.mark.parametrize("method, tuning", [("pfedme", 0.7), ("maml_fl", 0.05)])
def test_own_sources_evaluates_phi_once_per_rule(monkeypatch, method, tuning):
    """F1: own_sources' traces called phi(s) once per integrand (4 and 6 times per rule in
    its two many-integrand traces: ~1/4 of pFedMe's and MAML-FL's gradient time); now once
    per rule of each trace, with the same numbers."""
    gam, _, _ = _clients(6)
    p = np.full(6, 1 / 6)
    g, t = own._subordination(gam, p, np.ones(6), own.objective(method, tuning)[0])
    before = own.own_sources(method, gam, tuning, p, t, g)
    calls = {"phi": 0, "rules": 0}
    real_objective, real_expect = own.objective, own.mp_expect

    def objective(m, tun):
        phi, psi, lam = real_objective(m, tun)

        def counted(s):
            calls["phi"] += 1
            return phi(s)
        return counted, psi, lam

    def expect(gam, fun, *args, **kw):
        def counted(*a):
            calls["rules"] += 1
            return fun(*a)
        return real_expect(gam, counted, *args, **kw)

    monkeypatch.setattr(own, "objective", objective)
    monkeypatch.setattr(own, "mp_expect", expect)
    after = own.own_sources(method, gam, tuning, p, t, g)
    assert calls["phi"] == calls["rules"]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


class _Divisions(np.ndarray):
    """An array counting the divisions it takes part in (``_DIVIDED``)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        if ufunc is np.true_divide:
            _DIVIDED[0] += 1
        inputs = [np.asarray(a) if isinstance(a, _Divisions) else a for a in inputs]
        out = getattr(ufunc, method)(*inputs, **kw)
        return out.view(_Divisions) if isinstance(out, np.ndarray) else out


_DIVIDED = [0]


def test_own_sources_divides_once_per_rule_by_the_complex_shift(monkeypatch):
    """F3: each of own_sources' integrands divided by P phi(s) + T (complex in the
    gradient's steps) or its square: 4 + 1 + 6 divisions per rule of its three traces, the
    bulk of a pFedMe gradient's time; now one per rule (then products), same numbers to
    rounding."""
    gam, _, _ = _clients(4)
    p, tun = np.full(4, 0.25) + 1e-30j, 0.7
    g, t = own._subordination(gam, p.real, np.ones(4), own.objective("pfedme", tun)[0])
    before = own.own_sources("pfedme", gam, tun, p, t + 0j, g)
    rules = [0]
    real_objective, real_expect = own.objective, own.mp_expect

    def objective(m, tuning):
        phi, psi, lam = real_objective(m, tuning)
        return (lambda s: np.asarray(phi(s)).view(_Divisions)), psi, lam

    def expect(gam, fun, *args, **kw):
        def counted(*a):
            rules[0] += 1
            return tuple(np.asarray(v) for v in fun(*a))
        return real_expect(gam, counted, *args, **kw)

    monkeypatch.setattr(own, "objective", objective)
    monkeypatch.setattr(own, "mp_expect", expect)
    _DIVIDED[0] = 0
    after = own.own_sources("pfedme", gam, tun, p, t + 0j, g)
    assert _DIVIDED[0] == rules[0]
    for a, b in zip(before, after):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)


def test_own_gradient_step_in_g_runs_no_quadrature(monkeypatch):
    """F2: the complex step in g moved the shifts t_l through a quadrature of
    G_l = tau((p_l phi(S_l) + t_l)^-1), which does not depend on g (its imaginary part was
    exactly 0): one quadrature of 1000 rows wasted per gradient."""
    gam, sig, r = _clients(5)
    route = gradient._Own("pfedme", gam, sig, r, np.ones(5), np.full(5, 0.2), 0.7)
    want = route.t + 1j * gradient.H * (-1.0) / route.D

    def refuse(*args, **kw):
        raise AssertionError("a quadrature for dG/dg = 0")

    monkeypatch.setattr(gradient, "mp_expect", refuse)
    np.testing.assert_array_equal(route.v0("g")["t"], want)


def test_gain_stop_ends_the_search_after_three_small_gains():
    """F4: L-BFGS-B ran to ftol 1e-13, its last 25-45% of calls moving the weights' 0.01-0.2%
    gain by ~1e-10 relative; it now stops once 3 iterations in a row gained at most 1e-10 of
    the mean risk in all."""
    class Step:
        def __init__(self, fun):
            self.fun = fun

    stop = wopt._gain_stop()
    for value in (2.0, 1.5, 1.2, 1.2 - 1e-11, 1.2 - 2e-11):
        stop(Step(value))
    with pytest.raises(StopIteration):
        stop(Step(1.2 - 3e-11))
    going = wopt._gain_stop()
    for value in (1.0, 1.0 - 1e-11, 1.0 - 2e-11, 1.0 - 2e-10):   # 2e-10 in three: goes on
        going(Step(value))


def test_lbfgs_route_is_given_the_gain_stop(monkeypatch):
    """F4: the stop reaches scipy's L-BFGS-B (beyond 300 variables)."""
    import scipy.optimize

    seen = {}
    real = scipy.optimize.minimize

    def spy(*args, **kw):
        seen[kw["method"]] = kw.get("callback")
        return real(*args, **kw)

    monkeypatch.setattr(scipy.optimize, "minimize", spy)
    m = 301
    target = np.linspace(1.0, 2.0, m) / np.linspace(1.0, 2.0, m).sum()

    def grad(p, extra):
        return float(np.sum((p - target) ** 2)), 2 * (p - target), np.zeros(0)

    wopt.optimize(lambda p, extra: grad(p, extra)[0], [(np.full(m, 1 / m), [])], m,
                  gradient=grad)
    assert callable(seen["L-BFGS-B"])


def test_optimal_candidates_name_the_gain_stop():
    """F5: the gain tolerance of F4 was stated nowhere: the optimal-weights candidates of
    the L-BFGS-B route now say it in their notes (JSON ``candidates[].notes``); the others
    do not."""
    gam, sig, r = _clients(301)
    adv = advise(Federation(gamma=gam, r=r, sigma=sig), methods="fedavg")
    notes = {c.weights: c.notes for c in adv.candidates}
    assert any("stopped once 3 iterations in a row lowered the mean risk by at most 1e-10"
               in n for n in notes["optimal"])
    assert not any("L-BFGS-B" in n for n in notes["samples"] + notes["uniform"])
    assert wopt.gain_note(wopt.NEWTON_MAX, 0, lambda p, x: None) == ()
    assert wopt.gain_note(20, 20, None) == ()


def test_maml_fl_estimate_at_ten_thousand_clients_covers_the_measured_time():
    """F6: advise's MAML-FL at 10,000 clients (Sigma = I) took 89 s of CPU against 42 s
    estimated (a + b M: its cost grows faster than M); measured 62.5 s after F1-F4, now
    estimated 110 s (a c M^2 term), with the small federations' estimates unchanged."""
    gam, sig, r = _clients(10_000, seed=1)
    est = estimate_seconds(Federation(gamma=gam, r=r, sigma=sig), "maml_fl")["maml_fl"]
    assert 89 < est < 150
    small = estimate_seconds(Federation(gamma=[0.5, 2.0], r=[1.0, 0.5], sigma=[1.0, 1.0]))
    assert small["maml_fl"] < 0.3
