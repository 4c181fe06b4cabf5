"""Paper 004's Algorithm 1 with exact local solves (K = inf) under COVARIATE SHIFT: the curves of
the server model and of the clients' own models, each client's risk in its own covariance
(derived here).

Model as ``shift.pencil`` (client j: gamma_j, r_j, sigma_j, p_j, rows N(0, Sigma_j), the Sigma_j
diagonal in one basis; the joint measure mu of ``riskcalc.linear.engine.joint_spectrum``: atoms
a of weight h_a, client j's eigenvalue v_j(a); S_j = X_j^T X_j / n_j, b_j = S_j theta_j + n_j,
n_j = X_j^T eps_j / n_j of covariance sigma_j^2 gamma_j S_j / d, theta_j = theta_0 + u_j) and
Algorithm 1 with the exact prox as ``sigma.prox_sigma`` (paper ``004_98172ed3646eef14.txt``,
eqs. 9-10): v_j = B_j (b_j + lam w), B_j = (S_j + lam)^-1, w <- w - g lam sum_j p_j (w - v_j),
i.e. FedAvg's round map with the filter q(s) = s / (s + lam) and the global step g lam. Client
i's risk of a model m is E[(m - theta_i)^T Sigma_i (m - theta_i)].

1. Linearization: ``sigma.prox_sigma``, step 1, verbatim (algebra in the exact S_j, no Sigma):
   the pencil of 1 + M blocks (row 0: (z - sum_j p_j) x_0 + lam sum_j p_j x_j; row j: x_0 -
   (S_j + lam) x_j) has G_00 = (z - D)^-1, D = sum_j p_j q(S_j), G_j0 = B_j G_00, G_0j = lam p_j
   G_00 B_j and G_ij = B_i G_0j - delta_ij B_i; L = L0(z) + sum_j E_j (x) S_j with E_j = -1 at
   (j, j): ``shift.pencil``'s pencil with K = 1, eta = 1 and r_j = c_j = (j).
2. Deterministic equivalent: ``shift.pencil``, step 2, whose Woodbury step per row of client j
   uses only that E_j sits on client j's own rows and that E[x x^T] = Sigma_j for its rows (any
   scalar L0): Ghat(a) = (L0 + sum_j v_j(a) Chat_j)^-1, Chat_j = -(1 - gamma_j tau_j)^-1, tau_j
   = E[v_j Ghat_jj], Newton's Jacobian with the weights h v_j v_k (``ShiftProxPencil``: the
   shift pencil's ``ghat``, ``_jacobian``, ``own_weights`` on ``prox_sigma.ProxPencil``'s L0).
   One covariance (v_j = s) is ``ProxPencil`` term by term.
3. Two points: ``shift.pencil``, step 3, at any block (a, b) (``shift.algorithm1.pencil.
   ShiftAlg1Pencil.two_point``, which uses only the rows, columns and v_j of the pencil):
   E[l(a) Ghat12(a)_ab] for the metric l = h v_i (client i's Sigma_i) or h (the distance).
4. Server and own models. The error forms of ``sigma.prox_sigma`` (the server's via
   ``sigma.fedavg.curves.pencil_curves`` with the coefficients v_j = e_0 - lam e_j, wn_j = e_j;
   the own models' step 4 with Y(a) the row i of G) are identities of the exact S_j and of the
   sources' second moments, whose only covariance is client j's own S_j in E[n_j n_j^T], absorbed
   by G L = I (Y(e_j) S_j = Y(lam (p_j e_0 - e_j)) - delta_ij I for any S_j). Every trace
   tau(Sigma Y1 Y2^T), tau(Sigma G_00), tau(Sigma q(S_j) G_00) of those forms is E[s(a) .]
   with s the metric's eigenvalue on the atoms; under shift client i's risk takes s = v_i.
   Hence client i's rows are those forms evaluated with the metric s = v_i (``_metric``: this
   pencil with ``s`` = v_i for the traces, the solves' weights untouched) and the round
   quadratures of ``pencil_curves`` and ``prox_sigma._own_models`` unchanged; row i of the
   i-th evaluation is client i's risk (the server's and its own model's), the distance
   ||w_T - w_inf||^2 (metric h) the same in every evaluation.
5. Edges: ``pencil_edges.edges`` with q <= top_j / (top_j + lam) on client j's sample spectrum
   under its own Sigma_j (``shift.pencil.client_ends``) and the density Im tau(W G_00) for the
   positive diagonal W = sum_j p_j Sigma_j / sum_j p_j (any positive weight has the same
   support, ``shift.pencil``, step 4). Pooled N < d too: D's atom at 0 (mass (1 - sum_j
   1 / gamma_j)_+, where the clients' null spaces meet) is held apart by ``edges`` as under
   a shared spectrum (``sigma.prox_sigma``); the contour stays around the rest (``shift.
   one_step.check_clients(atom_ok=True)``).
6. Personalization (FTFA, RTFA) from the round-T server model: ``sigma.personalize_sigma``'s
   Algorithm 1 branch (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5 and Sec. 3.2;
   one chain per client downstream of block 0, au_j = p_j e_0 - e_j, wn_j = e_j / lam) with
   client j's v_j on its base and new rows and client i's risk in the metric h v_i, as
   ``shift.personalize`` does for FedAvg (``shift.personalize.personal_models`` on this
   pencil, its own layout, coefficient -1), on the curves' contour; M (1 + k_b)^2 <=
   ``personalize_sigma.MAX_UNKNOWNS``.

Each metric solves the contour again (M times the one-point and two-point solves of the shared
spectrum's route; the nodes and edges are the same). Checks (``tests/test_rounds_shift_alg1_
prox.py``): equal covariances against ``sigma.prox_sigma``, Algorithm 1 with many small local
steps (``shift.algorithm1.curves``) approaching it, T = inf against the pFedMe joint minimizer
under shift (``clients_limit("pfedme", spectra=...)``), and the literal algorithm simulated
(``montecarlo.linear.rounds``, ``spectra``, K = inf) on an anti-aligned federation; step 6:
``tests/test_rounds_shift_prox_personal.py``.
"""

from __future__ import annotations

import copy
from functools import partial

import numpy as np

from riskcalc.linear.dynamics.fedavg import moving, round_horizon, settle
from riskcalc.linear.dynamics.shift.one_step import check_clients
from riskcalc.linear.dynamics.shift.pencil import MetricPencil, client_ends, forget_pairs
from riskcalc.linear.dynamics.shift.personalize import personal_models
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma.guards import unit_top
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.personalize_sigma import personal_unknowns
from riskcalc.linear.dynamics.sigma.prox_sigma import ProxPencil, _own_models, band_points

#: Least 1 - b, b the top of the round map's D = sum_j p_j S_j (S_j + lam)^-1, this route
#: solves. Its own models lose digits like (0.4-8)e-15 / (1 - b) relative as lam -> 0 pushes
#: b to 1 (measured on three federations against the lam -> 0 limit, FedAvg's exact local
#: solves; gamma (0.5, 2), two-point:1,3,0.5 and scaled:2, 1 - b = 0.27 lam: 6e-6 at lam
#: 1e-9, 8e-4 at 1e-11, 11% at 1e-12, silently, the server model within 1e-6; fuzz41 path
#: F3). At 2e-8: at most ~4e-7.
TOP_GAP = 2e-8


class ShiftProxPencil(MetricPencil):
    """``prox_sigma.ProxPencil``'s blocks and L0 with client j's eigenvalue v_j(a) on its row
    (module docstring, step 2); ``s`` the metric of the traces (the pooled mean W until
    ``_metric`` sets a client's)."""

    what = "Algorithm 1 with exact prox under covariate shift"

    def __init__(self, joint, gam, p, lam: float):
        super().__init__(joint, gam, p, 1.0, 1)
        proto = ProxPencil(self.s, self.h, gam, p, lam)
        self.n, self.rows, self.cols, self.L0 = proto.n, proto.rows, proto.cols, proto.L0
        rowv = np.zeros((self.V.shape[1], self.n))
        rowv[:, self.rows[:, 0]] = self.V.T
        self.rowv = rowv


def _metric(pen, values):
    """A shallow copy of ``pen`` whose traces read the metric ``values`` (step 4)."""
    out = copy.copy(pen)
    out.s = np.asarray(values, float)
    return out


def shift_prox_curves(gam, r, sigma, p, signal, lam, g, rounds, joint, scale=1.0):
    """Bias, variance and distance to the fixed point of the server model, and (``local()``)
    bias and variance of every client's own model (the prox of the server model), of
    Algorithm 1 with exact prox under covariate shift at every T of ``rounds``, each client's
    risk in its own covariance (module docstring); the dict of ``prox_sigma.prox_sigma_curves``.

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, lam, g : float
        ||theta_0||, the prox penalty and the paper's global step gamma.
    rounds : ndarray of float (integers or inf)
    joint : riskcalc.linear.engine.joint_spectrum.JointSpectrum
        The clients' commuting covariances (their types and joint measure); solved at their
        largest eigenvalue 1 (``sigma.guards.unit_top``, lam / c and g c: at 1e50 and 1e-50
        the personalization failed, "Singular matrix"; fuzz41 path F6).
    scale : float
        That eigenvalue, where the call is the rescaled one (lam in the messages is lam c).

    Raises
    ------
    ValueError
        Clients counted differently from the spectra, or the routes' limits.
    """
    if np.max(joint.values) != 1.0:
        u, back = unit_top(joint, r, signal, None, lam, g)
        return back(shift_prox_curves(gam, u["r"], sigma, p, u["signal"], u["lam"], u["g"],
                                      rounds, u["spectrum"], scale=u["c"]))
    M = gam.size
    check_clients(gam, joint, atom_ok=True)
    pen = ShiftProxPencil(joint, gam, p, lam)
    top = client_ends(pen.V, pen.h, gam)[:, 1]
    qmax = top / (top + lam)
    found = edges(pen, top, qmax=qmax, near=band_points(gam, p, qmax))
    if 1.0 - found[1] < TOP_GAP:
        raise ValueError(f"lam = {lam * scale:g}: under covariate shift the exact prox's round map "
                         f"has its top within {1.0 - found[1]:.2g} of 1 (lam small against "
                         "the clients' sample eigenvalues), where this route's own models "
                         "lose their digits; give lam >= "
                         f"{scale * lam * TOP_GAP / (1.0 - found[1]):.2g}"
                         " (the lam -> 0 limit is FedAvg's exact local solves)")
    v = np.zeros((M, pen.n))
    v[:, 0], v[np.arange(M), pen.rows[:, 0]] = 1.0, -lam
    wn = np.zeros((M, pen.n))
    wn[np.arange(M), pen.rows[:, 0]] = 1.0
    rows, seen = [], {}

    def own_models(c, pi):
        """The own models in the metric of ``pi`` (step 4); the contour kept for
        ``personalize`` (its nodes, solves and quadratures are the same in every metric)."""
        seen.setdefault("c", c)
        return _own_models(pi, c, lam, gam, r, sigma, p, signal, rounds)
    try:
        for i in range(M):
            pi = _metric(pen, pen.V[i])
            rows.append(pencil_curves(pi, found, g * lam, gam, r, sigma, p, signal, rounds, v,
                                      wn, own_models=partial(own_models, pi=pi)))
    finally:
        forget_pairs()
    out = dict(rows[0])
    out["bias"] = np.stack([x["bias"][i] for i, x in enumerate(rows)])
    out["variance"] = np.stack([x["variance"][i] for i, x in enumerate(rows)])
    own = []

    def local(terms=None):
        """(bias, variance), each (M, len(rounds)), of every client's own model after the
        local solve of round T, in its own covariance (step 4)."""
        if terms is not None:
            raise ValueError("covariate shift: personalization reads the curves' "
                             "``personalize``, not ``local``")
        if not own:
            try:
                own.append([x["local"]() for x in rows])
            finally:
                forget_pairs()
        return (np.stack([b[i] for i, (b, _) in enumerate(own[0])]),
                np.stack([v[i] for i, (_, v) in enumerate(own[0])]))

    def personalize(**kind):
        """(bias, variance) after personalizing the round-T server model (step 6) on the
        curves' contour (solved by ``local`` if not yet)."""
        if "c" not in seen:
            local()
        big = np.isfinite(rounds) & (rounds > round_horizon(out["contraction"], rounds)[1])
        scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(
            pen.V.max()) + 1e-300
        return settle(*_personalized(pen, seen["c"], top, lam, gam, r, sigma, p, signal, rounds,
                                     **kind), big, np.any((p > 0) & (sigma > 0)) | (sigma > 0),
                      scale, f"{pen.what}, the personalized models", moves=moving(signal, r))
    personalize.tops = top          # FTFA's stability per client (``RoundsLimit``)
    out["local"], out["personalize"] = local, personalize
    return out


def _personalized(pen, c, tops, lam, gam, r, sigma, p, signal, rounds, *, kind, k=None,
                  eta2=None, lam2=None):
    """Step 6: ``shift.personalize.personal_models`` on the exact-prox pencil (its own
    layout, coefficient -1) with ``sigma.personalize_sigma``'s Algorithm 1 row combinations
    au_j = p_j e_0 - e_j, wn_j = e_j / lam, padded to the extended pencil."""
    M = gam.size
    personal_unknowns(M, pen.rows.shape[1], kind, k)      # before np.eye(n) (steps = 10^6)
    n = pen.n + M * ((k if kind == "ftfa" else 1) + 1)
    e_ = np.eye(n)
    return personal_models(pen, pen, -1.0, p[:, None] * e_[0][None, :] - e_[1:M + 1],
                           e_[1:M + 1] / lam, c, tops, gam, r, sigma, signal, rounds, kind=kind,
                           k=k, eta2=eta2, lam2=lam2)
