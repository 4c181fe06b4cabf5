"""Each client's eigendecomposition X X^T / n = U diag(mu) U^T, from which
``montecarlo.linear.measure`` measures every estimator (paper 003, Sec. 2; that module's
docstring says how): ``Decomposition`` for one client, ``decompose`` for several (one BLAS
thread when they are small).
"""

from __future__ import annotations

import copy
from contextlib import nullcontext

import numpy as np
import scipy.linalg as sla
from scipy.linalg.blas import dsyrk

from montecarlo.runner.threads import small_blas

# Decompositions whose Gram matrix (min(n, d) square) is at most this size, and the whole
# measurement when d is at most this size, run with a single BLAS thread
# (montecarlo.runner.threads); larger problems (e.g. one client at d = 1600, benchmarks/bench_linear.py) keep the library's
# threads.
SMALL_GRAM = 512
#: Eigenvalues of X^T X (X X^T) below this fraction of the largest are off by more than
#: eps / ILL_CONDITIONED relatively: the decomposition then takes the singular values of X.
ILL_CONDITIONED = 1e-8
#: ... with n <= d, only up to this d (its d x d right vectors: 134 MB at 4096).
FULL_SVD_D = 4096


def decompose(Xs, s, eager_v: bool = False) -> list:
    """``Decomposition`` of every design in ``Xs`` (one BLAS thread when they are small, see
    ``SMALL_GRAM``); ``eager_v`` also forms each V = U^T X in that loop."""
    small = min(min(X.shape) for X in Xs) <= SMALL_GRAM
    with small_blas() if small else nullcontext():
        decs = [Decomposition(X, s) for X in Xs]
        if eager_v:
            for dec in decs:
                dec.V
    return decs


class Decomposition:
    """X X^T / n = U diag(mu) U^T restricted to mu > 0, for one client (paper 003, Sec. 2).

    Parameters
    ----------
    X : ndarray (n, d)
        Design, in the eigenbasis of Sigma.
    s : ndarray (d,)
        Eigenvalues of Sigma.

    Attributes
    ----------
    mu : ndarray (k,)
        Positive eigenvalues of X X^T / n (k = rank X).
    U : ndarray (n, k)
        Their eigenvectors (for n > d computed from those of X^T X, on first use).
    V : ndarray (k, d)
        U^T X.
    """

    def __init__(self, X: np.ndarray, s: np.ndarray):
        self.X, self.s = X, s
        n, d = X.shape
        self.n = n
        self._U = self._V = self._R = self._R_null = None
        if n <= d:
            # X^T is F-ordered, so dsyrk forms X X^T (upper triangle) without copying X; half
            # the flops of a general product.
            ev, U = sla.eigh(dsyrk(1.0, X.T, trans=1), lower=False, driver="evd",
                             overwrite_a=True, check_finite=False)
            keep = ev > ev[-1] * max(n, d) * np.finfo(float).eps
            self.mu, self._U = ev[keep] / n, U[:, keep]
            if ev[0] < ev[-1] * ILL_CONDITIONED and d <= FULL_SVD_D:
                # As below for n > d, from the SVD of X, which also gives the null basis
                # (d - k right vectors, a d x d array: up to FULL_SVD_D only) that
                # ``null_sigma`` needs without a difference
                # (two-point:1e-8,1e8,0.9 at gamma 2: a bias 1.13e-8 measured 0.95e-8 to
                # 1.8e-8; fuzz41 measure F7).
                U, sv, Vt = sla.svd(X, full_matrices=True, check_finite=False)
                keep = sv > sv[0] * max(n, d) * np.finfo(float).eps
                k = int(keep.sum())
                self.mu, self._U = sv[:k] ** 2 / n, U[:, :k]
                self._V, self._R_null = sv[:k, None] * Vt[:k], Vt[k:].T
        else:
            # More samples than dimensions: X^T X (d x d, again by dsyrk on the F-ordered X^T)
            # has the same positive eigenvalues n mu; with its eigenvectors R, U = X R
            # diag(n mu)^(-1/2) and V = U^T X = diag(sqrt(n mu)) R^T, so the n x n problem is
            # never formed (a d x d eigendecomposition instead of an n x n one).
            ev, R = sla.eigh(dsyrk(1.0, X.T, trans=0), lower=False, driver="evd",
                             overwrite_a=True, check_finite=False)
            keep = ev > ev[-1] * max(n, d) * np.finfo(float).eps
            if ev[0] < ev[-1] * ILL_CONDITIONED:
                # Eigenvalues of X^T X that small are its rounding (those below eps times the
                # largest were dropped as zero), though X resolves them: from X's singular
                # values instead, ~3x the time (two-point:1e-8,1e8,0.5: the OLS variance 0.34
                # for 1; fuzz41 measure F4).
                sv, R = sla.svd(X, full_matrices=False, check_finite=False)[1:]
                R, ev = R.T, sv ** 2
                keep = sv > sv[0] * max(n, d) * np.finfo(float).eps
            self.mu, self._R, self._R_null = ev[keep] / n, R[:, keep], R[:, ~keep]
            self._V = np.sqrt(ev[keep])[:, None] * self._R.T

    @property
    def U(self) -> np.ndarray:
        """Eigenvectors (n, k) of X X^T / n for the eigenvalues mu."""
        if self._U is None:
            self._U = (self.X @ self._R) / np.sqrt(self.nmu)
        return self._U

    @property
    def V(self) -> np.ndarray:
        """U^T X (k, d) = diag(sqrt(n mu)) W^T."""
        if self._V is None:
            self._V = self.U.T @ self.X
        return self._V

    @property
    def nmu(self) -> np.ndarray:
        return self.n * self.mu

    @property
    def sigma_diag(self) -> np.ndarray:
        """diag(W^T Sigma W): the Sigma-mass of each data direction (1 for Sigma = I)."""
        if np.all(self.s == 1.0):
            return np.ones_like(self.mu)
        return (self.V ** 2 @ self.s) / self.nmu

    @property
    def null_sigma(self) -> float:
        """tr(Sigma (I - W W^T)): the Sigma-mass of the directions the data leave unfitted.

        With n > d it is summed over the eigenvectors of X^T X dropped as numerically zero,
        never formed as tr(Sigma) - sum of ``sigma_diag``: under two-point:1e-8,1e8,0.5 that
        difference lost the whole of it to rounding against tr(Sigma) ~ 1e10 (fuzz41 measure
        F1); with n <= d likewise when ill-conditioned (F7), else the difference (>= 0).
        """
        if self._R_null is not None:
            return float(self.s @ (self._R_null ** 2).sum(1))
        return max(float(self.s.sum() - self.sigma_diag.sum()), 0.0)

    @property
    def null_basis(self):
        """Orthonormal basis (d, d - k) of the directions the data leave unfitted, with n > d
        or ill-conditioned (``ILL_CONDITIONED``); else None (not decomposed)."""
        return self._R_null

    def fresh(self) -> "Decomposition":
        """This eigendecomposition without the products formed after it (U or V): ``proj`` and
        ``lift`` take a route that depends on whether V exists, so a method measured on it
        computes exactly what it computes on a new ``Decomposition``."""
        view = copy.copy(self)
        if self._R is not None:
            view._U = None
        elif self._R_null is None:      # (the SVD route of n <= d keeps its accurate V)
            view._V = None
        return view

    def proj(self, theta: np.ndarray) -> np.ndarray:
        """U^T X theta."""
        return self.U.T @ (self.X @ theta) if self._V is None else self._V @ theta

    def lift(self, z: np.ndarray) -> np.ndarray:
        """X^T U z."""
        return self.X.T @ (self.U @ z) if self._V is None else self._V.T @ z
