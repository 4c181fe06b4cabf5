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
4. Edges of A's nonzero spectrum: ``sigma.fedavg.edges`` (derived there).

K >= 2 local steps: the client's filter q(S_j) is a polynomial whose B-valued R-transform is no
longer Sigma times a scalar (``sigma.fedavg.curves``: a linear pencil with K x K row forms per
client, ``sigma_pencil``). The clients' own models after their local step: ``rounds_limit``
takes them from the pencil with K = 1 (``sigma.fedavg.own``); this module's ``local`` refuses.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import (contraction, ellipse, round_filters,
                                              far, moving, round_horizon, settle)
from riskcalc.linear.dynamics.sigma.budget import pairs_refused
from riskcalc.linear.dynamics.sigma.fedavg.edges import edges

_NEWTON_ITER = 60
_NEWTON_TOL = 1e-9
#: Most node pairs of the double contour (about 10 s at 1e7 node pairs, 2 atoms).
MAX_PAIRS = 1e7


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
    moves, noisy = moving(signal, r), bool(np.any(wv > 0))
    dist = far(dist, big, moves or noisy)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * Es + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "rounds limit with a spectrum",
                       moves=moves)

    def local(terms=None):
        raise ValueError("spectrum: the clients' own models (local_risk, personalized_risk) "
                         "along the rounds are available for Sigma = I only (not yet with a "
                         "covariance spectrum)")

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": mu0, "nodes": n, "local": local}
