"""Finite-M limit of pFedMe (its own global objective) for a GENERAL covariance spectrum.

Paper 003 (``003_4b976ddf5225c17e.txt``), eq. 14: the global model minimizes the Moreau
envelopes, A = sum_j b_j with b_j = p_j phi(S_j), phi(s) = lam s / (s + lam), noise source
psi(s) = lam^2 s / (s + lam)^2 (``finite_clients.own``, which treats Sigma = I), and the
client personalizes with R = lam (S_i + lam)^-1. M clients sharing the spectrum H, in groups
of identical clients (gamma, r, sigma and the weight p per group). Derived here; written
below for M identical clients, with one shift t_g per group in general
(``pfedme_sigma_group_limits``).

1. Operator-valued subordination over D = alg(Sigma) (functions of Sigma's eigenvalue s):
   the alg(S_j, D) are free with amalgamation over D, so E_D[A^-1] = E_D[(b_l + t)^-1] =: G
   with t in D and M t = (M - 1) G^-1 pointwise. With c = t + p lam, u = p lam^2 and
   Lam = lam - u / c (> 0), Woodbury gives K := (b + t)^-1 = [I + (u/c) Q] c^-1,
   Q = (S + Lam)^-1 a generalized resolvent with a Sigma-dependent shift, whose D-valued
   equivalent is 1 / (C s + Lam(s)) (C from ``resolvent_chain.diagonal_roots``); so
   G = 1/c + u Qhat / c^2 and t solves a fixed point over the atoms.
2. Two-resolvent terms are derivatives of that system when one summand moves inside its own
   algebra, b_m -> b_m + eps X: with L[h] = E_D[K h K] (an atoms x atoms matrix, from
   E_D[Q m Q] = (C'[m] s + m) / (C s + Lam)^2, C' by implicit differentiation) and
   e = E_D[K X K], G' = -(M I - (M - 1) L diag(G^-2))^-1 e, and the conditional expectation onto
   C_i = alg(S_i, D) is E_(C_i)[A^-1 X A^-1] = K (X + t_m') K for the target's own summand
   (t_m' = -L^-1 (G' + e)) and K t_o' K for another client's (t_o' = -L^-1 G').
3. With K a = I - K t (a = b_i) the signal terms collapse: the target's own
   E_(C_i)[A^-1 B Phi B A^-1] (B = A - a) is K (t Phi t + t_m'[a Phi a]) K, and
   e = E_D[K a Phi a K] = Phi - 2 G t Phi + L[t Phi t] for every client; the noise
   K psi K = (K R - K R t K) / p since psi = R phi and phi K = (I - t K) / p. Hence::

       B_i = r^2 [tau(F K (t Phi t + t_m'[e_b]) K) + (M - 1) tau(F K t_o'[e_b] K)],
       V_i = sigma^2 [own + 2 p gamma tau((R - R^2) Sigma R K)
                      + p^2 gamma (tau(F K R) - tau(F K R t K)) / p
                      + p^2 gamma (tau(F K t_m'[e_v] K) + (M - 1) tau(F K t_o'[e_v] K))],

   F = R Sigma R. Written so, the noise, the cross term and e_v are each a difference of two
   O(1 / lam) terms, O(1) itself: at lam = 1e-20 rounding left a variance 5e4 for 1.53.
   Every trace is instead one chain of resolvents of S_i (``resolvent_chain``) with no
   difference: b = p S R and c = t + p lam give b + t = c (S + Lam) (S + lam)^-1, so
   K = (S + lam) Q w (w = c^-1), R K = lam Q w and K R = lam w Q (K is symmetric); with
   I - t K = b K and N = R S R / lam = R - R^2 (S between two blocks, ``chain_traces``'
   links) ::

       tau(F K Z K) = lam^2 tau(Q Sigma Q w Z w),     E_D[K psi K] = lam^2 w E_D[Q S Q] w,
       tau(F K R (I - t K)) = p lam^3 tau(Q Sigma Q w N w),
       tau((R - R^2) Sigma R K) = lam tau(N Sigma Q w).

Checks (tests): Sigma = I gives ``finite_clients.own`` (scalar subordination; homogeneous and
heterogeneous federations, both weightings), M -> infinity the oracle pFedMe limit, M = 1
least squares, and simulation of the federated pipeline.
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import IllConditioned, SolverError
from riskcalc.linear.finite_clients.identity import client_weights, rounded_nonnegative
from riskcalc.linear.finite_clients.own import own_group_limits
from riskcalc.linear.finite_clients.own_objective import check_near_pooled
from riskcalc.linear.finite_clients.shift.chains import own_variance, remember, warm_roots
from riskcalc.linear.finite_clients.shift.conditioning import MIN_SPAN, eigenvalue_span
from riskcalc.linear.engine.operator_subordination import (check_size, joint_layout, middles,
                                                           shared_layout, solve_shifts)
from riskcalc.linear.engine.kappa import ridge_variance_lam_derivative
from riskcalc.linear.engine.resolvent_chain import chain_traces, diagonal_roots, root_step
from riskcalc.spectrum import Spectrum


#: Sigma = I, for ``own_limits``.
IDENTITY = Spectrum([1.0])
#: A middle of ``_traces``' chains that stands for S / eta of the block before it, S / lam
#: after an "R" (N = R S R / lam = R - R^2), S after a "Q" (``chain_traces``' links).
LINK = object()


def pfedme_sigma_limit(gamma: float, r: float, sigma: float, clients: int, lam: float,
                       spectrum):
    """Bias and variance of one of ``clients`` identical pFedMe clients (module docstring)
    with covariance spectrum ``spectrum`` (uniform signal direction or not: Phi = dG/dH).

    Raises
    ------
    ValueError
        If lam <= 0.
    SolverError
        If the subordination fixed point does not converge.
    """
    bias, var = pfedme_sigma_group_limits([gamma], [r], [sigma], [clients], lam, "uniform",
                                          spectrum)
    return float(bias[0]), float(var[0])


def pfedme_sigma_group_limits(gam, r, sigma, count, lam: float, weights: str, spectrum):
    """Bias and variance of a client of each group (``count`` identical clients per group,
    per-group gamma, r, sigma, one lam and spectrum) under pFedMe with its own global model
    over all the clients (module docstring, with one shift t_g per group: E_D[(b_g + t_g)^-1]
    = G for every g, sum_g n_g t_g = (M - 1) G^-1, and a source e in group g0 moving G by
    G' = -Z^-1 L_(g0)^-1 e, Z = sum_g n_g L_g^-1 - (M - 1) diag(G^-2)).

    Raises
    ------
    ValueError
        If lam <= 0.
    SolverError
        If the subordination fixed point does not converge.
    """
    return _group_limits(gam, r, sigma, count, lam, weights,
                         *shared_layout(spectrum, np.size(gam)))


def own_limits(method, gam, r, sigma, count, tuning, weights):
    """MAML-FL's or pFedMe's bias, variance and notes at Sigma = I: ``own_group_limits``
    (``finite_clients.own``); where it refuses pFedMe (SolverError: small lam beside a client
    at gamma near 1, or one client's weight dwarfing the others'), this module's route on the
    identity spectrum, which answers there (gamma [1, 1.5] at lam 1e-5 to 1e-14; weights
    [1e-9, 1, 1] at gamma 2; fuzz39 fall F1) and agrees with it where both answer (38 random
    federations: within 1.7e-14 of the risk); ``check_own_variance`` bounds what it answers,
    and its refusal keeps the first route's message."""
    try:
        return (*own_group_limits(method, gam, r, sigma, count, tuning, weights), ())
    except SolverError as exc:
        if method != "pfedme":
            raise
        try:
            out = pfedme_sigma_group_limits(gam, r, sigma, count, float(tuning), weights,
                                            IDENTITY)
        except SolverError:
            raise exc from None
    return (*out, ("pfedme at Sigma = I: answered by the spectrum route on the identity "
                   "spectrum (finite_clients.pfedme_sigma), the scalar route having refused "
                   "(small lam beside a client at gamma near 1, or a dwarfing weight)",))


def pfedme_shift_group_limits(gam, r, sigma, count, lam: float, weights, joint, typ):
    """``pfedme_sigma_group_limits`` under covariate shift: client covariances diagonal in one
    shared basis (``riskcalc.linear.engine.joint_spectrum``; group g of type ``typ[g]``), a uniform
    signal direction, each target's risk in its own covariance. The derivation holds with D
    the diagonal matrices of the shared basis (the W_j are free with amalgamation over it,
    ``finite_clients.shift``): every function of Sigma becomes a function on the joint atoms,
    and client g's resolvents use its own eigenvalues there.

    Raises
    ------
    ValueError
        If lam <= 0.
    SolverError
        If the subordination fixed point does not converge.
    """
    return _group_limits(gam, r, sigma, count, lam, weights, *joint_layout(joint, typ))


#: Most clients answered: the bias's error grows as about 0.4 M eps (measured, two-point
#: spectrum, gamma 2: 1.3e-8 at M = 1e8, 5e-7 at 1e10, 8e-3 at 1e14); MAML-FL's route alike.
MAX_CLIENTS = 1e8


def check_clients(name: str, count) -> None:
    """Refuse more than ``MAX_CLIENTS`` clients under a spectrum: pFedMe's and MAML-FL's routes
    lose digits as about M eps (two-point:1,4,0.5, gamma 2: pFedMe's bias 8e-3 off at M = 1e14
    and a negative risk at 2^53; MAML-FL's bias 1.7e-8 off at 1e8, 5.6e-3 below its M -> inf
    limit at 1e14, 1.74 for 1.0 at 2^53, fuzz38 docs F1), while the limit is within about
    1/M of the M -> infinity one there.

    Raises
    ------
    IllConditioned
        Beyond ``MAX_CLIENTS`` clients in all (``count`` per group).
    """
    if np.sum(count) > MAX_CLIENTS:
        raise IllConditioned(
            f"{name}'s finite-M limit under a spectrum loses digits beyond {MAX_CLIENTS:g} "
            f"clients (relative errors about M eps: 1e-2 at M = 1e14, of order 1 at 2^53; "
            f"here M = {int(np.sum(count))}); with gamma_j of order 1 it is then within about "
            "1/M of the M -> infinity limit (riskcalc.limit without clients)")


#: The largest eps times a client's own ridge variance per unit sigma^2 answered
#: (``check_own_variance``).
MAX_LOST = 1e-8


def check_own_variance(gam, lam, own, sv) -> None:
    """IllConditioned where a client's own ridge variance per unit sigma^2 ``own`` (the
    conditioning of its resolvents: it grows like lam^-1/2 at gamma = 1 and like
    1 / abs(gamma - 1) near it as lam -> 0) times eps exceeds ``MAX_LOST``: the chains' bias and
    variance then carry relative errors of about eps times it (measured 0.2 to 10 times it on
    two-point:1,4,0.3 at gamma 1, 1 +- 1e-7, 1 +- 1e-10 beside 1.5; the variance's lam^-1/2
    coefficient at gamma 1 drifted from 1.5309 to 1.5540 at lam = 1e-28, 0.86 at 1e-30 and
    0.73 at 1e-38, silently; fuzz39 maml F3), every client's risk alike (the others' through
    the global model). Across a wide eigenvalue span ``sv`` (from ``MIN_SPAN``) the same
    happens where a block of a client's spectrum holds about as many directions as its samples
    and lam is small against that block's eigenvalues (gamma 2 with half its spectrum at 1e18
    beside the identity, lam 0.1): the message then names the span, not gamma = 1."""
    lost = np.finfo(float).eps * np.real(own)
    if np.max(lost) > MAX_LOST:
        k = int(np.argmax(lost))
        span = eigenvalue_span(sv)
        where = (f"the spectra's eigenvalue span of {span:.3g}: a block of its spectrum holds "
                 "about as many directions as its samples, and lam is small against that "
                 "block's eigenvalues" if span >= MIN_SPAN else
                 "near gamma = 1 it grows like lam^-1/2, or like 1 / abs(gamma - 1)")
        ways = "narrow the span" if span >= MIN_SPAN else "a gamma further from 1"
        raise IllConditioned(
            f"pfedme's finite-M limit under a spectrum: the client at gamma = {gam[k]:.10g} has "
            f"an own ridge variance of {np.real(own[k]):.3g} sigma^2 at lam = "
            f"{np.real(lam):.3g} ({where}), and the route's relative errors are about eps "
            f"times it ({lost[k]:.2g}; it answers up to {MAX_LOST:g}): give a larger lam or "
            f"{ways} (the M -> infinity limit, riskcalc.limit without clients, answers)")


def _group_limits(gam, r, sigma, count, lam, weights, sv, typ, h, Phi, marginals):
    """The limits per group: group g's client covariance has eigenvalues sv[typ[g]] on the
    atoms of D (masses h), Phi the signal density there, ``marginals`` each group's spectrum
    (for its own ridge variance). Every group's scalar roots and chains are solved as one
    batch (``resolvent_chain``'s points, each with its own eigenvalues sv[typ] on the shared
    atoms); only the own ridge variance is solved per covariance type."""
    if not lam > 0:
        raise ValueError("pfedme's federated global model needs lam > 0")
    gam, r, sigma, count = (np.asarray(x, dtype=float).ravel() for x in (gam, r, sigma, count))
    # Under shift pooled N <= d reached the solver: 1.6e13 at N = d, "did not converge" below.
    check_near_pooled("pfedme", gam, count)
    check_clients("pfedme", count)
    check_size("pfedme", gam.size, h.size)
    typ = np.asarray(typ, dtype=int)
    own = own_variances(gam, lam, typ, marginals)
    check_own_variance(gam, lam, own, sv)
    sg = sv[typ]
    p = client_weights(gam, count, weights)
    t = solve_point(gam, sg, h, p, lam, count)
    pc = group_pieces(t, gam, sg, h, p, lam)
    Zs = middles(pc["G"][0], pc["L"], t, count, r, sigma, p, gam, Phi, pc["e_v"])
    fkzk = pc["fkzk"]
    # A client whose own data dwarfs the others' (gamma 1e-100 beside 2) has a vanishing bias,
    # computed as a rounding residue (-7e-18 r^2): 0 within rounding (fuzz38 maml F3).
    tb = np.stack([r ** 2 * fkzk(Zs[:, 0]), fkzk(Zs[:, 1])])
    bias = rounded_nonnegative("bias", tb.sum(axis=0), np.abs(tb).sum(axis=0),
                               r ** 2 + count @ r ** 2)
    tv = np.stack([sigma ** 2 * own, sigma ** 2 * 2 * p * gam * pc["cross"],
                   sigma ** 2 * p * gam * pc["noise"], sigma ** 2 * p ** 2 * gam * fkzk(Zs[:, 2]),
                   fkzk(Zs[:, 3])])
    var = rounded_nonnegative("variance", tv.sum(axis=0), np.abs(tv).sum(axis=0),
                              sigma ** 2 + count @ sigma ** 2)
    return bias, var


def group_pieces(t, gam, sg, h, p, lam, roots=None):
    """What every group's risk needs at its shift t (module docstring): G_g and L_g (rows
    of ``_states``), the noise source e_v = E_D[K psi K], the functional fkzk(Z) = tau(F K Z
    K) (F = R Sigma R, Z diagonal (groups, atoms), or a stack of them (..., groups, atoms)),
    and the variance's cross and noise terms tau((R - R^2) Sigma R K) and tau(F K R (I - t
    K)). ``roots``: ``_states``' (complex t or p, a complex step of
    ``subordination_gradient``: complex results).

    With R K = lam Q w (step 3) every one is a chain of at most five blocks with S itself
    between two of them (``resolvent_chain``'s links), none a difference. A chain's
    functional of its closing middle (``resolvent_chain.chain_vectors``) does not involve that
    middle, and by the trace's cyclicity a middle anywhere is closing in a rotated chain: fkzk
    is one vector per group, fkzk(Z) = sum_atoms F Z, and all but E_D[Q S Q] are sub-chains
    of one chain, whose solve gives them all (``chain_traces(table=True)``): two solves."""
    c, Lam, C, _, Gs, Ls = _states(t, gam, sg, h, p, lam, roots)
    # lam w = lam / c is O(1) as lam -> 0 and as lam -> infinity: the scale of every factor.
    lw = lam / c
    tr = _traces(gam, sg, h, lam, Lam, C)
    one = np.ones_like(sg)
    # Q Sigma Q, its continuation by (lam w) N to close on lam w, and N Sigma Q (N = R S R /
    # lam), the w's of step 3 times lam.
    A = tr("QQRRQ", [sg, lw, LINK, sg, one], table=True)
    qsq, qsqwn, nsq = A[:, 0, 1], A[:, 0, 3], A[:, 2, 4]
    # tau(F K Z K) = tau(K R Sigma R K Z) = tau(Q Sigma Q (lam w) Z (lam w)).
    F = qsq * lw * lw

    def fkzk(Zd):
        """tau(F K Z K), F = R Sigma R, Z diagonal (stacks allowed)."""
        return np.sum(F * Zd, axis=-1)

    # E_D[K psi K] = (lam w)^2 E_D[Q S Q]: E_D of a chain per atom is its functional over h.
    e_v = tr("QQ", [LINK, one], vector=True) * lw * lw / h
    # tau(F K R (I - t K)) = p lam tau(Q Sigma Q (lam w) N (lam w)), and the cross term
    # tau(N Sigma R K) = tau(N Sigma Q (lam w)).
    return {"G": Gs, "L": Ls, "C": C, "e_v": e_v, "fkzk": fkzk,
            "cross": np.sum(nsq * lw, axis=-1), "noise": p * lam * np.sum(qsqwn * lw, axis=-1)}


def own_variances(gam, lam, typ, marginals):
    """Every group's own ridge variance in its type's marginal spectrum (``own_variance``);
    at a complex lam (a complex step of ``subordination_gradient``) the real variance plus
    Im(lam) i times its exact lam-derivative (``kappa.ridge_variance_lam_derivative``)."""
    own = np.empty(gam.size, complex if np.iscomplexobj(lam) else float)
    for k in np.unique(typ):
        sel = np.flatnonzero(typ == k)
        own[sel] = own_variance(gam[sel], np.real(lam), marginals[sel[0]])
        if np.iscomplexobj(lam):
            own[sel] += 1j * np.imag(lam) * ridge_variance_lam_derivative(
                gam[sel], np.real(lam), marginals[sel[0]])
    return own


#: The span from which ``solve_point`` continues a failed solve in the span, by factors of 10.
_SPAN_STEP = 1e4


def solve_point(gam, sg, h, p, lam, count):
    """The shifts t (groups, atoms) of step 1 (module docstring): E_D[(b_g + t_g)^-1] = G for
    every group g (eigenvalues sg[g] on the atoms of masses h, weight p[g], ``count[g]``
    clients) and sum_g n_g t_g = (M - 1) G^-1 (``operator_subordination.solve_shifts``)."""
    M = float(count.sum())
    if M == 1:
        return np.zeros((1, h.size))

    def states(s):
        return lambda t: _states(t, gam, s, h, p, lam)[4:6]

    def start(s):
        # (M - 1) / M times the population filter sum_l n_l p_l phi(Sigma_l), which is about
        # (M - 1) / (M G) (lam (M - 1) / M for small lam, FedAvg's for large lam).
        return np.tile((M - 1) / M * ((count * p) @ (lam * s / (s + lam))), (gam.size, 1))

    what = "pFedMe finite-clients limit"
    try:
        return solve_shifts(states(sg), count, start(sg), what)[0]
    except SolverError:
        lo = float(sg[sg > 0].min())
        if not sg.max() / lo > _SPAN_STEP:
            raise
    # Across a wide span t on the small eigenvalues lies decades below the start, which
    # Newton's halved steps (t > 0) approach by ~10% a step: gamma 1.5-2 (3 clients) on
    # two-point:1,S,0.5 for S from 3e5 to 1e6 at lam 1e-80 to 10 did not converge, while
    # S = 1e5 and 3e6 answered (fuzz41 maml F3). Continued instead through the spectra
    # lo (s / lo)^theta, their span growing by 10 from _SPAN_STEP, each from the last root.
    t, top = None, float(np.log(sg.max() / lo))
    for span in np.append(_SPAN_STEP * 10.0 ** np.arange(np.log10(sg.max() / lo / _SPAN_STEP)),
                          sg.max() / lo):
        s = lo * (sg / lo) ** (np.log(span) / top)
        try:
            t = solve_shifts(states(s), count, start(s) if t is None else t, what)[0]
        except SolverError as exc:
            raise SolverError(f"{exc} across the spectra's eigenvalue span of {sg.max() / lo:.3g} "
                              f"(continued in the span from {_SPAN_STEP:g}, it failed at "
                              f"{span:.3g}): narrow the span") from None
    return t


def _traces(g, s, h, lam, Lam, C):
    """tau(Q_1 M_1 ...) for a batch of groups of ratios g (points of ``chain_traces``) with
    eigenvalues s (groups, atoms) on the atoms of masses h, blocks "R" = lam (S + lam)^-1,
    "Q" = (S + Lam)^-1 (Lam per group, diagonal root C); with ``vector=True`` the functional
    phi of the closing middle (``chain_vectors``), with ``table=True`` those of every
    sub-chain (``chain_traces``). Middles broadcast to (groups, atoms), or ``LINK``."""
    B, n = g.size, h.size
    spec = {"R": (lam, np.ones((B, n))), "Q": (1.0, Lam)}
    # Every chain is built from these two blocks: their diagonal roots once.
    # R's depend on lam and the groups, not on the weights: remembered
    # (``shift.chains.remember``).
    key = (np.asarray(g, dtype=float).tobytes(), s.tobytes(), h.tobytes())
    real = np.real(lam)
    root = {"R": remember(("pFedMe R",) + key + (np.asarray(real, dtype=float).tobytes(),),
                          lambda: diagonal_roots(g, s, h, real, np.ones(n))), "Q": C}
    if np.iscomplexobj(lam):            # a complex step in lam: R's roots by their tangent
        root["R"] = root_step(g, s, h, lam, np.ones(n), root["R"])

    def tr(blocks, mids, vector=False, table=False):
        # A middle ``LINK``: no middle there, S / eta of the block before it (a link).
        eta = np.array([spec[b][0] for b in blocks])
        shifts = np.stack([spec[b][1] for b in blocks], axis=1)
        roots = np.stack([root[b] for b in blocks], axis=1)
        mid = np.stack([np.broadcast_to(0.0 if m is LINK else m, (B, n)) for m in mids], axis=1)
        links = None
        if any(m is LINK for m in mids):
            links = np.array([1.0 / e if m is LINK else 0.0 for e, m in zip(eta, mids[:-1])])
        return chain_traces(g, s, h, eta, shifts, mid, roots, vector=vector, table=table,
                            links=links)

    return tr


def _states(t, gam, s, h, p, lam, roots=None):
    """c, Lam, C, C s + Lam, G = E_D[K] and the matrix of L[h] = E_D[K h K] of every group at
    its shift t (rows; module docstring, steps 1-2), s (groups, atoms) each group's
    eigenvalues; the diagonal roots C in one batch (per-point atoms of ``resolvent_chain``),
    or ``roots`` (those at the real parts). Complex t or p (a complex step,
    ``subordination_gradient``): C by ``resolvent_chain.root_step``, the rest arithmetic."""
    u = p * lam ** 2
    c = t + (p * lam)[:, None]
    # lam - u / c written without its cancellation of two O(lam) terms (Newton's iteration
    # stalled above its tolerance from lam ~ 1e5).
    Lam = lam * t / c
    # From the last roots for these groups (the shifts move little between calls).
    C = roots if roots is not None else warm_roots(
        ("pFedMe C", np.asarray(gam, dtype=float).tobytes(), s.tobytes(), h.tobytes()), gam,
        s, h, 1.0, np.real(Lam))
    if np.iscomplexobj(Lam):
        C = root_step(gam, s, h, 1.0, Lam, C)
    den = C[:, None] * s + Lam
    G = 1.0 / c + u[:, None] / (c ** 2 * den)
    # E_D[Q m Q] = Dm @ m: (C'[m] s + m) / den^2 with C' from the diagonal equation.
    kap = gam * C / (1.0 + gam * ((s * Lam / den ** 2) @ h))
    diag = np.arange(h.size)
    # In place: (groups, atoms, atoms) arrays are the memory of many-atom spectra.
    Lm = (s / den ** 2)[:, :, None] * (kap[:, None] * h * s / den ** 2)[:, None, :]
    Lm[:, diag, diag] += 1.0 / den ** 2                        # Dm
    v, w = u[:, None] / c, 1.0 / c
    Lm *= (v * w)[:, :, None]
    Lm *= (w * v)[:, None, :]
    Lm[:, diag, diag] += 1.0 / c ** 2 + 2 * v * w / (c * den)
    return c, Lam, C, den, G, Lm
