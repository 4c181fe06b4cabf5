"""pFedMe's finite-M limit under a covariance spectrum at tiny lam (issue 32, F9): the noise,
the cross term and the noise source were differences of two O(1 / lam) terms, so lam = 1e-20
gave a variance 5e4 for 1.53 (a clients file of identical clients a negative one), rc 0. Now
each is one chain with S between two blocks (``resolvent_chain``'s links; module docstring
of ``finite_clients.pfedme_sigma``, step 3). Checked against the Sigma = I route
(``finite_clients.own``, scalar subordination), Richardson's extrapolation from lam = 1e-6
and, for the links, the chains with S written out as differences where those are exact."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.engine.resolvent_chain import chain_traces
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.finite_clients.pfedme_sigma import pfedme_sigma_group_limits

SPEC = "two-point:1,4,0.5"


def test_links_equal_the_chains_with_s_written_out():
    """Q_a (M_a + l_a S) Q_(a+1) at lam = 0.5, where the differences S R = lam (I - R) and
    S Q = I - Lam Q lose nothing: R S R Sigma and R (Sigma + S / 2) Q (s + 1 + S) R Sigma
    (links 0.5 and 1, a "Q" block of shift 0.7 between) to 1e-13; links of zero are none."""
    g, s, h, lam, q = 2.0, np.array([1.0, 4.0]), np.array([0.5, 0.5]), 0.5, 0.7
    one = np.ones(2)

    def ch(kinds, mids, links=None):
        eta = [lam if b == "R" else 1.0 for b in kinds]
        shifts = np.array([one if b == "R" else q * one for b in kinds])
        return float(chain_traces(g, s, h, eta, shifts, np.array(mids), links=links))

    rsr = ch("RR", [0 * one, s], [1.0])
    assert rsr == pytest.approx(lam * (ch("R", [s]) - ch("RR", [one, s])), rel=1e-13)
    linked = ch("RQR", [s, s + 1, s], [0.5, 1.0])
    # R s Q S R s = lam (R s Q s - R s Q R s); R S Q = lam (Q - R Q); R S Q S R = R (I - q Q) S R.
    out = (ch("RQR", [s, s + 1, s])
           + lam * (ch("RQ", [s, s]) - ch("RQR", [s, one, s]))
           + 0.5 * lam * (ch("QR", [s + 1, s]) - ch("RQR", [one, s + 1, s]))
           + 0.5 * lam * (ch("R", [s]) - ch("RR", [one, s])
                          - q * (ch("RQ", [one, s]) - ch("RQR", [one, one, s]))))
    assert linked == pytest.approx(out, rel=1e-13)
    assert ch("RQR", [s, s + 1, s], [0.0, 0.0]) == ch("RQR", [s, s + 1, s])


@pytest.mark.parametrize("weights", ["samples", "uniform"])
@pytest.mark.parametrize("gam,count", [([2.0], [10]), ([0.5, 3.0], [3, 2]),
                                       ([0.8, 1.5, 4.0], [2, 1, 3])])
def test_identity_spectrum_equals_the_scalar_route(gam, count, weights):
    """Spectrum([1]) through the operator-valued route equals ``own`` (Sigma = I), bias and
    variance to 1e-10, lam 10 down to 1e-6 (own's route answers to about there; it is being
    rescaled for tiny lam on main, and refuses heterogeneous federations below); the old
    differences missed 1e-10 at 1e-6 for gamma (0.5, 3), uniform weights."""
    n = len(gam)
    r, sigma = np.linspace(0.5, 1.5, n), np.linspace(1.0, 0.5, n)
    for lam in (10.0, 1.0, 1e-2, 1e-4, 1e-6):
        want = own_group_limits("pfedme", gam, r, sigma, count, lam, weights)
        got = pfedme_sigma_group_limits(gam, r, sigma, count, lam, weights,
                                        riskcalc.Spectrum([1.0]))
        # atol: a bias of ~1e-8 (gamma < 1 at lam 1e-6, its own data nearly exact) is a sum
        # of O(r^2) terms, exact to ~1e-16 absolute, not relative (own.py's objective divided
        # by lam moved such entries by 1e-16).
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def _richardson(f):
    """The lam -> 0 limit of f (smooth in lam): 2 f(1e-6) - f(2e-6), O(1e-12) off."""
    return 2 * np.asarray(f(1e-6)) - np.asarray(f(2e-6))


def _close(got, want):
    """1e-8 relative, or of the largest entry (a gamma < 1 client's bias is O(lam))."""
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.max(np.abs(want)))


@pytest.mark.parametrize("kw", [
    dict(gamma=[2.0], spectrum=SPEC, weights="samples"),
    dict(gamma=[0.5, 3.0, 3.0], spectrum="two-point:1,9,0.3", weights="uniform"),
])
def test_tiny_lam_is_the_limit(kw):
    """lam = 1e-12 ... 1e-100 answer the lam -> 0 limit (Richardson from 1e-6) to 1e-8, bias
    and variance (the gamma 0.5 client's bias, 0 in the limit, to 1e-8 of the largest); the
    risk was 2.8119 at 1e-12, 51724 at 1e-20 and 3.1e84 at 1e-100 for 2.8115."""
    kw = dict(kw, sigma=1.0, r=1.0)
    if len(kw["gamma"]) == 1:
        kw["gamma"] = kw["gamma"] * 10

    def f(lam):
        out = clients_limit("pfedme", lam=lam, **kw)
        return np.concatenate([out.bias, out.variance])

    want = _richardson(f)
    for lam in (1e-12, 1e-20, 1e-50, 1e-100):
        _close(f(lam), want)


def test_clients_file_of_identical_clients_has_its_variance():
    """Four identical clients each with the spectrum (covariate shift's route, a clients
    file): at lam = 1e-20 the variance of the shared-spectrum route, positive and the limit
    (it was -60386)."""
    def f(lam, **spec):
        return clients_limit("pfedme", gamma=[2.0] * 4, sigma=1.0, r=1.0, lam=lam,
                             **spec).variance

    got = f(1e-20, spectra=SPEC)
    assert np.all(got > 0)
    np.testing.assert_allclose(got, f(1e-20, spectrum=SPEC), rtol=1e-12)
    _close(got, _richardson(lambda lam: f(lam, spectra=SPEC)))


def test_scale_mixed_federation_at_lam_1e_8():
    """gamma (0.5, 3) with covariances a factor 100 apart, lam = 1e-8: the limit (Richardson
    from 1e-6, 1e-8 relative: its O(lam^2) error is 1e-12), positive risks (``_close``)."""
    def f(lam):
        out = clients_limit("pfedme", gamma=[0.5, 3.0], sigma=[1.0, 0.5], r=[1.0, 2.0], lam=lam,
                            spectra=[SPEC, "scaled:100"])
        return np.concatenate([out.bias, out.variance])

    got = f(1e-8)
    assert np.all(got > 0)
    _close(got, _richardson(f))
