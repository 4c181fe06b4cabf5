"""montecarlo: finite-size simulations measuring what ``riskcalc`` predicts.

The extension points for a method defined outside the package are ``register_estimator`` (its
finite-sample estimator, next to ``riskcalc.register_method`` for its limit) and
``check_method`` (the registry's common checks).
"""

from montecarlo.check_method import check_method
from montecarlo.estimators import (ESTIMATORS, Estimator, register_estimator,
                                   unregister_estimator)

__all__ = ["ESTIMATORS", "Estimator", "check_method", "register_estimator",
           "unregister_estimator"]

# Worker processes of a command run with plugins (riskcalc --plugin, --jobs N) load them too.
from riskcalc.plugins import load_from_env  # noqa: E402

load_from_env()
