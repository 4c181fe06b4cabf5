"""One client's filter in paper 004's Algorithm 1 with exact local solves, a_j = p_j q(S_j),
q(s) = s / (s + lam) (derived here).

Paper 004 (``004_98172ed3646eef14.txt``), eqs. 9-10: with the exact prox
v_j = prox_{f_j / lam}(w) = (S_j + lam)^{-1} (b_j + lam w) of f_j(v) = ||X_j v - y_j||^2 / (2 n_j)
(b_j = X_j^T y_j / n_j in the range of S_j), client j returns v_j = (1 - q(S_j)) w + q(S_j) S_j^+ b_j,
the same form as FedAvg's local phase (``client_laws``) with the filter q(s) = s / (s + lam) in
place of 1 - (1 - eta s)^K. The server step w <- w - gamma lam sum_j p_j (w - v_j) is then FedAvg's
round map with the global step gamma lam (``fedavg``).

The expectations under MP(gamma_j) that the free-probability solve needs are exact by partial
fractions: omega - p q(s) = ((omega - p) s + omega lam) / (s + lam) vanishes at the single point
s* = -omega lam / (omega - p), and (s + lam) / ((omega - p)(s - s*)) = (1 + (s* + lam) / (s - s*))
/ (omega - p), with s* + lam = -lam p / (omega - p), so with G the Marchenko-Pastur Cauchy transform
(its pole at 0 carries the atom 1 - 1/gamma) ::

    E0 = E[1 / (omega - p q)] = 1 / (omega - p) + lam p G(s*) / (omega - p)^2,
    E0' = -1 / (omega - p)^2 - 2 lam p G(s*) / (omega - p)^3 + (lam p)^2 G'(s*) / (omega - p)^4,
    S1 = E[(q / s) / (omega - p q)] = E[1 / ((omega - p) s + omega lam)] = -G(s*) / (omega - p),

(ds*/domega = lam p / (omega - p)^2) and the rest by the recursions of ``client_laws``:
E1 = (omega E0 - 1) / p, P_n = (omega P_{n-1} - E[q^{n-1}]) / p, S_n = (omega S_{n-1} -
E[q^{n-1} / s]) / p (q / s = 1 / (s + lam) is 1 / lam at the atom 0; q^n / s vanishes there for
n >= 2). The constants E[q^n], E[q^n / s] come from ``mp_expect``. s* approaches the spectrum of S_j
only when omega approaches that of a_j, which the contours of ``fedavg`` keep away from.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.client_laws import mp_cauchy, raise_powers
from riskcalc.linear.engine.mp_quadrature import mp_expect


class ProxLaws:
    """The laws of a_j = p_j q(S_j), q(s) = s / (s + lam), S_j ~ MP(gamma_j), for all M clients;
    the interface of ``client_laws.ClientLaws`` (every method takes omega with the clients on
    its first axis).

    Attributes
    ----------
    gamma, p : ndarray (M,)
    lam : float
    mu0, lo, hi, bottom, top, mean, var, a2, q2s : ndarray (M,)
        As in ``ClientLaws``.
    """

    def __init__(self, gamma, p, lam: float):
        self.gamma, self.p = np.asarray(gamma, float), np.asarray(p, float)
        self.lam, self.M = float(lam), self.gamma.size
        g = self.gamma
        self.mu0 = np.maximum(0.0, 1.0 - 1.0 / g)
        a, b = (1.0 - np.sqrt(g)) ** 2, (1.0 + np.sqrt(g)) ** 2
        self.lo, self.hi = self.p * self.q(a), self.p * self.q(b)
        lam_ = self.lam
        mom = mp_expect(g, lambda s: (self.q(s), self.q(s) ** 2, self.q(s) ** 3,
                                      1.0 / (s + lam_), s / (s + lam_) ** 2,
                                      s ** 2 / (s + lam_) ** 3))
        self.moments_q, self.moments_qs = mom[:3], mom[3:]
        m1, m2 = mom[0], mom[1]
        self.mean, self.var = self.p * m1, self.p ** 2 * (m2 - m1 ** 2)
        self.a2, self.q2s = 1.0 - 2.0 * m1 + m2, mom[4]
        self.bottom = np.where(self.mu0 > 0, 0.0, self.lo)
        self.top = np.maximum(self.hi, 0.0)

    def q(self, s):
        """The prox filter q(s) = s / (s + lam)."""
        return s / (s + self.lam)

    def q_over_s(self, s):
        """q(s) / s = 1 / (s + lam)."""
        return 1.0 / (s + self.lam)

    def _col(self, x, ndim):
        return np.reshape(x, (self.M,) + (1,) * (ndim - 1))

    def _star(self, omega):
        p = self._col(self.p, omega.ndim)
        den = omega - p
        G, dG = mp_cauchy(self._col(self.gamma, omega.ndim), -omega * self.lam / den)
        return p, den, G, dG

    def cauchy(self, omega):
        """E0 = E[1 / (omega - a_j)] and its derivative in omega; NaN or inf at omega = p_j
        and on the spectrum (callers reject those points)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            omega = np.asarray(omega, complex)
            p, den, G, dG = self._star(omega)
            lp = self.lam * p
            return (1.0 / den + lp * G / den ** 2,
                    -1.0 / den ** 2 - 2.0 * lp * G / den ** 3 + lp ** 2 * dG / den ** 4)

    def traces(self, omega, E0):
        """E1, E2, E3 of ``ClientLaws.traces`` (E2 and E3 up to omega-independent constants)."""
        P, S = self.families(omega, E0)
        p = self._col(self.p, np.ndim(omega))
        return P[1], np.asarray(omega) * P[1] / p, np.asarray(omega) * S[1] / p

    def families(self, omega, E0):
        """P_n (n = 0..4) and S_n (n = 1..4) of ``ClientLaws.families``; exact for n <= 3,
        P_4 and S_4 without their constants."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            omega = np.asarray(omega, complex)
            _, den, G, _ = self._star(omega)
            return raise_powers(self, omega, E0, -G / den)


def algorithm1_curves(gam, r, sigma, p, signal, lam, global_step, rounds):
    """Paper 004's Algorithm 1 with exact local solves (K = inf; eq. 10): the curves of
    ``fedavg.round_map_curves`` for the prox filter and the round map's step global_step * lam
    (``004_98172ed3646eef14.txt``, eq. 10: w <- w - gamma lam sum_j p_j (w - prox_j(w)))."""
    from riskcalc.linear.dynamics.client_laws import ClientLaws
    from riskcalc.linear.dynamics.fedavg import round_map_curves

    laws = (ClientLaws(gam, p, None, np.inf) if lam <= projection_lam(gam)
            else ProxLaws(gam, p, lam))
    return round_map_curves(laws, r, sigma, signal, global_step * lam, rounds)


#: lam / a below which the prox filter is the projection of K = inf (``projection_lam``).
PROJECTION_RATIO = 1e-7


def projection_lam(gam) -> float:
    """The lam below which ``algorithm1_curves`` takes the exact local solve's laws (FedAvg's
    K = inf, ``ClientLaws``: q = 1 on the range of S_j) for the prox's: PROJECTION_RATIO times
    the smallest bottom a_j = (1 - sqrt(gamma_j))^2 of the clients' nonzero spectra (0 when a
    gamma_j is 1). On the spectrum q(s) = s / (s + lam) is 1 to lam / a_j, and the prox laws
    lose about eps / lam to rounding (the atom of S_j at 0 has q / s = 1 / lam, which the
    recursions for S_n subtract again): measured against the projection at gamma 2, M = 5,
    the relative gap of the fixed point's server risk falls as 0.58 lam to 5.8e-7 at lam
    1e-6, then rises, 9.4e-8 at 1e-8, 1e-3 at 1e-12, and the fixed point was 46367 for 2.5 at
    1e-20 (fuzz27 F19). Here both errors stay below about 1e-7."""
    return PROJECTION_RATIO * float(np.min((1.0 - np.sqrt(np.asarray(gam, float))) ** 2))
