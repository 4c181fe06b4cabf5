"""riskcalc: exact asymptotic bias, variance and risk of personalized federated learning methods.

The theory layer of fedrisk: pure, deterministic functions of the model parameters, after
Cheng, Chadha and Duchi, *Federated asymptotics* (``../shared/papers/003_4b976ddf5225c17e.txt``)
and Hastie, Montanari, Rosset and Tibshirani (2019).

>>> import riskcalc
>>> res = riskcalc.limit("ftfa", gamma=2.0, r=1.0, sigma=0.5)
>>> res.bias, res.variance, res.risk
(0.5, 0.25, 0.75)
"""

from riskcalc._show_versions import show_versions
from riskcalc._version import __version__
from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import ClientsLimit, clients_limit
from riskcalc.linear.dynamics import (RoundsChoice, RoundsLimit, optimal_rounds, rounds_limit,
                                      rounds_to_eps)
from riskcalc.linear.steps.limits import optimal_steps, spec_steps_limit, steps_limit
from riskcalc.linear.limits import ROUTES, LimitResult, limit, spec_limit
from riskcalc.linear.methods import (METHODS, Method, get_method, register_method,
                                     unregister_method)
from riskcalc.linear.model import ClientSpec
from riskcalc.logistic import (FiniteLogisticResult, LogisticClientsResult, LogisticResult,
                               fedavg_centre_scale, logistic_clients_limit, logistic_lam_path,
                               logistic_limit, mle_threshold, optimal_lambda_logistic)
from riskcalc.spectrum import Spectrum
from riskcalc.linear.tuning import optimal_lambda, optimal_limit
# Last: advise builds on the limits above (riskcalc.Federation.from_file reads a federation file).
from riskcalc.advise.federation import Federation

__all__ = [
    "ClientSpec", "ClientsLimit", "Federation", "FiniteLogisticResult", "LimitResult",
    "LogisticClientsResult", "LogisticResult", "METHODS", "Method", "ROUTES",
    "SolverError", "Spectrum", "clients_limit", "fedavg_centre_scale", "get_method", "limit",
    "logistic_clients_limit", "logistic_lam_path", "logistic_limit", "mle_threshold",
    "optimal_lambda", "optimal_lambda_logistic", "optimal_limit", "optimal_rounds",
    "optimal_steps", "register_method", "RoundsChoice", "RoundsLimit", "rounds_limit",
    "rounds_to_eps",
    "show_versions", "spec_limit", "spec_steps_limit", "steps_limit", "unregister_method",
]
