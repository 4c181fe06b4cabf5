"""The chain route of paper 004's Algorithm 1 (``004_98172ed3646eef14.txt``, eqs. 10-11, K
local steps) between its pencil and its curves, shared by the shared spectrum
(``sigma.algorithm1.chain.chain_parts``) and covariate shift (``shift.algorithm1.chain``): the
pencil solved on the contour's upper nodes and at z = 1 with the couplings of the curves'
two-point functions (``solved_couplings``; ``sigma.algorithm1.chain``, steps 3-4), and the
two-point columns put in the curves' order (``columns_in_order``). Checked through the routes
that use them (``tests/test_rounds_sigma_alg1chain.py``, ``tests/test_rounds_shift_alg1_chain.py``:
the dense pencils where both apply)."""

from __future__ import annotations

import numpy as np


def solved_couplings(pen, c, gam, r, sigma, signal, eta, lam):
    """(Chat, Ghat) of the chain pencil ``pen`` at the upper nodes of the contour ``c`` and at
    z = 1 (``sigma.algorithm1.chain``, step 4), or instead of z = 1 at the upper nodes
    ``c["around"]`` of the circle around it (pooled N < d: ``sigma.algorithm1.pooled``), the
    couplings of the curves' two-point functions and the local vector au (its step 3;
    ``sigma.algorithm1.curves``, step 3)."""
    z, M, nb = c["z"], gam.size, pen.nb
    far = 4.0 * max(1.0, -c["lo"])
    path = list(far * np.geomspace(1.0, 1e-3 * np.min(z.imag) / far, 24)) + [0.0]
    one = np.asarray(c.get("around", [1.0]))
    tau_a, _, _ = pen.solve_arc(z, path)
    tau_1, _, _ = pen.solve(lambda y: one + 1j * y, path)
    zz = np.concatenate([z, one])
    _, C, G = pen.solve(lambda t: zz, [0.0], tau0=np.concatenate([tau_a, tau_1]))
    cf, au = np.zeros((M, nb)), np.zeros((M, nb))
    cf[:, pen.lr] = -eta
    au[:, 1] = 1.0
    au[:, pen.lr[:-1]] = eta * lam
    au[:, pen.lr[-1]] = -(1.0 - eta * lam)
    c_th = np.zeros(pen.n)
    c_th[0] = -1.0
    c_th[1 + nb * np.arange(M)] = -1.0
    noise = 0.5 * sigma ** 2 * gam
    couplings = [[(r ** 2, au, au, False)],
                 [(noise, au, cf, False), (noise, cf, au, False)],
                 [([signal ** 2], c_th, c_th, True)]]
    return C, G, couplings, au


def columns_in_order(H, N):
    """H (..., N + 1, 2 N + 2) of ``two_point`` at the nodes z and z = 1 with their conjugates
    as columns, reordered in place (upper, conjugates, z = 1; the conjugate of z = 1 dropped):
    (..., N + 1, 2 N + 1); with P > 1 nodes of a circle in place of z = 1 (pooled N < d), H
    (..., N + P, 2 N + 2 P) reordered to (upper, conjugates, circle, its conjugates), a copy.
    One slice at a time: a reindexed copy of H (M N^2 entries) doubled the peak memory."""
    P = H.shape[-2] - N
    if P > 1:
        return H[..., np.r_[0:N, N + P:2 * N + P, N:N + P, 2 * N + P:2 * N + 2 * P]]
    for H_ in H.reshape((-1,) + H.shape[-2:]):
        one = H_[:, N].copy()
        H_[:, N:2 * N] = H_[:, N + 1:2 * N + 1].copy()
        H_[:, 2 * N] = one
    return H[..., :2 * N + 1]
