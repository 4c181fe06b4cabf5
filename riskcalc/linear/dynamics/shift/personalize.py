"""Personalization after round T under COVARIATE SHIFT: FTFA (k gradient steps of size eta') and
RTFA (the ridge lam' toward the server model) from FedAvg's round-T server model w_T (K >= 1
local steps), client i in its own covariance Sigma_i (derived here).

Model as ``shift.own`` (joint measure mu, atoms a of weight h_a, client j's eigenvalue v_j(a)).
``sigma.personalize_sigma``'s derivation (FedAvg) with the steps that use Sigma changed as
``shift.own`` changes ``sigma.fedavg.own``:

1. Pencil. ``sigma.personalize_sigma``, step 1, verbatim (algebra in the exact inverse): client
   i's new chain, downstream of block 0, row (i, 0'): x_0 - x_(i,0') = y_(i,0'), then FTFA's k
   rows (I - eta' S_i) x_(i,m-1)' - x_(i,m)' or RTFA's lam' x_(i,0') - (S_i + lam') x_(i,1');
   the last block f_i has G_(f_i),b = F_i G_0b (F_i = (I - eta' S_i)^k or lam' (S_i +
   lam')^-1), and v_i - theta_i is ``sigma.fedavg.own`` step 3's expression with (e_(i,0),
   row (i,K), wn_i) -> (e_(i,0'), row f_i, wn'_i) and T - 1 -> T.
2. Deterministic equivalent. Client i's S_i enters its base rows and its new rows, all scaled by
   its own v_i(a) (``shift.pencil``, step 2; ``ShiftPersonalPencil``: ``ShiftPencil``'s
   ``ghat``, Jacobian and tau weights h v_j, h v_j v_k on ``PersonalPencil``'s blocks). The new
   chain is downstream, so tau_i stays block lower triangular and the base block is the
   contour's solution; tau_new depends on the chain alone: FTFA's is reached by Newton's method
   from 0 (strictly triangular), RTFA's tau_new = (1 - x) / gamma_i with x = 1 + gamma_i
   E[v_i x / (lam' x + v_i)] (the Marchenko-Pastur equation at -lam' under client i's OWN
   covariance, ``_rtfa_tau``; times 1 + lam', RTFA's row divided by it as in
   ``sigma.personalize_sigma``). These are Newton's starting values (``SigmaPencil.solve``,
   one node at a time from there; measured: starting RTFA from the pooled covariance's
   tau_new instead ends at the same values, 3e-16).
3. Second moments: ``shift.own``, step 4, on the blocks (f_i, f_i) of the transposed pencil,
   client i's metric h v_i, the identity terms sigma_i^2 gamma_i (oint R E[v_i Y(wn_i)] -
   E[v_i Y_inf(wn'_i)]), ``sigma.fedavg.own.assemble`` with rounds + 1 (T = 0: from w_0 = 0).

Overflow as ``sigma.personalize_sigma`` (a client whose FTFA growth passes 1e250 at the top of its
sample spectrum under its own covariance gets eta' = 1 / top in its chain and inf from
``RoundsLimit.personalized_risk``). Dense: M (K + k_b)^2 <= ``personalize_sigma.MAX_UNKNOWNS``
and its time and memory guard. Checks (``tests/test_rounds_shift_own.py``): equal covariances
against ``sigma.personalize_sigma``, the simulated algorithm on an anti-aligned federation at
d = 200, the aligned prediction rejected there.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.personalize import ftfa_stability
from riskcalc.linear.dynamics.shift.own import OwnShiftPencil
from riskcalc.linear.dynamics.shift.pencil import ShiftPencil
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble
from riskcalc.linear.dynamics.sigma.personal.pencil import PersonalPencil
from riskcalc.linear.dynamics.sigma.personal.pencil import _rtfa_tau as rtfa_tau
from riskcalc.linear.dynamics.sigma.personalize_sigma import personal_guard, personal_unknowns


class ShiftPersonalPencil(PersonalPencil):
    """``sigma.personal.pencil.PersonalPencil`` with client j's eigenvalue v_j(a) on all its
    rows, base and new (module docstring, step 2), from ``shift.own.OwnShiftPencil``."""

    ghat = ShiftPencil.ghat
    own_weights = ShiftPencil.own_weights
    pair_weights = ShiftPencil.pair_weights
    _jacobian = ShiftPencil._jacobian
    two_point = ShiftPencil.two_point

    def __init__(self, layout, e, kind, k=None, eta2=None, lam2=None, transposed=False):
        super().__init__(layout, e, kind, k, eta2, lam2, transposed)
        self.V = layout.V
        self.rowv = np.zeros((self.V.shape[1], self.n))
        for j in range(self.M):
            self.rowv[:, self.rows[j]] = self.V[j][:, None]


def _rtfa_tau(V, h, gam, lam2):
    """RTFA's tau_new per client under its own covariance (module docstring, step 2; its row
    divided by 1 + lam': ``sigma.personal.pencil._rtfa_tau``)."""
    return np.array([rtfa_tau(v, h, [g], lam2)[0] for g, v in zip(gam, V)])


def personalized_shift(pen, c, tops, gam, r, sigma, p, signal, rounds, *, kind, k=None,
                       eta2=None, lam2=None):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing the
    server model of round T (T = 0: w_0 = 0; inf: the fixed point) by ``kind`` "ftfa" (``k``
    steps of size ``eta2``; paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5) or "rtfa"
    (ridge ``lam2``, Sec. 3.2), in its own covariance (module docstring), from the contour
    ``c`` of ``shift.curves`` on the dense pencil ``pen`` (``ShiftPencil``); ``tops``: the top
    of each client's sample spectrum under its covariance."""
    M, eta = pen.M, pen.eta
    layout = OwnShiftPencil(pen)
    n = layout.n + M * ((k if kind == "ftfa" else 1) + 1)
    e_ = np.eye(n)
    wn = np.zeros((M, n))
    for j in range(M):
        wn[j, layout.rows[j]] = eta
    return personal_models(pen, layout, -eta, p[:, None] * e_[0][None, :] - e_[layout.zero],
                           wn, c, tops, gam, r, sigma, signal, rounds, kind=kind, k=k,
                           eta2=eta2, lam2=lam2)


def personal_models(pen, layout, e, au, wn, c, tops, gam, r, sigma, signal, rounds, *, kind,
                    k=None, eta2=None, lam2=None, pencil=None):
    """``personalized_shift``'s (bias, variance) from any base pencil ``pen`` with client j's
    v_j on its rows (``shift.pencil``; FedAvg's, or Algorithm 1's exact prox of ``shift.
    algorithm1.prox``) extended from ``layout`` (``pen`` or its ``OwnShiftPencil``) with base
    coefficient ``e``; ``au``, ``wn`` (M, extended n): the row combinations with sum_b au_j[b]
    G_0b = p_j Gz q_j and sum_b wn_j[b] G_0b = p_j Gz (q / s)_j (``sigma.personalize_sigma``,
    step 1); ``pencil``: the extended pencil's class (default ``ShiftPersonalPencil``)."""
    pencil = pencil or ShiftPersonalPencil
    M, h, V, Kb = pen.M, pen.h, pen.V, layout.rows.shape[1]
    personal_unknowns(M, Kb, kind, k)
    if kind == "ftfa":      # overflowing clients: a finite chain, reported as inf by the caller
        eta2 = np.where(ftfa_stability(gam, k, eta2, top=tops)[1], 1.0 / tops, eta2)
    ext = pencil(layout, e, kind, k, eta2, lam2)
    extt = pencil(layout, e, kind, k, eta2, lam2, transposed=True)
    z = c["z"]
    personal_guard(ext, k, kind, z.size)
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    z1 = np.concatenate([z, big])
    _, _, Gi = pen.solve(lambda t: big, [0.0])
    Gb = np.concatenate([c["one"][1], Gi])
    # Step 2: the base blocks from the contour's solution, tau_new (RTFA), tau_cross = 0.
    tau0 = np.zeros((z1.size, M, ext.K, ext.K), complex)
    for j in range(M):
        tau0[:, j, :Kb, :Kb] = np.einsum("a,naxy->nxy", h * V[j],
                                         Gb[:, :, pen.cols[j][:, None], pen.rows[j][None, :]])
    if kind == "rtfa":
        tau0[:, :, Kb, Kb] = _rtfa_tau(V, h, gam, lam2)[None, :]
    _, C1, G1 = ext.solve(lambda t: z1, [0.0], check=False, tau0=tau0)
    N1 = z.size
    C2 = np.concatenate([C1[:N1], C1[:N1].conj(), C1[N1:]])
    G2 = np.concatenate([G1[:N1], G1[:N1].conj(), G1[N1:]])
    e_ = np.eye(ext.n)
    couplings = []
    for i in range(M):
        ei, sg, bl, wi = e_[ext.root[i]], sigma[i] ** 2 * gam[i], (ext.last[i],) * 2, ext.noise[i]
        couplings += [(cc, W, Vc, bl) for cc, W, Vc in [
            (r ** 2, au, au), (sigma ** 2 * gam, au, wn),                           # (R, R)
            ([signal ** 2], -e_[:1], -e_[:1]),                                      # (Pm, Pm)
            ([2 * r[i] ** 2], ei[None, :], au[i][None, :]),                         # (R, inf)
            ([sg, sg], np.stack([ei, -wi]), np.stack([wn[i], au[i]])),
            ([2 * signal ** 2], ei[None, :], -e_[:1]),                              # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], ei[None, :], ei[None, :]),                  # (inf, inf)
            ([sg], ei[None, :], -wi[None, :])]]
    t = (lambda x: x.swapaxes(-1, -2))
    lams = np.repeat(h * V, 8, axis=0)[:, None, :]          # client i's metric: (8 M, 1, atoms)
    Hall = extt.two_point((t(C1), t(G1)), (t(C2), t(G2)), couplings, lams)[:, 0].reshape(
        M, 8, N1 + 1, -1)
    traces = np.stack([np.concatenate([
        np.einsum("a,nab,b->n", h * V[i], G1[:N1, :, ext.last[i], :], wn[i]),
        np.einsum("a,nab,b->n", h * V[i], G1[N1:, :, ext.last[i], :], ext.noise[i])])
        for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, V @ h, rounds + 1.0)
