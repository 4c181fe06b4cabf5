"""One client's filtered sample covariance a_j = p_j q(S_j) in FedAvg's round map (derived here).

K full-batch gradient steps of size eta on f_j(w) = ||X_j w - y_j||^2 / (2 n_j) from w give
v_j = (I - eta S_j)^K w + q(S_j) S_j^+ b_j with q(s) = 1 - (1 - eta s)^K (K = inf: the exact
local solve from w, q = 1{s > 0}); S_j = X_j^T X_j / n_j has the Marchenko-Pastur law MP(gamma_j)
of mean 1 in the limit (Sigma = I). The round map's matrix is D = sum_j a_j (``fedavg``).

What the free-probability solve needs of one client, at a complex point omega off the spectrum
of a_j, are the expectations under MP(gamma_j) ::

    E0 = E[1 / (omega - p q(s))],   E1 = E[q / (omega - p q)],
    E2 = E[q^2 / (omega - p q)],    E3 = E[(q^2 / s) / (omega - p q)],

and E0' = dE0/domega. They are exact here, without quadrature, by partial fractions: with
c = 1 - omega / p, omega - p q(s) = p ((1 - eta s)^K - c) vanishes at the K points
s_k = (1 - zeta_k) / eta, zeta_k the K-th roots of c, with residues of 1 / (omega - p q)
rho_k = -1 / (p q'(s_k)) = -zeta_k / (p K eta c), so that ::

    E0 = sum_k rho_k E[1 / (s - s_k)] = -sum_k rho_k G(s_k),
    G(s) = E[1 / (s - x)] = 2 / (s + gamma - 1 + sqrt(s - a) sqrt(s - b))

(the Marchenko-Pastur Cauchy transform, a, b = (1 -/+ sqrt gamma)^2, product of principal roots:
the cut is [a, b] and the atom 1 - 1/gamma at 0 when gamma > 1 is the pole of G at 0). With
ds_k/domega = -rho_k and drho_k/domega = -p q''(s_k) rho_k^3, q''(s_k) = -K (K - 1) eta^2 c /
zeta_k^2, E0' = -sum_k (rho_k' G(s_k) - rho_k^2 G'(s_k)), G' = -G (1 - gamma G) / sqrt(..).
The others follow from p q = omega - (omega - p q):
E1 = (omega E0 - 1) / p and E2 = omega E1 / p - E[q] / p; and q / s is a polynomial, so
(q / s) / (omega - p q) = sum_k (omega / p) (rho_k / s_k) / (s - s_k) exactly, whence
E3 = -(omega / p)^2 sum_k rho_k G(s_k) / s_k - E[q / s] / p.

The constants E[q] / p and E[q / s] / p are DROPPED from E2 and E3 (``traces``): the dynamics
integrate every trace against a function analytic inside the contour (``fedavg``), which
annihilates constants. K = inf: E0 = mu0 / omega + (1 - mu0) / (omega - p), E1 = E2 =
(1 - mu0) / (omega - p), E3 = E[1/s; s > 0] / (omega - p), mu0 = (1 - 1/gamma)_+, and
E[1/s; s > 0] = 1 / (1 - gamma) (gamma < 1), 1 / (gamma (gamma - 1)) (gamma > 1).

Accuracy. When abs(c) is small the K roots cluster around s = 1/eta and the partial-fraction
terms, of size abs(c)^(1/K - 1), cancel down to E0 ~ 1 / (p max(abs(c), w)), w p the width of the
spectrum of a_j: the relative rounding error is about eps w / abs(c) <= eps (width of the
spectrum of a_j) / dist(omega, p), i.e. eps times the inverse relative distance to the top of
the spectrum when that top is near p (many steps, q -> 1). On the contour of ``fedavg``
Im omega_j >= Im z keeps this below 1e-12; on the real axis (``subordination.edges``) the edge
points stay at a distance of order the spectrum's width. At c = 0 exactly (omega = p, K >= 2)
the values are NaN and the callers treat the point as invalid.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine.mp_quadrature import mp_expect


def mp_cauchy(gamma: float, s):
    """G(s) = E[1 / (s - x)] under MP(gamma) (mean 1) and G'(s), s off the support.

    G = 2 / (A + root) = (A - root) / (2 gamma s), A = s + gamma - 1, root = sqrt(s - a)
    sqrt(s - b) (the two agree since A^2 - root^2 = 4 gamma s); the form with the larger
    denominator is used, which avoids the cancellation of the first near the atom at 0 and of
    the second far out.
    """
    a, b = (1.0 - np.sqrt(gamma)) ** 2, (1.0 + np.sqrt(gamma)) ** 2
    s = np.asarray(s, complex)
    root = np.sqrt(s - a) * np.sqrt(s - b)
    A = s + gamma - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        G = np.where(np.abs(A + root) >= np.abs(A - root), 2.0 / (A + root),
                     (A - root) / (2.0 * gamma * s))
        dG = -G * (1.0 - gamma * G) / root
    return G, dG


def _log1p(x):
    """log(1 + x) to full relative accuracy for complex x (numpy's complex log1p is not:
    log1p(1e-13) comes out 9.992e-14); Goldberg's trick log(u) x / (u - 1), u = 1 + x."""
    u = 1.0 + x
    with np.errstate(divide="ignore", invalid="ignore"):
        # The trick only near 0 (far out the two logs could sit on different branches).
        return np.where(u == 1.0, x, np.where(np.abs(x) < 0.5, np.log(u) * x / (u - 1.0),
                                              np.log(u)))


def _expm1(x):
    """exp(x) - 1 to full relative accuracy for complex x (Kahan: (u - 1) x / log u)."""
    u = np.exp(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(u == 1.0, x, np.where(np.abs(x) < 0.5, (u - 1.0) * x / np.log(u),
                                              u - 1.0))


class ClientLaws:
    """The laws of a_j = p_j q(S_j), S_j ~ MP(gamma_j), of all M clients at once (module
    docstring); every method takes omega with the clients on its first axis, (M, ...).

    Attributes
    ----------
    gamma, p : ndarray (M,)
    eta : float
    K : int or float
        Number of local steps (an integer, or inf for the exact local solve).
    mu0 : ndarray (M,)
        The atoms of the a_j at 0, (1 - 1/gamma_j)_+.
    lo, hi : ndarray (M,)
        The range of p_j q(s) over the continuous MP support [a_j, b_j] (p_j for K = inf).
    bottom, top : ndarray (M,)
        The ends of the spectrum of a_j (bottom 0 when it has an atom there).
    mean, var : ndarray (M,)
        tau(a_j) and its variance (for the starting point of the subordination solve).
    a2, q2s : ndarray (M,)
        tau((I - q(S_j))^2) and tau(q^2 / s (S_j)) (the local models' risk).
    """

    def __init__(self, gamma, p, eta: float, K):
        self.gamma, self.p = np.asarray(gamma, float), np.asarray(p, float)
        # (eta unused, and may be None, for K = inf: the exact local solve)
        self.eta, self.K, self.M = None if eta is None else float(eta), K, self.gamma.size
        g = self.gamma
        self.mu0 = np.maximum(0.0, 1.0 - 1.0 / g)
        a, b = (1.0 - np.sqrt(g)) ** 2, (1.0 + np.sqrt(g)) ** 2
        if np.isinf(K):
            self.lo = self.hi = self.p.copy()
            self.mean = self.p * (1.0 - self.mu0)
            self.var = self.p ** 2 * self.mu0 * (1.0 - self.mu0)
            with np.errstate(divide="ignore"):
                self.inv = np.where(g < 1, 1.0 / (1.0 - g),
                                    np.where(g == 1, np.inf, 1.0 / (g * (g - 1.0))))
            self.a2, self.q2s = self.mu0.copy(), self.inv
        else:
            crit = np.clip(1.0 / eta, a, b)     # the fold of q at s = 1/eta, if inside
            vals = self.p * self.q(np.array([a, b, crit]))
            self.lo, self.hi = vals.min(axis=0), vals.max(axis=0)
            def q_over_s(s):     # the polynomial q(s) / s = eta sum_{k<K} (1 - eta s)^k
                return _q_over_s(s, eta, int(K))

            # E[q^n] (n = 1..3) and E[q^n / s] (n = 1..3; q / s is a polynomial, its value
            # at the atom 0 included): the constants of the recursions of ``families``.
            # Divergent local steps past the floats (step_size 1e100, K = 3: q ~ 1e300) give
            # inf moments, which the round map's edge solve then refuses
            # (``inputs.divergent_range`` says why): without numpy's overflow warnings on the way.
            with np.errstate(over="ignore", invalid="ignore"):
                mom = mp_expect(g, lambda s: (self.q(s), self.q(s) ** 2, self.q(s) ** 3,
                                              q_over_s(s), self.q(s) * q_over_s(s),
                                              self.q(s) ** 2 * q_over_s(s)))
                m1, m2 = mom[0], mom[1]
                self.var = self.p ** 2 * (m2 - m1 ** 2)
            self.moments_q, self.moments_qs = mom[:3], mom[3:]
            self.mean = self.p * m1
            self.a2, self.q2s = 1.0 - 2.0 * m1 + m2, mom[4]
        self.bottom = np.where(self.mu0 > 0, 0.0, self.lo)
        self.top = np.maximum(self.hi, 0.0)

    def q(self, s):
        """The local filter q(s) = 1 - (1 - eta s)^K (K = inf: 1 for s > 0, 0 at s = 0)."""
        if np.isinf(self.K):
            return np.where(s > 0, 1.0, 0.0)
        return 1.0 - (1.0 - self.eta * s) ** int(self.K)

    def q_over_s(self, s):
        """The polynomial q(s) / s (finite K)."""
        return _q_over_s(s, self.eta, int(self.K))

    def _col(self, x, ndim):
        return np.reshape(x, (self.M,) + (1,) * (ndim - 1))

    def _roots(self, omega):
        K = int(self.K)
        p = self._col(self.p, omega.ndim)
        c = 1.0 - omega / p
        phase = np.exp(2j * np.pi * np.arange(K) / K)
        zeta = np.power(c[..., None], 1.0 / K) * phase
        # zeta_k / c = c^(1/K - 1) phase_k: exact at c = 0 when K = 1.
        rho = -np.power(c[..., None], 1.0 / K - 1.0) * phase / (p[..., None] * K * self.eta)
        one_minus = 1.0 - zeta
        # 1 - zeta_0 = -expm1(log1p(-omega/p) / K) without cancellation as omega -> 0 (the
        # root near the atom of S_j at 0).
        one_minus[..., 0] = -_expm1(_log1p(-omega / p) / K)
        return c, zeta, rho, one_minus / self.eta

    def cauchy(self, omega):
        """E0 = E[1 / (omega - a_j)] and its derivative in omega (complex arrays); NaN or inf
        at omega = p exactly (K >= 2) and on the spectrum (callers reject those points)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._cauchy(np.asarray(omega, complex))

    def _cauchy(self, omega):
        if np.isinf(self.K):
            m, p = self._col(self.mu0, omega.ndim), self._col(self.p, omega.ndim)
            return (m / omega + (1 - m) / (omega - p),
                    -m / omega ** 2 - (1 - m) / (omega - p) ** 2)
        K = int(self.K)
        c, zeta, rho, s = self._roots(omega)
        G, dG = mp_cauchy(self._col(self.gamma, s.ndim), s)
        # q''(s_k) = -K (K - 1) eta^2 c / zeta_k^2 (q is linear for K = 1).
        d2q = 0.0 if K == 1 else -K * (K - 1) * self.eta ** 2 * c[..., None] / zeta ** 2
        drho = -self._col(self.p, s.ndim) * d2q * rho ** 3
        return -np.sum(rho * G, axis=-1), -np.sum(drho * G - rho ** 2 * dG, axis=-1)

    def traces(self, omega, E0):
        """E1, E2, E3 of the module docstring, E2 and E3 up to omega-independent constants."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._traces(np.asarray(omega, complex), E0)

    def _traces(self, omega, E0):
        p = self._col(self.p, omega.ndim)
        E1 = (omega * E0 - 1.0) / p
        E2 = omega * E1 / p
        if np.isinf(self.K):
            return E1, E2, self._col(self.inv, omega.ndim) / (omega - p)
        c, zeta, rho, s = self._roots(omega)
        G, _ = mp_cauchy(self._col(self.gamma, s.ndim), s)
        E3 = -(omega / p) ** 2 * np.sum(rho * G / s, axis=-1)
        return E1, E2, E3

    def families(self, omega, E0):
        """P_n = E[q^n / (omega - a_j)] (n = 0..4) and S_n = E[(q^n / s) / (omega - a_j)]
        (n = 1..4; S_0 unused), from q p = omega - (omega - p q): P_n = (omega P_{n-1} -
        E[q^{n-1}]) / p and S_n = (omega S_{n-1} - E[q^{n-1} / s]) / p, S_1 exact by partial
        fractions (module docstring). Exact for n <= 3; P_4 and S_4 drop their constants
        (a dropped constant must not be multiplied by omega again). K = inf: P_0 is the closed
        form mu0 / omega + P_1 rather than ``E0`` (the solve's G, equal to it only to the
        solve's tolerance), so that the combinations with (1 - q) (``local_models``) are
        mu0 / omega exactly: 0 for gamma_j < 1, not G - P_1's rounding."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            omega = np.asarray(omega, complex)
            p = self._col(self.p, omega.ndim)
            if np.isinf(self.K):
                m = self._col(self.mu0, omega.ndim)
                one = (1.0 - m) / (omega - p)
                inv = self._col(self.inv, omega.ndim) / (omega - p)
                return [m / omega + one, one, one, one, one], [None, inv, inv, inv, inv]
            c, zeta, rho, s = self._roots(omega)
            G, _ = mp_cauchy(self._col(self.gamma, s.ndim), s)
            return raise_powers(self, omega, E0, -(omega / p) * np.sum(rho * G / s, axis=-1))


def raise_powers(laws, omega, E0, S1):
    """``families``' P_n (n = 0..4) and S_n (n = 1..4) from P_0 = E0 and S_1 by the recurrence
    P_n = (omega P_{n-1} - E[q^{n-1}]) / p, S_n = (omega S_{n-1} - E[q^{n-1} / s]) / p, for any
    client filter q whose law provides ``p``, ``M``, ``moments_q``, ``moments_qs`` and ``_col``
    (``ClientLaws``, ``prox_laws.ProxLaws``). P_4 and S_4 drop their constants (a dropped
    constant must not be multiplied by omega again)."""
    p = laws._col(laws.p, omega.ndim)
    P, S = [E0], [None, S1]
    mq = [np.ones(laws.M)] + list(laws.moments_q)
    for n in range(1, 5):
        const = laws._col(mq[n - 1], omega.ndim) if n < 4 else 0.0
        P.append((omega * P[-1] - const) / p)
    for n in range(2, 5):
        const = laws._col(laws.moments_qs[n - 2], omega.ndim) if n < 4 else 0.0
        S.append((omega * S[-1] - const) / p)
    # Each step divides by p (p_j 5e-12: an own risk 1.11 for 0.83); where p max abs(q) is
    # below 1e-3 abs(omega), the series 1 / (omega - p q) = sum_k (p q)^k / omega^(k + 1).
    x = laws._col(np.maximum(np.abs(laws.lo), np.abs(laws.hi)), omega.ndim) / np.abs(omega)
    small = x < 1e-3
    if np.any(small):
        mq, ms = _series_moments(laws)
        for n in range(1, 5):
            P[n] = np.where(small, _series(mq, n, p, omega, laws), P[n])
            if n > 1:
                S[n] = np.where(small, _series(ms, n - 1, p, omega, laws), S[n])
    return P, S


#: Terms of ``raise_powers``' series in p q / omega (below 1e-3: a remainder below 1e-18).
SERIES_TERMS = 6


def _series_moments(laws):
    """(E[q^j], E[q^j (q / s)]), j = 0..3 + SERIES_TERMS, each (M,), once per laws."""
    if getattr(laws, "_series_mom", None) is None:
        n = 4 + SERIES_TERMS
        mom = mp_expect(laws.gamma, lambda s: tuple(
            laws.q(s) ** j * (laws.q_over_s(s) if k else 1.0) for k in (0, 1) for j in range(n)))
        laws._series_mom = (mom[:n], mom[n:])
    return laws._series_mom


def _series(mom, n, p, omega, laws):
    """sum_k p^k mom[n + k] / omega^(k + 1), k < SERIES_TERMS: E[h q^n / (omega - p q)] with
    mom[j] = E[h q^j] (``raise_powers``)."""
    return sum(p ** k * laws._col(mom[n + k], omega.ndim) / omega ** (k + 1)
               for k in range(SERIES_TERMS))


def _q_over_s(s, eta: float, K: int):
    """eta sum_{k<K} (1 - eta s)^k = (1 - (1 - eta s)^K) / s, summed in closed form (a sum of K
    terms took minutes at K = 1e9): -expm1(K log1p(-eta s)) / s where 0 < eta s < 1/2 (no
    cancellation in 1 - (1 - eta s)^K), the quotient as written elsewhere, eta K at s = 0."""
    s = np.asarray(s, float)
    x = eta * s
    small = (x > 0) & (x < 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        near = -np.expm1(K * np.log1p(-np.where(small, x, 0.0))) / s
        far = (1.0 - (1.0 - x) ** K) / s
    return np.where(s == 0, eta * K, np.where(small, near, far))


def check_edge_step(laws):
    """ValueError naming step_size where FedAvg's even K local steps (``laws``, a
    ``ClientLaws``; other laws pass) sit at their stability edge: step_size (1 +
    sqrt(gamma_j))^2 within rounding of 2 zeroes the filter 1 - (1 - step_size s)^K at client
    j's top, so D's bottom edge reaches 0 (measured, gamma (2, 3): about 0.4 (2 - that
    product) / 2; it was blamed on pooled N = d at sum_j 1/gamma_j = 0.83; fuzz40 scale F7)."""
    eta, K, gam = getattr(laws, "eta", None), getattr(laws, "K", None), laws.gamma
    if eta is None or not np.isfinite(K) or K % 2 or abs(np.sum(1.0 / gam) - 1.0) < 1e-3:
        return
    top = float(np.max(eta * (1.0 + np.sqrt(gam)) ** 2))
    if top >= 2.0 * (1.0 - 1e-6):
        raise ValueError(f"step_size: step_size (1 + sqrt(gamma_j))^2 = {top:.12g} is at "
                         f"2, the stability edge of an even local_steps = {K}, to "
                         f"{(2.0 - top) / 2.0:.2g} relative: the local filter 1 - (1 - "
                         "step_size s)^K vanishes at the top of that client's sample "
                         "spectrum, so the round map's spectrum reaches 0; give a smaller "
                         "step_size")


def check_near_exact(laws) -> None:
    """ValueError naming local_steps where the round map's edge solve failed (or found a bottom
    at or below 0) because a client's law is a near point mass: its filter 1 - (1 - step_size
    s)^K is 1 to within 1e-7 over its whole sample spectrum (the exact local solve to that, not
    to rounding: ``inputs.effective_steps``), the partial fractions' roots clustered (module
    docstring, Accuracy). Measured, gamma (0.5, 0.8), step 0.3: K = 700 (width 1.2e-8) answers,
    K = 750 (3.2e-9) "no real solution at the start of the scan", K = 999 a bottom edge -148.5
    blamed on pooled N = d at N / d = 3.25 (fuzz41 path F10). Other laws pass."""
    K = getattr(laws, "K", None)
    if getattr(laws, "eta", None) is None or not np.isfinite(K):
        return
    width = (laws.hi - laws.lo) / np.maximum(np.abs(laws.hi), 1e-300)
    near = np.flatnonzero(width < 1e-7)
    if near.size:
        raise ValueError(f"local_steps = {K}: the local filter 1 - (1 - step_size s)^K of "
                         f"client(s) {', '.join(map(str, near[:5]))} is within "
                         f"{float(np.max(width[near])):.2g} of the exact local solve over its "
                         "sample spectrum (not to rounding): a near point mass, which the round "
                         "map's edge solve does not resolve; give "
                         "local_steps=numpy.inf (the exact local solves), or fewer local_steps "
                         "or a smaller step_size")


#: Estimated process seconds per unit of M K n (clients x local steps x contour nodes, both
#: halves) of FedAvg's curves with K local steps, Sigma = I, the clients' own models included
#: (``check_root_work``): each client's law sums over the K roots of its local filter at every
#: node and Newton step. Measured (process CPU, 36 federations of M = 1, 2, 4 clients at random
#: gamma in [0.3, 3], K = 50-999, T = [1, 10], [100], [inf], step 0.1; and M = 20, K = 500 and
#: M = 50, K = 999: 3.8 s and 10.5 s): 0.24-1.26 times the estimate where it exceeds 0.3 s.
ROOT_SECONDS = 2e-5
#: Fewest contour nodes (both halves) of the curves, for the estimate before the edge solve.
ROOT_MIN_NODES = 16
#: The default limit of ``check_root_work``: the pencil routes' (``sigma.guards.
#: MAX_PENCIL_SECONDS``; not imported: guards reach this module through the pencils).
ROOT_MAX_SECONDS = 120.0


def check_root_work(laws, nodes: int, after: str = "") -> None:
    """ValueError when FedAvg's curves with K local steps (``laws``: ``ClientLaws``) over
    ``nodes`` contour nodes are estimated (``ROOT_SECONDS``) beyond the allowed seconds
    (``rounds_limit``'s max_seconds, by default ``ROOT_MAX_SECONDS``: ``sigma.budget``),
    naming what would fit; ``after``: what fixed ``nodes`` (for the message). Before it the
    route had no estimate (M = 50, K = 999: 10.5 s; 1000 clients, as the command line allows,
    are estimated at 320 s or more; fuzz41 path F7). Exact local solves (K = inf) need no
    roots."""
    from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed

    K = laws.K
    if np.isinf(K):
        return
    need, limit = ROOT_SECONDS * laws.M * K * nodes, allowed(ROOT_MAX_SECONDS)
    if need <= limit:
        return
    fit = int(limit / (ROOT_SECONDS * laws.M * nodes))
    # Only what can help (was "give fewer clients, fewer clients or rounds" where no K fits,
    # fewer clients to one client, fewer rounds at the least nodes; fuzz42 path F6)
    fixes = ([f"local_steps <= {fit}"] if fit >= 1 else []) + (
        ["fewer clients"] if laws.M > 1 else []) + ([] if after == " at the least" else
                                                    ["fewer rounds"])
    raise ValueError(f"local_steps = {K}: FedAvg's curves would take about {need:.3g} s "
                     f"(estimated: the {K} roots of each of {laws.M} client(s)' local filter at "
                     f"{nodes} contour nodes{after}; more than the {limit:.3g} s allowed); give "
                     + "".join(x + ", " for x in fixes) + "numpy.inf where the local steps "
                     "near the exact local solve, " + MORE_TIME)


#: Estimated process seconds per client and node pair of the own models' double contour
#: (``local_models.local_risk``: divided differences over every pair of outer upper-half and
#: full inner nodes, for each client). Measured (process CPU, gamma (2, 3, 4), (2, 3), 5 x 2
#: and (0.5, 2, 0.8), K = 2, T = 500-2000: 0.43-1.2 times it, the largest arrays the
#: slowest): M = 3, T = 2000 took 8.7 s with no estimate before it (fuzz41 path2 F3).
PAIR_SECONDS = 3e-7


def check_pair_work(m: int, pairs: float, why: str, fix: str) -> None:
    """ValueError when the clients' own models (``m`` clients, ``pairs`` node pairs of the
    double contour each) are estimated (``PAIR_SECONDS``) beyond the allowed seconds
    (``rounds_limit``'s max_seconds, by default ``ROOT_MAX_SECONDS``); ``why`` says what
    sets the nodes, ``fix`` what lowers them (for the message)."""
    from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed

    need, limit = PAIR_SECONDS * m * pairs, allowed(ROOT_MAX_SECONDS)
    if need > limit:
        raise ValueError(f"the clients' own models would take about {need:.3g} s (estimated: "
                         f"{pairs:.3g} node pairs of the double contour for each of {m} "
                         f"client(s): {why}; more than the {limit:.3g} s allowed); {fix}, "
                         + MORE_TIME)
