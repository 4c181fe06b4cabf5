"""Instances of the minimax-rate simulations (``montecarlo.experiments.rates``): paper 000 Lemma 7's
logistic federations and their exact population quantities.

Instances (``lemma7_instance``) follow paper 000 Lemma 7: i.i.d. features bounded by ``c_X``
(Rademacher times ``c_X``), logistic labels, true models in a ball. The true models are fixed
by ``seed`` (drawn from ``replicate_rng(seed, 0, 0)``); replicate ``rep`` redraws only the data,
so replicate averages estimate ``E_S ||w_hat^(i) - w_*^(i)||^2`` at one fixed instance, the
quantity the bounds are about. Random streams: ``replicate_rng(seed, rep, 1, cell)`` features,
``replicate_rng(seed, rep, 2, cell)`` label uniforms, with ``cell`` the index of the sample-size
grid point; points of a heterogeneity grid share them (common random numbers).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import expit

from montecarlo.experiments.problems import Instance
from montecarlo.experiments.objectives import ClientLosses
from montecarlo.runner.seeding import check_seed, replicate_rng
from riskcalc._validate import as_array, positive, positive_int
from riskcalc.minimax import logistic_constants

# Enumerating the 2^d feature vectors gives population expectations exactly; beyond this the
# enumeration would cost more than the simulation it serves.
MAX_ENUMERATED_DIM = 12


def sign_vectors(d: int, c_x: float = 1.0) -> np.ndarray:
    """All ``2^d`` feature vectors of the Rademacher design, scaled by ``c_x``: shape (2^d, d).

    Each has probability ``2^-d``, so an average over them is the exact population expectation
    over features (used for the Fisher information and the excess risks).
    """
    d = positive_int("d", d)
    if d > MAX_ENUMERATED_DIM:
        raise ValueError(f"d must be <= {MAX_ENUMERATED_DIM} to enumerate the 2^d sign vectors, "
                         f"got {d}")
    return c_x * np.array(list(itertools.product((-1.0, 1.0), repeat=d)))


def true_models(R, *, m: int, d: int, seed: int = 0) -> np.ndarray:
    """True local models ``w_*^(i) = +-R v_k`` (antipodal pairs), shape ``(len(R), m, d)``.

    ``v_1, ..., v_{m/2}`` are uniform random unit vectors from ``replicate_rng(seed, 0, 0)``;
    client ``2k`` gets ``R v_k`` and client ``2k+1`` gets ``-R v_k``. The average model is then
    exactly 0 and ``||w_*^(i) - w_*^(g)|| = R`` for every client, so Assumptions B(a) and B(b)
    of paper 000 (and Assumption 1 of paper 004) hold with equality, and every model lies in the
    ball of radius ``R`` around the origin, the centre of Thm 8's packing construction. By the
    symmetry ``sigmoid(-t) = 1 - sigmoid(t)`` of the logistic model and of the Rademacher design,
    the population minimizer of the global objective is exactly 0, so FedAvg's population bias
    is exactly ``R^2`` for every client.
    """
    R = as_array("R", np.atleast_1d(R), low=0.0)
    m, d = positive_int("m", m, minimum=2), positive_int("d", d)
    if m % 2:
        raise ValueError(f"m must be even (antipodal pairs of clients), got {m}")
    v = replicate_rng(check_seed(seed), 0, 0).standard_normal((m // 2, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    directions = np.stack([v, -v], axis=1).reshape(m, d)
    return R[:, None, None] * directions


def lemma7_instance(R, *, reps: int, m: int = 4, n: int = 200, d: int = 5, c_x: float = 1.0,
                    l2: float = 1e-4, seed: int = 0, cell: int = 0) -> Instance:
    """Logistic instances of paper 000 Lemma 7, ``reps`` data replicates over an ``R`` grid.

    Features have i.i.d. coordinates ``c_X * Rademacher`` (centred, bounded by ``c_X``, as
    Lemma 7 asks); labels are Bernoulli with ``P(y = 1 | x) = sigmoid(x'w_*^(i))``; the true
    models are :func:`true_models`. The test features are all ``2^d`` sign vectors, so
    ``montecarlo.experiments.metrics.evaluate`` returns the exact individualized excess risk (paper 000
    Def. 1) with no test-sampling noise.

    Parameters
    ----------
    R : float or 1-d array
        Heterogeneity radii, >= 0.
    reps : int
        Data replicates (leading batch dimension).
    m, n, d : int
        Clients (even), samples per client, dimension (``d <= 12``).
    c_x : float
        Feature bound ``c_X``.
    l2 : float
        Ridge of the empirical risks, > 0: keeps the exact minimizers finite when a client's data
        happen to be separable (the constrained ERM over the domain of Lemma 7 plays this role
        in the paper). Its bias ``~ (l2 ||w|| / mu)^2`` must stay far below the errors measured.
    seed : int
        Experiment seed: fixes the true models; replicate ``r`` draws its data from
        ``replicate_rng(seed, r, 1 or 2, cell)``.
    cell : int
        Index of the sample-size grid point (separates the data streams of different ``n``).

    Returns
    -------
    Instance
        ``train`` with features ``(reps, 1, m, n, d)`` and labels ``(reps, len(R), m, n)``
        (batch shape ``(reps, len(R))``), ``w_star`` ``(len(R), m, d)``, ``test_X``
        ``(m, 2^d, d)``.
    """
    reps, n = positive_int("reps", reps), positive_int("n", n)
    c_x = float(positive("c_x", c_x))
    w_star = true_models(R, m=m, d=d, seed=seed)
    X = np.stack([c_x * (2.0 * replicate_rng(seed, r, 1, cell).integers(0, 2, (m, n, d)) - 1.0)
                  for r in range(reps)])[:, None]
    U = np.stack([replicate_rng(seed, r, 2, cell).random((m, n)) for r in range(reps)])[:, None]
    z = np.einsum("rjmnd,kmd->rkmn", X, w_star)
    y = np.where(U < expit(z), 1.0, -1.0)
    test_X = np.broadcast_to(sign_vectors(d, c_x), (m, 2 ** d, d))
    params = dict(R=np.atleast_1d(R).tolist(), reps=reps, m=m, n=n, d=d, c_x=c_x,
                  l2=float(l2), seed=seed, cell=cell)
    return Instance(ClientLosses(X, y, loss="logistic", l2=l2), w_star, test_X, "bernoulli",
                    params)


def fisher_information(w_star, c_x: float = 1.0) -> np.ndarray:
    """Population Hessian ``H_i = E[s'(x'w_*^(i)) x x']`` of client ``i``'s logistic risk at its
    true model (exact, by enumerating the Rademacher design), shape ``(..., m, d, d)``.

    For the well-specified logistic model this is the Fisher information, so the local MLE has
    ``n E||w_hat^(i) - w_*^(i)||^2 -> tr(H_i^-1)`` and ``E||grad l(w_*^(i), z)||^2 = tr(H_i)``
    (paper 004 Assumption 4's ``rho^2``).
    """
    w_star = np.asarray(w_star, float)
    x = sign_vectors(w_star.shape[-1], c_x)
    z = np.einsum("td,...d->...t", x, w_star)
    curvature = expit(z) * expit(-z)
    return np.einsum("...t,td,te->...de", curvature, x, x) / len(x)


def fedprox_theorem1_constants(w_star, d: int, c_x: float = 1.0) -> dict:
    """``L, mu, rho`` at which paper 004 Thm 1's lambda (:func:`fedprox_lambda`) is evaluated.

    ``L = c_X^2 d / 4``: the per-sample smoothness of paper 004 Assumption 2 (``beta`` of paper
    000 Lemma 7, ``logistic_constants``); ``rho^2 = max_i tr(H_i)``: the exact
    ``E||grad l(w_*^(i), z)||^2`` of Assumption 4; ``mu = min_i lambda_min(H_i)``: the population
    curvature at the truth. Assumption 3 asks for *per-sample* ``mu``-strong convexity, which
    the logistic loss never has (each sample's Hessian has rank one); the population curvature
    is the substitute paper 000 Lemma 7 uses, and the one that sets the errors.

    Parameters
    ----------
    w_star : array_like, shape (m, d)
        True models of one grid point.
    d : int
    c_x : float

    Returns
    -------
    dict
        ``L``, ``mu``, ``rho``.
    """
    H = fisher_information(w_star, c_x)
    return {"L": float(logistic_constants(c_x, 1.0, d)["beta"]),
            "mu": float(np.linalg.eigvalsh(H)[..., 0].min()),
            "rho": float(np.sqrt(np.trace(H, axis1=-2, axis2=-1).max()))}
