"""Expectations under the Marchenko-Pastur law by Gauss-Chebyshev quadrature (vectorized).

Used by the finite-clients limits (``riskcalc.linear.finite_clients``) for the traces of
rational functions of one client's sample covariance that have no short closed form.

Derived here. For ratio c <= 1 the law mu has s dmu(s) = sqrt((b - s)(s - a)) / (2 pi c) ds on
[a, b] = [(1 - sqrt c)^2, (1 + sqrt c)^2]; with s = 1 + c + 2 sqrt(c) x, x in [-1, 1],
ds sqrt((b - s)(s - a)) / (2 pi c) = (2 / pi) sqrt(1 - x^2) dx (times s: Chebyshev-U weight).

* s route: tau(F) = C + (2 / pi) int (F(s) - C) / s sqrt(1 - x^2) dx for any constant C.
  C = F(0) removes the pole at s = 0, so the convergence is geometric at a rate set by the
  poles of F only. It cancels catastrophically where abs(F(0)) dwarfs F on the spectrum (a pole
  of F just left of 0: each node keeps only ~ eps abs(F(0)), and the terms are
  ~ abs(F(0)) / (1 - c)).
* sqrt route (c < 1), no subtraction: with s = t^2, t = 1 + sqrt(c) x in [sqrt a, sqrt b],
  (b - s)(s - a) = (sqrt b - t)(t - sqrt a)(sqrt b + t)(t + sqrt a) and
  (sqrt b - t)(t - sqrt a) = c (1 - x^2), so
  dmu = sqrt(1 - x^2) sqrt((2 + sqrt(c)(1 + x))(2 - sqrt(c)(1 - x))) / (pi t) dx.
  Its singularities (t = 0, the branch point t = -sqrt a, the poles +-i sqrt(u) of F(t^2) for a
  pole of F at -u) lie ~ sqrt(a + u) from the interval instead of ~ a + u: geometric again,
  at a rate ~ (a + u)^(1/4) per node, where the s route's is ~ (a + u)^(1/2) (c = 0.999,
  u = 1e-7 or 1e-10, a = 2.5e-7: 2048 nodes; the s route does not converge with 32768). It
  is slower than the s route where F has no pole near 0 and a is small, hence the s route
  first.
* graded route (``mp_expect``'s ``peak``: an integrand peaking at a point inside the
  support, MAML-FL's (p phi(s) + t)^-1 at phi's double zero): tanh-sinh nodes on the two
  sides of the peak, ~ log(1 / width) nodes where Chebyshev's grow like 1 / width.

For gamma > 1 the law is (1 - 1/gamma) delta_0 plus 1/gamma times the law of gamma S' with S'
of ratio 1/gamma (the nonzero eigenvalues of X^T X / n are those of X X^T / n), so
tau(F) = (1 - 1/gamma) F(0) + tau'(F(gamma S')) / gamma: the atom exact, the continuous part by
either route (not polluted by the atom's F(0)).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError

#: Node counts 2^k - 1: each rule's nodes are every other node of the next (``_nodes``), so
#: a quadrature costs its last rule's nodes wherever it starts: from 15 nodes, MAML-FL's
#: (phi a polynomial) stop at 31 where the start at 31 went to 63 (advise at 1000 clients).
_QUAD_START, _QUAD_MAX, _QUAD_TOL = 15, (1 << 15) - 1, 1e-12
#: The Chebyshev rules' largest where ``mp_expect``'s ``peak`` lies in a row's spectrum.
_PEAK_MAX = (1 << 10) - 1
#: Rounding of a sum of terms of total size M is taken as _ROUND M (a few units of eps per
#: node value, the Gauss-Chebyshev weights being positive and summing to pi / 2).
_ROUND = 2 * np.finfo(float).eps


def mp_expect(gamma, fun, *args, strict: bool = True, peak=None, decide=None):
    """tau(fun(S)) for S with the Marchenko-Pastur law of ratio gamma (mean 1), vectorized.

    Gauss-Chebyshev quadrature (module docstring): the s route with C = F(0) (0 where F(0) is
    not finite, also in the atom: the 0 / 0 of ``fun``'s removable singularities), or the sqrt
    route for the rows (gamma != 1) whose first rule shows terms too large for double
    precision, or that fail on the s route. The rules of 15, 31, 63, ... nodes (each holding
    the previous one's nodes, which are not evaluated again) double until two agree to
    1e-12 (1 + abs(value)); with ``args`` (per-row parameters of ``fun``) each row stops as soon as
    its own rules agree, so a few hard rows (a pole close to the spectrum) do not make every
    row pay for their nodes. Agreement cannot see rounding (two rules cancel alike), so a
    converged row is accepted only if its rounding, _ROUND times the size of its terms
    abs(atom) + (abs(C) + int abs(F - C) dmu / s) / max(gamma, 1), is within the same tolerance;
    otherwise the cancellation is unresolvable in double precision and the row fails like
    a row that does not converge.

    Parameters
    ----------
    gamma : ndarray (K,)
        Ratios > 0.
    fun : callable
        ``fun(s, *args)``: s (K', n) -> tuple of (K', n) arrays (several integrands at once),
        or one new (integrands, K', n) array (used in place: no copy), analytic on a
        neighbourhood of [0, b]; K' = K without ``args``.
    *args : ndarray (K, ...)
        Per-row parameters of ``fun``, handed to it for the rows still being refined.
    strict : bool
        False: the rows that have not converged with ``_QUAD_MAX`` nodes, or whose
        cancellation is unresolvable, are NaN instead of an error (a batch over many rows,
        each of which stands alone).
    peak : float, optional
        A point (in ``fun``'s argument) where the integrands may peak sharply, such as a
        double zero of a denominator's leading term shifted by a small t (MAML-FL's
        (p phi(s) + t)^-1 at s = 1/alpha: height 1/t, width ~ sqrt(t)). Rows that neither
        Chebyshev route resolves and that hold it inside their spectrum are integrated by
        ``_graded`` instead: split there, tanh-sinh nodes graded toward both ends.
    decide : int, optional
        Only ``fun``'s first ``decide`` integrands decide the route, the convergence and the
        rounding check (default: all); the others are integrated by the rules these stop
        at (derivatives of the first ones: as accurate as a complex step through them).

    Returns
    -------
    ndarray (number of integrands, K)

    Raises
    ------
    SolverError
        If the quadrature has not converged with ``_QUAD_MAX`` nodes, or its terms cancel
        beyond double precision (``strict``).
    """
    gamma = np.asarray(gamma, dtype=float)[:, None]
    c = np.minimum(gamma, 1.0 / gamma)
    rc = np.sqrt(c)
    with np.errstate(divide="ignore", invalid="ignore"):
        at0 = np.array(fun(np.zeros_like(gamma), *args))[..., 0]
    at0 = np.where(np.isfinite(at0), at0, 0.0)
    law = (rc, np.maximum(gamma, 1.0), at0, np.maximum(1.0 - 1.0 / gamma[:, 0], 0.0) * at0)
    out = np.empty_like(at0)
    every = np.arange(gamma.shape[0])
    # With the peak in a row's spectrum, the Chebyshev rules stop at _PEAK_MAX nodes (a peak
    # they resolve there costs no more; beyond, ``_graded`` takes fewer nodes).
    most = _QUAD_MAX if peak is None or not _holds(law, peak).any() else _PEAK_MAX
    dec = slice(0, decide)
    failed, sqroot = _refine(law, fun, args, every, None, out, most, dec)
    if not failed.size:
        return out
    # The sqrt route (no subtraction) for the rows the first pass could not resolve.
    retry = failed[(c[failed, 0] < 1) & ~sqroot[failed]]
    if retry.size:
        sqroot[retry] = True
        again = _refine(law, fun, args, retry if args else every, sqroot, out, most, dec)[0]
        failed = np.union1d(np.setdiff1d(failed, retry), again)
    if failed.size and peak is not None:
        failed = _graded(law, fun, args, failed, float(peak), out, dec)
    if failed.size and strict and peak is not None and _holds(law, peak)[failed].any():
        raise SolverError(f"Marchenko-Pastur quadrature: the integrands' peak at s = {peak:.6g} "
                          "inside the spectrum is too narrow for double precision (rounding "
                          f"beyond {_PEAK_ROUND:g} relative: a shift t of order 1e-11 or below)")
    if failed.size and strict:
        raise SolverError("Marchenko-Pastur quadrature did not converge to 1e-12 (1 + |value|) "
                          f"with {_QUAD_MAX} nodes, or its terms cancel beyond double precision "
                          "(a pole of the integrand too close to the spectrum or to 0: lam or "
                          "u too small?)")
    out[:, failed] = np.nan
    return out


def _refine(law, fun, args, todo, sqroot, out, most, dec):
    """``mp_expect``'s doubling rules for the rows ``todo`` (all of them without ``args``),
    each on the s route or, where ``sqroot``, the sqrt route (None: the sqrt route where the
    first rule's terms cancel beyond double precision, gamma != 1), up to ``most`` nodes;
    the integrands ``dec`` (a slice) decide.
    Writes the accepted rows
    into ``out``; returns the rows that did not converge or lost to rounding, and ``sqroot``."""
    if not todo.size:
        return todo, np.zeros(0, bool)
    if todo.size == law[0].shape[0]:
        (rc, scale, at0, atom), sub0 = law, args
    else:
        rc, scale, at0, atom = law[0][todo], law[1][todo], law[2][:, todo], law[3][:, todo]
        sub0 = [a[todo] for a in args]
    center, half = 1.0 + rc * rc, 2.0 * rc
    norm = 2.0 / np.pi             # h^2 / (2 pi c) with h = 2 sqrt(c)
    on = None if sqroot is None else sqroot[todo]
    some = on is not None and on.any()
    left = np.arange(todo.size)    # positions in todo still being refined
    rows = slice(None)             # every row, until some converge (no copies meanwhile)
    prev, n, failed, size0 = None, _QUAD_START, [], None
    # The nested rules: acc is the sum over the rule's nodes of w G / d per integrand and row
    # of ``left``, the previous rule's half (its weights halve) plus the new nodes' terms;
    # parts holds each rule's rows (positions in todo, None: all), new G and w / d.
    acc, parts = None, []
    while n <= most:
        x, w = _nodes(n, new=acc is not None)
        s = center[rows] + half[rows] * x
        # sum w (F - C) / d: Chebyshev-U weight in w, the rest of dmu / dx in norm / d.
        d, C = s, at0[:, rows]
        sq = np.flatnonzero(on[rows]) if some else ()
        if len(sq):
            r = rc[rows][sq]
            t = 1.0 + r * x
            d, C = s.copy(), C.copy()
            s[sq], C[:, sq] = t * t, 0.0
            d[sq] = t * (np.pi * norm) / np.sqrt((2 + r * (1 + x)) * (2 - r * (1 - x)))
        sub = sub0 if isinstance(rows, slice) else [a[rows] for a in sub0]
        # As the products G (w / d) with G = F - C: no division of the (complex) integrands,
        # and G formed in place (one array of them per rule, not three).
        wd = w / d
        F = fun(scale[rows] * s, *sub)
        kind = np.result_type(C, *((F,) if isinstance(F, np.ndarray) else F))
        G = F if isinstance(F, np.ndarray) and F.dtype == kind else np.array(F, dtype=kind)
        G -= C[..., None]
        terms = np.einsum("ikn,kn->ik", G, wd)
        acc = terms if acc is None else 0.5 * acc + terms
        parts.append((None if isinstance(rows, slice) else left, G, wd))
        vals = atom[:, rows] + (C + acc * norm) / scale[rows, 0]
        tol = _QUAD_TOL * (1 + np.abs(vals[dec]))
        if size0 is None:
            size0 = _ROUND * _size(np.einsum("ikn,kn->ik", np.abs(G[dec]), wd), C[dec],
                                   atom[dec], scale, norm)
        if on is None:
            on = np.any(size0 > tol / 16, axis=0) & (rc[:, 0] < 1)
            sqroot = np.zeros(law[0].shape[0], bool)
            sqroot[todo] = on
            some = on.any()
            if some:
                size0, acc, parts = None, None, []
                continue            # the first rule again, on the sqrt route for those rows
        if prev is not None:
            done = np.all(np.abs(vals[dec] - prev[dec]) <= tol, axis=0)
            if not args and not done.all():
                done[:] = False
            if done.all() and isinstance(rows, slice) and not np.any(64 * size0 > tol):
                out[:, todo] = vals     # every row at once, none near losing to rounding
                return todo[:0], sqroot
            if done.any():
                here = left[done]
                # The size of the terms from the first rule; exactly where it may matter.
                lost = np.any(64 * size0[:, here] > tol[:, done], axis=0)
                if lost.any():
                    ex = np.flatnonzero(done)[lost]
                    lost[lost] = np.any(_ROUND * _size(_abs_sum(parts, left[ex], dec),
                                                       C[dec, ex], atom[dec, left[ex]],
                                                       scale[left[ex]], norm)
                                        > tol[:, ex], axis=0)
                out[:, todo[here]] = vals[:, done]
                failed.append(todo[here[lost]])
                if done.all():
                    return np.concatenate(failed), sqroot
                left, vals, acc = left[~done], vals[:, ~done], acc[:, ~done]
                rows = left
        prev, n = vals, 2 * n + 1
    return np.concatenate(failed + [todo[left]]), sqroot


def _size(abs_sum, C, atom, scale, norm):
    """The size of the terms of ``mp_expect``'s sum,
    abs(atom) + (abs(C) + norm sum w abs(G) / d) / scale, with G = F - C and ``abs_sum`` the
    sum of w abs(G) / d (its rounding is taken as _ROUND times it)."""
    return np.abs(atom) + (np.abs(C) + abs_sum * norm) / scale[:, 0]


def _abs_sum(parts, at, dec=slice(None)):
    """The sum over the last rule's nodes of w abs(G) / d for the rows ``at`` (positions in
    todo) and the integrands ``dec`` from ``_refine``'s parts (each rule's new nodes; a
    node's weight halves at each later rule)."""
    total = 0.0
    for rows, G, wd in parts:
        k = at if rows is None else np.searchsorted(rows, at)
        total = 0.5 * total + np.einsum("ikn,kn->ik", np.abs(G[dec, k]), wd[k])
    return total


def _peak_x(law, peak):
    """x (``mp_expect``'s s = 1 + c + 2 sqrt(c) x) of ``peak`` for each row of ``law``."""
    rc, scale = law[0][:, 0], law[1][:, 0]
    return (peak / scale - 1.0 - rc * rc) / (2.0 * rc)


def _holds(law, peak):
    """The rows of ``law`` whose spectrum holds ``peak`` inside."""
    return np.abs(_peak_x(law, peak)) < 1.0


#: ``_graded``'s largest accepted bound on its rounding, relative: the rounding of a node's
#: argument, eps s, over its distance to the peak (~ eps / sqrt(t) for MAML-FL's peaks; the
#: bound is 1.3e-9 where the error against 30-digit mpmath is 3e-12, width sqrt(t) = 3e-5).
#: Beyond it the rows fail (t below ~ 1e-11: 1e12 clients' worth of gamma beside 0.5 gave a
#: risk 2e-3 off).
_PEAK_ROUND = 1e-8
#: ``_graded``'s tanh-sinh rules: steps h = 2^-k down to _DE_HMIN over tau in [-_DE_TAU,
#: _DE_TAU] (a node's distance to its end ~ exp(-pi sinh(tau)), 1e-59 of the segment at 4.5).
_DE_TAU, _DE_HMIN = 4.5, 2.0 ** -9


def _graded(law, fun, args, failed, peak, out, dec):
    """``mp_expect``'s rows ``failed`` whose spectrum holds ``peak``, by tanh-sinh quadrature
    of tau(F) = int F dmu on the two segments x in [-1, x_p] and [x_p, 1] (x_p: the peak):
    dmu = (2 / pi) sqrt(1 - x^2) / s dx (module docstring) without subtraction, each node's
    distance to its segment's ends exact, so a peak of width w at x_p costs ~ log(1 / w)
    nodes where Chebyshev's cost ~ 1 / w (MAML-FL near a zero of phi inside a client's
    spectrum, t ~ 1e-9: ~ 1e6 nodes). Steps h halve (each rule's new nodes, odd multiples of
    h, evaluated once) until two rules agree to 1e-12 (1 + abs(value)) plus a bound on the
    rounding (each node's argument's, eps s over its distance to the peak), both on the
    integrands ``dec``; rows whose bound passes ``_PEAK_ROUND`` fail. Writes the accepted
    rows into ``out`` and returns the rows left failed."""
    rc, scale, _, atom = law
    half = 2.0 * rc[:, 0]
    inside, xp = _holds(law, peak), _peak_x(law, peak)
    if not inside[failed].any():
        return failed
    todo = failed if args else np.arange(rc.shape[0])
    sub = [a[todo] for a in args]
    # Rows without the peak in their spectrum (failed with the others of a batch without
    # ``args``) split at x = 0, their rounding the function's own.
    inside = inside[todo]
    lo, hi = -np.ones(todo.size), np.where(inside, xp[todo], 0.0)
    far = np.where(inside, 1.0, np.inf)[:, None]
    h, acc, prev = 1.0, None, None
    while h >= _DE_HMIN:
        tau = np.arange(-_DE_TAU, _DE_TAU + h / 2, h)
        if acc is not None:
            tau = tau[1::2]
        u = 0.5 * np.pi * np.sinh(tau)
        dw = 0.5 * np.pi * np.cosh(tau) / np.cosh(u) ** 2
        # The fractions of the segment above and below the node, exact at the ends.
        up, down = 1.0 / (1.0 + np.exp(2.0 * u)), 1.0 / (1.0 + np.exp(-2.0 * u))
        terms = 0.0
        for first in (True, False):
            width = (hi - lo if first else 1.0 - hi)[:, None]
            # 1 + x, 1 - x, and the distance to the peak of the nodes
            if first:
                below, near = width * down, width * up
                above = 2.0 - below
            else:
                above, near = width * up, width * down
                below = 2.0 - above
            s = (1.0 - rc[todo]) ** 2 + half[todo, None] * below
            with np.errstate(divide="ignore", invalid="ignore"):
                F = np.array(fun(scale[todo] * s, *sub))
                wts = np.where(s > 0, 0.5 * width * dw * np.sqrt(above * below) / s, 0.0)
            # Rounding: the argument's (eps s) over the distance to the peak, relative.
            rnd = wts * np.minimum(s / (half[todo, None] * near * far), 1 / _ROUND)
            terms = terms + np.stack([np.einsum("ikn,kn->ik", F, wts),
                                      np.einsum("ikn,kn->ik", np.abs(F), rnd)])
        acc = terms if acc is None else acc + terms
        vals, lost = atom[:, todo] + acc * h * (2.0 / np.pi) / scale[todo, 0]
        keep = np.isin(todo, failed)
        lost = 4 * _ROUND * lost
        if prev is not None and np.all((np.abs(vals - prev) <= _QUAD_TOL * (1 + np.abs(vals))
                                        + lost)[dec][:, keep]):
            ok = keep & np.all((lost <= _PEAK_ROUND * (1 + np.abs(vals)))[dec], axis=0)
            out[:, todo[ok]] = vals[:, ok]
            return todo[keep & ~ok]
        prev, h = vals, h / 2
    return failed


_NODES = {}


def _nodes(n: int, new: bool = False):
    """The n = 2^k - 1 Chebyshev-U nodes cos(j pi / (n + 1)) and weights, or (``new``) those of
    odd j alone, the nodes that the rule of (n - 1) / 2 nodes lacks (its node j is this
    rule's 2 j, whose weight is half its own); computed once per n (the finite-M limits call
    ``mp_expect`` thousands of times on a few rows each)."""
    if (n, new) not in _NODES:
        j = np.arange(1, n + 1, 1 + new) * (np.pi / (n + 1))
        _NODES[n, new] = (np.cos(j), np.sin(j) ** 2 * (np.pi / (n + 1)))
    return _NODES[n, new]
