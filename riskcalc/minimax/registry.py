"""Registry of every bound, so tools (the ``riskcalc bounds`` command) can list and evaluate
them generically by name."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from riskcalc._validate import one_of
from riskcalc.minimax import (chen, chen_fedprox, chen_lower, fedprox, fedprox_bilevel,
                              fedprox_table1, hanzely, hanzely_upper)
from riskcalc.papers import cite


@dataclass(frozen=True)
class BoundSpec:
    """One registered bound.

    Attributes
    ----------
    func : callable
        The pure function.
    description : str
        What the bound encodes (one line).
    ref : str
        Paper file and theorem/equation.
    fixed : dict
        Keyword flags bound for this entry (e.g. ``printed=True``).
    """

    func: Callable
    description: str
    ref: str
    fixed: dict = field(default_factory=dict)

    @property
    def params(self) -> tuple[str, ...]:
        """Parameter names, in call order (flags in ``fixed`` excluded)."""
        return tuple(p for p in inspect.signature(self.func).parameters
                     if p not in self.fixed and p not in _FLAGS)

    @property
    def defaults(self) -> dict:
        """Parameters that may be omitted, with their default values."""
        sig = inspect.signature(self.func).parameters
        return {p: sig[p].default for p in self.params
                if sig[p].default is not inspect.Parameter.empty}


# Keyword switches between printed and corrected forms; entries fix them instead of exposing them.
_FLAGS = {"printed", "rederived", "strict"}

_P000, _P004, _P001 = cite("000"), cite("004"), cite("001")

BOUNDS: dict[str, BoundSpec] = {
    "local_ier": BoundSpec(chen.local_ier_bound,
                           "PureLocalTraining IER: beta*loss_sup/(mu*n_i)", f"{_P000}, Thm 4"),
    "fedavg_aer": BoundSpec(chen.fedavg_aer_bound,
                            "FedAvg AER, p=n/N: beta*loss_sup/(mu*N) + beta*R^2",
                            f"{_P000}, Thm 6, eq. 11"),
    "fedavg_ier": BoundSpec(chen.fedavg_ier_bound,
                            "FedAvg IER, p=n/N: beta*sigma2/(mu^2 N) + beta^3 R^2/mu^2",
                            f"{_P000}, Thm 6, eq. 11"),
    "logistic_constants": BoundSpec(chen_lower.logistic_constants,
                                    "Logistic instance constants (re-derived)",
                                    f"{_P000}, Lemma 7, eq. 12"),
    "logistic_constants_printed": BoundSpec(chen_lower.logistic_constants,
                                            "Logistic instance constants as printed",
                                            f"{_P000}, Lemma 7, eq. 12", {"printed": True}),
    "lower_bound_aer": BoundSpec(chen_lower.lower_bound_aer,
                                 "Minimax average estimation error: min(d m/N, R^2) + d/N",
                                 f"{_P000}, Thm 8, eq. 14"),
    "lower_bound_ier": BoundSpec(chen_lower.lower_bound_ier,
                                 "Minimax client estimation error: min(d/n_i, R^2) + d/N",
                                 f"{_P000}, Thm 8, eq. 15"),
    "excess_lower_bound_aer": BoundSpec(chen_lower.excess_lower_bound_aer,
                                        "Minimax AER: mu*(min(beta m/N, R^2) + beta/N)",
                                        f"{_P000}, Cor 9, eq. 16"),
    "excess_lower_bound_ier": BoundSpec(chen_lower.excess_lower_bound_ier,
                                        "Minimax IER: mu*(min(beta/n_i, R^2) + beta/N)",
                                        f"{_P000}, Cor 9, eq. 17"),
    "dichotomy_threshold": BoundSpec(chen.dichotomy_threshold,
                                     "R^2 threshold of the dichotomous strategy: "
                                     "(loss_sup/mu) m/N", f"{_P000}, Sec 3.3"),
    "dichotomy_aer": BoundSpec(chen.dichotomy_aer_bound, "Dichotomous strategy AER, p=n/N",
                               f"{_P000}, eq. 18"),
    "dichotomy_ier": BoundSpec(chen.dichotomy_ier_bound, "Dichotomous strategy IER, p=n/N",
                               f"{_P000}, eq. 19"),
    "fedprox000_aer": BoundSpec(chen_fedprox.fedprox_aer_bound,
                                "FedProx AER: (mu + beta loss_sup/mu)(min(m/N, R sqrt(m/N))"
                                " + 1/N)", f"{_P000}, Thm 11, eq. 30"),
    "fedprox000_ier": BoundSpec(chen_fedprox.fedprox_ier_bound,
                                "FedProx IER: K (min(R/sqrt(n_i), 1/n_i) + sqrt(m)/N)",
                                f"{_P000}, Thm 12, eq. 29"),
    "fedprox000_regime_aer": BoundSpec(chen_fedprox.fedprox_regime,
                                       "FedProx-vs-lower-bound AER regime 0/1/2",
                                       f"{_P000}, discussion after eq. 30", {"kind": "aer"}),
    "fedprox000_regime_ier": BoundSpec(chen_fedprox.fedprox_regime,
                                       "FedProx-vs-lower-bound IER regime 0/1/2",
                                       f"{_P000}, discussion after eq. 30", {"kind": "ier"}),
    "fedprox_constants": BoundSpec(fedprox.fedprox_constants, "C1..C4 as printed",
                                   f"{_P004}, Thm 1"),
    "fedprox_constants_rederived": BoundSpec(fedprox.fedprox_constants,
                                             "C1..C4 of the corrected proof", f"{_P004}, Thm 1",
                                             {"rederived": True}),
    "fedprox_lambda": BoundSpec(fedprox.fedprox_lambda,
                                "Prescribed lambda endpoint (lower if R<=1/sqrt(n), else upper)",
                                f"{_P004}, Thm 1, eqs. 34, 82"),
    "fedprox_lambda_rederived": BoundSpec(fedprox.fedprox_lambda,
                                          "Prescribed lambda endpoint, corrected proof",
                                          f"{_P004}, Thm 1", {"rederived": True}),
    "fedprox_global_error": BoundSpec(fedprox.fedprox_global_error_bound,
                                      "Global error: C1/N + C2 min(1/n, R^2)",
                                      f"{_P004}, Thm 1, eq. 6"),
    "fedprox_local_error": BoundSpec(fedprox.fedprox_local_error_bound,
                                     "Local error: C3/N + C4 min(1/n, R^2)",
                                     f"{_P004}, Thm 1, eq. 7"),
    "local_case2_lambda": BoundSpec(fedprox.local_case2_lambda,
                                    "Minimal lambda of the local case R<=1/sqrt(n), re-derived",
                                    f"{_P004}, eqs. 72-73"),
    "local_case2_lambda_printed": BoundSpec(fedprox.local_case2_lambda,
                                            "Minimal lambda of the local case as printed",
                                            f"{_P004}, eq. 75", {"printed": True}),
    "table1_regime": BoundSpec(fedprox_table1.table1_regime, "Table 1 column 0/1/2",
                               f"{_P004}, Table 1"),
    "table1_rates": BoundSpec(fedprox_table1.table1_rates, "Table 1 rows (corrected)",
                              f"{_P004}, Table 1"),
    "table1_rates_printed": BoundSpec(fedprox_table1.table1_rates, "Table 1 rows as printed",
                                      f"{_P004}, Table 1", {"printed": True}),
    "bilevel_constants": BoundSpec(fedprox_bilevel.bilevel_constants,
                                   "mu_g, L_g, mu_l, L_l, L_w of the bilevel form",
                                   f"{_P004}, Lemma 2"),
    "outer_rate": BoundSpec(fedprox_bilevel.outer_rate, "Linear rate 1 - g mu_g/2 - (g mu_g)^2/2",
                            f"{_P004}, Thm 2"),
    "inner_loop_iterations": BoundSpec(fedprox_bilevel.inner_loop_iterations,
                                       "Smallest K meeting the inner-loop condition",
                                       f"{_P004}, Thm 2, eq. 12"),
    "fedprox_complexity": BoundSpec(fedprox_bilevel.fedprox_complexity,
                                    "Rounds, K and gradient evaluations of Algorithm 1",
                                    f"{_P004}, Cor 1, eqs. 13-14, 118"),
    "thm31_lower_bound": BoundSpec(hanzely.thm31_distance_lower_bound,
                                   "Lower bound on ||x^k - x*||^2 after C(k) rounds",
                                   f"{_P001}, Thm 3.1, eq. 3"),
    "communication_lower_bound": BoundSpec(hanzely.communication_lower_bound,
                                           "Fewest rounds to reach ||x^k - x*||^2 <= eps",
                                           f"{_P001}, Thm 3.1"),
    "prox_oracle_lower_bound": BoundSpec(hanzely.prox_oracle_lower_bound,
                                         "Local prox calls: sqrt(min(lam,L)/mu) log(1/eps)",
                                         f"{_P001}, Sec 3.2"),
    "gradient_oracle_lower_bound": BoundSpec(hanzely.gradient_oracle_lower_bound,
                                             "Local gradient calls: sqrt(L/mu) log(1/eps)",
                                             f"{_P001}, Sec 3.2"),
    "summand_oracle_lower_bound": BoundSpec(hanzely.summand_oracle_lower_bound,
                                            "Summand gradients: m + sqrt(m L_tilde/mu) "
                                            "log(1/eps)", f"{_P001}, Sec 3.2"),
    "apgd_complexity": BoundSpec(hanzely_upper.apgd_complexity,
                                 "APGD1/APGD2 (and PGD) complexity orders",
                                 f"{_P001}, Sec 4.1, Table 1"),
    "iapgd_agd_complexity": BoundSpec(hanzely_upper.iapgd_agd_complexity,
                                      "IAPGD+AGD rounds and local steps (explicit schedule), "
                                      "rate 1 - sqrt(mu/(lam+mu)) (corrected)",
                                      f"{_P001}, Thm 4.2"),
    "iapgd_agd_complexity_printed": BoundSpec(hanzely_upper.iapgd_agd_complexity,
                                              "IAPGD+AGD rounds and local steps, rate "
                                              "1 - sqrt(mu/lam) as printed",
                                              f"{_P001}, Thm 4.2", {"printed": True}),
    "iapgd_katyusha_complexity": BoundSpec(hanzely_upper.iapgd_katyusha_complexity,
                                           "IAPGD+Katyusha orders of rounds and local gradients",
                                           f"{_P001}, Thm 4.3"),
    "al2sgd_complexity": BoundSpec(hanzely_upper.al2sgd_complexity,
                                   "AL2SGD+ orders of rounds and local gradients",
                                   f"{_P001}, Thm 4.4"),
}


def evaluate(name: str, **params) -> dict:
    """Evaluate the registered bound ``name`` and return its outputs as a dict.

    Parameters
    ----------
    name : str
        A key of :data:`BOUNDS`.
    **params
        Every parameter of the entry without a default (scalars or arrays).

    Returns
    -------
    dict
        Output name -> value; single-valued bounds give ``{"value": ...}``.

    Raises
    ------
    ValueError
        Unknown name, missing or unknown parameters, or invalid values.
    """
    if not one_of(name, BOUNDS):
        raise ValueError(f"unknown bound {name!r}; see `riskcalc bounds --list`")
    spec = BOUNDS[name]
    unknown = sorted(set(params) - set(spec.params))
    if unknown:
        raise ValueError(f"bound {name!r} takes {', '.join(spec.params)}; "
                         f"unexpected: {', '.join(unknown)}")
    missing = [p for p in spec.params if p not in params and p not in spec.defaults]
    if missing:
        raise ValueError(f"bound {name!r} needs {', '.join(missing)}")
    out = spec.func(**params, **spec.fixed)
    if isinstance(out, dict):
        return dict(out)
    if hasattr(out, "_asdict"):
        return dict(out._asdict())
    return {"value": out}


def to_jsonable(value):
    """Plain Python numbers/lists/bools/strings for ``json.dumps``."""
    arr = np.asarray(value)
    if arr.dtype.kind in "biuf":
        out = arr.tolist()
        return out
    return arr.astype(str).tolist()
