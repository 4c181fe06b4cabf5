"""Personalized logistic regression in the proportional regime (d/n -> gamma): exact limits.

``logistic_limit`` and ``logistic_lam_path`` (CGMT fixed point, ``fixed_point``; its lam path
and one-point limits, ``path``),
``mle_threshold`` (Candes-Sur existence transition, ``transition``),
``optimal_lambda_logistic`` (``tuning``), ``fedavg_centre_scale`` (``fedavg``);
``logistic_clients_limit`` and ``logistic_limit(..., clients=M)``: the federated pipeline with
M clients (``finite_clients``, over the fixed points of ``blocks``: ``pooled``, ``finetune``,
``fedprox``); with ``spectrum=`` (x ~ N(0, Sigma)) both by their spectral counterparts (the
sub-room ``spectrum``). Under all of them, ``engine``: the proximal map, the quadrature rules,
warm starts and a solve's deadline. A separate
entry point rather than ``riskcalc.limit(..., model="logistic")``: the logistic model has other
parameters (``signal``, no ``sigma``) and other outputs (cosine, test log-loss and error instead
of bias/variance), so it gets its own function and result type.
"""

from riskcalc.logistic.fedavg import fedavg_centre_scale
from riskcalc.logistic.finite_clients import logistic_clients_limit
from riskcalc.logistic.path import logistic_lam_path
from riskcalc.logistic.limits import logistic_limit
from riskcalc.logistic.result import FiniteLogisticResult, LogisticClientsResult, LogisticResult
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.tuning import optimal_lambda_logistic

__all__ = [
    "FiniteLogisticResult", "LogisticClientsResult", "LogisticResult", "fedavg_centre_scale",
    "logistic_clients_limit", "logistic_lam_path", "logistic_limit", "mle_threshold",
    "optimal_lambda_logistic",
]
