"""The algorithms and instances the paper checks run (issue 31): paper 000's binding
mean-estimation instance (its prox, its stability sup), paper 001's Katyusha inner solver and
Thm 3.1's split chain, each against an independent route, and the claims built on them reject
their mutants (``paper_checks.sensitivity``)."""

import numpy as np
import pytest
from scipy.optimize import minimize as sp_minimize

from paper_checks.numbered import MUTANT_PASSES
from montecarlo.experiments.objectives import ClientLosses
from paper_checks.p000_afp import LogisticSamples, MeanEstimation, soft_local_sgd
from paper_checks.p000_prop10 import _X, _fedprox
from paper_checks.p001_iapgd import _finite_sum_clients, _katyusha, _objective_fs, _solve_fs
from paper_checks.sensitivity import sensitive_claims


def test_mean_estimation_prox_against_direct_minimization():
    rng = np.random.default_rng(5)
    f = MeanEstimation(rng.uniform(-0.5, 0.5, (3, 4, 2)), beta=1.7)
    w, lam = np.array([0.3, -0.2]), 0.4
    for i in range(3):
        res = sp_minimize(lambda v: f.value(np.broadcast_to(v, (3, 2)))[i]
                          + lam / 2 * np.sum((v - w) ** 2), np.zeros(2), tol=1e-12)
        assert np.allclose(res.x, f.prox(w, lam)[i], atol=1e-6)


def test_prop10_fedprox_newton_against_direct_minimization():
    # 000.prop10's Newton (its Hessian assembled through a diagonal view of the client blocks)
    # against a quasi-Newton minimization of the objective written out from the counts: two
    # data sets on a leading axis, m = 3 clients, n = 12, warm start included.
    rng = np.random.default_rng(3)
    c = rng.multinomial(12, np.full(4, 0.25), size=(2, 3))
    k1 = rng.binomial(c, 0.6)
    k0, lam = c - k1, 0.7
    wg, W = _fedprox(k1, k0, 12, lam)
    start = np.concatenate([wg, W.reshape(2, -1)], -1) + 0.2
    wg2, W2 = _fedprox(k1, k0, 12, lam, newton=12, start=start)
    for b in range(2):
        def objective(v):
            g, V = v[:2], v[2:].reshape(3, 2)
            t = V @ _X.T
            data = (k1[b] * np.logaddexp(0, -t) + k0[b] * np.logaddexp(0, t)).sum(-1) / 12
            return np.mean(data + lam / 2 * np.sum((g - V) ** 2, -1))
        res = sp_minimize(objective, np.zeros(8), method="BFGS", tol=1e-12)
        for g, V in ((wg, W), (wg2, W2)):
            assert np.allclose(np.concatenate([g[b], V[b].ravel()]), res.x, atol=1e-6)


def _soft_local_sgd_per_step(grad, n, V, centre, K, lam, mu, r, rng):
    """Alg. 2's SoftLocalSGD as first written: one draw of (reps, m) sample indices per step,
    ``grad(V, j)`` indexing the data itself, np.linalg.norm for the projection."""
    reps, m, _ = V.shape
    trace = []
    for k in range(K):
        g = grad(V, rng.integers(0, n, (reps, m))) + lam * (V - centre[:, None])
        V = V - g / ((mu + lam) * (k + 1))
        V = V * (r / np.maximum(r, np.linalg.norm(V, axis=-1, keepdims=True)))
        trace.append(V)
    return trace


def test_soft_local_sgd_equals_a_draw_per_step():
    # soft_local_sgd draws and gathers a chunk of steps' samples at once and skips projections
    # by factor 1: its iterates and the generator's state after it must be those of the
    # per-step loop bit for bit, over chunk boundaries (K = 300), with and without projections,
    # per-replicate datasets and per-client sample counts
    rng = np.random.default_rng(11)
    m, n, d, reps = 4, 20, 3, 5
    f = ClientLosses(rng.standard_normal((m, n, d)), rng.choice([-1.0, 1.0], (m, n)), l2=0.3)
    rows = np.arange(m)[None, :]

    def logistic(V, j):
        x, y = f.X[rows, j], f.y[rows, j]
        return (-y / (1 + np.exp(y * np.sum(x * V, -1))))[..., None] * x + f.l2 * V

    Z = rng.uniform(-1, 1, (reps, m, n, 2))
    mean = MeanEstimation(Z, beta=1.3)

    def mean_grad(V, j):
        return mean.beta * (V - Z[np.arange(reps)[:, None], rows, j])

    def shared_grad(V, j):                                  # one dataset for every replicate
        return mean.beta * (V - Z[0][rows, j])

    sizes = np.array([5, 20, 9, 14])
    for loss, grad, dim, count in ((LogisticSamples(f), logistic, d, n),
                                   (mean, mean_grad, 2, sizes),
                                   (MeanEstimation(Z[0], beta=1.3), shared_grad, 2, n)):
        for r in (0.3, 5.0):                       # projections on 40-75% of steps / <1%
            V0 = rng.uniform(-r, r, (reps, m, dim)) / dim
            centre = rng.uniform(-r, r, (reps, dim)) / dim
            trace = []
            a, b = np.random.default_rng(3), np.random.default_rng(3)
            soft_local_sgd(loss, count, V0, centre, 300, 0.2, 0.3, r, a, trace)
            ref = _soft_local_sgd_per_step(grad, count, V0, centre, 300, 0.2, 0.3, r, b)
            assert np.array_equal(np.array(trace), np.array(ref))
            assert a.random() == b.random()


def test_katyusha_reaches_the_exact_local_prox():
    # h_i(z) = f_i(z) + lam/2 ||z - ybar||^2 minimized by Katyusha against its normal
    # equations (A_i'A_i/m + (mu + lam) I) z = A_i'b_i/m + mu c_i + lam ybar
    rng = np.random.default_rng(7)
    n, m, d, mu, lam = 3, 12, 5, 1e-2, 5e-2
    A, b, C, _ = _finite_sum_clients(rng, n, m, d, mu)
    ybar = rng.standard_normal((2, d))
    z, used = _katyusha(A, b, C, mu, lam, ybar, np.zeros((2, n, d)), 60 * 2 * m, rng)
    for r in range(2):
        for i in range(n):
            exact = np.linalg.solve(A[i].T @ A[i] / m + (mu + lam) * np.eye(d),
                                    A[i].T @ b[i] / m + mu * C[i] + lam * ybar[r])
            assert np.linalg.norm(z[r, i] - exact) <= 1e-8 * np.linalg.norm(exact)
    assert used == 60 * 5 * m


def test_katyusha_equals_a_draw_per_iteration():
    # _katyusha draws and gathers an epoch's summands at once and takes their gradients at the
    # snapshot in one product: the same iterates and generator state, bit for bit, as the loop
    # with a draw and two gathers per iteration
    rng = np.random.default_rng(12)
    n, m, d, mu, lam = 3, 5, 4, 1e-2, 0.2
    A, b, C, _ = _finite_sum_clients(rng, n, m, d, mu)
    ybar, z0 = rng.standard_normal((2, d)), rng.standard_normal((2, n, d))
    L = float(np.max(np.sum(A * A, -1)))
    sigma, ep = mu + lam, 2 * m
    tau1 = min(np.sqrt(ep * sigma / (3 * L)), 0.5)
    alpha = 1 / (3 * tau1 * L)
    theta = (1 + alpha * sigma) ** np.arange(ep)
    rows = np.arange(n)[None, :]

    def grad(x, j):
        a = A[rows, j]
        return (np.sum(a * x, -1) - b[rows, j])[..., None] * a

    a, r = np.random.default_rng(4), np.random.default_rng(4)
    snap = y = z = z0
    for _ in range(3):
        full = np.einsum("rim,imd->rid", np.einsum("imd,rid->rim", A, snap) - b, A) / m
        acc = np.zeros_like(snap)
        for t in range(ep):
            x = tau1 * z + 0.5 * snap + (0.5 - tau1) * y
            j = r.integers(0, m, (2, n))
            g = full + grad(x, j) - grad(snap, j)
            z_new = (z / alpha - g + lam * ybar[:, None] + mu * C) / (1 / alpha + sigma)
            y = x + tau1 * (z_new - z)
            z = z_new
            acc += theta[t] * y
        snap = acc / theta.sum()
    mine, used = _katyusha(A, b, C, mu, lam, ybar, z0, 3 * ep, a)
    assert np.array_equal(mine, snap) and used == 3 * (m + 2 * ep)
    assert a.random() == r.random()


def test_finite_sum_minimizer_is_stationary():
    # the nd x nd system against the objective's gradient by central differences
    rng = np.random.default_rng(8)
    n, m, d, mu, lam = 3, 7, 4, 1e-2, 0.3
    A, b, C, _ = _finite_sum_clients(rng, n, m, d, mu)
    x = _solve_fs(A, b, C, mu, lam)
    h = 1e-5
    for i in range(n):
        for k in range(d):
            e = np.zeros((n, d))
            e[i, k] = h
            g = (_objective_fs(x + e, A, b, C, mu, lam) - _objective_fs(x - e, A, b, C, mu, lam))
            assert abs(g / (2 * h)) < 1e-8


def test_new_runs_reject_their_mutants(quick_sensitivity):
    ids = ["000.lemma14.inner-loop", "000.lemma15.outer-loop", "000.prop16.afp-optimization",
           "000.prop21.fedprox-stability", "000.lemma24.approximate-stability",
           "000.prop22.afp-stability-rate", "000.prop23.lambda-aer", "000.prop30.lambda-ier",
           "001.thm43.iapgd-katyusha", "001.thm31.hypothesis",
           "004.lemma1.eq5-local-inequality"]
    per = sensitive_claims(quick_sensitivity(ids))
    assert per == {cid: True for cid in ids}
    assert not set(ids) & MUTANT_PASSES


def test_sup_loss_change_over_the_unit_ball():
    # the closed form of Def. 5's sup for mean estimation against a dense grid of the disk
    from paper_checks.p000_mean import BETA, sup_loss_change

    rng = np.random.default_rng(9)
    rad, ang = np.meshgrid(np.linspace(0, 1, 201), np.linspace(0, 2 * np.pi, 721))
    Z = np.stack([rad * np.cos(ang), rad * np.sin(ang)], -1).reshape(-1, 2)
    for _ in range(5):
        a, b = rng.uniform(-0.7, 0.7, (2, 2))
        grid = np.max(np.abs(BETA / 2 * (np.sum((a - Z) ** 2, 1) - np.sum((b - Z) ** 2, 1))))
        exact = sup_loss_change(a, b)
        assert grid <= exact * (1 + 1e-12) and grid >= exact * (1 - 1e-4)


def test_split_chain_reach_contains_the_krylov_spaces():
    # paper 001 Thm 3.1's instance: the coordinate sets a span-restricted algorithm can reach
    # (breadth-first closure) against the Krylov spaces of Assumption 3.1 built numerically
    # (gradients A_i x - b_i of every basis vector, repeated to closure, then joined at a
    # communication): equal, and one coordinate more per communication along the chain
    from scipy.linalg import orth

    from paper_checks.p001_thm31 import minimizer, reachable, split_chain

    d, C = 14, 6
    A, b = split_chain(d, 50.0, 1.0)
    masks = reachable(A, b, C)

    def krylov(i, B):
        while True:
            grads = A[i] @ B if B.shape[1] else np.zeros((d, 0))
            N = orth(np.hstack([B, grads, b[i][:, None]]))
            if N.shape[1] == B.shape[1]:
                return N
            B = N
    S = [krylov(i, np.zeros((d, 0))) for i in range(2)]
    for c in range(C + 1):
        for i in range(2):
            coord = np.eye(d)[:, masks[c, i]]
            assert S[i].shape[1] == coord.shape[1]
            assert np.allclose(coord @ (coord.T @ S[i]), S[i], atol=1e-10)
        S = [krylov(i, orth(np.hstack(S))) for i in range(2)]
    assert [int(masks[c].any(0).sum()) for c in range(C + 1)] == list(range(2, C + 3))
    # x* against problem (2)'s gradient: (A_i x_i - b_i + lam (x_i - xbar)) = 0
    x = minimizer(A, b, 7.0)
    assert np.allclose(np.einsum("ide,ie->id", A, x) - b + 7.0 * (x - x.mean(0)), 0, atol=1e-12)


def test_grid_baselines_alone_equal_the_full_grid():
    # paper 000's Thm 4 and 6 checks solve one baseline of montecarlo's grid (no FedProx, no
    # constants): the same numbers bit for bit as the grid's own solving both with FedProx, on
    # its instances and data streams; R = 0 gives homogeneous_grid's FedAvg
    from montecarlo.experiments import rates

    ns, ms, f = [40, 80], [2, 4], [0.5, 3.0]
    full = rates.paper000_fedprox_grid(ns, ms, f, theorems=(12,), d=5, reps=3, seed=17)
    for name in ("local", "fedavg"):
        mine = rates.paper000_fedprox_grid(ns, ms, f, theorems=(), baselines=name, d=5, reps=3,
                                           seed=17)
        assert sorted(mine) == sorted(["n", "m", "R", f"{name}_aer", f"{name}_ier_worst"])
        for key in mine:
            assert np.array_equal(mine[key], full[key]), key
    hom = rates.homogeneous_grid(ns, ms, d=5, reps=3, seed=17)
    mine = rates.paper000_fedprox_grid(ns, ms, [0.0], theorems=(), baselines=["fedavg"], d=5,
                                       reps=3, seed=17)
    assert np.array_equal(mine["fedavg_aer"][:, 0], hom["fedavg_ier"])
    # R = 0 only without FedProx (its lambdas need R > 0); a bool is no selection
    with pytest.raises(ValueError, match="r2_times_n"):
        rates.paper000_fedprox_grid(ns, ms, [0.0], theorems=(11,), d=5, reps=3)
    for bad in (True, "fedprox", ["local", "global"], 3):
        with pytest.raises(ValueError, match=r"baselines must be a subset of \('fedavg'"):
            rates.paper000_fedprox_grid(ns, ms, f, baselines=bad, d=5, reps=3)


def test_simulate_many_equals_simulate_per_method():
    # paper 003's paired checks measure both methods on instances sampled once: the numbers of
    # simulate per method, bit for bit (federated and oracle centres, a non-identity spectrum)
    from paper_checks.evidence import simulate, simulate_many
    from paper_checks.p003_common import TWO_POINT

    kw = dict(gamma=2.0, sigma=0.5, signal=1.0, d=20, reps=2, seed=5)
    cases = [([("maml_fl", [0.05, 0.1]), ("ftfa", [0.0])],
              dict(global_model="federated", clients=3, spectrum=TWO_POINT)),
             ([("rtfa", [0.5]), ("ftfa", [0.0]), ("local", [0.0])], {})]
    for requests, extra in cases:
        many = simulate_many(requests, **kw, **extra)
        for (method, tunings), got in zip(requests, many):
            one = simulate(method, tunings=tunings, **kw, **extra)
            assert got.keys() == one.keys() and got["n"] == one["n"]
            for key in ("bias", "variance", "risk"):
                assert np.array_equal(got[key], one[key])
