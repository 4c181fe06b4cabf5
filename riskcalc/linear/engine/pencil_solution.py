"""The solution of a block pencil (``riskcalc.linear.engine.block_pencil``, whose module
docstring derives it: the deterministic equivalents of paper 003, ``003_4b976ddf5225c17e.txt``,
eq. 12's companion pencils and their couplings) and the batched inverses and solves its
iterations use.

``PencilSolution`` holds T, Qhat, C and I - J of a fixed point (one pencil or a batch), and
``memo``: what the complex steps taken from it share (``block_pencil._tangent``: products and
inverses of its real parts, computed by the first step and kept for the next). ``_apply`` runs
numpy's batched inverse or solve with a singular member giving NaN for itself alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from riskcalc.linear.engine.resolvent_chain import _real_or_complex


@dataclass(frozen=True)
class PencilSolution:
    """T (k, k), Qhat (atoms, k, k) and C (k, k) of the fixed point, and I - J for linear
    responses (``local_response``); a batch of B pencils has a leading axis B on every array
    (gamma (B,), atoms (B, n)). ``unknowns``: the flat indices (row-major, of k x k) of the
    entries of T Newton's iteration moved, I - J restricted to them (None: every entry);
    ``levels``: their superdiagonal levels in a block upper triangular pencil
    (``pencil_assembly.Pencil.solve``), by which I - J is block lower triangular; ``parts``
    its blocks by level (each level's diagonal block inverted), cut once for every complex
    step taken from this solution (``block_pencil._by_level``); ``memo`` what those steps
    share besides (``block_pencil._tangent``: X; ``maml_pencils.responses``: L_g)."""

    gamma: float
    atoms: np.ndarray
    weights: np.ndarray
    T: np.ndarray
    Q: np.ndarray
    C: np.ndarray
    lhs: np.ndarray
    unknowns: np.ndarray | None = None
    levels: np.ndarray | None = None
    parts: list = field(default_factory=list, compare=False, repr=False)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def trace(self, rows, cols):
        """lim tau(Sigma sum_(a,b) u_a v_b P^-1_ab) for row and column weight vectors (or
        indices); one per pencil of a batch."""
        k = self.T.shape[-1]
        out = np.einsum("a,...ab,b->...", _vec(rows, k), self.T, _vec(cols, k))
        return float(out) if out.ndim == 0 else out

    def conditional(self, rows, cols) -> np.ndarray:
        """E_D of sum_(a,b) u_a v_b P^-1_ab per atom (the same weights as ``trace``)."""
        k = self.T.shape[-1]
        return np.einsum("a,...nab,b->...n", _vec(rows, k), self.Q, _vec(cols, k))

    def take(self, idx) -> "PencilSolution":
        """The pencils ``idx`` of a batch."""
        return PencilSolution(self.gamma[idx], self.atoms[idx], self.weights, self.T[idx],
                              self.Q[idx], self.C[idx], self.lhs[idx], self.unknowns,
                              self.levels)

    def put(self, idx, other: "PencilSolution") -> "PencilSolution":
        """A copy of this batch with the pencils ``idx`` replaced by ``other``'s."""
        parts = [x.copy() for x in (self.gamma, self.atoms, self.T, self.Q, self.C, self.lhs)]
        for x, y in zip(parts, (other.gamma, other.atoms, other.T, other.Q, other.C,
                                other.lhs)):
            x[idx] = y
        g, s, T, Q, C, lhs = parts
        return PencilSolution(g, s, self.weights, T, Q, C, lhs, self.unknowns, self.levels)


def _vec(x, k):
    """A weight vector from an index or a vector."""
    if np.ndim(x) == 0:
        out = np.zeros(k)
        out[int(x)] = 1.0
        return out
    return _real_or_complex(x)


def _apply(fun, stack):
    """``fun`` (np.linalg.inv or a solve) over a stack of matrices; where one is singular,
    NaN for it alone (the batch's others are not held back)."""
    try:
        return fun(stack)
    except np.linalg.LinAlgError:
        out = []
        for k in range(stack[0].shape[0] if isinstance(stack, tuple) else stack.shape[0]):
            try:
                out.append(fun(tuple(x[k:k + 1] for x in stack) if isinstance(stack, tuple)
                               else stack[k:k + 1])[0])
            except np.linalg.LinAlgError:
                shape = (stack[1] if isinstance(stack, tuple) else stack).shape[1:]
                out.append(np.full(shape, np.nan))
        return np.array(out)


def _inv(M):
    return _apply(np.linalg.inv, M)


def _lsolve(A, b):
    return _apply(lambda ab: np.linalg.solve(ab[0], ab[1]), (A, b))


def _single(sol):
    """A batch of one as one pencil's solution."""
    return PencilSolution(float(sol.gamma[0]), sol.atoms[0], sol.weights, sol.T[0], sol.Q[0],
                          sol.C[0], sol.lhs[0], sol.unknowns, sol.levels)
