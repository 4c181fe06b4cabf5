"""FedAvg with exact local solves (K = inf) under a shared covariance spectrum: the server
model's curves and the clients' own models (derived here).

Model as ``sigma.fedavg.curves`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio
gamma_j, Sigma with spectrum H, b_j = S_j theta_j + n_j). Client j's exact local least squares
started from w (the min-norm displacement, ``fedavg`` step 1 with K = inf) returns
v_j = w + S_j^+ (b_j - S_j w) = N_j w + S_j^+ b_j, N_j = I - P_j the projection on the null
space of S_j (N_j = 0 when gamma_j < 1): the round map of ``sigma.fedavg.curves`` with the
filter q = P (q(s) = 1 for s > 0, q(0) = 0) and (q / s)(S_j) = S_j^+, D = sum_j p_j P_j. It is
the lam -> 0 limit of Algorithm 1's exact prox (``prox_sigma``, global step g / lam): N_j =
lim lam (S_j + lam)^-1; the limit is taken here in the pencil, exactly.

1. Linearization. For lam > 0 let N = lam (S + lam)^-1 (-> N_j). Since S + lam N is
   invertible with inverse S^+ + N / lam on the limit, (S + N)^-1 = S^+ + N. Two blocks per
   client, b_j and a_j ::

       row 0:    (z - sum_j p_j) x_0 + sum_j p_j x_(b_j)        = y_0,
       row b_j:  x_(a_j) - x_(b_j) - (S_j / lam) x_(b_j)          = y_(b_j),
       row a_j:  x_0 - x_(b_j) - S_j x_(a_j)                      = y_(a_j),

   so x_(b_j) = N_j (x_0 - y_(a_j)), x_(a_j) = S_j^+ (x_0 - y_(a_j)) + N_j (x_0 - y_(a_j) +
   y_(b_j)) and (z - D) x_0 = y_0 + sum_j p_j N_j y_(a_j) in the limit lam -> 0: G = L^-1 has
   G_00 = Gz = (z - D)^-1, G_(b_j),0 = N_j Gz, G_(a_j),0 = (S_j^+ + N_j) Gz, G_0,(a_j) = p_j Gz
   N_j. L = L0(z) + sum_j E_j (x) S_j with E_j = diag(-1 / lam, -1) on (r_j, c_j) = ((b_j,
   a_j), (b_j, a_j)). A client with gamma_j < 1 (S_j invertible, N_j = 0) takes row b_j:
   -x_(b_j) = y_(b_j) instead (E_j = diag(0, -1)); the identities above hold with N_j = 0.
2. Deterministic equivalent. ``sigma_pencil`` step 2 with the coefficient block E_j (its
   Woodbury step holds for any invertible E): Chat_j = (E_j^-1 + gamma_j tau_j)^-1, which is
   continuous at lam = 0 with E_j^-1 = diag(0, -1): Chat_j = (diag(0, -1) + gamma_j tau_j)^-1,
   the limit taken exactly (an atom of the sample spectrum at 0 of mass 1 - 1 / gamma_j lies
   in N_j). Written Chat_j = A_j (B_j + gamma_j tau_j A_j)^-1 (A = diag(1, -1), B = diag(0, 1);
   gamma_j < 1: A = diag(0, -1), B = I, i.e. E_j (I + gamma_j tau_j E_j)^-1), so
   dChat_j = -gamma_j Chat_j dtau_j Chat_j as for ``sigma_pencil``'s Newton step. At z -> inf
   (Gz -> 0) a client's block is the ridgeless limit of one sample covariance: N_j ~
   kappa (Sigma + kappa)^-1, 1 = gamma_j E_H[s / (s + kappa)], and S_j^+ ~ kappa' Sigma
   (Sigma + kappa)^-2, kappa' = 1 / (gamma_j kappa E_H[s / (s + kappa)^2]) (the derivative of
   kappa(lam) at 0), which gives Chat_j there (``_far``), the start of the continuation.
3. Curves: ``sigma.fedavg.curves.pencil_curves`` with q(S_j) Gz = Gz - G_(b_j),0 (v_j = e_0 -
   e_(b_j)) and G_00 S_j^+ = (G^T)_0,(a_j) - (G^T)_0,(b_j) (wn_j = e_(a_j) - e_(b_j)).
   Edges: ``pencil_edges.edges`` with q <= 1 joined with D's atoms (``projection_edges``,
   shared with ``shift.kinf``); the atom of D at 0 is (1 - sum_j min(1, 1 / gamma_j))_+ as for
   finite K.
4. Own models. v_i - theta_i = N_i (w_(T-1) - theta_i) + S_i^+ n_i with w_(T-1) - theta_i =
   -P theta_0 + R c - u_i, c = sum_j p_j (P_j u_j + S_j^+ n_j) (``sigma.fedavg.own``). With
   Y(a) = sum_c a_c (G^T)_(a_i),c (row a_i of the transposed pencil's inverse), step 1 gives
   Y(e_0) = p_i N_i Gz, Y(e_(b_j)) = p_i N_i Gz N_j - delta_ij N_i and Y(e_(a_j) - e_(b_j)) =
   p_i N_i Gz S_j^+ - delta_ij S_i^+; at z = inf Y_inf(e_(b_i)) = -N_i, Y_inf(e_(a_i) -
   e_(b_i)) = -S_i^+. Constants integrate to 0 against the polynomials R and P - 1, so ::

       v_i - theta_i = oint R Y(au_j) u_j + oint R Y(wn_j) n_j + oint (P - 1) Y(-e_0 / p_i)
                       theta_0 + Y_inf(e_(b_i)) (theta_0 + u_i) - Y_inf(e_(a_i) - e_(b_i)) n_i,

   au_j = (p_j / p_i) (e_0 - e_(b_j)), wn_j = (p_j / p_i) (e_(a_j) - e_(b_j)), and Y(wn_j) S_j =
   Y(au_j) - delta_ij I, -Y_inf(e_(a_i) - e_(b_i)) S_i = I + Y_inf(e_(b_i)): ``prox_sigma``
   step 4 term by term (its lam (p_j e_0 - e_j), e_j, -lam e_0, lam e_i, e_i replaced by au_j,
   wn_j, -e_0 / p_i, e_(b_i), e_(a_i) - e_(b_i)); the two-point function of block (a_i, a_i)
   of Gt2 F Gt1^T is ``sigma_pencil.two_point`` on this pencil itself (G2^T F G1).

Checks (``tests/test_rounds_sigma_kinf.py``): a spectrum of equal atoms against the Sigma = I
route (``fedavg``, ``local_models``), large finite K (``sigma.fedavg.curves``) converging to
K = inf, Algorithm 1's exact prox at small lam (``prox_sigma``, global step g / lam) converging
like lam, and the literal iteration (``montecarlo.linear.rounds``) at two d.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.fedavg import far, moving, round_horizon, settle
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble, own_pairs
from riskcalc.linear.dynamics.sigma.guards import own_work, unit_top
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, stable_top


class ExactPencil(SigmaPencil):
    """The pencil of the module docstring (step 1): blocks 0, then (b_j, a_j) per client;
    ``transposed``: its transpose (``personalize_sigma``: Gz S_j^+ in its row 0)."""

    what = "rounds limit with a spectrum and exact local solves"

    def __init__(self, atoms, weights, gam, p, transposed=False):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = 1.0, 2, self.gam.size
        M = self.M
        self.n = 1 + 2 * M
        b, a = 1 + 2 * np.arange(M), 2 + 2 * np.arange(M)
        self.b, self.a = b, a
        self.rows = np.stack([b, a], axis=1)
        self.cols = self.rows.copy()
        proj = self.gam > 1.0
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = -self.p.sum()
        L0[0, b] = self.p
        L0[b[proj], a[proj]] = 1.0
        L0[b, b] = -1.0
        L0[a, 0] = 1.0
        L0[a, b] = -1.0
        self.L0 = L0.T if transposed else L0       # rows = cols: only L0 changes
        self.A = np.where(proj[:, None], [1.0, -1.0], [0.0, -1.0])[:, :, None] * np.eye(2)
        self.B = np.where(proj[:, None], [0.0, 1.0], [1.0, 1.0])[:, :, None] * np.eye(2)

    def chat(self, tau):
        """Chat_j = A_j (B_j + gamma_j tau_j A_j)^-1, (N, M, 2, 2) (docstring, step 2)."""
        X = self.B + self.gam[:, None, None] * tau @ self.A
        return self.A @ np.linalg.inv(X)

    def _far(self, z):
        """tau at the nodes z far out, from Chat at z = inf (docstring, step 2)."""
        C = np.zeros((z.size, self.M, 2, 2), complex)
        s, h = self.s, self.h
        for j, g in enumerate(self.gam):
            if g > 1.0:
                top = g * float(h @ s)          # E_H[s / (s + k)] <= E_H[s] / k
                k = brentq(lambda x: g * (h @ (s / (s + x))) - 1.0, 0.0, top,
                           xtol=1e-15 * top, rtol=1e-15)
                kp = 1.0 / (g * k * (h @ (s / (s + k) ** 2)))
                C[:, j] = [[-kp / k ** 2 - 1.0 / k, 1.0 / k], [-1.0 / k, 0.0]]
            else:
                C[:, j, 1, 1] = -(1.0 - g)
        G = self.ghat(z, C)
        own = np.stack([G[:, :, self.cols[j][:, None], self.rows[j][None, :]]
                        for j in range(self.M)], axis=2)
        return self.own_mean(own)

    def solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """``SigmaPencil.solve`` started from ``_far`` (its contraction from tau = 0 has no
        finite Chat here)."""
        if tau0 is None:
            tau0 = self._far(nodes(path[0]))
        return super().solve(nodes, path, check=check, tau0=tau0, tolerant=tolerant)


def fedavg_exact_curves(gam, r, sigma, p, signal, g, rounds, spectrum):
    """Bias, variance and distance to the fixed point of FedAvg's server model with exact
    local solves (K = inf) under ``spectrum`` for every client at every T of ``rounds``
    (module docstring); the dict of ``sigma.fedavg.curves.pencil_curves`` (``local()``: the
    clients' own models, step 4). Every client with gamma_j < 1: ``_full_rank`` (D = I). No
    client with gamma_j = 1 (refused by ``rounds_limit``: an infinite variance).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, g : float
        ||theta_0|| and the global step.
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
        H, uniform signal directions; solved at its top atom 1 (``sigma.guards.unit_top``: at
        two-point:1e50,3e50,0.5 the own models were 1e34 relative off, at 1e-50 refused as a
        negative quadratic form; fuzz41 path F5).
    """
    if spectrum.atoms[-1] != 1.0:
        u, back = unit_top(spectrum, r, signal, None)
        return back(fedavg_exact_curves(gam, u["r"], sigma, p, u["signal"], g, rounds,
                                        u["spectrum"]))
    proj = gam > 1.0
    if not proj.any():
        return _full_rank(gam, r, sigma, p, signal, g, rounds, spectrum)
    if proj.sum() == 1 and proj.size == 1:
        raise ValueError("spectrum: FedAvg's exact local solves for one client with gamma > 1 "
                         "(the round map a projection, its nonzero spectrum one point) are not "
                         "covered under a spectrum")
    pen = ExactPencil(spectrum.atoms, spectrum.weights, gam, p)
    e = np.eye(pen.n)
    v = e[0][None, :] - e[pen.b]
    wn = e[pen.a] - e[pen.b]
    found = projection_edges(pen, lambda: stable_top(spectrum.atoms, spectrum.weights, gam),
                             gam, p)
    return pencil_curves(pen, found, g, gam, r, sigma, p, signal, rounds, v, wn,
                         own_models=lambda c: _own_models(pen, c, gam, r, sigma, p, signal,
                                                          rounds))


def projection_edges(pen, tops, gam, p):
    """(a, b, mu0): the edges of the spectrum of D = sum_j p_j P_j (P_j = I where gamma_j < 1)
    for ``pencil_curves``' contour and D's atom at 0, under a shared spectrum (this module) or
    covariate shift (``shift.kinf``). The ranges of the m clients with gamma_j > 1 are
    subspaces in general position, so D has an atom at p_F = sum_(gamma_j < 1) p_j of mass
    (1 - sum_(gamma_j > 1) 1 / gamma_j)_+ (their null spaces meet there; the clients with
    gamma_j < 1 act as the identity) and one at sum_j p_j of mass (sum_(gamma_j > 1) 1 /
    gamma_j - (m - 1))_+ (their ranges meet there); one projection leaves only these atoms,
    two or more add a continuous part (``pencil_edges.edges``' density scan, q <= 1, which
    does not see atoms), joined with them here. Without a client of gamma_j < 1 the atom
    below is at 0, D's null space: held apart as ``pencil_edges.edges`` holds it (mu0 =
    (1 - sum_j min(1, 1 / gamma_j))_+; pooled N < d). ``tops()``: the top of each client's
    sample spectrum (``pencil_edges.edges``' input), called only for that scan (under a
    shared spectrum one edge solve per client)."""
    over = gam > 1.0
    m, inv = int(over.sum()), float(np.sum(1.0 / gam[over]))
    if m == 0:
        return 1.0, 1.0, 0.0
    zero = 1.0 - inv if m == gam.size and inv < 1.0 else 0.0
    low = float(np.sum(p[~over])) if inv < 1.0 and not zero else np.inf
    high = float(p.sum()) if inv > m - 1.0 else -np.inf
    if m == 1:
        return min(low, high), high, zero
    a, b, _ = edges(pen, tops(), qmax=np.ones(gam.size))
    return min(a, low), max(b, high), zero


def _full_rank(gam, r, sigma, p, signal, g, rounds, spectrum):
    """Every gamma_j < 1: every P_j = I, D = I and w_T = c_T w_bar, c_T = 1 - (1 - g)^T, w_bar
    = sum_j p_j S_j^-1 b_j = theta_0 + sum_j p_j (u_j + S_j^-1 n_j); with tau(Sigma S_j^-1) ->
    1 / (1 - gamma_j) and tau(S_j^-1) -> E_H[1 / s] / (1 - gamma_j) (the inverse of a sample
    covariance), client i's risk is E_H[s] (c_T - 1)^2 signal^2 + E_H[s] (c_T^2 sum_j p_j^2
    r_j^2 - 2 c_T p_i r_i^2 + r_i^2) + c_T^2 sum_j p_j^2 sigma_j^2 gamma_j / (1 - gamma_j),
    and its own model v_i = theta_i + S_i^-1 n_i (T >= 1) has risk sigma_i^2 gamma_i /
    (1 - gamma_i). The dict of ``pencil_curves``."""
    s, h = spectrum.atoms, spectrum.weights
    Es, Einv = float(h @ s), float(h @ (1.0 / s))
    rho = abs(1.0 - g)
    settled, over, finite, _ = round_horizon(rho, rounds)
    fin = np.isfinite(rounds)
    with np.errstate(over="ignore", invalid="ignore"):
        power = np.where(fin, (1.0 - g) ** np.where(fin, rounds, 0.0), 0.0)
    c = 1.0 - power
    noise = p ** 2 * sigma ** 2 * gam / (1.0 - gam)
    with np.errstate(over="ignore", invalid="ignore"):
        bias = Es * ((c - 1.0) ** 2 * signal ** 2 + c ** 2 * np.sum(p ** 2 * r ** 2))[None, :] \
            + Es * ((r ** 2)[:, None] - 2.0 * np.outer(p * r ** 2, c))
        var = np.broadcast_to(c ** 2 * noise.sum(), bias.shape).copy()
        dist = power ** 2 * (signal ** 2 + np.sum(p ** 2 * r ** 2) + Einv * np.sum(noise))
    big = fin & (rounds > over)
    noisy, moves = bool(np.any((p > 0) & (sigma > 0))), moving(signal, r)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * Es + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "rounds limit with a spectrum",
                       moves=moves)

    def local(terms=None):
        if terms is not None:
            raise ValueError("spectrum: personalization from the round-T server model goes "
                             "through personalized_risk")
        own = np.where(rounds == 0, 0.0, (sigma ** 2 * gam / (1.0 - gam))[:, None])
        zero = np.where(rounds == 0, ((signal ** 2 + r ** 2) * Es)[:, None], 0.0)
        return zero, own

    return {"bias": bias, "variance": var, "distance": far(dist, big, moves or noisy),
            "contraction": rho, "edges": (1.0, 1.0), "atom": 0.0, "nodes": 0, "local": local,
            "memory": None}


def _own_models(pen, c, gam, r, sigma, p, signal, rounds):
    """(bias, variance) of every client's own model after the local phase of round T (module
    docstring, step 4) from the contour ``c`` of ``pencil_curves``."""
    M, n, s, h = pen.M, pen.n, pen.s, pen.h
    Es = float(h @ s)
    z = c["z"]
    # A dense pencil of 1 + 2 M blocks, 4 M unknowns, on the 2 N nodes (``memory``); its time
    # bounded by the extended pencil's of ``sigma.fedavg.own`` with K = 2 (1 + 3 M blocks).
    budget.check_memory(lambda m, k, x: memory.estimate("dense", 4 * m, 1 + 2 * m, s.size, x,
                                                        **memory.own_couplings(m)),
                        (M, 2, 2 * z.size), f"the clients' own models (exact local solves) "
                        f"with {s.size} atoms and {2 * z.size} contour nodes",
                        nodes_follow_rounds=False)
    own_work(M, 2, s.size, 2 * z.size)
    big = np.array([1e13 * (1.0 + c["b"])], complex)      # the node at infinity (error O(1/z))
    _, Ci, Gi = pen.solve(lambda t: big, [0.0])
    C1, G1 = (np.concatenate([x, y]) for x, y in zip(c["one"], (Ci, Gi)))
    C2, G2 = (np.concatenate([x, y]) for x, y in zip(c["full"], (Ci, Gi)))
    e = np.eye(n)
    couplings = []
    for i in range(M):
        au = (p / p[i])[:, None] * (e[0][None, :] - e[pen.b])
        wn = (p / p[i])[:, None] * (e[pen.a] - e[pen.b])
        ei, ni = e[pen.b[i]], e[pen.a[i]] - e[pen.b[i]]
        sg, bl = sigma[i] ** 2 * gam[i], (pen.a[i], pen.a[i])
        e0 = e[:1] / p[i]
        couplings += [
            (r ** 2, au, au, bl), (sigma ** 2 * gam, au, wn, bl),                   # (R, R)
            ([signal ** 2], -e0, -e0, bl),                                          # (Pm, Pm)
            ([2 * r[i] ** 2], ei[None, :], au[i][None, :], bl),                     # (R, inf)
            ([sg, sg], np.stack([ei, -ni]), np.stack([wn[i], au[i]]), bl),
            ([2 * signal ** 2], ei[None, :], -e0, bl),                              # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], ei[None, :], ei[None, :], bl),              # (inf, inf)
            ([sg], ei[None, :], -ni[None, :], bl),
        ]
    Hall = own_pairs(pen, (C1, G1), (C2, G2), couplings, M)
    # tau(Sigma Y(e_(a_i) - e_(b_i))) = E_H[s (G_(a_i),(a_i) - G_(b_i),(a_i))].
    traces = np.stack([np.einsum("a,na->n", h * s, G1[:, :, pen.a[i], pen.a[i]]
                                 - G1[:, :, pen.b[i], pen.a[i]]) for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, Es, rounds)
