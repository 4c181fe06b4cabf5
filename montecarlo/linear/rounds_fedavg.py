"""FedAvg with K local gradient steps per round: every client's risk after each round, exactly
given the designs (the closed form behind ``montecarlo.linear.rounds``; model and risk there).

Derived here. With S_j = X_j^T X_j / n_j, K steps of size
eta from w give v_j = A_j w + G_j b_j, A_j = I - Q_j, Q_j = 1 - (1 - eta S_j)^K (the projector
on range S_j for K = inf), G_j S_j = Q_j, b_j = S_j theta_j + X_j^T eps_j / n_j. The server
update w <- w + g sum_j p_j (v_j - w) is w <- (I - g D) w + g (D theta_0 + z + c) with
D = sum_j p_j Q_j, z = sum_j p_j Q_j u_j, c = sum_j p_j G_j X_j^T eps_j / n_j, so from w = 0

    w_T = P_T theta_0 + R_T (z + c),  R_T = g sum_{t<T} (I - g D)^t,  P_T = R_T D = I - (I - g D)^T.

In the eigenbasis D = W diag(delta) W^T both are diagonal: p_T(delta) = 1 - (1 - g delta)^T,
r_T = p_T / delta (g T on the null space of D, which z + c never reach). With E u u^T =
r^2/d I, E theta_0 theta_0^T = signal^2/d I and independent sources, client j's risk of w_T is

    bias = signal^2/d tr((I-P) Sigma (I-P)) + tr(Sigma R Z R) - 2 p_j r_j^2/d tr(Sigma R Q_j)
           + r_j^2/d tr Sigma,                                       variance = tr(Sigma R N R),

Z = sum_k p_k^2 r_k^2/d Q_k^2, N = sum_k p_k^2 sigma_k^2/n_k G_k S_k G_k. Every trace
tr(M1 R M2 R) is f^T (M1_W o M2_W) f with f = r_T(delta) and M_W = W^T M W (o: Hadamard
product), so after one eigendecomposition of D each T costs O(d^2). Client j's own model after
round T is v_j - theta_j = A_j (w_{T-1} - theta_j) + G_j X_j^T eps_j / n_j: the same formulas with
Sigma replaced by A_j Sigma A_j, plus the noise cross term 2 p_j sigma_j^2/n_j tr(Sigma A_j R
G_j S_j G_j) and the constant sigma_j^2/n_j tr(Sigma G_j S_j G_j). The fixed point (T = inf, when
the spectral radius max abs(1 - g delta) on the range of D is below 1) has p = 1, r = 1/delta on
the range; E||w_T - w_inf||^2 = signal^2/d sum (p_T - p_inf)^2 + sum (r_T - r_inf)^2 (Z_W +
N_W)_aa. All S_j, Q_j act through each client's eigendecomposition (``montecarlo.linear.measure``).

Paper 004's Algorithm 1 with exact prox (K = inf, eq. 10) is this map with the local filter
q(mu) = mu / (mu + lam) and global step g lam: prox_{f_j / lam}(w) = (S_j + lam)^-1 (b_j + lam w)
= (I - Q_j) w + G_j b_j with Q_j = S_j (S_j + lam)^-1 and G_j = (S_j + lam)^-1 on the range of
S_j (the identity on its null space, where b_j has no component), and the server step
w <- w - g lam sum_j p_j (w - v_j) is FedAvg's with g lam. Its own models are the local models
above (the prox of w_{T-1}); their distance to the fixed point, v_j - v_j,inf = A_j (w_{T-1} -
w_inf), is signal^2/d sum (p - p_inf)^2 (A_j^2)_W,aa + f^T ((A_j^2)_W o (Z_W + N_W)) f with
f = r_{T-1} - r_inf.

Cost per replicate: the M decompositions, D (2 d^2 sum_j k_j), its eigendecomposition (~9 d^3),
W^T R_j and A_j W for every client (4 d^2 k_j), W^T A_j Sigma A_j W (2 d^3 per client; 2 d^2
k_j for a scaled identity), and 4 d^2 per round asked per client.

Personalization after round T (FTFA: k steps of size e on f_j from w_T, pi(mu) = 1 - (1 - e
mu)^k; RTFA: the ridge lam toward w_T, pi(mu) = mu / (mu + lam)) gives v_j = (I - Pi_j) w_T +
Pi_j S_j^+ b_j with Pi_j = pi(S_j): the own-model formulas with A_j = I - Pi_j, the round
polynomials of T (not T - 1), the u_j cross term tr(A_j Sigma A_j R_T Q_j) (Q_j A_j has the filter
q (1 - pi)) and the noise terms with G^pi_j S_j G_j = pi q / mu, (G^pi_j)^2 S_j = pi^2 / mu on
the range of S_j. The local model of round T + 1 is the case pi = q (T = 0 personalizes the zero
model: P = R = 0). Each personalization costs what the own model does (A_j W and
W^T A_j Sigma A_j W per client, 4 d^2 per round asked).
"""

from __future__ import annotations

import numpy as np

from montecarlo.linear.rounds_propagate import fedavg_factors
from montecarlo.linear.rounds_inputs import stalled_advice

QUANTITIES = ("risk", "bias", "variance", "local_risk", "global_risk",
              "distance_to_fixed_point", "global_distance")


def _polys(delta, T, g, tol):
    """p_T(delta), r_T(delta) (module docstring); T = inf gives the fixed point."""
    on = np.abs(delta) > tol
    safe = np.where(on, delta, 1.0)
    if np.isinf(T):
        return on.astype(float), np.where(on, 1.0 / safe, 0.0)
    x = g * delta
    small = np.abs(x) < 0.5
    with np.errstate(over="ignore", invalid="ignore"):
        pt = np.where(small, -np.expm1(T * np.log1p(-np.where(small, x, 0.0))),
                      1.0 - (1.0 - x) ** T)
    return np.where(on, pt, 0.0), np.where(on, pt / safe, g * T)


def _gram(blocks, weights):
    """sum_j B_j diag(w_j) B_j^T as one product of the stacked blocks: with every w >= 0,
    C C^T for C = [B_j diag(sqrt(w_j))], which numpy runs as a symmetric rank-k update."""
    w = np.concatenate(weights)
    B = np.hstack(blocks)
    if (w >= 0).all():
        C = B * np.sqrt(w)
        return C @ C.T
    return (B * w) @ B.T


def fedavg_conditional(basis, n, s, p, r, sigma, signal, rounds, K, eta, g,
                       filters=(), lam=None) -> dict:
    """FedAvg's curves exactly given the designs (expectation over theta_0, u_j and noise).

    Derivation in the module docstring (derived here; paper 003 Sec. 2 model, FedAvg of paper
    003 Alg. 4 with K full-batch local steps and global step g).

    Parameters
    ----------
    basis : list of (R_j, mu_j)
        S_j = R_j diag(mu_j) R_j^T (``rounds_columns.client_basis``).
    n : ndarray (M,)
        Sample sizes.
    s : ndarray (d,) or (M, d)
        Eigenvalues of Sigma (designs in its eigenbasis); (M, d) under covariate shift: row j
        the eigenvalues of client j's Sigma_j in the shared basis, in which client j's risks
        are measured (the designs carry the Sigma_j: every formula above keeps its form, with
        Sigma -> Sigma_j in client j's risks; ``montecarlo.linear.rounds_shift``).
    p, r, sigma : ndarray (M,)
        Weights, ||u_j||, noise levels.
    signal : float
        ||theta_0||.
    rounds : sequence
        Rounds T (ints, any order; inf for the fixed point).
    K, eta, g : float
        Local steps (int or inf), local step size, global step.
    filters : sequence of callable
        Personalization filters pi (``rounds_inputs.personalization_filters``): client j's
        model (I - pi(S_j)) w_T + pi(S_j) S_j^+ b_j from the server model of round T.
    lam : float, optional
        Paper 004's Algorithm 1 with exact prox (eq. 10) and prox coupling lam > 0 instead of
        FedAvg: the filter mu / (mu + lam), the server step ``g`` lam (``g`` is the paper's
        gamma; ``K`` and ``eta`` unused), and ``risk``, ``bias``, ``variance``,
        ``distance_to_fixed_point`` of each client's own model (module docstring).

    Returns
    -------
    dict
        Arrays (M, len(rounds)) as ``rounds_propagate.curve`` (``global_*`` = the server
        model, which ``risk`` measures for FedAvg), ``personalized`` (len(filters), M,
        len(rounds)) and ``contraction``.
    """
    d, m = np.shape(s)[-1], len(basis)
    metric = np.broadcast_to(s, (m, d))         # client j's risks in diag(metric[j])
    if lam is None:
        q = [fedavg_factors(mu, K, eta) for _, mu in basis]
    else:
        q, g = [mu / (mu + lam) for _, mu in basis], g * lam
    D = _gram([R for R, _ in basis], [pj * qj for pj, qj in zip(p, q)])
    delta, W = np.linalg.eigh(D)
    tol = np.abs(delta).max() * d * np.finfo(float).eps * 10
    radius = float(np.max(np.abs(1.0 - g * delta[np.abs(delta) > tol])))
    if any(np.isinf(t) for t in rounds) and not radius < 1.0:
        raise ValueError(f"the iteration does not converge (spectral radius of its "
                         f"round map {radius:.6g} >= 1): no fixed point (rounds = inf); "
                         + stalled_advice(g, radius, lam, lam is None and np.isfinite(K)))
    Y = [W.T @ R for R, _ in basis]
    ZW = _gram(Y, [pk ** 2 * rk ** 2 / d * qk ** 2 for pk, rk, qk in zip(p, r, q)])
    NW = _gram(Y, [pk ** 2 * sk ** 2 / nk * qk ** 2 / mu
                   for pk, sk, nk, qk, (_, mu) in zip(p, sigma, n, q, basis)])
    polys = [_polys(delta, t, g, tol) for t in rounds]
    P = np.array([x[0] for x in polys]).T
    F = np.array([x[1] for x in polys]).T
    # The local model of round T starts from w_{T-1} (T = 0: no round yet, the zero model).
    before = [_polys(delta, t - 1 if t >= 1 else 0, g, tol) for t in rounds]
    Pb = np.array([x[0] for x in before]).T
    Fb = np.array([x[1] for x in before]).T
    p_inf, f_inf = _polys(delta, np.inf, g, tol)

    def quad(H, G):
        return np.sum(G * (H @ G), axis=0)

    memo = {}

    def server(s):
        """(iso, the bias terms shared by the clients, variance) of the server model in the
        metric diag(s), once per distinct covariance (SW = W^T diag(s) W)."""
        key = s.tobytes()
        if key not in memo:
            iso = bool(np.all(s == s[0]))
            SW = s[0] * np.eye(d) if iso else (W.T * s) @ W
            theta0 = signal ** 2 / d * ((1.0 - P) ** 2 * np.diag(SW)[:, None]).sum(0)
            memo[key] = iso, theta0 + quad(SW * ZW, F), quad(SW * NW, F)
        return memo[key]

    dist = (signal ** 2 / d * ((P - p_inf[:, None]) ** 2).sum(0)
            + ((F - f_inf[:, None]) ** 2 * np.diag(ZW + NW)[:, None]).sum(0))

    def null_w(j):
        """W^T (I - R_j R_j^T) W, the projector on the null space of S_j: exactly 0 for a
        full-rank client (formed as I - Y_j Y_j^T it is rounding, which a huge covariance
        made a negative own-model risk: -4.5e32 at Sigma = 1e50 I; fuzz41 path2 F1)."""
        return np.zeros((d, d)) if basis[j][1].size == d else np.eye(d) - Y[j] @ Y[j].T

    def own(j, pi, Pc, Fc, parts=False):
        """Client j's risk of (I - Pi_j) w + Pi_j S_j^+ b_j (Pi_j = pi(S_j)) from the server
        model with round polynomials (Pc, Fc): Sigma -> A_j Sigma A_j, A_j = I - Pi_j, in the W
        basis (B = A_j W; module docstring); (bias, variance) with ``parts``."""
        (R, mu), Yj, qj, u2, s = basis[j], Y[j], q[j], r[j] ** 2 / d, metric[j]
        if server(s)[0]:
            SWj = s[0] * (null_w(j) + (Yj * (1.0 - pi) ** 2) @ Yj.T)
            Gm = s[0] * Yj * (1.0 - pi)
        else:
            B = (0.0 if mu.size == d else W - R @ Yj.T) + (R * (1.0 - pi)) @ Yj.T
            SWj, Gm = (B.T * s) @ B, B.T @ (s[:, None] * R)
        cross = ((Yj * (qj * (1.0 - pi))) * Gm).sum(1)
        ncross = ((Gm * (pi * qj / mu)) * Yj).sum(1)
        own_noise = sigma[j] ** 2 / n[j] * (pi ** 2 / mu) @ (s @ R ** 2)
        bias = (signal ** 2 / d * ((1.0 - Pc) ** 2 * np.diag(SWj)[:, None]).sum(0)
                + quad(SWj * ZW, Fc) - 2 * p[j] * u2 * (cross @ Fc) + u2 * np.trace(SWj))
        variance = quad(SWj * NW, Fc) + 2 * p[j] * sigma[j] ** 2 / n[j] * (ncross @ Fc) \
            + own_noise
        return (bias, variance) if parts else bias + variance

    def own_distance(j):
        """E||v_j,T - v_j,inf||^2 of client j's own model (module docstring); at T = 0 (the
        zero model) E||v_j,inf||^2 = E||A_j w_inf||^2 + 2 E<A_j w_inf, G_j b_j> + E||G_j b_j||^2,
        whose cross terms pair w_inf's theta_0, u_j and noise-of-client-j parts with G_j b_j:
        traces of diagonal matrices times functions of S_j in the W basis."""
        (_, mu), Yj, qj = basis[j], Y[j], q[j]
        Y2 = Yj ** 2
        A2 = null_w(j) + (Yj * (1.0 - qj) ** 2) @ Yj.T
        out = (signal ** 2 / d * ((Pb - p_inf[:, None]) ** 2 * np.diag(A2)[:, None]).sum(0)
               + quad(A2 * (ZW + NW), Fb - f_inf[:, None]))
        if zero.any():
            u2, n2 = r[j] ** 2 / d, sigma[j] ** 2 / n[j]
            a_w = signal ** 2 / d * (p_inf ** 2 @ np.diag(A2)) + quad(A2 * (ZW + NW), f_inf)
            cross = (signal ** 2 / d * (p_inf @ (Y2 @ (qj * (1 - qj))))
                     + p[j] * u2 * (f_inf @ (Y2 @ (qj ** 2 * (1 - qj))))
                     + p[j] * n2 * (f_inf @ (Y2 @ (qj ** 2 * (1 - qj) / mu))))
            gb = (signal ** 2 / d + u2) * np.sum(qj ** 2) + n2 * np.sum(qj ** 2 / mu)
            out = np.where(zero, a_w + 2 * cross + gb, out)
        return out

    out = {k: np.empty((m, len(rounds))) for k in QUANTITIES + (
        () if lam is None else ("own_bias", "own_variance", "own_distance"))}
    zero = np.array([t == 0 for t in rounds])
    for j, ((R, mu), Yj, qj) in enumerate(zip(basis, Y, q)):
        u2, s = r[j] ** 2 / d, metric[j]
        iso, common_b, common_v = server(s)
        sR = s[:, None] * R
        cross = (Yj * qj * (W.T @ sR)).sum(1) if not iso else s[0] * (Yj ** 2 @ qj)
        out["bias"][j] = common_b - 2 * p[j] * u2 * (cross @ F) + u2 * s.sum()
        out["variance"][j] = common_v
        # Client j's own model of round T: its K steps (filter q_j) from w_{T-1}.
        zero_model = (signal ** 2 / d + u2) * s.sum()
        if lam is None:
            out["local_risk"][j] = np.where(zero, zero_model, own(j, qj, Pb, Fb))
        else:       # Algorithm 1: risk, bias, variance, distance of the own model
            b_own, v_own = own(j, qj, Pb, Fb, parts=True)
            out["own_bias"][j] = np.where(zero, zero_model, b_own)
            out["own_variance"][j] = np.where(zero, 0.0, v_own)
            out["local_risk"][j] = out["own_bias"][j] + out["own_variance"][j]
            out["own_distance"][j] = own_distance(j)
    # Personalization after round T: the filter pi(S_j) from w_T itself.
    out["personalized"] = np.array([[own(j, pi(mu), P, F) for j, (_, mu) in enumerate(basis)]
                                    for pi in filters]).reshape(len(filters), m, len(rounds))
    out["global_risk"] = out["bias"] + out["variance"]
    out["global_distance"] = np.broadcast_to(dist, (m, len(rounds))).copy()
    if lam is None:
        out["risk"] = out["global_risk"].copy()
        out["distance_to_fixed_point"] = out["global_distance"].copy()
    else:
        out["bias"], out["variance"] = out.pop("own_bias"), out.pop("own_variance")
        out["risk"] = out["local_risk"].copy()
        out["distance_to_fixed_point"] = out.pop("own_distance")
    out["contraction"] = radius
    return out
