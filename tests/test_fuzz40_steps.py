"""Issue 32, fuzz40 (steps): what this fuzz found, each test failing before."""

import sys

import numpy as np

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
