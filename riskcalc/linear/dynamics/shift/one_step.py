"""FedAvg with ONE local step per round under covariate shift (derived here).

Model as ``sigma.fedavg.one_step`` (client j: gamma_j, r_j, sigma_j, weight p_j; theta_0 and u_j
uniform in direction; w_0 = 0), but client j's rows are N(0, Sigma_j), the Sigma_j diagonal in
one shared basis: on the joint measure mu of ``riskcalc.linear.engine.joint_spectrum`` (atoms k
of weight h_k, type t's eigenvalue v_t(k), client j of type t(j)). Client i's risk is
E[(w - theta_i)^T Sigma_i (w - theta_i)] (DESIGN.md, third and fourth rounds). S_j =
Sigma_j^(1/2) W_j Sigma_j^(1/2), A = sum_j p_j S_j, D = eta A, Q(z) = (A - z)^-1, tau = tr / d,
E[.] the integral over mu.

1. Round map and risk: ``sigma.fedavg.one_step``, step 1, with Sigma -> Sigma_i in the risk
   (R = R_T(D) = (1 - (1 - g D)^T) / D)::

       B_i = signal^2 tau(Sigma_i (I - g D)^(2T)) + sum_j p_j^2 r_j^2 eta^2 tau(S_j^2 R Sigma_i R)
             - 2 p_i r_i^2 eta tau(Sigma_i R S_i) + r_i^2 tau(Sigma_i),
       V_i = sum_j p_j^2 sigma_j^2 gamma_j eta^2 tau(S_j R Sigma_i R).

2. One point (``finite_clients.shift``'s D-valued subordination at a complex z instead of 0).
   E_D[Q] = Qb = (sum_l om_l Sigma_l - z)^-1, om_l = p_l e_l, e_l = 1 / (1 + p_l gamma_l
   g_t(l)), g_t = tau(Sigma_t Q) = E[v_t Qb]: one unknown per type (one type: ``sigma.fedavg.
   one_step``'s c = sum_l om_l, delta = g). Newton's Jacobian I - Tbar diag(rho), Tbar_tu =
   E[v_t v_u Qb^2], rho_u = sum_(l of type u) gamma_l om_l^2; dg/dz solves the same system with
   right side E[v Qb^2]. Given W_j, E[Q | W_j] = K_j = (p_j S_j + X_j)^-1 with the diagonal
   X_j = Qb^-1 - om_j Sigma_j, and p_j S_j K_j = I - X_j K_j, X_j Qb = 1 - alpha_j, alpha_j =
   om_j v_t(j) Qb, give ::

       tau(Sigma_i Q S_i) = e_i E[v_i^2 Qb],   tau(S_j Q) = e_j g_t(j),
       tau(S_j^2 Q) = gamma_j g_t(j) e_j E[v_t(j)] + e_j^2 E[v_t(j)^2 Qb].

3. Two points. For Q_n = Q(z_n) and a diagonal Z the second-order rule of
   ``finite_clients.shift`` (there at z1 = z2 = 0) with the row forms of the 2 x 2 upper
   triangular pencil [[A - z1, -Z], [0, A - z2]] (``sigma.fedavg.one_step``, step 2) reads
   E_D[Q1 Z Q2] = Qb1 (Z + sum_u c_u Sigma_u) Qb2, c = diag(rho12) y, (I - T diag(rho12)) y =
   z, T_uv = E[v_u v_v Qb1 Qb2], z_u = E[v_u Z Qb1 Qb2], rho12_u = sum_(l of type u) gamma_l
   om_l1 om_l2 (at z1 = z2 it is dQb/dz for Z = I: checked). Given W_j (type s = t(j)), the
   rest of the federation is free with the same rule over diag(rho12) minus client j's
   r_j = gamma_j om_j1 om_j2, on traces with K_j's, which the same rule for client j alone
   gives: E_D[K_j1 Y K_j2] = Qb1 (Y + c_j(Y) Sigma_s) Qb2, c_j(Y) = r_j E[v_s Y Qb1 Qb2] /
   (1 - r_j T_ss). So T^(j) = T + r_j T[:, s] T[s, :] / (1 - r_j T_ss) (its column i is the
   right side for Z = Sigma_i), and E[Q1 Sigma_i Q2 | W_j] = K_j1 Y K_j2, Y = Sigma_i + sum_u
   c^(j)_u Sigma_u. The identities of step 2 on both sides then give ::

       tau(S_j^2 Q1 Sigma_i Q2) = e_j1 e_j2 E[Y v_s^2 Qb1 Qb2]
                                  + c_j(Y) E[v_s (1 - alpha_j1)(1 - alpha_j2)] / p_j^2,
       tau(S_j Q1 Sigma_i Q2)   = e_j1 E[Y v_s Qb1 Qb2]
                                  - c_j(Y) (E[v_s Qb2] - om_j1 E[v_s^2 Qb1 Qb2]) / p_j,

   (c_j / p_j^2 = gamma_j e_j1 e_j2 y_s / (1 - r_j T_ss): no division by a small weight).
   One type: T^(j) = T / (1 - r_j T), y = T / (1 - kappa T) = delta12 and Y = s (1 + (kappa -
   kappa_j) delta12), ``sigma.fedavg.one_step``'s b_j: its closed forms (the tests compare).
4. Traces of functions of D are contour integrals on ``fedavg``'s ellipse around D's spectrum
   (tau(h (z - D)^-1) = -tau(h Q(z / eta)) / eta), the two-point ones double integrals, the
   signal term written tau(Sigma_i) + oint ((1 - g z)^(2T) - 1) tau(Sigma_i (z - D)^-1), as
   ``sigma.fedavg.one_step``, step 3. The solve follows g from a far ellipse inwards (Euler
   predictor, Newton); the physical branch has Im g_t > 0 above the real axis.
5. Edges of A's spectrum (pooled N > d: no atom at 0, sum_j 1 / gamma_j > 1). On the real axis
   outside the spectrum the solution g is real, every entry of Qb has the side's sign (Qb > 0
   below the spectrum, < 0 above it: E_D[(A - x)^-1]) and the spectral radius of Tbar
   diag(rho) is below 1 (``finite_clients.shift``'s stability); at an edge the radius reaches
   1 (a fold of the real branch). In a gap between bands the branch is real and stable too,
   but the entries of the coordinates carried by the band beyond have the other sign: the
   test that stops a walk stepping over a narrow band (a power law's few largest
   eigenvalues far above the bulk: measured, powerlaw:1,200 against flat spectra, a top edge
   of 4.84 instead of 12.73 with the sign of g alone). The top edge: the real branch followed
   down from x = 2 sum_j p_j max v_t(j) (1 + sqrt(gamma_j))^2 (above the spectrum), the bottom
   one up from x = -x_top, each by growing steps then bisection between the last point that
   passes and the first that does not, to 1e-13 relative. After the contour solve, its mass
   (1 / 2 pi i) oint tau((z - D)^-1) dz must be 1: a band left outside raises.

T = inf: the pooled weighted least squares, ``clients_limit("fedavg", spectra=...)`` (the tests
compare). Not covered: pooled N <= d (refused). K >= 2 local steps: ``shift.curves``; the
clients' own models (K = 1 too): ``shift.own`` (``rounds_limit`` adds them).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed
from riskcalc.linear.dynamics.shift.cost import MAX_SECONDS, edge_seconds, shift_seconds
from riskcalc.linear.dynamics.sigma.kept import Kept
from riskcalc.linear.dynamics.fedavg import (contraction, ellipse, enclosed, round_filters,
                                              far, moving, round_horizon, settle)

_NEWTON_ITER = 60
_NEWTON_TOL = 1e-10
#: Relative width of the bracket that ends the edges' bisection.
_EDGE_TOL = 1e-13
#: Most bytes of the pair arrays held at once (the upper nodes are taken in chunks).
CHUNK_BYTES = 6.4e7
#: ``ShiftLaws.edges`` of the last 32 distinct laws of at most 1 MiB of arrays each (advise's
#: rounds candidates ask for the same round map's edges once per curve).
EDGES_KEPT = Kept(32, 1 << 20)


class ShiftLaws:
    """g(z) on the joint measure and the moments the traces need (module docstring, step 2)."""

    def __init__(self, joint, gam, p):
        self.v, self.h = np.asarray(joint.values, float), np.asarray(joint.weights, float)
        self.types = np.asarray(joint.types)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.T = self.v.shape[0]
        self.onehot = (self.types[:, None] == np.arange(self.T)).astype(float)   # (M, T)
        self.mean = self.v @ self.h                                               # E[v_t]

    def om(self, g):
        """om_l at g (T, N): (M, N)."""
        return self.p[:, None] / (1.0 + (self.gam * self.p)[:, None] * g[self.types])

    def qbar(self, g, z):
        """Qb (N, K) at g (T, N) and z (N,)."""
        W = self.onehot.T @ self.om(g)
        return 1.0 / (W.T @ self.v - z[:, None])

    def residual(self, g, z):
        """F = g - E[v Qb] (T, N), its Jacobian (N, T, T), dF/dz (T, N), and the radius
        of Tbar diag(rho) (N,) when asked (real z)."""
        Qb = self.qbar(g, z)
        F = g - ((Qb * self.h) @ self.v.T).T
        rho = self.onehot.T @ (self.gam[:, None] * self.om(g) ** 2)              # (T, N)
        q2 = Qb ** 2 * self.h
        # Tbar_tu = E[v_t v_u Qb^2]: one matrix product per node (a three-operand einsum
        # loops in C without BLAS: 85% of the edges' time at 120 covariances).
        Tbar = (q2[:, None, :] * self.v) @ self.v.T
        TD = Tbar * rho.T[:, None, :]
        return F, np.eye(self.T) - TD, -(q2 @ self.v.T).T, TD

    def newton(self, g, z):
        """Newton's method from g at z; None when it does not converge."""
        for _ in range(_NEWTON_ITER):
            F, J, _, _ = self.residual(g, z)
            try:
                step = np.linalg.solve(J, F.T[..., None])[..., 0].T
            except np.linalg.LinAlgError:
                return None
            g = g - step
            if not np.all(np.isfinite(g)):
                return None
            if np.all(np.abs(step) <= _NEWTON_TOL * (1.0 + np.abs(g))):
                F, J, _, _ = self.residual(g, z)
                return g - np.linalg.solve(J, F.T[..., None])[..., 0].T
        return None

    def solve(self, nodes, t_path, scale):
        """g at the nodes of the ellipse t_path[-1], followed from the far ellipse t_path[0]
        (Euler predictor in z, Newton's method at each stage)."""
        z = nodes(t_path[0])
        g = -(self.mean[:, None] / z[None, :]) + 0j
        for _ in range(5):          # far out g = -E[v] / z + O(z^-2): a few fixed-point steps
            g = ((self.qbar(g, z) * self.h) @ self.v.T).T
        for t in t_path:
            zn = nodes(t)
            _, J, Fz, _ = self.residual(g, z)
            g = g - np.linalg.solve(J, Fz.T[..., None])[..., 0].T * (zn - z)
            z = zn
            g = self.newton(g, z)
            if g is None:
                raise SolverError("rounds limit under covariate shift: Newton's method on the "
                                  f"contour did not converge at t = {t:.3g}")
        if np.any(g.imag * np.sign(z.imag) < -1e-12 * scale):
            raise SolverError("rounds limit under covariate shift: the contour solve left the "
                              "physical branch (Im g < 0 above the real axis)")
        return g

    def inside(self, g, x, sign):
        """Newton from g at the real x: (g, True) on the stable real branch of the side
        ``sign`` (+1: left of the spectrum, Qb > 0; -1: right of it, Qb < 0), (g, False) when
        Newton fails, an entry of Qb has the other sign (a step past a band) or the radius of
        Tbar diag(rho) reaches 1 (module docstring, step 5)."""
        g1 = self.newton(g, np.array([x]))
        # Outside the spectrum on one side every diagonal entry of E_D[(A - x)^-1] has that
        # side's sign; in a gap some flip (the coordinates carried by a band on the other
        # side: a walk stepping over a narrow band, e.g. a power law's few largest
        # eigenvalues, lands in such a gap, where the branch is real and stable too).
        if g1 is None or not np.all(sign * self.qbar(g1, np.array([x])) > 0):
            return g, False
        TD = self.residual(g1, np.array([x]))[3][0]
        return g1, bool(np.max(np.abs(np.linalg.eigvals(TD))) < 1.0)

    def edge(self, x0, direction):
        """The first x from x0 in ``direction`` (-1: down to the top edge, +1: up to the
        bottom edge) where the stable real branch ends."""
        g, ok = self.inside(-self.mean[:, None] / x0, x0, direction)
        if not ok:
            raise SolverError("rounds limit under covariate shift: no real solution outside "
                              "the round map's spectrum")
        good, step = x0, abs(x0) / 8.0
        while True:
            g1, ok = self.inside(g, good + direction * step, direction)
            if not ok:
                break
            good, g = good + direction * step, g1
            step *= 1.5
        bad = good + direction * step
        while abs(bad - good) > _EDGE_TOL * max(abs(good), abs(bad)):
            mid = 0.5 * (good + bad)
            g1, ok = self.inside(g, mid, direction)
            if ok:
                good, g = mid, g1
            else:
                bad = mid
        return 0.5 * (good + bad)

    def edges(self):
        """(a, b): the edges of A's spectrum (pooled N > d); refused before the scan when
        ``edge_seconds`` exceeds the time budget (many distinct covariances; refused alike
        when kept: the answer does not depend on what ran before). Kept for equal laws
        (``kept.Kept``: a kept value is the one a new scan would return)."""
        sec, limit = edge_seconds(self.T, self.h.size), allowed(MAX_SECONDS)
        if sec > limit:
            raise ValueError(f"covariate shift along the rounds: the round map's edges for "
                             f"{self.T} distinct covariances on {self.h.size} joint atoms would "
                             f"take about {sec:.3g} s here (more than {limit:.3g} s); ask fewer "
                             f"distinct covariances, {MORE_TIME}")
        key = EDGES_KEPT.key(self)
        found = EDGES_KEPT.get(key)
        if found is None:
            found = self._edges()
            EDGES_KEPT.put(key, found)
        return found

    def _edges(self):
        top = 2.0 * float(np.sum(self.p * self.v.max(axis=1)[self.types]
                                 * (1.0 + np.sqrt(self.gam)) ** 2))
        return self.edge(-top, +1.0), self.edge(top, -1.0)


def check_clients(gam, joint, atom_ok=False):
    """ValueError where ``joint`` counts the clients otherwise than ``gam``, or where pooled
    N <= d (sum_j 1/gamma_j <= 1: the round map's spectrum reaches 0), unless ``atom_ok`` (the
    routes whose edges hold D's atom at 0 apart: ``shift.algorithm1.prox``, ``shift.kinf``;
    pooled N = d within 1e-9 is refused before, by ``rounds_limit``); every route along the
    rounds under covariate shift starts here."""
    if joint.types.size != gam.size:
        raise ValueError(f"spectra lists {joint.types.size} client spectra for {gam.size} "
                         "clients")
    if not atom_ok and not np.sum(1.0 / gam) > 1.0 + 1e-9:
        raise ValueError("covariate shift along the rounds needs pooled N > d (sum_j 1/gamma_j "
                         f"> 1, got {np.sum(1.0 / gam):.6g})")


def _pairs(laws, g1, z1, g2, z2, tau_i):
    """For each target type of ``tau_i`` (list) the sums over the clients j of
    (p_j r_j)^2-free two-point traces: P[j] = tau(S_j^2 Q1 Sigma_i Q2) and N[j] = tau(S_j Q1
    Sigma_i Q2) at the node pairs (N1, N2) (module docstring, step 3): (J, types_i, N1, N2)."""
    v, h, types = laws.v, laws.h, laws.types
    Qb1, Qb2 = laws.qbar(g1, z1), laws.qbar(g2, z2)                     # (N1, K), (N2, K)
    om1, om2 = laws.om(g1), laws.om(g2)                                  # (M, N1), (M, N2)
    QQ = (Qb1[:, None, :] * Qb2[None, :, :] * h).reshape(-1, v.shape[1])  # (N1 N2, K)
    nt, shape = laws.T, (Qb1.shape[0], Qb2.shape[0])
    # E[v_u v_w Q1 Q2] and E[v_s^2 v_u Q1 Q2] as matrix products over the joint atoms.
    T = (QQ @ (v[:, None, :] * v[None, :, :]).reshape(nt * nt, -1).T).reshape(
        shape + (nt, nt))
    T3 = (QQ @ (v[:, None, :] ** 2 * v[None, :, :]).reshape(nt * nt, -1).T).reshape(
        shape + (nt, nt))
    gam, p = laws.gam, laws.p
    rho = np.einsum("mu,ma,mb->abu", laws.onehot * gam[:, None], om1, om2)
    eye = np.eye(laws.T)
    M = gam.size
    P = np.empty((M, len(tau_i)) + T.shape[:2], complex)
    N = np.empty_like(P)
    Es2Q2 = (Qb2 * h) @ v.T                                              # E[v Qb2] (N2, T)
    for j in range(M):
        s = types[j]
        r = gam[j] * om1[j][:, None] * om2[j][None, :]
        den = 1.0 - r * T[..., s, s]
        Tj = T + (r / den)[..., None, None] * T[..., :, s, None] * T[..., None, s, :]
        rj = rho.copy()
        rj[..., s] -= r
        y = np.linalg.solve(eye - Tj * rj[..., None, :], Tj[..., :, tau_i])   # (.., T, I)
        Y = eye[:, tau_i] + rj[..., :, None] * y                            # coefficients
        vs = v[s]
        Ts, Tss = T[..., s, :], T3[..., s, :]             # E[v_s v_u Q1 Q2], E[v_s^2 v_u ..]
        EY_s = np.einsum("abu,abui->abi", Ts, Y)
        EY_ss = np.einsum("abu,abui->abi", Tss, Y)
        cj = (r / den)[..., None] * EY_s                                    # c_j(Y)
        e1, e2 = om1[j] / p[j], om2[j] / p[j]
        a1 = om1[j][:, None] * vs * Qb1                                     # alpha_j1 (N1, K)
        a2 = om2[j][:, None] * vs * Qb2
        tail = ((1.0 - a1) * (vs * h)) @ (1.0 - a2).T
        P[j] = np.moveaxis(e1[:, None, None] * e2[None, :, None] * EY_ss
                           + cj * tail[..., None] / p[j] ** 2, -1, 0)
        mid = Es2Q2[None, :, s] - om1[j][:, None] * Ts[..., s]
        N[j] = np.moveaxis(e1[:, None, None] * EY_s - cj * mid[..., None] / p[j], -1, 0)
    return P, N


def shift_curves(gam, r, sigma, p, signal, eta, g, rounds, joint):
    """Bias, variance and distance to the fixed point of every client at every T of
    ``rounds``, FedAvg with one local step of size ``eta`` under covariate shift (module
    docstring); the dict of ``fedavg.round_map_curves`` without ``local`` or ``personalize``
    (``shift.curves.one_step_extras``).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, eta, g : float
    rounds : ndarray of float (integers or inf)
    joint : riskcalc.linear.engine.joint_spectrum.JointSpectrum
        The clients' commuting covariances (their types and joint measure).
    """
    check_clients(gam, joint)
    laws = ShiftLaws(joint, gam, p)
    a, b = laws.edges()
    a, b = eta * a, eta * b
    if not a > 1e-9 * b:
        raise ValueError("the round map's spectrum reaches 0 (its bottom edge below 1e-9 of its "
                         "top: pooled N near d); move gamma off the threshold")
    rho = contraction(a, b, g)
    settled, over, finite, t_max = round_horizon(rho, rounds)
    on_ellipse, path, w, n = ellipse(a, b, g, rho, t_max)
    M, ntype = gam.size, laws.T
    sec, limit = shift_seconds(M, ntype, laws.h.size, n), allowed(MAX_SECONDS)
    if sec > limit:
        raise ValueError(f"covariate shift along the rounds: {n // 2 * n} node pairs for {M} "
                         f"clients of {ntype} distinct covariances would take about {sec:.3g} s "
                         f"here (more than {limit:.3g} s); ask fewer rounds, clients or "
                         f"distinct covariances, {MORE_TIME}")

    def nodes(tt):      # in A's variable z / eta
        return on_ellipse(tt) / eta

    gz = laws.solve(nodes, path, b / eta)
    zA = nodes(path[-1])
    z = eta * zA
    Qb = laws.qbar(gz, zA)
    om = laws.om(gz)
    e = om / p[:, None]
    types, v, h = laws.types, laws.v, laws.h
    m2 = ((Qb * h) @ (v ** 2).T).T                                        # E[v_t^2 Qb] (T, N)
    m0 = Qb @ h
    # No atom at 0 here (pooled N > d): the walk's edges must enclose all of D's spectrum.
    enclosed(float((w @ (-m0 / eta)).imag), 0.0, (a, b), "rounds limit under covariate shift")
    gf, zf = np.concatenate([gz, gz.conj()], axis=1), np.concatenate([zA, zA.conj()])
    Wf = np.concatenate([w / 2j, (w / 2j).conj()])
    tau_i = sorted(set(types.tolist()))
    wu, wv = p ** 2 * r ** 2, p ** 2 * sigma ** 2 * gam
    A1, R1 = round_filters(z, g, rounds, finite)
    _, R2 = round_filters(eta * zf, g, rounds, finite)
    with np.errstate(over="ignore", invalid="ignore"):

        def one(F, X):       # (1 / 2 pi i) oint F X dz over the full contour, (nT, ...)
            return ((F * w) @ X.T).imag

        # The double integrals are linear in the upper nodes' rows: summed chunk by chunk.
        du, dv = ({ti: 0.0 for ti in tau_i} for _ in range(2))
        right = R2 * Wf
        per_row = 16.0 * n * (v.shape[1] + 8 * ntype ** 2 + 2 * M * len(tau_i))
        step = max(1, int(CHUNK_BYTES // per_row))
        for lo in range(0, n // 2, step):
            rows = slice(lo, lo + step)
            P, N = _pairs(laws, gz[:, rows], zA[rows], gf, zf, tau_i)
            left = R1[:, rows] * (w[rows] / 2j)
            for k, ti in enumerate(tau_i):
                du[ti] = du[ti] + 2.0 * np.sum((left @ np.tensordot(wu, P[:, k], 1)) * right,
                                               axis=1).real
                dv[ti] = dv[ti] + 2.0 * np.sum((left @ np.tensordot(wv, N[:, k], 1)) * right,
                                               axis=1).real
        Es = laws.mean[types]
        signal_term = Es[:, None] + one(A1 - 1.0, -gz / eta).T[types]
        bias = (signal ** 2 * signal_term + np.array([du[ti] for ti in types])
                + 2.0 * (p * r ** 2)[:, None] * one(R1, e * m2[types]).T
                + (r ** 2 * Es)[:, None])
        var = np.array([dv[ti] for ti in types])
        F = A1 / z ** 2
        g_j, m2_j = gz[types], m2[types]
        dist = (signal ** 2 * one(A1, -m0[None, :] / eta)[:, 0]
                + one(F, -(gam[:, None] * g_j * e * laws.mean[types][:, None]
                           + e ** 2 * m2_j) / eta) @ (wu * eta ** 2)
                + one(F, -(e * g_j) / eta) @ (wv * eta ** 2))
    big = np.isfinite(rounds) & (rounds > over)
    moves, noisy = moving(signal, r), bool(np.any(wv > 0))
    dist = far(dist, big, moves or noisy)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(v.max()) + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "rounds limit under covariate shift",
                       moves=moves)

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": 0.0, "nodes": n}
