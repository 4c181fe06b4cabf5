"""Simulation of ridge-to-the-centre logistic regression (the model of ``riskcalc.logistic``).

Replicate ``rep``: ``w_0`` uniform on the sphere of radius ``signal``, ``w_i = w_0 + r u`` with
``u`` uniform on the unit sphere, ``n = max(1, round(d / gamma))`` samples ``x ~ N(0, Sigma)``
(``Sigma = I_d``, or diagonal with the d eigenvalues of a ``riskcalc.Spectrum``: ``w_0`` and
``u`` are isotropic, so the basis is immaterial) with
``P(y = 1 | x) = sigmoid(x.w_i)``, and the exact estimate
``w_hat = argmin (1/n) sum log(1 + exp(-y x.w)) + lam/2 ||w - c||^2`` (centre ``c = w_0``, or
a multiple of it) by damped Newton
(``montecarlo.experiments.objectives.prox``), for every ``lam`` of a list, largest first, each solve warm
started at the previous one. Measured: ``||w_hat - w_i||^2``,
``(w_hat - w_i)' Sigma (w_hat - w_i)``, the cosines between ``w_hat - c`` and ``w_i - c``
(``cosine``) and between ``w_hat`` and ``w_i`` (``cosine_uncentred``), and the test log-loss
and misclassification rate on ``n_test`` fresh features with the label integrated out exactly
(as ``montecarlo.experiments.metrics``).

Random streams of ``replicate_rng(seed, rep, stream)``: 0 parameters, 1 training features,
2 labels, 3 test features; the same for every ``lam`` (common random numbers).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from montecarlo.experiments.objectives import ClientLosses, prox
from montecarlo.compare import MAX_MINUTES
from montecarlo.runner.budget import require_memory
from montecarlo.logistic.fits import Weighted
from montecarlo.logistic.pipeline import client_sizes, logistic_spectrum
from montecarlo.runner.budget import check_minutes, check_tasks, logistic_replicate_seconds
from montecarlo.runner.seeding import check_seed, replicate_rng
from montecarlo.runner.stats import mean_se
from montecarlo.runner.tasks import cached_count, run_tasks
from riskcalc._validate import as_array, positive_int
from riskcalc.errors import SolverError
from riskcalc.logistic.engine.gaussian import LABEL_KAPPA_MAX, check_reach

QUANTITIES = ("risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss", "test_error")


def simulate_replicate(*, gamma: float, signal: float, r: float, lams, d: int, seed: int,
                       rep: int, n_test: int = 4000, centre_scale: float = 1.0,
                       eigenvalues=None) -> dict:
    """One replicate: the measured quantities for every ``lam`` (lists in the order given).

    Parameters
    ----------
    gamma, signal, r : float
        d / n (> 0), ``||w_0||`` (>= 0), ``||w_i - w_0||`` (>= 0).
    lams : sequence of float
        Ridge penalties, all > 0 (``lam = 0`` needs the MLE, which may not exist).
    d : int
        Dimension.
    seed, rep : int
        Experiment seed and replicate index (``montecarlo.runner.seeding``).
    n_test : int
        Fresh test features for the test log-loss and error.
    centre_scale : float
        The centre is ``centre_scale * w_0`` (1: the oracle centre; FedAvg's global model over
        infinitely many clients is ``riskcalc.logistic.fedavg_centre_scale`` times ``w_0``).
    eigenvalues : sequence of d floats, optional
        The diagonal of ``Sigma`` (None: the identity); ``Spectrum.eigenvalues(d)``.
    """
    gamma = float(as_array("gamma", gamma, low=0.0, low_open=True, ndim=0))
    signal = float(as_array("signal", signal, low=0.0, ndim=0))
    r = float(as_array("r", r, low=0.0, ndim=0))
    lams = as_array("lam", lams, low=0.0, low_open=True, ndim=1).reshape(-1)
    d = positive_int("d", d, minimum=2)
    centre_scale = _centre_scale(centre_scale)
    # 0 test points measured NaN metrics (numpy's "Mean of empty slice"), True one point.
    n_test = positive_int("n_test", n_test)
    n = client_sizes([gamma], d)[0]
    # gamma = 1e-9 (or n_test = 1e12) at d = 6 was numpy's "Unable to allocate 268. GiB"
    # (simulate refused it; this task function did not).
    _require_memory(n, d, n_test)
    root_s = np.ones(d) if eigenvalues is None else np.sqrt(
        as_array("eigenvalues", eigenvalues, low=0.0, low_open=True, ndim=1).reshape(-1))
    if root_s.size != d:
        raise ValueError(f"eigenvalues must hold d = {d} values, got {root_s.size}")
    rng = replicate_rng(seed, rep, 0)
    w0 = rng.standard_normal(d)
    w0 *= signal / np.linalg.norm(w0)
    u = rng.standard_normal(d)
    w_i = w0 + r * u / np.linalg.norm(u)
    X = replicate_rng(seed, rep, 1).standard_normal((1, n, d)) * root_s
    y = np.where(replicate_rng(seed, rep, 2).random((1, n)) < expit(X[0] @ w_i), 1.0, -1.0)
    losses = ClientLosses(X, y, loss="logistic")
    X_test = replicate_rng(seed, rep, 3).standard_normal((n_test, d)) * root_s
    z_star = X_test @ w_i
    p = expit(z_star)
    out = {q: [None] * lams.size for q in QUANTITIES}
    c = centre_scale * w0
    gap = np.linalg.norm(w_i - c)
    W = c[None, :]
    for k in np.argsort(-lams):
        try:
            W = prox(losses, c[None, :], float(lams[k]), W)
        except SolverError as err:
            # prox's own message named "l2", a parameter of another function, and advised it.
            # (It blamed a far centre too: prox's tolerance now scales with the centre.)
            raise SolverError(
                f"the ridge fit at lam = {lams[k]:g} around centre_scale * w_0 (centre_scale "
                f"= {centre_scale:g}, norm {abs(centre_scale) * signal:.3g}) did not converge "
                f"({str(err).partition(' (')[0].removeprefix('prox: ')})") from None
        w = W[0]
        # prox stops at a gradient tolerance: on separable data lam = 1e-20 and 1e-300 gave
        # the same fit (risk 13157.6 at gamma 0.5, d = 50), not their minimizers.
        Weighted(X[0], y[0], np.full(n, 1.0 / n), float(lams[k]), c).check_held(
            w, "the ridge fit toward centre_scale * w_0")
        dw, dc = w - w_i, w - c
        z = X_test @ w
        out["risk"][k] = float(dw @ dw)
        out["sigma_risk"][k] = float((root_s * dw) @ (root_s * dw))
        # Undefined also at w_hat = c (signal 1000, lam 1: Newton's start already optimal to
        # TOL), which was 0 / 0 with numpy's RuntimeWarning and a NaN mean.
        norm_c = float(np.linalg.norm(dc)) * gap
        out["cosine"][k] = float(dc @ (w_i - c)) / norm_c if norm_c > 0 else None
        # Undefined at w_i = 0 (signal 0, r 0): was 0 / 0 with numpy's RuntimeWarning.
        norms = np.linalg.norm(w) * np.linalg.norm(w_i)
        out["cosine_uncentred"][k] = float(w @ w_i / norms) if norms > 0 else None
        out["test_logloss"][k] = float(np.mean(p * np.logaddexp(0, -z)
                                               + (1 - p) * np.logaddexp(0, z)))
        out["test_error"][k] = float(np.mean(np.where(z > 0, 1 - p, p)))
    return out


def replicate_task(task: dict) -> dict:
    """``simulate_replicate(**task)``: one replicate as a ``montecarlo.runner.tasks.run_tasks`` task,
    the dict of its keyword arguments (its ``seed`` and ``rep`` fix every draw); what
    ``simulate`` runs, public for callers with their own cache and workers (figures)."""
    return simulate_replicate(**task)


#: Largest ``abs(centre_scale)``: with a signal within the label rule's reach (``check_reach``,
#: below 1e3) the squared distances to the centre stay finite (1e160 measured risk inf).
CENTRE_SCALE_MAX = 1e150


def _centre_scale(value) -> float:
    return float(as_array("centre_scale", value, low=-CENTRE_SCALE_MAX, high=CENTRE_SCALE_MAX,
                          ndim=0))


def _require_memory(n: int, d: int, n_test: int = 4000) -> None:
    """Refuse a replicate beyond the machine's memory: the features, their margins and
    weighted copies (measured 3.1 times the n x d features at n = 1e5, 3.3e5, d = 100), the
    ``n_test`` test draws and a few d x d Newton matrices, as ``pipeline.simulate_pipeline``
    checks."""
    require_memory(8.0 * (3 * n * d + n_test * d + 4 * d * d),
                   f"the logistic simulation at d = {d} (n = d / gamma = {n:.4g} samples"
                   + (f", {n_test} test points)" if n_test != 4000 else ")"),
                   "lower d or raise gamma" + (" or lower n_test" if n_test != 4000 else ""))


def simulate(*, gamma, signal, r, lams, d, reps, seed=0, n_jobs=1, cache=None,
             progress=False, centre_scale: float = 1.0, spectrum=None,
             max_minutes: float | None = MAX_MINUTES) -> dict:
    """``reps`` replicates (``montecarlo.runner.tasks.run_tasks``): mean and standard error per
    quantity and ``lam``, as ``{quantity: (mean array, se array)}`` plus ``"n"``.
    ``spectrum``: a ``riskcalc.Spectrum``, expanded to ``Sigma``'s d eigenvalues.
    ``max_minutes``: refuse, before any replicate runs, replicates ``cache`` lacks estimated
    (``logistic_replicate_seconds``) beyond it on ``n_jobs`` workers; None: no limit (as
    ``sweep_logistic``'s; it had none: d = 3000, gamma = 0.1, 50 reps, estimated at 62
    min, started at once)."""
    reps = positive_int("reps", reps, minimum=2)
    seed = check_seed(seed)      # was int(seed): True, 1.5 and "1" ran as seed 1
    # Checked before float(): signal "1" or True, lams "0.5", [True] or [0.5 + 0j] ran (the
    # pipeline refuses them) and lams [] returned empty arrays.
    signal = float(as_array("signal", signal, low=0.0, ndim=0))
    r = float(as_array("r", r, low=0.0, ndim=0))
    lams = [float(v) for v in as_array("lam", lams, low=0.0, low_open=True, ndim=1).reshape(-1)]
    if not lams:
        raise ValueError("lams must list at least one penalty lam > 0, got an empty list")
    centre_scale = _centre_scale(centre_scale)
    d = positive_int("d", d, minimum=2)
    n = client_sizes([float(as_array("gamma", gamma, low=0.0, low_open=True, ndim=0))], d)[0]
    # At gamma = 1e-6, d = 100 a replicate asked numpy for 74.5 GiB ("not enough memory")
    # after the time estimate had let it start.
    _require_memory(n, d)
    extra = {} if centre_scale == 1.0 else {"centre_scale": centre_scale}
    spectrum = logistic_spectrum(spectrum, d)     # a SPEC string was an AttributeError
    if spectrum is not None and not spectrum.is_identity:
        extra["eigenvalues"] = spectrum.eigenvalues(int(d)).tolist()
    check_reach(signal, r, float(np.sqrt(max(extra.get("eigenvalues", [1.0])))),
                LABEL_KAPPA_MAX, "the logistic limits' label expectations")
    check_tasks(reps, f"{reps} replicates", "lower reps")

    def tasks():
        return (dict(gamma=float(gamma), signal=signal, r=r, lams=lams, d=int(d), seed=seed,
                     rep=k, **extra) for k in range(reps))
    # Timed before the list is built (3e6 replicates: 19 s and 1 GB before the refusal).
    cached = cached_count(cache, None, tasks()) if cache is not None else 0
    check_minutes(max_minutes, (reps - cached) * logistic_replicate_seconds(d, gamma, len(lams)),
                  n_jobs, None, f"{reps} replicates" + (f" ({cached} of them in cache)"
                                                        if cached else "") + f" at d = {d}",
                  "lower reps or d, or raise gamma")
    results = run_tasks(replicate_task, list(tasks()), cache=cache, n_jobs=n_jobs,
                        progress=progress, desc="logistic ridge")
    out = {"n": n, "reps": reps}
    for q in QUANTITIES:
        # .get: replicates cached before a quantity was measured lack it (NaN, not a KeyError).
        vals = np.array([[np.nan if v is None else v for v in res.get(q, [None] * len(lams))]
                         for res in results])
        out[q] = mean_se(vals, axis=0)
    return out
