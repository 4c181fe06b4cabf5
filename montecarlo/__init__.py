"""montecarlo: finite-size simulations measuring what ``riskcalc`` predicts.

``montecarlo.compare(method, gamma=..., sigma=..., d=..., reps=...)`` compares a method's
limit with its simulation (``montecarlo.compare.compare_method``; the module is callable).

The extension points for a method defined outside the package are ``register_estimator`` (its
finite-sample estimator, next to ``riskcalc.register_method`` for its limit) and
``check_method`` (the registry's common checks, ``montecarlo.registry_checks``, imported on
first use: it needs the whole simulation stack).
"""

from montecarlo.linear.estimators import (ESTIMATORS, Estimator, guard_estimator,
                                          register_estimator, unregister_estimator)
from riskcalc.plugins import add_registry, load_from_env

__all__ = ["ESTIMATORS", "Estimator", "check_method", "compare", "register_estimator",
           "unregister_estimator"]


def __getattr__(name):
    if name == "compare":
        # Imported on first use (it needs the whole simulation stack); importing the
        # submodule binds it as this package's attribute, so this runs once.
        import montecarlo.compare
        return montecarlo.compare
    if name == "check_method":
        from montecarlo.registry_checks import check_method
        return check_method
    raise AttributeError(f"module 'montecarlo' has no attribute {name!r}")


# Estimators registered by a plugin run behind the plugin boundary (riskcalc.plugins).
add_registry(ESTIMATORS, guard_estimator)
# Worker processes of a command run with plugins (riskcalc --plugin, --jobs N) load them too.
load_from_env()
