"""The time estimate of paper 004's Algorithm 1 curves with K local steps, Sigma = I
(``algorithm1.curves``, ``004_98172ed3646eef14.txt`` Appendix B.1, eqs. 10-11), and its refusal
beyond ``rounds_limit``'s max_seconds (``sigma.budget``'s convention)."""

from __future__ import annotations

from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed
# Most estimated process seconds by default: the pencil routes' (``sigma.budget``).
from riskcalc.linear.dynamics.sigma.guards import MAX_PENCIL_SECONDS as MAX_SECONDS
#: Fitted seconds: fixed part and per unit of M N1 N2 Q (``curves_seconds``).
_FIXED, _PER_UNIT = 0.3, 4.5e-9
#: The estimate's margin over the fit (the machine's load moves the measured CPU).
MARGIN = 1.5


def curves_seconds(M, n1, n2, q):
    """Estimated process seconds of the whole ``rounds_limit`` call (round map spectrum,
    contours, the two-point traces and the clients' own models): its bulk is about a dozen
    products E_k[f1 f2] over M clients, n1 upper nodes of the outer contour, n2 nodes of the
    inner one and the q-node Marchenko-Pastur rule (``curves.two``), so c0 + c1 M n1 n2 q,
    times ``MARGIN``. Fitted on gamma = [2, 0.5], r = sigma = 0.5, K = 1, eta = 0.05, T = 5
    (process CPU, OMP 1, 2 cores loaded by 3 other sessions, load 1.3; 2026-11-28)::

        lam    n1    n2    q   measured s   estimate s
        0.3   312   888  129      0.61          2.59
        0.1   372  1064  129      0.70          3.51
        0.03  600  1720  257      2.65         16.4
        0.01 1020  2912  513     13.5          91.9

    (M = 3, lam 0.01, T = 20: 20.0 s measured, 36.3 estimated.) The contours themselves come
    before this check: at lam 0.01 with three clients of gamma 2 they took 200 s (a 2049-node
    rule) before it refused; an estimate before the contours is still missing.
    """
    return MARGIN * (_FIXED + _PER_UNIT * M * n1 * n2 * q)


def check_curves(M, n1, n2, q, top):
    """ValueError when ``curves_seconds`` exceeds the allowed seconds (``sigma.budget.allowed``,
    default ``MAX_SECONDS``), after the contours are solved and before the two-point work. The
    nodes grow like 1 / sqrt(1 - top) and the rule with them: the round map's top nears 1 as
    eta lam -> 0 (directions of small sample eigenvalue move by about eta lam per round)."""
    limit, need = allowed(MAX_SECONDS), curves_seconds(M, n1, n2, q)
    if need > limit:
        raise ValueError(
            f"Algorithm 1's curves would take about {need:.3g} s (estimated; more than the "
            f"{limit:.3g} s allowed): the round map's top 1 - {1.0 - top:.2g} is so near 1 that "
            f"its contours need {n1 + n2} nodes and a {q}-node rule for {M} clients; give a "
            f"larger lam or step_size (1 - top grows with both), {MORE_TIME}")
    return need
