"""Whether a logistic empirical risk has a finite minimizer (``separable``), for the exact
minimizers of ``montecarlo.experiments.objectives`` at l2 = 0: Albert and Anderson (Biometrika
1984) by a linear program, settled without it where cheap bounds of its optimum suffice."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from riskcalc.errors import SolverError


def separable(X, y) -> bool:
    """Whether the logistic empirical risk of ``(X, y)`` has no finite minimizer.

    The risk sum_k log(1 + exp(-y_k x_k'w)) decreases without bound along v exactly when
    y_k x_k'v >= 0 for every k with at least one strict inequality (the data are separable or
    quasi-separable; Albert and Anderson, Biometrika 1984). With the rows a_k = y_k x_k scaled
    to unit length, that is decided by the linear program max sum_k a_k'v subject to
    a_k'v >= 0 and -1 <= v <= 1: feasible (v = 0) and bounded, its optimum is 0 when a finite
    minimizer exists and positive otherwise. A certificate, not the symptom of a diverging
    solver, so the answer does not depend on rounding in Newton's iterates; the optimum is
    compared with 1e-6 n, far above the solver's tolerance (1e-7 per constraint) and far below
    the optimum of generic separable data (some unit rows' projections on a vector of the box).
    The linear program is solved only where ``_bounds`` does not already place its optimum
    1000 times below or above 1e-6 n (the same answer, without the program's cost).

    Parameters
    ----------
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)
        Labels +-1.
    """
    from scipy.optimize import linprog

    A = np.asarray(y, float)[:, None] * np.asarray(X, float)
    A = A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), np.finfo(float).tiny)
    known = _bounds(A, 1e-9 * A.shape[0], 1e-3 * A.shape[0])
    if known is not None:
        return known
    res = linprog(-A.sum(0), A_ub=-A, b_ub=np.zeros(A.shape[0]), bounds=(-1.0, 1.0),
                  method="highs")
    if res.status != 0:
        raise SolverError(f"separability check: the linear program ended with status "
                          f"{res.status} ({res.message})")
    return -res.fun > 1e-6 * A.shape[0]


def _bounds(A, below, above, iters=12):
    """``separable``'s answer where cheap bounds of its linear program's optimum settle it:
    False when the optimum is at most ``below``, True when it is at least ``above``, None
    otherwise (the program decides).

    Above: any v with A v > 0 gives the feasible point v / max|v|, so the optimum is at least
    sum(A v) / max|v|; tried at the least-squares solution of A v = 1 (exact when the rows are
    independent) and at Newton's iterates below. Below (Stiemke's alternative, made
    quantitative): at any v, l_k = sigmoid(-a_k'v) > 0 and the logistic risk's gradient is
    g = -A' l, so every feasible u (A u >= 0, max|u| <= 1) has
    sum(A u) <= l'A u / min(l) = -g'u / min(l) <= ||g||_1 / min(l); Newton's method on the
    risk from 0 drives g to rounding where a finite minimizer exists. At most ``iters`` steps,
    and none after one that does not reduce ||g||_1 (separable data: the iterates diverge)."""
    n, d = A.shape

    def above_at(v):
        m, top = A @ v, np.max(np.abs(v))
        return bool(top > 0 and np.all(m > 0) and m.sum() / top >= above)

    if np.all(np.isfinite(A)) and above_at(np.linalg.lstsq(A, np.ones(n), rcond=None)[0]):
        return True
    v, last = np.zeros(d), np.inf
    for _ in range(iters):
        m = A @ v
        lam = expit(-m)
        g = -(A.T @ lam)
        size = np.abs(g).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = size / lam.min()
        if np.isnan(bound):
            return None
        if bound <= below:
            return False
        if above_at(v):
            return True
        if not size < last:
            return None
        last = size
        try:
            v = v - np.linalg.solve((A * (lam * (1.0 - lam))[:, None]).T @ A, g)
        except np.linalg.LinAlgError:
            return None
    return None
