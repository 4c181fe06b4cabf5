"""Paper 004's Algorithm 1 with K warm-started local steps under COVARIATE SHIFT: its pencil with
per-client eigenvalues on the joint measure (derived here).

Model as ``shift.pencil`` (client j: gamma_j, weight p_j, rows N(0, Sigma_j), every Sigma_j
diagonal in one shared basis; the joint measure mu of ``riskcalc.linear.engine.joint_spectrum``:
atoms a of weight h_a, client j's eigenvalue v_j(a); E[.] the integral over mu, tau = tr / d)
and Algorithm 1 as ``sigma.algorithm1.curves`` (paper ``004_98172ed3646eef14.txt``, eqs. 10-11,
App. B.1: K steps v <- B_j v + eta (lam w + b_j), B_j = (1 - eta lam) I - eta S_j, from the
client's previous model, then w' = (1 - g lam) w + g lam sum_j p_j v_j').

1. Linearization: ``sigma.algorithm1.curves``, step 2, verbatim (it does not use Sigma): the
   resolvent of the round map Phi is the state part of L^-1, L = L0(z) + sum_j E_j (x) S_j,
   L0 ``sigma.algorithm1.pencil.Alg1Pencil``'s (server, state, copy and a chain of K blocks per
   client), E_j = -eta on the entries (r_j, c_j) (r_j client j's chain, c_j its copy and the
   chain's first K - 1 blocks).
2. Deterministic equivalent: ``shift.pencil``, step 2, whose Woodbury step per row of client j
   uses only that E_j sits on client j's own rows r_j and that E[x x^T] = Sigma_j for its rows
   x: it holds for any scalar L0(z), so with this L0 ::

       Ghat(a) = (L0 + sum_j v_j(a) Chat_j)^-1,  Chat_j[r_j, c_j] = -eta (I - gamma_j eta
       tau_j)^-1,  tau_j = E[v_j Ghat[c_j, r_j]],

   v_j(a) scaling the rows r_j of client j's block (``ghat``), and Newton's Jacobian with the
   weights h v_j v_k (``shift.pencil.ShiftPencil._jacobian``, used here). One covariance
   (v_j = s for every j) is ``Alg1Pencil`` term by term (``tests/test_rounds_shift_alg1.py``
   compares the curves).
3. Two points: ``shift.pencil``, step 3 (the block upper triangular pencil [[L(z2)^T, -F],
   [0, L(z1)]], again any L0), for the block (a, b) of Ghat12 as ``sigma_pencil.two_point``
   reads it from the same Y_j: ::

       Ghat12(a)_ab = (Ghat2^T F Ghat1)_ab + sum_k gamma_k v_k(a) (Chat2_k^T Ghat2[c_k, a])^T
                      Y_k (Chat1_k Ghat1[c_k, b]),
       Y_j = E[v_j Ghat12[r_j, r_j]],  (I - J12) Y = E[v_j (Ghat2^T F Ghat1)[r_j, r_j]],

   J12 with the weights gamma_k v_j v_k (``two_point``: the server's block (0, 0) and each own
   model's (s_i, s_i) for every client metric h v_i and for h, one solve per pair of nodes).
4. Edges and contour: ``sigma.algorithm1.curves``, step 4. Its symmetrization scales v_j by
   functions of S_j only (``algorithm1.rate``), so Phi stays similar to a symmetric map under
   shift (a_j = B_j^K >= 0); Weyl's window (``sigma.algorithm1.pencil._window``) needs each
   client's sample spectrum, here under its own Sigma_j (``client_ends``), and the density
   scan reads Im tau(W G_00) for the positive diagonal W = sum_j p_j Sigma_j (this pencil's
   ``s``, as ``shift.pencil``; any positive weight has the same support and fold).
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.dynamics.shift.pencil import ShiftPencil
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import Alg1Pencil


class ShiftAlg1Pencil(Alg1Pencil):
    """``Alg1Pencil`` with client j's eigenvalue v_j(a) (``V`` (M, atoms)) on its rows (module
    docstring, step 2); ``atoms`` the weights' positive mean sum_j p_j v_j / sum_j p_j (the
    edges' density and the branch checks), the other arguments ``Alg1Pencil``'s."""

    what = "Algorithm 1 with local steps under covariate shift"

    def __init__(self, V, atoms, weights, gam, p, lam, eta, K, g, shift=0.0, sign=1.0,
                 transposed=False):
        super().__init__(atoms, weights, gam, p, lam, eta, K, g, shift=shift, sign=sign,
                         transposed=transposed)
        self.V = np.asarray(V, float)
        rowv = np.zeros((self.V.shape[1], self.n))
        for j in range(self.M):
            rowv[:, self.rows[j]] = self.V[j][:, None]
        self.rowv = rowv                      # v_j(a) on client j's rows (r_j, or c_j transposed)

    def ghat(self, z, C):
        """Ghat(a) (N, atoms, n, n) at the nodes x = z (N,) (``Alg1Pencil.ghat``, step 2)."""
        E = self.chat_blocks(C)
        L = self.L0 + self.rowv[None, :, :, None] * E[:, None]
        zz = self.shift + self.sign * z.real + 1j * z.imag
        L[:, :, self.zblocks, self.zblocks] += zz[:, None, None]
        return np.linalg.inv(L)

    own_weights = ShiftPencil.own_weights
    pair_weights = ShiftPencil.pair_weights
    two_point = ShiftPencil.two_point        # the blocks (a, b) given per coupling
    _jacobian = ShiftPencil._jacobian
