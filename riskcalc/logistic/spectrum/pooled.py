r"""FedAvg's logistic global model over M fixed blocks with a covariance spectrum: the exact limit
(derived here).

Model: ``riskcalc.logistic.blocks.pooled`` with features ``x ~ N(0, Sigma)`` in every block,
``Sigma``'s eigenvalue distribution ``H`` (``riskcalc.Spectrum``), ``w_0`` and the ``u_j``
isotropic in the original coordinates (``riskcalc.logistic.spectrum.fixed_point``).
``<f> = integral f(s) dH(s)``, ``J_kj = <s^k / (lam_g + Dbar s)^j>``.

Derivation (``pooled``'s leave-one-out argument with ``spectral``'s resolvent step)
-------------------------------------------------------------------------------------
1. Block j's training margins are ``z = prox_{mu_j l}(omega)``, ``mu_j = c_j x' H^-1 x ->
   W_j v`` with ``v = (1/d) tr(Sigma H^-1)`` (``W_j = c_j d``, ``pi_j = n_j c_j``; ``pooled``).
2. Sherman-Morrison per sample: ``H^-1 -> (lam_g I + Dbar Sigma)^-1``,
   ``Dbar = sum_j pi_j D_j``; so ``v = J_11``. (At ``Sigma = I``: ``pooled``'s (T).)
3. Stationarity ``lam_g w_g + sum_j c_j X_j' psi_j = 0``; Stein's lemma per block as in
   ``spectral`` step 3: ``sum_k c_j x_k psi_k -> pi_j (D_j Sigma w_g - eps_j Sigma w_j)`` plus a
   Gaussian ``Sigma^(1/2) zeta`` of per-coordinate variance ``F / d``,
   ``F = sum_j pi_j^2 gamma_j E_j[psi^2]``, ``E_j[psi^2] = E2_j / mu_j^2``,
   ``eps_j = (E3_j + alpha_j D_j) / kappa_j``. Hence, with ``E = sum_j pi_j eps_j``,

       w_g = R Sigma (E w_0 + sum_j pi_j eps_j r_j u_j) - R Sigma^(1/2) zeta,
       R = (lam_g I + Dbar Sigma)^-1.

4. Block l's view: ``kappa_l^2 = (S^2 + r_l^2) <s>``, ``alpha_l = w_g' Sigma w_l / kappa_l``,
   ``rho_l^2 = w_g' Sigma w_g - alpha_l^2``:

       alpha_l kappa_l = J_21 (E S^2 + pi_l eps_l r_l^2),
       w_g' Sigma w_g  = J_32 (E^2 S^2 + sum_j pi_j^2 eps_j^2 r_j^2) + F J_22.

   (At ``Sigma = I`` these are ``pooled``'s (A), (B), (N) in the block views.)

Unknowns ``(alpha_c, log rho_c)`` per group of identical clients and ``log v``. Euclidean
products for the outputs: ``w_g.w_0 = E S^2 J_11``, ``w_g.w_l = J_11 (E S^2 + pi_l eps_l r_l^2)``,
``||w_g||^2 = J_22 (E^2 S^2 + sum_j pi_j^2 eps_j^2 r_j^2) + F J_12``. Existence at
``lam_g = 0``: separability is invariant under ``x -> Sigma^(-1/2) x``, which makes the features
isotropic and the teachers' Gram matrix that of ``pooled`` with ``S, r_j`` times ``sqrt(<s>)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.engine.gaussian import NODES, SCALE_MARGIN, Rule, solve_resolved
from riskcalc.logistic.ranges import ladder
from riskcalc.logistic.blocks.pooled import PATH_NODES, TOL, Federation, settle
from riskcalc.logistic.engine.deadline import by_deadline

LAM_RATIO = 10.0 ** 0.5


def integrals(spectrum, lam_g, Dbar):
    """``J[k, j] = <s^k / (lam_g + Dbar s)^j>`` for ``k <= 3``, ``j <= 2``."""
    s, h = spectrum.atoms, spectrum.weights
    inv = 1.0 / (lam_g + Dbar * s)
    return np.einsum("ka,ja,a->kj", s[None, :] ** np.arange(4)[:, None],
                     inv[None, :] ** np.arange(3)[:, None], h)


@dataclass(frozen=True)
class SpectralPooledState:
    """The global fixed point: per group ``alpha``, ``rho``, ``mu``, ``eps``; ``v``, ``E``,
    ``F``, the integrals ``J`` and ``Dbar``; solver diagnostics. ``kappa``: per group
    ``||w_j||_Sigma``."""

    alpha: np.ndarray
    rho: np.ndarray
    mu: np.ndarray
    eps: np.ndarray
    v: float
    E: float
    F: float
    J: np.ndarray
    kappa: np.ndarray
    Dbar: float
    iterations: int
    residual: float


def _views(x, fed: Federation, spectrum, lam_g, rules):
    """Per group: the moments at ``x`` and the implied ``alpha``, ``rho^2`` (``_rho2``), ``v``."""
    G = fed.gamma.size
    alpha, rho = x[:G], np.exp(np.clip(x[G:2 * G], -60, 30))
    v = float(np.exp(np.clip(x[2 * G], -60, 30)))
    mu = fed.W * v
    m = np.array([rule.moments(alpha[c], rho[c], mu[c], derivatives=False)[0]
                  for c, rule in enumerate(rules)])
    D, E2, E3 = m.T
    kappa = np.sqrt((fed.signal ** 2 + fed.r ** 2) * spectrum.mean)
    pi, cnt, S2 = fed.pi, fed.count, fed.signal ** 2
    eps = np.divide(E3 + alpha * D, kappa, out=np.zeros(G), where=kappa > 0)
    J = integrals(spectrum, lam_g, float(np.sum(cnt * pi * D)))
    E = float(np.sum(cnt * pi * eps))
    F = float(np.sum(cnt * pi * pi * fed.gamma * E2 / mu ** 2))
    cross = E * S2 + pi * eps * fed.r ** 2
    alpha_new = np.divide(J[2, 1] * cross, kappa, out=np.zeros(G), where=kappa > 0)
    Dbar = float(np.sum(cnt * pi * D))
    return dict(alpha=alpha_new, rho2=_rho2(fed, spectrum, lam_g, Dbar, J, E, F, eps, cross),
                v=J[1, 1], mu=mu, eps=eps, E=E, F=F, J=J, kappa=kappa, Dbar=Dbar)


def _rho2(fed, spectrum, lam_g, Dbar, J, E, F, eps, cross):
    """``rho_l^2 = w_g' Sigma w_g - alpha_l^2`` (module docstring, step 4) per group as a sum
    of squares: in the plane of ``(w_0, u_l)`` the teachers' part across ``w_l``, ``J_32 S^2
    r_l^2 (E - pi_l eps_l)^2 / K_l``, and along it ``V cross_l^2 / K_l`` (``K_l = S^2 +
    r_l^2``, ``V = J_32 - J_21^2 / J_10 = <s (f - J_21/J_10)^2>``, ``f = s / (lam_g + Dbar
    s)``); the other clients' directions ``J_32 pi_j^2 eps_j^2 r_j^2``; the noise ``F J_22``.
    The difference lost a near-infinite-data client's digits (``rho`` of order
    ``sqrt(gamma)``)."""
    S2, r2, cnt = fed.signal ** 2, fed.r ** 2, fed.count
    s, h = spectrum.atoms, spectrum.weights
    f = s / (lam_g + Dbar * s)
    V = float(np.sum(h * s * (f - J[2, 1] / J[1, 0]) ** 2))
    K = S2 + r2
    across = np.divide(J[3, 2] * S2 * r2 * (E - fed.pi * eps) ** 2 + V * cross ** 2, K,
                       out=np.zeros(K.shape), where=K > 0)
    own = (fed.pi * eps) ** 2 * r2
    others = (cnt[None, :] - np.eye(cnt.size)) @ own
    return across + J[3, 2] * others + F * J[2, 2]


def residuals(x, fed, spectrum, lam_g, rules):
    G = fed.gamma.size
    w = _views(x, fed, spectrum, lam_g, rules)
    rho = np.exp(np.clip(x[G:2 * G], -60, 30))
    return np.concatenate([x[:G] - w["alpha"],
                           np.log(rho) - 0.5 * np.log(np.maximum(w["rho2"], 1e-300)),
                           [x[2 * G] - np.log(w["v"])]])


def _root(x0, fed, spectrum, lam_g, rules, deadline=None):
    from scipy.optimize import root

    # global_lam = 0 just inside the pooled separability threshold ran past 60 s with
    # max_seconds = 3 (Sigma = I refuses along its path).
    sol = root(by_deadline(residuals, deadline), x0, args=(fed, spectrum, lam_g, rules),
               method="hybr", options={"xtol": 1e-13})
    if not np.all(np.isfinite(sol.x)):
        return sol.x, np.inf, sol.nfev
    return sol.x, float(np.max(np.abs(residuals(sol.x, fed, spectrum, lam_g, rules)))), \
        sol.nfev


def _root_resolved(x0, fed, spectrum, lam_g, nodes, deadline=None):
    G = fed.gamma.size
    kappa = np.sqrt((fed.signal ** 2 + fed.r ** 2) * spectrum.mean)

    def rules_at(x, margin=SCALE_MARGIN):
        rho = np.exp(np.clip(x[G:2 * G], -60, 30))
        return [Rule.at(k, nodes, x[c], rho[c], margin) for c, k in enumerate(kappa)]
    return solve_resolved(lambda x, rules: _root(x, fed, spectrum, lam_g, rules, deadline),
                          rules_at, np.asarray(x0, float))


def _start(fed: Federation, spectrum, lam_g, sweeps: int = 3):
    """Large-ridge start: ``w_g`` small, along the mean gradient at 0, then ``sweeps`` sweeps
    of the fixed-point map (the views' ``alpha``, ``alpha^2 + rho^2`` and ``v``), which
    contracts at a large ridge: the guessed ``rho`` alone could send the root finder off
    (measured gamma = 0.2 x 5 clients, signal 2, r 0.5, powerlaw:1,50 at global_lam = 100:
    log rho -6.7 against the root's -4.4; hybr ran to log rho = 600)."""
    m1 = spectrum.mean
    kappa = np.sqrt((fed.signal ** 2 + fed.r ** 2) * m1)
    v = m1 / (lam_g + 0.25 * m1)
    alpha = 0.25 * m1 * kappa / (lam_g + 0.25 * m1) * 0.5
    rho = np.maximum(0.5 * alpha, 1e-3)
    x = np.concatenate([alpha, np.log(rho), [np.log(v)]])
    G = fed.gamma.size
    for _ in range(sweeps):
        try:
            rules = [Rule.at(k, PATH_NODES, x[c], np.exp(x[G + c]))
                     for c, k in enumerate(kappa)]
            w = _views(x, fed, spectrum, lam_g, rules)
        except SolverError:
            break
        rho2 = w["rho2"]
        if not (np.all(rho2 > 0) and np.all(np.isfinite(rho2)) and w["v"] > 0):
            break
        x = np.concatenate([w["alpha"], 0.5 * np.log(rho2), [np.log(w["v"])]])
    return x


def _step(x0, fed, spectrum, lam_g, deadline=None):
    """One continuation step on the coarse rule: ``(x, residual, evaluations)``, the residual
    infinite where the iterate outgrew every quadrature rule (``gaussian.MAX_RULE_NODES``)."""
    try:
        return _root_resolved(x0, fed, spectrum, lam_g, PATH_NODES, deadline)[0]
    except SolverError:
        return x0, np.inf, 0


def solve_pooled_spectral(fed: Federation, spectrum, lam_g: float,
                          deadline=None) -> SpectralPooledState:
    """The global fixed point, by continuation in ``lam_g`` from 100 by factors of
    ``LAM_RATIO`` on a coarse rule (as ``pooled.solve_pooled``), then the quadrature ladder;
    ``deadline.Overtime`` from the first residual evaluated past ``deadline``
    (``time.perf_counter``'s clock; None: no limit).

    Raises
    ------
    SolverError
        A step does not reach ``TOL``, or the quadrature does not settle.
    """
    # Factors of sqrt(10): the steps of 10 of ``pooled`` lose heterogeneous federations here
    # (measured: gamma = (1, 2, 2), r = (0.5, 1, 1), uniform weights, no root at lam_g = 1).
    lams = ladder(lam_g, LAM_RATIO)
    x, nfev = _start(fed, spectrum, lams[0]), 0
    for lam_k in lams:
        x_k, err, n = _step(x, fed, spectrum, lam_k, deadline)
        nfev += n
        if not err <= TOL:
            # From the previous step's point the root finder can run off along rho -> 0
            # (log rho clipped, a flat residual): measured gamma = 0.05 x 3 clients, signal
            # 2.77, r 0.78, spectrum scaled:1.0001, stuck at global_lam = 10 with log rho =
            # -1.5e4; the large-ridge start at this global_lam finds the root.
            x_k, err, n = _step(_start(fed, spectrum, lam_k), fed, spectrum, lam_k, deadline)
            nfev += n
        x = x_k
        if not err <= TOL:
            step = "" if lam_k == lam_g else (
                f" (a step of the continuation from global_lam = {lams[0]:g} down to the "
                f"global_lam = {lam_g:g} asked)")
            raise SolverError(f"logistic global model with a spectrum: no convergence at "
                              f"global_lam = {lam_k:g}{step} (residual {err:.2e})")
    x_fine, err, n, fine = settle(
        lambda x, nodes: _root_resolved(x, fed, spectrum, lam_g, nodes, deadline), x,
        "logistic global model with a spectrum")
    nfev += n
    G = fed.gamma.size
    w = _views(x_fine, fed, spectrum, lam_g, fine)
    return SpectralPooledState(x_fine[:G].copy(), np.exp(x_fine[G:2 * G]), w["mu"], w["eps"],
                               float(np.exp(x_fine[2 * G])), w["E"], w["F"], w["J"],
                               w["kappa"], w["Dbar"], nfev, err)


def global_products(fed: Federation, st: SpectralPooledState):
    """Euclidean ``(w_g.w_0, w_g.w_c per group, ||w_g||^2)`` (module docstring)."""
    S2, J = fed.signal ** 2, st.J
    spread = float(np.sum(fed.count * (fed.pi * st.eps * fed.r) ** 2))
    w_w0 = st.E * S2 * J[1, 1]
    w_wc = J[1, 1] * (st.E * S2 + fed.pi * st.eps * fed.r ** 2)
    norm2 = J[2, 2] * (st.E ** 2 * S2 + spread) + st.F * J[1, 2]
    return w_w0, w_wc, norm2


#: ``_cached``'s memory: at most ``MEMORY`` global models, the oldest forgotten first.
_SOLVED: dict = {}
MEMORY = 16


def _cached(gamma, r, count, signal, weights, spectrum, lam_g, deadline=None):
    """``solve_pooled_spectral``, remembered: the methods of one federation share its global
    model (a pure function of these arguments but ``deadline``, which is not part of the key;
    a ``Spectrum`` hashes by identity)."""
    key = (gamma, r, count, signal, weights, spectrum, lam_g)
    if key not in _SOLVED:
        state = solve_pooled_spectral(Federation(np.array(gamma), np.array(r), np.array(count),
                                                 signal, weights), spectrum, lam_g, deadline)
        if len(_SOLVED) >= MEMORY:
            del _SOLVED[next(iter(_SOLVED))]
        _SOLVED[key] = state
    return _SOLVED[key]


def client_views(fed: Federation, spectrum, lam_g: float, method: str = "fedavg", lam=None,
                 groups=None, deadline=None):
    """Every group's limits (``groups``: the groups wanted, default all) for ``method``:
    ``"fedavg"`` (the global model itself), ``"rtfa"`` (fine-tuning toward it with penalty
    ``lam``, ``riskcalc.logistic.spectrum.finetune``) or ``"pfedme"`` (the joint objective,
    ``riskcalc.logistic.spectrum.fedprox``; the global fields stay FedAvg's, as without a
    spectrum). Per group a dict of ``risk``, ``sigma_risk``, ``cosine_uncentred``, ``test_logloss``, ``test_error``, ``a``, ``rho``; and
    ``(overlap w_g.w_0 / S^2, ||w_g - w_0||^2, iterations, residual)``. ``deadline``: every
    solve's (``solve_pooled_spectral`` and the method's)."""
    from riskcalc.logistic.broadcast import test_errors
    from riskcalc.logistic.spectrum.fedprox import solve_fedprox_spectral
    from riskcalc.logistic.spectrum.finetune import Coupling, solve_finetune_spectral

    st = _cached(tuple(fed.gamma), tuple(fed.r), tuple(fed.count), fed.signal, fed.weights,
                 spectrum, lam_g, deadline)
    w_w0, w_wc, norm2 = global_products(fed, st)
    K2, S2 = fed.signal ** 2 + fed.r ** 2, fed.signal ** 2
    rows, iterations, residual = {}, st.iterations, st.residual
    if method == "pfedme":
        px_alpha, px_rho, _, (px_th, px_w), n, res = solve_fedprox_spectral(
            fed, spectrum, lam, lam_g, np.concatenate([st.alpha, np.log(st.rho)]), deadline)
        first = np.searchsorted(np.repeat(np.arange(fed.gamma.size), fed.count),
                                np.arange(fed.gamma.size))
        iterations, residual = iterations + n, max(residual, res)
    for c in range(fed.gamma.size) if groups is None else groups:
        kappa = float(st.kappa[c])
        if method == "rtfa":
            ft = solve_finetune_spectral(Coupling(fed, st, c, spectrum, lam_g), lam, deadline)
            a, rho = ft["a"], ft["rho"]
            row = {k: ft[k] for k in ("risk", "sigma_risk", "cosine_uncentred")}
            iterations, residual = iterations + ft["iterations"], max(residual, ft["residual"])
        else:
            # The global model itself, or client c's w_j of the joint objective: its view of
            # block c and the Euclidean products w.w_c and ||w||^2.
            if method == "fedavg":
                a, rho, w_th, w_w = float(st.alpha[c]), float(st.rho[c]), w_wc[c], norm2
            else:
                j = first[c]
                a, rho, w_th, w_w = float(px_alpha[j]), float(px_rho[j]), px_th[j], px_w[j]
            row = dict(risk=float(w_w - 2.0 * w_th + K2[c]),
                       sigma_risk=float((a - kappa) ** 2 + rho ** 2),
                       cosine_uncentred=float(w_th / np.sqrt(w_w * K2[c]))
                       if w_w * K2[c] > 0 else float("nan"))
        rule = Rule.at(kappa, NODES[-1], a, rho)
        row.update(test_logloss=rule.expect(np.logaddexp(0.0, -(a * rule.s + rho * rule.g))),
                   test_error=float(test_errors(kappa, a, rho)[0]), a=a, rho=rho)
        rows[c] = row
    overlap = w_w0 / S2 if S2 > 0 else float("nan")
    return rows, (float(overlap), float(norm2 - 2.0 * w_w0 + S2), iterations, residual)
