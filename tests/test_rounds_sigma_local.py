"""FedAvg's clients' own models after their K local steps of round T under a shared covariance
spectrum (``riskcalc.linear.dynamics.sigma.fedavg.own``: rows of an extended pencil) against
independent routes: the Sigma = I scalar subordination of ``local_models`` (pooled N > d and
N < d, K = 1 and K >= 2) and the literal algorithm simulated at two d."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.fedavg import fedavg_curves
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves


R = np.array([0.3, 0.8])
SIG = np.array([0.4, 0.6])
P = np.array([0.3, 0.7])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
ROUNDS = np.array([0, 1, 4, 12, np.inf])


@pytest.mark.parametrize("gam, K", [([0.5, 2.0], 3), ([3.0, 4.0], 2), ([0.5, 2.0], 1),
                                    ([3.0, 4.0], 1)])
def test_identity_spectrum_is_the_scalar_route(gam, K):
    """Sigma = I through the extended pencil against ``local_models``' scalar route (the
    double contour of M_2(C)-valued subordination), bias and variance, every T including 0 and
    inf; pooled N > d and N < d (D's atom at 0). Measured: 2e-13. K = 1 is the route
    ``rounds_limit`` takes under a spectrum."""
    gam = np.array(gam)
    new = fedavg_sigma_k_curves(gam, R, SIG, P, 1.3, 0.15, K, 1.2, ROUNDS,
                                riskcalc.Spectrum([1.0]))["local"]()
    old = fedavg_curves(gam, R, SIG, P, 1.3, 0.15, K, 1.2, ROUNDS)["local"]()
    for a, b in zip(new, old):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("K", [1, 2])
def test_against_the_simulated_algorithm_at_two_d(K):
    """The literal FedAvg (``montecarlo.linear.rounds``, exact given the designs), three
    heterogeneous clients, a two-point spectrum: each client's own model after the local phase
    of round T within 4 s.e. plus the finite-d gap 1 / d at d = 100 and 200 (measured, K = 1:
    largest gap 1.0e-2 at d = 100, 4.3e-3 at d = 200)."""
    from montecarlo.linear.rounds import simulate_rounds

    kw = dict(gamma=[0.5, 2.0, 4.0], r=[0.3, 0.8, 0.5], sigma=[0.4, 0.6, 1.0], signal=1.2,
              rounds=[0, 1, 3, 10, np.inf], local_steps=K, step_size=0.08, spectrum=SPEC)
    theory = riskcalc.rounds_limit("fedavg", **kw)
    own = theory.local_risk
    assert np.all(np.abs(own[:, 1:] - theory.risk[:, 1:]) > 1e-3)   # not the server model's
    sims = {d: simulate_rounds("fedavg", d=d, reps=30, seed=5, **kw) for d in (100, 200)}
    for d, sim in sims.items():
        gap = np.abs(sim.local_risk - own)
        assert np.all(gap <= 4 * sim.local_risk_se + 1.0 / d), (d, gap, sim.local_risk_se)
    extrap = 2 * sims[200].local_risk - sims[100].local_risk
    se = np.hypot(2 * sims[200].local_risk_se, sims[100].local_risk_se)
    assert np.all(np.abs(extrap - own) <= 4 * se + 1e-12)


def test_extended_pencil_has_the_same_fixed_point():
    """The extension (one deterministic block per client) leaves the deterministic
    equivalent's fixed point unchanged (``sigma.fedavg.own``, step 2): Newton's method on the
    extended pencil itself against the original's solution (measured: 3e-14)."""
    from riskcalc.linear.dynamics.sigma.fedavg.own import OwnPencil
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    pen = SigmaPencil(SPEC.atoms, SPEC.weights, np.array([0.5, 2.0, 4.0]), np.array([.2, .5, .3]),
                      0.08, 3)
    z = np.array([0.3 + 0.05j, 1.0 + 0.2j, 0.05 + 0.01j])
    path = list(np.geomspace(40.0, 1e-3, 30)) + [0.0]
    tau, _, G = pen.solve(lambda y: z + 1j * y, path)
    tau_ext, C, G_ext = OwnPencil(pen).solve(lambda y: z + 1j * y, path)
    np.testing.assert_allclose(tau_ext, tau, rtol=0, atol=1e-12)
    np.testing.assert_allclose(G_ext[:, :, 0, 0], G[:, :, 0, 0], rtol=0, atol=1e-12)


def test_size_refusal_and_command_line(capsys, monkeypatch):
    """Beyond the memory budget (``budget``) ``local_risk`` raises a ValueError naming what to
    lower, and ``predict`` still prints the server curve with the own models' column nan and
    the reason (within it the rows carry ``local_risk``: ``test_rounds_sigma_k``)."""
    from riskcalc.cli import main
    from riskcalc.linear.dynamics.sigma import memory

    argv = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
            "2", "--signal", "1", "--rounds", "0,2", "--local-step-size", "0.1",
            "--local-steps", "1", "--spectrum", "two-point:0.5,3,0.3"]
    # The own models' dense pencil (1 + M (K + 1) = 5 blocks) estimated at 5 GB.
    monkeypatch.setattr(memory, "estimate",
                        lambda route, size, blocks, *a, **kw: 5e9 if blocks == 5 else 1e6)
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 0.5], r=0.3, sigma=0.5, signal=1.0,
                                rounds=[0, 2], local_steps=1, step_size=0.1, spectrum=SPEC)
    with pytest.raises(ValueError, match="own models.*allow more memory"):
        res.local_risk
    assert main(argv) == 0
    out = capsys.readouterr().out
    # Every row refused alone too: n/a with the refusal's own reason (``own_models``).
    assert "n/a" in out and "local risk n/a: spectrum: the clients' own models" in out \
        and "allow more memory" in out
