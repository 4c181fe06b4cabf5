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

# The other public names are imported on first use (PEP 562 ``__getattr__``): ``import
# riskcalc`` then loads no numpy, logistic or rounds code, and a command pays only for the
# modules it runs (measured: ``import riskcalc`` 0.20 s of CPU before, 0.05 s now, of which
# 0.04 s is Python's own start). ``riskcalc.X`` and ``from riskcalc import X`` work as before;
# a subpackage (``riskcalc.linear``) is an attribute once imported, as in any package.
_LAZY = {
    "riskcalc.linear.finite_clients": ("ClientsLimit", "clients_limit"),
    "riskcalc.linear.dynamics": ("RoundsChoice", "RoundsLimit", "optimal_rounds", "rounds_limit",
                                 "rounds_to_eps"),
    "riskcalc.linear.steps.limits": ("spec_steps_limit", "steps_limit"),
    "riskcalc.linear.steps.optimal": ("optimal_steps",),
    "riskcalc.linear.limits": ("ROUTES", "LimitResult", "limit", "spec_limit"),
    "riskcalc.linear.methods": ("METHODS", "Method", "get_method", "register_method",
                                "unregister_method"),
    "riskcalc.linear.model": ("ClientSpec",),
    "riskcalc.logistic": ("FiniteLogisticResult", "LogisticClientsResult", "LogisticResult",
                          "fedavg_centre_scale", "logistic_clients_limit", "logistic_lam_path",
                          "logistic_limit", "mle_threshold", "optimal_lambda_logistic"),
    "riskcalc.spectrum": ("Spectrum",),
    "riskcalc.linear.tuning": ("optimal_lambda", "optimal_limit"),
    "riskcalc.advise.federation": ("Federation",),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}

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


def __getattr__(name):
    """The public name ``name``, imported from its module on first use (then cached here)."""
    import importlib

    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'riskcalc' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
