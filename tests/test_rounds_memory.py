"""The memory budget of the rounds routes under a spectrum
(``riskcalc.linear.dynamics.sigma.budget``, estimates in ``sigma.memory``):
``rounds_limit(..., max_gigabytes=G)`` and ``predict --max-memory GB`` set one limit for every
route's estimated peak memory (default ``budget.MAX_GIGABYTES``), for the curves and for the
lazily computed own models; refusals name the estimate, the limit and what would fit.

As in ``tests/test_rounds_budget.py`` the estimates are replaced by constants where the check is
about which limit applies (not about the machine). The estimates' own form is checked against
the counts derived in ``sigma.memory`` (monotone, the growth in M and K of their largest
terms); on the dense route, the own models' peak (the numpy arrays ``tracemalloc`` traces)
against the estimate their memory check computed; and the memory-saving reads of
``Alg1Chain.two_point`` (each conjugate node's factors read as the conjugate of its node's,
nothing held twice) against the factors formed at the conjugate nodes themselves."""

import re
import tracemalloc

import numpy as np
import pytest

import riskcalc
from riskcalc.linear.dynamics.sigma import budget, memory, prox_sigma
from riskcalc.linear.dynamics.shift.pencil import ShiftPencil
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, stable_top

CASE = dict(gamma=[0.5, 2.0], r=0.3, sigma=0.5, signal=1.0, rounds=[0, 3], local_steps=2,
            step_size=0.1, spectrum="two-point:0.5,2,0.5")
ARGV = ["predict", "fedavg", "--gamma", "0.5", "--r", "0.3", "--sigma", "0.5", "--clients",
        "2", "--signal", "1", "--rounds", "0,3", "--local-step-size", "0.1", "--local-steps",
        "2", "--spectrum", "two-point:0.5,2,0.5"]


def test_memory_budget_follows_the_innermost_block():
    assert budget.allowed_bytes() == 1e9 * budget.MAX_GIGABYTES
    with budget.budgets(None, 0.5):
        assert budget.allowed_bytes() == 5e8
        with budget.memory_budget(None):
            assert budget.allowed_bytes() == 1e9 * budget.MAX_GIGABYTES
        assert budget.allowed_bytes() == 5e8
    assert budget.allowed_bytes() == 1e9 * budget.MAX_GIGABYTES


@pytest.mark.parametrize("bad", [0.0, -1.0, np.nan, True, "4"])
def test_bad_max_gigabytes(bad):
    with pytest.raises(ValueError, match=r"^max_gigabytes must .*\(or None: 4 GB\)$"):
        riskcalc.rounds_limit("fedavg", **CASE, max_gigabytes=bad)


def test_refusal_names_estimate_limit_and_what_fits():
    """A synthetic estimate 1e5 M K^2 nodes (bytes): each change that alone fits is named."""
    def need(m, k, x):
        return 1e5 * m * k * k * x
    with budget.memory_budget(1.0):
        assert budget.check_memory(need, (2, 5, 20), "x") == need(2, 5, 20)
        with pytest.raises(ValueError) as exc:
            budget.check_memory(need, (4, 10, 40), "the test route")
        with pytest.raises(ValueError) as gap:          # nodes set by the spectrum's gap
            budget.check_memory(need, (4, 10, 40), "the test route", nodes_follow_rounds=False)
    msg = str(exc.value)
    assert "the test route would hold about 1.6 GB" in msg and "1 GB allowed" in msg
    # 1.6e7 k^2 <= 1e9: k <= 7; 4e7 x <= 1e9: x <= 25 nodes, rounds 9; 4e8 m <= 1e9: m <= 2.
    assert "local_steps <= 7, or rounds up to about 9, or clients <= 2" in msg
    assert "max_gigabytes" in msg and "--max-memory" in msg
    assert "rounds up to" not in str(gap.value) and "clients <= 2" in str(gap.value)


def test_the_lazy_own_models_keep_the_budget(monkeypatch):
    """The own models' estimate (their dense pencil has 1 + M (K + 1) = 7 blocks) set to 5 GB:
    ``local_risk``, computed when first read, is refused under the default 4 GB and computed
    under the 6 GB the curves were given (the curves themselves: the command line's test)."""
    monkeypatch.setattr(memory, "estimate",
                        lambda route, size, blocks, *a, **kw: 5e9 if blocks == 7 else 1e6)
    small = riskcalc.rounds_limit("fedavg", **CASE)
    with pytest.raises(ValueError, match="own models.*5 GB.*4 GB allowed.*max_gigabytes"):
        small.local_risk
    large = riskcalc.rounds_limit("fedavg", **CASE, max_gigabytes=6)
    assert np.all(np.isfinite(large.local_risk))


def test_command_line_passes_max_memory(monkeypatch, capsys):
    from riskcalc.cli import main

    monkeypatch.setattr(memory, "estimate", lambda *a, **kw: 5e9)
    assert main(ARGV) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: spectrum:") and err.count("\n") == 1 and "--max-memory" in err
    assert main(ARGV + ["--max-memory", "6"]) == 0
    capsys.readouterr()
    for bad in ("0", "-2", "inf", "nan"):
        assert main(ARGV + ["--max-memory", bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --max-memory") and err.count("\n") == 1


def test_counts_are_monotone_and_grow_as_counted():
    """What every route holds grows with clients, local steps, atoms and nodes, and its
    largest terms give the growth: FedAvg's chain (coupling rows, M^2 K) about 4 times at
    twice M for many clients, Algorithm 1's chain (factors ~ 3 atoms M K^2 per node) about 4
    times at twice K for many steps, both linear in the nodes. The chunk of pair systems (the
    pairs the code plans per 150 MB, with room for the fallback in X) stays below 0.4 GB
    (it is not monotone: fewer pairs fit per chunk as K grows)."""
    counts = {"fedavg_chain": lambda m, k, a, x: memory.fedavg_chain_count(m, k, a, 2 * x - 16,
                                                                           x),
              "alg1_chain": lambda m, k, a, x: memory.alg1_chain_count(m, k, a, x),
              "own_chain": lambda m, k, a, x: memory.own_chain_count(m, k, a, 2 * x, x),
              "dense": lambda m, k, a, x: memory.dense_count(m * k * k, 1 + m * k, a, x, M=m)}
    for name, count in counts.items():
        held = count(5, 10, 2, 100)[0]
        for bigger in ((6, 10, 2, 100), (5, 11, 2, 100), (5, 10, 3, 100), (5, 10, 2, 120)):
            assert count(*bigger)[0] > held
        for sizes in ((3, 2, 1, 40), (20, 50, 2, 216), (20, 1, 4, 400), (3, 50, 2, 1000)):
            if name != "dense" or sizes[0] * sizes[1] ** 2 <= 200:     # its range
                assert 0 < count(*sizes)[1] < 4e8
    held = {m: memory.fedavg_chain_count(m, 10, 2, 400, 216)[0] for m in (200, 400)}
    assert 3.6 < held[400] / held[200] < 4.0
    held = {k: memory.alg1_chain_count(3, k, 2, 216, outputs=False)[0] for k in (200, 400)}
    assert 3.6 < held[400] / held[200] < 4.1
    held = {x: memory.alg1_chain_count(10, 20, 2, x, outputs=False)[0] for x in (200, 400)}
    assert 1.9 < held[400] / held[200] < 2.01
    assert memory.estimate("alg1_chain", 10, 20, 2, 200) == memory.MARGINS["alg1_chain"] * sum(
        memory.alg1_chain_count(10, 20, 2, 200))


def test_conjugate_nodes_read_as_conjugates_equal_their_own_factors():
    """``Alg1Chain.two_point`` reads a conjugate node's factors as the conjugates of its node's
    (the pencil is real). Against the same pairs with the conjugate nodes given as nodes of
    their own (their Ghat factors and eigenbasis formed there: ``ghat`` at conj z with conj
    Chat, the fixed point's conjugate): the three couplings of ``chain_parts`` at 3 nodes
    (M = 3, K = 4, two atoms). Both are one solve of the same well-conditioned systems (GMRES
    to 1e-13); measured 4e-15 relative."""
    gam, p = np.array([0.5, 2.0, 4.0]), np.array([0.2, 0.5, 0.3])
    spec = riskcalc.Spectrum([0.5, 3.0], weights=[0.3, 0.7])
    eta = 0.9 / (stable_top(spec.atoms, spec.weights, gam).max() + 0.8)
    pen = Alg1Chain(spec.atoms, spec.weights, gam, p, 0.8, eta, 4, 1.25)
    z = np.array([1.3 + 0.4j, 0.6 + 0.3j, -0.4 + 0.2j])
    _, C, G = pen.solve(lambda y: z + 1j * y, list(4.0 * np.geomspace(1.0, 0.05, 16)) + [0.0])
    M, nb, N = 3, pen.nb, z.size
    cf, au = np.zeros((M, nb)), np.zeros((M, nb))
    cf[:, pen.lr] = -0.1
    au[:, 1], au[:, pen.lr[:-1]], au[:, pen.lr[-1]] = 1.0, 0.08, -0.9
    c_th = np.zeros(pen.n)
    c_th[0], c_th[1 + nb * np.arange(M)] = -1.0, -1.0
    couplings = [[(np.array([0.1, 0.6, 0.3]), au, au, False)],
                 [(np.array([0.2, 0.4, 0.5]), au, cf, False),
                  (np.array([0.2, 0.4, 0.5]), cf, au, False)],
                 [([1.0], c_th, c_th, True)]]
    lazy = pen.two_point((C, G), couplings)                    # (3, 2, M + 1, N, 2 N)
    C2 = np.concatenate([C, C.conj()])
    own = pen.two_point((C2, pen.ghat(np.concatenate([z, z.conj()]), C2)), couplings,
                        columns=list(range(2 * N)))[..., :N, :]
    assert np.max(np.abs(lazy - own)) <= 1e-12 * np.max(np.abs(own))


def recorded_estimates(monkeypatch):
    """The list every ``memory.estimate`` computed from now on is appended to (the test's
    patch)."""
    estimates, estimate = [], memory.estimate

    def recorded(*args, **kw):
        estimates.append(estimate(*args, **kw))
        return estimates[-1]
    monkeypatch.setattr(memory, "estimate", recorded)
    return estimates


def evenly_spaced(atoms, shift):
    """(gamma, top, cover) of the two clients of the peak tests: ``atoms`` evenly spaced
    eigenvalues over [0.5, 3], shared (``spectrum``) or, under covariate shift, reversed and
    moved up 0.5 for the second client (``spectra``); top: the largest top of the clients'
    sample spectra (``stable_top``) under the shared one."""
    eig = np.linspace(0.5, 3.0, atoms)
    gam = np.array([0.5, 2.0])
    top = stable_top(eig, np.full(atoms, 1 / atoms), gam).max()
    return gam, top, ({"spectra": [list(eig), list(eig[::-1] + 0.5)]} if shift else
                      {"spectrum": riskcalc.Spectrum.from_eigenvalues(eig)})


@pytest.mark.parametrize("shift", [False, True], ids=["spectrum", "covariate-shift"])
def test_own_models_stay_within_their_estimate(monkeypatch, shift):
    """FedAvg's own models on the dense route (``SigmaPencil.two_point``, or
    ``ShiftPencil.two_point`` under covariate shift: 16 couplings of up to 2 rows, 12 atoms,
    about 250 contour nodes): the peak of the numpy arrays allocated while ``local_risk`` is
    solved (``tracemalloc``, which numpy reports its data to) is within the largest estimate
    the memory checks computed (``memory.estimate``, its margin included). Measured: 161 MB
    against 197 MB (shift: 116 against 193). Before the count held the couplings' per-atom
    factors and the chunk's right-hand sides and base values, and before ``two_point`` bounded
    its base values by the atoms: 226 MB against an estimate of 17 MB (shift: 155 against
    12)."""
    gam, top, cover = evenly_spaced(12, shift)
    estimates = recorded_estimates(monkeypatch)
    res = riskcalc.rounds_limit("fedavg", gamma=gam, r=[0.3, 0.9], sigma=[0.4, 1.0],
                                signal=1.2, rounds=[0, 1, 3], local_steps=1,
                                step_size=1.6 / top, weights="samples", **cover)
    tracemalloc.start()
    try:
        assert np.all(np.isfinite(res.local_risk))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(estimates) == 2 and peak <= estimates[-1], (peak, estimates)


@pytest.mark.parametrize("shift", [False, True], ids=["spectrum", "covariate-shift"])
def test_personalization_stays_within_its_estimate(monkeypatch, shift):
    """The personalizations' memory check (``personalize_sigma.personal_bytes``, a dense
    pencil's count) bounds what they allocate: Algorithm 1 (pfedme) with K = 2 on two clients,
    RTFA on a shared spectrum of 12 atoms or FTFA's 2 steps under covariate shift with 6 (its
    curves cost 2.5 s at 12): the numpy peak (``tracemalloc``) of ``personalized_risk`` is
    within the estimate computed while it runs. Measured: 28 MB against 60 (shift: 49 against
    105). The fixed check it replaced counted 4 MB (shift, 12 atoms: 5 against a peak of 44),
    and called no estimate: that code fails here."""
    gam, top, cover = evenly_spaced(6 if shift else 12, shift)
    res = riskcalc.rounds_limit("pfedme", gamma=gam, r=[0.3, 0.9], sigma=[0.4, 1.0],
                                signal=1.2, rounds=[1], local_steps=2, lam=0.5,
                                global_step=1.0, step_size=0.4 / top, weights="samples", **cover)
    estimates = recorded_estimates(monkeypatch)
    tracemalloc.start()
    try:
        out = (res.personalized_risk(steps=2, step_size=0.1) if shift else
               res.personalized_risk(lam=0.5))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(out))
    assert estimates and peak <= max(estimates), (peak, estimates)


def test_personalization_refused_by_memory_names_the_steps_that_fit(monkeypatch):
    """Beyond ``max_gigabytes`` the personalization is refused before anything is solved (the
    base pencil's solve on the contour, which it redoes, is replaced by an assertion: the
    check comes once the contour's nodes are known), with its estimate, the limit, the FTFA
    steps that would fit (checked to run) and the option. FedAvg K = 1 after one round, two
    atoms: FTFA's 2 steps are estimated at 0.42 GB, 1 step at 0.32 (``personal_bytes``), so a
    limit of 0.35 GB names steps <= 1. (Measured before the check came first: 400 atoms,
    M = 3, refused after 8.7 s of the base solve.)"""
    res = riskcalc.rounds_limit("fedavg", **dict(CASE, rounds=[1], local_steps=1),
                                max_gigabytes=0.35)
    with monkeypatch.context() as patch, pytest.raises(
            ValueError, match=r"would hold about (\S+) GB at its peak \(estimated; more than "
            r"the 0.35 GB allowed\); give steps <= (\d+), or .*max_gigabytes") as info:
        patch.setattr(SigmaPencil, "solve", lambda *a, **k: pytest.fail("solved first"))
        res.personalized_risk(steps=2, step_size=0.1)
    need = float(re.search(r"about (\S+) GB", str(info.value)).group(1))
    assert need > 0.35 and re.search(r"steps <= 1,", str(info.value))
    assert np.all(np.isfinite(res.personalized_risk(steps=1, step_size=0.1)))


def test_exact_prox_own_models_stay_within_their_estimate(monkeypatch):
    """Algorithm 1 with exact prox under a spectrum (``prox_sigma._own_models``, 8 M couplings
    on the prox pencil): the numpy peak (``tracemalloc``) added while the own models are solved
    is within the estimate their memory check computes. Two clients, 12 atoms: measured
    16 MB against 52 MB (41 MB when this test was written); the fixed check it replaced
    counted 0.4 MB and called no estimate (that code fails here)."""
    eig = np.linspace(0.5, 3.0, 12)
    inner, seen, estimates = prox_sigma._own_models, [], recorded_estimates(monkeypatch)

    def measured(*args):
        # Traced from here only (the curves before it ran twice as slow traced): frees of
        # older arrays then go uncounted, so the peak can only come out larger.
        first = len(estimates)                      # the curves' estimates come before
        tracemalloc.start()
        try:
            out = inner(*args)
            seen.append((tracemalloc.get_traced_memory()[1], estimates[first:]))
        finally:
            tracemalloc.stop()
        return out
    monkeypatch.setattr(prox_sigma, "_own_models", measured)
    res = riskcalc.rounds_limit("pfedme", gamma=[0.5, 2.0], r=[0.3, 0.9], sigma=0.5,
                                signal=1.2, rounds=[1], local_steps=np.inf, lam=0.5,
                                global_step=1.0, weights="samples",
                                spectrum=riskcalc.Spectrum.from_eigenvalues(eig))
    assert np.all(np.isfinite(res.local_risk)) and len(seen) == 1
    peak, estimates = seen[0]
    assert estimates and peak <= max(estimates), (peak, estimates)


def test_shift_personalization_refused_before_the_curves_are_solved(monkeypatch):
    """Under covariate shift with one local step the curves the personalization reads are
    solved on first use (``shift.curves.one_step_extras``); asked first, the personalization's
    own checks come once the contour's nodes are known, before they are solved (the curves'
    pair integrals, ``ShiftPencil.two_point``, replaced by an assertion: the old order reached
    them; the edge scan before the contour still runs): refused by ``max_gigabytes`` with its
    estimate. (Measured before: 400 atoms, M = 3, refused after 21 s; after, 1.8 s.)"""
    res = riskcalc.rounds_limit("fedavg", gamma=[0.5, 2.0], r=0.3, sigma=0.5, signal=1.0,
                                rounds=[1], local_steps=1, step_size=0.1,
                                spectra=[[0.5, 2.0], [1.0, 3.0]], max_gigabytes=0.05)
    monkeypatch.setattr(ShiftPencil, "two_point", lambda *a, **k: pytest.fail("solved first"))
    with pytest.raises(ValueError, match=r"personalization from the round-T model .* would "
                       r"hold about \S+ GB at its peak \(estimated; more than the 0.05 GB "
                       r"allowed\)"):
        res.personalized_risk(steps=2, step_size=0.1)
