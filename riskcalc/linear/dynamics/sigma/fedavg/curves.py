"""FedAvg with K >= 1 local steps under a shared covariance spectrum: the curves (derived here).

Model and risk as ``sigma.fedavg.one_step`` (rows N(0, Sigma), Sigma with spectrum H, risk
E[(w - theta_i)^T Sigma (w - theta_i)]), with K local gradient steps of size eta per round
(``fedavg``, step 1): q(x) = 1 - (1 - eta x)^K, D = sum_j p_j q(S_j), R_T(x) = (1 - (1 - g
x)^T) / x, and (q / s)(x) = eta sum_(k<K) (1 - eta x)^k. From w_0 = 0 ::

    w_T - theta_i = -(I - g D)^T theta_0 + R_T(D) sum_j p_j q(S_j) u_j - u_i
                    + R_T(D) sum_j p_j (q / s)(S_j) X_j^T eps_j / n_j,
    B_i = signal^2 tau(Sigma (I - g D)^(2T)) + sum_j p_j^2 r_j^2 tau(Sigma R q(S_j)^2 R)
          - 2 p_i r_i^2 tau(Sigma R q(S_i)) + r_i^2 tau(Sigma),
    V_i = sum_j p_j^2 sigma_j^2 gamma_j tau(Sigma R (q^2 / s)(S_j) R),     R = R_T(D),

and the distance ||w_T - w_inf||^2 (unweighted) has the same forms with Sigma -> I and
R -> (1 - g D)^T D^+ (the signal part on the range of D). Every trace is a contour integral
(``fedavg``, steps 3-4, the same ellipse around D's nonzero spectrum [a, b], nodes and rule as
``sigma.fedavg.one_step``) of the one-point functions tau(Sigma (z - D)^-1), tau((z - D)^-1) and
tau(Sigma q(S_i) (z - D)^-1) = E_H[s (Ghat_00 - Ghat_(i,K),0)], or a double integral of the
two-point functions tau(Sigma G2 h G1) and tau(G2 h G1) with h = sum_j c_j q(S_j)^2 or
sum_j c_j (q^2 / s)(S_j) (one linear solve per pair of nodes serves both weights), all from
the linear pencil of ``sigma_pencil`` (derivation there). ``pencil_curves`` takes the pencil
and the blocks that read q(S_j) and (q / s)(S_j) off it, so any filter with such a pencil
reuses it (``prox_sigma``: Algorithm 1 with exact prox). The atom of D at 0 and the null
space enter as in ``sigma.fedavg.one_step`` (step 3).

Checks (``tests/test_rounds_sigma_k.py``): Sigma = I against the scalar route of ``fedavg``
(K >= 2), K = 1 against ``sigma.fedavg.one_step``, the fixed point with K = 1 against the finite-M
FedAvg limit under the spectrum, and the literal iteration (``montecarlo.linear.rounds``) at
several d.

The clients' own models after their local steps: ``sigma.fedavg.own`` (rows of an extended pencil
with the same fixed point; dense, so for M K^2 <= ``sigma_pencil.MAX_UNKNOWNS`` only). The
pencil is solved densely (``sigma_pencil``) for M K^2 <= DENSE_UNKNOWNS and through its chain
structure beyond (``sigma_chain``: GMRES in the eigenbasis of the local steps,
``chain_basis``), whose double integrals use their own nodes on the same ellipse: each
variable carries one polynomial of degree <= T_max (R_T or P_T), so ``fedavg._contour`` with
degree 1 (T_max + 16 nodes rather than 2 T_max + 16, as ``algorithm1.curves``), and half the
pairs by symmetry. Refused when its
estimated time (``chain_cost.fedavg_chain_seconds``) exceeds MAX_SECONDS, naming the local_steps,
rounds or clients that would fit: before the edges (counting them as confirmed folds,
``pencil_edges``, step 5) and again before bisecting an edge that is not confirmed.
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart

from riskcalc.linear.dynamics.fedavg import (_contour, contraction, enclosed, round_horizon,
                                             far, moving, settle)
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed, pairs_refused
# DENSE_UNKNOWNS and MAX_PAIRS are defined with the guards that read them before the route
from riskcalc.linear.dynamics.sigma.guards import DENSE_UNKNOWNS, MAX_PAIRS
from riskcalc.linear.dynamics.sigma.fedavg.own_chain import own_models_chain
from riskcalc.linear.dynamics.sigma.fedavg.own import own_models
from riskcalc.linear.dynamics.sigma.chain_cost import (BISECT_SOLVES, EDGE_SOLVES, chain_seconds,
                                                      fedavg_chain_seconds)
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.sigma_chain import ChainPencil
from riskcalc.linear.dynamics.sigma.sigma_pencil import (MAX_UNKNOWNS, SigmaPencil, stable_top,
                                                         symmetric_pairs)

#: Most estimated seconds (``chain_cost.fedavg_chain_seconds``) of the chain route by default
#: (``budget``: rounds_limit's max_seconds).
MAX_SECONDS = 600.0


def _affordable(M, K, atoms, nodes, t_max, edges=EDGE_SOLVES, seconds=chain_seconds):
    """Refuse (ValueError) when the chain route's estimated time with ``nodes`` double-contour
    nodes (at least ``t_max`` + 16: more when the round map's spectrum comes near 0) and
    ``edges`` node solves of the edges exceeds MAX_SECONDS, naming each change that alone
    would fit. ``seconds``: the estimate (``chain_cost``; FedAvg's routes here pass
    ``fedavg_chain_seconds``, the covariate shift's chain keeps ``chain_seconds``)."""
    limit = allowed(MAX_SECONDS)
    sec = seconds(M, K, atoms, nodes, edges)
    if sec <= limit:
        return
    fits = []
    k = budget.largest(2, K, lambda k: seconds(M, k, atoms, nodes, edges) <= limit)
    if k is not None:
        fits.append(f"local_steps <= {k}")
    if nodes <= t_max + 16:          # the nodes follow the rounds (not the spectrum's gap)
        n = budget.largest(16, nodes, lambda n: seconds(M, K, atoms, n, edges) <= limit)
        if n is not None:
            fits.append(f"rounds up to about {max(0, n - 16)}")
    m = budget.largest(1, M, lambda m: seconds(m, K, atoms, nodes, edges) <= limit)
    if m is not None:
        fits.append(f"clients <= {m}")
    raise ValueError(
        f"spectrum with local_steps = {K}, {M} clients and rounds up to {t_max}: the exact "
        f"route ({nodes} double-contour nodes) would take about {sec:.3g} s here (more than "
        f"{limit:.0f} s; cost ~ clients local_steps^2 nodes^2 + clients "
        "local_steps^3 nodes, nodes >= rounds + 16); "
        "give " + (", or ".join(fits) if fits else "fewer local_steps and rounds")
        + f", {MORE_TIME}")


def _memory(pen, n, n2=None, nf=2):
    """Refuse (ValueError, ``budget.check_memory``) a contour of ``n`` nodes (the chain's
    double contour: ``n2``; before the edges the fewest, 2 T_max + 16 and T_max + 16) whose
    estimated peak memory (``memory``: fitted to measured peaks) exceeds the memory budget
    (measured: M = 20, K = 50, two atoms, rounds up to 70 were refused here after 215 s of
    edges before this check came first)."""
    a = pen.s.size
    if isinstance(pen, ChainPencil):
        def need(m, k, x):          # x: the double contour's nodes (the one-point's 2 x - 16)
            return memory.estimate("fedavg_chain", m, k, a, n if x == n2 else 2 * x - 16, x,
                                   nf)
        what = (f"FedAvg's chain route with {pen.M} clients, local_steps = {pen.K}, {a} atoms "
                f"and {n} + {n2} contour nodes")
        return budget.check_memory(need, (pen.M, pen.K, n2), what)
    blocks = pen.n - pen.M * pen.K          # the pencil's blocks besides the clients' K each

    def need(m, k, x):
        return memory.estimate("dense", m * k * k, blocks + m * k, a, x, M=m, nf=2, rank=m)
    what = f"the dense pencil of {pen.n} blocks with {a} atoms and {n} contour nodes"
    return budget.check_memory(need, (pen.M, pen.K, n), what, nodes_follow_rounds=False)


def local_stability(spectrum, gam, eta):
    """The largest eta (top of client j's sample spectrum) over the clients: local gradient
    descent is stable when it is at most 2."""
    return float(eta * stable_top(spectrum.atoms, spectrum.weights, gam).max())


def fedavg_sigma_k_curves(gam, r, sigma, p, signal, eta, K, g, rounds, spectrum, route="auto"):
    """Bias, variance and distance to the fixed point of every client at every T of
    ``rounds`` for FedAvg with K local steps of size ``eta`` under ``spectrum`` (module
    docstring); the dict of ``fedavg.round_map_curves`` (``local`` refuses).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, eta, g : float
    K : int
        Local steps >= 1.
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
        H, uniform signal directions.
    """
    dense = route == "dense" or (route == "auto" and len(gam) * K * K <= DENSE_UNKNOWNS)
    # Stability first: a diverging call is refused for its step size, not for its time.
    top = stable_top(spectrum.atoms, spectrum.weights, gam)
    if K >= 2 and np.any(eta * top > 2.0):
        raise ValueError("step_size: local gradient descent diverges on a client under the "
                         f"spectrum (step_size times the top of its sample spectrum = "
                         f"{shown_apart(eta * top.max(), 2.0)} > 2)")
    if not dense:       # before the edges: the contour has at least 2 T_max + 16 nodes
        t_max = int(np.max(np.where(np.isfinite(rounds), rounds, 0.0)))
        _affordable(len(gam), K, spectrum.atoms.size, t_max + 16, t_max,
                    seconds=fedavg_chain_seconds)
    pen = (SigmaPencil if dense else ChainPencil)(spectrum.atoms, spectrum.weights, gam, p,
                                                  eta, K)
    if not dense:       # ``pencil_curves``' memory check with the fewest nodes, before the edges
        _memory(pen, 2 * t_max + 16, t_max + 16)
    # Block coefficients (sigma_pencil, step 3): q(S_j) G_00 = sum_b v_j[b] G_(b, 0) with
    # v_j = e_0 - e_(j,K); (q / s)(S_j) = eta sum_(k<K) A_j^k from wn_j on the transposed side.
    last = pen.rows[:, -1]
    v = np.zeros((pen.M, pen.n))
    v[:, 0], v[np.arange(pen.M), last] = 1.0, -1.0
    wn = np.zeros((pen.M, pen.n))
    wn[:, 0] = eta
    for j in range(pen.M):
        wn[j, pen.rows[j, :-1]] = eta
    def own(c):
        if pen.M * K * K > MAX_UNKNOWNS:         # beyond the dense extended pencil
            return own_models_chain(pen, c, gam, r, sigma, p, signal, rounds)
        return own_models(pen, c, gam, r, sigma, p, signal, rounds)
    # The edges as folds of the real branch, confirmed by the density test (``sigma_pencil``,
    # step 5; measured M = 10, K = 50: about 5 times cheaper than the bisection).
    # An edge that is not confirmed is bisected: the chain route's estimate counts that
    # first (refused if it then exceeds MAX_SECONDS).
    fallback = None if dense else (lambda n: _affordable(
        pen.M, K, spectrum.atoms.size, t_max + 16, t_max, EDGE_SOLVES + n * BISECT_SOLVES,
        fedavg_chain_seconds))
    return pencil_curves(pen, edges(pen, top, fold=True, fallback=fallback), g, gam, r, sigma,
                         p, signal, rounds, v, wn, own_models=own)


def pencil_curves(pen, spectrum_edges, g, gam, r, sigma, p, signal, rounds, v, wn, own_models=None,
                  before_solve=None):
    """The curves of the module docstring from a pencil ``pen`` (``SigmaPencil`` or one with
    the same interface) whose block (0, 0) of the inverse is (z - D)^-1, D = sum_j p_j q(S_j),
    and the round map w <- (I - g D) w + g sum_j p_j (q / s)(S_j) b_j.

    Parameters
    ----------
    pen : SigmaPencil
    spectrum_edges : tuple
        (a, b, mu0) of ``pencil_edges.edges``.
    g : float
        The global step of the round map.
    gam, r, sigma, p : ndarray (M,)
    signal : float
    rounds : ndarray of float
    v, wn : ndarray (M, n)
        Block coefficients: q(S_j) G_00 = sum_b v_j[b] G_(b, 0), and (G^T)_(0, b) summed
        with wn_j gives G_00 (q / s)(S_j) (``sigma_pencil``, step 3).
    own_models : callable, optional
        The clients' own models: ``own_models(contour)`` returns their (bias, variance), each (M,
        len(rounds)), from ``contour``, a dict of the solved nodes (upper half ``one``, full
        ``full``: (Chat, Ghat); ``full`` None on the chain pencil), their values z, the weights
        w (upper half) and Wf (full), the quadratures ``one`` and ``double``, ``finite`` and g;
        the result's ``local`` refuses without it.
    before_solve : callable, optional
        ``before_solve(pen, nodes)`` with the number of the contour's upper nodes
        (``contour["z"]``'s size), before any node is solved: a caller's own checks of the work
        it will do on them (it raises to refuse; as ``shift.curves.shift_k_curves``').
    """
    a, b, mu0 = spectrum_edges
    if not a > 1e-9 * b:
        raise ValueError("gamma: the round map's spectrum reaches 0 to rounding (pooled N = d: "
                         "sum_j min(1, 1/gamma_j) near 1); move gamma off the threshold")
    rho = contraction(a, b, g)
    settled, over, finite, t_max = round_horizon(rho, rounds)
    c0, hh, t, n = _contour(a, b, g, rho, t_max)
    chain = isinstance(pen, ChainPencil)
    # The chain's double integrals on their own ellipse nodes: each variable carries one
    # polynomial of degree <= T_max (R_T, P_T), so degree 1 in ``_contour`` (as
    # ``algorithm1.curves``; the same ellipse, about half the nodes for long horizons).
    n2 = _contour(a, b, g, rho, t_max, degree=1)[3] if chain else n
    # The pairs solved are those of n2's nodes (the chain's 400 rounds: 8.7e4 pairs, not the
    # 3.3e5 of the one-point contour's 816 nodes, which refused it).
    if (n2 // 2) * n2 > MAX_PAIRS:
        raise pairs_refused("spectrum", n2 // 2 * n2, MAX_PAIRS, a, b, mu0, t_max, gam,
                            " with local steps")
    wu, wv = p ** 2 * r ** 2, p ** 2 * sigma ** 2 * gam
    need = _memory(pen, n, n2, 2 if np.any(wv > 0) else 1)
    if chain:
        _affordable(pen.M, pen.K, pen.s.size, n2, t_max, seconds=fedavg_chain_seconds)
    if before_solve is not None:
        before_solve(pen, n // 2)

    def solved(m):
        """Nodes, (Chat, Ghat) and weights of the ellipse with m nodes (upper half solved)."""
        theta = np.pi * (np.arange(m // 2) + 0.5) / (m // 2)
        z = c0 + hh * np.cosh(t) * np.cos(theta) + 1j * hh * np.sinh(t) * np.sin(theta)
        # Each node is followed down from far above it (an ellipse shrinking from far out
        # would sweep its left end across the atom of D at 0, where the continuation can
        # change branch).
        ys = list(4.0 * b * np.geomspace(1.0, 1e-3 * np.min(z.imag) / b, 24)) + [0.0]
        _, C, G = pen.solve_arc(z, ys) if chain else pen.solve(lambda y: z + 1j * y, ys)
        w = (-hh * np.cosh(t) * np.sin(theta) + 1j * hh * np.sinh(t) * np.cos(theta)) * (2.0 / m)
        return z, C, G, w

    z, C, G, w = solved(n)
    s, h = pen.s, pen.h
    Es = float(h @ s)
    col = pen.column0(G)                                                 # Ghat[:, 0]
    g_sig = col[:, :, 0] @ (h * s)                                       # tau(Sigma G)
    g_one = col[:, :, 0] @ h                                             # tau(G)
    # E.g. Algorithm 1's exact prox at small lam: a narrow band below 1 apart from the bulk.
    enclosed(float((w @ g_one).imag), mu0, (a, b), "rounds limit with a spectrum")
    own = np.einsum("a,nab,mb->nm", h * s, col, v)             # tau(Sigma q(S_m) G), (N, M)
    # Couplings F = sum_j c_j w_j v_j^T of the two-point functions (sigma_pencil, step 3).
    couplings = [(wu, v, v)] + ([(wv, wn, v)] if np.any(wv > 0) else [])
    Wf = np.concatenate([w / 2j, (w / 2j).conj()])
    if n2 == n:
        z2, w2, Wf2, one2 = z, w, Wf, (C, G)
    else:
        z2, C2, G2, w2 = solved(n2)
        one2 = (C2, G2)
        Wf2 = np.concatenate([w2 / 2j, (w2 / 2j).conj()])
    # (f, weight, n2/2, n2); half the pairs solved (``two_point``'s ``symmetric``: both
    # couplings read tau(Lam G2 h G1) with h a function of the S_j), by the chain and by the
    # pencils with ``SigmaPencil``'s own solve (the covariate shift's read other metrics).
    # The nodes joined with their conjugates here only (freed after it: the own models join
    # theirs when asked; ``budget``, memory).
    sym = chain or symmetric_pairs(pen)
    H = pen.two_point(one2, pen.conj_join(one2), couplings, **({"symmetric": True} if sym else {}))
    Tcol = np.where(finite, rounds, 0.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        def filters(x):
            power = (1.0 - g * x) ** Tcol
            return (np.where(finite[:, None], power ** 2, 0.0),
                    np.where(finite[:, None], (1.0 - power) / x, 1.0 / x),
                    np.where(finite[:, None], power / x, 0.0))

        A1, R1, _ = filters(z)
        _, R1d, P1d = filters(z2)
        _, R2d, P2d = filters(np.concatenate([z2, z2.conj()]))

        def one(F, X):       # (1 / 2 pi i) oint F X dz over the full contour
            return ((F * w) @ X.T).imag

        def double(F1, F2, f, w=w, Wf=Wf):
            left = (F1 * (w / 2j)) @ f
            return 2.0 * np.sum(left * (F2 * Wf), axis=1).real

        def double2(F1, F2, f):      # on the double contour's nodes
            return double(F1, F2, f, w2, Wf2)

        signal_term = Es + one(A1 - 1.0, g_sig[None, :])[:, 0]
        bias = (signal ** 2 * signal_term + double2(R1d, R2d, H[0, 0]))[None, :] \
            - 2.0 * (p * r ** 2)[:, None] * one(R1, own.T).T + (r ** 2 * Es)[:, None]
        variance = double2(R1d, R2d, H[1, 0]) if len(couplings) > 1 else np.zeros(len(rounds))
        dist = signal ** 2 * one(A1, g_one[None, :])[:, 0] + double2(P1d, P2d, H[0, 1])
        if len(couplings) > 1:
            dist = dist + double2(P1d, P2d, H[1, 1])
    var = np.broadcast_to(variance[None, :], bias.shape).copy()
    big = np.isfinite(rounds) & (rounds > over)
    noisy, moves = bool(np.any((p > 0) & (sigma > 0))), moving(signal, r)
    dist = far(dist, big, moves or noisy)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * Es + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "rounds limit with a spectrum",
                       moves=moves)

    def local(terms=None):
        if own_models is None or terms is not None:
            raise ValueError("spectrum: personalization from the round-T server model "
                             "(personalized_risk) along the rounds is available for Sigma = I "
                             "only (with a covariance spectrum: the clients' own models, "
                             "local_risk, only)")
        # The conjugates joined for the dense pencils' own models only (``prox_sigma``; the
        # chain's read the double contour's nodes, ``one2``; ``sigma.fedavg.own`` Chat only).
        ob, ov = own_models({"one": (C, G), "full": None if chain else pen.conj_join((C, G)),
                             "z": z, "w": w, "Wf": Wf,
                             "one_q": one, "double_q": double, "finite": finite, "g": g,
                             "b": b, "z2": z2, "w2": w2, "Wf2": Wf2, "one2": one2})
        return settle(ob, ov, big, noisy | (sigma > 0), scale,
                      "rounds limit with a spectrum, the clients' own models", moves=moves)

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": mu0, "nodes": n, "local": local, "memory": need}
