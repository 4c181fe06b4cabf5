"""The exact linear rate of paper 004's Algorithm 1 with K warm-started local steps (derived here).

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11, on least-squares clients
f_j(v) = ||X_j v - y_j||^2 / (2 n_j), Sigma = I, weights p_j. With S_j = X_j^T X_j / n_j,
a_j = a(S_j), a(s) = (1 - eta (s + lam))^K, and c(s) = (1 - a(s)) / (s + lam) (a polynomial),
one round maps (w, v_1, ..., v_M) to

    v_j' = a_j v_j + lam c_j w + (data),     w' = alpha w + g lam sum_j p_j a_j v_j + (data),

alpha = 1 - g lam + g lam^2 sum_j p_j c_j. When eta <= 1/(L + lam) (Thm 2's condition, L the top
of every client's spectrum) a >= 0 and c > 0, and the block scaling V_j = phi_j v_j with
phi_j^2 = g p_j a_j / c_j makes the round map symmetric: the w <- V_j and V_j <- w blocks are
both B_j = lam sqrt(g p_j a_j c_j). So its spectrum is real and the contraction of Algorithm 1 is
the largest modulus in it. By the Schur complement on the w block, a real z outside the spectra
of the a_j is an eigenvalue iff 0 is in the spectrum of

    z - alpha - sum_j B_j^2 / (z - a_j) = z - (1 - g lam) - g lam Dhat_z,
    Dhat_z = sum_j p_j psi_z(S_j),   psi_z(s) = lam z c(s) / (z - a(s)),

i.e. iff (z - (1 - g lam)) / (g lam) is in the spectrum of the free sum Dhat_z (``subordination``
with the client law of psi_z, ``PsiLaws``). For z > sup a, psi_z decreases in z, so
F(z) = (z - (1 - g lam)) / (g lam) - top(Dhat_z) increases from -infinity to +infinity: its root is
the top of the spectrum (it exceeds sup a: along each eigenvector of one S_j the top root of the
2 x 2 block does). Below 0, psi_z > 0, so negative eigenvalues exist only when g lam > 1, the
bottom one the root of (z - (1 - g lam)) / (g lam) = bottom(Dhat_z) in (1 - g lam, 0) (the
difference increases in z; no root when it is still negative at 0-). The
contraction is the larger modulus of the two. K = inf gives psi = lam / (s + lam) and the prox
route's 1 - g lam x at the edges of sum_j p_j S_j (S_j + lam)^-1 (``prox_laws``).

Fast route (``fast_contraction``): the edges as folds of the real branch of the subordination
equations (``algorithm1.fold``), with this route as its fallback and its check in the tests.

Scope: pooled samples that span R^d (sum_j min(1, 1/gamma_j) >= 1): otherwise the common
null space is a continuum of fixed points (eigenvalue 1) that this route does not separate;
``algorithm1.pooled`` holds it apart (training from 0 never enters it) and gives the edge on
the pooled range. The client expectations are exact by partial fractions (``PsiLaws``).

Larger local steps, 1 / (L + lam) < eta < 2 / (L + lam) (the local steps' stability edge): x =
1 - eta (s + lam) lies in (-1, 1), so c(s) = eta (1 - x^K) / (1 - x) > 0 still, but a(s) = x^K
is negative where x < 0 when K is odd. Even K: a >= 0 and the scaling above still symmetrizes.
Odd K with g lam <= 1: with E = diag(0, a_1, ..., a_M) and B = [sqrt(1 - g lam) I;
sqrt(g lam p_j lam) c_j^(1/2)] (real), the Schur complement on the w block gives

    det(z - Phi) = det(z - a) det(z - (1 - g lam) - g lam Dhat_z)
                 = z^d det(z - a) det(1 - B^T (z - E)^(-1) B) = det(z - E - B B^T),

(Dhat_z = z sum_j p_j lam c_j (z - a_j)^(-1)), the characteristic polynomial of the symmetric
matrix E + B B^T: Phi's spectrum is real, and, B B^T being positive semidefinite, it lies in
[min(0, inf a), top]. Above max(0, sup a), z is an eigenvalue iff top(B^T (z - E)^(-1) B) = 1,
a decreasing operator in z, and F(z) = z (1 - top(B^T (z - E)^(-1) B)) / (g lam) changes sign
once: the top is found as before (its bracket above max(0, sup a); the w block's 0 when no
root, possible only when every a(s) <= 0 and g lam = 1). The bottom lies in the bulk of E
(no edge equation of a free sum there), so it is not computed: the contraction reported is
max(top, -inf a), exact when top >= -inf a (``exact``), else an upper bound. Odd K with
g lam > 1: B has an imaginary block and complex eigenvalues appear (measured at d = 150, M = 3,
K = 1, eta = 0.9 of the edge, g lam = 2: 20 eigenvalues with imaginary parts up to 0.21); their
bound and the real edges there: ``algorithm1.fold``'s non-real part.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import positive
from riskcalc.errors import SolverError
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.fold import complex_contraction, fold, in_scope
from riskcalc.linear.dynamics.algorithm1.laws import PsiLaws, QuadPsiLaws, RuleLaws
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom, pooled_contraction
from riskcalc.linear.dynamics.api import rounds_limit
from riskcalc.linear.dynamics.inputs import (check_step_scope, client_arrays, local_steps_count,
                                             weight_vector)

#: Local steps beyond which the K roots of the partial fractions cost too much (K x K
#: eigenvalue problems at every evaluation); ``algorithm1_contraction`` uses the exact prox
#: there when it agrees to rounding, and refuses otherwise.
MAX_STEPS = 400
#: Nodes of the Marchenko-Pastur rule of ``fast_contraction`` (``algorithm1.fold``): the first
#: rule, the most tried.
FOLD_RULE, FOLD_RULE_MAX = 128, 16384
#: Agreement of the edges under the doubled rule that accepts a rule (relative to max(1, abs(z))):
#: the rule's error falls geometrically in its nodes, so the finer rule's is far below it.
FOLD_TOL = 1e-12
#: Most local steps for which a failed quadrature edge scan is redone by partial fractions.
EXACT_EDGE_STEPS = 20
#: Most local steps for which the partial fractions come before the quadrature scan
#: (``round_map_spectrum``): cheaper there, and exact where the quadrature's edge lies outside.
EXACT_FIRST_STEPS = 10


class NoBracket(SolverError):
    """``contraction``'s bracket for the top not found: beyond floating point's reach (eta lam
    near 1e-16 and below), which another law's quadrature does not change."""


def _local_rate(gam, lam, eta, K, g):
    """(sup a, sup abs(a), inf a) over the clients' spectra (abs(a) the local phase's
    contraction), after a ValueError where the rate is not derived: local steps at or past
    their stability edge eta (L + lam) = 2, a negative a(s) (odd K, eta > 1 / (L + lam)) with
    g lam > 1, where the round map's spectrum leaves the real axis (module docstring), and
    pooled samples that do not span."""
    tops = (1.0 + np.sqrt(gam)) ** 2
    check_step_scope(gam, tops.max(), lam, eta, K, g, "max_j (1 + sqrt(gamma_j))^2",
                     pooled_ok=True)
    # x = 1 - eta (s + lam) is linear in s, so x^K's extremes over each client's support
    # (from 0 when gamma_j > 1: the atom) sit at its ends, or at x = 0 for even K (a >= 0).
    bottoms = np.where(gam > 1, 0.0, (1.0 - np.sqrt(gam)) ** 2)
    ends = (1.0 - eta * (np.concatenate([bottoms, tops]) + lam)) ** K
    return float(ends.max()), float(np.abs(ends).max()), float(min(ends.min(), 0.0))


def _negative_band(out, low):
    """``out`` (top, bottom, contraction) completed where a(s) < 0 somewhere (odd K, eta > 1 /
    (L + lam), g lam <= 1; ``low`` = inf a < 0): the spectrum lies in [low, top] (module
    docstring), its bottom not computed, so the contraction max(top, -low) is exact only
    when top >= -low, else an upper bound (``exact`` False)."""
    out["lower"] = min(low, out["bottom"] if out["bottom"] is not None else 0.0)
    out["exact"] = bool(low == 0.0 or out["top"] >= -low)
    out["contraction"] = max(out["contraction"], -out["lower"])
    return out


def _complex(gam, p, lam, eta, K, g, laws):
    """``algorithm1.fold.complex_contraction`` after the checks of ``check_step_scope``
    (odd K with g lam > 1 allowed: Sigma = I)."""
    check_step_scope(gam, ((1.0 + np.sqrt(gam)) ** 2).max(), lam, eta, K, g,
                     "max_j (1 + sqrt(gamma_j))^2", complex_ok=True, pooled_ok=True)
    return complex_contraction(gam, p, lam, eta, K, g, laws)


def _early(gam, p, lam, eta, K, g, laws):
    """The cases both entry points settle before their edge scans, in one place: (the spectral
    data, None) of a non-real spectrum (``_complex``, with ``laws``) or of pooled samples that
    do not span (``algorithm1.pooled``), else (None, ``_local_rate``'s triple) once its scope
    checks passed."""
    if in_scope(gam, lam, eta, K, g):
        return _complex(gam, p, lam, eta, K, g, laws), (None, None, None)
    rates = _local_rate(gam, lam, eta, K, g)
    if pooled_atom(gam) > 0.0:      # the common null space held apart (``algorithm1.pooled``)
        return pooled_contraction(gam, p, lam, eta, K, g), rates
    return None, rates


def round_map_spectrum(gam, p, lam, eta, K, g) -> dict:
    """The spectral data of the round map the curves need (``algorithm1.curves``), by the
    folds (``fast_contraction``); where their Newton steps or rule fail, by the edge scans of
    ``contraction`` (the law of psi_z can be a near point mass with a spike: eta = 1 / (L +
    lam) exactly puts a(s) = 0 at a spectrum's top edge), by quadrature, or by the exact
    partial fractions, affordable for at most ``EXACT_EDGE_STEPS`` local steps and tried first
    up to ``EXACT_FIRST_STEPS``. The folds fail at small eta lam too (3 clients at gamma 0.5,
    K = 1, eta 0.1, lam 0.01, where the top nears sup a); there the quadrature scan took 39 s
    (2 s per edge; 35-38 s at K = 2, 5, 20) for an edge 1.3e-6 outside the exact one, which
    took 0.66 s (1.5, 5.8, 17 and 51 s at K = 2, 5, 10, 20; at lam 0.03 it meets the fold's
    top to 3e-12).

    eta lam below the rounding of 1 (``numpy.finfo(float).eps``) is refused: the local factor
    1 - eta (s + lam) does not see lam there, and the edge scans failed after 40 s (lam =
    1e-16, eta 0.1) where eta lam = 1e-16 fails at once and 5e-16 answers (within 1e-8 of
    lam -> 0's local gradient descent)."""
    if eta * lam < np.finfo(float).eps:
        raise ValueError(f"lam: eta lam = {eta * lam:.3g} is below the rounding of 1 "
                         f"({np.finfo(float).eps:.3g}): the local steps' factor 1 - eta (s + "
                         "lam) does not see lam, and Algorithm 1's round map cannot be resolved "
                         f"(its curves settle to the lam -> 0 limit: give lam >= "
                         f"{np.finfo(float).eps / eta:.3g}, or the local method's steps)")
    try:
        return fast_contraction(gam, p, lam, eta, K, g)
    except SolverError:
        routes = ([PsiLaws] if K <= EXACT_FIRST_STEPS else []) + [QuadPsiLaws] + (
            [PsiLaws] if EXACT_FIRST_STEPS < K <= EXACT_EDGE_STEPS else [])
        for k, laws in enumerate(routes):
            try:
                return contraction(gam, p, lam, eta, K, g, laws=laws)
            except NoBracket:
                raise       # the quadrature scan failed alike after 40 s (lam 1e-16, 1e-20)
            except SolverError:
                if k == len(routes) - 1:
                    raise


def fast_contraction(gam, p, lam, eta, K, g) -> dict:
    """``contraction`` by the folds of ``algorithm1.fold.fold`` (derived there), the rule of
    ``mp_rule`` doubled from ``FOLD_RULE`` nodes until the edges agree to ``FOLD_TOL``; where
    the spectrum is not real, ``algorithm1.fold.complex_contraction``."""
    early, (sup_a, local, low) = _early(gam, p, lam, eta, K, g, PsiLaws)
    if early is not None:
        return early
    if gam.size == 1 or sup_a <= 0.0:
        # One client: the edge of Dhat_z is that of its law, no fold; every a(s) <= 0: the
        # top may be the w block's 0 (g lam = 1), which only the bracketing route sees.
        return contraction(gam, p, lam, eta, K, g)
    gl = g * lam
    last, n = None, FOLD_RULE
    while n <= FOLD_RULE_MAX:
        law = RuleLaws(gam, p, lam, eta, K, n)
        top = fold(law, gl, 1.0)
        bottom = fold(law, gl, -1.0, z_stop=-1e-12 * gl) if gl > 1.0 else None
        if last is not None and abs(top - last[0]) <= FOLD_TOL * max(1.0, abs(top)) and (
                (bottom is None) == (last[1] is None)) and (
                bottom is None or abs(bottom - last[1]) <= FOLD_TOL * max(1.0, abs(bottom))):
            rho = max(abs(top), abs(bottom) if bottom is not None else 0.0)
            return _negative_band({"contraction": rho, "top": top, "bottom": bottom,
                                   "local": local}, low)
        last, n = (top, bottom), 2 * n
    raise SolverError("Algorithm 1's rate: the fold's edges did not settle to "
                      f"{FOLD_TOL:g} with {FOLD_RULE_MAX} rule nodes")


def contraction(gam, p, lam, eta, K, g, laws=PsiLaws) -> dict:
    """The exact limit of the spectral radius of Algorithm 1's round map (module docstring);
    ``laws`` (a ``PsiLaws`` or a subclass with another ``cauchy``) the client laws.

    Returns
    -------
    dict with ``contraction``, ``top`` and ``bottom`` (the extreme eigenvalues; bottom None when
    the spectrum has no negative part) and ``local`` (sup a: the local contraction per round).
    """
    from scipy.optimize import brentq

    early, (sup_a, local, low) = _early(gam, p, lam, eta, K, g, laws)
    if early is not None:
        return early
    base = max(sup_a, 0.0)    # F has the sign of 1 - top(K(z)) only for z > 0 (docstring)
    gl = g * lam

    solved = {}

    def edge(z, which):
        # Each (z, which) solved once: the bracket's ends are asked for again by the checks
        # below and by brentq's first two evaluations (the same value: a pure solve).
        key = (float(z), which)
        if key not in solved:
            solved[key] = subordination.edge(laws(gam, p, lam, eta, K, z),
                                             "up" if which == "top" else "down")
        return solved[key]

    def f_top(z):
        return (z - (1.0 - gl)) / gl - edge(z, "top")

    # F rises from -inf just above sup a to +inf: a bracket by halving toward sup a and
    # doubling away from it.
    lo, hi = base + 1e-2 * (1.0 - base), max(2.0 * base, 1.0)
    for _ in range(60):
        if f_top(lo) < 0.0:
            break
        lo = base + 0.5 * (lo - base)
    for _ in range(60):
        if f_top(hi) > 0.0:
            break
        hi *= 2.0
    if sup_a <= 0.0 and abs(gl - 1.0) <= 1e-12 and f_top(lo) >= 0.0 and f_top(hi) > 0.0:
        # Every a(s) <= 0 and no eigenvalue above 0: the top is the w block's 0 eigenvalue
        # (with g lam = 1 the server model is not part of the state).
        top = 0.0
    elif not (f_top(lo) < 0.0 < f_top(hi)):
        raise NoBracket("Algorithm 1's rate: no bracket for the top of the round map's "
                        f"spectrum (inputs beyond floating point reach? eta lam = "
                        f"{eta * lam:.3g}: give a larger lam or step_size)")
    else:
        top = brentq(f_top, lo, hi, xtol=1e-12, rtol=1e-11)
    bottom = None
    if gl > 1.0:
        def f_bot(z):
            return (z - (1.0 - gl)) / gl - edge(z, "bottom")
        if f_bot(-1e-12 * gl) > 0.0:     # else F_bot < 0 on (1 - g lam, 0): no root there
            bottom = brentq(f_bot, 1.0 - gl, -1e-12 * gl, xtol=1e-12, rtol=1e-11)
    rho = max(abs(top), abs(bottom) if bottom is not None else 0.0)
    return _negative_band({"contraction": rho, "top": top, "bottom": bottom, "local": local},
                          low)


def algorithm1_contraction(*, gamma, lam, local_steps, step_size, global_step=None,
                           weights="samples") -> dict:
    """The exact limit of the contraction (spectral radius) of paper 004's Algorithm 1 with K
    warm-started local steps: ||w_T - w_inf||^2 decays like contraction^(2T).

    Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1 and eqs. 10-12, on least-squares
    clients, Sigma = I, limit d / n_j -> gamma_j, M fixed. Derived here
    (``riskcalc.linear.dynamics.algorithm1.rate``: for step_size <= 1 / (L + lam), Thm 2's
    condition, and beyond it for even K or global_step <= 1 / lam, the round map's spectrum
    is real, and its extreme eigenvalues are
    roots of a free-probability edge equation, found as folds: ``algorithm1.fold``; odd K with
    global_step > 1 / lam: the real edges and a disk holding the non-real spectrum,
    ``algorithm1.fold``'s non-real part). The curves
    along the rounds: ``rounds_limit("pfedme", local_steps=K)``.

    Parameters
    ----------
    gamma : float or sequence of float
        Per-client d / n_j > 0; where sum_j min(1, 1/gamma_j) < 1 (pooled N < d) the
        contraction on the pooled range (``algorithm1.pooled``; global_step <= 1 / lam and
        step_size <= 1 / (L + lam) there).
    lam : float
        The proximal penalty > 0.
    local_steps : int or numpy.inf
        K >= 1 (inf: the exact prox, eq. 10).
    step_size : float
        eta with 0 < eta < 2 / (L + lam), L = max_j (1 + sqrt(gamma_j))^2 (unused for K = inf);
        above 1 / (L + lam) (paper 004 Thm 2's condition) with an odd K and global_step
        > 1 / lam the spectrum is not real (``algorithm1.fold``'s non-real part).
    global_step : float, optional
        The paper's gamma > 0 (default 1 / lam).
    weights : {"samples", "uniform"} or sequence of float

    Returns
    -------
    dict
        ``contraction``, ``top`` and ``bottom`` (the extreme eigenvalues of the round map;
        ``bottom`` None when none is negative or, odd K above 1 / (L + lam), not computed),
        ``lower`` (a lower bound of the spectrum: ``bottom``, or min(0, inf a)), ``exact``
        (False when ``contraction`` = max(top, -lower) is only an upper bound; with a non-real
        spectrum also ``disk``, the radius holding it, and contraction = max(top, -lower,
        disk)) and ``local``
        (sup of abs(a(s)), a(s) = (1 - eta (s + lam))^K: the local phase's own contraction).
    """
    gam, _, _ = client_arrays(gamma, 0.0, 0.0)
    lam = float(positive("lam", lam))
    K = local_steps_count(local_steps)
    g = 1.0 / lam if global_step is None else float(positive("global_step", global_step))
    p = weight_vector(weights, gam)
    if np.isinf(K):
        res = rounds_limit("pfedme", gamma=gam, r=0.0, sigma=0.0, signal=0.0, rounds=[0],
                           local_steps=np.inf, lam=lam, global_step=g, weights=p)
        a, b = res.diagnostics["edges"]
        bottom = 1.0 - g * lam * b
        return {"contraction": res.contraction, "top": 1.0 - g * lam * a,
                "bottom": bottom if bottom < 0 else None, "lower": min(bottom, 0.0),
                "exact": True, "local": 0.0}
    eta = float(positive("step_size", step_size))
    if K > MAX_STEPS:
        # (1 - eta (s + lam))^K below 2^-53 on every spectrum: the exact prox to rounding.
        _, local, _ = _local_rate(gam, lam, eta, K, g)
        if local <= 2.0 ** -53:
            return algorithm1_contraction(gamma=gam, lam=lam, local_steps=np.inf,
                                          step_size=eta, global_step=g, weights=p)
        raise ValueError(f"local_steps = {K}: more than {MAX_STEPS} local steps that still "
                         "differ from the exact prox; give fewer, or numpy.inf")
    try:
        return fast_contraction(gam, p, lam, eta, K, g)
    except SolverError:
        return contraction(gam, p, lam, eta, K, g)
