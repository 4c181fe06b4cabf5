"""Issue 32, fuzz40 (steps): what this fuzz found, each test failing before."""

import sys

import numpy as np

from riskcalc import limit, steps_limit
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
