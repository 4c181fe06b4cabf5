"""Paper 004's Algorithm 1 where its round map has complex eigenvalues (odd K, eta above
1 / (L + lam), g lam > 1; ``riskcalc.linear.dynamics.algorithm1.fold``'s non-real part) against
independent routes: the literal round map's eigenvalues at finite d (the disk bound holds at
every d), the polynomial in g that the risk at fixed T is (fitted where g lam <= 1, the
real-spectrum derivation), the finite-M pFedMe joint objective (T large), and the literal
algorithm at two d (in ``test_alg1_large_step``, with one client's 2 x 2 recursion)."""

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics import algorithm1_contraction

GAM = np.array([0.5, 2.0, 1.5])
R = np.array([0.3, 0.6, 1.0])
SIG = np.array([0.4, 0.6, 1.0])
LAM = 0.8
L = (1 + np.sqrt(GAM.max())) ** 2
ETA = 1.8 / (L + LAM)          # 0.9 of the local steps' stability edge


def _round_map(d, K, eta, g, seed=5):
    """The literal round map's eigenvalues at dimension d and min a over the sample spectra."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    M, p = GAM.size, (1 / GAM) / np.sum(1 / GAM)
    phi = np.zeros(((M + 1) * d, (M + 1) * d))
    mean_c, low = np.zeros((d, d)), 0.0
    for j, gj in enumerate(GAM):
        X = rng.standard_normal((int(round(d / gj)), d))
        e, U = np.linalg.eigh(X.T @ X / X.shape[0])
        a = (1 - eta * (e + LAM)) ** K
        low = min(low, a.min())
        A, C = (U * a) @ U.T, (U * ((1 - a) / (e + LAM))) @ U.T
        blk = slice((j + 1) * d, (j + 2) * d)
        phi[blk, blk], phi[blk, :d], phi[:d, blk] = A, LAM * C, g * LAM * p[j] * A
        mean_c += p[j] * C
    phi[:d, :d] = (1 - g * LAM) * np.eye(d) + g * LAM ** 2 * mean_c
    return np.linalg.eigvals(phi), low


@pytest.mark.parametrize("K, gl", [(1, 2.0), (3, 1.5)])
def test_eigenvalues_at_finite_d(K, gl):
    """d = 100: non-real eigenvalues exist; every one obeys abs(z)^2 <= (g lam - 1) A with the
    sample spectra's A = -min a (step 1's bound, exact at every d); the limit's top is the
    largest real eigenvalue and its contraction the spectral radius, up to the finite-d edge
    fluctuation (0.03 here)."""
    ev, low = _round_map(100, K, ETA, gl / LAM)
    cx = ev[np.abs(ev.imag) > 1e-8]
    assert np.abs(cx.imag).max() > 0.03
    assert np.all(np.abs(cx) ** 2 <= (gl - 1) * -low * (1 + 1e-9))
    lim = algorithm1_contraction(gamma=GAM, lam=LAM, local_steps=K, step_size=ETA,
                                 global_step=gl / LAM)
    assert lim["exact"] and lim["bottom"] is None and lim["disk"] < lim["top"]
    assert abs(ev.real[np.abs(ev.imag) <= 1e-8].max() - lim["top"]) < 0.03
    assert abs(np.abs(ev).max() - lim["contraction"]) < 0.03


def test_divergent_bottom_at_finite_d():
    """g lam = 3, K = 1: a real eigenvalue below inf a, past -1 (the iteration diverges); the
    limit's bottom is the smallest eigenvalue at d = 100 within 0.03."""
    ev, _ = _round_map(100, 1, ETA, 3.0 / LAM)
    lim = algorithm1_contraction(gamma=GAM, lam=LAM, local_steps=1, step_size=ETA,
                                 global_step=3.0 / LAM)
    assert lim["bottom"] < -1 and lim["exact"] and lim["contraction"] == -lim["bottom"]
    assert abs(ev.real.min() - lim["bottom"]) < 0.03
    res = riskcalc.rounds_limit("fedprox", gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[5],
                                local_steps=1, step_size=ETA, lam=LAM, global_step=3.0 / LAM)
    assert not res.converges


def _risks(gl, K, rounds):
    res = riskcalc.rounds_limit("fedprox", gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=rounds,
                                local_steps=K, step_size=ETA, lam=LAM, global_step=gl / LAM)
    return np.concatenate([res.risk, res.global_risk])


@pytest.mark.parametrize("K, T", [(1, [1, 2, 3]), (3, [1, 2])])
def test_polynomial_in_the_global_step_extrapolates(K, T):
    """At fixed T every model is a polynomial of degree <= T in g, the risks of degree <= 2 T.
    Fitted by Lagrange interpolation at 2 max(T) + 1 Chebyshev nodes of g lam in [0.1, 1] (the
    real spectrum of ``algorithm1.rate``), extrapolated to g lam = 2 (the circles of
    ``algorithm1.fold``): agreement to the fit's amplification (sum abs(Lagrange weights),
    4e4 at T = 3) times the routes' 1e-11, plus 1e-10 (measured K = 1: 2.2e-12, 4.7e-12 and
    1.1e-11 at T = 1, 2, 3)."""
    deg = 2 * max(T)
    nodes = 0.55 + 0.45 * np.cos(np.pi * (np.arange(deg + 1) + 0.5) / (deg + 1))
    Y = np.array([_risks(x, K, T) for x in nodes])
    lag = np.array([np.prod([(2.0 - nodes[m]) / (nodes[k] - nodes[m])
                             for m in range(deg + 1) if m != k]) for k in range(deg + 1)])
    got = _risks(2.0, K, T)
    amp = np.abs(lag).sum()
    assert amp < 5e4
    assert np.all(np.abs(np.tensordot(lag, Y, axes=1) - got) <= (1e-11 * amp + 1e-10) * got)


def test_late_rounds_reach_the_joint_objective():
    """gamma = (0.2, 0.4), lam = 0.5, K = 3, eta (L + lam) = 1.5, g lam = 1.5 (contraction
    0.60, the top; disk 0.25): T = 45 from the circles is the pFedMe joint objective's limit
    (``clients_limit``, its own subordination) to 0.6^45 ~ 1e-10."""
    gam, lam = np.array([0.2, 0.4]), 0.5
    top = (1 + np.sqrt(gam.max())) ** 2
    res = riskcalc.rounds_limit("fedprox", gamma=gam, r=R[:2], sigma=SIG[:2], signal=0.0,
                                rounds=[45, np.inf], local_steps=3, step_size=1.5 / (top + lam),
                                lam=lam, global_step=1.5 / lam)
    assert res.converges and res.contraction < 0.61 and res.diagnostics["contour_nodes"] > 0
    want = riskcalc.clients_limit("pfedme", gamma=gam, r=R[:2], sigma=SIG[:2], lam=lam,
                                  weights="samples")
    np.testing.assert_allclose(res.risk[:, 0], want.risk, rtol=1e-8)
    np.testing.assert_allclose(res.global_risk[:, 1], res.global_risk[:, 0], rtol=1e-8)
    np.testing.assert_allclose(res.risk[:, 1], want.risk, rtol=1e-8)


def test_refusals():
    """Past the stability edge still refused (with a covariance spectrum the complex case is
    refused: ``test_rounds_sigma_alg1k``)."""
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.0, rounds=[3], lam=LAM, local_steps=1,
              global_step=2.0 / LAM)
    with pytest.raises(ValueError, match=r"step_size < 2 / \(L \+ lam\)"):
        riskcalc.rounds_limit("fedprox", step_size=2.0 / (L + LAM), **kw)


def test_distance_to_the_fixed_point_on_circles_around_one():
    """K = 1, eta at 0.9 of the edge, g lam = 2 (circles of radius above 1 for the first rounds:
    R 1e6^(1 / 2 T_max) with R = 0.98): the distance E||w_T - w_inf||^2 integrates z^T / (1 - z),
    whose pole at z = 1 the circles enclose (``algorithm1.curves._pole`` adds its residues),
    against the one-atom pencil (``sigma.algorithm1.curves``: matrix-valued deterministic
    equivalent, z = 1 a node of its own), T = 0 (E||w_inf||^2), 1, 2, 5, 20. Both solve to
    1e-12 residuals: 1e-9 holds with room. Measured: 3.1e-13 (before the correction the circle
    route was off by 0.68 at T = 0 and 0.36 at T = 20)."""
    from riskcalc.linear.dynamics.algorithm1.curves import curves
    from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves

    gam, r, sig = np.array([0.5, 2.0, 1.5]), np.array([0.3, 0.8, 0.5]), np.array([0.4, 0.6, 1.0])
    p, lam = np.array([0.2, 0.5, 0.3]), 0.8
    eta, g = 1.8 / ((1 + np.sqrt(2.0)) ** 2 + lam), 2.0 / lam
    rounds = np.array([0, 1, 2, 5, 20])
    scalar = curves(gam, r, sig, p, 1.2, lam, eta, 1, g, rounds)
    pencil = algorithm1_sigma_k_curves(gam, r, sig, p, 1.2, lam, eta, 1, g, rounds,
                                       riskcalc.Spectrum([1.0]))
    assert scalar["contraction"] < 1.0 and not scalar["contraction_is_bound"]
    np.testing.assert_allclose(scalar["distance"], pencil["distance"], rtol=0, atol=1e-9)
