"""Issue 32, fuzz40 (steps): what this fuzz found, each test failing before."""

import sys

import mpmath as mp
import numpy as np
import pytest

from riskcalc import limit, optimal_steps, steps_limit
from riskcalc.errors import SolverError
from riskcalc.linear.engine import weighted_mp
from riskcalc.spectrum import Spectrum


def test_support_edges_need_no_scipy_optimize(monkeypatch):
    """F1: ``predict ftfa --clients 5 --steps 10 --step-size 0.1 --spectrum two-point:1,4,0.3
    --max-minutes 0.01`` stopped before answering: ``support_edges`` imported scipy.optimize
    for ``brentq`` (~1-2 s on a loaded machine). Its own bracketed solver now finds the
    edges; they match (1 -/+ sqrt(gamma))^2 at Sigma = I and the former route (to 2.4e-13 of
    the edge or 1e-6 of the top edge, 795 edge pairs over 53 spectra)."""
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)      # importing it now fails
    for g in (1e-6, 0.5, 2.0, 1e6):
        lo, hi = weighted_mp.support_edges(g, Spectrum([1.0]))
        assert np.isclose(hi, (1 + np.sqrt(g)) ** 2, rtol=1e-14, atol=0)
        assert np.isclose(lo, (1 - np.sqrt(g)) ** 2, rtol=1e-11, atol=0)
    lo, hi = weighted_mp.support_edges(2.0, Spectrum([1.0, 4.0], [0.3, 0.7]))
    assert np.isclose(lo, 0.42213686190851285, rtol=1e-13)  # the brentq route's
    assert np.isclose(hi, 19.7431995794201, rtol=1e-13)


def test_steps_limit_broadcasts_clients_like_limit():
    """F2: ``steps_limit(..., clients=[3, 4])`` was refused ("clients must be an integer")
    although ``riskcalc.limit`` broadcasts ``clients``; it now broadcasts the same way (one
    pencil per distinct M), each entry the scalar call's, the local baselines too."""
    spec = Spectrum([1.0, 4.0], [0.3, 0.7])
    res = steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.2, steps=[[1], [5]],
                      step_size=0.1, clients=[3, 30], spectrum=spec)
    assert isinstance(res.bias, np.ndarray) and res.bias.shape == (2, 2)
    assert res.params["clients"] == [3, 30]
    for i, k in enumerate((1, 5)):
        for j, m in enumerate((3, 30)):
            one = steps_limit("rtfa", gamma=2.0, r=1.0, sigma=0.5, lam=0.2, steps=k,
                              step_size=0.1, clients=m, spectrum=spec)
            assert res.bias[i, j] == one.bias and res.variance[i, j] == one.variance
    ref = limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, clients=[3, 4])
    res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=10, step_size=0.1,
                      clients=np.array([3, 4]))
    assert type(res.bias) is type(ref.bias) and res.params["clients"] == ref.params["clients"]
    local = steps_limit("local", gamma=2.0, rho=1.0, sigma=0.5, steps=10, step_size=0.1,
                        clients=[3, 4])
    assert local.bias.shape == (2,) and local.bias[0] == local.bias[1]
    mixed = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=10, step_size=0.8,
                        clients=[1, 4])          # one client's steps stay put (steps F10)
    assert list(mixed.converges) == [True, False] and mixed.bias[0] == 0.0


def test_contour_nodes_near_a_focus_at_zero_keep_their_digits():
    """F3: under two-point:1,4,0.3 after 6e5-8e5 steps of 0.1 near gamma = 1 (0.998, 0.9995,
    1, 1.0005, 1.001) ``steps_limit`` refused after 12-34 s ("did not settle") or answered,
    with no rule in gamma or steps: the contour's nodes, c + h (u + 1/u) / 2, lost ~1e-10 of
    their relative digits near the focus 0, where the integrand ~ 1/z turned it into 6e-11
    relative noise in the variance, above the rule's tolerance 1e-11 (the rule itself had
    settled). The nodes are now taken from their nearer focus with half-angle factors: every
    case answers (7-47 s), and under Sigma ~ I (two atoms 1e-12 apart) within 1.1e-12 of
    the Marchenko-Pastur quadrature, where the former nodes were 3e-12 to 4.8e-11 off. Here
    the nodes of a cheap rule against mpmath's."""
    seen = []

    def spy(z):
        seen.append(z.copy())
        return np.full_like(z, len(seen))       # never settles: every rule up to 128 nodes

    q, margin = 4.0, 1e-4
    with pytest.raises(SolverError, match="did not settle"):
        weighted_mp.contour_integrals((spy,), 1.0, Spectrum([1.0]), foci=(0.0, q),
                                      margin=margin, rtol=0.0, atol=1e-3, max_nodes=128)
    mp.mp.dps = 30
    h = mp.mpf(q) / 2
    rho = (h + margin + mp.sqrt(mp.mpf(margin) * (2 * h + margin))) / h
    z = seen[-1]
    worst = 0.0
    for j in range(z.size):
        u = rho * mp.expjpi(mp.mpf(j + 0.5) / z.size)
        exact = h + h * (u + 1 / u) / 2
        worst = max(worst, float(abs(exact - mp.mpc(z[j])) / abs(exact)))
    assert worst <= 2e-15                       # 6.1e-16 (4.7e-13 before, near 0)


def test_optimal_steps_name_an_array_of_clients():
    """F4: since ``steps_limit`` broadcasts ``clients`` (F2), ``optimal_steps(...,
    clients=[5, 6])`` said "parameter arrays of shapes steps (201,), clients (2,) do not
    broadcast together", naming a steps grid the caller never gave; it now refuses the array
    as it does an array gamma (one parameter point)."""
    with pytest.raises(ValueError, match="one parameter point; clients is an array"):
        optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=0.5, step_size=0.1, clients=[5, 6])
    res = optimal_steps("ftfa", gamma=2.0, r=1.0, sigma=0.5, step_size=0.1, clients=5)
    assert res.params["steps"] == 17 and res.params["clients"] == 5


def test_mixed_one_client_steps_count_only_the_diverging_points():
    """F5: with F2's broadcast, ``clients=[1, 4]`` past the edge (gamma 0.5, step 0.8) noted
    "2 of 2 points diverge" beside converges [True, False] (one client's steps stay put,
    steps F10); the divergence note now counts the points of more clients only (among all
    the points: fuzz41 steps F1)."""
    res = steps_limit("ftfa", gamma=0.5, r=1.0, sigma=0.5, steps=10, step_size=0.8,
                      clients=[1, 4])
    assert list(res.converges) == [True, False] and len(res.notes) == 2
    assert "diverges" in res.notes[0] and "1 of 2 points diverge" in res.notes[0]
    assert res.notes[1].startswith("one client")
