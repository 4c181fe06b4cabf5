"""A method from outside the package: fine-tuned FedAvg shrunk toward the global model.

theta_hat = argmin ||theta - theta_FTFA||^2 + lam ||theta - theta_0||^2
          = theta_0 + w (theta_FTFA - theta_0),   w = 1 / (1 + lam),

where theta_FTFA is the min-norm interpolant closest to the global model theta_0 (paper 003,
``003_4b976ddf5225c17e.txt``, eq. 7): lam = 0 is FTFA, lam -> infinity FedAvg (eq. 6).
Loading this file registers the method on both sides (``riskcalc --plugin shrunk_ftfa.py``).

Limit (derivation in docs/extending.rst). With P the projection onto the row space of the
client's design X, delta = theta_i - theta_0 (norm r, uniform direction) and xi the noise,
theta_FTFA - theta_0 = P delta + X^+ xi, so the error is -(I - w P) delta + w X^+ xi and

    B_w = (r^2/d) tr[(I - wP) Sigma (I - wP)] = (r^2/d) (tr Sigma - (2w - w^2) tr(P Sigma))
        = (1 - w)^2 B_FedAvg + w (2 - w) B_FTFA,
    V_w = w^2 V_FTFA,

(tr(P Sigma P) = tr(P Sigma) for a projection), which in the limit are the same combinations of
the limits of Cor. 3.1 (FedAvg) and Thm 1 (FTFA, any spectrum: Sec. 6.3).
"""

import numpy as np

import riskcalc
from montecarlo.linear.estimators import Estimator, fedavg_weight, register_estimator


def shrink(lam):
    """w = 1 / (1 + lam): the share of the FTFA step that is kept."""
    return 1.0 / (1.0 + np.asarray(lam, dtype=float))


def limit(spec, route):
    """(bias, variance) of shrunk FTFA: the combination above of the FedAvg and FTFA limits."""
    sp = spec.spectrum
    if sp is not None and not sp.signal_is_uniform:
        raise ValueError("shrunk_ftfa's limit needs theta in a uniform direction "
                         "(spectrum signal weights equal to its weights)")
    common = {"gamma": spec.gamma, "sigma": spec.sigma, "r": spec.r, "spectrum": sp}
    fedavg = riskcalc.limit("fedavg", **common)
    ftfa = riskcalc.limit("ftfa", route=route, **common)
    w = shrink(spec.lam)
    bias = (1 - w) ** 2 * fedavg.bias + w * (2 - w) * ftfa.bias
    variance = w ** 2 * ftfa.variance
    shape = np.broadcast_shapes(*(np.shape(v) for v in (spec.gamma, spec.sigma, spec.r,
                                                         spec.lam)))
    return np.broadcast_to(bias, shape), np.broadcast_to(variance, shape)


def personal_filter(mu, lam):
    """f(mu) = w: the personalization keeps the share w of every data direction."""
    return np.full_like(mu, shrink(lam))


METHOD = riskcalc.Method(
    name="shrunk_ftfa", title="FTFA shrunk toward the global model", signal="r", tuning="lam",
    personalized=True, reference="docs/examples/shrunk_ftfa.py (after paper 003, Thm 1, "
    "Cor. 3.1)", limit=limit)
ESTIMATOR = Estimator(
    name="shrunk_ftfa", global_weight=fedavg_weight, global_tuned=False, personalized=True,
    ridge=False, centered=True, reference="docs/examples/shrunk_ftfa.py",
    personal_filter=personal_filter)

riskcalc.register_method(METHOD)
register_estimator(ESTIMATOR)
