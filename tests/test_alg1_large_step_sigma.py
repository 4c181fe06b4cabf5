"""Paper 004's Algorithm 1 with K warm-started local steps above Thm 2's 1 / (top + lam) under a
shared covariance spectrum (``riskcalc.linear.dynamics.sigma.algorithm1.curves`` with the
scope of ``algorithm1.rate``'s docstring: even K, or odd K with g lam <= 1), against the
scalar subordination of ``algorithm1.curves`` at Sigma = I (a different linearization) and
the literal algorithm under a two-point spectrum at two d."""

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.rounds import simulate_rounds
from riskcalc.linear.dynamics.algorithm1.curves import curves
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
ROUNDS = np.array([0, 1, 2, 7, np.inf])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])


@pytest.mark.parametrize("gam, lam, K, gl", [(np.array([0.5, 2.0, 4.0]), 0.7, 3, 1.0),
                                              (np.array([0.1, 0.2, 0.3]), 0.5, 1, 1.0)])
def test_identity_spectrum_is_the_scalar_route(gam, lam, K, gl):
    """eta = 0.9 of the edge 2 / (L + lam), odd K (a(s) < 0 on the top of the spectra): the
    pencil through Sigma = I against ``algorithm1.curves`` (server and own models, the
    distance, the edges, the contraction and its bound flag; the second federation's top
    0.74 is below -inf a = 0.8). Measured: 1.5e-13 and 3e-15."""
    g, eta = gl / lam, 1.8 / ((1 + np.sqrt(gam.max())) ** 2 + lam)
    new = algorithm1_sigma_k_curves(gam, R, SIG, P, 1.3, lam, eta, K, g, ROUNDS,
                                    riskcalc.Spectrum([1.0]))
    old = curves(gam, R, SIG, P, 1.3, lam, eta, K, g, ROUNDS)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-9)
    for mine, ref in zip(new["local"](), old["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(new["edges"], old["edges"], rtol=0, atol=1e-9)
    assert new["contraction"] == pytest.approx(old["contraction"], abs=1e-9)
    assert new["contraction_is_bound"] == old["contraction_is_bound"] == (K == 1)


def test_against_the_simulated_algorithm_at_two_d():
    """The literal Algorithm 1 with K = 3 (exact given the designs), three heterogeneous
    clients, a two-point spectrum, sample weights, eta (L + lam) = 1.8: the own models' and
    the server model's risk within 4 s.e. + 1/d at d = 100 (4 designs) and 200 (3), the
    largest relative gap shrinking (measured with 4 designs each: 1.1% and 0.48%; 0.41% at
    d = 400 with 2)."""
    gam = np.array([0.5, 2.0, 4.0])
    L = stable_top(SPEC.atoms, SPEC.weights, gam).max()
    kw = dict(gamma=gam, r=R, sigma=SIG, signal=1.2, rounds=[1, 4], local_steps=3,
              step_size=1.8 / (L + 0.8), lam=0.8, spectrum=SPEC)
    theory = riskcalc.rounds_limit("pfedme", **kw)
    gaps = {}
    for d, reps in ((100, 4), (200, 3)):
        sim = simulate_rounds("pfedme", d=d, reps=reps, seed=5, measure="conditional", **kw)
        for q in ("risk", "global_risk"):
            gap = np.abs(getattr(sim, q) - getattr(theory, q))
            assert np.all(gap <= 4 * getattr(sim, q + "_se") + getattr(theory, q) / d), (d, q)
        gaps[d] = max(np.max(np.abs(getattr(sim, q) / getattr(theory, q) - 1))
                      for q in ("risk", "global_risk"))
    assert gaps[200] < gaps[100]
