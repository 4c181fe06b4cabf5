"""FedAvg with ONE local step per round under a shared covariance spectrum (derived here).

Model: as ``fedavg`` (client j: gamma_j, r_j, sigma_j, weight p_j; theta_0 and u_j uniform in
direction; w_0 = 0) with rows N(0, Sigma) shared by every client, Sigma with spectrum H
(``riskcalc.Spectrum``), and the risk E[(w - theta_i)^T Sigma (w - theta_i)] (DESIGN.md, fourth
round). S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio gamma_j, A = sum_j p_j S_j.

1. Round map (K = 1). One local step v_j = w - eta (S_j w - b_j) and the server step give
   w <- (I - g D) w + g eta sum_j p_j b_j with D = eta A: gradient descent on the pooled
   objective. With R_T(x) = (1 - (1 - g x)^T) / x (``fedavg``, step 1) ::

       w_T - theta_i = -(I - g D)^T theta_0 + eta R_T(D) sum_j p_j S_j u_j - u_i
                       + eta R_T(D) sum_j p_j X_j^T eps_j / n_j,
       B_i = signal^2 tau(Sigma (I - g D)^{2T}) + sum_j p_j^2 r_j^2 eta^2 tau(S_j^2 R Sigma R)
             - 2 p_i r_i^2 eta tau(Sigma R S_i) + r_i^2 tau(Sigma),
       V_i = sum_j p_j^2 sigma_j^2 gamma_j eta^2 tau(S_j R Sigma R),        R = R_T(D).

   Sigma between two functions of D makes two of the traces TWO-point functions (for
   Sigma = I they reduce to one-point traces). The distance ||w_T - w_inf||^2 (unweighted,
   paper 004 Cor. 1's epsilon) needs only tau(F(D)), tau(S_j F(D)), tau(S_j^2 F(D)).
2. Deterministic equivalents (Q(z) = (A - z)^-1, E_B the conditional expectation onto
   B = alg(Sigma), E_H the integral over H). Each row x (weight p_j / n_j) of client j enters
   A through a Sherman-Morrison step with x^T Q x -> d delta, delta = tau(Sigma Q), so ::

       E_B[Q] = Qb(s) = 1 / (c s - z),    c = sum_j c_j,  c_j = p_j e_j,
       e_j = 1 / (1 + p_j gamma_j delta),  delta = E_H[s Qb]

   (the B-valued R-transform of S_j is Sigma times a scalar, so every subordination function
   is affine in s and one scalar c(z) carries the whole solve; ``sigma.py`` has the same
   scalars at z = 0). Conditionally on S_j: E[Q | S_j, B] = (p_j S_j + omega_j)^-1,
   omega_j = (c - c_j) s - z. The two-point functions follow from the same steps on the
   2 x 2 upper triangular pencil [[A - z1, -Sigma], [0, A - z2]] (its inverse has the corner
   Q1 Sigma Q2), where the row forms become the matrix [[delta1, delta12], [0, delta2]]:
   E_B[Q1 Sigma Q2] = Qb1 Qb2 s (1 + kappa delta12), kappa = sum_k p_k^2 gamma_k e_k1 e_k2,
   delta12 = tau(Sigma Q1 Sigma Q2) = e2 / (1 - kappa e2), e_n = E_H[s^n Qb1 Qb2]; and given
   S_j the corner is (p S_j + omega_j1)^-1 s (1 + (kappa - kappa_j) delta12)
   (p S_j + omega_j2)^-1. Reducing S_j (p S_j + omega)^-1 = (I - omega (p S_j + omega)^-1) / p
   (every remaining trace is then an E_H of Qb's), with omega_a Qb_a = 1 - c_ja s Qb_a ::

       tau(Sigma Q)        = delta,                tau(Q) = E_H[Qb],
       tau(Sigma Q S_i)    = e_i E_H[s^2 Qb],      tau(S_j Q) = e_j delta,
       tau(S_j^2 Q)        = gamma_j delta e_j E_H[s] + e_j^2 E_H[s^2 Qb],
       tau(S_j Q1 Sigma Q2) = e_j1 e_j2 delta12,
       tau(S_j^2 Q1 Sigma Q2) = e_j1 e_j2 (b_j e3 + gamma_j delta12 (E_H[s] - c_j1 E_H[s^2 Qb1]
                                - c_j2 E_H[s^2 Qb2] + c_j1 c_j2 e3)),

   b_j = 1 + (kappa - kappa_j) delta12; since gamma_j c_j1 c_j2 = kappa_j the kappa_j e3 terms
   cancel and b_j e3 + gamma_j delta12 c_j1 c_j2 e3 = e3 / (1 - kappa e2), the form summed
   over the clients in ``fedavg_sigma_curves``. (tau(S_j Q1 Sigma Q2) comes out the same by a
   direct leave-one-row-out computation: a check of the conditional step.) For Sigma = I all
   of this is the scalar subordination of ``fedavg`` with K = 1.
3. Traces of functions of D are contour integrals on the ellipse of ``fedavg`` around D's
   nonzero spectrum [a, b] (tau(h (z - D)^-1) = -tau(h Q(z / eta)) / eta), the two-point ones
   double integrals over the same nodes (the integrand has no singularity at z1 = z2). Every
   client function vanishes on D's null space (u_j, noise and S_j live in the range of D),
   except the signal term, written tau(Sigma) + oint ((1 - g z)^{2T} - 1) tau(Sigma (z - D)^-1)
   so that the null space counts with its Sigma-weight tau(Sigma P_null) (the tests compare
   it with the ridgeless kappa of ``riskcalc.linear.engine.kappa``). The solve follows c(z)
   from a far ellipse inwards by Newton's method (the physical branch: Im delta > 0 on the
   upper half plane), as ``subordination.solve``.
4. Edges of A's nonzero spectrum (derived here). On the real axis off the spectrum,
   x = z / c lies off the support of H; with y = E_H[s / (s - x)] and t = -1 / delta the
   equation for c reads sum_j p_j / (p_j gamma_j - t) = y (a secular equation, increasing in t
   between its poles) and c = -t y, so z(x) = -x t(x) y(x) is explicit up to that root. The
   top edge is the first local minimum of z(x) coming down from x = +inf (x > max s, t above
   every pole); the bottom edge of the nonzero part the first local maximum coming from z = 0:
   from x = 0+ when sum_j 1 / gamma_j > 1 (t < 0), from x_* < 0 with E_H[s / (s - x_*)] =
   sum_j 1 / gamma_j otherwise (A has the atom 1 - sum_j 1 / gamma_j at 0; 0 < t < min p_j
   gamma_j). Sigma = I, M = 1: (1 +/- sqrt(gamma))^2.

K >= 2 local steps: the client's filter q(S_j) is a polynomial whose B-valued R-transform is no
longer Sigma times a scalar (``sigma.fedavg.curves``: a linear pencil with K x K row forms per
client, ``sigma_pencil``). The clients' own models after their local step: ``rounds_limit``
takes them from the pencil with K = 1 (``sigma.fedavg.own``); this module's ``local`` refuses.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import (contraction, ellipse, round_filters,
                                              round_horizon, settle)
from riskcalc.linear.dynamics.sigma.budget import pairs_refused

_NEWTON_ITER = 60
_NEWTON_TOL = 1e-9
#: Most node pairs of the double contour (about 10 s at 1e7 node pairs, 2 atoms).
MAX_PAIRS = 1e7


# --- edges of A's nonzero spectrum (module docstring, step 4) --------------------------------

def _secular(y, lo, hi, pg, p):
    """t in (lo, hi) with sum_j p_j / (p_j gamma_j - t) = y, increasing in t there (lo, hi:
    poles, 0, or infinite); the bracket walks from an interior point toward the root."""
    def f(t):
        return float(np.sum(p / (pg - t))) - y
    m = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (
        lo + 1.0 if np.isfinite(lo) else hi - 1.0)
    end, side = (lo, -1.0) if f(m) > 0 else (hi, 1.0)
    prev = m
    for k in range(1, 1100):
        x = m + side * (2.0 ** k - 1.0) if np.isinf(end) else end + (m - end) * 0.5 ** k
        if side * f(x) >= 0:
            a, b = sorted((prev, x))
            return brentq(f, a, b, xtol=1e-300, rtol=1e-15, maxiter=400)
        prev = x
    raise SolverError("rounds limit with a spectrum: the secular equation of the support "
                      "edges has no root in its bracket")


def _secular_scan(y, lo, hi, pg, p):
    """``_secular`` for every y (n,) of a scan at once: the same bracket walk, then 64
    bisections. The roots agree with Brent's to rounding but not bit for bit, so they only
    place the extremum on the scan (``_extremum``); its value is ``_secular``'s, as before
    (measured: ``pencil_edges``' fold of Algorithm 1's round map, ``test_rounds_sigma_alg1_
    fold``, was no longer confirmed when the clients' ends moved by one ulp)."""
    y = np.asarray(y, float)
    m = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (
        lo + 1.0 if np.isfinite(lo) else hi - 1.0)
    up = np.sum(p / (pg - m)) <= y                       # the root lies above m
    end = np.where(up, hi, lo)
    prev, x = np.full(y.size, m), np.full(y.size, m)
    todo = np.ones(y.size, bool)
    for k in range(1, 1100):
        i = np.flatnonzero(todo)
        side, far = np.where(up[i], 1.0, -1.0), np.isinf(end[i])
        e = np.where(far, m, end[i])
        step = np.where(far, m + side * (2.0 ** k - 1.0), e + (m - e) * 0.5 ** k)
        prev[i], x[i] = x[i], step
        todo[i] = side * (np.sum(p / (pg - step[:, None]), axis=1) - y[i]) < 0
        if not todo.any():
            break
    else:
        raise SolverError("rounds limit with a spectrum: the secular equation of the support "
                          "edges has no root in its bracket")
    a, b = np.minimum(prev, x), np.maximum(prev, x)       # f(a) <= 0 <= f(b)
    # 64 bisections: a bracket is no wider than the root's distance to the end it walked
    # toward (or than the root, toward infinity), and 2^-64 of that is below rounding.
    for _ in range(64):
        mid = 0.5 * (a + b)
        low = np.sum(p / (pg - mid[:, None]), axis=1) < y
        a, b = np.where(low, mid, a), np.where(low, b, mid)
    return 0.5 * (a + b)


def _extremum(zscan, zfun, xs, sign):
    """The first local extremum (sign +1 a minimum, -1 a maximum) of zfun along the grid xs
    (ordered from where z is known to lie outside the spectrum; ``zscan``: zfun at all of
    them at once), refined by Brent's method."""
    zs = sign * zscan(xs)
    k = next((i for i in range(1, len(xs) - 1) if zs[i] <= zs[i - 1] and zs[i] <= zs[i + 1]),
             None)
    if k is None:
        raise SolverError("rounds limit with a spectrum: no edge of the round map's spectrum "
                          "found on the scan")
    lo, hi = sorted((xs[k - 1], xs[k + 1]))
    res = minimize_scalar(lambda x: sign * zfun(x), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-15 * (abs(lo) + abs(hi))})
    return sign * min(res.fun, sign * zfun(xs[k]))


#: A scan of (0, 1) dense at both ends (an edge's critical point can sit near either).
_both_ends = 1.0 / (1.0 + np.exp(-np.linspace(-23.0, 23.0, 461)))


#: Distinct inputs whose edges ``edges`` keeps (least recently used dropped first), each of at
#: most ``EDGES_MEMO_BYTES`` (a 65,536-atom spectrum): at most 64 MiB held.
EDGES_MEMO = 64
EDGES_MEMO_BYTES = 1 << 20


def edges(atoms, weights, gam, p):
    """(a, b, mu0): the edges of the nonzero spectrum of A = sum_j p_j S_j and its atom at 0
    (module docstring, step 4).

    A scan of about 800 secular solves (at once: about 4 ms at a few atoms, 70 ms one by
    one) that the routes under a spectrum ask for again with the same arrays at every solve
    (each client's top, the
    pencil's and the circles' windows, every call of ``rounds_limit`` on one federation): the
    result is kept for the last ``EDGES_MEMO`` distinct inputs, keyed on each array's dtype,
    shape and bytes (the solve reads nothing else, so a kept value is the one a new solve would
    return). A failing solve is not kept, nor inputs of more than ``EDGES_MEMO_BYTES``.
    ``edges.cache_clear()`` forgets them."""
    key = tuple(_exact(x) for x in (atoms, weights, gam, p))
    if any(k is None for k in key) or sum(len(k[2]) for k in key) > EDGES_MEMO_BYTES:
        return _edges(atoms, weights, gam, p)
    return _edges_memo(key)


def _exact(x):
    """(dtype, shape, bytes) of x as an array, None for an object array (no bytes to key on)."""
    x = np.ascontiguousarray(x)
    return None if x.dtype.hasobject else (x.dtype.str, x.shape, x.tobytes())


@lru_cache(maxsize=EDGES_MEMO)
def _edges_memo(key):
    # The solve sees the arrays rebuilt from the key: the value depends on the key alone.
    return _edges(*(np.frombuffer(data, dtype).reshape(shape) for dtype, shape, data in key))


edges.cache_clear = _edges_memo.cache_clear
edges.cache_info = _edges_memo.cache_info


def _edges(atoms, weights, gam, p):
    s, h = np.asarray(atoms, float), np.asarray(weights, float)
    pg = p * gam
    inv = float(np.sum(1.0 / gam))
    mu0 = max(0.0, 1.0 - inv)

    def mH(x):
        return np.sum(h * s / (s - np.asarray(x, float)[..., None]), axis=-1)

    def z_of(x, lo, hi):
        y = float(mH(x))
        return -x * _secular(y, lo, hi, pg, p) * y

    def z_scan(xs, lo, hi):
        y = mH(xs)
        return -xs * _secular_scan(y, lo, hi, pg, p) * y

    top_t = (pg.max(), np.inf)
    smax = s.max()
    xs = smax + smax * np.geomspace(1e8, 1e-8, 321)
    b = _extremum(lambda x: z_scan(x, *top_t), lambda x: z_of(x, *top_t), xs, +1)
    if abs(inv - 1.0) < 1e-12:
        return 0.0, float(b), mu0
    # x_* (or x* when inv > 1): E_H[s / (s - x)] = inv on the branch left of min s.
    smin = s.min()
    if inv > 1:
        hi = smin * 0.5
        while mH(hi) < inv:        # the pole of E_H[s / (s - x)] at min s bounds the walk
            hi = smin - (smin - hi) * 0.5
        xend = brentq(lambda x: mH(x) - inv, 0.0, hi, xtol=1e-300, rtol=1e-15)
        xs = xend * _both_ends
        low_t = (-np.inf, 0.0)
    else:
        lo = -smax
        while mH(lo) > inv:
            lo *= 2
        xend = brentq(lambda x: mH(x) - inv, lo, 0.0, xtol=1e-300, rtol=1e-15)
        xs = xend * _both_ends[::-1]
        low_t = (0.0, pg.min())
    a = _extremum(lambda x: z_scan(x, *low_t), lambda x: z_of(x, *low_t), xs, -1)
    return float(a), float(b), mu0


# --- the scalar solve on the contour (module docstring, steps 2-3) ----------------------------

class _Laws:
    """c(z) of A at complex z and the E_H moments of Qb = 1 / (c s - z) the traces need."""

    def __init__(self, atoms, weights, gam, p):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = gam, p
        self.pg = p * gam
        self.mean = float(self.h @ self.s)

    def residual(self, c, z):
        """f(c) = c - sum_j p_j e_j, df/dc and df/dz (c, z: (N,))."""
        Qb = 1.0 / (c[:, None] * self.s - z[:, None])
        delta = (Qb * self.s) @ self.h
        dd_c = -(Qb ** 2 * self.s ** 2) @ self.h
        dd_z = (Qb ** 2 * self.s) @ self.h
        e = 1.0 / (1.0 + self.pg[:, None] * delta)
        f = c - self.p @ e
        de = self.p @ (self.pg[:, None] * e ** 2)
        return f, 1.0 + de * dd_c, de * dd_z

    def solve(self, nodes, t_path, scale):
        """c at the nodes of the ellipse t_path[-1], followed from the far ellipse t_path[0]
        (Euler predictor in z, Newton's method at each stage)."""
        z = nodes(t_path[0])
        c = np.ones_like(z)
        for _ in range(3):          # far out c = 1 - O(1/z): a few fixed-point steps
            c = c - self.residual(c, z)[0]
        for t in t_path:
            zn = nodes(t)
            _, fc, fz = self.residual(c, z)
            c, z = c - fz / fc * (zn - z), zn
            polish = False
            for _ in range(_NEWTON_ITER):
                f, fc, _ = self.residual(c, z)
                step = f / fc
                c = c - step
                if polish:
                    break
                # Quadratic convergence: one more step after a change of 1e-9 reaches
                # rounding (which near an edge stalls above 1e-14: no tighter test).
                polish = np.all(np.abs(step) <= _NEWTON_TOL * (1.0 + np.abs(c)))
            else:
                raise SolverError("rounds limit with a spectrum: Newton's method on the "
                                  f"contour did not converge at t = {t:.3g}")
        m = self.moments(c, z)
        if np.any(m["delta"].imag * np.sign(z.imag) < -1e-12 * scale):
            raise SolverError("rounds limit with a spectrum: the contour solve left the "
                              "physical branch (Im delta < 0 above the real axis)")
        return c, m

    def moments(self, c, z):
        Qb = 1.0 / (c[:, None] * self.s - z[:, None])
        delta = (Qb * self.s) @ self.h
        return {"Qb": Qb, "delta": delta, "m0": Qb @ self.h,
                "m2": (Qb * self.s ** 2) @ self.h,
                "e": 1.0 / (1.0 + self.pg[:, None] * delta)}              # (M, N)


def fedavg_sigma_curves(gam, r, sigma, p, signal, eta, g, rounds, spectrum):
    """Bias, variance and distance to the fixed point of every client at every T of
    ``rounds``, FedAvg with one local step of size ``eta`` and covariance ``spectrum`` (module
    docstring); the dict of ``fedavg.round_map_curves`` (``local`` refuses: not covered).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, eta, g : float
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
        H, uniform signal directions.
    """
    laws = _Laws(spectrum.atoms, spectrum.weights, gam, p)
    a, b, mu0 = edges(spectrum.atoms, spectrum.weights, gam, p)
    a, b = eta * a, eta * b
    if not a > 1e-9 * b:
        raise ValueError("the round map's spectrum reaches 0 (its bottom edge below 1e-9 of its "
                         "top: pooled N near d, sum_j 1/gamma_j = 1, or a covariance spectrum "
                         "of a wide range); move gamma off the threshold")
    rho = contraction(a, b, g)
    settled, over, finite, t_max = round_horizon(rho, rounds)
    on_ellipse, path, w, n = ellipse(a, b, g, rho, t_max)

    def nodes(tt):      # in A's variable z / eta
        return on_ellipse(tt) / eta

    if (n // 2) * n > MAX_PAIRS:
        raise pairs_refused("spectrum", n // 2 * n, MAX_PAIRS, a, b, mu0, t_max, gam)
    _, m = laws.solve(nodes, path, b / eta)
    z = on_ellipse(path[-1])
    Es = laws.mean
    delta, e, m0, m2 = m["delta"], m["e"], m["m0"], m["m2"]
    # The full contour (the lower half by conjugation) for the second variable.
    zf, Wf = np.concatenate([z, z.conj()]), np.concatenate([w / 2j, (w / 2j).conj()])
    Qf = np.concatenate([m["Qb"], m["Qb"].conj()])
    ef = np.concatenate([e, e.conj()], axis=1)
    m2f = np.concatenate([m2, m2.conj()])
    s, h = laws.s, laws.h
    A1, R1 = round_filters(z, g, rounds, finite)
    _, R2 = round_filters(zf, g, rounds, finite)
    with np.errstate(over="ignore", invalid="ignore"):

        def one(F, X):       # (1 / 2 pi i) oint F X dz over the full contour, (nT, ...)
            return ((F * w) @ X.T).imag

        # Two-point integrands (module docstring, step 2), upper half x full contour.
        e2 = (m["Qb"] * (h * s ** 2)) @ Qf.T
        e3 = (m["Qb"] * (h * s ** 3)) @ Qf.T
        kap = (e * (p ** 2 * gam)[:, None]).T @ ef
        d12 = e2 / (1.0 - kap * e2)
        wu, wv = p ** 2 * r ** 2, p ** 2 * sigma ** 2 * gam

        def pair(weight, left=1.0, right=1.0):
            return (e * (weight[:, None] * left)).T @ (ef * right)

        U = (pair(wu) * e3 / (1.0 - kap * e2)
             + d12 * (Es * pair(wu * gam) - m2[:, None] * pair(wu * gam * p, left=e)
                      - m2f[None, :] * pair(wu * gam * p, right=ef)))
        N = d12 * pair(wv)

        def double(f):
            left = (R1 * (w / 2j)) @ f
            return 2.0 * np.sum(left * (R2 * Wf), axis=1).real

        signal_term = Es + one(A1 - 1.0, -delta[None, :] / eta)[:, 0]
        bias = (signal ** 2 * signal_term + double(U))[None, :] \
            + 2.0 * (p * r ** 2)[:, None] * one(R1, e * m2).T + (r ** 2 * Es)[:, None]
        variance = double(N) if np.any(wv > 0) else np.zeros(len(rounds))
        F = A1 / z ** 2
        dist = (signal ** 2 * one(A1, -m0[None, :] / eta)[:, 0]
                + one(F, -(gam[:, None] * delta * e * Es + e ** 2 * m2) / eta) @ (wu * eta ** 2)
                + one(F, -(e * delta) / eta) @ (wv * eta ** 2))
    var = np.broadcast_to(variance[None, :], bias.shape).copy()
    big = np.isfinite(rounds) & (rounds > over)
    dist = np.where(big, np.inf, dist)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * Es + 1e-300
    bias, var = settle(bias, var, big, np.any(wv > 0), scale, "rounds limit with a spectrum")

    def local(terms=None):
        raise ValueError("spectrum: the clients' own models (local_risk, personalized_risk) "
                         "along the rounds are available for Sigma = I only (not yet with a "
                         "covariance spectrum)")

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": mu0, "nodes": n, "local": local}
