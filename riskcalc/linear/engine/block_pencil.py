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

Solution. Newton's method on T with the exact Jacobian: dC = -gamma C dT C gives dQhat = gamma
s Qhat C dT C Qhat, so dT -> gamma E_H[s^2 (Qhat C) dT (C Qhat)] (a k^2 x k^2 matrix J).
Starting values are the solutions of the diagonal blocks (``pencil_assembly.Pencil``): the
chains of a block upper triangular pencil are then found in a few steps, each superdiagonal
level being affine given the lower ones; T is block upper triangular too (so are C and Qhat),
so Newton's steps solve for its blocks on and above the diagonal only (MAML-FL's 8 x 8 target
pencils: 42 of the 64 entries, a 42 x 42 system instead of 64 x 64). A diagonal block is solved
by continuation in gamma from gamma = 0 (``pencil_assembly.continuation``), where S = Sigma and
Qhat = (E s + Lhat)^-1 exactly, and moved along a path of pencils in small steps
(``pencil_assembly.follow``): Newton's iteration from a distant start can land on an unphysical
root. Linear responses (``local_response``) to a change of Lhat, e.g. a derivative in the shift
t, solve (I - J) dT = E_H[-s Qhat dLhat Qhat] with the same matrix.

Batches. Every function takes a batch of pencils of one block shape (a leading axis B on
gamma, the atoms' eigenvalues, E, Lhat, delta, T0; the masses shared): one Newton iteration
over the batch, each pencil stopped at its own tolerance and following its own path with
its own steps, so its numbers are those of solving it alone (to rounding), for the cost of
one solve of small arrays: MAML-FL's groups (``finite_clients.maml_sigma``) were one Python
loop of such solves each.

Complex E, Lhat or couplings (the complex steps of exact gradients,
``finite_clients.subordination_gradient``): the same iteration in complex numbers, from the
real parts' fixed point; the imaginary part must converge too (relative to itself), so at
least one Newton step is taken and it is the fixed point's exact tangent. Or, given the real
parts' solution, that tangent directly in real arithmetic (``solve(real=)``, ``_tangent``:
matrix products and one solve with the real Jacobian instead of complex inverses at every
step).

The tests compare it with ``resolvent_chain`` and ``resolvent_pencil`` on triangular pencils,
with the scalar (Sigma = I) Marchenko-Pastur quadrature of a cubic filter, and with direct
simulation of E_D[(t + c_1 S + c_2 S^2 + c_3 S^3)^-1] and its derivatives.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine.pencil_solution import PencilSolution, _inv, _lsolve, _single
from riskcalc.linear.engine.resolvent_chain import _real_or_complex

_ITER = 60
#: Relative residual max abs(T - E_H[s Qhat]) / (1 + max abs T) at which Newton's iteration
#: stops.
_TOL = 1e-13


def _batched(gamma, atoms, E, L, delta=None, T=None, batch=None):
    """The arguments of one pencil or of a batch with a leading axis B on every array
    (``batch``: B, or None to find out from the shapes: a batch when gamma is 1-d, atoms
    2-d, E 3-d or Lhat 4-d), broadcast to the batch, and whether it was one."""
    gamma, s = np.asarray(gamma, dtype=float), np.asarray(atoms, dtype=float)
    E, L = _real_or_complex(E), _real_or_complex(L)
    if batch is None:
        sizes = [x.shape[0] for x, nd in ((gamma, 1), (s, 2), (E, 3), (L, 4)) if x.ndim == nd]
        batch = max(sizes) if sizes else None
    one = batch is None
    B, k, n = 1 if one else batch, E.shape[-1], s.shape[-1]
    delta = np.ones(k) if delta is None else np.asarray(delta, dtype=float)
    out = [np.broadcast_to(gamma, (B,)), np.broadcast_to(s, (B, n)),
           np.broadcast_to(E, (B, k, k)), np.broadcast_to(L, (B, n, k, k)),
           np.broadcast_to(delta, (B, k))]
    out.append(None if T is None else np.array(np.broadcast_to(T, (B, k, k)),
                                               dtype=np.result_type(T, E, L, float)))
    return out, one


def _state(gamma, s, h, E, L, delta, T):
    """C, Qhat and the residual E_H[s Qhat] - T at T (a batch: leading axis B)."""
    k = E.shape[-1]
    C = E @ _inv(np.eye(k) * delta[:, None, :] + gamma[:, None, None] * T @ E)
    Q = _inv(C[:, None] * s[:, :, None, None] + L)
    return C, Q, np.einsum("zn,znab->zab", h * s, Q) - T


def _jacobian(gamma, s, h, C, Q, idx=None):
    """I - J, J the (k^2 x k^2) derivative of E_H[s Qhat] in T (row-major vec; a batch);
    with ``idx`` (flat indices of T), its rows and columns there only."""
    B, k = C.shape[0], C.shape[-1]
    QC, CQ = Q @ C[:, None], C[:, None] @ Q
    w = gamma[:, None] * h * s * s
    idx = np.arange(k * k) if idx is None else idx
    if 4 * idx.size ** 2 <= k ** 4:
        # J_(ab),(cd) = E_H[gamma s^2 (QC)_ac (CQ)_db] at the entries (ab), (cd) of idx, few
        # of the k^4 products (one superdiagonal level's, ``pencil_assembly._by_levels``):
        # those alone, each a sum over the atoms.
        a, b = np.divmod(idx, k)
        left = (w[:, :, None, None] * QC)[:, :, a[:, None], a[None, :]]
        return np.eye(idx.size) - np.einsum("znij,znij->zij", left,
                                            CQ[:, :, b[None, :], b[:, None]])
    # Many entries (or all): every product (ac, db) by one matrix product over the atoms
    # (a batched einsum of the three factors was ~5x slower), then those entries.
    n = Q.shape[1]
    prod = (w[:, :, None, None] * QC).transpose(0, 2, 3, 1).reshape(B, k * k, n) @ \
        CQ.reshape(B, n, k * k)
    a, b = np.divmod(idx, k)
    flat = ((a[:, None] * k + a[None, :]) * k + b[None, :]) * k + b[:, None]
    return np.eye(idx.size) - np.take(prod.reshape(B, -1), flat, axis=1)


def _newton(gamma, s, h, E, L, delta, T, iterations, idx=None):
    """Newton's iteration on a batch from T (module docstring): (T, Q, C, lhs, converged),
    each pencil stopped when its own residual is below ``_TOL`` (its numbers are those of
    solving it alone) or when it fails (non-finite, singular). ``idx``: the flat indices of
    the entries of T that move (the others' residuals vanish at the start:
    ``pencil_assembly.Pencil.solve``), the Jacobian restricted to them; the residual is
    checked on every entry."""
    B, n, k = s.shape[0], s.shape[1], E.shape[-1]
    m = k * k if idx is None else idx.size
    dtype = np.result_type(T, E, L, float)
    out_Q, out_C = np.full((B, n, k, k), np.nan, dtype), np.full((B, k, k), np.nan, dtype)
    out_lhs, ok = np.full((B, m, m), np.nan, dtype), np.zeros(B, dtype=bool)
    T = np.array(T, dtype=dtype)
    live = np.arange(B)
    with np.errstate(all="ignore"):
        for _ in range(iterations):
            if live.size == 0:
                break
            g, sl, El, Ll, dl = gamma[live], s[live], E[live], L[live], delta[live]
            C, Q, res = _state(g, sl, h, El, Ll, dl, T[live])
            lhs = _jacobian(g, sl, h, C, Q, idx)
            finite = np.all(np.isfinite(res), axis=(1, 2)) & np.all(np.isfinite(lhs),
                                                                    axis=(1, 2))
            conv = finite & (np.max(np.abs(res.real), axis=(1, 2))
                             <= _TOL * (1.0 + np.max(np.abs(T[live].real), axis=(1, 2))))
            if dtype.kind == "c":
                # A complex step from the real root: its imaginary part (the tangent, ~ the
                # step) converged too, relative to itself (at least one Newton step).
                conv &= (np.max(np.abs(res.imag), axis=(1, 2))
                         <= _TOL * np.max(np.abs(T[live].imag), axis=(1, 2)))
            done = live[conv]
            out_Q[done], out_C[done], out_lhs[done], ok[done] = Q[conv], C[conv], lhs[conv], True
            go = finite & ~conv
            live = live[go]
            rhs = res[go].reshape(-1, k * k)
            if idx is None:
                T[live] += _lsolve(lhs[go], rhs[..., None])[..., 0].reshape(-1, k, k)
            else:
                step = np.zeros_like(rhs)
                step[:, idx] = _lsolve(lhs[go], rhs[:, idx, None])[..., 0]
                T[live] += step.reshape(-1, k, k)
    return T, out_Q, out_C, out_lhs, ok


def _tangent(g, s, h, E, L, delta, real, one, known=None):
    """(T, Qhat, C) at a complex step of E, Lhat from the real parts' solution ``real``
    (``solve(real=)``): real parts ``real``'s, imaginary parts the fixed point's tangent in
    real arithmetic (Im E and Im Lhat are the step's direction times h; everything is linear
    in them to O(h^2)). With X = (Delta + gamma T E)^-1, C = E X and Qhat = (C s + Lhat)^-1,
    at fixed T: dC = dE X - gamma C (dT E + T dE) X and dQhat = -Qhat (dC s + dLhat) Qhat;
    the residual's tangent E_H[s dQhat] - dT vanishes for dT = (I - J)^-1 E_H[s dQhat(dT =
    0)] (J the derivative in T of the module docstring: one Newton step from the root with the
    real Jacobian, exact for a linear perturbation). The complex iteration it replaces
    computed the same numbers (to rounding) with complex inverses at every step. X depends on
    the real parts alone: solved by the first step from ``real`` and kept in its ``memo`` for
    the next (the same real parts: checked). ``known``: dT at level 0 (``_by_level``)."""
    k, idx = E.shape[-1], real.unknowns
    T0, C0, Q0, lhs = (np.asarray(x)[None] if one else x
                       for x in (real.T, real.C, real.Q, real.lhs))
    E0, dE, dL = E.real, E.imag, L.imag
    kept = real.memo.get("X")
    if kept is not None and all(np.array_equal(a, b) for a, b in zip(kept[:3], (E0, delta, g))):
        X = kept[3]
    else:
        X = _inv(np.eye(k) * delta[:, None, :] + g[:, None, None] * T0 @ E0)
        real.memo["X"] = (E0, delta, g, X)

    # A step in Lhat alone (dE = 0) skips dE's products (exact zeros), and at dT = 0 dC's.
    still = not dE.any()

    def moved(dT):
        if still and dT is None:
            return None, -Q0 @ dL @ Q0
        dT = np.zeros_like(T0) if dT is None else dT
        if still:
            dC = -g[:, None, None] * C0 @ (dT @ E0) @ X
        else:
            dC = dE @ X - g[:, None, None] * C0 @ (dT @ E0 + T0 @ dE) @ X
        dQ = -Q0 @ (dC[:, None] * s[:, :, None, None] + dL) @ Q0
        return dC, dQ

    dres = np.einsum("zn,znab->zab", h * s, moved(None)[1]).reshape(-1, k * k)
    dT = np.zeros_like(dres)
    if idx is None:
        dT[:] = _lsolve(lhs, dres[..., None])[..., 0]
    else:
        dT[:, idx] = _by_level(lhs, dres[:, idx], real.levels, real.parts,
                               None if known is None else known.reshape(-1, k * k)[:, idx])
    dT = dT.reshape(-1, k, k)
    dC, dQ = moved(dT)
    return T0 + 1j * dT, Q0 + 1j * dQ, C0 + 1j * dC


def _by_level(lhs, rhs, levels, parts, known=None):
    """(I - J)^-1 rhs for a batch, ``lhs`` = I - J on the unknowns of a block upper
    triangular pencil at superdiagonal ``levels`` (None: one solve). T's entry (a, b) moves
    only with the entries (c, d) where (QC)_ac (CQ)_db is not zero: block(c) >= block(a) and
    block(d) <= block(b), a level no higher than its own (``_jacobian``), so I - J is block
    lower triangular by level: one small solve per level, each after the lower levels' parts
    moved to the right-hand side (MAML-FL's target pencils: 20, 7, 6 and 9 unknowns instead
    of one 42 x 42 solve). ``parts``: the blocks (level's entries, lower entries, the inverse
    of the diagonal block, strip left of it), cut on the first call and kept (a list of the
    solution's): the complex steps from one real solution (MAML-FL's gradient: four) share
    the real Jacobian, so each level's block is inverted once and each step's solve is a
    product. ``known`` (the unknowns' values, used at level 0 only): level 0, the diagonal
    blocks, is not solved but taken from it (each block's entries move with that block's
    alone: its own fixed point's system, which its caller solved already; its inverse is
    then not formed)."""
    if levels is None:
        return _lsolve(lhs, rhs[..., None])[..., 0]
    if not parts:
        for level in np.unique(levels):
            sel, low = np.flatnonzero(levels == level), np.flatnonzero(levels < level)
            parts.append([sel, low, lhs[:, sel[:, None], sel], lhs[:, sel[:, None], low], False])
    out = np.zeros_like(rhs)
    for part in parts:
        sel, low, _, strip, inverted = part
        if known is not None and low.size == 0:
            out[:, sel] = known[:, sel]
            continue
        if not inverted:
            part[2], part[4] = _inv(part[2]), True
        out[:, sel] = (part[2] @ (rhs[:, sel, None] - strip @ out[:, low, None]))[..., 0]
    return out


def _start(s, h, E, L):
    """The gamma = 0 solution E_H[s (E s + Lhat)^-1] (a batch), Newton's default start."""
    with np.errstate(all="ignore"):
        return np.einsum("zn,znab->zab", h * s, _inv(E[:, None] * s[:, :, None, None] + L))


def solve(gamma, atoms, weights, E, L, delta=None, T0=None,
          what: str = "linear pencil", iterations: int = _ITER,
          real: PencilSolution | None = None, unknowns=None,
          response: bool = False, known=None) -> PencilSolution:
    """The fixed point of the pencil P = E (x) S + Lhat (module docstring) by Newton's method
    from ``T0``, for one pencil or a batch (a leading axis B on any argument but the
    weights; every pencil iterated as if alone).

    Parameters
    ----------
    gamma : float or array_like (B,)
        d / n > 0.
    atoms : array_like (n,) or (B, n)
        The eigenvalues of Sigma at the atoms of H.
    weights : array_like (n,)
        The masses of the atoms (the spectrum H).
    E : array_like (k, k) or (B, k, k)
        Scalar coefficients of S (Etilde on projection rows).
    L : array_like (n, k, k) or (B, n, k, k)
        Lhat(s) at each atom.
    delta : array_like (k,) or (B, k), optional
        1 on ordinary rows, 0 on projection rows (default: all 1).
    T0 : array_like (k, k) or (B, k, k), optional
        Starting value (default: the gamma = 0 solution E_H[s (E s + Lhat)^-1]).
    what : str
        Named in the error message.
    iterations : int
        Most Newton steps.
    real : PencilSolution, optional
        The solution of the same pencils at the real parts of complex E, Lhat (a complex
        step): the fixed point's exact tangent instead of the iteration (``_tangent``: one
        Newton step with the real Jacobian, in real arithmetic); the result's real parts are
        ``real``'s, its ``lhs`` NaN (a read-only view) unless ``response``.
    response : bool
        With ``real``: the result's ``lhs`` is I - J at the complex step (for its linear
        responses, ``local_response``; J is products of Qhat and C, no solve).
    unknowns : array_like of int, optional
        The flat indices (row-major) of the entries of T that may differ from ``T0``, whose
        residuals must vanish at T0 elsewhere (a block upper triangular pencil from its solved
        diagonal blocks: ``pencil_assembly.Pencil.solve``); Newton's steps solve for them alone
        (the same root; the residual is still checked on every entry).
    known : array_like (k, k) or (B, k, k), optional
        With ``real`` (levels): the tangents of T's diagonal blocks (level 0), taken as they
        are instead of solved (``pencil_assembly.Pencil.solve``: its blocks' own complex
        steps, solved before).

    Raises
    ------
    SolverError
        If Newton's iteration does not reach the residual ``_TOL`` for every pencil (a
        singular pencil, or a start too far from a root; a root reached from a distant start
        need not be the physical one: ``pencil_assembly.follow``).
    """
    h = np.asarray(weights, dtype=float)
    (g, s, E, L, delta, T), one = _batched(gamma, atoms, E, L, delta, T0)
    idx = None if unknowns is None else np.asarray(unknowns, dtype=int)
    if real is not None:
        with np.errstate(all="ignore"):
            T, Q, C = _tangent(g, s, h, E, L, delta, real, one,
                               None if known is None else np.broadcast_to(known, E.shape))
            lhs = (_jacobian(g, s, h, C, Q, real.unknowns) if response
                   else np.broadcast_to(np.nan, (g.size,) + np.shape(real.lhs)[-2:]))
        if not np.all(np.isfinite(T)):
            raise SolverError(f"{what}: a complex step of the fixed point is not finite")
        sol = PencilSolution(g, s, h, T, Q, C, lhs, real.unknowns)
        return _single(sol) if one else sol
    T, Q, C, lhs, ok = _newton(g, s, h, E, L, delta, _start(s, h, E, L) if T is None else T,
                               iterations, idx)
    if not ok.all():
        raise SolverError(f"{what}: the deterministic-equivalent fixed point did not converge "
                          f"(gamma = {g[~ok][0]:g}, {E.shape[-1]} x {E.shape[-1]} pencil)")
    sol = PencilSolution(g, s, h, T, Q, C, lhs, idx)
    return _single(sol) if one else sol


def local_response(sol: PencilSolution, entry, out) -> np.ndarray:
    """The matrix of derivatives dQhat_(out)(s_b) / dLhat_(entry)(s_a) (b, a over the atoms):
    the linear response of one entry of E_D[P^-1] to one entry of Lhat moved at one atom
    (module docstring; e.g. L[h] = E_D[K h K] = -dG / dt); for a batch, one matrix per
    pencil.

    Parameters
    ----------
    sol : PencilSolution
    entry, out : (int, int)
        The entry (i, j) of Lhat that moves and the entry of Qhat observed.

    Returns
    -------
    ndarray (atoms, atoms) or (B, atoms, atoms)
    """
    (i, j), (o1, o2) = entry, out
    if sol.unknowns is not None:
        raise ValueError("local_response needs the full Jacobian (a solution solved without "
                         "unknowns)")
    one = np.ndim(sol.gamma) == 0
    g, s, Q, C, lhs = (np.asarray(x)[None] if one else x
                       for x in (sol.gamma, sol.atoms, sol.Q, sol.C, sol.lhs))
    h = sol.weights
    B, n, k = Q.shape[0], Q.shape[1], C.shape[-1]
    # The direct term -Qhat dLhat Qhat, at the moved atom only; its pull on T through J.
    direct = -Q[:, :, o1, i] * Q[:, :, j, o2]
    rhs = -(h * s)[:, :, None, None] * Q[:, :, :, i, None] * Q[:, :, None, j, :]
    dT = np.linalg.solve(lhs, rhs.reshape(B, n, k * k).transpose(0, 2, 1))
    dT = dT.transpose(0, 2, 1).reshape(B, n, k, k)
    through = np.einsum("zbc,zacd,zbd->zba", (Q @ C[:, None])[:, :, o1, :], dT,
                        (C[:, None] @ Q)[:, :, :, o2])
    res = g[:, None, None] * s[:, :, None] * through
    res[:, np.arange(n), np.arange(n)] += direct
    return res[0] if one else res
