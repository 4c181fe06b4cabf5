"""FedAvg with K local full-batch gradient steps: exact risk along the rounds (derived here).

Model (Sigma = I): client j has S_j = X_j^T X_j / n_j, d / n_j -> gamma_j, y_j = X_j theta_j +
eps_j (noise variance sigma_j^2), theta_j = theta_0 + u_j with theta_0 and the u_j independent
and uniform in direction, ||theta_0|| = signal, ||u_j|| = r_j; weights p_j, global step g, local
step eta; training starts from w_0 = 0. The algorithm is the one of issue 29 (paper 004,
``004_*.txt``, studies its proximal variant, Algorithm 1; paper 003, ``003_4b976ddf5225c17e.txt``,
eq. 6, is its T -> infinity, K = 1 limit).

1. K gradient steps on f_j from w: v_j = A_j w + Q_j S_j^+ b_j, A_j = (I - eta S_j)^K,
   Q_j = q(S_j) = I - A_j, b_j = X_j^T y_j / n_j = S_j theta_j + X_j^T eps_j / n_j (b_j lies in
   the range of S_j; K = inf is the exact local solve from w, Q_j the projection on the range).
   The server update w <- w + g sum_j p_j (v_j - w) is w <- (I - g D) w + g c,
   D = sum_j p_j Q_j, c = sum_j p_j Q_j (theta_j + S_j^+ X_j^T eps_j / n_j). From w_0 = 0, with
   R_T(x) = g sum_{t<T} (1 - g x)^t = (1 - (1 - g x)^T) / x (a polynomial) and Q_j theta_0 summing
   to D theta_0 ::

       w_T = P_T(D) theta_0 + R_T(D) sum_j p_j Q_j u_j + R_T(D) sum_j p_j Q_j S_j^+ X_j^T eps_j / n_j,

   P_T(x) = x R_T(x) = 1 - (1 - g x)^T.
2. Client i's risk E||w_T - theta_i||^2 (tau = tr / d; the u_j, theta_0, eps independent) ::

       B_i = signal^2 tau((I - g D)^{2T}) + sum_j p_j^2 r_j^2 tau(q_j^2 R_T(D)^2)
             - 2 p_i r_i^2 tau(q_i R_T(D)) + r_i^2,
       V_i = sum_j p_j^2 sigma_j^2 gamma_j tau((q^2 / s)(S_j) R_T(D)^2)

   (q_j = q(S_j); the noise covariance sigma_j^2 X_j^T X_j / n_j^2 turns Q S^+ into q^2 / s and a
   factor d / n_j = gamma_j). Every trace is tau(h(S_j) F(D)), one client function times one
   function of D.
3. tau(h(S_j) F(D)) = (1 / 2 pi i) oint F(z) tau(h(S_j) (z - D)^{-1}) dz on a contour around the
   spectrum of D, and tau(h(S_j) (z - D)^{-1}) -> E_MP[h(s) / (omega_j(z) - p_j q(s))]
   (``subordination``, ``client_laws``). D has an atom mu0 at 0 (where nothing is learned) when
   sum_j min(1, 1/gamma_j) < 1; h(0) = 0 for every client function, so the atom adds only
   signal^2 mu0 F(0) to the first trace, and the contour encloses the rest of the spectrum,
   [a, b], and not 0. One solve of the subordination equations at the contour nodes serves
   every T: F_T is evaluated at the nodes for all requested T at once.
4. T = infinity. On the range of D the round map contracts iff rho = max(abs(1 - g a), abs(1 - g b))
   < 1 (D is symmetric, so rho is the exact limit of the round map's spectral radius on its
   range: ``contraction``); then (1 - g x)^{2T} -> 0 there and R_T -> 1/x: the fixed point
   w_inf = D^+ c, the client-drift estimator, with tau((I - g D)^{2T}) -> mu0. The paper-004
   epsilon ||w_T - w_inf||^2 = c^T (I - g D)^{2T} D^{+2} c has the traces of step 2 with
   F = (1 - g x)^{2T} / x^2 and the first one restricted to the range (no mu0).
   K = 1: D = eta sum_j p_j S_j and w_T is gradient descent on the pooled objective with step
   g eta (the fixed point is the min-norm FedAvg minimizer); K = inf, g = 1, T = 1: the average
   of the clients' (min-norm) least squares.

Contour and accuracy. The contour is the ellipse z = c0 + h cosh(t) cos(theta) +
i h sinh(t) sin(theta) with foci a, b (c0, h their centre and half distance), and the periodic
trapezoid rule in theta (N nodes; the lower half by conjugate symmetry). In the Joukowski
variable F_T(z) is a Laurent polynomial of degree 2T and the Stieltjes-type factor decays, so
the rule is exact up to aliasing of order e^{-t N} once N > 2T + 1: N = max(2 T_max + 16,
40 / t) (t <= half the parameter of the ellipse through 0, which keeps the pole of 1/x at 0 out
of reach for T = infinity). The integrand is as large as abs(1 - g z)^{2T} on the contour, which
exceeds rho^{2T} near the ends of [a, b] by a factor about exp(T g h t^2 / rho); t is chosen so
that this amplification of rounding stays below 1e4, i.e. an absolute accuracy of about 1e-12
times signal^2 + r^2 + sigma^2 (the measured agreement with independent routes is at 1e-12 and
better; ``tests/test_rounds_theory.py``). Near pooled N = d (a << b) the ellipse through the
gap (0, a) needs 40 / t ~ 40 sqrt(b / a) nodes; there ``_around_zero``'s contour, an ellipse
holding 0 less a circle about 0 inside the gap, gives the same integrals with nodes set by the
rounds alone (``tests/test_rounds_near_threshold.py``: the same values to 1e-10, 3-36 times
fewer nodes). Cost: one subordination solve at N nodes, linear in N,
so a curve to T costs O(T) complex evaluations for the solve and O(T len(rounds)) for the
polynomials, against T K d^2 per draw for a simulation.
Diverging iterations (rho > 1) are evaluated the same way; values beyond 1e300 are inf.
The clients' own models after their local steps need two functions of D separated by client
matrices: ``local_models`` (two-point functions, a double contour).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics import subordination
from riskcalc.linear.dynamics.algorithm1.fold import round_map_edges
from riskcalc.linear.dynamics.client_laws import (ROOT_MIN_NODES, ClientLaws, check_edge_step,
                                                  check_near_exact, check_pair_work,
                                                  check_root_work)

#: Rounding amplification allowed on the contour (see the module docstring).
AMPLIFICATION = 1e4
MAX_NODES = 1 << 17
#: Beyond this value of rho^{2T} the risk is reported as inf.
OVERFLOW = 1e300


def contraction(a, b, g):
    """rho = max over the nonzero spectrum of D of abs(1 - g x), from its edges."""
    return max(abs(1.0 - g * a), abs(1.0 - g * b))


def round_horizon(rho: float, rounds):
    """(settled, over, finite, t_max): the rounds beyond which (1 - g x)^T is below 1e-16 on
    the spectrum (contraction rho < 1: the fixed point to rounding), those beyond which
    rho^(2T) > OVERFLOW (rho > 1: the values are inf), which of ``rounds`` the contour must
    resolve, and the largest of them (neither settled nor overflowed rounds need contour
    nodes)."""
    settled = np.log(1e-16) / np.log(max(rho, 1e-300)) if rho < 1 else np.inf
    over = np.log(OVERFLOW) / (2 * np.log(rho)) if rho > 1 else np.inf
    finite = np.isfinite(rounds) & (rounds <= settled)
    # (was min(max(rounds), over): T = 2000 asked at over = 498 sized the contours for T = 498)
    kept = finite & (rounds <= over)
    return settled, over, finite, (int(rounds[kept].max()) if kept.any() else 0)


def enclosed(mass: float, mu0: float, edges, what: str) -> None:
    """Raise a SolverError unless the contour around the round map's nonzero spectrum (edges
    (a, b)) encloses all of it: (1 / 2 pi i) oint tau((z - D)^-1) dz = ``mass`` must be 1 -
    ``mu0`` (D's atom at 0) to 1e-8, in one place for every contour route (a band the edge scan
    stepped over would otherwise leave its mass out of every trace, silently)."""
    if not abs(mass - (1.0 - mu0)) <= 1e-8:
        a, b = edges
        raise SolverError(f"{what}: the contour encloses {mass:.6g} of the round map's "
                          f"spectrum, not all of it (edges {a:.6g}, {b:.6g} missed a part; its "
                          f"atom at 0: {mu0:.6g})")


def moving(signal, r) -> bool:
    """Whether the models' means leave the start 0: signal > 0 or some r_j > 0 (the weights
    are positive). Otherwise every theta_j is 0 and every model (server, own, personalized)
    has mean 0 at every round, a diverging one included: its bias is 0 there (``settle``)."""
    return bool(signal > 0 or np.any(np.asarray(r) > 0))


def settle(bias, var, big, noisy, scale: float, what: str, *, moves: bool):
    """The curves' (bias, variance) at the overflowed rounds ``big`` and their check, in one
    place for every route: bias inf there where the means move (``moves``: ``moving``), else
    0, variance inf where the model carries noise (``noisy``: a bool, or one per client),
    else 0 (the computed values there are the overflow's NaN or 0, not a sign of it); a NaN
    or a form below -1e-9 ``scale`` elsewhere raises SolverError naming ``what``. Returns the
    pair clipped at 0."""
    bias[:, big] = np.inf if moves else 0.0
    var[:, big] = np.where(np.reshape(noisy, (-1, 1)), np.inf, 0.0)
    if any(np.any(np.isnan(x)) or np.any(x < -1e-9 * scale) for x in (bias, var)):
        raise SolverError(f"{what}: a negative or NaN quadratic form (the contour quadrature "
                          "lost its precision)")
    return np.maximum(bias, 0.0), np.maximum(var, 0.0)


def far(dist, big, live: bool):
    """``dist`` (to the fixed point) at the overflowed rounds ``big``: inf where the server
    model moves (``live``: ``moving`` or noisy), else 0 (it stays at 0, its fixed point)."""
    return np.where(big, np.inf if live else 0.0, dist)


def _contour(a, b, g, rho, t_max_rounds, shrink=1.0, degree=2):
    """Ellipse parameters (c0, h, t) and the number of nodes N (module docstring); ``shrink``
    < 1 gives a second, inner ellipse (the two-point functions of ``local_models``);
    ``degree`` times T_max is the integrands' polynomial degree in z (2 here: squares of
    degree-T polynomials; 1 for the double contours of ``algorithm1.curves``, one power of
    degree T per variable): N = max(degree T_max + 16, 40 / t)."""
    c0 = 0.5 * (a + b)
    h = max(0.5 * (b - a), 1e-3 * b)    # a point spectrum: a small ellipse
    t_zero = np.arccosh(c0 / h)           # the ellipse through 0
    t = _within_amplification(c0, h, 0.5 * t_zero, g, rho, t_max_rounds) * shrink
    return c0, h, t, _node_count(t, degree * t_max_rounds)


def _within_amplification(c0, h, t, g, rho, t_max_rounds, bound=AMPLIFICATION):
    """The largest of t 10^(-k / 20), k = 0..80, whose ellipse (centre c0, half focal distance
    h) keeps abs(1 - g z)^(2 T_max) within ``bound`` (AMPLIFICATION: module docstring) times
    rho^(2 T_max); t itself without rounds to resolve."""
    if t_max_rounds <= 0:
        return t
    theta = np.linspace(0.0, np.pi, 257)
    ts = t * np.geomspace(1.0, 1e-4, 81)
    amp = np.hypot(1.0 - g * c0 - g * h * np.cosh(ts)[:, None] * np.cos(theta),
                   g * h * np.sinh(ts)[:, None] * np.sin(theta)).max(axis=1)
    ok = 2 * t_max_rounds * np.log(amp / max(rho, 1.0)) <= np.log(bound)
    return ts[np.argmax(ok)] if ok.any() else ts[-1]


def _node_count(t, degree):
    """max(degree + 16, 40 / t) nodes, a multiple of 8, refused beyond MAX_NODES, naming the
    rounds where their degree alone needs them (global step 1e-8 at T = 1e9 was told "lower
    global_step")."""
    # t = 0: an ellipse through the pole (a round map's top of 1 to rounding, Algorithm 1 at
    # global_step 1e-300) was int(inf), "cannot convert float infinity to integer".
    span = 40.0 / t if t > 0 else np.inf
    n = max(degree + 16, np.ceil(span))
    n = n + (-n) % 8 if np.isfinite(n) else n
    if n > MAX_NODES:
        raise SolverError(f"round map contour: {n:.0f} nodes needed (more than {MAX_NODES})" + (
            f" for the rounds asked, polynomials of degree {degree} in the round map's spectrum "
            "not yet at their fixed point; ask for fewer rounds (global_step times the rounds "
            "sets how far the iteration gets: a larger global_step gets as far in fewer rounds)"
            if degree + 16 >= span else ": the spectrum of the round map is too close to 0, "
            "the rounds too many, or the global step so large that (1 - g z)^T swamps the "
            "curve; ask fewer rounds or lower global_step"))
    return int(n)


def _around_zero(a, b, g, rho, t_max_rounds, shrink=1.0):
    """(c0, h, t, n, radius): the contour of ``_solve`` when the round map's spectrum [a, b]
    comes near 0 (pooled N / d near 1): the ellipse with foci -delta and b, which holds 0,
    less the circle of ``radius`` about 0 (inside the gap (0, a)). As a cycle it is the
    ellipse of ``_contour`` (both enclose [a, b] and leave 0 out), so every integral is the
    same; but the ellipse through the gap needs 40 / t ~ 40 sqrt(b / a) nodes, while this one
    is limited only by the amplification on its far side (delta = 1 / (4 g T_max) keeps
    (1 + g delta)^(2 T_max) below e^(1/2); the ellipse within AROUND_ZERO_BOUND) and the
    circle's trapezoid rule converges as
    (radius / a)^N for any a (the integrand is a Laurent series in 0 < abs(z) < a: D's atom
    at 0, 1 / z and 1 / z^2 are poles of finite order there). The inner contour (``shrink`` <
    1) has the thinner ellipse and the wider circle: the two never meet."""
    delta = min(b, 0.25 / (g * max(t_max_rounds, 1)))
    c0, h = 0.5 * (b - delta), 0.5 * (b + delta)
    t = _within_amplification(c0, h, 1.0, g, rho, t_max_rounds, AROUND_ZERO_BOUND) * shrink
    return c0, h, t, _node_count(t, 2 * t_max_rounds), (0.55 if shrink < 1.0 else 0.35) * a


#: The amplification ``_around_zero``'s ellipse may reach: beyond 0 it passes where abs(1 - g z)
#: > 1, whose powers cost digits (with AMPLIFICATION there, 3e-11 in a variance the ellipse
#: through the gap gives to 1e-14).
AROUND_ZERO_BOUND = 10.0
#: Nodes of the circle about 0 (``_around_zero``): its error is about 0.55^N of the integrand.
CIRCLE_NODES = 128


def ellipse(a, b, g, rho, t_max_rounds, shrink=1.0):
    """The contour of ``_contour`` as the solves follow it: (nodes, path, w, n) with
    nodes(tt) the upper half's n / 2 nodes on the ellipse of parameter tt, ``path`` the
    parameters from an ellipse far out (semi-axes ~ 20 b) inwards, halving the excess, ending
    at the contour's, and ``w`` the quadrature weights at its nodes (I(f) = sum Im(f w))."""
    return _ellipse_path(*_contour(a, b, g, rho, t_max_rounds, shrink), b)


def _ellipse_path(c0, h, t, n, b):
    """``ellipse``'s (nodes, path, w, n) for the ellipse (c0, h, t) of n nodes."""
    theta = np.pi * (np.arange(n // 2) + 0.5) / (n // 2)

    def nodes(tt):
        return c0 + h * np.cosh(tt) * np.cos(theta) + 1j * h * np.sinh(tt) * np.sin(theta)

    t_far = max(np.arcsinh(20.0 * b / h), 2.0 * t)
    path = [t + (t_far - t) * 0.5 ** k for k in range(60) if (t_far - t) * 0.5 ** k > 0.05 * t]
    dz = -h * np.cosh(t) * np.sin(theta) + 1j * h * np.sinh(t) * np.cos(theta)
    return nodes, path + [t], dz * (2.0 / n), n


def round_filters(z, g, rounds, finite):
    """(A, R) at the nodes z, one row per T of ``rounds``: A = (1 - g z)^(2T) and R = R_T(z) =
    (1 - (1 - g z)^T) / z where ``finite``, else 0 and 1 / z (the fixed point: T = inf, or
    rounds settled to rounding); overflow only where rho^(2T) is beyond OVERFLOW."""
    Tcol = np.where(finite, rounds, 0.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        power = (1.0 - g * z) ** Tcol
        return (np.where(finite[:, None], power ** 2, 0.0),
                np.where(finite[:, None], (1.0 - power) / z, 1.0 / z))


def _solve(laws, a, b, g, rho, t_max_rounds, shrink=1.0, check=False):
    """Nodes z, quadrature weights w (I(f) = sum Im(f w)), G_D and omega at the nodes of
    the upper half of the contour: ``_contour``'s ellipse, or ``_around_zero``'s ellipse and
    circle where they need fewer than half its nodes (the ellipse through the gap (0, a)
    grows as sqrt(b / a): 159920 nodes, refused, at T = 1 with one client at gamma 0.999).
    ``check``: the K local steps' work estimated on the nodes first (``check_root_work``)."""
    def count(contour):
        try:
            return contour(a, b, g, rho, t_max_rounds, shrink)
        except SolverError:
            return None
    one, two = count(_contour), count(_around_zero)
    if two is None or (one is not None and 2 * (two[3] + CIRCLE_NODES) >= one[3]):
        nodes, path, w, _ = (ellipse(a, b, g, rho, t_max_rounds, shrink) if one is None
                             else _ellipse_path(*one, b))     # (the first: its refusal)
        if check:
            check_root_work(laws, 2 * w.size, f" (the round map's spectrum [{a:.3g}, {b:.3g}])")
        omega, G = subordination.solve(laws, nodes, b, path)
        return nodes(path[-1]), w, omega, G
    c0, h, t, m, radius = two
    nodes, path, w, _ = _ellipse_path(c0, h, t, m, b)
    if check:
        check_root_work(laws, 2 * (w.size + CIRCLE_NODES // 2),
                        f" (the round map's spectrum [{a:.3g}, {b:.3g}])")
    omega, G = subordination.solve(laws, nodes, b, path)
    phi = np.pi * (np.arange(CIRCLE_NODES // 2) + 0.5) / (CIRCLE_NODES // 2)
    circle = radius * np.exp(1j * phi)
    # Slid in from far left along the real axis (it never meets [a, b]); clockwise: minus.
    shifts = [20.0 * b * 0.5 ** k for k in range(80) if 20.0 * b * 0.5 ** k > 0.05 * radius]
    om_c, G_c = subordination.solve(laws, lambda s: circle - s, b, shifts + [0.0])
    return (np.concatenate([nodes(path[-1]), circle]),
            np.concatenate([w, -1j * circle * (2.0 / CIRCLE_NODES)]),
            np.concatenate([omega, om_c], axis=1), np.concatenate([G, G_c]))


def fedavg_curves(gam, r, sigma, p, signal, eta, K, g, rounds):
    """Bias, variance, distance to the fixed point of every client at every T of ``rounds``.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, eta, g : float
    K : int or inf
    rounds : ndarray of float (integers or inf)

    Returns
    -------
    dict with bias, variance (M, len(rounds)), distance (len(rounds),), contraction, edges,
    atom, nodes, and ``local`` (a function computing the clients' own models' risk).
    """
    return round_map_curves(ClientLaws(gam, p, eta, K), r, sigma, signal, g, rounds)


def round_map_curves(laws, r, sigma, signal, g, rounds):
    """The curves of the round map w <- (I - g D) w + g c, D = sum_j p_j q(S_j), for any client
    filter q given by ``laws`` (``ClientLaws``: K local gradient steps; ``prox_laws.ProxLaws``:
    the exact prox of paper 004's Algorithm 1 with K = inf); as ``fedavg_curves``."""
    gam, p = laws.gamma, laws.p
    if isinstance(laws, ClientLaws):    # the least work, before the edge solve (fuzz41 path F7)
        check_root_work(laws, ROOT_MIN_NODES, " at the least")
    try:
        a, b, mu0 = round_map_edges(laws)
    except SolverError:     # at the edge exactly: "no real solution at the start of the scan"
        check_edge_step(laws)
        check_near_exact(laws)
        raise
    if not a > 1e-9 * b:
        check_edge_step(laws)
        check_near_exact(laws)
        raise ValueError("gamma: the round map's spectrum reaches 0 to rounding (pooled N = d: "
                         f"sum_j 1/gamma_j = {np.sum(1.0 / np.asarray(gam, float)):.10g}, "
                         "near 1); move gamma off the threshold")
    rho = contraction(a, b, g)
    settled, over, finite, _ = round_horizon(rho, rounds)
    # Rows beyond ``over`` are inf here (``big``, and ``gone`` for the own models): only the
    # rows up to it need nodes (a diverging map asked for T = 1e5 sized its contours for T =
    # over, 3827, and the own models' double contour was refused for every row). The own
    # models of round T read the server model of round T - 1: rows up to over + 1 (T = 320
    # asked alone at over = 319.1 got nodes for T = 0: "a negative or NaN quadratic form").
    kept = rounds[finite & (rounds - 1 <= over)]
    t_max = int(kept.max()) if kept.size else 0
    z, w, omega, G = _solve(laws, a, b, g, rho, t_max, check=isinstance(laws, ClientLaws))
    E1, E2, E3 = laws.traces(omega, np.broadcast_to(G, omega.shape))
    A, R = round_filters(z, g, rounds, finite)
    with np.errstate(over="ignore", invalid="ignore"):
        dist_f = A / z ** 2

        def integral(F, X):
            return ((F * w) @ X.T).imag

        enclosed(integral(np.ones((1, z.size)), G[None, :])[0, 0], mu0, (a, b),
                 "rounds limit")
        pure = integral(A, G[None, :])[:, 0]
        others_b = integral(R ** 2, E2) @ (p ** 2 * r ** 2)
        own = integral(R, E1)                                         # (nT, M)
        noise_w = np.where(sigma > 0, p ** 2 * sigma ** 2 * gam, 0.0)
        E3w = np.where((noise_w > 0)[:, None], E3, 0.0)
        variance = integral(R ** 2, E3w) @ noise_w if np.all(np.isfinite(E3w)) else None
        dist = (signal ** 2 * pure + integral(dist_f, E2) @ (p ** 2 * r ** 2))
        if variance is None:   # K = inf with some gamma_j = 1: the local least squares blow up
            variance = np.full(len(rounds), np.inf)
            dist = np.full(len(rounds), np.inf)
        else:
            dist = dist + integral(dist_f, E3w) @ noise_w
    bias = (signal ** 2 * (mu0 + pure))[None, :] + others_b[None, :] \
        - 2.0 * (p * r ** 2)[:, None] * own.T + (r ** 2)[:, None]
    var = np.broadcast_to(variance[None, :], bias.shape).copy()
    big = np.isfinite(rounds) & (rounds > over)
    noisy, moves = bool(np.any(noise_w > 0)), moving(signal, r)
    dist = far(dist, big, moves or noisy)
    scale = signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam) + 1e-300
    bias, var = settle(bias, var, big, noisy, scale, "rounds limit", moves=moves)

    inner_solution = []

    def local(terms=None):
        """(bias, variance) of the clients' own models, each (M, len(rounds)): after the
        local steps of round T (``local_models``), or personalized from the server model of
        round T by ``terms`` (``personalize.filter_terms``)."""
        from riskcalc.linear.dynamics.local_models import local_risk, own_terms

        if not inner_solution:
            inner_solution.append(_solve(laws, a, b, g, rho, t_max, shrink=0.7))
        inner = inner_solution[0]
        # The nodes grow with the rounds (degree 2 T, ``_contour``) or as the round map's
        # spectrum [a, b] nears 0 (40 / t), whichever is more: T = inf alone was told
        # "fewer rounds".
        near = z.size > 2 * t_max + 24
        why = (f"the round map's spectrum [{a:.3g}, {b:.3g}] comes near 0 (bottom / top = "
               f"{a / b:.2g}; pooled N / d = sum_j 1/gamma_j = {float(np.sum(1.0 / gam)):.6g})"
               if near else f"the rounds up to T = {t_max:.0f}")
        fix = ("move gamma further from pooled N = d, or ask for fewer clients" if near
               else "ask for fewer rounds or clients")
        if gam.size * z.size * inner[0].size * 2 > 3e7:
            raise ValueError(
                f"the clients' own models: the double contour needs {z.size * inner[0].size:.3g}"
                f" node pairs for each of {gam.size} client(s) (at most 3e7 in all): {why}; "
                f"{fix}")
        check_pair_work(gam.size, z.size * inner[0].size * 2, why, fix)
        shift = 1 if terms is None else 0
        out = local_risk(laws, r, sigma, gam, p, signal, g, mu0, rounds, settled,
                         inner, (z, w, omega, G), terms=terms or own_terms, shift=shift)
        gone = np.isfinite(rounds) & (rounds - shift > over)
        return settle(*out, gone, noisy | (sigma > 0), scale, "the clients' own models",
                      moves=moves)

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": mu0, "nodes": z.size * 2, "local": local}
