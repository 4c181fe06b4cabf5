"""Finite personalization steps from the FINITE-M federated global model.

Paper 003 (``003_4b976ddf5225c17e.txt``), Sec. 7, Algs. 5-6 (full batch): the target client i
starts at the global model theta_g and takes k gradient steps of size eta on its loss (FTFA) or
on the loss plus lam/2 ||theta - theta_g||^2 (RTFA). ``riskcalc.linear.steps.limits`` has the
limit when theta_g is the exact centre (M -> infinity); here theta_g is the FedAvg global model
(eq. 6) over M clients sharing one covariance spectrum, the target among them
(``riskcalc.linear.finite_clients.sigma``). Derived here.

1. With q(s) = 1 - eta (s + lam) and c = eta lam, the error after k steps is
   e_k = R_k(S_i) (theta_g - theta_i) + g_k(S_i) X_i^T xi_i / n_i with the POLYNOMIALS

       R_0 = I,  R_(m+1) = q R_m + c,   i.e. R_k = q^k + c sum_(m<k) q^m,
       g_k = eta sum_(m<k) q^m,   S g_k = I - R_k,

   (R_k -> lam (S + lam)^-1 or P^perp as k -> infinity when 0 < eta (s + lam) < 2 on the
   spectrum). The risk is that of ``finite_clients.sigma`` with R = R_k: four traces
   t1 = tau(R Sigma R K Sigma Y K), t2 = tau(R Sigma R K Sigma K), t3 = tau(R Sigma R K),
   t4 = tau(R Sigma K) - t3 (K = (p_i S_i + omega Sigma)^-1, Y = Sigma Phi) and the oracle
   variance own = gamma tau(Sigma g_k S g_k), combined by its ``trace_coefficients``.
2. Each trace is an entry of a linear pencil in S, every k <= K from one pencil each
   (``riskcalc.linear.steps.pencils``, which builds them).

Checks (tests): k = 0 is FedAvg at finite M, k -> infinity the finite-M limits of
``finite_clients.sigma``, M -> infinity the oracle steps limits of ``steps.limits``, M = 1 with
gamma < 1 the steps from the client's own least squares (which they keep), Sigma = I against
Marchenko-Pastur quadrature of the filters, and simulation of the federated pipeline followed by
k steps (``montecarlo``). Cost: ``pencils``; for Sigma = I with convergent steps, quadrature
instead (``riskcalc.linear.steps.identity``).
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, integers, max_time, parameter, positive, real
from riskcalc._text import shown_apart
from riskcalc.errors import SolverError
from riskcalc.linear import finite_clients
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.finite_clients.identity import check_pooled
from riskcalc.linear.finite_clients.grid import check_clients
from riskcalc.linear.finite_clients.sigma import federation, trace_coefficients
from riskcalc.linear.limits import LimitResult
from riskcalc.linear.model import broadcast_shape, check_lam
from riskcalc.linear.steps import pencils
from riskcalc.linear.steps.edge import check_peak, past_edge
from riskcalc.linear.steps.identity import identity_steps_group_limits
from riskcalc.linear.steps.overflow import overflowed
from riskcalc.linear.steps.pencils import step_traces
from riskcalc.spectrum import Spectrum, as_spectrum

#: Methods personalizing the FedAvg global model by gradient steps (the local baselines
#: ignore the global model and keep ``steps.limits``' limit).
METHODS = ("ftfa", "rtfa")
ROUTE = "finite_clients_steps"


def clients_steps_limit(method: str, *, gamma, sigma, r, steps, step_size, lam=None,
                        weights: str = "samples", spectrum=None, max_seconds=None):
    """Bias and variance of client 0 of a federation after ``steps`` personalization
    gradient steps from the FedAvg global model over all its clients (module docstring; paper
    003 Sec. 7, Algs. 5-6, with the global model of eq. 6).

    Parameters
    ----------
    method : {"ftfa", "rtfa"}
    gamma, sigma, r : float or sequence of float
        Per-client values (client 0 is the target); sequences share one length M.
    steps : int or array_like of int
        k >= 0 (every requested k costs one pencil up to the largest).
    step_size : float
        eta > 0.
    lam : float or sequence of float, optional
        RTFA's penalty (per client or shared; only the target's enters the steps); required
        for RTFA, refused for FTFA.
    weights : {"samples", "uniform"}
    spectrum : Spectrum, optional
        Shared by every client (None: Sigma = I).
    max_seconds : float, optional
        The most seconds of the pencils' estimated work (as ``steps_limit``'s).

    Returns
    -------
    bias, variance : ndarray shaped like ``steps``

    Raises
    ------
    ValueError
        For a method outside ``METHODS``, inconsistent lengths, bad values or pooled N <= d.
    """
    if method not in METHODS:
        raise ValueError(f"finite steps from a finite-M global model are implemented for "
                         f"{', '.join(METHODS)}; got {method!r}")
    if (lam is None) == (method == "rtfa"):     # as ClientSpec (was ignored, or 0; steps2 F20)
        raise ValueError("method rtfa needs lam" if lam is None else
                         "method ftfa does not take lam (it takes r)")
    k = integers("steps", steps)
    eta = float(positive("step_size", step_size, ndim=0))    # an array: TypeError (F12)
    raw = {"gamma": gamma, "sigma": sigma, "r": r, "lam": 0.0 if lam is None else lam}
    m = max([np.size(v) for v in raw.values()])
    vals = {}
    for name, v in raw.items():
        arr = np.ravel(real(name, v, ndim=1))
        if arr.size == 0:     # was "gamma has 0, not 1": no length to match (fuzz39 steps F7)
            raise ValueError(f"{name} is empty: give one value per client (client 0 the "
                             "target) or one shared by all")
        if arr.size not in (1, m):
            raise ValueError(f"per-client lists must have one length; {name} has {arr.size}, "
                             f"not {m}")
        vals[name] = np.broadcast_to(arr, (m,)).copy()
    gam, sig, rr = (parameter(name, vals[name]) for name in ("gamma", "sigma", "r"))
    lam_arr = as_array("lam", vals["lam"], low=0.0)
    check_lam(lam_arr)      # as every route (1e300 answered inf; fuzz38 quad F3)
    weights = finite_clients.check_weights(weights)
    sp = _spectrum(spectrum)
    ks, at = np.unique(k.astype(int), return_inverse=True)
    # The target's: the others take no steps (a step divergent on them was refused for memory
    # on the pencils from 1023 steps; fuzz38 steps2 F22).
    converges = np.all(stability(gam[:1], lam_arr[:1], eta, sp)[0])
    check_pooled(gam, np.ones(m))          # before the estimate: the reason, not fewer steps
    quad = converges and sp.is_identity and sp.signal_is_uniform     # else pencils (_steps_at)
    over = _overflowed(method, gam, rr, sig, np.ones(m), lam_arr, weights, sp, ks, eta,
                       converges, 0)
    _check_seconds(sp, [ks[:0] if quad or m == 1 else ks[~over]], max_seconds)  # F16; m: F10
    # A divergent step overflows (inf / inf: NaN; fuzz37 twins L1): infinite; no signal
    # (noise) anywhere: bias (variance) 0 (fuzz38 F11).
    with np.errstate(**({} if converges else {"over": "ignore", "invalid": "ignore"})):
        bias, var = _steps_at(method, gam, rr, sig, np.ones(m), lam_arr, weights, sp, ks, eta,
                              converges, targets=[0])
    bias, var = (np.where(np.isfinite(a) | converges, a, np.inf) for a in (bias, var))
    bias, var = np.where(np.any(rr > 0), bias, 0.0), np.where(np.any(sig > 0), var, 0.0)
    return bias[0, at].reshape(k.shape), var[0, at].reshape(k.shape)


def _steps_at(method, gam, r, sigma, count, lam, weights, spectrum, ks, eta, converges,
              targets=None):
    """(bias, variance) (targets, len(ks)) after the steps ``ks`` (ascending): for Sigma = I
    with a uniform signal direction and convergent steps, ``identity_steps_group_limits`` at
    those steps only (its quadrature; one k = 1000 took 80 s on the pencils, which need every
    k up to the largest and were refused from k = 1023 for memory), else
    ``steps_group_limits`` up to the largest (a divergent step's overflow is the pencils'
    result, the same at any number of steps)."""
    if converges and spectrum.is_identity and spectrum.signal_is_uniform:
        rows = slice(None) if targets is None else np.asarray(targets, dtype=int)
        check_peak(np.asarray(gam, float)[rows], np.asarray(lam, float)[rows], ks[-1], eta)
        try:
            return identity_steps_group_limits(method, gam, r, sigma, count, lam, weights,
                                               int(ks[-1]), eta, ks=ks, targets=targets)
        except SolverError as exc:
            raise near_one(exc, gam, ks[-1], eta) from None
    if np.sum(count) == 1:
        # One client: the global model is its own least squares, where the gradient of the
        # loss the steps descend vanishes (R_k + S g_k = I): the values of k = 0 at every k,
        # however divergent the step (the pencils' rounding grew to 3.2e29 for 1 at gamma
        # 0.5 after 200 steps of 0.8; fuzz39 steps F10).
        b, v = steps_group_limits(method, gam, r, sigma, count, lam, weights, spectrum, 0,
                                  eta, targets=targets)
        return np.repeat(b, ks.size, axis=1), np.repeat(v, ks.size, axis=1)
    rows = np.arange(np.size(gam)) if targets is None else np.asarray(targets, int).ravel()
    over = np.all([_overflowed(method, gam, r, sigma, count, lam, weights, spectrum, ks, eta,
                               converges, t) for t in rows], axis=0)
    bias, var = np.full((rows.size, ks.size), np.inf), np.full((rows.size, ks.size), np.inf)
    if not over.all():
        some = ks[~over]
        b, v = steps_group_limits(method, gam, r, sigma, count, lam, weights, spectrum,
                                  int(some[-1]), eta, targets=targets)
        bias[:, ~over], var[:, ~over] = b[:, some], v[:, some]
    return bias, var


def _overflowed(method, gam, r, sigma, count, lam, weights, spectrum, ks, eta, converges,
                target):
    """Where (over ``ks``) a divergent step under Sigma = I (uniform signal direction) has the
    ``target`` group's bias and variance proven past the floats (``steps.overflow``): infinite
    without the pencils (1e6 steps of 0.6 at gamma 1 with 3 clients were refused for memory,
    1000 of 1 at gamma 2 took 80 s to print null; fuzz39 steps F8). Sigma = c I (S = c S_I):
    Sigma = I's with step c eta, lam / c, the bias times c (scaled:2 ran the pencils; steps2 F8)."""
    c = spectrum.identity_scale
    if converges or c is None:
        return np.zeros(np.shape(ks), bool)
    return overflowed(method, gam, np.asarray(r, float) * np.sqrt(c), sigma, count,
                      np.asarray(lam, float) / c, weights, ks, eta * c, target)


def spec_clients_steps_limit(spec, steps, step_size, clients, weights=None,
                             max_seconds=None) -> LimitResult:
    """``riskcalc.steps_limit(..., clients=M)``: the limit after ``steps`` gradient steps of
    ``spec``'s client, one of M identical clients of the FedAvg global model (module
    docstring); ``spec`` validated by ``steps.limits.spec_steps_limit``, which dispatches
    here. Parameters broadcast together (``clients`` too: fuzz40 steps F2); ``max_seconds`` as
    there.

    Raises
    ------
    ValueError
        For bad values, pooled N <= d, or pencils estimated beyond ``max_seconds``.
    """
    clients = check_clients(clients)
    weights = finite_clients.check_weights("samples" if weights is None else weights)
    k = integers("steps", steps)
    eta = positive("step_size", step_size)
    sp = _spectrum(spec.spectrum)
    broadcast_shape({"gamma": spec.gamma, "sigma": spec.sigma, "r": spec.signal,
                     "lam": spec.penalty, "steps": k, "step_size": eta, "clients": clients})
    g, sig, signal, lam, k, eta, m = np.broadcast_arrays(spec.gamma, spec.sigma, spec.signal,
                                                         spec.penalty, k, eta, clients)
    bias, var = np.empty(g.shape), np.empty(g.shape)
    # One pencil per distinct (gamma, lam, eta, M) to its largest k (r, sigma: in the key too).
    key = np.stack([a.ravel() for a in (g, sig, signal, lam, eta, m)], axis=1)
    uniq, inv, _ = finite_clients.unique_rows(key)
    converges, notes = stability(g, lam, eta, spec.spectrum)
    for gm, mm in finite_clients.unique_rows(key[:, [0, 5]])[0]:     # the reason, not fewer
        check_pooled(np.array([gm]), np.array([mm]))    # steps (clients_steps_limit; steps2 F3)
    over = np.zeros(k.size, bool)
    for u, (gm, sg, rr, lm, et, mm) in enumerate(uniq):
        idx = np.flatnonzero(inv == u)
        over[idx] = _overflowed(spec.method, [gm], [rr], [sg], [int(mm)], [lm], weights, sp,
                                k.ravel()[idx], float(et), np.all(np.ravel(converges)[idx]), 0)
    _check_seconds(sp, [k.ravel()[(inv == u) & ~(sp.is_identity & np.ravel(converges)) & ~over
                                  & (m.ravel() > 1)] for u in range(len(uniq))], max_seconds)
    for u, (gm, sg, rr, lm, et, mm) in enumerate(uniq):
        idx = np.flatnonzero(inv == u)
        kk = k.ravel()[idx].astype(int)
        # A divergent step overflows (expected: the note says so); a convergent one warns.
        with np.errstate(**({} if np.all(np.ravel(converges)[idx]) else
                            {"over": "ignore", "invalid": "ignore"})):
            ks, at = np.unique(kk, return_inverse=True)
            b, v = _steps_at(spec.method, [gm], [rr], [sg], [int(mm)], [lm], weights, sp, ks,
                             float(et), np.all(np.ravel(converges)[idx]))
        bias.ravel()[idx], var.ravel()[idx] = b[0, at], v[0, at]
    # A divergent step's overflow (inf / inf: NaN) is infinite, as on ``limits``' route; r = 0
    # (sigma = 0) has no error to amplify: 0 (was inf, 0 * inf overflowing; fuzz38 steps F11).
    bias, var = (np.where(np.isfinite(a) | converges, a, np.inf) for a in (bias, var))
    bias, var = np.where(signal == 0, 0.0, bias), np.where(sig == 0, 0.0, var)
    out = [float(x) if bias.ndim == 0 else x for x in (bias, var, bias + var)]
    params = {**spec.params(), "steps": k.astype(int).tolist(), "step_size": eta.tolist(),
              "clients": clients, "weights": weights}
    if np.any((one := m == 1) & ~converges):    # F10: "grows without bound" beside 1.0
        notes = (stability(g[~one], lam[~one], eta[~one], spec.spectrum, g.size)[1]  # F5: of
                 if np.any(~(one | converges)) else ()) + (ONE_CLIENT,)  # all (fuzz41 steps F1)
        converges = converges | one if np.ndim(converges) else True
    return LimitResult(spec.method, params, *out, route=ROUTE, notes=notes, converges=converges)


#: The note of a step past the edge from the model of one client (fuzz39 steps F10).
ONE_CLIENT = ("one client: the global model is its own least squares, where the gradient of "
              "its loss vanishes, so the steps leave it in place at any step size, past the "
              "stability edge too (in floating point, gradient descent there amplifies rounding)")


def _check_seconds(spectrum, pencil_steps, max_seconds) -> None:
    """ValueError where the pencils (``steps_group_limits``: one per list of ``pencil_steps``
    not empty, up to its largest) are estimated beyond ``max_seconds`` (None: no limit; 700
    steps on two atoms took 32 s, with no estimate: fuzz37 unbound F7)."""
    if max_seconds is None:
        return
    limit = max_time("max_seconds", max_seconds)
    most = [int(np.max(ks)) for ks in pencil_steps if ks.size]
    atoms = spectrum.atoms.size
    total = sum(pencils.seconds(K, atoms) for K in most)
    if total > limit:
        # The largest pencil within what the others leave of the limit.
        room = limit - total + pencils.seconds(max(most), atoms)
        fits = int(((room / pencils.seconds(0, atoms)) ** (1 / 3) * 4 - 4) / 2) if room > 0 \
            else -1
        raise ValueError(f"steps: {max(most)} steps from the finite-M model need pencils "
                         f"estimated at {total:.3g} s ({len(most)} pencil"
                         f"{'s' if len(most) > 1 else ''}, {atoms} spectrum atoms; the cost "
                         "grows like steps^3 x atoms, riskcalc.linear.steps.pencils), over "
                         f"max_seconds = {limit:g}; "
                         + (f"at most {fits} steps fit, or " if fits >= 0 else "")
                         + "raise max_seconds (in Python; --max-minutes on the command line)")


#: abs(ln gamma) below which ``steps.limits.filter_integrals`` integrates the bias without the
#: density's 1 / s (the direct sum would need more than 37 / (abs(ln gamma) / 2) ~ 4096 nodes).
NEAR_ONE = 0.018


def near_one(exc, gamma, steps, step_size):
    """``exc``, or where a client's gamma is near 1 (``NEAR_ONE``) a SolverError saying why
    and what answers. There the law of S reaches s = 0, where the filter varies on the scale
    1 / (step_size steps): at gamma = 1 with 4 clients from 1e6 steps of 0.1, the quadrature's
    failure guessed "lam or u too small?", and under a spectrum (1e6 steps) said only "the
    contour rule did not settle" (fuzz37 unbound F4)."""
    g = np.asarray(gamma, dtype=float)
    near = g[np.abs(np.log(g)) < NEAR_ONE]
    if near.size == 0:
        return exc
    scale = 1.0 / (float(step_size) * float(steps))
    return SolverError(f"finite-step integral did not settle (steps up to {float(steps):g}): "
                       f"near gamma = 1 (here {shown_apart(near[0], 1.0)}) the law reaches s = "
                       f"0, where the filter varies on the scale 1 / (step_size steps) = "
                       f"{scale:.2g}, finer than the rule resolves: fewer steps or a smaller "
                       "step size answer, and riskcalc.limit is the limit of infinitely many")


def stability(gamma, lam, eta, spectrum, points=None):
    """Whether gradient descent of step ``eta`` on the ridge objective converges, and the note
    of a step past the edge: eta (lam + x_hi) <= 2 with x_hi the top of the limiting spectrum of
    S (Silverstein-Choi edge, ``weighted_mp.support_edges``; (1 + sqrt(gamma))^2 for Sigma = I).
    At the edge abs(1 - eta (lam + s)) = 1 at s = x_hi only, which carries no mass (that law
    has a density apart from its atom at 0): the limits converge, with a note (counting the
    diverging points among ``points``, default the arguments' size).

    Returns
    -------
    converges : bool or ndarray of bool
        Of the broadcast shape of the arguments.
    notes : tuple of str
        One note when any point diverges (the same at any number of steps) or is at the edge.
    """
    sp = _spectrum(spectrum)
    gamma = np.asarray(gamma, dtype=float)
    values, where = np.unique(gamma, return_inverse=True)
    top = np.array([weighted_mp.support_edges(float(x), sp)[1] for x in values])
    top = top[where].reshape(gamma.shape)
    with np.errstate(over="ignore"):    # step_size 1e308: inf, "more than" (steps2 F4)
        q = np.asarray(eta * (lam + top) - 1.0, dtype=float)
    # q = 1 was "diverges" where 1e6 steps gave the limit (fuzz38 steps2 F17).
    converges = ~past_edge(q + 1.0)
    converges = bool(converges) if converges.ndim == 0 else converges
    if np.all(converges) and np.any(q >= 1.0 - 2.0 * weighted_mp.EDGE_RTOL):
        return converges, (
            "step_size * (lam + top of the spectrum of S) = 2 (to rounding): at the stability "
            "edge, which has no mass in the limit, the risk converges (slowly); at finite d the "
            "top eigenvalue of S can exceed it (Tracy-Widom), and gradient descent diverges",)
    if not np.all(converges):
        # step_size 1e308 said "= inf > 2 ... like inf^(2 k)" (fuzz38 steps2 F24).
        big = np.isinf(np.max(q))
        shown, base = (("more than 1.8e+308", "(more than 1.8e+308)") if big else
                       (shown_apart(np.max(q + 1), 2.0), shown_apart(np.max(q), 1.0)))
        # Which point: a sweep's rows shared one note that named none (fuzz39 steps F5).
        at = np.unravel_index(np.argmax(q), q.shape)
        g, l, e = (float(np.broadcast_to(np.asarray(a, float), q.shape)[at])
                   for a in (gamma, lam, eta))
        count = int(np.size(q) - np.sum(converges))
        where = (f"at gamma {g:g}" + (f", lam {l:g}" if l else "") + f", step_size {e:g}"
                 + (f"; {count} of {points or q.size} points diverge"
                    if (points or q.size) > 1 else ""))
        return converges, (
            f"step_size * (lam + top of the spectrum of S) = {shown} > 2 ({where}): gradient "
            f"descent diverges, and the risk grows without bound in steps, like {base}^(2 k) "
            "(a k-th power); a value past the floating-point range (1.8e+308) is infinite: "
            "overflow in tables, null in JSON; no value there is a usable model",)
    return converges, ()


def _spectrum(spectrum):    # as every spectrum= (a SPEC string was an AttributeError; F12)
    spectrum = as_spectrum(spectrum)
    return Spectrum.identity() if spectrum is None else spectrum


def steps_group_limits(method, gam, r, sigma, count, lam, weights, spectrum, max_steps: int,
                       step_size: float, targets=None):
    """Bias and variance after k = 0..``max_steps`` personalization steps of a client of each
    target group, the FedAvg global model solved over every group (module docstring; paper 003
    Sec. 7 Algs. 5-6 and eq. 6).

    Parameters
    ----------
    method : {"ftfa", "rtfa"}
    gam, r, sigma, count, lam : array_like (groups,)
        Per group: gamma_j, r_j, sigma_j, the number of identical clients, RTFA's lam.
    weights : {"samples", "uniform"}
    spectrum : Spectrum
        Shared by all clients, theta in a uniform direction or not (G enters through Y).
    max_steps : int
        K >= 0; every k <= K is returned.
    step_size : float
        eta > 0.
    targets : array_like of int, optional
        Target groups (default all).

    Returns
    -------
    bias, variance : ndarray (targets, K + 1)

    Raises
    ------
    ValueError
        For pooled N <= d or a pencil beyond memory (``resolvent_pencil.MAX_ENTRIES``).
    SolverError
        If a fixed point does not converge.
    """
    gam, r, sigma, count, lam = (np.asarray(a, dtype=float) for a in (gam, r, sigma, count, lam))
    check_pooled(gam, count)
    i = np.arange(gam.size) if targets is None else np.asarray(targets, dtype=int).ravel()
    fed = federation(gam, count, weights, spectrum)
    omega, cb1, cb2, cv2 = trace_coefficients(i, gam, r, sigma, count, fed)
    lam_i = lam[i] if method == "rtfa" else np.zeros(i.size)
    t1, t2, t3, tk, own = step_traces(gam[i], lam_i, float(step_size), fed["p"][i], omega,
                                      spectrum, int(max_steps))
    col = (slice(None), None)
    bias = cb1[col] * t1 + cb2[col] * t2
    p, g = fed["p"][i][col], gam[i][col]
    var = sigma[i][col] ** 2 * (own + 2 * p * g * (tk - t3) + p * g * t3) + cv2[col] * t2
    return bias, var
