"""Exact gradients of a federation's mean finite-M risk in the client weights and the tuning.

``riskcalc.advise`` minimizes the mean risk (1/M) sum_j R_j over the client weights p and the
tuning; this module gives that mean and its gradient at the cost of a few evaluations of the
limits, whatever M (finite differences need M + 1). Derived here, for Sigma = I: the FedAvg
objective (FedAvg, FTFA, RTFA: ``finite_clients.identity``) and MAML-FL's and pFedMe's own
objectives (``finite_clients.own``), paper 003 (``003_4b976ddf5225c17e.txt``) eqs. 6-14.

Structure. In both routes every per-group quantity is a function of the group's own
variables v_l (its weight p_l, its RTFA penalty lam_l; the shared alpha or lam of MAML-FL and
pFedMe) and of the scalar g = tau(A^-1), except through three sums over the groups
(``finite_clients.identity.assemble``): Q = 1/g^2 - sum_l n_l q_l, B = sum_l n_l wb_l,
V = sum_l n_l wv_l. The own route adds per-group shifts t_l(v_l, g), the roots of
G_l(t_l; v_l) = tau((p_l phi(S_l) + t_l)^-1) = g; g solves one scalar equation
K(v, g) = sum_l k_l(v_l, g) = 0 (``solve_g``: k_l = n_l p_l g / (1 + gamma_l p_l g) - n_l/M;
own route: k_l = n_l / M (M - 1) - n_l g t_l). So, with mean = sum_l n_l R_l / M:

1. a_Q, a_B, a_V = dmean/dQ, dmean/dB, dmean/dV at fixed (v, g) (three re-assemblies of
   the per-group pieces, no quadrature);
2. psi_l = d/dv_l of n_l (R_l / M - a_Q q_l + a_B wb_l + a_V wv_l) at fixed (g, Q, B, V), and
   psi_g the same summed over l in g, plus a_Q dQ/dg|explicit = -2 a_Q / g^3 (the shifts
   follow: dt_l/dv = (dG_l/dv - [v = g]) / D_l, D_l = -dG_l/dt = tau((b_l + t_l)^-2));
3. implicit differentiation of K = 0: dg/dv_l = -(dk_l/dv_l) / (dK/dg), and
   dmean/dv_l = psi_l + psi_g dg/dv_l (a shared tuning: the sums over l).

Every partial derivative of an elementwise function is taken by a complex step,
f'(x) = Im f(x + i h) / h with h = 1e-30: no difference of two values, so it is exact to
rounding (Squire and Trapp, SIAM Rev. 40, 1998); the routes' per-group functions are written
complex-safe for this (``moments``, ``sources``). One complex evaluation perturbs a variable
in every group at once, since group l's functions see only its own v_l; the real values are
the real parts of these evaluations (exact to O(h^2)). MAML-FL's and pFedMe's traces
(``own_sources``' quadratures, ~95% of a gradient as three complex-step passes) come instead
from one real pass with their partial derivatives in p_l, t_l, the tuning and g, derived
(``_own_jet``), each step's imaginary parts set from them: 0.6-0.7x the gradient's time,
within 1e-13 of the complex steps (tests) and 1.7e-15 of 30-digit mpmath differences of the
traces.
Checks (tests): central differences of ``clients_limit``'s mean risk.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import nonnegative
from riskcalc.linear.finite_clients.identity import (assemble, check_pooled, federation_totals,
                                                     moments, not_positive, solve_g, sources,
                                                     summands)
from riskcalc.linear.finite_clients.target_traces import continuous
from riskcalc.linear.finite_clients.own import _subordination
from riskcalc.linear.finite_clients.own_objective import (maml_factors, objective,
                                                          pfedme_factor, quadrature_peak)
from riskcalc.linear.engine.marchenko_pastur import isotropic_factors
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.model import check_lam

#: The complex step.
H = 1e-30
#: Methods whose gradient is implemented (Sigma = I).
METHODS = ("fedavg", "ftfa", "rtfa", "maml_fl", "pfedme")


def mean_risk_gradient(method: str, *, gamma, sigma, r, weights, tuning=None):
    """The mean finite-M risk of a federation (Sigma = I) and its exact gradient in the client
    weights and the tuning (paper 003, ``003_4b976ddf5225c17e.txt``, eqs. 6-14 at finite M;
    the gradient is derived in the module docstring).

    Parameters
    ----------
    method : {"fedavg", "ftfa", "rtfa", "maml_fl", "pfedme"}
    gamma, sigma, r : ndarray (M,)
    weights : ndarray (M,)
        Positive client weights summing to one (as ``clients_limit`` normalizes them).
    tuning : ndarray (M,) or float, optional
        RTFA's per-client lam (> 0), or the shared alpha of MAML-FL / lam of pFedMe.

    Returns
    -------
    mean : float
        (1/M) sum_j R_j, as ``clients_limit(...).mean_risk`` (to rounding).
    grad_p : ndarray (M,)
        d mean / d p_j with p free (the limits' formulas at unnormalized weights).
    grad_tuning : ndarray (M,) or float or None
        d mean / d lam_j (RTFA), d mean / d alpha or lam (MAML-FL, pFedMe), None otherwise.

    Raises
    ------
    ValueError
        For a method outside ``METHODS``, or pooled N <= d.
    SolverError
        If a fixed point does not converge.
    """
    if method not in METHODS:
        raise ValueError(f"gradients are implemented for {', '.join(METHODS)}; got {method}")
    gam, sig, rr, p = (np.asarray(a, dtype=float).ravel() for a in (gamma, sigma, r, weights))
    count = np.ones(gam.size)
    if method not in ("fedavg", "ftfa"):
        # As clients_limit (rtfa at lam = -1 or None answered FedAvg-like numbers, pFedMe at
        # lam = 1e300 was an OverflowError, MAML-FL / pFedMe without it a TypeError).
        if tuning is None:
            raise ValueError(f"method {method} needs tuning (its lam or alpha)")
        tuning = nonnegative("tuning", tuning, ndim=1 if method == "rtfa" else 0)
        if method != "maml_fl":
            check_lam(tuning)
    check_pooled(gam, count)
    route = (_Own if method in ("maml_fl", "pfedme") else _FedAvgObjective)(
        method, gam, sig, rr, count, p, tuning)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        return _adjoint(route, count)


def _adjoint(route, count):
    """Steps 1-3 of the module docstring for a route."""
    m_tot = count.sum()
    names = ["p", "g"] + (["tuning"] if route.tuned else [])
    moved = {n: route.v0(n) for n in names}
    parts = {n: route.parts(moved[n]) for n in names}
    # The real values are the real parts of any complex step (exact to O(h^2)).
    pieces, qv, wb, wv = _real(parts["p"])
    totals = federation_totals(count, route.g, qv, wb, wv)
    if not totals[0] > 0:
        raise not_positive(totals[0], route.gam, count)
    mean = float(count @ route.finish(pieces, totals) / m_tot)
    a = []
    for k in range(3):
        shifted = np.array(totals, dtype=complex)
        shifted[k] += 1j * H
        a.append(count @ (route.finish(pieces, tuple(shifted)).imag / H) / m_tot)

    def psi(part):
        r_c, q_c, b_c, w_c = part
        r_c = route.finish(r_c, totals)
        return count * (r_c / m_tot - a[0] * q_c + a[1] * b_c + a[2] * w_c).imag / H

    partial = {n: psi(parts[n]) for n in names}
    k_part = {n: route.k_terms(moved[n]).imag / H for n in names}
    psi_g = partial["g"].sum() - 2.0 * a[0] / route.g ** 3
    k_g = k_part["g"].sum()
    grads = {}
    for n in ("p", "tuning"):
        if n not in partial:
            grads[n] = None
            continue
        dg = -k_part[n] / k_g
        grads[n] = partial[n] + psi_g * dg
        if route.shared_tuning and n == "tuning":
            grads[n] = float(np.sum(grads[n]))
    return mean, grads["p"], grads["tuning"]


def _real(obj):
    """The real part of every array in a nest of tuples."""
    if isinstance(obj, tuple):
        return tuple(_real(o) for o in obj)
    return np.real(obj)


class _FedAvgObjective:
    """FedAvg, FTFA, RTFA (``finite_clients.identity``): per-group functions of (p_l, lam_l, g)."""

    shared_tuning = False

    def __init__(self, method, gam, sigma, r, count, p, tuning):
        self.method, self.gam, self.sigma, self.r, self.count, self.p = (method, gam, sigma, r,
                                                                          count, p)
        self.tuned = method == "rtfa"
        self.lam = (np.broadcast_to(np.asarray(tuning, float), gam.shape) if self.tuned
                    else np.zeros_like(gam))
        self.g = solve_g(gam, p, count)
        self.own0 = (isotropic_factors(gam, self.lam)[1] if method == "rtfa" else None)

    def v0(self, name=None):
        """The variables (p, g, lam), the one named shifted by i H."""
        v = {"p": self.p.astype(complex), "g": complex(self.g), "tuning": self.lam.astype(complex)}
        if name is not None:
            v[name] = v[name] + 1j * H
        return v

    def parts(self, v):
        """Per group: the risk's pieces before the sums, q_l, wb_l, wv_l."""
        p, g, lam = v["p"], v["g"], v["tuning"]
        x, u, var_r = moments(self.gam, self.count, p, g)
        own = self.own0
        if self.method == "rtfa" and np.any(lam.imag):
            # The oracle ridge variance gamma tau(S (S + lam)^-2) = gamma (m - lam m')(-lam),
            # complex-safe in lam (the atom at 0 of gamma > 1 gives S (S + lam)^-2 = 0).
            m1, m2 = continuous(self.gam, lam)
            own = self.gam * (m1 - lam * m2)
        src = sources(self.method, self.gam, lam, p, x, u, var_r, own=own)
        qv, wb, wv = summands(self.r, self.sigma, self.gam, p, g, *src[:4])
        return (p, g, src), qv, wb, wv

    def finish(self, pieces, totals):
        p, g, src = pieces
        bias, var = assemble(self.r, self.sigma, self.gam, p, self.count, g, *src,
                             totals=totals)
        return bias + var

    def k_terms(self, v):
        """Group l's term of K (module docstring)."""
        p, g = v["p"], v["g"]
        return self.count * p * g / (1.0 + self.gam * p * g) - self.count / self.count.sum()


class _Own(_FedAvgObjective):
    """MAML-FL and pFedMe (``finite_clients.own``): the shifts t_l(p_l, tuning, g) follow each
    complex step by implicit differentiation of G_l(t_l) = g. ``own_sources``' traces and
    their partial derivatives in (p_l, t_l, tuning, g) come from one real quadrature pass
    (``_own_jet``); each step's imaginary parts are their directional derivatives."""

    shared_tuning = True

    def __init__(self, method, gam, sigma, r, count, p, tuning):
        self.method, self.gam, self.sigma, self.r, self.count, self.p = (method, gam, sigma, r,
                                                                          count, p)
        self.tuned, self.tun = True, float(tuning)
        # With phi's zero as the quadrature's peak, as the limits themselves (own.py): MAML-FL
        # with 1/alpha inside a client's spectrum (h39quad F1).
        self.peak = quadrature_peak(method, self.tun, gam, count)
        self.g, self.t = _subordination(gam, p, count, objective(method, self.tun)[0],
                                        self.peak)
        self.jet = _own_jet(method, gam, self.tun, p, self.t, self.g, self.peak)
        self.D = self.jet["D"][0]
        # The oracle variance: least squares (MAML-FL's min-norm interpolation) or ridge.
        self.own0 = isotropic_factors(gam, np.full(gam.shape, objective(method, self.tun)[2]))[1]

    def v0(self, name=None):
        v = {"p": self.p.astype(complex), "g": complex(self.g), "tuning": complex(self.tun)}
        if name is not None:
            v[name] = v[name] + 1j * H
        # t_l follows: dt = (dG/dv - [v = g]) / D (G_l does not depend on g).
        G = self.jet["G"]
        moved = {"p": G[1], "g": -1.0, "tuning": G[3], None: 0.0}[name]
        v["t"] = self.t + 1j * H * moved / self.D
        return v

    def parts(self, v):
        p, g, tun, t = v["p"], v["g"], v["tuning"], v["t"]
        # The step's direction in (p_l, t_l, tuning, g), and each trace moved along it.
        way = [np.imag(x) / H for x in (p, t, tun, g)]

        def moved(name):
            value, *partial = self.jet[name]
            return value + 1j * H * sum(d * w for d, w in zip(partial, way))

        D, var_b, Eb, Ev = (moved(n) for n in ("D", "var_b", "Eb", "Ev"))
        zero = np.zeros_like(self.gam)
        if self.method == "maml_fl":
            # lam = 0 (``own_sources``): J0 = 1 - 1/gamma, J1 = J0 / t^2 (complex-safe in t).
            perp = np.maximum(1.0 - 1.0 / self.gam, 0.0)
            J = np.array([perp, np.where(perp > 0, perp / t ** 2, 0.0), zero, zero, zero, zero])
            own = self.own0
        else:
            J = np.array([moved("J0"), moved("J1"), moved("Jfv"), zero, zero, moved("J4")])
            own = self.own0 + 1j * H * self.jet["own"] * way[2]
        src = (D, var_b, Eb, Ev, J, own)
        qv, wb, wv = summands(self.r, self.sigma, self.gam, p, g, *src[:4])
        return (p, g, src), qv, wb, wv

    def k_terms(self, v):
        m_tot = self.count.sum()
        return self.count * (m_tot - 1.0) / m_tot - self.count * v["g"] * v["t"]


def _tuning_derivatives(method: str, tuning: float):
    """(dphi, dpsi): the derivatives in the tuning of ``own_objective.objective``'s phi and
    psi (paper 003, eqs. 12-14), in its scaled forms (``maml_factors``, ``pfedme_factor``:
    the branch at tuning 1 as there)."""
    if method == "maml_fl":
        a, b = maml_factors(tuning)
        da, db = (0.0, 1.0) if tuning <= 1 else (-1.0 / tuning ** 2, 0.0)

        def dphi(s):
            return 2.0 * s * (a - b * s) * (da - db * s)

        def dpsi(s):
            return 4.0 * s * (a - b * s) ** 3 * (da - db * s)

        return dphi, dpsi
    a, da = pfedme_factor(tuning), float(tuning > 1)
    return ((lambda s: s * (da - a / (s + tuning)) / (s + tuning)),
            (lambda s: 2.0 * a * s * (da - a / (s + tuning)) / (s + tuning) ** 2))


def _own_jet(method, gam, tun, p, t, g, peak):
    """``own_sources``' traces G = tau(i), D = tau(i^2), var_b, Eb, Ev and (pFedMe) J0, J1, Jfv,
    J4, with i = (p_l phi(S_l) + t_l)^-1, each with its partial derivatives in p_l, t_l, the
    tuning and g: name -> (value, d/dp, d/dt, d/dtuning, d/dg), elementwise over the groups;
    "own": d/dlam of pFedMe's oracle variance gamma tau(S (S + lam)^-2). One real quadrature
    pass (``mp_expect``; the values alone decide its rules, the derivatives taken on them).
    Derived from the integrands of ``own_sources``: an integrand c(s) i^k has d/dt = -k c
    i^(k+1), d/dp = -k c phi i^(k+1), d/dtuning = c' i^k - k c p phi' i^(k+1)."""
    phi, psi, lam = objective(method, tun)
    dphi, dpsi = _tuning_derivatives(method, tun)
    names = ["G", "D", "var_b", "Eb", "Ev"] + (["J0", "J1", "Jfv", "J4"] if lam else [])

    n = len(names)

    def fun(s, P, T):
        f, df, v, dv = phi(s), dphi(s), psi(s), dpsi(s)
        i = 1.0 / (P * f + T)
        i2 = i * i
        out = np.empty((4 * n + bool(lam),) + i.shape)
        val, dp, dt, dtun = out[:n], out[n:2 * n], out[2 * n:3 * n], out[3 * n:4 * n]
        # Each c i^k: its value, d/dt = -k c i^(k+1), and c' i^k for d/dtuning.
        e = i - g
        val[0], val[1], val[2], val[3], val[4] = i, i2, e * e, f * f * i2, v * i2
        dt[0], dt[1], dt[2] = -i2, -2.0 * i2 * i, -2.0 * e * i2
        dt[3:5] = -2.0 * val[3:5] * i
        dtun[:3] = 0.0
        dtun[3], dtun[4] = 2.0 * f * df * i2, dv * i2
        if lam:
            q = 1.0 / (s + lam)
            k, dk = (lam * q) ** 2, 2.0 * lam * s * q ** 3
            val[6], val[7], val[8] = k * i2, k * v * i2, lam * f * q * q * i
            dt[6:8] = -2.0 * val[6:8] * i
            dt[8] = -val[8] * i
            dtun[6], dtun[7] = dk * i2, (dk * v + k * dv) * i2
            dtun[8] = (f + lam * df - 2.0 * lam * f * q) * q * q * i
            out[4 * n] = -2.0 * s * q ** 3
            dt[5], dtun[5] = 0.0, 0.0               # J0's, set below
        # d/dp = d/dt times phi; d/dtuning adds d/dt times p phi'.
        np.multiply(dt, f, out=dp)
        dtun += dt * (P * df)
        if lam:
            # J0 = k u^2 with u = T i: T enters explicitly too.
            u = T * i
            val[5] = k * u * u
            grad = 2.0 * k * u * i2
            dt[5], dp[5] = grad * P * f, -grad * T * f
            dtun[5] = dk * u * u - grad * T * P * df
        return out

    out = mp_expect(gam, fun, p[:, None], t[:, None], peak=peak, decide=n)
    jet = {name: (out[j], out[n + j], out[2 * n + j], out[3 * n + j], np.zeros_like(gam))
           for j, name in enumerate(names)}
    # var_b = tau((i - g)^2): d/dg = -2 (G - g).
    jet["var_b"] = jet["var_b"][:4] + (-2.0 * (out[0] - g),)
    if lam:
        jet["own"] = gam * out[4 * n]
    return jet
