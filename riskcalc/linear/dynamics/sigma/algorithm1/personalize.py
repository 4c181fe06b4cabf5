"""Personalization (FTFA, RTFA) from the round-T server model of paper 004's Algorithm 1 with K
warm-started local steps under a shared covariance spectrum (derived here).

Model and notation as ``sigma.algorithm1.curves`` (its pencil ``Alg1Pencil``, the errors of the
state, e_T[m] = oint z^T Y_m(c_th) theta_0 + sum_j oint P_T Y_m(cf_j) f_j with f_j = S_j u_j +
n_j, Y_m(a) = sum_b a_b G_(m,b), and Y_m(cf_j) S_j = Y_m(au_j)). Client i personalizes the
server model w_T with a filter of its own S_i (``sigma.personalize_sigma``, paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 (FTFA: k steps of size eta') and Sec. 3.2 (RTFA:
the ridge lam')): v_i = F_i w_T + (pi / s)_i b_i, (pi / s)_i S_i = I - F_i, so

    v_i - theta_i = F_i e_T[0] - F_i u_i + (pi / s)_i n_i.

1. Pencil. ``personal.pencil.PersonalPencil`` on ``Alg1Pencil``: one chain per client
   downstream of block 0 (rows (i,0'), (i,1'..k')), z on the server and state blocks as in the
   base. Its last block f_i has G_(f_i),b = F_i G_0b on the base blocks (nothing feeds back),
   G_(f_i),(i,0') = -F_i and sum_b wn'_i[b] G_(f_i),b = -(pi / s)_i, both free of z. With Y =
   Y_(f_i) and Y_inf its value at z = inf ::

       v_i - theta_i = oint z^T Y(c_th) theta_0 + sum_j oint P_T Y(cf_j) f_j
                       + Y_inf(e_(i,0')) u_i - Y_inf(wn'_i) n_i.

   The columns c_j, (j,1..K-1) of the pencil have no entry in the new rows, so G L = I there
   still gives Y(cf_j) S_j = Y(au_j) on the row f_i (``sigma.algorithm1.curves``, step 3).
2. Risk (tau = tr / d; theta_0, u_j, n_j independent; E n_j n_j^T = sigma_j^2 gamma_j S_j / d;
   -Y_inf(wn'_i) S_i = I + Y_inf(e_(i,0')) turns S_i between two constants into traces) ::

       B = signal^2 oint oint z1^T z2^T tau(Sigma Y1(c_th) Y2(c_th)^T)
           + sum_j r_j^2 oint oint P1 P2 tau(Sigma Y1(au_j) Y2(au_j)^T)
           + 2 r_i^2 oint P tau(Sigma Y_inf(e_(i,0')) Y(au_i)^T)
           + r_i^2 tau(Sigma Y_inf(e_(i,0')) Y_inf(e_(i,0'))^T),
       V = sum_j sigma_j^2 gamma_j oint oint P1 P2 tau(Sigma Y1(au_j) Y2(cf_j)^T)
           - 2 sigma_i^2 gamma_i oint P tau(Sigma Y_inf(wn'_i) Y(au_i)^T)
           - sigma_i^2 gamma_i (tau(Sigma Y_inf(e_(i,0')) Y_inf(wn'_i)^T)
                                + tau(Sigma Y_inf(wn'_i))).

   T = inf: z^T -> 0 and P_T -> the point z = 1 (``sigma.algorithm1.curves``, step 3). The
   two-point functions are blocks (f_i, f_i) of ``sigma_pencil``'s on the transposed extended
   pencil, at the base's contour nodes and z = 1, plus the node z = 1e13 for Y_inf (as
   ``personalize_sigma``); the extended pencil's fixed point starts from the base's solution
   (``personalize_sigma``, step 2: the base block is unchanged, the new blocks do not depend on
   z for FTFA, RTFA's from the Marchenko-Pastur equation at -lam').

Scope: the dense pencil (M (K + k)^2 <= ``personalize_sigma.MAX_UNKNOWNS``, k = 1 for RTFA) and
the region of ``sigma.algorithm1.curves``; FTFA's overflow as ``personalize_sigma``. Checks
(``tests/test_rounds_sigma_alg1_personalize.py``): Sigma = I against ``personalize``'s scalar
route (``algorithm1_personalized``), k = 0 against the server model, T = 0 against
``steps_limit("local")``, the exact-prox limit at T = inf, and the literal algorithm simulated.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.fedavg import moving, settle
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import at_one, pooled_contour
from riskcalc.linear.dynamics.sigma.algorithm1.contour import (contour, dense_solve,
                                                               dense_vectors, quadrature)
from riskcalc.linear.dynamics.sigma.personal.pencil import PersonalPencil, solve_extended
from riskcalc.linear.dynamics.sigma.personalize_sigma import (ftfa_chain_steps, personal_guard,
                                                              personal_unknowns)

#: Where Y_inf is read (``personalize_sigma``'s node at infinity, on the scale of the edges).
_FAR = 1e13


def algorithm1_personalized_sigma(gam, r, sigma, p, signal, lam, eta, K, g, rounds, spectrum, *,
                                  kind, k=None, eta2=None, lam2=None, solved=None):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing the
    server model of round T of paper 004's Algorithm 1 (``004_98172ed3646eef14.txt``, eqs.
    10-11, K local steps) under ``spectrum`` (module docstring): ``kind`` "ftfa" (``k`` steps of
    size ``eta2``, paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5) or "rtfa" (ridge
    ``lam2``, Sec. 3.2). T = 0: from w_0 = 0; T = inf: from the fixed point.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, lam, eta, g : float
        ||theta_0||, the prox penalty, the local step and the paper's global step gamma.
    K : int
        Local steps >= 1.
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
    kind, k, eta2, lam2
        The personalization: "ftfa" with k steps of size eta2, or "rtfa" with lam2.
    solved : tuple, optional
        (contour, Chat, Ghat): ``contour.contour``'s dict and the dense pencil's solution at
        its upper nodes and z = 1 (``contour.dense_solve``), as the curves found them.

    Raises
    ------
    ValueError
        Beyond the dense pencil (M (K + k)^2 unknowns), the time or memory limits, or a
        divergent FTFA the solve cannot follow.
    """
    M = gam.size
    personal_unknowns(M, K, kind, k)
    atoms, hw = spectrum.atoms, spectrum.weights
    diverging = None
    if kind == "ftfa":
        eta2, diverging = ftfa_chain_steps(spectrum, gam, k, eta2)
    c = solved[0] if solved else (
        pooled_contour(gam, p, lam, eta, K, g, rounds, spectrum) if pooled_atom(gam) > 0.0
        else contour(gam, p, lam, eta, K, g, rounds, spectrum, Alg1Pencil))
    pen = c.get("pencil", Alg1Pencil)(atoms, hw, gam, p, lam, eta, K, g)
    z, w, N = c["z"], c["w"], c["z"].size
    ext = PersonalPencil(pen, -eta, kind, k, eta2, lam2)
    extt = PersonalPencil(pen, -eta, kind, k, eta2, lam2, transposed=True)
    personal_guard(ext, k, kind, N + 2)
    C, G = solved[1:] if solved else dense_solve(pen, c)
    far = np.array([_FAR * (1.0 + max(1.0, -c["lo"]))], complex)
    _, _, Gi = pen.solve(lambda t: far, [0.0])
    Gb = np.concatenate([G, Gi])
    # z = 1, or where the pooled samples do not span the circle around it (``pooled``).
    P = len(c["around"]) if "around" in c else 0
    nodes = np.concatenate([z, c.get("around", [1.0]), far])
    C1, G1 = solve_extended(pen, ext, Gb, nodes, kind, k, lam2, diverging)
    s, h = pen.s, pen.h
    C2, G2 = second_nodes(C1, G1, N, P)
    # (couplings, f(z1) on the upper nodes, 1, infinity; f(z2) on the upper nodes,
    # conjugates, 1, infinity): W at z2, V at z1 (``SigmaPencil.two_point`` on the transpose).
    H = extt.two_point((C1.swapaxes(-1, -2), G1.swapaxes(-1, -2)),
                       (C2.swapaxes(-1, -2), G2.swapaxes(-1, -2)),
                       personal_couplings(pen, ext, eta, lam, r, sigma, gam, signal)
                       )[:, 0].reshape(M, 7, N + max(P, 1) + 1, 2 * N + 2 * P + 1 + (P == 0))
    if P:
        H = at_one(H, N, P)
    inf_trace = np.array([np.einsum("a,ab,b->", h * s, G1[-1, :, ext.last[i], :],
                                    ext.noise[i]) for i in range(M)])
    q = quadrature(z, w, rounds, c["finite"])
    parts = [personal_parts(H[i], q, N, sigma[i] ** 2 * gam[i], inf_trace[i]) for i in range(M)]
    bias, var = np.array([b for b, _ in parts]), np.array([v for _, v in parts])
    # T = inf: the theta_0 part's residue at z = 1 (pooled N < d: ``pooled``, step 4).
    bias = bias + signal ** 2 * c.get("held", (0.0,))[0] * q.inf
    big = np.isfinite(rounds) & (rounds > c["over"])
    noisy = np.any((p > 0) & (sigma > 0)) | (sigma > 0)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(hw @ atoms) + 1e-300
    return settle(bias, var, big, noisy, scale,
                  "personalization after Algorithm 1's rounds with a spectrum",
                  moves=moving(signal, r))


def second_nodes(C1, G1, N, P=0):
    """(Chat, Ghat) on the second node set of the two-point functions: the N upper nodes,
    their conjugates, z = 1 and infinity, from the first (upper nodes, 1, infinity); with P
    upper nodes of the circle around z = 1 in its place (``pooled``), the circle and its
    conjugates there."""
    one = [N] if P == 0 else np.r_[N:N + P, N:N + P]
    two = np.r_[0:N, 0:N, one, N + max(P, 1)]
    conj = np.r_[np.zeros(N), np.ones(N), np.zeros(P or 1), np.ones(P), 0].astype(bool)
    C2, G2 = C1[two], G1[two]
    C2[conj], G2[conj] = C2[conj].conj(), G2[conj].conj()
    return C2, G2


def personal_couplings(pen, ext, eta, lam, r, sigma, gam, signal):
    """The seven couplings of each client (module docstring, step 2) for the transposed
    extended pencil's ``two_point``, at its block (f_i, f_i): the shared terms (u_j, noise,
    theta_0), the cross terms with u_i and n_i, and the constants."""
    c_th, cf, au = (np.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, ext.n - pen.n)])
                    for v in dense_vectors(pen, eta, lam))
    e = np.eye(ext.n)
    couplings = []
    for i in range(pen.M):
        ei, wi, bl = e[ext.root[i]][None, :], ext.noise[i][None, :], (ext.last[i],) * 2
        sg = [sigma[i] ** 2 * gam[i]]
        couplings += [(r ** 2, au, au, bl), (sigma ** 2 * gam, au, cf, bl),
                      ([signal ** 2], c_th[None, :], c_th[None, :], bl),
                      ([r[i] ** 2], ei, au[i][None, :], bl), (sg, wi, au[i][None, :], bl),
                      ([r[i] ** 2], ei, ei, bl), (sg, ei, wi, bl)]
    return couplings


def personal_parts(Hi, q, N, sg, inf_trace):
    """(bias, variance) over the rounds of one client from its seven two-point functions
    ``Hi`` (``personal_couplings``' order; rows: the upper nodes, 1, infinity; columns: the
    upper nodes, conjugates, 1, infinity: the double contours read [:N + 1, :2 N + 1], the
    single ones the column at infinity, the constants its last row), the quadrature ``q``,
    sg = sigma_i^2 gamma_i and tau(Sigma Y_inf(wn'_i)) (module docstring, step 2)."""
    Hu, Hn, Ht, Hc, Hcn, Hk, Hkn = Hi
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        bias = (q.double(q.pw1, 0.0, q.pw2, 0.0, Ht[:N + 1, :-1])
                + q.double(q.P1, q.inf, q.P2, q.inf, Hu[:N + 1, :-1])
                + 2.0 * q.single(q.P1, q.inf, Hc[:N + 1, -1]) + Hk[-1, -1].real)
        var = (q.double(q.P1, q.inf, q.P2, q.inf, Hn[:N + 1, :-1])
               - 2.0 * q.single(q.P1, q.inf, Hcn[:N + 1, -1])
               - Hkn[-1, -1].real - sg * inf_trace.real)
    return bias, var
