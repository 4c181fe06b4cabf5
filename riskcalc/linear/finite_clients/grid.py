"""``limit(spec, clients=M)``: a finite federation of ``M`` clients that all share the spec's
parameters, broadcast over array parameters and ``clients`` (paper 003's finite-M limits,
``riskcalc.linear.finite_clients``)."""

from __future__ import annotations

import numpy as np

from riskcalc._validate import integers, positive_int, real
from riskcalc.linear.client_weights import check_weights
from riskcalc.linear.finite_clients import _limits, check_method
from riskcalc.linear.model import broadcast_shape


def check_clients(clients):
    """``limit``'s ``clients``: an int >= 1, or an array of them as a nested list (as
    ``ClientSpec.params`` gives arrays), broadcast as ``logistic_limit``'s (fuzz39 api F4)."""
    try:
        scalar = np.ndim(clients) == 0
    except ValueError:      # a ragged list: named by ``real``
        scalar = False
    if scalar:
        return positive_int("clients", clients)
    real("clients", clients)
    return integers("clients", clients, minimum=1).astype(int).tolist()


def spec_clients_limit(spec, clients, weights: str = "samples"):
    """Bias and variance of ``spec``'s client in a federation of ``clients`` clients that all
    share its parameters (the target among them), broadcast over array parameters and
    ``clients`` (fuzz39 api F4); and the notes of the routes taken (``own_limits``' fallback,
    which ``limit(clients=M)`` dropped; fuzz39 api F1).

    Raises
    ------
    ValueError
        For a method without a finite-M limit, clients not integers >= 1 (``check_clients``),
        or pooled N <= d.
    """
    clients = check_clients(clients)
    weights = check_weights(weights)
    check_method(spec.method)
    tuning = getattr(spec, spec.info.tuning) if spec.info.tuning else np.zeros(())
    values = (spec.gamma, spec.signal, spec.sigma, tuning, clients)
    shape = broadcast_shape({"gamma": spec.gamma, "r": spec.signal, "sigma": spec.sigma,
                             spec.info.tuning or "tuning": tuning, "clients": clients})
    args = [np.broadcast_to(v, shape).ravel() for v in values]
    bias, var = np.empty(args[0].size), np.empty(args[0].size)
    said = {}
    names = ("gamma", "r", "sigma", spec.info.tuning or "tuning", "clients")
    for k, (gm, rr, sg, tn, m) in enumerate(zip(*args)):
        try:
            b, v, route_notes = _limits(spec.method, [gm], [rr], [sg], [int(m)], [tn],
                                        weights, spec.spectrum)
        except ValueError as exc:
            if shape == ():
                raise
            # A grid's refusal named no point (gamma [[2], [3]], clients [3, 10]: which of the
            # four was pooled N <= d?) (fuzz41 api F1).
            point = ", ".join(f"{n} = {x:g}" for n, x, given in zip(
                names, (gm, rr, sg, tn, m), values) if np.ndim(given) > 0)
            raise ValueError(f"at {point}: {exc}") from None
        bias[k], var[k] = b[0], v[0]
        said.update(dict.fromkeys(route_notes))
    return bias.reshape(shape), var.reshape(shape), tuple(said)
