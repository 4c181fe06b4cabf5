"""Logistic limits with a covariance spectrum (riskcalc.logistic.spectrum.fixed_point, issue 33), each against
an independent route: the isotropic CGMT solver (Sigma = I), the exact rescaling of a scaled
identity, the linear family's ridge limit (the same equations with the square loss), finite
differences (the solver's Jacobian) and exact-Newton simulation."""

import json

import numpy as np
import pytest
from scipy.optimize import root

import riskcalc
from riskcalc import Spectrum
from riskcalc.logistic.spectrum import fixed_point as spectral
from riskcalc.logistic.engine.gaussian import Rule

FIELDS = ("risk", "cosine", "cosine_uncentred", "test_logloss", "test_error", "a", "b", "q",
          "mu")
POINTS = [  # gamma, signal, r, lam
    (2.0, 1.5, 1.0, 0.3), (1.0, 0.0, 1.0, 1.0),
    (0.2, 1.0, 0.5, 0.0),          # the MLE (gamma below the Candes-Sur threshold)
    (1.0, 4.0, 3.0, 0.2),          # ||w_i|| = 5: composite quadrature rules
]
TWO_POINT = Spectrum([1.0, 4.0], weights=[0.5, 0.5])


@pytest.mark.parametrize("gamma,signal,r,lam", POINTS)
def test_identity_spectrum_reproduces_the_isotropic_limit(gamma, signal, r, lam):
    """Sigma = I through the spectral equations (3 unknowns, resolvent integrals) against the
    isotropic solver (4 unknowns, fixed_point): the same limits to 1e-10."""
    ref = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam)
    got = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam,
                                  spectrum=Spectrum.identity())
    for f in FIELDS:
        want = getattr(ref, f)
        if np.isnan(want):
            assert np.isnan(getattr(got, f))
        else:
            assert getattr(got, f) == pytest.approx(want, rel=1e-10, abs=1e-10), f
    assert got.sigma_risk == pytest.approx(ref.risk, rel=1e-10)


@pytest.mark.parametrize("c,centre", [(0.25, "oracle"), (3.0, "fedavg")])
def test_scaled_identity_is_a_rescaling_of_the_isotropic_limit(c, centre):
    """x = sqrt(c) z and v = sqrt(c) w turn Sigma = c I into the isotropic problem with
    (S, r, lam) -> (sqrt(c) S, sqrt(c) r, lam / c); ||w - w_i||^2 = ||v - v_i||^2 / c and the
    Sigma-weighted error is the isotropic risk (module docstring of spectral)."""
    gamma, signal, r, lam = 1.5, 1.2, 0.8, 0.4
    got = riskcalc.logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam,
                                  spectrum=Spectrum([c]), centre=centre)
    ref = riskcalc.logistic_limit(gamma=gamma, signal=np.sqrt(c) * signal, r=np.sqrt(c) * r,
                                  lam=lam / c, centre=centre)
    assert got.risk == pytest.approx(ref.risk / c, rel=1e-9)
    assert got.sigma_risk == pytest.approx(ref.risk, rel=1e-9)
    for f in ("cosine", "cosine_uncentred", "test_logloss", "test_error"):
        assert getattr(got, f) == pytest.approx(getattr(ref, f), rel=1e-9), f


class SquareChannel:
    """The moments (D, E2, E3) of ``gaussian.Rule.moments`` for the square loss
    ``(y - t)^2 / 2`` with linear labels ``y = kappa s + sigma xi``: the proximal map is linear,
    ``psi = (omega - y) / (1 + mu)``, so every moment is closed-form."""

    def __init__(self, kappa, sigma):
        self.kappa, self.sigma = kappa, sigma

    def moments(self, a, rho, mu, derivatives=True):
        k, e = self.kappa, (a - self.kappa) ** 2 + rho ** 2 + self.sigma ** 2
        m = np.array([1 / (1 + mu), mu ** 2 * e / (1 + mu) ** 2, -(a - k) / (1 + mu)])
        dm = np.array([[0.0, 0.0, -1 / (1 + mu) ** 2],
                       [2 * mu ** 2 * (a - k) / (1 + mu) ** 2, 2 * mu ** 2 * rho / (1 + mu) ** 2,
                        2 * mu * e / (1 + mu) ** 3],
                       [-1 / (1 + mu), 0.0, (a - k) / (1 + mu) ** 2]])
        return m, (dm if derivatives else None)


@pytest.mark.parametrize("spectrum", [Spectrum.identity(), TWO_POINT,
                                      Spectrum.power_law(1.0, 300)])
@pytest.mark.parametrize("gamma,signal,r,sigma,lam", [(2.0, 1.3, 1.0, 0.5, 0.5),
                                                      (0.5, 0.7, 2.0, 1.0, 0.1)])
def test_square_loss_gives_the_linear_family_ridge_limit(spectrum, gamma, signal, r, sigma, lam):
    """The spectral equations with the square loss's channel are ridge regression toward the
    centre: the Sigma-weighted error must be the linear family's rtfa (centre w_0) and
    local_ridge (centre 0) risk, computed by the kappa equation (riskcalc.linear)."""
    for theta, method, kw in ((1.0, "rtfa", dict(r=r)),
                              (0.0, "local_ridge", dict(rho=np.hypot(signal, r)))):
        p = spectral.problem(gamma, signal, r, lam, spectrum, theta)
        start = [0.5 * p.kappa, np.log(0.5 * p.kappa), np.log(gamma / (lam + 0.5))]
        sol = root(spectral.residuals, np.array(start),
                   args=(SquareChannel(p.kappa, sigma), p), jac=True, method="hybr",
                   options={"xtol": 1e-14})
        assert np.max(np.abs(sol.fun)) < 1e-12
        a, rho = sol.x[0], np.exp(sol.x[1])
        want = riskcalc.limit(method, gamma=gamma, sigma=sigma, lam=lam, spectrum=spectrum,
                              **kw).risk
        assert (a - p.kappa) ** 2 + rho ** 2 == pytest.approx(want, rel=1e-10), method


def _square_finetune_moments(sigma):
    """``finetune.moments`` for the square loss with linear labels ``y = kappa s + sigma xi``:
    both proximal maps are linear (``psi = u / (1 + mu)``), so every expectation is a dot
    product of coefficient vectors over ``(s, g_1, g_2, xi)``."""
    def moments(y, view, lam, rule):
        A_h, nu_gh = y[0], y[3]
        mu_h, k_hg, nu_h = np.exp(y[[1, 2, 4]])
        c1 = nu_gh / view.nu_g
        c2 = np.sqrt(max(nu_h ** 2 - c1 ** 2, 1e-300))
        k, mg = view.kappa, view.mu_g
        u_g = np.array([view.A_g - k, view.nu_g, 0.0, -sigma])
        u_h = np.array([A_h - k, c1, c2, -sigma]) - k_hg / (1 + mg) * u_g
        psi_g, psi_h = u_g / (1 + mg), u_h / (1 + mu_h)
        return dict(mu_h=mu_h, k_hg=k_hg, nu_h=nu_h, A_h=A_h, nu_gh=nu_gh,
                    D_h=1 / (1 + mu_h), D_x=1 / ((1 + mg) * (1 + mu_h)),
                    D_hg=1 / ((1 + mg) * (1 + mu_h)), E3=-psi_h[0],
                    Q_h=mu_h ** 2 * psi_h @ psi_h / view.gamma,
                    Q_gh=mg * mu_h * psi_g @ psi_h / view.gamma)
    return moments


@pytest.mark.parametrize("spectrum", [TWO_POINT, Spectrum.power_law(1.0, 200)])
def test_square_loss_finite_m_gives_the_linear_family_limits(spectrum):
    """The finite-M equations (pooled_spectral, finetune_spectral, fedprox_spectral) with the
    square loss's channel against the linear family's finite-M limits (fedavg: pooled least
    squares; rtfa; pfedme) for M identical clients: the global ridge 1e-10 stands in for the
    ridgeless pooled fit (pooled gamma 0.5), so 1e-7."""
    from riskcalc.logistic.spectrum import fedprox as fedprox_spectral
    from riskcalc.logistic.spectrum import finetune as finetune_spectral
    from riskcalc.logistic.spectrum import pooled as pooled_spectral
    from riskcalc.logistic.blocks.pooled import Federation

    g, r, S, sigma, M, lam, lam_g = 1.5, 1.0, 1.3, 0.5, 3, 0.7, 1e-10
    fed = Federation(np.array([g]), np.array([r]), np.array([M]), S, "samples")
    kappa = np.sqrt((S * S + r * r) * spectrum.mean)
    channel = [SquareChannel(kappa, sigma)]

    def linear(method, **kw):
        return riskcalc.limit(method, gamma=g, r=r, sigma=sigma, clients=M, spectrum=spectrum,
                              **kw).risk

    sol = root(pooled_spectral.residuals, np.array([0.8 * kappa, 0.0, 0.0]),
               args=(fed, spectrum, lam_g, channel), method="hybr", options={"xtol": 1e-14})
    a, rho = sol.x[0], np.exp(sol.x[1])
    assert (a - kappa) ** 2 + rho ** 2 == pytest.approx(linear("fedavg"), rel=1e-7)
    w = pooled_spectral._views(sol.x, fed, spectrum, lam_g, channel)
    st = pooled_spectral.SpectralPooledState(sol.x[:1], np.exp(sol.x[1:2]), w["mu"], w["eps"],
                                             float(np.exp(sol.x[2])), w["E"], w["F"], w["J"],
                                             w["kappa"], w["Dbar"], 0, 0.0)
    cp = finetune_spectral.Coupling(fed, st, 0, spectrum, lam_g)
    cp.moments = _square_finetune_moments(sigma)
    y0 = np.array([a, np.log(g / (lam + 1)), np.log(st.mu[0] * lam / (lam + 1)), rho ** 2,
                   np.log(rho)])
    sol = root(finetune_spectral.residuals, y0, args=(cp, lam, None), method="hybr",
               options={"xtol": 1e-14})
    assert np.max(np.abs(sol.fun)) < 1e-12
    risk = (sol.x[0] - kappa) ** 2 + np.exp(2 * sol.x[4])
    assert risk == pytest.approx(linear("rtfa", lam=lam), rel=1e-7)
    sol = root(fedprox_spectral.residuals, np.array([0.8 * kappa, 0.0, np.log(g / (lam + 1))]),
               args=(fed, spectrum, lam, lam_g, channel), method="hybr", options={"xtol": 1e-14})
    risk = (sol.x[0] - kappa) ** 2 + np.exp(2 * sol.x[1])
    assert risk == pytest.approx(linear("pfedme", lam=lam), rel=1e-7)


def test_jacobian_matches_finite_differences():
    p = spectral.problem(2.0, 1.5, 1.0, 0.3, TWO_POINT, 0.7)
    x = np.array([0.8, np.log(0.9), np.log(1.3)])
    rule = Rule.at(p.kappa, 56, 0.8, 0.9)
    _, jac = spectral.residuals(x, rule, p)
    h = 1e-6
    num = np.stack([(spectral.residuals(x + h * e, rule, p)[0]
                     - spectral.residuals(x - h * e, rule, p)[0]) / (2 * h)
                    for e in np.eye(3)], 1)
    assert np.max(np.abs(jac - num)) < 1e-7


def test_simulation_two_point_spectrum():
    """Exact-Newton simulation at d = 120 (x ~ N(0, Sigma), Sigma half 1, half 4): within
    3 s.e. plus 3% (the finite-d bias measured at d = 200-800 is below 0.5%: docs)."""
    from montecarlo.logistic.ridge import simulate

    kw = dict(gamma=1.0, signal=1.5, r=1.0)
    pred = riskcalc.logistic_limit(**kw, lam=0.3, spectrum=TWO_POINT)
    sim = simulate(**kw, lams=[0.3], d=120, reps=40, seed=5, spectrum=TWO_POINT)
    for q in ("risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss",
              "test_error"):
        mean, se = float(sim[q][0][0]), float(sim[q][1][0])
        p = float(getattr(pred, q))
        assert abs(mean - p) <= 3 * se + 0.03 * abs(p), q
    # The spectrum matters: the isotropic limit is far outside those bounds.
    iso = riskcalc.logistic_limit(**kw, lam=0.3)
    mean, se = float(sim["sigma_risk"][0][0]), float(sim["sigma_risk"][1][0])
    assert abs(mean - iso.sigma_risk) > 3 * se + 0.03 * mean


def test_local_ridge_at_finite_m_takes_a_spectrum():
    """Local ridge does not use the global model: at finite M it is the spectral limit with
    centre 0, for each client, and the global model's fields are absent."""
    res = riskcalc.logistic_clients_limit(gamma=[1.0, 2.0], r=[0.5, 1.0], signal=1.5, lam=0.4,
                                          method="local_ridge", spectrum=TWO_POINT)
    for j, (g, r) in enumerate([(1.0, 0.5), (2.0, 1.0)]):
        one = riskcalc.logistic_limit(gamma=g, signal=0.0, r=np.hypot(1.5, r), lam=0.4,
                                      spectrum=TWO_POINT)
        assert res.risk[j] == pytest.approx(one.risk, rel=1e-6)
        assert res.sigma_risk[j] == pytest.approx(one.sigma_risk, rel=1e-6)
        # Centre 0: the centred and uncentred cosines coincide.
        assert res.cosine_uncentred[j] == pytest.approx(one.cosine, rel=1e-6)
    out = res.as_dict()
    assert "global_overlap" not in out and "global_dist" not in out
    assert out["params"]["spectrum"] == TWO_POINT.describe()


@pytest.mark.parametrize("call,match", [
    (lambda: riskcalc.logistic_limit(gamma=1, signal=1, r=1, lam=1, spectrum=[1.0, 4.0]),
     "riskcalc.Spectrum"),
    (lambda: riskcalc.logistic_limit(gamma=1, signal=1, r=1, lam=1, spectrum=Spectrum(
        [1.0, 4.0], signal_weights=[0.9, 0.1])), "isotropic"),
    (lambda: riskcalc.logistic_limit(gamma=1.0, signal=1, r=1, lam=0.0, spectrum=TWO_POINT),
     "MLE does not exist"),
    # Separable once whitened (margins 10x the isotropic ones), not at Sigma = I... either way
    # the pooled MLE's existence is checked in the whitened coordinates.
    (lambda: riskcalc.logistic_clients_limit(gamma=[1.0, 1.0], r=[1, 1], signal=1,
                                             global_lam=0.0, method="fedavg",
                                             spectrum=Spectrum([100.0])), "separable"),
])
def test_refusals(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_grid_broadcasts_point_by_point():
    spec = TWO_POINT
    grid = riskcalc.logistic_limit(gamma=[0.5, 2.0], signal=1.0, r=[[0.5], [1.0]], lam=0.3,
                                   spectrum=spec)
    assert grid.risk.shape == (2, 2)
    one = riskcalc.logistic_limit(gamma=2.0, signal=1.0, r=0.5, lam=0.3, spectrum=spec)
    assert grid.risk[0, 1] == one.risk and grid.sigma_risk[0, 1] == one.sigma_risk


def test_method_names_pfedme_canonical_fedprox_alias():
    kw = dict(gamma=[1.0], r=[0.5], signal=1.0, lam=1.0, global_lam=0.05)
    a = riskcalc.logistic_clients_limit(**kw, method="pfedme")
    b = riskcalc.logistic_clients_limit(**kw, method="fedprox")
    assert a.method == b.method == "pfedme" and a.as_dict()["risk"] == b.as_dict()["risk"]


def test_cli_spectrum_and_names(capsys):
    from riskcalc.cli import main

    base = ["--model", "logistic", "--gamma", "1", "--signal", "1.5", "--r", "1", "--lam",
            "0.3"]
    assert main(["predict", "rtfa", *base, "--spectrum", "two-point:1,4,0.5", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ref = riskcalc.logistic_limit(gamma=1, signal=1.5, r=1, lam=0.3, spectrum=TWO_POINT)
    assert got["risk"] == ref.risk and got["sigma_risk"] == ref.sigma_risk
    # local ridge at finite M: no global-model fields, no --global-lam needed.
    assert main(["predict", "local_ridge", *base, "--clients", "3"]) == 0
    out = capsys.readouterr().out
    assert "global_" not in out and "cosine_uncentred" in out
    # fedprox is read as pfedme on the command line too.
    assert main(["predict", "fedprox", *base, "--clients", "2", "--global-lam", "0.05",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "pfedme"


FED = dict(gamma=[1.0, 2.0], r=[0.5, 1.0], signal=1.5, method="fedavg")


@pytest.mark.parametrize("method,lam", [("fedavg", None), ("rtfa", 0.5), ("pfedme", 0.5)])
def test_finite_m_scaled_identity(method, lam):
    """Every finite-M method with a spectrum (pooled_spectral, finetune_spectral,
    fedprox_spectral) at Sigma = c I against the isotropic solvers (pooled, finetune, fedprox)
    at (sqrt(c) S, sqrt(c) r_j, global_lam / c, lam / c), the ||.||^2 fields divided by c (the
    map of test_scaled_identity_...; it moves every power of s in the resolvent integrals).
    Measured: Sigma = I reproduces the isotropic solvers to 1e-15 as well."""
    kw = dict(FED, method=method, weights="uniform", global_lam=0.05, lam=lam)
    c = 2.5
    scaled = riskcalc.logistic_clients_limit(**kw, spectrum=Spectrum([c]))
    iso = riskcalc.logistic_clients_limit(**dict(
        kw, signal=np.sqrt(c) * FED["signal"], r=list(np.sqrt(c) * np.array(FED["r"])),
        global_lam=0.05 / c, lam=None if lam is None else lam / c))
    np.testing.assert_allclose(scaled.risk, iso.risk / c, rtol=1e-8)
    np.testing.assert_allclose(scaled.sigma_risk, iso.risk, rtol=1e-8)
    np.testing.assert_allclose(scaled.test_error, iso.test_error, rtol=1e-8)
    assert scaled.global_dist == pytest.approx(iso.global_dist / c, rel=1e-8)
    assert scaled.global_overlap == pytest.approx(iso.global_overlap, rel=1e-8)


def test_finite_m_simulation():
    """Exact Newton fits (montecarlo.logistic.pipeline: the pooled model, fine-tuning, local
    ridge and the joint objective) with Sigma half 1, half 4 at d = 80, 2 clients: within
    3 s.e. plus 6% (finite d; the target is client 0)."""
    from montecarlo.logistic.pipeline import simulate_pipeline

    kw = dict(gamma=FED["gamma"], r=FED["r"], signal=1.5, global_lam=0.05, weights="uniform")
    sim = simulate_pipeline(**kw, lams=[0.5], d=80, reps=8, seed=3, spectrum=TWO_POINT,
                            pfedme=True)
    for method in ("fedavg", "rtfa", "local_ridge", "pfedme"):
        th = riskcalc.logistic_clients_limit(**kw, method=method, spectrum=TWO_POINT,
                                             target=0, lam=None if method == "fedavg" else 0.5)
        for q in ("risk", "sigma_risk", "cosine_uncentred", "test_error"):
            mean, se = (float(np.ravel(v)[0]) for v in sim[method][q])
            p = float(getattr(th, q)[0])
            assert abs(mean - p) <= 3 * se + 0.06 * abs(p), (method, q)
    th = riskcalc.logistic_clients_limit(**kw, method="fedavg", spectrum=TWO_POINT, target=0)
    mean, se = (float(v) for v in sim["global"]["dist"])
    assert abs(mean - th.global_dist) <= 3 * se + 0.06 * th.global_dist
