"""Exact gradients of the mean finite-M risk under covariate shift
(``riskcalc.linear.finite_clients.shift.gradient``) and ``advise``'s optimal weights with them.

Checks: against fourth-order central differences of the limits at free weights (the formulas
of ``finite_clients.shift`` at unnormalized p) and in RTFA's penalties; against the Sigma = I
gradients of ``finite_clients.gradient`` (an independent route: closed forms) when every
client has Sigma = c I; ``advise`` with these gradients against its finite-difference route
on the first clients of the shift10 federation of ``benchmarks/bench_advise.py``.
"""

import os
import sys

import numpy as np
import pytest

from riskcalc.advise import advise, gradients
from riskcalc.advise.federation import from_clients
from riskcalc.linear.engine.joint_spectrum import joint_spectrum
from riskcalc.linear.finite_clients import clients_limit
from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from riskcalc.linear.finite_clients.shift.limits import shift_group_limits
from riskcalc.linear.finite_clients.shift.gradient import shift_mean_risk_gradient

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
from bench_advise import SHIFT_TYPES, federation  # noqa: E402

M = 5


def _clients(seed, m=M):
    rng = np.random.default_rng(np.random.SeedSequence([30, seed]))
    gam = np.exp(rng.uniform(np.log(0.3), np.log(4.0), m))
    r, sigma = rng.uniform(0.2, 2.0, m), rng.uniform(0.1, 1.5, m)
    p = rng.uniform(0.5, 2.0, m)
    return gam, r, sigma, p / p.sum(), rng.uniform(0.1, 3.0, m)


def _central(f, x, h):
    """Fourth-order central differences of f at x (truncation O(h^4))."""
    out = np.empty(x.size)
    for j, e in enumerate(np.eye(x.size)):
        d1 = (f(x + h * e) - f(x - h * e)) / (2 * h)
        d2 = (f(x + 2 * h * e) - f(x - 2 * h * e)) / (4 * h)
        out[j] = (4 * d1 - d2) / 3
    return out


# The differences' error: truncation ~ h^4 (1e-12 at h = 1e-3, times the fifth derivative's
# scale) and the limits' noise over h (the diagonal roots are solved to ~1e-12 relative:
# ~1e-9); 1e-6 relative to the gradient's size leaves a margin of 100 over the worst seen
# (3e-9), while a missing term of the derivation is an O(1) error.
RTOL = 1e-6


@pytest.mark.parametrize("method", ["fedavg", "ftfa", "rtfa"])
def test_gradient_matches_central_differences(method):
    gam, r, sigma, p, lam = _clients(1)
    spectra = [SHIFT_TYPES[j % 3] for j in range(M)]
    joint = joint_spectrum(spectra)
    tuning = lam if method == "rtfa" else None
    mean, grad, grad_lam = shift_mean_risk_gradient(method, gamma=gam, sigma=sigma, r=r,
                                                    weights=p, spectra=spectra, tuning=tuning)
    ones = np.ones(M)

    def free(q, lams=lam):
        # The limits' formulas at free (unnormalized) weights, every client its own group.
        bias, var = shift_group_limits(method, gam, r, sigma, ones, lams, q, joint, joint.types)
        return np.mean(bias + var)

    extra = {"lam": lam} if method == "rtfa" else {}
    assert mean == pytest.approx(clients_limit(method, gamma=gam, sigma=sigma, r=r, weights=p,
                                               spectra=spectra, **extra).mean_risk, rel=1e-13)
    fd = _central(free, p, 1e-3)
    assert np.max(np.abs(grad - fd)) <= RTOL * np.max(np.abs(fd))
    if method == "rtfa":
        fd = _central(lambda x: free(p, x), lam, 1e-3)
        assert np.max(np.abs(grad_lam - fd)) <= RTOL * np.max(np.abs(fd))
    else:
        assert grad_lam is None


@pytest.mark.parametrize("method", ["fedavg", "ftfa", "rtfa"])
def test_scaled_identity_is_the_identity_gradient(method):
    # Sigma_j = c I for every client: the shift limits are c times the Sigma = I ones with
    # noise sigma / sqrt(c) and RTFA's penalty lam / c (``finite_clients.shift``), so the
    # gradients in p are c times, in lam equal to, the closed forms' gradients
    # (``finite_clients.gradient``, another route entirely).
    gam, r, sigma, p, lam = _clients(2, m=4)
    c = 2.0
    shift = shift_mean_risk_gradient(method, gamma=gam, sigma=sigma, r=r, weights=p,
                                     spectra=f"scaled:{c:g}",
                                     tuning=lam if method == "rtfa" else None)
    ident = mean_risk_gradient(method, gamma=gam, sigma=sigma / np.sqrt(c), r=r, weights=p,
                               tuning=lam / c if method == "rtfa" else None)
    assert shift[0] == pytest.approx(c * ident[0], rel=1e-13)
    np.testing.assert_allclose(shift[1], c * ident[1], rtol=0, atol=1e-13 * np.abs(shift[1]).max())
    if method == "rtfa":
        np.testing.assert_allclose(shift[2], ident[2], rtol=0,
                                   atol=1e-13 * np.abs(shift[2]).max())


def test_blocks_of_targets(monkeypatch):
    # One target per block (``kappa.blocks``, as for many thousands of clients): the
    # partials of the (targets x groups) sum are gathered block by block.
    from riskcalc.linear.engine import kappa

    gam, r, sigma, p, lam = _clients(4)
    spectra = [SHIFT_TYPES[j % 3] for j in range(M)]
    whole = shift_mean_risk_gradient("rtfa", gamma=gam, sigma=sigma, r=r, weights=p,
                                     spectra=spectra, tuning=lam)
    monkeypatch.setattr(kappa, "_BLOCK", 1)
    split = shift_mean_risk_gradient("rtfa", gamma=gam, sigma=sigma, r=r, weights=p,
                                     spectra=spectra, tuning=lam)
    for a, b in zip(whole, split):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=0)


def test_errors():
    gam, r, sigma, p, _ = _clients(3)
    with pytest.raises(ValueError, match="pfedme"):
        shift_mean_risk_gradient("pfedme", gamma=gam, sigma=sigma, r=r, weights=p,
                                 spectra="scaled:2")
    with pytest.raises(ValueError, match="rtfa needs tuning"):
        shift_mean_risk_gradient("rtfa", gamma=gam, sigma=sigma, r=r, weights=p,
                                 spectra="scaled:2")


def _advice(fed, methods, exact, monkeypatch):
    monkeypatch.setattr(gradients, "SHIFT_GRADIENT", ("fedavg", "ftfa", "rtfa") if exact
                        else ())
    return {(c.method, c.weights): c for c in advise(fed, methods).candidates}


@pytest.mark.parametrize("m, methods", [(6, ["fedavg", "ftfa"]), (3, ["rtfa"])])
def test_advice_exact_against_finite_differences(m, methods, monkeypatch):
    # The first m clients of shift10 of benchmarks/bench_advise.py: FedAvg and FTFA on 6 (two
    # of each covariance; all 10 checked the same at 0.4 s more), RTFA on 3, one of each
    # covariance (its penalty searches cost ~4 s per route at 10 clients, 0.9 s more at 4):
    # clients sharing a covariance are summed per type (``np.bincount`` over ``joint.types``)
    # in the gradient, checked for RTFA's p and lam at 5 clients of 3 types in
    # test_gradient_matches_central_differences and in this advice by the FedAvg/FTFA point.
    fed = from_clients(federation("shift10")[:m])
    new = _advice(fed, methods, True, monkeypatch)
    old = _advice(fed, methods, False, monkeypatch)
    assert new.keys() == old.keys()
    best = {k: min(v, key=lambda c: c.mean_risk) for k, v in
            (("new", new.values()), ("old", old.values()))}
    assert (best["new"].method, best["new"].weights) == (best["old"].method, best["old"].weights)
    for key, cand in new.items():
        if key[1] == "optimal":
            # No worse: lower, or equal within 1e-10 relative.
            assert cand.mean_risk <= old[key].mean_risk * (1 + 1e-10)
        else:
            np.testing.assert_allclose(cand.risks, old[key].risks, rtol=1e-12, atol=0)
