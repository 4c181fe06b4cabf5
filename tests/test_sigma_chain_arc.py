"""The chain route's cheaper paths (``sigma_chain.ChainPencil.solve_arc``, the edge scan from
both ends and the two-point bisection of ``pencil_edges.edges``) against independent routes:
each node followed down from far above it, the scan that classifies every point, and for
Sigma = I the edges of the scalar subordination (``algorithm1.fold.round_map_edges``)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.fold import round_map_edges
from riskcalc.linear.dynamics.client_laws import ClientLaws
from riskcalc.linear.dynamics.sigma.fedavg.curves import local_stability
from riskcalc.linear.dynamics.sigma.pencil_edges import _scan, edges
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top


def test_nodes_along_the_arc_equal_the_nodes_followed_from_above():
    """24 nodes of an ellipse's upper half close to D's spectrum, three clients, K = 4, a
    two-point spectrum: ``solve_arc`` (1 followed down, 23 along the arc) against ``solve``
    (all 24 followed down). Measured: 2.3e-13 (tau), 5.5e-13 (Ghat[:, 0])."""
    gam, p = np.array([0.5, 2.0, 4.0]), np.array([0.2, 0.5, 0.3])
    pen = ChainPencil(np.array([0.5, 3.0]), np.array([0.3, 0.7]), gam, p, 0.05, 4)
    theta = np.pi * (np.arange(24) + 0.5) / 24
    z = 0.5 + 0.48 * np.cos(theta) + 0.03j * np.sin(theta)
    ys = list(4.0 * np.geomspace(1.0, 1e-3 * 0.03 * np.sin(theta[0]) / 4.0, 24)) + [0.0]
    t1, _, G1 = pen.solve(lambda y: z + 1j * y, ys)
    t2, _, G2 = pen.solve_arc(z, ys)
    np.testing.assert_allclose(t2, t1, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pen.column0(G2), pen.column0(G1), rtol=0, atol=1e-10)


@pytest.mark.parametrize("bands", [[(0.3, 0.7)], [(0.05, 0.2), (0.5, 0.6), (0.93, 0.95)],
                                   [(0.0, 1.1)], [(0.99, 1.1)]])
def test_scan_from_both_ends_finds_the_outermost_inside_points(bands):
    """A band structure as the classifier: the scan from both ends returns the lowest and
    highest inside point that classifying every point finds, and calls the classifier on
    fewer points when the bands span the grid."""
    xs = np.unique(np.concatenate([np.linspace(0.0, 1.0, 65)[1:], np.geomspace(1e-4, 1e-2, 9)]))
    seen = []

    def inside(x):
        seen.append(x.size)
        return np.any([(x > lo) & (x < hi) for lo, hi in bands], axis=0)

    full = np.flatnonzero(inside(xs))[[0, -1]]
    seen.clear()
    assert tuple(_scan(inside, xs)) == tuple(full)
    if bands == [(0.0, 1.1)]:
        assert sum(seen) <= 12


def test_scan_says_when_nothing_is_inside():
    with pytest.raises(SolverError, match="not found on the scan"):
        _scan(lambda x: np.zeros(x.size, bool), np.linspace(0.1, 1.0, 20))


def test_chain_edges_with_two_point_bisection_against_scalar_subordination():
    """Sigma = I, two clients, K = 3: the chain's edges (scan from both ends, 2 points per
    bracket) against ``algorithm1.fold.round_map_edges`` (the scalar route). Measured: 5.8e-12 (bottom)
    and 6.6e-13 (top); three clients with K = 6: 2.3e-12 and 6e-15."""
    spec = riskcalc.Spectrum([1.0], weights=[1.0])
    gam = np.array([0.5, 2.0])
    p = np.ones(2) / 2
    eta = 0.8 * 2.0 / local_stability(spec, gam, 1.0)
    pen = ChainPencil(spec.atoms, spec.weights, gam, p, eta, 3)
    got = edges(pen, stable_top(spec.atoms, spec.weights, gam))
    exact = round_map_edges(ClientLaws(gam, p, eta, 3))
    np.testing.assert_allclose(got[:2], exact[:2], rtol=1e-10)


@pytest.mark.parametrize("cls, K, atoms, weights", [
    ("dense", 3, [1.0], [1.0]),                 # Sigma = I: against the scalar subordination
    ("chain", 3, [1.0], [1.0]),
])
def test_fold_edges_against_scalar_subordination(cls, K, atoms, weights, monkeypatch,
                                                 fresh_sigma_edges):
    """Sigma = I, two clients: the edges predicted as the fold of the real branch and confirmed
    by the density tests (``pencil_edges._fold_edges``: confirmed on both sides, no bisection)
    against ``algorithm1.fold.round_map_edges`` (the scalar route, explicit). Measured: 5e-13 relative."""
    from riskcalc.linear.dynamics.sigma import pencil_edges
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    spec = riskcalc.Spectrum(atoms, weights=weights)
    gam, p = np.array([0.5, 2.0]), np.array([0.4, 0.6])
    eta = 0.8 * 2.0 / local_stability(spec, gam, 1.0)
    pen = (SigmaPencil if cls == "dense" else ChainPencil)(spec.atoms, spec.weights, gam, p,
                                                           eta, K)
    seen, fold_edges = [], pencil_edges._fold_edges
    monkeypatch.setattr(pencil_edges, "_fold_edges", lambda *a: seen.append(fold_edges(*a))
                        or seen[-1])
    got = edges(pen, stable_top(spec.atoms, spec.weights, gam), fold=True)
    assert seen == [[True, True]]
    exact = round_map_edges(ClientLaws(gam, p, eta, K))
    np.testing.assert_allclose(got[:2], exact[:2], rtol=1e-10)


def test_fold_edges_equal_the_bisection_under_a_spectrum(monkeypatch, fresh_sigma_edges):
    """A two-point spectrum, two clients, K = 2 (dense pencil): the fold's edges against the
    bisection's (``fold=False``), both bracketed by the same density test (the bisection to
    1e-11 of the edge, the fold to 5e-12, 2.5e-11 or 1.25e-10 of it: ``_fold_edges``, here
    confirmed for both). Measured: 1.3e-11 (bottom) and 2.8e-13 (top) relative."""
    from riskcalc.linear.dynamics.sigma import pencil_edges
    from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

    found, fold_edges = [], pencil_edges._fold_edges
    monkeypatch.setattr(pencil_edges, "_fold_edges", lambda *a: found.append(fold_edges(*a))
                        or found[-1])

    spec = riskcalc.Spectrum([0.5, 3.0], weights=[0.5, 0.5])
    gam, p = np.array([0.5, 4.0]), np.array([0.7, 0.3])
    eta = 0.8 * 2.0 / local_stability(spec, gam, 1.0)
    top = stable_top(spec.atoms, spec.weights, gam)
    old = edges(SigmaPencil(spec.atoms, spec.weights, gam, p, eta, 2), top)
    new = edges(SigmaPencil(spec.atoms, spec.weights, gam, p, eta, 2), top, fold=True)
    np.testing.assert_allclose(new[:2], old[:2], rtol=1.5e-10)
    assert found == [[True, True]]
