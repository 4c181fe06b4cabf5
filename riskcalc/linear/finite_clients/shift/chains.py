"""The targets' resolvent chains under covariate shift, and the parts of the limits that do not
move with the client weights, remembered between evaluations.

``finite_clients.shift`` (paper 003, ``003_4b976ddf5225c17e.txt``, eqs. 6-8 and Thms 1-2 with
the covariate-shift extension derived there) evaluates every target's traces through
``target_chains``: chains of generalized resolvents of the target's S_i with diagonal shifts
and middles on the joint atoms (``riskcalc.linear.engine.resolvent_chain``), and, at complex
weights or penalties (the complex steps of ``finite_clients.shift.gradient``), their exact
tangents. The targets' own ridge variances and the diagonal roots depend on a target's gamma,
lam and spectrum only, not on the weights: ``remember`` / ``warm_roots`` keep them for the
next evaluation (the optimal weights' iterations), which ``finite_clients.pfedme_sigma`` and
``finite_clients.maml_sigma`` use too.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.linear.engine import kappa
from riskcalc.linear.engine.resolvent_chain import chain_traces, chain_vectors, diagonal_roots

#: Entries kept by ``remember`` (per type: the own variances and R's roots of a few tunings).
_MEMO_SIZE = 64
_MEMO = OrderedDict()


def remember(key, compute):
    """compute() remembered under ``key`` (bytes of every input; least recently used out
    first). The targets' own least-squares / ridge variances and R's roots depend on a target's
    gamma, lam and marginal spectrum only, not on the weights: the optimal weights' finite
    differences (M + 1 evaluations per gradient, ``riskcalc.advise.weights``) change the
    weights alone, and would solve them again each time. The same numbers either way."""
    value = _MEMO.get(key)
    if value is not None:
        _MEMO[key] = _MEMO.pop(key, value)          # most recently used (safe if gone)
        return value
    value = compute()
    _store(key, value)
    return value


def _store(key, value):
    """``_MEMO[key] = value``, the least recently used entries out beyond ``_MEMO_SIZE``."""
    _MEMO[key] = value
    while len(_MEMO) > _MEMO_SIZE:
        try:
            _MEMO.popitem(last=False)
        except KeyError:                            # emptied meanwhile by another thread
            break

def warm_roots(key, gamma, atoms, weights, eta, shift):
    """``resolvent_chain.diagonal_roots`` started from the roots last solved under ``key``
    (the inputs that do not move between the optimal weights' evaluations: the weights and
    the penalties do), remembered for the next call: the same roots in a few Newton steps."""
    key = ("roots",) + key
    roots = diagonal_roots(gamma, atoms, weights, eta, shift, guess=_MEMO.get(key))
    _store(key, roots)
    return roots


def own_variance(gamma, lam, spectrum) -> np.ndarray:
    """The oracle ridge (lam > 0) or least-squares (lam = 0) variance per unit sigma^2 of
    clients of ratios ``gamma`` in ``spectrum`` (``riskcalc.linear.engine.kappa.ridge_factors``,
    paper 003 Thms 1-2), remembered (``remember``): a target's own term in every finite-M route,
    which the optimal weights' finite differences would solve again at each step."""
    gamma = np.asarray(gamma, dtype=float)
    lam = np.broadcast_to(np.asarray(lam, dtype=float), gamma.shape)
    key = ("own", spectrum.atoms.tobytes(), spectrum.weights.tobytes(), gamma.tobytes(),
           lam.tobytes())
    return remember(key, lambda: kappa.ridge_factors(gamma, lam, spectrum)[1])


def target_chains(method, gamma, lam, p, wb, types, w, sv, g, abar, memo=None, fixed=None):
    """The target chains of the module docstring for targets of types ``types`` (arrays over
    targets): T_uv = tau(Sigma_u K Sigma_v K), Z2_ut = tau(Sigma_u K Sigma_t^2 K), Y_u =
    tau(Sigma_u K Omega^2 K), SOK_u = tau(Sigma_u Omega K), and with F = R Sigma_i R: fS_u =
    tau(F K Sigma_u K), fS2_t = tau(F K Sigma_t^2 K), fO2 = tau(F K Omega^2 K), t3 = tau(F K),
    t4 = tau(R Sigma_i (I - R) K); K = (p S_i + Omega)^-1, Omega = sum_v wb_v Sigma_v.

    Two blocks of K (k = 2 of ``resolvent_chain``: Qhat_11 = Qhat_22 = q = 1 / (c s + Omega),
    T_12 = <s q^2 M_1> / (1 - gamma c^2 <s^2 q^2>), <.> = E over the joint atoms) give the
    bilinear form tau(K M_1 K M_2) = <M_1 M_2 q^2> + beta <s q^2 M_1> <s q^2 M_2>, beta =
    gamma c^2 / (1 - gamma c^2 <s^2 q^2>). The F-chains are linear in their closing middle:
    tau(F K M K) = tau(K R Sigma_i R K M) is one ``chain_vectors`` functional for every M.
    Every type in one batch (each target's own eigenvalues s = sv[type] on the joint atoms:
    per-point atoms of ``resolvent_chain``), but R's roots, which are solved per type on the
    type's merged atoms.

    Complex p and wb (a complex step, ``limits.evaluate``): the root c and the chains are
    solved at the real parts and follow by their tangents, c by one Newton step of its
    equation in complex arithmetic (``_root_tangent``), a chain through dK = -e K + K D K (K's
    derivative: K S K = (K - K Omega K) / p), e = dp / p, D = e Omega - dOmega, so that
    d tau(... K ...) is -e times it plus the chain with K D K in K's place: chains with one
    more block and diagonal middles, as exact as the chains themselves (linear in D: each a
    combination of the T chains with D = Sigma_v, kept for every step at the same real
    point). Complex lam (RTFA): R = (S / lam + 1)^-1 follows by dR = e (R - R R), e = dlam /
    lam ((S / lam) R = I - R), and "own" is the imaginary part of the target's own ridge
    variance (``limits.evaluate``) by the
    same chains (docstring of the code below).

    ``fixed`` (real inputs): a dict kept between calls at the same weights (``limits.evaluate``:
    RTFA's penalty searches change lam alone), where the K chains (T, Z2, Y, SOK), which do
    not involve lam, are kept: the same numbers. Real p, wb and lam (the real point and the
    gradient's steps that move neither, e.g. in rho or in the other clients' weights): the
    real point's chains, kept in ``memo``."""
    memo = {} if memo is None else memo                       # ``limits.evaluate``'s
    real = not any(np.iscomplexobj(x) for x in (p, wb, lam))
    if not (real and "real" in memo):
        out = _chains(method, gamma, lam, p, wb, types, w, sv, g, abar, memo, fixed)
        if not real:
            return out
        memo["real"] = out
    return dict(memo["real"])


def _chains(method, gamma, lam, p, wb, types, w, sv, g, abar, memo, fixed):
    """``target_chains``' work (its docstring)."""
    B, T = gamma.size, sv.shape[0]
    s = sv[types]                                              # (B, K): each target's own
    omega = wb @ sv                                            # (B, K)
    one = np.ones_like(s)
    stepped = np.iscomplexobj(p) or np.iscomplexobj(omega)
    if stepped or fixed is None or "K" not in fixed:
        out = _k_chains(gamma, p, omega, s, w, sv, abar, memo, stepped)
        if fixed is not None and not stepped:
            fixed["K"] = out
    else:
        out, memo["c"] = fixed["K"], fixed["K"]["c"]
    out = dict(out, own=None)                                   # RTFA: own's tangent
    c_real = memo["c"]
    if method == "fedavg":
        rows = np.arange(B)
        out["fS"], out["fS2"] = out["T"][rows, :, types], out["Z2"][rows, types]
        out["fO2"], out["t3"], out["t4"] = out["Y"][rows, types], g[types], np.zeros(B)
        return out
    out["fS"], out["fS2"] = np.zeros((B, T)), np.zeros((B, T))
    out["fO2"], out["t3"], out["t4"] = np.zeros(B), np.zeros(B), np.zeros(B)
    # FTFA with gamma <= 1: R = P^perp = 0 (local least squares), every F-trace vanishes.
    live = np.arange(B) if method != "ftfa" else np.flatnonzero(gamma > 1)
    if live.size == 0:
        return out
    n = live.size
    eta_r = np.zeros(n) if method == "ftfa" else np.real(lam[live])
    # R's root depends on the target's marginal spectrum only (shift 1): solve it on the
    # merged atoms (2 for a two-point target, however many joint atoms the others add); at
    # the real lam, so the complex steps at the same real point reuse it (``memo``).
    if "root_r" not in memo:
        memo["root_r"] = np.empty(n)
        for t in np.unique(types[live]):
            sel = types[live] == t
            ms, inv = np.unique(sv[t], return_inverse=True)
            g_t, e_t, w_t = gamma[live][sel], eta_r[sel], np.bincount(inv.ravel(), w)
            memo["root_r"][sel] = remember(
                ("R", ms.tobytes(), w_t.tobytes(), g_t.tobytes(), e_t.tobytes()),
                lambda: warm_roots(("R", ms.tobytes(), w_t.tobytes(), g_t.tobytes()), g_t, ms,
                                   w_t, e_t, np.ones((g_t.size, ms.size))))
    root_r = memo["root_r"]
    sl, pl, om_l = s[live], p[live], omega[live]
    blocks = {"K": (1.0 / np.real(pl), np.real(om_l), c_real[live]),
              "R": (eta_r, np.ones((n, s.shape[1])), root_r)}

    def run(parts, vector=False, table=False):
        """The chain of ``parts`` (block, middle after it): its trace, its functional of the
        closing middle (``vector``) or those of all its sub-chains (``table``:
        ``chain_traces``; the traces of sub-chains by ``closed``, one solve for all)."""
        return run_many([parts], vector, table)[0]

    def run_many(chains, vector=False, table=False):
        """``run`` of several chains of one length as one batch of points (per point the
        same arithmetic: fewer, larger array operations)."""
        eta, shift, root, mids = (np.concatenate(v) for v in zip(*(
            [np.stack(v, axis=1) for v in zip(*(blocks[b] for b, _ in parts))]
            + [np.stack([np.broadcast_to(m, (n, s.shape[1])) for _, m in parts], axis=1)]
            for parts in chains)))
        many = len(chains)
        args = (np.tile(gamma[live], many), np.tile(sl, (many, 1)), w, eta, shift, mids, root)
        if table:
            out = chain_traces(*args, table=True)
        else:
            out = (chain_vectors if vector else chain_traces)(*args)
        return np.split(out, many)

    def closed(tab, a, b, mid):
        """The trace of sub-chain a..b of a table closed by the middle ``mid``."""
        return np.sum(tab[:, a, b] * mid, axis=-1)

    K1, R1, Rs = ("K", one[live]), ("R", one[live]), ("R", sl)
    if "chains" not in memo:
        tab = run([K1, Rs, R1, K1], table=True)
        memo["chains"] = (tab[:, 0, 3], closed(tab, 0, 2, 1.0), closed(tab, 0, 1, sl))
    phi, t3, t_rs = memo["chains"]
    # The tangents (docstring; the imaginary parts are the step's size times them).
    dphi, dt3, dt_rs = 0.0, 0.0, 0.0
    if np.iscomplexobj(pl) or np.iscomplexobj(om_l):
        e = np.imag(pl) / np.real(pl)
        # K D K's middle e Omega - dOmega = sum_v m_v Sigma_v (Omega = wb @ sv): the chains
        # are linear in it, so each tangent combines T chains with middles Sigma_v, solved
        # once per real point (``memo``: every complex step of a gradient reuses them).
        m = e[:, None] * np.real(wb[live]) - np.imag(wb[live])
        if "basis" not in memo:
            # The 2 T chains as one batch (a table's (0, 4) entry is its vector).
            tabs = run_many([[("K", sv[v]), K1, Rs, R1, K1] for v in range(T)]
                            + [[K1, Rs, R1, ("K", sv[v]), K1] for v in range(T)], table=True)
            memo["basis"] = [(tab[:, 0, 4] + tabs[T + v][:, 0, 4], closed(tab, 0, 3, 1.0),
                              closed(tab, 0, 2, sl)) for v, tab in enumerate(tabs[:T])]
        basis = memo["basis"]
        dphi = -2 * e[:, None] * phi + sum(m[:, v, None] * basis[v][0] for v in range(T))
        dt3 = -e * t3 + sum(m[:, v] * basis[v][1] for v in range(T))
        dt_rs = -e * t_rs + sum(m[:, v] * basis[v][2] for v in range(T))
    if method == "rtfa" and np.iscomplexobj(lam):
        # dQ_R = e (Q_R - Q_R Q_R), e = dlam / lam: each R once doubled (docstring).
        e = np.imag(lam[live]) / eta_r
        ta, tb = run_many([[K1, R1, Rs, R1, K1], [K1, Rs, R1, R1, K1]], table=True)
        dphi = dphi + e[:, None] * (2 * phi - ta[:, 0, 4] - tb[:, 0, 4])
        dt3 = dt3 + e * (2 * t3 - closed(ta, 0, 3, 1.0) - closed(tb, 0, 3, 1.0))
        dt_rs = dt_rs + e * (t_rs - closed(ta, 0, 2, sl))
        # The own ridge variance gamma tau(Sigma S (S + lam)^-2) = (gamma / lam) (tau(Q_R
        # Sigma) - tau(Q_R^2 Sigma)): its lam-derivative -2 gamma tau(Sigma S (S + lam)^-3) =
        # -2 gamma / lam^2 (tau(Q_R^2 Sigma) - tau(Q_R^3 Sigma)).
        out["own"] = np.zeros(B)
        out["own"][live] = -2 * gamma[live] * e / eta_r * (
            closed(ta, 1, 2, sl) - run([R1, R1, Rs]))
    if np.iscomplexobj(pl) or np.iscomplexobj(om_l) or out["own"] is not None:
        phi, t3, t_rs = phi + 1j * dphi, t3 + 1j * dt3, t_rs + 1j * dt_rs
    for name in ("fS", "fS2", "fO2", "t3", "t4"):
        out[name] = out[name].astype(phi.dtype)
    out["fS"][live], out["fS2"][live] = phi @ sv.T, phi @ (sv ** 2).T
    out["fO2"][live] = (phi * om_l ** 2).sum(1)
    out["t3"][live] = t3
    out["t4"][live] = t_rs - t3
    return out


def _k_chains(gamma, p, omega, s, w, sv, abar, memo, stepped):
    """T, Z2, Y and SOK of ``target_chains`` (two blocks of K; its docstring), and K's root
    c (the real parts'; kept in ``memo``: the complex steps at the same real point start from
    it)."""
    if "c" not in memo:
        memo["c"] = warm_roots(("K", gamma.tobytes(), s.tobytes(), w.tobytes()), gamma, s, w,
                               1.0 / np.real(p), np.real(omega))
    c = memo["c"]
    if stepped:
        c = c + 1j * _root_tangent(gamma, s, w, 1.0 / p, omega, c)
    q2 = 1.0 / (c[:, None] * s + omega) ** 2
    slope = gamma * c ** 2 * ((s * s * q2) @ w)
    if not np.all(slope.real < 1):
        raise SolverError("covariate shift: a target's two-resolvent fixed point is unstable "
                          f"(slope {np.max(slope.real):g} >= 1)")
    beta = (gamma * c ** 2 / (1.0 - slope))[:, None]
    a, u = w * q2, w * s * q2                                  # (B, K)
    us, us2 = u @ sv.T, u @ (sv ** 2).T                        # <s q^2 Sigma_u>, <.. Sigma_t^2>
    asv = a[:, None, :] * sv                                   # (B, T, K)
    return {"T": asv @ sv.T + beta[..., None] * us[:, :, None] * us[:, None, :],
            "Z2": asv @ (sv ** 2).T + beta[..., None] * us[:, :, None] * us2[:, None, :],
            "Y": (a * omega ** 2) @ sv.T + beta * us * ((u * omega ** 2).sum(1))[:, None],
            # tau(Sigma_u Omega K) = tau(Sigma_u Omega Abar^-1), since E_D[K] = Abar^-1.
            "SOK": (omega / abar) @ (sv * w).T, "c": memo["c"]}


def _root_tangent(gamma, s, w, eta, omega, c):
    """The imaginary part of the diagonal root c of eta c + gamma <c s / (c s + Omega)> = 1
    (``resolvent_chain.diagonal_roots``) at complex eta, Omega, c the real parts' root: one
    Newton step, -Im f(c) / f'(c) (f real at the real parts, so exact to O(step^2))."""
    f = c * eta + gamma * ((c[:, None] * s / (c[:, None] * s + omega)) @ w)
    slope = np.real(eta) + gamma * ((s * np.real(omega) / (c[:, None] * s
                                                          + np.real(omega)) ** 2) @ w)
    return -np.imag(f) / slope
