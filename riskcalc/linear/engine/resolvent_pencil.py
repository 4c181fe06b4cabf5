"""Deterministic equivalents of general upper triangular linear pencils in one sample covariance.

``riskcalc.linear.engine.resolvent_chain`` evaluates chains of generalized resolvents, the (1, k) block
of an upper block-BIDIAGONAL pencil whose S-part is block DIAGONAL. Polynomial filters of S
(finite gradient descent, paper 003 Sec. 7) and sums of products need more: a pencil::

    P = E (x) S + Lhat(s),   E (k x k, scalars) and Lhat(s) (k x k, diagonal functions of
                             Sigma's eigenvalue s) both upper triangular,

whose inverse has the blocks (P^-1)_ab = sum over index paths a = i_0 < i_1 < ... < i_m = b of
D_(i_0)^-1 (-P_(i_0 i_1)) D_(i_1)^-1 ... D_(i_m)^-1 (D_a = E_aa S + Lhat_aa), i.e. ordered
products of resolvents (E_aa > 0), identities (E_aa = 0, Lhat_aa = 1) and affine functions
e S - M(s) of S and Sigma. This module computes every T_ab = lim tau(Sigma (P^-1)_ab),
tau = tr / d, for S = Sigma^(1/2) W Sigma^(1/2), W white Wishart of ratio gamma = d / n.

Derivation (derived here; the same leave-one-out step as ``resolvent_chain``, without assuming
E invertible). E (x) S = (1/n) sum_r X_r E X_r^T with X_r = I_k (x) x_r. Woodbury for the rank-k
update gives P^-1 X_r = P_(-r)^-1 X_r (I + E X_r^T P_(-r)^-1 X_r / n)^-1 with
X_r^T P^-1 X_r / n -> gamma T, and I = P^-1 P then gives the M_k(D)-valued fixed point

    P^-1 ~ Qhat(s) = (C s + Lhat(s))^-1,   C = E (I + gamma T E)^-1,   T = E_H[s Qhat(s)].

For E = diag(1 / eta) this is ``resolvent_chain``'s C = (diag(eta) + gamma T)^-1. Everything is
upper triangular and entry (a, b) depends only on entries (a', b') with a <= a' <= b' <= b:

* diagonal: C_aa = E_aa / (1 + gamma T_aa E_aa), i.e. for E_aa > 0 the scalar equation of
  ``resolvent_chain`` (c eta + gamma E_H[c s / (c s + Lhat_aa)] = 1, eta = 1 / E_aa), and
  C_aa = 0, Qhat_aa = 1 / Lhat_aa for E_aa = 0;
* superdiagonal m, given the lower ones: with U = I + gamma T E, U^-1 and Qhat by back
  substitution (U^-1_ab = -U^-1_aa sum_(a<c<=b) U_ac U^-1_cb, C_ab = sum_(a<=c<=b) E_ac
  U^-1_cb, Qhat_ab = -Qhat_aa sum_(a<c<=b) (C_ac s + Lhat_ac) Qhat_cb), T_ab enters only
  through U_ab (the term gamma T_ab E_bb), so C_ab = C0_ab - gamma C_aa C_bb T_ab and T_ab solves
  the affine equation T_ab = F_ab + gamma C_aa C_bb E_H[s^2 Qhat_aa Qhat_bb] T_ab (slope 0
  unless both a and b are resolvent blocks), F_ab the value at T_ab = 0.

The tests check it against ``resolvent_chain`` (bidiagonal chains of resolvents), against the
exact moments tau(Sigma S) = E_H[s^2] and tau(Sigma S Sigma S) = E_H[s^4] + gamma E_H[s^2]^2,
and against direct simulation of mixed polynomial/resolvent chains.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.resolvent_chain import diagonal_roots

#: Upper bound on the (k x k x points x atoms) entries of Qhat held in memory.
MAX_ENTRIES = 1 << 24


def pencil_traces(gamma, atoms, weights, E, L) -> np.ndarray:
    """T_ab = lim tau(Sigma (P^-1)_ab) for the pencil P = E (x) S + Lhat (module docstring).

    Parameters
    ----------
    gamma : array_like (points,)
        d / n > 0 per point.
    atoms, weights : array_like (n,)
        The spectrum H of Sigma.
    E : array_like (points, k, k)
        Scalar coefficients of S, upper triangular, with E_aa >= 0.
    L : array_like (points, k, k, n)
        Lhat(s) at each atom, upper triangular; Lhat_aa >= 0, and > 0 where E_aa = 0.

    Returns
    -------
    ndarray (points, k, k)
        T (upper triangle; the strict lower triangle is 0).

    Raises
    ------
    ValueError
        For inconsistent shapes, a negative E_aa, an identity-type block with Lhat_aa <= 0, or a
        pencil too large to hold (``MAX_ENTRIES``).
    SolverError
        If a diagonal equation has no root or an affine fixed point is unstable (slope >= 1).
    """
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    g = np.atleast_1d(np.asarray(gamma, dtype=float))
    E = np.asarray(E, dtype=float)
    L = np.asarray(L, dtype=float)
    npt, k = g.size, E.shape[-1]
    if E.shape != (npt, k, k) or L.shape != (npt, k, k, s.size):
        raise ValueError(f"E must have shape (points, k, k) and L (points, k, k, atoms); got "
                         f"{E.shape} and {L.shape} for {npt} points and {s.size} atoms")
    if k * k * npt * s.size > MAX_ENTRIES:
        raise ValueError(f"the pencil has {k} blocks at {npt} points and {s.size} atoms, beyond "
                         f"{MAX_ENTRIES} entries in memory: fewer steps or fewer atoms")
    # Diagonal storage X[m, a] = X_(a, a + m) (points, atoms trailing): the sums over
    # a < c <= b of a superdiagonal are then contiguous rows times strided anti-diagonal views.
    Ed, Ld = _to_diagonals(E), _to_diagonals(L)
    if np.any(Ed[0] < 0) or np.any((Ed[0] == 0) & np.any(Ld[0] <= 0, axis=-1)):
        raise ValueError("a pencil block needs E_aa >= 0, and Lhat_aa > 0 where E_aa = 0")
    c = np.zeros((k, npt))
    res = Ed[0] > 0
    if res.any():
        gg = np.broadcast_to(g, (k, npt))[res]
        c[res] = diagonal_roots(gg, s, w, 1.0 / Ed[0][res], Ld[0][res])
    T, TE, Ui, C = (np.zeros((k, k, npt)) for _ in range(4))
    Q = np.zeros((k, k, npt, s.size))
    Q[0] = 1.0 / (c[..., None] * s + Ld[0])
    T[0] = Q[0] @ (s * w)
    TE[0] = T[0] * Ed[0]
    Ui[0] = 1.0 / (1.0 + g * TE[0])
    C[0] = c
    for m in range(1, k):
        _superdiagonal(m, k - m, g, s, w, Ed, Ld, T, TE, Ui, C, Q)
    out = np.zeros((npt, k, k))
    for m in range(k):
        out[:, np.arange(k - m), np.arange(m, k)] = T[m, :k - m].T
    return out


def _to_diagonals(X):
    """(points, k, k, ...) upper triangular -> (k, k, points, ...) with [m, a] = X_(a, a + m)
    (zero-padded beyond a = k - m - 1)."""
    k = X.shape[1]
    out = np.zeros((k, k, X.shape[0]) + X.shape[3:])
    for m in range(k):
        out[m, :k - m] = np.moveaxis(X[:, np.arange(k - m), np.arange(m, k)], 0, 1)
    return out


def _anti(X, m, j0, j1, pairs):
    """The view V[j - j0, a] = X[m - j, a + j] for j0 <= j < j1, a < pairs (X in diagonal
    storage: the entries (a + j, a + m) of the original matrix)."""
    st = X.strides
    return np.lib.stride_tricks.as_strided(X[m - j0, j0:], shape=(j1 - j0, pairs) + X.shape[2:],
                                           strides=(st[1] - st[0], st[1]) + st[2:],
                                           writeable=False)


def _superdiagonal(m, pairs, g, s, w, E, L, T, TE, Ui, C, Q):
    """Superdiagonal m (entries (a, a + m), a < pairs) of T, TE = T E, U^-1, C and Qhat
    (module docstring), in place, all arrays in diagonal storage."""
    a = slice(0, pairs)
    b = slice(m, m + pairs)
    ein = "jp...,jp...->p..."
    # (T E)_ab, U^-1_ab, C_ab and Qhat_ab at T_ab = 0.
    TE[m, a] = np.einsum(ein, T[:m, a], _anti(E, m, 0, m, pairs))
    Ui[m, a] = -Ui[0, a] * g * np.einsum(ein, TE[1:m + 1, a], _anti(Ui, m, 1, m + 1, pairs))
    C[m, a] = np.einsum(ein, E[:m + 1, a], _anti(Ui, m, 0, m + 1, pairs))
    Qv = _anti(Q, m, 1, m + 1, pairs)
    Q[m, a] = -Q[0, a] * (np.einsum("jpx,jpxn->pxn", C[1:m + 1, a], Qv) * s
                          + np.einsum("jpxn,jpxn->pxn", L[1:m + 1, a], Qv))
    f0 = Q[m, a] @ (s * w)
    caa, cbb = C[0, a], C[0, b]
    slope = g * caa * cbb * ((Q[0, a] * Q[0, b]) @ (s * s * w))
    if not np.all(slope < 1):
        raise SolverError(f"resolvent pencil: an affine fixed point is unstable (slope "
                          f"{np.nanmax(slope):g} >= 1)")
    t = f0 / (1.0 - slope)
    T[m, a] = t
    TE[m, a] += t * E[0, b]
    Ui[m, a] -= Ui[0, a] * g * t * E[0, b] * Ui[0, b]
    C[m, a] -= g * caa * cbb * t
    Q[m, a] += (g * caa * cbb * t)[..., None] * s * Q[0, a] * Q[0, b]
