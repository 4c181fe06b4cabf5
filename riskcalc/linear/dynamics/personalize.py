"""Personalization after round T: FTFA (k gradient steps) and RTFA (ridge toward the server
model) started from the server model w_T of the rounds (derived here).

Client i personalizes the server model w_T with a filter pi (pi(0) = 0) of its own sample
covariance: v_i = (1 - pi(S_i)) w_T + pi(S_i) S_i^+ b_i, i.e.
v_i - theta_i = (1 - pi_i) (w_T - theta_i) + pi_i xi_i (xi_i = S_i^+ X_i^T eps_i / n_i).

* FTFA, k full-batch gradient steps of size eta' on f_i from w_T (paper 003,
  ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5, started from the round-T model):
  pi(s) = 1 - (1 - eta' s)^k;
* RTFA, argmin_v f_i(v) + lam'/2 ||v - w_T||^2 (paper 003, Sec. 3.2, from the round-T model):
  pi(s) = s / (s + lam').

With w_T of ``fedavg`` (step 1), the risk is that of ``local_models`` with the client function
Y_i = (1 - pi_i)^2, the server model of round T in place of round T - 1, and the one-point
functions E[h(s) / (omega_j - p_j q(s))] for h = (1 - pi)^2, (1 - pi)^2 q, (1 - pi) pi q / s,
q^2 (1 - pi)^2 and q^2 (1 - pi)^2 / s (q the round filter) ::

    signal^2 tau(Y_i (I - g D)^{2T}) + sum_j p_j^2 tau(X_j R_T Y_i R_T) - 2 p_i r_i^2 tau(Y_i q_i R_T)
    + r_i^2 tau(Y_i) + 2 p_i sigma_i^2 gamma_i tau((1 - pi_i) pi_i q_i / s R_T)
    + sigma_i^2 gamma_i tau(pi_i^2 / s).

Those one-point functions mix two filters, so instead of ``ClientLaws.families``' recursions they
are computed by Marchenko-Pastur quadrature (``mp_expect``, geometric convergence set by the
distance from omega_j to the spectrum of a_j, which the contours keep away from it; tolerance
1e-12); the functions of the round filter alone still come from the exact families. T = 0 is
personalization from w_0 = 0 (the local baselines); T = infinity from the fixed point.

With w_T of Algorithm 1 with K warm-started local steps (``algorithm1.curves``: e_T = w_T -
theta_0 = oint z^T (-Gc N theta_0) + g oint P_T Gc sum_k d_k f_k, f_k = S_k u_k + n_k, Gc = R /
(g lam)), the same decomposition with Y_i = (1 - pi_i)^2 gives ::

    signal^2 oint oint z1^T z2^T tau(N1 R1 Y_i R2 N2) / (g lam)^2
    + oint oint P_T(z1) P_T(z2) sum_k tau(R1 Y_i R2 X_k) / lam^2,   X_k = d_k(z1) d_k(z2) F_k,
    - 2 r_i^2 oint P_T E_i[Y_i d_i s / A_i] / lam + r_i^2 tau(Y_i)
    + 2 sigma_i^2 gamma_i oint P_T E_i[(1 - pi_i) pi_i d_i / A_i] / lam + sigma_i^2 gamma_i tau(pi_i^2 / s)

(the noise cross term: E[(d_i n_i)(S_i^+ n_i)^T] = sigma_i^2 gamma_i d_i S_i S_i^+ / d, and
pi_i S_i S_i^+ = pi_i). The first two are ``algorithm1.curves``' step 5 with J = Y_i, a function
of client i's matrix alone: E_i[Y (beta - X)(gamma - Y') / (A1 A2)] - delta_i E_i[Y / (A1 A2)]
and the 2 x 2 corner equations with Y_i in client i's corner; the one-point traces are on that
module's rule, tau(Y_i) and tau(pi_i^2 / s) by Marchenko-Pastur quadrature
(``algorithm1_personalized``).
"""

from __future__ import annotations

import numpy as np

from riskcalc._validate import as_array, positive, real
from riskcalc.linear.engine import weighted_mp
from riskcalc.linear.engine.mp_quadrature import mp_expect


#: Most FTFA steps after the rounds (``personalization_filter``; the command line's --steps).
MAX_STEPS = 1_000_000


def personalization_filter(steps=None, step_size=None, lam=None):
    """(pi, description) for FTFA (``steps``, ``step_size``) or RTFA (``lam``), validated."""
    if lam is not None:
        if steps is not None or step_size is not None:
            raise ValueError("give steps and step_size (FTFA) or lam (RTFA), not both")
        # Read by the layer first: Decimal(0), np.float32(0) or a 0-d array got the bare
        # range message.
        if float(real("lam", lam, ndim=0)) == 0:
            # "(0, inf)" alone did not say why lam' = 0 is out: it is a limit (the fit nearest
            # the round-T model among the client's interpolators, its own least squares when
            # gamma_j < 1), which this route's filter s / (s + lam') does not take.
            raise ValueError("lam: RTFA's ridge toward the round-T server model must lie in "
                             "(0, inf) along the rounds; lam = 0 is the limit lam -> 0 (the "
                             "client's own least-squares fit nearest the server model), not "
                             "taken here: give a small lam > 0")
        lam = float(positive("lam", lam, ndim=0))
        return (lambda s: s / (s + lam)), {"personalization": "rtfa", "lam": lam}
    if steps is None or step_size is None:
        raise ValueError("personalization needs steps and step_size (FTFA: k gradient steps "
                         "from the server model) or lam (RTFA: ridge toward it)")
    k = as_array("steps", steps, low=0.0)
    if k.ndim or k != np.round(k) or k > MAX_STEPS:
        raise ValueError(f"steps must be one integer in 0..1e6, got {steps!r}")
    eta, k = float(positive("step_size", step_size, ndim=0)), int(k)
    return ((lambda s: 1.0 - (1.0 - eta * s) ** k),
            {"personalization": "ftfa", "steps": k, "step_size": eta})


#: FTFA's growth factor (1 - eta s)^(2k) at the top of a client's sample spectrum beyond which
#: its risk is reported as inf (log10). Measured: up to 1e250 the quadratures of
#: ``filter_terms`` compute; beyond, it depends on gamma (gamma 4, step 0.5: equal to
#: ``steps_limit("local")`` at T = 0 to 1e-14 even at 1e305; gamma 0.5, step 1, 500 steps:
#: 1e281 fails at T = 0 and 1, "Marchenko-Pastur quadrature did not converge" after 20-24 s),
#: so values between about 1e250 and the floating point range are reported as inf too.
FTFA_GROWTH_DIGITS = 250


def ftfa_stability(gam, k: int, eta: float, top=None):
    """(converges, overflows): per client, whether FTFA's k gradient steps of size eta from the
    server model converge (eta times the top of its sample spectrum at most 2: the convention of
    ``riskcalc.steps_limit``, at any k), and whether their growth (1 - eta s)^(2k) at that top
    exceeds 1e``FTFA_GROWTH_DIGITS`` (the client's risk is then reported as inf, JSON null).
    ``top``: per client (under a covariance spectrum); default (1 + sqrt gamma_j)^2 (Sigma =
    I)."""
    top = (1.0 + np.sqrt(np.asarray(gam, float))) ** 2 if top is None else np.asarray(top, float)
    # At 2 (to rounding) it converges (fuzz38 steps2 F17, ``steps.finite_clients.stability``).
    return (eta * top <= 2.0 * (1.0 + weighted_mp.EDGE_RTOL),
            ftfa_growth_digits(k, eta, top) > FTFA_GROWTH_DIGITS)


def ftfa_growth_digits(k: int, eta: float, top):
    """log10 of FTFA's growth factor (1 - eta s)^(2k) at the tops ``top`` of the clients' sample
    spectra (-inf where eta top = 1)."""
    with np.errstate(divide="ignore"):
        return 2 * k * np.log10(np.abs(1.0 - eta * np.asarray(top, float)))


def overflowed(risk, over, rounds, signal, r, sigma):
    """``risk`` (M, R) with the rows of the clients ``over`` (FTFA's growth beyond floating
    point, ``ftfa_stability``) set to inf, or to 0 where the personalized model has no error
    to amplify: v_i - theta_i = (1 - pi) (w_T - theta_i) + pi xi_i (module docstring) is 0
    when signal, every r_j and every sigma_j are 0, and at T = 0 (w_0 = 0) when signal, r_i
    and sigma_i are."""
    out = np.array(risk, float)
    r, sigma = np.asarray(r, float), np.asarray(sigma, float)
    none = signal == 0 and not np.any(r) and not np.any(sigma)
    zero_start = (signal == 0) & (r == 0) & (sigma == 0)
    for i in np.flatnonzero(over):
        out[i] = np.where(none | ((np.asarray(rounds) == 0) & zero_start[i]), 0.0, np.inf)
    return out


def filter_terms(pi):
    """A ``terms`` function for ``local_models.local_risk``: the one-point functions of
    ``local_models.own_terms`` for the personalization filter ``pi`` (module docstring)."""
    def terms(laws, omega, G):
        P, S = laws.families(omega, np.broadcast_to(G, omega.shape))
        M, N = omega.shape

        def fun(s, om, p):
            q = laws.q(s)
            qs = np.where(s > 0, q / np.where(s > 0, s, 1.0), 0.0)
            pis = pi(s)
            Y = (1.0 - pis) ** 2
            den = om[:, None] - p[:, None] * q
            return (Y / den, Y * q / den, (1.0 - pis) * pis * qs / den, q * q * Y / den,
                    q * qs * Y / den)

        vals = mp_expect(np.repeat(laws.gamma, N), fun, omega.ravel(),
                         np.repeat(laws.p, N)).reshape(5, M, N)
        const = mp_expect(laws.gamma, lambda s: (
            (1.0 - pi(s)) ** 2, np.where(s > 0, pi(s) ** 2 / np.where(s > 0, s, 1.0), 0.0)))
        return {"Y": vals[0], "Yq": vals[1], "cross": vals[2], "XYr": vals[3],
                "XYs": vals[4], "X": P[2], "Xs": S[2], "P0": P[0], "tY": const[0].real,
                "tpi2s": const[1].real}

    terms.pi = pi       # Algorithm 1's finite-K curves read the filter on their own rule
    return terms


def algorithm1_personalized(pi, c):
    """(bias, variance), each (M, len(rounds)), of every client's model personalized by the
    filter ``pi`` from the server model of Algorithm 1 with K warm-started local steps at each
    round (module docstring; paper 004, ``004_98172ed3646eef14.txt``, eqs. 10-11, then paper
    003's FTFA / RTFA). ``c``: the pieces of ``algorithm1.curves.curves`` on its two contours
    (laws, node factors, the 3 x 3 linearization's blocks, weights and the ``two`` / ``double``
    sums), so that pi enters only through client i's own factors."""
    laws, two, double = c["laws"], c["two"], c["double"]
    gam, r, sigma, lam, gl = c["gam"], c["r"], c["sigma"], c["lam"], c["gl"]
    i1, i2, d1, d2 = c["i1"], c["i2"], c["d1"], c["d2"]
    s = laws.s
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pis = pi(s)
        keep = (1.0 - pis)[:, None, :]
        Li = two(keep * i1, keep * i2)                               # E_i[Y / (A1 A2)]
        theta = two(keep * c["yg"], keep * c["xb"]) - c["delta"] * Li
        G12d = (Li / c["Kk"]) / c["Q"]
        parts = []
        for F, H, coef in ((s ** 2, c["Hr"], r ** 2), (s, c["Hs"], sigma ** 2 * gam)):
            Ex = H / c["Kk"]
            f = two(keep * d1 * i1, keep * d2 * i2 * F[:, None, :]) - Li * Ex
            parts.append(f * coef[:, None, None]
                         + G12d * np.einsum("mkl,m->kl", Ex, coef)[None])
        one_r = laws.expect(keep ** 2 * d1 * i1 * s[:, None, :])
        one_s = laws.expect(keep * pis[:, None, :] * d1 * i1)
        P1w = c["P1"] * c["w1"]
        const = mp_expect(gam, lambda x: (
            (1.0 - pi(x)) ** 2, np.where(x > 0, pi(x) ** 2 / np.where(x > 0, x, 1.0), 0.0)))
        tY, tpi2s = const[0].real, const[1].real
        P1, P2 = c["P1"], c["P2"]
        bias = (c["signal"] ** 2 * double(c["pw1"], c["pw2"], theta) / gl ** 2
                + double(P1, P2, parts[0]) / lam ** 2
                - 2.0 * r ** 2 * (P1w @ one_r.T).imag / lam + r ** 2 * tY).T
        var = (double(P1, P2, parts[1]) / lam ** 2
               + 2.0 * sigma ** 2 * gam * (P1w @ one_s.T).imag / lam
               + sigma ** 2 * gam * tpi2s).T
    zero = c["rounds"] == 0
    bias[:, zero] = ((c["signal"] ** 2 + r ** 2) * tY)[:, None]
    var[:, zero] = (sigma ** 2 * gam * tpi2s)[:, None]
    return bias, var
