"""The exact gradients of a federation's mean risk that ``riskcalc.advise`` hands to the search
for the optimal weights (``weights.optimize``): in the weights p and in the log tuning, Sigma = I
(``riskcalc.linear.finite_clients.gradient``) and under covariate shift
(``finite_clients.shift.gradient``, ``finite_clients.subordination_gradient``); under a shared
covariance spectrum there is none, and the search takes finite differences.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.finite_clients.gradient import mean_risk_gradient
from riskcalc.linear.finite_clients.shift.gradient import shift_mean_risk_gradient
from riskcalc.linear.finite_clients.subordination_gradient import (
    maml_shift_mean_risk_gradient, pfedme_shift_mean_risk_gradient)

#: Pipelines whose optimal weights under covariate shift have exact gradients in the weights
#: (the others: finite differences).
SHIFT_GRADIENT = ("fedavg", "ftfa", "rtfa", "pfedme", "maml_fl")
#: Their gradients with a shared tuning (MAML-FL's alpha, pFedMe's lam) under shift.
SHARED_SHIFT_GRADIENT = {"pfedme": pfedme_shift_mean_risk_gradient,
                         "maml_fl": maml_shift_mean_risk_gradient}


def exact_gradient(method, fed):
    """(p, extra) -> (mean risk, its gradient in p and in extra), extra the log tuning
    (``riskcalc.linear.finite_clients.gradient``, Sigma = I; under covariate shift FedAvg,
    FTFA and RTFA, ``riskcalc.linear.finite_clients.shift.gradient``, pFedMe and MAML-FL
    ``finite_clients.subordination_gradient``), or None (finite
    differences: a covariance spectrum)."""
    if fed.shift and method in SHIFT_GRADIENT and method in SHARED_SHIFT_GRADIENT:
        def shared_gradient(p, extra):
            value = float(np.exp(extra[0]))
            mean, grad_p, grad_t = SHARED_SHIFT_GRADIENT[method](weights=p, tuning=value,
                                                                 **fed.limit_kwargs())
            # d / d log(tuning) = tuning d / d tuning.
            return mean, grad_p, [grad_t * value]

        return shared_gradient
    if fed.shift and method in SHIFT_GRADIENT:
        def shift_gradient(p, extra):
            lam = np.exp(extra) if method == "rtfa" else None
            mean, grad_p, grad_lam = shift_mean_risk_gradient(method, weights=p, tuning=lam,
                                                              **fed.limit_kwargs())
            # d / d log(lam) = lam d / d lam.
            return mean, grad_p, ([] if lam is None else grad_lam * lam)

        return shift_gradient
    if fed.shift or fed.spectrum is not None:
        return None

    def gradient(p, extra):
        tuning = None if method in ("fedavg", "ftfa") else np.exp(extra)
        if method in ("maml_fl", "pfedme"):
            tuning = float(tuning[0])
        mean, grad_p, grad_t = mean_risk_gradient(method, gamma=fed.gamma, sigma=fed.sigma,
                                                  r=fed.r, weights=p, tuning=tuning)
        # d / d log(tuning) = tuning d / d tuning.
        return mean, grad_p, ([] if grad_t is None else np.atleast_1d(grad_t * tuning))

    return gradient
