"""Paper 004's Algorithm 1 with K warm-started local steps under covariate shift: the curves of
the server model and of the clients' own models, each client's risk in its own covariance
(derived here).

Model and pencil: ``shift.algorithm1.pencil`` (client j's rows N(0, Sigma_j), the Sigma_j
diagonal in one basis, joint measure mu with client j's eigenvalue v_j(a); paper
``004_98172ed3646eef14.txt``, eqs. 10-11). Client i's risk of a model m is E[(m - theta_i)^T
Sigma_i (m - theta_i)].

1. Errors: ``sigma.algorithm1.curves``, steps 1 and 3, hold as written, since none of them uses
   Sigma: theta_0 in every block is the fixed point of the round map without u_j and noise; the
   source of client j is f_j = S_j u_j + n_j with E[n_j n_j^T] = sigma_j^2 gamma_j S_j / d
   (client j's own S_j, whatever Sigma_j made it); G L = I on the chain gives Y(cf_j) S_j =
   Y(au_j) for ANY S_j. So with the same row combinations c_th, cf_j, au_j
   (``sigma.algorithm1.contour.dense_vectors``) the risk of model m (0: the server, s_i: client
   i's own model) for client i is ::

       B_i = signal^2 oint oint z1^T z2^T tau(Sigma_i Y1(c_th) Y2(c_th)^T)
             + sum_j r_j^2 oint oint P1 P2 tau(Sigma_i Y1(au_j) Y2(au_j)^T)
             - 2 r_i^2 oint P tau(Sigma_i Y(au_i)) + r_i^2 tau(Sigma_i),
       V_i = sum_j sigma_j^2 gamma_j oint oint P1 P2 tau(Sigma_i Y1(au_j) Y2(cf_j)^T),

   Sigma -> Sigma_i in the shared spectrum's forms. The double traces are the two-point
   functions of the transposed pencil at the block (m, m) with the metric h v_i (``pencil``,
   step 3), the single one E[v_i Ghat(a)[m, :] au_i] (step 2), tau(Sigma_i) = E[v_i]; the
   distance ||w_T - w_inf||^2 reads the same two-point functions with the metric h. One
   solve per pair of nodes serves the server, every own model and every metric.
2. Edges and contour: ``sigma.algorithm1.curves``, step 4, with each client's sample spectrum
   under its own Sigma_j (``pencil.client_ends``) in Weyl's window; the quadrature over the
   rounds and the settled tails are the shared spectrum's (``sigma.algorithm1.curves.
   _assemble``, called once per client metric Sigma_l with every target's traces in Sigma_l,
   each row a risk in that metric; row l is client l's).

Scope: a real spectrum (the complex case, odd K above 1 / (L + lam) with g lam > 1, is
refused): the dense pencil for M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``, its chain structure
beyond (``shift.algorithm1.chain``, within the time estimate of ``shift.algorithm1.cost``,
checked before the edge scans); personalization after round T: ``shift.algorithm1.personalize``
on the dense route, ``shift.algorithm1.personalize_chain`` on the chain route and on the dense
route's contour beyond M (K + k)^2 = 200 (the curves' ``personalize``, their contour and solve
reused); pooled samples that do not span R^d: ``shift.algorithm1.pooled`` (the dense pencils
only). Checks (``tests/test_rounds_shift_
alg1.py``): equal covariances against ``sigma.algorithm1.curves``, T = inf against the pFedMe
joint minimizer under shift (``clients_limit("pfedme", spectra=...)``), and the literal
algorithm simulated (``montecarlo.linear.rounds``, ``spectra``) at d = 200 and 400.
"""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import numpy as np

from riskcalc.linear.dynamics.fedavg import round_horizon
from riskcalc.linear.dynamics.shift.algorithm1.chain import ShiftAlg1Chain, shift_chain_parts
from riskcalc.linear.dynamics.shift.algorithm1.cost import memory_check, shift_alg1_affordable
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.shift.algorithm1.pencil import ShiftAlg1Pencil
from riskcalc.linear.dynamics.shift.algorithm1.pooled import (check_client_masses,
                                                              shift_pooled_contour)
from riskcalc.linear.dynamics.shift.algorithm1.personalize import shift_alg1_personalized
from riskcalc.linear.dynamics.shift.algorithm1.personalize_chain import (
    shift_alg1_personalized_chain)
from riskcalc.linear.dynamics.shift.pencil import client_ends
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.algorithm1.contour import (
    check_contraction, dense_solve, dense_vectors, edges_within_reach)
from riskcalc.linear.dynamics.sigma.algorithm1.couplings import solved_couplings
from riskcalc.linear.dynamics.sigma.algorithm1.curves import MAX_WORK, _assemble
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import _contour_nodes, spectrum_edges
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import CIRCLE_NODES, at_one, ring_mean
from riskcalc.linear.dynamics.sigma.fedavg.curves import MAX_PAIRS
from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS


def _contour(gam, p, lam, eta, K, g, rounds, V, h, pencil=ShiftAlg1Pencil):
    """The edges (``spectrum_edges`` on the shift pencil ``pencil``, dense or chain, with each
    client's own sample spectrum) and the contour of ``sigma.algorithm1.contour.contour``'s
    real case."""
    pooled = p @ V / np.sum(p)
    top, bottom, low = edges_within_reach(lambda: spectrum_edges(
        gam, p, lam, eta, K, g, SimpleNamespace(atoms=pooled, weights=h),
        pencil=partial(pencil, V), ends=client_ends(V, h, gam)), g, lam)
    lo = min(0.0, low, bottom if bottom is not None else 0.0)
    rho = max(top, -lo)
    check_contraction(rho, g, lam)
    _, over, finite, t_max = round_horizon(rho, rounds)
    z, w, n = _contour_nodes(lo, top, rho, t_max)
    return {"z": z, "w": w, "n": n, "lo": lo, "top": top, "low": low, "rho": rho,
            "over": over, "finite": finite, "t_max": t_max, "circle": False,
            "bound": bool(low < 0.0 and top < -low), "pooled": pooled}


def shift_alg1_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds, joint, route="auto"):
    """Bias, variance and distance to the fixed point of the server model, and (``local()``)
    bias and variance of every client's own model, of Algorithm 1 with K local steps under
    covariate shift at every T of ``rounds`` (module docstring); the dict of
    ``sigma.algorithm1.curves.algorithm1_sigma_k_curves`` without ``personalize``.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, lam, eta, g : float
        ||theta_0||, the prox penalty, the local step and the paper's global step gamma.
    K : int
        Local steps >= 1.
    rounds : ndarray of float (integers or inf)
    joint : riskcalc.linear.engine.joint_spectrum.JointSpectrum
        The clients' commuting covariances (their types and joint measure).
    route : {"auto", "dense", "chain"}
        The pencil's solves: dense (M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``) or through its
        client structure (``shift.algorithm1.chain``); "auto" takes the dense one where it
        applies.

    Raises
    ------
    ValueError
        Outside the scope (step_size, gamma, a complex spectrum) or the size limits.
    """
    if route not in ("auto", "dense", "chain"):
        raise ValueError(f"route must be 'auto', 'dense' or 'chain', got {route!r}")
    M = gam.size
    if joint.types.size != M:
        raise ValueError(f"spectra lists {joint.types.size} client spectra for {M} clients")
    V = np.asarray(joint.values, float)[np.asarray(joint.types)]             # (M, atoms)
    h = np.asarray(joint.weights, float)
    pooled = pooled_atom(gam) > 0.0
    if route == "chain" or (route == "auto" and M * K * K > MAX_UNKNOWNS):
        if pooled:
            raise ValueError(f"local_steps: Algorithm 1 under covariate shift with pooled samples "
                             f"that do not span R^d (sum_j 1/gamma_j < 1) is covered on the dense "
                             f"pencil only, M K^2 <= {MAX_UNKNOWNS} (got {M * K * K}, route "
                             f"{route!r}); give fewer local_steps or clients")
        return _chain_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h)
    c = (shift_pooled_contour if pooled else _contour)(gam, p, lam, eta, K, g, rounds, V, h)
    z, n, t_max = c["z"], c["n"], c["t_max"]
    P = len(c.get("around", [1.0]))            # the point z = 1, or the circle's upper nodes
    pairs, size = (n // 2 + P) * (n + 2 * P - (P == 1)), M * K * K
    if pairs > MAX_PAIRS or pairs * size ** 3 > MAX_WORK:
        raise ValueError(f"spectra: Algorithm 1's curves with {M} clients, local_steps = {K} "
                         f"and rounds up to {t_max} need {pairs:.3g} contour node pairs, each a "
                         f"linear solve of M K^2 = {size} unknowns (at most {MAX_PAIRS:.0g} "
                         f"pairs and {MAX_WORK:.0g} pairs x (M K^2)^3); give fewer rounds, "
                         "local_steps or clients")
    mem = budget.check_memory(
        lambda m, k, x: memory.estimate("dense", m * k * k, 1 + m * (k + 2), h.size, x, M=m,
                                        nf=3 * (m + 1), rank=m),
        (M, K, n), f"Algorithm 1's dense pencil under covariate shift with {h.size} joint "
        f"atoms and {n} contour nodes", n <= t_max + 24)
    args = (c["pooled"], h, gam, p, lam, eta, K, g)
    pen = ShiftAlg1Pencil(V, *args)
    C, G = dense_solve(pen, c)
    if pooled:
        check_client_masses(pen, G, c, V, h, (1.0 - eta * lam) ** K, g * lam)
    c_th, cf, au = dense_vectors(pen, eta, lam)
    models = np.concatenate([[0], pen.state])          # the server, then the own models
    couplings = []
    for m in models:
        couplings += [(r ** 2, au, au, (m, m)), (sigma ** 2 * gam, au, cf, (m, m)),
                      ([signal ** 2], c_th[None, :], c_th[None, :], (m, m))]
    lams = np.vstack([h * V, h])                       # client i's metric, then tau itself
    N = z.size
    # The full contour (upper, then conjugates), then z = 1 or the full circle around it.
    full = np.r_[0:N, 0:N, N] if P == 1 else np.r_[0:N, 0:N, N:N + P, N:N + P]
    conj = np.r_[np.zeros(N), np.ones(N), np.zeros(P), np.ones(P) if P > 1 else []].astype(bool)
    Cf, Gf = C[full], G[full]
    Cf[conj], Gf[conj] = Cf[conj].conj(), Gf[conj].conj()
    pent = ShiftAlg1Pencil(V, *args, transposed=True)
    H = pent.two_point((C.swapaxes(-1, -2), G.swapaxes(-1, -2)),
                       (Cf.swapaxes(-1, -2), Gf.swapaxes(-1, -2)), couplings, lams)
    H = H.reshape(M + 1, 3, M + 1, N + P, full.size)
    # tau(Sigma_l Y(au_k)) of each model row m in each client's metric l, at the upper nodes
    # and z = 1: (l, m, k, node); metric l's call of _assemble measures every target k in
    # Sigma_l (each row a risk, nonnegative, as its checks require) and row l is client l's.
    cross = np.einsum("la,namb,kb->lmkn", h * V, G[:, :, models, :], au)
    setting = (gam, r, sigma, p, signal, lam, eta, K, g, rounds)
    if pooled:
        H, cross = at_one(H, N, P), ring_mean(cross, N)
    return _finish(H, cross, c, mem, setting, V, h, partial(_dense_personalized, solved=(c, C, G)))


def _dense_personalized(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h, tops, *, solved,
                        **kind):
    """The dense route's personalization: ``shift_alg1_personalized`` for M (K + k_b)^2 <=
    ``MAX_UNKNOWNS`` (RTFA: k_b = 1), beyond it ``shift_alg1_personalized_chain`` on this
    contour (the base re-solved on the chain pencil there, ``solved_couplings``). Measured
    (outside the suite): K = 2, FTFA 9 steps of 0.03 (M (K + k)^2 = 242) on the anti-aligned
    federation of ``tests/test_rounds_shift_alg1.py`` (``anti``), T = 0, 1, 3, 10, within
    0.35 (d = 200) and 0.37 (d = 400) of 4 s.e. + 1 / d of ``simulate_rounds(personalize=...)``
    (6 designs), a nearly aligned federation's prediction up to 7 and 20 such bands away."""
    args = (gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h, tops)
    kb = kind.get("k") if kind["kind"] == "ftfa" else 1
    if gam.size * (K + kb) ** 2 <= MAX_UNKNOWNS:
        return shift_alg1_personalized(*args, solved=solved, **kind)
    c = solved[0]
    if "around" in c:
        # Not "under covariate shift": a shared spectrum's personalization comes here beyond
        # 200 unknowns (``RoundsLimit._personalized_joint``; fuzz42 path F5)
        raise ValueError(f"{'steps' if kind['kind'] == 'ftfa' else 'local_steps'}: "
                         "personalization after Algorithm 1's rounds under a covariance "
                         f"with pooled N < d is covered on the dense pencil, M "
                         f"(K + k)^2 <= {MAX_UNKNOWNS} (RTFA: k = 1; got "
                         f"{gam.size * (K + kb) ** 2}); give fewer steps or local_steps")
    pen = ShiftAlg1Chain(V, c["pooled"], h, gam, p, lam, eta, K, g, zcheck=c["low"] < 0.0)
    C, _, couplings, _ = solved_couplings(pen, c, gam, r, sigma, signal, eta, lam)
    return shift_alg1_personalized_chain(*args, solved=(c, C, couplings), **kind)


def _chain_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h):
    """``shift_alg1_curves`` through the chain pencil (``shift.algorithm1.chain``): its time
    estimate before the edges (``shift.algorithm1.cost``), the same curves; personalization
    after the rounds through ``shift.algorithm1.personalize_chain``."""
    M = gam.size
    scans = 2 if g * lam > 1.0 else 1       # the negative band's window too (``spectrum_edges``)
    t_max = int(np.max(np.where(np.isfinite(rounds), rounds, 0.0)))
    shift_alg1_affordable(M, K, h.size, 40, t_max, scans, least=True)
    memory_check(M, K, h.size, max(40, t_max + 16))
    c = _contour(gam, p, lam, eta, K, g, rounds, V, h, pencil=ShiftAlg1Chain)
    shift_alg1_affordable(M, K, h.size, c["n"], c["t_max"], scans)
    mem = memory_check(M, K, h.size, c["n"], c["n"] <= c["t_max"] + 24)
    H, cross, (C, couplings) = shift_chain_parts(gam, r, sigma, p, signal, lam, eta, K, g, V,
                                                 h, c)
    return _finish(H, cross, c, mem, (gam, r, sigma, p, signal, lam, eta, K, g, rounds), V, h,
                   partial(shift_alg1_personalized_chain, solved=(c, C, couplings)))


def _finish(H, cross, c, mem, setting, V, h, personal):
    """The curves' dict from the two-point functions H (models, 3, metrics, N + 1, 2 N + 1)
    and the single-contour terms ``cross`` (metric, model, target, N + 1) (module docstring,
    step 2); ``personal``: the route's personalization (``shift_alg1_personalized`` or
    ``shift_alg1_personalized_chain`` with its solve)."""
    gam, r, sigma, p, signal, lam, eta, K, g, rounds = setting
    M, z, n = gam.size, c["z"], c["n"]
    Es = V @ h
    # Pooled N < d: client i's tau(Sigma_i P_N) and tau(P_N) (``shift.algorithm1.pooled``).
    held, atom = c.get("held", (np.zeros(M), 0.0))
    extra = {"contraction": c["rho"], "edges": (c["lo"], c["top"]), "atom": atom,
             "nodes": n + (CIRCLE_NODES if "around" in c else 0),
             "contraction_is_bound": c["bound"], "memory": mem}
    rows = [_assemble(H[:, :, [i, M]], cross[i], z, c["w"], rounds, c["finite"], c["over"], gam,
                      r, sigma, p, signal, Es[i], extra, held=(held[i], atom)) for i in range(M)]
    bias = np.stack([x["bias"][i] for i, x in enumerate(rows)])
    var = np.stack([x["variance"][i] for i, x in enumerate(rows)])
    own = [x["local"]() for x in rows]
    own_b = np.stack([b[i] for i, (b, _) in enumerate(own)])
    own_v = np.stack([v[i] for i, (_, v) in enumerate(own)])

    def local(terms=None):
        """(bias, variance), each (M, len(rounds)), of every client's own model after the
        local steps of round T (module docstring)."""
        if terms is not None:
            raise ValueError("personalized_risk: under covariate shift, personalization after "
                             "Algorithm 1's rounds is the curves' 'personalize'")
        return own_b, own_v

    tops = client_ends(V, h, gam)[:, 1]

    def personalize(**kind):
        """(bias, variance) after personalizing the round-T server model
        (``shift.algorithm1.personalize`` or ``personalize_chain``; this contour and solve
        reused)."""
        return personal(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h, tops, **kind)
    personalize.tops = tops         # FTFA's stability per client (``RoundsLimit``)
    return {"bias": bias, "variance": var, "distance": rows[0]["distance"], "local": local,
            "personalize": personalize, **extra}
