"""Deterministic equivalents of CHAINS of generalized resolvents of one sample covariance.

For S = Sigma^(1/2) W Sigma^(1/2) (W = Z^T Z / n white Wishart, gamma = d/n) and diagonal
functions of Sigma's eigenvalue s (elements of D = alg(Sigma)), this module computes the limit of

    tau(Q_1 M_1 Q_2 M_2 ... Q_k M_k),    Q_a = (S / eta_a + Lam_a)^-1,    tau = tr / d,

with eta_a >= 0, Lam_a(s) >= 0 and M_a(s) diagonal. eta_a = lam, Lam_a = 1 gives the ridge
residual lam (S + lam)^-1; eta_a = 0, Lam_a = 1 its ridgeless limit, the projection P^perp off
the row space of X (gamma > 1); eta_a = 1 / p, Lam_a = omega s gives (p S + omega Sigma)^-1.

Derivation (the linear-pencil / operator-valued calculus of Dobriban & Sheng 2021, Sec. 3,
and of Helton, Far & Speicher 2007 for operator-valued Wishart matrices). The chain is the
(1, k) block of the inverse of the upper block-bidiagonal pencil
P = E (x) S + Lhat with E = diag(1 / eta_a), Lhat(s) the k x k upper bidiagonal matrix with
Lam_a(s) on the diagonal and -M_a(s) above it (back substitution gives
(P^-1)_(1k) = Q_1 M_1 Q_2 ... Q_k). Writing E (x) S = (1/n) sum_r X_r E X_r^T with
X_r = I_k (x) x_r and x_r = Sigma^(1/2) z_r, the leave-one-out (Sherman-Morrison-Woodbury)
step with the k x k quadratic forms X_r^T P^-1 X_r / n -> gamma T, T_ab = tau(Sigma P^-1_ab),
gives the M_k(D)-valued fixed point

    P^-1 ~ Qhat(s) = (C s + Lhat(s))^-1,   C = (diag(eta) + gamma T)^-1,   T = E_H[s Qhat(s)],

(E (I + gamma T E)^-1 = (E^-1 + gamma T)^-1, which stays finite as eta_a -> 0: the ridgeless
projection needs no tiny lam). Every matrix here is upper triangular, and the (a, b) entry of
T depends only on T's entries (a', b') with a <= a' <= b' <= b. Hence:

* the diagonal entries solve the scalar equations c_a eta_a + gamma E_H[c_a s / (c_a s +
  Lam_a(s))] = 1 for c_a = C_aa (increasing in c_a; for Lam_a = 1 this is the effective-ridge
  equation of ``riskcalc.linear.kappa`` with kappa = 1 / c_a, and for k = 1 the
  Silverstein-Bai deterministic equivalent of one generalized resolvent);
* the entries of superdiagonal m are affine in themselves given the lower superdiagonals:
  T_ab = F_ab + gamma C_aa C_bb E_H[s^2 Qhat_aa Qhat_bb] T_ab, with F_ab the value at T_ab = 0.

The result is E_H[M_k(s) Qhat(s)_(1k)]. The tests compare it with direct simulation of the
chains at d ~ 1500 and with exact identities (derivatives in a shift, Sigma = I free
probability).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.solvers import increasing_root


def chain_trace(gamma: float, atoms, weights, eta, shifts, middles) -> float:
    """The limit of tau(Q_1 M_1 ... Q_k M_k), Q_a = (S / eta_a + Lam_a)^-1 (module docstring).

    Parameters
    ----------
    gamma : float
        d / n of S = Sigma^(1/2) W Sigma^(1/2), > 0.
    atoms, weights : array_like (n,)
        Eigenvalues s > 0 of Sigma and their masses (the spectrum H).
    eta : sequence of float (k,)
        eta_a >= 0; 0 is the projection limit (needs gamma > 1 and Lam_a > 0).
    shifts, middles : array_like (k, n)
        Lam_a(s) >= 0 and M_a(s) at each atom; M_k closes the trace.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes disagree, or a block has no deterministic equivalent (eta_a = 0 with
        gamma <= 1: P^perp = 0 there, the caller's case to handle).
    SolverError
        If a diagonal equation has no root in its bracket or the fixed point is unstable.
    """
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    eta = np.asarray(eta, dtype=float)
    lam = np.atleast_2d(np.asarray(shifts, dtype=float))
    mid = np.atleast_2d(np.asarray(middles, dtype=float))
    k = eta.size
    if lam.shape != (k, s.size) or mid.shape != (k, s.size):
        raise ValueError(f"shifts and middles must have shape ({k}, {s.size}) for {k} blocks "
                         f"and {s.size} atoms; got {lam.shape} and {mid.shape}")
    T = np.zeros((k, k))
    diag = np.array([_diagonal(gamma, s, w, eta[a], lam[a]) for a in range(k)])
    T[np.diag_indices(k)] = [w @ (s / (c * s + la)) for c, la in zip(diag, lam)]
    rows = np.arange(k)
    for m in range(1, k):
        a, b = rows[:k - m], rows[m:]
        C, Qh = _pencil(gamma, s, eta, lam, mid, T)
        F0 = np.einsum("n,n,nj->j", w, s, Qh[:, a, b])
        slope = gamma * C[a, a] * C[b, b] * np.einsum("n,n,nj,nj->j", w, s * s,
                                                     Qh[:, a, a], Qh[:, b, b])
        if not np.all(slope < 1):
            raise SolverError("resolvent chain: the fixed point is unstable (slope "
                              f"{slope.max():g} >= 1)")
        T[a, b] = F0 / (1.0 - slope)
    _, Qh = _pencil(gamma, s, eta, lam, mid, T)
    return float(w @ (mid[-1] * Qh[:, 0, k - 1]))


def _pencil(gamma, s, eta, lam, mid, T):
    """C = (diag(eta) + gamma T)^-1 and Qhat(s) = (C s + Lhat(s))^-1 at every atom."""
    k = eta.size
    C = np.linalg.inv(np.diag(eta) + gamma * T)
    L = np.zeros((s.size, k, k))
    L[:, np.arange(k), np.arange(k)] = lam.T
    L[:, np.arange(k - 1), np.arange(1, k)] = -mid[:-1].T
    return C, np.linalg.inv(C[None] * s[:, None, None] + L)


def _diagonal(gamma, s, w, eta, lam) -> float:
    """c solving c eta + gamma E_H[c s / (c s + Lam(s))] = 1 (increasing in c)."""
    if eta == 0 and (gamma <= 1 or np.any(lam <= 0)):
        raise ValueError("a projection block (eta = 0) needs gamma > 1 and a positive shift; "
                         f"got gamma = {gamma:g}")

    def fun(c, mask):
        c = c[:, None]
        den = c * s + lam
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(den > 0, c * s / den, 1.0)
            dfrac = np.where(den > 0, c * s * lam / den ** 2, 0.0)
        return c[:, 0] * eta + gamma * (frac @ w) - 1.0, c[:, 0] * eta + gamma * (dfrac @ w)

    # f(1/eta) >= 0; for eta = 0, c s/(c s + Lam) >= 1 - Lam/(c s) makes f >= 0 at hi.
    hi = 1.0 / eta if eta > 0 else gamma * float(w @ (lam / s)) / (gamma - 1.0)
    lo = hi
    for _ in range(2000):
        if fun(np.array([lo]), None)[0][0] <= 0:
            break
        lo /= 2.0
    else:
        raise SolverError("resolvent chain: no bracket for a diagonal equation (Lam = 0 "
                          "with gamma >= 1?)")
    return float(increasing_root(fun, np.array([lo]), np.array([hi]),
                                 what="resolvent chain diagonal")[0])
