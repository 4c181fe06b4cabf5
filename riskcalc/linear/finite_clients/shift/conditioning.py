"""Covariate shift's refusals of limits that lost their digits (``finite_clients.shift``, whose
notation this follows; ``finite_clients.maml_sigma`` and ``pfedme_sigma`` on the joint atoms):
across a wide span of the clients' eigenvalues (from ``MIN_SPAN`` on) the global fixed point
may be too ill-conditioned for double precision (``check_conditioning``, before the limits),
and the limits are checked against the exact scale identity Sigma_j -> c Sigma_j
(``check_by_scale``, after them). Either raises ``IllConditioned`` saying what to narrow.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned
from riskcalc.linear.finite_clients.shift.chains import own_variance


#: The largest eps cond(J)^2 let through (``check_conditioning``): measured errors were 1 to 10
#: times it, so the risks keep about 6 significant digits; and the span of the joint
#: eigenvalues from which it applies (and ``check_by_scale``).
MAX_AMPLIFIED, MIN_SPAN = 1e-7, 1e6


def eigenvalue_span(values) -> float:
    """The largest of the eigenvalues ``values`` over their smallest positive one (1 without
    one): the span from which ``MIN_SPAN`` applies the wide-span checks."""
    values = np.asarray(values, dtype=float)
    positive = values[values > 0]
    return float(values.max() / positive.min()) if positive.size else 1.0


def check_conditioning(jac, sv):
    """IllConditioned (a SolverError) when the global fixed point's Jacobian in log g
    (scale-free) is too ill-conditioned for double precision across a wide span of
    eigenvalues: the limits then carry relative errors of about eps cond^2 (measured: 1 to 10
    times it), silently. This happens where, on the directions of the largest eigenvalues, the
    clients that hold them have about as many samples as directions (pooled N = d there as the
    span grows: a client at gamma 2 with half its spectrum at S beside an identity client,
    cond ~ 0.19 S^(1/2), errors 1e-6 from S ~ 1e11, negative risks by 1e20); a well-posed
    federation keeps cond near 1 at any span (the same clients with 0.3 of the spectrum at S:
    3.7 up to S = 1e20). Near N = d overall cond grows too, but the errors stay near eps cond
    (measured against the identity route: 4e-9 at cond 1e8), so narrow spans are let through."""
    span = eigenvalue_span(sv)
    cond = float(np.linalg.cond(jac))
    amplified = np.finfo(float).eps * cond ** 2
    if span >= MIN_SPAN and not amplified <= MAX_AMPLIFIED:
        raise IllConditioned(
            f"covariate shift: the global fixed point is too ill-conditioned for double "
            f"precision (condition number {cond:.3g}: relative errors up to about "
            f"{amplified:.2g} in the risks, beyond {MAX_AMPLIFIED:g}); the spectra's "
            f"eigenvalues span a factor {span:.3g}, and on the directions of the largest ones "
            "the clients that carry them have about as many samples as directions (pooled "
            "N = d there); narrow the span or move those clients' gamma away from the share "
            "of their spectrum at its top")


#: The relative gap of ``check_by_scale`` beyond which the limits are refused.
SCALE_GAP = 1e-8


#: The indicator of ``scale_check_due`` from which pFedMe's limits are checked by the scale
#: identity.
MAX_INDICATED = 1e-10


def scale_check_due(gam, lam, values, marginals, min_span: float, typ=None) -> bool:
    """Whether pFedMe's limits need ``check_by_scale`` (which doubles their work): from a span
    of ``min_span`` of the eigenvalues ``values``, where eps times the largest own ridge
    variance per unit sigma^2 of the groups (ratios ``gam``, spectra ``marginals`` per group,
    of types ``typ``) cubed, times the span, reaches ``MAX_INDICATED``. The resolvent chains
    lose digits as a block of a client's spectrum nears as many directions as samples (its
    own variance grows) and the span widens: on 200 random federations (spans 10-1e8, gamma
    near 1 and near the blocks' critical points, lam 1e-12 to 10) the check's gap was at most
    0.4 times this indicator above the rounding floor (1e-13): every gap beyond ``SCALE_GAP``
    (7, indicators 2.7e-6 to 3e-2) is checked, and one where it is skipped stays 250 times
    below it (fuzz41 pfcost F1). Where due, its callers bound the work of every solve first
    (``check_size(..., solves=3)``: ValueError; fuzz41 pfcost F2)."""
    gam = np.asarray(gam, dtype=float).ravel()
    typ = np.zeros(gam.size, dtype=int) if typ is None else np.asarray(typ, dtype=int)
    span = eigenvalue_span(values)
    if not (lam > 0 and span >= min_span):
        return False
    own = max(float(np.max(own_variance(gam[typ == k], lam, marginals[np.argmax(typ == k)])))
              for k in np.unique(typ))
    return not np.finfo(float).eps * own * own * own * span < MAX_INDICATED    # NaN: checked


def check_by_scale(bias, var, values, rescaled, what: str = "covariate shift",
                   min_span: float = MIN_SPAN, factors=(3.0,)):
    """IllConditioned unless the limits pass two checks across a wide span of the eigenvalues
    ``values`` (from ``min_span`` on; ``what`` begins the message): no negative bias or
    variance, and the exact scale identity (every Sigma_j -> c Sigma_j, r_j -> r_j / sqrt(c),
    lam_j -> c lam_j, alpha -> alpha / c leaves every bias and variance unchanged: the same
    responses with features scaled by sqrt(c)) at each c of ``factors`` (3; pFedMe also
    1/3), whose different roundings expose cancellation. Measured (two identity clients at
    gamma 0.5 and one at gamma 1 with half its spectrum at S): gaps 4e-9 at S = 1e8, 5e-7 at
    1e10, 3e-2 at 1e15, where the errors were about as large (up to 100 times at 1e13), and a
    negative risk at 1e20 with no gap (both roundings lost); the same clients at gamma 4 keep
    gaps of 1e-15 at any span. One rescaling can land as far off as the limits: pFedMe at
    gamma 2 (10 clients), lam 7.4944e-6 on two-point:0.5,1.4097e7,0.5 was 1.3e-7 off (mpmath
    at 60 digits) and Sigma -> 3 Sigma moved it 4e-9, Sigma / 3 5.4e-8 (fuzz42 maml F3).
    ``check_conditioning`` refuses the ill-conditioned global points first."""
    span = eigenvalue_span(values)
    if not span >= min_span:
        return
    risk = bias + var
    negative = min(np.min(bias), np.min(var)) < -1e-12 * np.max(np.abs(risk))
    # An infinite limit (a ridgeless client at gamma_j = 1) must stay infinite, and is no
    # measure of digits (inf - inf made the gap NaN: FTFA at gamma (2, 1), span 1e6, refused).
    finite = np.isfinite(risk)
    for c in factors:
        b3, v3 = rescaled(c)
        with np.errstate(invalid="ignore"):
            gaps = (np.abs(b3 - bias) + np.abs(v3 - var)) / np.where(risk > 0, risk, 1.0)
        gap = (float(np.max(np.where(finite, gaps, 0.0)))
               if np.array_equal(finite, np.isfinite(b3 + v3)) else np.inf)
        if negative or not gap <= SCALE_GAP:
            moved = "3 Sigma" if c == 3.0 else "Sigma / 3" if c == 1 / 3 else f"{c:g} Sigma"
            raise IllConditioned(
                f"{what}: the limits lose their digits across the spectra's eigenvalue "
                f"span of {span:.3g} (" + ("a negative risk; " if negative else "")
                + f"the exact scale identity Sigma -> {moved} moves them by {gap:.2g} "
                f"relative, beyond {SCALE_GAP:g}); narrow the span")
