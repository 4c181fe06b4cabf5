"""One federation's finite-M logistic limits under a covariance spectrum
(``riskcalc.logistic.finite_clients``, whose docstring names the fixed points and their
modules): ``_spectral_clients``, the spectral counterpart of ``point.solve_point``, the global
model and each wanted client's estimator by the call's deadline.
"""

from __future__ import annotations

import time

import numpy as np

from riskcalc.errors import SolverError
from riskcalc.logistic.blocks.fedprox import no_joint_root
from riskcalc.logistic.engine.deadline import Overtime, elapsed
from riskcalc.logistic.finite_clients.point import (ClientLimits, _federation, _group_limits,
                                                    pooled_lam)
from riskcalc.logistic.ranges import MLE_LAM
from riskcalc.logistic.result import QUANTITIES, LogisticClientsResult
from riskcalc.logistic.transition import mle_threshold
from riskcalc.logistic.work import overtime


#: Eigenvalues x distinct clients from which a spectral finite-M solve's time is mostly its
#: sums over the spectrum (~0.01-0.1 s per residual evaluation and ~200 evaluations at 1e6;
#: measured 1e4-3e5 atoms, 1-3 groups): its overtime names them, not the norms' growth
#: (powerlaw:0.5 at d = 5e6, 3 identical clients, said "norms grow as the penalties fall on
#: nearly separable data; give larger penalties" after 60 s).
MANY_ATOMS = 10 ** 6


def _spectral_clients(method, gam, rr, signal, lam, global_lam, weights, target, spectrum,
                      max_seconds=None):
    """``logistic_clients_limit`` with a spectrum (module docstring); the global model and
    the clients' own solves (local ridge, RTFA's local MLE at lam = 0: ``own``) by
    ``max_seconds`` (None: no limit)."""
    from riskcalc.logistic.spectrum.pooled import client_views

    clock = time.perf_counter()
    deadline = None if max_seconds is None else clock + max_seconds

    def own(c, lam):
        # lam = 0 just below the Candes-Sur threshold ran past 60 s with max_seconds = 2.
        try:
            return _group_limits(fed, None, c, "local_ridge", lam, spectrum, deadline=deadline)
        except Overtime:
            kappa = float(np.hypot(signal, fed.r[c]) * np.sqrt(spectrum.mean))
            raise overtime(float(fed.gamma[c]), signal, float(fed.r[c]), lam,
                           time.perf_counter() - clock, max_seconds, kappa) from None

    m = gam.size
    local = method == "local_ridge"
    fed, inverse = _federation(gam, rr, signal, weights, None)
    solve_lam = None if local else pooled_lam(gam, rr, signal, global_lam, np.sqrt(spectrum.mean))
    if not local and global_lam == 0.0:
        _federation(gam * 1.0, rr * np.sqrt(spectrum.mean), signal * np.sqrt(spectrum.mean),
                    weights, 0.0)           # separability of the whitened pool: raises
    wanted = np.arange(m) if target is None else np.array([target])
    groups = np.unique(inverse[wanted])
    iterations, residual, overlap, dist = 0, 0.0, None, None
    if local:
        per_group = {}
        for c in groups:
            per_group[c], _, res, _ = own(c, lam)
            residual = max(residual, res)
    else:
        # RTFA at lam = 0 is the local MLE whatever the centre (as without a spectrum); the
        # global model is still solved for its fields. Below MLE_LAM too when every target's
        # MLE exists (its threshold at ||w_i||_Sigma, as ``overtime``'s): 1e-300 failed "no
        # convergence at lam = 1.32158e-26" under two-point:1,4,0.5 at gamma [0.05, 0.1].
        kappa = np.hypot(signal, fed.r[groups]) * np.sqrt(spectrum.mean)
        mle = method == "rtfa" and (lam == 0.0 or (lam < MLE_LAM and all(
            g < mle_threshold(float(k)) for g, k in zip(fed.gamma[groups], kappa))))
        try:
            try:
                views, (overlap, dist, iterations, residual) = client_views(
                    fed, spectrum, solve_lam, "fedavg" if mle else method, lam, groups,
                    deadline)
            except SolverError as exc:
                if method != "pfedme":
                    raise
                raise no_joint_root(exc, fed, inverse, lam, lambda v: client_views(
                    fed, spectrum, solve_lam, method, v, groups, deadline),
                    spectrum.mean) from None
        except Overtime as exc:
            # global_lam = 0 just inside the pooled separability threshold: past 60 s with
            # max_seconds = 3; RTFA's fine-tuning and FedProx at lam = 1e-8 on separable data
            # took 9 and 14 s with max_seconds = 3 (the norms grow, unseen by the estimate).
            given = ", ".join(f"{k} = {v:g}" for k, v in (("lam", lam),
                                                          ("global_lam", global_lam))
                              if v is not None)
            atoms = int(spectrum.atoms.size)
            cause = ("the solutions' norms grow as the penalties fall on nearly separable "
                     "data; give larger penalties" if atoms * fed.gamma.size < MANY_ATOMS else
                     f"each residual evaluation sums over the spectrum's {atoms} distinct "
                     f"eigenvalues for each of {fed.gamma.size} distinct client"
                     f"{'s' * (fed.gamma.size > 1)}; give a spectrum of fewer distinct "
                     "eigenvalues (powerlaw:P,D with a smaller D)")
            raise ValueError(
                f"{method} under this spectrum ({given}) was still solving at max_seconds = "
                f"{max_seconds:g} {elapsed(time.perf_counter() - clock, max_seconds, exc)}: "
                f"{cause}, or raise max_seconds (in Python; --max-minutes on the command "
                "line)") from None
        per_group = {c: own(c, 0.0)[0] if mle else ClientLimits(**views[c]) for c in groups}
    rows = [per_group[inverse[j]] for j in wanted]
    values = {q: np.array([getattr(row, q) for row in rows]) for q in QUANTITIES}
    params = dict(gamma=gam.tolist(), r=rr.tolist(), signal=signal, lam=lam,
                  global_lam=global_lam, weights=weights, clients=m, targets=wanted.tolist(),
                  spectrum=spectrum.record())
    return LogisticClientsResult(method, params, **values,
                                 mean={q: float(np.mean(v)) for q, v in values.items()},
                                 global_overlap=overlap, global_dist=dist,
                                 iterations=int(iterations), residual=float(residual), notes=())
