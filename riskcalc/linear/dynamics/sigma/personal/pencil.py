"""The extended pencil of personalization after round T under a shared covariance spectrum (paper
003, ``003_4b976ddf5225c17e.txt``: FTFA Sec. 7 Alg. 5, RTFA Sec. 3.2, from the round-T server
model): one chain per client appended to a base pencil (``PersonalPencil``; on FedAvg's
exact-local-solve pencil ``ExactPersonalPencil``), its fixed point from the base pencil's
solution (``solve_extended``) and RTFA's tau_new (``_rtfa_tau``). Derived in
``sigma.personalize_sigma`` (steps 1 and 2), which assembles the risks from it.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil


class PersonalPencil(SigmaPencil):
    """The base pencil ``base`` with one personalization chain per client
    (``sigma.personalize_sigma``, step 1): ``kind`` "ftfa" (``k`` steps of size ``eta2``) or
    "rtfa" (``lam2``); ``e`` the base blocks' coefficient (-eta or -1); ``transposed``: its
    transpose."""

    def __init__(self, base, e, kind, k=None, eta2=None, lam2=None, transposed=False):
        self.s, self.h, self.gam, self.p, self.M = base.s, base.h, base.gam, base.p, base.M
        M, Kb, nb = base.M, base.rows.shape[1], base.n
        kn = k if kind == "ftfa" else 1
        self.K = Kb + kn
        self.n = nb + M * (kn + 1)
        self.zblocks = base.zblocks
        self.root = nb + (kn + 1) * np.arange(M)                      # (i, 0')
        self.last = self.root + kn                                     # f_i
        new_rows = self.root[:, None] + 1 + np.arange(kn)[None, :]
        new_cols = new_rows - 1 if kind == "ftfa" else new_rows
        L0 = np.zeros((self.n, self.n))
        L0[:nb, :nb] = base.L0
        L0[self.root, 0] = 1.0
        L0[self.root, self.root] = -1.0
        if kind == "ftfa":
            for i in range(M):
                L0[new_rows[i], new_rows[i]] = -1.0
                L0[new_rows[i], new_cols[i]] += 1.0
            e2 = -eta2
        else:               # RTFA's row divided by 1 + lam' (``sigma.personalize_sigma``, step 2)
            L0[new_rows[:, 0], self.root] = lam2 / (1.0 + lam2)
            L0[new_rows[:, 0], new_rows[:, 0]] = -lam2 / (1.0 + lam2)
            e2 = -1.0 / (1.0 + lam2)
        # Per client (M, K): FTFA's eta' may differ between clients (1 / top for one it overflows:
        # ``personalized_sigma``).
        e2 = np.broadcast_to(e2, (M,))
        self.e = np.concatenate([np.full((M, Kb), e), np.repeat(e2[:, None], kn, 1)], axis=1)
        self.noise = np.zeros((M, self.n))                             # wn'_i
        for i in range(M):
            self.noise[i, new_rows[i]] = -e2[i]
        rows = np.concatenate([base.rows, new_rows], axis=1)
        cols = np.concatenate([base.cols, new_cols], axis=1)
        self.rows, self.cols, self.L0 = (cols, rows, L0.T) if transposed else (rows, cols, L0)

    def chat(self, tau):
        """Chat_j = E_j (I + gamma_j tau_j E_j)^-1, E_j = diag(e) (``sigma.personalize_sigma``,
        step 2)."""
        X = np.eye(self.K) + self.gam[:, None, None] * tau * self.e[:, None, :]
        return np.linalg.solve(X.swapaxes(-1, -2), np.broadcast_to(
            self.e[:, :, None] * np.eye(self.K), X.shape).swapaxes(-1, -2)).swapaxes(-1, -2)


class ExactPersonalPencil(PersonalPencil):
    """``PersonalPencil`` on FedAvg's exact-local-solve pencil (``sigma.fedavg.exact``, step 2):
    its base blocks' Chat_j = A_j (B_j + gamma_j tau_j A_j)^-1, the new rows' E = -eta' or -1
    (A = E, B = I there), so Chat_j = A (B + gamma_j tau_j A)^-1 with A, B block diagonal."""

    def __init__(self, base, kind, k=None, eta2=None, lam2=None, transposed=False):
        super().__init__(base, 0.0, kind, k, eta2, lam2, transposed)
        Kb = base.rows.shape[1]
        self.A = np.zeros((self.M, self.K, self.K))
        self.B = np.broadcast_to(np.eye(self.K), self.A.shape).copy()
        self.A[:, :Kb, :Kb], self.B[:, :Kb, :Kb] = base.A, base.B
        self.A[:, Kb:, Kb:] = self.e[:, Kb:, None] * np.eye(self.K - Kb)

    def chat(self, tau):
        """Chat_j = A_j (B_j + gamma_j tau_j A_j)^-1."""
        return self.A @ np.linalg.inv(self.B + self.gam[:, None, None] * tau @ self.A)


def solve_extended(base, ext, Gb, nodes, kind, k, lam2, diverging):
    """(Chat, Ghat) of the extended pencil ``ext`` at ``nodes``, from the base pencil's
    solution ``Gb`` there (``sigma.personalize_sigma``, step 2: its base blocks, tau_new,
    tau_cross = 0); ``diverging``: the clients whose FTFA diverges (for the message when the
    solve fails)."""
    M, s, h, Kb = base.M, base.s, base.h, base.rows.shape[1]
    tau0 = np.zeros((nodes.size, M, ext.K, ext.K), complex)
    for j in range(M):
        tau0[:, j, :Kb, :Kb] = np.einsum("a,naxy->nxy", h * s,
                                         Gb[:, :, base.cols[j][:, None], base.rows[j][None, :]])
    if kind == "rtfa":
        tau0[:, :, Kb, Kb] = _rtfa_tau(s, h, base.gam, lam2)[None, :]
    try:
        _, C1, G1 = ext.solve(lambda t: nodes, [0.0], check=False, tau0=tau0)
    except (SolverError, np.linalg.LinAlgError):
        if diverging is None:
            raise
        raise beyond_reach(k, diverging) from None
    return C1, G1


def beyond_reach(k, diverging):
    """The ValueError of a divergent FTFA (``diverging``: its clients) whose growth is beyond
    the extended pencil's reach (``sigma.personalize_sigma.FTFA_REACH_DIGITS``, or a solve
    that fails below it)."""
    return ValueError(f"step_size: FTFA's {k} steps diverge on {diverging} and the growing "
                      "risk is beyond this route's reach under a covariance spectrum; lower "
                      "step_size below 2 / top (converges), or the steps")


def _rtfa_tau(atoms, weights, gam, lam2):
    """tau_new of RTFA's row divided by 1 + lam' (``sigma.personalize_sigma``, step 2) per client:
    (1 + lam') (1 - x) / gamma with x = 1 + gamma E_H[s x / (lam' x + s)]. Solved for y = x - 1
    (y = gamma E_H[s (1 + y) / (lam' (1 + y) + s)], concave in y, positive at 0 and below
    y at gamma E_H[s] / lam': one root there), to full relative precision also at large lam',
    where y ~ gamma E_H[s] / lam'."""
    s, h = np.asarray(atoms, float), np.asarray(weights, float)
    out = []
    for g in np.atleast_1d(gam):
        def f(y):
            return g * float(h @ (s * (1.0 + y) / (lam2 * (1.0 + y) + s))) - y
        y = brentq(f, 0.0, g * float(h @ s) / lam2, xtol=1e-300, rtol=1e-15)
        out.append(-(1.0 + lam2) * y / g)
    return np.array(out)
