"""Finite-M limits of FedAvg, FTFA and RTFA (FedAvg global model) for a GENERAL spectrum.

Paper 003 (``003_4b976ddf5225c17e.txt``) takes the global model to be exact (M -> infinity);
``riskcalc.linear.finite_clients`` solves the FedAvg global model (eq. 6) over M clients for
Sigma = I. Here every client shares Sigma = V diag(s) V^T with spectrum H and signal
distribution G: S_j = Sigma^(1/2) W_j Sigma^(1/2), W_j white Wishart of ratio gamma_j,
E delta_j delta_j^T = r_j^2 Phi / d with Phi = dG/dH (Phi = I for a uniform direction), and the
risk is Sigma-weighted. With A = sum_j p_j S_j, B = A - p_i S_i, F = R Sigma R (R = I, P_i^perp
or lam (S_i + lam)^-1 for FedAvg, FTFA, RTFA: eqs. 6-8, Thms 1-2) and tau = tr / d::

    B_i = r_i^2 tau(F A^-1 B Phi B A^-1) + sum_(j != i) r_j^2 p_j^2 tau(F A^-1 S_j Phi S_j A^-1)
    V_i = own_i + 2 sigma_i^2 p_i gamma_i tau(R Sigma (I - R) A^-1)
          + sum_j sigma_j^2 p_j^2 gamma_j tau(F A^-1 S_j A^-1).

Whitened coordinates (G = (sum_l p_l W_l)^-1, F_w = Sigma^-1/2 F Sigma^-1/2, Y = Sigma Phi):
the W_l are free from each other and from Sigma, so for b free from an algebra C containing a
(Biane subordination with a scalar subordination function, since b's C-valued R-transform is
scalar) ::

    E_C[(a + b)^-1] = (a + w_b)^-1 =: K,
    E_C[(a + b)^-1 Z (a + b)^-1] = K (Z + w_b'(Z)) K,
    w_b'(Z) = rho_b tau(K Z K) / (1 - rho_b tau(K^2)),

with w_b = sum_(l in b) om_l, rho_b = sum_(l in b) gamma_l om_l^2, om_l = p_l / (1 + gamma_l
p_l g) and g = tau(A^-1 Sigma) = tau(G) the root of sum_l p_l g / (1 + gamma_l p_l g) = 1, the
same scalars as for Sigma = I (rho_b is minus the derivative of w_b in g). Two identities make
every middle an element of C:

1. (a + b)^-1 b Y b (a + b)^-1 = (I - G a) Y (I - a G), and K a = I - w_b K, so
   E_C[G b Y b G] = w_b^2 K Y K + w_b'(a Y a) K^2 (the a-terms cancel exactly).
2. G b G = G - G a G, so E_C[G b G] = (w_b - w_b'(a)) K^2.

Target terms: a = p_i W_i, b = sum_(l != i) p_l W_l, C = alg(W_i, Sigma), K_w = (p_i W_i +
omega)^-1 with omega, rho over l != i. Client j != i: first a = sum_(l != j) p_l W_l, b = p_j W_j,
C = alg(a, Sigma, W_i), then the same step again for E_(W_i, Sigma)[K_j Z K_j] with
rho'' = rho - rho_j (the shift om_j is constant there). Since W_i is free from Sigma,
tau(K_w^2 Y) = k0 tau(Y) with k0 = tau(K_w^2) (the Marchenko-Pastur moment D of
``finite_clients``). In the original coordinates K = Sigma^-1/2 K_w Sigma^-1/2 =
(p_i S_i + omega Sigma)^-1 and only four traces involve F, each a chain of resolvents of S_i
(``riskcalc.linear.engine.resolvent_chain``)::

    t1 = tau(R Sigma R K Sigma Y K) (= tau(F_w K_w Y K_w)),  t2 = tau(R Sigma R K Sigma K),
    t3 = tau(R Sigma R K),  t4 = tau(R Sigma (I - R) K).

Checks (tests): Sigma = I gives ``finite_clients`` to 1e-10, M -> infinity the oracle limit of
``riskcalc.linear.engine.kappa``, M = 1 local least squares, FedAvg's scaling by tau(Y) = int s dG
(Sigma free from the W_j), and simulation of the federated pipeline.
"""

from __future__ import annotations

import numpy as np

from riskcalc.linear.engine import kappa
from riskcalc.linear.finite_clients.identity import per_p2, subordination
from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots


def sigma_group_limits(method, gam, r, sigma, count, lam, weights, spectrum, targets=None):
    """Bias and variance of a client of each group (``count`` identical clients per group)
    under ``method`` (fedavg, ftfa, rtfa) with the FedAvg global model over all clients, every
    client with covariance spectrum ``spectrum`` (module docstring; paper 003,
    ``003_4b976ddf5225c17e.txt``, eqs. 6-8 and Thms 1-2 with the global model of eq. 6).

    All target groups are solved together: their resolvent chains as one batch of
    ``riskcalc.linear.engine.resolvent_chain.chain_traces`` and the sums over the other clients as
    (targets x groups) arrays, in blocks of bounded memory.

    Parameters
    ----------
    method : {"fedavg", "ftfa", "rtfa"}
    gam, r, sigma, count, lam : array_like (groups,)
        Per group: gamma_j, r_j, sigma_j, the number of identical clients, RTFA's lam.
    weights : {"samples", "uniform"}
    spectrum : Spectrum
        H (``weights``) and G (``signal_weights``) on shared atoms.
    targets : array_like of int, optional
        Indices of the groups whose client's limits are wanted (default: every group); the
        federation is always all the groups.

    Returns
    -------
    bias, variance : ndarray (groups,) or (len(targets),)

    Raises
    ------
    ValueError
        If pooled N <= d (sum_j 1/gamma_j <= 1), or a target index is out of range.
    SolverError
        If a fixed point does not converge.
    """
    gam, r, sigma, count, lam = (np.asarray(a, dtype=float) for a in (gam, r, sigma, count, lam))
    groups = np.arange(gam.size)
    tgt = groups if targets is None else np.asarray(targets, dtype=int).ravel()
    if np.any((tgt < 0) | (tgt >= gam.size)):
        raise ValueError(f"targets must be group indices in [0, {gam.size - 1}]; got {tgt}")
    fed = federation(gam, count, weights, spectrum)
    s, h = spectrum.atoms, spectrum.weights
    phi = np.divide(spectrum.signal_weights, h, out=np.zeros_like(h), where=h > 0)
    # The oracle variance per unit sigma^2 (the oracle bias is part of the target's own term).
    own = (np.zeros(tgt.size) if method == "fedavg" else
           kappa.ridge_factors(gam[tgt], lam[tgt] if method == "rtfa" else 0 * lam[tgt],
                               spectrum)[1])
    bias, var = np.empty(tgt.size), np.empty(tgt.size)
    # Per block: (targets x groups) arrays and the chains' (targets x 4 x atoms) arrays.
    for blk in kappa.blocks(tgt.size, max(gam.size, 4 * s.size)):
        i = tgt[blk]
        omega, cb1, cb2, cv2 = trace_coefficients(i, gam, r, sigma, count, fed)
        if method == "fedavg":
            # R = I, F = Sigma: whitened traces of K_w = (p_i W_i + omega)^-1, which is free
            # from Sigma (the chains [(K, y), (K, s)], [(K, s), (K, s)], [(K, s)]; tests).
            k0i = fed["k0"][i]
            t1, t2, t3, t4 = k0i * fed["tau_y"], k0i, np.full(i.size, fed["g"]), np.zeros(i.size)
        else:
            t1, t2, t3, t4 = _target_chains(method, gam[i], lam[i], fed["p"][i], omega, s, h,
                                            s * s * phi)
        bias[blk] = cb1 * t1 + cb2 * t2
        with np.errstate(invalid="ignore"):
            own_v = np.where(sigma[i] == 0, 0.0, sigma[i] ** 2 * (
                own[blk] + 2 * fed["p"][i] * gam[i] * t4 + fed["p"][i] * gam[i] * t3))
        var[blk] = own_v + cv2 * t2
    return bias, var


def federation(gam, count, weights, spectrum) -> dict:
    """The federation's subordination scalars (module docstring): the weights p, g = tau(G),
    k0 = tau(K_w^2) per target group, om_l, rho_l = gamma_l om_l^2 and tau(Y) = int s dG."""
    p, g, x, u, var_r = subordination(gam, count, weights)
    om = p / (1.0 + gam * x)
    return {"p": p, "g": g, "k0": (x / p) ** 2 + per_p2(var_r, gam, x, u, p), "om": om,
            "rho_l": gam * om ** 2, "tau_y": float(spectrum.signal_mean)}


def trace_coefficients(i, gam, r, sigma, count, fed):
    """omega and the coefficients that turn the target traces t1..t4 (module docstring) into
    the limits of the target groups ``i``::

        bias = cb1 t1 + cb2 t2,
        variance = sigma_i^2 (own_i + 2 p_i gamma_i t4 + p_i gamma_i t3) + cv2 t2,

    own_i the oracle variance per unit sigma^2 (identities 1 and 2 for the target's own data,
    applied twice for every other client j; arrays over ``i``)."""
    p, g, k0, om, rho_l, tau_y = (fed[k] for k in ("p", "g", "k0", "om", "rho_l", "tau_y"))
    others = count - (np.arange(gam.size) == i[:, None])     # clients other than the target
    omega, rho = others @ om, others @ rho_l
    k0i = k0[i]
    # Target's own signal and noise (j = i): identities 1 and 2 with b = all other clients.
    den = 1.0 - rho * k0i
    # Other clients j (columns): identity 1 or 2 conditionally on everything but W_j, then
    # again.
    rpp = rho[:, None] - rho_l
    dpp = 1.0 - rpp * k0i[:, None]
    kj2 = k0i[:, None] / dpp                        # tau(K_j^2)
    wj_b = rho_l * tau_y * (1 - 2 * om * g + om ** 2 * kj2) / (1 - rho_l * kj2)
    wj_v = rho_l * (g - om * kj2) / (1 - rho_l * kj2)
    cb1 = r[i] ** 2 * omega ** 2 + others @ (r ** 2 * om ** 2)
    cb2 = (r[i] ** 2 * rho * tau_y * (1 - 2 * omega * g + omega ** 2 * k0i) / den
           + np.einsum("tj,tj->t", others, r ** 2 * (om ** 2 * rpp * k0i[:, None] * tau_y
                                                     + wj_b) / dpp))
    with np.errstate(invalid="ignore"):
        cv2 = (np.where(sigma[i] == 0, 0.0, sigma[i] ** 2 * p[i] * gam[i]
                        * (rho * (g - omega * k0i) / den - omega))
               + np.einsum("tj,tj->t", others, sigma ** 2 * p * gam * (om - wj_v) / dpp))
    return omega, cb1, cb2, cv2


def _target_chains(method, gamma, lam, p, omega, s, h, y):
    """t1..t4 of the module docstring (FTFA or RTFA) per target: ratio gamma, weight p and
    shift omega (K = (p S + omega Sigma)^-1; y = s Y(s) = s^2 Phi(s), the middle Sigma^1/2 Y
    Sigma^1/2), each an array over targets."""
    t = np.zeros((4, gamma.size))
    # Local least squares (FTFA, gamma <= 1): R = 0.
    live = np.flatnonzero(gamma > 1) if method == "ftfa" else np.arange(gamma.size)
    if live.size == 0:
        return tuple(t)
    gamma, lam, p, omega = gamma[live], lam[live], p[live], omega[live]
    one = np.ones_like(s)
    shift_k = omega[:, None] * s
    # (eta, Lam) per target: R = P^perp or lam (S + lam)^-1, K = (p S + omega Sigma)^-1.
    blk = {"R": (np.zeros_like(gamma) if method == "ftfa" else lam,
                 np.broadcast_to(one, shift_k.shape)), "K": (1.0 / p, shift_k)}
    # The four chains share these two blocks: solve their diagonal roots once.
    root = {name: diagonal_roots(gamma, s, h, *b) for name, b in blk.items()}

    def chain(parts):
        eta, shifts, roots = (np.stack(v, axis=1) for v in zip(
            *((*blk[name], root[name]) for name, _ in parts)))
        return chain_traces(gamma, s, h, eta, shifts, np.stack([m for _, m in parts]), roots)

    t[0, live] = chain([("R", s), ("R", one), ("K", y), ("K", one)])
    t[1, live] = chain([("R", s), ("R", one), ("K", s), ("K", one)])
    t[2, live] = chain([("R", s), ("R", one), ("K", one)])
    t[3, live] = chain([("R", s), ("K", one)]) - t[2, live]
    return tuple(t)
