"""Finite-M limits for a general covariance spectrum (riskcalc.linear.finite_clients.sigma and
the resolvent-chain engine riskcalc.linear.engine.resolvent_chain) against independent routes: direct
simulation of the chains, an implicit-differentiation identity, the Sigma = I closed forms of
finite_clients, the oracle limit of riskcalc.linear.engine.kappa (M -> infinity), local least
squares (M = 1), the freeness of Sigma from white Wishart matrices, and the federated pipeline
of montecarlo."""

import numpy as np
import pytest

import riskcalc
from montecarlo.linear.instances import Setting, client_params, sample_instance
from montecarlo.linear.measure import measure_many
from montecarlo.runner.stats import mean_se
from riskcalc.linear.finite_clients.identity import group_limits, subordination
from riskcalc.linear.engine.resolvent_chain import chain_trace
from tests.conftest import SPECTRA

TWO = riskcalc.Spectrum.two_point(1.0, 10.0, 0.5)
ALIGNED = SPECTRA["two-point-aligned"]
CASES = [("fedavg", None), ("ftfa", None), ("rtfa", 0.5), ("rtfa", 4.0)]

# --- the engine --------------------------------------------------------------------------------

ONE = (lambda s: np.ones_like(s))
# Blocks (eta, Lam(s)): ridge residual lam (S + lam)^-1, projection P^perp, (p S + w Sigma)^-1.
RIDGE, PROJ, KBLK = (0.5, ONE), (0.0, ONE), (1 / 0.2, lambda s: 0.7 * s)
CHAINS = [
    (2.0, [(PROJ, lambda s: s), (PROJ, ONE)]),
    (2.0, [(RIDGE, lambda s: s), (KBLK, ONE)]),
    (2.0, [(RIDGE, lambda s: s), (RIDGE, ONE), (KBLK, ONE)]),
    (2.0, [(PROJ, lambda s: s), (PROJ, ONE), (KBLK, lambda s: s), (KBLK, ONE)]),
    (2.0, [(RIDGE, lambda s: s), (RIDGE, ONE), (KBLK, lambda s: s ** 2), (KBLK, lambda s: 1 / (1 + s))]),
    (0.5, [(RIDGE, lambda s: s), (KBLK, ONE), (RIDGE, lambda s: s)]),
    (0.5, [(KBLK, lambda s: s), (RIDGE, lambda s: 1 / (1 + s)), (KBLK, lambda s: s), (RIDGE, ONE)]),
]
BLOCKS = {"ridge": RIDGE, "proj": PROJ, "k": KBLK}
D_CHAIN, REPS_CHAIN = 800, 2


@pytest.fixture(scope="module")
def samples():
    """The blocks of two sample covariances S = Sigma^1/2 W Sigma^1/2 per gamma (Sigma = diag
    of TWO's eigenvalues), each inverted once."""
    rng = np.random.default_rng(20260611)
    s = TWO.eigenvalues(D_CHAIN)
    out = {}
    for gamma in {c[0] for c in CHAINS}:
        n = int(round(D_CHAIN / gamma))
        out[gamma] = []
        for _ in range(REPS_CHAIN):
            X = rng.standard_normal((n, D_CHAIN)) * np.sqrt(s)
            S = X.T @ X / n
            mats = {}
            for name, (eta, lam) in BLOCKS.items():
                if eta > 0:
                    mats[eta] = np.linalg.inv(S / eta + np.diag(lam(s)))
                elif gamma > 1:
                    q = np.linalg.qr(X.T)[0]           # P^perp = I - (row space projector)
                    mats[eta] = np.eye(D_CHAIN) - q @ q.T
            out[gamma].append(mats)
    return s, out


@pytest.mark.parametrize("k", range(len(CHAINS)))
def test_chain_against_simulation(samples, k):
    """Engine vs tr(Q_1 M_1 ... Q_k M_k)/d of sampled S at d = 800, 2 samples. Allowance
    4 s.e. + 3/d relative: the finite-d deviation of such normalized traces is O(1/d);
    d x rel.diff <= 1.9 was measured here (d = 800) and <= 0.9 at d = 1500 (3 samples)."""
    gamma, parts = CHAINS[k]
    s, data = samples
    vals = []
    for mats in data[gamma]:
        prod = np.eye(s.size)
        for (eta, _), mid in parts:
            prod = (prod @ mats[eta]) * mid(s)[None, :]
        vals.append(np.trace(prod) / s.size)
    mean, se = mean_se(vals)
    a, w = TWO.atoms, TWO.weights
    pred = chain_trace(gamma, a, w, [b[0] for b, _ in parts], [b[1](a) for b, _ in parts],
                       [m(a) for _, m in parts])
    assert abs(mean - pred) <= 4 * se + 3.0 / s.size * abs(pred), (mean, se, pred)


@pytest.mark.parametrize("name", list(SPECTRA))
@pytest.mark.parametrize("gamma,eta,shift", [(2.0, 0.7, 1.0), (0.5, 2.0, 0.3), (3.0, 0.0, 1.0)])
def test_two_equal_blocks_are_a_derivative(name, gamma, eta, shift):
    """tau(Q M Q M') = -d/de tau((S/eta + Lam + e M)^-1 M'): the k = 2 engine against the
    implicit derivative of the k = 1 deterministic equivalent, c eta + gamma E[c s/(c s + Lam)]
    = 1 and tau(Q M') = E[M'/(c s + Lam)], with c from scipy's brentq."""
    from scipy.optimize import brentq
    sp = SPECTRA[name]
    a, w = sp.atoms, sp.weights
    lam, m1, m2 = np.full(a.size, shift), 1.0 / (1.0 + a), np.sqrt(a)
    c = brentq(lambda c: c * eta + gamma * (w @ (c * a / (c * a + lam))) - 1.0, 1e-12, 1e6,
               xtol=1e-15, rtol=1e-15)
    den = c * a + lam
    dc = gamma * (w @ (c * a * m1 / den ** 2)) / (eta + gamma * (w @ (a * lam / den ** 2)))
    deriv = -(w @ (m2 * (a * dc + m1) / den ** 2))
    assert chain_trace(gamma, a, w, [eta], [lam], [m2]) == pytest.approx(w @ (m2 / den),
                                                                         rel=1e-11)
    two = chain_trace(gamma, a, w, [eta, eta], [lam, lam], [m1, m2])
    assert two == pytest.approx(-deriv, rel=1e-9)


def test_projection_is_the_ridgeless_limit():
    a, w = TWO.atoms, TWO.weights
    shifts = [np.ones(2), np.ones(2), 0.9 * a, 0.9 * a]
    for mids in ([a, np.ones(2), a ** 2, np.ones(2)], [a, 1 / a, np.ones(2), a]):
        proj = chain_trace(2.5, a, w, [0.0, 0.0, 1 / 0.3, 1 / 0.3], shifts, mids)
        # lam (S + lam)^-1 -> P^perp at rate O(lam).
        ridge = chain_trace(2.5, a, w, [1e-8, 1e-8, 1 / 0.3, 1 / 0.3], shifts, mids)
        assert ridge == pytest.approx(proj, rel=1e-6)


def test_engine_bad_input():
    a, w = TWO.atoms, TWO.weights
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        chain_trace(2.0, a, w, [1.0, 1.0], [np.ones(2)], [np.ones(2)])
    with pytest.raises(ValueError, match="projection block .* needs gamma > 1"):
        chain_trace(0.5, a, w, [0.0], [np.ones(2)], [np.ones(2)])


# --- reductions: Sigma = I, M -> infinity, M = 1, FedAvg -------------------------------------

GROUPS = [([2.0], [5]), ([0.5], [2]), ([1.5], [20]), ([0.5], [1]),
          ([2.0, 1.0, 4.0, 0.8], [1, 1, 1, 1]), ([3.0, 0.7], [4, 2])]


@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("gammas,counts,weights", [(g, c, "samples") for g, c in GROUPS] + [
    (g, c, "uniform") for g, c in GROUPS[4:]])
def test_identity_spectrum_reproduces_closed_forms(method, lam, gammas, counts, weights):
    """Sigma = I given as a one-atom spectrum at 2 (Sigma = 2 I) scales the bias by 2 and
    leaves the variance unchanged: against the Marchenko-Pastur closed forms of
    finite_clients (which the general route never calls)."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    k = len(gammas)
    r, sigma, lam = np.linspace(0.5, 2.0, k), np.linspace(0.2, 1.0, k), np.full(k, lam or 0.0)
    lam2 = 2.0 * lam       # Sigma = 2 I: ridge lam on S = 2 W is ridge lam / 2 on W
    b, v = sigma_group_limits(method, gammas, r, sigma, counts, lam2, weights,
                              riskcalc.Spectrum([2.0]))
    rb, rv = group_limits(method, gammas, r, sigma, counts, lam, weights)
    np.testing.assert_allclose(b, 2.0 * rb, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(v, rv, rtol=1e-10)


@pytest.mark.parametrize("name,method,lam,gamma", [
    (name, method, lam, gamma) for name in ("two-point", "two-point-aligned")
    for method, lam in CASES for gamma in (0.5, 2.0)] + [
    ("powerlaw-cond1e4", "ftfa", None, 2.0), ("powerlaw-cond1e4", "rtfa", 0.5, 0.5)])
def test_many_clients_recover_oracle(name, method, lam, gamma):
    """M -> infinity: the oracle general-spectrum limit (riskcalc.linear.engine.kappa, and tau(Y) for
    FedAvg) to 1e-6 at M = 1e8; the finite-M excess is O(1/M)."""
    sp = SPECTRA[name]
    kw = dict(gamma=gamma, r=1.3, sigma=0.7, spectrum=sp, **({"lam": lam} if lam else {}))
    oracle = riskcalc.limit(method, **kw)
    big = riskcalc.limit(method, clients=10 ** 8, **kw)
    for q in ("bias", "variance", "risk"):
        assert getattr(big, q) == pytest.approx(getattr(oracle, q), rel=1e-6, abs=1e-7)
    e4, e5 = (M * (riskcalc.limit(method, clients=M, **kw).risk - oracle.risk)
              for M in (10 ** 4, 10 ** 5))
    assert e5 == pytest.approx(e4, rel=2e-3)


@pytest.mark.parametrize("name", ["two-point", "two-point-aligned"])
@pytest.mark.parametrize("method,lam", CASES)
@pytest.mark.parametrize("gamma", [0.3, 0.8])
def test_single_client_is_least_squares(name, method, lam, gamma):
    """M = 1, n > d: the global model is least squares, which every method keeps: bias 0 and
    variance sigma^2 gamma tau(Sigma S^-1) = sigma^2 gamma / (1 - gamma) for any spectrum (for
    RTFA the own, cross and global variance terms must add up to it exactly)."""
    res = riskcalc.limit(method, gamma=gamma, r=1.3, sigma=0.7, clients=1,
                         spectrum=SPECTRA[name], **({"lam": lam} if lam else {}))
    assert abs(res.bias) <= 1e-12
    assert res.variance == pytest.approx(0.49 * gamma / (1 - gamma), rel=1e-10)


@pytest.mark.parametrize("name", ["two-point", "two-point-aligned", "empirical-10k"])
@pytest.mark.parametrize("gammas,counts", GROUPS[:3] + GROUPS[4:])
def test_fedavg_scales_with_the_signal_mean(name, gammas, counts):
    """FedAvg: Sigma is free from the W_j, so its bias is int s dG times the Sigma = I bias and
    its variance is unchanged (also with G != H); and the engine's K-only chains equal the
    freeness shortcuts the FedAvg branch uses."""
    sp = SPECTRA[name]
    k = len(gammas)
    r, sigma = np.linspace(0.5, 2.0, k), np.linspace(0.2, 1.0, k)
    gen = riskcalc.clients_limit("fedavg", gamma=np.repeat(gammas, counts),
                                 r=np.repeat(r, counts), sigma=np.repeat(sigma, counts),
                                 spectrum=sp)
    iso = riskcalc.clients_limit("fedavg", gamma=np.repeat(gammas, counts),
                                 r=np.repeat(r, counts), sigma=np.repeat(sigma, counts))
    np.testing.assert_allclose(gen.bias, sp.signal_mean * iso.bias, rtol=1e-12)
    np.testing.assert_allclose(gen.variance, iso.variance, rtol=1e-12)
    gam, cnt = np.asarray(gammas, float), np.asarray(counts, float)
    p, g, x, u, var_r = subordination(gam, cnt, "samples")
    a, w = sp.atoms, sp.weights
    y = a * a * np.divide(sp.signal_weights, w, out=np.zeros_like(w), where=w > 0)
    for i in range(k):
        K = (1.0 / p[i], p[i] * u[i] * a)              # (p S + omega Sigma)^-1, omega = p u
        k0 = (x[i] ** 2 + var_r[i]) / p[i] ** 2
        kk = [1 / p[i], 1 / p[i]], [K[1], K[1]]
        assert chain_trace(gam[i], a, w, *kk, [y, a]) == pytest.approx(k0 * sp.signal_mean,
                                                                       rel=1e-9)
        assert chain_trace(gam[i], a, w, *kk, [a, a]) == pytest.approx(k0, rel=1e-9)
        assert chain_trace(gam[i], a, w, [1 / p[i]], [K[1]], [a]) == pytest.approx(g, rel=1e-9)


@pytest.mark.parametrize("method,lam", CASES[1:])
def test_other_clients_noise_is_a_weight_derivative(method, lam):
    """Second route for the noise of client j != i: A + e S_j is the same federation with
    p_j + e, so tau(F A^-1 S_j A^-1) = (d omega / d p_j) tau(F K Sigma K), omega the target's
    subordination shift (differentiated implicitly through sum_l p_l g / (1 + gamma_l p_l g)
    = 1) and the trace a chain (the engine); the module conditions on everything but W_j
    instead."""
    gam = np.array([2.0, 1.5, 4.0, 3.0])
    p, g = subordination(gam, np.ones(4), "uniform")[:2]
    q = 1.0 + gam * p * g
    omega = np.sum((p / q)[1:])
    dg = -(g / q ** 2) / np.sum(p / q ** 2)             # d g / d p_j
    domega = 1.0 / q ** 2 - np.sum((gam * p ** 2 / q ** 2)[1:]) * dg
    a, w, one = TWO.atoms, TWO.weights, np.ones(2)
    R = (lam or 0.0, one)
    K = (1.0 / p[0], omega * a)
    t2 = chain_trace(gam[0], a, w, [R[0], R[0], K[0], K[0]], [R[1], R[1], K[1], K[1]],
                     [a, one, a, one])
    for j in (1, 2, 3):
        var = riskcalc.clients_limit(method, gamma=gam, r=1.0, sigma=np.eye(4)[j], lam=lam,
                                     weights="uniform", spectrum=TWO).variance[0]
        assert var == pytest.approx(p[j] ** 2 * gam[j] * domega[j] * t2, rel=1e-9)


# --- simulation --------------------------------------------------------------------------------

def test_signal_weights_against_dense_conditional_bias():
    """G != H (signal concentrated on the small eigenvalue, E delta delta^T = r^2 Phi / d):
    the bias against its exact conditional value given the designs, by dense linear algebra
    (the montecarlo pipeline's federated measure takes a uniform direction only), at d = 400,
    6 replicates; allowance 4 s.e. + 3/d relative (O(1/d), as for the chains; measured
    -0.01% +- 0.15% at d = 600 with 8 replicates)."""
    sp = riskcalc.Spectrum([1.0, 10.0], weights=[0.5, 0.5], signal_weights=[0.8, 0.2])
    d, reps, gam, r = 400, 6, np.array([2.0, 2.0, 1.0]), np.array([1.0, 1.5, 0.7])
    rng = np.random.default_rng(31)
    s = sp.eigenvalues(d)
    phi = np.where(s == 1.0, 0.8, 0.2) / 0.5
    p = (1 / gam) / np.sum(1 / gam)
    sims = {"ftfa": [], "rtfa": []}
    for _ in range(reps):
        X = [rng.standard_normal((int(d / g), d)) * np.sqrt(s) for g in gam]
        S = [x.T @ x / x.shape[0] for x in X]
        Ainv = np.linalg.inv(sum(pj * Sj for pj, Sj in zip(p, S)))
        q = np.linalg.qr(X[0].T)[0]
        for method, R in (("ftfa", np.eye(d) - q @ q.T),
                          ("rtfa", 0.5 * np.linalg.inv(S[0] + 0.5 * np.eye(d)))):
            total = 0.0
            for j in range(gam.size):
                Mj = p[j] * Ainv @ S[j] - (np.eye(d) if j == 0 else 0.0)
                RM = R @ Mj
                total += r[j] ** 2 / d * np.einsum("a,ab,b,ab->", s, RM, phi, RM)
            sims[method].append(total)
    for method, lam in (("ftfa", None), ("rtfa", 0.5)):
        pred = riskcalc.clients_limit(method, gamma=gam, r=r, sigma=0.0, lam=lam,
                                      spectrum=sp).bias[0]
        mean, se = mean_se(sims[method])
        assert abs(mean - pred) <= 4 * se + 3.0 / d * pred, (method, mean, se, pred)


def _simulate(spec, setting, methods, reps, seed):
    """Exact conditional risks of the target (client 0) of the federated pipeline, per method
    (one instance per replicate, decomposed once, serves every method)."""
    out = {m: [] for m, _ in methods}
    for rep in range(reps):
        inst = sample_instance(spec, setting, seed, rep)
        res = measure_many(inst, [(m, [lam or 0.0]) for m, lam in methods])
        for (m, _), r in zip(methods, res):
            out[m].append(r["risk"][0])
    return out


THREE = [("fedavg", None), ("ftfa", None), ("rtfa", 0.5)]
OTHERS = dict(gammas=(1.5, 4.0, 3.0), rs=(2.0, 0.5, 1.5), sigmas=(0.3, 1.0, 0.2))
PIPELINE = [  # (d, gamma, setting options, methods, replicates)
    (800, 2.0, dict(clients=5), THREE, 2),
    (800, 2.0, dict(clients=20), [("ftfa", None)], 2),
    (800, 0.5, dict(clients=2, weights="uniform"), [("rtfa", 0.5)], 2),
    (400, 2.0, dict(clients=4, weights="uniform", **OTHERS), THREE, 3),
]


@pytest.mark.parametrize("d,gamma,extra,methods,reps", PIPELINE)
def test_pipeline_simulation(d, gamma, extra, methods, reps):
    """Predicted vs the exact conditional risk of the federated pipeline (montecarlo) with the
    two-point spectrum {1, 10}. Allowance 4 s.e. + 0.5% relative: the finite-d deviation is
    O(1/d); measured within 0.15% at d = 800 away from the N = d threshold (3 replicates:
    M = 2, 5, 20, gamma = 0.5 and 2, all three methods), within 0.02% at d = 1600 (M = 5, 20;
    8 replicates) and within 0.26% at d = 400 for a heterogeneous federation (6 replicates).
    Heavier points (M = 100, gamma < 1 with M = 20) are measured in the branch's report,
    not here (the test file stays under ~30 s)."""
    setting = Setting(d=d, global_model="federated", **{"weights": "samples", **extra})
    spec = riskcalc.ClientSpec("ftfa", gamma=gamma, r=1.0, sigma=0.5, spectrum=TWO)
    gam, r, sigma = client_params(spec, setting)
    sims = _simulate(spec, setting, methods, reps, 3)
    for method, lam in methods:
        pred = riskcalc.clients_limit(method, gamma=gam, r=r, sigma=sigma, lam=lam,
                                      weights=setting.weights, spectrum=TWO).risk[0]
        mean, se = mean_se(sims[method])
        assert abs(mean - pred) <= 4 * se + 0.005 * pred, (method, mean, se, pred)


def test_error_shrinks_with_d():
    """FTFA, gamma = 1.5, M = 2 (N = 4d/3, near the threshold, where the O(1/d) deviation is
    largest): the relative error at d = 800 is below that at d = 200 by more than 2 s.e. of
    the difference (measured +1.9% +- 0.4% at d = 200 with 60 replicates, +0.2% +- 0.1% at
    d = 800 with 4)."""
    spec = riskcalc.ClientSpec("ftfa", gamma=1.5, r=1.0, sigma=0.5, spectrum=TWO)
    pred = riskcalc.spec_limit(spec, clients=2).risk
    errs = []
    for d, reps in ((200, 40), (800, 3)):
        sims = _simulate(spec, Setting(d=d, clients=2, global_model="federated",
                                       weights="samples"), [("ftfa", None)], reps, 4)
        mean, se = mean_se(sims["ftfa"])
        errs.append(((mean - pred) / pred, se / pred))
    (e200, s200), (e800, s800) = errs
    assert e200 - e800 > 2 * np.hypot(s200, s800), errs


# --- batches: every point of a batch as if solved alone ------------------------------------------

BATCH_SPECTRA = {"identity": riskcalc.Spectrum([2.0]), "two-point": TWO,
                 "power-law": riskcalc.Spectrum.power_law(1.0, 300)}


@pytest.mark.parametrize("name", list(BATCH_SPECTRA))
def test_chain_batch_equals_points_alone(name, monkeypatch):
    """chain_traces over 40 points (gamma on both sides of 1, ridge, projection and K blocks,
    shifts and middles varying per point) equals chain_traces on each point alone to 1e-12
    relative, also given the diagonal roots from diagonal_roots; small memory blocks make the
    batch span several blocks. Both calls converge the same per-point Newton iterations, so
    only summation order may differ (a few ulps)."""
    from riskcalc.linear.engine import kappa
    from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots
    sp = BATCH_SPECTRA[name]
    a, w = sp.atoms, sp.weights
    rng = np.random.default_rng(7)
    n_pts = 40
    gamma = rng.choice([0.3, 0.9, 1.0, 1.1, 2.5, 6.0], n_pts)
    ridge = rng.uniform(0.01, 5.0, n_pts)
    eta = np.column_stack([np.where(gamma > 1, 0.0, ridge)] * 2 + [1 / rng.uniform(0.01, 1.0,
                                                                                    n_pts)] * 2)
    omega = rng.uniform(0.05, 3.0, n_pts)[:, None] * a
    shifts = np.stack([np.ones((n_pts, a.size))] * 2 + [omega] * 2, axis=1)
    middles = np.stack([a * rng.uniform(0.5, 2.0, (n_pts, 1)), np.ones((n_pts, a.size)),
                        a ** rng.uniform(0.0, 2.0, (n_pts, 1)), 1 / (1 + a) + 0 * omega], axis=1)
    alone = np.array([chain_traces(gamma[i], a, w, eta[i], shifts[i], middles[i])
                      for i in range(n_pts)])
    monkeypatch.setattr(kappa, "_BLOCK", 7 * 4 * a.size)  # blocks of 7 points
    batch = chain_traces(gamma, a, w, eta, shifts, middles)
    roots = np.column_stack([diagonal_roots(gamma, a, w, eta[:, j], shifts[:, j])
                             for j in range(4)])
    given = chain_traces(gamma, a, w, eta, shifts, middles, roots)
    assert np.all(np.isfinite(alone)) and np.ptp(alone) > 0
    np.testing.assert_allclose(batch, alone, rtol=1e-12, atol=0)
    np.testing.assert_allclose(given, alone, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", list(BATCH_SPECTRA))
@pytest.mark.parametrize("weights", ["samples", "uniform"])
def test_group_batch_equals_groups_alone(name, weights):
    """sigma_group_limits for all 9 groups of a heterogeneous federation (gamma on both sides
    of 1, including 1, with r, sigma (one 0), RTFA's lam and counts varying) equals its
    targets=[i] calls one group at a time to 1e-12 relative, for FedAvg, FTFA and RTFA."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    rng = np.random.default_rng(8)
    gam = np.array([0.4, 0.8, 1.0, 1.3, 2.0, 3.0, 5.0, 0.6, 8.0])
    r, sigma = rng.uniform(0.2, 2.0, gam.size), rng.uniform(0.1, 1.0, gam.size)
    sigma[3] = 0.0
    count, lam = rng.integers(1, 4, gam.size), rng.uniform(0.05, 3.0, gam.size)
    for method in ("fedavg", "ftfa", "rtfa"):
        args = (method, gam, r, sigma, count, lam, weights, BATCH_SPECTRA[name])
        batch = np.array(sigma_group_limits(*args))
        alone = np.column_stack([sigma_group_limits(*args, targets=[i]) for i in range(gam.size)])
        fin = np.isfinite(alone)
        assert np.array_equal(np.isfinite(batch), fin) and fin.sum() >= 2 * gam.size - 1
        np.testing.assert_allclose(batch[fin], alone[fin], rtol=1e-12, atol=0)


def test_batch_bad_input():
    """A bad point fails the whole batch with a message naming it; so do shapes that do not
    broadcast and out-of-range targets."""
    from riskcalc.linear.finite_clients.sigma import sigma_group_limits
    from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots
    a, w, one = TWO.atoms, TWO.weights, np.ones((1, 2))
    with pytest.raises(ValueError, match="projection block .* got gamma = 0.7"):
        chain_traces([2.0, 0.7], a, w, [0.0], one, one)
    with pytest.raises(ValueError, match="one number of points"):
        chain_traces([2.0, 3.0], a, w, [[1.0]] * 3, one, one)
    with pytest.raises(ValueError, match=r"shape \(1, 2\) \(or \(points, 1, 2\)\)"):
        chain_traces([2.0, 3.0], a, w, [1.0], np.ones((2, 2, 2)), one)
    with pytest.raises(ValueError, match=r"roots must have shape \(1,\) or \(points, 1\)"):
        chain_traces([2.0, 3.0], a, w, [1.0], one, one, roots=[[1.0, 1.0]])
    with pytest.raises(ValueError, match="projection block .* got gamma = 0.5"):
        diagonal_roots([2.0, 0.5], a, w, 0.0, [1.0, 1.0])
    # Lam = 0 at gamma > 1: c eta + gamma > 1 for every c, no bracket.
    with pytest.raises(riskcalc.SolverError, match="no bracket"):
        chain_traces([2.0, 3.0], a, w, [1.0], np.array([[[1.0, 1.0]], [[0.0, 0.0]]]), one)
    with pytest.raises(ValueError, match=r"targets must be group indices in \[0, 1\]"):
        sigma_group_limits("ftfa", [2.0, 1.5], [1.0] * 2, [0.5] * 2, [1, 1], [0.0] * 2,
                           "samples", TWO, targets=[2])
