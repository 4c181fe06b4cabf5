"""The fast routes of the rounds limits (issue 29, "Speed"): the extreme eigenvalues of
Algorithm 1's round map by the fold of the real subordination branch
(``algorithm1.rate.fast_contraction``) against the edge equation of the old route solved with
the exact partial fractions (``PsiLaws``, no quadrature); FedAvg's (and the exact prox's) edges
by the same fold (``algorithm1.fold.round_map_edges``) against the scans of ``subordination.edges``; and the double
contours with T_max + 16 nodes against FedAvg's 2 T_max + 16."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws, QuadPsiLaws
from riskcalc.linear.dynamics.algorithm1.rate import fast_contraction
from riskcalc.linear.dynamics.client_laws import ClientLaws
from riskcalc.linear.dynamics.algorithm1.fold import round_map_edges as edges
from riskcalc.linear.dynamics.prox_laws import ProxLaws

TOP9 = (1 + np.sqrt(0.9)) ** 2
# (gamma, weights, lam, K, g, eta as a fraction of 1 / (L + lam)): three clients with atoms
# at 0 (gamma > 1); a negative bottom (g lam > 1) at Thm 2's largest step; pooled samples
# barely spanning R^d (sum min(1, 1/gamma) = 1.05) with a negative bottom (K = 2: the even-K
# fold and the K > 1 partial fractions of K = 4 above, 0.7 s where K = 6 took 3 s); K = 1; ten
# clients as in the benchmark (its client laws by the old route's quadrature, ``QuadPsiLaws``:
# the exact partial fractions cost a minute there).
FEDERATIONS = [
    ([0.5, 2.0, 1.5], "samples", 0.7, 3, 1.2, 0.9, PsiLaws),
    ([0.5, 1.5], [0.4, 0.6], 0.7, 4, 3.0, 1.0, PsiLaws),
    ([2.0, 2.0, 20.0], "uniform", 0.3, 2, 6.0, 0.8, PsiLaws),
    ([0.3, 0.6, 3.0], [0.2, 0.5, 0.3], 1.5, 1, 0.5, 0.7, PsiLaws),
    (list(np.linspace(0.4, 3.0, 10)), "samples", 0.5, 10, 2.0, 0.9, QuadPsiLaws),
    # p004-fig2-theory's lam = 0.1, K = 1 (paper 004's steps): the old route's quadrature put
    # the top 5.9e-8 (relative) too high here; the exact partial fractions agree with the fold.
    ([0.3, 0.5, 0.7, 0.9], "uniform", 0.1, 1, (0.1 + TOP9) / (0.1 * TOP9), 0.95, PsiLaws),
]


def _weights(gam, w):
    if w == "samples":
        return (1 / gam) / np.sum(1 / gam)
    return np.full(gam.size, 1 / gam.size) if w == "uniform" else np.asarray(w, float)


@pytest.mark.parametrize("gam, w, lam, K, g, frac, laws", FEDERATIONS)
def test_fold_brackets_the_root_of_the_old_edge_equation(gam, w, lam, K, g, frac, laws):
    """The old route's edge equation (z - 1 + g lam) / (g lam) = top (bottom) of the free sum
    Dhat_z, with the client laws by exact partial fractions, changes sign within 1e-8 of the
    fold's top (bottom): F is increasing in z, so F(top - delta) < 0 < F(top + delta)."""
    gam = np.asarray(gam, float)
    p = _weights(gam, w)
    eta = frac / ((1 + np.sqrt(gam.max())) ** 2 + lam)
    gl = g * lam
    got = fast_contraction(gam, p, lam, eta, K, g)

    def F(z, branch):
        return (z - 1 + gl) / gl - subordination.edge(laws(gam, p, lam, eta, K, z), branch)

    delta = 1e-8 * max(1.0, abs(got["top"]))
    assert F(got["top"] - delta, "up") < 0 < F(got["top"] + delta, "up")
    assert (got["bottom"] is not None) == (gl > 1)
    if got["bottom"] is not None:
        delta = 1e-8 * max(1.0, abs(got["bottom"]))
        assert F(got["bottom"] - delta, "down") < 0 < F(got["bottom"] + delta, "down")
    assert got["contraction"] == max(abs(got["top"]), abs(got["bottom"] or 0.0))


def test_half_the_contour_nodes_change_nothing(monkeypatch):
    """The double contours' T_max + 16 nodes against 2 T_max + 16 (the integrand per variable
    is a polynomial of degree <= T_max times a function decaying at infinity: module docstring
    of ``algorithm1.curves``): server and clients' models, and the distance, to 1e-11."""
    import importlib

    contours = importlib.import_module("riskcalc.linear.dynamics.algorithm1.contours")
    gam = np.array([0.5, 2.0, 1.5])
    kw = dict(gamma=gam, r=[0.3, 0.6, 1.0], sigma=[0.4, 0.6, 1.0], signal=1.3, lam=0.7,
              local_steps=5, step_size=0.9 / ((1 + np.sqrt(2.0)) ** 2 + 0.7), global_step=1.2,
              rounds=[0, 1, 2, 7, 30, 90, 200, np.inf])
    few = riskcalc.rounds_limit("pfedme", **kw)
    contour = contours._contour
    monkeypatch.setattr(contours, "_contour", lambda *a, degree: contour(*a, degree=2))
    many = riskcalc.rounds_limit("pfedme", **kw)
    assert many.diagnostics["contour_nodes"] > 1.5 * few.diagnostics["contour_nodes"]
    for name in ("global_risk", "risk", "distance_to_fixed_point"):
        np.testing.assert_allclose(getattr(few, name), getattr(many, name), rtol=1e-11,
                                   atol=1e-13)


@pytest.mark.parametrize("laws", [
    ClientLaws(np.linspace(0.4, 3.0, 10), np.full(10, 0.1), 0.1, 10),
    ClientLaws(np.array([0.5, 2.0, 1.5]), np.array([0.3, 0.3, 0.4]), 0.2, 1),
    ClientLaws(np.array([2.0, 3.0, 1.2]), np.array([0.3, 0.3, 0.4]), 0.1, 50),
    ClientLaws(np.array([3.0, 4.0]), np.array([0.2, 0.8]), 1.0, 1),     # atom: the gap branch
    ClientLaws(np.array([0.3, 0.8]), np.array([0.5, 0.5]), 0.3, np.inf),  # point masses
    ProxLaws(np.array([0.3, 0.5, 0.7, 0.9]), np.full(4, 0.25), 0.1)], ids=range(6))
def test_fedavg_edges_by_the_fold_are_the_scans(laws):
    """The round map's edges by the fold (where it applies; the scans where it does not) equal
    ``subordination.edges``' scan-and-refine to 1e-12."""
    np.testing.assert_allclose(edges(laws), subordination.edges(laws), rtol=1e-12, atol=0)


def test_exact_local_solves_need_no_step_size():
    """FedAvg with local_steps = inf has no step size: left out it answers (it raised a
    TypeError in the client laws), T = 0 the server model w = 0 (risk signal^2 + r^2); given, it
    is refused as the command line refuses --local-step-size there (it was taken and dropped)."""
    kw = dict(gamma=[0.3, 0.8], r=[0.3, 0.6], sigma=[0.4, 0.6], signal=1.0,
              local_steps=np.inf, rounds=[0, 1, 3, np.inf])
    lim = riskcalc.rounds_limit("fedavg", **kw)
    assert np.all(np.isfinite(lim.local_risk))
    np.testing.assert_allclose(lim.risk[:, 0], 1.0 + np.array([0.3, 0.6]) ** 2, rtol=1e-12)
    with pytest.raises(ValueError, match="step_size applies to finite local_steps only"):
        riskcalc.rounds_limit("fedavg", step_size=0.3, **kw)
