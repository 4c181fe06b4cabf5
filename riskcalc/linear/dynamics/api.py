"""``rounds_limit``: the public face of the dynamics room (its tuning, ``optimal_rounds`` and
``rounds_to_eps``, in ``riskcalc.linear.dynamics.tuning``).

Contract: ``../shared/DESIGN.md``, "Contracts added in the fourth round" (training dynamics);
issue 29. FedAvg with K local full-batch gradient steps (``fedavg``, Sigma = I; with a shared
covariance spectrum: ``fedavg_sigma`` for K = 1, ``fedavg_sigma_k`` for K >= 2, the own
models ``fedavg_own``) and paper 004's
Algorithm 1
(``pfedme``/``fedprox``) with exact local solves (K = inf, eq. 10, ``prox_laws``) or K < inf
warm-started local steps (eq. 11, ``algorithm1_curves``); with a shared spectrum and exact
local solves ``prox_sigma`` (server and own models). A covariance spectrum with Algorithm 1's
finite K or FedAvg's K = inf, client sampling, minibatch SGD and logistic dynamics are not
covered yet (each is refused with a message saying so).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from riskcalc import solvers
from riskcalc.errors import SolverError
from riskcalc._validate import (MAX_INT, METHOD_ALIASES, SCALE_MAX, as_array, parameter,
                                per_client, positive)

#: Methods with rounds limits, by canonical name (``fedprox`` is an alias of ``pfedme``).
AVAILABLE = ("fedavg", "pfedme")


@dataclass(frozen=True)
class RoundsLimit:
    """Limits along the rounds (``rounds_limit``); arrays of shape (M, len(rounds)).

    Attributes
    ----------
    method : str
    params : dict
    rounds : ndarray (R,)
        The rounds in the order given (inf for the fixed point).
    bias, variance, risk : ndarray (M, R)
        FedAvg: client j's risk E||w_T - theta_j||^2 of the server model after T rounds and
        its parts; Algorithm 1 (``pfedme``): of client j's own model after its T-th local
        phase (DESIGN.md, fourth round).
    local_risk : ndarray (M, R)
        Client j's risk of its own model after the local phase of round T (a property,
        computed on first access; for Algorithm 1 the same as ``risk``).
    global_risk : ndarray (M, R)
        The server model's risk for each client: for FedAvg the same as ``risk``.
    distance_to_fixed_point : ndarray (R,)
        The limit of ||w_T - w_inf||^2 of the server model (paper 004, Cor. 1's epsilon);
        w_inf = D^+ c is the fixed point of the round map (it exists even when the iteration
        diverges).
    contraction : float
        max abs(1 - g x) over the nonzero spectrum of the round map's matrix D (g: FedAvg's
        global step; Algorithm 1's gamma lam): the exact limit of the spectral radius of the
        (symmetric) round map on its range.
    converges : bool
        contraction < 1.
    diagnostics : dict
        The spectrum's edges and atom at 0, the contour nodes, and the scalar solves.
    """

    method: str
    params: dict
    rounds: np.ndarray
    bias: np.ndarray
    variance: np.ndarray
    risk: np.ndarray
    global_risk: np.ndarray
    distance_to_fixed_point: np.ndarray
    contraction: float
    converges: bool
    diagnostics: dict = field(default_factory=dict, compare=False)
    _local: object = field(default=None, compare=False, repr=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def local_risk(self) -> np.ndarray:
        """(M, R): client j's risk E||v_j - theta_j||^2 of its OWN model after its K local
        steps of round T (started from the server model w_{T-1}; T = 0: the zero model;
        T = inf: from the fixed point). Computed on first access (a double contour,
        ``riskcalc.linear.dynamics.local_models``; with a spectrum
        ``riskcalc.linear.dynamics.sigma.fedavg_own``), then cached."""
        if "local" not in self._cache:
            bias, variance = self._local()
            self._cache["local"] = bias + variance
        return self._cache["local"]

    def personalized_risk(self, *, steps=None, step_size=None, lam=None) -> np.ndarray:
        """(M, R): client j's risk after personalizing the server model of round T (T = 0:
        the zero model; inf: the fixed point) by FTFA, ``steps`` full-batch gradient steps of
        size ``step_size`` on its own loss, or by RTFA, the ridge ``lam`` toward the server
        model. Exact limit, derived in ``riskcalc.linear.dynamics.personalize`` (paper 003,
        ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 and Sec. 3.2, from the round-T model).

        Raises
        ------
        ValueError
            Neither or both of FTFA's (steps, step_size) and RTFA's lam, or a bad value.
        """
        from riskcalc.linear.dynamics.personalize import (filter_terms, ftfa_overflow,
                                                          personalization_filter)

        pi, key = personalization_filter(steps, step_size, lam)
        if key["personalization"] == "ftfa" and "spectrum" not in self.params:
            ftfa_overflow(np.asarray(self.params["gamma"], float), key["steps"],
                           key["step_size"])
        key = tuple(sorted(key.items()))
        if key not in self._cache:
            bias, variance = self._local(filter_terms(pi))
            self._cache[key] = bias + variance
        return self._cache[key]


def _per_client(gamma, r, sigma):
    vals = per_client({"gamma": gamma, "r": r, "sigma": sigma})
    return tuple(parameter(k, vals[k]) for k in ("gamma", "r", "sigma"))


#: Most cells (rounds asked) x (contour nodes) of one curve: each T is a row over the contour,
#: whose nodes grow as 2 max(T) + 16 (``fedavg._contour``, at most ``MAX_NODES``). Measured
#: (FedAvg, M = 1, a loaded 2-core machine): 4000 rounds up to T = 4000, 8.6e6 cells, 18 s;
#: 10^6 rounds asked for 32 GiB. Checked before any solve, on max(T) (the contour may stop
#: short of it when the iteration settles sooner).
MAX_ROUND_CELLS = 1e7


def _check_work(count: int, top: float, name: str = "rounds",
                advice: str = "ask for fewer rounds, e.g. every 10th T of the range") -> None:
    """ValueError naming ``name`` when ``count`` rounds up to T = ``top`` exceed
    ``MAX_ROUND_CELLS``."""
    from riskcalc.linear.dynamics.fedavg import MAX_NODES

    cells = count * (min(top, MAX_NODES // 2) + 8)
    if cells > MAX_ROUND_CELLS:
        raise ValueError(f"{name}: {count} rounds up to T = {top:.0f} cost {cells:.3g} contour "
                         f"evaluations (more than {MAX_ROUND_CELLS:.0g}: minutes and gigabytes); "
                         f"{advice}")


def _rounds(rounds):
    arr = np.atleast_1d(as_array("rounds", rounds, low=0.0, allow_inf=True, ndim=1)).ravel()
    fin = np.isfinite(arr)
    if arr.size == 0 or np.any(arr[fin] != np.round(arr[fin])) or np.any(arr[fin] > MAX_INT):
        raise ValueError(f"rounds must be integers in 0..{MAX_INT} (2^53) or numpy.inf, got "
                         f"{rounds!r}"[:200])
    _check_work(arr.size, arr[fin].max(initial=0.0))
    return arr


def _local_steps(local_steps):
    K = as_array("local_steps", local_steps, low=1.0, allow_inf=True)
    if K.ndim or (np.isfinite(K) and (K != np.round(K) or K > MAX_INT)):
        raise ValueError(f"local_steps must be one integer in 1..{MAX_INT} (2^53) or numpy.inf, "
                         f"got {local_steps!r}")
    return float(K) if np.isinf(K) else int(K)


#: Smallest local step size with finite local_steps: below it 1 - (1 - step_size s)^K loses
#: its digits to rounding (measured, FedAvg M = 1, T = 1: exact to 1e-16 down to 1e-14, wrong
#: in the 5th digit at 1e-15, and below that a refusal blaming gamma).
MIN_STEP_SIZE = 1e-12


#: Most local steps solved as such: the exact route sums over the K roots of the local filter
#: at every contour node (measured, M = 2 clients, 3 rounds: 7 s at K = 1000, 30 s at 10^4,
#: more than 2 minutes and 1 GB at 10^5; K = 10^9 asked for 8 GB for the roots alone).
MAX_LOCAL_STEPS = 10_000


def _effective_steps(K, eta: float, gam):
    """K, or inf when K local steps are the exact local solve to rounding: q(s) = 1 - (1 - eta
    s)^K is 1 within 2^-53 on every client's continuous spectrum [(1 - sqrt g)^2, (1 + sqrt
    g)^2] (and 0 at its atom at 0 for any K). ValueError beyond ``MAX_LOCAL_STEPS`` otherwise."""
    if np.isinf(K) or K <= MAX_LOCAL_STEPS:
        return K
    lo, hi = (1.0 - np.sqrt(gam)) ** 2, (1.0 + np.sqrt(gam)) ** 2
    worst = np.maximum(np.abs(1.0 - eta * lo), np.abs(1.0 - eta * hi))
    if np.all(worst < 1.0) and np.all(K * np.log(worst) <= -53 * np.log(2.0)):
        return np.inf
    raise ValueError(f"local_steps = {K}: more than {MAX_LOCAL_STEPS} local steps that still "
                     "differ from the exact local solve (a client with gamma_j near 1 has "
                     "spectrum near 0, where (1 - step_size s)^K stays near 1) cost minutes "
                     "per curve here; give local_steps <= "
                     f"{MAX_LOCAL_STEPS}, or numpy.inf for the exact local solve")


def _pencil_local(gam, r, sigma, p, signal, eta, g, rounds, spectrum):
    """FedAvg's K = 1 own models under a spectrum: ``fedavg_sigma_k``'s (the pencil with one
    local step, ``riskcalc.linear.dynamics.sigma.fedavg_own``), solved on first use."""
    def local(terms=None):
        from riskcalc.linear.dynamics.sigma.fedavg_sigma_k import fedavg_sigma_k_curves

        return fedavg_sigma_k_curves(gam, r, sigma, p, signal, eta, 1, g, rounds,
                                     spectrum)["local"](terms)
    return local


@contextmanager
def _beyond_floats():
    """An OverflowError of the curves' arithmetic (Algorithm 1 at global_step 1e100: a contour
    of infinitely many nodes) as the SolverError that names what to lower, not a traceback."""
    try:
        yield
    except OverflowError as exc:
        raise SolverError(f"rounds limit: {exc} (the round map's spectrum is beyond floating "
                          "point reach; lower global_step or step_size)") from None


def _weights(weights, gam):
    from riskcalc.linear.finite_clients import check_weights, client_weight_vector
    from riskcalc.linear.finite_clients.identity import client_weights

    if isinstance(weights, str):
        return client_weights(gam, np.ones(gam.size), check_weights(weights))
    return client_weight_vector(weights, gam.size)


def rounds_limit(method: str, *, gamma, r, sigma, signal, rounds, local_steps, step_size=None,
                 global_step=None, lam=None, weights="samples", spectrum=None) -> RoundsLimit:
    """Exact limits of every client's risk along the rounds of federated training.

    ``fedavg``: ``local_steps`` = K full-batch gradient steps of size ``step_size`` = eta per
    round on f_j(w) = ||X_j w - y_j||^2 / (2 n_j), from the server model, which then moves by
    w <- w + g sum_j p_j (v_j - w). ``pfedme`` (alias ``fedprox``): paper 004's Algorithm 1
    (``004_98172ed3646eef14.txt``, Appendix B.1, eqs. 9-11) with exact local solves
    (K = inf: each client returns v_j = prox_{f_j / lam}(w), eq. 9; finite K: K gradient steps
    of size eta on h_j = f_j + lam/2 ||. - w||^2 warm-started at the client's previous model,
    eq. 11) and the server step
    w <- w - g lam sum_j p_j (w - v_j) (eq. 10, g = the paper's gamma; default 1 / lam, the
    paper's choice for its real data, which makes w the average of the v_j). Training starts at
    w = 0. Limit d, n_j -> inf with d / n_j -> gamma_j and M fixed, Sigma = I (``fedavg`` with
    finite ``local_steps``: any shared spectrum, ``riskcalc.linear.dynamics.sigma.fedavg_sigma``
    and ``riskcalc.linear.dynamics.sigma.fedavg_sigma_k``).
    Derivation: ``riskcalc.linear.dynamics.fedavg``, ``riskcalc.linear.dynamics.prox_laws`` and
    ``riskcalc.linear.dynamics.algorithm1_curves`` (derived
    here; paper 003, ``003_4b976ddf5225c17e.txt``, eq. 6 is FedAvg's K = 1, T = inf limit and
    eq. 14 pFedMe's T = inf limit).

    Parameters
    ----------
    method : {"fedavg", "pfedme", "fedprox"}
    gamma, r, sigma : float or sequence of float
        Per-client d / n_j > 0, ||theta_j - theta_0|| >= 0 and noise level >= 0 (client 0
        first; scalars are shared).
    signal : float
        ||theta_0|| >= 0 (uniform direction).
    rounds : int, sequence of int, or numpy.inf
        Numbers of server updates T >= 0 (any order; inf: the fixed point, which must exist:
        contraction < 1).
    local_steps : int or numpy.inf
        K >= 1 (inf: the exact local solve from the server model: FedAvg's min-norm local least
        squares, Algorithm 1's prox).
    step_size : float, optional
        eta > 0, needed for finite K; FedAvg with K >= 2: local gradient descent stable,
        eta (1 + sqrt(gamma_j))^2 <= 2 for every client (with a spectrum: eta times the top
        of each client's sample spectrum); Algorithm 1: eta <= 1 / (L + lam),
        L = max_j (1 + sqrt(gamma_j))^2 (paper 004 Thm 2's condition, under which the round
        map's spectrum is real). Unused for K = inf.
    global_step : float, optional
        g > 0 (default 1 for FedAvg, 1 / lam for Algorithm 1).
    lam : float, optional
        Algorithm 1's proximal penalty lam > 0 (required for ``pfedme``; FedAvg has none).
    weights : {"samples", "uniform"} or sequence of float
        p_j = n_j / N, 1/M, or given positive numbers (normalized).
    spectrum : riskcalc.Spectrum, optional
        Covariance spectrum H shared by the clients, uniform signal directions; the risk is
        E[(w - theta_j)^T Sigma (w - theta_j)]. Other than the identity: ``fedavg`` with finite
        ``local_steps`` (``riskcalc.linear.dynamics.sigma.fedavg_sigma``, K = 1;
        ``riskcalc.linear.dynamics.sigma.fedavg_sigma_k``, K >= 2, within its time estimate and
        local steps stable under the spectrum; ``local_risk``, the own models:
        ``riskcalc.linear.dynamics.sigma.fedavg_own``; ``personalized_risk`` is refused);
        ``pfedme`` with ``local_steps=numpy.inf``, the own models (``risk``) and the server
        model (``global_risk``) (``riskcalc.linear.dynamics.sigma.prox_sigma``;
        ``personalized_risk`` is refused).

    Returns
    -------
    RoundsLimit
        Arrays of shape (M, len(rounds)); values beyond 1e300 of a diverging iteration are inf.

    Raises
    ------
    ValueError
        Bad input, a method or spectrum not covered, the fixed point of a diverging iteration,
        or the round map's spectrum reaching 0 (FedAvg: sum_j min(1, 1/gamma_j) = 1 exactly).
    SolverError
        When the subordination solve fails (inputs beyond floating point reach).

    Examples
    --------
    >>> res = rounds_limit("fedavg", gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0,
    ...                    rounds=[0, 10, np.inf], local_steps=5, step_size=0.2)
    >>> res.risk.shape
    (2, 3)
    """
    name = METHOD_ALIASES.get(method, method)
    if name not in AVAILABLE:
        raise ValueError(f"method must be one of fedavg, pfedme (alias fedprox) for rounds "
                         f"limits; got {method!r}")
    if isinstance(spectrum, str):
        from riskcalc.spectrum import Spectrum

        spectrum = Spectrum.parse(spectrum)
    elif spectrum is not None and not hasattr(spectrum, "signal_is_uniform"):
        raise ValueError("spectrum must be a riskcalc.Spectrum or a SPEC string such as "
                         f"'two-point:1,3,0.5', got {type(spectrum).__name__}")
    shared = spectrum is not None and not (spectrum.is_identity and spectrum.signal_is_uniform)
    if shared and not spectrum.signal_is_uniform:
        raise ValueError("spectrum: rounds limits need uniform signal directions (a spectrum "
                         "with signal_weights is not covered)")
    gam, rr, sig = _per_client(gamma, r, sigma)
    s = float(parameter("signal", signal, ndim=0))
    T = _rounds(rounds)
    K = _local_steps(local_steps)
    if shared and (name == "fedavg") == np.isinf(K):
        raise ValueError("spectrum: rounds limits with a covariance spectrum are available for "
                         "fedavg with finite local_steps only and for pfedme (Algorithm 1) "
                         "with local_steps=inf only (FedAvg's exact local solves and Algorithm "
                         "1's local steps with a spectrum: not yet; Sigma = I covers both)")
    p = _weights(weights, gam)
    # At most SCALE_MAX: beyond it the local filter's powers overflow the quadratures (measured:
    # 1e100 answers, inf where it overflows; 1e150 a SolverError blaming lam or u).
    eta = None if step_size is None else float(as_array("step_size", step_size, low=0.0,
                                                        low_open=True, high=SCALE_MAX, ndim=0))
    if eta is not None and np.isfinite(K) and eta < MIN_STEP_SIZE:
        raise ValueError(f"step_size must be >= {MIN_STEP_SIZE:g} with finite local_steps, got "
                         f"{eta:g}: below it the local filter 1 - (1 - step_size s)^K is lost "
                         "to rounding (the curve would be silently wrong)")
    if name == "pfedme":
        if lam is None:
            raise ValueError("method pfedme (Algorithm 1) needs lam > 0")
        lam = float(positive("lam", lam, ndim=0))
        if np.isfinite(K) and eta is None:
            raise ValueError("step_size: Algorithm 1 with finite local_steps needs step_size "
                             "> 0 (its local gradient step eta)")
        g = 1.0 / lam if global_step is None else float(positive("global_step", global_step,
                                                                 ndim=0))
    else:
        if lam is not None:
            raise ValueError("method fedavg does not take lam")
        g = 1.0 if global_step is None else float(positive("global_step", global_step,
                                                           ndim=0))
        if eta is None and np.isfinite(K):
            raise ValueError("step_size: FedAvg with finite local_steps needs step_size > 0")
        if not shared and np.isfinite(K) and K >= 2 and np.any(
                eta * (1.0 + np.sqrt(gam)) ** 2 > 2.0):
            top = eta * (1.0 + np.sqrt(gam)) ** 2
            raise ValueError("step_size: local gradient descent diverges on a client "
                             f"(step_size (1 + sqrt(gamma_j))^2 = {top.max():.4g} > 2); the "
                             "rounds limits need stable local steps when local_steps >= 2")
    from riskcalc.linear.dynamics import ROUTES

    with solvers.record() as diagnostics, _beyond_floats():
        if name == "pfedme" and np.isfinite(K):
            out = ROUTES["pfedme_steps"](gam, rr, sig, p, s, lam, eta, K, g, T)
        elif name == "pfedme" and shared:
            from riskcalc.linear.dynamics.sigma.prox_sigma import prox_sigma_curves

            out = prox_sigma_curves(gam, rr, sig, p, s, lam, g, T, spectrum)
        elif name == "pfedme":
            out = ROUTES[name](gam, rr, sig, p, s, lam, g, T)
        elif shared and K == 1:
            from riskcalc.linear.dynamics.sigma.fedavg_sigma import fedavg_sigma_curves

            out = fedavg_sigma_curves(gam, rr, sig, p, s, eta, g, T, spectrum)
            # The own models read rows of sigma_pencil's inverse (K = 1 is its smallest case).
            out["local"] = _pencil_local(gam, rr, sig, p, s, eta, g, T, spectrum)
        elif shared:
            from riskcalc.linear.dynamics.sigma.fedavg_sigma_k import fedavg_sigma_k_curves

            out = fedavg_sigma_k_curves(gam, rr, sig, p, s, eta, K, g, T, spectrum)
        else:
            out = ROUTES[name](gam, rr, sig, p, s, eta, _effective_steps(K, eta, gam), g, T)
    rho = out["contraction"]
    converges = bool(rho < 1.0)
    if np.any(np.isinf(T)) and not converges:
        raise ValueError(f"rounds=inf: the iteration diverges (contraction {rho:.6g} >= 1: "
                         "the global step times the top of the round map's spectrum >= 2), so "
                         "it has no limit; lower global_step or step_size")
    server = out["bias"] + out["variance"]
    if name == "pfedme":  # .risk: the client's own model (DESIGN.md, round 4)
        bias, variance = out["local"]()
    else:
        bias, variance = out["bias"], out["variance"]
    risk = bias + variance
    params = {"gamma": gam.tolist(), "r": rr.tolist(), "sigma": sig.tolist(), "signal": s,
              "local_steps": K, "step_size": eta, "global_step": g,
              "weights": weights if isinstance(weights, str) else p.tolist()}
    if name == "pfedme":
        params["lam"] = lam
    if shared:
        params["spectrum"] = {"atoms": spectrum.atoms.tolist(),
                              "weights": spectrum.weights.tolist()}
    diagnostics.update(edges=out["edges"], atom_at_zero=out["atom"],
                       contour_nodes=out["nodes"])
    if name == "pfedme":  # the model ``risk`` measures
        diagnostics["risk_model"] = "own"
    result = RoundsLimit(name, params, T, bias, variance, risk, server, out["distance"], rho,
                         converges, diagnostics, out["local"])
    if name == "pfedme":
        result._cache["local"] = risk
    return result
