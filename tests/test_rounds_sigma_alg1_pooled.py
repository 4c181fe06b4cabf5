"""Paper 004's Algorithm 1 with finite local steps under a shared spectrum when the pooled
samples do not span R^d (``riskcalc.linear.dynamics.sigma.algorithm1.pooled``: z = 1 inside the
contour, T = inf from a circle around it), against independent routes: Sigma = I's
``algorithm1.pooled``, the polynomial in gamma that every finite-T risk is (fitted where the
samples span), the pooled min-norm interpolator at T = inf (FedAvg's K = 1 fixed point), free
moments at T = 1, the round map's eigenvalues at finite d, and the literal algorithm."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.algorithm1.curves import curves as identity_curves
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.sigma.algorithm1.curves import (Alg1Chain, Alg1Pencil,
                                                              _dense_parts,
                                                              algorithm1_sigma_k_curves,
                                                              chain_parts)
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import pooled_contour
from riskcalc.spectrum import Spectrum
from tests.test_rounds_alg1_pooled import continuation, literal_gaps

SPEC = Spectrum(np.array([0.25, 1.0]), np.array([0.5, 0.5]))
GAM = [4.0, 2.5]                                # sum 1 / gamma = 0.65: mu0 = 0.35
KW = dict(gamma=GAM, r=[0.3, 0.5], sigma=[0.4, 0.2], signal=1.0, lam=2.0, weights="uniform",
          spectrum=SPEC)
STEPS = dict(local_steps=2, step_size=0.07)        # step_size (L + lam) = 0.77
ROUNDS = [1, 3, 10, 30]


@pytest.fixture(scope="module")
def pooled():
    """The curves every test below reads (their edges kept by ``pencil_edges.edges`` for the
    one-round solve of the continuation)."""
    return riskcalc.rounds_limit("pfedme", rounds=ROUNDS + [np.inf], **STEPS, **KW)


def test_sigma_identity_is_the_scalar_route():
    """Sigma = I through the spectrum's route (its pencil, the contour around z = 1, the circle)
    against ``algorithm1.pooled``'s scalar route (the contour on the pooled range, signal^2 mu0
    added): server and own models, the distance to the fixed point and the contraction, 1e-8."""
    gam, p = np.array([4.0, 5.0]), np.array([0.6, 0.4])
    args = (gam, np.array([0.3, 0.5]), np.array([0.4, 0.2]), p, 1.2, 2.0, 0.07, 2, 0.4,
            np.array([0.0, 1, 5, np.inf]))
    got = algorithm1_sigma_k_curves(*args, Spectrum(np.array([1.0]), np.array([1.0])))
    ref = identity_curves(*args)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(got[key], ref[key], rtol=0, atol=1e-8, err_msg=key)
    for a, b in zip(got["local"](), ref["local"]()):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8)
    assert got["contraction"] == pytest.approx(ref["contraction"], abs=1e-10)
    assert got["atom"] == pytest.approx(pooled_atom(gam))
    # FTFA from the round-T server model: T >= 1 against the scalar route, T = 0 (from w_0 = 0,
    # whatever the algorithm) against FedAvg's (the scalar Algorithm 1 route adds signal^2
    # mu0 there a second time: RTFA 1.985 for 1.193).
    kw = dict(gamma=gam.tolist(), r=[0.3, 0.5], sigma=[0.4, 0.2], weights=p.tolist(), signal=1.2)
    scalar = riskcalc.rounds_limit("pfedme", lam=2.0, step_size=0.07, local_steps=2,
                                   global_step=0.4, rounds=args[-1], **kw)
    fedavg = riskcalc.rounds_limit("fedavg", step_size=0.07, local_steps=1, rounds=[0], **kw)
    risk = sum(got["personalize"](kind="ftfa", k=2, eta2=0.1))
    ftfa = dict(steps=2, step_size=0.1)
    np.testing.assert_allclose(risk[:, 1:], scalar.personalized_risk(**ftfa)[:, 1:], atol=1e-8)
    np.testing.assert_allclose(risk[:, :1], fedavg.personalized_risk(**ftfa), atol=1e-8)


def test_one_polynomial_in_gamma_across_pooled_n_equal_d():
    """At finite T the risk is a polynomial in gamma_j (mixed moments of the S_j over the
    moments of H; weights fixed): with K = 2, T = 1 of degree 3. Fitted on four federations
    whose samples span, it must give a pooled N < d one (sum_j 1 / gamma_j = 0.65) to
    rounding: a lost or wrongly weighted null space (signal^2 tau(Sigma P_N) = 0.16, where
    signal^2 mu0 tau(Sigma) = 0.22) would show."""
    kw = dict(KW, rounds=[1], **STEPS)
    [(got, fitted)] = continuation(kw, 4.0, [0.2, 0.4, 0.6, 0.8], [2.5])
    assert pooled_atom(GAM) > 0.3
    np.testing.assert_allclose(got, fitted, rtol=0, atol=1e-8)


def test_fixed_point_is_the_pooled_min_norm_interpolator(pooled):
    """T = inf: the server and every own model are the pooled min-norm interpolator
    (``sigma.algorithm1.pooled``, step 4), whatever the local steps and weights: FedAvg's K = 1
    fixed point under the same spectrum (its own route). (RTFA and FTFA from it against
    FedAvg's: measured 4.5e-14 and 2.8e-14, not asserted here: FedAvg's personalization costs 2.7 s
    of CPU.)"""
    fedavg = riskcalc.rounds_limit("fedavg", local_steps=1, step_size=0.05, rounds=[np.inf],
                                   **{k: v for k, v in KW.items() if k != "lam"})
    for got in (pooled.global_risk[:, -1:], pooled.risk[:, -1:]):
        np.testing.assert_allclose(got, fedavg.global_risk, rtol=1e-8)


def test_one_round_one_step_is_free_moments():
    """K = 1, T = 1: w_1 = g lam eta sum_j p_j b_j and v_i = eta b_i, b_j = S_j theta_j + n_j;
    with E[S A S] = Sigma A Sigma + gamma tau(Sigma A) Sigma their risks are moments m_k =
    tau(Sigma^k) of H (a closed form, no pencil)."""
    g, eta, p = 0.4, 0.04, np.array([0.5, 0.5])
    lim = riskcalc.rounds_limit("pfedme", local_steps=1, step_size=eta, rounds=[1],
                                global_step=g, **KW)
    m1, m2, m3 = (float(SPEC.weights @ SPEC.atoms ** k) for k in (1, 2, 3))
    gam, r, sig = (np.array(KW[k]) for k in ("gamma", "r", "sigma"))
    SS = m3 + gam * m2 * m1                           # tau(S_j Sigma S_j)
    a = g * KW["lam"] * eta
    pair = a ** 2 * (np.sum(p ** 2 * SS) + (np.sum(p) ** 2 - np.sum(p ** 2)) * m3)
    server = (pair - 2 * a * m2 + m1 + a ** 2 * np.sum(p ** 2 * (r ** 2 * SS
                                                             + sig ** 2 * gam * m2))
              - 2 * a * p * r ** 2 * m2 + r ** 2 * m1)
    own = (1 + r ** 2) * (eta ** 2 * SS - 2 * eta * m2 + m1) + eta ** 2 * sig ** 2 * gam * m2
    np.testing.assert_allclose(lim.global_risk[:, 0], server, rtol=1e-10)
    np.testing.assert_allclose(lim.risk[:, 0], own, rtol=1e-10)


def test_contraction_is_the_top_on_the_pooled_range(pooled):
    """The contraction against the eigenvalues of the round map at d = 150 (Sigma's two
    atoms), the null space's eigenvalue 1 (d mu0 times) taken out."""
    gam, p, lam = np.array(GAM), np.array([0.5, 0.5]), KW["lam"]
    eta, K, g, top = STEPS["step_size"], STEPS["local_steps"], 1.0 / lam, pooled.contraction
    d, rng = 150, np.random.default_rng(3)
    sq = np.sqrt(np.repeat(SPEC.atoms, d // 2))
    eye, M = np.eye(d), gam.size
    big = np.zeros(((M + 1) * d,) * 2)
    big[:d, :d] = (1.0 - g * lam) * eye
    for j, gj in enumerate(gam):
        X = rng.standard_normal((int(round(d / gj)), d)) * sq
        S = X.T @ X / X.shape[0]
        A = np.linalg.matrix_power(eye - eta * (S + lam * eye), K)
        C = np.linalg.solve(S + lam * eye, eye - A)
        blk = slice((j + 1) * d, (j + 2) * d)
        big[:d, :d] += g * lam * p[j] * lam * C
        big[:d, blk], big[blk, :d], big[blk, blk] = g * lam * p[j] * A, lam * C, A
    ev = np.linalg.eigvals(big).real
    one = np.abs(ev - 1.0) < 1e-9              # the null space's consensus; a0 < top
    assert one.sum() == d - sum(int(round(d / gj)) for gj in gam)
    rest = ev[~one].max()
    assert top < 1.0 and abs(rest - top) < 0.2 * (1.0 - top), (rest, top)


def test_monte_carlo_gap_shrinks_in_d(pooled):
    """The literal algorithm (``montecarlo.linear.rounds``, exact expectation over theta and
    noise given the designs) at d = 50, 100, 200: the server's, the own models' and the
    RTFA-personalized models' risks within 1% at d = 200 and closer than at d = 50 (measured:
    ``docs/rounds.rst``, "Algorithm 1 with pooled N < d")."""
    gaps = literal_gaps(pooled, (50, 100, 200), ROUNDS, **STEPS, **KW)[0]
    assert gaps[200] < 0.01 and gaps[200] < gaps[50], gaps


def test_chain_route_is_the_dense_one(pooled):
    """The chain pencil (``sigma.algorithm1.chain``, the route beyond M K^2 = 200) on the same
    contour and circle: its two-point functions and single-contour terms against the dense
    pencil's (measured 4e-13 relative; the whole curves 7e-15, each route with its own edge
    scan, not in the tests: the chain's scan costs 3 s)."""
    gam, p, lam = np.array(GAM), np.array([0.5, 0.5]), KW["lam"]
    eta, K, g = STEPS["step_size"], STEPS["local_steps"], 1.0 / lam
    r, sig = np.array(KW["r"]), np.array(KW["sigma"])
    c = pooled_contour(gam, p, lam, eta, K, g, np.array([1.0, 3.0]), SPEC)     # edges kept
    out = []
    for pencil, parts in ((Alg1Pencil, _dense_parts), (Alg1Chain, chain_parts)):
        c["pencil"] = pencil
        out.append(parts(gam, r, sig, p, 1.0, lam, eta, K, g, SPEC, c, 1)[:2])
    (Hd, xd), (Hc, xc) = out
    assert np.abs(Hc - Hd).max() <= 1e-10 * np.abs(Hd).max()
    assert np.abs(xc - xd).max() <= 1e-10 * np.abs(xd).max()


def test_refused_beyond_the_scope():
    """g lam > 1, and under covariate shift step_size (L + lam) > 1 (L from each client's own
    covariance), are not covered with pooled N < d: each refused by name."""
    kw = dict(KW, rounds=[1], **STEPS)
    with pytest.raises(ValueError, match="global_step"):
        riskcalc.rounds_limit("pfedme", **{**kw, "global_step": 1.0})
    with pytest.raises(ValueError, match="span"):
        riskcalc.rounds_limit("pfedme", **{**kw, "spectrum": None,
                                           "spectra": [[0.5, 2.0], [2.0, 0.5]]})
