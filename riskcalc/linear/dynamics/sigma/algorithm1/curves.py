"""Paper 004's Algorithm 1 with K warm-started local steps under a shared covariance spectrum:
the curves of the server model and of the clients' own models (derived here).

Model as ``sigma.fedavg.curves`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio
gamma_j, Sigma with spectrum H, theta_j = theta_0 + u_j uniform in direction, b_j = S_j theta_j
+ n_j, n_j = X_j^T eps_j / n_j of covariance sigma_j^2 gamma_j S_j / d). Paper 004
(``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11, as ``algorithm1.curves`` (Sigma = I):
K gradient steps of size eta on h_j(v; w) = f_j(v) + lam/2 ||v - w||^2 from the client's
previous model, v <- B_j v + eta (lam w + b_j), B_j = (1 - eta lam) I - eta S_j, then the
server step w' = (1 - g lam) w + g lam sum_j p_j v_j'. Every model starts at 0.

1. Errors. theta_0 in every block is the fixed point of the round map when u_j = 0 and
   eps = 0, so the error X_T - theta_0 of the state X = (w, v_1, .., v_M) follows the round map
   Phi with the source of f_j = S_j u_j + n_j, from -theta_0 in every block:
   e_T = Phi^T e_0 + P_T(Phi) beta_f, P_T(z) = (z^T - 1) / (z - 1), and with (1 / 2 pi i) oint
   around the whole spectrum of Phi, e_T = oint z^T (z - Phi)^-1 e_0 + oint P_T (z - Phi)^-1
   beta_f. T = inf (spectrum inside the unit disc): e_inf = (1 - Phi)^-1 beta_f, the
   resolvent at the single real point z = 1 outside the spectrum.
2. Linearization. (z - Phi)^-1 is the state part of the inverse of the pencil L with
   n = 1 + M (K + 2) blocks: 0 (the server), and per client a state s_j, a copy c_j and a chain
   (j, 1..K) (``sigma.algorithm1.pencil.Alg1Pencil``) ::

       row 0:     (z - 1 + g lam) x_0 - g lam sum_j p_j x_(j,K)            = y_0,
       row s_j:   z x_(s_j) - x_(j,K)                                       = y_(s_j),
       row c_j:   x_(s_j) - x_(c_j)                                         = y_(c_j),
       row (j,k): B_j x_(j,k-1) + eta lam x_0 - x_(j,k)                     = y_(j,k),

   (j, 0) := c_j: with y on the state rows only, x_(j,K) = v_j' of the state x, and the rows 0
   and s_j read (z - Phi) x = y. The source beta_f is y_(j,k) = -eta f_j (k = 1..K): the chain
   then adds c(S_j) f_j, c = eta sum_(k<K) B^k. So with Y(a) = sum_b a_b G_(m,b) (row m of
   G = L^-1; m = 0 the server, m = s_i client i's own model) ::

       e_T[m] = oint z^T Y(c_th) theta_0 + sum_j oint P_T Y(cf_j) f_j,
       c_th = -(e_0 + sum_j e_(s_j)),   cf_j = -eta sum_(k=1..K) e_(j,k).

   L = L0(z) + sum_j E_j (x) S_j, E_j = -eta on (r_j, c_j), r_j = ((j,1)..(j,K)), c_j =
   (c_j, (j,1)..(j,K-1)): ``sigma_pencil``'s random structure, so its deterministic equivalent
   (step 2 there: the same Woodbury step per client row) holds with this L0: Ghat(s) = (L0 +
   s sum_j Chat_j)^-1, Chat_j = -eta (I - gamma_j eta tau_j)^-1, tau_j = E_H[s Ghat[c_j, r_j]],
   M K^2 unknowns per node. z sits on the blocks 0 and s_j, so dL/dz = sum over them of
   e_b e_b^T (``sigma.algorithm1.pencil.Alg1Pencil.solve``'s predictor; the fixed point does not
   depend on it).
3. The copy block keeps z out of the chain's first column, so G L = I on the columns c_j,
   (j,1)..(j,K-1) gives, for m not in client j's chain, G_(m,(j,k)) S_j = ((1 - eta lam)
   G_(m,(j,k)) - G_(m,(j,k-1))) / eta, and summed ::

       Y(cf_j) S_j = Y(au_j),   au_j = e_(c_j) + eta lam sum_(k=1..K-1) e_(j,k)
                                       - (1 - eta lam) e_(j,K).

   Hence (tau = tr / d) the risk E[(e_T[m] - u_i)^T Sigma (e_T[m] - u_i)] of model m for
   client i ::

       B = signal^2 oint oint z1^T z2^T tau(Sigma Y1(c_th) Y2(c_th)^T)
           + sum_j r_j^2 oint oint P1 P2 tau(Sigma Y1(au_j) Y2(au_j)^T)
           - 2 r_i^2 oint P tau(Sigma Y(au_i)) + r_i^2 tau(Sigma),
       V = sum_j sigma_j^2 gamma_j oint oint P1 P2 tau(Sigma Y1(au_j) Y2(cf_j)^T),

   (Y_n at z_n). Y1(a) Y2(a')^T is the block (m, m) of G(z1) a a'^T G(z2)^T: the two-point
   function of ``sigma_pencil`` (step 3) on the transposed pencil (rows and columns of E_j
   swapped, L0^T, Chat_j transposed), as ``prox_sigma`` and ``sigma.fedavg.own`` use it; one linear
   solve per pair of nodes serves the server's and every own model's couplings, the
   Sigma-weighted risk and the unweighted distance ||w_T - w_inf||^2. The node z = 1 joins
   both node sets: T = inf is the pair (1, 1) (weights: the point mass at 1), and w_T - w_inf
   = oint z^T Y(c_th) theta_0 + sum_j (oint P_T Y(cf_j) - Y(1; cf_j)) f_j pairs contour and
   point (``quad``). No constant term survives: z^T and P_T are polynomials, so the contour
   only has to enclose Phi's spectrum (z = 1 may lie inside: no pole is integrated).
4. Spectrum and contour. For eta (top_j + lam) <= 1 (top_j: the top of client j's sample
   spectrum under H; paper 004 Thm 2's condition) a_j = B_j^K >= 0, c_j > 0, and the scaling
   of ``algorithm1.rate`` (v_j -> (g p_j a_j / c_j)^(1/2) v_j, functions of S_j) makes Phi
   symmetric: its spectrum is real, in [min(0, 1 - g lam), 1) when the pooled samples span
   (sum_j min(1, 1 / gamma_j) >= 1), the clients' eigenvalues with no server part in [0, sup
   a], and G_00 is a compressed resolvent of a symmetric matrix (Im tau(Sigma G_00) < 0 above
   the axis). Its edges (the top, and the bottom when negative) come from the density scan of
   ``pencil_edges.edges`` (Im tau(Sigma G_00(x + i y)) proportional to y or not) on windows
   from Weyl's bounds (``sigma.algorithm1.pencil._window``): by the Schur complement of
   ``algorithm1.rate`` z is an eigenvalue iff zeta(z) = (z - 1 + g lam) / (g lam) is one of
   Dhat_z = sum_j p_j psi_z(S_j), psi_z(s) = lam z c(s) / (z - a(s)), whose spectrum lies
   between sum_j p_j min psi_z and sum_j p_j max psi_z over the S_j's spectra; psi_z decreases in z
   for z > sup a and for z < 0, so the top lies between the roots of zeta = either bound above
   sup a, and the negative band (g lam > 1 only) between those below 0, a band that can be
   far narrower than the axis (width 0.03 at g lam = 5, measured) and is scanned on its own
   window. The top window is scanned in the reflected variable x = z_b - z (edges refines the
   scan's first point inside, and the spectrum continues below the window). Where a >= 0 the
   refinement predicts each edge as the fold of the real branch of tau(Sigma G_00) and
   confirms it by the density test (``pencil_edges``, step 5; ``spectrum_edges``). The contraction
   is max(top, -bottom). The contour: the ellipse with foci min(0, bottom) and top, its
   parameter t <= 1 and below the one where abs(z)^(2 T_max) exceeds ``fedavg.AMPLIFICATION``
   rho^(2 T_max) (``fedavg._contour``'s rule), max(T_max + 16, 40 / t) nodes (degree T in
   each variable), each node followed down from far above it.
   Larger local steps, 1 / (top + lam) < eta < 2 / (top + lam) (top the largest top_j), as in
   ``algorithm1.rate``'s docstring: even K keeps a_j >= 0 and the scaling; odd K with g lam <= 1
   makes a_j negative on the top of the spectra, but det(z - Phi) = det(z - E - B B^T) (E =
   diag(0, a_j), B stacking sqrt(1 - g lam) I and (g lam^2 p_j c_j)^(1/2), functions of the
   S_j, real), so the spectrum is real and inside [low, top], low = min(0, inf a); the top
   window above max(0, sup a) holds (f / z = (1 - (1 - g lam) / z) / (g lam) - sum_j p_j
   lam c / (z - a) bounds increase in z there); the bottom is not computed: the contour's left
   focus is low and the contraction max(top, -low), a bound when top < -low
   (``contraction_is_bound``). G_00 = (1 + B^T (z - E - B B^T)^-1 B) / z then has negative
   residues at negative eigenvalues, so the branch check is Im tau(Sigma z G_00) < 0 above the
   axis. Odd K with g lam > 1: complex eigenvalues, circles (``sigma.algorithm1.circles``).

Checks (``tests/test_rounds_sigma_alg1k.py``): Sigma = I against ``algorithm1.curves``, many
local steps against ``prox_sigma`` (exact prox), T = inf against ``clients_limit("pfedme")``,
and the literal iteration (``montecarlo.linear.rounds``) at two d. M K^2 beyond
``sigma_pencil.MAX_UNKNOWNS``: ``sigma.algorithm1.chain``'s pencil (``route``), the same curves.
Personalization from the round-T server model: ``algorithm1.personalize`` (the curves'
``personalize``, reusing their contour and solve); the contour machinery: ``algorithm1.contour``.
Pooled samples that do not span R^d (an eigenvalue 1 of Phi on their common null space):
``sigma.algorithm1.pooled`` (the contour around z = 1, T = inf from a circle there).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import far, moving, round_horizon, settle
from riskcalc.linear.dynamics.sigma.algorithm1.contour import (contour, dense_solve,
                                                               dense_vectors, quadrature)
from riskcalc.linear.dynamics.sigma.algorithm1.personalize import algorithm1_personalized_sigma
from riskcalc.linear.dynamics.sigma.algorithm1.cost import _affordable, memory_check
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain, chain_parts
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import (CIRCLE_NODES, at_one,
                                                              check_masses, one_client_unsolved,
                                                              pooled_contour, ring_mean)
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.sigma.fedavg.curves import MAX_PAIRS
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS

#: Most (node pairs) x (M K^2)^3 of the two-point solves (measured, one BLAS thread, loaded
#: 2-core machine: M = 10, K = 4, T up to 200 is 9.7e10 of it and 99 s of CPU in all).
MAX_WORK = 1e11


def algorithm1_sigma_k_curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds, spectrum,
                              route="auto"):
    """Bias, variance and distance to the fixed point of the server model, and (``local()``)
    bias and variance of every client's own model, of paper 004's Algorithm 1 with K local
    steps (``004_98172ed3646eef14.txt``, eqs. 10-11) at every T of ``rounds`` under
    ``spectrum`` (module docstring); the dict of ``algorithm1.curves.curves``.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, lam, eta, g : float
        ||theta_0||, the prox penalty, the local step and the paper's global step gamma.
    K : int
        Local steps >= 1.
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
        H, uniform signal directions.
    route : {"auto", "dense", "chain"}
        The pencil's solves: dense (M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``) or through its
        client structure (``sigma.algorithm1.chain``); "auto" takes the dense one where it applies.
        The same curves either way (the route changes the cost, not the numbers).

    Raises
    ------
    ValueError
        Outside the scope (step_size, gamma) or the size limits (local_steps, clients, rounds).
    """
    if route not in ("auto", "dense", "chain"):
        raise ValueError(f"route must be 'auto', 'dense' or 'chain', got {route!r}")
    M = gam.size
    chain = route == "chain" or (route == "auto" and M * K * K > MAX_UNKNOWNS)
    atoms, hw = spectrum.atoms, spectrum.weights
    scans = 2 if g * lam > 1.0 else 1       # the negative band's window too (``spectrum_edges``)
    if pooled_atom(gam) > 0.0:
        return _pooled(gam, r, sigma, p, signal, lam, eta, K, g, rounds, spectrum, chain)
    if chain:
        # Before the edge scans: the fewest nodes any contour takes (40, ``_contour_nodes``;
        # for the memory T_max + 16 too).
        t_max = int(np.max(np.where(np.isfinite(rounds), rounds, 0.0)))
        _affordable(M, K, atoms.size, 40, t_max, scans, least=True)
        memory_check(M, K, atoms.size, max(40, t_max + 16))
    else:
        Alg1Pencil(atoms, hw, gam, p, lam, eta, K, g)          # the size check first
    c = contour(gam, p, lam, eta, K, g, rounds, spectrum, Alg1Chain if chain else Alg1Pencil)
    H, cross, solved = (chain_parts if chain else _dense_parts)(
        gam, r, sigma, p, signal, lam, eta, K, g, spectrum, c, scans)

    def personalize(**kind):
        """(bias, variance) after personalizing the round-T server model
        (``algorithm1.personalize``; the dense route's contour and solve reused)."""
        return algorithm1_personalized_sigma(gam, r, sigma, p, signal, lam, eta, K, g, rounds,
                                             spectrum, solved=solved and (c, *solved), **kind)
    return _assemble(H, cross, c["z"], c["w"], rounds, c["finite"], c["over"], gam, r, sigma, p,
                     signal, float(hw @ atoms), {
                         "contraction": c["rho"], "edges": (c["lo"], c["top"]), "atom": 0.0,
                         "nodes": c["n"], "personalize": personalize,
                         "contraction_is_bound": c["bound"], "memory": c.get("memory")})


def _pooled(gam, r, sigma, p, signal, lam, eta, K, g, rounds, spectrum, chain):
    """The curves' dict where the pooled samples do not span (``sigma.algorithm1.pooled``):
    the dense pencil on its contour around z = 1 and its circle there."""
    atoms = spectrum.atoms
    if chain:       # as the spanning case's chain route: the least cost before the edges
        t_max = int(np.max(np.where(np.isfinite(rounds), rounds, 0.0)))
        _affordable(gam.size, K, atoms.size, 40, t_max, 1, least=True)
        memory_check(gam.size, K, atoms.size, max(40, t_max + 16))
    else:
        Alg1Pencil(atoms, spectrum.weights, gam, p, lam, eta, K, g)          # the size check
    pencil = Alg1Chain if chain else Alg1Pencil
    c = pooled_contour(gam, p, lam, eta, K, g, rounds, spectrum, pencil)
    c["pencil"] = pencil
    try:
        H, cross, solved = (chain_parts if chain else _dense_parts)(
            gam, r, sigma, p, signal, lam, eta, K, g, spectrum, c, 1)
    except SolverError as exc:
        if gam.size > 1:
            raise
        one_client_unsolved(exc, gam, lam, eta, g, c["top"])

    def personalize(**kind):
        """(bias, variance) after personalizing the round-T server model (as above)."""
        return algorithm1_personalized_sigma(gam, r, sigma, p, signal, lam, eta, K, g, rounds,
                                             spectrum, solved=solved and (c, *solved), **kind)
    return _assemble(H, cross, c["z"], c["w"], rounds, c["finite"], c["over"], gam, r, sigma, p,
                     signal, float(spectrum.weights @ spectrum.atoms), {
                         "contraction": c["rho"], "edges": (c["lo"], c["top"]),
                         "atom": c["held"][1], "nodes": c["n"] + CIRCLE_NODES,
                         "personalize": personalize, "contraction_is_bound": False,
                         "memory": c.get("memory")}, held=c["held"])


def _settled_from(rho) -> str:
    """The rounds that answer past the refused ones: from where rho^T < 1e-16 the curve has
    settled to its fixed point (``fedavg.round_horizon``) and needs no contour nodes (T = 1000
    and 2000 were refused 'give fewer rounds' where T = 5000 answered: gamma (0.5, 2),
    two-point:1,2,0.5, K = 2, step 0.05, lam 1; fuzz42 path F12)."""
    if not rho < 1.0:
        return ""
    return (f", or rounds from T = {int(np.ceil(round_horizon(rho, np.zeros(1))[0]))} on "
            "(the curve has settled to rounding there)")


def _dense_parts(gam, r, sigma, p, signal, lam, eta, K, g, spectrum, c, scans):
    """The two-point functions H (M + 1, 3, 2, N + 1, 2 N + 1) of the three couplings for the
    server and every own model, the single-contour terms tau(Sigma Y(au_i)) (M + 1, M, N + 1)
    at the upper nodes z (N,) and z = 1, through the dense pencil (module docstring, step 3),
    and its solution (Chat, Ghat) there; where the pooled samples do not span, z = 1 the mean
    over the circle ``c["around"]`` (``sigma.algorithm1.pooled.at_one``)."""
    M, z, n, t_max = gam.size, c["z"], c["n"], c["t_max"]
    atoms, hw = spectrum.atoms, spectrum.weights
    pen = c["pencil"](atoms, hw, gam, p, lam, eta, K, g)
    P = len(c.get("around", [1.0]))            # the point z = 1, or the circle's upper nodes
    pairs, size = (n // 2 + P) * (n + 2 * P - (P == 1)), M * K * K
    if pairs > MAX_PAIRS or pairs * size ** 3 > MAX_WORK:
        raise ValueError(f"spectrum: Algorithm 1's curves with {M} clients, local_steps = {K} "
                         f"and rounds up to {t_max} need {pairs:.3g} contour node pairs, each a "
                         f"linear solve of M K^2 = {size} unknowns (at most {MAX_PAIRS:.0g} "
                         f"pairs and {MAX_WORK:.0g} pairs x (M K^2)^3); give fewer rounds, "
                         "local_steps or clients" + _settled_from(c["rho"]))
    c["memory"] = budget.check_memory(
        lambda m, k, x: memory.estimate("dense", m * k * k, 1 + m * (k + 2), atoms.size, x,
                                        M=m, nf=3 * (m + 1), rank=m),
        (M, K, n), f"Algorithm 1's dense pencil of {pen.n} blocks with {atoms.size} atoms and "
        f"{n} contour nodes", n <= t_max + 24)
    C, G = dense_solve(pen, c)
    if P > 1:
        check_masses(pen, G, c, float(hw @ atoms), (1.0 - eta * lam) ** K, g * lam)
    s, h = pen.s, pen.h
    c_th, cf, au = dense_vectors(pen, eta, lam)
    models = np.concatenate([[0], pen.state])          # the server, then the own models
    couplings = []
    for m in models:
        couplings += [(r ** 2, au, au, (m, m)), (sigma ** 2 * gam, au, cf, (m, m)),
                      ([signal ** 2], c_th[None, :], c_th[None, :], (m, m))]
    pent = Alg1Pencil(atoms, hw, gam, p, lam, eta, K, g, transposed=True)
    N = z.size
    # The full contour (upper, then conjugates), then z = 1 or the full circle around it.
    full = np.r_[0:N, 0:N, N] if P == 1 else np.r_[0:N, 0:N, N:N + P, N:N + P]
    conj = np.r_[np.zeros(N), np.ones(N), 0].astype(bool) if P == 1 else np.r_[
        np.zeros(N), np.ones(N), np.zeros(P), np.ones(P)].astype(bool)
    Cf, Gf = C[full], G[full]
    Cf[conj], Gf[conj] = Cf[conj].conj(), Gf[conj].conj()
    H = pent.two_point((C.swapaxes(-1, -2), G.swapaxes(-1, -2)),
                       (Cf.swapaxes(-1, -2), Gf.swapaxes(-1, -2)), couplings)
    H = H.reshape(M + 1, 3, 2, N + P, full.size)
    # tau(Sigma Y(au_i)) of each model row at every node (upper half and z = 1).
    cross = np.stack([np.einsum("a,nab,ib->in", h * s, G[:, :, m, :], au) for m in models])
    if P > 1:
        H, cross = at_one(H, N, P), ring_mean(cross, N)
    return H, cross, (C, G)


def _assemble(H, cross, z, w, rounds, finite, over, gam, r, sigma, p, signal, Es, extra,
              held=(0.0, 0.0)):
    """The curves' dict from the two-point functions and single-contour terms of either route
    (``_dense_parts``, ``sigma.algorithm1.chain.chain_parts``) on the contour z (N,) with weights w:
    the quadrature of the module docstring (step 3) for every T, the settled tails and the
    fields of ``extra``; ``held`` (tau(Sigma P_N), tau(P_N)) of the pooled null space N, whose
    pole z = 1 the contour encloses (``sigma.algorithm1.pooled``, steps 2 and 4)."""
    M = gam.size
    q = quadrature(z, w, rounds, finite)
    pw1, P1, pw2, P2, inf, quad = q.pw1, q.P1, q.pw2, q.P2, q.inf, q.double
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        bias, var = np.empty((M + 1, M, len(rounds))), np.empty((M + 1, M, len(rounds)))
        for k in range(M + 1):       # model k for every client i (own models: i = k - 1)
            Hu, Hn, Ht = H[k, :, 0]
            one = q.single(P1, inf, cross[k].T)
            # T = inf: the theta_0 part's residue at z = 1 (held[0]; 0 when pooled N >= d).
            bias[k] = (quad(pw1, 0.0, pw2, 0.0, Ht) + quad(P1, inf, P2, inf, Hu)
                       + signal ** 2 * held[0] * inf)[None, :] \
                - 2.0 * (r ** 2)[:, None] * one.T + (r ** 2 * Es)[:, None]
            var[k] = quad(P1, inf, P2, inf, Hn)[None, :]
        # w_T - w_inf = oint z^T Y(c_th) theta_0 + sum_j (oint P_T Y(cf_j) - Y(1; cf_j)) f_j.
        Hu, Hn, Ht = H[0, :, 1]
        dc = -q.fin
        dist = (quad(pw1, 0.0, pw2, 0.0, Ht) - signal ** 2 * held[1] * q.fin
                + quad(P1, dc, P2, dc, Hu) + quad(P1, dc, P2, dc, Hn))
    own_b = np.stack([bias[1 + i, i] for i in range(M)])
    own_v = np.stack([var[1 + i, i] for i in range(M)])
    zero = rounds == 0
    for b_, v_ in ((bias[0], var[0]), (own_b, own_v)):
        b_[:, zero], v_[:, zero] = ((signal ** 2 + r ** 2) * Es)[:, None], 0.0
    big = np.isfinite(rounds) & (rounds > over)
    noisy, moves = bool(np.any((p > 0) & (sigma > 0))), moving(signal, r)
    dist = far(dist, big, moves or noisy)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * Es + 1e-300
    sb, sv = settle(bias[0], var[0], big, noisy, scale,
                    "Algorithm 1's curves with a spectrum", moves=moves)
    ob, ov = settle(own_b, own_v, big, noisy | (sigma > 0), scale,
                    "Algorithm 1's curves with a spectrum, the clients' own models", moves=moves)

    def local(terms=None):
        """(bias, variance), each (M, len(rounds)), of every client's own model after the
        local steps of round T (module docstring, step 3)."""
        if terms is not None:
            raise ValueError("personalized_risk: under a spectrum, personalization after "
                             "Algorithm 1's rounds is the curves' 'personalize'")
        return ob, ov

    return {"bias": sb, "variance": sv, "distance": np.maximum(dist, 0.0), "local": local,
            **extra}
