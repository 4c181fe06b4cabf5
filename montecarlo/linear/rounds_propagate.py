"""The round maps of FedAvg with local GD and of paper 004's Algorithm 1, iterated on columns.

Both algorithms are linear in the data: every model is a linear function of the vectors
b_j = X_j^T y_j / n_j, and b_j lies in the range of S_j = X_j^T X_j / n_j = R_j diag(mu_j) R_j^T
(R_j: d x k_j orthonormal, k_j = rank X_j). A full-batch step on f_j (or on h_j = f_j +
lam/2 ||. - w||^2) is a polynomial in S_j, so K of them act through R_j and k_j numbers:

* FedAvg (K steps of size eta from the server model w, ``local_steps = inf`` the min-norm
  exact solve): v_j = A_j w + G_j b_j with A_j = I - Q_j, Q_j = R_j diag(q) R_j^T,
  q = 1 - (1 - eta mu)^K (q = 1 for K = inf) and G_j b_j = R_j diag(q / mu) R_j^T b_j (on the
  range of S_j the step polynomial eta sum_{i<K} (1 - eta mu)^i is q / mu; b_j has no component
  off it). Server: w <- w + g sum_j p_j (v_j - w). Fixed point: D w = sum_j p_j G_j b_j with
  D = sum_j p_j Q_j, the solution in the range of D (the iteration from 0 never leaves it).
* Algorithm 1 (paper ``004_98172ed3646eef14.txt``, eqs. 10-11 and App. B.1, weights p_j in
  place of 1/m): K steps of size eta on h_j warm-started from the client's previous model w_j:
  w_j <- a0 w_j + c0 w + R_j [(a - a0) R_j^T w_j + (c - c0) R_j^T w + (1 - a)/(mu + lam) R_j^T
  b_j] with a = (1 - eta (mu + lam))^K, a0 = (1 - eta lam)^K, c = (1 - a) lam / (mu + lam),
  c0 = 1 - a0 (from v <- (I - eta H_j) v + eta (lam w + b_j), H_j = S_j + lam: after K steps
  v = A v_0 + (I - A) H_j^-1 (lam w + b_j), A = (I - eta H_j)^K; K = inf gives the exact prox
  of eq. 10). Server: w <- w - g lam sum_j p_j (w - w_j). Every fixed point has
  w_j = H_j^-1 (b_j + lam w) (I - A invertible when 0 < eta (mu + lam) < 2) and
  sum_j p_j (w - w_j) = 0: the stationarity conditions of the joint FedProx/pFedMe objective
  (paper 003 eq. 14), whatever K.

Each application costs O(d k_j c) for c columns. With the columns an orthonormal basis of the
sources, scaled by their standard deviations (theta_0: signal / sqrt(d) I; u_j: r_j / sqrt(d) I;
the noise of b_j, covariance sigma_j^2 / n_j S_j: R_j diag(sigma_j sqrt(mu_j / n_j))), the sum over
columns of squared Sigma-norms of the error is the EXACT expectation given the designs
(``conditional``, ``rounds_columns.source_columns``): c = (M + 1) d + sum_j k_j columns, O(d (sum_j
k_j) c) per round, affordable for small d only. With two columns (one sampled theta, one sampled
noise: ``empirical``) the same code measures one draw, as ``montecarlo.linear.measure`` does (D
draws in 2 D columns share the passes over R_j: 8 draws cost 1.8 times one at d = 1000).

Algorithm 1's contraction (derived here). The homogeneous map of the state (w, w_1..w_M) has the
blocks Phi_00 = (1 - g lam) I + g lam sum_j p_j C_j, Phi_0j = g lam p_j T_j, Phi_j0 = C_j,
Phi_jj = T_j, with T_j = a0 I + R_j diag(a - a0) R_j^T and C_j = c0 I + R_j diag(c - c0) R_j^T
symmetric and commuting. When every ratio a / c and (if k_j < d) a0 / c0 is positive, i.e.
0 < a < 1 and 0 < a0 < 1, the block scaling D = diag(I, S_1, ..., S_M) with S_j^2 =
g lam p_j T_j C_j^-1 makes D Phi D^-1 symmetric: its off-diagonal blocks are both
E_j = sqrt(g lam p_j) (sqrt(a0 c0) I + R_j diag(sqrt(a c) - sqrt(a0 c0)) R_j^T), the diagonal
ones unchanged. Its eigenvalues (real) are Phi's, from a symmetric eigenvalue problem (several
times cheaper than the general one). Otherwise (odd K, a step with eta (mu + lam) > 1), if
g lam <= 1 and a client has N_j >= d, with E = diag(0, T_1, ..., T_M) and the real (M + 1) d x d
F = [sqrt(1 - g lam) I; sqrt(g lam p_j) C_j^(1/2)], the Schur complement on the w block and
the determinant lemma give det(z - Phi) = det(z - E - F F^T)
(``riskcalc.linear.dynamics.algorithm1.rate``'s docstring), a symmetric problem again (on the
14 designs of ``test_alg1_large_step``'s simulations, d = 100 and 200: the radius within
2.2e-14 of the general one's, 5 times cheaper at d = 200). Otherwise (odd K with g lam > 1:
complex eigenvalues; no client of full rank) the general one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from montecarlo.linear.rounds_inputs import stalled_advice
from riskcalc.errors import SolverError

#: States of Algorithm 1 at most this size get their round map's spectral radius from a dense
#: eigenvalue problem; larger ones from ARPACK.
DENSE_STATE = 1200


def fedavg_factors(mu, K, eta):
    """q = 1 - (1 - eta mu)^K (1 for K = inf): the share of each data direction that K local
    steps from w move to the local least-squares fit. For eta mu < 1 as -expm1(K log1p(-eta
    mu)): the power's form rounded eta mu below 1e-16 to q = 0 (a covariance scaled:1e-100
    made the round map 0, "zero-size array to reduction operation maximum")."""
    if np.isinf(K):
        return np.ones_like(mu)
    x = eta * np.asarray(mu, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x < 1.0, -np.expm1(K * np.log1p(-x)), 1.0 - (1.0 - x) ** K)


def prox_factors(mu, K, eta, lam):
    """(a, a0, c, c0) of Algorithm 1's K warm-started steps (module docstring)."""
    if np.isinf(K):
        return np.zeros_like(mu), 0.0, lam / (mu + lam), 1.0
    a, a0 = (1.0 - eta * (mu + lam)) ** K, (1.0 - eta * lam) ** K
    return a, a0, (1.0 - a) * lam / (mu + lam), 1.0 - a0


def _range_solve(lhs, rhs):
    """The solution of lhs x = rhs in the range of the symmetric PSD ``lhs`` (pooled N < d
    leaves a common null space, which the iterations from 0 never enter)."""
    ev, vec = np.linalg.eigh(lhs)
    keep = ev > ev[-1] * lhs.shape[0] * np.finfo(float).eps * 10
    return vec[:, keep] @ ((vec[:, keep].T @ rhs) / ev[keep, None])


class Propagation:
    """Iterate one algorithm's rounds on column blocks and measure each client's models.

    Parameters
    ----------
    method : {"fedavg", "fedprox"}
    basis : list of (R_j, mu_j)
        ``rounds_columns.client_basis`` of each client.
    beta : list of ndarray (k_j, c)
        R_j^T b_j for each column.
    targets : list of ndarray (d, c_signal)
        theta_j for each signal column (the first c_signal columns; the others are noise).
    s : ndarray (d,) or (M, d)
        Eigenvalues of Sigma (the designs are in its eigenbasis); (M, d) under covariate
        shift: row j client j's Sigma_j, the metric of client j's risks only (the round map
        acts on the designs; ``montecarlo.linear.rounds_shift``).
    p : ndarray (M,)
        Client weights.
    K, eta, g, lam : float
        Local steps (int or inf), local step, global step, prox coupling (fedprox).
    conditional : bool
        Columns are a scaled source basis (sum the squares), or D sampled draws: D signal
        columns then their D noise columns (square each draw's sum, average over draws).
    """

    def __init__(self, method, basis, beta, targets, s, p, K, eta, g, lam, conditional):
        self.method, self.basis, self.beta, self.targets = method, basis, beta, targets
        self.s, self.p, self.K, self.eta, self.g, self.lam = s, p, K, eta, g, lam
        self.conditional = conditional
        self.cs = targets[0].shape[1]
        d, c = np.shape(s)[-1], beta[0].shape[1]
        self.d, self.metric = d, np.broadcast_to(s, (len(basis), d))
        self.w = np.zeros((d, c))
        self.local = [np.zeros((d, c)) for _ in basis]
        # The bases side by side: a round's projections R_j^T w are one product.
        self.stacked = np.hstack([R for R, _ in basis])
        ends = np.cumsum([mu.size for _, mu in basis])
        self.blocks = [slice(end - mu.size, end) for end, (_, mu) in zip(ends, basis)]
        if method == "fedavg":
            self.q = [fedavg_factors(mu, K, eta) for _, mu in basis]
            self.drift = [R @ (q / mu * b.T).T for (R, mu), q, b in zip(basis, self.q, beta)]
        else:
            self.f = [prox_factors(mu, K, eta, lam) for _, mu in basis]
            self.fit = [((1.0 - f[0]) / (mu + lam) * b.T).T
                        for (_, mu), f, b in zip(basis, self.f, beta)]
            self.drift = [R @ x for (R, _), x in zip(basis, self.fit)]
            self.coef = [np.zeros((mu.size, c)) for _, mu in basis]

    # --- the round map -------------------------------------------------------------------
    def step(self):
        """One communication round (in place). Algorithm 1 carries each client's coordinates
        z_j = R_j^T w_j along: its update, R_j^T of the local one, is z_j <- a z_j + c R_j^T w
        + (1 - a) / (mu + lam) R_j^T b_j (R_j^T R_j = I), so a round takes the product R_j^T w
        only, not R_j^T w_j too (a third of its multiplications)."""
        w, g = self.w, self.g
        proj = self.stacked.T @ w
        if self.method == "fedavg":
            moves = [e - R @ (q[:, None] * proj[rows]) for (R, _), q, e, rows in zip(
                self.basis, self.q, self.drift, self.blocks)]
            self.local = [w + u for u in moves]
            self.w = w + g * sum(pj * u for pj, u in zip(self.p, moves))
            return
        # a0, c0 depend on eta, lam, K only. The sums keep the formula's order: a state map's
        # eigenvalue 1 (pooled N < d, K = inf) rounds below 1 as it did.
        a0, c0 = self.f[0][1], self.f[0][3]
        pull, total, new, coef = c0 * w, 0.0, [], []
        for (R, _), (a, _, c, _), wj, z, e, x, rows, pj in zip(
                self.basis, self.f, self.local, self.coef, self.drift, self.fit, self.blocks,
                self.p):
            y = proj[rows]
            t = (a - a0)[:, None] * z
            t += (c - c0)[:, None] * y
            v = a0 * wj     # in place from here: a fifth less time at d = 60 than new arrays
            v += pull
            v += e
            v += R @ t
            total = total + pj * v
            t = a[:, None] * z
            t += c[:, None] * y
            t += x
            new.append(v)
            coef.append(t)
        self.local, self.coef = new, coef
        self.w = (1.0 - g * self.lam) * w + g * self.lam * total

    def set_state(self, w, local):
        """Put the rounds at server model ``w`` and local models ``local`` (and their R_j^T)."""
        self.w, self.local = w, local
        if self.method != "fedavg":
            self.coef = [R.T @ v for (R, _), v in zip(self.basis, local)]

    def fixed_point(self):
        """(w, [w_j]): FedAvg's fixed point (its local models v_j), or the joint FedProx
        minimizer (paper 003 eq. 14) for Algorithm 1."""
        d = self.d
        lhs, rhs = np.zeros((d, d)), 0.0
        if self.method == "fedavg":
            for pj, (R, _), q, e in zip(self.p, self.basis, self.q, self.drift):
                lhs += pj * (R * q) @ R.T
                rhs = rhs + pj * e
            w = _range_solve(lhs, rhs)
            return w, [w - R @ (q[:, None] * (R.T @ w)) + e
                       for (R, _), q, e in zip(self.basis, self.q, self.drift)]
        for pj, (R, mu), b in zip(self.p, self.basis, self.beta):
            lhs += pj * (R * (mu / (mu + self.lam))) @ R.T
            rhs = rhs + pj * R @ (b / (mu + self.lam)[:, None])
        w = _range_solve(lhs, rhs)
        return w, [w + R @ ((b - mu[:, None] * (R.T @ w)) / (mu + self.lam)[:, None])
                   for (R, mu), b in zip(self.basis, self.beta)]

    def contraction(self) -> float:
        """Spectral radius of the homogeneous round map (on the range of the data for FedAvg:
        the eigenvalues of I - g D on the range of D; for Algorithm 1 the non-symmetric map
        of the state (w, w_1..w_M), dense up to ``DENSE_STATE`` numbers, else ARPACK)."""
        d = self.d
        if self.method == "fedavg":
            D = sum(pj * (R * q) @ R.T for pj, (R, _), q in zip(self.p, self.basis, self.q))
            ev = np.linalg.eigvalsh(D)
            ev = ev[np.abs(ev) > np.abs(ev).max() * d * np.finfo(float).eps * 10]
            return float(np.max(np.abs(1.0 - self.g * ev)))
        m = len(self.basis)
        size = (m + 1) * d
        # On the pooled range U: the common null space's eigenvalue 1 left out (fuzz41 path2 F5)
        ev, vec = np.linalg.eigh(sum(R @ R.T for R, _ in self.basis))
        U = vec[:, ev > ev[-1] * d * np.finfo(float).eps * 10]
        n, full = (m + 1) * U.shape[1], U.shape[1] == d

        def lift(x):
            return x if full else (U @ x.reshape(m + 1, U.shape[1], -1)).reshape(size, -1)

        def drop(y):
            return y.reshape(size, -1) if full else (U.T @ y.reshape(m + 1, d, -1)).reshape(n, -1)
        probe = Propagation(self.method, self.basis, [np.zeros((b.shape[0], 0)) for b in
                                                      self.beta], self.targets, self.s, self.p,
                            self.K, self.eta, self.g, self.lam, True)
        probe.drift = probe.fit = [0.0] * m

        def apply(x):
            x = lift(x).reshape(m + 1, d, -1)
            probe.set_state(x[0], list(x[1:]))
            probe.step()
            return drop(np.concatenate([probe.w[None]] + [v[None] for v in probe.local]))
        if size <= DENSE_STATE:
            sym = self._symmetric_map()
            if sym is not None:
                return float(np.max(np.abs(np.linalg.eigvalsh(drop(drop(sym).T)))))
            return float(np.max(np.abs(np.linalg.eigvals(apply(np.eye(n))))))
        op = spla.LinearOperator((n, n), matvec=lambda x: apply(x[:, None])[:, 0], dtype=float)
        try:
            ev = spla.eigs(op, k=1, which="LM", tol=1e-6, return_eigenvectors=False,
                           v0=np.ones(n))
        except spla.ArpackNoConvergence as exc:
            raise SolverError("the contraction of the round map (ARPACK, the largest "
                              "eigenvalue in modulus) did not converge; a state of at most "
                              f"{DENSE_STATE} numbers takes the dense route") from exc
        return float(np.abs(ev).max())

    def _symmetric_map(self):
        """Algorithm 1's homogeneous round map as a symmetric matrix with its spectrum (module
        docstring): the scaled map where every a / c and a0 / c0 is positive, else E + F F^T
        where g lam <= 1 and every c, c0 > 0; None where neither applies."""
        d, gl = self.d, self.g * self.lam
        ends = list(zip(self.basis, self.f, self.p))
        scaled = all(gl * pj > 0 and np.all((a > 0) & (a < 1)) and (mu.size == d or 0 < a0 < 1)
                     for (_, mu), (a, a0, _, _), pj in ends)
        # E + F F^T for finite K with a client of full rank only (module docstring).
        if not (scaled or 0 < gl <= 1 and np.isfinite(self.K) and all(
                pj >= 0 and np.all(c > 0) and (mu.size == d or c0 > 0)
                for (_, mu), (_, _, c, c0), pj in ends) and any(mu.size == d for _, mu in
                                                               self.basis)):
            return None
        out = np.zeros(((len(self.basis) + 1) * d,) * 2)
        F = np.zeros((out.shape[0], d))
        if scaled:
            out[:d, :d] = (1.0 - gl) * np.eye(d)
        else:
            F[:d] = np.sqrt(1.0 - gl) * np.eye(d)
        for j, ((R, mu), (a, a0, c, c0), pj) in enumerate(ends, 1):
            rows = slice(j * d, (j + 1) * d)
            out[rows, rows] = a0 * np.eye(d) + (R * (a - a0)) @ R.T
            if not scaled:      # C_j^(1/2), whose null-space value sqrt(c0) a full rank omits
                e0 = np.sqrt(c0) if mu.size < d else 0.0
                F[rows] = np.sqrt(gl * pj) * (e0 * np.eye(d) + (R * (np.sqrt(c) - e0)) @ R.T)
                continue
            e0 = np.sqrt(a0 * c0) if mu.size < d else 0.0
            out[rows, :d] = np.sqrt(gl * pj) * (e0 * np.eye(d) + (R * (np.sqrt(a * c) - e0)) @ R.T)
            out[:d, rows] = out[rows, :d]
            out[:d, :d] += gl * pj * (c0 * np.eye(d) + (R * (c - c0)) @ R.T)
        return out if scaled else out + F @ F.T

    # --- measurement -----------------------------------------------------------------------
    def moments(self, E, j):
        """(bias, variance, risk) of the error columns E (d, c) in client j's Sigma norm."""
        s = self.metric[j]
        if self.conditional:
            sq = s @ E ** 2
            b, v = sq[:self.cs].sum(), sq[self.cs:].sum()
            return b, v, b + v
        eb, ev = E[:, :self.cs], E[:, self.cs:]
        return (s @ eb ** 2).mean(), (s @ ev ** 2).mean(), (s @ (eb + ev) ** 2).mean()

    def distance(self, E) -> float:
        """||E||^2 (Euclidean): summed over columns, or averaged over the draws."""
        if self.conditional:
            return float(np.sum(E ** 2))
        return float(np.mean(np.sum((E[:, :self.cs] + E[:, self.cs:]) ** 2, axis=0)))

    def error(self, model, j):
        """model - theta_j, column by column (noise columns target 0)."""
        E = model.copy()
        E[:, :self.cs] -= self.targets[j]
        return E


def curve(prop: Propagation, rounds, filters=()) -> dict:
    """Each client's measurements after every round in ``rounds`` (ints in any order,
    ``inf`` for the fixed point), arrays of shape (M, len(rounds)).

    ``personalized`` (len(filters), M, len(rounds)): client j's risk of (I - Pi_j) w_T +
    Pi_j S_j^+ b_j, Pi_j = R_j diag(pi(mu_j)) R_j^T, for each filter pi of ``filters``
    (``personalization_filters``) from the server model w_T of round T (the fixed point for
    inf): FTFA / RTFA from the same columns, O(d k_j c) per client and filter.

    ``risk``/``bias``/``variance``/``distance_to_fixed_point`` are of the server model (FedAvg)
    or of the client's own model (Algorithm 1); ``local_risk`` of the client's own model after
    its local phase of round T (the zero model at T = 0); ``global_risk`` and
    ``global_distance`` of the server model. The fixed point of a round map whose spectral
    radius is not below 1 is refused (ValueError).
    """
    m, nt = len(prop.basis), len(rounds)
    out = {k: np.full((m, nt), np.nan) for k in (
        "risk", "bias", "variance", "local_risk", "global_risk", "distance_to_fixed_point",
        "global_distance")}
    out["personalized"] = np.full((len(filters), m, nt), np.nan)
    # pi(mu_j) and pi(mu_j) / mu_j R_j^T b_j: the filters act on the fixed beta columns once.
    pis = [[(pi(mu), R @ ((pi(mu) / mu)[:, None] * b))
            for (R, mu), b in zip(prop.basis, prop.beta)] for pi in filters]
    radius = prop.contraction()
    fixed = prop.fixed_point()
    if any(np.isinf(t) for t in rounds) and not radius < 1.0:
        raise ValueError(f"the {prop.method} iteration does not converge (spectral radius of "
                         f"its round map {radius:.6g} >= 1): no fixed point (rounds = inf); "
                         + stalled_advice(prop.g * (prop.lam or 1.0), radius, prop.lam))

    def record(cols, w, local):
        for j in range(m):
            gb, gv, gr = prop.moments(prop.error(w, j), j)
            lb, lv, lr = prop.moments(prop.error(local[j], j), j)
            gd = prop.distance(w - fixed[0])
            own = (gb, gv, gr, gd) if prop.method == "fedavg" else (
                lb, lv, lr, prop.distance(local[j] - fixed[1][j]))
            for k, v in zip(("bias", "variance", "risk", "distance_to_fixed_point",
                             "local_risk", "global_risk", "global_distance"),
                            own + (lr, gr, gd)):
                out[k][j, cols] = v
            R = prop.basis[j][0]
            for i, per in enumerate(pis):
                pi, fit = per[j]
                v = w - R @ (pi[:, None] * (R.T @ w)) + fit
                out["personalized"][i, j, cols] = prop.moments(prop.error(v, j), j)[2]

    finite = sorted({int(t) for t in rounds if not np.isinf(t)})
    tol = min(1e-13 / max(1.0 - radius, 1e-300), 1e-9) * max(np.abs(fixed[0]).max(), 1e-300)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(max(finite, default=-1) + 1):
            if t:
                prop.step()
            if t in finite:
                record([i for i, x in enumerate(rounds) if x == t], prop.w, prop.local)
            if t % 64 == 63 and (not np.isfinite(prop.w).all() or radius < 1.0 and all(
                    np.abs(a - b).max(initial=0.0) <= tol
                    for a, b in zip([prop.w] + prop.local, [fixed[0]] + fixed[1]))):
                # At the fixed point to its accuracy (rounding / (1 - radius), at most 1e-9), or
                # overflowed: later rounds are this one (fuzz41 path2 F6)
                record([i for i, x in enumerate(rounds) if np.isfinite(x) and x > t], prop.w,
                       prop.local)
                break
        inf = [i for i, x in enumerate(rounds) if np.isinf(x)]
        if inf:
            record(inf, *fixed)
    out["contraction"] = radius
    return out
