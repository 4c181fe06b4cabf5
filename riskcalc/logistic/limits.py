"""The public entry of the logistic family: ``logistic_limit`` dispatches to the one-point
fixed point (``fixed_point``), the broadcast grid (``grid``) and the finite-M pipeline
(``finite_clients``). It sits above the three so that none of them imports another back.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from riskcalc._validate import as_array, parameter, real

from riskcalc.logistic.finite_clients import canonical_method, finite_logistic_limit
from riskcalc.logistic.path import check_path, lam_path
from riskcalc.logistic.grid import grid_limit
from riskcalc.logistic.ranges import check_gamma
from riskcalc.logistic.work import MAX_SECONDS, check_max_seconds

#: The methods ``logistic_limit`` takes without clients: RTFA toward a deterministic centre, and
#: local ridge (centre 0, whose limits do not depend on the federation).
UNFEDERATED = ("rtfa", "local_ridge")


def logistic_limit(*, gamma, signal, r, lam=None, centre: str = "oracle", clients=None,
                   global_lam=None, weights: str = "samples", method: str = "rtfa",
                   spectrum=None, max_seconds=MAX_SECONDS):
    """Limits of ridge-to-the-centre logistic regression (RTFA with the logistic loss).

    The CGMT fixed point derived in the module docstring (after Salehi, Abbasi & Hassibi,
    NeurIPS 2019, and Sur & Candes, PNAS 2019, eq. 5, extended to a non-zero centre).
    Array arguments broadcast (numpy rules) and the grid is solved together
    (``riskcalc.logistic.broadcast``); the result's fields are then arrays of the broadcast
    shape.

    Parameters
    ----------
    gamma : float or array_like
        d / n, > 0.
    signal : float or array_like
        ``S = ||w_0||``, the norm of the centre, >= 0 (``0``: plain local ridge).
    r : float or array_like
        ``||w_i - w_0||``, >= 0.
    lam : float or array_like
        Ridge penalty toward the centre, >= 0 (``0``: the MLE, when it exists).
    centre : {"oracle", "fedavg"}
        ``c = w_0`` (default), or FedAvg's logistic global model over infinitely many clients,
        ``c = alpha w_0`` (``riskcalc.logistic.fedavg``); the derivation holds for any
        multiple of ``w_0`` with ``c_e``, ``C`` scaled by it.
    clients, global_lam, weights, method : optional
        With ``clients = M``: the centre is FedAvg's global model fitted on M identical
        clients' data (the target's included) with ridge ``global_lam`` and ``weights``, and
        ``method`` is ``"rtfa"``, ``"fedavg"`` (no lam) or ``"local_ridge"``
        (``riskcalc.logistic.finite_clients.finite_logistic_limit``; ``centre`` not taken).
        Without clients, ``method`` is ``"rtfa"`` or ``"local_ridge"``: ridge toward 0 on the
        client's own data, whose limits depend on ``w_i = w_0 + r u`` only through
        ``||w_i|| = sqrt(signal^2 + r^2)`` (``w_0`` and ``u`` are isotropic and independent,
        and so is ``w_i``, with or without a spectrum): RTFA's fixed point at signal 0 and
        that norm, the same for any number of clients (``centre`` not taken: it is 0).
        Array arguments (``clients`` and ``global_lam`` too) broadcast as above and are solved
        along the grid with warm starts (``riskcalc.logistic.finite_clients.grid``; Sigma = I).
    spectrum : Spectrum, optional
        Features ``x ~ N(0, Sigma)`` with this eigenvalue distribution (None: ``Sigma = I``);
        ``w_0`` and ``u`` isotropic in the original coordinates. The fixed point of
        ``riskcalc.logistic.spectrum.fixed_point`` (derived there); ``risk`` stays ``||w_hat - w_i||^2``,
        ``sigma_risk`` is ``(w_hat - w_i)' Sigma (w_hat - w_i)``, the test error and log-loss
        are under ``x ~ N(0, Sigma)``. Both centres; with ``clients``, the methods
        ``riskcalc.logistic_clients_limit`` supports with a spectrum.

    max_seconds : float or None
        Limit on the estimated work, checked before solving (``riskcalc.logistic.work``: large
        signal norms need Gauss-Legendre panels, whose count grows with the norm); beyond it a
        ValueError says what brings it under. None: no limit. Sigma = I.

    Returns
    -------
    LogisticResult, or FiniteLogisticResult with ``clients``

    Raises
    ------
    ValueError
        A parameter out of range, ``lam = 0`` beyond the MLE existence transition, or an
        estimated work beyond ``max_seconds``.
    SolverError
        The fixed point did not converge, or the quadrature check failed.
    """
    max_seconds = check_max_seconds(max_seconds)
    if clients is not None:
        if centre != "oracle":
            raise ValueError("centre is not taken with clients: the centre is the global "
                             "model of the M clients")
        return finite_logistic_limit(gamma=gamma, signal=signal, r=r, lam=lam, clients=clients,
                                     global_lam=global_lam, weights=weights, method=method,
                                     spectrum=spectrum, max_seconds=max_seconds)
    method = canonical_method(method)
    for name, value in (("gamma", gamma), ("signal", signal), ("r", r), ("lam", lam)):
        # An empty array was "not enough values to unpack" (an empty result under a
        # spectrum), a ragged list numpy's message naming no parameter.
        if value is not None and real(name, value).size == 0:
            raise ValueError(f"{name} must be a number or a non-empty array of numbers, got an "
                             "empty array")
    if global_lam is not None or method not in UNFEDERATED or weights != "samples":
        raise ValueError("global_lam, weights and a method other than rtfa or local_ridge need "
                         "clients (the number of clients of the global model)")
    if method == "local_ridge":
        return _local_ridge(gamma, signal, r, lam, centre, spectrum, max_seconds)
    if lam is None:
        raise ValueError("lam (the ridge penalty toward the centre, >= 0) is required")
    if spectrum is not None:
        from riskcalc.logistic.spectrum.limits import spectrum_grid

        return spectrum_grid(gamma, signal, r, lam, spectrum, centre, max_seconds)
    if all(np.ndim(v) == 0 for v in (gamma, signal, r, lam)):
        what = None
        if max_seconds is not None:     # its estimate (``path.check_path``) named as a point
            signal_, r_ = float(parameter("signal", signal)), float(parameter("r", r))
            check_gamma(real("gamma", gamma, ndim=0))
            as_array("lam", lam, low=0.0)
            what = f"the logistic limit at signal = {signal_:g}, r = {r_:g}"
        return lam_path(gamma, signal, r, [lam], centre, max_seconds, what)[0]
    return grid_limit(gamma, signal, r, lam, centre, max_seconds)


def _local_ridge(gamma, signal, r, lam, centre, spectrum, max_seconds):
    """Local ridge logistic regression toward 0 without clients (``logistic_limit``'s
    docstring): RTFA's limit at signal 0 and ``r = ||w_i||``, with the asked parameters."""
    if centre != "oracle":
        raise ValueError("centre is not taken by local_ridge: its centre is 0")
    signal, r = parameter("signal", signal), parameter("r", r)
    norm = np.hypot(signal, r)
    if max_seconds is not None and spectrum is None and lam is not None \
            and np.ndim(norm) == 0 and np.ndim(lam) == 0:
        # Refused here to name the asked parameters (the reduction's own names signal 0).
        check_path(float(np.max(as_array("gamma", gamma, low=0.0, low_open=True))), 0.0,
                   float(norm), as_array("lam", lam, low=0.0).reshape(1), max_seconds,
                   f"local ridge at ||w_i|| = {float(norm):g} (signal {float(signal):g}, "
                   f"r {float(r):g})")
    res = logistic_limit(gamma=gamma, signal=0.0, r=norm, lam=lam, spectrum=spectrum,
                         max_seconds=max_seconds)
    shape = np.shape(res.risk)
    params = {**res.params, "signal": np.broadcast_to(signal, shape).astype(float),
              "r": np.broadcast_to(r, shape).astype(float)}
    if not shape:
        params.update(signal=float(signal), r=float(r))
    return replace(res, params=params, method="local_ridge")
