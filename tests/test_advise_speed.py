"""The fast routes of ``riskcalc advise`` (issue 30, item 1) against the routes they replace:
exact gradients of the mean finite-M risk against central differences, batched and Newton
solves against the public ``clients_limit`` and the nested scalar solves, quadrature of the
steps' filters against the pencils, per-row quadrature against the joint rule, closed traces
against mpmath. The optimal weights against the finite-difference optimizer and scipy:
tests/test_advise_weights.py; the time budget of the command: tests/test_advise_budget.py."""

import numpy as np
import pytest

import riskcalc
from riskcalc.advise import Federation, advise
from riskcalc.linear.finite_clients import own as finite_clients_own
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from riskcalc.linear.finite_clients.identity import rtfa_risks
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.steps.finite_clients import steps_group_limits
from riskcalc.linear.steps.identity import identity_steps_group_limits
from riskcalc.linear.engine.mp_quadrature import mp_expect


GAM = np.array([0.4, 1.7, 3.0, 0.9])
R = np.array([0.5, 1.2, 0.8, 1.6])
SIG = np.array([1.0, 0.4, 0.7, 0.2])
P = np.array([0.35, 0.15, 0.2, 0.3])
TUNING = {"fedavg": None, "ftfa": None, "rtfa": np.array([0.3, 1.1, 0.05, 2.0]),
          "maml_fl": 0.08, "pfedme": 0.6}


def _mean(method, p, tuning):
    kw = {} if tuning is None else {("alpha" if method == "maml_fl" else "lam"): tuning}
    return riskcalc.clients_limit(method, gamma=GAM, sigma=SIG, r=R, weights=p, **kw).mean_risk


@pytest.mark.parametrize("method", list(TUNING))
def test_gradient_matches_central_differences(method):
    """d mean / d p_j and d mean / d tuning against central differences of clients_limit.
    Tolerance: the limits are solved to ~1e-12 relative (root finders, quadrature), so a
    difference quotient with step h = 1e-5 carries ~1e-12 / 1e-5 = 1e-7 of noise plus an
    O(h^2) = 1e-10 truncation; 1e-6 of the gradient's size bounds both."""
    tun = TUNING[method]
    mean, gp, gt = mean_risk_gradient(method, gamma=GAM, sigma=SIG, r=R, weights=P, tuning=tun)
    assert mean == pytest.approx(_mean(method, P, tun), rel=1e-12)
    h = 1e-5
    fd = np.array([(_mean(method, P + h * e, tun) - _mean(method, P - h * e, tun)) / (2 * h)
                   for e in np.eye(P.size)])
    # clients_limit normalizes p, so its differences see the gradient projected off p.
    proj = gp - (gp @ P)
    np.testing.assert_allclose(proj, fd, atol=1e-6 * np.max(np.abs(fd)))
    if tun is None:
        assert gt is None
        return
    if np.ndim(tun):
        fdt = np.array([(_mean(method, P, tun * (1 + h * e)) - _mean(method, P, tun * (1 - h * e)))
                        / (2 * h * t) for e, t in zip(np.eye(tun.size), tun)])
    else:
        fdt = (_mean(method, P, tun * (1 + h)) - _mean(method, P, tun * (1 - h))) / (2 * h * tun)
    np.testing.assert_allclose(gt, fdt, atol=1e-6 * np.max(np.abs(fdt)))


@pytest.mark.parametrize("method,tuning", [("maml_fl", 0.01), ("maml_fl", 0.15),
                                           ("pfedme", 0.05), ("pfedme", 20.0)])
@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_newton_subordination_equals_nested_solves(method, tuning, weights, monkeypatch):
    """MAML-FL / pFedMe (Sigma = I): Newton on the whole subordination system gives the
    limits of the nested bracketed solves it replaced (still the fallback), to 1e-8."""
    count = np.ones(GAM.size)
    fast = own_group_limits(method, GAM, R, SIG, count, tuning, weights)
    calls = []

    def no_newton(*args):
        calls.append(1)
        return None

    monkeypatch.setattr(finite_clients_own, "_newton", no_newton)
    slow = own_group_limits(method, GAM, R, SIG, count, tuning, weights)
    assert calls
    np.testing.assert_allclose(fast, slow, rtol=1e-8)


@pytest.mark.parametrize("weights", ["samples", P])
def test_batched_rtfa_risks_equal_clients_limit(weights):
    """rtfa_risks (one subordination, one quadrature for every penalty row) equals
    clients_limit row by row, tiny and huge penalties included."""
    lams = np.array([[1e-9, 0.3, 5.0, 1e6], [2.0, 1e-4, 0.01, 0.7]])
    got = rtfa_risks(GAM, R, SIG, weights, lams)
    for row, lam in zip(got, lams):
        ref = riskcalc.clients_limit("rtfa", gamma=GAM, sigma=SIG, r=R, lam=lam,
                                     weights=weights).risk
        np.testing.assert_allclose(row, ref, rtol=1e-8)


@pytest.mark.parametrize("method,lam", [("ftfa", 0.0), ("rtfa", 0.4)])
def test_identity_steps_quadrature_equals_pencils(method, lam):
    """Sigma = I fine-tuning steps k = 0..40 by quadrature of the polynomial filters equal the
    pencils of steps_group_limits (an independent route), to 1e-8."""
    count, lams, eta = np.ones(GAM.size), np.full(GAM.size, lam), 0.1
    b1, v1 = identity_steps_group_limits(method, GAM, R, SIG, count, lams, "samples", 40, eta)
    b2, v2 = steps_group_limits(method, GAM, R, SIG, count, lams, "samples",
                                riskcalc.Spectrum.identity(), 40, eta)
    np.testing.assert_allclose(b1 + v1, b2 + v2, rtol=1e-8)
    np.testing.assert_allclose(v1, v2, rtol=1e-8, atol=1e-12)


def test_per_row_quadrature_equals_joint_rule():
    """mp_expect with per-row parameters (each row stops at its own convergence) equals the
    rule refined for all rows together, within the quadrature tolerance 1e-12."""
    gam = np.array([0.3, 0.99, 1.0 + 1e-3, 4.0])
    # (lam >= 1e-4: F(0) = 1 / lam enters as a constant subtracted from F, whose rounding,
    # 1e-16 / lam, must stay below the tolerance.)
    lam = np.array([1e-4, 1e-3, 0.5, 10.0])[:, None]
    joint = mp_expect(gam, lambda s: (1.0 / (s + lam), s / (s + lam) ** 2))
    rows = mp_expect(gam, lambda s, lr: (1.0 / (s + lr), s / (s + lr) ** 2), lam)
    np.testing.assert_allclose(rows, joint, rtol=1e-10)


def test_advise_equals_clients_limit_at_its_tuning():
    """Every candidate's risks are clients_limit's at the candidate's own weights and tuning
    (the batched and gradient routes only choose them)."""
    fed = Federation(gamma=GAM, r=R, sigma=SIG)
    adv = advise(fed, methods=["fedavg", "rtfa", "pfedme"])
    for c in adv.candidates:
        kw = {k: (np.array(v) if isinstance(v, list) else v) for k, v in c.tuning.items()}
        if c.method == "rtfa":
            # lam = 0 is FTFA (kept where interpolating is best).
            lam = kw.pop("lam")
            ref = np.where(lam > 0, riskcalc.clients_limit(
                "rtfa", gamma=GAM, sigma=SIG, r=R, weights=c.p, lam=np.where(lam > 0, lam, 1.0)
            ).risk, riskcalc.clients_limit("ftfa", gamma=GAM, sigma=SIG, r=R, weights=c.p).risk)
        else:
            ref = riskcalc.clients_limit(c.method, gamma=GAM, sigma=SIG, r=R, weights=c.p,
                                         **kw).risk
        np.testing.assert_allclose(c.risks, ref, rtol=1e-8)


def _mp_tau(gamma, fun):
    """tau(fun(S)) under the Marchenko-Pastur law of ratio gamma by mpmath quadrature of its
    density sqrt((b - s)(s - a)) / (2 pi gamma s) on [a, b], plus the atom (1 - 1/gamma)_+
    at 0: an independent route, in 25 digits."""
    import mpmath as mp

    g = mp.mpf(gamma)
    a, b = (1 - mp.sqrt(g)) ** 2, (1 + mp.sqrt(g)) ** 2

    def integrand(t):
        s = (a + b) / 2 + (b - a) / 2 * mp.cos(t)
        return fun(s) * (b - a) ** 2 / 4 * mp.sin(t) ** 2 / (2 * mp.pi * g * s)

    return mp.quad(integrand, [0, mp.pi]) + (max(1 - 1 / g, 0) * fun(mp.mpf(0)) if g > 1 else 0)


@pytest.mark.parametrize("gamma,lam,u,p", [
    (0.3, 0.05, 1.2, 0.4), (0.3, 5.0, 0.2, 0.1), (2.5, 0.01, 0.7, 0.3), (2.5, 40.0, 0.5, 0.6),
    (1.02, 1e-3, 0.8, 0.5), (0.9, 2.0, 1e-3, 0.05), (15.0, 0.02, 3.0, 0.2), (4.0, 1e-6, 0.5, 0.3)])
def test_rtfa_closed_traces_equal_mpmath(gamma, lam, u, p):
    """The closed forms of RTFA's six target traces (``target_traces.ridge_traces``: partial
    fractions of Marchenko-Pastur Stieltjes transforms, the atom of gamma > 1 apart) against
    25-digit quadrature of the density, including points ``target_traces`` leaves to its
    Chebyshev quadrature (poles close together relative to the lower edge). Tolerance: the
    Stieltjes forms are accurate to a few ulps and the divided differences lose at most a
    factor (edge + max(lam, u)) / |u - lam| each (<= 2 where the closed forms are used; <= 50
    at the last two points): 1e-13."""
    import mpmath as mp

    from riskcalc.linear.finite_clients.target_traces import ridge_traces

    mp.mp.dps = 25
    L, U, P = mp.mpf(lam), mp.mpf(u), mp.mpf(p)
    funs = [lambda s: (L / (s + L)) ** 2, lambda s: (L / ((s + L) * (s + U))) ** 2 / P ** 2,
            lambda s: s * (L / ((s + L) * (s + U))) ** 2 / P ** 2,
            lambda s: (s * L / ((s + L) * (s + U))) ** 2 / P ** 2,
            lambda s: s * (L / (s + L)) ** 2 / (s + U) / P]
    ref = np.array([float(_mp_tau(gamma, f)) for f in funs])
    ref = np.append(ref, ref[4] / lam)
    got = ridge_traces(np.array([gamma]), np.array([lam]), np.array([p]), np.array([u]))[:, 0]
    np.testing.assert_allclose(got, ref, rtol=1e-13)


def test_advise_risks_equal_the_general_spectrum_route():
    """A pinned heterogeneous federation (12 clients, seeded as benchmarks/bench_advise.py's):
    every FedAvg / FTFA / RTFA candidate's risks, at the weights and penalties advise returns,
    equal the general-spectrum route (``finite_clients.sigma``, a numerical subordination that
    shares none of the Sigma = I closed forms or the batched quadrature) at Sigma = 2 I, where
    the bias doubles and the variance is unchanged at twice the penalty."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits

    rng = np.random.default_rng(np.random.SeedSequence([30, 12, 0]))
    gam = np.exp(rng.uniform(np.log(0.3), np.log(4.0), 12))
    r, sig = rng.uniform(0.2, 2.0, 12), rng.uniform(0.1, 1.5, 12)
    adv = advise(Federation(gamma=gam, r=r, sigma=sig), methods=["fedavg", "ftfa", "rtfa"])
    assert len(adv.candidates) == 9
    for c in adv.candidates:
        lam = np.array(c.tuning.get("lam", np.zeros(12)))
        if c.method == "rtfa":
            assert np.all(lam > 0)            # tuned penalties of a noisy federation
        b, v = sigma_group_limits(c.method, gam, r, sig, np.ones(12), 2 * lam, c.p,
                                  riskcalc.Spectrum([2.0]))
        np.testing.assert_allclose(c.risks, b / 2 + v, rtol=1e-9)


@pytest.mark.parametrize("gam,p", [
    ([0.4, 1.7, 3.0, 0.9], [0.35, 0.15, 0.2, 0.3]),
    ([2.0, 2.0, 50.0], [0.2, 0.5, 0.3]),                      # pooled N/d - 1 = 0.02
    ([1.0 / (1 + 1e-7), 1e3], [0.999, 0.001]),                 # pooled barely above d
    ([1e-3] * 3 + [40.0], [0.1, 0.1, 0.1, 0.7])])
def test_solve_g_equals_a_50_digit_root(gam, p):
    """g = tau(A^-1) (``identity.solve_g``: Newton from g = 1, the bracketed solver as
    fallback) against mpmath's root of sum_l p_l g / (1 + gamma_l p_l g) = 1 in 50 digits;
    the equation's condition number g f'(g) / f ~ 1 / excess bounds the error: 1e-13."""
    import mpmath as mp

    from riskcalc.linear.finite_clients.identity import solve_g

    mp.mp.dps = 50
    gam, p = np.array(gam), np.array(p)
    got = solve_g(gam, p, np.ones(gam.size))
    root = mp.findroot(lambda g: mp.fsum(mp.mpf(q) * g / (1 + mp.mpf(c) * mp.mpf(q) * g)
                                         for c, q in zip(gam, p)) - 1, mp.mpf(got))
    assert abs(got - float(root)) <= 1e-13 * float(root)
