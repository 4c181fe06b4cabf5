"""The chain route of paper 004's Algorithm 1 with K local steps under a spectrum
(``riskcalc.linear.dynamics.sigma.algorithm1.chain``, taken above M K^2 = 200) against
independent routes: the dense pencil (``sigma.algorithm1.pencil.Alg1Pencil``: dense inverse, dense
Newton Jacobian, dense two-point solve on the transposed pencil) at the same nodes, the Sigma = I
subordination of ``algorithm1.curves``, the pFedMe joint minimizer of ``clients_limit`` at
T = inf, and the literal algorithm simulated at two d with the 1 / d extrapolation."""

import numpy as np

import riskcalc
from riskcalc.linear.dynamics.algorithm1.curves import curves
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.algorithm1.curves import algorithm1_sigma_k_curves
from riskcalc.linear.dynamics.sigma.sigma_pencil import stable_top

GAM = np.array([0.5, 2.0, 4.0])
R = np.array([0.3, 0.8, 0.5])
SIG = np.array([0.4, 0.6, 1.0])
P = np.array([0.2, 0.5, 0.3])
SPEC = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])


def test_chain_equals_the_dense_pencil_at_nodes():
    """M = 3, K = 6 (M K^2 = 108, both routes apply), g lam = 1.6: the fixed point, Ghat[:, 0],
    the Euler predictor dres/dz (z on the server and every state block) and the two-point
    functions of the server and of every own model for the three couplings (signal, client
    shifts, the noise's symmetric part) at every pair of nodes and conjugates. Newton stops at
    residual 1e-12 (1 + abs(tau)), GMRES at 1e-13 of the right-hand side, and I - J is
    well conditioned this far from the spectrum (Im z >= 0.02 against the window's width ~1):
    1e-9 relative holds with room. Measured at M = 3, K = 3: tau 8e-13, H 6e-14 relative."""
    K, lam, g, eta = 6, 0.8, 2.0, 0.1
    Z = np.array([0.9 + 0.4j, 0.25 + 0.05j, -0.3 + 0.3j, 0.5 + 0.02j])
    path = list(20.0 * np.geomspace(1.0, 1e-3, 14)) + [0.0]
    args = (SPEC.atoms, SPEC.weights, GAM, P, lam, eta, K, g)
    dense, chain = Alg1Pencil(*args), Alg1Chain(*args)
    t1, C1, G1 = dense.solve(lambda y: Z + 1j * y, path)
    t2, C2, G2 = chain.solve(lambda y: Z + 1j * y, path)
    assert np.max(np.abs(t2 - t1)) <= 1e-9 * np.max(np.abs(t1))
    assert np.max(np.abs(chain.column0(G2) - dense.column0(G1))) <= 1e-9 * np.max(
        np.abs(dense.column0(G1)))
    zb = dense.zblocks
    dG = -G1[:, :, :, zb] @ G1[:, :, zb, :]
    d_own = np.stack([dG[:, :, dense.cols[j][:, None], dense.rows[j][None, :]]
                      for j in range(3)], axis=2)
    dres = -np.einsum("a,naMkl->nMkl", SPEC.weights * SPEC.atoms, d_own)
    assert np.max(np.abs(chain._dres(G2) - dres)) <= 1e-9 * np.max(np.abs(dres))
    # The couplings on the dense (transposed) pencil, in its block order.
    n, e = dense.n, np.eye(dense.n)
    cf, au = np.zeros((3, n)), np.zeros((3, n))
    for j in range(3):
        cf[j, dense.chain[j]] = -eta
        au[j, dense.copy[j]] = 1.0
        au[j, dense.chain[j, :-1]] = eta * lam
        au[j, dense.chain[j, -1]] = -(1.0 - eta * lam)
    c_th = -(e[0] + e[dense.state].sum(axis=0))
    noise = 0.5 * SIG ** 2 * GAM
    cps = []
    for m in np.concatenate([[0], dense.state]):
        cps += [(R ** 2, au, au, (m, m)), (np.r_[noise, noise], np.r_[au, cf], np.r_[cf, au],
                                           (m, m)), ([1.69], c_th[None], c_th[None], (m, m))]
    pent = Alg1Pencil(*args, transposed=True)
    Cf, Gf = dense.conj_join((C1, G1))
    ref = pent.two_point((C1.swapaxes(-1, -2), G1.swapaxes(-1, -2)),
                         (Cf.swapaxes(-1, -2), Gf.swapaxes(-1, -2)), cps)
    ref = ref.reshape(4, 3, 2, 4, 8).transpose(1, 2, 0, 3, 4)

    def loc(V):          # client j's row of V on its own blocks (the chain's local order)
        return np.stack([V[j, 1:].reshape(3, K + 2)[j] for j in range(3)])
    new = chain.two_point((C2, G2), [[(R ** 2, loc(au), loc(au), False)],
                                     [(noise, loc(au), loc(cf), False),
                                      (noise, loc(cf), loc(au), False)],
                                     [([1.69], c_th, c_th, True)]])
    assert np.max(np.abs(new - ref)) <= 1e-9 * np.max(np.abs(ref))


def test_identity_spectrum_is_the_scalar_route():
    """Sigma = I beyond the dense limit (M = 3, K = 9: M K^2 = 243) against the scalar
    subordination of ``algorithm1.curves``: server bias, variance, distance to the fixed
    point, the own models, the edges. Measured: 1.7e-13 (server), 2.4e-13 (own), 2.1e-13
    (edges)."""
    lam, K, g = 0.7, 9, 1.0 / 0.7
    eta = 0.9 / ((1 + np.sqrt(GAM.max())) ** 2 + lam)
    rounds = np.array([0, 1, 2, 7, 20, np.inf])
    new = algorithm1_sigma_k_curves(GAM, R, SIG, P, 1.3, lam, eta, K, g, rounds,
                                    riskcalc.Spectrum([1.0]))
    old = curves(GAM, R, SIG, P, 1.3, lam, eta, K, g, rounds)
    for key in ("bias", "variance", "distance"):
        np.testing.assert_allclose(new[key], old[key], rtol=0, atol=1e-9)
    for mine, ref in zip(new["local"](), old["local"]()):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-9)
    np.testing.assert_allclose(new["edges"], old["edges"], rtol=0, atol=1e-9)


def test_fixed_point_and_the_simulated_algorithm():
    """M = 3, K = 9 (M K^2 = 243: the chain route; the dense pencil refuses), a two-point
    spectrum, sample weights, eta at 0.9 of Thm 2's bound, g lam = 1. T = inf: the own models
    are the pFedMe joint minimizer (``clients_limit``, its own resolvent chain; measured
    3.6e-14). The literal Algorithm 1 (``montecarlo.linear.rounds``, exact given the designs) at
    d = 100 and 200: the own and the server models' risks within 4 s.e. + 1 / d at each d, and
    their 1 / d extrapolation 2 x(200) - x(100) within 4 of its s.e. + 2e-3 (the O(1 / d^2)
    remainder). Measured: the gaps at most 0.33 (d = 100) and 0.31 (d = 200) of their
    allowance (risk within 1.9% and 0.44%), the extrapolation 0.68 of its (with 3 designs at
    d = 200 its s.e. dominates)."""
    from montecarlo.linear.rounds import simulate_rounds

    L = stable_top(SPEC.atoms, SPEC.weights, GAM).max()
    kw = dict(gamma=GAM, r=R, sigma=SIG, signal=1.2, rounds=[0, 1, 3, 10, np.inf],
              local_steps=9, step_size=0.9 / (L + 0.8), lam=0.8, global_step=1.25,
              spectrum=SPEC)
    theory = riskcalc.rounds_limit("pfedme", **kw)
    ref = riskcalc.clients_limit("pfedme", gamma=GAM, r=R, sigma=SIG, lam=0.8, spectrum=SPEC)
    np.testing.assert_allclose(theory.bias[:, -1], ref.bias, rtol=0, atol=1e-9)
    np.testing.assert_allclose(theory.variance[:, -1], ref.variance, rtol=0, atol=1e-9)
    sims = {d: simulate_rounds("pfedme", d=d, reps=reps, seed=7, measure="conditional", **kw)
            for d, reps in ((100, 8), (200, 3))}
    for q in ("risk", "global_risk"):
        th = getattr(theory, q)
        for d, sim in sims.items():
            gap = np.abs(getattr(sim, q) - th)
            assert np.all(gap <= 4 * getattr(sim, q + "_se") + 1.0 / d), (d, q, gap)
        a, b = sims[100], sims[200]
        ext = 2 * getattr(b, q) - getattr(a, q)
        se = np.hypot(2 * getattr(b, q + "_se"), getattr(a, q + "_se"))
        assert np.all(np.abs(ext - th) <= 4 * se + 2e-3), (q, ext - th, se)
