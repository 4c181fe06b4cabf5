"""FedAvg's clients' own models after their K local steps of round T under covariate shift
through the chain structure (``riskcalc.linear.dynamics.shift.own_chain``, taken beyond M K^2 =
200) against independent routes: the dense extended pencil of ``shift.own`` (dense inverses,
dense two-point solves, the one-point contour's nodes) where both apply, and with equal
covariances the shared-spectrum chain ``sigma.fedavg.own_chain`` (``Alg1Chain``'s eigenbasis
solve, one s per atom)."""

import numpy as np
import pytest

import riskcalc.linear.dynamics.shift.curves as sc
import riskcalc.linear.dynamics.shift.own as so
import riskcalc.linear.dynamics.shift.own_chain as oc
import riskcalc.linear.dynamics.shift.personalize as sp
from riskcalc.linear.dynamics.shift.chain import ShiftChain
from riskcalc.linear.dynamics.shift.personalize_chain import personalized_shift_chain
from riskcalc.linear.dynamics.sigma.fedavg.own_chain import own_models_chain
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

GAM, R, SIG, P = (np.array(x) for x in ([0.3, 0.6], [0.5, 1.0], [0.5, 0.7], [0.4, 0.6]))
ROUNDS = np.array([0.0, 1, 3, np.inf])


def test_chain_equals_the_dense_extended_pencils(monkeypatch):
    """Two two-point covariances, each client's large eigenvalue where the other's is small and
    tau(Sigma_1) = 2.5 != tau(Sigma_2) = 2, K = 2, g = 0.8, on one contour (the dense route's:
    its nodes, Chat and weights): the own models through ``shift.own`` and
    ``shift.own_chain``, FTFA (1 step of 0.2) and RTFA (lam' = 0.7) after round T through
    ``shift.personalize`` and ``shift.personalize_chain``, bias and variance at every T
    (personalization: T = 0 from w_0 = 0). Measured: own models 2.5e-14, FTFA 8e-15, RTFA
    2e-16 (FTFA 2 steps of 0.2: 2.4e-15); on the chain route's own contour (``shift.curves``
    routing, chain forced, against the dense extension on the one-point contour or the dense
    re-solve): own models 2.5e-14 (M = 2, K = 3, g = 1.2: 4.5e-14), FTFA (2 steps of 0.1)
    1.6e-15, RTFA 6e-16. Mutants of
    ``shift.own_chain`` that fail it: a client's rows carrying the pooled eigenvalue, client
    i's block read in the other client's metric, in the pooled one or in h alone, the noise
    traces in the pooled metric, T = 0 with the pooled tau(Sigma), client i's metric on
    client j's block."""
    seen = {}

    def record(name, route):
        def wrapped(pen, c, *args, **kw):
            seen[name] = (c, args[0])
            return route(pen, c, *args, **kw)
        return wrapped
    monkeypatch.setattr(so, "own_models_shift", record("own", so.own_models_shift))
    monkeypatch.setattr(sp, "personalized_shift", record("pers", sp.personalized_shift))
    joint = joint_spectrum(["two-point:1,4,0.5", "two-point:3,1,0.5"])
    out = sc.shift_k_curves(GAM, R, SIG, P, 1.0, 0.15, 2, 0.8, ROUNDS, joint, route="dense")
    pen = ShiftChain(joint, GAM, P, 0.15, 2)
    dense = out["local"]()
    chain = oc.own_models_shift_chain(pen, seen["own"][0], GAM, R, SIG, P, 1.0, ROUNDS)
    for a, b in zip(chain, dense):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-11)
    assert np.all(chain[0][:, 1:] > 1e-2) and np.all(chain[1][:, 1:] > 1e-3)
    for kw in (dict(kind="ftfa", k=1, eta2=0.2), dict(kind="rtfa", lam2=0.7)):
        dense = out["personalize"](**kw)
        c, tops = seen["pers"]
        chain = personalized_shift_chain(pen, c, tops, GAM, R, SIG, P, 1.0, ROUNDS, **kw)
        for a, b in zip(chain, dense):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-11)


def test_equal_covariances_are_the_shared_spectrum_chain(monkeypatch):
    """Both clients with the covariance 2 I (one atom; a metric or eigenvalue taken as 1 misses
    by a factor 2), K = 2: the chain route's own models under shift against
    ``sigma.fedavg.own_chain`` on the same contour (its solved nodes and weights), every T
    including 0 and inf. The pair systems have M K^2 = 8 unknowns, which both solvers (GMRES
    in X here, the eigenbasis there) solve to rounding: measured 2e-16 (two-point:0.5,2,0.6,
    K = 3, outside the suite: 1.1e-16)."""
    seen = {}

    def record(pen, c, *args):
        seen.update(pen=pen, c=c)
        return own(pen, c, *args)
    own = oc.own_models_shift_chain
    monkeypatch.setattr(oc, "own_models_shift_chain", record)
    monkeypatch.setattr(sc, "MAX_UNKNOWNS", 0)
    joint = joint_spectrum(["scaled:2"] * 2)
    ours = sc.shift_k_curves(GAM, R, SIG, P, 1.3, 0.15, 2, 0.8, ROUNDS, joint,
                             route="chain")["local"]()
    assert isinstance(seen["pen"], ShiftChain)
    spec = joint.marginal(0)
    ref = own_models_chain(ChainPencil(spec.atoms, spec.weights, GAM, P, 0.15, 2), seen["c"],
                           GAM, R, SIG, P, 1.3, ROUNDS)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_refused_beyond_its_time_estimate():
    """The estimate (``shift_alg1_seconds``) is checked before any solve, naming the size."""
    pen = ShiftChain(joint_spectrum(["identity", "scaled:2"]), GAM, P, 0.05, 30)
    c = {"z2": np.ones(400, complex), "z": np.ones(400, complex)}
    with pytest.raises(ValueError, match="local_steps = 30, 2 clients, 1 joint atoms and 800"):
        oc.own_models_shift_chain(pen, c, GAM, R, SIG, P, 1.0, ROUNDS)
