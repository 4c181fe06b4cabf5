"""The client laws of paper 004's Algorithm 1 with K warm-started local steps, Sigma = I: the law
of d_j(z) = p_j psi_z(S_j), psi_z(s) = lam z c(s) / (z - a(s)), a(s) = (1 - eta (s + lam))^K,
c(s) = (1 - a(s)) / (s + lam), S_j ~ MP(gamma_j) (``algorithm1.curves``, step 2), in the forms
the subordination solves need: exact partial fractions at a real z (``PsiLaws``, the edges of
``algorithm1.rate``), and the discrete rule ``mp_rule`` at real z with derivatives (``RuleLaws``,
the folds of ``algorithm1.fold``), at complex contour nodes (``NodeLaws``, the curves) and at
real z checked against a doubled rule (``QuadPsiLaws``, the old route's edges)."""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.client_laws import mp_cauchy

#: Quadrature nodes of the real-axis client laws (the round map's spectral edges).
EDGE_RULE = 256


def mp_rule(gamma, n):
    """Nodes s (M, n + 1) and weights (M, n + 1) of a discrete measure integrating F analytic
    near the Marchenko-Pastur support like ``mp_quadrature.mp_expect``'s Gauss-Chebyshev rule
    of n nodes: tau(F) = F(0) + sum_q w_q (F(x_q) - F(0)) / x_q ..., the atom at 0 the first
    node (its weight 1 - sum of the others)."""
    gamma = np.asarray(gamma, float)[:, None]
    c = np.minimum(gamma, 1.0 / gamma)
    scale = np.maximum(gamma, 1.0)
    k = np.arange(1, n + 1) * (np.pi / (n + 1))
    s = (1.0 + c) + 2.0 * np.sqrt(c) * np.cos(k)
    w = np.sin(k) ** 2 * (np.pi / (n + 1)) * 4.0 * c / (2 * np.pi * c) / s / scale
    nodes = np.hstack([np.zeros_like(gamma), scale * s])
    return nodes, np.hstack([1.0 - w.sum(axis=1, keepdims=True), w])



def mp_bulk_cauchy(gamma, s):
    """``mp_cauchy`` of the continuous part of MP(gamma) alone (mass min(1, 1 / gamma)):
    G - (1 - 1 / gamma)_+ / s, analytic at 0 when gamma > 1. With B = s - (gamma - 1) and the
    root of ``mp_cauchy``, B^2 - root^2 = 4 s, so G_bulk = (B - root) / (2 gamma s) = 2 /
    (gamma (B + root)) (the larger denominator used, as there); gamma <= 1 has no atom."""
    gamma = np.asarray(gamma, float)
    if not np.any(gamma > 1.0):
        return mp_cauchy(gamma, s)
    a, b = (1.0 - np.sqrt(gamma)) ** 2, (1.0 + np.sqrt(gamma)) ** 2
    s = np.asarray(s, complex)
    root = np.sqrt(s - a) * np.sqrt(s - b)
    B = s - (gamma - 1.0)
    dB = 1.0 + (s - 1.0 - gamma) / root
    with np.errstate(divide="ignore", invalid="ignore"):
        big = np.abs(B + root) >= np.abs(B - root)
        Gb = np.where(big, 2.0 / (gamma * (B + root)), (B - root) / (2.0 * gamma * s))
        dGb = np.where(big, -2.0 * dB / (gamma * (B + root) ** 2),
                       ((1.0 - (s - 1.0 - gamma) / root) * s - (B - root))
                       / (2.0 * gamma * s ** 2))
    if np.all(gamma > 1.0):     # (the held-apart laws of ``algorithm1.pooled``: every client)
        return Gb, dGb
    G, dG = mp_cauchy(gamma, s)
    over = np.broadcast_to(gamma > 1.0, Gb.shape)
    return np.where(over, Gb, G), np.where(over, dGb, dG)


class RuleLaws:
    """The laws of d_j = p_j psi_z(S_j) at a real z by the rule of ``mp_rule`` (n nodes), with
    the first derivatives in omega and z that ``fold`` needs."""

    def __init__(self, gamma, p, lam, eta, K, n):
        s, self.w = mp_rule(gamma, n)
        self.M = self.w.shape[0]
        self.a = (1.0 - eta * (s + lam)) ** K
        self.pc = np.asarray(p, float)[:, None] * lam * (1.0 - self.a) / (s + lam)
        # The atom's weight 1 - sum(w) is a rounding residue when gamma < 1: not a node.
        self.node = self.w > 1e-12

    def at(self, z):
        """d = p lam z c / (z - a) at the nodes and its derivative in z."""
        den = z - self.a
        return self.pc * z / den, -self.pc * self.a / den ** 2

    def terms(self, omega, z):
        """G_j(omega_j), dG_j/domega and dG_j/dz (M,), G_j = E[1 / (omega_j - d_j)]."""
        d, dd = self.at(z)
        w1 = self.w / (omega[:, None] - d)
        w2 = w1 / (omega[:, None] - d)
        return w1.sum(axis=1), -w2.sum(axis=1), (w2 * dd).sum(axis=1)

    def moments(self, z):
        """Mean and variance of every d_j at z (the far start of ``fold``)."""
        d, _ = self.at(z)
        mean = np.sum(self.w * d, axis=1)
        return mean, np.sum(self.w * d * d, axis=1) - mean ** 2

    def outside(self, omega, z, sign):
        """Whether every omega_j lies beyond (``sign``) every node of its law, and, at the top,
        z above every a(s) (where psi_z is finite and decreasing in z)."""
        d, _ = self.at(z)
        ext = np.where(self.node, sign * d, -np.inf).max(axis=1)
        ok = np.all(sign * omega > ext)
        return ok and (sign < 0 or z > np.where(self.node, self.a, -np.inf).max())


class PsiLaws:
    """The laws of p_j psi_z(S_j), S_j ~ MP(gamma_j), for real z > sup a or z < 0, with the
    interface ``subordination.edges`` uses (``client_laws.ClientLaws``): cauchy, lo, hi, bottom,
    top, mean, var, mu0 (0: an atom of S_j at 0 sits at psi_z(0), inside [bottom, top]).

    E[1 / (omega - p psi_z(s))] is exact by partial fractions in x = 1 - eta (s + lam):
    1 / (omega - p psi) = (z - x^K) / Q(x), Q(x) = omega (z - x^K) - p lam z eta sum_{k<K} x^k,
    = 1 / omega + sum_m r_m / (x - x_m) over the K roots x_m of Q (a companion matrix's
    eigenvalues), r_m = (z - x_m^K) / Q'(x_m), and E[1 / (x - x_m)] = G(s_m) / eta with
    s_m = (1 - eta lam - x_m) / eta and G the Marchenko-Pastur Cauchy transform (its pole at 0
    carries the atom); E0' = -E[(z - x^K)^2 / Q^2] the same way with double poles.
    """

    def __init__(self, gamma, p, lam, eta, K, z):
        from scipy.optimize import minimize_scalar   # light commands do not load scipy

        self.gamma, self.p = np.asarray(gamma, float), np.asarray(p, float)
        self.lam, self.eta, self.K, self.z, self.M = lam, eta, int(K), z, self.gamma.size
        self.mu0 = np.zeros(self.M)
        lo, hi, mean, var, bulk = [], [], [], [], []
        for g in self.gamma:
            a, b = (1 - np.sqrt(g)) ** 2, (1 + np.sqrt(g)) ** 2
            grid = np.linspace(a, b, 4001)
            vals = self.psi(grid)
            ends = []
            for sign in (1.0, -1.0):
                k = int(np.argmin(sign * vals))
                best = minimize_scalar(lambda s: sign * self.psi(s), method="bounded",
                                       bounds=(grid[max(k - 1, 0)], grid[min(k + 1, 4000)]),
                                       options={"xatol": 1e-14})
                ends.append(sign * min(sign * vals[k], best.fun))
            bulk.append(ends[:2])
            # Moments (a starting point for the solves only): Chebyshev-U rule on [a, b] for
            # the continuous part (mass min(1, 1/gamma)), the atom at 0 apart.
            u = np.cos(np.pi * np.arange(1, 401) / 401)
            w = np.sin(np.pi * np.arange(1, 401) / 401) ** 2
            sk = 0.5 * (a + b) + 0.5 * (b - a) * u
            dens = w / sk
            dens /= dens.sum()
            cont = min(1.0, 1.0 / g)
            m1, m2 = cont * dens @ self.psi(sk), cont * dens @ self.psi(sk) ** 2
            if g > 1:
                at0 = float(self.psi(0.0))
                ends.append(at0)
                m1, m2 = m1 + (1 - cont) * at0, m2 + (1 - cont) * at0 ** 2
            lo.append(min(ends)), hi.append(max(ends)), mean.append(m1), var.append(m2 - m1 ** 2)
        self.lo, self.hi = self.p * np.array(lo), self.p * np.array(hi)
        self.bottom, self.top = self.lo, self.hi
        # (bottom, top) of the continuous part alone (the atom at psi_z(0) left out): (M, 2)
        self.bulk = self.p[:, None] * np.array(bulk)
        self.mean, self.var = self.p * np.array(mean), self.p ** 2 * np.array(var)

    def psi(self, s):
        """psi_z(s) = lam z c(s) / (z - a(s)), c(s) = eta sum_{k<K} (1 - eta (s + lam))^k."""
        x = 1.0 - self.eta * (np.asarray(s, float) + self.lam)
        c = self.eta * sum(x ** k for k in range(self.K))
        return self.lam * self.z * c / (self.z - x ** self.K)

    def _cauchy(self, omega, gam, p, bulk=False):
        """E0 and E0' at omega (rows,), one client's (gamma, p) per row; with ``bulk`` over the
        continuous part of S_j's law only (its atom at 0 left out: ``mp_bulk_cauchy``)."""
        K, z, eta = self.K, self.z, self.eta
        beta = p * self.lam * z * eta / omega
        coef = np.broadcast_to(beta[:, None], (omega.size, K)).astype(float)
        coef[:, 0] -= z
        if K > 1:   # monic Q / (-omega) = x^K + beta sum_{k<K} x^k - z: its companion matrix
            comp = np.zeros((omega.size, K, K))
            comp[:, 1:, :-1] = np.eye(K - 1)
            comp[:, :, -1] = -coef
            xm = np.linalg.eigvals(comp).astype(complex)
            kk = np.arange(K)
            pw = xm[..., None] ** kk                                        # x_m^k, k < K
            num = beta[:, None] * np.sum(pw, axis=-1)                       # z - x_m^K
            dq = (-(p * self.lam * z * eta)[:, None] * np.sum(kk[1:] * pw[..., :-1], axis=-1)
                  - omega[:, None] * K * xm ** (K - 1))
        else:
            # One step: the root x_1 = z - beta, z - x_1 = beta and Q' = -omega, without the
            # powers and their sums (x^0 = 1, an empty sum 0: the same values, up to the sign
            # of a zero; most calls of the edge scans' Newton steps are this small).
            xm = -coef.astype(complex)
            num, dq = beta[:, None] * (1.0 + 0j), 0j - omega[:, None]
        r = num / dq
        G, dG = (mp_bulk_cauchy if bulk else mp_cauchy)(gam[:, None],
                                                        (1.0 - eta * self.lam - xm) / eta)
        mass = np.minimum(1.0, 1.0 / gam) if bulk else 1.0
        E0 = mass / omega + np.sum(r * G, axis=-1) / eta
        # (z - x^K)^2 / Q^2 = 1/omega^2 + sum_m r_m^2 / (x - x_m)^2 + B_m / (x - x_m),
        # B_m = 2 r_m / omega + 2 r_m sum_{l != m} r_l / (x_m - x_l).
        B = 2.0 * r / omega[:, None]
        if K > 1:   # (one root: no other root l)
            diff = xm[:, :, None] - xm[:, None, :]
            np.einsum("rii->ri", diff)[...] = np.inf
            B = B + 2.0 * r * np.sum(r[:, None, :] / diff, axis=-1)
        sq = mass / omega ** 2 + np.sum(-r ** 2 * dG / eta ** 2 + B * G / eta, axis=-1)
        return E0, -sq

    def cauchy(self, omega):
        """E[1 / (omega - p_j psi_z(S_j))] and its derivative for real omega (M, n) outside
        the spectrum of p_j psi_z(S_j).

        Each entry is a function of its own omega and client alone, so the entries whose
        omega (bit for bit) and place are those of the previous call are that call's values:
        Newton's iterations of ``subordination`` ask again for the points already converged
        (measured: 5.4 times fewer companion eigenvalue problems along an edge scan)."""
        omega = np.ascontiguousarray(omega, float)
        M, n = omega.shape
        E0, dE0 = np.empty((M, n)), np.empty((M, n))
        new = np.ones((M, n), bool)
        last = getattr(self, "_last", None)
        if last is not None and last[0].shape == omega.shape:
            new = last[0].view(np.int64) != omega.view(np.int64)
            E0[~new], dE0[~new] = last[1][~new], last[2][~new]
        if new.any():
            rows = np.broadcast_to(np.arange(M)[:, None], (M, n))[new]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                e, de = self._cauchy(omega[new], self.gamma[rows], self.p[rows])
            E0[new], dE0[new] = e.real, de.real
        self._last = (omega.copy(), E0.copy(), dE0.copy())
        return E0, dE0


class NodeLaws:
    """The laws of d_j(z) = p_j psi_z(S_j) at a vector of nodes z (set ``z`` before each
    ``cauchy``): the interface ``subordination.solve`` uses (M, mean, var, cauchy)."""

    def __init__(self, gamma, p, lam, eta, K, n, residue=True):
        self.M, self.p, self.lam = len(gamma), np.asarray(p, float), lam
        self.s, self.w = mp_rule(gamma, n)
        if not residue:     # gamma < 1: the atom's weight is a rounding residue, not a node
            small = np.asarray(gamma, float) < 1.0
            self.s[small, 0], self.w[small, 0] = self.s[small, 1], 0.0
        self.a = (1.0 - eta * (self.s + lam)) ** K
        self.c = (1.0 - self.a) / (self.s + lam)
        self.far = far = self.p[:, None] * lam * self.c         # d_j at z = infinity
        self.mean = np.sum(self.w * far, axis=1)
        # (K = 1: c = eta, a constant law, whose variance must not round below 0)
        self.var = np.maximum(np.sum(self.w * far ** 2, axis=1) - self.mean ** 2, 0.0)
        self._z = self._dz = None

    @property
    def z(self):
        return self._z

    @z.setter
    def z(self, z):
        """The nodes of the next ``cauchy`` calls (d_j there computed once: Newton's method
        calls ``cauchy`` several times at the same nodes)."""
        self._z, self._dz = z, None if z is None else self.d(z)

    def d(self, z):
        """d_j(z; s) at the nodes z (N,): (M, N, Q)."""
        z = np.asarray(z)[None, :, None]
        return self.far[:, None, :] * (z / (z - self.a[:, None, :]))

    def m(self, z):
        """m_j(z; s) = a / (z - a): (M, N, Q)."""
        z = np.asarray(z)[None, :, None]
        return self.a[:, None, :] / (z - self.a[:, None, :])

    def expect(self, f):
        """E_j[f] over the last axis (M, ..., Q) -> (M, ...)."""
        if f.ndim == 3:     # a matrix-vector product per client (BLAS, no temporary)
            return np.matmul(f, self.w[:, :, None].astype(f.dtype))[..., 0]
        w = self.w.reshape(self.w.shape[:1] + (1,) * (f.ndim - 2) + self.w.shape[1:])
        return np.sum(f * w, axis=-1)

    def cauchy(self, omega):
        inv = omega[..., None] - self._dz
        np.reciprocal(inv, out=inv)
        E0 = self.expect(inv)
        np.multiply(inv, inv, out=inv)
        return E0, -self.expect(inv)


class QuadPsiLaws(PsiLaws):
    """``PsiLaws`` (real z) with E[1 / (omega - p psi_z)] by the rule of
    ``mp_rule`` (``EDGE_RULE`` nodes, checked against twice as many; where they differ by more
    than 1e-10 relative, 8 times as many; NaN where those still differ)."""

    def cauchy(self, omega):
        omega = np.asarray(omega, float)
        if not hasattr(self, "_rules"):    # the rules' nodes and values of p psi_z, once
            self._rules = {}
        E0, dE0 = np.full(omega.shape, np.nan), np.full(omega.shape, np.nan)
        bad = np.ones(omega.shape, bool)
        for n in (EDGE_RULE, 8 * EDGE_RULE):   # the finer rule only where the coarser fails
            rows, cols = np.nonzero(bad)
            out = []
            for m in (n, 2 * n):
                if m not in self._rules:
                    s, w = mp_rule(self.gamma, m)
                    self._rules[m] = (self.p[:, None] * self.psi(s), w)
                d, w = self._rules[m]
                # Overflow at extreme inputs (lam = 1e-300) is a disagreement of the rules below
                # (NaN), not a warning to the user.
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    inv = 1.0 / (omega[rows, cols][:, None] - d[rows])
                    out.append((np.sum(inv * w[rows], axis=1),
                                -np.sum(inv ** 2 * w[rows], axis=1)))
            (e1, d1), (e2, d2) = out
            with np.errstate(invalid="ignore"):
                ok = (np.abs(e1 - e2) <= 1e-10 * np.abs(e2)) & (np.abs(d1 - d2)
                                                                <= 1e-8 * np.abs(d2))
            E0[rows[ok], cols[ok]], dE0[rows[ok], cols[ok]] = e2[ok], d2[ok]
            bad[rows[ok], cols[ok]] = False
            if not bad.any():
                return E0, dE0
        # NaN where the rules still disagree (omega at a spike of the law):
        # ``subordination.edge`` takes such a point as past the edge, so an edge found is, if
        # anything, outside the true one (the exact partial fractions cost K x K eigenvalue
        # problems per point, minutes for K in the hundreds).
        return E0, dE0
