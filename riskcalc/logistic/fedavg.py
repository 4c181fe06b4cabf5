"""The FedAvg logistic global model as the centre, in the limit of infinitely many clients.

With clients ``w_j = w_0 + r u_j`` (``u_j`` uniform, orthogonal to ``w_0`` in the limit), equal
weights and ``M -> inf`` clients, FedAvg's global objective (paper 000 eqs. 2 and 8: the
average of the clients' empirical logistic risks) converges to the population risk of the
mixture, whose minimizer is ``w_g = alpha w_0`` (the orthogonal parts average out, since
``||mean_j u_j|| ~ M^(-1/2)``). Along ``w_0`` the gradient vanishes when
``E[(sigmoid(S z0 + r z1) - sigmoid(alpha S z0)) z0] = 0``, i.e. by Stein's lemma

    alpha E[sigmoid'(alpha S Z)] = E[sigmoid'(kappa Z)],   kappa = sqrt(S^2 + r^2),

whose left side increases in ``alpha`` from 0 and exceeds the right side at ``alpha = 1``:
the global model is attenuated, ``0 < alpha < 1`` for ``r > 0`` (``alpha = 1`` at ``r = 0``).
A re-derivation for this toolkit; finite ``M`` is not covered.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array
from riskcalc.logistic.engine.gaussian import label_rule
from riskcalc.logistic.engine.prox import sigmoid


def fedavg_centre_scale(signal, r) -> float:
    """``alpha`` with ``w_g = alpha w_0`` (module docstring); 1 when ``signal = 0`` or ``r = 0``.

    Parameters
    ----------
    signal, r : float
        ``||w_0||`` and ``||w_i - w_0||``, both >= 0.

    Returns
    -------
    float
        alpha in (0, 1]: FedAvg's logistic global model over infinitely many clients is
        ``alpha w_0``.
    """
    from scipy.optimize import brentq

    signal = float(as_array("signal", signal, low=0.0, ndim=0))
    r = float(as_array("r", r, low=0.0, ndim=0))
    if signal == 0.0 or r == 0.0:
        return 1.0
    z, w = label_rule(float(np.hypot(signal, r)))

    def dsig(t):
        return np.sum(w * sigmoid(t * z) * sigmoid(-t * z))

    target = dsig(np.hypot(signal, r))
    return float(brentq(lambda a: a * dsig(a * signal) - target, 0.0, 1.0, xtol=1e-15,
                        rtol=1e-15))
