"""Personalization (FTFA, RTFA) from the round-T server model of paper 004's Algorithm 1 with K
warm-started local steps under COVARIATE SHIFT through the extended pencil's client structure
(derived here), for M K^2 beyond the dense route of ``shift.algorithm1.personalize``.

Model, personalization and risk as ``shift.algorithm1.personalize`` (``sigma.algorithm1.
personalize``'s derivation, paper ``004_98172ed3646eef14.txt``, eqs. 10-11, and paper 003,
``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 and Sec. 3.2: per client i one new chain downstream
of block 0, row (i,0'): x_0 - x_(i,0') = y_(i,0'), then FTFA's k rows or RTFA's one, the model
read on its last block f_i; client j's v_j(a) on its base and new rows, client i's risk in the
metric h v_i, seven couplings per client at the block (f_i, f_i), nodes: the contour's upper
nodes, z = 1 and z = inf). Against FedAvg's (``shift.personalize_chain``, which extends FedAvg's
own-model layout) the dense routes differ (``shift.algorithm1.personalize`` against
``shift.personalize``) in: the base pencil (Algorithm 1's: z on block 0 and every state s_j), its
row combinations (c_th on 0 and every s_j, cf_j, au_j of ``sigma.algorithm1.curves``, step 3;
seven couplings, no own-model identity), the nodes (z = 1 joined to the upper ones, one contour,
``personal_parts``' quadrature, Y_inf at ``_FAR``), and FTFA's scope (a divergent step refused,
``ftfa_check``). Carried over:

1. Blocks. ``shift.personalize_chain.PersonalShiftChain`` on ``ShiftAlg1Chain``'s own layout:
   client j's local blocks s_j, c_j, (j,1..K) (``sigma.algorithm1.chain``, step 1: col = eta lam
   on the chain rows, row 0's entries -g lam p_j at (j,K), a = z - 1 + g lam), then (j,0'), the
   new rows; col gains 1 at (j,0') (its x_0), z stays on s_j (the layout's ``own``, now ``zat``)
   and the model block is f_i. The new blocks add no entry to row 0 and no z, so u_j, wr_j and
   sigma are the Schur complement's of ``sigma.algorithm1.chain`` (step 1) on the larger D_j,
   Ghat[cols_j, rows_k] keeps its form (``Alg1Chain.ghat``), and the rows Ghat[f_l, rows_k]
   Chat_k = delta_lk f_l + beta_l e_k / sigma of its step 3 hold with beta_l = u_l[f_l], f_l =
   Chat_l^T D_l^-1[f_l, rows]: ``ShiftAlg1Chain.two_point`` reads the block (f_i, f_i).
2. Fixed point: ``shift.personalize_chain.personal_chain_solve`` (tau's base block from the
   curves' Chat at the upper nodes and z = 1 and the base chain's at infinity, tau_new, tau_cross
   = 0, Newton by GMRES in X): tau_j stays block lower triangular, as the dense route's start.
3. Two points. The double-contour couplings are the curves' (``sigma.algorithm1.couplings.
   solved_couplings``: r_j^2 au au, the noise's symmetric part, signal^2 c_th c_th; the dense
   route's (au_j, cf_j) enters with the same weight in z1 and z2), zero on the new blocks, summed
   over the clients and read on every (f_i, f_i) in its metric (``shift.own_chain.own_blocks``);
   the four couplings with a side at z = inf (r_i^2 (e_(i,0'), au_i), sigma_i^2 gamma_i (wn'_i,
   au_i), r_i^2 (e_(i,0'), e_(i,0')), sigma_i^2 gamma_i (e_(i,0'), wn'_i)) summed over i and read
   at the pairs (u, inf): at infinity the row f_i of Ghat touches client i's blocks only
   (Ghat_(f_i),(j,.) = u_i wr_j^T / sigma, sigma ~ z), so the sum is client i's term up to
   O(1 / z) (``shift.own_chain``, step 2). tau(Sigma_i Y_inf(wn'_i)): the row f_i of Ghat wn'_i
   at infinity (``shift.own_chain.model_traces``). Then ``personal_parts`` on the curves'
   quadrature (``shift.algorithm1.personalize.personal_risks``).

Cost: ``shift.own_chain.chain_guard`` with M (K + k_b)^2 unknowns per pair and 2 (N + 1) + 2
nodes. Checks (``tests/test_rounds_shift_alg1_pers_chain.py``): the dense
``shift.algorithm1.personalize`` on one contour (FTFA and RTFA), equal covariances against the
shared spectrum's dense ``sigma.algorithm1.personalize``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.shift.algorithm1.chain import ShiftAlg1Chain
from riskcalc.linear.dynamics.shift.algorithm1.personalize import (_FAR, ftfa_check,
                                                                   personal_risks)
from riskcalc.linear.dynamics.shift.own_chain import chain_guard, model_traces, own_blocks
from riskcalc.linear.dynamics.shift.personalize_chain import personal_chain_solve
from riskcalc.linear.dynamics.sigma.algorithm1.couplings import columns_in_order


def _padded(couplings, pen, nb):
    """The curves' couplings (``solved_couplings``) on the extended pencil's nb local blocks:
    zero on the new ones (module docstring, step 3)."""
    def pad(X, full):
        if full:
            return np.concatenate([X[:1], np.pad(X[1:].reshape(pen.M, pen.nb),
                                                  [(0, 0), (0, nb - pen.nb)]).ravel()])
        return np.pad(X, [(0, 0), (0, nb - pen.nb)])
    return [[(c, pad(W, full), pad(Vc, full), full) for c, W, Vc, full in cp]
            for cp in couplings]


def shift_alg1_personalized_chain(gam, r, sigma, p, signal, lam, eta, K, g, rounds, V, h, tops,
                                  solved, *, kind, k=None, eta2=None, lam2=None):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing the
    server model of round T of Algorithm 1 under covariate shift through the chain structure
    (module docstring): arguments as ``shift.algorithm1.personalize.shift_alg1_personalized``'s
    with ``solved`` = (contour, Chat at its upper nodes and z = 1, the curves' couplings) of
    ``shift.algorithm1.chain.shift_chain_parts``.

    Raises
    ------
    ValueError
        A divergent FTFA step, or beyond the time estimate or the memory budget.
    """
    M = gam.size
    ftfa_check(kind, gam, k, eta2, tops)
    c, C, couplings = solved
    z, N = c["z"], c["z"].size
    chain_guard(M, K + (k if kind == "ftfa" else 1), h.size, N + 1, c["n"],
                f"personalization ({kind.upper()}) after Algorithm 1's rounds with local_steps "
                f"= {K}" + (f" and steps = {k}" if kind == "ftfa" else ""))
    pen = ShiftAlg1Chain(V, c["pooled"], h, gam, p, lam, eta, K, g)
    far = np.array([_FAR * (1.0 + max(1.0, -c["lo"]))], complex)
    ext, C1, G1 = personal_chain_solve(pen, pen, np.concatenate([z, [1.0], far]), C, gam, kind,
                                       k, eta2, lam2)
    hv = h * V
    double = _padded(couplings, pen, ext.nb)
    AU = double[0][0][1]
    start = np.zeros((M, ext.nb))
    start[:, ext.root] = 1.0                                            # e_(i,0')
    noise = sigma ** 2 * gam
    Hd = columns_in_order(np.ascontiguousarray(own_blocks(
        ext, (C1[:N + 1], {key: v[:N + 1] for key, v in G1.items()}), double, hv)), N)
    Hs = own_blocks(ext, (C1, G1), [
        [(r ** 2, start, AU, False)], [(noise, ext.noise, AU, False)],
        [(r ** 2, start, start, False)], [(noise, start, ext.noise, False)]], hv,
        columns=[N + 1])[..., 0]                                        # (4, M, N + 2)
    H = np.zeros((M, 7, N + 2, 2 * N + 2), complex)         # ``personal_parts``' layout
    H[:, :3, :N + 1, :2 * N + 1] = Hd.transpose(1, 0, 2, 3)
    H[:, 3:5, :, -1] = Hs[:2].transpose(1, 0, 2)
    H[:, 5:, -1, -1] = Hs[2:, :, N + 1].T
    inf_trace = model_traces(ext, {key: v[N + 1:] for key, v in G1.items()}, ext.noise, hv)
    return personal_risks(H, inf_trace[:, 0], c, gam, r, sigma, p, signal, rounds, V, h)
