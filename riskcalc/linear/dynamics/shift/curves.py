"""FedAvg with K >= 1 local steps under covariate shift: the server model's curves (derived here).

Model as ``shift.pencil`` (client j: gamma_j, r_j, sigma_j, p_j, rows N(0, Sigma_j), the Sigma_j
diagonal in one basis; joint measure mu, atoms a of weight h_a, client j's eigenvalue v_j(a))
and the risk of ``shift.one_step`` (client i's metric Sigma_i: E[(w - theta_i)^T Sigma_i (w -
theta_i)]). K local gradient steps of size eta from the server model, then w <- w + g sum_j
p_j (v_j - w): with q(S) = I - (I - eta S)^K, (q / s)(S) = eta sum_(k<K) (I - eta S)^k, D =
sum_j p_j q(S_j) and R = R_T(D) = (I - (I - g D)^T) D^-1, client j's local steps give v_j -
theta_j = A_j^K (w - theta_j) + (q / s)(S_j) X_j^T eps_j / n_j, so from w_0 = 0 ::

    w_T - theta_i = -(I - g D)^T theta_0 + R sum_j p_j q(S_j) u_j - u_i
                    + R sum_j p_j (q / s)(S_j) X_j^T eps_j / n_j,

and with E[theta_0 theta_0^T] = signal^2 I / d, E[u_j u_j^T] = r_j^2 I / d, E[X_j^T eps_j
eps_j^T X_j] / n_j^2 = sigma_j^2 S_j / n_j (the sources independent; D symmetric) ::

    B_i = signal^2 tau(Sigma_i (I - g D)^(2T)) + sum_j p_j^2 r_j^2 tau(Sigma_i R q(S_j)^2 R)
          - 2 p_i r_i^2 tau(Sigma_i q(S_i) R) + r_i^2 tau(Sigma_i),
    V_i = sum_j p_j^2 sigma_j^2 gamma_j tau(Sigma_i R (q^2 / s)(S_j) R),

``sigma.fedavg.curves``' forms with Sigma -> Sigma_i (tau(Sigma_i R q_i) = tau(q_i R Sigma_i)
= tau(Sigma_i q_i R): transpose and cycle). Each trace is a contour integral on
``fedavg._contour``'s ellipse around D's spectrum [a, b] of a one-point function of the pencil
(``shift.pencil``, step 2): tau(Sigma_i (z - D)^-1) = E[v_i Ghat_00], tau(Sigma_i q(S_i) (z -
D)^-1) = E[v_i (Ghat_00 - Ghat_(i,K),0)], or a double integral of a two-point function (step
3): tau(Sigma_i G2 h G1) = E[v_i Ghat12_00] with h = sum_j c_j q(S_j)^2 (F = sum_j c_j v_j
v_j^T, v_j = e_0 - e_(j,K)) or sum_j c_j (q^2 / s)(S_j) (w_j = eta (e_0 + sum_(k<K)
e_(j,k))), one linear solve per pair of nodes for every metric. The signal term is written
tau(Sigma_i) + oint ((1 - g z)^(2T) - 1) tau(Sigma_i (z - D)^-1) dz; the distance ||w_T -
w_inf||^2 has the same forms with Sigma_i -> I and R -> (I - g D)^T D^-1. After the solve the
contour's mass (1 / 2 pi i) oint tau((z - D)^-1) dz must be 1 - mu_0 (a band the edges missed
raises, as ``shift.one_step``), mu_0 = (1 - sum_j 1 / gamma_j)_+ D's atom at 0 (pooled N < d:
the null spaces of the S_j meet there; ``pencil_edges.edges`` holds it apart, as under a
shared spectrum, and R, P - 1 and (1 - g z)^(2T) - 1 vanish or are constant there, so the
contour around the rest gives every trace). The reach check below needs A's edges
(``shift.one_step.ShiftLaws``, whose walk stops at the atom): with pooled N < d the mass check
stands in for it, and K = 1 takes this pencil (``rounds_limit``) instead of ``shift.one_step``.

The pencil is solved densely (``shift.pencil``) for M K^2 <= ``sigma.fedavg.curves.
DENSE_UNKNOWNS`` and through its chain structure beyond (``shift.chain``), under the shared
spectrum's time and memory estimates (``sigma.fedavg.curves``: the chain's double integrals on
their own degree-1 nodes of the same ellipse, its cost ``chain_cost.chain_seconds``).

Reach (``sigma.guards``): D's bottom edge is at most K eta a_A (q(s) <= K eta s for stable
local steps, A = sum_j p_j S_j, a_A its bottom edge by ``ShiftLaws.edges``); ``pencil_edges``
scans from ``guards.PENCIL_REACH`` of its top up, so a D reaching lower is refused before the
solve, and an edge found above that bound raises after it.

The clients' own models after the local steps of round T: ``shift.own`` (the extended pencil
with the same fixed point, on this contour's nodes), on the chain route with M K^2 beyond
``sigma_pencil.MAX_UNKNOWNS`` its chain structure ``shift.own_chain`` (on the double
contour's nodes); FTFA / RTFA from the round-T server model:
``shift.personalize`` (on the dense pencil's contour: the chain route's curve is solved again
densely for it, M (K + k)^2 <= 200), beyond on the chain route ``shift.personalize_chain``.
Checks (``tests/test_rounds_shift_k.py``): K = 1 against ``shift.one_step``, equal covariances
against ``sigma.fedavg.curves``, round 1 against the limits of the Wishart moments (non-crossing
partitions; also Sigma_j = c_j I), and the simulated algorithm (``montecarlo.linear.rounds``,
``spectra``) at d = 200 (at 400 measured).
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart

from riskcalc.errors import SolverError
from riskcalc.linear.dynamics.fedavg import (_contour, contraction, enclosed, round_horizon,
                                             far, moving, settle)
from riskcalc.linear.dynamics.shift.chain import ShiftChain
from riskcalc.linear.dynamics.shift.one_step import check_clients
from riskcalc.linear.dynamics.shift.pencil import ShiftPencil, client_ends
from riskcalc.linear.dynamics.sigma.budget import MORE_TIME, allowed, pairs_refused
from riskcalc.linear.dynamics.sigma.chain_cost import BISECT_SOLVES, EDGE_SOLVES
from riskcalc.linear.dynamics.sigma.fedavg.curves import (DENSE_UNKNOWNS, MAX_PAIRS,
                                                          _affordable, _memory)
from riskcalc.linear.dynamics.sigma.guards import (MAX_PENCIL_SECONDS, PENCIL_REACH,
                                                   dense_k_seconds)
from riskcalc.linear.dynamics.sigma.pencil_edges import edges
from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS

WHAT = "rounds limit under covariate shift with local steps"


def _work(M, K, atoms, ntype, rounds):
    """Refuse (ValueError) before solving when ``guards.dense_k_seconds`` with 2 max(T) + 16
    nodes (the fewest) and the pairs' outputs for ntype + 1 metrics exceeds
    ``guards.MAX_PENCIL_SECONDS`` (or rounds_limit's max_seconds)."""
    top = rounds[np.isfinite(rounds)].max(initial=0.0)
    nodes = int(min(2.0 * min(top, 1e6) + 16.0, np.sqrt(2.0 * MAX_PAIRS)))
    sec = dense_k_seconds(M, K, atoms, nodes) * (1.0 + 0.1 * ntype)
    limit = allowed(MAX_PENCIL_SECONDS)
    if sec > limit:
        raise ValueError(f"covariate shift with local_steps = {K}: {M} clients, {atoms} joint "
                         f"atoms and at least {nodes} contour nodes would take about {sec:.3g} s "
                         f"here (estimated; more than {limit:.3g} s); give fewer rounds, "
                         f"clients, local_steps or joint atoms, {MORE_TIME}")


def _reach(joint, gam, p, eta, K, top):
    """A's bottom edge a_A and the check of the module docstring (reach) before the solve."""
    from riskcalc.linear.dynamics.shift.one_step import ShiftLaws

    a_A = ShiftLaws(joint, gam, p).edges()[0]
    grid = np.linspace(0.0, 1.0, 2001)[None, :] * top[:, None]        # pencil_edges.edges's
    floor = PENCIL_REACH * 1.01 * float(np.sum(p * np.max(1.0 - (1.0 - eta * grid) ** K,
                                                          axis=1)))
    if K * eta * a_A < floor:
        raise ValueError(f"spectra: the round map's spectrum reaches down to at most "
                         f"{K * eta * a_A / floor * PENCIL_REACH:.2g} of its top, below the "
                         f"{PENCIL_REACH:g} this route resolves (its contour would leave that "
                         "part out); give covariances of a narrower range")
    return K * eta * a_A


def shift_k_curves(gam, r, sigma, p, signal, eta, K, g, rounds, joint, route="auto",
                   before_solve=None):
    """Bias, variance and distance to the fixed point of every client at every T of
    ``rounds`` (each client's risk in its own covariance), FedAvg with K local steps of size
    ``eta`` under covariate shift (module docstring); the dict of ``fedavg.round_map_curves``
    (``local``: the own models of ``shift.own``; ``personalize``: ``shift.personalize``, its
    ``tops`` the top of each client's sample spectrum under its covariance).

    Parameters
    ----------
    gam, r, sigma, p : ndarray (M,)
    signal, eta, g : float
    K : int
        Local steps >= 1.
    rounds : ndarray of float (integers or inf)
    joint : riskcalc.linear.engine.joint_spectrum.JointSpectrum
    route : {"auto", "dense", "chain"}
        The dense pencil (``shift.pencil``, M K^2 <= ``sigma_pencil.MAX_UNKNOWNS``) or its
        chain structure (``shift.chain``); "auto": dense for M K^2 <= ``sigma.fedavg.curves.
        DENSE_UNKNOWNS``, as a shared spectrum.
    before_solve : callable, optional
        ``before_solve(pen, nodes)`` with the pencil and the number of the contour's upper
        nodes, before any node is solved: a caller's own checks (it raises to refuse).
    """
    M = gam.size
    check_clients(gam, joint, atom_ok=True)
    pooled_low = not np.sum(1.0 / gam) > 1.0   # pooled N < d: D's atom at 0 held apart
    dense = route == "dense" or (route == "auto" and M * K * K <= DENSE_UNKNOWNS)
    if dense and M * K * K > MAX_UNKNOWNS:
        raise ValueError(f"covariate shift with local_steps = {K}: the dense route solves M K^2 "
                         f"= {M * K * K} unknowns per contour node (at most {MAX_UNKNOWNS})")
    types = np.asarray(joint.types)
    tlist = sorted(set(types.tolist()))
    t_top = int(np.max(np.where(np.isfinite(rounds), rounds, 0.0)))
    atoms = np.asarray(joint.weights).size
    if dense:
        _work(M, K, atoms, len(tlist), rounds)
    else:
        _affordable(M, K, atoms, t_top + 16, t_top)
    pen = (ShiftPencil if dense else ShiftChain)(joint, gam, p, eta, K)
    if not dense:
        _memory(pen, 2 * t_top + 16, t_top + 16)
    top = client_ends(pen.V, pen.h, pen.gam)[:, 1]
    if K >= 2 and np.any(eta * top > 2.0):
        raise ValueError("step_size: local gradient descent diverges on a client under its "
                         f"covariance (step_size times the top of its sample spectrum = "
                         f"{shown_apart(eta * top.max(), 2.0)} > 2)")
    # The reach check needs A's bottom edge (``shift.one_step``'s walk, which stops at D's atom
    # at 0 when pooled N < d); there the contour's mass (1 - the atom, below) is the check.
    bound = np.inf if pooled_low else _reach(joint, gam, p, eta, K, top)
    fallback = None if dense else (lambda k: _affordable(
        M, K, atoms, t_top + 16, t_top, EDGE_SOLVES + k * BISECT_SOLVES))
    a, b, mu0 = edges(pen, top, fold=True, fallback=fallback)
    if a > bound * (1.0 + 1e-6):
        raise SolverError(f"{WHAT}: the edge scan found the round map's spectrum from {a:.4g} "
                          f"up, but it must reach {bound:.4g} or lower (a band was missed)")
    if not a > 1e-9 * b:
        raise ValueError("the round map's spectrum reaches 0 (pooled N near d); move gamma off "
                         "the threshold")
    rho = contraction(a, b, g)
    _, over, finite, t_max = round_horizon(rho, rounds)
    c0, hh, t, n = _contour(a, b, g, rho, t_max)
    wu, wv = p ** 2 * r ** 2, p ** 2 * sigma ** 2 * gam
    # The chain's double integrals on their own nodes (degree 1: ``sigma.fedavg.curves``),
    # whose pairs are the ones the cap counts.
    n2 = n if dense else _contour(a, b, g, rho, t_max, degree=1)[3]
    if (n2 // 2) * n2 > MAX_PAIRS:
        raise pairs_refused("spectra", n2 // 2 * n2, MAX_PAIRS, a, b, mu0, t_max, gam)
    need = _memory(pen, n, n2, 2 if np.any(wv > 0) else 1)
    if not dense:
        _affordable(M, K, atoms, n2, t_max)
    if before_solve is not None:
        before_solve(pen, n // 2)

    def solved(k):       # nodes, (Chat, Ghat) and weights of the ellipse with k nodes
        theta = np.pi * (np.arange(k // 2) + 0.5) / (k // 2)
        z = c0 + hh * np.cosh(t) * np.cos(theta) + 1j * hh * np.sinh(t) * np.sin(theta)
        # Each node followed down from far above it (``sigma.fedavg.curves``).
        ys = list(4.0 * b * np.geomspace(1.0, 1e-3 * np.min(z.imag) / b, 24)) + [0.0]
        _, C, G = pen.solve(lambda y: z + 1j * y, ys) if dense else pen.solve_arc(z, ys)
        w = (-hh * np.cosh(t) * np.sin(theta) + 1j * hh * np.sinh(t) * np.cos(theta)) * (2 / k)
        return z, (C, G), w

    z, one, w = solved(n)
    nodes = one                   # (Chat, Ghat) at the upper nodes (``one`` is redefined below)
    z2, one2, w2 = (z, one, w) if n2 == n else solved(n2)
    h, V = pen.h, pen.V
    Vt = np.asarray(joint.values, float)[tlist]                           # (types, atoms)
    lams = np.vstack([h * Vt, h])                 # client metrics by type, then tau itself
    col = pen.column0(one[1])                                             # Ghat[:, 0]
    m = col[:, :, 0] @ lams.T                                             # (N, types + 1)
    last = pen.rows[:, -1]
    own = np.einsum("ja,naj->nj", h * V, col[:, :, :1] - col[:, :, last])  # (N, M)
    # Block coefficients (sigma_pencil, step 3), as ``sigma.fedavg.curves``.
    v = np.zeros((M, pen.n))
    v[:, 0], v[np.arange(M), last] = 1.0, -1.0
    wn = np.zeros((M, pen.n))
    wn[:, 0] = eta
    for j in range(M):
        wn[j, pen.rows[j, :-1]] = eta
    couplings = [(wu, v, v)] + ([(wv, wn, v)] if np.any(wv > 0) else [])
    H = pen.two_point(one2, pen.conj_join(one2), couplings, lams,
                      **({} if dense else {"symmetric": True}))
    Wf = np.concatenate([w2 / 2j, (w2 / 2j).conj()])
    zf = np.concatenate([z2, z2.conj()])
    Tcol = np.where(finite, rounds, 0.0)[:, None]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        def filters(x):          # (1 - g x)^(2T), R_T(x), (1 - g x)^T / x per row T
            power = (1.0 - g * x) ** Tcol
            return (np.where(finite[:, None], power ** 2, 0.0),
                    np.where(finite[:, None], (1.0 - power) / x, 1.0 / x),
                    np.where(finite[:, None], power / x, 0.0))

        A1, R1, _ = filters(z)
        _, R1d, P1 = filters(z2)
        _, R2, P2 = filters(zf)

        def one(F, X):           # (1 / 2 pi i) oint F X dz over the full contour
            return ((F * w) @ X).imag

        def double(F1, F2, f):   # (f over (N2/2, N2) pairs) -> one value per row T
            return 2.0 * np.sum(((F1 * (w2 / 2j)) @ f) * (F2 * Wf), axis=1).real

        enclosed(one(np.ones((1, z.size)), m[:, -1])[0], mu0, (a, b), WHAT)
        ti = np.searchsorted(tlist, types)                        # each client's metric row
        Es = Vt @ h
        sig = Es + one(A1 - 1.0, m[:, :-1])                       # (T, types)
        du = np.stack([double(R1d, R2, H[0, k]) for k in range(len(tlist))], axis=1)
        bias = (signal ** 2 * sig + du)[:, ti].T - 2.0 * (p * r ** 2)[:, None] * one(R1, own).T \
            + (r ** 2 * Es[ti])[:, None]
        var = np.zeros_like(bias)
        dist = signal ** 2 * one(A1, m[:, -1]) + double(P1, P2, H[0, -1])
        if len(couplings) > 1:
            var = np.stack([double(R1d, R2, H[1, k]) for k in range(len(tlist))], axis=1)[:, ti].T
            dist = dist + double(P1, P2, H[1, -1])
    big = np.isfinite(rounds) & (rounds > over)
    moves, server_noise = moving(signal, r), bool(np.any((p > 0) & (sigma > 0)))
    dist = far(dist, big, moves or server_noise)
    scale = (signal ** 2 + np.max(r ** 2) + np.max(sigma ** 2 * gam)) * float(V.max()) + 1e-300
    bias, var = settle(bias, var, big, server_noise, scale, WHAT, moves=moves)

    Wn = np.concatenate([w / 2j, (w / 2j).conj()])
    contour = {"one": nodes, "z": z, "b": b, "finite": finite, "g": g, "z2": z2, "w2": w2,
               "Wf2": Wf, "one2": one2,
               "one_q": lambda F, X: ((F * w) @ X.T).imag,
               "double_q": lambda F1, F2, f, w=w, Wf=Wn: 2.0 * np.sum(
                   ((F1 * (w / 2j)) @ f) * (F2 * Wf), axis=1).real}
    noisy = np.any((p > 0) & (sigma > 0)) | (sigma > 0)

    def local(terms=None):
        if terms is not None:       # the Sigma = I route's personalization (``personalize``)
            raise ValueError("covariate shift: personalization reads the curves' "
                             "``personalize``, not ``local``")
        from riskcalc.linear.dynamics.shift.own import own_models_shift
        from riskcalc.linear.dynamics.shift.own_chain import own_models_shift_chain

        # Beyond the dense extended pencil: its chain structure (on the chain route only).
        own = own_models_shift_chain if not dense and M * K * K > MAX_UNKNOWNS else \
            own_models_shift
        ob, ov = own(pen, contour, gam, r, sigma, p, signal, rounds)
        return settle(ob, ov, big, noisy, scale, f"{WHAT}, the clients' own models",
                      moves=moves)

    def personalize(**kw):
        kn = kw.get("k") if kw["kind"] == "ftfa" else 1
        if M * (K + kn) ** 2 > MAX_UNKNOWNS:     # beyond the dense extension (either route)
            from riskcalc.linear.dynamics.shift.personalize_chain import personalized_shift_chain

            ob, ov = personalized_shift_chain(ShiftChain(joint, gam, p, eta, K) if dense else pen,
                                              contour, top, gam, r, sigma, p, signal, rounds,
                                              **kw)
            return settle(ob, ov, big, noisy, scale, f"{WHAT}, the personalized models",
                          moves=moves)
        if not dense:               # the dense pencil's contour (M K^2 <= 200: its unknowns)
            return shift_k_curves(gam, r, sigma, p, signal, eta, K, g, rounds, joint,
                                  route="dense")["personalize"](**kw)
        from riskcalc.linear.dynamics.shift.personalize import personalized_shift

        ob, ov = personalized_shift(pen, contour, top, gam, r, sigma, p, signal, rounds, **kw)
        return settle(ob, ov, big, noisy, scale, f"{WHAT}, the personalized models",
                      moves=moves)
    personalize.tops = top          # FTFA's convergence and overflow (``RoundsLimit``)

    return {"bias": bias, "variance": var,
            "distance": np.maximum(dist, 0.0), "contraction": rho, "edges": (a, b),
            "atom": mu0, "nodes": n, "local": local, "personalize": personalize,
            "memory": need}


def one_step_extras(gam, r, sigma, p, signal, eta, g, rounds, joint):
    """``local`` and ``personalize`` for ``shift.one_step.shift_curves``' result (K = 1): the
    own models (``shift.own``) and personalizations (``shift.personalize``) on this module's
    pencil with one local step (``shift.pencil``'s smallest case), solved on first use."""
    curves = {}

    def solved(before=None):
        if not curves:
            curves.update(shift_k_curves(gam, r, sigma, p, signal, eta, 1, g, rounds, joint,
                                         before_solve=before))
        return curves

    def personalize(**kw):
        # Asked before the own models, the curves are solved for it: the personalization's
        # checks come first (measured: 400 atoms, M = 3, refused after 21 s of that solve).
        return solved(lambda pen, nodes: _personal_check(pen, nodes, **kw))["personalize"](**kw)
    personalize.tops = client_ends(np.asarray(joint.values, float)[np.asarray(joint.types)],
                                   np.asarray(joint.weights, float), gam)[:, 1]
    return {"local": lambda terms=None: solved()["local"](terms), "personalize": personalize}


def _personal_check(pen, nodes, *, kind, k=None, eta2=None, lam2=None):
    """``personalize_sigma.personal_guard`` of ``shift.personalize``'s extended pencil on the
    dense pencil ``pen`` at ``nodes`` upper contour nodes (the checks it makes once the curves
    are solved, made before); the chain route (M (K + k_b)^2 beyond ``MAX_UNKNOWNS``) checks its
    own."""
    from riskcalc.linear.dynamics.shift.own import OwnShiftPencil
    from riskcalc.linear.dynamics.shift.personalize import ShiftPersonalPencil
    from riskcalc.linear.dynamics.sigma.personalize_sigma import personal_guard

    if not isinstance(pen, ShiftPencil) or \
            pen.M * (pen.K + (k if kind == "ftfa" else 1)) ** 2 > MAX_UNKNOWNS:
        return
    ext = ShiftPersonalPencil(OwnShiftPencil(pen), -pen.eta, kind, k, eta2, lam2)
    personal_guard(ext, k, kind, nodes)
