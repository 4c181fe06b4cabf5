"""Table 1 of *The effect of personalization in FedProx*
(``../shared/papers/004_98172ed3646eef14.txt``): which column an instance falls in and the
rows' rates (Theorem 1's "Ours", the minimax lower bound, Chen et al.'s FedProx), with the
printed rows behind ``printed=True``. Notation as in :mod:`riskcalc.minimax.fedprox`.
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import flag
from riskcalc.minimax._common import (broadcasting, client_sizes, heterogeneity, positive,
                                      scalar_or_array)


@broadcasting
def table1_regime(R, n, m):
    """Column of Table 1 of paper 004 an instance falls in.

    0: ``R > 1/sqrt(n)``; 1: ``1/(m sqrt(n)) < R <= 1/sqrt(n)``; 2: ``R <= 1/(m sqrt(n))``.

    Parameters
    ----------
    R, n, m : array_like
        Heterogeneity radius, samples per client, clients.

    Returns
    -------
    ndarray of int
    """
    rr = heterogeneity(R)
    nn, mm, _ = client_sizes(n, m)
    return np.where(rr > 1 / np.sqrt(nn), 0, np.where(rr > 1 / (mm * np.sqrt(nn)), 1, 2))


@broadcasting
def table1_rates(R, n, m, D=1.0, loss_sup=1.0, printed=False):
    """Rows of Table 1 of paper 004 (local error ``E||w*_i - w~_i||^2``, constants dropped).

    Corrected rows: "Ours" and "Lower bound" are ``1/n`` (column 0), ``R^2 v 1/(mn)``
    (column 1), ``1/(mn)`` (column 2), i.e. ``(1/n ^ R^2) + 1/N`` up to a factor 2 (Theorem 1 and
    paper 000's eq. 15); "Chen et al." is ``(D^2 + ||l||_inf)/n`` in column 0 and, from paper
    000's eq. (29) with ``n_i = n``, ``||l||_inf (R/sqrt(n) v 1/(n sqrt(m)))`` otherwise.

    Parameters
    ----------
    R, n, m : array_like
        Heterogeneity radius, samples per client, clients.
    D, loss_sup : array_like
        Domain diameter and ``||l||_inf`` of the Chen et al. row.
    printed : bool
        Return the rows as printed (see ERRATA).

    Returns
    -------
    dict
        ``{"chen": ..., "ours": ..., "lower": ...}``.

    ERRATA
    ------
    - Column ``1/(m sqrt n) < R <= 1/sqrt n`` prints "Ours" and "Lower bound" as
      ``R^2 ^ 1/(mn)`` (minimum); Theorem 1 gives ``C3/N + C4 R^2`` there and the lower bound is
      ``R^2 + 1/N``, so the entry is ``R^2 v 1/(mn)`` (maximum). The printed minimum undercuts the
      minimax lower bound by an unbounded factor: ``R = 1/sqrt(n)``, ``n = 100``, ``m = 10``:
      printed ``0.001``, lower bound ``1/n + 1/N = 0.011`` (ratio ``m + 1``).
    - Column ``R <= 1/(m sqrt n)`` quotes Chen et al. as ``||l||_inf / sqrt(mn)``; their
      eq. (29) has ``sqrt(m)/N = 1/(n sqrt m)`` there (their text: "off by a factor sqrt(m)" from
      ``1/N``). Deciding numbers: ``m = n = 100``: ``1/sqrt(mn) = 0.01`` against
      ``1/(n sqrt m) = 0.001``.
    """
    rr = heterogeneity(R)
    nn, mm, n_tot = client_sizes(n, m)
    dia = positive("D", D)
    ls = positive("loss_sup", loss_sup)
    col = table1_regime(R, n, m)
    if flag("printed", printed):
        middle = np.minimum(rr ** 2, 1 / n_tot)
        chen_mid = ls * rr / np.sqrt(nn)
        chen_hom = ls / np.sqrt(n_tot)
    else:
        middle = np.maximum(rr ** 2, 1 / n_tot)
        chen_mid = ls * np.maximum(rr / np.sqrt(nn), 1 / (nn * np.sqrt(mm)))
        chen_hom = ls / (nn * np.sqrt(mm))
    ours = np.where(col == 0, 1 / nn, np.where(col == 1, middle, 1 / n_tot))
    chen = np.where(col == 0, (dia ** 2 + ls) / nn, np.where(col == 1, chen_mid, chen_hom))
    return {"chen": scalar_or_array(chen), "ours": scalar_or_array(ours),
            "lower": scalar_or_array(ours.copy())}
