"""Algorithm 1 with K local steps under a spectrum: the whole curves through the chain pencil
(``sigma.algorithm1.chain``) against the dense pencil (``sigma.algorithm1.pencil.Alg1Pencil``) where both
apply. The routes share the edges' scans, the contour and the quadrature
(``sigma.algorithm1.curves._assemble``) but solve the fixed point and the two-point functions
independently: dense inverses and dense Jacobians against Schur complements on the server
block with GMRES (``tests/test_rounds_sigma_alg1chain.py`` compares them node by node)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

GAM = np.array([0.5, 2.0, 4.0])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
L = stable_top(SPEC.atoms, SPEC.weights, GAM).max()
L2 = stable_top(SPEC.atoms, SPEC.weights, GAM[:2]).max()     # of the first two clients


@pytest.mark.parametrize("eta, K, gl", [(0.5 / (L + 0.8), 2, 1.6), (1.8 / (L2 + 0.8), 1, 1.0)])
def test_chain_route_equals_the_dense_route(eta, K, gl):
    """A two-point spectrum, lam = 0.8, the first two clients (an identity at any M: M = 3 cost
    8.6 s of CPU against 4.3 at K = 2, 6.5 s against 4.7 at K = 1, the chain's GMRES most of
    it; M = 3 is checked on each route against independent references: the chain's in
    ``test_rounds_sigma_alg1chain``, the dense pencil's in ``test_alg1_large_step_sigma``).
    g lam = 1.6 (the negative band's window) with K = 2, and odd K = 1 with eta at 0.9 of the
    edge 2 / (L + lam) of the two (a(s) < 0: the branch check on z G_00). Server and own models
    at T = 0, 1, 3, 10, 25, inf and the distance. Newton stops at residual 1e-12 (1 + abs(tau))
    in both routes, GMRES at 1e-13 of its right-hand side; the quadrature sums about 10^3 node
    values of size <= 10 with weights <= 1: 1e-9 holds with room. Measured: 1.7e-13 (K = 2, M =
    2 and 3; its bottom edge -0.58), 1.3e-13 (K = 1; 2.8e-13 with three clients) and 3.2e-13
    (K = 3 with the large step: 7.8e-12)."""
    rounds = np.array([0, 1, 3, 10, 25, np.inf])
    args = (GAM[:2], R[:2], SIG[:2], P[:2] / P[:2].sum(), 1.2, 0.8, eta, K, gl / 0.8, rounds,
            SPEC)
    dense = algorithm1_sigma_k_curves(*args, route="dense")
    chain = algorithm1_sigma_k_curves(*args, route="chain")
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(chain[key], dense[key], rtol=0, atol=1e-9)
    for mine, ref in zip(chain["local"](), dense["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9)
    assert chain["edges"] == pytest.approx(dense["edges"], abs=1e-9)
    assert chain["contraction_is_bound"] == dense["contraction_is_bound"]


def test_route_is_checked():
    with pytest.raises(ValueError, match="route"):
        algorithm1_sigma_k_curves(GAM, R, SIG, P, 1.2, 0.8, 0.1, 2, 1.0, np.array([1.0]), SPEC,
                                  route="sparse")
