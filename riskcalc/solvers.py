"""Vectorized root finding for the monotone scalar equations of the theory.

Every implicit quantity of the package (the effective ridge kappa, the c0 of Def. 6.1 and the
Stieltjes transform of Def. 6.2 in paper 003) is the unique root of a function that is strictly
increasing inside a known bracket. ``increasing_root`` finds all roots of a batch at once by
Newton steps in log scale, falling back to bisection whenever a step leaves the bracket
("rtsafe"), so it always converges and converges quadratically near the root.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from riskcalc.errors import SolverError

#: Stop when a Newton step changes log(x) by less than this; the last step taken then leaves
#: a relative error of order RTOL**2 (or rounding), far below the 1e-10 the tests demand.
RTOL = 1e-12
MAXITER = 200

# The diagnostics of the solves run inside ``record()`` (None outside it): what a result object
# reports as ``diagnostics`` (iterations and residuals, like scipy's OptimizeResult).
_RECORD: contextvars.ContextVar = contextvars.ContextVar("riskcalc_solver_record", default=None)


@contextlib.contextmanager
def record():
    """Collect the diagnostics of every ``increasing_root`` solve run inside the block.

    Yields a dict filled as solves finish: per quantity solved (the ``what`` of the solve),
    ``{"solves": number of calls, "points": roots found, "iterations": the most Newton or
    bisection steps any root took, "residual": the largest |f| at the last iterate evaluated
    (the step after it changed log x by less than RTOL)}``. It stays empty when no solver ran
    (closed forms). Nested blocks each see the solves run inside them.
    """
    log: dict = {}
    token = _RECORD.set(log)
    outer = token.old_value if token.old_value is not contextvars.Token.MISSING else None
    try:
        yield log
    finally:
        _RECORD.reset(token)
        if outer is not None:
            for what, entry in log.items():
                _merge(outer, what, entry)


def _merge(log: dict, what: str, entry: dict) -> None:
    old = log.get(what)
    if old is None:
        log[what] = dict(entry)
        return
    old["solves"] += entry["solves"]
    old["points"] += entry["points"]
    old["iterations"] = max(old["iterations"], entry["iterations"])
    old["residual"] = max(old["residual"], entry["residual"])


def note(what: str, points: int, iterations: int, residual: float) -> None:
    """Add one solve's diagnostics to the ``record()`` block in force (a no-op outside one):
    for solvers other than ``increasing_root`` (e.g. a Newton iteration with its own fallback),
    so that results report every solve the same way."""
    log = _RECORD.get()
    if log is not None:
        _merge(log, what, {"solves": 1, "points": int(points), "iterations": int(iterations),
                           "residual": float(residual)})


def increasing_root(fun, lo, hi, *, what: str = "root") -> np.ndarray:
    """Roots x > 0 of increasing functions, one per entry of the bracket arrays.

    Parameters
    ----------
    fun : callable
        ``fun(x, mask) -> (f, x * df/dx)`` evaluated at the entries ``mask`` of the batch
        (``x`` holds those entries only); ``f`` increases in ``x``.
    lo, hi : ndarray
        Positive brackets with ``f(lo) <= 0 <= f(hi)`` (checked).
    what : str
        Name of the quantity, for the error message.

    Returns
    -------
    ndarray
        The roots, to a relative accuracy of a few ulps where the equation is well conditioned.

    Raises
    ------
    SolverError
        If a bracket is invalid or some entry has not converged after ``MAXITER`` steps.
    """
    lo = np.array(lo, dtype=float, copy=True)
    hi = np.array(hi, dtype=float, copy=True)
    all_ = np.ones(lo.shape, dtype=bool)
    f_lo, _ = fun(lo, all_)
    f_hi, _ = fun(hi, all_)
    # Negated comparisons: a NaN value is no bracket (it passed, and the "root" was a bracket
    # end: fuzz40 api F9).
    if (np.any(~(f_lo <= 0)) or np.any(~(f_hi >= 0)) or np.any(~(lo > 0))
            or np.any(~(hi >= lo))):
        raise SolverError(f"{what}: the equation has no root in its bracket "
                          "(inputs beyond floating point range?)")
    t_lo, t_hi = np.log(lo), np.log(hi)
    t = 0.5 * (t_lo + t_hi)
    active = np.ones(lo.shape, dtype=bool)
    done_exact = (f_lo == 0) | (f_hi == 0)
    t = np.where(f_lo == 0, t_lo, np.where(f_hi == 0, t_hi, t))
    active &= ~done_exact
    residual = np.zeros(lo.shape)
    for iteration in range(MAXITER):
        if not active.any():
            note(what, lo.size, iteration, residual.max(initial=0.0))
            return np.exp(t)
        idx = np.flatnonzero(active)
        ta = t[idx]
        f, df = fun(np.exp(ta), active)
        if np.isnan(f).any():
            raise SolverError(f"{what}: the equation is not a number inside its bracket "
                              "(inputs beyond floating point range?)")
        residual[idx] = np.abs(f)
        # Shrink the bracket with the sign of f, then try a Newton step inside it.
        neg = f < 0
        t_lo[idx] = np.where(neg, ta, t_lo[idx])
        t_hi[idx] = np.where(neg, t_hi[idx], ta)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(df > 0, f / df, np.inf)
        t_new = ta - step
        # A Newton step below RTOL has converged even where its end rounds onto ta, just made
        # an edge of the bracket: bisecting from there would halve the bracket down to RTOL
        # (~40 steps for a wide one) toward the same root. (A NaN step is not below RTOL: bisect.)
        outside = ~(np.abs(step) <= RTOL) & ~((t_new > t_lo[idx]) & (t_new < t_hi[idx]))
        t_new = np.where(outside, 0.5 * (t_lo[idx] + t_hi[idx]), t_new)
        converged = (f == 0) | (np.abs(t_new - ta) <= RTOL)
        converged |= t_hi[idx] - t_lo[idx] <= RTOL
        t[idx] = np.where(f == 0, ta, t_new)
        active[idx[converged]] = False
    raise SolverError(f"{what}: no convergence after {MAXITER} iterations "
                      f"({int(active.sum())} of {active.size} points)")


def halve_to_bracket(fun, lo, todo, *, halvings: int, what: str = "root") -> np.ndarray:
    """Lower brackets toward 0: the entries ``todo`` of ``lo`` are halved until
    ``fun(lo) <= 0`` there (each halving is tested), the others are kept.

    Parameters
    ----------
    fun : callable
        As for ``increasing_root``; only its value is used.
    lo : ndarray
        Starting points; the entries ``todo`` are known not to be lower brackets yet.
    todo : ndarray of bool
        The entries to halve.
    halvings : int
        How many halvings before giving up.
    what : str
        Name of the equation, for the error message.

    Returns
    -------
    ndarray
        ``lo`` with every entry a lower bracket.

    Raises
    ------
    SolverError
        If some entry is still not a lower bracket after ``halvings`` halvings.
    """
    lo = np.array(lo, dtype=float, copy=True)
    todo = np.array(todo, dtype=bool, copy=True)
    for _ in range(halvings):
        if not todo.any():
            return lo
        lo[todo] /= 2.0
        todo[todo] = fun(lo[todo], todo)[0] > 0
    if todo.any():
        raise SolverError(f"{what}: no bracket after {halvings} halvings toward 0")
    return lo


def within(sub, mask):
    """The entries ``mask`` of the sub-batch ``sub`` (a mask of the whole batch) as a mask of
    the whole batch (the solvers pass masks relative to the batch they were given)."""
    full = np.zeros(sub.shape, dtype=bool)
    full[np.flatnonzero(sub)[mask]] = True
    return full
