"""Paper 004's Algorithm 1 under a covariance spectrum where its round map has complex
eigenvalues (odd K, eta above 1 / (L + lam), g lam > 1; ``riskcalc.linear.dynamics.sigma.
algorithm1.circles``) against independent routes: the polynomial in g that the risk at fixed T
is (fitted where g lam <= 1, the real-spectrum pencil routes), the Sigma = I circles of
``algorithm1.fold`` (a spectrum with one atom), the literal round map's eigenvalues at finite d
(the disk bound at every d), and the pFedMe joint objective at T = inf."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.algorithm1.curves import curves
from riskcalc.linear.dynamics.sigma.algorithm1.circles import plan
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top


GAM = np.array([0.5, 2.0, 1.5])
R = np.array([0.3, 0.6, 1.0])
SIG = np.array([0.4, 0.6, 1.0])
P = (1 / GAM) / np.sum(1 / GAM)
LAM = 0.8
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])


def _eta(gam, spec, frac=1.8):
    """frac / (L + lam): 0.9 of the local steps' stability edge for frac = 1.8."""
    return frac / (stable_top(spec.atoms, spec.weights, gam).max() + LAM)


def test_one_atom_is_the_sigma_identity_circles():
    """Sigma = I as a one-atom spectrum through the pencil on its circle, against
    ``algorithm1.fold``'s circles with the scalar subordination (K = 3, g lam = 1.5): server
    bias and variance, the own models, the top and the contraction (measured: 5.9e-12 curves,
    6e-13 top). The first two clients (an identity at any M, the same eta: M = 3 cost 2.5 s
    of CPU against 1.5, the pencil's M K^2 unknowns; measured there 5.5e-12, 2e-13). The
    distance to the fixed point is left out: the Sigma = I circles put z = 1 inside when their
    radius passes 1 (algorithm1.curves' 1 / (1 - z))."""
    rounds = np.array([0, 1, 3, 10])
    gam, r, sig = GAM[:2], R[:2], SIG[:2]
    p = (1 / gam) / np.sum(1 / gam)
    eta = 1.8 / ((1 + np.sqrt(gam.max())) ** 2 + LAM)
    new = algorithm1_sigma_k_curves(gam, r, sig, p, 1.2, LAM, eta, 3, 1.5 / LAM, rounds,
                                    riskcalc.Spectrum([1.0]))
    old = curves(gam, r, sig, p, 1.2, LAM, eta, 3, 1.5 / LAM, rounds)
    for key in ("bias", "variance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-10)
    for mine, ref in zip(new["local"](), old["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-10)
    assert new["edges"][1] == pytest.approx(old["edges"][1], abs=1e-10)
    assert new["contraction"] == pytest.approx(old["contraction"], abs=1e-10)
    assert not new["contraction_is_bound"]


def _risks(gl, K, T, gam=GAM, r=R, sig=SIG):
    res = riskcalc.rounds_limit("fedprox", gamma=gam, r=r, sigma=sig, signal=1.2, rounds=T,
                                local_steps=K, step_size=_eta(gam, SPEC), lam=LAM,
                                global_step=gl / LAM, spectrum=SPEC)
    return np.concatenate([res.risk, res.global_risk, res.distance_to_fixed_point[None]])


@pytest.mark.parametrize("K, T, target", [(1, [1, 2], 2.0), (3, [1], 1.5)])
def test_polynomial_in_the_global_step_extrapolates(K, T, target):
    """At fixed T every model is a polynomial of degree <= T in g, the risks and the distance
    to the fixed point of degree <= 2 T. Fitted by Lagrange interpolation at 2 max(T) + 1
    Chebyshev nodes of g lam in [0.1, 1] (the real spectrum: ``spectrum_edges`` and the
    ellipse), extrapolated to g lam = 2 and 1.5 (the circles): agreement to the fit's
    amplification (sum abs(Lagrange weights)) times 1e-11, plus 1e-10 (measured M = 3: K = 1
    7.3e-12, 1.1e-11, 1.2e-11 at T = 1, 2, 3, amplification 4e4 at T = 3; K = 3 3.5e-12,
    3.7e-12 at T = 1, 2). Two clients and T <= 2 here (cost)."""
    gam, r, sig = GAM[:2], R[:2], SIG[:2]
    deg = 2 * max(T)
    nodes = 0.55 + 0.45 * np.cos(np.pi * (np.arange(deg + 1) + 0.5) / (deg + 1))
    Y = np.array([_risks(x, K, T, gam, r, sig) for x in nodes])
    lag = np.array([np.prod([(target - nodes[m]) / (nodes[k] - nodes[m])
                             for m in range(deg + 1) if m != k]) for k in range(deg + 1)])
    got = _risks(target, K, T, gam, r, sig)
    amp = np.abs(lag).sum()
    assert amp < 5e4
    assert np.all(np.abs(np.tensordot(lag, Y, axes=1) - got) <= (1e-11 * amp + 1e-10) * got)


def _round_map(d, K, eta, g, seed=5):
    """The literal round map's eigenvalues at dimension d under SPEC (Sigma diagonal with the
    atoms in proportion), and min a over the sample spectra."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    M = GAM.size
    sd = np.sqrt(np.repeat(SPEC.atoms, np.round(SPEC.weights * d).astype(int)))
    phi = np.zeros(((M + 1) * d, (M + 1) * d))
    mean_c, low = np.zeros((d, d)), 0.0
    for j, gj in enumerate(GAM):
        X = rng.standard_normal((int(round(d / gj)), d)) * sd
        e, U = np.linalg.eigh(X.T @ X / X.shape[0])
        a = (1 - eta * (e + LAM)) ** K
        low = min(low, a.min())
        A, C = (U * a) @ U.T, (U * ((1 - a) / (e + LAM))) @ U.T
        blk = slice((j + 1) * d, (j + 2) * d)
        phi[blk, blk], phi[blk, :d], phi[:d, blk] = A, LAM * C, g * LAM * P[j] * A
        mean_c += P[j] * C
    phi[:d, :d] = (1 - g * LAM) * np.eye(d) + g * LAM ** 2 * mean_c
    return np.linalg.eigvals(phi), low


@pytest.mark.parametrize("gl", [2.0, 3.0])
def test_eigenvalues_at_finite_d(gl):
    """d = 100, K = 1: every non-real eigenvalue of the literal round map obeys abs(z)^2 <=
    (g lam - 1) A with the sample spectra's A (the disk bound, exact at every d; g lam = 2: two
    of them, Im 0.11, inside radius 0.83); the limit's top (g lam = 2) or bottom past -1
    (g lam = 3) and its spectral radius are the literal map's within 0.05 (finite-d edge
    fluctuation; measured 8e-5 and 2.5e-5)."""
    eta = _eta(GAM, SPEC)
    ev, low = _round_map(100, 1, eta, gl / LAM)
    cx = ev[np.abs(ev.imag) > 1e-8]
    assert cx.size > 0 or gl > 2.0
    assert np.all(np.abs(cx) ** 2 <= (gl - 1) * -low * (1 + 1e-9))
    sp = plan(GAM, P, LAM, eta, 1, gl / LAM, SPEC, np.array([1.0]), Alg1Pencil)
    assert sp["exact"] and sp["disk"] < sp["contraction"]
    real = ev.real[np.abs(ev.imag) <= 1e-8]
    assert abs(np.abs(ev).max() - sp["contraction"]) < 0.05
    if gl == 2.0:
        assert sp["bottom"] is None and abs(real.max() - sp["top"]) < 0.05
    else:
        assert sp["bottom"] < -1 and abs(real.min() - sp["bottom"]) < 0.05


def test_fixed_point_is_the_pfedme_minimizer():
    """T = inf is the pFedMe joint minimizer whatever g (``clients_limit`` under the spectrum,
    its own resolvent chain; measured 2e-15), reached at z = 1 outside the circle."""
    kw = dict(gamma=GAM[:2], r=R[:2], sigma=SIG[:2], lam=LAM, spectrum=SPEC)
    res = riskcalc.rounds_limit("pfedme", signal=1.2, rounds=[np.inf], local_steps=1,
                                step_size=_eta(GAM[:2], SPEC), global_step=2.0 / LAM, **kw)
    ref = riskcalc.clients_limit("pfedme", **kw)
    np.testing.assert_allclose(res.bias[:, 0], ref.bias, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.variance[:, 0], ref.variance, rtol=0, atol=1e-9)


@pytest.mark.parametrize("K, gl", [(1, 2.0), (3, 1.5)])
def test_one_client(K, gl):
    """M = 1, one atom: the Weyl bracket of the top is tight (its certified lower end is the
    top itself), so the density scan starts below it. Risk and distance to the fixed point
    against the Sigma = I circles (``algorithm1.curves``, with its pole correction at z = 1).
    Measured: risk 1.5e-12, distance 1.6e-12 (K = 1) and 1.3e-9 (K = 3)."""
    gam, r, sig, lam = np.array([0.6]), np.array([0.7]), np.array([0.5]), 0.8
    eta = 1.8 / ((1 + np.sqrt(0.6)) ** 2 + lam)
    rounds = np.array([0, 1, 2, 5, 30])
    a = curves(gam, r, sig, np.array([1.0]), 1.2, lam, eta, K, gl / lam, rounds)
    b = algorithm1_sigma_k_curves(gam, r, sig, np.array([1.0]), 1.2, lam, eta, K, gl / lam,
                                  rounds, riskcalc.Spectrum([1.0]))
    np.testing.assert_allclose(b["bias"], a["bias"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(b["distance"], a["distance"], rtol=0, atol=1e-8)
    assert b["contraction"] == pytest.approx(a["contraction"], abs=1e-9)
