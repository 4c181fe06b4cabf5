"""Round-count simulations of the minimax-rate checks (``montecarlo.experiments.rates``): paper 004
Cor. 1 (bilevel FedProx) and paper 001 Thm 3.1 and Sec. 4.1 (APGD1 / APGD2).

The iterative algorithms of ``montecarlo.experiments.algorithms`` run on quadratic clients, and
``montecarlo.experiments.metrics.rounds_to_accuracy`` counts the communication rounds until the iterate is
a given factor closer to the exact minimizer of ``montecarlo.experiments.objectives``.
"""

from __future__ import annotations

import itertools

import numpy as np

from montecarlo.experiments.algorithms import ALGORITHMS
from montecarlo.experiments.algorithms.fedprox import bilevel_constants, theorem2_inner_steps
from montecarlo.experiments.problems import quadratic_instance
from montecarlo.experiments.metrics import rounds_to_accuracy
from montecarlo.experiments.objectives import ClientLosses, minimize
from montecarlo.runner.seeding import check_seed, replicate_rng
from riskcalc._validate import as_array, nonnegative, positive, positive_int
from riskcalc.minimax import communication_lower_bound, fedprox_complexity


def aligned_quadratic(*, m: int = 4, d: int = 10, L: float = 1.0, mu: float = 1e-2,
                      R: float = 1.0, seed: int = 0, rep: int = 0) -> ClientLosses:
    """Quadratic clients sharing one Hessian ``diag(geomspace(mu, L, d))``.

    ``f_i(w) = ||X w - y_i||^2 / (2d)`` with ``X = sqrt(d) diag(sqrt(eig))`` and
    ``y_i = X w_i``, ``w_i = w_0 + R u_i / sqrt(d)`` (``w_0, u_i`` standard normal from
    ``replicate_rng(seed, rep, 0)``). With every client's Hessian the same, the Moreau envelopes of
    paper 004 Lemma 2 have exactly the constants ``mu_g, L_g`` (no averaging over clients makes
    the problem easier than the bound's worst case), so Cor. 1's ``kappa_g`` is the true
    condition number of the outer problem.
    """
    m, d = positive_int("m", m), positive_int("d", d)
    # ndim=0: a list was float()'s TypeError (L=[1, 2]; fuzz41 sim F5).
    L, mu = float(positive("L", L, ndim=0)), float(positive("mu", mu, ndim=0))
    if mu > L:
        raise ValueError(f"mu must lie in (0, L] = (0, {L:g}], got {mu!r}")
    R = float(nonnegative("R", R, ndim=0))
    rng = replicate_rng(check_seed(seed), rep, 0)
    X = np.broadcast_to(np.sqrt(d) * np.diag(np.sqrt(np.geomspace(mu, L, d))), (m, d, d))
    w = rng.standard_normal(d) + R * rng.standard_normal((m, d)) / np.sqrt(d)
    return ClientLosses(X, np.einsum("mnd,md->mn", X, w), loss="squared")


def _first_on_target(run, order, cap, exact, factor):
    """(``rounds_to_accuracy`` of ``run(rounds)``, its trajectory) for at most ``cap`` rounds:
    ``order`` rounds (rounded up) first, ``cap`` only if they fall short. The algorithms here
    are deterministic and read ``rounds`` only as their loop's length, so a shorter run is the
    prefix of a longer one and finds the same first round on target (or inf past ``cap``),
    at the cost of the rounds needed rather than of the cap."""
    for rounds in sorted({min(cap, int(np.ceil(order))), cap}):
        traj = run(rounds)
        count = float(rounds_to_accuracy(traj, exact, factor))
        if np.isfinite(count):
            break
    return count, traj


def bilevel_rounds(lams, *, m: int = 4, d: int = 10, L: float = 1.0, mu: float = 1e-2,
                   eps: float = 1e-6, seed: int = 0) -> dict:
    """Rounds of bilevel FedProx (paper 004 Alg. 1, Cor. 1 steps, Thm 2's K) against Cor. 1.

    Runs ``ALGORITHMS["fedprox_bilevel"]`` on :func:`aligned_quadratic` and counts the rounds
    until the stacked local models are ``1/sqrt(eps)`` times closer to the exact FedProx
    minimizer (squared distance reduced by ``eps``). Cor. 1 (``fedprox_complexity``, relative
    target ``eps``, ``dist0 = 1``) is a sufficient number of rounds, so the simulation must not
    need more; its order is ``kappa_g log(1/eps)``.

    Returns
    -------
    dict of ndarray, shape (len(lams),)
        ``lam``, ``simulated``, ``corollary1`` (Cor. 1's rounds), ``kappa_g``, ``K`` (inner
        steps used).
    """
    lams = np.atleast_1d(as_array("lams", lams, low=0.0, low_open=True, ndim=1))
    eps = float(as_array("eps", eps, low=0.0, high=1.0, low_open=True, high_open=True))
    losses = aligned_quadratic(m=m, d=d, L=L, mu=mu, seed=seed)
    _check_upload_rounding(lams, L, mu, eps)
    _check_work(losses, lams, L, mu, eps)
    factor = 1.0 / np.sqrt(eps)
    sim, inner, bound, kappa_g = [], [], [], []
    for lam in lams:
        comp = fedprox_complexity(L, mu, lam, eps)
        kappa_g.append(L / mu * (lam + mu) / (lam + L))
        # At most Cor. 1's rounds: a target not reached by then is a violation (inf); its
        # order kappa_g log(1/eps), about a quarter of them, tried first.
        count, traj = _first_on_target(
            lambda rounds: ALGORITHMS["fedprox_bilevel"](losses, lam=float(lam), L=L, mu=mu,
                                                         rounds=rounds),
            kappa_g[-1] * np.log(1.0 / eps), int(comp["rounds"]),
            minimize(losses, "fedprox", lam), factor)
        sim.append(count)
        inner.append(traj.params["inner_steps"])
        bound.append(comp["rounds"])
    return {"lam": lams, "simulated": np.array(sim), "corollary1": np.array(bound, float),
            "kappa_g": np.array(kappa_g), "K": np.array(inner)}


#: Seconds of one inner step of bilevel FedProx on ``aligned_quadratic`` (measured 35-38 us at
#: m = 4, d = 10, K = 1054 and 10493; a batched m x d x d product beyond that).
STEP_SECONDS = 4e-5
#: Most seconds of work ``bilevel_rounds`` takes on: L = 1e10 (Thm 2's K = 1e12 inner steps a
#: round) ran for hours, unannounced (fuzz42 sim F14).
MAX_SECONDS = 600.0


def _check_work(losses, lams, L, mu, eps):
    """Refuse, before any run, a ``lam`` whose rounds would take more than ``MAX_SECONDS``: K
    inner steps of Thm 2 eq. (12) a round (Cor. 1's step sizes, as ``fedprox_bilevel`` takes
    them), for at most Cor. 1's rounds."""
    for lam in lams:
        c = bilevel_constants(losses, float(lam), L=L, mu=mu)
        K = theorem2_inner_steps(c, float(lam), 1.0 / c["L_l"], 0.5 / c["L_g"])
        rounds = fedprox_complexity(L, mu, lam, eps)["rounds"]
        per_step = max(STEP_SECONDS, 1e-9 * losses.m * losses.d ** 2)
        seconds = per_step * K * rounds
        if seconds > MAX_SECONDS:
            raise ValueError(
                f"lams: lam = {lam:g} takes Thm 2's K = {K:.3g} inner steps a round for up to "
                f"{rounds:.3g} rounds, about {seconds:.3g} s of work (more than {MAX_SECONDS:g}"
                f" s): K grows like (L + lam) / (mu + lam) = {(L + lam) / (mu + lam):.3g} (L = "
                f"{L:g}, mu = {mu:g}); lower L/mu or raise lam")


def _check_upload_rounding(lams, L, mu, eps):
    """Refuse a ``lam`` whose run settles, by rounding, farther from the minimizer than the
    accuracy asked (a count of inf rounds, read as a violation of Cor. 1).

    The local models carry a relative rounding ``u = 2^-53``, so the upload ``lam (w_g - w_i)``
    (paper 004 Alg. 1) has an error of about ``lam u ||W*||`` and the outer iteration,
    contracting at the envelope's ``mu_g = lam mu / (lam + mu)`` (Lemma 2), settles about
    ``lam u ||W*|| / mu_g`` from the minimizer; the minimizer and the iterates themselves are
    rounded to about ``u L / mu`` (the condition number). Measured (96 runs of 6,000 rounds: d
    = 1, 3, 10, m = 1, 4, 3 seeds, mu = 1e-2 and 1, lam from 1e-2 to 1e10), the settled
    relative distance was at most 1.3 u (lam + mu) / mu at lam >= 1e5 and 46 u at lam = mu =
    1e-2 (L/mu = 100); counts failed from lam = 0.59 times the former bound ``u (lam + mu) / mu
    = sqrt(eps)`` (5.3e10 at the default mu, eps, d = 1) and at eps = 1e-30 from lam = 0.01. The
    bound taken, ``u (4 (lam + mu) + L) / mu <= sqrt(eps)``, refuses from 2.25e10 there."""
    u, accuracy = np.finfo(float).eps / 2, np.sqrt(eps)
    floor = u * (4.0 + L / mu)
    if accuracy <= floor:
        raise ValueError(f"eps = {eps:g} asks the distance reduced by sqrt(eps) = {accuracy:.3g}, "
                         f"below the runs' rounding u (4 + L/mu) = {floor:.3g} (u = {u:.3g}): "
                         f"take eps > {floor * floor:.3g}")
    limit = (mu * accuracy - u * L) / (4.0 * u) - mu    # u (4 (lam + mu) + L) / mu = sqrt(eps)
    for lam in lams:
        if lam > limit:
            raise ValueError(
                f"lams: lam = {lam:g} leaves bilevel FedProx's upload lam (w_g - w_i) rounded "
                f"past the accuracy asked (relative error about u (4 (lam + mu) + L) / mu, u = "
                f"{u:.3g}, above sqrt(eps) = {accuracy:.3g}): take lam <= {limit:.3g} at mu = "
                f"{mu:g}, L = {L:g}, or a larger eps")


def apgd_rounds(algorithm: str, lams, mus, *, instance: str = "aligned", m: int = 10,
                d: int = 20, L: float = 1.0, factor: float = 1e2, max_iterations: int = 3000,
                reps: int = 1, seed: int = 0) -> dict:
    """Rounds of APGD1 / APGD2 (paper 001 Sec. 4.1) against the Thm 3.1 lower bound.

    Runs ``ALGORITHMS[algorithm]`` for every ``(lam, mu)`` pair (``lams`` and ``mus`` broadcast
    together), counts the rounds until the iterate is ``factor`` times closer to the exact
    minimizer of the mixing objective (``rounds_to_accuracy``; squared distance reduced by
    ``factor^2``), and evaluates ``communication_lower_bound(L, mu, lam, factor^-2)``.
    Thm 3.1's hypotheses (corrected, see its ERRATA) need ``lam > 100 mu`` and ``L > 101 mu``.

    Parameters
    ----------
    algorithm : {"apgd1", "apgd2"}
    lams, mus : array_like
        Penalties and strong-convexity constants.
    instance : {"aligned", "paper001"}
        :func:`aligned_quadratic` (every client has the Hessian ``diag(geomspace(mu, L, d))``,
        so the consensus direction has curvature exactly ``mu``, as in the worst case), or
        ``quadratic_instance`` (paper 001 Fig. 2: each client's spectrum spans ``[mu, L]`` in its
        own random basis, so the average Hessian is far better conditioned than ``L/mu``).
    m, d, L : int, int, float
        Clients, dimension, smoothness.
    factor : float
        Required reduction of the distance, > 1.
    max_iterations : int
        Rounds run at most; ``inf`` is reported when the target is not reached by then.
    reps : int
        Instances per pair (replicate ``r`` draws its models, and for ``"paper001"`` its bases,
        from ``replicate_rng(seed, r, 0)``): how the initial error projects on the slowest
        modes moves the count by tens of percent, the genuine spread a fitted exponent must
        carry.
    seed : int

    Returns
    -------
    dict of ndarray
        ``lam``, ``mu``, ``lower_bound``, ``upper_order`` (Sec. 4.1: ``sqrt(lam/mu)`` for
        APGD1, ``sqrt(L/mu)`` for APGD2, times ``log(factor^2)``) of the broadcast shape, and
        ``simulated`` with a trailing replicate axis (``inf`` if not reached).
    """
    if algorithm not in ("apgd1", "apgd2"):
        raise ValueError(f"algorithm must be 'apgd1' or 'apgd2', got {algorithm!r}")
    if instance not in ("aligned", "paper001"):
        raise ValueError(f"instance must be 'aligned' or 'paper001', got {instance!r}")
    lams, mus = np.broadcast_arrays(as_array("lams", lams, low=0.0, low_open=True),
                                    as_array("mus", mus, low=0.0, low_open=True))
    eps = float(as_array("factor", factor, low=1.0, low_open=True, ndim=0)) ** -2
    reps = positive_int("reps", reps)
    sim = []
    for (lam, mu), rep in itertools.product(zip(lams.ravel(), mus.ravel()), range(reps)):
        losses = (aligned_quadratic(m=m, d=d, L=L, mu=float(mu), seed=seed, rep=rep)
                  if instance == "aligned"
                  else quadratic_instance(m=m, d=d, L=L, mu=float(mu), seed=seed, rep=rep).train)
        # Sec. 4.1's order of the rounds (``upper_order`` below) tried first.
        order = np.sqrt((lam if algorithm == "apgd1" else L) / mu) * np.log(1 / eps)
        sim.append(_first_on_target(
            lambda rounds: ALGORITHMS[algorithm](losses, lam=float(lam), iterations=rounds,
                                                 mu=float(mu)),
            order, max_iterations, minimize(losses, "fedprox", lam), factor)[0])
    scale = np.sqrt((lams if algorithm == "apgd1" else L) / mus)
    return {"lam": lams, "mu": mus, "simulated": np.array(sim).reshape(lams.shape + (reps,)),
            "lower_bound": np.asarray(communication_lower_bound(L, mus, lams, eps)),
            "upper_order": scale * np.log(1 / eps)}
