"""Finite-M MAML-FL at large and unit-order alpha (issue 32: extreme but valid parameters answer
or say why not). ``clients_limit('maml_fl', alpha=1e100)`` failed in the Marchenko-Pastur
quadrature (psi = s (1 - alpha s)^4 overflowed), and a federation without a client that caps
tau(A^-1) (gamma [2, 0.5] at alpha = 1 or 10, where phi(S_l) has a zero on the small-gamma
client's spectrum) was refused as "pinned within rounding of ... inf" whenever Newton's method
handed over to the nested solves."""

import numpy as np
import pytest

import riskcalc
from riskcalc import ClientSpec
from riskcalc.linear.finite_clients import own
from riskcalc.linear.finite_clients.identity import client_weights


@pytest.mark.parametrize("alpha", [1.0, 10.0])
def test_uncapped_nested_solves_agree_with_newton(monkeypatch, alpha):
    """Without a cap the nested solves (Newton disabled) reach the root Newton finds."""
    gam, count = np.array([2.0, 1.5]), np.array([1.0, 2.0])
    p = client_weights(gam, count, "samples")
    phi = own.objective("maml_fl", alpha)[0]
    g, t = own._subordination(gam, p, count, phi)
    assert own.global_cap(gam, p, phi) == np.inf
    monkeypatch.setattr(own, "_newton", lambda *args: None)
    g2, t2 = own._subordination(gam, p, count, phi)
    assert g2 == pytest.approx(g, rel=1e-9) and t2 == pytest.approx(t, rel=1e-8)


def test_unit_alpha_with_a_zero_of_phi_on_a_spectrum_answers():
    """gamma [2, 0.5] at alpha = 1 (1/alpha inside both clients' spectra) answers, between its
    neighbours on either side. Its value, 1.978 for client 0, was checked outside the suite
    against eq. 12 as written (``montecarlo.linear.federation.simulate``): 1.965 +- 0.016 at
    d = 400 (150 draws), where alpha = 0.01, the FTFA-like end, is off by -1.4% on the same
    draws (finite-d bias)."""
    risks = [riskcalc.clients_limit("maml_fl", gamma=[2, 0.5], r=[1, 1], sigma=[0.5, 0.5],
                                    alpha=a).risk[0] for a in (0.97, 1.0, 1.03)]
    assert risks[0] < risks[1] < risks[2] and risks[2] - risks[0] < 0.2


def test_objective_scale_leaves_the_risk_unchanged(monkeypatch):
    """The identity the large-alpha form rests on: phi -> c phi, psi -> c^2 psi changes
    nothing (A and the right-hand side of the normal equations scale together)."""
    args = ([2.0, 1.5], [1.0, 0.5], [0.5, 0.3], [1, 2], 0.7, "samples")
    before = own.own_group_limits("maml_fl", *args)
    phi, psi, lam = own.objective("maml_fl", 0.7)
    monkeypatch.setattr(own, "objective", lambda m, a: (lambda s: 7.3 * phi(s),
                                                         lambda s: 7.3 ** 2 * psi(s), lam))
    after = own.own_group_limits("maml_fl", *args)
    np.testing.assert_allclose(after, before, rtol=1e-9)


def test_large_alpha_clients_below_one_keep_least_squares():
    """Every client at gamma < 1 keeps its own least squares whatever the global model:
    sigma^2 gamma / (1 - gamma) = 1 here (alpha = 1e50 overflowed, Q = -inf)."""
    out = riskcalc.clients_limit("maml_fl", gamma=[0.5, 0.5], r=[1.0, 1.0], sigma=[1.0, 1.0],
                                 alpha=1e50)
    np.testing.assert_allclose(out.risk, [1.0, 1.0], rtol=1e-12)


def test_large_alpha_converges_to_its_limit():
    """alpha -> infinity: the weights become (X_j X_j^T / n_j)^2; the risk settles (gaps
    shrinking like 1/alpha) and stays finite up to the largest double."""
    fed = dict(gamma=[2, 0.5], r=[1, 1], sigma=[0.5, 0.5])
    risk = {a: riskcalc.clients_limit("maml_fl", alpha=a, **fed).risk[0]
            for a in (1e3, 1e4, 1e100, 1e300)}
    assert abs(risk[1e3] - risk[1e100]) > 5 * abs(risk[1e4] - risk[1e100]) > 0
    assert risk[1e300] == pytest.approx(risk[1e100], rel=1e-12)


def test_large_alpha_against_simulation():
    """alpha = 1e100 against the exact conditional measure at d = 200 (4 clients at gamma 2,
    20 draws: within 4 s.e. + 1%, as tests/test_finite_clients_maml_pfedme.py's simulations)."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = ClientSpec("maml_fl", gamma=2.0, r=1.0, sigma=0.5, alpha=1e100)
    c = compare(spec, Setting(d=200, clients=4, global_model="federated", weights="samples"),
                reps=20)
    assert c.limit.route == "finite_clients"
    s = c.summary["risk"]
    assert np.isfinite(s["mean"])
    assert abs(s["mean"] - c.limit.risk) <= 4 * s["se"] + 0.01 * c.limit.risk


SPECTRUM = "two-point:1,4,0.5"


@pytest.mark.parametrize("key,value", [("spectrum", SPECTRUM),
                                       ("spectra", ["identity", SPECTRUM])])
def test_large_alpha_with_spectra_answers(key, value):
    """The spectrum and covariate-shift routes at alpha up to 1e300: alpha^2 overflowed (an
    OverflowError traceback at 1e300) and the continuation in alpha did not converge from
    alpha ~ 1e6; under shift alpha = 1000 took 188 s. Now one form, divided by alpha^2,
    continued in 1/alpha: the risk settles like 1/alpha."""
    fed = dict(gamma=[2, 0.5], r=[1, 1], sigma=[0.5, 0.5], **{key: value})
    risk = {a: riskcalc.clients_limit("maml_fl", alpha=a, **fed).risk[0]
            for a in (1e3, 1e4, 1e8, 1e300)}
    assert abs(risk[1e3] - risk[1e300]) > 5 * abs(risk[1e4] - risk[1e300]) > 0
    assert risk[1e8] == pytest.approx(risk[1e300], rel=1e-7)


def test_large_alpha_spectrum_routes_meet_the_identity_route():
    """A spectrum of mean 1 within 1e-4 of the identity, shared or one client's, gives the
    Marchenko-Pastur route's value at alpha = 1e100 (independent solvers: companion pencils
    against scalar quadrature; the spread is kept above ``NEAR_IDENTITY``, below which the
    shared spectrum is taken as Sigma = I and the comparison would be with itself; merging
    moves the limit at second order, ~2e-9 here)."""
    from riskcalc.linear.finite_clients import NEAR_IDENTITY

    fed = dict(gamma=[2, 0.5], r=[1, 1], sigma=[0.5, 0.5], alpha=1e100)
    near = "two-point:0.99995,1.00005,0.5"
    assert 1.00005 / 0.99995 - 1 > 2 * NEAR_IDENTITY
    base = riskcalc.clients_limit("maml_fl", **fed).risk
    for kw in ({"spectrum": near}, {"spectra": [near, "identity"]}):
        np.testing.assert_allclose(riskcalc.clients_limit("maml_fl", **fed, **kw).risk, base,
                                   rtol=1e-6)


def test_large_alpha_spectrum_against_simulation():
    """alpha = 1e100 on a two-point spectrum against the exact conditional measure at d = 400
    (2 clients at gamma 1.5, 10 draws; within 4 s.e. + 1%; at d = 200 the finite-d bias is
    +3%, at d = 400 40 draws gave +0.17% +- 0.38%)."""
    from montecarlo.compare import compare
    from montecarlo.linear.instances import Setting

    spec = ClientSpec("maml_fl", gamma=1.5, r=1.0, sigma=0.5, alpha=1e100,
                      spectrum=riskcalc.Spectrum.two_point(1.0, 4.0, 0.5))
    c = compare(spec, Setting(d=400, clients=2, global_model="federated", weights="samples"),
                reps=10)
    assert c.limit.route == "finite_clients"
    s = c.summary["risk"]
    assert abs(s["mean"] - c.limit.risk) <= 4 * s["se"] + 0.01 * c.limit.risk


@pytest.mark.parametrize("key,value", [("spectrum", SPECTRUM),
                                       ("spectra", ["identity", SPECTRUM])])
def test_pfedme_large_lam_with_spectra_reaches_fedavg(key, value):
    """pFedMe's lam -> infinity limit is FedAvg's global model kept as is; the spectrum and
    shift routes refused from lam = 1e5 (Lam = lam - p lam^2 / c lost its digits). Against
    RTFA at lam = 1e100 (the FedAvg-objective route, another solver): gaps shrink like
    1/lam and vanish at the end."""
    fed = dict(gamma=[2, 0.5], r=[1, 1], sigma=[0.5, 0.5], **{key: value})
    end = riskcalc.clients_limit("rtfa", lam=1e100, **fed).risk
    gap = {lam: np.max(np.abs(riskcalc.clients_limit("pfedme", lam=lam, **fed).risk - end))
           for lam in (1e4, 1e5, 1e6, 1e100)}
    assert 5 * gap[1e5] < gap[1e4] and 5 * gap[1e6] < gap[1e5]
    assert gap[1e100] <= 1e-9 * np.max(end)
