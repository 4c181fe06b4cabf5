"""Finite-M limits of MAML-FL and pFedMe with their OWN global objectives (Sigma = I).

Paper 003 (``003_4b976ddf5225c17e.txt``), eqs. 12-14: the global model minimizes
sum_j p_j / (2 n_j) ||Omega_j^(1/2) (X_j theta - y_j)||^2 with Omega_j a function of
X_j X_j^T / n_j: (I - alpha X_j X_j^T / n_j)^2 for MAML-FL (eq. 12) and
(I + X_j X_j^T / (n_j lam))^-1 for pFedMe (eq. 14, the Moreau envelope). Hence
A = sum_j p_j phi(S_j) and the noise enters through psi(S_j) = X_j^T Omega_j^2 X_j / n_j, with

    MAML-FL: phi(s) = s (1 - alpha s)^2,   psi(s) = s (1 - alpha s)^4,
    pFedMe:  phi(s) = lam s / (s + lam),   psi(s) = lam^2 s / (s + lam)^2,

(FedAvg: phi = psi = s). A is again a free sum of functions of the S_j, so every step of
``riskcalc.linear.finite_clients`` carries over with b_l = p_l phi(S_l), bias source
phi(S_j)^2, noise source psi(S_j), and the variance cross term h(s) = lam phi(s) / (s + lam)^2
(pFedMe; 0 for MAML-FL, whose personalization is the min-norm interpolation of eq. 13, R =
P^perp). Only the subordination solve changes: the Marchenko-Pastur inverse has no closed form
for these summands. For a federation of M identical clients all t_l equal one t, and
sum_l t_l = (M - 1) / g with g = tau((b + t)^-1) becomes

    tau(t / (p phi(S) + t)) = 1 - 1/M,

one increasing equation in t, solved with Marchenko-Pastur quadrature (``mp_expect``).
Heterogeneous federations would need the coupled system of step 3 (not implemented here).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.finite_clients import assemble
from riskcalc.linear.marchenko_pastur import isotropic_factors
from riskcalc.linear.mp_quadrature import mp_expect
from riskcalc.solvers import increasing_root

#: Methods with their own global objective whose finite-M limit is implemented here.
METHODS = ("maml_fl", "pfedme")


def objective(method: str, tuning: float):
    """(phi, psi, lam) of a method's global objective and personalization penalty (lam = 0:
    min-norm interpolation); ``fedavg``-objective methods give phi = psi = s."""
    if method == "maml_fl":
        return (lambda s: s * (1 - tuning * s) ** 2, lambda s: s * (1 - tuning * s) ** 4, 0.0)
    if method == "pfedme":
        if tuning <= 0:
            raise ValueError("pfedme's federated global model needs lam > 0")
        return (lambda s: tuning * s / (s + tuning),
                lambda s: tuning ** 2 * s / (s + tuning) ** 2, tuning)
    return (lambda s: s, lambda s: s, tuning if method == "rtfa" else 0.0)


def homogeneous_limits(method: str, gamma: float, r: float, sigma: float, clients: int,
                       tuning: float):
    """Bias and variance of one of ``clients`` identical clients under ``method`` with its own
    global objective (module docstring). ``method`` may also be fedavg, ftfa or rtfa (the
    FedAvg objective), which the tests use to check this route against the closed forms.

    Raises
    ------
    ValueError
        If pooled N <= d (gamma >= clients).
    SolverError
        If the subordination equation or the quadrature does not converge.
    """
    if not gamma < clients:
        raise ValueError("the federated global model needs N = sum n_j >= d, and its finite-M "
                         f"limit pooled N > d: sum_j 1/gamma_j > 1; got {clients / gamma:.6g} "
                         "(add clients or lower gamma)")
    phi, psi, lam = objective(method, tuning)
    gam = np.array([gamma])
    p = 1.0 / clients
    # M = 1: A = phi(S_i) itself (t = 0).
    t = _solve_t(gam, p, phi, clients) if clients > 1 else 0.0
    g, D, Eb, Ev = mp_expect(gam, lambda s: (1.0 / (p * phi(s) + t),
                                             1.0 / (p * phi(s) + t) ** 2,
                                             (phi(s) / (p * phi(s) + t)) ** 2,
                                             psi(s) / (p * phi(s) + t) ** 2))
    # D - g^2 as the variance of (b + t)^-1, free of the cancellation of two O(M) terms.
    var_b = mp_expect(gam, lambda s: ((1.0 / (p * phi(s) + t) - g[0]) ** 2,))[0]
    g = g[0]
    perp = max(1.0 - 1.0 / gamma, 0.0)
    if method == "fedavg":
        J = np.array([[1.0], D, Ev, Eb, *mp_expect(gam, lambda s: (phi(s) / (p * phi(s) + t),)),
                      [0.0]])
        own = 0.0
    elif lam == 0:
        J = np.array([[perp], [perp / t ** 2 if perp else 0.0], [0.0], [0.0], [0.0], [0.0]])
        own = isotropic_factors(gamma, 0.0)[1]
    else:
        J = np.array(mp_expect(gam, lambda s: (
            (lam / (s + lam)) ** 2,
            (lam / (s + lam)) ** 2 / (p * phi(s) + t) ** 2,
            (lam / (s + lam)) ** 2 * psi(s) / (p * phi(s) + t) ** 2,
            (lam * phi(s) / (s + lam)) ** 2 / (p * phi(s) + t) ** 2,
            (lam / (s + lam)) ** 2 * phi(s) / (p * phi(s) + t),
            lam * phi(s) / (s + lam) ** 2 / (p * phi(s) + t))))
        own = isotropic_factors(gamma, lam)[1]
    bias, var = assemble(np.array([r]), np.array([sigma]), gam, np.array([p]),
                         np.array([float(clients)]), g, D, var_b, Eb, Ev, J, np.array([own]))
    return float(bias[0]), float(var[0])


def _solve_t(gam, p, phi, clients):
    """t with tau(t / (p phi(S) + t)) = 1 - 1/M (increasing in t)."""
    target = 1.0 - 1.0 / clients
    mean_phi = float(mp_expect(gam, lambda s: (phi(s),))[0, 0])

    def rho(t):
        return mp_expect(np.full(t.size, gam[0]), lambda s: (
            t[:, None] / (p * phi(s) + t[:, None]),
            t[:, None] * p * phi(s) / (p * phi(s) + t[:, None]) ** 2))

    def fun(t, mask):
        val, dval = rho(t)
        return val - target, dval

    # Jensen (t / (x + t) is convex in x): rho(t) >= t / (p tau(phi) + t), so rho >= target at
    # hi; halve lo until rho(lo) <= target (it is < target near 0 when pooled N > d).
    hi = max((clients - 1) * p * mean_phi, 1e-300) * 1.0000001
    lo = hi
    for _ in range(200):
        lo /= 2.0
        if rho(np.array([lo]))[0][0] <= target:
            break
    else:
        raise SolverError("finite-clients limit: no bracket for the subordination equation")
    return float(increasing_root(fun, np.array([lo]), np.array([hi]),
                                 what="subordination t of the global model")[0])
