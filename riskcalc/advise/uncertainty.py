"""Error bars on advice from data: intervals on every candidate's predicted risk, and how
often the recommendation changes, propagated from the estimates' uncertainty.

``riskcalc advise --data FED.npz`` ranks the pipelines of the federation estimated from data
(``riskcalc.estimate``). The estimates of sigma_j^2, r_j^2, rho_j^2 and of the covariance's
moments m1, m2, m3 come with a joint covariance V (``Estimate.cov``: the jackknife or the exact
least-squares covariance, plus the clients' random directions); gamma_j = d / n_j is known
exactly (d and n_j are counted, not estimated), so it carries no error.

Method (derived here): a parametric bootstrap over the estimates. Draw b = 1..B plausible
estimate vectors theta*_b ~ N(theta_hat, V), map each through the same map the point
estimate takes to a federation (``Estimate.federation``: square roots clipped at 0, the
spectrum's two-atom rule or Sigma = m1 I), run ``riskcalc.advise.advise`` on it, and report
per candidate (method and weighting) the (1 - level) / 2 and (1 + level) / 2 quantiles of its
mean risk, worst risk and every client's risk over the draws: the percentile interval of the
predicted risk g(theta). Why not the delta method: g is not differentiable where it matters
(a square root clipped at 0 when an estimated r_j^2 or sigma_j^2 is near or below 0; the
spectrum switching between one and two atoms; the tuning and the optimal weights are argmins,
and the recommendation an argmin over candidates), its gradient through the tuning would cost
3 M + 4 advise runs by finite differences anyway, and the draws also answer the second
question: the recommendation's stability, the share of draws whose recommended (method,
weights) is the point estimate's or ties with it (``result.tied``: within 1e-9 relative or
1e-12 x the risk scale, so that noise-free data, every risk at rounding level, do not make
the winner of rounding noise look unstable).

The intervals cover the predicted risk at the TRUE parameters at the nominal rate when the
estimates are close to Gaussian with covariance V and g is smooth on the scale of V; measured
by simulation in ``benchmarks/bench_advise_intervals.py`` (federations with known parameters,
data simulated, the whole chain run; tests/test_advise_uncertainty.py is its fast version).

Randomness: draw b uses ``numpy.random.SeedSequence(seed).spawn(B)[b]`` alone, so a result
does not depend on the order of the draws. Time: ``max_seconds`` bounds the process time; a
run that reaches it raises (no truncated result).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from riskcalc._frames import json_numbers
from riskcalc._validate import as_array, positive_int, seed_integer
from riskcalc.advise.result import scale, tied
from riskcalc.errors import SolverError

__all__ = ["DRAWS", "LEVEL", "Intervals", "bootstrap", "draw_estimates"]

#: Default number of bootstrap draws.
DRAWS = 200
#: Nominal coverage of the intervals.
LEVEL = 0.9


class BudgetExceeded(ValueError):
    """The bootstrap reached its ``max_seconds`` before the last draw (a ValueError, as the
    CLI's refusals of runs that would take too long are)."""


@dataclass(frozen=True)
class Intervals:
    """Percentile intervals of every candidate's predicted risks over the bootstrap draws.

    Attributes
    ----------
    level : float
        Nominal coverage.
    draws : int
        Number of draws B.
    seed : int
    point : tuple (method, weights)
        The recommendation of the point estimate.
    mean, worst : dict (method, weights) -> (lo, hi)
    risks : dict (method, weights) -> ndarray (M, 2)
        Per client, its risk's interval.
    evaluated : dict (method, weights) -> int
        Draws in which the candidate was evaluated (a draw may skip one: local ridge at an
        estimated rho_j = 0, a pipeline whose tuning fails there).
    recommended : Counter of (method, weights)
        The recommendation of each draw (among the candidates it evaluated): the point
        estimate's where its mean risk ties with the draw's best (``result.tied``: a tie is
        not a change of recommendation).
    incomplete : int
        Draws in which a pipeline had no limit (its candidates left out of that draw).
    rounding : int
        Draws whose best mean risk is at rounding level (``Advice.at_rounding``).
    """

    level: float
    draws: int
    seed: int
    point: tuple
    mean: dict
    worst: dict
    risks: dict
    evaluated: dict
    recommended: Counter
    incomplete: int = 0
    rounding: int = 0

    @property
    def stability(self) -> float:
        """The share of draws recommending the point estimate's (method, weights), or a
        candidate it ties with."""
        return self.recommended[self.point] / self.draws

    def as_dict(self) -> dict:
        """Plain JSON values (infinite bounds as None)."""
        return {"method": "parametric bootstrap over the estimates", "level": self.level,
                "draws": self.draws, "seed": self.seed,
                "recommendation": {
                    "method": self.point[0], "weights": self.point[1],
                    "stability": self.stability, "incomplete_draws": self.incomplete,
                    "rounding_level_draws": self.rounding,
                    "draws": [{"method": k[0], "weights": k[1], "share": v / self.draws}
                              for k, v in self.recommended.most_common()]}}

    def candidate(self, key) -> dict | None:
        """The intervals of candidate ``key`` = (method, weights) as plain JSON values, or
        None when no draw evaluated it."""
        if key not in self.mean:
            return None
        return {"level": self.level, "draws": self.evaluated[key],
                "mean_risk": json_numbers(self.mean[key]), "worst_risk": json_numbers(self.worst[key]),
                "risks": json_numbers(self.risks[key])}


def draw_estimates(est, draws: int, seed: int):
    """B plausible estimates: ``est.with_values(theta*_b)``, theta*_b ~ N(theta_hat, V)
    (``Estimate.cov``; V may be singular: its eigenvalues below 0 by rounding are set to 0),
    draw b from ``SeedSequence(seed).spawn(draws)[b]``.

    Parameters
    ----------
    est : riskcalc.estimate.Estimate
    draws : int >= 1
    seed : int >= 0

    Yields
    ------
    riskcalc.estimate.Estimate
    """
    from riskcalc.estimate.estimator import _flat

    draws = positive_int("draws", draws)
    if est.cov is None:
        raise ValueError("est has no joint covariance (Estimate.cov): estimate it with "
                         "riskcalc.estimate.estimate")
    w, v = np.linalg.eigh(est.cov)
    root = v * np.sqrt(np.maximum(w, 0.0))
    centre = _flat(est.values)
    for child in np.random.SeedSequence(seed).spawn(draws):
        z = np.random.default_rng(child).standard_normal(centre.size)
        yield est.with_values(centre + root @ z)


def bootstrap(est, advice, spectrum=None, draws: int = DRAWS, seed: int = 0,
              level: float = LEVEL, max_seconds: float | None = None,
              progress=None) -> Intervals:
    """Intervals on every candidate's predicted risk and the recommendation's stability
    (module docstring: parametric bootstrap over the estimates).

    Parameters
    ----------
    est : riskcalc.estimate.Estimate
        The estimates, with their joint covariance.
    advice : riskcalc.advise.Advice
        ``advise`` of the point estimate's federation (``est.federation(spectrum)``); every
        draw evaluates the pipelines that gave it candidates.
    spectrum : Spectrum, optional
        A covariance spectrum fixed by the user (then the moments play no part).
    draws : int
        Number of bootstrap draws B.
    seed : int
        Seed of ``numpy.random.SeedSequence``.
    level : float in (0, 1)
        Nominal coverage.
    max_seconds : float, optional
        Bound on the process time (>= 0; None or inf: none); reaching it raises
        ``BudgetExceeded``.
    progress : callable, optional
        Called once per draw.

    Returns
    -------
    Intervals
    """
    from riskcalc.advise import PIPELINES, advise

    # Read as every real parameter (was: level=Decimal("0.9") refused, max_seconds unchecked:
    # -1 stopped after no draw, nan never, True after one second).
    level = float(as_array("level", level, low=0.0, high=1.0, low_open=True, high_open=True,
                           ndim=0))
    if max_seconds is not None:      # 0: stopped before the first draw
        max_seconds = float(as_array("max_seconds", max_seconds, low=0.0, allow_inf=True,
                                     ndim=0))
    seed = seed_integer("seed", seed)
    # One draw made a point "interval" [x, x] and a recommendation "stable in 100%".
    positive_int("draws (an interval needs two)", draws, minimum=2)
    from riskcalc.estimate import Estimate

    if not isinstance(est, Estimate):     # was an AttributeError on its first field
        raise ValueError("est must be a riskcalc.estimate.Estimate (riskcalc.estimate or "
                         f"estimate_file), got {type(est).__name__}")
    fed = getattr(advice, "federation", None)
    if not (getattr(fed, "gamma", None) is not None and fed.gamma.shape == est.gamma.shape
            and np.allclose(fed.gamma, est.gamma, rtol=1e-12, atol=0.0)):
        # Another federation's advice was taken: its ranking beside these estimates' draws.
        raise ValueError("advice must be advise() of the estimates' federation "
                         "(est.federation(spectrum)): its clients' gamma_j = d / n_j differ")
    # In advise's order of evaluation, which breaks ties in its ranking.
    present = {c.method for c in advice.candidates}
    chosen = [m for m in PIPELINES if m in present]
    start = time.process_time()
    samples: dict = {}
    recommended = Counter()
    incomplete = rounding = 0
    rec = advice.recommended
    wanted = (rec.method, rec.weights)
    for k, draw in enumerate(draw_estimates(est, draws, seed)):
        if max_seconds is not None and time.process_time() - start > max_seconds:
            raise BudgetExceeded(f"the bootstrap took more than {max_seconds:.3g} s of CPU "
                                 f"after {k} of {draws} draws: allow more time or fewer draws")
        fed = draw.federation(spectrum=spectrum)
        cands, failed = [], False
        for method in chosen:
            # One pipeline at a time: one that a draw's federation leaves without a limit
            # (local ridge at rho_j = 0, a tuning that fails at sigma_j = 0) is left out of
            # that draw only, and counted (``Intervals.evaluated``).
            try:
                cands += advise(fed, methods=[method]).candidates
            except (SolverError, ValueError):
                failed = True
                continue
        incomplete += failed
        if not cands:
            raise SolverError(f"bootstrap draw {k}: no pipeline has a limit at "
                              f"{fed.describe()}")
        # advise's ranking: mean risk, then worst risk, then the order of the pipelines.
        best = min(range(len(cands)), key=lambda i: (_rank(cands[i].mean_risk),
                                                     _rank(cands[i].worst_risk), i))
        means = np.array([c.mean_risk for c in cands])
        unit = scale(fed)
        rounding += bool(tied(means[best:best + 1], 0.0, unit)[0])
        point = [i for i, c in enumerate(cands) if (c.method, c.weights) == wanted]
        if point and tied(means[point], means[best], unit)[0]:
            best = point[0]
        recommended[(cands[best].method, cands[best].weights)] += 1
        for c in cands:
            samples.setdefault((c.method, c.weights), []).append(c.risks)
        if progress is not None:
            progress()
    lo, hi = (1 - level) / 2, (1 + level) / 2
    mean, worst, risks, evaluated = {}, {}, {}, {}
    for key, rows in samples.items():
        table = np.array(rows)
        # 'inverted_cdf' interpolates nothing: an infinite risk (a client at gamma = 1) stays
        # a bound instead of becoming inf - inf.
        q = np.quantile(table, [lo, hi], axis=0, method="inverted_cdf")
        risks[key] = q.T
        mean[key] = tuple(np.quantile(table.mean(axis=1), [lo, hi], method="inverted_cdf"))
        worst[key] = tuple(np.quantile(table.max(axis=1), [lo, hi], method="inverted_cdf"))
        evaluated[key] = len(rows)
    return Intervals(level, draws, seed, wanted, mean, worst, risks, evaluated, recommended,
                     incomplete, rounding)


def _rank(v):
    return v if np.isfinite(v) else np.inf


