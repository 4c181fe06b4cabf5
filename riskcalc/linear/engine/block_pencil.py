"""Deterministic equivalents of GENERAL linear pencils in one sample covariance (any block shape).

``riskcalc.linear.engine.resolvent_pencil`` solves upper triangular pencils entry by entry. The
inverse of a polynomial in S with a Sigma-dependent shift, such as MAML-FL's global objective
(paper 003, ``003_4b976ddf5225c17e.txt``, eq. 12: (t + c_1 S + c_2 S^2 + c_3 S^3)^-1 with
t a function of Sigma), is a block of the inverse of a pencil with a NON-triangular diagonal
block, the companion linearization (derived here; back substitution: x_2 = S x_1,
x_3 = S x_2, then row 3 reads (t + c_1 S + c_2 S^2 + c_3 S^3) x_1 = w)::

    P_K = [[S, -1, 0], [0, S, -1], [t, c_1, c_2 + c_3 S]],   (P_K^-1)_(j3) = S^(j-1) K.

This module treats any pencil P = E (x) S + Lhat(s): E a k x k scalar matrix, Lhat(s) a k x k
matrix of functions of Sigma's eigenvalue s, S = Sigma^(1/2) W Sigma^(1/2) with W white
Wishart of ratio gamma = d / n. The leave-one-out step of ``resolvent_pencil`` (Woodbury for
the rank-k update (1/n) X_r E X_r^T, the k x k quadratic forms X_r^T P^-1 X_r / n -> gamma T)
never uses triangularity, so

    P^-1 ~ Qhat(s) = (C s + Lhat(s))^-1,   C = E (I + gamma T E)^-1,   T = E_H[s Qhat(s)],

where ~ means that tau(Z P^-1_ab) -> E_H[Z(s) Qhat_ab(s)] for bounded functions Z of Sigma,
tau = tr / d: Qhat_ab(s) is the conditional expectation E_D[P^-1_ab] onto D = alg(Sigma).

Projection rows. The ridgeless limit lam (S + lam)^-1 -> P^perp (gamma > 1) is the row
S / lam + 1 with E_aa = 1 / lam -> infinity. With E = Etilde Delta^-1 (Delta = diag(delta),
delta_a = lam on such a row and 1 elsewhere, Etilde_aa = 1) the fixed point reads
C = Etilde (Delta + gamma T Etilde)^-1, finite at delta_a = 0 (coupling entries of E in the
column of a projection row must be 0).

Solution. Newton's method on T with the exact Jacobian: dC = -gamma C dT C gives
dQhat = gamma s Qhat C dT C Qhat, so dT -> gamma E_H[s^2 (Qhat C) dT (C Qhat)] (a k^2 x k^2
matrix J). Starting values are the solutions of the diagonal blocks (``Pencil``): the chains
of a block upper triangular pencil are then found in a few steps, each superdiagonal level
being affine given the lower ones. A diagonal block is solved by continuation in gamma from
gamma = 0 (``continuation``), where S = Sigma and Qhat = (E s + Lhat)^-1 exactly, and moved
along a path of pencils in small steps (``follow``): Newton's iteration from a distant start
can land on an unphysical root. Linear
responses (``local_response``) to a change of Lhat, e.g. a derivative in the shift t, solve
(I - J) dT = E_H[-s Qhat dLhat Qhat] with the same matrix.

The tests compare it with ``resolvent_chain`` and ``resolvent_pencil`` on triangular pencils,
with the scalar (Sigma = I) Marchenko-Pastur quadrature of a cubic filter, and with direct
simulation of E_D[(t + c_1 S + c_2 S^2 + c_3 S^3)^-1] and its derivatives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.resolvent_chain import diagonal_roots

_ITER = 60
#: Relative residual max abs(T - E_H[s Qhat]) / (1 + max abs T) at which Newton's iteration
#: stops.
_TOL = 1e-13
#: Halvings of a step of ``follow`` before giving up.
_HALVINGS = 30
#: Newton steps and largest relative move of T accepted for one step of ``follow``.
_STEP_ITER = 8
_STEP_MOVE = 0.25


@dataclass(frozen=True)
class PencilSolution:
    """T (k, k), Qhat (atoms, k, k) and C (k, k) of the fixed point, and I - J for linear
    responses (``local_response``)."""

    gamma: float
    atoms: np.ndarray
    weights: np.ndarray
    T: np.ndarray
    Q: np.ndarray
    C: np.ndarray
    lhs: np.ndarray

    def trace(self, rows, cols) -> float:
        """lim tau(Sigma sum_(a,b) u_a v_b P^-1_ab) for row and column weight vectors (or
        indices)."""
        return float(_vec(rows, self.T.shape[0]) @ self.T @ _vec(cols, self.T.shape[0]))

    def conditional(self, rows, cols) -> np.ndarray:
        """E_D of sum_(a,b) u_a v_b P^-1_ab per atom (the same weights as ``trace``)."""
        k = self.T.shape[0]
        return np.einsum("a,nab,b->n", _vec(rows, k), self.Q, _vec(cols, k))


def _vec(x, k):
    """A weight vector from an index or a vector."""
    if np.ndim(x) == 0:
        out = np.zeros(k)
        out[int(x)] = 1.0
        return out
    return np.asarray(x, dtype=float)


def _state(gamma, s, h, E, L, delta, T):
    """C, Qhat and the residual E_H[s Qhat] - T at T."""
    C = E @ np.linalg.inv(np.diag(delta) + gamma * T @ E)
    Q = np.linalg.inv(C[None] * s[:, None, None] + L)
    return C, Q, np.einsum("n,nab->ab", h * s, Q) - T


def _jacobian(gamma, s, h, C, Q):
    """I - J, J the (k^2 x k^2) derivative of E_H[s Qhat] in T (row-major vec)."""
    k = C.shape[0]
    QC, CQ = Q @ C, C @ Q
    J = gamma * np.einsum("n,nac,ndb->abcd", h * s * s, QC, CQ).reshape(k * k, k * k)
    return np.eye(k * k) - J


def solve(gamma: float, atoms, weights, E, L, delta=None, T0=None,
          what: str = "linear pencil", iterations: int = _ITER) -> PencilSolution:
    """The fixed point of the pencil P = E (x) S + Lhat (module docstring) by Newton's method
    from ``T0``.

    Parameters
    ----------
    gamma : float
        d / n > 0.
    atoms, weights : array_like (n,)
        The spectrum H of Sigma.
    E : array_like (k, k)
        Scalar coefficients of S (Etilde on projection rows).
    L : array_like (n, k, k)
        Lhat(s) at each atom.
    delta : array_like (k,), optional
        1 on ordinary rows, 0 on projection rows (default: all 1).
    T0 : array_like (k, k), optional
        Starting value (default: the gamma = 0 solution E_H[s (E s + Lhat)^-1]).
    what : str
        Named in the error message.
    iterations : int
        Most Newton steps.

    Raises
    ------
    SolverError
        If Newton's iteration does not reach the residual ``_TOL`` (a singular pencil, or a
        start too far from a root; a root reached from a distant start need not be the
        physical one: ``follow``).
    """
    s, h = np.asarray(atoms, dtype=float), np.asarray(weights, dtype=float)
    E, L = np.asarray(E, dtype=float), np.asarray(L, dtype=float)
    k = E.shape[0]
    delta = np.ones(k) if delta is None else np.asarray(delta, dtype=float)
    with np.errstate(all="ignore"):
        try:
            T = (np.einsum("n,nab->ab", h * s, np.linalg.inv(E[None] * s[:, None, None] + L))
                 if T0 is None else np.array(T0, dtype=float))
        except np.linalg.LinAlgError:
            T = np.full((k, k), np.nan)
        for _ in range(iterations):
            try:
                C, Q, res = _state(gamma, s, h, E, L, delta, T)
                lhs = _jacobian(gamma, s, h, C, Q)
            except np.linalg.LinAlgError:
                break
            if not np.all(np.isfinite(res)):
                break
            if np.max(np.abs(res)) <= _TOL * (1.0 + np.max(np.abs(T))):
                return PencilSolution(gamma, s, h, T, Q, C, lhs)
            try:
                T = T + np.linalg.solve(lhs, res.ravel()).reshape(k, k)
            except np.linalg.LinAlgError:
                break
    raise SolverError(f"{what}: the deterministic-equivalent fixed point did not converge "
                      f"(gamma = {gamma:g}, {k} x {k} pencil)")


def follow(atoms, weights, path, start: PencilSolution | None = None,
           what: str = "linear pencil") -> PencilSolution:
    """The fixed point along a path of pencils theta -> (gamma, E, Lhat, delta), theta from 0
    to 1, from its solution ``start`` at theta = 0 (None: solved there by ``solve``, exact
    when the path starts at gamma = 0). Each step is Newton's iteration from the previous
    point, accepted only if it converges within ``_STEP_ITER`` iterations and moves T by at
    most ``_STEP_MOVE`` (1 + max abs T); otherwise the step is halved. Newton's iteration from a
    distant start can converge to another, unphysical root of the fixed-point equations (e.g.
    a negative E_D[K] past gamma = 1); small steps stay on the branch that continues the
    start.

    Raises
    ------
    SolverError
        If a step still fails after ``_HALVINGS`` halvings.
    """
    sol = start
    if sol is None:
        gamma, E, L, delta = path(0.0)
        sol = solve(gamma, atoms, weights, E, L, delta, what=what)
    theta, step = 0.0, 1.0
    while theta < 1.0:
        t1 = min(1.0, theta + step)
        gamma, E, L, delta = path(t1)
        try:
            new = solve(gamma, atoms, weights, E, L, delta, sol.T, what, _STEP_ITER)
            ok = np.max(np.abs(new.T - sol.T)) <= _STEP_MOVE * (1.0 + np.max(np.abs(sol.T)))
        except SolverError:
            ok = False
        if not ok:
            step /= 2
            if step < 2.0 ** -_HALVINGS:
                raise SolverError(f"{what}: the fixed point could not be followed along its "
                                  f"path (stuck at {theta:.6g} of it)")
            continue
        theta, sol, step = t1, new, 2 * step
    return sol


def continuation(gamma: float, atoms, weights, E, L, delta=None,
                 what: str = "linear pencil") -> PencilSolution:
    """``follow`` along gamma' from 0 (S = Sigma, exact) to ``gamma``: the branch of the fixed
    point that continues the deterministic pencil."""
    return follow(atoms, weights, lambda th: (th * gamma, E, L, delta), what=what)


def local_response(sol: PencilSolution, entry, out) -> np.ndarray:
    """The matrix of derivatives dQhat_(out)(s_b) / dLhat_(entry)(s_a) (b, a over the atoms):
    the linear response of one entry of E_D[P^-1] to one entry of Lhat moved at one atom
    (module docstring; e.g. L[h] = E_D[K h K] = -dG / dt).

    Parameters
    ----------
    sol : PencilSolution
    entry, out : (int, int)
        The entry (i, j) of Lhat that moves and the entry of Qhat observed.

    Returns
    -------
    ndarray (atoms, atoms)
    """
    (i, j), (o1, o2) = entry, out
    s, h, Q, C = sol.atoms, sol.weights, sol.Q, sol.C
    k = C.shape[0]
    # The direct term -Qhat dLhat Qhat, at the moved atom only; its pull on T through J.
    direct = -Q[:, o1, i] * Q[:, j, o2]
    rhs = -(h * s)[:, None, None] * Q[:, :, i, None] * Q[:, None, j, :]
    dT = np.linalg.solve(sol.lhs, rhs.reshape(-1, k * k).T).T.reshape(-1, k, k)
    through = np.einsum("bc,acd,bd->ba", (Q @ C)[:, o1, :], dT, (C @ Q)[:, :, o2])
    return sol.gamma * s[:, None] * through + np.diag(direct)


class Pencil:
    """A block pencil assembled from solved diagonal blocks and couplings (module docstring):
    ``block`` adds a diagonal block with its solution, ``couple`` an entry, ``solve`` the
    whole from the block-diagonal start.

    Parameters
    ----------
    gamma : float
    atoms, weights : array_like (n,)
    """

    def __init__(self, gamma, atoms, weights):
        self.gamma = float(gamma)
        self.s = np.asarray(atoms, dtype=float)
        self.h = np.asarray(weights, dtype=float)
        self._blocks = []
        self._couplings = []

    @property
    def size(self) -> int:
        return sum(b[0].shape[0] for b in self._blocks)

    def block(self, E, L, delta, T) -> int:
        """Append a diagonal block (E, Lhat per atom, delta, its solved T); returns its first
        index."""
        start = self.size
        self._blocks.append(tuple(np.asarray(x, dtype=float) for x in (E, L, delta, T)))
        return start

    def projection(self) -> int:
        """A projection row (P^perp off the row space of X, gamma > 1)."""
        c = float(diagonal_roots(self.gamma, self.s, self.h, 0.0, np.ones_like(self.s)))
        T = self.h @ (self.s / (c * self.s + 1.0))
        return self.block([[1.0]], np.ones((self.s.size, 1, 1)), [0.0], [[T]])

    def solved(self, sol: PencilSolution, E, L, delta=None) -> int:
        """Append a block whose fixed point is ``sol``."""
        k = np.shape(E)[0]
        return self.block(E, L, np.ones(k) if delta is None else delta, sol.T)

    def couple(self, row: int, col: int, lhat) -> None:
        """P_(row, col) += Lhat(s) (a scalar or a function of the atoms; couplings through S
        would go in E, which no caller needs)."""
        self._couplings.append((row, col, np.broadcast_to(lhat, self.s.shape)))

    def solve(self, what: str = "linear pencil") -> PencilSolution:
        k = self.size
        E, delta, T0 = np.zeros((k, k)), np.ones(k), np.zeros((k, k))
        L = np.zeros((self.s.size, k, k))
        at = 0
        for Eb, Lb, db, Tb in self._blocks:
            sl = slice(at, at + Eb.shape[0])
            E[sl, sl], L[:, sl, sl], delta[sl], T0[sl, sl] = Eb, Lb, db, Tb
            at += Eb.shape[0]
        for row, col, lhat in self._couplings:
            L[:, row, col] += lhat
        return solve(self.gamma, self.s, self.h, E, L, delta, T0, what)
