"""FedAvg with K local steps under COVARIATE SHIFT: the clients' own models after the local steps
of round T through the extended pencil's client structure (derived here), for M K^2 beyond the
dense route of ``shift.own``.

Model, own model and extended pencil as ``shift.own`` (client j: gamma_j, r_j, sigma_j, p_j,
rows N(0, Sigma_j), the Sigma_j diagonal in one basis; joint measure mu, atoms a of weight h_a,
client j's eigenvalue v_j(a); client i's own model v_i measured in its own covariance, E[(v_i -
theta_i)^T Sigma_i (v_i - theta_i)]). ``shift.own`` (steps 1-4) reads client i's risk on the
block ((i,K), (i,K)) of the two-point functions of eight couplings in client i's metric h v_i,
from the base pencil's tau_j and Chat_j (no new solve); the dense route inverts n = 1 + M (K +
1) blocks per atom and node and solves M K^2 unknowns densely per pair. Here, as
``sigma.fedavg.own_chain`` does for one covariance:

1. Blocks. The extended pencil is ``sigma.fedavg.own_chain.OwnChain``'s (block 0, then per
   client the local blocks (j,0), (j,1..K), coupled to block 0 through the column x_0 of row
   (j,0) and the entries p_j at (j,K) of row 0, z on block 0 only) with client j's eigenvalue
   v_j(a) on its chain rows (j,1..K) (``shift.own``, step 2: v_j scales the rows r_j, which no
   other client touches): D_j(a) = D0 + v_j(a) Chat_j on (chain, ((j,0)..(j,K-1))), the
   Schur complement of ``sigma.algorithm1.chain`` (step 1) per atom with client j's own D_j(a)
   (``shift.algorithm1.chain``, step 1: ``ShiftAlg1Chain.ghat`` through ``client_atoms``).
   ``OwnShiftChain`` is ``OwnChain``'s blocks (its model read at local K) on
   ``ShiftAlg1Chain``'s per-client weights.
2. Two points. ``shift.own``, step 4: every term is E[v_i Ghat12_((i,K),(i,K))] of the
   transposed extended pencil, whose linear system has the right-hand side's client-j block
   weighted h v_j and the operator weights h v_j v_k (gamma_j v_j^2 on client j's own terms,
   v_j gamma_k v_k across clients). That is ``shift.algorithm1.chain``'s two-point solve
   (its step 3, GMRES in X, each system checked to 1e-13) on this pencil: its outputs at the
   blocks (m, m), m = 0 and every local block ``own`` = (l,K), read with each metric of
   ``lams``; client i's term is its block ((i,K), (i,K)) in its own metric h v_i (the
   diagonal of the (metric, block) output). ``sigma.fedavg.own_chain``'s summation holds
   unchanged, since it uses the pencil's structure only, not the eigenvalues: the
   double-contour couplings (r_j^2 au_j au_j^T, the noise's (au_j wn_j^T + wn_j au_j^T) / 2
   with weight sigma_j^2 gamma_j, signal^2 e_0 e_0^T) are summed over the clients and read on
   every block ((i,K), (i,K)); the couplings with one side at infinity (z = 1e13 (1 + b)) are
   client i's own, and at infinity the row (i,K) of Ghat touches client i's blocks only
   (Ghat_(i,K),(j,.) = u_i wr_j^T / sigma, sigma ~ z), so their sum over i read on block
   ((i,K), (i,K)) is client i's term up to O(1 / z) = 1e-13, solved at the pairs (u,
   infinity) only (``columns``).
3. Identity terms: sigma_i^2 gamma_i tau(Sigma_i Y(wn_i)) = sigma_i^2 gamma_i E[v_i ((D_i^-1
   wn_i)[K] - u_i[K] y0_i)] (``Alg1Chain._vectors``: the row (i,K) of Ghat wn_i) in client i's
   metric; T = 0: (signal^2 + r_i^2) tau(Sigma_i), tau(Sigma_i) = E[v_i].
4. Quadrature: ``sigma.fedavg.own.assemble`` on ``shift.curves``' double-contour nodes of the
   chain route (degree 1: each variable carries R_(T-1) or P_(T-1) - 1).

One covariance (v_j = s) is ``sigma.fedavg.own_chain`` term by term. Cost:
``shift.algorithm1.cost.shift_alg1_seconds`` without edge scans (the same two-point solve, K +
1 instead of K + 2 local blocks; its node term, for node solves this route does not make, kept
as a margin), refused beyond ``sigma.fedavg.own_chain.MAX_SECONDS``; memory as the shared
spectrum's (``sigma.memory``, "own_chain"). Checks (``tests/test_rounds_shift_own_chain.py``):
the dense ``shift.own`` where both apply, equal covariances against ``sigma.fedavg.own_chain``.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.shift.algorithm1.chain import ShiftAlg1Chain
from riskcalc.linear.dynamics.shift.algorithm1.cost import shift_alg1_seconds
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble
from riskcalc.linear.dynamics.sigma.fedavg.own_chain import MAX_SECONDS, OwnChain


class OwnShiftChain(OwnChain, ShiftAlg1Chain):
    """``OwnChain``'s blocks (its ``__init__``) with client j's eigenvalue v_j(a) on its rows
    and ``ShiftAlg1Chain``'s per-client weights and two-point solve (module docstring, steps
    1-2), from covariate shift's chain pencil ``base`` (``shift.chain.ShiftChain``)."""

    what = "FedAvg's own models with local steps under covariate shift (chain route)"

    def __init__(self, base):
        super().__init__(base)
        self.V = base.V


def chain_guard(M, K, atoms, N, n1, what):
    """ValueError beyond ``MAX_SECONDS`` of estimated time (``shift_alg1_seconds`` with M K^2
    unknowns per pair and 2 N + 2 nodes, no edge scans) or the memory budget, for ``what``
    (naming the steps)."""
    sec = shift_alg1_seconds(M, K, atoms, 2 * N + 2, scans=0)
    limit = allowed(MAX_SECONDS)
    if sec > limit:
        raise ValueError(f"spectra: {what}, {M} clients, {atoms} joint atoms and {2 * N} "
                         f"contour nodes would take about {sec:.3g} s here (more than "
                         f"{limit:.0f} s; cost ~ clients steps^3 nodes^2); give fewer steps, "
                         f"clients or rounds, {MORE_TIME}")
    budget.check_memory(lambda m, k, x: memory.estimate("own_chain", m, k, atoms, n1, x),
                        (M, K, 2 * N), f"{what} under covariate shift on the chain route "
                        f"with {atoms} joint atoms and {2 * N} contour nodes",
                        nodes_follow_rounds=False)


def chain_moments(own, C, G, gam, r, sigma, p, signal, start, noise_inf):
    """(Hall (M, 8, N + 1, 2 N + 1), traces (M, N + 1)) of ``sigma.fedavg.own.assemble`` for
    the model read on the local block ``own.own`` (module docstring, steps 2-3) from the
    factors (C, G) of ``own.ghat`` at N upper nodes and infinity (last): ``start`` (M, nb) the
    model's start row at infinity (e_(i,0) here), ``noise_inf`` its noise row there (wn_i);
    the rounds' noise wn_j = eta on the base chain (j,1..``own.last``), au_j = p_j e_0 -
    e_(j,0)."""
    M, N, nb, hv = own.M, C.shape[0] - 1, own.nb, own.h * own.V     # client i's metric h v_i
    AU = (-np.eye(nb)[np.zeros(M, int)], p)                 # -e_(j,0) and p_j e_0
    WN = np.zeros((M, nb))
    WN[:, 1:own.last + 1] = own.eta
    minus0 = np.zeros(own.n)
    minus0[0] = -1.0
    noise, ones = sigma ** 2 * gam, np.ones(M)
    Hd = own_blocks(own, (C[:N], {k: v[:N] for k, v in G.items()}), [
        [(r ** 2, AU, AU, False)],
        [(noise / 2, AU, WN, False), (noise / 2, WN, AU, False)],
        [([signal ** 2], minus0, minus0, True)]], hv)                      # (3, M, N, 2 N)
    Hs = own_blocks(own, (C, G), [
        [(2 * r ** 2, start, AU, False)],
        [(noise, start, WN, False), (noise, (-noise_inf, 0.0), AU, False)],
        [(2 * signal ** 2 * ones, start, (np.zeros((M, nb)), -ones), False)],
        [(signal ** 2 + r ** 2, start, start, False)],
        [(noise, start, (-noise_inf, 0.0), False)]], hv, columns=[N])[..., 0]
    Hall = np.zeros((M, 8, N + 1, 2 * N + 1), complex)
    Hall[:, :3, :N, :2 * N] = Hd.transpose(1, 0, 2, 3)
    Hall[:, 3:6, :, -1] = Hs[:3].transpose(1, 0, 2)
    Hall[:, 6:, -1, -1] = Hs[3:, :, N].T
    # tau(Sigma_i Y(wn_i)) on the model's row (step 3), the rounds' noise at the upper nodes,
    # the model's own at infinity.
    return Hall, np.concatenate([model_traces(own, {k: v[:N] for k, v in G.items()}, WN, hv),
                                 model_traces(own, {k: v[N:] for k, v in G.items()}, noise_inf,
                                              hv)], axis=1)


def own_blocks(own, one, couplings, hv, columns=None):
    """``own.two_point`` (``ShiftAlg1Chain``'s) of ``couplings`` at the nodes of ``one`` =
    (Chat, Ghat), client i's block (``own.own``, ``own.own``) in its metric ``hv[i]`` (module
    docstring, step 2): (len(couplings), M, N, 2 N or len(columns))."""
    return own.two_point(one, couplings, hv, columns=columns, diagonal=True)


def model_traces(own, G, W, hv):
    """tau(Sigma_i Y(w_i)) on the model's row (``own.own``): E[v_i ((D_i^-1 w_i)[own] - u_i[own]
    y0_i)] in client i's metric ``hv[i]`` (module docstring, step 3) at the nodes of G, W (M,
    nb): (M, nodes)."""
    _, S, y0 = own._vectors(G, W, False)
    return np.einsum("ia,nai->in", hv, S - G["u"][..., own.own] * y0)


def double_contour(c):
    """The contour ``c`` of ``shift.curves`` with its double contour's nodes and weights as
    those ``sigma.fedavg.own.assemble`` reads (module docstring, step 4)."""
    w2, Wf2 = c["w2"], c["Wf2"]
    return dict(c, z=c["z2"], one_q=lambda F, X: ((F * w2) @ X.T).imag,
                double_q=lambda F1, F2, f: c["double_q"](F1, F2, f, w2, Wf2))


def own_models_shift_chain(pen, c, gam, r, sigma, p, signal, rounds):
    """(bias, variance), each (M, len(rounds)), of every client's own model after the local
    phase of round T in its own covariance (module docstring; paper 003,
    ``003_4b976ddf5225c17e.txt``, FedAvg's local steps) from the contour ``c`` of
    ``shift.curves.shift_k_curves`` (its double-contour nodes ``z2``, ``one2``, weights
    ``w2``, ``Wf2``) for the pencil ``pen`` (``shift.chain.ShiftChain``).

    Raises
    ------
    ValueError
        Beyond ``MAX_SECONDS`` of estimated time or the memory budget.
    """
    M, K, z = pen.M, pen.K, c["z2"]
    chain_guard(M, K, pen.h.size, z.size, c["z"].size * 2,
                f"the clients' own models (local_risk) with local_steps = {K}")
    big = np.array([1e13 * (1.0 + c["b"])], complex)       # the node at infinity (Gz -> 0)
    _, Cb, _ = pen.solve(lambda t: big, [0.0])
    own = OwnShiftChain(pen)
    C = np.concatenate([c["one2"][0], Cb])
    G = own.ghat(np.concatenate([z, big]), C)
    start = np.zeros((M, own.nb))
    start[:, 0] = 1.0                                       # e_(i,0)
    WN = np.zeros((M, own.nb))
    WN[:, own.lr] = pen.eta
    Hall, traces = chain_moments(own, C, G, gam, r, sigma, p, signal, start, WN)
    return assemble(Hall, traces, double_contour(c), gam, r, sigma, signal, own.V @ own.h,
                    rounds)
