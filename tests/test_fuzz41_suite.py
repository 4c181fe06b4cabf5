"""Issue 32, fuzz41 (suite): what this fuzz found, each test failing before.

The suite-time pass (a speed task): each speed-up keeps the answers of the route it changes
(checked on 34 random settings against the code before it, within 1e-12 relative); the tests
here pin the pieces that changed against the computation they replace."""

import numpy as np
import pytest

from riskcalc.linear.dynamics.sigma import sigma_pencil
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import LU_FROM, SigmaPencil

ATOMS, WEIGHTS = np.array([0.25, 1.0]), np.array([0.5, 0.5])


def _pencils():
    """FedAvg's and Algorithm 1's dense pencils below, at and above ``LU_FROM`` unknowns."""
    return [SigmaPencil(ATOMS, WEIGHTS, np.array([0.5, 1.5]), np.array([0.5, 0.5]), 0.2, 2),
            Alg1Pencil(ATOMS, WEIGHTS, np.array([0.5, 1.5, 0.8]), np.full(3, 1 / 3), 0.6, 0.1,
                       3, 1.0),
            SigmaPencil(ATOMS, WEIGHTS, np.array([0.5, 1.5, 0.8]), np.full(3, 1 / 3), 0.1, 4)]


def _point(pen, n=4):
    """(Chat, Ghat) at n nodes off the real axis and a small tau."""
    rng = np.random.default_rng(41)
    M, K = pen.M, pen.K
    tau = 0.05 * (rng.standard_normal((n, M, K, K)) + 1j * rng.standard_normal((n, M, K, K)))
    C = pen.chat(tau)
    return C, pen.ghat(1.5 + rng.standard_normal(n) * 0.2 + 0.4j, C)


@pytest.mark.parametrize("pen", _pencils(), ids=["fedavg-8", "alg1-27", "fedavg-48"])
def test_newton_steps_solve_the_jacobian_systems(pen):
    """F1: ``SigmaPencil.solve`` inverted Newton's (I - J) at every Jacobian update (numpy's
    inverse, about 3 times a batched LU solve from 27 unknowns on) for 1 to 3 steps; now
    ``newton_op``/``newton_step``: an LU solve per step from ``LU_FROM`` unknowns, the inverse
    below. Both are (I - J)^-1 rhs to rounding."""
    C, G = _point(pen)
    J = pen._jacobian(C, G)
    rhs = np.random.default_rng(1).standard_normal(J.shape[:2] + (1,)) + 0.5j
    got = pen.newton_step(pen.newton_op(C, G), rhs)
    np.testing.assert_allclose(got, np.linalg.solve(J, rhs), rtol=1e-12, atol=1e-13)


def test_no_jacobian_inverse_from_lu_from_unknowns(monkeypatch):
    """F1: a solve of M K^2 = 27 >= ``LU_FROM`` unknowns (Algorithm 1, M = K = 3) inverts only
    its pencils (n = 16), never Newton's 27 x 27 systems."""
    pen = _pencils()[1]
    assert pen.M * pen.K ** 2 >= LU_FROM
    sizes, inv = [], np.linalg.inv

    def counted(a):
        sizes.append(np.shape(a)[-1])
        return inv(a)
    monkeypatch.setattr(sigma_pencil.np.linalg, "inv", counted)
    z = np.array([1.2 + 0.5j, 0.4 + 0.3j])
    tau, _, _ = pen.solve(lambda y: z + 1j * y, [4.0, 1.0, 0.3, 0.1])
    assert np.all(np.isfinite(tau)) and sizes and pen.n in sizes
    assert pen.M * pen.K ** 2 not in sizes
