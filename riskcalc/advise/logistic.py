"""``riskcalc.advise`` for the logistic family: a federation's candidate pipelines ranked by the
predicted risk of personalized logistic regression.

For a logistic federation (``LogisticFederation``: every client's ``gamma_j = d / n_j`` and
``r_j = ||w_j - w_0||``, one ``S = ||w_0||``, the ridge ``global_lam`` of FedAvg's global model
and optionally one covariance spectrum), every candidate is evaluated on the exact finite-M
limits of ``riskcalc.logistic_clients_limit`` (the CGMT fixed points derived in
``riskcalc.logistic.blocks.pooled``, ``finetune`` and ``fedprox``, after Salehi, Abbasi & Hassibi
2019 and Sur & Candes 2019; papers 000 and 004 run this model):

* FedAvg: the logistic global model over all M clients (``argmin sum_j c_j sum_{block j}
  logloss + (global_lam/2) ||w||^2``), with sample weights ``c_j = 1/N`` or uniform
  ``c_j = 1/(M n_j)``;
* RTFA: each client's fine-tuning toward that global model with ITS OWN ``lam_j``;
* FedProx / pFedMe (``pfedme``, alias ``fedprox``): every client's ``w_j`` of the joint
  objective with one shared ``lam``;
* local ridge toward 0 with each client's own ``lam_j`` (no global model).

Risk is ``||w_hat - w_j||^2`` (``riskcalc.logistic``'s ``risk``); the predicted test
misclassification rate of every client is reported beside it. Candidates are ranked by the mean
risk over the clients (as the linear ``riskcalc.advise``), then by the worst client. Under a
covariance spectrum the risk stays Euclidean, where the linear advise ranks by the
Sigma-weighted risk: each family ranks by the error its papers measure. The logistic papers
measure the estimation error ``E ||w_hat - w_j||^2`` in the parameters (paper 000, Thm 8 /
eq. 14, its lower bound; paper 004, Sec. 3, the "local statistical error", also plotted in its
Fig. 1(a) over features of covariance diag(j^-1.2)); their other risk, paper 000's excess
risk (Defs 1-2), is in the log-loss, not the misclassification rate. Paper 003's linear risk is
the prediction error on a fresh x, hence Sigma-weighted. ``sigma_risk``, the Sigma-weighted
logistic error, is in each candidate's limits, not ranked.

Tuning (derived here; there is no finite-M logistic tuning in ``riskcalc.logistic``, whose
``optimal_lambda_logistic`` is the infinite-client oracle): a BOUNDED 1-D search in
``log lam`` over ``riskcalc.logistic.tuning.LAM_RANGE`` = [1e-3, 1e3]. The risk at lam = 0.1,
1 and 10, extended one decade at a time past the smaller end until a decade point has larger
neighbours on both sides (or the range ends); then Brent's bounded search
(``scipy.optimize.minimize_scalar``) between those neighbours, to ``XATOL`` in ``log lam``. A
minimum at an end of the range is reported at that end, with a note. It finds the global
minimum when the risk is unimodal in ``log lam`` (else a local one): an assumption, not a
theorem. The bracket starts in the middle because small penalties are the slow fixed points
(0.7 s at lam = 1e-3 against 0.02 s at 1e3 for one client's fine-tuning, measured). A
penalty whose fixed point does not converge counts as an infinite risk in the search and is
named in a note; the chosen point always converged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from riskcalc._frames import json_numbers
from riskcalc._validate import as_array
from riskcalc.advise import pipelines
from riskcalc.advise.result import Advice, Candidate
from riskcalc.errors import SolverError
from riskcalc.logistic.finite_clients import (ALIASES, canonical_method, check_reach,
                                              logistic_clients_limit)
from riskcalc.logistic.tuning import LAM_RANGE
from riskcalc.logistic.work import finite_seconds
from riskcalc.spectrum import as_spectrum

__all__ = ["LogisticCandidate", "LogisticFederation", "PIPELINES", "advise_logistic",
           "estimate_seconds"]

#: Every pipeline of the logistic advice, in the order it evaluates them.
PIPELINES = ("fedavg", "rtfa", "pfedme", "local_ridge")
#: The ranking's criterion (module docstring), as the command line prints it: under a spectrum
#: the Euclidean risk is not the Sigma-weighted one, and the test errors printed beside it may
#: order the candidates otherwise (local ridge first on risk, last on test error, was shown
#: without saying which criterion ranked it).
RANKED_BY = ("the mean over the clients of risk = ||w_hat - w_j||^2 (Euclidean, with or "
             "without a spectrum: the estimation error of papers 000 Thm 8 and 004 Sec. 3; "
             "sigma_risk is the Sigma-weighted one), then the worst client's")
WEIGHTS = ("samples", "uniform")
#: Tolerance of the bounded search in log(lam) (lam within 5%): the risk is flat to second
#: order at its minimum.
XATOL = 0.05
#: Evaluations of one 1-D search (``search``): the bracket and the bounded steps; 10 to 14
#: measured per search (federations of 2-50 distinct clients, signal 1 and 5, global_lam 0.1
#: and 1e-3), so the most.
EVALUATIONS = 14


@dataclass(frozen=True, eq=False)
class LogisticFederation:
    """M >= 2 logistic clients.

    Parameters
    ----------
    gamma, r : sequence of float (M,)
        ``d / n_j > 0`` and ``||w_j - w_0|| >= 0``.
    signal : float
        ``S = ||w_0|| >= 0``.
    global_lam : float
        Ridge toward 0 of FedAvg's (and FedProx's) global model, >= 0 (0 only where the pooled
        minimizer exists: ``riskcalc.logistic.blocks.pooled``).
    spectrum : Spectrum, optional
        Every client's ``x ~ N(0, Sigma)`` (None: the identity).

    Raises
    ------
    ValueError
        Fewer than two clients, lists of different lengths, or values out of range.
    """

    gamma: np.ndarray
    r: np.ndarray
    signal: float
    global_lam: float
    spectrum: object = None

    def __post_init__(self):
        gamma = np.atleast_1d(as_array("gamma", self.gamma, low=0.0, low_open=True))
        r = np.atleast_1d(as_array("r", self.r, low=0.0))
        for name, value in (("gamma", gamma), ("r", r)):
            if value.ndim != 1:     # was "lists of one length ...; got 2 and 2"
                raise ValueError(f"{name} must be a 1-d list (one entry per client), got an "
                                 f"array of shape {value.shape}")
        if gamma.size != r.size:
            raise ValueError(f"gamma and r must be lists of one length (one entry per client); "
                             f"got {gamma.size} and {r.size}")
        if gamma.size < 2:
            raise ValueError(f"a federation needs at least two clients, got {gamma.size}: for "
                             "one client use riskcalc predict --model logistic")
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "r", r)
        # An array signal was a TypeError from float(), a SPEC string (the limits take one)
        # an AttributeError on .is_identity.
        object.__setattr__(self, "signal",
                           float(as_array("signal", self.signal, low=0.0, ndim=0)))
        object.__setattr__(self, "global_lam",
                           float(as_array("global_lam", self.global_lam, low=0.0, ndim=0)))
        spectrum = as_spectrum(self.spectrum)
        object.__setattr__(self, "spectrum",
                           None if spectrum is None or spectrum.is_identity else spectrum)

    @property
    def m(self) -> int:
        """Number of clients."""
        return int(self.gamma.size)

    def groups(self) -> list:
        """``(index of the first client, indices)`` of each distinct ``(gamma, r)``: clients
        with the same parameters have the same limits and the same tuning."""
        keys = list(zip(self.gamma.tolist(), self.r.tolist()))
        first = {}
        for j, key in enumerate(keys):
            first.setdefault(key, []).append(j)
        return [(idx[0], np.array(idx)) for idx in first.values()]

    def limit(self, method, weights="samples", lam=None, target=None):
        """``riskcalc.logistic_clients_limit`` of this federation."""
        return logistic_clients_limit(gamma=self.gamma, r=self.r, signal=self.signal,
                                      lam=lam, global_lam=self.global_lam, weights=weights,
                                      method=method, target=target, spectrum=self.spectrum)

    def describe(self) -> dict:
        """Plain JSON values."""
        return {"model": "logistic", "clients": self.m, "gamma": self.gamma.tolist(),
                "r": self.r.tolist(), "signal": self.signal, "global_lam": self.global_lam,
                "spectrum": "identity" if self.spectrum is None else self.spectrum.describe()}

    def covariance_text(self) -> str:
        """One line naming the model and the clients' covariance."""
        return (f"logistic model, signal {self.signal:g}, global_lam {self.global_lam:g}, "
                f"spectrum {'identity' if self.spectrum is None else self.spectrum.describe()}")


@dataclass(frozen=True)
class LogisticCandidate(Candidate):
    """A ``Candidate`` with every client's predicted test misclassification rate."""

    test_errors: np.ndarray = field(default=None)

    @property
    def mean_test_error(self) -> float:
        return float(np.mean(self.test_errors))

    def as_dict(self) -> dict:
        out = super().as_dict()
        out.update(test_errors=json_numbers(self.test_errors),
                   mean_test_error=json_numbers(self.mean_test_error))
        return out


def advise_logistic(federation: LogisticFederation, methods=None,
                    progress=None) -> Advice:
    """Every logistic candidate's predicted risks and test errors for ``federation``, ranked.

    Module docstring: the limits of ``riskcalc.logistic_clients_limit`` and the bounded 1-D
    tuning derived here.

    Parameters
    ----------
    federation : LogisticFederation
    methods : sequence of str, optional
        Among ``PIPELINES`` (``fedprox``: an alias of ``pfedme``); default all.
    progress : callable, optional
        Called with each pipeline's name when it is done.

    Returns
    -------
    Advice
        ``candidates`` (``LogisticCandidate``) sorted by mean risk, then worst risk; the first
        is recommended; ``skipped`` names a candidate that could not be evaluated (a global
        model that does not exist, or no converged fixed point), with the reason.

    Raises
    ------
    ValueError
        An unknown, empty or repeated method (``riskcalc.advise.pipelines``; ``fedprox``
        and ``pfedme`` name one pipeline), a ``progress`` that is not callable, or no
        candidate could be evaluated.
    """
    fed = federation
    chosen = pipelines(methods, PIPELINES, ALIASES)
    if progress is not None and not callable(progress):   # as riskcalc.advise.advise
        raise ValueError(f"progress must be a callable (called with each pipeline's name), "
                         f"got {progress!r:.60}")
    starts = {"samples": (1.0 / fed.gamma) / np.sum(1.0 / fed.gamma),
              "uniform": np.full(fed.m, 1.0 / fed.m)}
    done = progress or (lambda name: None)
    cands, failed = [], []
    # Equal gammas make the two weightings one: their candidates are the same limits.
    same = bool(np.all(fed.gamma == fed.gamma[0]))
    for method in PIPELINES:
        if method not in chosen:
            continue
        for name in (("none",) if method == "local_ridge" else WEIGHTS):
            if same and name == "uniform" and cands and cands[-1].method == method:
                cands.append(replace(cands[-1], weights="uniform", p=starts["uniform"]))
                continue
            try:
                cands.append(_candidate(fed, method, name,
                                        None if name == "none" else starts[name]))
            except (ValueError, SolverError) as exc:
                # e.g. global_lam = 0 with separable pooled data, or no converged fixed point
                failed.append((method if name == "none" else f"{method} with {name} weights",
                               str(exc)))
        done(method)
    skipped = [f"{who}: {why}" for who, why in failed]
    if not cands:
        # One refusal shared by every candidate (a signal beyond the limits' reach) was
        # repeated once per candidate, seven times: each reason is said once, with its
        # candidates (local ridge, which has no weights, was "local_ridge with none weights").
        reasons = {}
        for who, why in failed:
            reasons.setdefault(why, []).append(who)
        raise ValueError("no candidate could be evaluated: " + "; ".join(
            f"{', '.join(who)}: {why}" for why, who in reasons.items()))
    order = sorted(range(len(cands)), key=lambda k: (_rank(cands[k].mean_risk),
                                                      _rank(cands[k].worst_risk), k))
    return Advice(fed, tuple(cands[k] for k in order), tuple(skipped))


def _candidate(fed, method, weights, p):
    """One candidate: untuned (fedavg), a shared lam (pfedme) or per-client lam_j."""
    if method == "fedavg":
        res = fed.limit("fedavg", weights)
        return LogisticCandidate("fedavg", {}, weights, p, res.risk, notes=res.notes,
                                 test_errors=res.test_error)
    if method == "pfedme":
        lam, res, notes = search(lambda v: fed.limit("pfedme", weights, v))
        return LogisticCandidate("pfedme", {"lam": lam}, weights, p, res.risk,
                                 notes=res.notes + notes, test_errors=res.test_error)
    lam, risk, err, notes = np.empty(fed.m), np.empty(fed.m), np.empty(fed.m), ()
    # Local ridge uses no global model: its weights are immaterial.
    pooled = "samples" if method == "local_ridge" else weights
    for first, idx in fed.groups():
        value, res, why = search(lambda v: fed.limit(method, pooled, v, target=int(first)))
        lam[idx], risk[idx], err[idx] = value, res.risk[0], res.test_error[0]
        notes += tuple(f"client {first}: {n}" for n in why)
    if method == "rtfa" and np.any(lam >= LAM_RANGE[1]):
        # RTFA tends to FedAvg as lam -> infinity: a search ending at the range's top (lam =
        # 1000 was reported with a risk above FedAvg's) takes that limit where it is no worse,
        # as the linear advice does (``tune.shown_lams``).
        glob = fed.limit("fedavg", weights)
        far = (lam >= LAM_RANGE[1]) & (glob.risk <= risk)
        if far.any():
            lam[far], risk[far], err[far] = np.inf, glob.risk[far], glob.test_error[far]
            notes += (f"lam -> inf (FedAvg's model: no penalty in [1e-3, 1e3] beats it) for "
                      f"client(s) {', '.join(map(str, np.flatnonzero(far)))}",)
    limit = "exact (no global model)" if method == "local_ridge" else "finite-M"
    return LogisticCandidate(method, {"lam": lam.tolist()}, weights, p, risk, limit=limit,
                             notes=notes, test_errors=err)


def search(evaluate):
    """``(lam, result, notes)`` minimizing the mean risk of ``evaluate(lam)`` (a
    ``LogisticClientsResult``) by the bounded 1-D search of the module docstring."""
    from scipy.optimize import minimize_scalar

    failed, seen = [], {}

    def mean(t):
        if t not in seen:
            try:
                res = evaluate(float(np.exp(t)))
                seen[t] = (float(np.mean(res.risk)), res)
            except SolverError:
                failed.append(float(np.exp(t)))
                seen[t] = (np.inf, None)
        return seen[t][0]

    lo, hi = np.log(LAM_RANGE[0]), np.log(LAM_RANGE[1])
    step = np.log(10.0)
    # Bracket from lam = 0.1, 1, 10 outward, one decade at a time.
    grid = [-step, 0.0, step]
    while True:
        k = int(np.argmin([mean(t) for t in grid]))
        if k == 0 and grid[0] - step >= lo - 1e-9:
            grid = [grid[0] - step] + grid
        elif k == len(grid) - 1 and grid[-1] + step <= hi + 1e-9:
            grid = grid + [grid[-1] + step]
        else:
            break
    values = [mean(t) for t in grid]
    if not np.isfinite(values[k]):
        raise SolverError("no penalty in [1e-3, 1e3] gave a converged fixed point")
    best, notes = grid[k], ()
    if k in (0, len(grid) - 1):
        notes = (f"lam at the end {np.exp(best):g} of the search range [1e-3, 1e3]",)
    else:
        out = minimize_scalar(mean, bounds=(grid[k - 1], grid[k + 1]), method="bounded",
                              options={"xatol": XATOL})
        if mean(out.x) <= values[k]:
            best = out.x
    if failed:
        notes += ("no converged fixed point at lam = " + ", ".join(f"{v:.3g}" for v in failed)
                  + " (counted as an infinite risk in the search)",)
    return float(np.exp(best)), seen[best][1], notes


def estimate_seconds(fed: LogisticFederation, methods=PIPELINES) -> float:
    """Estimated seconds of ``advise_logistic(fed, methods)``: the sum of
    ``riskcalc.logistic.work.finite_seconds`` over the calls it makes (``_solves``), Sigma = I
    (a spectrum's solvers are not costed). ValueError, as the limits refuse it, for a
    federation beyond their reach: its estimate (signal 1e6: 66.6 days) advised fewer clients
    or more time, neither of which answers."""
    check_reach(fed.signal, fed.r, fed.spectrum)
    return float(sum(finite_seconds(fed.gamma, fed.r, fed.signal, lam, fed.global_lam, method,
                                    targets, pooled=pooled) * count
                     for method, lam, targets, pooled, count in _solves(fed, methods)))


def _solves(fed, methods):
    """``(method, lam, targets, pooled, count)``: ``advise_logistic``'s calls of
    ``logistic_clients_limit``, ``count`` alike. The global model is solved once per weighting
    (FedAvg's call, or the first that needs it: ``finite_clients.point`` remembers it) and
    remembered by every later call; each search makes at most ``EVALUATIONS`` calls, each
    costed at the search's smallest penalty ``LAM_RANGE[0]`` (small penalties are the slow
    fixed points); equal gammas make the two weightings one (no second solve)."""
    chosen = {canonical_method(m) for m in methods}
    weightings = 1 if np.all(fed.gamma == fed.gamma[0]) else len(WEIGHTS)
    lam, firsts = LAM_RANGE[0], [fed.r[[first]] for first, _ in fed.groups()]
    out = []
    if chosen - {"local_ridge"}:
        out.append(("fedavg", None, fed.r, True, weightings))
    if "rtfa" in chosen:
        out += [("rtfa", lam, t, False, weightings * EVALUATIONS) for t in firsts]
    if "pfedme" in chosen:
        out.append(("pfedme", lam, fed.r, False, weightings * EVALUATIONS))
    if "local_ridge" in chosen:
        out += [("local_ridge", lam, t, False, EVALUATIONS) for t in firsts]
    return out


def _rank(v):
    return v if np.isfinite(v) else np.inf
