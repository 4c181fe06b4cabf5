"""The time and memory estimates of paper 004's Algorithm 1 curves with K local steps, Sigma = I
(``algorithm1.curves``, ``004_98172ed3646eef14.txt`` Appendix B.1, eqs. 10-11), and their
refusal beyond ``rounds_limit``'s max_seconds and max_gigabytes (``sigma.budget``'s convention):
checked before the contours, before each finer Marchenko-Pastur rule, and before the two-point
work."""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart

from riskcalc.linear.dynamics.sigma.budget import MORE_MEMORY, MORE_TIME, allowed, allowed_bytes
# Most estimated process seconds by default: the pencil routes' (``sigma.budget``).
from riskcalc.linear.dynamics.sigma.guards import MAX_PENCIL_SECONDS as MAX_SECONDS
#: Fitted seconds: fixed part and per unit of M N1 N2 Q (``curves_seconds``).
_FIXED, _PER_UNIT = 0.3, 4.5e-9
#: The estimate's margin over the fit (the machine's load moves the measured CPU).
MARGIN = 1.5
#: Estimated peak bytes per unit of M N1 N2 + M (N1 + N2) Q (``curves_bytes``).
BYTES_PER_UNIT = 240.0


class CurvesBudget(ValueError):
    """``check_curves``' refusal, with the round map's contraction ``rho`` (where it exceeds
    1, ``rounds_limit`` tries the pencil route of the identity spectrum instead)."""

    def __init__(self, message: str, rho: float):
        super().__init__(message)
        self.rho = rho


def curves_seconds(M, n1, n2, q):
    """Estimated process seconds of the whole ``rounds_limit`` call (round map spectrum,
    contours, the two-point traces and the clients' own models): its bulk is about a dozen
    products E_k[f1 f2] over M clients, n1 upper nodes of the outer contour, n2 nodes of the
    inner one and the q-node Marchenko-Pastur rule (``curves.two``), so c0 + c1 M n1 n2 q,
    times ``MARGIN``. Fitted on gamma = [2, 0.5], r = sigma = 0.5, K = 1, eta = 0.05, T = 5
    (process CPU, OMP 1, 2 cores shared with two other sessions; 2026-11-28), the rule's size
    q being the accepted one::

        gamma            lam    n1    n2     q   measured s   estimate s   (GB: curves_bytes)
        [2, 0.5]         0.3   312   888   129      0.66          0.93      0.16 / 0.21
        [2, 0.5]         0.1   372  1064   129      0.67          1.14      0.23 / 0.28
        [2, 0.5]         0.03  600  1720   257      2.67          4.03      0.62 / 0.78
        [2, 0.5]         0.01 1020  2912   513     13.7          21.0       1.83 / 2.39
        [0.5] * 5        0.1   232   656   129      0.54          1.11      0.23 / 0.32
        [1, 1, 1]        0.3   352  1000   129      0.65          1.37      0.29 / 0.38
        [4, 4]           0.1  1124  3208   513     14.7          25.4       2.16 / 2.80
        [2, 2, 2]        0.3  1108  3160   513     20.4          36.8       3.00 / 4.10
        [2, 2, 2]        0.1  1772  5056  1025     84.9         186         8.04 / 11.5

    (T = 20 at [2, 0.5], lam 0.01: the same nodes, 13.5 s.) The contours themselves, a quarter
    of the whole, run after the check at their first rule and at each finer one: before, three
    clients at gamma 2 and lam 0.03 ran until the process was killed for want of memory.
    """
    return MARGIN * (_FIXED + _PER_UNIT * M * n1 * n2 * q)


def curves_bytes(M, n1, n2, q):
    """Estimated peak memory (bytes) of the same call: complex arrays of the node pairs (M, N1,
    N2) (K_k, Q, the data H, C and the clients' own models' pair terms) and of the nodes' rule
    factors (M, N, Q) (d, 1 / A, X and their products), about a dozen of each alive at the peak
    (in the own models' step), ``BYTES_PER_UNIT`` = 16 bytes x 12.5 x a margin of 1.2.
    Measured peak (``ru_maxrss`` after the imports) / estimated: ``curves_seconds``' table,
    10.5 to 12.2 complex entries per unit measured."""
    return BYTES_PER_UNIT * M * (n1 * n2 + (n1 + n2) * q)


def check_curves(M, n1, n2, q, top, rho, final=True):
    """``CurvesBudget`` (a ValueError) when ``curves_seconds`` exceeds the allowed seconds
    (``sigma.budget.allowed``, default ``MAX_SECONDS``) or ``curves_bytes`` the allowed memory
    (``allowed_bytes``, default 4 GB). ``final``: q is the accepted rule's size (after the
    contours, before the two-point work); else a rule about to be tried, which the accepted one
    is at least, so the estimate is a lower bound (before the contours' work at that rule).
    The nodes grow like 1 / sqrt(1 - top) and the rule with them: the round map's top nears 1
    as eta lam -> 0 (directions of small sample eigenvalue move by about eta lam per round)."""
    limit, need = allowed(MAX_SECONDS), curves_seconds(M, n1, n2, q)
    limit_b, need_b = allowed_bytes(), curves_bytes(M, n1, n2, q)
    if need <= limit and need_b <= limit_b:
        return need
    about = "about" if final else "at least"
    what = (f"take {about} {need:.3g} s (estimated; more than the {limit:.3g} s allowed)"
            if need > limit else
            f"hold {about} {need_b / 1e9:.3g} GB at its peak (estimated; more than the "
            f"{limit_b / 1e9:.3g} GB allowed)")
    raise CurvesBudget(
        f"Algorithm 1's curves would {what}: {why_nodes(top, rho)} its contours need "
        f"{n1 + n2} nodes and a rule of {'' if final else 'at least '}{q} nodes for {M} "
        f"clients; {fix_nodes(rho)}, " + (MORE_TIME if need > limit else MORE_MEMORY), rho)


def why_nodes(top, rho) -> str:
    """Why the contours need many nodes: the round map's top near 1 (small eta lam, pooled N
    near d) or, where it diverges (contraction ``rho`` > 1, a large global_step), its spectrum
    far outside the unit disk, which the contours' amplification bound follows."""
    if rho > 1.0:
        return (f"the round map diverges (contraction {shown_apart(rho, 1.0, 3)} > 1: the "
                "server step global_step lam too large), and over the rounds asked")
    return f"the round map's top 1 - {1.0 - top:.2g} is so near 1 that"


def fix_nodes(rho, gam=None, gl=None) -> str:
    """What brings the nodes down (``why_nodes``); with the clients' ``gam``, pooled N / d; with
    the server step ``gl`` = global_step lam below 1/2, a larger global_step (1 - top falls with
    it: global_step 1e-8 at lam 1 was advised only lam or step_size)."""
    if rho > 1.0:
        return ("give a smaller global_step (the paper's 1 / lam makes the server model the "
                "average of the clients') or fewer rounds")
    pooled = "" if gam is None else (", and with the distance of pooled N / d = sum_j "
                                     f"1/gamma_j = {float(np.sum(1.0 / gam)):.6g} from 1")
    # Not monotone in lam: 1 - top ~ step_size lam for small lam, ~ L / lam past the clients'
    # sample eigenvalues at the default global_step 1 / lam (lam = 1e5, L = 2.9, step_size at 0.9
    # of its bound: "give a larger lam" was said, which makes it worse).
    # Below 1/2: the default global_step 1 / lam gives global_step lam = 1 - 1e-16 at lam 1e-9
    # ("global_step lam = 1 < 1" was advised).
    server = ("" if gl is None or gl >= 0.5 else "give a larger global_step (global_step lam = "
              f"{gl:.3g} < 1: the server model moves by about that much per round), or ")
    return (f"{server}give a larger lam or step_size where step_size lam is small, or a smaller "
            "lam where "
            "lam is far above the clients' sample eigenvalues (1 - top falls as step_size lam "
            f"-> 0 and, at the default global_step 1 / lam, as lam grows past them{pooled})")
