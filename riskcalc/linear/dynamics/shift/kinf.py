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
   taken at eps = 0 exactly (``KinfPencil.solve``).
4. Curves: ``sigma.fedavg.curves.pencil_curves`` on this pencil with the global step g, one
   evaluation per client metric h v_i (as ``shift.algorithm1.prox``, step 4), edges
   ``pencil_edges.edges`` with q <= 1 joined with D's atoms (``_edges``; pooled N < d: the
   atom at 0 held apart, as ``pencil_edges``).

Scope: the server model (``risk``); the clients' own models and personalization after the
rounds are refused. Checks (``tests/test_rounds_shift_kinf.py``): all clients on Sigma = I
against FedAvg's K = inf route (``fedavg``), equal covariances against the exact prox at lam ->
0 (``shift.algorithm1.prox`` with global step g / lam: the gap shrinks like lam), the literal
algorithm simulated (``montecarlo.linear.rounds``, ``spectra``, K = inf).
"""

from __future__ import annotations

import copy

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.shift.one_step import check_clients
from riskcalc.linear.dynamics.shift.pencil import ShiftPencil, client_ends
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma.pencil_edges import edges

#: The continuation of step 3 (E_j^-1's x'-entry -eps), ending at 0.
_EPS = np.concatenate([np.geomspace(1.0, 1e-10, 21), [0.0]])


class KinfPencil(ShiftPencil):
    """The limit pencil of the module docstring (steps 1-3): two blocks (x'_j, u_j) per
    client, client j's v_j(a) on its rows, ``einv`` the E_j^-1 (M, 2, 2)."""

    what = "FedAvg with exact local solves under covariate shift"

    def __init__(self, joint, gam, p):
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
        rowv = np.zeros((self.V.shape[1], self.n))
        rowv[:, self.rows] = self.V.T[:, :, None]
        self.rowv = rowv

    def chat(self, tau):
        """Chat_j = (E_j^-1 + gamma_j tau_j)^-1 (step 2)."""
        return np.linalg.inv(self.einv + self.gam[:, None, None] * tau)

    def two_point(self, one1, one2, couplings, block=(0, 0)):
        """``SigmaPencil.two_point``'s (len(couplings), 2, N1, N2) under shift: E[h s Ghat12_ab]
        and E[h Ghat12_ab] (s the metric) through ``ShiftPencil.two_point``."""
        cps = [(f[0], f[1], f[2], tuple(f[3]) if len(f) > 3 else tuple(block))
               for f in couplings]
        return ShiftPencil.two_point(self, one1, one2, cps, np.stack([self.h * self.s, self.h]))

    def solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """``SigmaPencil.solve`` from the start of step 3 when no ``tau0`` is given."""
        if tau0 is None:
            tau0 = self._start(nodes(path[0]))
        return super().solve(nodes, path, check=check, tau0=tau0, tolerant=tolerant)

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


def _edges(pen, top, gam, p):
    """(a, b, 0): the edges of D = sum_j p_j P_j for ``pencil_curves``' contour (step 4). The
    ranges of the X_j^T are n_j-dimensional subspaces in general position, so D has an atom at
    sum_(gamma_j < 1) p_j (the clients with gamma_j < 1 act as the identity) of mass (1 -
    sum_(gamma_j > 1) 1 / gamma_j)_+ (the others' null spaces meet there) and one at 1 of
    mass (sum_(gamma_j > 1) 1 / gamma_j - (m - 1))_+ (their m ranges meet there); one client
    with gamma_j > 1 leaves only these two atoms, two or more add a continuous part
    (``pencil_edges.edges``, q <= 1), joined with them here."""
    over = gam > 1.0
    m, inv = int(over.sum()), float(np.sum(1.0 / gam[over]))
    if m == 0:
        return 1.0, 1.0, 0.0
    # Without a client of gamma_j < 1 the atom below is at 0: D's null space, held apart as
    # ``pencil_edges.edges`` holds it (pooled N < d; the contour stays around the rest).
    zero = 1.0 - inv if m == gam.size and inv < 1.0 else 0.0
    low = float(np.sum(p[~over])) if inv < 1.0 and not zero else np.inf
    high = 1.0 if inv > m - 1.0 else -np.inf
    if m == 1:
        return min(low, high), high, zero
    a, b, _ = edges(pen, top, qmax=np.ones(gam.size))
    return min(a, low), max(b, high), zero


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
    """
    M = gam.size
    check_clients(gam, joint, atom_ok=True)
    if np.any(np.abs(gam - 1.0) <= 1e-9):
        raise ValueError("gamma: FedAvg's exact local solves under covariate shift need each "
                         "gamma_j away from 1 (within 1e-9 of 1 its sample spectrum reaches 0 "
                         "with no atom there)")
    pen = KinfPencil(joint, gam, p)
    top = client_ends(pen.V, pen.h, gam)[:, 1]
    found = _edges(pen, top, gam, p)
    e = np.eye(pen.n)
    over = gam > 1.0
    v = e[np.zeros(M, int)] - np.where(over[:, None], e[pen.rows[:, 0]], 0.0)
    wn = e[pen.rows[:, 1]]
    rows = [pencil_curves(_metric(pen, pen.V[i]), found, g, gam, r, sigma, p, signal, rounds,
                          v, wn) for i in range(M)]
    out = dict(rows[0])
    out["bias"] = np.stack([x["bias"][i] for i, x in enumerate(rows)])
    out["variance"] = np.stack([x["variance"][i] for i, x in enumerate(rows)])

    def local(terms=None):
        """The clients' own models: refused (module docstring, scope)."""
        raise ValueError("local_risk: under covariate shift, FedAvg's own models and "
                         "personalization after rounds with exact local solves "
                         "(local_steps = inf) are not covered yet")

    def personalize(**kind):
        """Personalization after the rounds: refused (module docstring, scope)."""
        local()
    personalize.tops = top
    out["local"], out["personalize"] = local, personalize
    return out
