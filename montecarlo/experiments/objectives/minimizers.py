"""Exact minimizers of the federated objectives of the papers (the losses:
``montecarlo.experiments.objectives.losses``).

The exact minimizers use damped Newton steps (an independent route from the papers' first-order
algorithms, which the tests compare against them). FedProx is solved in its bilevel form
(paper 004 eq. 8): Newton on the Moreau envelope ``F(w_g)``, whose gradient is
``lam (w_g - prox(w_g))`` (paper 004 Lemma 3) and whose Hessian is ``lam H (H + lam I)^-1`` with
``H`` the Hessian of ``f_i`` at the prox point, each prox again by Newton (for the squared
loss, one linear solve: :func:`prox`).
"""

from __future__ import annotations

import numpy as np

from montecarlo.experiments.newton import damped_newton
from montecarlo.experiments.objectives.losses import (ClientLosses, _broadcast_global,
                                                      _check_objective, _derivatives)
from montecarlo.experiments.separability import separable
from riskcalc._validate import as_array
from riskcalc.errors import SolverError


def prox(losses: ClientLosses, V, lam: float, W0=None, *, tol: float = 1e-10):
    """``prox_{f_i/lam}(v_i) = argmin_w f_i(w) + lam/2 ||w - v_i||^2`` for every client.

    Paper 004 eq. 9 / paper 001 eq. 6 (the local proximal oracle). ``V`` has shape (..., m, d).
    For the squared loss the prox is the solution of the linear system
    ``(X_i'X_i/n + (l2 + lam) I) w = X_i'y_i/n + lam v_i`` (its stationarity condition), solved
    in the eigenbasis of ``X_i'X_i/n`` computed once per instance
    (:meth:`ClientLosses.normal_equations`): exact up to rounding, ``W0`` and ``tol`` unused.
    Otherwise damped Newton from the warm start ``W0``, to gradient tolerance
    ``max(tol, 1e-15 lam max(1, the largest abs(v_i) entry))``: the gradient carries the term
    ``lam (w - v)``, whose rounding error grows with ``lam`` and with the scale of ``v`` (an
    absolute ``1e-15 lam`` failed every fit around a centre of norm 1e4 at lam = 1000).

    Returns
    -------
    ndarray, shape (..., m, d)
    """
    # ndim=0 and a checked tol: a list lam was float()'s TypeError, tol = 0 Newton's failure
    # blaming 'l2 = 0 separable data' (fuzz41 sim2 F4).
    lam = float(as_array("lam", lam, low=0.0, low_open=True, ndim=0))
    tol = float(as_array("tol", tol, low=0.0, low_open=True, ndim=0))
    return _prox(losses, np.asarray(V, float), lam, W0, tol, _derivatives(losses))


def _prox(losses, V, lam, W0, tol, derivatives):
    """:func:`prox` after its checks, on ``derivatives`` (:func:`_derivatives`): a FedProx
    minimizer passes one to all its solves, whose warm starts and envelope reuse the answers'
    points (quick 000.thm11: logaddexp on 28% fewer elements, expit on 46% fewer)."""
    if losses.loss == "squared":
        s, Q, b = losses.normal_equations()
        rhs = (np.swapaxes(Q, -1, -2) @ (b + lam * V)[..., None])[..., 0]
        return (Q @ (rhs / (s + losses.l2 + lam))[..., None])[..., 0]
    shape = np.broadcast_shapes(losses.batch_shape + (losses.m, losses.d), V.shape)
    W0 = V if W0 is None else W0
    value, grad, hess = derivatives
    return damped_newton(lambda W: value(W) + 0.5 * lam * np.sum((W - V) ** 2, -1),
                         lambda W: grad(W) + lam * (W - V),
                         lambda W: hess(W) + lam * np.eye(losses.d),
                         np.broadcast_to(W0, shape).copy(),
                         max(tol, 1e-15 * lam * max(1.0, float(np.max(np.abs(V), initial=0.0)))),
                         "prox")


def minimize(losses: ClientLosses, objective: str, lam: float = 0.0, *, tol: float = 1e-10):
    """Exact minimizer of a federated objective, to gradient norm ``tol``.

    Parameters
    ----------
    losses : ClientLosses
    objective : {"local", "global", "fedprox"}
        See the module docstring (paper 000 eqs. 2, 3, 20; paper 004 eq. 1; paper 001 eq. 2).
    lam : float
        FedProx coupling, in [0, inf]. ``lam = 0`` returns the local minimizers with their mean
        as global model (the lam -> 0 limit); ``lam = inf`` returns the global minimizer for
        every client (the lam -> inf limit, paper 000 Sec. 3.4).
    tol : float
        Newton stops when every gradient (sup-norm) is below ``tol`` (``tol min(1, lam)`` for
        FedProx's envelope gradient ``lam (w_g - prox(w_g))``); for the squared loss ``tol``
        is relative to the gradient's scale at the start 0, the largest entry of ``X'y/n``
        when above 1 (the labels' scale: an absolute 1e-10 failed from R ~ 1e7 in
        paper001-fig2).

    Returns
    -------
    w_global : ndarray, shape (..., d)
    W : ndarray, shape (..., m, d)
        The personalized models (``w_global`` repeated for ``"global"``).

    Raises
    ------
    SolverError
        When Newton does not converge, typically because ``l2 = 0`` and some client's data
        are separable (no finite minimizer exists).
    """
    objective = _check_objective(objective)
    lam = float(as_array("lam", lam, low=0.0, allow_inf=True, ndim=0))
    tol = float(as_array("tol", tol, low=0.0, low_open=True, ndim=0))
    if losses.loss == "squared":
        # Relative to the data's scale (fuzz42 sim F3: R = 1e7 was refused, the gradient's
        # rounding ~1e-16 X'y/n above the absolute tolerance).
        tol *= max(1.0, float(np.max(np.abs(losses.normal_equations()[2]), initial=0.0)))
    _require_finite_minimizer(losses, pooled=objective == "global"
                              or (objective == "fedprox" and lam > 0.0))
    shape = losses.batch_shape + (losses.m, losses.d)
    if objective == "global" or (objective == "fedprox" and np.isinf(lam)):
        value, grad, hess = _derivatives(losses, lambda w: _broadcast_global(w, losses))
        w = damped_newton(lambda w: value(w).mean(-1), lambda w: grad(w).mean(-2),
                          lambda w: hess(w).mean(-3), np.zeros(losses.batch_shape + (losses.d,)),
                          tol, "global minimizer")
        return w, np.broadcast_to(w[..., None, :], shape).copy()
    if objective == "local" or lam == 0.0:
        W = damped_newton(*_derivatives(losses), np.zeros(shape), tol, "local minimizer")
        return W.mean(-2), W
    if lam < LAM_FIXED_POINT:
        return _fedprox_fixed_point(losses, lam, tol)
    # The envelope gradient lam (w_g - mean prox) has no rounding growing with lam
    # (_minimize_fedprox), and below lam = 1 it is held to tol lam, so that w_g - mean prox is
    # below tol, the proxes still to tol (at lam 1e-12 a gradient below 1e-10 left w_g at its
    # start 0, 0.9 from the mean of the local models: fuzz41 sim F2 for the squared loss, sim2
    # F1 for the logistic one, whose proxes were held to the outer tolerance).
    return _minimize_fedprox(losses, lam, tol * min(1.0, lam), tol * 1e-2)


# Below it the envelope gradient lam (w_g - mean prox) and its tolerance tol lam near the
# subnormal range (2.2e-308) lose their digits (w_g 0.46 off at lam 5e-324): the fixed point
# is taken directly.
LAM_FIXED_POINT = 1e-200


def _fedprox_fixed_point(losses, lam, tol, maxiter=100):
    """FedProx minimizer at ``lam < LAM_FIXED_POINT`` as the fixed point
    ``w_g = mean_i prox_{f_i/lam}(w_g)``: minimizing ``sum_i f_i(w_i) + lam/2 ||w_i - w_g||^2``
    over ``w_g`` gives the mean of the ``w_i`` at any ``lam`` (paper 004 eq. 8), and the map's
    Jacobian ``mean_i lam (H_i + lam I)^-1`` has norm ``lam / (lam + mu)`` with ``mu`` the
    smallest curvature of the ``f_i``: about 1e-200 / mu, so that a step or two settle it."""
    derivatives = _derivatives(losses)
    W = damped_newton(*derivatives, np.zeros(losses.batch_shape + (losses.m, losses.d)),
                      tol * 1e-2, "local minimizer")
    wg = W.mean(-2)
    for _ in range(maxiter):
        W = _prox(losses, np.broadcast_to(wg[..., None, :], W.shape), lam, W, tol * 1e-2,
                  derivatives)
        wg, change = W.mean(-2), np.max(np.abs(W.mean(-2) - wg))
        if change <= tol:
            return wg, W
    raise SolverError(f"FedProx minimizer at lam = {lam:g}: the fixed point w_g = mean prox(w_g) "
                      f"moved {change:.3g} after {maxiter} steps")


def _minimize_fedprox(losses, lam, tol, inner_tol):
    state = {"W": np.zeros(losses.batch_shape + (losses.m, losses.d)), "wg": None}
    derivatives = _derivatives(losses)
    value, _, hessian = derivatives

    def inner(wg):
        # Newton asks for the value, gradient and Hessian at the same point: one prox serves
        # all three.
        if state["wg"] is not None and np.array_equal(wg, state["wg"]):
            return state["W"]
        # The outer gradient error is at most the inner one (times lam / (lam + mu) <= 1).
        state["W"] = _prox(losses, np.broadcast_to(wg[..., None, :], state["W"].shape), lam,
                           state["W"], inner_tol, derivatives)
        state["wg"] = np.array(wg)
        return state["W"]

    def gap(wg):
        # w_g - prox_i(w_g); for the squared loss, whose prox is exact, as (S_i + l2 + lam)^-1
        # grad f_i(w_g) in the eigenbasis of S_i = X_i'X_i/n: the difference's rounding of order
        # 1e-16 w_g, times lam in the gradient, needed a tolerance 1e-14 lam that stopped
        # Newton at its start 0 from lam ~ 1e16 (an error of 1e-8 at lam 1e8; fuzz41 sim F1).
        if losses.loss != "squared":
            # From lam = 1, grad f_i(prox_i) / lam (equal at the prox, and without the rounding
            # of order 1e-16 w_g of the difference: 0.017 off at lam 1e12, w_g = 0 from 1e16).
            W = inner(wg)
            return derivatives[1](W) / lam if lam >= 1 else wg[..., None, :] - W
        s, Q, _ = losses.normal_equations()
        g = derivatives[1](np.broadcast_to(wg[..., None, :], state["W"].shape))
        c = (np.swapaxes(Q, -1, -2) @ g[..., None])[..., 0] / (s + losses.l2 + lam)
        return (Q @ c[..., None])[..., 0]

    def envelope(wg):
        return (value(inner(wg)) + 0.5 * lam * np.sum(gap(wg) ** 2, -1)).mean(-1)

    def grad(wg):
        return lam * gap(wg).mean(-2)

    def hess(wg):
        H = hessian(inner(wg))
        eye = np.eye(losses.d)
        # lam I - lam^2 (H + lam I)^-1 written as lam H (H + lam I)^-1: no cancellation at
        # large lam, where the envelope Hessian tends to H.
        return (lam * np.linalg.solve(H + lam * eye, H)).mean(-3)

    # The squared loss has no separable data (R = 1e8 in paper001-fig2 blamed l2 and separable
    # data; fuzz41 sim F10); with its tolerance relative to X'y/n, what is left is rounding.
    hint = None if losses.loss != "squared" else (
        f"the squared loss's gradient cannot get below {tol:g}, relative to its data's scale "
        f"X'y/n up to {np.max(np.abs(losses.normal_equations()[2])):.3g}: its Hessians are "
        "too ill-conditioned for float64 (L/mu of the quadratic instances)")
    wg = damped_newton(envelope, grad, hess, np.zeros(losses.batch_shape + (losses.d,)), tol,
                       "FedProx minimizer", hint=hint)
    return wg, inner(wg)


def _require_finite_minimizer(losses, pooled: bool):
    """Raise SolverError when ``l2 = 0`` and some logistic problem has no finite minimizer:
    a client's own data (``pooled=False``: local training, FedProx at lam = 0) or every
    client's data together (``pooled=True``: the global objective, and FedProx at lam > 0,
    whose recession directions must move every w_i with w_g, else the coupling penalty grows
    quadratically)."""
    if losses.loss != "logistic" or losses.l2 > 0:
        return
    X = np.broadcast_to(losses.X, losses.batch_shape + losses.X.shape[-3:])
    y = np.broadcast_to(losses.y, losses.batch_shape + losses.y.shape[-2:])
    for idx in np.ndindex(*losses.batch_shape):
        groups = ([(X[idx].reshape(-1, losses.d), y[idx].ravel())] if pooled
                  else zip(X[idx], y[idx]))
        for Xg, yg in groups:
            if separable(Xg, yg):
                what = "the pooled data" if pooled else "a client's data"
                raise SolverError(f"{what} are separable: with l2 = 0 the logistic objective "
                                  "has no finite minimizer; set l2 > 0")
