"""Paper 004's Algorithm 1 with K warm-started local steps: the exact risk of the server model
and of the clients' own models along the rounds (derived here).

Paper 004 (``004_98172ed3646eef14.txt``), Appendix B.1, eqs. 10-11, least-squares clients
f_j(v) = ||X_j v - y_j||^2 / (2 n_j), Sigma = I, weights p_j, global step g (the paper's gamma),
every model starting at 0. K gradient steps of size eta on h_j(v; w) = f_j(v) + lam/2 ||v - w||^2
warm-started at the client's previous model give v_j' = a_j v_j + c_j (lam w + b_j), a = a(S_j),
a(s) = (1 - eta (s + lam))^K, c(s) = (1 - a(s)) / (s + lam), b_j = X_j^T y_j / n_j; the server
moves w' = (1 - g lam) w + g lam sum_j p_j v_j'.

1. The state X = (w, v_1, ..., v_M) follows X_T = Phi X_{T-1} + beta (``algorithm1.rate``: Phi's
   w row is (alpha, g lam p_j a_j), its v_j row (lam c_j, a_j)), so from X_0 = 0
   w_T = [P_T(Phi) beta]_w with P_T(z) = (z^T - 1) / (z - 1). Errors against theta_0 instead:
   theta_0 (x) 1 is the fixed point of the noiseless round map with u_j = 0, so with
   f_j = S_j u_j + X_j^T eps_j / n_j the error e_T = w_T - theta_0 is
   [Phi^T X_0]_w + [P_T(Phi) beta_f]_w, X_0 = -theta_0 in EVERY block.
2. Resolvent of Phi by the Schur complement on the w block: for a state (x_w, x_j),
   W = Gc(z) (x_w + g lam sum_j p_j a_j (z - a_j)^{-1} x_j), with
   Gc(z) = (z - (1 - g lam) - g lam Dhat_z)^{-1} = (zeta - Dhat_z)^{-1} / (g lam),
   zeta = (z - 1 + g lam) / (g lam), Dhat_z = sum_j d_j(z), d_j(z) = p_j psi_z(S_j),
   psi_z(s) = lam z c(s) / (z - a(s)). Hence (m_j = a_j / (z - a_j))

       [(z - Phi)^{-1} X_0]_w = -Gc(z) N(z) theta_0,   N(z) = 1 + g lam sum_j p_j m_j(z),
       [(z - Phi)^{-1} beta_f]_w = g Gc(z) sum_j p_j psi_z(S_j) f_j,

   and e_T = (1 / 2 pi i) oint (z^T [..X_0..] + P_T(z) [..beta_f..]) dz around the spectrum of
   Phi. For eta <= 1 / (L + lam) (paper 004 Thm 2's condition), and for larger eta < 2 /
   (L + lam) with an even K, Phi is similar to a symmetric matrix (``algorithm1.rate``), so its
   spectrum is real, inside [min(bottom, 0), top] (the edges of ``algorithm1.rate.contraction``);
   Gc(z) is a compressed resolvent of that symmetric matrix, analytic off the interval with
   Im tau(Gc) < 0 above it. With an odd K, eta > 1 / (L + lam) (a(s) < 0 somewhere) and
   g lam <= 1, Phi has the characteristic polynomial of the symmetric E + B B^T of
   ``algorithm1.rate``'s docstring, its spectrum inside [min(0, inf a), top] (``lower``), and
   Gc(z) = (1 + B^T (z - E - B B^T)^(-1) B) / z: analytic off that interval, but with negative
   residues at negative eigenvalues, so the branch check is Im tau(z Gc) < 0 instead (with
   g lam > 1 too the spectrum leaves the axis: circles, ``algorithm1.fold``). T = inf:
   z^T -> 0 and P_T -> 1 / (1 - z) (the contour keeps z = 1 outside; top < 1 when the pooled
   samples span; circles of radius above 1 enclose it, and ``_pole`` adds the residues of the
   distance's z^T / (1 - z) there). When no round asked needs the contour (each inf or past
   the fixed point to rounding), the fixed point is the exact prox's (``algorithm1.fixed_point``,
   measured against this column: within 4e-14).
3. Client i's risk E||w_T - theta_i||^2 = E||e_T - u_i||^2 (tau = tr / d) ::

       signal^2 oint oint z1^T z2^T tau(N1 Gc1 Gc2 N2)
       + g^2 oint oint P_T(z1) P_T(z2) sum_k tau(Gc1 Gc2 h_k),
         h_k = d_k(z1) d_k(z2) (r_k^2 S_k^2 + sigma_k^2 gamma_k S_k),
       - 2 g r_i^2 oint P_T(z) tau(Gc d_i(z) S_i) + r_i^2

   (the noise X^T eps / n has covariance sigma^2 S / n: tau and a factor d / n = gamma).
4. One-point traces: the scalar subordination of the free sum Dhat_z at zeta(z) (``subordination``
   with a client law that depends on the node z: ``NodeLaws``), tau(h(S_j) (zeta - Dhat)^{-1}) =
   E[h / (omega_j - d_j)]. Two-point traces by operator-valued subordination over upper-
   triangular matrices (as ``local_models``) with DIFFERENT laws on the diagonal:
   tau(Gc1 Gc2 h_k) is the corner of the 2 x 2 problem Z = [[zeta1, -1], [0, zeta2]],
   L_j = diag(d_j(z1), d_j(z2)): with K_j = E[1 / (A_j1 A_j2)], A_jn = omega_j(z_n) - d_j(z_n),
   the corner equations give (g lam)^2 tau(Gc1 Gc2 h_k) = E[h_k / (A_k1 A_k2)] / (K_k Q),
   Q = sum_j 1 / K_j - (M - 1) / (G1 G2). tau(N1 Gc1 Gc2 N2) = tau(Gc2 N2 N1 Gc1) pairs two
   different clients' matrices m_l(z2) m_j(z1): the (1, 3) block of the 3 x 3 upper-triangular
   linearization Z = [[zeta2, -1, 0], [0, 1, -1], [0, 0, zeta1]], L_k = [[d_k(z2), X_k, 0],
   [0, 0, Y_k], [0, 0, d_k(z1)]], X_k = g lam p_k m_k(z2), Y_k = g lam p_k m_k(z1). Its diagonal
   is (G2, 1, G1) (Omega_k's: omega_k(z2), 1, omega_k(z1)); the superdiagonals are 2 x 2
   problems: G12 = G2 + sum_k E[X_k / A_k2], beta_k = (E[X_k / A_k2] - G12) / G2, and the same
   for G23, gamma_k with Y and node 1; the (1, 3) equations are linear:
   E_k[(Omega_k - L_k)^{-1}]_13 = C_k - delta_k K_k with
   C_k = beta_k gamma_k K_k - beta_k E[Y_k / (A1 A2)] - gamma_k E[X_k / (A1 A2)] + E[X_k Y_k / (A1 A2)],
   equal to G13 for every k, and sum_k delta_k = (M - 1) (G^{-1})_13 = (M - 1) (G12 G23 - G13)
   / (G1 G2), whence G13 = (sum_k C_k / K_k - (M - 1) G12 G23 / (G1 G2)) / Q.
5. The clients' own models. v_i of round T is [..]_i of the same resolvent:
   V_i = rho_i (x_i + lam c_i W), rho_i = (z - a_i)^{-1}, so (lam g Gc = R = (zeta - Dhat)^{-1})
   the theta_0 part is -rho_i (1 + c_i R N / g) theta_0 and the data part
   rho_i c_i (f_i + R sum_k d_k f_k). Client i's risk E||e_i - u_i||^2 then needs, besides
   one-client two-point integrals, tau(h_i R2 N2), tau(N1 R1 h_i) and tau(N1 R1 J R2 N2)
   (J = c_i^2 rho_i(z1) rho_i(z2)): the conditional expectations onto client i's algebra of
   the (1, 2), (2, 3) and (1, 3) blocks of step 4's linearization, (X_i - beta_i) / A_i2,
   (Y_i - gamma_i) / A_i1 and ((beta_i - X_i)(gamma_i - Y_i) - delta_i) / (A_i1 A_i2) with
   delta_i = (C_i - G13) / K_i; and sum_k tau(R1 J R2 X_k), X_k = d_k(z1) d_k(z2) F_k
   (F_k = r_k^2 S_k^2 + sigma_k^2 gamma_k S_k), by ``local_models``' 2 x 2 corner equations with
   J in client i's corner: E_i[X_i J / (A1 A2)] + sum_k (G12' - delta_ki L_i) E_k[X_k / (A1 A2)]
   / K_k, L_i = E_i[J / (A1 A2)], G12' = (L_i / K_i) / Q. The cross term with u_i is
   r_i^2 oint P_T E_i[rho_i c_i s (1 + d_i / A_i)].
6. Client expectations E over MP(gamma_j), one-point and two-point, by the Gauss-Chebyshev rule
   of ``mp_quadrature`` written as a discrete measure (nodes and weights, the atom at 0 a node):
   the two-point ones are then matrix products over the nodes, O(M N1 N2 Q). The rule's Q
   doubles until the subordination equations hold to 1e-11 with a rule of twice as many nodes.
   Contours: ellipses around [min(bottom, 0), top] with 0.7 times the parameter inside
   (``fedavg._contour`` in the variable 1 - z, which keeps z = 1 outside and bounds the
   amplification of rounding by z^T), with N = max(T_max + 16, 40 / t) nodes each, half of
   FedAvg's 2 T_max + 16: in each variable the integrand is z^T or P_T(z) (degree <= T_max)
   times a function analytic outside the spectrum and O(1 / z) at infinity, times dz. In the
   Joukowski variable u of the ellipse (abs(u) = e^t on the contour, the spectrum at abs(u) = 1) its
   part growing at infinity is a polynomial of degree <= T_max in u, which the N-point
   trapezoid rule integrates exactly once N > T_max + 1; the rest is analytic for abs(u) > 1 and
   aliases at order e^{-N t} <= e^{-40} (T = inf: 1 / (1 - z) is analytic out to the ellipse
   through z = 1, twice the parameter). The tests compare with 2 T_max + 16 nodes.
7. Pooled N < d (sum_j min(1, 1/gamma_j) < 1): the common null space of the S_j, where the
   consensus is a fixed point (eigenvalue 1), is held apart (``algorithm1.pooled``): the
   contour encloses the spectrum on the pooled range (z = 1 outside, the contour's mass
   checked), and every model's risk gains signal^2 mu0, the part of theta_0 never learned.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.algorithm1.cost import check_curves
from riskcalc.linear.dynamics.algorithm1.contours import (check_top_gap, circles, ellipses,
                                                          solve_circles, solve_ellipse)
from riskcalc.linear.dynamics.algorithm1.fold import merge, solve_point
from riskcalc.linear.dynamics.algorithm1.fixed_point import fixed_point
from riskcalc.linear.dynamics.algorithm1.laws import NodeLaws
from riskcalc.linear.dynamics.algorithm1.pooled import check_mass
from riskcalc.linear.dynamics.algorithm1.rate import round_map_spectrum
from riskcalc.linear.dynamics.fedavg import far, moving, round_horizon, settle


def _pair_terms(two, s, d1, i1, G1, d2, i2, G2):
    """K_k = E_k[1 / (A_k1 A_k2)], Q and the data E_k[h_k / (A_k1 A_k2)] split into its r (s^2)
    and sigma (s) parts Hr, Hs (module docstring, step 4) at every pair of nodes, from the
    node factors d, inv = 1 / (omega - d) and G of both sides; ``two`` the rule's E_k[f1 f2]."""
    Kk = two(i1, i2)
    Q = np.sum(1.0 / Kk, axis=0) - (Kk.shape[0] - 1) / (G1[:, None] * G2[None, :])
    Hr = two(d1 * i1 * s[:, None, :], d2 * i2 * s[:, None, :])
    Hs = two(d1 * i1 * np.sqrt(s)[:, None, :], d2 * i2 * np.sqrt(s)[:, None, :])
    return Kk, Q, Hr, Hs


def _pole(laws, g, lam, r, sigma, gam, one, other):
    """The distance's correction where a circle encloses z = 1 (``algorithm1.fold``'s circles,
    radius above 1): w_T - w_inf integrates z^T / (1 - z) against the data F(z1, z2) of step 3
    around the spectrum only, and each circle around z = 1 too adds the residue -F(1, .) there:
    the correction (C1 + e1 d1)(C2 + e2 d2) F - C1 C2 F, d_n evaluating at z_n = 1, e_n whether
    circle n encloses it, C_n the circle's integral with its weight z^T / (1 - z). ``laws``:
    the curves' rule without the rounding residue of the atom at 0 (gamma < 1), where d_j =
    p_j at z = 1 and one client's omega is 1 too. Returns (nT,): to be divided by lam^2 as
    the double integral."""
    (z1, om1, G1, W1, f1), (z2, om2, G2, W2, f2) = one, other
    e1, e2 = np.max(np.abs(z1)) > 1.0, np.max(np.abs(z2)) > 1.0
    if not (e1 or e2):
        return 0.0
    om0, G0 = solve_point(laws, g, lam, 1.0, 8.0)
    zero = np.array([1.0 + 0j])

    def two(f1, f2):
        return np.matmul(f1 * laws.w[:, None, :], np.swapaxes(f2, 1, 2))

    def data(za, oa, Ga, zb, ob, Gb):        # sum_m (data_r + data_s) of step 3 at (za, zb)
        da, db = laws.d(za), laws.d(zb)
        ia, ib = 1.0 / (oa[..., None] - da), 1.0 / (ob[..., None] - db)
        Kk, Q, Hr, Hs = _pair_terms(two, laws.s, da, ia, Ga, db, ib, Gb)
        Kq = Kk * Q
        return np.einsum("mkl,m->kl", Hr / Kq, r ** 2) + np.einsum("mkl,m->kl", Hs / Kq,
                                                                   sigma ** 2 * gam)
    out = 0.0
    if e1:      # d1 C2: F(1, z2) against circle 2 (its nodes and conjugates)
        out = out + ((f2 * W2) @ data(zero, om0, G0, z2, om2, G2)[0]).real
    if e2:      # C1 d2: circle 1's upper nodes, 2 Re
        out = out + 2.0 * ((f1 * W1) @ data(z1, om1, G1, zero, om0, G0)[:, 0]).real
    if e1 and e2:
        finite = np.any(f1 != 0.0, axis=1)
        out = out + np.where(finite, data(zero, om0, G0, zero, om0, G0)[0, 0].real, 0.0)
    return out


def curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds, known=None):
    """Bias and variance of every client's risk of the server model, and the distance to the
    fixed point, at every T of ``rounds`` (module docstring); ``known`` the round map's
    spectral data when already computed (``algorithm1.rate.round_map_spectrum``'s dict).

    Returns
    -------
    dict with bias, variance (M, len(rounds)), distance (len(rounds),), contraction, edges,
    atom (0), nodes.
    """
    if known is None and np.any(np.isfinite(rounds) & (rounds > 0)):
        check_top_gap(gam, lam, eta, K, g * lam)
    sp = known if known is not None else round_map_spectrum(gam, p, lam, eta, K, g)
    # [lo, top] holds the spectrum; rho is exact, or where a(s) < 0 its bound max(top, -lo)
    # (``algorithm1.rate``): safe for the horizon and the contour, which need an upper bound.
    top, lo, rho = sp["top"], sp["lower"], sp["contraction"]
    # The contour's foci a little outside the spectrum (its edges by quadrature, above).
    margin = 0.02 * (1.0 - top)
    top_c, lo_c = top + margin, lo - margin
    M, gl = gam.size, g * lam
    mu0 = sp.get("atom", 0.0)    # pooled N < d: the null space held apart (algorithm1.pooled)
    settled, over, finite, t_max = round_horizon(rho, rounds)
    if rho < 1.0 and not finite.any():
        # Every round at the fixed point (to rounding), which does not depend on K, eta or g:
        # the exact prox's (``algorithm1.fixed_point``), without this route's contours. Its
        # contour's reach is not this route's (near pooled N = d it refused sum_j 1/gamma_j =
        # 1 + 1e-5 as N = d, where this route names the nodes it would need): this route then.
        try:
            return fixed_point(gam, r, sigma, p, signal, lam, rounds.size, sp)
        except (ValueError, SolverError):
            pass
    if "disk" in sp and not finite.all():
        # The fixed point does not depend on g: T = inf and the settled rounds from g = 1 / lam
        # (a real spectrum), the others on the circles (``algorithm1.fold``, non-real part).
        fixed = curves(gam, r, sigma, p, signal, lam, eta, K, 1.0 / lam, np.array([np.inf]))
        part = curves(gam, r, sigma, p, signal, lam, eta, K, g, rounds[finite],
                      known=sp) if finite.any() else None
        return merge(part, fixed, finite, sp)
    # The work is known but for the rule's size Q once the node counts are: refused before
    # the contours (at the first rule) and before each finer rule, the final Q at least that.
    shapes = None if "disk" in sp else ellipses(lo_c, top_c, rho, t_max, top, gam, gl)
    sizes = circles(rho, t_max)[1] if shapes is None else [e[3] for e in shapes]

    def budget(q):
        check_curves(M, sizes[0] // 2, sizes[1] // 2 * 2, q, top, rho, final=False)

    def make_laws(q):
        return NodeLaws(gam, p, lam, eta, K, q)
    if shapes is None:     # a non-real spectrum: circles around its bound (algorithm1.fold)
        (z1, w1, om1, G1, law1), (z2h, w2h, om2h, G2h, law2) = solve_circles(
            make_laws, M, g, lam, rho, t_max, budget)
    else:
        (z1, w1, om1, G1, law1), (z2h, w2h, om2h, G2h, law2) = (
            solve_ellipse(make_laws, g, lam, lo_c, top_c, e, budget) for e in shapes)
    if mu0 > 0.0:
        check_mass(G1, w1, gl, mu0, (1.0 - eta * lam) ** K, (lo, top), "Algorithm 1's curves")
    z2 = np.concatenate([z2h, z2h.conj()])
    W2 = np.concatenate([w2h / 2j, (w2h / 2j).conj()])
    om2 = np.concatenate([om2h, om2h.conj()], axis=1)
    G2 = np.concatenate([G2h, G2h.conj()])
    W1 = w1 / 2j
    # One common rule for both contours (the finer of the two accepted ones).
    laws = law1 if law1.s.shape[1] >= law2.s.shape[1] else law2
    check_curves(M, z1.size, z2.size, laws.s.shape[1], top, rho)   # before the two-point work
    s, wq = laws.s, laws.w

    def node_parts(z, om):
        d = laws.d(z)
        inv = 1.0 / (om[..., None] - d)
        mm = gl * p[:, None, None] * laws.m(z)
        return d, inv, mm

    d1, i1, x1 = node_parts(z1, om1)
    d2, i2, x2 = node_parts(z2, om2)

    def two(f1, f2):
        """E_k[f1 f2] for node-1 factors (M, N1, Q) and node-2 factors (M, N2, Q)."""
        return np.matmul(f1 * wq[:, None, :], np.swapaxes(f2, 1, 2))

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Kk, Q, Hr, Hs = _pair_terms(two, s, d1, i1, G1, d2, i2, G2)
        Kq = Kk * Q
        data_r = np.einsum("mkl,m->mkl", Hr / Kq, r ** 2)
        data_s = np.einsum("mkl,m->mkl", Hs / Kq, sigma ** 2 * gam)
        # theta_0: the 3 x 3 linearization (node 2 first on the diagonal).
        Xt = laws.expect(x2 * i2)                                      # (M, N2)
        Yt = laws.expect(x1 * i1)                                      # (M, N1)
        G12 = G2 + Xt.sum(axis=0)
        G23 = G1 + Yt.sum(axis=0)
        beta = (Xt - G12) / G2                                         # (M, N2)
        gam_ = (Yt - G23[None, :]) / G1                                # (M, N1)
        xb = (x2 - beta[:, :, None]) * i2                        # (X_k - beta_k) / A_k2
        yg = (x1 - gam_[:, :, None]) * i1                        # (Y_k - gamma_k) / A_k1
        C = two(yg, xb)     # beta gamma K - beta E[Y/(A1 A2)] - gamma E[X/(A1 A2)] + E[XY/..]
        gg = G1[:, None] * G2[None, :]
        G13 = (np.sum(C / Kk, axis=0) - (M - 1) * G23[:, None] * G12[None, :] / gg) / Q
        # One-point: (g lam) tau(Gc d_i S_i) = E_i[d_i s / A_i].
        own = laws.expect(d1 * i1 * s[:, None, :])                     # (M, N1)

        fin = finite
        Tm = np.where(fin, rounds, 0.0)[:, None]

        def weights_of(z):
            power = z[None, :] ** Tm
            poly = np.where(fin[:, None], (power - 1.0) / (z - 1.0), 1.0 / (1.0 - z))
            return np.where(fin[:, None], power, 0.0), poly

        pw1, P1 = weights_of(z1)
        pw2, P2 = weights_of(z2)
        dist1 = np.where(fin[:, None], pw1 / (1.0 - z1), 0.0)
        dist2 = np.where(fin[:, None], pw2 / (1.0 - z2), 0.0)

        def double(F1, F2, f):
            """2 Re sum_{k upper, l all} F1_k F2_l f_kl W1_k W2_l -> (nT,) or (nT, M)."""
            left = np.matmul(F1 * W1, f)                 # (nT, N2) or (M, nT, N2): BLAS
            return 2.0 * np.sum(left * (F2 * W2), axis=-1).real.T

        theta_part = signal ** 2 * double(pw1, pw2, G13) / gl ** 2
        var_fun = np.sum(data_s, axis=0)
        bias_data = double(P1, P2, np.sum(data_r, axis=0)) / lam ** 2
        variance = double(P1, P2, var_fun) / lam ** 2
        cross = ((P1 * w1) @ own.T).imag / lam                          # (nT, M)
        distance = (theta_part
                    + double(dist1, dist2, np.sum(data_r + data_s, axis=0)) / lam ** 2)
        if "disk" in sp and sp["contraction"] < 1.0:
            distance = distance + _pole(NodeLaws(gam, p, lam, eta, K, laws.s.shape[1] - 1,
                                                 residue=False), g, lam, r, sigma, gam,
                                        (z1, om1, G1, W1, dist1),
                                        (z2, om2, G2, W2, dist2)) / lam ** 2
    bias = (theta_part + signal ** 2 * mu0 + bias_data)[None, :] \
        - 2.0 * (r ** 2)[:, None] * cross.T + (r ** 2)[:, None]
    var = np.broadcast_to(variance[None, :], bias.shape).copy()
    zero = rounds == 0
    bias[:, zero], var[:, zero] = (signal ** 2 + r ** 2)[:, None], 0.0
    big = np.isfinite(rounds) & (rounds > over)
    noisy, moves = bool(np.any((p > 0) & (sigma > 0))), moving(signal, r)
    distance = far(distance, big, moves or noisy)
    scale = signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam) + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "Algorithm 1's curves", moves=moves)

    ctx = dict(laws=laws, two=two, double=double, gam=gam, r=r, sigma=sigma, lam=lam, gl=gl,
               signal=signal, rounds=rounds, i1=i1, i2=i2, d1=d1, d2=d2, yg=yg, xb=xb, Kk=Kk,
               Q=Q, Hr=Hr, Hs=Hs, P1=P1, P2=P2, w1=w1, pw1=pw1, pw2=pw2)

    def local(terms=None):
        """(bias, variance), each (M, len(rounds)), of every client's own model v_i after the
        local steps of round T (module docstring, step 5), or with ``terms``
        (``personalize.filter_terms``) of the model personalized from the server model."""
        if terms is not None:   # personalization from the server model (``personalize``)
            from riskcalc.linear.dynamics.personalize import algorithm1_personalized

            lb, lv = algorithm1_personalized(terms.pi, {**ctx, "delta": (C - G13[None]) / Kk})
            # the null space, never learned (pooled N < d); T = 0 is exact already
            lb = lb + signal ** 2 * mu0 * (rounds != 0)[None, :]
            return settle(lb, lv, big, noisy | (sigma > 0), scale,
                          "Algorithm 1's curves, personalized from the server model",
                          moves=moves)
        c = laws.c[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            rho1 = 1.0 / (z1[None, :, None] - laws.a[:, None, :])
            rho2 = 1.0 / (z2[None, :, None] - laws.a[:, None, :])
            cr1, cr2 = c * rho1, c * rho2
            Li = two(cr1 * i1, cr2 * i2)                         # E_i[J / (A1 A2)]
            delta = (C - G13[None]) / Kk
            # E[rho1 rho2] + (E[cr1 rho2 xb] + E[cr1 yg rho2]) / g + E[cr1 yg cr2 xb] / g^2
            theta = (two(rho1 + cr1 * yg / g, rho2) + two(cr1, rho2 * xb) / g
                     + (two(cr1 * yg, cr2 * xb) - delta * Li) / g ** 2)
            G12d = (Li / Kk) / Q                                  # corner of the 2 x 2 problem
            # E[J X_i / (A1 A2)]'s four terms E[cr1 cr2 F (1 + d1/A1)(1 + d2/A2)] in one.
            u1, u2 = cr1 * (1.0 + d1 * i1), cr2 * (1.0 + d2 * i2)
            parts = []
            for F, H, coef in ((s ** 2, Hr, r ** 2), (s, Hs, sigma ** 2 * gam)):
                Ex = H / Kk                                       # E_k[X_k / (A1 A2)] / K_k
                f = two(u1, u2 * F[:, None, :]) - Li * Ex
                parts.append(f * coef[:, None, None]
                             + G12d * np.einsum("mkl,m->kl", Ex, coef)[None])
            one = laws.expect(u1 * s[:, None, :])                         # (M, N1)
            own_cross = ((P1 * w1) @ one.T).imag                          # (nT, M)
            lb = (signal ** 2 * double(pw1, pw2, theta) + double(P1, P2, parts[0])
                  - 2.0 * r ** 2 * own_cross + r ** 2 + signal ** 2 * mu0).T
            lv = double(P1, P2, parts[1]).T
        lb[:, zero], lv[:, zero] = (signal ** 2 + r ** 2)[:, None], 0.0
        return settle(lb, lv, big, noisy | (sigma > 0), scale,
                      "Algorithm 1's curves, the clients' own models", moves=moves)

    return {"bias": bias, "variance": var,
            "distance": np.maximum(distance, 0.0), "contraction": rho, "edges": (lo, top),
            "contraction_is_bound": not sp["exact"],
            "atom": mu0, "nodes": z1.size * 2 + z2.size, "local": local}
