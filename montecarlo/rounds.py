"""Simulated risk along federated training: FedAvg with K local GD steps and paper 004's
Algorithm 1 (bilevel FedProx), every client's risk after each communication round.

The finite-d side of ``riskcalc.rounds_limit`` (DESIGN.md, "Contracts added in the fourth
round", training dynamics). Model (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 2): client j
has n_j = round(d / gamma_j) rows N(0, Sigma), y_j = X_j theta_j + eps_j, theta_j = theta_0 +
u_j, ||theta_0|| = signal and ||u_j|| = r_j in uniform directions, noise level sigma_j;
f_j(w) = ||X_j w - y_j||^2 / (2 n_j); every model starts at 0. Risk of a model w for client j:
E[(w - theta_j)^T Sigma (w - theta_j)], bias (the theta part) + variance (the noise part).

FedAvg, exactly given the designs (derived here). With S_j = X_j^T X_j / n_j, K steps of size
eta from w give v_j = A_j w + G_j b_j, A_j = I - Q_j, Q_j = 1 - (1 - eta S_j)^K (the projector
on range S_j for K = inf), G_j S_j = Q_j, b_j = S_j theta_j + X_j^T eps_j / n_j. The server
update w <- w + g sum_j p_j (v_j - w) is w <- (I - g D) w + g (D theta_0 + z + c) with
D = sum_j p_j Q_j, z = sum_j p_j Q_j u_j, c = sum_j p_j G_j X_j^T eps_j / n_j, so from w = 0

    w_T = P_T theta_0 + R_T (z + c),   R_T = g sum_{t<T} (I - g D)^t,   P_T = R_T D = I - (I - gD)^T.

In the eigenbasis D = W diag(delta) W^T both are diagonal: p_T(delta) = 1 - (1 - g delta)^T,
r_T = p_T / delta (g T on the null space of D, which z + c never reach). With E u u^T =
r^2/d I, E theta_0 theta_0^T = signal^2/d I and independent sources, client j's risk of w_T is

    bias = signal^2/d tr((I-P) Sigma (I-P)) + tr(Sigma R Z R) - 2 p_j r_j^2/d tr(Sigma R Q_j)
           + r_j^2/d tr Sigma,                                       variance = tr(Sigma R N R),

Z = sum_k p_k^2 r_k^2/d Q_k^2, N = sum_k p_k^2 sigma_k^2/n_k G_k S_k G_k. Every trace
tr(M1 R M2 R) is f^T (M1_W o M2_W) f with f = r_T(delta) and M_W = W^T M W (o: Hadamard
product), so after one eigendecomposition of D each T costs O(d^2). Client j's own model after
round T is v_j - theta_j = A_j (w_{T-1} - theta_j) + G_j X_j^T eps_j / n_j: the same formulas with
Sigma replaced by A_j Sigma A_j, plus the noise cross term 2 p_j sigma_j^2/n_j tr(Sigma A_j R
G_j S_j G_j) and the constant sigma_j^2/n_j tr(Sigma G_j S_j G_j). The fixed point (T = inf, when
the spectral radius max |1 - g delta| on the range of D is below 1) has p = 1, r = 1/delta on
the range; E||w_T - w_inf||^2 = signal^2/d sum (p_T - p_inf)^2 + sum (r_T - r_inf)^2 (Z_W +
N_W)_aa. All S_j, Q_j act through each client's eigendecomposition (``montecarlo.measure``).
Cost per replicate: the M decompositions, D (2 d^2 sum_j k_j), its eigendecomposition (~9 d^3),
W^T R_j and A_j W for every client (4 d^2 k_j), W^T A_j Sigma A_j W (2 d^3 per client; 2 d^2
k_j for a scaled identity), and 4 d^2 per round asked per client.

Algorithm 1 (and FedAvg under ``measure="empirical"``) run on columns through
``montecarlo.rounds_propagate`` (its docstring): exact given the designs only at small d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from montecarlo.instances import sample_size
from montecarlo.measure import KINDS, decompose
from montecarlo.rounds_propagate import Propagation, client_basis, curve, fedavg_factors
from montecarlo.seeding import check_seed, replicate_rng
from montecarlo.stats import mean_se
from montecarlo.tasks import run_tasks
from riskcalc._validate import as_array, nonnegative, positive, positive_int
from riskcalc.linear.finite_clients import client_weight_vector
from riskcalc.spectrum import Spectrum

METHODS = ("fedavg", "fedprox", "pfedme")
QUANTITIES = ("risk", "bias", "variance", "local_risk", "global_risk",
              "distance_to_fixed_point", "global_distance")

#: measure="auto" runs Algorithm 1 exactly given the designs when the column propagation
#: costs at most this many flops (``rounds_propagate``), else on one sampled draw.
AUTO_EXACT_FLOPS = 2e9


# --- FedAvg, exact given the designs ------------------------------------------------------

def _polys(delta, T, g, tol):
    """p_T(delta), r_T(delta) (module docstring); T = inf gives the fixed point."""
    on = np.abs(delta) > tol
    safe = np.where(on, delta, 1.0)
    if np.isinf(T):
        return on.astype(float), np.where(on, 1.0 / safe, 0.0)
    x = g * delta
    small = np.abs(x) < 0.5
    with np.errstate(over="ignore", invalid="ignore"):
        pt = np.where(small, -np.expm1(T * np.log1p(-np.where(small, x, 0.0))),
                      1.0 - (1.0 - x) ** T)
    return np.where(on, pt, 0.0), np.where(on, pt / safe, g * T)


def _gram(blocks, weights):
    """sum_j B_j diag(w_j) B_j^T as one product of the stacked blocks: with every w >= 0,
    C C^T for C = [B_j diag(sqrt(w_j))], which numpy runs as a symmetric rank-k update."""
    w = np.concatenate(weights)
    B = np.hstack(blocks)
    if (w >= 0).all():
        C = B * np.sqrt(w)
        return C @ C.T
    return (B * w) @ B.T


def fedavg_conditional(basis, n, s, p, r, sigma, signal, rounds, K, eta, g) -> dict:
    """FedAvg's curves exactly given the designs (expectation over theta_0, u_j and noise).

    Derivation in the module docstring (derived here; paper 003 Sec. 2 model, FedAvg of paper
    003 Alg. 4 with K full-batch local steps and global step g).

    Parameters
    ----------
    basis : list of (R_j, mu_j)
        S_j = R_j diag(mu_j) R_j^T (``rounds_propagate.client_basis``).
    n : ndarray (M,)
        Sample sizes.
    s : ndarray (d,)
        Eigenvalues of Sigma (designs in its eigenbasis).
    p, r, sigma : ndarray (M,)
        Weights, ||u_j||, noise levels.
    signal : float
        ||theta_0||.
    rounds : sequence
        Rounds T (ints, any order; inf for the fixed point).
    K, eta, g : float
        Local steps (int or inf), local step size, global step.

    Returns
    -------
    dict
        Arrays (M, len(rounds)) as ``rounds_propagate.curve`` (``global_*`` = the server
        model, which ``risk`` measures), and ``contraction``.
    """
    d, m = s.size, len(basis)
    q = [fedavg_factors(mu, K, eta) for _, mu in basis]
    D = _gram([R for R, _ in basis], [pj * qj for pj, qj in zip(p, q)])
    delta, W = np.linalg.eigh(D)
    tol = np.abs(delta).max() * d * np.finfo(float).eps * 10
    radius = float(np.max(np.abs(1.0 - g * delta[np.abs(delta) > tol])))
    if any(np.isinf(t) for t in rounds) and not radius < 1.0:
        raise ValueError(f"the fedavg iteration does not converge (spectral radius of its "
                         f"round map {radius:.6g} >= 1): no fixed point (rounds = inf); lower "
                         "the step sizes")
    Y = [W.T @ R for R, _ in basis]
    ZW = _gram(Y, [pk ** 2 * rk ** 2 / d * qk ** 2 for pk, rk, qk in zip(p, r, q)])
    NW = _gram(Y, [pk ** 2 * sk ** 2 / nk * qk ** 2 / mu
                   for pk, sk, nk, qk, (_, mu) in zip(p, sigma, n, q, basis)])
    iso = bool(np.all(s == s[0]))
    SW = s[0] * np.eye(d) if iso else (W.T * s) @ W
    polys = [_polys(delta, t, g, tol) for t in rounds]
    P = np.array([x[0] for x in polys]).T
    F = np.array([x[1] for x in polys]).T
    # The local model of round T starts from w_{T-1} (T = 0: no round yet, the zero model).
    before = [_polys(delta, t - 1 if t >= 1 else 0, g, tol) for t in rounds]
    Pb = np.array([x[0] for x in before]).T
    Fb = np.array([x[1] for x in before]).T
    p_inf, f_inf = _polys(delta, np.inf, g, tol)

    def quad(H, G):
        return np.sum(G * (H @ G), axis=0)

    theta0 = signal ** 2 / d * ((1.0 - P) ** 2 * np.diag(SW)[:, None]).sum(0)
    common_b, common_v = theta0 + quad(SW * ZW, F), quad(SW * NW, F)
    dist = (signal ** 2 / d * ((P - p_inf[:, None]) ** 2).sum(0)
            + ((F - f_inf[:, None]) ** 2 * np.diag(ZW + NW)[:, None]).sum(0))
    out = {k: np.empty((m, len(rounds))) for k in QUANTITIES}
    zero = np.array([t == 0 for t in rounds])
    for j, ((R, mu), Yj, qj) in enumerate(zip(basis, Y, q)):
        u2 = r[j] ** 2 / d
        sR = s[:, None] * R
        cross = (Yj * qj * (W.T @ sR)).sum(1) if not iso else s[0] * (Yj ** 2 @ qj)
        out["bias"][j] = common_b - 2 * p[j] * u2 * (cross @ F) + u2 * s.sum()
        out["variance"][j] = common_v
        # Client j's own model: Sigma -> A_j Sigma A_j in the W basis, B = A_j W.
        if iso:
            SWj = s[0] * (np.eye(d) - (Yj * (2 * qj - qj ** 2)) @ Yj.T)
            Gm = s[0] * Yj * (1.0 - qj)
        else:
            B = W - (R * qj) @ Yj.T
            SWj, Gm = (B.T * s) @ B, B.T @ sR
        cross_l = ((Yj * (qj * (1.0 - qj))) * Gm).sum(1)
        ncross = ((Gm * (qj ** 2 / mu)) * Yj).sum(1)
        own_noise = sigma[j] ** 2 / n[j] * (qj ** 2 / mu) @ (s @ R ** 2)
        lb = (signal ** 2 / d * ((1.0 - Pb) ** 2 * np.diag(SWj)[:, None]).sum(0)
              + quad(SWj * ZW, Fb) - 2 * p[j] * u2 * (cross_l @ Fb) + u2 * np.trace(SWj))
        lv = (quad(SWj * NW, Fb) + 2 * p[j] * sigma[j] ** 2 / n[j] * (ncross @ Fb)
              + own_noise)
        out["local_risk"][j] = np.where(zero, (signal ** 2 / d + u2) * s.sum(), lb + lv)
    out["risk"] = out["bias"] + out["variance"]
    out["global_risk"] = out["risk"].copy()
    out["distance_to_fixed_point"] = np.broadcast_to(dist, (m, len(rounds))).copy()
    out["global_distance"] = out["distance_to_fixed_point"].copy()
    out["contraction"] = radius
    return out


# --- one replicate --------------------------------------------------------------------------

def sample_designs(gamma, s, seed: int, rep: int):
    """Client designs X_j (n_j x d, rows N(0, diag(s))) of replicate ``rep``: the streams of
    ``montecarlo.federation.sample_federation`` (client j's features from
    ``replicate_rng(seed, rep, j, 0)``), so the same seed gives the same designs there."""
    return [replicate_rng(seed, rep, j, 0).standard_normal(
        (sample_size(s.size, g, f"client {j}"), s.size)) * np.sqrt(s)
        for j, g in enumerate(gamma)]


def sample_draw(X, s, r, sigma, signal, seed: int, rep: int, k: int = 0):
    """theta_j (rows) and noise of draw ``k`` of replicate ``rep``. Draw 0 takes the streams
    of ``sample_federation`` (theta_0 from (rep, M, 0), u_j from (rep, j, 1), noise from
    (rep, j, 2)); draw k > 0 appends k to each stream."""
    m, d = len(X), s.size
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


def source_columns(basis, n, s, r, sigma, signal):
    """(beta, targets) of the scaled source basis (``rounds_propagate`` docstring): columns
    theta_0 (d), u_1..u_M (d each), then each client's noise (k_j each)."""
    m, d = len(basis), s.size
    ks = [mu.size for _, mu in basis]
    cs, c = (m + 1) * d, (m + 1) * d + sum(ks)
    beta, targets = [], []
    for j, (R, mu) in enumerate(basis):
        b = np.zeros((mu.size, c))
        b[:, :d] = mu[:, None] * R.T * (signal / np.sqrt(d))
        b[:, (j + 1) * d:(j + 2) * d] = mu[:, None] * R.T * (r[j] / np.sqrt(d))
        start = cs + sum(ks[:j])
        b[:, start:start + mu.size] = np.diag(sigma[j] * np.sqrt(mu / n[j]))
        t = np.zeros((d, cs))
        t[:, :d] = np.eye(d) * (signal / np.sqrt(d))
        t[:, (j + 1) * d:(j + 2) * d] = np.eye(d) * (r[j] / np.sqrt(d))
        beta.append(b)
        targets.append(t)
    return beta, targets


def draw_columns(basis, X, draws):
    """(beta, targets) of sampled draws ``[(theta, eps), ...]``: their signal columns, then
    their noise columns."""
    beta, targets = [], []
    for j, ((R, mu), x) in enumerate(zip(basis, X)):
        th = np.column_stack([t[j] for t, _ in draws])
        noise = np.column_stack([e[j] for _, e in draws])
        beta.append(np.hstack([mu[:, None] * (R.T @ th), R.T @ (x.T @ noise) / x.shape[0]]))
        targets.append(th)
    return beta, targets


def propagation_flops(d, ks, rounds, method) -> float:
    """Flops of the exact column propagation (``source_columns``) over ``rounds``."""
    m, kt = len(ks), float(sum(ks))
    finite = [t for t in rounds if not np.isinf(t)]
    per = (6 if method == "fedprox" else 4) * d * kt * ((m + 1) * d + kt)
    return per * (max(finite, default=0) + 1)


def rounds_task(task: dict) -> dict:
    """One replicate (the unit of work of ``run_tasks``): every client's curves, lists of
    shape (M, len(rounds)), the round map's ``contraction`` and the route used."""
    s = np.asarray(task["s"], float)
    gamma, r, sigma, p, n_rounds = (np.asarray(task[k], float) for k in
                                    ("gamma", "r", "sigma", "p", "rounds"))
    rounds, K = list(n_rounds), float(task["local_steps"])
    X = sample_designs(gamma, s, task["seed"], task["rep"])
    basis = [client_basis(dec) for dec in decompose(X, s, eager_v=True)]
    n = np.array([x.shape[0] for x in X])
    method, kind = task["method"], task["measure"]
    if kind == "auto":
        kind = "conditional" if method == "fedavg" or propagation_flops(
            s.size, [mu.size for _, mu in basis], rounds, method) <= AUTO_EXACT_FLOPS \
            else "empirical"
    if method == "fedavg" and kind == "conditional":
        out = fedavg_conditional(basis, n, s, p, r, sigma, task["signal"], rounds, K,
                                 task["step_size"], task["global_step"])
    else:
        if kind == "conditional":
            beta, targets = source_columns(basis, n, s, r, sigma, task["signal"])
        else:
            beta, targets = draw_columns(basis, X, [sample_draw(
                X, s, r, sigma, task["signal"], task["seed"], task["rep"], k)
                for k in range(task["draws"])])
        out = curve(Propagation(method, basis, beta, targets, s, p, K, task["step_size"],
                                task["global_step"], task["lam"], kind == "conditional"),
                    rounds)
    return {**{k: np.asarray(out[k]).tolist() for k in QUANTITIES},
            "contraction": out["contraction"], "measure": kind}


# --- validation and the replicate layer -----------------------------------------------------

def check_rounds(rounds) -> list:
    """An int T >= 0, ``numpy.inf``, or a non-empty sequence of them, as a list of floats."""
    seq = list(np.atleast_1d(np.asarray(rounds, dtype=object)).ravel())
    if not seq:
        raise ValueError("rounds must list at least one T")
    for t in seq:
        if not (isinstance(t, (float, np.floating)) and np.isinf(t) and t > 0):
            positive_int("rounds", t, minimum=0)
    return [float(t) for t in seq]


def check_local_steps(K) -> float:
    """An integer K >= 1, or ``numpy.inf`` (exact local solve)."""
    if isinstance(K, (float, np.floating)) and np.isinf(K) and K > 0:
        return float("inf")
    return float(positive_int("local_steps", K))


def rounds_params(method, *, gamma, r, sigma, signal, rounds, local_steps, step_size,
                  global_step=None, lam=None, weights="samples", spectrum=None, d) -> dict:
    """The checked, JSON-serializable parameters of ``simulate_rounds`` (one task minus its
    seed and replicate)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    method = "fedprox" if method == "pfedme" else method
    gamma = np.atleast_1d(positive("gamma", gamma)).ravel()
    m = gamma.size
    vals = {}
    for name, v in (("r", r), ("sigma", sigma)):
        arr = np.atleast_1d(nonnegative(name, v)).ravel()
        if arr.size != m:
            raise ValueError(f"{name} lists {arr.size} clients, gamma {m}")
        vals[name] = arr
    d = positive_int("d", d)
    K = check_local_steps(local_steps)
    eta = None if step_size is None else float(positive("step_size", step_size))
    if eta is None and not np.isinf(K):
        raise ValueError("step_size (> 0) is needed with finite local_steps")
    if method == "fedavg":
        if lam is not None:
            raise ValueError("lam applies to fedprox (Algorithm 1) only")
        lam, default_g = None, 1.0
    else:
        lam = float(positive("lam", lam if lam is not None else np.nan))
        default_g = 1.0 / lam
    g = default_g if global_step is None else float(positive("global_step", global_step))
    if isinstance(spectrum, str):
        spectrum = Spectrum.parse(spectrum, d)
    if spectrum is not None and not spectrum.signal_is_uniform:
        raise ValueError("training dynamics need uniform signal directions: a spectrum with "
                         "signal_weights is refused")
    s = np.ones(d) if spectrum is None else spectrum.eigenvalues(d)
    n = np.array([sample_size(d, gj, f"client {j}") for j, gj in enumerate(gamma)])
    p = (n / n.sum() if isinstance(weights, str) and weights == "samples" else
         np.full(m, 1.0 / m) if isinstance(weights, str) and weights == "uniform" else
         client_weight_vector(weights, m))
    return dict(method=method, gamma=gamma.tolist(), r=vals["r"].tolist(),
                sigma=vals["sigma"].tolist(), signal=float(nonnegative("signal", signal)),
                rounds=check_rounds(rounds), local_steps=K, step_size=eta, global_step=g,
                lam=lam, p=p.tolist(), s=s.tolist())


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
    """

    mean: dict
    se: dict
    samples: dict
    contraction: np.ndarray
    measure: str
    params: dict

    def __getattr__(self, name):
        for table, key in ((self.mean, name), (self.se, name[:-3] if name.endswith("_se")
                                               else None)):
            if key in table:
                return table[key]
        raise AttributeError(name)

    @property
    def converges(self) -> np.ndarray:
        """Whether each replicate's round map contracts (spectral radius < 1)."""
        return self.contraction < 1.0


def simulate_rounds(method, *, gamma, r, sigma, signal, rounds, local_steps, step_size,
                    global_step=None, lam=None, weights="samples", spectrum=None, d, reps,
                    seed=0, jobs=1, measure="auto", draws=1, cache=None,
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
    step_size : float
        Local step eta > 0 (unused with K = inf).
    global_step : float, optional
        g > 0; default 1 (FedAvg), 1/lam (Algorithm 1: plain averaging).
    lam : float
        Prox coupling > 0, Algorithm 1 only.
    weights : "samples" | "uniform" | sequence
        Client weights p_j of the server updates.
    spectrum : Spectrum or SPEC str, optional
        Covariance spectrum shared by the clients (default identity).
    d, reps, seed : int
        Dimension, replicates (>= 2), seed (``montecarlo.seeding``).
    jobs : int
        Worker processes (results do not depend on it).
    measure : {"auto", "conditional", "empirical"}
        ``conditional``: exact expectation over theta and noise given the designs (FedAvg at
        any d; Algorithm 1 by column propagation, O(d (sum k_j)^2) per round); ``empirical``:
        one sampled theta and noise per design; ``auto``: conditional for FedAvg, and for
        Algorithm 1 when it costs at most ``AUTO_EXACT_FLOPS``.
    draws : int
        Sampled (theta, noise) draws per design under ``empirical``, >= 1, propagated
        together and averaged (draw 0 is ``montecarlo.federation.sample_federation``'s);
        ignored when the measurement is conditional.
    cache, progress
        Passed to ``montecarlo.tasks.run_tasks``.

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
                           spectrum=spectrum, d=d)
    reps, seed = positive_int("reps", reps, minimum=2), check_seed(seed)
    base = {**params, "measure": measure, "seed": seed,
            "draws": positive_int("draws", draws)}
    results = run_tasks(rounds_task, [{**base, "rep": rep} for rep in range(reps)],
                        cache=cache, n_jobs=jobs, progress=progress,
                        desc=f"rounds {params['method']}", command="rounds")
    samples = {k: np.array([res[k] for res in results], float) for k in QUANTITIES}
    with np.errstate(invalid="ignore", over="ignore"):     # a diverging curve: inf
        stats = {k: mean_se(v) for k, v in samples.items()}
    kinds = sorted({res["measure"] for res in results})
    return RoundsSimulation({k: v[0] for k, v in stats.items()},
                            {k: v[1] for k, v in stats.items()}, samples,
                            np.array([res["contraction"] for res in results]),
                            "+".join(kinds), params)
