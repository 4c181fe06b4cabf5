"""The global objectives of MAML-FL and pFedMe (paper 003, ``003_4b976ddf5225c17e.txt``, eqs.
12-14) in the form the finite-M limits solve (``riskcalc.linear.finite_clients.own``), and the
ranges where those limits answer: near pooled N = d (``check_near_pooled``) and where their
weight psi overflows (``check_weight_range``); the cap on tau(A^-1) (``global_cap``).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.engine.mp_quadrature import mp_expect
from riskcalc.linear.finite_clients.identity import check_pooled, others_sum

#: Methods with their own global objective whose finite-M limit is implemented here.
METHODS = ("maml_fl", "pfedme")


def objective(method: str, tuning: float):
    """(phi, psi, lam) of a method's global objective and personalization penalty (lam = 0:
    min-norm interpolation); ``fedavg``-objective methods give phi = psi = s."""
    if method == "maml_fl":
        a, b = maml_factors(tuning)
        return (lambda s: s * (a - b * s) ** 2, lambda s: s * (a - b * s) ** 4, 0.0)
    if method == "pfedme":
        if np.real(tuning) <= 0:
            raise ValueError("pfedme's federated global model needs lam > 0")
        a = pfedme_factor(tuning)
        return (lambda s: a * s / (s + tuning), lambda s: a ** 2 * s / (s + tuning) ** 2, tuning)
    return (lambda s: s, lambda s: s, tuning if method == "rtfa" else 0.0)


def phi_zero(method: str, tuning):
    """The zero of phi inside (0, infinity), where the subordination's integrands
    (p phi(s) + t)^-k peak as t -> 0 (``mp_expect``'s ``peak``): MAML-FL's double zero
    s = 1/alpha (paper 003, eq. 12: Omega_j = (I - alpha X_j X_j^T / n_j)^2); None for the
    others (pFedMe's and FedAvg's phi vanish at s = 0 only). The real part for the gradient's
    complex steps."""
    return 1.0 / float(np.real(tuning)) if method == "maml_fl" and np.real(tuning) > 0 else None


#: The smallest N/d - 1 at which ``quadrature_peak`` hands phi's zero to the quadrature.
PEAK_POOLED = 1e-3


def quadrature_peak(method: str, tuning, gam, count):
    """``phi_zero`` where the graded quadrature's answers hold: away from pooled N = d (N/d -
    1 >= ``PEAK_POOLED``, N/d = sum_j count_j / gamma_j), else None (the Chebyshev rules alone,
    which refuse a peak they cannot resolve). Near N = d every client's shift t shrinks with
    N/d - 1 and the graded rule's rounding (eps over the peak's width sqrt(t)) is amplified by
    1 / (N/d - 1): two clients at gamma 2/(1 + e), alpha 0.3, answered risks times e of
    1.71497 at e = 1e-5, 1.7149985 at 5e-7 (consistent), but a negative bias at 2.5e-7 and
    0.818 and 0.270 at 1e-7 (silently; the others 1.715); before the graded rule every e
    below ~1e-4 was refused as pinned near pooled N = d (lead, merging h39quad)."""
    return phi_zero(method, tuning) if check_pooled(gam, count) >= PEAK_POOLED else None


def peak_left_out(method: str, tuning, gam, count) -> str | None:
    """Why a refused subordination solve cannot see phi's zero, or None: MAML-FL's double zero
    s = 1/alpha (paper 003, eq. 12) inside a client's Marchenko-Pastur support
    [(1 - sqrt(gamma))^2, (1 + sqrt(gamma))^2] with N/d - 1 below ``PEAK_POOLED``, where
    ``quadrature_peak`` leaves the peak to the Chebyshev rules, which refuse it (3 clients at
    gamma 3 (1 - 1e-4), alpha 0.3, were said "pinned ... where one client's t_l reaches 0",
    no client having gamma < 1: fuzz40 small F6)."""
    zero = phi_zero(method, tuning)
    excess = check_pooled(gam, count)
    if zero is None or excess >= PEAK_POOLED:
        return None
    inside = (1.0 - np.sqrt(gam)) ** 2 < zero
    inside &= zero < (1.0 + np.sqrt(gam)) ** 2
    if not inside.any():
        return None
    at = ", ".join(f"{g:.6g}" for g in np.unique(gam[inside]))
    return (f"finite-clients limit: tau(A^-1) cannot be solved: phi's double zero s = 1/alpha "
            f"= {zero:.6g} lies inside the spectrum of the clients at gamma {at}, "
            "where the subordination's integrands peak, and the peak's quadrature is used only "
            f"from N/d - 1 >= {PEAK_POOLED:g} (its rounding grows like 1 / (N/d - 1)); here "
            f"pooled N is near d (N/d - 1 = {excess:.3g}): move the gammas off pooled N = d "
            f"(lower a client's gamma until sum_j 1/gamma_j - 1 >= {PEAK_POOLED:g}) or take "
            "alpha with 1/alpha outside the clients' spectra")


def maml_factors(alpha):
    """(a, b) with (a - b s)^2 = (1 - alpha s)^2 / k, k = 1 up to alpha = 1 and alpha^2
    beyond: MAML-FL's global objective (paper 003, eq. 12) with phi(s) = s (a - b s)^2 and
    psi(s) = s (a - b s)^4. The estimator is invariant under phi -> phi / k, psi -> psi / k^2
    (A and its right-hand side scale together), and this form stays O(1) as alpha -> infinity,
    where phi -> s^3 (the weights Omega_j -> (X_j X_j^T / n_j)^2), instead of overflowing
    (psi from alpha ~ 1e77); k is continuous in alpha. Complex-safe (the branch follows the
    real part)."""
    return (1.0, alpha) if np.real(alpha) <= 1 else (1.0 / alpha, 1.0)


def pfedme_factor(lam):
    """a with phi(s) = a s / (s + lam), psi(s) = a^2 s / (s + lam)^2: pFedMe's global objective
    (paper 003, eq. 14; a = lam in the module docstring) divided by k = lam up to lam = 1 and
    by 1 beyond (the estimator is invariant under phi -> phi / k, psi -> psi / k^2, as for
    ``maml_factors``). So phi stays O(1) as lam -> 0, where it tends to the indicator of
    s > 0 (the global model minimizes sum_j p_j dist^2(theta, argmin L_j)), instead of O(lam):
    t, g and the traces then spanned lam^-2 to lam^2 and the risk drifted (1.8248 for 1.875 at
    lam = 1e-100, gamma 2) or the solves failed (gamma 0.5 at lam = 1e-8 to 1e-15).
    Complex-safe (the branch follows the real part)."""
    return 1.0 if np.real(lam) <= 1 else lam


#: The largest M eps / (N/d - 1) answered by MAML-FL's and pFedMe's finite-M limits
#: (``check_near_pooled``).
NEAR_POOLED = 1e-8


def check_near_pooled(name: str, gam, count) -> None:
    """``check_pooled``, and IllConditioned where MAML-FL's or pFedMe's finite-M limit (every
    route: Sigma = I here, ``pfedme_sigma``, ``maml_sigma``) would lose its digits: their
    relative errors grow like M eps / (N/d - 1) (measured 0.2 to 15 times it against a second
    route: 5e-8 at 4 clients and N/d - 1 = 1e-7, 4.5e-2 at 2e-12, 4e-8 at 1e8 clients and
    N/d - 1 = 1; FedAvg's closed forms lose only the inputs' eps / (N/d - 1)); refused
    beyond ``NEAR_POOLED``, saying which N/d - 1 answers."""
    excess = check_pooled(gam, count)
    m = float(np.sum(count))
    lost = m * np.finfo(float).eps / excess
    if lost > NEAR_POOLED:
        raise IllConditioned(
            f"{name}'s finite-M limit loses its digits where M eps / (N/d - 1) is large (its "
            "relative errors are about that size: many clients, or pooled N near d; N/d = "
            f"sum_j 1/gamma_j): here M = {m:.6g} clients and N/d - 1 = {excess:.3g}: "
            f"{lost:.2g}; it answers up to {NEAR_POOLED:g}, here from N/d - 1 = "
            f"{m * np.finfo(float).eps / NEAR_POOLED:.3g} (lower the clients' gamma)")


def check_weight_range(method: str, gam, tuning) -> None:
    """SolverError where psi overflows on a client's spectrum (MAML-FL's from s ~ 1e62 at
    alpha = 0.1: inf times a vanishing (b + t)^-2 is NaN), naming the gamma that stays finite."""
    psi = objective(method, tuning)[1]

    def finite(g):          # psi at the top of the Marchenko-Pastur law of ratio g
        with np.errstate(over="ignore", invalid="ignore"):
            return np.isfinite(psi(np.maximum(g, 1) * (1 + np.sqrt(np.minimum(g, 1 / g))) ** 2))

    bad = gam[~finite(gam)]
    if bad.size:
        grid = finite(10 ** (np.arange(2001) / 20))     # only for the message
        raise SolverError(
            f"{method}'s finite-M limit: its weight psi (paper 003, eqs. 12-14; MAML-FL's "
            f"s (1 - alpha s)^4) overflows double precision on the spectrum of the client at "
            f"gamma = {max(bad):.3g}; it stays finite up to gamma ~ "
            f"{10 ** ((np.argmin(grid) - 1) / 20):.3g} here")


def global_cap(gam, p, phi):
    """The smallest tau((p_l phi(S_l))^-1) over the clients with gamma_l < 1 (infinite where
    none, or where phi(S_l) is not invertible on the spectrum: NaN rows of the quadrature):
    the bound on tau(A^-1) of the global model that ``own._subordination`` brackets under."""
    small = gam < 1
    if not small.any():
        return np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        caps = mp_expect(gam[small], lambda s, P: (1.0 / (P * phi(s)),), p[small, None],
                         strict=False)[0]
    caps = caps[np.isfinite(caps) & (caps > 0)]
    return float(caps.min()) if caps.size else np.inf


def refined_shifts(gam, p, count, phi, g, t, peak=None):
    """The shifts t_l of a solved subordination (g, t) (``own._subordination``), each from the
    others' shares: at the root sum_l count_l tau(b_l (b_l + t_l)^-1) = 1, so g t_j =
    tau(t_j (b_j + t_j)^-1) = sum over the other clients of tau(b_l (b_l + t_l)^-1), a sum of
    positive terms. A data-rich client's t_j ~ 1e-100 is below the solve's rounding in G_j(t)
    = g (gamma [1e-100, 1], pFedMe: t_j ~ eps, its bias 4.9e-32 for 4e-200; fuzz42 rtfa F6)."""
    if count.sum() == 1:
        return t
    def shares(s, P, T):
        b = P * phi(s)
        return (b / (b + T),)
    share = mp_expect(gam, shares, p[:, None], t[:, None], peak=peak)[0]
    return others_sum(count, share) / g
