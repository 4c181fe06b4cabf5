"""The chain route of FedAvg's pencil with K local steps under a spectrum (``sigma_chain``)
against independent routes: the dense pencil (``sigma_pencil``: dense inverse, dense Newton
Jacobian, dense two-point solve) at the same nodes, and for Sigma = I and one client the
Marchenko-Pastur law integrated by quadrature (D = q(S), q(x) = 1 - (1 - eta x)^K) at K = 20
and 50, where the dense pencil would need 400 and 2500 unknowns per node."""

import numpy as np
import pytest
from scipy.integrate import quad

import riskcalc
from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil

Z = np.array([0.9 + 0.4j, 0.25 + 0.05j, 1.6 + 0.3j, 0.05 + 0.2j])


def _path(z, top):
    return lambda y: z + 1j * y, list(4.0 * top * np.geomspace(1.0, 1e-3, 14)) + [0.0]


def _couplings(pen, p, r, sigma, gam):
    """FedAvg's couplings (``sigma.fedavg.curves``): q(S_j)^2 and (q^2 / s)(S_j) weighted."""
    M, eta = pen.M, pen.eta
    v = np.zeros((M, pen.n))
    v[:, 0], v[np.arange(M), pen.rows[:, -1]] = 1.0, -1.0
    wn = np.zeros((M, pen.n))
    wn[:, 0] = eta
    for j in range(M):
        wn[j, pen.rows[j, :-1]] = eta
    return [(p ** 2 * r ** 2, v, v), (p ** 2 * sigma ** 2 * gam, wn, v)]


@pytest.mark.parametrize("gam, p, K, atoms, weights", [
    ([0.5, 2.0, 4.0], [0.2, 0.5, 0.3], 3, [0.5, 3.0], [0.3, 0.7]),      # sample weights
    ([1.5, 3.0], [0.5, 0.5], 6, [0.4, 1.0, 2.5], [0.2, 0.5, 0.3]),      # uniform, N < d
    ([0.3, 0.8, 1.2, 0.6], [0.25] * 4, 5, [1.0], [1.0]),                # Sigma = I
])
def test_chain_equals_the_dense_pencil(gam, p, K, atoms, weights):
    """Fixed point, Ghat[:, 0] and both two-point couplings at every pair of nodes and their
    conjugates (all pairs, and half of them with the symmetry): the chain (GMRES to 1e-13)
    against the dense pencil. Measured: <= 3.1e-12."""
    gam, p = np.array(gam), np.array(p)
    eta = 0.3 / max(atoms)
    args = (np.array(atoms), np.array(weights), gam, p, eta, K)
    dense, chain = SigmaPencil(*args), ChainPencil(*args)
    nodes, path = _path(Z, max(atoms) * 4)
    t1, C1, G1 = dense.solve(nodes, path)
    t2, C2, G2 = chain.solve(nodes, path)
    np.testing.assert_allclose(t2, t1, rtol=0, atol=1e-10)
    np.testing.assert_allclose(chain.column0(G2), dense.column0(G1), rtol=0, atol=1e-10)
    cp = _couplings(dense, p, np.linspace(0.3, 0.9, gam.size), np.linspace(0.4, 1.0, gam.size),
                    gam)
    H1 = dense.two_point((C1, G1), dense.conj_join((C1, G1)), cp)
    H2 = chain.two_point((C2, G2), chain.conj_join((C2, G2)), cp)
    H3 = chain.two_point((C2, G2), chain.conj_join((C2, G2)), cp, symmetric=True)
    for H in (H2, H3):
        assert np.max(np.abs(H - H1)) <= 1e-10 * max(1.0, np.max(np.abs(H1)))


def test_chain_curves_equal_the_dense_curves():
    """The whole curves (edges, contour, bias, variance, distance) through either pencil, two
    clients, K = 2, global step 1.3, uniform weights, rounds up to 150: the chain's double
    integrals on their own ellipse nodes (degree 1, 168 nodes) against the dense route's on
    the one-point nodes (320). Measured: 1.3e-14."""
    spec = riskcalc.Spectrum([0.5, 2.0], weights=[0.5, 0.5])
    args = (np.array([0.3, 0.6]), np.array([0.4, 0.7]), np.array([0.5, 0.6]),
            np.array([0.5, 0.5]), 1.1, 0.2, 2, 1.3, np.array([0, 1, 4, 30, 150, np.inf]), spec)
    new = fedavg_sigma_k_curves(*args, route="chain")
    old = fedavg_sigma_k_curves(*args, route="dense")
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-10)
    np.testing.assert_allclose(new["edges"], old["edges"], rtol=1e-9)


def _mp(f, gamma):
    """int f(x) dMP_gamma(x) for gamma < 1, x = c + h cos(phi) (smooth in phi)."""
    lo, hi = (1 - np.sqrt(gamma)) ** 2, (1 + np.sqrt(gamma)) ** 2
    c, h = 0.5 * (lo + hi), 0.5 * (hi - lo)

    def part(g):
        return quad(lambda ph: g(c + h * np.cos(ph)) * (h * np.sin(ph)) ** 2
                    / (2 * np.pi * gamma * (c + h * np.cos(ph))), 0, np.pi, epsabs=1e-14,
                    epsrel=1e-13, limit=400)[0]
    return part(lambda x: f(x).real) + 1j * part(lambda x: f(x).imag)


@pytest.mark.parametrize("K", [20, 50])
def test_identity_one_client_against_marchenko_pastur(K):
    """Sigma = I, M = 1, K = 20 and 50: tau((z - q(S))^-1) and the two-point functions
    tau(G(z2) q(S)^2 G(z1)), tau(G(z2) (q^2 / s)(S) G(z1)) from the chain against quadrature
    of the Marchenko-Pastur law (gamma = 0.5). Measured: <= 1.5e-14."""
    gam, eta = 0.5, 0.5
    pen = ChainPencil(np.array([1.0]), np.array([1.0]), np.array([gam]), np.array([1.0]), eta, K)
    z = Z[:3]
    nodes, path = _path(z, 3.0)
    _, C, G = pen.solve(nodes, path)
    g00 = pen.column0(G)[:, 0, 0]

    def q(x):
        return 1.0 - (1.0 - eta * x) ** K

    ref = [_mp(lambda x, zz=zz: 1.0 / (zz - q(x)), gam) for zz in z]
    np.testing.assert_allclose(g00, ref, rtol=0, atol=1e-8)
    cp = [(np.array([1.0]),) + c[1:] for c in _couplings(pen, np.ones(1), np.ones(1),
                                                          np.ones(1), np.ones(1))]
    H = pen.two_point((C, G), (C, G), cp)[:, 1]           # lam = 1: tau without Sigma
    for u, z1 in enumerate(z):
        for v, z2 in enumerate(z):
            r1 = _mp(lambda x: q(x) ** 2 / ((z2 - q(x)) * (z1 - q(x))), gam)
            r2 = _mp(lambda x: q(x) ** 2 / x / ((z2 - q(x)) * (z1 - q(x))), gam)
            assert abs(H[0, u, v] - r1) <= 1e-8 and abs(H[1, u, v] - r2) <= 1e-8


def test_chain_curves_at_400_rounds_against_marchenko_pastur():
    """Sigma = I, one client (gamma = 0.5), K = 3 through the chain route at T = 0, 5, 400 and
    inf against quadrature of the Marchenko-Pastur law: bias (signal^2 + r^2) int (1 - q)^(2T),
    variance sigma^2 gamma int (1 - (1 - q)^T)^2 / x. 400 rounds were refused (the node-pair
    cap counted the one-point contour's 816 nodes; the chain's pairs use 416). Measured:
    bias 1.5e-15 absolute (7e-9 relative at T = 400, 2e-7), variance 2e-14."""
    gam, r, sig, s, eta, K = 0.5, 0.7, 0.6, 1.1, 0.05, 3
    rounds = np.array([0.0, 5, 400, np.inf])
    out = fedavg_sigma_k_curves(np.array([gam]), np.array([r]), np.array([sig]), np.ones(1), s,
                                eta, K, 1.0, rounds, riskcalc.Spectrum([1.0], weights=[1.0]),
                                route="chain")

    def q(x):
        return 1.0 - (1.0 - eta * x) ** K

    for j, T in enumerate(rounds):
        if np.isinf(T):
            bias, var = 0.0, sig ** 2 * gam * _mp(lambda x: 1.0 / x, gam).real
        else:
            bias = (s ** 2 + r ** 2) * _mp(lambda x: (1.0 - q(x)) ** (2 * T), gam).real
            var = sig ** 2 * gam * _mp(lambda x: (1.0 - (1.0 - q(x)) ** T) ** 2 / x, gam).real
        assert abs(out["bias"][0, j] - bias) <= 1e-12
        assert abs(out["variance"][0, j] - var) <= 1e-12


def test_chain_route_against_the_simulated_algorithm():
    """K = 7, three clients (M K^2 = 147, above ``DENSE_UNKNOWNS``: the chain route of
    ``rounds_limit``), a two-point spectrum, global step 0.8, against the literal FedAvg
    iteration (``montecarlo.linear.rounds``, exact given the designs) at d = 200 and 400:
    within 4 s.e. plus the finite-d allowance 1 / d (as ``test_rounds_sigma_k``). The band is
    the allowance's: 4 s.e. at most 9.3e-4 (d = 200) and 3.0e-4 (d = 400) with 5 replicates
    (8.3e-4 and 3.3e-4 with 10), so more replicates change neither what passes nor what is
    caught (the risks at T >= 1 made 1% off: 3.0 bands away at d = 400 with 5 or 10).
    Measured: the largest gap 0.070 and 0.048 of the band, 0.11% and 0.027% of the risk (K =
    12 and 20 replicates: 0.05 of it, at 16 s instead of 9 s)."""
    from montecarlo.linear.rounds import simulate_rounds
    from riskcalc.linear.dynamics.sigma.fedavg.curves import DENSE_UNKNOWNS, local_stability

    assert 3 * 7 ** 2 > DENSE_UNKNOWNS
    spec = riskcalc.Spectrum([0.5, 2.0], weights=[0.5, 0.5])
    gam = np.array([0.2, 0.3, 0.25])
    kw = dict(gamma=gam, r=[0.3, 0.6, 0.9], sigma=[0.5, 0.8, 0.3], signal=1.2,
              rounds=[0, 1, 3, 10], local_steps=7,
              step_size=0.5 * 2.0 / local_stability(spec, gam, 1.0), spectrum=spec,
              global_step=0.8)
    theory = riskcalc.rounds_limit("fedavg", **kw)
    for d in (200, 400):
        sim = simulate_rounds("fedavg", d=d, reps=5, seed=3, **kw)
        gap = np.abs(sim.risk - theory.risk)
        assert np.all(gap <= 4 * sim.risk_se + 1.0 / d), (d, gap, sim.risk_se)


def test_predictors_reuse_the_last_newton_factors(monkeypatch):
    """``chain_newton``: each predictor solves with the factors of the node's last Newton step
    (and ``solve_arc`` hands them to the neighbour), so fewer eigenbasis factorizations than
    the Newton-GMRES solves they serve (without the reuse: one per solve, equal counts), and
    the arc's values equal every node followed down from far above (3 of 40 nodes down,
    the rest along the arc; measured 6e-15)."""
    pen = ChainPencil(np.array([0.5, 3.0]), np.array([0.3, 0.7]), np.array([0.5, 2.0, 4.0]),
                      np.array([0.2, 0.5, 0.3]), 0.05, 4)
    theta = np.pi * (np.arange(40) + 0.5) / 40
    z = 0.5 + 0.48 * np.cos(theta) + 0.03j * np.sin(theta)
    ys = list(4.0 * np.geomspace(1.0, 1e-3 * 0.03 * np.sin(theta[0]) / 4.0, 24)) + [0.0]
    counts = {"_factors": 0, "_newton": 0}
    for name in counts:
        def counted(self, first, *a, _f=getattr(ChainPencil, name), _n=name, **k):
            counts[_n] += first.shape[0] if _n == "_factors" else a[0].shape[0]
            return _f(self, first, *a, **k)
        monkeypatch.setattr(ChainPencil, name, counted)
    t2, _, G2 = pen.solve_arc(z, ys)
    assert counts["_factors"] <= 0.8 * counts["_newton"]
    monkeypatch.undo()
    t1, _, G1 = pen.solve(lambda y: z + 1j * y, ys)
    np.testing.assert_allclose(t2, t1, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pen.column0(G2), pen.column0(G1), rtol=0, atol=1e-10)


def test_gmres_batch_view_selects_the_active_systems():
    """``chain_basis.batch_view``: the factors of the systems GMRES still iterates on, equal to
    selecting them afresh at every product, and copied only when the batch changes."""
    from riskcalc.linear.dynamics.sigma.chain_basis import batch_view
    F = {"a": np.arange(12.0).reshape(6, 2), "b": np.arange(6.0) * 1j}
    view = batch_view(F, 6)
    assert view(np.arange(6)) is F
    for idx in ([0, 2, 5], [0, 2, 5], [2, 5], [1], list(range(6))):
        idx = np.array(idx)
        got = view(idx)
        assert all(np.array_equal(got[k], F[k][idx]) for k in F)
        assert view(idx.copy()) is got


def test_diverging_local_steps_are_refused_before_the_time_estimate():
    """Issue 29's corner with step_size 0.3 (M = 20, K = 50, T = 200, spectrum {1, 4}): the
    local steps diverge (0.3 times the top of the sample spectrum, 5.1 > 2), which the route
    says instead of its time estimate (it asked for more time, then refused the step)."""
    M = 20
    with pytest.raises(ValueError, match="step_size: local gradient descent diverges"):
        riskcalc.rounds_limit("fedavg", gamma=list(np.linspace(0.3, 2.0, M)),
                              r=list(np.linspace(0.5, 1.5, M)),
                              sigma=list(np.linspace(0.2, 1.0, M)), signal=1.0, rounds=200,
                              local_steps=50, step_size=0.3, spectrum="two-point:1,4,0.5")
