"""Block pencils followed along paths and assembled from solved blocks (the deterministic
equivalents of ``riskcalc.linear.engine.block_pencil``, whose module docstring derives them).

Newton's iteration from a distant start can land on an unphysical root, so a diagonal block is
solved by continuation in gamma from gamma = 0 (``continuation``), where S = Sigma and
Qhat = (E s + Lhat)^-1 exactly, and moved along a path of pencils in small steps (``follow``).
A pencil of several blocks (``Pencil``: e.g. paper 003, ``003_4b976ddf5225c17e.txt``, eq. 12's
companion blocks, projection rows P^perp (gamma > 1) and their couplings, for MAML-FL's target
traces in ``finite_clients.maml_sigma``) starts from its solved diagonal blocks; a projection
row's block is ``projection_trace``. Every function takes one pencil or a batch (a leading
axis B), each member following its own path with its own steps.

The tests (``tests/test_block_pencil.py``, ``tests/test_batched_pencils.py``) compare the
assembled pencils with ``resolvent_chain`` and ``resolvent_pencil`` on triangular pencils and
with direct simulation, and each member of a batch with the same pencil solved alone.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.block_pencil import (_TOL, PencilSolution, _batched, _inv,
                                                 _jacobian, _lsolve, _newton, _single, solve)
from riskcalc.linear.engine.resolvent_chain import _real_or_complex, diagonal_roots
from riskcalc.linear.engine.stieltjes import c0
from riskcalc.spectrum import Spectrum

#: Halvings of a step of ``follow`` before giving up.
_HALVINGS = 30
#: Newton steps and largest relative move of T accepted for one step of ``follow``.
_STEP_ITER = 8
_STEP_MOVE = 0.25


def follow(atoms, weights, path, start: PencilSolution | None = None,
           what: str = "linear pencil", batch: int | None = None) -> PencilSolution:
    """The fixed point along a path of pencils theta -> (gamma, E, Lhat, delta), theta from 0
    to 1, from its solution ``start`` at theta = 0 (None: solved there by ``solve``, exact
    when the path starts at gamma = 0). Each step is Newton's iteration from the previous
    point, accepted only if it converges within ``_STEP_ITER`` iterations and moves T by at
    most ``_STEP_MOVE`` (1 + max abs T); otherwise the step is halved. Newton's iteration from a
    distant start can converge to another, unphysical root of the fixed-point equations (e.g.
    a negative E_D[K] past gamma = 1); small steps stay on the branch that continues the
    start.

    With ``batch`` = B, B paths at once: ``path`` takes theta (B,) and returns the batch's
    arguments (``solve``), and each path keeps its own theta and step (its numbers are those
    of following it alone).

    Raises
    ------
    SolverError
        If a step still fails after ``_HALVINGS`` halvings.
    """
    h = np.asarray(weights, dtype=float)
    B = 1 if batch is None else batch

    def at(theta):
        g, E, L, delta = path(float(theta[0]) if batch is None else theta)
        return _batched(g, atoms, E, L, delta, batch=B)[0][:5]

    if start is None:
        g, s, E, L, delta = at(np.zeros(B))
        sol = solve(g, s, h, E, L, delta, what=what)
    else:
        sol = start if batch is not None else PencilSolution(
            *(np.asarray(x)[None] for x in (start.gamma, start.atoms)), h,
            *(x[None] for x in (start.T, start.Q, start.C, start.lhs)))
    theta, step = np.zeros(B), np.ones(B)
    T, Q, C, lhs = (x.copy() for x in (sol.T, sol.Q, sol.C, sol.lhs))
    g, s = (np.array(x, dtype=float) for x in (sol.gamma, sol.atoms))
    while np.any(theta < 1.0):
        live = np.flatnonzero(theta < 1.0)
        t1 = np.minimum(1.0, theta + step)
        gg, ss, E, L, delta = (x[live] for x in at(np.where(theta < 1.0, t1, 1.0)))
        nT, nQ, nC, nlhs, conv = _newton(gg, ss, h, E, L, delta, T[live], _STEP_ITER)
        with np.errstate(invalid="ignore"):
            good = conv & (np.max(np.abs(nT - T[live]), axis=(1, 2))
                           <= _STEP_MOVE * (1.0 + np.max(np.abs(T[live]), axis=(1, 2))))
        acc, rej = live[good], live[~good]
        theta[acc], step[acc] = t1[acc], 2 * step[acc]
        T[acc], Q[acc], C[acc], lhs[acc] = nT[good], nQ[good], nC[good], nlhs[good]
        g[acc], s[acc] = gg[good], ss[good]
        step[rej] /= 2
        if np.any(step[rej] < 2.0 ** -_HALVINGS):
            stuck = rej[step[rej] < 2.0 ** -_HALVINGS][0]
            raise SolverError(f"{what}: the fixed point could not be followed along its "
                              f"path (stuck at {theta[stuck]:.6g} of it)")
    sol = PencilSolution(g, s, h, T, Q, C, lhs)
    return _single(sol) if batch is None else sol


def continuation(gamma, atoms, weights, E, L, delta=None,
                 what: str = "linear pencil") -> PencilSolution:
    """``follow`` along gamma' from 0 (S = Sigma, exact) to ``gamma``: the branch of the fixed
    point that continues the deterministic pencil (one pencil or a batch, as ``solve``)."""
    (g, s, E, L, delta, _), one = _batched(gamma, atoms, E, L, delta)
    if one:
        return follow(atoms, weights, lambda th: (th * g[0], E[0], L[0], delta[0]), what=what)
    return follow(s, weights, lambda th: (th * g, E, L, delta), what=what, batch=g.size)


def projection_trace(gamma, atoms, weights):
    """T of a projection row's block (``Pencil.projection``): E_H[s / (c s + 1)] with c the
    diagonal root at eta = 0 (one pencil or a batch), gamma E_H[c s / (c s + 1)] = 1, that is
    c = gamma c0 with c0 of paper 003, Def. 6.1 (``stieltjes.c0``). Near gamma = 1, where
    c ~ E_H[1/s] / (gamma - 1), the diagonal equation's bracket is lost to rounding (its
    upper end is a root to O((gamma - 1)^2): gamma 1 + 1e-9 and 1 + 1e-10 refused as "no root
    in its bracket", 1 + 1e-12 answered; fuzz39 maml F2): there c0's own form, which
    computes 1 - 1/gamma - E_H[1 / (c s + 1)] without that cancellation."""
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    try:
        c = diagonal_roots(gamma, s, w, 0.0, np.ones_like(s))
    except SolverError:
        shape = np.broadcast_shapes(np.shape(gamma), s.shape[:-1])
        g = np.broadcast_to(np.asarray(gamma, dtype=float), shape).ravel()
        rows = np.broadcast_to(s, shape + s.shape[-1:]).reshape(g.size, -1)
        c = np.reshape([gi * c0(np.array([gi]), Spectrum(row, w))[0]
                        for gi, row in zip(g, rows)], shape)
    return (s / (np.asarray(c)[..., None] * s + 1.0)) @ w


class Pencil:
    """A block pencil assembled from solved diagonal blocks and couplings (module docstring):
    ``block`` adds a diagonal block with its solution, ``couple`` an entry, ``solve`` the
    whole from the block-diagonal start. A batch of pencils of one block structure: gamma
    (B,) and/or atoms (B, n), and the blocks' and couplings' arrays with a leading axis B
    (or shared).

    Parameters
    ----------
    gamma : float or array_like (B,)
    atoms : array_like (n,) or (B, n)
    weights : array_like (n,)
    """

    def __init__(self, gamma, atoms, weights):
        self.gamma = np.asarray(gamma, dtype=float)
        self.s = np.asarray(atoms, dtype=float)
        self.h = np.asarray(weights, dtype=float)
        sizes = [x.shape[0] for x, nd in ((self.gamma, 1), (self.s, 2)) if x.ndim == nd]
        self._batch = max(sizes) if sizes else None
        self._blocks = []
        self._inverses = []             # per block: its Qhat (``solved``) or None
        self._couplings = []

    @property
    def size(self) -> int:
        return sum(np.shape(b[0])[-1] for b in self._blocks)

    def block(self, E, L, delta, T) -> int:
        """Append a diagonal block (E, Lhat per atom, delta, its solved T); returns its first
        index."""
        start = self.size
        self._blocks.append(tuple(_real_or_complex(x) for x in (E, L, delta, T)))
        self._inverses.append(None)
        return start

    def projection(self, T=None) -> int:
        """A projection row (P^perp off the row space of X, gamma > 1); ``T`` its solved
        value (``projection_trace``) when the caller has it."""
        if T is None:
            T = projection_trace(self.gamma, self.s, self.h)
        return self.block([[1.0]], np.ones((self.h.size, 1, 1)), [0.0],
                          np.asarray(T)[..., None, None])

    def solved(self, sol: PencilSolution, E, L, delta=None) -> int:
        """Append a block whose fixed point is ``sol`` (with these E and Lhat: its Qhat, the
        inverse of the block's C s + Lhat, is then the pencil's diagonal block's, which
        ``_by_levels`` takes instead of inverting it again)."""
        k = np.shape(E)[-1]
        start = self.block(E, L, np.ones(k) if delta is None else delta, sol.T)
        self._inverses[-1] = sol.Q
        return start

    def couple(self, row: int, col: int, lhat) -> None:
        """P_(row, col) += Lhat(s) (a scalar or a function of the atoms; couplings through S
        would go in E, which no caller needs)."""
        self._couplings.append((row, col, _real_or_complex(lhat)))

    def solve(self, what: str = "linear pencil", real=None,
              response: bool = True) -> PencilSolution:
        """The assembled pencil's fixed point (``solve``; ``real``: a complex step from the
        real parts' solution). When every coupling goes from a block to a later one (block
        upper triangular: so is T, with the solved blocks on its diagonal), T's blocks above
        the diagonal are solved one superdiagonal level at a time (``_by_levels``; Newton's
        iteration on T's blocks on and above the diagonal, ``solve``'s ``unknowns``, where
        that does not converge). ``response``: the result's ``lhs`` (I - J on those entries,
        for a later complex step from it) is computed; else NaN (a read-only view). A complex
        step (``real``) whose every moving block was given its own step's solution (``solved``
        with a complex one; constant blocks, real E and Lhat, have no tangent) and whose
        couplings all join two blocks takes those blocks' tangents as they are
        (``block_pencil.solve``'s ``known``: each block's entries move with that block's
        alone)."""
        k, n = self.size, self.h.size
        B = 1 if self._batch is None else self._batch
        dtype = np.result_type(float, *(x for b in self._blocks for x in b),
                               *(c[2] for c in self._couplings))
        E, delta, T0 = np.zeros((B, k, k), dtype), np.ones((B, k)), np.zeros((B, k, k), dtype)
        L = np.zeros((B, n, k, k), dtype)
        at = 0
        for Eb, Lb, db, Tb in self._blocks:
            sl = slice(at, at + Eb.shape[-1])
            E[:, sl, sl], L[:, :, sl, sl], delta[:, sl], T0[:, sl, sl] = Eb, Lb, db, Tb
            at += Eb.shape[-1]
        for row, col, lhat in self._couplings:
            L[:, :, row, col] += np.broadcast_to(lhat, (B, n)) if lhat.ndim else lhat
        block = np.repeat(np.arange(len(self._blocks)),
                          [np.shape(b[0])[-1] for b in self._blocks])
        idx, sol = None, None
        g, s = (self.gamma, self.s) if self._batch else (self.gamma[None], self.s[None])
        if all(block[row] <= block[col] for row, col, _ in self._couplings):
            span = (block[None, :] - block[:, None]).ravel()
            idx = np.flatnonzero(span >= 0)
            if real is None and dtype.kind == "f":
                sol = _by_levels(*_batched(g, s, E, L, delta, T0, batch=B)[0], self.h, span,
                                 response, block, self._inverses)
        known = None
        if real is not None and all(block[row] < block[col] for row, col, _ in self._couplings) \
                and all(np.iscomplexobj(Tb) or not (np.iscomplexobj(Eb) or np.iscomplexobj(Lb))
                        for Eb, Lb, _, Tb in self._blocks):
            known = T0.imag
        if sol is None:
            sol = solve(g, s, self.h, E, L, delta, T0, what, real=real,
                        unknowns=None if real is not None else idx, known=known)
        if idx is not None and real is None:
            sol = replace(sol, levels=span[idx])
        return sol if self._batch else _single(sol)


def _by_levels(g, s, E, L, delta, T, h, span, response, block, inverses):
    """The fixed point of a batch of block upper triangular pencils from T with their solved
    diagonal blocks (``Pencil.solve``), one superdiagonal level at a time: entry (a, b) of T
    at level ``span`` = block(b) - block(a) is affine in the entries of its level given the
    lower ones (``block_pencil``'s module docstring), so one Newton step on that level's
    entries alone, with I - J restricted to them (7, 6 and 9 entries for MAML-FL's 8 x 8
    target pencils instead of 42), solves it; Newton's iteration on every unknown took the
    same number of steps (one per level) with the 42 x 42 system. Then the residual is checked
    on every entry as ``block_pencil._newton`` does; None if a pencil fails it (the caller
    iterates instead).

    ``block``: each row's block. The two inverses of ``block_pencil._state``, X = (Delta +
    gamma T E)^-1 (C = E X) and Qhat = (C s + Lhat)^-1, are of block upper triangular
    matrices (T is, E is block diagonal, every coupling goes to a later block) whose diagonal
    blocks never move (T's diagonal blocks are the solved ones): those blocks are inverted
    once (or given: ``inverses``, the solved blocks' Qhat), and each state's inverses are
    completed by block back substitution
    (``_upper_inverse``: matrix products, no factorization of the 8 x 8 matrices). The last
    X is kept in the solution's ``memo`` for the complex steps from it."""
    B, k = E.shape[0], E.shape[-1]
    flat = T.reshape(B, k * k)                          # a view: T moves with it
    cuts = np.flatnonzero(np.diff(block, prepend=-1, append=block[-1] + 1))
    eye = np.eye(k) * delta[:, None, :]
    with np.errstate(all="ignore"):
        A = eye + g[:, None, None] * T @ E
        spans = list(zip(cuts[:-1], cuts[1:]))
        xd = [_diagonal_inverse(A[:, a:b, a:b]) for a, b in spans]
        # The diagonal blocks of C = E X are E_ii X_ii, those of C s + Lhat C_ii s + Lhat_ii.
        qd = [_diagonal_inverse((E[:, a:b, a:b] @ x)[:, None] * s[:, :, None, None]
                                + L[:, :, a:b, a:b]) if q is None else q
              for (a, b), x, q in zip(spans, xd, inverses)]

        def state():
            X = _upper_inverse(eye + g[:, None, None] * T @ E, cuts, xd)
            C = E @ X
            Q = _upper_inverse(C[:, None] * s[:, :, None, None] + L, cuts, qd)
            return X, C, Q, np.einsum("zn,znab->zab", h * s, Q) - T

        for level in range(1, int(span.max()) + 1):
            sel = np.flatnonzero(span == level)
            _, C, Q, res = state()
            step = _lsolve(_jacobian(g, s, h, C, Q, sel), res.reshape(B, k * k)[:, sel, None])
            flat[:, sel] += step[..., 0]
        X, C, Q, res = state()
        idx = np.flatnonzero(span >= 0)
        lhs = (_jacobian(g, s, h, C, Q, idx) if response
               else np.broadcast_to(np.nan, (B, idx.size, idx.size)))
        ok = np.all(np.isfinite(res), axis=(1, 2)) & (
            np.max(np.abs(res), axis=(1, 2)) <= _TOL * (1.0 + np.max(np.abs(T), axis=(1, 2))))
    if not ok.all():
        return None
    sol = PencilSolution(g, s, h, T, Q, C, lhs, idx)
    sol.memo["X"] = (E, delta, g, X)                    # ``block_pencil._tangent``'s
    return sol


def _diagonal_inverse(D):
    """The inverses of a stack of diagonal blocks (a 1 x 1 block: its reciprocal)."""
    return 1.0 / D if D.shape[-1] == 1 else _inv(D)


def _upper_inverse(M, cuts, diag):
    """M^-1 for a stack of block upper triangular matrices M (blocks between ``cuts``) from
    the inverses ``diag`` of their diagonal blocks, by block back substitution: block row i of
    M^-1 right of its diagonal is -D_i^-1 M_(i, >i) (M^-1)_(>i, >i)."""
    out = np.zeros_like(M)
    k = M.shape[-1]
    for i in range(len(cuts) - 2, -1, -1):
        a, b = cuts[i], cuts[i + 1]
        out[..., a:b, a:b] = diag[i]
        if b < k:
            out[..., a:b, b:] = -diag[i] @ (M[..., a:b, b:] @ out[..., b:, b:])
    return out
