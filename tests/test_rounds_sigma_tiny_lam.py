"""Personalization after Algorithm 1's exact-prox rounds under a shared spectrum at a tiny
lam (issue 32): below ``prox_sigma.projection_lam`` the server curves are FedAvg's exact local
solves (global step g lam), and ``personalize_sigma`` now starts from that same server model
instead of the prox pencil, whose rows of 1 / lam lost about eps / lam. Checked against
Richardson's lam -> 0 extrapolation of the prox route at moderate lam and, on H = delta_1,
against the Sigma = I scalar route (``personalize``, another module entirely)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.inputs import weight_vector
from riskcalc.linear.dynamics.sigma.personalize_sigma import personalized_sigma


def test_tiny_lam_is_richardsons_limit_of_the_prox():
    """RTFA (lam' = 1e-3) from the fixed point, gamma (0.5, 3) under the spectrum (1, 4): lam
    1e-11 and 1e-100 through ``rounds_limit`` against 2 f(1e-4) - f(2e-4) of the prox route
    (error O(lam^2); measured 6e-10 relative). The prox route is called on the projection's
    edges (its own scan costs 0.8 s a lam; its D lies within O(lam) of them, and
    ``pencil_curves`` refuses a contour that misses any of it). It was 6e-6 off at 1e-11,
    refused from 1e-12 ('a negative or NaN quadratic form')."""
    gam, one, spectrum = np.array([0.5, 3.0]), np.ones(2), riskcalc.Spectrum([1.0, 4.0])

    def personalized(lam):
        return riskcalc.rounds_limit(
            "pfedme", gamma=gam, r=1.0, sigma=1.0, signal=1.0, rounds=[np.inf],
            local_steps=np.inf, lam=lam, spectrum=spectrum)

    tiny = personalized(1e-100)
    edges = (*tiny.diagnostics["edges"], tiny.diagnostics["atom_at_zero"])

    def prox(lam):
        bias, var = personalized_sigma("pfedme", gam, one, one, weight_vector("samples", gam),
                                       1.0, tiny.rounds, spectrum, local_steps=np.inf, lam=lam,
                                       g=1.0 / lam, kind="rtfa", lam2=1e-3,
                                       spectrum_edges=edges)
        return bias + var

    limit = 2.0 * prox(1e-4) - prox(2e-4)
    for res in (tiny, personalized(1e-11)):
        np.testing.assert_allclose(res.personalized_risk(lam=1e-3), limit, rtol=1e-8, atol=0)


@pytest.mark.parametrize("gam", [[0.5, 2.0], [0.5, 0.6]])
def test_tiny_lam_on_the_identity_spectrum_is_the_scalar_route(gam):
    """Through the extended pencil on H = delta_1 (called directly: ``rounds_limit`` sends a
    one-atom spectrum to the scalar route) at lam 1e-12, FTFA and RTFA at T = 0, 2, inf,
    against ``personalize``'s scalar route (which takes the projection below its own
    threshold): measured 3e-15. The prox pencil answered 1e-3 off (gamma 0.5, 0.6) or
    refused."""
    gam, lam = np.array(gam), 1e-12
    r, sig, rounds = np.array([0.3, 0.8]), np.array([0.4, 0.6]), np.array([0.0, 2.0, np.inf])
    scalar = riskcalc.rounds_limit("pfedme", gamma=gam, r=r, sigma=sig, signal=1.3,
                                   rounds=rounds, local_steps=np.inf, lam=lam)
    edges = (*scalar.diagnostics["edges"], scalar.diagnostics["atom_at_zero"])
    for pers, mine in ((dict(steps=2, step_size=0.3), dict(kind="ftfa", k=2, eta2=0.3)),
                       (dict(lam=0.4), dict(kind="rtfa", lam2=0.4))):
        bias, var = personalized_sigma(
            "pfedme", gam, r, sig, weight_vector("samples", gam), 1.3, rounds,
            riskcalc.Spectrum([1.0]), local_steps=np.inf, lam=lam, g=1.0 / lam,
            spectrum_edges=edges, **mine)
        np.testing.assert_allclose(bias + var, scalar.personalized_risk(**pers), rtol=0,
                                   atol=1e-10)


def test_rtfa_ridge_below_its_floor_is_refused():
    """RTFA with a tiny ridge lam' under a spectrum lost digits silently (1e-4 relative at
    lam' 1e-12, 5e-2 at 1e-14 against its lam' -> 0 limit, the own model of round T + 1):
    refused below 1e-5 times the bottom of the gamma > 1 clients' sample spectra, naming lam;
    above, the gap to that limit is O(lam') (measured -0.4498 lam' at 2e-5 and 2e-4)."""
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 3.0], r=1.0, sigma=1.0, signal=1.0,
                                rounds=[np.inf], local_steps=np.inf, lam=1e-12,
                                spectrum=riskcalc.Spectrum([1.0, 4.0]))
    with pytest.raises(ValueError, match=r"lam: RTFA's ridge 1e-12 is below 1.04e-05 .* give "
                                         r"lam >= 1.04e-05"):
        res.personalized_risk(lam=1e-12)
    gaps = [(res.personalized_risk(lam=x) - res.risk)[1, 0] / x for x in (2e-5, 2e-4)]
    np.testing.assert_allclose(gaps[0], gaps[1], rtol=1e-3)
