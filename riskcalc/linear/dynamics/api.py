"""``rounds_limit``: the public face of the dynamics room (its tuning, ``optimal_rounds`` and
``rounds_to_eps``, in ``riskcalc.linear.dynamics.tuning``).

Contract: ``../shared/DESIGN.md``, "Contracts added in the fourth round" (training dynamics);
issue 29. FedAvg with K local full-batch gradient steps (``fedavg``, Sigma = I; with a shared
covariance spectrum: ``sigma.fedavg.one_step`` for K = 1, ``sigma.fedavg.curves`` for K >= 2,
the own models ``sigma.fedavg.own``) and paper 004's Algorithm 1 (``pfedme``/``fedprox``) with
exact local solves (K = inf, eq. 10, ``prox_laws``) or K < inf warm-started local steps (eq.
11, ``algorithm1.curves``); with a shared spectrum and exact local solves ``prox_sigma``
(server and own models), with K < inf local steps ``sigma.algorithm1.curves``; under covariate
shift FedAvg's server model with K = 1 (``shift.one_step``), K >= 2 (``shift.curves``) and K =
inf (``shift.kinf``), its clients' own models (``shift.own``) and personalization after round
T (``shift.personalize``), Algorithm 1 with K < inf (``shift.algorithm1``) and K = inf
(``shift.algorithm1.prox``); FedAvg's K = inf with a spectrum: ``sigma.fedavg.exact``.
Covariate shift beyond that, client sampling, minibatch SGD and logistic dynamics are not
covered yet (each is refused with a message saying so). The result: ``result.RoundsLimit``.
"""

from __future__ import annotations

import numpy as np

from riskcalc import solvers
from riskcalc.errors import SolverError
from riskcalc._validate import canonical_method, max_time, parameter
from riskcalc.linear.dynamics.sigma.budget import budgets, gigabytes
from riskcalc.linear.dynamics.inputs import (MIN_STEP_SIZE, check_memory_used, checked_steps,
                                             client_arrays, divergent_range, effective_steps,
                                             local_steps_count, rounds_array, rounds_notes,
                                             weight_vector)
from riskcalc.linear.dynamics.result import RoundsLimit, beyond_floats
from riskcalc.linear.engine.joint_spectrum import check_d_used
from riskcalc.spectrum import as_spectrum

#: Methods with rounds limits, by canonical name (``fedprox`` is an alias of ``pfedme``).
AVAILABLE = ("fedavg", "pfedme")


def _pencil_local(gam, r, sigma, p, signal, eta, g, rounds, spectrum):
    """FedAvg's K = 1 own models under a spectrum: ``sigma.fedavg.curves``'s (the pencil with one
    local step, ``riskcalc.linear.dynamics.sigma.fedavg.own``), solved on first use."""
    def local(terms=None):
        from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves
        from riskcalc.linear.dynamics.sigma.guards import pencil_work, unit_top

        pencil_work(spectrum, 1 + gam.size, rounds)
        kw = unit_top(spectrum, r, signal, eta)[0]
        return fedavg_sigma_k_curves(gam, kw["r"], sigma, p, kw["signal"], kw["eta"], 1, g,
                                     rounds, kw["spectrum"])["local"](terms)
    return local


def rounds_limit(method: str, *, gamma, r, sigma, signal, rounds, local_steps, step_size=None,
                 global_step=None, lam=None, weights="samples", spectrum=None, spectra=None,
                 max_seconds=None, max_gigabytes=None, d=None) -> RoundsLimit:
    """Exact limits of every client's risk along the rounds of federated training.

    ``fedavg``: ``local_steps`` = K full-batch gradient steps of size ``step_size`` = eta per
    round on f_j(w) = ||X_j w - y_j||^2 / (2 n_j), from the server model, which then moves by
    w <- w + g sum_j p_j (v_j - w). ``pfedme`` (alias ``fedprox``): paper 004's Algorithm 1
    (``004_98172ed3646eef14.txt``, Appendix B.1, eqs. 9-11) with exact local solves
    (K = inf: each client returns v_j = prox_{f_j / lam}(w), eq. 9; finite K: K gradient steps
    of size eta on h_j = f_j + lam/2 ||. - w||^2 warm-started at the client's previous model,
    eq. 11) and the server step
    w <- w - g lam sum_j p_j (w - v_j) (eq. 10, g = the paper's gamma; default 1 / lam, the
    paper's choice for its real data, which makes w the average of the v_j). Training starts at
    w = 0. Limit d, n_j -> inf with d / n_j -> gamma_j and M fixed, Sigma = I (``fedavg`` with
    finite ``local_steps``: any shared spectrum, ``riskcalc.linear.dynamics.sigma.fedavg.one_step``
    and ``riskcalc.linear.dynamics.sigma.fedavg.curves``).
    Derivation: ``riskcalc.linear.dynamics.fedavg``, ``riskcalc.linear.dynamics.prox_laws`` and
    ``riskcalc.linear.dynamics.algorithm1.curves`` (derived
    here; paper 003, ``003_4b976ddf5225c17e.txt``, eq. 6 is FedAvg's K = 1, T = inf limit and
    eq. 14 pFedMe's T = inf limit).

    Parameters
    ----------
    method : {"fedavg", "pfedme", "fedprox"}
    gamma, r, sigma : float or sequence of float
        Per-client d / n_j > 0, ||theta_j - theta_0|| >= 0 and noise level >= 0 (client 0
        first; scalars are shared).
    signal : float
        ||theta_0|| >= 0 (uniform direction).
    rounds : int, sequence of int, or numpy.inf
        Numbers of server updates T >= 0, each once (any order; inf: the fixed point, which
        must exist: contraction < 1; Algorithm 1's, the same for every K, by the exact prox
        where no finite round is asked: ``riskcalc.linear.dynamics.algorithm1.fixed_point``).
    local_steps : int or numpy.inf
        K >= 1 (inf: the exact local solve from the server model: FedAvg's min-norm local least
        squares, Algorithm 1's prox). With Sigma = I, more than 10^4 steps are taken as the
        exact local solve where they reach it to rounding, and refused otherwise.
    step_size : float, optional
        eta > 0, for finite K only (refused with inf); FedAvg with an even K: local GD
        stable, eta (1 + sqrt(gamma_j))^2 <= 2 for every client (with a spectrum, any K >= 2:
        eta times the top of each client's sample spectrum); with an odd K (Sigma = I) a
        divergent local step is a result (``converges`` False); Algorithm 1: eta < 2 / (L + lam),
        L = max_j (1 + sqrt(gamma_j))^2 (with a spectrum the top of the clients' sample
        spectra); above 1 / (L + lam) (paper 004 Thm 2's condition) with an odd K and
        global_step > 1 / lam the round map has complex eigenvalues, inside a disk
        (``riskcalc.linear.dynamics.algorithm1.fold``; with a spectrum
        ``riskcalc.linear.dynamics.sigma.algorithm1.circles``). Algorithm 1 when the pooled
        samples do not span R^d (sum_j min(1, 1/gamma_j) < 1): eta <= 1 / (L + lam) and
        global_step * lam <= 1 (``riskcalc.linear.dynamics.algorithm1.pooled`` and its
        spectrum and covariate-shift routes). Unused for K = inf.
    global_step : float, optional
        g > 0 (default 1 for FedAvg, 1 / lam for Algorithm 1).
    lam : float, optional
        Algorithm 1's proximal penalty lam > 0 (required for ``pfedme``; FedAvg has none), at
        most 1e6 times the top of the clients' sample spectra.
    weights : {"samples", "uniform"} or sequence of float
        p_j = n_j / N, 1/M, or given positive numbers (normalized).
    spectrum : riskcalc.Spectrum, optional
        Covariance spectrum H shared by the clients, uniform signal directions; the risk is
        E[(w - theta_j)^T Sigma (w - theta_j)]. Other than the identity: ``fedavg`` with finite
        ``local_steps`` (``riskcalc.linear.dynamics.sigma.fedavg.one_step``, K = 1;
        ``riskcalc.linear.dynamics.sigma.fedavg.curves``, K >= 2, within its time estimate and
        local steps stable under the spectrum; ``local_risk``, the own models:
        ``riskcalc.linear.dynamics.sigma.fedavg.own``; ``personalized_risk``:
        ``riskcalc.linear.dynamics.sigma.personalize_sigma``); ``fedavg`` with
        ``local_steps=numpy.inf`` (``riskcalc.linear.dynamics.sigma.fedavg.exact``: the server
        and own models; no client with gamma_j = 1);
        ``pfedme`` with ``local_steps=numpy.inf``, the own models (``risk``) and the server
        model (``global_risk``) (``riskcalc.linear.dynamics.sigma.prox_sigma``;
        ``personalized_risk``: ``riskcalc.linear.dynamics.sigma.personalize_sigma``); with
        finite ``local_steps`` (``riskcalc.linear.dynamics.sigma.algorithm1.curves``,
        M K^2 <= 200, step_size as above with L the largest top of the clients' sample
        spectra; ``personalized_risk`` is refused).
    spectra : str, array_like or sequence of them, optional
        Covariate shift (instead of ``spectrum``): each client's covariance, diagonal in one
        shared basis, as ``clients_limit`` takes it; client j's risk in its own covariance.
        ``fedavg``, the server model (``riskcalc.linear.dynamics.shift.kinf``, K = inf: the
        server model, ``local_risk`` and ``personalized_risk``, gamma_j away from 1; any
        pooled N != d throughout); ``riskcalc.linear.dynamics.shift.one_step``, K = 1 (pooled
        N < d: the pencil of ``shift.curves`` with one local step);
        ``riskcalc.linear.dynamics.shift.curves``, K >= 2: the dense pencil
        ``shift.pencil`` for M K^2 <= 100, its chain structure ``shift.chain`` beyond, within
        their time estimates, local steps stable under each client's covariance); ``local_risk``
        (``riskcalc.linear.dynamics.shift.own``, M K^2 <= 200; ``shift.own_chain`` beyond, on the
        chain route within its time estimate); ``personalized_risk``
        (``riskcalc.linear.dynamics.shift.personalize``; ``shift.personalize_chain`` likewise
        beyond M (K + k)^2 = 200); ``pfedme`` with finite
        ``local_steps``, the server and own models
        (``riskcalc.linear.dynamics.shift.algorithm1.curves``: the dense pencil for M K^2 <= 200,
        its chain structure ``shift.algorithm1.chain`` beyond, within its time estimate; real
        spectrum, step_size as with a spectrum; pooled N < d: ``shift.algorithm1.pooled``,
        the dense pencil only, within the pooled scope of ``step_size``;
        ``personalized_risk``: ``shift.algorithm1.personalize``, M K^2 <= 200); with
        ``local_steps=numpy.inf``
        (``riskcalc.linear.dynamics.shift.algorithm1.prox``, any pooled N != d;
        ``personalized_risk`` there too, M (1 + k)^2 <= 200); equal spectra are ``spectrum``.
    d : int, optional
        The dimension (>= 1), for ``powerlaw:P`` (its size) or ``file:PATH`` (checked
        against its eigenvalues) in ``spectrum`` or ``spectra``; refused otherwise.
    max_seconds : float, optional
        The most seconds of estimated work the routes under a spectrum may take, for the curves
        and for the result's ``local_risk`` and ``personalized_risk`` (each is estimated before
        it solves and refused beyond, naming what would fit); default: each route's own limit
        (600 s for the chain routes, 120 s for the dense pencil and the personalization;
        ``riskcalc.linear.dynamics.sigma.budget``). With Sigma = I the curves with finite K
        are (120 s by default): Algorithm 1's before their contours and before each finer
        quadrature rule (at a very small eta lam their nodes grow like 1 / sqrt(1 - top),
        ``riskcalc.linear.dynamics.algorithm1.cost``), FedAvg's before its edge solve and on
        its contour's nodes (``riskcalc.linear.dynamics.client_laws.check_root_work``).
    max_gigabytes : float, optional
        The most estimated peak memory (GB) the same routes may add to the process, likewise
        (default 4; inf: no limit; the estimates, fitted to measured peaks, in
        ``riskcalc.linear.dynamics.sigma.memory`` and, Sigma = I, ``riskcalc.linear.dynamics.
        algorithm1.cost``); refused where no route estimates it (Sigma = I: FedAvg, K = inf).

    Returns
    -------
    RoundsLimit
        Arrays of shape (M, len(rounds)); values beyond 1e300 of a diverging iteration are inf.

    Raises
    ------
    ValueError
        Bad input, a method or spectrum not covered, the fixed point of a diverging iteration,
        or the round map's spectrum reaching 0 (pooled N = d: sum_j 1/gamma_j = 1).
    SolverError
        When the subordination solve fails (inputs beyond floating point reach).

    Examples
    --------
    >>> res = rounds_limit("fedavg", gamma=[0.5, 2.0], r=0.5, sigma=0.5, signal=1.0,
    ...                    rounds=[0, 10, np.inf], local_steps=5, step_size=0.2)
    >>> res.risk.shape
    (2, 3)
    """
    # The call itself: a pickled result solves it again for its lazy parts (``result.Again``).
    call = (rounds_limit, method,
            dict(gamma=gamma, r=r, sigma=sigma, signal=signal, rounds=rounds,
                 local_steps=local_steps, step_size=step_size, global_step=global_step, lam=lam,
                 weights=weights, spectrum=spectrum, spectra=spectra, max_seconds=max_seconds,
                 max_gigabytes=max_gigabytes, d=d))
    name = canonical_method(method)
    if name not in AVAILABLE:
        raise ValueError(f"method must be one of fedavg, pfedme (alias fedprox) for rounds "
                         f"limits; got {method!r}")
    joint = None
    check_d_used(d, spectrum, spectra)     # was taken and dropped (fuzz row 12)
    if spectra is not None:
        from riskcalc.linear.dynamics.inputs import shift_inputs

        client_arrays(gamma, r, sigma)  # their lengths before the spectra's count (was: gamma
        # of 3 beside r, sigma of 2 reported as "spectra lists 2 client spectra for 3 clients")
        # Algorithm 1 under shift (finite K, and K = inf: ``shift.algorithm1.prox``) takes
        # FedAvg's inputs with one local step (``shift.algorithm1``).
        alg1 = name == "pfedme"
        spectrum, joint, specs = shift_inputs("fedavg" if alg1 else name, spectra, spectrum,
                                              gamma, 1 if alg1 else local_steps, d)
    spectrum = as_spectrum(spectrum, d=d)
    shared = spectrum is not None and not (spectrum.is_identity and spectrum.signal_is_uniform)
    if shared and not spectrum.signal_is_uniform:
        raise ValueError("spectrum: rounds limits need uniform signal directions (a spectrum "
                         "with signal_weights is not covered)")
    gam, rr, sig = client_arrays(gamma, r, sigma)
    s = float(parameter("signal", signal, ndim=0))
    T = rounds_array(rounds)
    K = local_steps_count(local_steps)
    p = weight_vector(weights, gam)
    eta, lam, g, inv = checked_steps(name, gam, K, step_size, lam, global_step, shared,
                                    spectrum, joint)
    check_memory_used(max_gigabytes, name, K, shared or joint is not None)
    from riskcalc.linear.dynamics import ROUTES
    from riskcalc.linear.dynamics.sigma import prox_sigma
    from riskcalc.linear.dynamics.algorithm1.contours import check_top_gap
    from riskcalc.linear.dynamics.algorithm1.fixed_point import unresolved_top
    from riskcalc.linear.dynamics.sigma.guards import (found_reach, pencil_guard, prox_scale,
                                                       spectrum_cause, unit_top)

    def reach_top(gam, lam, eta, K, gl, T, top):    # Algorithm 1, K steps: finite rounds asked
        if np.any(np.isfinite(T) & (T > 0)):
            check_top_gap(gam, lam, eta, K, gl, top)

    budget = max_time("max_seconds", max_seconds), gigabytes(max_gigabytes)
    cause = ((spectrum.atoms, False) if shared else
             (None, False) if joint is None else (joint.values, True))
    slow = None if name != "pfedme" else unresolved_top(     # (fuzz41 path F2)
        gam, lam, eta, K, g, T, cause[0] if cause[0] is None else np.max(cause[0]))
    Kr, gr = (np.inf, 1.0 / lam) if slow else (K, g)    # T = inf alone near 1: the prox's
    if name == "pfedme" and not shared and joint is None:     # K >= 1000 at the prox to rounding
        Kr = effective_steps(Kr, eta, gam, lam)
    with solvers.record() as diagnostics, beyond_floats(), spectrum_cause(
            gam, *cause), budgets(*budget):
        if name == "pfedme" and joint is not None and np.isinf(Kr):
            from riskcalc.linear.dynamics.shift.algorithm1.prox import shift_prox_curves

            out = shift_prox_curves(gam, rr, sig, p, s, lam, gr, T, joint)
        elif name == "pfedme" and joint is not None:
            from riskcalc.linear.dynamics.shift.algorithm1.curves import shift_alg1_curves

            reach_top(gam, lam, eta, K, g * lam, T, float(np.max(joint.values)))
            u, back = unit_top(joint, rr, s, eta, lam, g)        # (fuzz40 scale F5)
            out = back(shift_alg1_curves(gam, u["r"], sig, p, u["signal"], u["lam"], u["eta"], K,
                                         u["g"], T, u["spectrum"]))
        elif name == "pfedme" and np.isfinite(Kr) and shared:
            from riskcalc.linear.dynamics.sigma.algorithm1.curves import (
                algorithm1_sigma_k_curves)

            # The edge scans share pencil_edges' reach near 0: the exact-prox check refuses
            # spectra whose small band they would miss (atoms (1e-4, 1): contraction 0.95
            # reported where directions of eigenvalue 1e-4 barely move).
            reach_top(gam, lam, eta, K, g * lam, T, float(np.max(spectrum.atoms)))
            pencil_guard(spectrum, gam, p, T, lam=lam)
            kw, back = unit_top(spectrum, rr, s, eta, lam, g)
            out = back(algorithm1_sigma_k_curves(gam, kw["r"], sig, p, kw["signal"], kw["lam"],
                                                 kw["eta"], K, kw["g"], T, kw["spectrum"]))
        elif name == "pfedme" and np.isfinite(Kr):
            from riskcalc.linear.dynamics.algorithm1.identity import algorithm1_identity

            out = algorithm1_identity(gam, rr, sig, p, s, lam, eta, K, g, T)
        elif name == "pfedme" and shared and prox_sigma.takes_projection(gam, spectrum, lam):
            from riskcalc.linear.dynamics.sigma.fedavg.exact import fedavg_exact_curves
            from riskcalc.linear.dynamics.sigma.guards import pencil_work

            pencil_work(spectrum, 1 + 2 * gam.size, T)
            out = fedavg_exact_curves(gam, rr, sig, p, s, gr * lam, T, spectrum)
        elif name == "pfedme" and shared:
            from riskcalc.linear.dynamics.sigma.prox_sigma import prox_sigma_curves

            reach = pencil_guard(spectrum, gam, p, T, lam=lam)
            try:
                out = prox_sigma_curves(gam, rr, sig, p, s, lam, gr, T, spectrum)
            except (SolverError, ValueError) as exc:
                prox_scale(exc, lam, spectrum)
            found_reach(out, *reach)
        elif name == "pfedme":
            out = ROUTES[name](gam, rr, sig, p, s, lam, gr, T)
        elif joint is not None and np.isinf(K):
            from riskcalc.linear.dynamics.shift.kinf import shift_kinf_curves

            out = shift_kinf_curves(gam, rr, sig, p, s, g, T, joint)
        elif joint is not None and K == 1 and inv > 1.0:    # pooled N < d: the pencil below
            from riskcalc.linear.dynamics.shift.one_step import shift_curves
            from riskcalc.linear.dynamics.shift.curves import one_step_extras

            u, back = unit_top(joint, rr, s, eta)                # (fuzz40 scale F5)
            args = (gam, u["r"], sig, p, u["signal"], u["eta"], g, T, u["spectrum"])
            out = shift_curves(*args)
            out = back({**out, **one_step_extras(*args)})
        elif joint is not None:
            from riskcalc.linear.dynamics.shift.curves import shift_k_curves

            u, back = unit_top(joint, rr, s, eta)                # (fuzz40 scale F5)
            out = back(shift_k_curves(gam, u["r"], sig, p, u["signal"], u["eta"], K, g, T,
                                      u["spectrum"]))
        elif (shared and spectrum.identity_scale is not None and np.isfinite(K)
              and eta * spectrum.identity_scale >= MIN_STEP_SIZE):
            # Sigma = c I is Sigma = I with step c eta, models times sqrt(c): the pencils lost
            # the own models below eta c ~ 1e-4 (fuzz40 scale F1); below Sigma = I's step
            # floor (K = 1 only: scaled:1e-100 at step 0.1) the spectrum routes answer.
            c = spectrum.identity_scale
            out = ROUTES[name](gam, rr * np.sqrt(c), sig, p, s * np.sqrt(c), eta * c,
                              effective_steps(K, eta * c, gam), g, T)
            out["distance"] = out["distance"] / c
        elif shared and np.isinf(K):
            from riskcalc.linear.dynamics.sigma.fedavg.exact import fedavg_exact_curves
            from riskcalc.linear.dynamics.sigma.guards import pencil_work

            pencil_work(spectrum, 1 + 2 * gam.size, T)
            out = fedavg_exact_curves(gam, rr, sig, p, s, g, T, spectrum)
        elif shared and K == 1:
            from riskcalc.linear.dynamics.sigma.fedavg.one_step import fedavg_sigma_curves
            from riskcalc.linear.dynamics.sigma.guards import one_step_work

            one_step_work(spectrum, T)
            out = fedavg_sigma_curves(gam, rr, sig, p, s, eta, g, T, spectrum)
            # The own models read rows of sigma_pencil's inverse (K = 1 is its smallest case).
            out["local"] = _pencil_local(gam, rr, sig, p, s, eta, g, T, spectrum)
        elif shared:
            from riskcalc.linear.dynamics.sigma.fedavg.curves import fedavg_sigma_k_curves

            reach = pencil_guard(spectrum, gam, p, T, eta=eta, K=K)
            kw, back = unit_top(spectrum, rr, s, eta)
            out = back(fedavg_sigma_k_curves(gam, kw["r"], sig, p, kw["signal"], kw["eta"], K, g,
                                             T, kw["spectrum"]))
            found_reach(out, *reach)
        else:
            try:
                out = ROUTES[name](gam, rr, sig, p, s, eta, effective_steps(K, eta, gam), g, T)
            except (ValueError, SolverError) as exc:
                divergent_range(exc, name, gam, eta, K)
    rho = (slow or out)["contraction"]
    converges = bool(rho < 1.0)
    # The server's step on D's spectrum [a, b] (``edges``): FedAvg's g, the exact prox's g lam
    # (was g: lam 100, global_step 0.5 under a spectrum, contraction 2.9, was said to "round
    # to 1"); Algorithm 1 with K local steps reports the round map's own spectrum (K >= 1000
    # solved as the exact prox: its g lam; was converges: false at global_step 1e-17).
    step = g if name == "fedavg" else g * lam if np.isinf(Kr) else None
    rounded = step is not None and step * out["edges"][1] < 2.0
    if np.any(np.isinf(T)) and not converges and rounded:
        # rho = 1 - g a rounded to 1 (global_step 1e-300 was said to diverge "the global step
        # times the top ... >= 2", which it is not).
        raise ValueError(f"rounds=inf: the contraction 1 - g a rounds to 1 (global step "
                         f"{'g lam' if name == 'pfedme' else 'g'} = {step:.3g} times the "
                         f"bottom a = {out['edges'][0]:.3g} of the round map's "
                         "spectrum is below double precision), so the fixed point is not "
                         "reached in any number of rounds; raise global_step or step_size")
    if np.any(np.isinf(T)) and not converges:
        raise ValueError(f"rounds=inf: the iteration diverges (contraction {rho:.6g} >= 1: "
                         "the global step times the top of the round map's spectrum >= 2), so "
                         "it has no limit; lower global_step or step_size")
    # The map contracts iff 0 < g a and g b < 2 (a > 0 here): rho = 1 - g a rounds to 1
    # below g a ~ 1e-16 (global_step 1e-300 was reported "converges: false"; so was the exact
    # prox's until fuzz40 path F3).
    converges = converges or rounded
    server = out["bias"] + out["variance"]
    if name == "pfedme":  # .risk: the client's own model (DESIGN.md, round 4)
        with budgets(*budget):
            bias, variance = out["local"]()
    else:
        bias, variance = out["bias"], out["variance"]
    risk = bias + variance
    params = {"gamma": gam.tolist(), "r": rr.tolist(), "sigma": sig.tolist(), "signal": s,
              "local_steps": K, "step_size": eta, "global_step": g,
              "weights": weights if isinstance(weights, str) else p.tolist()}
    if name == "pfedme":
        params["lam"] = lam
    if joint is not None:
        params["spectra"] = specs
    if shared:
        params["spectrum"] = {"atoms": spectrum.atoms.tolist(),
                              "weights": spectrum.weights.tolist()}
    diagnostics.update(edges=(slow or out)["edges"], atom_at_zero=out["atom"],
                       contour_nodes=out["nodes"])
    if out.get("memory") is not None:       # the route's estimated peak (bytes; ``budget``)
        diagnostics["memory_estimate"] = float(out["memory"])
    if out.get("contraction_is_bound"):     # Algorithm 1, odd K above 1 / (L + lam)
        diagnostics["contraction_is_bound"] = True
    if name == "pfedme":  # the model ``risk`` measures
        diagnostics["risk_model"] = "own"
    result = RoundsLimit(name, params, T, bias, variance, risk, server, out["distance"], rho,
                         converges, diagnostics, out["local"], out.get("personalize"),
                         _budget=budget, _call=call,
                         notes=rounds_notes(gam, K, eta, lam, shared or joint is not None)
                         + ((slow["note"],) if slow else ()))
    if name == "pfedme":
        result._cache["local"] = risk
    return result
