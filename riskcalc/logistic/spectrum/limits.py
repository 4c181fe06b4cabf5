"""``riskcalc.logistic_limit(..., spectrum=)``: the limits of ``riskcalc.logistic.spectrum.fixed_point`` for
one parameter point or a broadcast grid, with the checks the model needs (an isotropic signal
direction; the MLE's existence at ``lam = 0``) and FedAvg's infinite-client centre.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc._validate import as_array, one_of, parameter
from riskcalc.errors import SolverError
from riskcalc.logistic.ranges import (SPECTRUM_LAM_MAX, check_gamma, check_lam, check_reach,
                                     check_window, mle_lam)
from riskcalc.logistic.spectrum.fixed_point import outputs, problem, solve
from riskcalc.logistic.result import LogisticResult
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.engine.deadline import Overtime
from riskcalc.logistic.work import MAX_SECONDS, oracle_seconds, overtime, refuse_growing


def check_spectrum(spectrum):
    """``spectrum`` as a ``Spectrum`` with the isotropic signal direction the model assumes.

    Raises
    ------
    ValueError
        Not a ``riskcalc.Spectrum``, or non-uniform ``signal_weights`` (``w_0`` and ``u`` have
        isotropic directions in this model).
    """
    from riskcalc.spectrum import as_spectrum

    spectrum = as_spectrum(spectrum)     # a SPEC string as the linear entries take it
    if not spectrum.signal_is_uniform:
        raise ValueError("spectrum: the logistic model takes w_0 and u with isotropic "
                         "directions in the original coordinates; a spectrum with "
                         "signal_weights (a non-uniform signal direction) is not supported")
    return spectrum


def naming_spectrum(spectrum, solve, *args):
    """``solve(*args)``, its SolverError naming ``spectrum`` (was: scaled:1e-100 refused as
    "no convergence at lam = 100", the continuation's first step, which the user never gave).
    Sigma = C Sigma' is the problem of Sigma' at lam / C with the norms times sqrt(C) (module
    docstring of ``fixed_point``), so a scale far from 1 is named as the likely cause."""
    try:
        return solve(*args)
    except SolverError as exc:
        mean = float(spectrum.mean)
        cause = "" if 1e-3 <= mean <= 1e3 else (
            f"; a spectrum C times another is that problem at lam / C with the norms times "
            f"sqrt(C), here C ~ {mean:.3g}: a scale this far from 1 is beyond the solver's "
            "reach (rescale the features toward mean eigenvalue 1)")
        raise SolverError(f"spectrum {spectrum.describe()} (mean eigenvalue {mean:.3g}): "
                          f"{exc}{cause}") from None


def centre_scale(signal, r, spectrum, centre: str) -> float:
    """``theta`` of ``c = theta w_0``: 1 for the oracle centre; for FedAvg's infinite-client
    centre, ``riskcalc.logistic.fedavg``'s equation with the margins' standard deviations
    ``S sqrt(<s>)`` and ``||w_i|| sqrt(<s>)`` (its Stein step reads
    ``E[(sigmoid(x.w_j) - sigmoid(alpha x.w_0)) x] = Sigma (w_j E[sigmoid'] - alpha w_0
    E[sigmoid'])``, and the ``u_j`` average out as at ``Sigma = I``)."""
    from riskcalc.logistic.fedavg import fedavg_centre_scale

    if centre == "oracle":
        return 1.0
    root_m1 = float(np.sqrt(spectrum.mean))
    return fedavg_centre_scale(signal * root_m1, r * root_m1)


def spectrum_limit(gamma, signal, r, lam, spectrum, centre: str = "oracle", theta=None,
                   deadline=None):
    """``riskcalc.logistic_limit(..., spectrum=)`` for one point: a ``LogisticResult`` with
    ``sigma_risk`` and ``params["spectrum"]`` (the spectrum's description). ``theta``
    overrides the centre's scale (0: local ridge); ``deadline``: ``fixed_point.solve``'s."""
    scale = centre_scale(signal, r, spectrum, centre) if theta is None else float(theta)
    p = problem(gamma, signal, r, lam, spectrum, scale)
    if lam == 0.0 and gamma >= mle_threshold(p.kappa):
        raise ValueError(
            f"lam = 0: no finite minimizer (the MLE does not exist): gamma = {gamma:g} >= "
            f"h = {mle_threshold(p.kappa):.6g}, the Candes-Sur separability threshold at the "
            f"margin scale ||w_i||_Sigma = {p.kappa:.6g} (separability is invariant under "
            "x -> Sigma^(-1/2) x). Use lam > 0")
    # Below MLE_LAM, where the MLE exists, its lam = 0 limit (``ranges.mle_lam``).
    p = problem(gamma, signal, r, mle_lam(lam, gamma, p.kappa), spectrum, scale)
    x, rule, err = solve(p, deadline=deadline)
    # The residuals clip log rho and log mu to the window: a root beyond it is not a root of
    # the system (measured: gamma = 1e9, lam = 1e-6 returned mu = 1.25e15 > e^30).
    check_window(np.exp(x[1]), np.exp(x[2]), gamma, lam)
    o = outputs(x, rule, p)
    notes = () if o["cosine"] == o["cosine"] else ("w_i = c (r = 0): the cosine is undefined",)
    params = dict(gamma=float(gamma), signal=float(signal), r=float(r), lam=float(lam),
                  spectrum=spectrum.record())
    if centre != "oracle" or theta is not None:
        params.update(centre=centre, centre_scale=scale)
    return LogisticResult(params, risk=float(o["risk"]), cosine=float(o["cosine"]),
                          test_logloss=float(o["test_logloss"]),
                          test_error=float(o["test_error"]), a=o["a"], b=o["b"], q=o["q"],
                          mu=o["mu"], sigma_risk=float(o["sigma_risk"]),
                          cosine_uncentred=float(o["cosine_uncentred"]), notes=notes,
                          diagnostics={"solver": "scipy.optimize.root (hybr)",
                                       "residual": float(err),
                                       "quadrature_nodes": int(rule.n)})


FIELDS = ("risk", "sigma_risk", "cosine", "cosine_uncentred", "test_logloss", "test_error",
          "a", "b", "q", "mu")
CENTRES = ("oracle", "fedavg")


def check_work(arrays, spectrum, max_seconds: float) -> None:
    """Refuse (``work.refuse``) a spectrum whose scale makes the quadrature too long: the
    margins ``x.w`` have standard deviation ``||w|| sqrt(<s>)`` for the isotropic directions
    of this model, so the rules are those of ``Sigma = I`` at norms scaled by ``sqrt(<s>)``
    (``work.oracle_seconds`` at those norms: 5.0 s estimated, 2.1-2.8 s taken for
    two-point:1,100 and two-point:0.01,100 at signal = r = 1), plus ``growth_seconds`` at the
    largest gamma and norms and the smallest positive lam. Was: two-point:1e-10,1e10 asked
    numpy for 95.5 TiB, two-point:1e-100,1e100 "Maximum allowed size exceeded"."""
    root, points = float(np.sqrt(spectrum.mean)), np.broadcast(*arrays).size
    # The largest norms and the smallest penalty of a grid: an upper bound on each point.
    s_max, r_max = float(np.max(arrays[1])), float(np.max(arrays[2]))
    gamma_max, kappa_max = float(np.max(arrays[0])), float(np.hypot(s_max, r_max)) * root
    lam_min = mle_lam(float(np.min(arrays[3])), gamma_max, kappa_max)     # as solved
    positive = arrays[3][arrays[3] > 0.0]
    # The growth is read only where the rules alone fit (their norms then moderate: h itself
    # took 5.6 s at kappa = 1e5 and refuses beyond).
    lam_pos = float(np.min(positive)) if positive.size else 0.0
    refuse_growing(lambda t: points * oracle_seconds(t * root * s_max, t * root * r_max,
                                                     lam_min),
                   max_seconds, f"the logistic limit under this spectrum (mean eigenvalue "
                   f"{spectrum.mean:.3g}: the margins' scale is {root:.3g} ||w_i||, ||w_i|| up "
                   f"to {float(np.hypot(s_max, r_max)):.3g})",
                   [(gamma_max, kappa_max, lam_pos, points)], float(spectrum.mean),
                   fewer="fewer grid points" if points > 1 else None,
                   # One point: the lam whose stages fit (was 'raise max_seconds' alone at
                   # lam 1e-300, two-point:1,4,0.5, max_seconds 5: 5.74 s of stages).
                   by_lam=None if points > 1 else (lam_pos, lambda v: oracle_seconds(
                       root * s_max, root * r_max, mle_lam(v, gamma_max, kappa_max))))


def _solve_by(max_seconds):
    """``spectrum_limit`` for the points of one call (``naming_spectrum``), each solved by
    the call's deadline ``max_seconds`` from now (None: no limit), and past it refused.
    The estimate cannot see how the solution grows near the Candes-Sur threshold at lam =
    0: gamma = h (1 - 1e-4) ran past 300 s with max_seconds = 10."""
    clock = time.perf_counter()
    deadline = None if max_seconds is None else clock + max_seconds

    def solve_at(gamma, signal, r, lam, spectrum, centre):
        try:
            return naming_spectrum(spectrum, spectrum_limit, gamma, signal, r, lam, spectrum,
                                   centre, None, deadline)
        except Overtime:
            kappa = float(np.hypot(signal, r) * np.sqrt(spectrum.mean))
            raise overtime(gamma, signal, r, lam, time.perf_counter() - clock, max_seconds,
                           kappa) from None
    return solve_at


def spectrum_grid(gamma, signal, r, lam, spectrum, centre: str = "oracle",
                  max_seconds: float | None = MAX_SECONDS):
    """``logistic_limit(..., spectrum=)``: validated, one point or a broadcast grid (solved
    point by point; fields of the broadcast shape), refused beyond ``max_seconds`` of
    estimated work (``check_work``)."""
    spectrum = check_spectrum(spectrum)
    if not one_of(centre, CENTRES):
        raise ValueError(f"centre must be one of {CENTRES}, got {centre!r}")
    arrays = [as_array("gamma", gamma, low=0.0, low_open=True), parameter("signal", signal),
              parameter("r", r), as_array("lam", lam, low=0.0)]
    check_gamma(arrays[0])
    check_lam(arrays[3], SPECTRUM_LAM_MAX)      # measured: ``riskcalc.logistic.ranges``
    try:        # before the estimate, whose np.broadcast gave numpy's message ("arg 0")
        np.broadcast(*arrays)
    except ValueError:
        raise ValueError("gamma, signal, r and lam do not broadcast together: shapes "
                         + ", ".join(str(np.shape(v)) for v in arrays)) from None
    check_reach(arrays[0], arrays[3], spectrum)
    if max_seconds is not None:
        check_work(arrays, spectrum, max_seconds)
    if all(v.ndim == 0 for v in arrays):
        return _solve_by(max_seconds)(*(float(v) for v in arrays), spectrum, centre)
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    flat = [v.ravel().astype(float) for v in arrays]
    solve_at = _solve_by(max_seconds)
    rows = [solve_at(*point, spectrum, centre) for point in zip(*flat)]
    params = dict(gamma=arrays[0].astype(float), signal=arrays[1].astype(float),
                  r=arrays[2].astype(float), lam=arrays[3].astype(float),
                  spectrum=spectrum.record())
    if centre != "oracle":
        params.update(centre=centre, centre_scale=np.array(
            [row.params["centre_scale"] for row in rows]).reshape(shape))
    notes = tuple(sorted({n for row in rows for n in row.notes}))
    return LogisticResult(params, **{f: np.array([getattr(row, f) for row in rows]).reshape(shape)
                                     for f in FIELDS}, notes=notes)
