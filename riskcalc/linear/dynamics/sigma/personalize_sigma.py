"""Personalization after round T under a shared covariance spectrum: FTFA (k gradient steps of
size eta') and RTFA (the ridge lam' toward the server model) started from the round-T server
model w_T, for FedAvg (K >= 1 local steps) and paper 004's Algorithm 1 with exact prox (derived
here).

Model and notation as ``sigma.fedavg.own`` and ``prox_sigma`` (S_j = Sigma^(1/2) W_j Sigma^(1/2),
b_j = S_j theta_j + n_j, n_j of covariance sigma_j^2 gamma_j S_j / d, theta_j = theta_0 + u_j,
D = sum_j p_j q_j, round map w <- (I - g D) w + g c, c = sum_j p_j (q_j u_j + (q / s)_j n_j);
Algorithm 1: q = S / (S + lam), (q / s) = (S + lam)^-1, global step g lam). Client i
personalizes w_T with a filter of its own S_i (``personalize``, Sigma = I):

* FTFA (paper 003, ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5, from w_T): v_i = F_i w_T +
  (pi / s)_i b_i with F_i = (I - eta' S_i)^k and (pi / s)_i = eta' sum_(m<k) (I - eta' S_i)^m;
* RTFA (paper 003, Sec. 3.2, from w_T): v_i = (S_i + lam')^-1 (b_i + lam' w_T), F_i =
  lam' (S_i + lam')^-1, (pi / s)_i = (S_i + lam')^-1.

In both, (pi / s)_i S_i = I - F_i, so v_i - theta_i = F_i (w_T - theta_i) + (pi / s)_i n_i with
w_T - theta_i = -(P - 1) theta_0 - theta_0 + R c - u_i, P = (I - g D)^T, R = R_T(D).

1. Pencil. The base pencil's inverse (``sigma.fedavg.own`` step 2 for FedAvg, rows 0 and (j, 0..K);
   ``prox_sigma`` step 1 for Algorithm 1, rows 0 and j) has G_00 = Gz = (z - D)^-1 and, with
   au_j and wn_j the row combinations of those modules (FedAvg: au_j = p_j e_0 - e_(j,0),
   wn_j = eta sum_(m=1..K) e_(j,m); Algorithm 1: au_j = p_j e_0 - e_j, wn_j = e_j / lam),
   sum_b au_j[b] G_0b = p_j Gz q_j and sum_b wn_j[b] G_0b = p_j Gz (q / s)_j. Per client i one
   new chain, downstream of block 0 (nothing feeds back into it) ::

       FTFA:  x_0 - x_(i,0') = y_(i,0'),   (I - eta' S_i) x_(i,m-1)' - x_(i,m)' = y_(i,m)'
              (m = 1..k),
       RTFA:  x_0 - x_(i,0') = y_(i,0'),   lam' x_(i,0') - (S_i + lam') x_(i,1') = y_(i,1'),

   so the last block f_i = (i,k') (FTFA) or (i,1') (RTFA) has G_(f_i),0 = F_i Gz, G_(f_i),b =
   F_i G_0b on the base blocks, G_(f_i),(i,0') = -F_i and, with wn'_i = eta' sum_(m=1..k)
   e_(i,m)' (FTFA) or e_(i,1') (RTFA), sum_b wn'_i[b] G_(f_i),b = -(pi / s)_i. With Y(a) =
   sum_b a_b G_(f_i),b and Y_inf its value at z = inf (Gz = 0) ::

       v_i - theta_i = oint R Y(au_j) u_j + oint R Y(wn_j) n_j + oint (P - 1) Y(-e_0) theta_0
                       + Y_inf(e_(i,0')) (theta_0 + u_i) - Y_inf(wn'_i) n_i,

   (sums over j; R and P - 1 are polynomials, R = 1 / z at T = inf, so constants integrate to
   0 on the contour) and Y(wn_j) S_j = Y(au_j), -Y_inf(wn'_i) S_i = I + Y_inf(e_(i,0')). This
   is ``sigma.fedavg.own`` step 3 with (e_(i,0), row (i,K), own noise wn_i) -> (e_(i,0'), row f_i,
   wn'_i) and T - 1 -> T: its second moments are the same eight couplings of
   ``sigma.fedavg.own.assemble`` (blocks (f_i, f_i) of ``sigma_pencil.two_point`` on the transposed
   pencil), with the identity terms sigma_i^2 gamma_i (oint R tau(Sigma Y(wn_i)) -
   tau(Sigma Y_inf(wn'_i))); ``assemble`` is called with rounds + 1 (its T - 1 is T here, and
   T = 0 is personalization from w_0 = 0, not the zero model).
2. Deterministic equivalent. Client i's S_i now enters its base rows r_i and the new rows
   r'_i: E_i restricted to (r_i + r'_i, c_i + c'_i) is diag(e I, e' I) (e = -eta or -1 for
   the base, e' = -eta' (FTFA, c'_i = (i,0'..(k-1)')) or -1 (RTFA, c'_i = r'_i)), and the
   Woodbury step of ``sigma_pencil`` (step 2) gives Chat_i = E_i (I + gamma_i tau_i E_i)^-1
   (for E_i = -eta I the form there; dChat = -gamma Chat dtau Chat still holds, so Newton's
   method is ``SigmaPencil.solve``'s). The new chain is downstream, so G[base, new] = 0 and
   tau_i = [[tau_base, 0], [tau_cross, tau_new]] is block lower triangular: Chat's base block
   and hence the base fixed point are unchanged (no new solve there); tau_new depends on the
   chain alone and not on z (FTFA: -tau(Sigma (I - eta' S_i)^m), strictly triangular, so
   Newton's method from 0 ends in k steps; RTFA: tau_new = (1 - x) / gamma_i with x = 1 +
   gamma_i E_H[s x / (lam' x + s)], the Marchenko-Pastur equation at -lam', solved once by
   bracketing); tau_cross is then linear. Newton's method starts from the contour's base
   solution, tau_new and tau_cross = 0. Cost: M (K_b + k_b)^2 unknowns per node (K_b = K or
   1 base rows, k_b = k or 1 new rows) and as many per pair of nodes in the two-point solve.
   RTFA's row is divided by 1 + lam' (L0 entries +-lam' / (1 + lam'), e' = -1 / (1 + lam'),
   so G's column (i,1') and tau_new are 1 + lam' times theirs and wn'_i = e_(i,1') / (1 +
   lam')): unscaled, entries lam' beside O(1) ones left Newton's residual above its tolerance
   (measured: SolverError from lam' = 1e4 with a two-point spectrum, issue 29); scaled, the
   row tends to x_(i,1') = x_(i,0') (the server model) as lam' -> inf.

FedAvg's exact local solves (K = inf, ``sigma.fedavg.exact``): row 0 of that pencil's
TRANSPOSE (G^T) holds Gz N_j at (b_j) and Gz (S_j^+ + N_j) at (a_j), so au_j = p_j (e_0 -
e_(b_j)), wn_j = p_j (e_(a_j) - e_(b_j)) and the chains extend the transposed pencil
(``ExactPersonalPencil``: Chat in the A, B form there, K_b = 2 base rows per client). Every
gamma_j < 1 (D = I, the curves' ``sigma.fedavg.exact._full_rank``) needs nothing apart: the
edges (1, 1) give the small ellipse about D's one point, and N_j = 0 in the chains.

Overflow: a client whose FTFA growth (1 - eta' s)^(2k) at the top of its sample spectrum under
H passes 1e250 (``personalize.ftfa_stability``) gets eta' = 1 / top in its chain (finite;
the chains are downstream of block 0 and of each other, so the other clients' values are
unchanged) and ``RoundsLimit.personalized_risk`` reports its risk as inf, as with Sigma = I; a
divergent but representable FTFA is computed; overflowed rounds are settled by
``fedavg.settle`` (through ``pencil_curves``).

Checks (``tests/test_rounds_sigma_personalize.py``): Sigma = I against ``personalize``'s
scalar route; FTFA with (k, eta') = (K, eta) from w_T against ``sigma.fedavg.own``'s own model of
round T + 1, RTFA with lam' = lam against ``prox_sigma``'s; FTFA with k = 0 against the server
model; T = 0 against ``steps_limit("local")``/``limit("local_ridge")`` under the spectrum;
FedAvg K = 1 at T = inf against ``clients_limit("rtfa")`` and ``steps_limit("ftfa",
clients=M)``; the literal algorithm simulated at two d.

Here: the route (``personalized_sigma``: the row combinations, the contour's second moments)
and its size and time guards; the extended pencil of steps 1 and 2 and its fixed point:
``sigma.personal.pencil``.
"""

from __future__ import annotations

import numpy as np

from riskcalc._text import shown_apart

from riskcalc.linear.dynamics.personalize import ftfa_growth_digits, ftfa_stability
from riskcalc.linear.dynamics.sigma import memory
from riskcalc.linear.dynamics.sigma.budget import MORE_MEMORY, MORE_TIME, allowed, allowed_bytes
from riskcalc.linear.dynamics.sigma.fedavg.own import OwnPencil, assemble, own_pairs
from riskcalc.linear.dynamics.sigma.fedavg.curves import pencil_curves
from riskcalc.linear.dynamics.sigma.fedavg.exact import ExactPencil
from riskcalc.linear.dynamics.sigma.personal.pencil import (ExactPersonalPencil, PersonalPencil,
                                                            beyond_reach, solve_extended)
from riskcalc.linear.dynamics.sigma.prox_sigma import (ProxPencil, projection_lam,
                                                        takes_projection)
from riskcalc.linear.dynamics.sigma.sigma_pencil import SigmaPencil, stable_top

#: Most unknowns M (K_b + k_b)^2 of the extended pencil (the Jacobian and the two-point solve
#: per pair of nodes cost their cube; measured, process CPU on a loaded 2-core machine, T up to
#: 30: 18 unknowns 1.1 s, 108 7.1 s, 200 41 s).
MAX_UNKNOWNS = 200


#: Most digits of a divergent FTFA's risk growth (1 - eta' top)^(2 k) that the extended pencil
#: is solved for; beyond, refused (``ftfa_chain_steps``). Newton's method there stops at a
#: residual near its tolerance, so whether it converged was decided by rounding: measured (two
#: atoms {1, 2.5}, gamma (0.01, 4), k = 3 to 6, 2 to 60 per unit of step_size), every solve up
#: to 20.1 digits converged and matched ``steps_limit("local")`` within 8e-12, while between
#: 20.2 and 24.1 digits solves failed and converged in no order (k = 4: refused at 20.2 and
#: 23.3 digits, a value at 20.9, 21.7, 22.5 and 24.1).
FTFA_REACH_DIGITS = 20.0


#: Most seconds the personalization's two-point solve may be estimated to take by default
#: (``budget``: rounds_limit's max_seconds).
MAX_SECONDS = 120.0


def personal_seconds(M: int, K: int, atoms: int, nodes: int) -> float:
    """Estimated seconds of ``_personal_models``: (nodes + 1)(2 nodes + 1) pairs of the
    two-point solve at 1e-5 M K^2 (1 + atoms / 15) s each (K: blocks per client). Fitted to
    process CPU (OMP 1) per pair, M = 2-4, K = 2-10, 2-60 atoms: within 0.6-1.5 times the
    measured cost from K^2 M = 36 up (2.4e-3 s at M = 2, K = 10; 7.8e-4 at K = 5 with 20
    atoms), an overestimate below (up to 5 times at K = 2, where the whole solve takes
    seconds); FedAvg K = 1 after 5 rounds with gamma (1, 1.5) has 193 nodes (74,000 pairs)."""
    return (nodes + 1.0) * (2.0 * nodes + 1.0) * 1e-5 * M * K ** 2 * (1.0 + atoms / 15.0)


def personal_bytes(M: int, K: int, n: int, atoms: int, nodes: int) -> float:
    """Estimated peak bytes of ``_personal_models`` (``memory.estimate``): the extended pencil
    of K blocks per client and n blocks is a dense pencil (``memory.dense_count``) of M K^2
    unknowns on the 2 ``nodes`` of the pair solves, with the own models' 8 M couplings
    (``memory.own_couplings``: those of ``_personal_models``). Measured (numpy's peak,
    ``tracemalloc``; FedAvg K = 1 or Algorithm 1 K = 2, M = 2, 12-100 evenly spaced atoms,
    FTFA 2 steps or RTFA): 0.47-0.71 of the estimate on a shared spectrum, 0.14-0.37 under
    covariate shift; the fixed check it replaces counted 0.06-0.35 of the peak."""
    return memory.estimate("dense", M * K * K, n, atoms, 2 * nodes, **memory.own_couplings(M))


def personal_guard(ext, k, kind, nodes):
    """ValueError when the extended pencil ``ext`` (``PersonalPencil``) at ``nodes`` contour
    nodes is estimated beyond the allowed peak memory (``personal_bytes`` against
    ``budget.allowed_bytes``) or beyond MAX_SECONDS (``personal_seconds``), naming what would
    fit."""
    M, atoms = ext.M, ext.s.size
    need, room = personal_bytes(M, ext.K, ext.n, atoms, nodes), allowed_bytes()
    if need > room:
        # The count is not monotone in the steps (the pair chunks fill up): the steps that
        # fit are named only if every smaller count fits too.
        fits = []
        for kk in range(1, k if kind == "ftfa" else 1):
            if personal_bytes(M, ext.K - k + kk, ext.n - M * (k - kk), atoms, nodes) > room:
                break
            fits.append(kk)
        raise _refused(ext, nodes, f"would hold about {need / 1e9:.3g} GB at its peak "
                       f"(estimated; more than the {room / 1e9:.3g} GB allowed)", fits,
                       MORE_MEMORY)
    seconds, limit = personal_seconds(M, ext.K, atoms, nodes), allowed(MAX_SECONDS)
    if seconds > limit:
        fits = [kk for kk in range(k or 1) if kind == "ftfa"
                and personal_seconds(M, ext.K - k + kk, atoms, nodes) <= limit]
        raise _refused(ext, nodes, f"would take about {seconds:.3g} s here (estimated; at "
                       f"most {limit:g} s)", fits, MORE_TIME)


def _refused(ext, nodes, amount, fits, more):
    """``personal_guard``'s ValueError: the federation, ``amount`` (the estimate against its
    limit), the FTFA steps ``fits`` that would fit and ``more`` (how to allow more)."""
    return ValueError(f"spectrum: personalization from the round-T model with M = {ext.M} "
                      f"clients, {ext.K} blocks per client, {ext.s.size} atoms and {nodes} "
                      f"contour nodes {amount}; give "
                      + (f"steps <= {fits[-1]}, or " if fits else "")
                      + f"fewer rounds, clients or atoms, {more}")


def ftfa_chain_steps(spectrum, gam, k, eta2):
    """FTFA's step per client in its chain (``eta2``, or 1 / top for a client whose growth
    overflows: module docstring, "Overflow") and the description of the clients whose steps
    diverge (None if none), for the error when the solve fails; ValueError when their growth
    is beyond ``FTFA_REACH_DIGITS`` (and does not overflow)."""
    top = stable_top(spectrum.atoms, spectrum.weights, gam)
    conv, over = ftfa_stability(gam, k, eta2, top=top)
    bad = np.flatnonzero(~conv & ~over)
    diverging = (None if bad.size == 0 else f"client{'s' if bad.size > 1 else ''} "
                 + ", ".join(f"{i} (step_size times the top of its sample spectrum = "
                             f"{shown_apart(eta2 * top[i], 2.0)} >= 2)" for i in bad))
    if bad.size and ftfa_growth_digits(k, eta2, top[bad]).max() > FTFA_REACH_DIGITS:
        raise beyond_reach(k, diverging)
    return np.where(over, 1.0 / top, eta2), diverging


def rtfa_floor(gam, spectrum, lam2):
    """ValueError when RTFA's ridge ``lam2`` is below ``prox_sigma.projection_lam`` of the
    clients with gamma_j > 1 (1e-5 times the smallest bottom of their nonzero sample spectra):
    on the null space of S_i the chain's row holds (S_i + lam')^-1 = 1 / lam', and the risk
    lost digits silently (measured, gamma (0.5, 3) under (1, 4) from the fixed point, against
    the lam' -> 0 limit, the own model of round T + 1: 2e-8 at lam' 1e-8, 1e-4 at 1e-12, 5e-2
    at 1e-14, refused from 1e-16; at 1e-6 and above the gap is the limit's O(lam'), and the
    floor there is 1.04e-5)."""
    over = gam[gam > 1.0]
    floor = projection_lam(over, spectrum) if over.size else 0.0
    if lam2 < floor:
        raise ValueError(f"lam: RTFA's ridge {lam2:.3g} is below {floor:.3g} (1e-5 times the "
                         "bottom of the sample spectra of the clients with gamma > 1), where "
                         "the personalization under a spectrum loses its digits to the 1 / "
                         f"lam on their null spaces; give lam >= {floor:.3g}")


def personal_unknowns(M, Kb, kind, k, base=None):
    """ValueError when the extended pencil's M (K_b + k_b)^2 unknowns exceed MAX_UNKNOWNS;
    ``base``: what the K_b base blocks per client are (default: K local steps; the message
    writes M (K + k)^2 with K = K_b), named with the steps that would fit."""
    size = M * (Kb + (k if kind == "ftfa" else 1)) ** 2
    if size > MAX_UNKNOWNS:
        what = f"K = {Kb} local blocks" if base is None else f"{Kb} {base}"
        fit = int(np.floor(np.sqrt(MAX_UNKNOWNS / M) + 1e-12)) - Kb
        fits = (f"steps <= {fit} fits" if kind == "ftfa" and fit >= 0 else
                "fewer clients")
        # Named as the count at fault (was "spectrum:", at Sigma = I too: fuzz42 path F5)
        raise ValueError(f"{'steps' if kind == 'ftfa' else 'local_steps'}: personalization "
                         f"from the round-T model solves M (K + k)^2"
                         f" = {size} unknowns per contour node here (M = {M} clients, "
                         f"{what} per client, k = {k if kind == 'ftfa' else 1} personalization "
                         f"blocks; at most {MAX_UNKNOWNS}: the cost grows like its cube"
                         + ("" if base is None else "; no chain route for this base yet")
                         + f"); give fewer personalization steps ({fits}), clients"
                         + (" or local steps" if base is None else ""))


def _extended(layout, e, kind, k, eta2, lam2, transposed=False):
    """The extended pencil of ``_personal_models`` (``e`` None: ``ExactPersonalPencil``)."""
    if e is None:
        return ExactPersonalPencil(layout, kind, k, eta2, lam2, transposed=transposed)
    return PersonalPencil(layout, e, kind, k, eta2, lam2, transposed=transposed)


def _personal_models(base, layout, e, au, wn, kind, k, eta2, lam2, c, gam, r, sigma, p, signal,
                     rounds, diverging=None):
    """(bias, variance) of every client's personalized model (module docstring) from the
    contour ``c`` of ``pencil_curves`` solved on the pencil ``base``, extended from
    ``layout`` (``base`` itself or its ``OwnPencil``) with base coefficient ``e`` (None:
    ``layout`` is the transposed ``sigma.fedavg.exact.ExactPencil``, ``ExactPersonalPencil``);
    ``diverging``: which clients' FTFA diverges (for the message when the solve fails)."""
    M, s, h = base.M, base.s, base.h
    Es = float(h @ s)
    ext, extt = (_extended(layout, e, kind, k, eta2, lam2, transposed=t) for t in (False, True))
    z = c["z"]
    personal_guard(ext, k, kind, z.size)
    big = np.array([1e13 * (1.0 + c["b"])], complex)
    z1 = np.concatenate([z, big])
    _, _, Gi = base.solve(lambda t: big, [0.0])
    Gb = np.concatenate([c["one"][1], Gi])
    if e is None:               # the transposed base: its inverse is G^T
        Gb = Gb.swapaxes(-1, -2)
    C1, G1 = solve_extended(base, ext, Gb, z1, kind, k, lam2, diverging)
    N1 = z.size
    C2 = np.concatenate([C1[:N1], C1[:N1].conj(), C1[N1:]])
    G2 = np.concatenate([G1[:N1], G1[:N1].conj(), G1[N1:]])
    e_ = np.eye(ext.n)
    au = np.pad(au, ((0, 0), (0, ext.n - au.shape[1])))
    wn = np.pad(wn, ((0, 0), (0, ext.n - wn.shape[1])))
    couplings = []
    for i in range(M):
        ei, sg, bl, wi = e_[ext.root[i]], sigma[i] ** 2 * gam[i], (ext.last[i],) * 2, ext.noise[i]
        couplings += [
            (r ** 2, au, au, bl), (sigma ** 2 * gam, au, wn, bl),                   # (R, R)
            ([signal ** 2], -e_[:1], -e_[:1], bl),                                  # (Pm, Pm)
            ([2 * r[i] ** 2], ei[None, :], au[i][None, :], bl),                     # (R, inf)
            ([sg, sg], np.stack([ei, -wi]), np.stack([wn[i], au[i]]), bl),
            ([2 * signal ** 2], ei[None, :], -e_[:1], bl),                          # (Pm, inf)
            ([signal ** 2 + r[i] ** 2], ei[None, :], ei[None, :], bl),              # (inf, inf)
            ([sg], ei[None, :], -wi[None, :], bl),
        ]
    Hall = own_pairs(extt, (C1.swapaxes(-1, -2), G1.swapaxes(-1, -2)),
                     (C2.swapaxes(-1, -2), G2.swapaxes(-1, -2)), couplings, M)
    # tau(Sigma Y(wn_i)) at the upper nodes (the rounds' noise), tau(Sigma Y_inf(wn'_i)) at inf.
    traces = np.stack([np.concatenate([
        np.einsum("a,nab,b->n", h * s, G1[:N1, :, ext.last[i], :], wn[i]),
        np.einsum("a,nab,b->n", h * s, G1[N1:, :, ext.last[i], :], ext.noise[i])])
        for i in range(M)])
    return assemble(Hall, traces, c, gam, r, sigma, signal, Es, rounds + 1.0)


def personalized_sigma(method, gam, r, sigma, p, signal, rounds, spectrum, *, local_steps=None,
                       step_size=None, lam=None, g, kind, k=None, eta2=None, lam2=None,
                       spectrum_edges):
    """(bias, variance), each (M, len(rounds)), of every client's model after personalizing
    the server model of round T (T = 0: w_0 = 0; inf: the fixed point) under ``spectrum``
    (module docstring): ``kind`` "ftfa" (``k`` steps of size ``eta2``, paper 003,
    ``003_4b976ddf5225c17e.txt``, Sec. 7 Alg. 5) or "rtfa" (ridge ``lam2``, Sec. 3.2).

    Parameters
    ----------
    method : {"fedavg", "pfedme"}
        FedAvg with ``local_steps`` K of size ``step_size`` (``sigma.fedavg.curves``) or Algorithm 1
        with exact prox ``lam`` (``prox_sigma``, paper 004 eqs. 9-10).
    gam, r, sigma, p : ndarray (M,)
    signal : float
    rounds : ndarray of float (integers or inf)
    spectrum : riskcalc.Spectrum
    g : float
        The global step (Algorithm 1: the paper's gamma; the round map's is g lam). Algorithm 1
        at a lam where ``prox_sigma.takes_projection`` holds is taken as FedAvg's exact local
        solves with global step g lam, as ``rounds_limit`` takes its server curves.
    kind, k, eta2, lam2
        The personalization: "ftfa" with k steps of size eta2, or "rtfa" with lam2.
    spectrum_edges : tuple
        (a, b, mu0): the edges of D's nonzero spectrum and its atom at 0, as the curve's solve
        found them (``RoundsLimit.diagnostics``' edges and atom at zero).
    """
    if kind == "rtfa":
        rtfa_floor(gam, spectrum, lam2)
    if method == "pfedme" and takes_projection(gam, spectrum, lam):
        # The server curves took the exact local solves here (``rounds_limit``): the prox
        # pencil's rows of 1 / lam lose about eps / lam (measured: 4e-4 relative at lam 1e-10,
        # refused from 1e-12), and the personalization must start from the same server.
        method, local_steps, g = "fedavg", np.inf, g * lam
    exact = method == "fedavg" and np.isinf(local_steps)
    personal_unknowns(gam.size, 2 if exact else local_steps if method == "fedavg" else 1, kind,
                      k, base=("blocks of the exact local solve (local_steps = inf)" if exact
                               else None if method == "fedavg" else
                               "block of the exact prox (local_steps = inf)"))
    atoms, weights = spectrum.atoms, spectrum.weights
    diverging = None
    if kind == "ftfa":      # overflowing clients: a finite chain, reported as inf by the caller
        eta2, diverging = ftfa_chain_steps(spectrum, gam, k, eta2)
    if exact:
        pen = ExactPencil(atoms, weights, gam, p)
        eye = np.eye(pen.n)
        v, wnb = eye[0][None, :] - eye[pen.b], eye[pen.a] - eye[pen.b]
        au, wn = p[:, None] * v, p[:, None] * wnb   # rows 0 of G^T: p_j Gz q_j, p_j Gz S_j^+
        args = (pen, spectrum_edges, g)
        layout, e = ExactPencil(atoms, weights, gam, p, transposed=True), None
    elif method == "fedavg":
        eta, K = step_size, local_steps
        pen = SigmaPencil(atoms, weights, gam, p, eta, K)
        last = pen.rows[:, -1]
        v = np.zeros((pen.M, pen.n))            # as fedavg_sigma_k_curves (sigma_pencil step 3)
        v[:, 0], v[np.arange(pen.M), last] = 1.0, -1.0
        wnb = np.zeros((pen.M, pen.n))
        wnb[:, 0] = eta
        for j in range(pen.M):
            wnb[j, pen.rows[j, :-1]] = eta
        own = OwnPencil(pen)
        au = p[:, None] * np.eye(own.n)[0][None, :] - np.eye(own.n)[own.zero]
        wn = np.zeros((pen.M, own.n))
        for j in range(pen.M):
            wn[j, own.rows[j]] = eta
        args = (pen, spectrum_edges, g)
        layout, e = own, -eta
    else:
        pen = ProxPencil(atoms, weights, gam, p, lam)
        v = np.zeros((pen.M, pen.n))            # as prox_sigma_curves
        v[:, 0], v[np.arange(pen.M), pen.rows[:, 0]] = 1.0, -lam
        wnb = np.zeros((pen.M, pen.n))
        wnb[np.arange(pen.M), pen.rows[:, 0]] = 1.0
        eye = np.eye(pen.n)
        au = p[:, None] * eye[0][None, :] - eye[1:]
        wn = eye[1:] / lam
        args = (pen, spectrum_edges, g * lam)
        layout, e = pen, -1.0
    # The extended pencil's memory and time checked on the contour's nodes before the base
    # pencil is solved on them (measured: 400 atoms, M = 3, refused after 8.7 s of that solve;
    # 1500 atoms, M = 2, after 34 s).
    ext = _extended(layout, e, kind, k, eta2, lam2)
    out = pencil_curves(*args, gam, r, sigma, p, signal, rounds, v, wnb, own_models=lambda c:
                        _personal_models(pen, layout, e, au, wn, kind, k, eta2, lam2, c, gam, r,
                                         sigma, p, signal, rounds, diverging),
                        before_solve=lambda _, nodes: personal_guard(ext, k, kind, nodes))
    return out["local"]()
