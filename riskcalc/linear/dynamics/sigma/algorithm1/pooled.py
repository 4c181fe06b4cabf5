"""Paper 004's Algorithm 1 with K local steps under a shared covariance spectrum when the pooled
samples do not span R^d: the whole round map on the contour, z = 1 inside (derived here).

Model, pencil and notation as ``sigma.algorithm1.curves`` (paper 004,
``004_98172ed3646eef14.txt``, Appendix B.1, eqs. 10-11; S_j = Sigma^(1/2) Z_j^T Z_j Sigma^(1/2)
/ n_j; Y_m(a) = sum_b a_b G_(m,b), m = 0 the server, m = s_i client i's own model). Pooled N < d:
sum_j min(1, 1 / gamma_j) < 1, so every gamma_j > 1; Sigma = I is ``algorithm1.pooled``.

1. The split. N = the intersection of the kernels of the S_j (the kernel of the pooled design,
   n_1 + .. + n_M samples of N(0, Sigma): dimension mu0 d, mu0 = 1 - sum_j 1 / gamma_j) and R =
   N^perp (the pooled range, Euclidean complement) are invariant under every S_j (symmetric, N in
   each kernel), hence under every product of them and their transposes: every Y_m(a) maps N
   into N (there it is its value at S_j = 0) and R into R. Sigma need not keep either (P_N
   Sigma P_R != 0 in general). On N the round map acts as on one coordinate with S_j = 0, the
   consensus fixed (``algorithm1.pooled``, step 1), and training from 0 never enters N: the
   error of every model is -P_N theta_0 there at every T, so with c_th (``sigma.algorithm1.
   curves``, step 2) oint z^T Y_m(c_th) P_N dz = -P_N for every T >= 0 and Y_m(c_th) P_N = -P_N /
   (z - 1), the pole of Phi's eigenvalue 1 (for the server and every own model alike). The
   data vectors kill N: Y_m(au_j) = Y_m(cf_j) S_j vanishes on N, and f_j = S_j u_j + n_j lies
   in R, so the data couplings and the cross term tau(Sigma Y(au_i)) of the curves (step 3
   there) have no pole at z = 1.
2. The theta_0 coupling. With Y = -P_N / (z - 1) + Y_R, Y_R = P_R Y P_R (the same for Y^T) ::

       tau(Sigma Y1 Y2^T) = tau(Sigma P_N) / ((z1 - 1)(z2 - 1)) + tau(Sigma Y1_R Y2_R^T),

   the cross terms tau(Sigma Y1_R P_N) = tau(Sigma P_R Y1 P_R P_N) and tau(Sigma P_N Y2_R^T)
   vanishing (P_R P_N = 0): at finite d, P_N Sigma P_R != 0 makes theta_0^T Y_R^T Sigma P_N
   theta_0 nonzero for a given theta_0, but its mean over the uniform direction of theta_0 is
   signal^2 tau(Y_R^T Sigma P_N) = 0, and the quadratic form concentrates on that mean. So the
   curves' formulas hold as they stand (operator identities: z^T and P_T are polynomials) on a
   contour around the whole spectrum, z = 1 inside: the ellipse with foci min(0, bottom) and 1
   (``pencil._contour_nodes``), where z^T (z1^T z2^T at z = 1: 1) gives the bias its constant
   signal^2 tau(Sigma P_N) at every finite T. tau(Sigma P_N): the deterministic equivalent of
   x (S + x)^-1 for one Wishart of ratio gamma_p = 1 / sum_j (1 / gamma_j) (the pooled design)
   is kappa (Sigma + kappa)^-1 (``engine.kappa``, eq. (*)), x -> 0: tau(Sigma P_N) = kappa0
   tau(Sigma (Sigma + kappa0)^-1) = kappa0 / gamma_p, kappa0 = kappa(gamma_p, 0) (the
   min-norm interpolator's bias, HMRT19 Thm 3; mu0 at Sigma = I); tau(P_N) = mu0 unweighted.
3. The edge of Phi on R. The spectrum is [lo, top] (top < 1, the pooled range) and the atom
   1: the density scans of ``pencil.spectrum_edges`` (Im tau(Sigma G_00) against y) see the
   atom as outside at every scan point off it (its part - tau(Sigma P_N) y / ((x - 1)^2 + y^2)
   is proportional to y), and m = tau(Sigma G_00) decreases in z on (top, 1) too (the atom's
   residue tau(Sigma P_N) > 0: G_00 = P_N / (z - 1) on N exactly, ``algorithm1.pooled``, step
   2), so the scan and the fold find top on the pooled range (measured, Sigma = I: the edge of
   ``algorithm1.pooled.pooled_contraction`` to 1e-13). top is the contraction; the rounds'
   horizon (``fedavg.round_horizon``) from it. One client (M = 1, gamma > 1; the scan found no
   spectrum there: fuzz42 path F1): Phi acts on (v, w) at each eigenvalue s of S as a 2 x 2
   matrix with characteristic polynomial q(z; s) = (z - a)(z - 1 + g lam) - g lam lam c z
   (``algorithm1.pooled.check_one_client``), a = (1 - eta (s + lam))^K, lam c = lam (1 - a) /
   (s + lam). Its larger root z*(s) is at least 1 - g lam (q(1 - g lam) <= 0), where dq/ds =
   -a' (z - 1 + g lam) - g lam z (lam c)' > 0 (a and lam c = lam eta sum_(k<K) (1 - eta (s +
   lam))^k decrease in s for eta (L + lam) <= 1), so z* decreases in s: top = z*(s_lo), s_lo the
   bottom of S's nonzero spectrum under H (``sigma.fedavg.edges``), which may lie below a0
   (``one_client_top``).
4. T = inf. z^T -> 0 on the contour except at its pole z = 1, whose residue keeps z^T = 1: the
   theta_0 part of every model's bias tends to signal^2 tau(Sigma P_N) (the pooled min-norm
   interpolator's: every model's fixed point, ``algorithm1.pooled``, step 4), and P_T(z) ->
   the value at z = 1 of the data couplings, analytic there (step 1) but not computable there
   (the pencil is singular at z = 1): their mean over the circle abs(z - 1) = rho_c, rho_c =
   (1 - top) / 4 (``CIRCLE_NODES`` equally spaced nodes; the Taylor series at 1 converges out to
   1 - top, so the rule's error is 4^-n of its scale), in each variable, for the curves' point
   z = 1 (``at_one``). The distance ||w_T - w_inf||^2 (unweighted, no N part: both models are
   0 on N) is the curves' less the N part signal^2 mu0 of its theta_0 double contour at finite
   T. Checks at the solve: the contour encloses the whole mass tau(Sigma) of tau(Sigma G_00),
   the circle N's part of it (``check_masses``).
5. Personalization from the round-T server model (``sigma.algorithm1.personalize``): its row
   f_i reads F_i G_0b, and F_i (FTFA's (I - eta' S_i)^k, RTFA's lam' (S_i + lam')^-1) is the
   identity on N, so the same holds: the circle's mean gives its point z = 1 (``at_one`` with
   the node at infinity kept) and T = inf adds signal^2 tau(Sigma P_N).

Scope: as ``algorithm1.pooled`` (g lam <= 1, eta (L + lam) <= 1, ``inputs.check_step_scope``);
the dense pencil and, beyond M K^2 = ``sigma_pencil.MAX_UNKNOWNS``, the chain's
(``sigma.algorithm1.chain``: the circle's nodes joined to the upper nodes of its two-point
scheme; personalization on the dense pencil only, as when the samples span). Checks
(``tests/test_rounds_sigma_alg1_pooled.py``): Sigma = I against ``algorithm1.pooled`` (server
and own models, FTFA), the continuation in gamma from spanning federations, T = inf against
FedAvg's K = 1 fixed point, K = 1, T = 1 against free moments, the contraction against the
round map's eigenvalues at finite d, the chain pencil against the dense one, and the literal
algorithm at three d.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.pooled import pooled_atom
from riskcalc.linear.dynamics.fedavg import enclosed, round_horizon
from riskcalc.linear.dynamics.inputs import check_step_scope
from riskcalc.linear.dynamics.sigma.fedavg.edges import edges as sigma_edges
from riskcalc.linear.dynamics.sigma.algorithm1.pencil import (Alg1Pencil, _contour_nodes,
                                                              spectrum_edges)

#: Nodes of the circle around z = 1 (step 4): the rule's error 4^-24 = 4e-15 of the scale.
CIRCLE_NODES = 24


def held_apart(gam, spectrum):
    """(tau(Sigma P_N), tau(P_N)) of the pooled null space N (module docstring, step 2)."""
    from riskcalc.linear.engine.kappa import effective_ridge

    gp = 1.0 / float(np.sum(1.0 / np.asarray(gam, float)))
    kappa0 = float(effective_ridge(gp, 0.0, spectrum))
    return kappa0 / gp, pooled_atom(gam)


def one_client_top(gam, lam, eta, K, g, spectrum):
    """``spectrum_edges``' (top, bottom, low) for one client (module docstring, step 3): the
    larger root of the 2 x 2 map at the bottom s_lo of the client's nonzero sample spectrum,
    after the scope check (eta (L + lam) <= 1, g lam <= 1: no negative part, low = 0). Under
    covariate shift (``shift.algorithm1.pooled``) ``spectrum`` is the client's own covariance
    (its weight 1: the clients' mean), so the same (personalization beyond 200 unknowns said
    'the spectrum of the round map was not found on the scan'; fuzz42 path F5)."""
    bottom, L = sigma_edges(spectrum.atoms, spectrum.weights, gam, np.array([1.0]))[:2]
    check_step_scope(gam, L, lam, eta, K, g, "the top of the client's sample spectrum",
                     pooled_ok=True)
    gl, a = g * lam, (1.0 - eta * (bottom + lam)) ** K
    b = a + 1.0 - gl + gl * lam * (1.0 - a) / (bottom + lam)
    top = 0.5 * (b + np.sqrt(b * b - 4.0 * a * (1.0 - gl)))
    if not top < 1.0 - 1e-9:
        raise ValueError(f"gamma: Algorithm 1 with one client (gamma {gam[0]:.6g}): the round "
                         f"map's top on the client's range, 1 - {1.0 - top:.3g}, is within 1e-9 "
                         "of 1 (gamma near 1, or step_size and lam small); move gamma away from "
                         "1 or give a larger lam or step_size")
    return float(top), None, 0.0


def one_client_unsolved(exc, gam, lam, eta, g, top):
    """Raise ``exc``'s failed pencil solve for one client as the case it is: the solve near z =
    1 fails where the server step g lam is small (the top 1 - (1 - top) near 1, the circle
    around z = 1 small; measured: gamma 2, K = 2, eta 0.1, g = 1 at lam 1e-4, g = 0.01 at lam
    3e-4; the default g = 1 / lam answered down to lam 1e-5), where the answers that converge
    agree with an independent MP integral of the 2 x 2 recursion to 4e-13 (fuzz42 path F2)."""
    raise SolverError(f"global_step: Algorithm 1 with one client (gamma {gam[0]:.6g} > 1: its "
                      "samples do not span R^d): the pencil's solve near z = 1 did not converge "
                      f"({exc}); the round map's top is 1 - {1.0 - top:.2g} (global_step lam = "
                      f"{g * lam:.3g}, step_size lam = {eta * lam:.3g}): give a larger "
                      "global_step (the default 1 / lam) or lam") from exc


def pooled_contour(gam, p, lam, eta, K, g, rounds, spectrum, pencil=Alg1Pencil, ends=None,
                   held=None):
    """``contour.contour``'s dict for pooled N < d (module docstring, steps 2-4): the edges on
    the pooled range (scanned with ``pencil``'s solves; ``ends`` as ``spectrum_edges``), the
    ellipse with foci lo and 1 (z = 1 inside), the upper nodes of the circle around z = 1
    (``around``, ``around_w``) and (``held``) tau(Sigma P_N), mu0 (given: covariate shift's,
    ``shift.algorithm1.pooled``)."""
    top, bottom, low = (one_client_top(gam, lam, eta, K, g, spectrum)
                        if gam.size == 1 else
                        spectrum_edges(gam, p, lam, eta, K, g, spectrum, pencil=pencil,
                                       ends=ends, pooled_ok=True))
    lo = min(0.0, low, bottom if bottom is not None else 0.0)
    _, over, finite, t_max = round_horizon(top, rounds)
    z, w, n = _contour_nodes(lo, 1.0, top, t_max)
    half = CIRCLE_NODES // 2
    ring = 0.25 * (1.0 - top) * np.exp(1j * np.pi * (np.arange(half) + 0.5) / half)
    return {"z": z, "w": w, "n": n, "lo": lo, "top": top, "low": low, "rho": top,
            "over": over, "finite": finite, "t_max": t_max, "circle": False, "bound": False,
            "around": 1.0 + ring, "around_w": ring / CIRCLE_NODES,
            "held": held_apart(gam, spectrum) if held is None else held}


def at_one(H, N, P):
    """Two-point functions H (..., N + P + e, 2 N + 2 P + e) on (upper contour nodes, upper
    circle nodes, e real points) x (contour, its conjugates, circle, its conjugates, the same
    real points) reduced to the curves' form (..., N + 1 + e, 2 N + 1 + e), the circle replaced
    by the point z = 1, its mean in each variable (module docstring, step 4), with
    H(conj z1, conj z2) = conj H(z1, z2) for the conjugate rows. (A real-symmetric single
    contour term's mean over the circle is that of the real part on its upper nodes.)"""
    R, Cn = H.shape[-2:]
    flip = np.r_[N:2 * N, 0:N, 2 * N + P:2 * N + 2 * P, 2 * N:2 * N + P, 2 * N + 2 * P:Cn]
    ring, cols = slice(N, N + P), slice(2 * N, 2 * N + 2 * P)
    row = (H[..., ring, :].sum(axis=-2) + H[..., ring, flip].conj().sum(axis=-2)) / (2 * P)
    col = H[..., cols].sum(axis=-1) / (2 * P)
    keep_r, keep_c = np.r_[0:N, N + P:R], np.r_[0:2 * N, 2 * N + 2 * P:Cn]
    out_r, out_c = np.r_[0:N, N + 1:R - P + 1], np.r_[0:2 * N, 2 * N + 1:Cn - 2 * P + 1]
    out = np.empty(H.shape[:-2] + (R - P + 1, Cn - 2 * P + 1), complex)
    out[..., out_r[:, None], out_c] = H[..., keep_r[:, None], keep_c]
    out[..., out_r, 2 * N] = col[..., keep_r]
    out[..., N, out_c] = row[..., keep_c]
    out[..., N, 2 * N] = row[..., cols].sum(axis=-1) / (2 * P)
    return out


def ring_mean(f, N):
    """Single-contour terms f (..., N + P) on (upper contour nodes, upper circle nodes) with
    the circle replaced by the point z = 1 (..., N + 1): its mean, that of the real part on
    the upper nodes for f(conj z) = conj f(z) (module docstring, step 4)."""
    return np.concatenate([f[..., :N], f[..., N:].real.mean(axis=-1, keepdims=True)], axis=-1)


def check_masses(pen, G, c, Es, a0, gl) -> None:
    """(1 / 2 pi i) oint tau(Sigma G_00) dz over the contour must be tau(Sigma) = ``Es`` (the
    whole spectrum, z = 1 inside: the server block of the identity), over the circle the
    residue of N, tau(Sigma P_N) (1 - a0) / (1 - a0 + g lam a0) (G_00 on N,
    ``algorithm1.pooled``, step 2; a0 = (1 - eta lam)^K): a band the edge scan missed, or a
    circle reaching the spectrum, would break one of them (module docstring, step 4;
    ``fedavg.enclosed``). ``G`` the dense or the chain pencil's solution (``column0``)."""
    N = c["z"].size
    m = np.einsum("a,na->n", pen.h * pen.s, pen.column0(G)[..., 0])
    edges = (c["lo"], c["top"])
    what = "Algorithm 1's curves with a spectrum and pooled N < d"
    enclosed(float(np.sum((m[:N] * c["w"]).imag)) / Es, 0.0, edges, what)
    circle = 2.0 * float(np.sum((m[N:] * c["around_w"]).real))
    held = c["held"][0] * (1.0 - a0) / (1.0 - a0 + gl * a0)
    enclosed(circle / held, 0.0, edges, what + ", the circle around z = 1")
