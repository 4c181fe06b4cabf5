"""Paper 004's Algorithm 1 at its fixed point: the same for every K, eta and g (derived here).

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 9-11, least-squares clients, in the
notation of ``algorithm1.curves``: one round of K warm-started local steps maps v_j to
v_j' = a_j v_j + c_j (lam w + b_j), a(s) = (1 - eta (s + lam))^K, c(s) = (1 - a(s)) / (s + lam),
and the server w' = (1 - g lam) w + g lam sum_j p_j v_j'. At a fixed point (w, v_1, ..., v_M),
(1 - a_j) v_j = c_j (lam w + b_j); 1 - a(s) != 0 (0 < eta (s + lam) < 2 on the spectrum, the
local steps' stability edge the scope checks enforce), so v_j = (S_j + lam)^{-1} (lam w + b_j)
= prox_{f_j / lam}(w) (eq. 9), and the server's equation is w = sum_j p_j v_j: the fixed point
of eq. 10 with exact local solves, whatever K, eta and g (the minimizer of the pFedMe / FedProx
joint objective on the pooled range; training from 0 never leaves it, so where pooled N < d both
iterations keep the common null space's part at 0). Its risks, the server model's (``bias``,
``variance``) and each client's own model v_j's (``local``, personalization from the server model
with ``terms``), are therefore the exact prox route's at T = inf (``prox_laws``, one contour
around the spectrum of sum_j p_j S_j (S_j + lam)^{-1}), whose round map with g lam = 1 has its
spectrum in [0, 1): no K-step round map, no double contour over its spectrum. The K-step map's
spectral data (contraction, edges) stay its own (``algorithm1.rate``): whether the iteration
reaches this point is a property of K, eta and g.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.prox_laws import algorithm1_curves


def fixed_point(gam, r, sigma, p, signal, lam, n_rounds, sp) -> dict:
    """The dict of ``algorithm1.curves.curves`` with every one of its ``n_rounds`` rounds at the
    fixed point (module docstring), the K-step round map's spectral data ``sp``
    (``algorithm1.rate.round_map_spectrum``) as its contraction, edges and atom."""
    out = algorithm1_curves(gam, r, sigma, p, signal, lam, 1.0 / lam, np.array([np.inf]))
    # The own models now (``rounds_limit`` reads them at once: they are Algorithm 1's risk),
    # so that a failure of their contour is the caller's to catch here.
    own = out["local"]()

    def columns(x):
        return np.repeat(x, n_rounds, axis=-1)

    def local(terms=None):
        bias, variance = own if terms is None else out["local"](terms)
        return columns(bias), columns(variance)

    return {"bias": columns(out["bias"]), "variance": columns(out["variance"]),
            "distance": columns(out["distance"]), "contraction": sp["contraction"],
            "edges": (sp["lower"], sp["top"]), "contraction_is_bound": not sp["exact"],
            "atom": sp.get("atom", 0.0), "nodes": out["nodes"], "local": local}


def unresolved_top(gam, lam, eta, K, g, rounds, top=None):
    """None, or the round map's spectral data where only T = inf is asked of K < inf local
    steps and the top of the round map lies within ``contours.TOP_GAP`` of 1 (at least
    1 - min(1 - sup a, g lam), ``contours.local_gap``; ``top``: the covariance's largest
    eigenvalue, None for Sigma = I). Its edge solve then took 13-18 s and at lam 1e-12 found a
    contraction 1 + 1e-11 (a "divergence"), under a spectrum blamed pooled N near d, for a fixed
    point the exact prox gives in a second (module docstring: the same for every K, eta and g).
    With g lam <= 1 the round map contracts (``algorithm1.rate``: its spectrum lies in
    [min(0, inf a), top], top < 1 where the pooled samples span, inf a > -1 for stable local
    steps), so the fixed point is reached; the contraction reported is the lower bound
    1 - min(1 - sup a, g lam), within ``TOP_GAP`` of the exact one. ValueError with g lam > 1,
    where the bottom of the spectrum decides and is not resolved either."""
    from riskcalc.linear.dynamics.algorithm1.contours import TOP_GAP, local_gap

    if np.any(np.isfinite(rounds) & (rounds > 0)) or not np.isfinite(K):
        return None     # (T = 0, the zero model, needs no solve: [0, inf] took 4 s, "diverges")
    gap = local_gap(gam, lam, eta, K, top)
    if gap is None or min(gap, g * lam) >= TOP_GAP:
        return None
    if g * lam > 1.0:
        raise ValueError(f"rounds=inf: Algorithm 1's round map has its top within "
                         f"{min(gap, g * lam):.2g} of 1 (its local steps' slowest factor "
                         "(1 - step_size (s + lam))^K), beyond what its edge solves resolve, "
                         f"and global_step * lam = {g * lam:.6g} > 1 leaves its convergence "
                         "open; give global_step <= 1 / lam (the fixed point is the same for "
                         "every global_step, K and step_size), or local_steps=numpy.inf")
    tops = (1.0 if top is None else top) * (1.0 + np.sqrt(gam)) ** 2
    low = min(0.0, float(np.min((1.0 - eta * (tops + lam)) ** K)))
    rho = 1.0 - min(gap, g * lam)
    return {"contraction": max(rho, -low), "edges": (low, rho),
            "note": f"contraction: the round map's top is within {1.0 - rho:.2g} of 1 (its "
                    "local steps' slowest factor (1 - step_size (s + lam))^K), beyond its edge "
                    "solves; reported as that lower bound, within 1e-9 of the exact one. The "
                    "fixed point is the exact prox's (the same for every local_steps)"}
