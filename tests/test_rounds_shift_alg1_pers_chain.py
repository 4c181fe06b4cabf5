"""Personalization (FTFA, RTFA) after paper 004's Algorithm 1 rounds under covariate shift
through the chain structure (``riskcalc.linear.dynamics.shift.algorithm1.personalize_chain``,
the route for M K^2 > 200, and for M (K + k)^2 > 200 on the dense route's contour) against
independent routes on one contour: the dense extended pencil (``shift.algorithm1.personalize``:
dense inverses and dense two-point solves) and, for equal covariances, the shared spectrum's
dense ``sigma.algorithm1.personalize``."""

import numpy as np

import riskcalc.linear.dynamics.shift.algorithm1.curves as cu
from riskcalc.linear.dynamics.shift.algorithm1.pencil import ShiftAlg1Pencil
from riskcalc.linear.dynamics.shift.algorithm1.personalize import shift_alg1_personalized
from riskcalc.linear.dynamics.shift.pencil import client_ends
from riskcalc.linear.dynamics.sigma.algorithm1.contour import dense_solve
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.algorithm1.personalize import algorithm1_personalized_sigma
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

KINDS = (dict(kind="ftfa", k=2, eta2=0.05), dict(kind="rtfa", lam2=0.7))


def _chain_and_dense(monkeypatch, gam, r, sig, p, signal, lam, eta, K, g, rounds, joint):
    """The curves' personalization arguments, the dense route's contour and solve
    (``shift.algorithm1.curves``: ``_contour``, ``dense_solve``) and its personalization
    forced onto the chain (``_dense_personalized`` with ``MAX_UNKNOWNS`` = 0: the base
    re-solved on the chain pencil there)."""
    V = np.asarray(joint.values, float)[np.asarray(joint.types)]
    h = np.asarray(joint.weights, float)
    c = cu._contour(gam, p, lam, eta, K, g, rounds, V, h)
    solved = (c,) + dense_solve(ShiftAlg1Pencil(V, c["pooled"], h, gam, p, lam, eta, K, g), c)
    args = (gam, r, sig, p, signal, lam, eta, K, g, rounds, V, h, client_ends(V, h, gam)[:, 1])
    monkeypatch.setattr(cu, "MAX_UNKNOWNS", 0)
    calls = []
    route = cu.shift_alg1_personalized_chain
    monkeypatch.setattr(cu, "shift_alg1_personalized_chain",
                        lambda *a, **kw: calls.append(kw["kind"]) or route(*a, **kw))

    def chain(**kw):
        out = cu._dense_personalized(*args, solved=solved, **kw)
        assert calls.pop() == kw["kind"]            # the chain's, not the dense route's
        return out
    return args, solved, chain


def test_chain_equals_the_dense_extended_pencil(monkeypatch):
    """Anti-aligned two-point covariances (tau(Sigma_1) = tau(Sigma_2), each client's large
    eigenvalue where the other's is small), given weights, K = 2, g = 1, T = 0 .. inf, on one
    contour: FTFA (2 steps of 0.05) and RTFA (lam' = 0.7) through the chain and the dense
    extended pencil. Measured 8.8e-15 (FTFA) and 2.4e-14 (RTFA); K = 3 with g lam = 1.5 (a
    negative band), outside the suite: at most 1.1e-14. Mutants that fail it and the next
    test (each checked): the dense route's personalization not sent to the chain (the
    chain route's call is asserted), z on the model block f_i instead of the state s_j
    (``PersonalShiftChain.ghat``), the row (i,0') without its x_0, client i read in client j's
    metric, the single couplings, tau(Sigma_i Y_inf(wn'_i)) or all terms in the metric h,
    c_th's padding put before the base blocks, the sign of (e_(i,0'), wn'_i) flipped. The
    noise's double coupling left unsymmetrized changes nothing here (not a mutant)."""
    gam, r, sig = np.array([0.5, 2.0]), np.array([0.3, 0.8]), np.array([0.4, 0.6])
    eta = 0.9 / (4.0 * (1.0 + np.sqrt(2.0)) ** 2 + 0.8)
    args, solved, chain = _chain_and_dense(
        monkeypatch, gam, r, sig, np.array([0.4, 0.6]), 1.1, 0.8, eta, 2, 1.0,
        np.array([0.0, 1, 3, 10, np.inf]), joint_spectrum(["two-point:1,4,0.5",
                                                           "two-point:4,1,0.5"]))
    for kw in KINDS:
        ours = chain(**kw)
        ref = shift_alg1_personalized(*args, solved=solved, **kw)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        assert np.all(ours[0] > 0.05) and np.all(ours[1] > 1e-3)


def test_equal_covariances_are_the_shared_spectrum_route(monkeypatch):
    """Both clients on one covariance (non-dyadic atoms, given weights, K = 2, g lam = 0.8):
    FTFA and RTFA through the chain under shift against
    ``sigma.algorithm1.personalize`` (its dense pencil ``Alg1Pencil`` on the same contour).
    Measured 1.1e-14 (FTFA), 1.9e-14 (RTFA); the mutants of the test above fail it."""
    gam, r, sig, p = np.array([0.5, 1.5]), np.array([0.3, 0.7]), np.array([0.4, 0.9]), \
        np.array([0.4, 0.6])
    joint = joint_spectrum(["two-point:0.7,3.1,0.3"] * 2)
    eta = 0.9 / (3.1 * (1 + np.sqrt(1.5)) ** 2 + 0.6)
    setting = (gam, r, sig, p, 1.1, 0.6, eta, 2, 0.8 / 0.6, np.array([0.0, 1, 4, 15, np.inf]))
    _, solved, chain = _chain_and_dense(monkeypatch, *setting, joint)
    spec = joint.marginal(0)
    c = dict(solved[0], pencil=Alg1Pencil)
    ref_solved = (c,) + dense_solve(Alg1Pencil(spec.atoms, spec.weights, gam, p, *setting[5:9]),
                                    c)
    for kw in KINDS:
        ours = chain(**kw)
        ref = algorithm1_personalized_sigma(*setting, spec, solved=ref_solved, **kw)
        for a, b in zip(ours, ref):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
