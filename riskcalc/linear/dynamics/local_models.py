"""FedAvg: the risk of each client's OWN model after its K local steps of round T (derived here).

In round T client i starts from w_{T-1} (``fedavg``, step 1) and ends at
v_i = A_i w_{T-1} + Q_i S_i^+ b_i, so v_i - theta_i = A_i (w_{T-1} - theta_i) + Q_i xi_i
(xi_j = S_j^+ X_j^T eps_j / n_j, A_i = I - Q_i). With R = R_{T-1}(D), h_i = h(S_i) and
Y_i = A_i^2 = (1 - q_i)^2, the risk (Sigma = I; tau = tr / d) is ::

    signal^2 tau(Y_i (I - g D)^{2(T-1)})
    + sum_j p_j^2 tau(X_j R Y_i R),     X_j = r_j^2 q_j^2 + sigma_j^2 gamma_j q_j^2 / s,
    - 2 p_i r_i^2 tau((1 - q_i)^2 q_i R) + r_i^2 tau(Y_i)
    + 2 p_i sigma_i^2 gamma_i tau((1 - q_i) q_i^2 / s R) + sigma_i^2 gamma_i tau(q_i^2 / s).

The first trace gains signal^2 mu0 from D's atom at 0 (Y_i = 1 there); the one-point traces
are contour integrals as in ``fedavg``. The two-point traces tau(X_k R Y_i R) are double
contour integrals of tau(X_k (z1 - D)^{-1} Y_i (z2 - D)^{-1}), computed by subordination over
upper-triangular 2 x 2 matrices: (z1 - D)^{-1} Y_i (z2 - D)^{-1} is the (1, 2) block of
(Z - L)^{-1}, Z = diag(z1, z2), L = sum_j [[a_j, delta_ij Y_i], [0, a_j]], a sum of
M_2(C)-valued free elements. Operator-valued subordination Omega_j(Z) (upper triangular,
diagonal omega_j(z1), omega_j(z2), corner beta_j) satisfies G_L(Z) = E[(Omega_j - L_j)^{-1}]
and sum_j Omega_j = Z + (M - 1) G_L(Z)^{-1}. The diagonal is the scalar subordination at z1
and z2; the corner of (Omega_j - L_j)^{-1} is (omega1 - a_j)^{-1} (delta_ij Y_i - beta_j)
(omega2 - a_j)^{-1}. With K_j = E[1 / ((omega_j(z1) - a_j)(omega_j(z2) - a_j))] and L_i the
same with Y_i in the numerator, the corner equations are LINEAR: delta_ij L_i - beta_j K_j =
gamma12 (the corner of G_L) and sum_j beta_j = -(M - 1) gamma12 / (g1 g2) (the corner of
G_L^{-1}, g = G_D), whence ::

    gamma12 = (L_i / K_i) / (sum_j 1/K_j - (M - 1) / (g1 g2)),
    tau(X_k (z1 - D)^{-1} Y_i (z2 - D)^{-1}) = -beta_k E[X_k / ((omega1 - a_k)(omega2 - a_k))]
                                             + delta_ki E[X_i Y_i / ((omega1 - a_i)(omega2 - a_i))]

(conditional expectation onto client k's algebra). Every E[h / ((w1 - a)(w2 - a))] is the
divided difference -(E_h(w1) - E_h(w2)) / (w1 - w2) of the one-point functions of
``client_laws.ClientLaws.families`` (their dropped constants cancel). The two contours are
nested ellipses (the inner one with parameter 0.7 t), so that w1 != w2 at every pair of nodes.
Cost: O(M N1 N2) per curve. T = 0 is the zero model (no local phase yet); T = inf is the local
phase from the fixed point. The same computation with another client filter pi in place of q in
Y_i and the server model of round T gives personalization after round T (``personalize``).
"""

from __future__ import annotations

import numpy as np


def _dd(f1, f2, w1, w2):
    """-(f(w1) - f(w2)) / (w1 - w2) over all node pairs: (M, N1) x (M, N2) -> (M, N1, N2)."""
    return -(f1[:, :, None] - f2[:, None, :]) / (w1[:, :, None] - w2[:, None, :])


def own_terms(laws, omega, G):
    """The one-point functions E[h(s) / (omega_j - a_j)] the own models need when the
    personalization filter is the round filter q itself (the local phase): Y = (1 - q)^2, Yq,
    cross = (1 - q) q^2 / s, XYr = q^2 (1 - q)^2, XYs = q^2 (1 - q)^2 / s (exact families of
    ``ClientLaws.families``; XYr and XYs without their constants, which the divided
    differences cancel), and the constants tau((1 - q)^2), tau(q^2 / s)."""
    P, S = laws.families(omega, np.broadcast_to(G, omega.shape))
    return {"Y": P[0] - 2 * P[1] + P[2], "Yq": P[1] - 2 * P[2] + P[3], "cross": S[2] - S[3],
            "XYr": P[2] - 2 * P[3] + P[4], "XYs": S[2] - 2 * S[3] + S[4],
            "X": P[2], "Xs": S[2], "P0": P[0], "tY": laws.a2, "tpi2s": laws.q2s}


def local_risk(laws, r, sigma, gam, p, signal, g, mu0, rounds, settled, inner, outer,
               terms=own_terms, shift=1):
    """Client i's risk of its own model: bias (the theta terms) and variance (the noise
    terms), each (M, len(rounds)).

    With the defaults, the model after the local steps of round T (from w_{T-1}: ``shift`` 1;
    T = 0 is the zero model); ``terms`` and ``shift`` = 0 give the model personalized from w_T
    by another filter (``personalize``): ``terms(laws, omega, G)`` returns the one-point
    functions of ``own_terms`` for that filter. ``outer`` = (z, w, omega, G) on the upper half of
    the outer contour (``fedavg._solve``), ``inner`` the same on the inner ellipse; ``settled``
    the round beyond which the iteration has reached its fixed point to rounding.
    """
    z1, w1, om1, G1 = outer
    z2h, w2h, om2h, G2h = inner
    # The inner contour in full (conjugate half), with W = dz / (2 pi i) per node.
    z2 = np.concatenate([z2h, z2h.conj()])
    W2 = np.concatenate([w2h / 2j, (w2h / 2j).conj()])
    om2 = np.concatenate([om2h, om2h.conj()], axis=1)
    G2 = np.concatenate([G2h, G2h.conj()])
    W1 = w1 / 2j
    M = laws.M
    F1, F2 = terms(laws, om1, G1), terms(laws, om2, G2)
    coef_r, coef_s = (p ** 2 * r ** 2)[:, None], (p ** 2 * sigma ** 2 * gam)[:, None]

    noisy = bool(np.any(coef_s))
    # X_j and X_j Y_j split into their signal (r) and noise (sigma) parts.
    parts = [(coef_r * F1["X"], coef_r * F2["X"], coef_r * F1["XYr"], coef_r * F2["XYr"])]
    if noisy:
        parts.append((coef_s * F1["Xs"], coef_s * F2["Xs"], coef_s * F1["XYs"],
                      coef_s * F2["XYs"]))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        K = _dd(F1["P0"], F2["P0"], om1, om2)
        L = _dd(F1["Y"], F2["Y"], om1, om2)
        Q = np.sum(1.0 / K, axis=0) - (M - 1) / (G1[:, None] * G2[None, :])

        def two_point(Ex1, Ex2, Exy1, Exy2):                            # (M, N1, N2)
            Cx = _dd(Ex1, Ex2, om1, om2) / K
            # -beta_k = (gamma12 - delta_ki L_i) / K_k.
            return (L / K) / Q * np.sum(Cx, axis=0) - L * Cx + _dd(Exy1, Exy2, om1, om2)

        finite = np.isfinite(rounds) & (rounds >= shift) & (rounds - shift <= settled)
        Tm = np.where(finite, rounds - shift, 0.0)[:, None]

        def r_of(z):
            power = (1.0 - g * z) ** Tm
            return power, np.where(finite[:, None], (1.0 - power) / z, 1.0 / z)

        pw1, R1 = r_of(z1)
        _, R2 = r_of(z2)
        A1 = np.where(finite[:, None], pw1 ** 2, 0.0)

        def double(f):
            """sum_{k upper, l all} R(z1k) R(z2l) f_kl W1k W2l, twice its real part, (nT, M)."""
            left = np.einsum("tk,ikl->til", R1 * W1, f)
            return 2.0 * np.einsum("til,tl->ti", left, R2 * W2).real

        def one(F, E):                                                   # (nT, M)
            return ((F * w1) @ E.T).imag

        # D's atom at 0 is where every S_j vanishes, so Y = 1 there.
        bias = (signal ** 2 * (mu0 + one(A1, F1["Y"])) + double(two_point(*parts[0]))
                - 2 * (p * r ** 2) * one(R1, F1["Yq"]) + r ** 2 * F1["tY"])
        variance = np.zeros_like(bias)
        if noisy:
            variance = (double(two_point(*parts[1])) + 2 * p * sigma ** 2 * gam
                        * one(R1, F1["cross"]) + np.where(sigma > 0, sigma ** 2 * gam
                                                          * F1["tpi2s"], 0.0))
    if shift:
        zero = (rounds == 0)[:, None]
        bias = np.where(zero, signal ** 2 + r ** 2, bias)
        variance = np.where(zero, 0.0, variance)
    return bias.T, variance.T
