"""FedAvg's clients' own models after their K local steps of round T under a shared covariance
spectrum through the chain structure (``riskcalc.linear.dynamics.sigma.fedavg.own_chain``,
taken beyond M K^2 = 200) against independent routes: the dense extended pencil of
``sigma.fedavg.own`` (dense inverses and dense two-point solves) where both apply, the Sigma = I
scalar subordination of ``local_models``, and the literal algorithm simulated at two d."""

import numpy as np

import riskcalc
import riskcalc.linear.dynamics.sigma.fedavg.curves as fk
from riskcalc.linear.dynamics.fedavg import fedavg_curves


R = np.array([0.3, 0.8])
SIG = np.array([0.4, 0.6])
P = np.array([0.3, 0.7])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
ROUNDS = np.array([0, 1, 4, 12, np.inf])


def test_chain_equals_the_dense_extended_pencil(monkeypatch):
    """M = 2, K = 3, FedAvg's chain pencil (``route``), a two-point spectrum, heterogeneous
    clients: the own models' bias and variance at every T through the dense extended pencil
    and through the chain (forced below its threshold M K^2 > 200), on the same contour
    solution. Both stop Newton at residual 1e-12 and solve the pairs to 1e-13 (GMRES) or
    exactly (dense); the quadrature sums ~10^3 terms of size <= 10: 1e-9 holds with room.
    Measured: 1.1e-13 at M = 3, K = 6 (30 s dense, 40 s chain of CPU; outside the suite)."""
    out = fk.fedavg_sigma_k_curves(np.array([0.2, 0.4]), R, SIG, P, 1.3, 0.1, 3, 1.2, ROUNDS,
                                   SPEC, route="chain")
    dense = out["local"]()
    monkeypatch.setattr(fk, "MAX_UNKNOWNS", 0)       # the chain route for the own models
    chain = out["local"]()
    for a, b in zip(chain, dense):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


def test_identity_spectrum_is_the_scalar_route(monkeypatch):
    """Sigma = I (one atom, not short-circuited), M = 2, K = 3, the chain route for the own
    models, against ``local_models``' scalar route, every T including 0 and inf. Measured:
    1.7e-13 at M = 3, K = 9 (M K^2 = 243, the chain route unforced; 26 s of CPU, outside the
    suite)."""
    monkeypatch.setattr(fk, "MAX_UNKNOWNS", 0)
    gam = np.array([0.2, 0.4])
    new = fk.fedavg_sigma_k_curves(gam, R, SIG, P, 1.3, 0.1, 3, 1.2, ROUNDS,
                                   riskcalc.Spectrum([1.0]))["local"]()
    old = fedavg_curves(gam, R, SIG, P, 1.3, 0.1, 3, 1.2, ROUNDS)["local"]()
    for a, b in zip(new, old):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


def test_against_the_simulated_algorithm_at_two_d(monkeypatch):
    """The literal FedAvg (``montecarlo.linear.rounds``, exact given the designs), M = 3
    heterogeneous clients with K = 3 local steps, the chain route for the own models, a
    two-point spectrum: each client's own model after the local phase of round T within 4 s.e.
    plus the finite-d gap 1 / d at d = 100 and 200, and not the server model's (by 0.09 at
    least). Measured: the largest gap 0.30 (d = 100) and 0.45 (d = 200) of that allowance
    (0.7% and 0.5%)."""
    from montecarlo.linear.rounds import simulate_rounds

    monkeypatch.setattr(fk, "MAX_UNKNOWNS", 0)
    kw = dict(gamma=[0.3, 0.6, 1.0], r=[0.3, 0.8, 0.5], sigma=[0.4, 0.6, 1.0], signal=1.2,
              rounds=[0, 1, 3, np.inf], local_steps=3, step_size=0.1, spectrum=SPEC)
    theory = riskcalc.rounds_limit("fedavg", **kw)
    own = theory.local_risk
    assert np.all(np.abs(own[:, 1:] - theory.risk[:, 1:]) > 1e-3)
    for d in (100, 200):
        sim = simulate_rounds("fedavg", d=d, reps=20, seed=5, **kw)
        gap = np.abs(sim.local_risk - own)
        assert np.all(gap <= 4 * sim.local_risk_se + 1.0 / d), (d, gap, sim.local_risk_se)
