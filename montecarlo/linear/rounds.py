"""Simulated risk along federated training: FedAvg with K local GD steps and paper 004's
Algorithm 1 (bilevel FedProx), every client's risk after each communication round.

The finite-d side of ``riskcalc.rounds_limit`` (DESIGN.md, "Contracts added in the fourth
round", training dynamics). Model (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 2): client j
has n_j = round(d / gamma_j) rows N(0, Sigma), y_j = X_j theta_j + eps_j, theta_j = theta_0 +
u_j, ||theta_0|| = signal and ||u_j|| = r_j in uniform directions, noise level sigma_j;
f_j(w) = ||X_j w - y_j||^2 / (2 n_j); every model starts at 0. Risk of a model w for client j:
E[(w - theta_j)^T Sigma (w - theta_j)], bias (the theta part) + variance (the noise part).
Covariate shift (``spectra``): client j's rows N(0, Sigma_j), the Sigma_j diagonal in one
shared basis, its risks in Sigma_j (``montecarlo.linear.rounds_shift``). The parameters are checked
as ``riskcalc.rounds_limit`` checks them (``montecarlo.linear.rounds_inputs``).

Routes: FedAvg, and Algorithm 1 with exact prox (K = inf, the same map with another local
filter), exactly given the designs by a closed form in the eigenbasis of D = sum_j p_j Q_j
(``montecarlo.linear.rounds_fedavg``, derivation and cost there, O(d^2) per round asked);
Algorithm 1 with finite K (and FedAvg under ``measure="empirical"``) by iterating the round map
on columns (``montecarlo.linear.rounds_propagate``): exact given the designs at small d (a scaled
basis of the sources as columns), sampled draws otherwise. Measured per-replicate cost of a
200-round curve, 10 clients, K = 10, one BLAS thread (``benchmarks/bench_rounds_sim.py``):
FedAvg exact 0.35 s at d = 400, 3.4 s at d = 1000; Algorithm 1 one draw 0.7 s and 7.9 s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from montecarlo.linear.instances import require_memory, sample_size
from montecarlo.linear.decomposition import decompose
from montecarlo.linear.measure import KINDS
from montecarlo.linear.rounds_fedavg import QUANTITIES, fedavg_conditional
from montecarlo.linear.rounds_inputs import (personalization_filters, personalization_keys,
                                             rounds_params, sample_sizes)
from montecarlo.linear.rounds_columns import (client_basis, draw_columns, propagation_flops,
                                              source_columns)
from montecarlo.linear.rounds_propagate import Propagation, curve
from montecarlo.runner.seeding import check_seed, replicate_rng
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import run_tasks
from riskcalc._validate import positive_int

#: measure="auto" runs Algorithm 1 exactly given the designs when the column propagation
#: costs at most this many flops (``rounds_propagate``), else on one sampled draw.
AUTO_EXACT_FLOPS = 2e9


#: Measured seconds per replicate of a 200-round curve, 10 clients at d = 1000 (module
#: docstring), and the bookkeeping of one replicate task (85 replicates/s at d = 50).
REPLICATE_SECONDS = {"fedavg": 3.4, "fedprox": 7.9}
TASK_SECONDS = 0.012
#: Algorithm 1 iterates every round up to the largest T asked: measured 55 us per round at
#: d = 50 with one client (its column propagation, O(M d^2) per round).
ROUND_SECONDS = 5.5e-5


def replicate_seconds(method: str, d: int, clients: int, top_round: float = 200) -> float:
    """Estimated seconds of one replicate of ``simulate_rounds`` (for ``--max-minutes``):
    the measured costs of the module docstring scaled as d^3 (the decompositions) and, beyond
    10 clients, as the number of clients; for Algorithm 1 also ``ROUND_SECONDS`` per round up
    to ``top_round`` (FedAvg's closed form does not iterate); plus the task's bookkeeping."""
    fedavg = method == "fedavg"
    base = REPLICATE_SECONDS["fedavg" if fedavg else "fedprox"]
    rounds = 0.0 if fedavg else ROUND_SECONDS * top_round * (d / 50.0) ** 2 * (clients + 1) / 2
    return base * (d / 1000.0) ** 3 * max(clients, 10) / 10.0 + rounds + TASK_SECONDS


# --- one replicate --------------------------------------------------------------------------

def sample_designs(gamma, s, seed: int, rep: int):
    """Client designs X_j (n_j x d, rows N(0, diag(s)), or N(0, diag(s[j])) for s of shape
    (M, d): covariate shift) of replicate ``rep``: the streams of
    ``montecarlo.linear.federation.sample_federation`` (client j's features from
    ``replicate_rng(seed, rep, j, 0)``), so the same seed gives the same designs there."""
    d = s.shape[-1]
    return [replicate_rng(seed, rep, j, 0).standard_normal(
        (sample_size(d, g, f"client {j}"), d)) * np.sqrt(s[j] if s.ndim > 1 else s)
        for j, g in enumerate(gamma)]


def sample_draw(X, s, r, sigma, signal, seed: int, rep: int, k: int = 0):
    """theta_j (rows) and noise of draw ``k`` of replicate ``rep``. Draw 0 takes the streams
    of ``sample_federation`` (theta_0 from (rep, M, 0), u_j from (rep, j, 1), noise from
    (rep, j, 2)); draw k > 0 appends k to each stream."""
    m, d = len(X), s.shape[-1]
    extra = (k,) if k else ()
    t0 = replicate_rng(seed, rep, m, 0, *extra).standard_normal(d)
    t0 *= signal / np.linalg.norm(t0)
    theta, eps = np.empty((m, d)), []
    for j in range(m):
        u = replicate_rng(seed, rep, j, 1, *extra).standard_normal(d)
        theta[j] = t0 + r[j] * u / np.linalg.norm(u)
        eps.append(sigma[j] * replicate_rng(seed, rep, j, 2, *extra).standard_normal(
            X[j].shape[0]))
    return theta, eps


def rounds_task(task: dict) -> dict:
    """One replicate (the unit of work of ``run_tasks``): every client's curves, lists of
    shape (M, len(rounds)), ``personalized`` (one such list per entry of the task's
    ``personalize``), the round map's ``contraction`` and the route used."""
    s = np.asarray(task["s"], float)
    gamma, r, sigma, p, n_rounds = (np.asarray(task[k], float) for k in
                                    ("gamma", "r", "sigma", "p", "rounds"))
    rounds, K = list(n_rounds), float(task["local_steps"])
    X = sample_designs(gamma, s, task["seed"], task["rep"])
    basis = [client_basis(dec) for x, sj in zip(X, np.broadcast_to(s, (len(X), s.shape[-1])))
             for dec in decompose([x], sj, eager_v=True)]
    n = np.array([x.shape[0] for x in X])
    method, kind = task["method"], task["measure"]
    filters = personalization_filters(task.get("personalize", []))
    closed = method == "fedavg" or np.isinf(K)    # a closed form given the designs
    if kind == "auto":
        kind = "conditional" if closed or propagation_flops(
            s.shape[-1], [mu.size for _, mu in basis], rounds, method) <= AUTO_EXACT_FLOPS \
            else "empirical"
    if closed and kind == "conditional":
        with np.errstate(over="ignore", invalid="ignore"):     # diverging: inf, set below
            out = fedavg_conditional(basis, n, s, p, r, sigma, task["signal"], rounds, K,
                                     task["step_size"], task["global_step"], filters,
                                     lam=None if method == "fedavg" else task["lam"])
    else:
        if kind == "conditional":
            beta, targets = source_columns(basis, n, s, r, sigma, task["signal"])
        else:
            beta, targets = draw_columns(basis, X, [sample_draw(
                X, s, r, sigma, task["signal"], task["seed"], task["rep"], k)
                for k in range(task.get("draws", 1))])
        out = curve(Propagation(method, basis, beta, targets, s, p, K, task["step_size"],
                                task["global_step"], task["lam"], kind == "conditional"),
                    rounds, filters)
    vals = {k: np.asarray(out[k], float) for k in QUANTITIES}
    vals["personalized"] = np.asarray(out["personalized"], float)
    if out["contraction"] > 1.0:
        # A diverging iteration overflows to inf - inf = NaN in the traces (was: "nan" printed
        # as the simulated risk at --global-step 1e300): every quantity is a nonnegative form,
        # so the overflow is +inf, the variance 0 without noise, as the limit has it
        # (``riskcalc.linear.dynamics.fedavg.settle``); and the bias 0 without signal (every
        # model stays at 0 = theta_j: overflow was printed for r = sigma = signal = 0; fuzz39
        # fuzz F12), every quantity 0 without either.
        quiet, noiseless = task["signal"] == 0 and not np.any(r > 0), not np.any(sigma > 0)
        for k, v in vals.items():
            zero = noiseless if k == "variance" else quiet if k == "bias" else (
                quiet and noiseless)
            v[np.isnan(v)] = 0.0 if zero else np.inf
    return {**{k: v.tolist() for k, v in vals.items()},
            "contraction": out["contraction"], "measure": kind}


@dataclass(frozen=True)
class RoundsSimulation:
    """Result of ``simulate_rounds``.

    Attributes
    ----------
    mean, se : dict of ndarray (M, len(rounds))
        Replicate mean and standard error of each of ``QUANTITIES``; also reachable as
        attributes (``.risk``, ``.risk_se``, ...).
    samples : dict of ndarray (reps, M, len(rounds))
        Per-replicate values.
    contraction : ndarray (reps,)
        Spectral radius of each replicate's round map (see ``rounds_propagate``).
    measure : str
        ``conditional`` (exact given the designs) or ``empirical`` (one draw per design).
    params : dict
        The checked parameters (weights p, Sigma eigenvalues s, ...).
    personalized : dict
        Per personalization asked (key: the sorted items of its
        ``personalization_filter`` description), ``{"mean", "se", "samples"}`` of client j's
        risk after it from the server model of round T; read with ``personalized_risk``.
    """

    mean: dict
    se: dict
    samples: dict
    contraction: np.ndarray
    measure: str
    params: dict
    personalized: dict = field(default_factory=dict)

    def __getattr__(self, name):
        for table, key in ((self.mean, name), (self.se, name[:-3] if name.endswith("_se")
                                               else None)):
            if key in table:
                return table[key]
        raise AttributeError(name)

    def _personalized(self, kw, part):
        key = tuple(sorted(personalization_keys([kw])[0].items()))
        if key not in self.personalized:
            raise ValueError(f"personalization {dict(key)} was not simulated; pass it in "
                             "simulate_rounds(personalize=[...])")
        return self.personalized[key][part]

    def personalized_risk(self, *, steps=None, step_size=None, lam=None) -> np.ndarray:
        """(M, len(rounds)): replicate mean of client j's risk after personalizing the server
        model of round T by FTFA (``steps``, ``step_size``) or RTFA (``lam``), the simulated
        counterpart of ``riskcalc`` ``RoundsLimit.personalized_risk`` (same arguments; it
        must have been asked in ``simulate_rounds(personalize=...)``)."""
        return self._personalized(dict(steps=steps, step_size=step_size, lam=lam), "mean")

    def personalized_risk_se(self, *, steps=None, step_size=None, lam=None) -> np.ndarray:
        """(M, len(rounds)): the standard error of ``personalized_risk``."""
        return self._personalized(dict(steps=steps, step_size=step_size, lam=lam), "se")

    @property
    def converges(self) -> np.ndarray:
        """Whether each replicate's round map contracts (spectral radius < 1)."""
        return self.contraction < 1.0


def simulate_rounds(method, *, gamma, r, sigma, signal, rounds, local_steps, step_size=None,
                    global_step=None, lam=None, weights="samples", spectrum=None,
                    spectra=None, d, reps,
                    seed=0, jobs=1, measure="auto", draws=1, personalize=(), cache=None,
                    progress=False) -> RoundsSimulation:
    """Every client's simulated risk along FedAvg with local GD or paper 004's Algorithm 1.

    The finite-d counterpart of ``riskcalc.rounds_limit`` (same arguments; DESIGN.md, fourth
    round). Paper 003 (``003_4b976ddf5225c17e.txt``) Sec. 2 model; Algorithm 1 of paper 004
    (``004_98172ed3646eef14.txt``, eqs. 10-11, App. B.1) with weights p_j.

    Parameters
    ----------
    method : {"fedavg", "fedprox", "pfedme"}
        ``pfedme`` is an alias of ``fedprox`` (Algorithm 1).
    gamma, r, sigma : sequence of float (M,)
        d / n_j > 0, ||theta_j - theta_0|| >= 0 and noise levels >= 0, client 0 first.
    signal : float
        ||theta_0|| >= 0.
    rounds : int, inf, or sequence of them
        Rounds T >= 0 at which to measure (any order); ``numpy.inf`` the fixed point.
    local_steps : int or inf
        K >= 1 local gradient steps per round (inf: exact local solve).
    step_size : float, optional
        Local step eta > 0, needed with finite K and refused with K = inf (as
        ``riskcalc.rounds_limit``: the exact local solve takes no step).
    global_step : float, optional
        g > 0; default 1 (FedAvg), 1/lam (Algorithm 1: plain averaging).
    lam : float
        Prox coupling > 0, Algorithm 1 only.
    weights : {"samples", "uniform"} or sequence
        Client weights p_j of the server updates.
    spectrum : Spectrum or SPEC str, optional
        Covariance spectrum shared by the clients (default identity).
    spectra : SPEC str, or sequence of SPEC str or eigenvalue lists, optional
        Covariate shift (instead of ``spectrum``; either method, any K): client j's
        covariance in the shared basis, its risks measured in it, as
        ``riskcalc.rounds_limit`` takes them (``montecarlo.linear.rounds_shift``).
    d, reps, seed : int
        Dimension (>= 2), replicates (>= 2), seed (``montecarlo.runner.seeding``).
    jobs : int
        Worker processes (results do not depend on it).
    measure : {"auto", "conditional", "empirical"}
        ``conditional``: exact expectation over theta and noise given the designs (FedAvg and
        Algorithm 1 with K = inf at any d, a closed form; Algorithm 1 with finite K by column
        propagation, O(d (sum k_j)^2) per round); ``empirical``: sampled theta and noise per
        design; ``auto``: conditional for FedAvg and K = inf, and for Algorithm 1 with finite
        K when it costs at most ``AUTO_EXACT_FLOPS``.
    draws : int
        Sampled (theta, noise) draws per design under ``empirical``, >= 1, propagated
        together and averaged (draw 0 is ``montecarlo.linear.federation.sample_federation``'s);
        ignored when the measurement is conditional.
    personalize : sequence of dict
        Personalizations after round T measured on the same replicates, each the keyword
        arguments of ``RoundsLimit.personalized_risk``: ``{"steps": k, "step_size": e}`` (FTFA,
        k full-batch gradient steps on f_j from the server model w_T; paper 003 Sec. 7 Alg. 5)
        or ``{"lam": lam}`` (RTFA, argmin f_j(v) + lam/2 ||v - w_T||^2; Sec. 3.2). Both are
        filters of client j's spectrum already decomposed for the rounds (no new d x d
        solve); read them with ``RoundsSimulation.personalized_risk``.
    cache, progress
        Passed to ``montecarlo.runner.tasks.run_tasks``.

    Returns
    -------
    RoundsSimulation
        Means and standard errors, shape (M, len(rounds)), of ``QUANTITIES``: ``risk`` (FedAvg:
        the server model after T rounds; Algorithm 1: the client's own model after its T-th
        local phase), ``bias`` and ``variance`` of that model, ``local_risk`` (the client's
        own model after the local phase of round T; the zero model at T = 0),
        ``global_risk`` (the server model), ``distance_to_fixed_point`` (E||model -
        model_inf||^2 of the model ``risk`` measures; paper 004 Cor. 1's epsilon) and
        ``global_distance`` (the server model's).

    Raises
    ------
    ValueError
        Bad input, or rounds = inf for a replicate whose iteration does not contract.
    """
    if measure not in ("auto",) + KINDS:
        raise ValueError(f"measure must be one of auto, {', '.join(KINDS)}; got {measure!r}")
    params = rounds_params(method, gamma=gamma, r=r, sigma=sigma, signal=signal,
                           rounds=rounds, local_steps=local_steps, step_size=step_size,
                           global_step=global_step, lam=lam, weights=weights,
                           spectrum=spectrum, spectra=spectra, d=d)
    reps, seed = positive_int("reps", reps, minimum=2), check_seed(seed)
    if measure == "conditional" and params["method"] == "fedprox" \
            and not np.isinf(params["local_steps"]):
        m, d = len(params["gamma"]), np.shape(params["s"])[-1]
        ks = np.minimum(sample_sizes(params), d)
        cols = (m + 1) * d + ks.sum()
        require_memory(8.0 * cols * (2 * (m + 1) * d + ks.sum()),
                       f"measure='conditional' for fedprox at d = {d}",
                       "use measure='empirical' (with draws) or lower d")
    keys = personalization_keys(personalize)
    base = {**params, "measure": measure, "seed": seed,
            "draws": positive_int("draws", draws)}
    if keys:        # absent otherwise: the cached tasks of earlier runs stay valid
        base["personalize"] = keys
    results = run_tasks(rounds_task, [{**base, "rep": rep} for rep in range(reps)],
                        cache=cache, n_jobs=jobs, progress=progress,
                        desc=f"rounds {params['method']}", command="rounds")
    samples = {k: np.array([res[k] for res in results], float) for k in QUANTITIES}
    with np.errstate(invalid="ignore", over="ignore"):     # a diverging curve: inf
        stats = {k: mean_se(v) for k, v in samples.items()}
    kinds = sorted({res["measure"] for res in results})
    pers = {}
    for i, key in enumerate(keys):
        vals = np.array([res["personalized"][i] for res in results], float)
        with np.errstate(invalid="ignore", over="ignore"):
            mean, se = mean_se(vals)
        pers[tuple(sorted(key.items()))] = {"mean": mean, "se": se, "samples": vals}
    return RoundsSimulation({k: v[0] for k, v in stats.items()},
                            {k: v[1] for k, v in stats.items()}, samples,
                            np.array([res["contraction"] for res in results]),
                            "+".join(kinds), params, pers)
