"""Simulation of the federated logistic pipeline with a finite number of clients (issue 19).

Model (DESIGN.md, "Contracts added in the third round"): ``w_0`` uniform on the sphere of radius
``signal``; client ``j = 0..M-1`` has ``w_j = w_0 + r_j u_j`` (``u_j`` uniform unit) and
``n_j = max(1, round(d / gamma_j))`` samples ``x ~ N(0, I_d)`` (or ``N(0, Sigma)``, ``Sigma``
diagonal with a ``riskcalc.Spectrum``'s d eigenvalues) with ``P(y = 1 | x) = sigmoid(x.w_j)``.
Exact minimizers (damped Newton with Armijo backtracking,
``montecarlo.experiments.newton.damped_newton``, to a gradient sup-norm of ``fits.TOL``), for
the ``target`` client ``i``:

* ``fedavg``: the global model ``w_g = argmin sum_j c_j sum_{k in block j} l(y_k x_k.w)
  + (global_lam/2) ||w||^2`` with ``c_j = 1/N`` ("samples") or ``1/(M n_j)`` ("uniform"),
  the target's block included (paper 000 eqs. 2 and 8, solved exactly instead of by local SGD);
* ``rtfa``: fine-tuning ``argmin (1/n_i) sum_{block i} l + (lam/2) ||w - w_g||^2`` for every
  ``lam`` (largest first, warm started), reusing ``w_g``;
* ``local_ridge``: ``argmin (1/n_i) sum_{block i} l + (lam/2) ||w||^2`` (centre 0);
* ``pfedme`` (optional; alias ``fedprox``): the target's part of the minimizer of the joint
  objective
  ``sum_j p_j [f_j(w_j) + (lam/2) ||w_j - w||^2] + (global_lam/2) ||w||^2`` with
  ``f_j`` client j's mean log-loss and ``p_j`` the client weights above summed over the block
  (paper 000 eq. 20 / Alg. 2's fixed point, paper 004 eq. 1), solved as Newton on the Moreau
  envelope in ``w`` (paper 004 eq. 8, Lemma 3), each proximal point by Newton.

Measured per replicate and estimator: ``risk = ||w_hat - w_i||^2``, ``sigma_risk =
(w_hat - w_i)' Sigma (w_hat - w_i)``, ``cosine_uncentred`` between ``w_hat`` and ``w_i``, and
the exact population test log-loss and misclassification rate. On a fresh ``x`` the margins
``(x.w_i, x.w_hat) = (kappa s, a s + rho g)`` with ``kappa = ||w_i||_Sigma``,
``a = w_hat' Sigma w_i / kappa``, ``rho^2 = ||w_hat||_Sigma^2 - a^2`` and ``s, g`` independent
standard normals, so the label integrates out to ``E[2 sigmoid(kappa s) l(a s + rho g)]`` (tensor
Gauss-Hermite, ``riskcalc.logistic.engine.gaussian.Rule``) and
``E[2 sigmoid(kappa s) Phi(-a s/rho)]``
(adaptive quadrature, ``riskcalc.logistic.fixed_point.test_error``): no test-sample noise. Also
recorded: the global model's overlap ``w_g.w_0 / S^2`` and distance ``||w_g - w_0||^2``.

At ``global_lam = 0`` the pooled problem may have no finite minimizer (the pooled data
separable or quasi-separable): checked by the linear-programming certificate
``montecarlo.experiments.separability.separable`` before any Newton step, raising ``SolverError``.

Random streams of ``replicate_rng(seed, rep, stream)``: 0 parameters (``w_0``, then ``u_0``,
``u_1``, ...), 1 training features (client 0's block, then client 1's, ...), 2 label uniforms
(same order). Client 0 draws exactly what ``montecarlo.logistic.ridge`` draws for its one
client, and the first clients of a federation are the same for every M (common random numbers).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from montecarlo.compare import MAX_MINUTES
from montecarlo.runner.budget import require_memory
from montecarlo.logistic.fits import (Weighted, check_fedprox_lams, check_weights, fedprox_model,
                                      global_model)
from montecarlo.runner.budget import check_minutes, check_tasks, logistic_pipeline_seconds
from montecarlo.runner.seeding import check_seed, replicate_rng
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import cached_count, run_tasks
from riskcalc._validate import as_array, flag, positive_int
from riskcalc.logistic.fixed_point import test_error
from riskcalc.logistic.engine.gaussian import NODES, Rule, check_reach, label_reach
from riskcalc.spectrum import as_spectrum

QUANTITIES = ("risk", "sigma_risk", "cosine_uncentred", "test_logloss", "test_error")
ESTIMATORS = ("fedavg", "rtfa", "local_ridge", "pfedme")
def population_metrics(w_hat, w_i, root_s=None) -> dict:
    """Risk, cosine, exact test log-loss and test error of ``w_hat`` for client model ``w_i``
    (module docstring); ``root_s``: the square roots of ``Sigma``'s diagonal (None: I)."""
    root_s = np.ones(w_i.size) if root_s is None else root_s
    sw_hat, sw_i = root_s * w_hat, root_s * w_i            # the margins' coordinates
    kappa = float(np.linalg.norm(sw_i))
    nw = float(np.linalg.norm(sw_hat))
    # w_i = 0 (signal 0, r 0): the label is a fair coin, the margin along w_i and the cosine
    # undefined (a ZeroDivisionError traceback from sweep --global federated --signal 0 --r 0).
    a = float(sw_hat @ sw_i) / kappa if kappa > 0 else 0.0
    rho = float(np.sqrt(max(nw * nw - a * a, 0.0)))
    rule = Rule(kappa, NODES[-1])
    dw = w_hat - w_i
    norm_hat = float(np.linalg.norm(w_hat))
    return {"risk": float(dw @ dw), "sigma_risk": float((root_s * dw) @ (root_s * dw)),
            "cosine_uncentred": float(w_hat @ w_i) / (norm_hat * float(np.linalg.norm(w_i)))
            if norm_hat > 0 and kappa > 0 else None,
            "test_logloss": rule.expect(np.logaddexp(0.0, -(a * rule.s + rho * rule.g))),
            "test_error": test_error(kappa, a, rho) if rho > 0 else
            float(rule.expect(a * rule.s < 0))}


#: Largest ``kappa = ||w_i||_Sigma`` whose measurement rule ``Rule(kappa, NODES[-1])``
#: (``population_metrics``) can be built: about 1.7e3 (``check_reach``).
MEASURED_KAPPA_MAX = label_reach(NODES[-1])


def client_sizes(gammas, d: int):
    """``n_j = max(1, round(d / gamma_j))``."""
    return [max(1, int(round(d / g))) for g in gammas]


def logistic_spectrum(spectrum, d: int):
    """``as_spectrum(spectrum, d)`` with the limits' ``check_spectrum``: the simulators draw
    ``w_0`` and the ``u_j`` isotropic, so a spectrum with ``signal_weights`` (which the limits
    refuse) was simulated as if it had none, silently (the same numbers)."""
    from riskcalc.logistic.spectrum.limits import check_spectrum

    spectrum = as_spectrum(spectrum, d)
    return None if spectrum is None else check_spectrum(spectrum)


def simulated_spectrum(spectrum, d: int):
    """``(spectrum, note)``: the spectrum of the d eigenvalues a simulation at dimension ``d``
    realizes (``Spectrum.eigenvalues(d)``, its (j - 1/2)/d quantiles), and a note saying so
    (None where it is the spectrum asked, or for None: Sigma = I). As the ratios d / n_j
    (``montecarlo.prediction.simulated_ratios``), the limits are compared at what is simulated:
    powerlaw:1,1000 at d = 50 simulated mean eigenvalue 0.755 against the limit at 1, and the
    test error at +18% (outside the 95% interval) was the discretization's, not the limit's."""
    from riskcalc.spectrum import Spectrum

    if spectrum is None:
        return None, None
    real = Spectrum.from_eigenvalues(spectrum.eigenvalues(d))
    if real.atoms.shape == spectrum.atoms.shape and np.allclose(
            real.atoms, spectrum.atoms, rtol=1e-12, atol=0.0) and np.allclose(
            real.weights, spectrum.weights, rtol=1e-9, atol=0.0):
        return spectrum, None
    return real, (f"predicted at the d = {d} eigenvalues the simulation realizes (the (j - "
                  f"1/2)/d quantiles of {spectrum.describe()}: {real.describe()}); a d at which "
                  "every weight is a multiple of 1/d simulates the spectrum itself")


def draw_federation(*, gammas, rs, signal: float, d: int, seed: int, rep: int, root_s=None):
    """``(w_0, W, X, y)``: the centre, the client models (M, d) and the per-client training
    blocks (lists), from the random streams of the module docstring; ``root_s``: the square
    roots of ``Sigma``'s diagonal (None: the identity)."""
    rng = replicate_rng(seed, rep, 0)
    w0 = rng.standard_normal(d)
    w0 *= signal / np.linalg.norm(w0)
    W = np.empty((len(gammas), d))
    for j, r in enumerate(rs):
        u = rng.standard_normal(d)
        W[j] = w0 + r * u / np.linalg.norm(u)
    rng_x, rng_y = replicate_rng(seed, rep, 1), replicate_rng(seed, rep, 2)
    X, y = [], []
    for j, n in enumerate(client_sizes(gammas, d)):
        X.append(rng_x.standard_normal((n, d)) * (1.0 if root_s is None else root_s))
        y.append(np.where(rng_y.random(n) < expit(X[j] @ W[j]), 1.0, -1.0))
    return w0, W, X, y


def _require_memory(gammas, d, pfedme):
    """The clients' sample sizes, after refusing a replicate beyond the machine's memory: the
    pooled features, their margins copy and the weighted copy of the Hessian product, plus a
    few d x d matrices (Newton's Hessian and its factorization; M of them for FedProx)."""
    sizes = client_sizes(gammas, d)
    N = sum(sizes)
    require_memory(8.0 * (3 * N * d + (len(gammas) + 4 if pfedme else 4) * d * d),
                   f"the federated logistic pipeline ({N} pooled samples at d = {d})",
                   "lower d, raise gamma or lower the number of clients")
    return sizes


def simulate_replicate(*, gammas, rs, signal: float, lams, global_lam: float, d: int,
                       seed: int, rep: int, weights: str = "samples", target: int = 0,
                       pfedme: bool = False, eigenvalues=None) -> dict:
    """One replicate of the pipeline (module docstring).

    Returns
    -------
    dict
        ``{estimator: {quantity: value or list over lams}}`` for ``fedavg`` (one value),
        ``rtfa``, ``local_ridge`` (and ``pfedme``) (lists in the order of ``lams``), plus
        ``"global": {"overlap": w_g.w_0 / S^2, "dist": ||w_g - w_0||^2}``. ``eigenvalues``:
        ``Sigma``'s diagonal (None: the identity).
    """
    # A public task function: it checked nothing (target 2 of 2 clients an IndexError, -1 the
    # last client, global_lam -1 prox's "set l2 > 0", 5 eigenvalues beside d = 6 numpy's
    # broadcast error, d = 1 and signal -1 answered).
    gammas, rs, signal, lams, global_lam, d, target = _checked(
        gammas, rs, None, signal, lams, global_lam, d, weights, target)
    if pfedme:
        check_fedprox_lams(lams)
    seed, rep = check_seed(seed), positive_int("rep", rep, minimum=0)
    # gammas [1e-9, 2] at d = 4 was numpy's "Unable to allocate 119. GiB" (simulate_pipeline
    # refused it; this task function did not).
    _require_memory(gammas, d, pfedme)
    root_s = None if eigenvalues is None else np.sqrt(
        as_array("eigenvalues", eigenvalues, low=0.0, low_open=True, ndim=1).reshape(-1))
    if root_s is not None and root_s.size != d:
        raise ValueError(f"eigenvalues must hold d = {d} values, got {root_s.size}")
    w0, W, X, y = draw_federation(gammas=gammas, rs=rs, signal=signal, d=d, seed=seed, rep=rep,
                                  root_s=root_s)
    w_i = W[target]
    wg = global_model(X, y, global_lam=global_lam, weights=weights)
    out = {"fedavg": population_metrics(wg, w_i, root_s),
           "global": {"overlap": float(wg @ w0) / signal ** 2 if signal > 0 else None,
                      "dist": float((wg - w0) @ (wg - w0))}}
    n_i = len(y[target])
    names = ("rtfa", "local_ridge") + (("pfedme",) if pfedme else ())
    for name in names:
        out[name] = {q: [None] * len(lams) for q in QUANTITIES}
    problems = {"rtfa": Weighted(X[target], y[target], np.full(n_i, 1.0 / n_i), 1.0, wg),
                "local_ridge": Weighted(X[target], y[target], np.full(n_i, 1.0 / n_i), 1.0,
                                         np.zeros(d))}
    starts = {"rtfa": wg, "local_ridge": np.zeros(d), "pfedme": None}
    for k in np.argsort(-np.asarray(lams)):
        for name in names:
            if name == "pfedme":
                starts[name], Wp = fedprox_model(X, y, lam=lams[k], global_lam=global_lam,
                                                 weights=weights, start=starts[name])
                w_hat = Wp[target]
            else:
                problems[name].lam = lams[k]
                w_hat = starts[name] = problems[name].solve(starts[name], name)
            for q, v in population_metrics(w_hat, w_i, root_s).items():
                out[name][q][k] = v
    return out


def replicate_task(task: dict) -> dict:
    """One replicate of the pipeline as a ``montecarlo.runner.tasks.run_tasks`` task:
    ``simulate_replicate(**task)``, ``task`` holding its keyword arguments (``seed`` and ``rep``
    fix every draw). For callers that run the replicates ``simulate_pipeline`` averages with
    their own cache and workers (figures)."""
    return simulate_replicate(**task)


def federation(gamma, r, clients=None):
    """Per-client ``(gammas, rs)`` lists: scalars repeated ``clients`` times, or sequences of
    one length (``clients``, if given, must equal it)."""
    g, rr = np.atleast_1d(as_array("gamma", gamma, low=0.0, low_open=True)), \
        np.atleast_1d(as_array("r", r, low=0.0))
    if g.ndim > 1 or rr.ndim > 1:
        raise ValueError("gamma and r must be numbers or 1-d lists (one entry per client)")
    sizes = {s for s in (g.size, rr.size) if s > 1}
    if len(sizes) > 1:
        raise ValueError(f"gamma and r list different numbers of clients: {g.size} and "
                         f"{rr.size}")
    m = sizes.pop() if sizes else None
    if clients is not None:
        clients = positive_int("clients", clients)
        if m is not None and m != clients:
            raise ValueError(f"clients = {clients} but the per-client lists have {m} entries")
        m = clients
    m = 1 if m is None else m
    return [float(v) for v in np.broadcast_to(g, m)], [float(v) for v in np.broadcast_to(rr, m)]


def _checked(gamma, r, clients, signal, lams, global_lam, d, weights, target):
    """``simulate_pipeline``'s and ``simulate_replicate``'s shared arguments, checked:
    ``(gammas, rs, signal, lams, global_lam, d, target)``."""
    gammas, rs = federation(gamma, r, clients)
    m = len(gammas)
    # signal = 0 (every w_j a pure deviation) was refused here, naming no reason, though the
    # replicates measure it and the sweep and the limits answer it.
    signal = float(as_array("signal", signal, low=0.0, ndim=0))
    lams = [float(v) for v in as_array("lam", lams, low=0.0, low_open=True, ndim=1).reshape(-1)]
    global_lam = float(as_array("global_lam", global_lam, low=0.0, ndim=0))
    d = positive_int("d", d, minimum=2)
    check_weights(weights)
    try:
        # One rule with the limits (``logistic_clients_limit(target=1.0)`` answered, this
        # refused it): an integral float is the integer, as for d.
        target = positive_int("target", target, minimum=0, maximum=m - 1)
    except ValueError:
        raise ValueError(f"target must be an integer in [0, {m - 1}], got {target!r}") from None
    return gammas, rs, signal, lams, global_lam, d, target


def simulate_pipeline(*, gamma, signal, r, lams, global_lam, d, reps, clients=None,
                      weights: str = "samples", target: int = 0, pfedme: bool = False,
                      seed: int = 0, n_jobs: int = 1, cache=None, progress: bool = False,
                      fedprox: bool = False, spectrum=None,
                      max_minutes: float | None = MAX_MINUTES) -> dict:
    """``reps`` replicates of the federated logistic pipeline at finite M (module docstring).

    Parameters
    ----------
    gamma, r : float or sequence of float
        Per-client ``d / n_j`` (> 0) and ``||w_j - w_0||`` (>= 0): numbers (the same for every
        client) or lists with one entry per client.
    signal : float
        ``S = ||w_0||`` >= 0 (at 0 the global model's overlap ``w_g.w_0 / S^2`` is NaN).
    lams : float or sequence of float
        Fine-tuning / local ridge (/ FedProx) penalties, each > 0.
    global_lam : float
        Ridge of the global model toward 0, >= 0 (0: checked for existence).
    d : int
        Dimension, >= 2.
    reps : int
        Replicates, >= 2.
    clients : int, optional
        M >= 1 (required when ``gamma`` and ``r`` are both numbers and M > 1).
    weights : {"samples", "uniform"}
        Client weights of the global objective (default samples, ``c_j = 1/N``).
    target : int
        The client whose estimates are measured, ``0 <= target < M``.
    pfedme : bool
        Also solve the joint FedProx/pFedMe objective for every lam (M proximal Newton solves
        per outer step: slow); ``fedprox``: an alias (either turns it on).
    seed, n_jobs, cache, progress
        As in ``montecarlo.runner.tasks.run_tasks``; the result does not depend on ``n_jobs``.
    spectrum : riskcalc.Spectrum, optional
        Every client's ``x ~ N(0, Sigma)``, ``Sigma`` diagonal with ``spectrum.eigenvalues(d)``.
    max_minutes : float or None
        Refuse, before any replicate runs, replicates ``cache`` lacks estimated
        (``logistic_pipeline_seconds``, the exact test metrics included) beyond it on
        ``n_jobs`` workers; None: no limit (as ``sweep_logistic``'s; it had none).

    Returns
    -------
    dict
        ``{estimator: {quantity: (mean, se)}}`` (arrays over ``lams`` for rtfa, local_ridge,
        pfedme), ``"global": {"overlap": (mean, se), "dist": (mean, se)}``, and ``"n"`` (the
        per-client sizes), ``"reps"``, ``"clients"``.

    Raises
    ------
    ValueError
        A parameter out of range, or the problem does not fit in memory.
    SolverError
        The pooled problem has no finite minimizer (``global_lam = 0``, separable data) or a
        Newton solve does not converge.
    """
    # "no" or 0.5 switched FedProx on (its M proximal solves per step: slow).
    pfedme = flag("pfedme", pfedme) or flag("fedprox", fedprox)
    gammas, rs, signal, lams, global_lam, d, target = _checked(
        gamma, r, clients, signal, lams, global_lam, d, weights, target)
    if pfedme:
        check_fedprox_lams(lams)
    m = len(gammas)
    reps = positive_int("reps", reps, minimum=2)
    seed = check_seed(seed)      # was int(seed): True, 1.5 and "1" ran as seed 1
    # A SPEC string (the limits take one) was an AttributeError on .is_identity.
    spectrum = logistic_spectrum(spectrum, d)
    check_reach(signal, rs[target], 1.0 if spectrum is None else float(np.sqrt(np.max(
        spectrum.eigenvalues(d)))), MEASURED_KAPPA_MAX, "the exact test metrics' quadrature")
    extra = {} if spectrum is None or spectrum.is_identity else {
        "eigenvalues": spectrum.eigenvalues(d).tolist()}
    sizes = _require_memory(gammas, d, pfedme)
    check_tasks(reps, f"{reps} replicates", "lower reps")

    def tasks():
        return (dict(gammas=gammas, rs=rs, signal=signal, lams=lams, global_lam=global_lam, d=d,
                     seed=seed, rep=k, weights=weights, target=int(target), pfedme=pfedme,
                     **extra) for k in range(reps))
    # Timed before the list is built (3e6 replicates: 27 s and 1.6 GB before the refusal).
    cached = cached_count(cache, None, tasks()) if cache is not None else 0
    root = 1.0 if spectrum is None else float(np.sqrt(np.mean(spectrum.eigenvalues(d))))
    seconds = logistic_pipeline_seconds(d, gammas[target], gammas, fedprox=pfedme,
                                        lams=max(1, len(lams)),
                                        kappa=root * np.hypot(signal, rs[target]))
    check_minutes(max_minutes, (reps - cached) * seconds, n_jobs, None,
                  f"{reps} replicates" + (f" ({cached} of them in cache)" if cached else "")
                  + f" of {m} clients at d = {d}", "lower reps, d or the clients (or signal and "
                  "r: the exact test metrics' rule grows with ||w_i||)")
    results = run_tasks(replicate_task, list(tasks()), cache=cache, n_jobs=n_jobs,
                        progress=progress, desc="logistic pipeline")
    out = {"n": sizes, "reps": reps, "clients": m,
           "global": {k: mean_se([res["global"][k] for res in results])
                      for k in ("overlap", "dist")}}
    for name in ("fedavg", "rtfa", "local_ridge") + (("pfedme",) if pfedme else ()):
        out[name] = {q: mean_se(np.array([res[name][q] for res in results], dtype=float))
                     for q in QUANTITIES}
    return out
