"""pFedMe's and MAML-FL's exact gradients of the mean finite-M risk in the client weights
under covariate shift (``riskcalc.linear.finite_clients.subordination_gradient``), the
complex steps through
``resolvent_chain`` and ``block_pencil`` they rest on, and ``advise``'s optimal weights with
them.

Checks: against fourth-order central differences of ``pfedme_shift_group_limits`` and
``maml_shift_group_limits`` at free weights (two and four joint atoms) and in lam / alpha;
against the Sigma = I closed-form gradients of ``finite_clients.gradient`` (another route)
when every client has Sigma = c I; the chains' complex steps against central differences;
``advise`` with the exact gradients against its finite-difference route on the first 6
clients of the shift10 federation of ``benchmarks/bench_advise.py``.
"""

import os
import sys

import numpy as np
import pytest

from riskcalc.advise import advise, gradients
from riskcalc.advise.federation import from_clients
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots, root_step
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from riskcalc.linear.finite_clients.maml_sigma import maml_shift_group_limits
from riskcalc.linear.finite_clients.pfedme_sigma import pfedme_shift_group_limits
from riskcalc.linear.finite_clients.subordination_gradient import (
    maml_shift_mean_risk_gradient, pfedme_shift_mean_risk_gradient)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
from bench_advise import SHIFT_TYPES, federation  # noqa: E402

# Four joint atoms (two-point spectra with different splits).
MIXED = ("two-point:1,3,0.3", "two-point:2,5,0.6", "two-point:0.5,2,0.5")
# The differences' error: truncation ~ h^4 and the fixed point's rounding over h (~1e-10
# seen); a missing term of the derivation is an O(1) error.
RTOL = 1e-6


def _clients(seed, m):
    rng = np.random.default_rng(np.random.SeedSequence([30, seed]))
    gam = np.exp(rng.uniform(np.log(0.3), np.log(4.0), m))
    r, sigma = rng.uniform(0.2, 2.0, m), rng.uniform(0.1, 1.5, m)
    p = rng.uniform(0.5, 2.0, m)
    return gam, r, sigma, p / p.sum()


def _central(f, x, h):
    """The five-point central differences of f at x, coordinate by coordinate (truncation
    O(h^4))."""
    coef = np.array([1.0, -8.0, 8.0, -1.0]) / (12 * h)
    return np.array([coef @ [f(x + k * h * e) for k in (-2, -1, 1, 2)] for e in np.eye(x.size)])


LIMITS = {"pfedme": (pfedme_shift_mean_risk_gradient, pfedme_shift_group_limits, "lam"),
          "maml_fl": (maml_shift_mean_risk_gradient, maml_shift_group_limits, "alpha")}


@pytest.mark.parametrize("method, types, m, tuning", [
    ("pfedme", SHIFT_TYPES, 5, 0.7), ("pfedme", MIXED, 6, 0.2),
    ("maml_fl", SHIFT_TYPES, 5, 0.05), ("maml_fl", MIXED, 7, 0.15)])
def test_gradient_matches_central_differences(method, types, m, tuning):
    gradient, limits, name = LIMITS[method]
    gam, r, sigma, p = _clients(m, m)
    gam[0] = 0.5                        # MAML-FL: a client with its own least squares
    spectra = [types[j % 3] for j in range(m)]
    joint = joint_spectrum(spectra)
    mean, grad, grad_t = gradient(gamma=gam, sigma=sigma, r=r, weights=p, spectra=spectra,
                                  tuning=tuning)

    def free(q, x=tuning):
        # The limits' formulas at free (unnormalized) weights, every client its own group.
        bias, var = limits(gam, r, sigma, np.ones(m), x, q, joint, joint.types)
        return np.mean(bias + var)

    assert mean == pytest.approx(clients_limit(method, gamma=gam, sigma=sigma, r=r, weights=p,
                                               spectra=spectra, **{name: tuning}).mean_risk,
                                 rel=1e-12)
    fd = _central(free, p, 1e-3)
    assert np.max(np.abs(grad - fd)) <= RTOL * np.max(np.abs(fd))
    fd = _central(lambda x: free(p, x[0]), np.array([tuning]), 1e-4)[0]
    assert grad_t == pytest.approx(fd, rel=RTOL)


# Sigma_j = c I: MAML-FL's phi(c W) = c W (1 - alpha c W)^2 is c times the Sigma = I filter at
# alpha c, pFedMe's Moreau filter at lam is c times the Sigma = I one at lam / c; so the risks
# are c times the Sigma = I ones at that tuning with noise sigma / sqrt(c): the p-gradient c
# times the closed forms' (``finite_clients.gradient``), the tuning's c^2 (alpha) or 1 (lam)
# times. (method, tuning, its Sigma = I value, the tuning gradient's factor) at c = 2.
SCALED = [("maml_fl", 0.04, 0.08, 4.0), ("pfedme", 0.6, 0.3, 1.0)]


@pytest.mark.parametrize("method, tuning, identity, factor", SCALED)
def test_scaled_identity_is_the_identity_gradient(method, tuning, identity, factor):
    gam, r, sigma, p = _clients(5, 4)
    c = 2.0
    shift = LIMITS[method][0](gamma=gam, sigma=sigma, r=r, weights=p, spectra=f"scaled:{c:g}",
                              tuning=tuning)
    ident = mean_risk_gradient(method, gamma=gam, sigma=sigma / np.sqrt(c), r=r, weights=p,
                               tuning=identity)
    assert shift[0] == pytest.approx(c * ident[0], rel=1e-10)
    np.testing.assert_allclose(shift[1], c * ident[1], rtol=0,
                               atol=1e-8 * np.abs(shift[1]).max())
    # Both tuning gradients exact (complex steps; measured ~1e-13 for pFedMe's lam).
    assert shift[2] == pytest.approx(factor * float(ident[2]), rel=1e-10)


def test_chains_follow_a_complex_step():
    # Complex shifts and middles with the roots' tangent (``root_step``): the imaginary part
    # over the step is the derivative (central differences of the real chains).
    rng = np.random.default_rng(0)
    g, s = rng.uniform(0.3, 2, 4), rng.uniform(0.5, 3, (4, 3))
    w = np.ones(3) / 3
    lam0, dlam = rng.uniform(0.5, 2, (4, 3)), rng.uniform(-1, 1, (4, 3))
    mids = rng.uniform(0.5, 2, (4, 3, 3))
    eta = np.array([1.0, 0.3, 1.0])

    def chain(x):
        lam = lam0 + x * dlam
        c = diagonal_roots(g, s, w, 1.0, np.real(lam))
        if np.iscomplexobj(lam):
            c = root_step(g, s, w, 1.0, lam, c)
        roots = np.stack([c, diagonal_roots(g, s, w, 0.3, np.ones((4, 3))), c], axis=1)
        return chain_traces(g, s, w, eta, np.stack([lam, np.ones((4, 3)), lam], axis=1),
                            mids + x * mids[:, ::-1], roots)

    step = chain(1e-30j).imag / 1e-30
    fd = (chain(1e-5) - chain(-1e-5)) / 2e-5
    np.testing.assert_allclose(step, fd, rtol=1e-8)
    np.testing.assert_allclose(chain(1e-30j).real, chain(0.0), rtol=1e-14)
    with pytest.raises(ValueError, match="need the roots"):
        chain_traces(g, s, w, eta, np.stack([lam0 + 0j] * 3, axis=1), mids)


def test_pfedme_gradient_errors():
    gam, r, sigma, p = _clients(3, 4)
    with pytest.raises(ValueError, match="lam > 0"):
        pfedme_shift_mean_risk_gradient(gamma=gam, sigma=sigma, r=r, weights=p,
                                        spectra="scaled:2", tuning=0.0)
    with pytest.raises(ValueError, match="alpha >= 0"):
        maml_shift_mean_risk_gradient(gamma=gam, sigma=sigma, r=r, weights=p,
                                      spectra="scaled:2", tuning=-0.1)


@pytest.mark.parametrize("method", ["pfedme", "maml_fl"])
def test_advice_exact_against_finite_differences(method, monkeypatch):
    # shift10 of benchmarks/bench_advise.py, its clients 2 to 4 (one of each covariance, and
    # client 4 the only one with gamma > 1, so MAML-FL's pencils run: its first 3 clients take
    # the own-least-squares branch; the first 6 and all 10 checked the same at 1.5 s and 2.5 s
    # more): the same candidates, the optimal weights' mean risk equal to 1e-6 (and not above:
    # both optimizers stop at the same minimum).
    fed = from_clients(federation("shift10")[2:5])
    out = {}
    for exact in (False, True):
        monkeypatch.setattr(gradients, "SHIFT_GRADIENT", (method,) if exact else ())
        out[exact] = {c.weights: c for c in advise(fed, [method]).candidates}
    assert out[True].keys() == out[False].keys() == {"samples", "uniform", "optimal"}
    for name in ("samples", "uniform"):
        # MAML-FL's solves start from the last solution (``maml_sigma._warm``): last bits.
        np.testing.assert_allclose(out[True][name].risks, out[False][name].risks, rtol=1e-12)
    new, old = out[True]["optimal"].mean_risk, out[False]["optimal"].mean_risk
    assert new == pytest.approx(old, rel=1e-6)
    assert new <= old * (1 + 1e-12)


def test_pfedme_lam_derivative_at_tiny_lam():
    """Issue 32: the complex step's d mean / d lam at a tiny lam sums O(1 / lam) terms that
    cancel (-1.5728 at lam 1e-12, -8.0 at 1e-16 for -1.5741); now the lam -> 0 limit,
    against Richardson's extrapolation of difference quotients of ``clients_limit``'s mean
    (another route, which keeps its digits), to 1e-7 (measured 3e-9); the weight gradient is
    the one at lam itself. Atoms 0.01 to 100 (loss and curvature too close): refused naming lam."""
    from riskcalc.errors import SolverError
    from riskcalc.linear.finite_clients.subordination_gradient import (
        pfedme_shift_mean_risk_gradient)

    kw = dict(gamma=[0.5, 2.0, 3.0], sigma=[1.0] * 3, r=[1.0] * 3, weights=[0.3, 0.3, 0.4],
              spectra=["two-point:1,4,0.5", "two-point:4,1,0.5", "scaled:2"])

    def mean(lam):
        return clients_limit("pfedme", lam=lam, **kw).mean_risk

    zero = mean(1e-50)

    def quotient(x):
        return (mean(x) - zero) / x

    limit = (8 * quotient(1e-4) - 6 * quotient(2e-4) + quotient(4e-4)) / 3
    for lam in (1e-12, 1e-16):
        mean_risk, grad, grad_lam = pfedme_shift_mean_risk_gradient(tuning=lam, **kw)
        assert mean_risk == pytest.approx(zero, rel=1e-12)
        assert grad_lam == pytest.approx(limit, rel=1e-7)
    np.testing.assert_allclose(grad, pfedme_shift_mean_risk_gradient(tuning=1e-9, **kw)[1],
                               rtol=1e-8)
    with pytest.raises(SolverError, match="lam = 1e-12 lost its digits to rounding"):
        pfedme_shift_mean_risk_gradient(
            tuning=1e-12, gamma=[2.0, 1.5], sigma=[1.0, 0.5], r=[1.0, 2.0], weights=[0.5, 0.5],
            spectra=["two-point:0.01,100,0.5", "scaled:50"])
