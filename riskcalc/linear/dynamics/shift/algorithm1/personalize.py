"""Personalization (FTFA, RTFA) from the round-T server model of paper 004's Algorithm 1 with K
warm-started local steps under covariate shift (derived here).

``sigma.algorithm1.personalize``'s derivation (one personalization chain per client downstream of
the server block: ``sigma.personal.pencil.PersonalPencil``; paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 and Sec. 3.2) uses Sigma only as the metric of the
risk and as E[x x^T] of each client's rows in the Woodbury step; the identities it uses
(G_(f_i),b = F_i G_0b, -Y_inf(wn'_i) S_i = I + Y_inf(e_(i,0')), Y(cf_j) S_j = Y(au_j)) are
algebraic (G L = I) and hold for any S_j. So under shift, as ``shift.algorithm1.pencil`` for the
base pencil: client j's eigenvalue v_j(a) on its rows of the extended pencil (its base chain and
its personalization chain, both of its S_j), the Jacobians' weights h v_j v_k, the two-point
system's Y_j = E[v_j Ghat12[r_j, r_j]], and client i's risk read with the metric h v_i (its
bias and variance in Sigma_i: the shared forms with Sigma -> Sigma_i). The extended solve starts
from the base solution with the new blocks' tau from client j's own spectrum (RTFA: the
Marchenko-Pastur equation at -lam' under H_j).

Scope: FTFA steps that converge on every client (step_size times the top of its sample
spectrum under its own covariance < 2), the dense pencils' sizes of the shared route (the
curves' chain route: ``shift.algorithm1.personalize_chain``). At pooled N < d the circle around
z = 1 stands for that point and T = inf adds signal^2 tau(Sigma_i P_N) (``shift.algorithm1.
pooled``, step 4).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.fedavg import moving, settle
from riskcalc.linear.dynamics.personalize import ftfa_stability
from riskcalc.linear.dynamics.shift.algorithm1.pencil import ShiftAlg1Pencil
from riskcalc.linear.dynamics.shift.pencil import ShiftPencil
from riskcalc.linear.dynamics.sigma.algorithm1.contour import quadrature
from riskcalc.linear.dynamics.sigma.algorithm1.pooled import at_one
from riskcalc.linear.dynamics.sigma.algorithm1.personalize import (personal_couplings,
                                                                   personal_parts,
                                                                   second_nodes)
from riskcalc.linear.dynamics.sigma.personal.pencil import PersonalPencil, _rtfa_tau
from riskcalc.linear.dynamics.sigma.personalize_sigma import personal_guard, personal_unknowns

#: Where Y_inf is read (``sigma.algorithm1.personalize``'s node at infinity).
_FAR = 1e13


class ShiftPersonalPencil(PersonalPencil):
    """``PersonalPencil`` on a ``ShiftAlg1Pencil`` with client j's v_j(a) on its rows (base and
    personalization chains; module docstring)."""

    def __init__(self, base, e, kind, k=None, eta2=None, lam2=None, transposed=False):
        super().__init__(base, e, kind, k, eta2, lam2, transposed=transposed)
        self.V = base.V
        rowv = np.zeros((self.V.shape[1], self.n))
        for j in range(self.M):
            rowv[:, self.rows[j]] = self.V[j][:, None]
        self.rowv = rowv

    ghat = ShiftPencil.ghat
    own_weights = ShiftPencil.own_weights
    pair_weights = ShiftPencil.pair_weights
    _jacobian = ShiftPencil._jacobian
    two_point = ShiftAlg1Pencil.two_point


def shift_alg1_personalized(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h, tops,
                            solved, *, kind, k=None, eta2=None, lam2=None):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing the
    server model of round T of Algorithm 1 under covariate shift (module docstring): ``kind``
    "ftfa" (``k`` steps of size ``eta2``) or "rtfa" (ridge ``lam2``); ``V`` (M, atoms) and
    ``h`` the clients' eigenvalues on the joint atoms and their weights, ``tops`` each
    client's sample spectrum top, ``solved`` = (contour, Chat, Ghat) of the curves
    (``shift.algorithm1.curves``)."""
    M = gam.size
    personal_unknowns(M, K, kind, k)
    ftfa_check(kind, gam, k, eta2, tops)
    c, C, G = solved
    pen = ShiftAlg1Pencil(V, c["pooled"], h, gam, p, lam, eta, K, g)
    z, N = c["z"], c["z"].size
    # z = 1, or at pooled N < d the circle around it (``shift.algorithm1.pooled``).
    P = len(c["around"]) if "around" in c else 0
    ext = ShiftPersonalPencil(pen, -eta, kind, k, eta2, lam2)
    extt = ShiftPersonalPencil(pen, -eta, kind, k, eta2, lam2, transposed=True)
    personal_guard(ext, k, kind, N + 2)
    far = np.array([_FAR * (1.0 + max(1.0, -c["lo"]))], complex)
    _, _, Gi = pen.solve(lambda t: far, [0.0])
    Gb = np.concatenate([G, Gi])
    nodes = np.concatenate([z, c.get("around", [1.0]), far])
    # The extended solve from the base solution: its base blocks, the new ones from each
    # client's own spectrum (``personal.pencil.solve_extended`` with tau weighted h v_j).
    Kb = pen.rows.shape[1]
    tau0 = np.zeros((nodes.size, M, ext.K, ext.K), complex)
    for j in range(M):
        tau0[:, j, :Kb, :Kb] = np.einsum("a,naxy->nxy", h * V[j],
                                         Gb[:, :, pen.cols[j][:, None], pen.rows[j][None, :]])
        if kind == "rtfa":
            tau0[:, j, Kb, Kb] = _rtfa_tau(V[j], h, gam[j:j + 1], lam2)[0]
    _, C1, G1 = ext.solve(lambda t: nodes, [0.0], check=False, tau0=tau0)
    C2, G2 = second_nodes(C1, G1, N, P)
    H = extt.two_point((C1.swapaxes(-1, -2), G1.swapaxes(-1, -2)),
                       (C2.swapaxes(-1, -2), G2.swapaxes(-1, -2)),
                       personal_couplings(pen, ext, eta, lam, r, sigma, gam, signal), h * V)
    H = H.reshape(M, 7, M, N + max(P, 1) + 1, 2 * N + 2 * P + 1 + (P == 0))[
        np.arange(M), :, np.arange(M)]
    if P:
        H = at_one(H, N, P)
    # Client i's couplings in its own metric h v_i (module docstring).
    inf_trace = np.array([np.einsum("a,ab,b->", h * V[i], G1[-1, :, ext.last[i], :],
                                    ext.noise[i]) for i in range(M)])
    return personal_risks(H, inf_trace, c, gam, r, sigma, p, signal, rounds, V, h)


def ftfa_check(kind, gam, k, eta2, tops):
    """ValueError when FTFA's steps diverge on a client under its covariance (the scope)."""
    if kind == "ftfa" and not np.all(ftfa_stability(gam, k, eta2, top=tops)[0]):
        raise ValueError("step_size: FTFA's steps diverge on a client under its covariance "
                         "(step_size times the top of its sample spectrum >= 2): not covered "
                         "under covariate shift; give step_size < 2 / top")


def personal_risks(H, inf_trace, c, gam, r, sigma, p, signal, rounds, V, h):
    """(bias, variance) over the rounds from client i's seven two-point functions H[i] (M, 7,
    N + 2, 2 N + 2; ``personal_parts``' layout) in its metric h v_i and its tau(Sigma_i
    Y_inf(wn'_i)) ``inf_trace[i]``, on the contour ``c``, settled as the curves; at pooled N < d
    T = inf adds client i's signal^2 tau(Sigma_i P_N) (``c["held"]``, ``shift.algorithm1.
    pooled``: F_i is the identity on N)."""
    N = c["z"].size
    q = quadrature(c["z"], c["w"], rounds, c["finite"])
    parts = [personal_parts(H[i], q, N, sigma[i] ** 2 * gam[i], inf_trace[i])
             for i in range(gam.size)]
    bias, var = np.array([b for b, _ in parts]), np.array([v for _, v in parts])
    if "held" in c:
        bias = bias + signal ** 2 * np.multiply.outer(c["held"][0], q.inf)
    big = np.isfinite(rounds) & (rounds > c["over"])
    noisy = np.any((p > 0) & (sigma > 0)) | (sigma > 0)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(np.max(V @ h)) \
        + 1e-300
    return settle(bias, var, big, noisy, scale,
                  "personalization after Algorithm 1's rounds under covariate shift",
                  moves=moving(signal, r))
