"""riskcalc.rounds_limit("pfedme", local_steps=K finite, spectrum=...): paper 004's Algorithm 1 with
K warm-started local steps under a shared covariance spectrum (``sigma.algorithm1.curves``: a pencil
with a state, a copy and a chain of K blocks per client) against independent routes: the
Sigma = I subordination of ``algorithm1.curves`` (server and own models), the exact prox of
``prox_sigma`` as the local steps' filter a = (1 - eta (s + lam))^K goes to 0, the pFedMe
joint minimizer of ``clients_limit`` at T = inf, and the literal algorithm simulated at two d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.algorithm1.curves import curves
from riskcalc.linear.dynamics.result import RoundsLimit
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.prox_sigma import prox_sigma_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top


GAM = np.array([0.5, 2.0, 4.0])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
ROUNDS = np.array([0, 1, 2, 7, 40, 20000, np.inf])     # 20000: settled to the fixed point


@pytest.mark.parametrize("gam, lam, K, gl", [(GAM[:2], 0.7, 2, 0.84),
                                              (np.array([1.2, 2.0, 2.5]), 0.5, 3, 1.6)])
def test_identity_spectrum_is_the_scalar_route(gam, lam, K, gl):
    """Sigma = I through the pencil against the scalar subordination of ``algorithm1.curves``
    (two clients, pooled N > d with g lam < 1: an identity at any M, three cost 1.2 s of CPU
    against 0.5; three clients, every N_j < d with g lam = 1.6, a negative part of the
    spectrum): server bias, variance, distance to the fixed point, the own models, the edges.
    Measured: 2.4e-13 and 5.5e-12 (curves), 3e-15 and 6e-14 (edges)."""
    g, eta = gl / lam, 0.9 / ((1 + np.sqrt(gam.max())) ** 2 + lam)
    M = gam.size
    r, sig, p = R[:M], SIG[:M], P[:M] / P[:M].sum()
    new = algorithm1_sigma_k_curves(gam, r, sig, p, 1.3, lam, eta, K, g, ROUNDS,
                                    riskcalc.Spectrum([1.0]))
    old = curves(gam, r, sig, p, 1.3, lam, eta, K, g, ROUNDS)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-9)
    for mine, ref in zip(new["local"](), old["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(new["edges"], old["edges"], rtol=0, atol=1e-9)
    assert new["contraction"] == pytest.approx(old["contraction"], abs=1e-9)


@pytest.mark.parametrize("gam, lam, gl", [(GAM[:2], 0.8, 5.0), (np.array([0.1, 0.25]), 0.1, 1.0)])
def test_edges_against_the_rate_route(gam, lam, gl):
    """g lam = 5: the negative part of the spectrum is a band of width about 0.03 near
    1 - g lam (found in the Weyl window of ``_window``, not on a scan of the whole axis);
    gamma_j < 1 and lam below the spectra's bottoms: the top eigenvalue below a(0). Sigma = I
    against ``algorithm1.rate.contraction`` (brentq on its edge equation; measured 4e-14 and
    8e-13)."""
    from riskcalc.linear.dynamics.algorithm1.rate import contraction
    from riskcalc.linear.dynamics.sigma.algorithm1.pencil import spectrum_edges

    p, K = np.array([0.6, 0.4]), 2
    eta = 0.9 / ((1 + np.sqrt(gam.max())) ** 2 + lam)
    top, bottom, low = spectrum_edges(gam, p, lam, eta, K, gl / lam, riskcalc.Spectrum([1.0]))
    assert low == 0.0
    ref = contraction(gam, p, lam, eta, K, gl / lam)
    assert top == pytest.approx(ref["top"], abs=1e-9)
    assert (bottom is None) == (ref["bottom"] is None)
    if bottom is not None:
        assert bottom == pytest.approx(ref["bottom"], abs=1e-9)


def test_many_local_steps_approach_the_exact_prox():
    """K steps at eta = 1 / (L + lam) leave a(s) <= ((L - s) / (L + lam))^K of the previous
    model: at lam = 9 L that is 1e-2 for K = 2 and 1e-3 for K = 3 (the pencil's M K^2
    unknowns cap K, not a: K = 200 is beyond reach, a -> 0 is not). The curves of the server
    and own models approach ``prox_sigma``'s exact prox with the difference within 2 sup a
    (measured: 0.7 to 1.01 sup a at K = 2, 3, 6) and shrinking as sup a does."""
    gam, r, sig, p = GAM[:2], R[:2], SIG[:2], np.array([0.4, 0.6])
    L = stable_top(SPEC.atoms, SPEC.weights, gam).max()
    lam = 9.0 * L
    eta, g, rounds = 1.0 / (L + lam), 1.5 / lam, np.array([0, 1, 3, 10, 30])
    ref = prox_sigma_curves(gam, r, sig, p, 1.2, lam, g, rounds, SPEC)
    diffs = []
    for K in (2, 3):
        new = algorithm1_sigma_k_curves(gam, r, sig, p, 1.2, lam, eta, K, g, rounds, SPEC)
        d = max(np.max(np.abs(new[k] - ref[k])) for k in ("bias", "variance", "distance"))
        d = max([d] + [np.max(np.abs(a - b)) for a, b in zip(new["local"](), ref["local"]())])
        assert d <= 2.0 * (1.0 - eta * lam) ** K, (K, d)
        diffs.append(d)
    assert diffs[1] < 0.2 * diffs[0]


@pytest.fixture(scope="module")
def pfedme_k3():
    """(keyword arguments, ``rounds_limit``) of Algorithm 1 with K = 3 local steps, three
    heterogeneous clients, SPEC, sample weights, eta at 0.9 of Thm 2's bound, T = 0 .. inf:
    one solve (its edge scans are most of its cost) for the fixed point and the simulation."""
    L = stable_top(SPEC.atoms, SPEC.weights, GAM).max()
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=[0, 1, 3, 10, np.inf],
              local_steps=3, step_size=0.9 / (L + 0.8), lam=0.8, global_step=1.5,
              spectrum=SPEC)
    return kw, riskcalc.rounds_limit("pfedme", **kw)


def test_fixed_point_is_the_pfedme_minimizer(pfedme_k3):
    """T = inf through ``rounds_limit``: whatever K (3 here; 9 on the chain route in
    ``test_rounds_sigma_alg1chain``), the fixed point is the exact prox's, the pFedMe joint
    minimizer: the own models against ``clients_limit("pfedme")`` under the spectrum (its own
    resolvent chain) and the server model against ``prox_sigma`` (measured: 1e-14)."""
    _, res = pfedme_k3
    kw = dict(gamma=GAM, r=R, sigma=SIG, lam=0.8, spectrum=SPEC)
    ref = riskcalc.clients_limit("pfedme", **kw)
    np.testing.assert_allclose(res.bias[:, -1], ref.bias, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.variance[:, -1], ref.variance, rtol=0, atol=1e-9)
    # Sample weights: p_j proportional to n_j = d / gamma_j.
    prox = prox_sigma_curves(GAM, R, SIG, 1 / GAM / np.sum(1 / GAM), 1.2, 0.8, 1.5,
                             np.array([np.inf]), SPEC)
    np.testing.assert_allclose(res.global_risk[:, -1], (prox["bias"] + prox["variance"])[:, 0],
                               rtol=0, atol=1e-9)


def test_against_the_simulated_algorithm_at_two_d(pfedme_k3):
    """The literal Algorithm 1 with K = 3 local steps (``montecarlo.linear.rounds``, exact
    given the designs), three heterogeneous clients, a two-point spectrum, sample weights, eta
    at 0.9 of Thm 2's bound: the own models' and the server model's risk and the distance to
    the fixed point within 4 s.e. plus the finite-d gap 1 / d at each d (measured, T up to 30:
    risk within 0.8% at d = 100 (20 designs), 0.16% at d = 200 (10 designs))."""
    from montecarlo.linear.rounds import simulate_rounds

    kw, theory = pfedme_k3
    assert theory.converges and theory.diagnostics["risk_model"] == "own"
    for d, reps in ((100, 8), (200, 3)):
        sim = simulate_rounds("pfedme", d=d, reps=reps, seed=5, measure="conditional", **kw)
        for q in ("risk", "global_risk"):
            gap = np.abs(getattr(sim, q) - getattr(theory, q))
            assert np.all(gap <= 4 * getattr(sim, q + "_se") + 1.0 / d), (d, q, gap)
        gap = np.abs(sim.global_distance[0] - theory.distance_to_fixed_point)
        assert np.all(gap <= 4 * sim.global_distance_se[0] + 1.0 / d), (d, gap)


def test_refusals_and_divergence(monkeypatch):
    """Outside the route's scope or limits: one ValueError naming the parameter; a diverging
    iteration (g lam large: the bottom of the spectrum below -1) reports inf where it
    overflows and refuses rounds=inf."""
    L = stable_top(SPEC.atoms, SPEC.weights, GAM[:2]).max()
    kw = dict(gamma=GAM[:2], r=0.3, sigma=0.5, signal=1.0, lam=0.8, spectrum=SPEC)
    with pytest.raises(ValueError, match=r"step_size < 2 / \(L \+ lam\)"):
        riskcalc.rounds_limit("pfedme", rounds=[1], local_steps=2, step_size=2.0 / (L + 0.8),
                              **kw)
    # Beyond M K^2 = 200 the chain route (``sigma.algorithm1.chain``) takes over; it refuses what
    # its cost estimate puts beyond 10 minutes, naming local_steps.
    with pytest.raises(ValueError, match="local_steps"):
        riskcalc.rounds_limit("pfedme", rounds=[1], local_steps=300, step_size=0.5 / (L + 0.8),
                              **kw)
    res = riskcalc.rounds_limit("pfedme", rounds=[0, 3, 400], local_steps=1,
                                step_size=0.9 / (L + 0.8), global_step=5.0 / 0.8, **kw)
    assert not res.converges and res.contraction > 1.0
    assert np.all(np.isfinite(res.risk[:, :2])) and np.all(np.isinf(res.risk[:, 2]))
    with pytest.raises(ValueError, match="diverges"):
        riskcalc.rounds_limit("pfedme", rounds=[np.inf], local_steps=1,
                              step_size=0.9 / (L + 0.8), global_step=5.0 / 0.8, **kw)
    # Personalization after the rounds beyond the dense pencil's reach, M (K + k)^2 = 242 > 200:
    # covariate shift's route with one covariance type (``RoundsLimit._personalized_joint``, was
    # refused). Measured once on this diverging result (30.6 s of CPU): T = 0 equals
    # ``steps_limit("local")`` to the 8 digits printed (0.29989381, 1.2338484), T = 400 inf.
    called = []
    monkeypatch.setattr(RoundsLimit, "_personalized_joint",
                        lambda self, kw, spectrum: called.append(kw) or (0.0, 0.0))
    res.personalized_risk(steps=10, step_size=0.1)
    assert called == [{"personalization": "ftfa", "steps": 10, "step_size": 0.1}]
