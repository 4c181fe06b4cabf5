"""Limits of the risk after a finite number of personalization gradient steps.

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 7, Algs. 5-6: the client starts at the global
model theta_0 and takes k full-batch gradient steps of size eta on its loss L_i (FTFA) or on
L_i + lam/2 ||theta - theta_0||^2 (RTFA); Thms 1-2 are the k -> infinity limits. The paper
gives no finite-k theory; it is derived here.

Every iterate is a spectral filter of the sample covariance S = X^T X / n: with
q(s) = 1 - eta (s + lam),

    theta_k - theta_i = (I - f(S)) (theta_0 - theta_i) + f(S) S^+ X^T eps / n,
    f(s) = s / (s + lam) * (1 - q(s)^k),

so, for theta_0 - theta_i of norm r in a uniformly random direction,

    B_k = r^2 (1/d) tr[(1 - f(S))^2 Sigma],    V_k = sigma^2 (1/n) tr[f(S)^2 S^+ Sigma],

and as d/n -> gamma, with nu the Sigma-weighted limiting spectrum of S
(``riskcalc.linear.engine.weighted_mp``; for Sigma = I the Marchenko-Pastur law F_gamma),

    B_k = r^2 int (1 - f(s))^2 dnu(s),         V_k = sigma^2 gamma int f(s)^2 / s dnu(s),

(an atom at 0 when gamma > 1, where f = 0). k = 0 is FedAvg (B = r^2 int t dH, V = 0);
k -> infinity with 0 < eta (s + lam) < 2 on the support gives Thms 1-2 (and their general-
covariance forms, Sec. 6.3). The local baselines (Cor. 3.1) are the same filters started at
0, with rho in place of r.

Sigma = I: the integral over the continuous part uses s = 1 + gamma - h cos(t),
h = 2 sqrt(gamma), which turns the density into the smooth h^2 sin(t)^2 / (2 pi gamma s) on
[0, pi], and the midpoint rule with nodes doubled until two successive values agree to
``RTOL`` (relative) or ``ATOL`` (up to ``MAX_NEAR_NODES`` near gamma = 1). General Sigma: a
contour integral of phi against the Stieltjes transform of nu around its support
(``riskcalc.linear.steps.contour``, with ``riskcalc.linear.engine.weighted_mp``'s
``contour_integrals``), to its ``RTOL_GENERAL`` and ``ATOL_GENERAL``. Past the stability
edge (eta (lam + x_hi) > 2) both rules settle to the rounding of the k-th power instead
(8 k eps on the first route; the contour's floor on the second), so that a divergent step
gives its finite value at any k until it overflows. A non-uniform direction of theta
(signal_weights different from weights) would need two-resolvent equivalents and is not
covered.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from riskcalc._text import shown_apart
from riskcalc._validate import integers, max_time, positive
from riskcalc.errors import SolverError
from riskcalc.linear.client_weights import check_weights
from riskcalc.linear.finite_clients.grid import check_clients
from riskcalc.linear.limits import LimitResult
from riskcalc.linear.model import ClientSpec, as_spec, broadcast_shape
from riskcalc.linear.steps import edge as steps_edge
from riskcalc.linear.steps import finite_clients as finite_clients_steps
from riskcalc.linear.steps.contour import spectral_filter_integrals

METHODS = ("ftfa", "rtfa", "local", "local_ridge")
RTOL = 1e-13
# Both factors are of order one (the bias factor lies in [0, 1] for a stable step); a bias that
# has decayed to 1e-30 need not be resolved to 13 digits.
ATOL = 1e-16
#: The absolute tolerance of the bias near gamma = 1, computed there as 1 + (a sum near -1):
#: rounded to a few eps absolute, below which two rules cannot agree (``filter_integrals``).
NEAR_ATOL = 8 * np.finfo(float).eps
MAX_NODES = 2 ** 18
#: Near gamma = 1 (``finite_clients.NEAR_ONE``) nodes up to ``MAX_NEAR_NODES`` (points x nodes
#: within ``MAX_NEAR_ENTRIES``); a rule over more than ``MAX_RULE_ENTRIES`` splits its points.
MAX_NEAR_NODES = MAX_NEAR_ENTRIES = 2 ** 21
MAX_RULE_ENTRIES = 2 ** 22


def steps_limit(method: str, *, gamma, sigma, steps, step_size, r=None, rho=None, lam=None,
                spectrum=None, clients=None, weights=None, max_seconds=None) -> LimitResult:
    """Asymptotic bias, variance and risk after ``steps`` personalization gradient steps.

    Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 7 Algs. 5-6 (full batch), with Thms 1-2 /
    Cor. 3.1 as the limit ``steps -> infinity``; derivation in this module's docstring.

    Parameters
    ----------
    method : {"ftfa", "rtfa", "local", "local_ridge"}
        Fine-tuning from the global model (FTFA, RTFA) or training from 0 (the local
        baselines).
    gamma, sigma, r, rho, lam : float or array_like
        As in ``riskcalc.ClientSpec`` (``r`` for FTFA/RTFA, ``rho`` for the local ones, ``lam``
        for RTFA and local ridge).
    steps : int or array_like of int
        Number of gradient steps k >= 0.
    step_size : float or array_like
        eta > 0. The limits converge when eta (lam + (1 + sqrt(gamma))^2) <= 2 (at 2, a note);
        beyond, the risk grows with k (a note says so).
    spectrum : Spectrum, optional
        Eigenvalue distribution of Sigma (default identity); the direction of theta must be
        uniform (``signal_weights`` left at their default).
    clients : int or array_like of int, optional
        M: start FTFA and RTFA from the FedAvg global model over M clients sharing these
        parameters (``riskcalc.linear.steps.finite_clients``; route
        ``"finite_clients_steps"``) instead of the exact centre; the local baselines do not
        use a global model (a note says so). An array broadcasts with the other parameters,
        as in ``riskcalc.limit``.
    weights : {"samples", "uniform"}, optional
        Client weights with ``clients`` (default samples).
    max_seconds : float, optional
        With ``clients``: the most seconds of estimated work of the finite-M pencils (a
        spectrum, or a divergent step; their cost grows like steps^3 x atoms), refused
        beyond, naming the steps that fit (None: no limit).

    Returns
    -------
    LimitResult
        ``route`` is ``"finite-steps"``; ``params`` include ``steps`` and ``step_size``.

    Raises
    ------
    ValueError
        For a method outside ``METHODS``, non-uniform signal weights, or a bad parameter.
    SolverError
        When the quadrature does not settle within ``MAX_NODES`` nodes (k in the hundreds of
        thousands; ``MAX_NEAR_NODES`` near gamma = 1), or the general route cannot reach its
        tolerance (see ``riskcalc.linear.engine.weighted_mp.contour_integrals``). A divergent
        step size is not an error: the result has ``converges`` False and the values grow
        without bound in k, infinite once beyond the floating point range, at any number of
        steps.

    Examples
    --------
    >>> res = steps_limit("ftfa", gamma=2.0, r=1.0, sigma=0.5, steps=1, step_size=0.2)
    >>> round(res.bias, 12), round(res.variance, 12)
    (0.72, 0.02)
    """
    return spec_steps_limit(ClientSpec(method, gamma=gamma, sigma=sigma, r=r, rho=rho, lam=lam,
                                       spectrum=spectrum), steps, step_size, clients=clients,
                            weights=weights, max_seconds=max_seconds)


def supports(spec: ClientSpec) -> bool:
    """Whether ``spec_steps_limit`` covers ``spec``: a method of ``METHODS`` with the direction
    of theta uniform."""
    sp = spec.spectrum
    return spec.method in METHODS and (sp is None or sp.signal_is_uniform)


def spec_steps_limit(spec: ClientSpec, steps, step_size, clients=None,
                     weights=None, max_seconds=None) -> LimitResult:
    """``steps_limit`` of a validated ``ClientSpec`` (what ``steps_limit`` computes after
    validation; the command line and ``montecarlo.compare`` start from a spec).

    Parameters
    ----------
    spec : ClientSpec
        FTFA, RTFA or a local baseline, with theta in a uniform direction.
    steps : int or array of int
        Numbers of gradient steps k >= 0 (broadcast with the spec's parameters).
    step_size : float
        eta > 0.

    Returns
    -------
    LimitResult
        The limits after k steps (route ``steps.limits``).
    """
    spec = as_spec(spec, "spec_steps_limit")
    if spec.method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)} for finite steps, "
                         f"got {spec.method!r}")
    if not supports(spec):
        raise ValueError("spectrum signal_weights: finite-step limits need theta in a uniform "
                         "direction (signal_weights equal to the eigenvalue weights)")
    if clients is not None and spec.method in finite_clients_steps.METHODS:
        return finite_clients_steps.spec_clients_steps_limit(spec, steps, step_size, clients,
                                                             weights, max_seconds)
    if clients is None and weights is not None:
        raise ValueError("weights apply to a finite number of clients only (give clients=M)")
    max_time("max_seconds", max_seconds)    # with no work to bound too (fuzz38 steps F3)
    if clients is not None:
        clients = check_clients(clients)    # an array broadcasts, as in limit (fuzz40 steps F2)
        res = spec_steps_limit(spec, steps, step_size)
        shape = broadcast_shape({"the other parameters": res.risk, "clients": clients})
        if shape != np.shape(res.risk):
            res = replace(res, **{q: np.broadcast_to(getattr(res, q), shape).copy()
                                  for q in ("bias", "variance", "risk")})
        return LimitResult(res.method, {**res.params, "clients": clients,
                                        "weights": check_weights(weights or "samples")},  # F3
                           res.bias, res.variance, res.risk, route=res.route,
                           notes=res.notes + ("the local baselines start from 0, not from the "
                                              "global model: the number of clients does not "
                                              "enter",), converges=res.converges)
    k = integers("steps", steps)
    eta = positive("step_size", step_size)
    params = {**spec.params(), "steps": k.astype(int).tolist(), "step_size": eta.tolist()}
    broadcast_shape({"gamma": spec.gamma, "sigma": spec.sigma, spec.info.signal: spec.signal,
                     "lam": spec.penalty, "steps": k, "step_size": eta})
    g, sig, signal, lam_, k, eta = np.broadcast_arrays(
        spec.gamma, spec.sigma, spec.signal, spec.penalty, k, eta)
    sp = spec.spectrum
    if sp is None or sp.is_identity:
        b_fac, v_fac = filter_integrals(g, lam_, k, eta)
    else:
        b_fac, v_fac = spectral_filter_integrals(g, lam_, k, eta, sp)
    with np.errstate(invalid="ignore"):
        # r = 0 or sigma = 0 past the edge: 0, not 0 * inf (which warned; fuzz38 steps F4).
        bias, var = signal ** 2 * b_fac, sig ** 2 * v_fac
        bias, var = np.where(signal == 0, 0.0, bias), np.where(sig == 0, 0.0, var)
    risk = bias + var
    scalar = bias.ndim == 0
    out = [float(x) if scalar else x for x in (bias, var, risk)]
    converges, notes = finite_clients_steps.stability(g, lam_, eta, sp)
    return LimitResult(spec.method, params, *out, route="finite-steps", notes=notes,
                       converges=converges)


def filter_integrals(gamma, lam, steps, step_size):
    """Bias per unit r^2 and variance per unit sigma^2 after ``steps`` gradient steps.

    ``int (1 - f)^2 dF_gamma`` and ``gamma int f^2 / s dF_gamma`` for the filter
    ``f(s) = s / (s + lam) (1 - (1 - step_size (s + lam))^steps)`` and the Marchenko-Pastur
    law F_gamma (paper 003 Sec. 7; see the module docstring). Arguments broadcast together.
    """
    args = np.broadcast_arrays(*(np.asarray(x, float) for x in (gamma, lam, steps, step_size)))
    shape, points = args[0].shape, args[0].size
    gamma, lam, k, eta = (a.reshape(-1, 1) for a in args)
    root = np.sqrt(gamma)
    atom = np.clip(1.0 - 1.0 / gamma[..., 0], 0.0, None)
    with np.errstate(over="ignore"):    # step_size 1e308: inf, past the edge (steps2 F4)
        ek = eta[..., 0] * k[..., 0]
    # Past the stability edge the nodes themselves carry the rounding of a k-th power:
    # 1 - eta (s + lam) is rounded to ~3 eps relative where it exceeds 1 in magnitude (eta (s +
    # lam) in (2, 4]; 2 eps beyond), and its k-th power to ~3 k eps, which dominates every
    # (positive) term of both sums. Two successive rules then agree to 8 k eps at best, not
    # RTOL (measured: k = 5000, eta (x_hi + lam) = 2.04 settles to 1e-12 from 1024 nodes on).
    # So it is at the edge, where abs(1 - top)^k ~ 1 makes the filter peak within t ~ (eta k
    # sqrt(gamma))^(-1/2) of t = pi: 64 nodes missed it, settling on its absence (bias 1.5e-33
    # for mpmath's 1.01e-10 at gamma 0.5 after 1e6 steps of 2 / x_hi; fuzz39 steps F1). From
    # pi / width nodes (a node per width) the doubling sees it: within 2e-7 of mpmath's to 1e8
    # steps at gamma 0.05, 0.5, 2 (4 pi / width doubled the cost for nothing).
    with np.errstate(over="ignore"):
        top = eta[..., 0] * (lam[..., 0] + (1.0 + root[..., 0]) ** 2)
    grow = steps_edge.top_power(top, k[..., 0])
    peak = grow > steps_edge.PEAK_LOG
    with np.errstate(invalid="ignore", over="ignore"):
        # (beyond the floats' range, infinite at any node count)
        # Past the edge the k-th power varies on abs(1 - top) / (eta k) at the top: a peak
        # that much wider (eta 1e10 at gamma 2 was refused for 3.7e5 nodes, "at the stability
        # edge (... = 5.828e+10)", where 1 step is a polynomial; fuzz42 steps F9).
        first = np.max(np.where(peak & (grow < np.log(np.finfo(float).max)), np.pi * np.sqrt(
            ek * root[..., 0] / np.maximum(np.abs(1.0 - top), 1.0)), 64.0), initial=64.0)
    rtol = np.where(peak, np.maximum(RTOL, 8 * np.finfo(float).eps * k[..., 0]), RTOL)
    near = np.abs(np.log(gamma[..., 0])) < finite_clients_steps.NEAR_ONE
    # ATOL was below that rounding: gamma = 1 after 1e9 steps of 0.1 was refused, its rules
    # agreeing to 1.1e-16 (mpmath's values to 1e-15; gamma 1 + 1e-15 answered; fuzz37 F3).
    atol = (np.where(near, NEAR_ATOL, ATOL), ATOL)
    # There the filter varies on t ~ (step_size steps)^(-1/2) about t = 0: MAX_NODES resolve
    # eta k to ~3e8, 2^21 nodes to ~1e10 (mpmath agrees to 1e-15; fuzz38 steps F5).
    most = MAX_NODES if not np.any(near) else max(
        MAX_NODES, min(MAX_NEAR_NODES, MAX_NEAR_ENTRIES // near.size))
    # ~12 sqrt(eta k) nodes where the edge and lam are below the filter's scale: beyond 8
    # sqrt(eta k) refused before the rule (1e12 steps failed after 2.5 s).
    edge = ((1.0 - gamma[..., 0]) / (1.0 + root[..., 0])) ** 2
    with np.errstate(over="ignore"):    # RTFA, step_size 1e308 (steps2 F4)
        wide = ek * (edge + lam[..., 0]) < 1
    if np.any(near & ~steps_edge.past_edge(top) & (8.0 * np.sqrt(ek) > most) & wide):
        raise SolverError(_unresolved(f"would need more than {most} nodes", gamma, near, ek, k))
    if first > most:
        raise SolverError(_unresolved(f"would need more than {most} nodes", gamma, near, ek, k)
                          + "; at the stability edge (step_size (lam + top of the spectrum) = "
                          f"{shown_apart(np.max(top[peak]), 2.0)}) the filter peaks within "
                          "1 / (step_size steps) of the top: fewer steps answer")
    prev = None
    n = 64 * 2 ** int(np.ceil(np.log2(first / 64)))
    while n <= most:
        if n * points > MAX_RULE_ENTRIES and points > 1:
            # Halves, each its own rule (1e5 step counts: MemoryError after 34 s; fuzz38 F14).
            parts = [filter_integrals(*(a[half, 0] for a in (gamma, lam, k, eta)))
                     for half in (slice(None, points // 2), slice(points // 2, None))]
            return tuple(np.concatenate(q).reshape(shape) for q in zip(*parts))
        # Midpoint rule in t: the integrand is smooth, even and 2 pi-periodic in t, where it
        # converges geometrically, and no node sits on the edge s = 0 of gamma = 1.
        u = np.sin(0.5 * np.pi * (np.arange(n) + 0.5) / n) ** 2      # sin^2(t / 2)
        # The lower edge from 1 - gamma: 1 - sqrt(gamma) lost digits (the variance 8.6e-14 off
        # mpmath's at gamma 0.999 after 1e9 steps of 0.1; fuzz38 steps F6).
        s = ((1.0 - gamma) / (1.0 + root)) ** 2 + 4.0 * root * u      # = 1 + gamma - h cos t
        dens = (np.pi / n) * 16.0 * gamma * u * (1.0 - u) / (2.0 * np.pi * gamma * s)
        with np.errstate(over="ignore", invalid="ignore"):
            f_over_s = _one_minus_power(eta * (s + lam), k) / (s + lam)
            f = s * f_over_s
            # Near gamma = 1 the density's 1 / s, with s = 1 + gamma - 2 sqrt(gamma) cos t,
            # has poles at t = +-i ln(gamma) / 2 and the rule converges as gamma^(n / 2):
            # 740,000 nodes at gamma = 0.9999 (refused). (1 - f)^2 = 1 + f (f - 2) with f(0)
            # = 0, and the density's mass with the atom is 1: no 1 / s is left to integrate.
            # Elsewhere 1 - f = (lam + s q^k) / (s + lam), not 1 - f: that summed f's rounding,
            # a floor 1.5e-33 for the bias of ~1e-75 at gamma 0.5 from 1e4 steps of 0.1 on
            # (fuzz42 steps F5; the contour's phi_bias likewise).
            rest = (lam + s * steps_edge.power(eta * (s + lam), k)) / (s + lam)
            plain = atom + np.sum(dens * rest ** 2, -1)
            fine = np.where(near, 1.0 + np.sum(dens * s * f_over_s * (f - 2.0), -1), plain)
            cur = (fine, gamma[..., 0] * np.sum(dens * f * f_over_s, -1), plain)
        # A divergent step past ~350 / log|1 - eta (lam + x_hi)| steps overflows: the value is
        # beyond the floats, infinite here (JSON null), as at any number of steps.
        cur = tuple(np.where(np.isfinite(a), a, np.inf) for a in cur)
        with np.errstate(invalid="ignore"):
            agree = prev is not None and [(a == b) | (np.abs(a - b) <= rtol * np.abs(a) + tol)
                                          for a, b, tol in zip(cur, prev, atol + (0.0,))]
        # Near gamma = 1 the bias is 1 + (a sum near -1), rounded to ~1e-16 absolute: 1.1e-16
        # printed for mpmath's 5.8e-28 at gamma 0.99 after 1e7 steps of 0.1, 3.6e-7 off at
        # 0.995 (fuzz42 steps2 F1). Below 1e-6 (where that is 2e-9 relative) the plain sum of
        # (1 - f)^2 is taken once it settles relatively (its poles at t = +-i ln(gamma) / 2
        # cost nodes); if it does not within the limit, the sum near -1 stands (to NEAR_ATOL).
        small = near & (cur[0] < 1e-6)
        if agree and np.all(agree[0]) and np.all(agree[1]) and (
                np.all(agree[2] | ~small) or 2 * n > most):
            plain_ok = small & agree[2]
            return np.where(plain_ok, cur[2], cur[0]).reshape(shape), cur[1].reshape(shape)
        prev = cur
        n *= 2
    raise SolverError(_unresolved(f"did not settle with {n // 2} nodes", gamma, near, ek, k))


def _unresolved(what, gamma, near, ek, k) -> str:
    """The refusal of ``filter_integrals`` (near gamma = 1: why, and what answers)."""
    with np.errstate(divide="ignore"):
        scale = float(np.min(1.0 / ek))
    # gamma printed apart from 1 ("here 1" for 1.000001 named the wrong case; fuzz38 steps F9).
    why = (f"; near gamma = 1 (here {shown_apart(gamma[..., 0][near].flat[0], 1.0)}) the law "
           "reaches s = 0, where the filter varies on the scale 1 / (step_size steps) = "
           f"{scale:.2g}, finer than the rule resolves: fewer steps or a smaller step size "
           "answer, and riskcalc.limit is the limit of infinitely many" if np.any(near) else "")
    return f"finite-step quadrature {what} (steps up to {np.max(k):g}){why}"


def _one_minus_power(x, k):
    """``1 - (1 - x)^k`` without cancellation when x is small (x in (0, 1): through log1p)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        small = -np.expm1(k * np.log1p(-np.minimum(x, 0.5)))
    return np.where(x < 0.5, small, 1.0 - (1.0 - x) ** k)
