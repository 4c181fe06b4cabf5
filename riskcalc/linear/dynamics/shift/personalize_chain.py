"""Personalization after round T under COVARIATE SHIFT through the extended pencil's client
structure (derived here): FTFA and RTFA from FedAvg's round-T server model, for M (K + k)^2
beyond the dense route of ``shift.personalize``.

Model, personalization and pencil as ``shift.personalize`` (``sigma.personalize_sigma``, step
1: per client i one new chain downstream of block 0, row (i,0'): x_0 - x_(i,0') = y_(i,0'),
then FTFA's k rows (I - eta' S_i) x_(i,m-1)' - x_(i,m)' or RTFA's lam' x_(i,0') - (S_i +
lam') x_(i,1'); the model read on the last block f_i; client i's v_i(a) on its base and new
rows, its metric h v_i). Here, as ``shift.own_chain`` holds ``shift.own``'s pencil:

1. Blocks. Client j's local blocks are (j,0), (j,1..K), (j,0'), then (j,1'..k') (FTFA) or
   (j,1') (RTFA): coupled to block 0 through the column x_0 of the rows (j,0) and (j,0')
   (``col``) and the entries p_j at (j,K) of row 0 (``rowp``, ``last`` = K), z on block 0
   only; D0 holds the chains' deterministic entries, and the random part E_j = diag(e) (-eta
   on the base rows, -eta' (FTFA) or -1 (RTFA) on the new ones) sits on (rows, cols) = ((j,
   1..K), (j,1'..)) x ((j,0..K-1), FTFA (j,0'..(k-1)'), RTFA (j,1')), K + k_b of each, so
   Chat_j = E_j (I + gamma_j tau_j E_j)^-1 (``PersonalPencil.chat``) has the form
   ``Alg1Chain.ghat`` takes (``lr``, ``lc``): the Schur complement of
   ``sigma.algorithm1.chain`` (step 1) with client j's v_j(a) on its rows
   (``shift.algorithm1.chain``, step 1). The model is read at f_i (``own``).
   ``PersonalShiftChain`` appends these blocks to any base layout (``shift.algorithm1.
   personalize_chain``: Algorithm 1's, z kept on its state s_j, ``zat``).
2. Fixed point. ``shift.personalize``, step 2: tau_j is block lower triangular, its base block
   the contour's (from Chat: tau = (Chat^-1 - E^-1) / gamma), tau_new from the chain alone
   (RTFA: ``shift.personalize._rtfa_tau``), tau_cross = 0 as Newton's start; Newton's
   method at each node (``Alg1Chain.solve`` from that start, no path) with the chain's
   operator (``shift.chain``, step 2: dChat = -gamma Chat dtau Chat for any E_j) solved by
   GMRES in X (``Alg1Chain._newton_x``; the eigenbasis of ``sigma.algorithm1.basis`` assumes
   Algorithm 1's blocks).
3. Second moments: ``shift.own_chain``, steps 2-3 (``chain_moments``) with the start e_(i,0')
   and the noise row wn'_i = eta' on (i,1'..k') (FTFA) or e_(i,1') (RTFA) at infinity, the
   rounds' noise wn_j on the base chain, the model's block (f_i, f_i) in client i's metric;
   at infinity the row f_i touches client i's blocks only (through x_(i,0'), which reads x_0
   with 1 / sigma ~ 1 / z), so the sum over i holds to O(1 / z) as there. Then
   ``sigma.fedavg.own.assemble`` with rounds + 1 on the double contour's nodes (T = 0: from
   w_0 = 0).

Divergence (eta' top_i >= 2 for some client, derived here): the chain's entries and tau's
new block grow like rho^m, rho = max_i abs(1 - eta' top_i) over the clients that do not
overflow, and Newton's residual stalls at a rounding floor above its tolerance (fuzz pass 17:
5e-10 of tau at 10 steps of 0.9, tau ~ 2e7). The new chain is solved in the scaled basis
x_(i,m)' = rho^m x~_(i,m)', row (i,m') divided by rho^m: its rows read ((I - eta' S_i) / rho)
x~_(m-1)' - x~_m' (D0 entry 1 / rho, random coefficient -eta' / rho), the noise row wn'_i =
eta' rho^-m on (i,m'), and the model x_(f_i) = rho^k x~_(f_i): its second moments times
rho^(2k), its one-point traces times rho^k (an exact similarity of the pencil, under which
its deterministic equivalent transforms alike). Measured against the dense route
(``shift.personalize``): 2e-12 at 5 steps of 0.9, 8e-13 at 4 steps of 3; at 4 steps of 100
(growth 1e20 and 1e24) the chain gives the same digits with rho = 290 or 1165 and differs
from the dense route by 1e-3 at T = inf (whose Newton follows such growth less well).
Overflow as ``shift.personalize`` (eta' = 1 / top in the chain of a client whose FTFA growth
passes 1e250; inf from ``RoundsLimit.personalized_risk``). Cost: ``shift.own_chain``'s guard
with M (K + k_b)^2 unknowns. Checks (``tests/test_rounds_shift_own_chain.py``): the dense
``shift.personalize`` where both apply (FTFA and RTFA).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from riskcalc.linear.dynamics.personalize import ftfa_stability
from riskcalc.linear.dynamics.shift.algorithm1.chain import ShiftAlg1Chain
from riskcalc.linear.dynamics.shift.own_chain import (OwnShiftChain, chain_guard, chain_moments,
                                                      double_contour)
from riskcalc.linear.dynamics.shift.personalize import _rtfa_tau
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble
from riskcalc.linear.dynamics.sigma.personal.pencil import PersonalPencil


class PersonalShiftChain(ShiftAlg1Chain):
    """The personalization's extended pencil held as ``Alg1Chain``'s factors (module docstring,
    step 1), from ``layout``: a chain pencil of covariate shift whose client blocks the new
    chain follows (FedAvg: ``OwnShiftChain``; Algorithm 1: ``ShiftAlg1Chain`` itself, its
    blocks s_j, c_j, (j,1..K), z on s_j), its ``eta`` on the base rows; ``kind`` "ftfa" (``k``
    steps of size ``eta2``, one per client) or "rtfa" (``lam2``)."""

    what = "personalization after round T under covariate shift (chain route)"
    chat = PersonalPencil.chat

    def __init__(self, layout, kind, k=None, eta2=None, lam2=None, rho=1.0):
        self.__dict__.update(vars(layout))
        Kb, M, nb = layout.K, layout.M, layout.nb
        kn = k if kind == "ftfa" else 1
        self.K, self.nb = Kb + kn, nb + kn + 1
        self.n = 1 + M * self.nb
        root = nb                                                      # (j,0')
        new_rows = root + 1 + np.arange(kn)
        new_cols = new_rows - 1 if kind == "ftfa" else new_rows
        D0 = np.zeros((self.nb, self.nb))
        D0[:nb, :nb] = layout.D0
        D0[root, root] = -1.0
        if kind == "ftfa":      # scaled by the growth rho (module docstring, "Divergence")
            D0[new_rows, new_cols] = 1.0 / rho
            D0[new_rows, new_rows] = -1.0
        else:           # RTFA's row divided by 1 + lam' (``sigma.personalize_sigma``, step 2)
            D0[new_rows, root] = lam2 / (1.0 + lam2)
            D0[new_rows, new_rows] = -lam2 / (1.0 + lam2)
        self.D0 = D0
        self.col = np.zeros(self.nb)
        self.col[:nb] = layout.col
        self.col[root] = 1.0
        self.lr = np.concatenate([self.lr, new_rows])
        self.lc = np.concatenate([self.lc, new_cols])
        # z stays on the layout's block (``zlocal``: Algorithm 1's state); the model is f_i.
        self.zat, self.own, self.root = layout.own, int(new_rows[-1]) if kn else root, root
        e2 = np.broadcast_to(-eta2 / rho if kind == "ftfa" else -1.0 / (1.0 + lam2), (M,))
        self.e = np.concatenate([np.full((M, Kb), -layout.eta), np.repeat(e2[:, None], kn, 1)],
                                axis=1)
        self.noise = np.zeros((M, self.nb))                            # wn'_i
        self.noise[:, new_rows] = -e2[:, None] * rho ** (1.0 - np.arange(1, kn + 1))

    def ghat(self, x, C):
        """``Alg1Chain.ghat`` with z on the layout's block ``zat`` (where ``zlocal``) and its
        factor f read at the model f_i (``own``)."""
        G = ShiftAlg1Chain.ghat(SimpleNamespace(**{**vars(self), "own": self.zat,
                                                   "client_atoms": self.client_atoms}), x, C)
        G["f"] = np.einsum("nmlk,naml->namk", C, G["Di"][..., self.own, self.lr])
        return G

    def _newton_basis(self, G, rhs, tol):
        """Every node to ``_newton_x`` (module docstring, step 2)."""
        return np.empty_like(rhs), np.zeros(rhs.shape[0], bool)


def personal_chain_solve(pen, layout, x, C, gam, kind, k=None, eta2=None, lam2=None, rho=1.0):
    """(ext, Chat, Ghat) of the personalization's extended pencil ``ext`` (``PersonalShiftChain``
    on ``layout``) at the nodes x, the last at infinity, from the base chain pencil ``pen``'s
    Chat ``C`` at the others (module docstring, step 2: the base block of tau from Chat = -eta
    (I - gamma eta tau)^-1, tau_new (RTFA), tau_cross = 0; Newton from there)."""
    M, Kb = pen.M, pen.K
    ext = PersonalShiftChain(layout, kind, k, eta2, lam2, rho)
    _, Cb, _ = pen.solve(lambda t: x[-1:], [0.0])
    Cbase = np.concatenate([C, Cb])
    tau0 = np.zeros((x.size, M, ext.K, ext.K), complex)
    tau0[:, :, :Kb, :Kb] = (np.linalg.inv(Cbase) + np.eye(Kb) / pen.eta) / gam[:, None, None]
    if kind == "rtfa":
        tau0[:, :, Kb, Kb] = _rtfa_tau(pen.V, pen.h, gam, lam2)[None, :]
    _, C1, G1 = ext.solve(lambda t: x, [0.0], check=False, tau0=tau0)
    return ext, C1, G1


def personalized_shift_chain(pen, c, tops, gam, r, sigma, p, signal, rounds, *, kind, k=None,
                             eta2=None, lam2=None):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing the
    server model of round T (T = 0: w_0 = 0; inf: the fixed point) by ``kind`` "ftfa" (``k``
    steps of size ``eta2``; paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5) or "rtfa"
    (ridge ``lam2``, Sec. 3.2), in its own covariance (module docstring), from the contour
    ``c`` of ``shift.curves`` on its chain route for the pencil ``pen``
    (``shift.chain.ShiftChain``); ``tops``: the top of each client's sample spectrum under its
    covariance."""
    M, Kb, z, rho = pen.M, pen.K, c["z2"], 1.0
    if kind == "ftfa":      # overflowing clients: a finite chain, reported as inf by the caller
        over = ftfa_stability(gam, k, eta2, top=tops)[1]
        eta2 = np.where(over, 1.0 / tops, eta2)
        rho = max(1.0, np.max(np.abs(1.0 - eta2 * np.asarray(tops, float))))
    chain_guard(M, Kb + (k if kind == "ftfa" else 1), pen.h.size, z.size, c["z"].size * 2,
                f"personalization ({kind.upper()}) with local_steps = {Kb}"
                + (f" and steps = {k}" if kind == "ftfa" else ""))
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    ext, C, G = personal_chain_solve(pen, OwnShiftChain(pen), np.concatenate([z, big]),
                                     c["one2"][0], gam, kind, k, eta2, lam2, rho)
    start = np.zeros((M, ext.nb))
    start[:, ext.root] = 1.0                                 # e_(i,0')
    Hall, traces = chain_moments(ext, C, G, gam, r, sigma, p, signal, start, ext.noise)
    if rho > 1.0:           # the model x_f = rho^k x~_f: its second moments and its traces
        Hall, traces = Hall * rho ** (2 * k), traces * rho ** k
    return assemble(Hall, traces, double_contour(c), gam, r, sigma, signal, pen.V @ pen.h,
                    rounds + 1.0)
