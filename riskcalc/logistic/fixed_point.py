r"""Exact proportional-regime limits of ridge-to-a-centre logistic regression (CGMT).

Model (issue 14, DESIGN.md "Contracts added in the second round"): features x ~ N(0, I_d),
``P(y = 1 | x) = sigmoid(x.w_i)``, ``w_i = w_0 + r u`` with ``||w_0|| = S`` (``signal``) and
``u`` uniform on the sphere (so ``u . w_0 -> 0``), ``n = d / gamma`` samples, and the estimator
(RTFA with the logistic loss; also the FedProx/pFedMe local problem at a fixed centre)

    w_hat = argmin_w (1/n) sum_j l(y_j x_j.w) + (lam/2) ||w - c||^2,   l(t) = log(1 + e^-t),

with the oracle centre ``c = w_0``. As ``d, n -> inf`` with ``d/n -> gamma`` the quantities below
converge to deterministic limits given by four scalars.

Derivation (a re-derivation, not a transcription)
-------------------------------------------------
Let ``kappa = ||w_i|| = sqrt(S^2 + r^2)``, ``e = w_i / kappa``, and split the centre into
``c = c_e e + C f`` with ``f`` a unit vector orthogonal to ``e``: ``c_e = c.e = S^2 / kappa``,
``C = ||c - c_e e|| = S r / kappa``. Write ``w = a e + w_perp``. Then ``X w = a s + X_perp w_perp``
where ``s = X e`` has i.i.d. N(0, 1) entries that carry all the label information, and
``X_perp`` is an independent Gaussian matrix. Writing ``z = X_perp w_perp`` with a Lagrange
multiplier and applying Gordon's comparison (the CGMT, Thrampoulidis, Abbasi & Hassibi, IEEE
Trans. IT 2018, Thm 3; as in Salehi, Abbasi & Hassibi, NeurIPS 2019, Sec. 3 and App. A) replaces
``mu' X_perp w_perp`` by ``||w_perp|| g'mu + ||mu|| h'w_perp`` with ``g ~ N(0, I_n)``,
``h ~ N(0, I_{d-1})``. Steps:

1. Direction of ``w_perp``. Decompose ``w_perp = b f + w_rest``. ``h'f = O(1)`` is negligible
   against ``sqrt(n)``, and the only other term in ``w_rest`` is its norm ``q``, so the minimizing
   ``w_rest = -q h / ||h||`` and ``h'w_perp / sqrt(n) -> -q sqrt(gamma)``. **This is what the
   centre changes**: in Salehi et al.'s ridge (centre 0) ``w_perp`` is purely isotropic; with
   ``c != 0`` it also has the component ``b`` along the part ``C f`` of the centre orthogonal to
   ``w_i``, and the penalty becomes ``(a - c_e)^2 + (b - C)^2 + q^2`` (two more centre scalars,
   ``c_e`` and ``C``, and one more unknown, ``b``). The Gaussian margin variance is
   ``rho^2 = b^2 + q^2``.
2. Square-root trick and Moreau envelope (Salehi et al. App. A; Sur & Candes, PNAS 2019, SI):
   with ``beta = ||mu|| / sqrt(n)`` and ``||x|| = min_tau tau/2 + ||x||^2/(2 tau)``, the
   minimization over ``z`` gives the Moreau envelope ``M(v; tau/beta)`` of ``l`` at
   ``v = a s + rho g``. The scalar objective is

       F = E[M(v; tau/beta)] + beta tau / 2 - beta q sqrt(gamma)
           + (lam/2) [(a - c_e)^2 + (b - C)^2 + q^2],

   minimized over ``(a, b, q, tau)`` and maximized over ``beta >= 0``.
3. Stationarity, with ``mu = tau / beta``, ``t = prox_{mu l}(v)``, ``dM/dv = l'(t)``,
   ``dM/dmu = -l'(t)^2 / 2``, and Stein's lemma in ``g``
   (``E[l'(t) g] = rho E[l''(t) / (1 + mu l''(t))] =: rho D``):

   - d/dtau:  ``E[(mu l'(t))^2] = tau^2``;  d/dbeta:  ``tau = q sqrt(gamma)``;
     together  (E2)  ``E[(mu l'(t))^2] = gamma q^2``
     (Sur & Candes eq. 5, first line, with their ``kappa sigma^2 = q^2``, ``kappa = gamma``);
   - d/dq:  ``beta sqrt(gamma) = q (lam + D)``, which with ``beta = tau / mu`` gives
     (E1)  ``mu (lam + D) = gamma``  (Sur & Candes eq. 5, third line, at ``lam = 0``:
     ``1 - gamma = E[1 / (1 + mu l''(t))]``; Salehi et al. Thm 1 for ridge);
   - d/da:  (E3)  ``lam (a - c_e) = -E[l'(y t) y s]``  (Sur & Candes eq. 5, second line, at
     ``lam = 0``);
   - d/db:  (E4)  ``b (lam + D) = lam C``: the centre's orthogonal part is shrunk by
     ``lam / (lam + D)``. New with the centre (``C = 0`` gives ``b = 0``: Salehi et al.).

   The label enters through ``2 sigmoid(kappa s)`` (``riskcalc.logistic.engine.gaussian``).

Nothing above uses ``c = w_0`` beyond ``c_e`` and ``C``: a centre ``alpha w_0`` (FedAvg's global
model, ``riskcalc.logistic.fedavg``) multiplies both by ``alpha``.

Unknowns ``(a, b, q, mu)``; at ``lam = 0`` (E4) gives ``b = 0`` and the system is Sur & Candes'
MLE system, which has a solution only below the phase transition ``gamma < h(kappa)``
(``riskcalc.logistic.transition``). Limits: ``w_hat = a e + b f - q h/||h||``, so

    ||w_hat - w_i||^2 -> (a - kappa)^2 + b^2 + q^2,
    cos(w_hat - c, w_i - c) -> [(a - c_e)(kappa - c_e) - (b - C) C] / (||w_i - c|| ||w_hat - c||),
    ||w_i - c||^2 = (kappa - c_e)^2 + C^2  (= r^2 for c = w_0),
    ||w_hat - c||^2 -> (a - c_e)^2 + (b - C)^2 + q^2,

and on a fresh sample ``(x.w_i, x.w_hat) = (kappa s, a s + rho g)``: the test log-loss
``E[2 sigmoid(kappa s) l(a s + rho g)]`` and the misclassification rate
``E[2 sigmoid(kappa s) Phi(-a s / rho)]``.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic import broadcast
from riskcalc.logistic.engine.gaussian import NODES, PANEL, SCALE_MARGIN, Rule, solve_resolved
from riskcalc.logistic.ranges import LAM_RATIO, LOG_WINDOW, ladder, mle_lam
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.engine.deadline import by_deadline

#: Residual (sup-norm of the scaled system) below which a root is accepted.
TOL = 1e-11
#: Relative agreement required between the working and the finer quadrature rule.
QUAD_RTOL = 1e-7


def centre_geometry(signal: float, r: float, scale: float = 1.0):
    """``(kappa, c_e, C)``: ``||w_i||`` and the components along and across ``w_i`` of the
    centre ``c = scale w_0`` (``scale = 1``: the oracle centre)."""
    kappa = float(np.hypot(signal, r))
    if kappa == 0.0:
        return 0.0, 0.0, 0.0
    # signal (signal / kappa), not signal^2 / kappa: signal = 1e-300, r = 0 underflowed c_e to
    # 0, so w_i - c was w_i and a cosine (-1e-16) was printed where w_i = c leaves it undefined.
    return kappa, scale * signal * (signal / kappa), scale * signal * (r / kappa)


def residuals(x, rule: Rule, gamma: float, lam: float, c_e: float, C: float):
    """Scaled residuals of (E1)-(E4) at ``x = (a, b, log q, log mu)`` (module docstring) and
    their Jacobian in ``x``."""
    # The solver may probe far outside the physical range: keep q and mu finite there.
    log_q, log_mu = np.clip(x[2], *LOG_WINDOW), np.clip(x[3], *LOG_WINDOW)
    a, b, q, mu = x[0], x[1], np.exp(log_q), np.exp(log_mu)
    rho = np.hypot(b, q)
    (D, E2, E3), dm = rule.moments(a, rho, mu)
    # Chain rule from (a, rho, mu) to x.
    dm = dm @ np.array([[1.0, 0.0, 0.0, 0.0],
                        [0.0, b / rho, q * q / rho, 0.0],
                        [0.0, 0.0, 0.0, mu]])
    # (E3) and (E4) are divided by max(1, lam): their terms grow like lam, and unscaled
    # their rounding floor (lam times the rounding of a, b) exceeds TOL beyond lam ~ 1e5.
    w = 1.0 / max(1.0, lam)
    res = np.array([mu * (lam + D) / gamma - 1.0 + (x[3] - log_mu),
                    0.5 * np.log(E2 / gamma) - x[2],
                    w * (lam * (a - c_e) - E3),
                    w * (b * (lam + D) - lam * C)])
    jac = np.array([mu * dm[0] / gamma + [0.0, 0.0, 0.0, mu * (lam + D) / gamma],
                    0.5 * dm[1] / E2 - [0.0, 0.0, 1.0, 0.0],
                    w * (-dm[2] + [lam, 0.0, 0.0, 0.0]),
                    w * (b * dm[0] + [0.0, lam + D, 0.0, 0.0])])
    return res, jac


def _root(x0, rule, gamma, lam, c_e, C, deadline=None):
    from scipy.optimize import root

    # One stage can take all the time: lam = 0 just below the Candes-Sur threshold, where
    # ||w_hat|| grows without bound and the rules with it (gamma = h (1 - 1e-4), signal = r =
    # 0: one stage of 38 s); the checks between stages never saw it.
    sol = root(by_deadline(residuals, deadline), x0, args=(rule, gamma, lam, c_e, C),
               method="hybr", jac=True, options={"xtol": 1e-13})
    x = sol.x
    if not np.all(np.isfinite(x)):
        return x, np.inf
    return x, float(np.max(np.abs(residuals(x, rule, gamma, lam, c_e, C)[0])))


def _rules_at(kappa, nodes):
    """``rules_at`` of ``gaussian.solve_resolved``: the rule for the scales of
    ``x = (a, b, log q, log mu)``."""
    def rules_at(x, margin=SCALE_MARGIN):
        rho = float(np.hypot(x[1], np.exp(np.clip(x[2], -60.0, 30.0))))
        return [Rule.at(kappa, nodes, float(x[0]), rho, margin)]
    return rules_at


def _root_resolved(x0, kappa, nodes, gamma, lam, c_e, C, deadline=None):
    """``_root`` on a rule that resolves the solution's scales: ``(x, err, rule)``;
    ``deadline.Overtime`` when still solving at ``deadline`` (``time.perf_counter``'s clock)."""
    (x, err), rules = solve_resolved(
        lambda x, rules: _root(x, rules[0], gamma, lam, c_e, C, deadline),
        _rules_at(kappa, nodes), np.asarray(x0, float))
    return x, err, rules[0]



def settle(x, kappa, gamma, signal, r, lam, c_e, C, deadline=None):
    """The accuracy check of a root ``x`` on the ladder's first rule (``solve_fixed_point``):
    the next finer rule must give the same fixed point to ``QUAD_RTOL``; where it does not
    (wide margins or large mu make the integrands vary on a finer scale), move up the ladder.
    Returns ``(x, residual, rule)`` on the finer rule of the two that agree.

    Raises
    ------
    SolverError
        The finest level still moves the root.
    """
    for nodes in NODES[1:]:
        x_fine, err, fine = _root_resolved(x, kappa, nodes, gamma, lam, c_e, C,
                                           deadline=deadline)
        if err <= TOL and np.all(np.abs(x_fine - x) <= QUAD_RTOL * (1.0 + np.abs(x))):
            return x_fine, err, fine
        x = x_fine
    raise SolverError(f"logistic fixed point: quadrature not converged at the finest "
                      f"ladder level {NODES[-1]} ({_describe(fine)}; gamma = {gamma:g}"
                      f", signal = {signal:g}, r = {r:g}, lam = {lam:g})")


def _start(kappa, nodes, gamma, lam, c_e, C):
    """First-order large-lam solution: the centre plus a shrunken isotropic part."""
    rule = Rule.at(kappa, nodes, c_e, C)
    a, b, mu, q = c_e, C, gamma / lam, 1e-3
    for _ in range(3):
        (D, E2, E3), _ = rule.moments(a, np.hypot(b, q), mu, derivatives=False)
        mu = gamma / (lam + D)
        q = np.sqrt(E2 / gamma)
        a, b = c_e + E3 / lam, lam * C / (lam + D)
    return np.array([a, b, np.log(q), np.log(mu)])


def check_mle(gamma, signal, r) -> None:
    """ValueError where ``lam = 0`` has no finite minimizer: ``gamma >= h(||w_i||)``, beyond
    the Sur-Candes transition (``transition.mle_threshold``; Sur & Candes, PNAS 2019)."""
    h = mle_threshold(np.hypot(signal, r))
    if gamma >= h:
        raise ValueError(
            f"lam = 0: no finite minimizer (the MLE does not exist): gamma = {gamma:g} >= "
            f"h = {h:.6g}, the Candes-Sur separability threshold at signal strength "
            f"||w_i|| = {np.hypot(signal, r):.6g}; the data are separable with probability "
            "-> 1. Use lam > 0")


def solve_fixed_point(gamma: float, signal: float, r: float, lam: float, *,
                      nodes: int = NODES[0], start=None, scale: float = 1.0,
                      max_seconds: float | None = None, begun=None):
    """The fixed point ``(a, b, q, mu)`` of (E1)-(E4) for one parameter point.

    Direct from the first-order start when ``lam >= 1``, else (or when that fails)
    continuation from ``lam = 100`` down to ``lam`` by factors of 10, each
    step a Powell hybrid solve (scipy ``hybr``) in ``(a, b, log q, log mu)`` on a rule
    resolving the solution's scales (``gaussian.solve_resolved``); ``lam = 0`` is
    reached from ``lam = 1e-4``. ``start``: a solution ``(a, b, log q, log mu)`` at a nearby
    point, tried first. ``scale``: the centre is ``scale w_0``. ``max_seconds``: below
    ``lam = 1e-4``, refuse (ValueError) as soon as the stages left, at the cost of the last
    one, would take the continuation beyond it, and at any stage raise ``deadline.Overtime`` from
    the first residual evaluated past it (``path._limit`` refuses then; None: no limit), counted
    from ``begun`` (``time.perf_counter``; default now). Module docstring for the equations.

    Raises
    ------
    ValueError
        ``lam = 0`` beyond the Sur-Candes transition: no finite minimizer.
    SolverError
        A continuation step does not reach residual ``TOL``.
    """
    if lam == 0.0:
        check_mle(gamma, signal, r)
    lam = mle_lam(lam, gamma, np.hypot(signal, r))      # below MLE_LAM: the MLE, O(lam) off
    kappa, c_e, C = centre_geometry(signal, r, scale)
    clock = time.perf_counter() if begun is None else begun
    deadline = None if max_seconds is None else clock + max_seconds
    # Direct attempt from a nearby solution or the first-order start; continuation in lam
    # when it fails. Each solve is on a rule resolving the solution's scales (``gaussian``).
    if start is not None or lam >= 1.0:
        x0 = _start(kappa, nodes, gamma, lam, c_e, C) if start is None else start
        try:    # the iterate may outgrow every rule (a path's jump from 1e-3 to 1e-300)
            x, err, rule = _root_resolved(x0, kappa, nodes, gamma, lam, c_e, C, deadline)
        except SolverError:
            err = np.inf
        if err <= TOL:
            return x, rule, (kappa, c_e, C)
    lams = ladder(lam)
    x = _start(kappa, nodes, gamma, lams[0], c_e, C)
    last, before = None, None
    h = None if max_seconds is None else mle_threshold(kappa)
    for i, lam_k in enumerate(lams):
        begun = time.perf_counter()
        if i:
            before = (np.log(lams[i - 1]), x[3])
        x, err, rule = _bridged(x, lams[i - 1] if i else 0.0, lam_k, kappa, nodes, gamma, c_e, C,
                                deadline)
        now = time.perf_counter()
        # Each stage left costs at least the last (lam = 5e-324: 320 stages), and on separable
        # data (||w_hat|| grows as lam falls) the last two's ratio (at most 4) times it: gamma
        # 0.5, signal = r = 1 took 3.1, 6.8, 22 s to 1e-6, the last cost alone refused at 124 s
        # of 60; compounding the ratio refused cheap paths (gamma 10, lam 1e-13) too early.
        grow = 1.0
        if last is not None and h is not None and gamma >= h:
            grow = min(4.0, max(1.0, (now - begun) / max(last, 1e-9)))
        last = now - begun
        if max_seconds is not None and lam_k < 1e-4 and \
                now - clock + (len(lams) - i - 1) * grow * last > max_seconds:
            why = (f"gamma = {gamma:g} >= h = {h:.3g}: on separable data ||w_hat|| grows as "
                   "lam -> 0" if gamma >= h else f"gamma = {gamma:g} < h = {h:.3g}")
            # What the rest of the budget reaches at this rate (it said "give lam >= 1e-06",
            # where it stopped, though 1e-12 answered in 13 s).
            more = int((max_seconds - (now - clock)) / max(grow * last, 1e-9))
            reach = lams[min(i + max(more, 0), len(lams) - 1)]
            if before is not None and x[3] > before[1]:
                # and not beyond where log mu (growing as lam falls) leaves the window, from
                # the last two stages: 1e-24 was offered where lam < 1e-12 leaves it.
                slope = (x[3] - before[1]) / (np.log(lam_k) - before[0])
                edge = np.exp(np.log(lam_k) + (LOG_WINDOW[1] - 1.0 - x[3]) / slope)
                reach = max(reach, min((v for v in lams if v >= edge), default=lam_k))
            raise ValueError(
                f"lam = {lam:g}: the continuation in lam reached {lam_k:g} in "
                f"{now - clock:.3g} s, and the {len(lams) - i - 1} stages left would take "
                f"it beyond max_seconds = {max_seconds:g} ({why}); give lam >= {reach:g} "
                "(what the rest of max_seconds reaches at this rate), or raise max_seconds "
                "(in Python; --max-minutes on the command line)")
        if not err <= TOL:
            raise SolverError(f"logistic fixed point: no convergence at lam = {lam_k:g} "
                              f"(gamma = {gamma:g}, signal = {signal:g}, r = {r:g}; "
                              f"residual {err:.2e})")
        if lam_k > lam and x[3] > LOG_WINDOW[1] - 1.0:
            # mu grows as lam falls: out of the window on the way down is out of it at lam
            # (``ranges.check_window``), said now (lam = 1e-16 at gamma = 2: after 72 s).
            raise ValueError(f"lam = {lam:g} is out of the solver's reach at gamma = "
                             f"{gamma:g} (signal = {signal:g}, r = {r:g}): mu ~ gamma / (lam + "
                             f"D) grows as lam falls and leaves [e^{LOG_WINDOW[0] + 1:g}, "
                             f"e^{LOG_WINDOW[1] - 1:g}] already at lam = {lam_k:g}; give lam "
                             f">= {lam_k * LAM_RATIO:g} (riskcalc.logistic.ranges)")
    return x, rule, (kappa, c_e, C)


def _bridged(x, lam_from, lam_to, kappa, nodes, gamma, c_e, C, deadline, depth=3):
    """The root at ``lam_to`` from ``x`` (the root at ``lam_from``; 0: none), the step halved
    in log lam while it fails (``depth`` times). Was: gamma 1, signal = r = 0.5, 1e-3 -> 1e-4
    'no convergence (residual 2.50e-01)', answered through 10^-3.5 (as the spectrum's)."""
    y, err, rule = _root_resolved(x, kappa, nodes, gamma, lam_to, c_e, C, deadline=deadline)
    if err <= TOL or not depth or not lam_from * lam_to:
        return y, err, rule
    args, mid = (kappa, nodes, gamma, c_e, C, deadline, depth - 1), np.sqrt(lam_from * lam_to)
    xm, e, _ = _bridged(x, lam_from, mid, *args)
    return _bridged(xm, mid, lam_to, *args) if e <= TOL else (y, err, rule)


def _describe(rule) -> str:
    """The rule's axes, e.g. ``"s: 464 Gauss-Legendre (29 panels), g: 84 Gauss-Hermite"``."""
    return ", ".join(f"{axis}: {n * PANEL} Gauss-Legendre ({n} panels)" if kind == "gl" else
                     f"{axis}: {n} Gauss-Hermite" for axis, (kind, n) in zip("sg", rule.keys))


def test_error(kappa: float, a: float, rho: float) -> float:
    """``P(y x.w_hat < 0) = E[2 sigmoid(kappa s) Phi(-a s / rho)]`` for one point
    (``broadcast.test_errors``: a composite rule resolving the kink of width ``rho / |a|``
    at 0, which Gauss-Hermite would blur)."""
    return float(broadcast.test_errors(kappa, a, rho)[0])
