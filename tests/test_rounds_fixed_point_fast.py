"""Algorithm 1's fixed point alone (rounds all at T = inf or settled) by the exact prox's route
(``riskcalc.linear.dynamics.algorithm1.fixed_point``), against the K-step route's own T = inf
column (``algorithm1.curves``' contours, taken when a finite round is asked beside it): every
risk within 1e-10 relative (measured: within 4e-14) and the K-step map's spectral data, at
the issue-29 federation (M = 10, K = 10), K = 1 with given weights, K = 150, one client with
N < d, local steps past 1 / (L + lam) with a real spectrum and (global_step > 1 / lam) a
non-real one; divergent and out-of-scope inputs get the same errors as with a finite round beside. Sigma = I
only: the routes under a spectrum (``sigma.algorithm1``) are untouched by it.
"""

import numpy as np
import pytest

import riskcalc
from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1 import curves as curves_module


def _top(gamma):
    return float(np.max((1.0 + np.sqrt(np.atleast_1d(gamma))) ** 2))


def _lam_step(gamma, lam, fraction):
    """lam and step_size = fraction / (L + lam), L the top of the clients' spectra."""
    return dict(lam=lam, step_size=fraction / (_top(gamma) + lam))


G10 = np.linspace(0.4, 3.0, 10)
G3 = [0.2, 0.4, 0.5]
G4 = [0.3, 0.6, 2.0]
CASES = {
    "issue-29": dict(gamma=G10, r=np.linspace(0.1, 0.6, 10), sigma=np.linspace(0.3, 1.0, 10),
                     signal=1.0, local_steps=10, **_lam_step(G10, 0.5, 0.9)),
    "K=1, weights": dict(gamma=G3, r=[0.2, 0.5, 0.8], sigma=[0.3, 0.6, 1.0], signal=1.0,
                         local_steps=1, weights=[0.5, 0.2, 0.3], **_lam_step(G3, 1.0, 0.9)),
    "K=150": dict(gamma=G4, r=0.4, sigma=0.5, signal=1.2, local_steps=150,
                  **_lam_step(G4, 0.3, 0.8)),
    "one client, N < d": dict(gamma=2.5, r=0.0, sigma=0.5, signal=1.0, local_steps=4,
                              **_lam_step(2.5, 1.0, 0.9)),
    "a(s) < 0, uniform": dict(gamma=G4, r=0.4, sigma=0.5, signal=1.0, local_steps=3,
                              global_step=1.0, weights="uniform", **_lam_step(G4, 0.5, 1.5)),
}


def _same(fast, full, column=-1):
    """Every value of ``fast`` (all columns the fixed point) equals ``full``'s ``column``."""
    for name in ("risk", "global_risk", "bias", "variance", "local_risk"):
        got, want = getattr(fast, name), getattr(full, name)[:, column]
        for col in got.T:
            np.testing.assert_allclose(col, want, rtol=1e-10, atol=0, err_msg=name)
    for how in (dict(steps=5, step_size=0.1), dict(lam=1.0)):     # FTFA, RTFA from w_inf
        np.testing.assert_allclose(fast.personalized_risk(**how)[:, 0],
                                   full.personalized_risk(**how)[:, column], rtol=1e-10, atol=0)
    assert np.all(fast.distance_to_fixed_point == 0.0)
    assert (fast.contraction, fast.converges) == (full.contraction, full.converges)
    for key in ("edges", "atom_at_zero", "contraction_is_bound"):
        assert fast.diagnostics.get(key) == full.diagnostics.get(key), key


@pytest.mark.parametrize("name", list(CASES))
def test_fixed_point_alone_is_the_k_step_routes(name, monkeypatch):
    kw = CASES[name]
    full = riskcalc.rounds_limit("fedprox", rounds=[1, np.inf], **kw)
    assert full.converges and 0.5 < full.contraction < 1.0

    def no_contour(*args, **kwargs):
        raise AssertionError("rounds=inf alone took the K-step contours")
    monkeypatch.setattr(curves_module, "solve_ellipse", no_contour)
    _same(riskcalc.rounds_limit("fedprox", rounds=np.inf, **kw), full)
    if name == "one client, N < d":       # the null space held apart (algorithm1.pooled)
        assert full.diagnostics["atom_at_zero"] == pytest.approx(0.6)


def test_settled_rounds_take_the_fixed_point():
    """A finite round past the fixed point to rounding (contraction^T < 1e-16) goes the same
    way, each column the fixed point."""
    kw = CASES["K=1, weights"]
    full = riskcalc.rounds_limit("fedprox", rounds=[1, np.inf], **kw)
    fast = riskcalc.rounds_limit("fedprox", rounds=[10 ** 6, np.inf], **kw)
    assert fast.risk.shape == (3, 2)
    _same(fast, full)


def test_non_real_spectrum_fixed_point():
    """Odd K past 1 / (L + lam) with global_step > 1 / lam (``algorithm1.fold``'s circles):
    the fixed point does not depend on g, so it is the K-step contours' at g = 1 / lam (a real
    spectrum); the spectral data are the circles' (as with a finite round beside)."""
    g2 = [0.3, 0.6]
    kw = dict(gamma=g2, r=0.4, sigma=0.5, signal=1.0, local_steps=1, **_lam_step(g2, 0.5, 1.5))
    fast = riskcalc.rounds_limit("fedprox", rounds=np.inf, global_step=3.0, **kw)
    real = riskcalc.rounds_limit("fedprox", rounds=[1, np.inf], global_step=2.0, **kw)
    for name in ("risk", "global_risk", "local_risk"):
        np.testing.assert_allclose(getattr(fast, name)[:, 0], getattr(real, name)[:, 1],
                                   rtol=1e-10, atol=0, err_msg=name)
    beside = riskcalc.rounds_limit("fedprox", rounds=[1, np.inf], global_step=3.0, **kw)
    assert fast.diagnostics["edges"] == beside.diagnostics["edges"]
    assert fast.diagnostics["edges"][0] < 0.0 and fast.contraction == beside.contraction
    assert fast.contraction != real.contraction


@pytest.mark.parametrize("change, error, match", [
    (dict(global_step=8.0), ValueError, "diverges"),      # g lam = 4: bottom edge below -1
    (dict(step_size=2.5 / (_top(G3) + 1.0)), ValueError, "step_size"),  # past the local edge
    # sum_j 1/gamma_j = 1 + 1e-5: the exact prox's route refused it as pooled N = d exactly;
    # the K-step route's refusal names the contour nodes it would need, and pooled N / d.
    (dict(gamma=[2.0, 1.0 / (0.5 + 1e-5)], r=0.3, sigma=0.4, weights="samples"), SolverError,
     r"contour needs more than .* nodes.*N / d = sum_j 1/gamma_j = 1.00001 from 1"),
])
def test_errors_as_with_a_finite_round(change, error, match):
    kw = {**CASES["K=1, weights"], **change}
    with pytest.raises(error, match=match) as alone:
        riskcalc.rounds_limit("fedprox", rounds=np.inf, **kw)
    with pytest.raises(error) as beside:
        riskcalc.rounds_limit("fedprox", rounds=[1, np.inf], **kw)
    assert str(alone.value) == str(beside.value)
