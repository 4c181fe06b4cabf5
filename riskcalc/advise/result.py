"""The result of ``riskcalc.advise``: candidate pipelines with their per-client risks, and the
ranked advice (the recommendation, ties, per-client bests, the optimal weights' gains)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcalc._frames import json_numbers

#: Mean risks within this relative distance of the recommended one are reported as ties (the
#: limits are solved to ~1e-12 relative; RTFA at lam -> 0 equals FTFA, every pipeline with a
#: global model has risk 0 when r_j = sigma_j = 0 for every client).
TIE_RTOL = 1e-9
#: Risks within this fraction of the federation's scale (``scale``) of each other are ties
#: whatever their ratio: every risk is a sum of the federation's r_j^2, sigma_j^2 (rho_j^2 for
#: the local baseline) times factors solved to ~1e-12 relative, from estimates that carry
#: rounding of that size too, so below 1e-12 x the scale (~4500 eps) a difference is rounding
#: (noise-free data, y = X theta: every risk ~1e-16 or less at a signal rho_j^2 ~ 1-10).
TIE_ATOL = 1e-12


@dataclass(frozen=True)
class Candidate:
    """One pipeline: method, tuning, client weights and every client's predicted risk."""

    method: str
    tuning: dict
    weights: str
    p: np.ndarray | None
    risks: np.ndarray
    limit: str = "finite-M"
    notes: tuple = field(default=())

    @property
    def mean_risk(self) -> float:
        return float(np.mean(self.risks))

    @property
    def worst_risk(self) -> float:
        return float(np.max(self.risks))

    def as_dict(self) -> dict:
        """Plain JSON values; an infinite risk (the interpolation threshold) or penalty
        (RTFA's lam -> inf, with a note: ``tune.shown_lams``) becomes None."""
        return {"method": self.method,
                "tuning": {k: (json_numbers(v) if _infinite(v) else v) for k, v in self.tuning.items()},
                "weights": {"name": self.weights,
                            "p": None if self.p is None else np.asarray(self.p).tolist()},
                "risks": json_numbers(self.risks), "mean_risk": json_numbers(self.mean_risk),
                "worst_risk": json_numbers(self.worst_risk), "limit": self.limit,
                "notes": list(self.notes)}


@dataclass(frozen=True)
class Advice:
    """The result of ``advise``: ranked candidates, the recommendation for the federation and
    per client, and what the optimal weights gain."""

    federation: object            # Federation, or the logistic family's LogisticFederation
    candidates: tuple
    skipped: tuple
    #: (pipeline, reason) for each pipeline whose limits refused the federation (the others
    #: are ranked; ``riskcalc.advise.advise``).
    refused: tuple = ()

    @property
    def recommended(self) -> Candidate:
        """The candidate with the smallest mean risk."""
        return self.candidates[0]

    def ties(self) -> list:
        """Indices (into ``candidates``) of the candidates other than the recommended one whose
        mean risk equals the recommended one's within ``TIE_RTOL`` relative or ``TIE_ATOL``
        times the federation's ``scale``."""
        means = np.array([c.mean_risk for c in self.candidates])
        return [int(k) for k in np.flatnonzero(tied(means, means[0], self._unit()))[1:]]

    def at_rounding(self) -> bool:
        """Whether the recommended mean risk is itself a tie with 0 (``tied``): every
        candidate tied with it is as good, none is recommended over the others."""
        return bool(tied(np.array([self.recommended.mean_risk]), 0.0, self._unit())[0])

    def _unit(self) -> float:
        return scale(self.federation)

    def per_client(self) -> list:
        """Per client: the candidate (index into ``candidates``) with its smallest risk, and
        how many other candidates tie with it there (``ties``' tolerance)."""
        table = np.array([c.risks for c in self.candidates])
        best = np.argmin(table, axis=0)
        unit = self._unit()
        return [{"client": j, "candidate": int(k), "method": self.candidates[k].method,
                 "weights": self.candidates[k].weights, "risk": json_numbers(table[k, j]),
                 "tied": int(np.sum(tied(table[:, j], table[k, j], unit))) - 1}
                for j, k in enumerate(best)]

    def weight_gains(self) -> list:
        """Per method with optimal weights: the mean risk under each weighting and the
        relative gain of the optimal weights over the sample weights (0 where the two tie,
        ``tied``: noise-free data gave 'gain 0.23%' between risks ~1e-17, rounding). Not for
        a candidate along the rounds: its "optimal" weights are pFedMe's, searched at T = inf,
        not along the rounds (they were printed 'optimal weights, pfedme_rounds: ... gain
        -4.88% over samples')."""
        out = []
        unit = self._unit()
        searched = [c for c in self.candidates if c.limit != "rounds"]
        for method in dict.fromkeys(c.method for c in searched):
            means = {c.weights: c.mean_risk for c in searched if c.method == method}
            if "optimal" in means and "samples" in means:
                s, o = means["samples"], means["optimal"]
                real = np.isfinite(s) and s > 0 and not tied(np.array([o]), s, unit)[0]
                out.append({"method": method, **{k: json_numbers(v) for k, v in means.items()},
                            "gain_vs_samples": json_numbers((s - o) / s if real else 0.0)})
        return out

    def as_dict(self) -> dict:
        rec = self.recommended.as_dict()
        rec["per_client"] = self.per_client()
        rec["at_rounding_level"] = self.at_rounding()
        rec["tied_with"] = [{"rank": k + 1, "method": self.candidates[k].method,
                             "weights": self.candidates[k].weights} for k in self.ties()]
        return {"federation": self.federation.describe(),
                "candidates": [c.as_dict() for c in self.candidates],
                "recommended": rec, "weight_gains": self.weight_gains(),
                "skipped": list(self.skipped),
                "refused": [{"method": m, "reason": why} for m, why in self.refused]}


def scale(fed) -> float:
    """The federation's risk scale: mean r_j^2 + sigma_j^2 + rho_j^2 (rho_j where known: with
    noise-free, homogeneous data r_j = sigma_j = 0 up to rounding and the signal sets the
    scale); 1 where it is 0."""
    rho = getattr(fed, "rho", None)
    unit = float(np.mean(fed.r ** 2 + getattr(fed, "sigma", 0.0) ** 2
                         + (0.0 if rho is None else np.asarray(rho) ** 2)))
    return unit if unit > 0 else 1.0


def tied(values, best, unit):
    """Whether each value equals ``best`` within ``TIE_RTOL`` relative or ``TIE_ATOL`` x
    ``unit`` (``scale``) absolute."""
    with np.errstate(invalid="ignore"):
        return (values == best) | (np.abs(values - best)
                                   <= TIE_RTOL * np.abs(best) + TIE_ATOL * unit)




def _infinite(v) -> bool:
    """Whether a tuning value (a number or a per-client list) holds an infinity."""
    return any(isinstance(x, float) and np.isinf(x) for x in (v if isinstance(v, list) else [v]))
