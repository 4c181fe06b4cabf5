"""FedAvg with exact local solves (local_steps = inf) under COVARIATE SHIFT: the server model's
curves, each client's risk in its own covariance (derived here).

Model as ``shift.pencil`` (client j: gamma_j, r_j, sigma_j, p_j, rows N(0, Sigma_j), the Sigma_j
diagonal in one basis; joint measure mu, atoms a of weight h_a, client j's eigenvalue v_j(a);
S_j = X_j^T X_j / n_j, b_j = S_j theta_j + n_j, n_j of covariance sigma_j^2 gamma_j S_j / d).
Local gradient descent from the server model w run to convergence ends at the least squares
solution nearest w, v_j = (I - P_j) w + S_j^+ b_j (P_j the projection on the range of S_j), and
the server moves w <- w + g sum_j p_j (v_j - w): FedAvg's round map (``sigma.fedavg.curves``)
with the filter q = P_j, (q / s) = S_j^+, D = sum_j p_j P_j (issue 29: K = inf).

1. The limit of the exact prox. With B_j = (S_j + lam)^-1, P_j = lim S_j B_j and S_j^+ =
   lim S_j B_j^2 as lam -> 0 (on the range of S_j: 1 / s; on its null space 0): FedAvg K =
   inf is the lam -> 0 limit of Algorithm 1 with exact prox and global step g / lam
   (``shift.algorithm1.prox``, its pencil ``sigma.prox_sigma``, step 1). In that pencil (row
   0: (z - sum_j p_j) x_0 + lam sum_j p_j x_j; row j: x_0 - (S_j + lam) x_j) scale the
   column of client j: x'_j = lam x_j, row j: x_0 - (1 + S_j / lam) x'_j, row 0's entry p_j,
   and add per client the block u_j = S_j B_j^2 x_0 through the row -(1 + S_j / lam) u_j +
   (S_j / lam^2) x'_j = 0 (x'_j = lam B_j x_0, so u_j = (S_j B_j / lam) x'_j). Then
   G_(x'_j),0 = (1 - q_j) G_00, q_j G_00 = G_00 - G_(x'_j),0 (v_j = e_0 - e_(x'_j)), and
   G_(u_j),0 = S_j B_j^2 G_00 -> S_j^+ G_00 (wn_j = e_(u_j)). The random part is sum_j E_j
   (x) S_j with E_j = [[-1 / lam, 0], [1 / lam^2, -1 / lam]] on (x'_j, u_j) (rows = columns),
   E_j^-1 = [[-lam, 0], [-1, -lam]] -> [[0, 0], [-1, 0]]. Every block of G stays finite as
   lam -> 0: G_(x'x') -> p_j P G_00 P - P (P = I - P_j), G_(u x') = S_j B_j^2 (G_0x' - I) ->
   S_j^+ (G_0x' - I), G_(uu) = -lam B_j -> -P, G_(x'u) = 0. (A block u_j = B_j (x_0 - x'_j)
   without the scaling fails: its G_(u x') = lam B_j^2 grows like 1 / lam on the null space;
   measured, one client on Sigma = I, gamma = 2: tau there -4.4e9 at lam = 1e-10.)
2. Deterministic equivalent: ``shift.pencil``, step 2, with Chat_j = E_j (I + gamma_j tau_j
   E_j)^-1 = (E_j^-1 + gamma_j tau_j)^-1, tau_j = E[v_j Ghat[c_j, r_j]] (2 x 2), finite at
   E_j^-1 = [[0, 0], [-1, 0]]. (For one client on Sigma = I with gamma > 1 the x'-entry gives
   kappa = -1 / (gamma tau) with z = kappa (z - 1)(gamma - 1) and tau(G_00) = (1 - 1 / gamma)
   / z + (1 / gamma) / (z - 1): the atom at 0 of mass 1 - 1 / gamma of the projection P.)
   Newton's Jacobian and the two-point system keep their forms (dChat = -gamma Chat dtau
   Chat; the block triangular inverse of step 3 is (E^-1 + gamma T)^-1 whatever E^-1):
   ``ShiftPencil``'s with this ``chat``. A client with gamma_j < 1 has S_j invertible (q_j =
   1): its x_j stays unscaled (lam x_j -> 0 leaves row 0), E_j^-1 = -I, x_j = u_j = S_j^-1
   x_0 (the duplicate keeps two blocks per client), v_j = e_0, wn_j = e_(u_j).
3. Start: at lam = 0 and tau = 0 Chat is singular, so the solve's first node is reached
   along E_j^-1 = [[-eps, 0], [-1, -eps]], eps from 1 down to 0 (Newton at each), the answer
   taken at eps = 0 exactly (``KinfPencil._solve``).
4. Curves: ``sigma.fedavg.curves.pencil_curves`` on this pencil with the global step g, one
   evaluation per client metric h v_i (as ``shift.algorithm1.prox``, step 4), edges
   ``pencil_edges.edges`` with q <= 1 joined with D's atoms (``sigma.fedavg.exact.
   projection_edges``, the same D as under a shared spectrum; pooled N < d: the atom at 0 held
   apart, as ``pencil_edges``).

5. Own models: v_i - theta_i = P_i' (w_(T-1) - theta_i) + S_i^+ n_i (P_i' = I - P_i), with
   w_(T-1) - theta_i = -P theta_0 + R c - u_i, c = sum_j p_j (q_j u_j + S_j^+ n_j), P = (I
   - g D)^(T-1), R = R_(T-1)(D) (``sigma.prox_sigma``, step 4). The COLUMN x'_i of G reads
   it (the rows G_(l, x'_i) = (left factor of l) G_00 P_i' p_i): G_(0, x'_i) = p_i G_00 P_i',
   G_(x'_j, x'_i) = P_j' G_(0, x'_i) - delta_ij P_i', G_(u_j, x'_i) = S_j B_j^2 (G_(0, x'_i)
   - delta_ij I) -> S_j^+ (...). So with Z(a) = sum_l a_l G_(l, x'_i), E0 = e_0 / p_i, EX_j
   = (p_j / p_i) e_(x'_j) (0 where gamma_j < 1: q_j = 1), EU_j = (p_j / p_i) e_(u_j), AU_j =
   p_j E0 - EX_j: Z(AU_j) = p_j q_j G_00 P_i' + delta_ij P_i', Z(EU_j) = p_j S_j^+ G_00 P_i'
   - delta_ij S_i^+, Z(-E0) = -G_00 P_i', Z_inf(EX_i) = -P_i', Z_inf(EU_i) = -S_i^+ and
   S_j Z(EU_j) = Z(AU_j) - delta_ij I: ``sigma.prox_sigma``'s step 4 term by term (its
   lam e_0, lam e_j, e_j -> E0, EX_j, EU_j; (v_i - theta_i)^T = sum_j oint R u_j^T Z(AU_j)
   + ...), the two-point functions at the block (x'_i, x'_i) of this (not the transposed)
   pencil in client i's metric h v_i, ``sigma.fedavg.own.assemble``. A client with gamma_i <
   1 has v_i = S_i^-1 b_i from T = 1 on: no bias, variance sigma_i^2 gamma_i tau(Sigma_i
   S_i^-1) = -sigma_i^2 gamma_i E[v_i Ghat[x_i, x_i]].
6. Personalization (FTFA, RTFA) from w_T: ``shift.personalize.personal_models`` on the
   TRANSPOSED pencil (L^T: its row 0 holds G_(b, 0)^T, so sum_b au_j[b] G^T_(0b) = p_j G_00
   q_j with au_j = p_j (e_0 - e_(x'_j)) and G_00 S_j^+ p_j with wn_j = p_j e_(u_j)), its
   chains downstream of block 0 with Chat_j = (E_j^-1 + gamma_j tau_j)^-1 on the base and
   chain blocks together (``_KinfPersonal``), on the curves' contour (solution transposed).

Checks (``tests/test_rounds_shift_kinf.py``): all clients on Sigma = I against FedAvg's K =
inf route (``fedavg``: server, ``local_models``' own models, ``personalize``), the exact prox
at lam with global step g / lam (``shift.algorithm1.prox``: server and own models) approaching
it in proportion to lam under shift; the literal algorithm simulated (``montecarlo.linear.
rounds``, ``spectra``, K = inf) outside the suite (``docs/rounds.rst``).
"""

from __future__ import annotations

import copy

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import moving, round_horizon, settle
from riskcalc.linear.dynamics.shift.one_step import check_clients
from riskcalc.linear.dynamics.shift.pencil import (MetricPencil, ShiftPencil, client_ends,
                                                   forget_pairs)
from riskcalc.linear.dynamics.shift.personalize import ShiftPersonalPencil, personal_models
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma.fedavg.exact import projection_edges
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble
from riskcalc.linear.dynamics.sigma.guards import unit_top
from riskcalc.linear.dynamics.sigma.personalize_sigma import personal_unknowns

#: The continuation of step 3 (E_j^-1's x'-entry -eps), ending at 0.
_EPS = np.concatenate([np.geomspace(1.0, 1e-10, 21), [0.0]])


class KinfPencil(MetricPencil):
    """The limit pencil of the module docstring (steps 1-3): two blocks (x'_j, u_j) per
    client, client j's v_j(a) on its rows, ``einv`` the E_j^-1 (M, 2, 2)."""

    what = "FedAvg with exact local solves under covariate shift"

    def __init__(self, joint, gam, p, transposed=False):
        super().__init__(joint, gam, p, 1.0, 1)
        M = self.M
        self.K, self.n = 2, 1 + 2 * M
        self.rows = 1 + np.arange(2 * M).reshape(M, 2)
        self.cols = self.rows.copy()
        over = self.gam > 1.0
        x, u = self.rows[:, 0], self.rows[:, 1]
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = -self.p.sum()
        L0[0, x[over]] = self.p[over]
        L0[x, 0] = 1.0
        L0[u[~over], 0] = 1.0
        L0[x[over], x[over]] = L0[u[over], u[over]] = -1.0
        self.L0 = L0
        # E_j^-1 on (x'_j, u_j) (step 1): [[0, 0], [-1, 0]] (gamma_j > 1), -I (gamma_j < 1).
        einv = np.zeros((M, 2, 2))
        einv[over, 1, 0] = -1.0
        einv[~over] = -np.eye(2)
        self.einv = einv
        if transposed:      # L^T (rows = columns here): L0^T, E_j^T (step 6)
            self.L0, self.einv = L0.T.copy(), einv.transpose(0, 2, 1).copy()
        rowv = np.zeros((self.V.shape[1], self.n))
        rowv[:, self.rows] = self.V.T[:, :, None]
        self.rowv = rowv

    def chat(self, tau):
        """Chat_j = (E_j^-1 + gamma_j tau_j)^-1 (step 2)."""
        return np.linalg.inv(self.einv + self.gam[:, None, None] * tau)

    def _solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """``SigmaPencil.solve`` from ``tau0``, or from the start of step 3 without one."""
        if tau0 is None:
            tau0 = self._start(nodes(path[0]))
        return super()._solve(nodes, path, check=check, tau0=tau0, tolerant=tolerant)

    def _start(self, z):
        """tau at the nodes z along E_j^-1 = diag(-eps, -1), eps -> 0 (step 3)."""
        pen = copy.copy(self)
        over = self.gam > 1.0
        tau = np.zeros((z.size, self.M, self.K, self.K), complex)
        for k, eps in enumerate(_EPS):
            pen.einv = self.einv.copy()
            pen.einv[over, 0, 0] = pen.einv[over, 1, 1] = -eps
            for it in range(60 if k == 0 else 40):
                res, C, G = pen.residual(z, tau)
                if k == 0 and it < 40:          # far out at eps = 1: a contraction
                    tau = tau - res
                    continue
                if np.max(np.abs(res)) <= 1e-14 * (1.0 + np.max(np.abs(tau))):
                    break
                step = np.linalg.solve(pen._jacobian(C, G), res.reshape(z.size, -1, 1))
                tau = tau - step.reshape(tau.shape)
            else:
                raise SolverError(f"{self.what}: the start's continuation did not converge "
                                  f"(eps = {eps:.3g})")
        return tau


def _metric(pen, values):
    """A shallow copy of ``pen`` whose traces read the metric ``values``."""
    out = copy.copy(pen)
    out.s = np.asarray(values, float)
    return out


def shift_kinf_curves(gam, r, sigma, p, signal, g, rounds, joint):
    """Bias, variance and distance to the fixed point of FedAvg's server model with exact local
    solves under covariate shift at every T of ``rounds``, each client's risk in its own
    covariance (module docstring); the dict of ``sigma.fedavg.curves.pencil_curves``.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, g : float
        ||theta_0|| and the global step.
    rounds : ndarray of float (integers or inf)
    joint : riskcalc.linear.engine.joint_spectrum.JointSpectrum

    Raises
    ------
    ValueError
        Clients counted differently from the spectra, a client with gamma_j within 1e-9 of 1,
        or the routes' limits.

    Solved at the covariances' largest eigenvalue 1 (``sigma.guards.unit_top``: at 1e50 the
    risks were 100% off, silently, at 1e-50 refused as a negative quadratic form; fuzz41 path
    F6).
    """
    if np.max(joint.values) != 1.0:
        u, back = unit_top(joint, r, signal, None)
        return back(shift_kinf_curves(gam, u["r"], sigma, p, u["signal"], g, rounds,
                                      u["spectrum"]))
    M = gam.size
    check_clients(gam, joint, atom_ok=True)
    if np.any(np.abs(gam - 1.0) <= 1e-9):
        raise ValueError("gamma: FedAvg's exact local solves under covariate shift need each "
                         "gamma_j away from 1 (within 1e-9 of 1 its sample spectrum reaches 0 "
                         "with no atom there)")
    pen = KinfPencil(joint, gam, p)
    top = client_ends(pen.V, pen.h, gam)[:, 1]
    found = projection_edges(pen, lambda: top, gam, p)
    e = np.eye(pen.n)
    over = gam > 1.0
    v = e[np.zeros(M, int)] - np.where(over[:, None], e[pen.rows[:, 0]], 0.0)
    wn = e[pen.rows[:, 1]]
    seen = {}

    def own(c):
        """The own models (step 5); the contour kept for ``personalize``."""
        seen["c"] = c
        return _own_models(pen, c, gam=gam, r=r, sigma=sigma, p=p, signal=signal,
                           rounds=rounds)
    try:
        rows = [pencil_curves(_metric(pen, pen.V[i]), found, g, gam, r, sigma, p, signal,
                              rounds, v, wn, own_models=own if i == 0 else None)
                for i in range(M)]
    finally:
        forget_pairs()
    out = dict(rows[0])
    out["bias"] = np.stack([x["bias"][i] for i, x in enumerate(rows)])
    out["variance"] = np.stack([x["variance"][i] for i, x in enumerate(rows)])

    def local(terms=None):
        """(bias, variance), each (M, len(rounds)), of every client's own model after the
        local solve of round T, in its own covariance (step 5)."""
        if terms is not None:
            raise ValueError("covariate shift: personalization reads the curves' "
                             "``personalize``, not ``local``")
        return rows[0]["local"]()

    def personalize(**kind):
        """(bias, variance) after personalizing the round-T server model (step 6) on the
        curves' contour (kept by ``local``, solved first if not yet)."""
        if "c" not in seen:
            local()
        ob, ov = _personalized(joint, gam, r, sigma, p, signal, rounds, top, seen["c"], **kind)
        return settle(ob, ov, np.isfinite(rounds) & (rounds > round_horizon(
            out["contraction"], rounds)[1]), np.any((p > 0) & (sigma > 0)) | (sigma > 0),
            (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(pen.V.max())
            + 1e-300, f"{pen.what}, the personalized models", moves=moving(signal, r))
    personalize.tops = top
    out["local"], out["personalize"] = local, personalize
    return out


class _KinfPersonal(ShiftPersonalPencil):
    """``shift.personalize.ShiftPersonalPencil`` on the transposed ``KinfPencil`` (step 6):
    Chat_j = (E_j^-1 + gamma_j tau_j)^-1 with the base's E_j^-1 and the chain's 1 / e'."""

    def __init__(self, layout, e, kind, k=None, eta2=None, lam2=None, transposed=False):
        super().__init__(layout, e, kind, k, eta2, lam2, transposed)
        Kb = layout.K
        einv = np.zeros((self.M, self.K, self.K))
        einv[:, :Kb, :Kb] = layout.einv
        einv[:, Kb:, Kb:] = np.eye(self.K - Kb) / self.e[:, Kb:, None]
        self.einv = einv.transpose(0, 2, 1) if transposed else einv

    chat = KinfPencil.chat


def _personalized(joint, gam, r, sigma, p, signal, rounds, tops, c, *, kind, k=None,
                  eta2=None, lam2=None):
    """(bias, variance) after FTFA / RTFA from the round-T server model (step 6):
    ``shift.personalize.personal_models`` on the transposed pencil, whose row 0 holds q_j
    G_00 (au_j = p_j (e_0 - e_(x'_j)), p_j e_0 where gamma_j < 1) and G_00 S_j^+ (wn_j = p_j
    e_(u_j)), from the curves' contour ``c`` (its solution transposed)."""
    pen = KinfPencil(joint, gam, p, transposed=True)
    M = gam.size
    # Its size first (steps = 10^6: np.eye of 3e6 rows asked 65.5 TiB before the check).
    personal_unknowns(M, pen.rows.shape[1], kind, k)
    n = pen.n + M * ((k if kind == "ftfa" else 1) + 1)
    e = np.eye(n)
    x, u = pen.rows[:, 0], pen.rows[:, 1]
    au = p[:, None] * (e[0][None, :] - np.where((gam > 1.0)[:, None], e[x], 0.0))
    ct = dict(c, one=tuple(a.swapaxes(-1, -2) for a in c["one"]))
    return personal_models(pen, pen, 0.0, au, p[:, None] * e[u], ct, tops, gam, r, sigma,
                           signal, rounds, kind=kind, k=k, eta2=eta2, lam2=lam2,
                           pencil=_KinfPersonal)


def _own_models(pen, c, *, gam, r, sigma, p, signal, rounds):
    """(bias, variance), each (M, len(rounds)), of every client's own model after the local
    solve of round T in its own covariance (module docstring, step 5) from the contour ``c``
    of ``pencil_curves`` (its upper nodes ``one``, the full contour ``full``)."""
    M, h, V = pen.M, pen.h, pen.V
    over = gam > 1.0
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    _, Ci, Gi = pen.solve(lambda t: big, [0.0])
    C1, G1 = (np.concatenate([x, y]) for x, y in zip(c["one"], (Ci, Gi)))
    C2, G2 = (np.concatenate([x, y]) for x, y in zip(c["full"], (Ci, Gi)))
    N1 = c["z"].size
    e, x, u = np.eye(pen.n), pen.rows[:, 0], pen.rows[:, 1]
    couplings, lams = [], []
    for i in np.flatnonzero(over):
        E0, EU = e[0] / p[i], (p / p[i])[:, None] * e[u]
        EX = np.where(over, p / p[i], 0.0)[:, None] * e[x]     # q_j = 1 where gamma_j < 1
        AU, sg, bl = p[:, None] * E0[None, :] - EX, sigma[i] ** 2 * gam[i], (x[i], x[i])
        couplings += [(cc, W, Vc, bl) for cc, W, Vc in [
            (r ** 2, AU, AU), (sigma ** 2 * gam, AU, EU),                           # (R, R)
            ([signal ** 2], -E0[None, :], -E0[None, :]),                            # (Pm, Pm)
            ([2 * r[i] ** 2], EX[i][None, :], AU[i][None, :]),                      # (R, inf)
            ([sg, sg], np.stack([EX[i], -EU[i]]), np.stack([EU[i], AU[i]])),
            ([2 * signal ** 2], EX[i][None, :], -E0[None, :]),                      # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], EX[i][None, :], EX[i][None, :]),            # (inf, inf)
            ([sg], EX[i][None, :], -EU[i][None, :])]]
        lams += [h * V[i]] * 8
    bias, var = np.zeros((M, rounds.size)), np.zeros((M, rounds.size))
    if couplings:
        H = ShiftPencil.two_point(pen, (C1, G1), (C2, G2), couplings,
                                  np.asarray(lams)[:, None, :])[:, 0]
        H = H.reshape(-1, 8, N1 + 1, H.shape[-1])
        traces = np.stack([np.einsum("a,na->n", h * V[i], G1[:, :, u[i], x[i]])
                           for i in np.flatnonzero(over)])
        bias[over], var[over] = assemble(H, traces, c, gam[over], r[over], sigma[over],
                                         signal, (V @ h)[over], rounds)
    # gamma_i < 1: v_i = S_i^-1 b_i from T = 1 on (no bias; noise sigma_i^2 gamma_i
    # tau(Sigma_i S_i^-1) = -sigma_i^2 gamma_i E[v_i Ghat[x_i, x_i]], any node).
    for i in np.flatnonzero(~over):
        var[i] = -sigma[i] ** 2 * gam[i] * float(np.real(h * V[i] @ G1[-1, :, x[i], x[i]]))
        bias[i] = 0.0
    T0 = rounds == 0
    bias[:, T0] = ((signal ** 2 + r ** 2) * (V @ h))[:, None]
    var[:, T0] = 0.0
    return bias, var
