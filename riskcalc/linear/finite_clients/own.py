"""Finite-M limits of MAML-FL and pFedMe with their OWN global objectives (Sigma = I).

Paper 003 (``003_4b976ddf5225c17e.txt``), eqs. 12-14: the global model minimizes
sum_j p_j / (2 n_j) ||Omega_j^(1/2) (X_j theta - y_j)||^2 with Omega_j a function of
X_j X_j^T / n_j: (I - alpha X_j X_j^T / n_j)^2 for MAML-FL (eq. 12) and
(I + X_j X_j^T / (n_j lam))^-1 for pFedMe (eq. 14, the Moreau envelope). Hence
A = sum_j p_j phi(S_j) and the noise enters through psi(S_j) = X_j^T Omega_j^2 X_j / n_j, with

    MAML-FL: phi(s) = s (1 - alpha s)^2,   psi(s) = s (1 - alpha s)^4,
    pFedMe:  phi(s) = lam s / (s + lam),   psi(s) = lam^2 s / (s + lam)^2,

(FedAvg: phi = psi = s). A is again a free sum of functions of the S_j, so every step of
``riskcalc.linear.finite_clients`` carries over with b_l = p_l phi(S_l), bias source
phi(S_j)^2, noise source psi(S_j), and the variance cross term h(s) = lam phi(s) / (s + lam)^2
(pFedMe; 0 for MAML-FL, whose personalization is the min-norm interpolation of eq. 13, R =
P^perp). Only the subordination solve changes: the Marchenko-Pastur inverse has no closed form
for these summands. For a federation of M identical clients all t_l equal one t, and
sum_l t_l = (M - 1) / g with g = tau((b + t)^-1) becomes

    tau(t / (p phi(S) + t)) = 1 - 1/M,

one increasing equation in t. For heterogeneous clients the coupled system of step 3 is solved
as a scalar equation in g = tau(A^-1) around one vectorized inner solve for the t_l
(``_subordination``); every trace is a Marchenko-Pastur quadrature (``mp_expect``).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients.identity import (assemble, check_pooled, client_weights,
                                                     moments, solve_g)
from riskcalc.linear.finite_clients.own_objective import (METHODS, check_near_pooled,
                                                          check_weight_range, global_cap, objective,
                                                          peak_left_out, phi_zero,
                                                          quadrature_peak, refined_shifts)
from riskcalc.linear.engine.marchenko_pastur import isotropic_factors
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.solvers import RTOL, halve_to_bracket, increasing_root, within


def own_group_limits(method: str, gam, r, sigma, count, tuning: float, weights: str):
    """Bias and variance of a client of each group (``count`` identical clients per group)
    under ``method`` with its own global objective (module docstring). ``method`` may also be
    fedavg, ftfa or rtfa (the FedAvg objective), which the tests use to check this route
    against the closed forms of ``finite_clients``.

    Raises
    ------
    ValueError
        If pooled N <= d (sum_j 1/gamma_j <= 1).
    SolverError
        If the subordination equations or the quadrature do not converge; IllConditioned
        (MAML-FL, pFedMe) too near pooled N = d (``check_near_pooled``).
    """
    gam, r, sigma, count = (np.asarray(a, dtype=float) for a in (gam, r, sigma, count))
    if method in METHODS:
        check_near_pooled(method, gam, count)
        check_weight_range(method, gam, tuning)
    else:
        check_pooled(gam, count)
    p = client_weights(gam, count, weights)
    try:
        phi, peak = objective(method, tuning)[0], quadrature_peak(method, tuning, gam, count)
        g, t = _subordination(gam, p, count, phi, peak)
        t = refined_shifts(gam, p, count, phi, g, t, peak)
        return assemble(r, sigma, gam, p, count, g,
                        *own_sources(method, gam, tuning, p, t, g, count=count))
    except SolverError as exc:
        left = peak_left_out(method, tuning, gam, count)
        if left:    # was "pinned ... where one client's t_l reaches 0" (fuzz40 small F6)
            raise SolverError(left) from None
        if method != "pfedme":
            raise
        # Measured: gamma (1, 2) answers down to lam = 1e-4 (risk 30.6, growing like
        # lam^-1/2 for the client at gamma = 1) and fails from 1e-5; gamma (0.9, 2) answers at
        # 1e-6 and fails from 1e-9.
        raise SolverError(f"{exc} (pfedme at lam = {tuning:g}: small penalties flatten its "
                          "global objective beyond this route's floating-point reach, soonest "
                          "with clients at gamma near 1, where at gamma = 1 the risk grows "
                          "without bound as lam -> 0; give a larger lam)") from None


def own_sources(method: str, gam, tuning, p, t, g, own=None, count=None):
    """D, var_b, Eb, Ev, J and own of ``assemble`` (``finite_clients.identity``) at the
    subordination solution (g, t), elementwise over groups (complex-safe in p, t, g and the
    tuning: ``finite_clients.gradient`` differentiates them by complex steps); ``own`` (the
    oracle variance per unit sigma^2) is computed unless given; with the groups' ``count``,
    phi's zero is the quadrature's peak only away from pooled N = d (``quadrature_peak``)."""
    phi, psi, lam = objective(method, tuning)
    z = phi_zero(method, tuning) if count is None else quadrature_peak(method, tuning, gam, count)
    P, T = p[:, None], t[:, None]
    # phi(s) and (b + t)^-1 = (P phi(s) + T)^-1 once per rule, then products: one complex
    # division per node instead of one per integrand (the gradient's complex steps).

    def main(s, P, T):
        f = phi(s)
        inv = 1.0 / (P * f + T)
        inv2 = inv * inv
        return inv, inv2, (f * inv) ** 2, psi(s) * inv2

    G, D, Eb, Ev = mp_expect(gam, main, P, T, peak=z)
    # D - g^2 as the variance of (b + t)^-1, free of the cancellation of two O(M) terms.
    var_b = mp_expect(gam, lambda s, P, T: ((1.0 / (P * phi(s) + T) - g) ** 2,), P, T,
                      peak=z)[0]
    # A data-poor client (t g > 0.999, where the form above loses over 1e3 eps): (b + t)^-1 =
    # (1 - w) / t, w = b (b + t)^-1 ~ p: its var_b is w's over t^2 (gamma [1e-10, 1]: 7e-7 lost;
    # fuzz42 rtfa F5). Complex steps keep the form in g that ``gradient._own_jet`` differentiates.
    poor = np.real(t * g) > 0.999
    if np.any(poor) and not np.iscomplexobj(var_b):
        def w(s, P, T, m=0.0):
            b = P * phi(s)
            return (b / (b + T) - m,)
        Pp, Tp = P[poor], T[poor]
        m = mp_expect(gam[poor], w, Pp, Tp, peak=z)[0][:, None]
        var_b[poor] = mp_expect(gam[poor], lambda s, P, T, m: (w(s, P, T, m)[0] ** 2,), Pp, Tp,
                                m, peak=z)[0] / t[poor] ** 2
    perp = np.maximum(1.0 - 1.0 / gam, 0.0)
    zero = np.zeros_like(gam)
    if method == "fedavg":
        J = np.array([np.ones_like(gam), D, Ev, Eb,
                      mp_expect(gam, lambda s, P, T: (phi(s) / (P * phi(s) + T),), P, T,
                                peak=z)[0],
                      zero])
        own = zero if own is None else own
    elif lam == 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            J = np.array([perp, np.where(perp > 0, perp / t ** 2, 0.0), zero, zero, zero, zero])
        own = isotropic_factors(gam, zero)[1] if own is None else own
    else:
        # The own bias's J0 - 2 p J3 + p^2 Jfb (``assemble``) is tau(k (1 - p phi inv)^2) =
        # tau(k (t inv)^2): as one trace (J3 = Jfb = 0), free of the cancellation of O(1)
        # terms where a data-rich client's p is near 1 (gamma 1e-12 beside 2: bias 6.9e-17
        # for ~1e-29, risk 1.00005551e-12 for 1e-12 at lam 1000).
        def cross(s, P, T):
            f, q = phi(s), 1.0 / (s + lam)
            k = (lam * q) ** 2
            inv = 1.0 / (P * f + T)
            inv2 = inv * inv
            return k * (T * inv) ** 2, k * inv2, k * psi(s) * inv2, lam * f * q * q * inv

        J0, J1, Jfv, J4 = mp_expect(gam, cross, P, T, peak=z)
        J = np.array([J0, J1, Jfv, zero, zero, J4])
        if own is None:
            own = isotropic_factors(gam, np.full(gam.shape, lam))[1]
    return D, var_b, Eb, Ev, J, own


#: Newton iterations of ``_newton`` before the nested solves take over, and its stopping rule
#: (the largest relative step; the error after it is of order its square).
_NEWTON, _STEP_TOL = 40, 1e-13


def _newton(gam, p, count, phi, mean_phi, peak):
    """(g, t) of ``_subordination`` by Newton's method on the system G_l(t_l) = g,
    sum_l count_l g t_l = M - 1 (the Jacobian is diagonal in t bordered by g: one scalar
    elimination, dt_l = (r_l - dg) / D_l with r_l = G_l - g), each step halved until t, g
    stay positive and the relative residual decreases; where that fails, in the logarithms
    (``_log_newton``); None if neither converges. Start: the FedAvg objective's closed forms
    (``finite_clients.identity.moments``) with phi(S_l) replaced by tau(phi(S_l)) S_l."""
    m_tot = count.sum()
    q = p * mean_phi
    try:
        scale = float(np.sum(count * q))       # solve_g starts at g = 1: weights summing to 1
        if not 0.0 < scale < np.inf:           # a flat objective (tau(phi(S)) = 0): no start
            return None
        g = solve_g(gam, q / scale, count) / scale
    except (ValueError, SolverError):
        return None
    # A client whose p_l g reaches 1 - 1/gamma_l's cap has t_l = 0 in the closed form, where
    # the root's is small but positive (gamma [1e100, 0.5], uniform weights, pFedMe: 2.8e-14;
    # the relative steps dt_l / t_l divided by 0, then the nested solves took 3 s): eps / g.
    # A client with tau(phi(S_l)) = 0 in floating point (MAML-FL with 1/alpha at its whole
    # spectrum: gamma 1e100 beside 0.5) has b_l = 0, G_l(t) = 1/t: t_l = 1/g (was nan).
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(q > 0, np.maximum(q * moments(gam, count, q, g)[1],
                                       np.finfo(float).eps / g), 1.0 / g)
    start = (g, t)

    def state(g, t):
        G, D = mp_expect(gam, lambda s, P, T: (1.0 / (P * phi(s) + T),
                                               1.0 / (P * phi(s) + T) ** 2),
                         p[:, None], t[:, None], peak=peak)
        r, r0 = G - g, (m_tot - 1.0) - np.sum(count * g * t)
        return r, r0, D, np.sum((r / g) ** 2) + (r0 / m_tot) ** 2

    try:
        r, r0, D, merit = state(g, t)
        for _ in range(_NEWTON):
            dg = (r0 - np.sum(count * g * r / D)) / (np.sum(count * t) - np.sum(count * g / D))
            dt = (r - dg) / D
            if max(abs(dg) / g, np.max(np.abs(dt) / t)) <= _STEP_TOL:
                return g + dg, t + dt
            for _ in range(30):
                g1, t1 = g + dg, t + dt
                if g1 > 0 and np.all(t1 > 0):
                    new = state(g1, t1)
                    if new[3] < merit:
                        break
                dg, dt = dg / 2, dt / 2
            else:
                # A merit at rounding: the determinant ~ 1/M turns r0's rounding (M eps) into
                # steps of relative size ~ M eps (2^52 identical clients: 1e-2).
                if merit <= _STEP_TOL ** 2:
                    return g, t
                break
            g, t = g1, t1
            r, r0, D, merit = new
    except SolverError:
        pass
    return _log_newton(gam, p, count, phi, peak, *start)


def _log_newton(gam, p, count, phi, peak, g, t):
    """``_newton`` in log g and log t_l from (g, t): residuals log(G_l / g), log(sum_l count_l
    g t_l / (M - 1)), steps halved until their sum of squares decreases; None if it does not
    converge. Far from the root G_l(t) is about a power of t ((1 - 1/gamma_l) / t from S_l's
    atom at 0, ~ t^-1/2 from a double zero of phi inside S_l's spectrum): MAML-FL at gamma
    [1e3, 0.5], alpha 2 took 3 steps from g = 1.33 to the root 8012 (the nested solves 3.5 s)."""
    m_tot = count.sum()

    def state(g, t):
        G, D = mp_expect(gam, lambda s, P, T: (1.0 / (P * phi(s) + T),
                                               1.0 / (P * phi(s) + T) ** 2),
                         p[:, None], t[:, None], peak=peak)
        shares = np.sum(count * g * t)
        r, r0 = np.log(G / g), np.log(shares / (m_tot - 1.0))
        return r, r0, -t * D / G, count * g * t / shares, np.sum(r ** 2) + r0 ** 2

    try:
        r, r0, a, w, merit = state(g, t)
        for _ in range(_NEWTON):
            # r_l + a_l x_l - y = 0 and r0 + y + sum_l w_l x_l = 0 (a_l in [-1, 0), w_l > 0
            # summing to 1: the denominator is at most 0, and 0 only at pure atoms).
            y = (np.sum(w * r / a) - r0) / (1.0 + np.sum(w / a))
            x = (y - r) / a
            if max(abs(y), np.max(np.abs(x))) <= _STEP_TOL:
                return g * np.exp(y), t * np.exp(x)
            for _ in range(30):
                new = state(g * np.exp(y), t * np.exp(x))
                if new[-1] < merit:
                    break
                if merit <= _STEP_TOL ** 2:     # at rounding: no decrease left to find
                    return g, t
                y, x = y / 2, x / 2
            else:
                return None
            g, t = g * np.exp(y), t * np.exp(x)
            r, r0, a, w, merit = new
    except SolverError:
        return None
    return None


def _subordination(gam, p, count, phi, peak=None):
    """g = tau(A^-1) and t_l of step 3 for A = sum_l p_l phi(S_l).

    Given g, each t_l solves G_l(t) = tau((p_l phi(S_l) + t)^-1) = g (G_l decreases); then
    H(g) = sum_l count_l g t_l(g) = sum_l count_l tau(t_l / (b_l + t_l)) decreases in g, from
    M (g -> 0) to below M - 1, and the root of H(g) = M - 1 is the constraint
    sum_l t_l = (M - 1) / g. g H'(g) = sum_l count_l g (t_l - g / D_l) with D_l = -G_l'(t_l).
    Newton's method on the whole system (``_newton``) finds that root first; where it does not
    converge, the nested solves below (a bracketed root in g around bracketed roots in t)
    find it. ``peak``: phi's zero inside (0, infinity) (``own_objective.phi_zero``), where the
    integrands peak as t_l -> 0.
    """
    m_tot = count.sum()
    mean_phi = mp_expect(gam, lambda s: (phi(s),))[0]
    if m_tot == 1:
        # A = phi(S_i): t = 0 and g = tau(phi(S_i)^-1).
        return float(mp_expect(gam, lambda s: (1.0 / phi(s),))[0, 0]), np.zeros(1)
    found = _newton(gam, p, count, phi, mean_phi, peak)
    if found is not None:
        return found

    def inner(g):
        def fun(t, mask):
            G, D = mp_expect(gam[mask], lambda s: (
                1.0 / (p[mask, None] * phi(s) + t[:, None]),
                1.0 / (p[mask, None] * phi(s) + t[:, None]) ** 2), peak=peak)
            return 1.0 / G - 1.0 / g, t * D / G ** 2

        # G_l(t) < 1/t gives hi; Jensen, G_l(t) >= 1/(p_l tau(phi) + t), and S_l's atom at 0,
        # G_l(t) >= (1 - 1/gamma_l) / t, give lo where positive; else halve toward 0 (small t
        # next to a zero of phi on the spectrum fails the quadrature, taken for a cap).
        hi = np.full(gam.shape, 1.0 / g)
        lo = np.maximum(1.0 / g - p * mean_phi, np.maximum(1.0 - 1.0 / gam, 0.0) / g)
        # A client whose p_l tau(phi) is below rounding of 1 / g (a weight dwarfed by the
        # others') has t_l in [lo, hi] = [hi, hi] to double precision: t_l = 1 / g, where the
        # bracketed solve would find f(lo) > 0 by rounding and refuse.
        at_hi = hi - lo <= 8 * np.finfo(float).eps * hi
        t = hi.copy()
        if at_hi.all():
            return t
        solve = ~at_hi
        fun_solve = (lambda x, mask: fun(x, within(solve, mask)))
        bad = ~(lo[solve] > 0)
        # Both bounds can be tight to rounding (a heavy client: the atom's (1 - 1/gamma_l) / g
        # with its continuous part ~ 1/gamma_l below rounding), where f(lo) > 0 by rounding
        # refused the bracket: 1e-9 below it.
        start = np.where(bad, hi[solve], lo[solve] * (1 - 1e-9))
        lo_s = halve_to_bracket(fun_solve, start, bad,
                                halvings=200,
                                what="finite-clients limit: the subordination equations")
        t[solve] = increasing_root(fun_solve, lo_s, hi[solve],
                                   what="subordination t of the global model")
        return t

    def outer(gv, mask):
        g = gv[0]
        t = inner(g)
        D = mp_expect(gam, lambda s: (1.0 / (p[:, None] * phi(s) + t[:, None]) ** 2,),
                      peak=peak)[0]
        return (np.array([m_tot - 1.0 - np.sum(count * g * t)]),
                np.array([np.sum(count * g * (g / D - t))]))

    # H >= M - g sum_l count_l p_l tau(phi) (Jensen) gives lo; double g for hi.
    total = float(np.sum(count * p * mean_phi))
    if not total > 0:
        raise SolverError("finite-clients limit: the global objective is flat (tau(phi(S)) "
                          "= 0 in floating point), so its minimizer is not unique; move alpha "
                          "or lam away from that point")
    # A client with gamma_l < 1 and phi(S_l) invertible caps g at tau((p_l phi(S_l))^-1),
    # where its t_l reaches 0 (beyond it t_l < 0 puts a pole on S_l's spectrum); the root has
    # every t_l > 0 (the other clients' terms are positive), so it lies in (lo, cap).
    cap = global_cap(gam, p, phi)
    lo = 1.0 / total

    failure = None      # the last solve that failed past hi (a quadrature's names its peak)

    def pinned(g):
        # The root lies in (g, cap), a gap at rounding level (one client's p_l phi(S_l)
        # dwarfing the others'): g and its t_l stand for it where the constraint
        # sum_l count_l g t_l = M - 1 holds there to the inner solves' accuracy (RTOL on each
        # t_l, terms of total ~ M), otherwise the root is out of double precision's reach.
        try:
            t = inner(g)
        except SolverError:
            t = None
        if t is not None and abs(m_tot - 1.0 - np.sum(count * g * t)) <= 10 * RTOL * m_tot:
            return g, t
        # Near pooled N = d the global model's scale g grows like 1 / (N/d - 1) and meets the
        # cap as well: 20 clients at N/d - 1 = 1e-3 blamed their weights, 0.026 to 0.072.
        if failure is not None and "peak" in str(failure):
            raise SolverError(
                f"finite-clients limit: the solves for tau(A^-1) fail from g = {g:.6g} on, "
                f"not at a cap: {failure}; that client's t_l shrinks as the clients' gamma "
                "spread: bring them closer to each other, or take alpha with 1/alpha outside "
                "the spectra")
        excess = float(np.sum(count / gam)) - 1.0
        why = (f"pooled N is near d (N/d - 1 = {excess:.3g}, where g grows like 1 / (N/d - 1)): "
               "lower the clients' gamma" if excess < 0.1 else
               f"one client's weight p_l phi(S_l) dwarfs the others' beyond double precision "
               f"(weights {_show(p)}, gamma {_show(gam)}): bring the clients' gamma (and "
               "weights) closer to each other")
        raise SolverError(
            "finite-clients limit: tau(A^-1) is pinned within rounding of the value where one "
            f"client's t_l reaches 0 ({g:.17g} vs {cap:.17g}): {why}")

    def near_cap(g):
        # Without a cap (no client with gamma_l < 1 and phi(S_l) invertible) nothing pins g.
        return np.isfinite(cap) and not cap - g > _PINNED * cap

    if near_cap(lo):
        return pinned(min(lo, cap * (1.0 - _PINNED)))
    hi = min(2.0 * lo, 0.5 * (lo + cap))
    # As many more doublings as lo lies below 1 (one client's p_l tau(phi) dwarfing the
    # others' puts it far below the root: gamma 1e60 beside 0.5 at alpha = 30, 1e-60 times).
    for _ in range(200 + int(max(0.0, -np.log2(lo)))):
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                above = outer(np.array([hi]), None)[0][0] >= 0
        except SolverError as exc:
            failure = exc
            # Past a cap the quadrature did not see (phi(S_l) not invertible, or the inner
            # solves' rounding next to it): hi caps g from now on; step back.
            cap, hi = hi, 0.5 * (lo + hi)
            continue
        if above:
            break
        if near_cap(hi):
            return pinned(hi)
        # Toward the cap by factors of 1024 in the gap: a root pinned next to it (one client
        # dwarfing the others) is bracketed, or refused, in a few steps.
        lo, hi = hi, (min(2.0 * hi, cap - (cap - hi) / 1024.0) if np.isfinite(cap)
                      else 2.0 * hi)
    else:
        raise SolverError("finite-clients limit: no bracket for tau(A^-1)")
    g = float(increasing_root(outer, np.array([lo]), np.array([hi]),
                              what="tau(A^-1) of the global model")[0])
    return g, inner(g)


#: Relative gap between g and the cap below which the root is taken as unresolvable: the
#: inner solves' t_l carry relative errors ~ RTOL (1e-13 ~ 500 eps), and near the cap
#: H(g) = M - 1 turns on the capped client's t_l ~ (cap - g) / D_l alone.
_PINNED = 1e-11


def _show(values):
    return "[" + ", ".join(f"{v:.3g}" for v in np.ravel(values)) + "]"
