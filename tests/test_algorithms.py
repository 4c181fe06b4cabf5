"""The papers' iterative algorithms against exact minimizers computed by Newton's method (an
independent route), their limits in lam, their cost accounting, and paper 001 Fig. 2 /
paper 000 Fig. 1 qualitatively."""

import numpy as np
import pytest

from montecarlo.experiments.algorithms import (ALGORITHMS, apgd1, apgd2, fedavg, fedprox,
                                               fedprox_bilevel, finetune, l2gd, local_training,
                                               pfedme)
from montecarlo.experiments.problems import paper000_instance, quadratic_instance
from montecarlo.experiments.metrics import exact_solution, rounds_to_accuracy
from montecarlo.experiments.newton import damped_newton
from montecarlo.experiments.objectives import ClientLosses, minimize, prox
from montecarlo.experiments.presets_run import run_preset, summarize

# Stated convergence tolerance (sup-norm distance of every local model to the exact minimizer).
TOL = 1e-6


@pytest.fixture(scope="module")
def inst():
    """A small strongly convex problem: 3 clients, 40 samples, d = 4, ridge 0.1, R in {0, 3}."""
    return paper000_instance(R=[0.0, 3.0], m=3, n=40, d=4, n_test=500, l2=0.1, seed=11)


def dist(traj, data):
    _, W = exact_solution(traj, data)
    return np.max(np.abs(traj.local[-1] - W))


@pytest.mark.parametrize("algo, kwargs", [
    (fedavg, dict(rounds=300, local_epochs=1, batch_size=None, lr=1.0, global_lr=1.0)),
    (local_training, dict(epochs=300, batch_size=None, lr=1.0)),
    (finetune, dict(rounds=20, local_epochs=1, batch_size=None, lr=1.0, finetune_epochs=300,
                    finetune_lr=1.0)),
    (fedprox, dict(lam=1.0, rounds=300, local_epochs=1, batch_size=None, lr=0.5,
                   global_lr=0.5)),
    (fedprox_bilevel, dict(lam=1.0, rounds=150)),
    (pfedme, dict(lam=1.0, rounds=300, local_steps=1, batch_size=None, lr=0.5, inner_steps=40)),
    (apgd1, dict(lam=1.0, iterations=150)),
    (apgd2, dict(lam=1.0, iterations=150)),
])
def test_converges_to_exact_minimizer(inst, algo, kwargs):
    traj = algo(inst, **kwargs)
    assert dist(traj, inst) < TOL
    # The objective's global model too (FedAvg: the global minimizer; FedProx: mean of locals).
    wg, _ = exact_solution(traj, inst)
    if traj.objective != "local":
        assert np.max(np.abs(traj.global_model[-1] - wg)) < TOL


def test_l2gd_reaches_a_neighbourhood_shrinking_with_the_step(inst):
    errs = [dist(l2gd(inst, lam=1.0, iterations=4000, step=s, record_every=4000), inst)
            for s in (0.5, 0.05)]
    assert errs[1] < 0.02 and errs[1] < errs[0] / 3


def test_fedavg_with_local_steps_drifts(inst):
    # Several local steps on heterogeneous clients: the fixed point is not the global minimizer
    # (client drift, documented in fedavg). At R = 0 the clients differ only by sampling, so the
    # drift is smaller there than at R = 3.
    traj = fedavg(inst, rounds=400, local_epochs=5, batch_size=None, lr=0.5, global_lr=1.0)
    wg, _ = exact_solution(traj, inst)
    gap = np.max(np.abs(traj.global_model[-1] - wg), axis=-1)
    assert gap[1] > 1e-3 and gap[1] > gap[0]


def test_sgd_reproducible_and_grid_equals_single_instances(inst):
    kw = dict(rounds=3, local_epochs=2, batch_size=7, lr=0.3, clients_per_round=2, seed=5)
    a, b = fedprox(inst, lam=0.5, **kw), fedprox(inst, lam=0.5, **kw)
    assert np.array_equal(a.local, b.local)
    assert not np.array_equal(a.local, fedprox(inst, lam=0.5, **dict(kw, seed=6)).local)
    single = paper000_instance(R=3.0, m=3, n=40, d=4, n_test=500, l2=0.1, seed=11)
    c = fedprox(single, lam=0.5, **kw)
    assert np.allclose(a.local[:, 1], c.local, atol=1e-12)


def test_finetune_starts_from_fedavg(inst):
    kw = dict(rounds=4, local_epochs=2, batch_size=8, lr=0.2, global_lr=0.8, seed=1)
    fa, ft = fedavg(inst, **kw), finetune(inst, finetune_epochs=3, **kw)
    assert np.array_equal(fa.local, ft.local[:5])
    assert ft.rounds[-1] == 4 and len(ft.rounds) == 8


def test_fedprox_lambda_zero_is_local_training(inst):
    kw = dict(batch_size=8, lr=0.2, seed=3)
    prox0 = fedprox(inst, lam=0.0, rounds=4, local_epochs=5, final_epochs=5, **kw)
    local = local_training(inst, epochs=25, **kw)
    assert np.allclose(prox0.local[-1], local.local[-1], atol=1e-12)


def test_fedprox_large_lambda_is_fedavg(inst):
    # Alg. 2 with lam = 1e3 and a local step below 2 / (L + lam): the local models are pulled
    # onto the global one, which does gradient descent on FedAvg's objective (the server step
    # lam * global_lr * (w_g - w_i) ~ global_lr * grad f_i). Everything is within O(1/lam) of
    # FedAvg's minimizer.
    lam = 1e3
    traj = fedprox(inst, lam=lam, rounds=300, local_epochs=3, batch_size=None,
                   lr=1.0 / (lam + 2.0), global_lr=0.5)
    wg, _ = minimize(inst.train, "global")
    assert np.max(np.abs(traj.global_model[-1] - wg)) < 5e-4
    assert np.max(np.abs(traj.local[-1] - wg[..., None, :])) < 5e-4
    # and the bilevel algorithm (Cor. 1 steps adapt to lam) reaches the same limit.
    bil = fedprox_bilevel(inst, lam=1e4, rounds=60)
    assert np.max(np.abs(bil.global_model[-1] - wg)) < 1e-3


def test_bilevel_inner_steps_follow_theorem2(inst):
    traj = fedprox_bilevel(inst, lam=1.0, rounds=2)
    K = traj.params["inner_steps"]
    # eq. (12) with Cor. 1's steps: (2 + 64 (lam/mu)^2) (1 - (mu+lam)/(L+lam))^K <= 1/16.
    L, mu, lam = np.max(inst.train.smoothness()), 0.1, 1.0
    q = 1 - (mu + lam) / (L + lam)
    assert (2 + 64 * (lam / mu) ** 2) * q ** K <= 1 / 16 < (2 + 64 * (lam / mu) ** 2) * q ** (K - 1)
    assert list(traj.grad_evals) == [0, K, 2 * K] and list(traj.rounds) == [0, 1, 2]
    with pytest.raises(ValueError, match="inner_steps"):
        fedprox_bilevel(inst, lam=1.0, step_rule="section6")


def test_bilevel_client_sampling(inst):
    # Sampling every client is Alg. 1 itself, bit for bit.
    full = fedprox_bilevel(inst, lam=1.0, rounds=5, inner_steps=10)
    all3 = fedprox_bilevel(inst, lam=1.0, rounds=5, inner_steps=10, clients_per_round=3)
    assert np.array_equal(full.local, all3.local)
    assert np.array_equal(full.global_model, all3.global_model)
    lam = 1.0
    kw = dict(lam=lam, rounds=200, inner_steps=10, clients_per_round=1, seed=4)
    one = fedprox_bilevel(inst, **kw)
    assert np.array_equal(one.local, fedprox_bilevel(inst, **kw).local)
    assert not np.array_equal(one.local, fedprox_bilevel(inst, **dict(kw, seed=5)).local)
    # One client trains per round (the same one at every grid point); the others keep theirs.
    moved = np.any(one.local[1:] != one.local[:-1], axis=-1)
    assert np.all(moved.sum(-1) == 1) and np.all(moved[:, 0] == moved[:, 1])
    # Every client is sampled within 200 rounds, and the server's step is the sampled
    # client's Moreau-gradient estimate: w_g <- w_g - gamma lam (w_g - w_i).
    assert moved[:, 0].any(0).all()
    gamma = np.asarray(one.params["global_lr"])[..., None]
    i = moved.argmax(-1)[:, 0]
    w_i = np.take_along_axis(one.local[1:], i[:, None, None, None], axis=-2)[..., 0, :]
    assert np.allclose(one.global_model[1:], one.global_model[:-1]
                       - gamma * lam * (one.global_model[:-1] - w_i), rtol=0, atol=1e-12)
    assert np.allclose(one.grad_evals, 10 * np.arange(201) / 3)
    # With a constant step the sampled iterates hover near the minimizer instead of reaching
    # it: far closer than the start, not as close as full participation (tested above).
    wg, _ = exact_solution(one, inst)
    err = np.linalg.norm(one.global_model - wg, axis=-1)
    assert np.all(err[-50:].mean(0) < 0.3 * err[0])


def test_cost_accounting(inst):
    t = fedavg(inst, rounds=3, local_epochs=2, batch_size=16, clients_per_round=2)
    assert list(t.rounds) == [0, 1, 2, 3]
    steps = 2 * 3                                   # 2 epochs x ceil(40 / 16) batches
    assert np.allclose(t.grad_evals, np.arange(4) * steps * 2 / 3)
    a1 = apgd1(inst, lam=1.0, iterations=5)
    assert list(a1.rounds) == list(range(6)) and list(a1.prox_evals) == list(range(6))
    l2 = l2gd(inst, lam=1.0, iterations=500, seed=2, record_every=500)
    assert 0 < l2.rounds[-1] <= 500 - l2.grad_evals[-1]


@pytest.mark.parametrize("call, name", [
    (lambda d: fedavg(d, batch_size=100), "batch_size"),
    (lambda d: fedavg(d, clients_per_round=4), "clients_per_round"),
    (lambda d: fedavg(d, lr=0.0), "lr"),
    (lambda d: local_training(d, epochs=-1), "epochs"),
    (lambda d: fedprox(d, lam=-1.0), "lam"),
    (lambda d: fedprox_bilevel(d, lam=1.0, step_rule="fast"), "step_rule"),
    (lambda d: fedprox_bilevel(d, lam=1.0, clients_per_round=4), "clients_per_round"),
    (lambda d: pfedme(d, lam=1.0, beta=0.0), "beta"),
    (lambda d: l2gd(d, lam=1.0, p=1.0), "p"),
    (lambda d: apgd1(d, lam=0.0), "lam"),
    (lambda d: apgd2(d.train.__class__(d.train.X, d.train.y), lam=1.0), "mu"),
    (lambda d: fedavg("data"), "data"),
])
def test_validation(inst, call, name):
    with pytest.raises(ValueError, match=name):
        call(inst)


def test_registry_names():
    assert set(ALGORITHMS) == {"fedavg", "local", "finetune", "fedprox", "fedprox_bilevel",
                               "pfedme", "l2gd", "apgd1", "apgd2"}


def test_apgd_round_counts_paper001_fig2():
    # Paper 001 Fig. 2: rounds to get 1e4 times closer to the optimum. APGD2 ~ sqrt(L/mu),
    # flat in lam; APGD1 ~ sqrt((lam + mu)/mu), growing like sqrt(lam); they cross near lam = L.
    quad = quadratic_instance(m=20, d=20, L=1.0, mu=1e-2, seed=0)
    lams = [0.01, 0.1, 1.0, 10.0, 100.0]
    counts = {}
    for algo in (apgd1, apgd2):
        for lam in lams:
            traj = algo(quad, lam=lam, iterations=1200)
            counts[algo.__name__, lam] = float(rounds_to_accuracy(traj, exact_solution(traj, quad)))
    a1 = np.array([counts["apgd1", x] for x in lams])
    a2 = np.array([counts["apgd2", x] for x in lams])
    assert np.all(np.isfinite(a1)) and np.all(np.isfinite(a2))
    assert a2.max() / a2.min() < 2.5                                   # flat in lam
    slope = np.polyfit(np.log(lams[2:]), np.log(a1[2:]), 1)[0]
    assert 0.4 < slope < 0.75                                          # ~ sqrt(lam)
    assert a1[1] < a2[1] and a1[3] > a2[3]                             # APGD1 wins iff lam < L
    assert 0.6 < a1[2] / a2[2] < 1.6                                   # crossing near lam = L


def test_squared_prox_closed_form_against_newton():
    # The squared loss's prox is a linear solve in the eigenbasis of X'X/n; checked against its
    # optimality condition grad f_i(w) + lam (w - v) = 0 evaluated from the raw data, and
    # against damped Newton (the route of every other loss). n < d makes X'X/n singular (l2
    # carries the strong convexity); X has a batch axis, V another one broadcast against it.
    rng = np.random.default_rng(5)
    losses = ClientLosses(rng.standard_normal((2, 1, 3, 4, 6)), rng.standard_normal((3, 4)),
                          loss="squared", l2=1e-3)
    big = float(losses.smoothness().max())
    for lam in (1e-3, 1.0, 1e3):
        V = rng.standard_normal((2, 5, 3, 6))
        W = prox(losses, V, lam)
        assert W.shape == (2, 5, 3, 6)
        grad = lambda U: losses.grad(U) + lam * (U - V)
        # A backward-stable 6 x 6 solve leaves a residual of a few eps * ||A|| * ||w||.
        scale = (big + lam) * (1.0 + np.max(np.abs(W))) + lam * np.max(np.abs(V))
        assert np.max(np.abs(grad(W))) < 1e-13 * scale
        newton = damped_newton(lambda U: losses.value(U) + 0.5 * lam * np.sum((U - V) ** 2, -1),
                               grad, lambda U: losses.hessian(U) + lam * np.eye(6),
                               np.array(V), 1e-13 * scale, "prox")
        # (lam + l2)-strong convexity: |w - w'| <= |grad(w) - grad(w')| / (lam + l2).
        bound = 2e-13 * scale * np.sqrt(6) / (lam + losses.l2)
        assert np.max(np.linalg.norm(W - newton, axis=-1)) < bound


def test_exact_minimizers_reuse_each_point_to_the_same_bits(inst, monkeypatch):
    # The exact minimizers compute the margins, sigmoids, value, gradient and Hessian at a
    # point once (a FedProx minimizer once across its prox solves and envelope): the same
    # minimizers to the bit as with all of them recomputed at every call, with fewer sigmoids.
    from montecarlo.experiments.objectives import losses as objectives, minimizers

    count = {"expit": 0}

    def expit(z):
        count["expit"] += z.size
        return np.reciprocal(1.0 + np.exp(-z))

    def recomputed(losses, wrap=None):
        at = (lambda x: objectives._Point(losses, x if wrap is None else wrap(x)))
        return (lambda x: at(x).value(), lambda x: at(x).grad(), lambda x: at(x).hessian())

    monkeypatch.setattr(objectives, "expit", expit)
    runs = {}
    for how in ("reused", "recomputed"):
        if how == "recomputed":
            monkeypatch.setattr(minimizers, "_derivatives", recomputed)
        count["expit"] = 0
        runs[how] = [minimize(inst.train, objective, 0.5)
                     for objective in ("global", "local", "fedprox")], count["expit"]
    for a, b in zip(runs["reused"][0], runs["recomputed"][0]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    # 11,760 sigmoid evaluations against 20,160
    assert runs["reused"][1] < 0.7 * runs["recomputed"][1], (runs["reused"][1],
                                                           runs["recomputed"][1])


def test_take_is_the_checked_losses_of_those_instances():
    # take(index) skips the checks of data already checked: the losses the constructor builds
    # from the same slices, to the bit (features broadcast over the radii, labels not)
    from montecarlo.experiments.rates import lemma7_instance

    inst = lemma7_instance(np.array([0.1, 0.4]), reps=3, m=2, n=30, d=3, l2=1e-3, seed=4)
    for j in range(2):
        mine = inst.train.take(np.s_[:, j])
        built = ClientLosses(inst.train.X[:, 0], inst.train.y[:, j], l2=1e-3)
        assert (mine.batch_shape, mine.loss, mine.l2) == (built.batch_shape, "logistic", 1e-3)
        for a, b in zip(minimize(mine, "fedprox", 0.3), minimize(built, "fedprox", 0.3)):
            np.testing.assert_array_equal(a, b)


def test_paper000_fig1_qualitative():
    # Paper 000 Fig. 1 (left): FedAvg best at R = 0, local training best at large R,
    # fine-tuning close to the better of the two everywhere.
    rows = run_preset("paper000-fig1", {"R": [0.0, 20.0], "methods": "fedavg,local,finetune",
                                        "n_test": 2000}, reps=3, seed=1)
    acc = {k: v[0] for k, v in summarize(rows).items()}
    assert acc["fedavg", 0.0] > acc["local", 0.0] + 0.05
    assert acc["local", 20.0] > acc["fedavg", 20.0] + 0.05
    for R in (0.0, 20.0):
        assert acc["finetune", R] > max(acc["fedavg", R], acc["local", R]) - 0.03
