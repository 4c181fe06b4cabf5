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
  equation of ``riskcalc.linear.engine.kappa`` with kappa = 1 / c_a, and for k = 1 the
  Silverstein-Bai deterministic equivalent of one generalized resolvent);
* the entries of superdiagonal m are affine in themselves given the lower superdiagonals:
  T_ab = F_ab + gamma C_aa C_bb E_H[s^2 Qhat_aa Qhat_bb] T_ab, with F_ab the value at T_ab = 0.

The result is E_H[M_k(s) Qhat(s)_(1k)]. The tests compare it with direct simulation of the
chains at d ~ 1500 and with exact identities (derivatives in a shift, Sigma = I free
probability).

Batches (``chain_traces``): the parameter points of a batch (gamma, eta, Lam, M and the
atoms' eigenvalues s varying per point, the masses shared: the clients of several covariance
types on the joint atoms of covariate shift) are solved together, every step above being
elementwise over points and atoms. The inverses are back substitutions on the upper
triangular k x k matrices, entry by entry (superdiagonal by superdiagonal, the order in which
T is found): with U = diag(eta) + gamma T and M(s) = C s + Lhat(s),

    C_ab = -C_aa sum_(a < c <= b) U_ac C_cb,    Qhat_ab = -Qhat_aa sum_(a < c <= b) M_ac Qhat_cb,

so a batch costs a few numpy passes over (points x atoms) arrays per entry, in blocks of
bounded memory (``riskcalc.linear.engine.kappa.blocks``).

Links (``chain_traces(links=)``): S itself between two blocks, Q_a (M_a + l_a S) Q_(a+1),
is the same pencil with E upper bidiagonal, E_(a, a+1) = -l_a. The leave-one-out step above
holds for any E (E (x) S = (1/n) sum_r X_r E X_r^T), with C = E (I + gamma T E)^-1 =
(E^-1 + gamma T)^-1: U = diag(eta) + gamma T gains E^-1's entries above the diagonal,
eta_a l_a eta_(a+1) ... l_(b-1) eta_b, constants in T's affine equations. So R S R =
lam^2 S (S + lam)^-2 (two "R" blocks, a link 1) is a chain of positive terms, where lam (R -
R^2) is a difference of two O(lam) chains (``finite_clients.pfedme_sigma`` at tiny lam).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.engine.kappa import _diagonal, blocks, diagonal_roots, root_step

# diagonal_roots and root_step, the chains' diagonal equations, are solved in ``kappa`` and
# keep their import path here.
__all__ = ["chain_trace", "chain_traces", "chain_vectors", "diagonal_roots", "root_step"]

def chain_trace(gamma: float, atoms, weights, eta, shifts, middles) -> float:
    """The limit of tau(Q_1 M_1 ... Q_k M_k), Q_a = (S / eta_a + Lam_a)^-1 (module docstring),
    at one parameter point (``chain_traces`` for a batch).

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
    if np.ndim(gamma) or np.ndim(eta) != 1:
        raise ValueError("chain_trace takes one point: a scalar gamma and eta of shape (k,); "
                         "chain_traces takes a batch")
    return float(chain_traces(gamma, atoms, weights, eta, np.atleast_2d(shifts),
                              np.atleast_2d(middles)))


def chain_traces(gamma, atoms, weights, eta, shifts, middles, roots=None, *,
                 vector: bool = False, table: bool = False, links=None) -> np.ndarray:
    """``chain_trace`` over a batch of parameter points, solved together (module docstring,
    "Batches"). Paper 003 (``003_4b976ddf5225c17e.txt``) eqs. 6-8 through
    ``riskcalc.linear.finite_clients.sigma``, which evaluates its chains here.

    Parameters
    ----------
    gamma : float or array_like (points,)
        d / n per point, > 0.
    atoms : array_like (n,) or (points, n)
        Eigenvalues s > 0 of Sigma at the n atoms, shared by all points or per point (the
        covariances of several clients on the joint atoms of covariate shift).
    weights : array_like (n,)
        The masses of the atoms (the spectrum H), shared by all points.
    eta : array_like (k,) or (points, k)
        eta_a >= 0 per point (0: the projection limit, needs gamma > 1 and Lam_a > 0).
    shifts, middles : array_like (k, n) or (points, k, n)
        Lam_a(s) >= 0 and M_a(s) at each atom, per point or shared.
    roots : array_like (k,) or (points, k), optional
        The diagonal roots c_a of the blocks (``diagonal_roots``), for a caller whose chains
        share blocks; solved here otherwise.
    vector : bool
        Return ``chain_vectors``' functionals instead of the traces.
    table : bool
        Return the functionals of every sub-chain a..b (blocks a to b, middles a to b - 1;
        the upper triangle of a (points, k, k, n) array, zero below): the pencil's entry
        Qhat_ab depends on its blocks a..b alone (back substitution from the lower right
        sub-block), so one solve of a chain serves all of its sub-chains.
    links : array_like (k - 1,) or (points, k - 1), optional
        l_a: the chain becomes Q_1 (M_1 + l_1 S) Q_2 ... (M_(k-1) + l_(k-1) S) Q_k M_k, the
        sample covariance itself between two blocks (module docstring, "Links"), e.g.
        R S R = lam^2 S (S + lam)^-2 with no difference of two terms. None: no links.

    Complex eta, shifts, middles or roots (the complex steps of exact gradients): the same
    arithmetic in complex numbers, with the roots given (``root_step``), complex results.

    Returns
    -------
    ndarray (points,)
        The traces; a 0-d array if no argument has a points axis.

    Raises
    ------
    ValueError
        If the shapes disagree, or some point has a projection block (eta_a = 0) with
        gamma <= 1 or a non-positive shift.
    SolverError
        If a diagonal equation has no root in its bracket or a fixed point is unstable.
    """
    s = np.asarray(atoms, dtype=float)
    w = np.asarray(weights, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    eta, lam, mid = (_real_or_complex(x) for x in (eta, shifts, middles))
    k, n = (eta.shape[-1] if eta.ndim else 0), w.size
    if s.shape[-1:] != (n,) or s.ndim > 2:
        raise ValueError(f"atoms must have shape ({n},) or (points, {n}) for {n} weights; got "
                         f"{s.shape}")
    if k == 0 or lam.shape[-2:] != (k, n) or mid.shape[-2:] != (k, n):
        raise ValueError(f"shifts and middles must have shape ({k}, {n}) (or (points, {k}, "
                         f"{n})) for {k} blocks and {n} atoms; got {lam.shape} and {mid.shape}")
    c = np.full(k, np.nan) if roots is None else _real_or_complex(roots)
    link = _real_or_complex(np.zeros(k - 1) if links is None else links)
    if link.shape[-1:] != (k - 1,):
        raise ValueError(f"links must have shape ({k - 1},) or (points, {k - 1}) for {k} blocks; "
                         f"got {link.shape}")
    dtype = np.result_type(eta, lam, mid, c, link)
    if roots is None and dtype.kind == "c":
        raise ValueError("complex eta, shifts or middles need the roots (``diagonal_roots`` at "
                         "the real parts, then ``root_step``)")
    if c.shape[-1:] != (k,):
        raise ValueError(f"roots must have shape ({k},) or (points, {k}); got {c.shape}")
    try:
        shape = np.broadcast_shapes(gamma.shape, eta.shape[:-1], lam.shape[:-2],
                                    mid.shape[:-2], c.shape[:-1], s.shape[:-1], link.shape[:-1])
    except ValueError:
        raise ValueError("gamma, eta, shifts, middles, roots and links must have one number of "
                         f"points; got shapes {gamma.shape}, {eta.shape}, {lam.shape}, "
                         f"{mid.shape}, {c.shape}, {link.shape}") from None
    if len(shape) > 1:
        raise ValueError(f"the points must lie along one axis; got shape {shape}")
    size = int(np.prod(shape))
    # Broadcast views (no copies): a block of points is sliced from them.
    g = np.broadcast_to(gamma, shape).reshape(size)
    eta = np.broadcast_to(eta, shape + (k,)).reshape(size, k)
    lam = np.broadcast_to(lam, shape + (k, n)).reshape(size, k, n)
    mid = np.broadcast_to(mid, shape + (k, n)).reshape(size, k, n)
    c = np.broadcast_to(c, shape + (k,)).reshape(size, k)
    link = None if links is None else np.broadcast_to(link, shape + (k - 1,)).reshape(size, k - 1)
    per_point = s.ndim == 2
    if per_point:
        s = np.broadcast_to(s, shape + (n,)).reshape(size, n)
    # A table filled as (k, k, points, n), returned as a transposed view (no copy).
    out = np.zeros((k, k, size, n) if table else (size, n) if vector else size, dtype)
    for blk in blocks(size, n * k):
        Q = _chain_block(g[blk], s[blk] if per_point else s, w, eta[blk], lam[blk], mid[blk],
                         None if roots is None else c[blk], None if link is None else link[blk])
        q = Q[0][k - 1]
        if table:
            for a in range(k):
                for b in range(a, k):
                    out[a, b, blk] = w * Q[a][b]
        else:
            out[blk] = w * q if vector else (mid[blk, k - 1] * q) @ w
    if table:
        out = out.transpose(2, 0, 1, 3)
    return out.reshape(shape + out.shape[1:])


def chain_vectors(gamma, atoms, weights, eta, shifts, middles, roots=None) -> np.ndarray:
    """The traces of ``chain_traces`` as linear functionals of the closing middle M_k: per
    point the vector phi with tau(Q_1 M_1 ... Q_k M_k) = phi @ M_k(s) for EVERY M_k, phi =
    weights * Qhat_(1k) (module docstring: Qhat does not involve M_k), so one solve serves a
    chain closed by many middles (``riskcalc.linear.finite_clients.shift``). Arguments as for
    ``chain_traces`` (the last row of ``middles`` is ignored); returns (points, n), or (n,)
    without a points axis."""
    return chain_traces(gamma, atoms, weights, eta, shifts, middles, roots, vector=True)


def _real_or_complex(x):
    """x as a float array, or complex if it is (the complex steps of exact gradients)."""
    x = np.asarray(x)
    return x if x.dtype.kind == "c" else x.astype(float, copy=False)


def _chain_block(g, s, w, eta, lam, mid, roots, link=None):
    """Every Qhat_ab (a <= b; lists, each (B, n)) of a block of points, Qhat_(1k) the one
    whose trace against the closing middle is the chain's: g (B,), eta (B, k), lam and mid
    (B, k, n), roots (B, k) or None, link (B, k - 1) or None. Inputs per block a contiguous,
    T and C lists."""
    k = eta.shape[1]
    c = roots
    if c is None:
        c = np.stack([_diagonal(g, s, w, eta[:, a], lam[:, a]) for a in range(k)], axis=1)
    dtype = np.result_type(eta, lam, mid, c, *([] if link is None else [link]))
    eta, lam, mid, c = ([np.ascontiguousarray(x[:, a]) for a in range(k)]
                        for x in (eta, lam, mid, c))
    # E^-1 (module docstring, "Links"): eta on the diagonal, and above it the products
    # eta_a l_a eta_(a+1) ... l_(b-1) eta_b, zero without links.
    eta = [[eta[a] if b == a else 0.0 for b in range(k)] for a in range(k)]
    if link is not None:
        for a in range(k):
            for b in range(a + 1, k):
                eta[a][b] = eta[a][b - 1] * link[:, b - 1] * eta[b][b]
    T = [[np.zeros(g.size, dtype)] * k for _ in range(k)]
    C, Q = ([[None] * k for _ in range(k)] for _ in range(2))
    for a in range(k):
        T[a][a] = ((s / (c[a][:, None] * s + lam[a])) @ w).astype(dtype, copy=False)
        _entry(a, a, g, s, eta, lam, mid, T, C, Q)
    for m in range(1, k):
        pairs = [(a, a + m) for a in range(k - m)]
        F0, slope, parts = [], [], []
        for a, b in pairs:
            parts.append(_entry(a, b, g, s, eta, lam, mid, T, C, Q))    # with T_ab = 0
            F0.append((s * Q[a][b]) @ w)
            slope.append(g * C[a][a] * C[b][b] * ((s * s * Q[a][a] * Q[b][b]) @ w))
        span = float(np.max(s) / np.min(s))   # beyond ~1e30 the slope rounds to 1 (measured)
        if not np.all((slope := np.array(slope)).real < 1):
            raise SolverError("resolvent chain: the fixed point is unstable (slope "
                              f"{np.nanmax(slope.real):g} >= 1)" + (
                                  f"; the spectrum's eigenvalues span a factor {span:.2g}: beyond"
                                  " about 1e30 the slope rounds to 1, give a narrower spectrum"
                                  if span > 1e15 else ""))
        _check_digits(slope, span)
        for (a, b), f0, sl, part in zip(pairs, F0, slope, parts):
            T[a][b] = (f0 / (1.0 - sl)).astype(dtype, copy=False)
            _entry(a, b, g, s, eta, lam, mid, T, C, Q, part)
    return Q


#: The largest relative error eps / (1 - slope) let through across a span of at least
#: ``_MIN_SPAN`` (``finite_clients.shift.conditioning``'s MAX_AMPLIFIED and MIN_SPAN).
_MAX_AMPLIFIED, _MIN_SPAN = 1e-7, 1e6


def _check_digits(slope, span) -> None:
    """IllConditioned when ``T_ab = F0 / (1 - slope)`` amplifies the rounding of the slope
    beyond ``_MAX_AMPLIFIED`` across a wide span: with half of H at S and gamma 2, 1 - slope ~
    2 / S^(1/2) and FTFA's risk was 1e-6 off at S = 1e20, 1.6% at 1e28 and 20% at 1e30,
    silently (RTFA and pFedMe alike)."""
    gap = float(np.min(1.0 - slope.real, initial=np.inf))
    amplified = np.finfo(float).eps / gap
    if span >= _MIN_SPAN and not amplified <= _MAX_AMPLIFIED:
        raise IllConditioned(
            "resolvent chain: the limits lose their digits across the spectra's eigenvalue "
            f"span of {span:.2g}: a fixed point's slope is within {gap:.2g} of 1, relative "
            f"errors up to about {amplified:.2g} (beyond {_MAX_AMPLIFIED:g}); give a narrower "
            "spectrum")


def _entry(a, b, g, s, eta, lam, mid, T, C, Q, part=None):
    """C_ab and Qhat_ab (per point, and per atom for Qhat) by back substitution from the
    entries of the lower right sub-block (module docstring, "Batches"; ``eta`` the rows of
    E^-1, U = E^-1 + gamma T, "Links"). Returns the sums but their last terms (free of
    T_ab): ``part`` of the call once T_ab is known (same order)."""
    if a == b:
        C[a][a] = (1.0 / (eta[a][a] + g * T[a][a])).astype(T[a][a].dtype, copy=False)
        Q[a][a] = 1.0 / (C[a][a][:, None] * s + lam[a])
        return None
    if part is None:
        part = [sum((g * T[a][c] + eta[a][c]) * C[c][b] for c in range(a + 1, b)), None]
        if b > a + 1:
            # M_ac = C_ac s + Lhat_ac, Lhat_(a, a+1) = -M_a.
            part[1] = (C[a][a + 1][:, None] * s - mid[a]) * Q[a + 1][b]
            for c in range(a + 2, b):
                part[1] += C[a][c][:, None] * s * Q[c][b]
    C[a][b] = -C[a][a] * (part[0] + (g * T[a][b] + eta[a][b]) * C[b][b])
    Q[a][b] = -Q[a][a] * ((C[a][b][:, None] * s - mid[a]) * Q[b][b] if b == a + 1
                          else part[1] + C[a][b][:, None] * s * Q[b][b])
    return part
