"""Finite-M limit of pFedMe (its own global objective) for a GENERAL covariance spectrum.

Paper 003 (``003_4b976ddf5225c17e.txt``), eq. 14: the global model minimizes the Moreau
envelopes, A = sum_j b_j with b_j = p_j phi(S_j), phi(s) = lam s / (s + lam), noise source
psi(s) = lam^2 s / (s + lam)^2 (``finite_clients_own``, which treats Sigma = I), and the
client personalizes with R = lam (S_i + lam)^-1. M identical clients sharing the spectrum H.
Derived here.

1. Operator-valued subordination over D = alg(Sigma) (functions of Sigma's eigenvalue s):
   the alg(S_j, D) are free with amalgamation over D, so E_D[A^-1] = E_D[(b_l + t)^-1] =: G
   with t in D and M t = (M - 1) G^-1 pointwise. With c = t + p lam, u = p lam^2 and
   Lam = lam - u / c (> 0), Woodbury gives K := (b + t)^-1 = [I + (u/c) Q] c^-1,
   Q = (S + Lam)^-1 a generalized resolvent with a Sigma-dependent shift, whose D-valued
   equivalent is 1 / (C s + Lam(s)) (C from ``resolvent_chain.diagonal_roots``); so
   G = 1/c + u Qhat / c^2 and t solves a fixed point over the atoms.
2. Two-resolvent terms are derivatives of that system when one summand moves inside its own
   algebra, b_m -> b_m + eps X: with L[h] = E_D[K h K] (an atoms x atoms matrix, from
   E_D[Q m Q] = (C'[m] s + m) / (C s + Lam)^2, C' by implicit differentiation) and
   e = E_D[K X K], G' = -(M I - (M - 1) L diag(G^-2))^-1 e, and the conditional expectation onto
   C_i = alg(S_i, D) is E_(C_i)[A^-1 X A^-1] = K (X + t_m') K for the target's own summand
   (t_m' = -L^-1 (G' + e)) and K t_o' K for another client's (t_o' = -L^-1 G').
3. With K a = I - K t (a = b_i) the signal terms collapse: the target's own
   E_(C_i)[A^-1 B Phi B A^-1] (B = A - a) is K (t Phi t + t_m'[a Phi a]) K, and
   e = E_D[K a Phi a K] = Phi - 2 G t Phi + L[t Phi t] for every client; the noise
   K psi K = (K R - K R t K) / p since psi = R phi and phi K = (I - t K) / p. Hence::

       B_i = r^2 [tau(F K (t Phi t + t_m'[e_b]) K) + (M - 1) tau(F K t_o'[e_b] K)],
       V_i = sigma^2 [own + 2 p gamma tau((R - R^2) Sigma R K)
                      + p^2 gamma (tau(F K R) - tau(F K R t K)) / p
                      + p^2 gamma (tau(F K t_m'[e_v] K) + (M - 1) tau(F K t_o'[e_v] K))],

   F = R Sigma R, every trace a chain of resolvents of S_i (``resolvent_chain``) after
   expanding K = c^-1 + (u/c) Q c^-1.

Checks (tests): Sigma = I gives ``finite_clients_own`` (scalar subordination), M -> infinity
the oracle pFedMe limit, and simulation of the federated pipeline.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear import kappa
from riskcalc.linear.resolvent_chain import chain_traces, diagonal_roots

_ITER = 100


def pfedme_sigma_limit(gamma: float, r: float, sigma: float, clients: int, lam: float,
                       spectrum):
    """Bias and variance of one of ``clients`` identical pFedMe clients (module docstring)
    with covariance spectrum ``spectrum`` (uniform signal direction or not: Phi = dG/dH).

    Raises
    ------
    ValueError
        If lam <= 0.
    SolverError
        If the subordination fixed point does not converge.
    """
    if not lam > 0:
        raise ValueError("pfedme's federated global model needs lam > 0")
    s, h = spectrum.atoms, spectrum.weights
    Phi = np.divide(spectrum.signal_weights, h, out=np.zeros_like(h), where=h > 0)
    M, p, g = float(clients), 1.0 / clients, float(gamma)
    u = p * lam ** 2
    t = np.zeros_like(s) if M == 1 else _solve_t(g, s, h, M, p, lam)
    c, Lam, C, den, G, Lm = _state(t, g, s, h, p, lam)
    v, w = u / c, 1.0 / c
    A = M * np.eye(s.size) - (M - 1) * Lm / G ** 2

    def derivs(e):
        """(t_m', t_o') for a source with E_D[K X K] = e."""
        Gp = -np.linalg.solve(A, e)
        return -np.linalg.solve(Lm, Gp + e), -np.linalg.solve(Lm, Gp)

    one = np.ones_like(s)

    def tr(blocks, mids):
        """tau(Q_1 M_1 ...) with blocks "R" = lam (S + lam)^-1 and "Q" = (S + Lam)^-1."""
        spec = {"R": (lam, one), "Q": (1.0, Lam)}
        eta = np.array([spec[b][0] for b in blocks])
        shifts = np.array([spec[b][1] for b in blocks])
        return float(chain_traces(g, s, h, eta, shifts, np.array(mids)))

    def fkzk(Z):
        """tau(F K Z K), F = R Sigma R, K = c^-1 + v Q w, Z diagonal."""
        return (tr("RR", [s, Z * w * w]) + tr("RRQ", [s, Z * w * v, w])
                + tr("RRQ", [s, v, w * Z * w]) + tr("RRQQ", [s, v, w * Z * v, w]))

    def ed(blocks, mids):
        """E_D of a chain (per atom): its closing middle times the atom's indicator."""
        return np.array([tr(blocks, mids[:-1] + [mids[-1] * (np.arange(s.size) == a) / h[a]])
                         for a in range(s.size)])

    e_b = Phi - 2 * G * t * Phi + Lm @ (t * Phi * t)
    tm_b, to_b = derivs(e_b)
    bias = r ** 2 * (fkzk(t * Phi * t + tm_b) + (M - 1) * fkzk(to_b))
    # e_v = E_D[K R - K R t K] / p, K = c^-1 + v Q w expanded.
    ekr = ed("R", [w]) + ed("QR", [w, v])
    ekrtk = (ed("R", [t * w * w]) + ed("RQ", [t * v, w * w]) + ed("QR", [w, t * w * v])
             + ed("QRQ", [w, t * v, w * v]))
    e_v = (ekr - ekrtk) / p
    tm_v, to_v = derivs(e_v)
    fkr = tr("RRR", [s, w, one]) + tr("RRQR", [s, v, w, one])
    fkrtk = (tr("RRR", [s, w, t * w]) + tr("RRRQ", [s, w, t * v, w])
             + tr("RRQR", [s, v, w, t * w]) + tr("RRQRQ", [s, v, w, t * v, w]))
    rsrk = tr("RR", [s, w]) + tr("RRQ", [s, v, w])
    rrsrk = tr("RRR", [one, s, w]) + tr("RRRQ", [one, s, v, w])
    own = float(kappa.ridge_factors(g, lam, spectrum)[1])
    var = sigma ** 2 * (own + 2 * p * g * (rsrk - rrsrk) + p * g * (fkr - fkrtk)
                        + p ** 2 * g * (fkzk(tm_v) + (M - 1) * fkzk(to_v)))
    return bias, var


def _state(t, g, s, h, p, lam):
    """c, Lam, C, C s + Lam, G = E_D[K] and the matrix of L[h] = E_D[K h K] at shift t
    (module docstring, steps 1-2)."""
    u = p * lam ** 2
    c = t + p * lam
    Lam = lam - u / c
    C = float(diagonal_roots(g, s, h, 1.0, Lam))
    den = C * s + Lam
    G = 1.0 / c + u / (c ** 2 * den)
    # E_D[Q m Q] = Dm @ m: (C'[m] s + m) / den^2 with C' from the diagonal equation.
    kap = g * C / (1.0 + g * (h @ (s * Lam / den ** 2)))
    Dm = np.diag(1.0 / den ** 2) + np.outer(s / den ** 2, kap * h * s / den ** 2)
    v, w = u / c, 1.0 / c
    Lm = np.diag(1.0 / c ** 2 + 2 * v * w / (c * den)) + (v * w)[:, None] * Dm * (w * v)
    return c, Lam, C, den, G, Lm


def _solve_t(g, s, h, M, p, lam):
    """t (atoms) solving F(t) = M t - (M - 1) / G(t) = 0 (module docstring) by Newton steps
    with the exact Jacobian M I - (M - 1) diag(G^-2) L (dG = -L[dt]), halving a step that
    leaves t > 0."""
    def residual(t):
        G, Lm = _state(t, g, s, h, p, lam)[4:]
        return M * t - (M - 1) / G, G, Lm

    # Start at the fixed point of one damped step from t = (1 - 1/M) lam (the scale of the
    # other clients' pull, A ~ M p lam); Newton with backtracking on |F| keeps t > 0.
    t = np.full(s.shape, (M - 1) / M * lam)
    F, G, Lm = residual(t)
    for _ in range(_ITER):
        if np.all(np.abs(F) <= 1e-13 * M * np.abs(t)):
            return t
        step = np.linalg.solve(M * np.eye(s.size) - (M - 1) * Lm / G[:, None] ** 2, F)
        for _ in range(60):
            new = t - step
            if np.all(new > 0):
                F_new, G_new, L_new = residual(new)
                if np.max(np.abs(F_new)) < np.max(np.abs(F)):
                    break
            step /= 2
        else:
            break
        t, F, G, Lm = new, F_new, G_new, L_new
    raise SolverError("pFedMe finite-clients limit: the subordination fixed point did not "
                      "converge")
