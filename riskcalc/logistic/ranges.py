"""The ranges of gamma, lam and global_lam that the logistic fixed points are measured to solve
(issue 32), and their checks: beyond them an input is refused up front (ValueError naming the
parameter and the range) rather than answered by a solver that fails or, worse, returns a
wrong number. ``signal`` and ``r`` take the package's shared range (``riskcalc._validate``).

Measurements (one thread; ``tests/test_hardening_logistic.py`` checks the edges against the
known limits):

- **Clip window.** The residuals keep ``log mu`` and ``log q`` in ``LOG_WINDOW``
  (``fixed_point.residuals``); a fixed point outside it is silently wrong. At signal = 2,
  r = 0.5, lam = 0.3: gamma = 1e13 returned mu = 2.1e13 for gamma / lam = 3.3e13, gamma = 1e14
  the same mu = 2.8e13; gamma = 1e-27 returned mu = 4.6e-28 for 2.2e-27; gamma = 1e-26 to 1e12
  agree with mu ~ gamma / (lam + D). gamma = 1e-100 asked for a 223 TiB rule, 1e-30 for
  40 GiB, gamma = 1e100 failed in the proximal map's Newton iteration. The spectrum path
  clips ``log rho`` and ``log mu`` the same way: gamma = 1e9, lam = 1e-6 returned mu = 1.25e15.
- **GAMMA_RANGE.** Since mu ~ gamma / (lam + D) with D <= 1/4, gamma >= 1e-16 and lam <=
  ``LAM_MAX`` keep mu >= 1e-24, a factor 100 inside the window; gamma <= 1e10 keeps it inside
  for lam >= 3e-3 (D -> 0 there: mu ~ gamma / lam <= e^29 = 3.9e12; measured at signal = r =
  1: gamma = 1e10 answers at lam = 3e-3, is refused at 1e-3, where gamma up to 3e9 answers
  and 4e9 is refused; smaller lam with large gamma: ``check_window`` refuses the solution,
  naming both). The
  same range measured on the spectrum path (two-point 0.5, 2, 0.5) and the finite-M path
  (M = 5, global_lam = 1): finite answers settling to the gamma -> 0 and gamma -> inf limits.
- **LAM_MAX.** ``w_hat - c`` is O(1/lam) and is formed as a difference of O(1) numbers, so the
  cosine loses precision like 1e-17 lam: deviations from its extrapolation in 1/lam 7e-11,
  9e-10, 9e-9, 9e-8, 3e-7 at lam = 1e6, 1e7, ..., 1e10 (0.2006 for 0.1851 at lam = 1e14,
  no convergence at 1e40); 1e8 keeps it below the ladder's 1e-7 (``fixed_point.QUAD_RTOL``).
  With M clients RTFA's fine-tuning is measured to 1e8 (within 1e-8 of FedAvg's risk, its
  lam -> inf limit) and fails at 1e50; local ridge fails at 1e50 too.
- **SPECTRUM_LAM_MAX.** The spectrum path's cosine deviates from its extrapolation by 5e-8,
  1e-8, 4e-6, 1e-4, 1e-2 at lam = 1e4, 3e4, 1e5, 1e6, 1e7, and divides by zero at 3e7.
  With M = 5 clients and that spectrum, local ridge (the same one-point solver) reaches
  risk 4.24985 at lam = 1e4 (its limit S^2 + r^2 = 4.25) and fails at 1e6; RTFA's
  fine-tuning is within 1e-8 of FedAvg's risk at lam = 1e8.
- **GLOBAL_LAM_MAX.** The global model (M = 5, gamma = 1, signal = 2, r = 0.5) converges up
  to global_lam = 1e20 (FedAvg's risk -> S^2 + r^2) and fails at 1e30; RTFA's fine-tuning
  toward the near-zero centre converges up to 1e3 at three points (gamma, signal, r) = (1, 2,
  0.5), (0.5, 1, 1), (2, 3, 0.2) and fails at 2e3 and 5e3 at the second (no convergence at
  lam = 10), at 1e4, 1e5, 1e7, 1e8 at the first.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, positive_int, real
from riskcalc._text import shown_apart

GAMMA_RANGE, LAM_MAX, SPECTRUM_LAM_MAX = (1e-16, 1e10), 1e8, 1e4
#: Largest global_lam: RTFA's fine-tuning toward the global model, and the global model itself
#: (FedAvg, FedProx / pFedMe).
GLOBAL_LAM_MAX = {"rtfa": 1e3, "global": 1e20}
#: ``fixed_point.residuals`` clips ``log q`` and ``log mu`` to this window; ``check_window``
#: refuses a solution within 1 of its edges.
LOG_WINDOW = (-60.0, 30.0)
#: The continuation in lam of every logistic fixed point (``ladder``): its first penalty, where
#: the large-penalty start is the solution to first order, and its factor per stage.
LAM_START, LAM_RATIO = 100.0, 10.0
#: Relative distance from the last penalty within which a stage is that penalty's own.
LADDER_RTOL = 1e-9
#: Below this lam, a ridge fit whose MLE exists (gamma below the Candes-Sur threshold h) is
#: its lam = 0 limit, the MLE, within O(lam) (``mle_lam``): the fine-tuning's log kappa_hg ~
#: log(lam mu_g / D_x) leaves ``LOG_WINDOW`` below lam ~ 1e-25 (gamma [0.05, 0.1], r [1, 0.5],
#: signal 1: lam = 1e-300 failed "no convergence at lam = 1.30975e-26"; lam = 1e-24 to 1e-12
#: answer within 6e-8 of lam = 0, the quadrature's accuracy), and the one-point solver's
#: continuation took 300 stages to 1e-300 (gamma 0.05, signal = r = 1: estimated at 5.74 s
#: and refused with max_seconds = 3, where lam = 0 answers in 0.13 s).
MLE_LAM = 1e-20


def mle_lam(lam: float, gamma: float, kappa: float) -> float:
    """``lam``, or 0 where ``0 < lam < MLE_LAM`` and the MLE exists (``gamma < h(kappa)``,
    ``kappa`` the margin scale ``||w_i||_Sigma``): the penalty a solve and its estimate use.
    Not beyond ``kappa = 1e3`` (h < 1.02e-3 there, and h itself took 0.3 s at 1e4, 5.6 s at
    1e5, refused beyond: such norms are refused by the work estimates)."""
    from riskcalc.logistic.transition import mle_threshold

    return 0.0 if 0.0 < lam < MLE_LAM and kappa <= 1e3 and gamma < mle_threshold(kappa) \
        else lam


def ladder(lam: float, ratio: float = LAM_RATIO, stop: float = 0.0) -> list:
    """The continuation's penalties toward ``lam`` >= 0, strictly decreasing, the path of every
    logistic fixed point (``fixed_point``, ``pooled``, ``finetune``, the spectrum paths):
    ``LAM_START`` divided by ``ratio`` while above ``floor = max(lam, stop)`` (1e-4 for
    ``lam = 0``), then ``floor``, then 0 if ``lam = 0`` (``work.stages`` counts them with
    ``stop = 0``). Every path goes on below 1e-4 by factors of ``ratio``: the solution's norm
    keeps growing on separable data, and one jump from 1e-4 failed at gamma = 2, signal = r =
    1, lam = 3e-6 (the ladder did not settle), solved so. The spectrum paths stopped at
    ``stop = 1e-4`` and jumped: "quadrature not converged" at gamma = 3, lam = 1e-6 (the
    one-point solver) and global_lam = 1e-6 at gamma = 6 (the global model), answered so. A
    stage within ``LADDER_RTOL`` of ``floor`` is ``floor``'s own: the repeated divisions round
    (1e-4 / 10 / 10 = 1.0000000000000002e-06), and at lam = 10^-k each path solved a root there
    and then one at lam itself, a stage for nothing (and two at lam >= 100)."""
    floor = max(lam if lam > 0.0 else 1e-4, stop)
    lams = [LAM_START]
    while lams[-1] / ratio > floor * (1.0 + LADDER_RTOL):
        lams.append(lams[-1] / ratio)
    if lams[-1] <= floor * (1.0 + LADDER_RTOL):     # lam >= LAM_START: floor's own stage only
        lams.pop()
    return lams + [floor] + ([0.0] if lam == 0.0 else [])



def check_gamma(gamma, name: str = "gamma") -> np.ndarray:
    """``gamma`` (a number or array) in ``GAMMA_RANGE``, else ValueError."""
    return as_array(name, gamma, low=GAMMA_RANGE[0], high=GAMMA_RANGE[1])


def check_lam(lam, lam_max: float = LAM_MAX) -> None:
    """ValueError when some ``lam`` exceeds ``lam_max`` (None: no lam), or is not real (a
    complex lam was a TypeError from ``float()`` with clients; fuzz39 api F5, logi2 F3)."""
    if lam is not None and np.any(real("lam", lam) > lam_max):
        # Shown apart from the edge: lam = 1.00000001e8 was "[0, 1e+08] ..., got 1e+08".
        raise ValueError(f"lam must lie in [0, {lam_max:g}] for the logistic limit, got "
                         f"{shown_apart(np.max(lam), lam_max)}: the range its solver is measured "
                         "to hold (riskcalc.logistic.ranges); as lam -> inf, w_hat -> the centre")


def check_global_lam(global_lam, method: str):
    """``global_lam`` (None, a number or array) within ``GLOBAL_LAM_MAX`` for ``method``."""
    if global_lam is None:
        return None
    high = GLOBAL_LAM_MAX["rtfa" if method == "rtfa" else "global"]
    value = as_array("global_lam", global_lam, low=0.0)
    if method == "rtfa" and np.any(value > high):
        # Said why (was the range alone, while FedAvg takes 1e20), and what answers there.
        raise ValueError(f"global_lam must lie in [0, {high:g}] for rtfa, got "
                         f"{shown_apart(np.max(value), high)}: its fine-tuning toward a global "
                         f"model near 0 is measured to fail beyond {high:g} "
                         "(riskcalc.logistic.ranges); as "
                         "global_lam -> inf the global model tends to 0 and RTFA to local ridge "
                         "(method local_ridge, the same lam)")
    return as_array("global_lam", global_lam, low=0.0, high=high)


def check_window(q, mu, gamma, lam) -> None:
    """ValueError when a solution's ``q`` (the spectrum path: ``rho``) or ``mu`` (arrays or
    numbers) lies within a factor e of the edges of ``LOG_WINDOW``, where the residuals clip
    them and the root is not the fixed point (gamma / lam too large or too small together)."""
    lo, hi = LOG_WINDOW[0] + 1.0, LOG_WINDOW[1] - 1.0
    logs = np.log(np.maximum(np.concatenate([np.ravel(q), np.ravel(mu)]), 1e-300))
    if np.any((logs < lo) | (logs > hi)):
        raise ValueError(f"gamma and lam out of the solver's reach together: mu ~ gamma / (lam "
                         f"+ D) and the margin scale must lie in [e^{lo:g}, e^{hi:g}] (gamma = "
                         f"{_span(gamma)}, lam = {_span(lam)}); see riskcalc.logistic.ranges")


def check_reach(gamma, lam, spectrum=None) -> None:
    """ValueError, before solving, where ``mu`` is certainly beyond ``check_window``'s upper
    edge ``E = e^(LOG_WINDOW[1] - 1)``: by (E1) (``fixed_point``; ``spectrum.fixed_point``:
    ``mu = gamma <s / (lam + D s)>``) with ``D = E[l'' / (1 + mu l'')] < 1 / mu``, ``mu`` exceeds
    the root ``m`` of ``gamma <s / (lam m + s)> = 1``, so ``gamma <s / (lam E + s)> >= 1`` puts
    it past ``E`` (at Sigma = I: ``lam <= (gamma - 1) / E``; only for gamma > 1). Was: gamma 2,
    signal = r = 1, lam 1e-14 under two-point:1,4,0.5 solved past 150 s (the spectrum path has
    no stage check), 14 s at Sigma = I before the continuation's refusal. ``spectrum``: None
    (Sigma = I) or a ``Spectrum``; ``gamma``, ``lam`` broadcast. Names the lam from which
    ``mu <= gamma <s> / lam`` keeps it within the window."""
    gamma, lam = np.broadcast_arrays(np.asarray(gamma, float), np.asarray(lam, float))
    edge = np.exp(LOG_WINDOW[1] - 1.0)
    s, h = (np.ones(1), np.ones(1)) if spectrum is None else (spectrum.atoms, spectrum.weights)
    mean = float(s @ h)
    # Necessary: gamma > 1 and lam E < gamma <s> (else the average is below 1 / gamma).
    cand = np.flatnonzero((gamma > 1.0) & (lam > 0.0) & (lam * edge < gamma * mean))
    # gamma <s / (x + s)> >= 1, x = lam E, by a margin above rounding: two-point:1e-100,
    # 1e100 at gamma 2, lam 0.5 read 1 - 2e-88 as 1 (there m = 2, not E). In parts of at most
    # ~1e6 terms (a 1e6-point grid took 7.6 s one point at a time).
    step = max(1, 10 ** 6 // s.size)
    for part in (cand[i:i + step] for i in range(0, cand.size, step)):
        x = lam.flat[part][:, None] * edge
        gap = 1.0 - 1.0 / gamma.flat[part] - (x / (x + s[None, :])) @ h
        out = np.flatnonzero(gap >= 1e-9)
        if out.size:
            k = part[out[0]]
            g, lm = float(gamma.flat[k]), float(lam.flat[k])
            where = "" if spectrum is None else " under this spectrum"
            e1, bound = (("mu (lam + D) = gamma", "(gamma - 1) / lam") if spectrum is None else
                         ("mu = gamma <s / (lam + D s)>",
                          "the root m of gamma <s / (lam m + s)> = 1"))
            raise ValueError(
                f"lam = {lm:g} is out of the solver's reach at gamma = {g:g}{where}: by (E1), "
                f"{e1} with D < 1 / mu, so mu exceeds {bound}, beyond "
                f"e^{LOG_WINDOW[1] - 1:g} (the window of its residuals, "
                f"riskcalc.logistic.ranges) whatever signal and r; give lam >= "
                f"{g * mean / edge:.3g} (mu <= gamma <s> / lam keeps it within)")


def check_solution_logs(logs, what: str, **params) -> None:
    """``check_window`` for the many-client solvers (the global model of ``pooled``, the joint
    FedProx point of ``fedprox``, RTFA's fine-tuning of ``finetune``): ``logs``, the logarithms
    that their residuals clip to ``LOG_WINDOW``, must lie within it by a factor e, else the root
    is not the fixed point; ValueError naming ``what`` and ``params`` (the inputs that set the
    scales: gamma, lam, global_lam)."""
    lo, hi = LOG_WINDOW[0] + 1.0, LOG_WINDOW[1] - 1.0
    logs = np.ravel(np.asarray(logs, float))
    if np.any((logs < lo) | (logs > hi)) or not np.all(np.isfinite(logs)):
        given = ", ".join(f"{k} = {_span(v)}" for k, v in params.items() if v is not None)
        raise ValueError(f"{what}: out of the solver's reach ({given}): its scales (mu ~ gamma "
                         f"/ (lam + D)) must lie in [e^{lo:g}, e^{hi:g}], where its residuals "
                         "are exact; see riskcalc.logistic.ranges")


def _span(v) -> str:
    v = np.asarray(v, float)
    return f"{float(v):g}" if v.ndim == 0 else f"{v.min():g} to {v.max():g}"


#: Most identical clients of ``finite_logistic_limit``: each is a row of the solve (M = 1e6
#: took 7.6 s and 0.2 GB; 1e9 grew to 23 GB and was killed).
MAX_IDENTICAL = 10 ** 6


def identical_clients(clients, name: str = "clients") -> int:
    """``clients`` (M identical clients) checked: an integer in [1, MAX_IDENTICAL], beyond
    which the refusal names the M -> inf limit; ``name`` the parameter (``--clients``)."""
    m = positive_int(name, clients)
    if m > MAX_IDENTICAL:
        raise ValueError(
            f"{name} {m}: at most {MAX_IDENTICAL:,} identical clients (each is a row of the "
            "global model's solve: time and memory grow with M, 23 GB at 1e9); as M -> inf the "
            "centre is FedAvg's logistic global model over infinitely many clients, "
            "logistic_limit(..., centre='fedavg') (--centre fedavg without --clients), within "
            "1e-5 of M = 1e6 (risk 0.978929 and 0.978930 at gamma 2, r 1, lam 1)")
    return m
