"""Figure p004-fig3-theory: the identities it is built on, each against a second route (its
build in quick mode is tests/test_figures.py's)."""

import numpy as np
import pytest

import figures.p004_fig3_theory as fig
import riskcalc
from montecarlo.linear.rounds import simulate_rounds


def test_risk_is_affine_in_r_squared_for_the_limits():
    """Every curve over r is read from r = 0 and r = 1 (a + b r^2, module docstring): a direct
    evaluation at another r agrees to rounding (Algorithm 1 with exact prox, after T rounds and
    at the fixed point, server and own models)."""
    def alg1(r):
        res = riskcalc.rounds_limit("pfedme", **fig._fed(r), signal=0.0, rounds=[7, np.inf],
                                    local_steps=np.inf, weights="uniform",
                                    **fig.alg1_steps(0.7, np.inf))
        return np.stack([res.global_risk, res.risk])
    r = np.array([1.7, 0.3])
    from_two = fig.affine(alg1, r)
    for i, rv in enumerate(r):
        np.testing.assert_allclose(from_two[..., i], alg1(rv), rtol=1e-10)


def test_simulated_points_are_the_simulations_at_that_r():
    """The simulated points at r come from the simulations at r = 0 and r = 1: what the
    simulator returns at r itself with the same seed, replicate by replicate."""
    kw = dict(rounds=[3, np.inf], local_steps=2, **fig.alg1_steps(1.0, 2))
    ctx = type("Ctx", (), dict(seed=5, n_jobs=1, progress=False, cache=lambda self: None))()
    glob, loc = fig.simulated(ctx, "fedprox", 24, 2, [1.3], 0, **kw)
    direct = simulate_rounds("fedprox", **fig._fed(1.3), signal=0.0, d=24, reps=2, seed=5,
                             weights="uniform", measure="conditional", **kw)
    np.testing.assert_allclose(loc[:, 0], direct.samples["risk"][:, :, 0].mean(1), rtol=1e-9)
    np.testing.assert_allclose(
        glob[:, 0], direct.samples["global_risk"][:, :, 0].mean(1) - 1.3 ** 2 * (1 - 1 / fig.M),
        rtol=1e-9)


@pytest.mark.parametrize("r", [0.0, 1.0, 2.5])
def test_global_error_of_pooled_least_squares_closed_form(r):
    """GlobalTrain's global error at T = inf (clients_limit's risks minus r^2 (1 - 1/M)) is
    pooled least squares with the heterogeneity as extra noise: (sigma^2 + r^2 (1 - 1/M))
    gamma_N / (1 - gamma_N), gamma_N = gamma / M (equal clients); LocalTrain's local error is
    sigma^2 gamma / (1 - gamma) at every r (unbiased, theta_0 = 0 plays no part)."""
    pooled = riskcalc.clients_limit("fedavg", **fig._fed(r), weights="uniform").risk
    g_n = fig.GAMMA / fig.M
    expected = (fig.SIGMA ** 2 + r * r * (1 - 1 / fig.M)) * g_n / (1 - g_n)
    assert fig.global_error(pooled[:, None], [r])[0] == pytest.approx(expected, rel=1e-10)
    local = riskcalc.rounds_limit("fedavg", **fig._fed(r, 1), signal=0.0, rounds=[np.inf],
                                  local_steps=fig.LOCAL_STEPS, step_size=fig.ETA_GD).risk[0, 0]
    assert local == pytest.approx(fig.SIGMA ** 2 * fig.GAMMA / (1 - fig.GAMMA), rel=1e-9)


@pytest.mark.parametrize("r", [0.4, 1.5])
def test_risk_optimal_lam_is_the_bayes_choice(r):
    """The numerical search for lam*(r) lands on gamma sigma^2 / r^2 (the hierarchical-Gaussian
    posterior mean, module docstring) within its tolerance (xatol 1e-3 in log lam, so 1e-3
    relative in lam), and nothing in 0.9 or 1.1 times it does better."""
    lam, best = fig.optimal_lam(r)
    bayes = fig.GAMMA * fig.SIGMA ** 2 / r ** 2
    assert lam == pytest.approx(bayes, rel=2e-3)
    for factor in (0.9, 1.1):
        a, b = fig.minimizer_parts(bayes * factor)
        assert a + b * r * r > best
