"""FedAvg with K local steps under a shared covariance spectrum: the clients' own models after
the local steps of round T through the extended pencil's client structure (derived here), for
M K^2 beyond the dense route of ``sigma.fedavg.own``.

``sigma.fedavg.own`` (steps 1-4) extends FedAvg's pencil by one deterministic block per client, row
(j, 0): x_0 - x_(j,0) = y_(j,0), the chain (j,1..K) started at x_(j,0); its inverse has the
base's fixed point tau_j and Chat_j (no new solve), and the own model of client i is read on
the blocks ((i,K), (i,K)) of the two-point functions of eight couplings. The dense route inverts
n = 1 + M (K + 1) blocks per atom and node and solves M K^2 unknowns densely per pair. Here:

1. The extended pencil has ``sigma.algorithm1.chain``'s form: block 0, then per client K + 1 local
   blocks ((j,0), (j,1..K)) coupled to block 0 only through the column x_0 of row (j,0) (c_j =
   e_(j,0)) and the row 0 entries p_j at (j,K) (r_j), z on block 0 only (a = z - sum_j p_j),
   D_j: -1 at ((j,0), (j,0)) and the chain (1 on (k, k-1), -1 on (k, k), s Chat_j on (rows
   (j,1..K), cols (j,0..K-1))). ``OwnChain`` is ``sigma.algorithm1.chain.Alg1Chain`` with these
   blocks, the row of block 0 at local K and the model read at local K (its Schur complement,
   Newton operator and two-point solves unchanged).
2. Couplings as local vectors: au_j = p_j e_0 - e_(j,0) is -e_(j,0) with p_j on block 0 (the
   pair (X, x0) of ``Alg1Chain._vectors``), wn_j = eta on (j,1..K), e_(j,0), and -e_0 a full
   vector. The double-contour couplings (r^2 au au, the noise au wn symmetrized as in
   ``sigma.algorithm1.chain`` step 3, signal^2 e_0 e_0) are summed over the clients and read on every
   block ((i,K), (i,K)) at once. The couplings with one side at infinity (z = 1e13 (1 + b)) are
   client i's own (e_(i,0), wn_i against au_i, -e_0, e_(i,0), wn_i), but at infinity the row
   (i,K) of Ghat touches client i's blocks only (Ghat_(i,K),(j,.) = u_i wr_j^T / sigma for j !=
   i, sigma ~ z) and so does its Newton operator (the cross-client scalar carries 1 / sigma): the
   sum over i of client i's coupling read on block ((i,K), (i,K)) is client i's term up to
   O(1 / z) = 1e-13. Those are solved at the pairs (u, infinity) only (``two_point``'s
   ``columns``). The quadrature is ``sigma.fedavg.own.assemble`` on the chain's double-contour nodes
   (each variable carries R_(T-1) or P_(T-1) - 1, degree T - 1: ``sigma.fedavg.curves``'s n2).

Cost: ``OWN_COST`` times ``algorithm1.cost.alg1_chain_seconds`` without edge scans (the pair
solves dominate; the same Newton operator and K + 1 instead of K + 2 local blocks, two
two-point solves, one with five couplings; its node term, for node solves this route does
not make, kept as a margin), refused beyond ``MAX_SECONDS``. Checks
(``tests/test_rounds_sigma_own_chain.py``): the dense route (``sigma.fedavg.own``) where both
apply, Sigma = I against ``local_models``' scalar route, and the literal iteration at two d.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.sigma.algorithm1.cost import alg1_chain_seconds
from riskcalc.linear.dynamics.sigma import budget, memory
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed
from riskcalc.linear.dynamics.sigma.algorithm1.chain import Alg1Chain
from riskcalc.linear.dynamics.sigma.fedavg.own import assemble

#: The own models' cost over ``alg1_chain_seconds(..., scans=0)`` (refitted there after session
#: 20's corner changes): their time in ``benchmarks/bench_rounds_pairs.py``'s federation (its
#: clients, spectrum and step, equal weights; T = 20 and 10; process CPU, OMP 1, load 2-5) at
#: (M, K) = (3, 20) 29.7 s and (10, 20) 35.7 s, 1.43 and 1.44 of that estimate: measured /
#: estimate 0.89 and 0.90.
OWN_COST = 1.6

#: Most estimated process seconds of the own models' pair solves (as the chain's curves), by
#: default (``budget``).
MAX_SECONDS = 600.0


class OwnChain(Alg1Chain):
    """The extended pencil of ``sigma.fedavg.own`` (step 2 there) held as the factors of
    ``Alg1Chain`` (module docstring, step 1), from FedAvg's chain pencil ``base``."""

    what = "FedAvg's own models with local steps and a spectrum (chain route)"

    def __init__(self, base):
        self.s, self.h, self.gam, self.p = base.s, base.h, base.gam, base.p
        self.eta, self.K, self.M = base.eta, base.K, base.M
        K, M, nb = self.K, self.M, self.K + 1
        self.n, self.nb = 1 + M * nb, nb
        self.lr, self.lc = np.arange(1, K + 1), np.arange(K)         # local rows, cols
        D0 = np.zeros((nb, nb))
        D0[0, 0] = -1.0
        D0[self.lr, self.lc] = 1.0
        D0[self.lr, self.lr] = -1.0
        self.D0, self.a0 = D0, -float(self.p.sum())
        self.col = np.zeros(nb)
        self.col[0] = 1.0
        self.rowp = self.p.copy()
        self.last, self.own, self.zlocal = K, K, False
        self.shift, self.sign, self.zcheck = 0.0, 1.0, False


def own_models_chain(pen, c, gam, r, sigma, p, signal, rounds):
    """(bias, variance), each (M, len(rounds)), of every client's own model after the local
    phase of round T (``sigma.fedavg.own``'s module docstring, steps 1-4; paper 003,
    ``003_4b976ddf5225c17e.txt``, FedAvg's local steps) through the chain structure (module
    docstring), from the contour ``c`` of ``sigma.fedavg.curves.pencil_curves`` for FedAvg's chain
    pencil ``pen``.

    Raises
    ------
    ValueError
        Beyond ``MAX_SECONDS`` of estimated time.
    """
    M, K, eta = pen.M, pen.K, pen.eta
    z = c["z2"]
    N = z.size
    sec = OWN_COST * alg1_chain_seconds(M, K, pen.s.size, 2 * N + 2, scans=0)
    limit = allowed(MAX_SECONDS)
    if sec > limit:
        raise ValueError(f"spectrum: the clients' own models (local_risk) with local_steps = "
                         f"{K}, {M} clients and {2 * N} contour nodes would take about "
                         f"{sec:.3g} s here (more than {limit:.0f} s; cost ~ clients "
                         "local_steps^3 nodes^2); give fewer local_steps, clients or rounds, "
                         f"{MORE_TIME}")
    n1, a = c["z"].size * 2, pen.s.size
    budget.check_memory(lambda m, k, x: memory.estimate("own_chain", m, k, a, n1, x),
                        (M, K, 2 * N), f"the clients' own models (local_risk) on the chain "
                        f"route with {a} atoms and {2 * N} contour nodes",
                        nodes_follow_rounds=False)
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    _, Cb, _ = pen.solve(lambda t: big, [0.0])
    own = OwnChain(pen)
    x = np.concatenate([z, big])
    C = np.concatenate([c["one2"][0], Cb])
    G = own.ghat(x, C)
    nb = own.nb
    AU = (-np.eye(nb)[np.zeros(M, int)], p)                   # -e_(j,0) and p_j e_0
    WN = np.zeros((M, nb))
    WN[:, own.lr] = eta
    E0 = np.zeros((M, nb))
    E0[:, 0] = 1.0
    minus0 = np.zeros(own.n)
    minus0[0] = -1.0
    noise = sigma ** 2 * gam
    ones = np.ones(M)
    Hd = own.two_point((C[:N], {k: v[:N] for k, v in G.items()}), [
        [(r ** 2, AU, AU, False)],
        [(noise / 2, AU, WN, False), (noise / 2, WN, AU, False)],
        [([signal ** 2], minus0, minus0, True)]])[:, 0, 1:]      # (3, M, N, 2 N)
    Hs = own.two_point((C, G), [
        [(2 * r ** 2, E0, AU, False)],
        [(noise, E0, WN, False), (noise, (-WN, 0.0), AU, False)],
        [(2 * signal ** 2 * ones, E0, (np.zeros((M, nb)), -ones), False)],
        [(signal ** 2 + r ** 2, E0, E0, False)],
        [(noise, E0, (-WN, 0.0), False)]], columns=[N])[:, 0, 1:, :, 0]     # (5, M, N + 1)
    Hall = np.zeros((M, 8, N + 1, 2 * N + 1), complex)
    Hall[:, :3, :N, :2 * N] = Hd.transpose(1, 0, 2, 3)
    Hall[:, 3:6, :, -1] = Hs[:3].transpose(1, 0, 2)
    Hall[:, 6:, -1, -1] = Hs[3:, :, N].T
    # tau(Sigma Y(wn_i)) on the row (i,K): (D_i^-1 wn_i)[K] - u_i[K] y0_i.
    _, S, y0 = own._vectors(G, WN, False)
    traces = np.einsum("a,nai->in", own.h * own.s, S - G["u"][..., own.own] * y0)
    w2, Wf2 = c["w2"], c["Wf2"]
    c2 = dict(c, z=z, one_q=lambda F, X: ((F * w2) @ X.T).imag,
              double_q=lambda F1, F2, f: c["double_q"](F1, F2, f, w2, Wf2))
    return assemble(Hall, traces, c2, gam, r, sigma, signal, float(own.h @ own.s), rounds)
