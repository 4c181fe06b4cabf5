"""Operator-valued subordination for a federated global model whose objective filters S_j.

Paper 003 (``003_4b976ddf5225c17e.txt``), eqs. 12 and 14: MAML-FL and pFedMe solve their global
model from A = sum_j b_j, b_j = p_j phi(S_j) for a filter phi (a cubic polynomial for MAML-FL,
a Moreau map for pFedMe), with noise sources psi(S_j). Every client shares the covariance
Sigma; D = alg(Sigma). Derived here (the derivation of ``finite_clients.pfedme_sigma``, where
it was first written for pFedMe, with the filter left open):

1. The alg(S_j, D) are free with amalgamation over D, so E_D[A^-1] = E_D[(b_g + t_g)^-1] =: G
   for every group g of identical clients, with shifts t_g in D and
   sum_g n_g t_g = (M - 1) G^-1 pointwise (``solve_shifts``). A filter supplies, at a shift t,
   G_g(t) and the atoms x atoms matrix L_g of h -> E_D[K h K], K = (b_g + t)^-1
   (L_g = -dG_g / dt).
2. Moving one summand b_m -> b_m + eps X inside its own algebra moves G by
   G' = -Z^-1 L_(g_m)^-1 e, Z = sum_g n_g L_g^-1 - (M - 1) diag(G^-2), e = E_D[K X K]; then
   the conditional expectation onto C_i = alg(S_i, D) is
   E_(C_i)[A^-1 X A^-1] = K (X + t_m') K for the target's own summand (t_m' = -L^-1 (G' + e))
   and K t_o' K for another client's (t_o' = -L^-1 G').
3. Signal: with K a = I - K t (a = b_i, B = A - a),
   E_(C_i)[A^-1 B Phi B A^-1] = K (t Phi t + t_m'[e_b]) K and e_b = E_D[K a Phi a K]
   = Phi - 2 G t Phi + L[t Phi t] for every client; noise: the source e_v = E_D[K psi K] of
   each client (the filter's).

So the target's bias and the global model's share of its variance are linear functionals
Z -> tau(F K Z K) of four middles Z in D (F = R Sigma R, R the target's personalization),
returned by ``middles``::

    B_i = r_i^2 tau(F K Z_1 K) + tau(F K Z_2 K),
    V_i = sigma_i^2 (own + cross + p_i^2 gamma_i (tau(F K psi K) + tau(F K Z_3 K)))
          + tau(F K Z_4 K),

Z_1 = t Phi t + t_m'[e_b], Z_2 = sum over the other clients j of r_j^2 t_o'[e_b,j],
Z_3 = t_m'[e_v], Z_4 = sum over the others of sigma_j^2 p_j^2 gamma_j t_o'[e_v,j].
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError

_ITER = 100
#: The cost of step 1-2's atoms x atoms matrices (L_g and their inverses, per group) for G
#: groups over K atoms, measured for MAML-FL and pFedMe under powerlaw:1 (one BLAS thread,
#: loaded machine): about 1.2e-9 G K^3 s (MAML-FL 10 s at G = 1, K = 2000, 7 s at G = 6,
#: K = 1000; pFedMe 0.6 of it) and 8 K^2 (4 + 4 G) bytes; the most ``check_size`` lets
#: through (seconds, bytes: the command line's default --max-minutes and --max-memory).
SECONDS_PER_CUBE, MAX_SECONDS, MAX_BYTES = 1.5e-9, 600.0, 4 * 2 ** 30


def shared_layout(spectrum, groups: int):
    """D for ``groups`` groups sharing ``spectrum``: (sv, typ, h, Phi, marginals), group g's
    covariance eigenvalues sv[typ[g]] on the atoms of masses h, the signal density Phi = dG/dH
    there and each group's spectrum."""
    h = spectrum.weights
    Phi = np.divide(spectrum.signal_weights, h, out=np.zeros_like(h), where=h > 0)
    return (spectrum.atoms[None], np.zeros(groups, dtype=int), h, Phi,
            [spectrum] * groups)


def joint_layout(joint, typ):
    """D under covariate shift (``joint_spectrum``: the joint atoms of commuting covariances,
    group g of type typ[g]), a uniform signal direction: as ``shared_layout``."""
    typ = np.asarray(typ, dtype=int)
    margins = {t: joint.marginal(t) for t in np.unique(typ)}    # one Spectrum per type
    return (joint.values, typ, joint.weights, np.ones_like(joint.weights),
            [margins[t] for t in typ])


def check_size(name: str, groups: int, atoms: int, solves: int = 1) -> None:
    """ValueError, before any work, where the G = ``groups`` groups' K x K matrices over
    K = ``atoms`` atoms, solved ``solves`` times (3: pFedMe's scale checks), would take more
    than ``MAX_SECONDS`` or ``MAX_BYTES``, saying what fits (MAML-FL under powerlaw:1 with
    d = 1e4 ran for minutes, d = 1e5 failed allocating 75 GiB; fuzz38 maml F6)."""
    seconds = SECONDS_PER_CUBE * solves * groups * float(atoms) ** 3
    nbytes = 8.0 * float(atoms) ** 2 * (4 + 4 * groups)
    if seconds <= MAX_SECONDS and nbytes <= MAX_BYTES:
        return
    fits = min((MAX_SECONDS / (SECONDS_PER_CUBE * solves * groups)) ** (1 / 3),
               (MAX_BYTES / (32.0 * (1 + groups))) ** 0.5)
    raise ValueError(f"{name}'s finite-M limit under a spectrum: {groups} distinct client "
                     f"group{'s' if groups > 1 else ''} over {atoms} eigenvalue atoms would "
                     f"take about {seconds:.3g} s and {nbytes / 2 ** 30:.3g} GiB (an atoms x "
                     f"atoms matrix per group" + (f", solved {solves} times: all but the first "
                     "check the digits by rescaling Sigma" if solves > 1 else "") + "; at "
                     f"most {MAX_SECONDS:g} s and {MAX_BYTES / 2 ** 30:g} GiB are solved): "
                     f"give a spectrum of at most about {int(fits)} distinct eigenvalues (a "
                     "smaller d for powerlaw:P) or fewer distinct clients")


def solve_shifts(states, count, t0, what: str):
    """The shifts t_g (groups x atoms) and G of step 1: E_D[(b_g + t_g)^-1] = G for every
    group and sum_g n_g t_g = (M - 1) / G, as the roots of
    F_g = sum_g' n_g' t_g' - (M - 1) / G_g(t_g): Newton steps with the exact derivatives
    dG_g = -L_g dt_g (the groups eliminated through y = sum_g n_g dt_g, an atoms x atoms
    system), halving a step that leaves t > 0 or does not lower sum F^2.

    Parameters
    ----------
    states : callable
        states(t) -> (G_g, L_g) of every group at its shift t_g, arrays (groups, atoms) and
        (groups, atoms, atoms) (raising SolverError where the filter's fixed point fails;
        a caller batches its groups' fixed points in one call).
    count : ndarray (groups,)
        Clients per group (M = sum).
    t0 : ndarray (groups, atoms)
        Positive starting shifts.
    what : str
        Named in the error message.

    Raises
    ------
    SolverError
        If the iteration does not converge.
    """
    M = count.sum()

    def residual(t):
        Gs, Ls = states(t)
        return count @ t - (M - 1) / Gs, Gs, Ls

    t = np.array(t0, dtype=float)
    F, Gs, Ls = residual(t)
    eye = np.eye(t.shape[1])
    for _ in range(_ITER):
        polish = np.max(np.abs(F * Gs)) <= 1e-13 * M
        # dF_g = y - B_g dt_g, B_g = (M - 1) diag(G_g^-2) L_g.
        Binv = Ls / Gs[:, :, None] ** 2
        Binv *= M - 1
        Binv = np.linalg.inv(Binv)
        y = np.linalg.solve(eye - np.einsum("g,gij->ij", count, Binv),
                            np.einsum("g,gij,gj->i", count, Binv, F))
        dt = np.einsum("gij,gj->gi", Binv, F + y)
        size = np.sum(F ** 2)
        if polish:
            # One more Newton step from within the tolerance, kept where it lowers the
            # residual: the tolerance (1e-13 M) left relative errors of 1e-13 M / (N/d - 1)
            # in the limits near pooled N = d (pFedMe at 2000 clients, N/d - 1 = 1e-4:
            # 4e-6 off, silently; fuzz36 xroute F1).
            try:
                nF, nGs, _ = residual(t + dt) if np.all(t + dt > 0) else (None,) * 3
            except SolverError:
                nF = None
            if nF is not None and np.sum(nF ** 2) < size:
                return t + dt, nGs[0]
            return t, Gs[0]
        for _ in range(60):
            new = t + dt
            if np.all(new > 0):
                try:
                    nF, nGs, nLs = residual(new)
                except SolverError:
                    nF = None
                if nF is not None and np.sum(nF ** 2) < size:
                    break
            dt = dt / 2
        else:
            break
        t, F, Gs, Ls = new, nF, nGs, nLs
    raise SolverError(f"{what}: the subordination fixed point did not converge")


def middles(G, Ls, t, count, r, sigma, p, gam, Phi, e_v):
    """The middles Z_1..Z_4 of the module docstring for a target in each group.

    Parameters
    ----------
    G : ndarray (atoms,)
    Ls : array_like (groups, atoms, atoms)
        L_g per group.
    t : ndarray (groups, atoms)
    count, r, sigma, p, gam : ndarray (groups,)
    Phi : ndarray (atoms,)
        The signal density dG/dH.
    e_v : array_like (groups, atoms)
        E_D[K psi K] of one client per group.

    Returns
    -------
    ndarray (groups, 4, atoms)
    """
    M = float(count.sum())
    Linv = np.linalg.inv(np.asarray(Ls, dtype=float))
    e_v = np.asarray(e_v, dtype=float)
    Z = np.einsum("g,gij->ij", count, Linv) - (M - 1) * np.diag(1.0 / G ** 2)
    e_b = Phi - 2 * G * t * Phi + np.einsum("gij,gj->gi", Ls, t * Phi * t)
    # G' per unit source of each group (one solve, a column per group); the other clients'
    # summed pull on G.
    gp_b = -np.linalg.solve(Z, np.einsum("gij,gj->ig", Linv, e_b)).T
    gp_v = -np.linalg.solve(Z, np.einsum("gij,gj->ig", Linv, e_v)).T
    wb = count * r ** 2
    wv = count * sigma ** 2 * p ** 2 * gam
    # A moved client of group a: t_self' = -L_a^-1 (G' + e); an unmoved one: -L_a^-1 G'.
    mids = np.stack([gp_b + e_b, wb @ gp_b - (r ** 2)[:, None] * gp_b, gp_v + e_v,
                     wv @ gp_v - (sigma ** 2 * p ** 2 * gam)[:, None] * gp_v], axis=1)
    out = -np.einsum("gij,gkj->gki", Linv, mids)
    out[:, 0] += t * Phi * t
    return out
