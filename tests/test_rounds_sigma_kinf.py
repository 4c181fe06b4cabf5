"""riskcalc.rounds_limit("fedavg", local_steps=numpy.inf, spectrum=...): FedAvg's exact local
solves under a shared spectrum (``riskcalc.linear.dynamics.sigma.fedavg.exact``) against the
Sigma = I route, Algorithm 1's exact prox at small lam (``prox_sigma``) and the literal
iteration (``montecarlo.linear.rounds``)."""

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics.inputs import weight_vector
from riskcalc.linear.dynamics.sigma.fedavg.exact import fedavg_exact_curves
from riskcalc.spectrum import as_spectrum

ROUNDS = [0, 1, 3, 10, np.inf]
TWO = "two-point:1,2,0.5"
SHORT = [0, 3, np.inf]


def _kw(gam, sigma=0.5):
    M = len(gam)
    return dict(gamma=gam, r=[1.0] * M, sigma=[sigma] * M, signal=1.0, rounds=ROUNDS,
                local_steps=np.inf, global_step=0.8)


@pytest.mark.parametrize("gam", [[0.5, 2.0, 3.0], [0.5, 2.0], [0.5, 0.6]])
def test_identity_spectrum_is_the_sigma_i_route(gam):
    """The pencil route on H = delta_1 (called directly: ``rounds_limit`` sends the identity to
    the Sigma = I route ``fedavg``/``local_models``): server risk, distance, contraction and
    own models within 1e-8 (measured 2e-14 and below). Two projection clients with one
    full-rank client (a continuous part between atoms), one (atoms only), none (D = I)."""
    kw = _kw(gam)
    ref = riskcalc.rounds_limit("fedavg", **kw)
    g = np.asarray(gam)
    out = fedavg_exact_curves(g, np.ones(g.size), 0.5 * np.ones(g.size),
                              weight_vector("samples", g), 1.0, 0.8, np.array(ROUNDS, float),
                              as_spectrum("identity"))
    assert np.abs(out["bias"] + out["variance"] - ref.risk).max() < 1e-8
    assert np.abs(out["distance"] - ref.distance_to_fixed_point).max() < 1e-8
    assert out["contraction"] == pytest.approx(ref.contraction, abs=1e-10)
    bias, var = out["local"]()
    assert np.abs(bias + var - ref.local_risk).max() < 1e-8


def test_scaled_identity():
    """Sigma = 2 I through ``rounds_limit``: the projections are unchanged and S_j^+ halves,
    so the risk is 2 bias + variance of Sigma = I (measured 1e-15)."""
    kw = _kw([0.5, 2.0])
    ref = riskcalc.rounds_limit("fedavg", **kw)
    res = riskcalc.rounds_limit("fedavg", spectrum="scaled:2", **kw)
    assert np.abs(res.risk - (2.0 * ref.bias + ref.variance)).max() < 1e-10
    ref_own = riskcalc.rounds_limit("fedavg", **_kw([0.5, 2.0], sigma=0.0)).local_risk
    noise = ref.local_risk - ref_own
    assert np.abs(res.local_risk - (2.0 * ref_own + noise)).max() < 1e-10


def test_prox_at_small_lam_converges_like_lam():
    """Algorithm 1's exact prox with global step 0.8 / lam (``prox_sigma``, already exact
    under a spectrum) tends to FedAvg's exact local solves (global step 0.8) as lam -> 0, the
    gap halving with lam (measured, server / own models: lam 0.05 6.6e-2 / 6.6e-2, 0.025
    3.3e-2 / 3.6e-2)."""
    kw = dict(_kw([0.5, 2.0, 3.0]), rounds=SHORT)
    ex = riskcalc.rounds_limit("fedavg", spectrum=TWO, **kw)
    kw.pop("global_step"), kw.pop("local_steps")
    gaps = []
    for lam in (0.05, 0.025):
        pr = riskcalc.rounds_limit("fedprox", local_steps=np.inf, lam=lam,
                                   global_step=0.8 / lam, spectrum=TWO, **kw)
        gaps.append((np.abs(pr.global_risk - ex.risk).max(),
                     np.abs(pr.risk - ex.local_risk).max()))
    ratio = np.array(gaps[0]) / np.array(gaps[1])
    assert np.all((ratio > 1.7) & (ratio < 2.3)), ratio
    assert gaps[1][0] < 0.05


def test_literal_iteration():
    """The simulated algorithm (exact expectations given the designs, 20 designs) at d = 100:
    the gap to the limit is the finite-d bias, measured (server / own models) 0.0064 / 0.0100
    at d = 100, 0.0016 / 0.0032 at d = 200, 0.0005 / 0.0011 at d = 800 (docs/rounds.rst)."""
    kw = dict(_kw([0.5, 2.0, 3.0]), rounds=SHORT, spectrum=TWO)
    th = riskcalc.rounds_limit("fedavg", **kw)
    sim = simulate_rounds("fedavg", step_size=None, d=100, reps=20, seed=1, **kw)
    assert np.abs(sim.mean["risk"] - th.risk).max() < 0.02
    assert np.abs(sim.mean["local_risk"] - th.local_risk).max() < 0.03


@pytest.mark.parametrize("gam, match", [([1.0, 2.0], "gamma_j = 1"),
                                        ([2.0], "one client with gamma > 1")])
def test_refusals(gam, match):
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", spectrum=TWO, **_kw(gam))


@pytest.mark.parametrize("gam", [[0.5, 2.0], [0.5, 0.6]])
def test_personalization_identity_spectrum(gam):
    """FTFA (3 steps) and RTFA after the rounds through the pencil on H = delta_1 against the
    Sigma = I route (``personalize``): within 1e-10 (measured 9e-16; gamma (0.5, 2, 3): 7e-16,
    not here for time). Every gamma_j < 1 (D = I) was refused; measured 1e-15."""
    from riskcalc.linear.dynamics.sigma.personalize_sigma import personalized_sigma

    g = np.array(gam)
    ref = riskcalc.rounds_limit("fedavg", **_kw(g))
    edges = (*ref.diagnostics["edges"], ref.diagnostics["atom_at_zero"])
    for kw, mine in ((dict(steps=3, step_size=0.2), dict(kind="ftfa", k=3, eta2=0.2)),
                     (dict(lam=0.7), dict(kind="rtfa", lam2=0.7))):
        bias, var = personalized_sigma("fedavg", g, np.ones(2), 0.5 * np.ones(2),
                                       weight_vector("samples", g), 1.0,
                                       np.array(ROUNDS, float), as_spectrum("identity"),
                                       local_steps=np.inf, g=0.8, spectrum_edges=edges, **mine)
        assert np.abs(bias + var - ref.personalized_risk(**kw)).max() < 1e-10


def test_personalization_limits():
    """Under {1, 2}: FTFA with no step is the server model (measured 9e-16); RTFA toward w_T
    with lam' -> 0 is the exact local solve from w_T, the own model of round T + 1, the gap
    halving with lam' (measured 5.9e-3 at 1e-2, 3.0e-3 at 5e-3, T = 3 -> 4 and inf)."""
    res = riskcalc.rounds_limit("fedavg", spectrum=TWO, **dict(_kw([0.5, 2.0, 3.0]),
                                                               rounds=[3, 4, np.inf]))
    assert np.abs(res.personalized_risk(steps=0, step_size=0.1) - res.risk).max() < 1e-10
    own = res.local_risk
    gaps = [np.abs(res.personalized_risk(lam=lam)[:, [0, 2]] - own[:, [1, 2]]).max()
            for lam in (1e-2, 5e-3)]
    assert 1.7 < gaps[0] / gaps[1] < 2.3 and gaps[1] < 5e-3, gaps
    with pytest.raises(ValueError, match="= 1452 unknowns .* 2 blocks of the exact local solve "
                       ".*steps <= 6 fits"):
        res.personalized_risk(steps=20, step_size=0.1)
    # Every gamma_j < 1 (D = I; was refused): FTFA with no step is the server model of
    # ``_full_rank``'s closed form, RTFA with lam' -> 0 the own model sigma^2 gamma / (1 - gamma).
    res = riskcalc.rounds_limit("fedavg", spectrum=TWO,
                                **dict(_kw([0.5, 0.6]), rounds=[3, np.inf]))
    assert np.abs(res.personalized_risk(steps=0, step_size=0.1) - res.risk).max() < 1e-10
    own = 0.25 * np.array([[0.5 / 0.5], [0.6 / 0.4]])
    one, half = (res.personalized_risk(lam=lam) - own for lam in (2e-3, 1e-3))
    assert np.abs(half).max() < 3e-3 and np.abs(2.0 * half - one).max() < 1e-4, (one, half)


def test_prox_personalization_message():
    """Algorithm 1's exact prox has one base block per client (not K = inf local blocks): the
    refusal beyond 200 unknowns says so and names the steps that fit (the probe of issue 29:
    M = 3, FTFA 20 steps, 1323 unknowns; 3 (1 + 7)^2 = 192 fits)."""
    from riskcalc.linear.dynamics.sigma import personalize_sigma

    with pytest.raises(ValueError, match="= 1323 unknowns .* 1 block of the exact prox"
                       ".*steps <= 7 fits"):
        personalize_sigma.personal_unknowns(3, 1, "ftfa", 20,
                                            base="block of the exact prox (local_steps = inf)")
    personalize_sigma.personal_unknowns(3, 1, "ftfa", 7, base="block")
