"""riskcalc.rounds_limit("fedavg", local_steps=K, spectrum=...) for K >= 2 (``sigma.fedavg.curves``,
the linear pencil of ``sigma_pencil``) against independent routes: the Sigma = I scalar
subordination of ``fedavg`` (K >= 2), Sigma = c I by rescaling, ``sigma.fedavg.one_step`` (K = 1, the
scalar c(z) solve), the finite-M FedAvg minimizer of ``clients_limit`` (K = 1, T = inf), the
edges of ``sigma.fedavg.one_step`` and the literal algorithm simulated at two d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.fedavg import fedavg_curves
from riskcalc.linear.dynamics.sigma.fedavg.one_step import fedavg_sigma_curves
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves, local_stability


GAM = np.array([0.5, 2.0, 4.0])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
ROUNDS = np.array([0, 1, 2, 5, 20, np.inf])


def _close(new, old, atol):
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=atol)


@pytest.mark.parametrize("gam, K", [(GAM[:2], 3), (np.array([3.0, 4.0]), 2)])
def test_identity_spectrum_is_the_scalar_route(gam, K):
    """Sigma = I through the pencil against fedavg's scalar subordination with K local steps
    (pooled N > d, and N < d: the atom of D at 0). Measured: 1e-15."""
    new = fedavg_sigma_k_curves(gam, R[:2], SIG[:2], P[:2] / P[:2].sum(), 1.3, 0.15, K, 1.2,
                                ROUNDS, riskcalc.Spectrum([1.0]))
    old = fedavg_curves(gam, R[:2], SIG[:2], P[:2] / P[:2].sum(), 1.3, 0.15, K, 1.2, ROUNDS)
    _close(new, old, 1e-10)
    np.testing.assert_allclose(new["edges"], old["edges"][:2], rtol=1e-9)
    assert new["atom"] == pytest.approx(old["atom"], abs=1e-15)


def test_one_local_step_is_the_scalar_c_route():
    """K = 1 through the pencil (one row form per client) against ``sigma.fedavg.one_step`` (one scalar
    c(z) per node), a two-point spectrum, three heterogeneous clients (measured: 3e-15); its
    fixed point against the finite-M FedAvg limit with the spectrum (``clients_limit``)."""
    new = fedavg_sigma_k_curves(GAM, R, SIG, P, 1.3, 0.1, 1, 1.2, ROUNDS, SPEC)
    old = fedavg_sigma_curves(GAM, R, SIG, P, 1.3, 0.1, 1.2, ROUNDS, SPEC)
    _close(new, old, 1e-10)
    np.testing.assert_allclose(new["edges"], old["edges"], rtol=1e-9)
    ref = riskcalc.clients_limit("fedavg", gamma=GAM, r=R, sigma=SIG, weights=list(P),
                                 spectrum=SPEC)
    np.testing.assert_allclose(new["bias"][:, -1], ref.bias, rtol=0, atol=1e-10)
    np.testing.assert_allclose(new["variance"][:, -1], ref.variance, rtol=0, atol=1e-10)


def test_scaled_identity_is_a_rescaled_step():
    """Sigma = c I, K = 3 through ``rounds_limit``: Sigma = I with step eta c and noise
    sigma / sqrt(c), the (Sigma-weighted) risk times c, the distance unweighted."""
    c = 2.5
    kw = dict(gamma=GAM[:2], r=R[:2], sigma=SIG[:2], signal=1.1, rounds=ROUNDS, local_steps=3,
              weights="uniform", global_step=0.9)
    res = riskcalc.rounds_limit("fedavg", step_size=0.06, spectrum=riskcalc.Spectrum([c]), **kw)
    ref = riskcalc.rounds_limit("fedavg", **{**kw, "sigma": SIG[:2] / np.sqrt(c)},
                                step_size=0.06 * c)
    np.testing.assert_allclose(res.risk, c * ref.risk, rtol=0, atol=1e-10)
    np.testing.assert_allclose(res.distance_to_fixed_point, ref.distance_to_fixed_point,
                               rtol=0, atol=1e-10)
    assert res.contraction == pytest.approx(ref.contraction, rel=1e-9)


def test_against_the_simulated_algorithm_at_two_d():
    """The literal FedAvg iteration with K = 3 local steps (``montecarlo.linear.rounds``, exact
    given the designs), three heterogeneous clients, a two-point spectrum, sample weights:
    within 4 s.e. plus the finite-d gap 1 / d at each d (risk and distance to the fixed
    point), and within 4 s.e. after extrapolation in 1 / d. (K = 5, d = 100..800:
    ``benchmarks/bench_rounds_sigma_agreement.py``.)"""
    from montecarlo.linear.rounds import simulate_rounds

    eta = 0.8 * 2.0 / local_stability(SPEC, GAM, 1.0)
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=[0, 1, 3, 10, 30, np.inf],
              local_steps=3, step_size=eta, spectrum=SPEC)
    theory = riskcalc.rounds_limit("fedavg", **kw)
    sims = {d: simulate_rounds("fedavg", d=d, reps=30, seed=5, **kw) for d in (100, 200)}
    for d, sim in sims.items():
        gap = np.abs(sim.risk - theory.risk)
        assert np.all(gap <= 4 * sim.risk_se + 1.0 / d), (d, gap, sim.risk_se)
        gap = np.abs(sim.global_distance[0] - theory.distance_to_fixed_point)
        assert np.all(gap <= 4 * sim.global_distance_se[0] + 1.0 / d), (d, gap)
    extrap = 2 * sims[200].risk - sims[100].risk
    se = np.hypot(2 * sims[200].risk_se, sims[100].risk_se)
    assert np.all(np.abs(extrap - theory.risk) <= 4 * se + 1e-12)


def test_a_folding_filter_against_simulation():
    """One client with eta top(S) = 1.7 > 1, K = 2: q(s) = 1 - (1 - eta s)^2 folds at
    eta s = 1 inside the spectrum, where D's density is singular (Newton's method fails next to
    it and those points count as inside the spectrum: the top edge comes out 1.003 for 1). The
    curve against the literal algorithm at d = 200, 400 (4 s.e. plus 1 / d, and after
    extrapolation in 1 / d)."""
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=2.0, r=1.0, sigma=0.5, signal=1.0, local_steps=2, step_size=0.1,
              rounds=[0, 1, 3, 10], spectrum=riskcalc.Spectrum([1.0, 4.0]))
    theory = riskcalc.rounds_limit("fedavg", **kw)
    assert theory.diagnostics["edges"][1] == pytest.approx(1.0, abs=5e-3)
    sims = {d: simulate_rounds("fedavg", d=d, reps=40, seed=1, **kw) for d in (200, 400)}
    for d, sim in sims.items():
        assert np.all(np.abs(sim.risk - theory.risk) <= 4 * sim.risk_se + 1.0 / d)
    extrap = 2 * sims[400].risk - sims[200].risk
    se = np.hypot(2 * sims[400].risk_se, sims[200].risk_se)
    assert np.all(np.abs(extrap - theory.risk) <= 4 * se + 1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(local_steps=np.inf, gamma=[0.5, 1.0, 4.0]), "gamma_j = 1"),
    (dict(local_steps=2, step_size=0.5), "diverges on a client under the spectrum"),
    # Nine clients (the three tiled), refused by the time estimate before the edges (about
    # 1000 s against 600 at 500 rounds since the pairs' refit on real contours, which brought
    # 300 rounds to about 450 s; three clients at 400 rounds fit it).
    (dict(gamma=np.tile(GAM, 3), r=np.tile(R, 3), sigma=np.tile(SIG, 3), local_steps=50,
          step_size=0.01, rounds=[0, 500]),
     "route .* would take .* give local_steps <= .*, or rounds up to about"),
])
def test_refused(kwargs, match):
    args = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[0, 5], spectrum=SPEC)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", **{**args, **kwargs})


def test_own_models_and_command_line(capsys):
    """``predict fedavg --local-steps 2 --spectrum``: rows of ``rounds_limit``, the clients'
    own models its ``local_risk`` (``test_rounds_sigma_local``; personalization:
    ``test_rounds_sigma_personalize``)."""
    import json

    from riskcalc.cli import main

    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.5], r=0.3, sigma=0.5, signal=1.0,
                                rounds=[0, 5, np.inf], local_steps=2, step_size=0.05,
                                spectrum=riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7]))
    argv = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
            "2", "--signal", "1", "--rounds", "0,5,inf", "--local-step-size", "0.05",
            "--local-steps", "2", "--spectrum", "two-point:0.5,3,0.3", "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["risk"] for r in rows] == pytest.approx(res.risk[0], rel=1e-12)
    assert [r["local_risk"] for r in rows] == pytest.approx(res.local_risk[0], rel=1e-12)


def test_overflowed_rounds_carry_the_noise():
    """A diverging round map (global step 40, contraction ~20): at the overflowed rounds the
    variance is inf when the clients are noisy (it was 0: the computed value there is the
    overflow's NaN, read as 'no noise') and 0 when they are not; the own models likewise."""
    spec = riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5])
    kw = dict(gamma=[0.5, 2.0], r=0.5, signal=1.0, rounds=[1, 3000], local_steps=2,
              step_size=0.05, global_step=40.0, spectrum=spec)
    noisy = riskcalc.rounds_limit("fedavg", sigma=1.0, **kw)
    assert not noisy.converges and np.all(np.isfinite(noisy.variance[:, 0]))
    assert np.all(noisy.variance[:, 1] == np.inf) and np.all(noisy.local_risk[:, 1] == np.inf)
    quiet = riskcalc.rounds_limit("fedavg", sigma=0.0, **kw)
    assert np.all(quiet.variance == 0.0) and np.all(quiet.bias[:, 1] == np.inf)
