"""FedAvg with K >= 2 local steps along the rounds under covariate shift
(``riskcalc.linear.dynamics.shift.curves``, the pencil ``shift.pencil``) against independent
routes: K = 1 against ``shift.one_step`` (the D-valued subordination), equal covariances
against the shared-spectrum pencil route ``sigma.fedavg.curves``, round 1 against the limits of
the Wishart moments (non-crossing partitions); refusals. The simulated algorithm
(``simulate_rounds(spectra=...)``) at finite d and ``riskcalc compare --local-steps 2``: in
tests/test_rounds_shift_own.py, sharing its solves."""

from math import comb

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.shift.curves import shift_k_curves
from riskcalc.linear.dynamics.shift.one_step import shift_curves
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves
from riskcalc.linear.engine.joint_spectrum import joint_spectrum

GAM = np.array([0.5, 1.2, 2.0, 0.8])
R = np.array([0.5, 1.0, 0.3, 0.8])
SIG = np.array([0.5, 1.0, 0.3, 0.7])
P = (1 / GAM) / np.sum(1 / GAM)
MIXED = ["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "two-point:1,2,0.5", "identity"]
ANTI = ["two-point:1,4,0.5", "two-point:4,1,0.5", "identity"]


def _close(a, b, rtol):
    np.testing.assert_allclose(a["edges"], b["edges"], rtol=1e-10)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(a[key], b[key], rtol=rtol, atol=1e-14)


def test_one_local_step_is_the_subordination_route():
    """K = 1 through the pencil with per-client eigenvalues (four clients, four covariances on
    three joint atoms, g != 1) equals ``shift.one_step``'s D-valued subordination (another
    derivation: one unknown per covariance, closed-form two-point traces); measured 2.4e-13."""
    rounds = np.array([0.0, 1, 5, 20, np.inf])
    joint = joint_spectrum(MIXED)
    _close(shift_k_curves(GAM, R, SIG, P, 1.5, 0.15, 1, 1.2, rounds, joint),
           shift_curves(GAM, R, SIG, P, 1.5, 0.15, 1.2, rounds, joint), 1e-9)


def test_equal_covariances_are_the_shared_spectrum_pencil():
    """Every client with one covariance: ``sigma.fedavg.curves`` (``sigma_pencil``, one s per
    atom) with K = 2, given weights; measured 2e-15."""
    gam, r, sig = GAM[:3], R[:3], SIG[:3]
    p = np.array([0.5, 0.2, 0.3])
    rounds = np.array([0.0, 1, 5, 20, np.inf])
    joint = joint_spectrum(["two-point:0.5,2,0.6"] * 3)
    _close(shift_k_curves(gam, r, sig, p, 1.5, 0.15, 2, 1.2, rounds, joint),
           fedavg_sigma_k_curves(gam, r, sig, p, 1.5, 0.15, 2, 1.2, rounds, joint.marginal(0)),
           1e-9)


def test_chain_route_is_the_dense_pencil():
    """``shift.chain`` (Schur complement, GMRES in the eigenbasis of the local steps, its
    solutions checked in the original system) against the dense ``shift.pencil`` (explicit
    inverses, Newton with the dense Jacobian) at K = 3 on three covariances (two two-point
    spectra anti-aligned, a scaled identity), given weights, g != 1; measured 6.6e-14 (K = 4,
    twice the time: 7.4e-14)."""
    gam, r, sig = np.array([0.5, 1.5, 0.9]), np.array([0.5, 1.0, 0.7]), np.array([0.5, 0.3, 0.8])
    p = np.array([0.5, 0.2, 0.3])
    joint = joint_spectrum(["two-point:0.5,3,0.3", "two-point:3,0.5,0.3", "scaled:2"])
    rounds = np.array([0.0, 1, 4, np.inf])
    args = (gam, r, sig, p, 1.2, 0.05, 3, 1.3, rounds, joint)
    _close(shift_k_curves(*args, route="chain"), shift_k_curves(*args, route="dense"), 1e-10)


def _partitions(k):
    """Every set partition of range(k), as lists of blocks."""
    if k == 0:
        yield []
        return
    for part in _partitions(k - 1):
        for i in range(len(part)):
            yield part[:i] + [part[i] + [k - 1]] + part[i + 1:]
        yield part + [[k - 1]]


def _noncrossing(part):
    lab = {x: b for b, blk in enumerate(part) for x in blk}
    k = len(lab)
    return not any(lab[a] == lab[c] != lab[b] == lab[e] for a in range(k)
                   for b in range(a + 1, k) for c in range(b + 1, k) for e in range(c + 1, k))


def _moment(v, h, gam, k):
    """The diagonal of E[S^k] as d, n -> inf (d / n = gam), S = Sigma^(1/2) W Sigma^(1/2),
    Sigma = diag(v) on atoms of weight h (the genus-0 Wick pairings): the sum over
    non-crossing partitions pi of the k factors of gam^(k - |pi|) v^|c0| prod_(c != c0)
    E_h[v^|c|], c the cycles of pi^-1 (0 1 .. k-1) (the Kreweras complement: the traces
    between the factors), c0 the one through the diagonal's position. k = 2: Sigma^2 + gam
    tau(Sigma) Sigma; Sigma = I: the Narayana polynomials."""
    out = np.zeros_like(v)
    for part in filter(_noncrossing, _partitions(k)):
        back = {b: a for blk in part for a, b in zip(blk, blk[1:] + blk[:1])}
        nxt = {x: back[(x + 1) % k] for x in range(k)}
        seen, term = set(), gam ** (k - len(part)) * np.ones_like(v)
        for x in range(k):
            cyc = []
            while x not in seen:
                seen.add(x)
                cyc.append(x)
                x = nxt[x]
            if cyc:
                term = term * (v ** len(cyc) if k - 1 in cyc else float(h @ v ** len(cyc)))
        out += term
    return out


def _round_one(joint, gam, r, sig, p, signal, eta, K, g):
    """Client i's risk after one round from the limits of the Wishart moments: w_1 = g sum_j
    p_j (q(S_j) theta_j + (q / s)(S_j) X_j^T eps_j / n_j), q(s) = 1 - (1 - eta s)^K a
    polynomial, E[q(S_j)] diagonal and the clients independent, so every term is E_h[v_i
    times a diagonal moment of one client]."""
    v, h, t = joint.values, joint.weights, joint.types
    M = gam.size
    q = np.array([0.0] + [-comb(K, m) * (-eta) ** m for m in range(1, K + 1)])
    q2 = np.convolve(q, q)
    mom = [[_moment(v[t[j]], h, gam[j], k) for k in range(2 * K + 1)] for j in range(M)]

    def poly(j, c):
        return sum(cm * mom[j][m] for m, cm in enumerate(c) if cm)
    qb, qq, qs = ([poly(j, c) for j in range(M)] for c in (q, q2, q2[1:]))
    Q = sum(p[j] * qb[j] for j in range(M))
    QQ = Q ** 2 + sum(p[j] ** 2 * (qq[j] - qb[j] ** 2) for j in range(M))
    out = np.empty(M)
    for i in range(M):
        vi = v[t[i]] * h
        out[i] = (signal ** 2 * vi @ (1 - 2 * g * Q + g ** 2 * QQ)
                  + g ** 2 * sum(p[j] ** 2 * (r[j] ** 2 * vi @ qq[j]
                                              + sig[j] ** 2 * gam[j] * vi @ qs[j])
                                 for j in range(M))
                  - 2 * g * p[i] * r[i] ** 2 * vi @ qb[i] + r[i] ** 2 * vi.sum())
    return out


@pytest.mark.parametrize("specs, K", [(MIXED, 2), (["scaled:0.5", "scaled:2", "scaled:1.3",
                                                     "identity"], 3)])
def test_round_one_is_the_limit_of_the_wishart_moments(specs, K):
    """Round 1 (g != 1) with four covariances on three joint atoms, and with Sigma_j = c_j I
    (one joint atom, distinct scales): the combinatorial moments (``_moment``, checked against
    the closed form of E[S^2]; an independent derivation) against the pencil's contour
    integrals; measured 1.4e-14 (K = 2) and 5.6e-15 (K = 3, scaled identities)."""
    res = riskcalc.rounds_limit("fedavg", gamma=GAM, r=R, sigma=SIG, signal=1.5, rounds=[1],
                                local_steps=K, step_size=0.06, global_step=1.3, spectra=specs)
    v, h = np.array([1.0, 4.0]), np.array([0.5, 0.5])
    np.testing.assert_allclose(_moment(v, h, 0.7, 2), v ** 2 + 0.7 * (h @ v) * v, rtol=1e-15)
    np.testing.assert_allclose(res.risk[:, 0], _round_one(joint_spectrum(specs), GAM, R, SIG, P,
                                                          1.5, 0.06, K, 1.3), rtol=1e-11)


@pytest.mark.parametrize("kw, match", [
    (dict(local_steps=2.5), "local_steps must be one integer"),
    (dict(local_steps=0), "local_steps"),
    (dict(local_steps=np.inf, step_size=None, gamma=[0.5, 1.0, 0.8]), "gamma_j away from 1"),
    (dict(rounds=[np.inf], global_step=10.0), "rounds=inf: the iteration diverges"),
    (dict(step_size=0.3), "step_size: local gradient descent diverges on a client"),
    (dict(local_steps=9, max_seconds=1e-3), "local_steps = 9, 3 clients .* would take about"),
    (dict(gamma=[2.0, 3.0, 8.0]), "too close to 0"),    # pooled N < d: D near its atom
    (dict(max_seconds=1e-3), "would take about .* allow more time"),
    (dict(max_gigabytes=1e-3), "the dense pencil .* allow more memory"),
    (dict(local_steps=9, max_gigabytes=1e-3), "chain route with 3 clients, local_steps = 9"),
])
def test_refusals(kw, match):
    args = dict(gamma=[0.5, 1.2, 0.8], r=0.5, sigma=0.5, signal=1.0, rounds=[3],
                local_steps=2, step_size=0.08, spectra=ANTI)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        riskcalc.rounds_limit("fedavg", **args)


def test_own_models_and_personalization_answer():
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 1.2], r=0.5, sigma=0.5, signal=1.0,
                                rounds=[2], local_steps=2, step_size=0.1,
                                spectra=["identity", "two-point:1,2,0.5"])
    assert np.all(np.isfinite(res.risk))
    assert np.all(np.isfinite(res.local_risk))      # covered: tests/test_rounds_shift_own.py
    assert np.all(np.isfinite(res.personalized_risk(steps=2, step_size=0.1)))
