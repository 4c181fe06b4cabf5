"""Existence of the logistic MLE: the Candes-Sur phase transition.

Candes & Sur, *The phase transition for the existence of the maximum likelihood estimate in
high-dimensional logistic regression* (Ann. Statist. 2020, Thm 1; used by Sur & Candes, PNAS
2019): with x ~ N(0, I_d), no intercept and signal strength ``kappa = ||w||``, the data are
separable (no finite MLE) with probability -> 1 when ``gamma = d/n > h(kappa)`` and the MLE
exists with probability -> 1 when ``gamma < h(kappa)``, where

    h(kappa) = min_t E[(Z - t Y V)_+^2],   Z, V ~ N(0, 1) independent,
    P(Y = 1 | V) = sigmoid(kappa V).

Re-derived form used here: ``E[(Z - m)_+^2] = (1 + m^2) Phi(-m) - m phi(m) =: psi(m)``, and the
label symmetry gives ``h = min_t E[2 sigmoid(kappa V) psi(t V)]``, a 1-d Gaussian integral
minimized over t (convex in t). ``h(0) = 1/2`` (Cover 1965) and ``h -> 0`` as ``kappa -> inf``.
"""

from __future__ import annotations

import math

import numpy as np

from riskcalc._validate import as_array
from riskcalc.logistic.engine.gaussian import label_rule
from riskcalc.logistic.engine.prox import sigmoid


def _psi(m):
    from scipy.special import ndtr

    return (1.0 + m * m) * ndtr(-m) - m * np.exp(-0.5 * m * m) / math.sqrt(2.0 * math.pi)


def mle_threshold(kappa) -> float:
    """``h(kappa)``: the largest ``gamma = d/n`` at which the logistic MLE exists (module doc).

    Parameters
    ----------
    kappa : float
        Signal strength ``||w_i||`` (the standard deviation of the true margin), >= 0: one
        number (an array is refused naming ``kappa``; ``numpy.vectorize`` maps it).

    Returns
    -------
    float
        h(kappa) (1/2 at kappa = 0, Cover's threshold; decreasing in kappa): the MLE exists,
        in the limit, exactly when gamma < h(kappa).
    """
    from scipy.optimize import minimize_scalar

    kappa = float(as_array("kappa", kappa, low=0.0, ndim=0))
    v, w = label_rule(kappa)
    weight = 2.0 * sigmoid(kappa * v) * w

    def objective(t):
        return float(np.sum(weight * _psi(t * v)))

    # d/dt at t = 0 is -2 phi(0)... < 0 for kappa > 0, so the minimizer is t >= 0; the objective
    # grows like t^2 E[(YV)_-^2] for large t. The minimizer grows like 0.379 kappa (mpmath at
    # kappa = 100, 1000): a bracket fixed at [0, 50] returned its edge's value beyond kappa ~
    # 132, h(1000) = 0.0043 for 0.0010153 (1.0153 / kappa as kappa -> inf).
    at_zero = objective(0.0)
    if v.size > FEW_NODES:
        res = _narrow(v, weight, kappa)
        if res is not None:
            return min(res, at_zero)
    res = minimize_scalar(objective, bounds=(0.0, max(50.0, kappa)), method="bounded",
                          options={"xatol": 1e-12})
    return min(float(res.fun), at_zero)


#: Rules beyond this many nodes (kappa above ~1000) are searched on the nodes that matter:
#: the ~1e7 nodes at kappa = 1e5 took 11 s over the search's ~16 evaluations.
FEW_NODES = 50_000


def _narrow(v, weight, kappa):
    """The minimum over t in [kappa / 4, kappa / 2] (it lies near 0.3786 kappa), on the nodes
    whose bound ``weight * max(psi(kappa v / 4), psi(kappa v / 2))`` (psi is decreasing, so
    each node's term is largest at one end for every t between) is not negligible: the nodes
    dropped add at most 1e-15 of the bounds' sum to any t's objective. None when the minimum
    falls at an end of the bracket (the full search then answers)."""
    from scipy.optimize import minimize_scalar

    lo, hi = 0.25 * kappa, 0.5 * kappa
    bound = weight * np.maximum(_psi(lo * v), _psi(hi * v))
    keep = bound >= 1e-15 * bound.sum() / bound.size
    v, weight = v[keep], weight[keep]
    res = minimize_scalar(lambda t: float(np.sum(weight * _psi(t * v))), bounds=(lo, hi),
                          method="bounded", options={"xatol": 1e-12 * kappa})
    return float(res.fun) if lo * (1 + 1e-6) < res.x < hi * (1 - 1e-6) else None
