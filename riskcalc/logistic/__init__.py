"""Personalized logistic regression in the proportional regime (d/n -> gamma): exact limits.

``logistic_limit`` and ``logistic_lam_path`` (CGMT fixed point, ``fixed_point``),
``mle_threshold`` (Candes-Sur existence transition, ``transition``),
``optimal_lambda_logistic`` (``tuning``), ``fedavg_centre_scale`` (``fedavg``). A separate
entry point rather than ``riskcalc.limit(..., model="logistic")``: the logistic model has other
parameters (``signal``, no ``sigma``) and other outputs (cosine, test log-loss and error instead
of bias/variance), so it gets its own function and result type.
"""

from riskcalc.logistic.fedavg import fedavg_centre_scale
from riskcalc.logistic.fixed_point import LogisticResult, logistic_lam_path, logistic_limit
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.tuning import optimal_lambda_logistic

__all__ = [
    "LogisticResult", "fedavg_centre_scale", "logistic_lam_path", "logistic_limit", "mle_threshold",
    "optimal_lambda_logistic",
]
