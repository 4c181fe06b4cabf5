"""Issue 32, fuzz39 (fall): what this fuzz found, each test failing before."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.finite_clients.pfedme_sigma import pfedme_sigma_group_limits
from riskcalc.spectrum import Spectrum


def test_pfedme_at_sigma_i_and_small_lam_answers_by_the_spectrum_route():
    """F1: gamma [1, 1.5] at lam 1e-8 was refused at Sigma = I ("Marchenko-Pastur quadrature
    did not converge ... give a larger lam") where the spectrum route on the identity spectrum
    answers: now that route's numbers, with a note; the variance of the client at gamma 1
    follows its lam^-1/2 law (the coefficient 0.24206 at 1e-8 and 1e-10)."""
    kw = dict(gamma=[1.0, 1.5], r=[1.0, 1.0], sigma=[0.5, 0.5])
    res = riskcalc.clients_limit("pfedme", **kw, lam=1e-8)
    bias, var = pfedme_sigma_group_limits(np.array([1.0, 1.5]), np.ones(2), np.full(2, 0.5),
                                          np.ones(2), 1e-8, "samples", Spectrum([1.0]))
    np.testing.assert_allclose(res.bias, bias, rtol=1e-9)
    np.testing.assert_allclose(res.variance, var, rtol=1e-9)
    assert any("spectrum route on the identity spectrum" in n for n in res.notes)
    lower = riskcalc.clients_limit("pfedme", **kw, lam=1e-10)
    assert res.variance[0] * 1e-4 == pytest.approx(lower.variance[0] * 1e-5, rel=1e-4)


def test_pfedme_with_a_dwarfed_weight_at_sigma_i_answers():
    """F1: weights [1e-9, 1, 1] at gamma 2, lam 0.5 was refused ("tau(A^-1) is pinned ...
    dwarfs the others'"); the heavy two sit at pooled N = d, so the risks grow like the small
    weight^-1/2: the answer is sqrt(10) times the one at weight 1e-8 (which the scalar route
    answers) to 1e-3. (Since h39advise's nested quadrature rules the scalar route answers it
    too, with no note: whichever route answers must give the spectrum route's numbers.)"""
    kw = dict(gamma=[2.0] * 3, r=[1.0] * 3, sigma=[0.5] * 3, lam=0.5)
    small = riskcalc.clients_limit("pfedme", **kw, weights=[1e-9, 1, 1])
    ref = riskcalc.clients_limit("pfedme", **kw, weights=[1e-8, 1, 1])
    bias, var = pfedme_sigma_group_limits(np.full(3, 2.0), np.ones(3), np.full(3, 0.5),
                                          np.ones(3), 0.5, [1e-9, 1, 1], Spectrum([1.0]))
    np.testing.assert_allclose(small.risk, bias + var, rtol=1e-9)
    np.testing.assert_allclose(small.risk / ref.risk, np.sqrt(10), rtol=1e-3)


def test_pfedme_homogeneous_small_lam_through_limit():
    """F1 through ``riskcalc.limit(clients=M)``: three clients at gamma 1, lam 1e-9 answer
    (refused before), the variance following lam^-1/2 from lam 1e-7."""
    kw = dict(gamma=1.0, r=1.0, sigma=0.5, clients=3)
    a = riskcalc.limit("pfedme", **kw, lam=1e-9)
    b = riskcalc.limit("pfedme", **kw, lam=1e-7)
    assert a.variance * np.sqrt(1e-9) == pytest.approx(b.variance * np.sqrt(1e-7), rel=1e-3)
