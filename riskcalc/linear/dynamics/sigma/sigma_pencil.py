"""FedAvg's round map with K local steps under a shared spectrum: a linear pencil (derived here).

Model as ``sigma.fedavg.one_step`` (S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio
gamma_j, Sigma with spectrum H, B = alg(Sigma)), now with K local gradient steps:
A_j = I - eta S_j, q(S_j) = I - A_j^K and D = sum_j p_j q(S_j) (``fedavg``, step 1).

1. Linearization. The resolvent (z - D)^-1 is the block (0, 0) of the inverse of the pencil L
   with n = 1 + M K blocks (block 0, and a chain (j, 1..K) per client)::

       row 0:      (z - sum_j p_j) x_0 + sum_j p_j x_(j,K)   = y_0,
       row (j,k):  A_j x_(j,k-1) - x_(j,k)                    = y_(j,k)   (x_(j,0) := x_0),

   since y = e_0 gives x_(j,k) = A_j^k x_0 and (z - sum_j p_j + sum_j p_j A_j^K) x_0 = y_0.
   Hence G = L^-1 has G_(j,k),0 = A_j^k (z - D)^-1: the clients' filters applied to the
   resolvent are blocks of G. L = L0(z) + sum_j E_j (x) S_j with L0 scalar and E_j = -eta on
   the entries (r_j, c_j), r_j = ((j,1), .., (j,K)), c_j = (0, (j,1), .., (j,K-1)): restricted
   there E_j = -eta I_K.
2. Deterministic equivalent (``riskcalc.linear.engine.block_pencil``, one sample covariance;
   here M of them, which enter through their own rows). Each row x of client j enters L
   through the rank-K update (1/n_j) (I (x) x) E_j (I (x) x)^T; Woodbury and x^T L^-1_(ab) x /
   n_j -> gamma_j tau(Sigma G_ab) give, with tau_j = T[c_j, r_j] (K x K, T_ab = tau(Sigma
   G_ab)) ::

       E_B[G] = Ghat(s) = (L0 + s sum_j Chat_j)^-1,   Chat_j[r_j, c_j] = -eta (I - gamma_j eta
       tau_j)^-1,   tau_j = E_H[s Ghat(s)[c_j, r_j]],

   a fixed point in M K^2 unknowns at each z (for K = 1 one scalar per client, the c_j of
   ``sigma.fedavg.one_step``). Newton's method: dChat_k = -gamma_k Chat_k dtau_k Chat_k, so
   dtau_j = sum_k gamma_k E_H[s^2 (Ghat[c_j, r_k] Chat_k) dtau_k (Chat_k Ghat[c_k, r_j])]
   (``_jacobian``). The solve follows the nodes of a contour from far out (where tau = E_H[s
   Ghat] with gamma = 0 is close) inwards, as ``sigma.fedavg.one_step``; the physical branch is
   the one continued from infinity (checked: Im tau(Sigma (z - D)^-1) < 0 above the real axis).
3. Two-point functions. tau(Sigma G2_00 h(S_j) G1_00) (G_i at z_i) for client functions
   h = (I - A_j^K)(I - A_j^K) and (I - A_j^K) eta sum_(k<K) A_j^k (= q^2 and q^2 / s) is the
   block (0, 0) of G2^T F G1 = [[L(z2)^T, -F], [0, L(z1)]]^-1 (upper right), F = w v^T with
   v = e_0 - e_(j,K), w = v or eta (e_0 + sum_(k<K) e_(j,k)) (the transposed pencil puts the
   filter on the right: (G2^T)_0,(j,k) = G2_00 A_j^k). The same Woodbury step on this block
   upper triangular pencil (row forms [[T2^T, T12], [0, T1]]) gives its upper right block ::

       Ghat12(s) = Ghat2(s)^T (F + s sum_k gamma_k Chat2_k^T Y_k Chat1_k) Ghat1(s),
       Y_j = T12[r_j, r_j] = E_H[s Ghat12(s)[r_j, r_j]]

   a LINEAR system for the Y_j at each pair of nodes (``two_point``, solved in
   ``sigma.fedavg.pencil_pairs``), and the traces
   tau(Sigma ...) = E_H[s Ghat12(s)_00], tau(...) = E_H[Ghat12(s)_00].
4. Edges. The edges of D's nonzero spectrum and its atom at 0, by a density scan of
   Im tau(Sigma (x + i y - D)^-1) (step 4) and as folds of the real branch (step 5): the
   derivation continues in ``pencil_edges``, steps 4 and 5.

For Sigma = I every quantity equals the scalar subordination of ``fedavg`` (measured: 1e-14).
"""

from __future__ import annotations

import weakref

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.sigma.fedavg import pencil_pairs
from riskcalc.linear.dynamics.sigma.fedavg.one_step import edges as sigma_edges

_NEWTON_ITER = 40
#: ``SigmaPencil._kept``: each live pencil's derived constants (dropped with the pencil).
_DERIVED = weakref.WeakKeyDictionary()
_TOL = 1e-12
#: ``SigmaPencil.solve``: Newton's systems of at least this many unknowns M K^2 solved by a
#: batched LU at each step (``newton_op``), smaller ones through the inverse, reused.
LU_FROM = 27
#: Most unknowns M K^2 of the fixed point (Newton's dense Jacobian costs (M K^2)^3 per node;
#: the two-point solve per pair of nodes as much).
MAX_UNKNOWNS = 200


class SigmaPencil:
    """The pencil of the module docstring for clients (gamma_j, p_j), step eta, K steps."""

    #: The blocks that carry z (the Euler predictor's dGhat/dz = -Ghat Z Ghat, Z the identity
    #: there); subclasses with z on more blocks (``sigma.algorithm1.pencil``) set their own.
    zblocks = np.array([0])
    #: What the solver's errors name.
    what = "rounds limit with a spectrum and local steps"
    #: ``pencil_edges.edges``: points per bracket and refinement of its bisection.
    bisect = 10

    def __init__(self, atoms, weights, gam, p, eta: float, K: int):
        self.s, self.h = np.asarray(atoms, float), np.asarray(weights, float)
        self.gam, self.p = np.asarray(gam, float), np.asarray(p, float)
        self.eta, self.K, self.M = float(eta), int(K), self.gam.size
        M, K = self.M, self.K
        if M * K * K > MAX_UNKNOWNS:
            # K counts the pencil's blocks per client: 1 also for local_steps = inf (the exact
            # local solve), which the message said as "local_steps = 1".
            raise ValueError(f"spectrum with {M} clients and {K} local-step block(s) each: the "
                             f"exact route solves M K^2 = {M * K * K} unknowns per contour node "
                             f"(at most {MAX_UNKNOWNS} here: its cost grows like (M K^2)^3); "
                             f"give at most {MAX_UNKNOWNS // (K * K)} clients")
        self.n = 1 + M * K
        self.rows = 1 + np.arange(M * K).reshape(M, K)                      # r_j
        self.cols = np.concatenate([np.zeros((M, 1), int), self.rows[:, :-1]], axis=1)  # c_j
        L0 = np.zeros((self.n, self.n))
        L0[0, 0] = -self.p.sum()
        L0[0, self.rows[:, -1]] = self.p
        for j in range(M):
            L0[self.rows[j], self.rows[j]] = -1.0
            L0[self.rows[j], self.cols[j]] += 1.0
        self.L0 = L0

    # --- one point -----------------------------------------------------------------------
    def chat(self, tau):
        """Chat_j[r_j, c_j] = -eta (I - gamma_j eta tau_j)^-1, (N, M, K, K) (docstring, step 2)."""
        X = self._kept("eye", lambda: np.eye(self.K), self.K) \
            - self._kept("geta", lambda: (self.gam * self.eta)[:, None, None], self.gam,
                         self.eta) * tau
        if self.K == 1:         # 1 x 1 blocks: numpy's batched inverse costs ~30 times more
            return -self.eta / X
        return -self.eta * np.linalg.inv(X)

    def chat_blocks(self, C):
        """Chat (N, M, K, K) on every client's blocks [r_j, c_j] of an (N, n, n) array of zeros
        (the pencil's s-dependent part, ``ghat``): one scatter for all clients (their rows are
        disjoint)."""
        E = np.zeros((C.shape[0], self.n, self.n), complex)
        E[:, self.rows[:, :, None], self.cols[:, None, :]] = C
        return E

    def own_blocks(self, G):
        """Every client's block G[c_j, r_j] of G (N, atoms, n, n): (N, atoms, M, K, K), one
        gather for all clients."""
        return G[:, :, self.cols[:, :, None], self.rows[:, None, :]]

    def ghat(self, z, C):
        """Ghat(s) (N, atoms, n, n) at nodes z (N,) given Chat (N, M, K, K)."""
        E = self.chat_blocks(C)
        L = self.L0 + self.s[None, :, None, None] * E[:, None]
        L[:, :, self.zblocks, self.zblocks] += z[:, None, None]
        return np.linalg.inv(L)

    def node_bytes(self):
        """Bytes of Ghat per node (all atoms)."""
        return self.s.size * self.n ** 2 * 16.0

    def column0(self, G):
        """Ghat[:, 0] (N, atoms, n) from ``ghat``'s output (``sigma_chain`` holds it as factors)."""
        return G[..., :, 0]

    def conj_join(self, one):
        """(Chat, Ghat) at the nodes and at their conjugates, stacked."""
        C, G = one
        return np.concatenate([C, C.conj()]), np.concatenate([G, G.conj()])

    def blocks(self, G, rows, cols):
        """G[rows_k, cols_j] for every pair: (N, atoms, M_rows, K, M_cols, K)."""
        return G[:, :, rows[:, :, None, None], cols[None, None, :, :]]

    def residual(self, z, tau):
        """tau - E_H[s Ghat(s)[c_j, r_j]] at the nodes z, with Chat and Ghat."""
        C = self.chat(tau)
        G = self.ghat(z, C)
        return tau - self.own_mean(self.own_blocks(G)), C, G

    def own_weights(self):
        """The weights h s of the atoms in each client's tau_j = E_H[s Ghat[c_j, r_j]], (M,
        atoms) (a pencil with per-client eigenvalues, ``shift.pencil``: client j's own)."""
        return self._kept("own", lambda: np.broadcast_to(self.h * self.s, (self.M, self.s.size)),
                          self.h, self.s, self.M)

    def _kept(self, name, make, *inputs):
        """``make()``, kept while ``inputs`` (the attributes it reads) are the same objects
        (``own_weights``' broadcast: ~2% of an edge scan); beside the pencil (``_DERIVED``),
        not among the attributes that key ``pencil_edges.edges``' memo (``kept.Kept.key``)."""
        mine = _DERIVED.setdefault(self, {})
        kept = mine.get(name)
        if kept is None or any(a is not b for a, b in zip(kept[0], inputs)):
            kept = mine[name] = (inputs, make())
        return kept[1]

    def own_mean(self, X):
        """E_H[s X] of each client's blocks X (N, atoms, M, K, K): (N, M, K, K)."""
        return np.einsum("Ma,naMkl->nMkl", self.own_weights(), X)

    def _chat_g(self, C, G):
        """Chat_k G[c_k, r_j] as [n, k, d, a, j, b] (N, M, K, atoms, M, K): one matrix product
        per node and client k (BLAS; einsum's loops were the solves' largest cost)."""
        N, A, M, K = G.shape[0], self.s.size, self.M, self.K
        Gcr = self.blocks(G, self.cols, self.rows)           # [n, a, k, ., j, .] = G[c_k, r_j]
        Q = C @ Gcr.transpose(0, 2, 3, 1, 4, 5).reshape(N, M, K, A * M * K)
        return Q.reshape(N, M, K, A, M, K)

    def _one_minus(self, J):
        """I - J (pairs, M K^2, M K^2) from J [..., j, k, x, c, d, b] of the Jacobians'
        products, in their rows (j, x, b) and columns (k, c, d)."""
        size = self.M * self.K ** 2
        # -J plus 1 on the diagonal (equal to I - J; a float eye minus a complex array is a
        # buffered mixed-type loop, several times this copy).
        out = np.ascontiguousarray(J.transpose(*range(J.ndim - 6), -6, -4, -1, -5, -3, -2))
        np.negative(out, out=out)
        out.reshape(-1, size * size)[:, ::size + 1] += 1.0
        return out.reshape(-1, size, size)

    def _jacobian(self, C, G):
        """I - J (N, M K^2, M K^2), J of the module docstring (row-major vec of tau): per node
        and pair (j, k) a matrix product over the atoms, rows (x, c), columns (d, b)."""
        N, A, M, K = G.shape[0], self.s.size, self.M, self.K
        Gcr = self.blocks(G, self.cols, self.rows)           # [n, a, j, ., k, .] = G[c_j, r_k]
        # G[c_j, r_k] Chat_k as [n, k, (a, j, x), c]: one product per node and client k.
        P = Gcr.transpose(0, 4, 1, 2, 3, 5).reshape(N, M, A * M * K, K) @ C
        P = P.reshape(N, M, A, M, K, K).transpose(0, 3, 1, 4, 5, 2).reshape(N, M, M, K * K, A)
        Q = self._chat_g(C, G).transpose(0, 4, 1, 3, 2, 5).reshape(N, M, M, A, K * K)
        wg = self.gam[:, None] * (self.h * self.s ** 2)[None, :]       # (k, a)
        return self._one_minus(((P * wg[:, None, :]) @ Q).reshape(N, M, M, K, K, K, K))

    def newton_op(self, C, G):
        """Newton's operator at (C, G) for ``newton_step``: I - J (``_jacobian``) itself from
        ``LU_FROM`` unknowns on, each step then one batched LU solve, else its inverse. A
        stage's operator serves 1 to 3 steps (its predictor, then chord steps: measured on the
        edges and contour of M = 3, K = 3-5 under two spectra, 62% of its work 3 times, 17%
        twice, 21% once); per step an LU solve costs (process CPU, one BLAS thread, 12 nodes)
        0.34 times the inverse at 27 unknowns, 0.25 at 75 (3 steps: the same as the inverse),
        0.55 at 8 (3 steps: 1.5 times it)."""
        J = self._jacobian(C, G)
        return J if J.shape[-1] >= LU_FROM else np.linalg.inv(J)

    @staticmethod
    def newton_step(op, rhs):
        """(I - J)^-1 rhs (nodes, M K^2, 1) for ``newton_op``'s ``op``."""
        return np.linalg.solve(op, rhs) if op.shape[-1] >= LU_FROM else op @ rhs

    def solve(self, nodes, path, check=True, tau0=None, tolerant=False):
        """(tau, Chat, Ghat) at nodes(path[-1]), followed from nodes(path[0]); ``check``: that
        Im tau(Sigma (z - D)^-1) has the sign of -Im z (off for nodes within rounding of the
        real axis, ``pencil_edges.edges``); ``tau0``: the solution at nodes(path[0]) if known;
        ``tolerant``: nodes where Newton's method does not converge are left behind (their
        values are not solutions) and flagged in a fourth output instead of an error."""
        z = nodes(path[0])
        failed = np.zeros(z.size, bool)
        # A copy of tau0: Newton's steps below write into tau (the caller's may be a view of
        # a kept solution, ``pencil_edges._real_step``).
        tau = (np.zeros((z.size, self.M, self.K, self.K), complex) if tau0 is None
               else np.array(tau0, complex))
        for _ in range(60 if tau0 is None else 0):      # far out: a contraction
            res, _, _ = self.residual(z, tau)
            tau = tau - res
            # Close enough for Newton's method at the path's first node, which finishes the
            # solve there: measured in test_rounds_sigma_alg1k, 12 residuals per solve here
            # against 42 to an exact fixed point (19% of all its residuals).
            if np.max(np.abs(res)) <= 1e-9 * np.max(np.abs(tau)):
                break
        size, zb = self.M * self.K ** 2, self.zblocks
        # With C and G: the residual at (z, tau) once computed there, None once tau or z moved.
        # A stage that does not move (the path's first) takes it up, and forms its Jacobian
        # only for a Newton step (from tau0 at a solution: none): one residual and one
        # Jacobian per solve fewer, the same arithmetic.
        res = C = None
        for t in path:
            zn = nodes(t)
            if C is None:
                res, C, G = self.residual(z, tau)
            op = None           # Newton's operator (``newton_op``) of the stage
            if np.any(zn != z):
                op = self.newton_op(C, G)
                # Euler predictor: dres/dz = -E_H[s dGhat[c, r]/dz], dGhat/dz = -Ghat Z Ghat.
                dG = -G[:, :, :, zb] @ G[:, :, zb, :]
                dres = -self.own_mean(self.own_blocks(dG))
                step = self.newton_step(op, (-dres * (zn - z)[:, None, None, None]).reshape(
                    z.size, size, 1))
                tau, z, res = tau + step.reshape(tau.shape), zn, None
            for it in range(_NEWTON_ITER):
                if res is None:
                    res, C, G = self.residual(z, tau)
                # Per node: the nodes already at rounding are left alone.
                act = (np.max(np.abs(res), axis=(1, 2, 3)) > _TOL * (
                    1.0 + np.max(np.abs(tau), axis=(1, 2, 3)))) & ~failed
                if not act.any():
                    break
                if tolerant and it == _NEWTON_ITER - 1:
                    failed |= act
                    break
                if op is None:      # at the stage's start (it = 0): its (C, G)
                    op = self.newton_op(C, G)
                if act.all():       # every node (one node always): no copies of G's nodes
                    if it % 3 == 2:
                        op = self.newton_op(C, G)
                    tau = tau - self.newton_step(op, res.reshape(-1, size, 1)).reshape(tau.shape)
                    res = None
                    continue
                if it % 3 == 2:            # chord steps between Jacobian updates
                    op[act] = self.newton_op(C[act], G[act])
                step = self.newton_step(op[act], res[act].reshape(-1, size, 1))
                tau[act], res = tau[act] - step.reshape(-1, self.M, self.K, self.K), None
            else:
                raise SolverError(f"{self.what}: Newton's method on the pencil did not "
                                  f"converge (t = {t:.3g})")
        if C is None:
            res, C, G = self.residual(z, tau)
        g00 = np.einsum("a,na->n", self.h * self.s, G[:, :, 0, 0])
        if check and np.any(g00.imag * np.sign(z.imag) > 1e-10 * np.abs(g00)):
            raise SolverError(f"{self.what}: the pencil solve left the physical branch")
        return (tau, C, G, failed) if tolerant else (tau, C, G)

    # --- two points ----------------------------------------------------------------------
    def two_point(self, one1, one2, couplings, block=(0, 0), symmetric=False, mirror=None):
        """H[f, lam][u, v] = E_H[lam(s) Ghat12(s)_ab] at every pair (u of one1, v of one2)
        for each coupling F = sum_i c_i w_i v_i^T (``couplings``: list of (c, W, V), W, V of
        shape (m, n), or (c, W, V, (a, b)) with its own block) and lam in (s, 1): shape
        (len(couplings), 2, N1, N2). ``block`` = (a, b) (default (0, 0)): the Woodbury step of
        the module docstring (step 3) gives every block of Ghat12 from the same Y_j, with
        G[c_k, 0] -> G2[c_k, a], G1[c_k, b]; one linear solve per pair serves all couplings.
        ``symmetric``: ``one2`` is ``conj_join(one1)`` and every coupling's trace is symmetric
        in (z1, z2) (tau(Sigma G2 h G1) with G = (z - D)^-1 and h symmetric, e.g. a function of
        the S_j: its transpose is tau(Sigma G1 h G2)), so with H(conj z1, conj z2) = conj
        H(z1, z2) only the pairs (u, v) and (u, conj v) with v >= u are solved, about half of
        them (as ``sigma_chain``'s); the others are copied from their mirror pairs, whose
        values they equal to rounding. ``mirror`` (with ``symmetric``): for each coupling f the
        coupling f' with H_f(z1, z2) = H_f'(z2, z1) (default f itself; (c, W, V) and (c, V,
        W) on a pencil whose rows W and V do not read G alike: ``own.own_pairs``)."""
        return pencil_pairs.two_point(self, one1, one2, couplings, block, symmetric, mirror)


def symmetric_pairs(pen):
    """Whether ``pen.two_point`` is ``SigmaPencil``'s, with its ``symmetric`` and ``mirror``
    (pencils with their own, the covariate shift's whose traces read other metrics, solve
    every pair)."""
    return type(pen).two_point is SigmaPencil.two_point


def stable_top(atoms, weights, gam):
    """The top of each client's sample spectrum under H (``sigma.fedavg.one_step.edges`` with
    M = 1)."""
    return np.array([sigma_edges(atoms, weights, np.array([g]), np.array([1.0]))[1]
                     for g in gam])
