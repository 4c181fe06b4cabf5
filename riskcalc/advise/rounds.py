"""Rounds and local steps as tuning (issue 30, item 5): FedAvg and pFedMe stopped early.

What people run is FedAvg stopped after T communication rounds of K local gradient steps
(``riskcalc.rounds_limit``, derived in ``riskcalc.linear.dynamics.fedavg``; paper 004,
``004_98172ed3646eef14.txt``, Sec. 5 and Cor. 1 discuss the rounds-versus-local-computation
trade-off). Early stopping in T is an implicit regularizer and K > 1 moves the fixed point
(client drift), so the best (T, K) can beat FedAvg's minimizer. For each weighting (samples,
uniform) and each K of ``LOCAL_STEPS`` the exact curve over T = 0..max_rounds is computed once,
and the (T, K) minimizing the mean risk is the candidate; training starts at w = 0, so the risk
depends on ||theta_0|| (``signal``). Step size eta = 0.9 * 2 / max_j (1 + sqrt(gamma_j))^2
(every client's local gradient descent stable), global step 1. With a shared covariance
spectrum, eta = 0.9 * 2 / max_j (the top edge of client j's limiting sample spectrum,
``weighted_mp.support_edges``: every client's local steps stable); K = 1
(``riskcalc.linear.dynamics.sigma.fedavg.one_step``, cheap) and the K >= 2 of ``LOCAL_STEPS``
whose exact curve (``riskcalc.linear.dynamics.sigma.fedavg.curves``: M K^2 unknowns per
contour node, at most 200) is estimated within ``SIGMA_K_ALLOWANCE`` seconds by
``sigma_k_seconds``; the candidate's notes name the K left out and why (K = inf, the exact
local solve: ``riskcalc.linear.dynamics.sigma.fedavg.exact``, ``shift.kinf`` under covariate
shift, is left out: advise has no estimate of its cost yet). Under covariate shift
the same K (the server model's exact curves: ``riskcalc.linear.dynamics.shift.one_step`` for
K = 1, ``shift.curves`` for K >= 2, whose pencils cost about what the shared spectrum's do)
with eta = 0.9 * 2 / max_j (the top edge of client j's limiting sample spectrum in its own
covariance), each curve also within ``SHIFT_ALLOWANCE`` seconds of the route's own estimate
(else skipped, said).

pFedMe stopped early (``pfedme_rounds_candidates``): paper 004's Algorithm 1 with exact prox
(``riskcalc.linear.dynamics.prox_laws``; a shared spectrum: ``sigma.prox_sigma``), T = 0..max_rounds at each pFedMe
candidate's lam and weights, each client's risk that of its personalized model; its T = inf
limit is the pFedMe candidate itself (paper 003 eq. 14 at finite M), so only T is searched here
(a joint (T, lam) search would cost a curve per lam).
"""

from __future__ import annotations

import numpy as np

from riskcalc.errors import SolverError

#: The numbers of local steps tried (inf: the exact local solve).
LOCAL_STEPS = (1, 2, 5, 10, 20, 50, np.inf)
#: eta as a share of the stability edge 2 / max_j (1 + sqrt(gamma_j))^2.
EDGE_SHARE = 0.9
#: Under a spectrum, seconds of one FedAvg curve with K >= 2 local steps over T rounds,
#: a + b (M K^2)^1.5 + c T M K^2 (measured, one thread, loaded 2-core machine, M clients
#: distinct, per weighting: K = 2, T = 50: 1.3 s at M = 2, 2.2-2.6 s at M = 5 (T = 10-50; 6.6 s
#: at T = 200), 5.3 s at M = 10, 22 s at M = 20; M = 5, T = 50: K = 3 4.2 s, K = 4 9.7 s, K = 5
#: 23 s, K = 6 48 s; the fit is 1.1-1.7x the measurements).
SIGMA_K_COST = (0.9, 0.025, 1.5e-3)
#: Most estimated seconds of one such curve for its K to be tried by ``advise``.
SIGMA_K_ALLOWANCE = 5.0
#: Under covariate shift, most estimated seconds of one curve by its route's own estimate
#: (``shift.cost``; the K >= 2 pencils' in ``shift.curves``): beyond it the curve is skipped,
#: said.
SHIFT_ALLOWANCE = 20.0


def sigma_k_seconds(m: int, K: int, max_rounds: int) -> float:
    """Estimated CPU seconds of one FedAvg curve with K >= 2 local steps under a spectrum
    (``SIGMA_K_COST``)."""
    a, b, c = SIGMA_K_COST
    size = m * K * K
    return a + b * size ** 1.5 + c * max_rounds * size


def spectrum_local_steps(m: int, max_rounds: int, shift: bool = False):
    """The K of ``LOCAL_STEPS`` tried under a spectrum, or under covariate shift (``shift``:
    the same pencils with per-client eigenvalues, at about the same cost), 1 and each K >= 2
    whose curve fits ``SIGMA_K_ALLOWANCE``, and a sentence naming the others (None when none
    is left out)."""
    from riskcalc.linear.dynamics.sigma.sigma_pencil import MAX_UNKNOWNS

    tried, left = [1], []
    for K in LOCAL_STEPS:
        if K == 1:
            continue
        if np.isinf(K) or m * K * K > MAX_UNKNOWNS:
            left.append(f"K = {'inf' if np.isinf(K) else int(K)} ("
                        + ("the exact local solve: its route under a spectrum, sigma.fedavg."
                           "exact (shift.kinf under covariate shift), has no cost estimate "
                           "advise reads yet" if np.isinf(K) else
                           f"M K^2 > {MAX_UNKNOWNS}: beyond the dense pencil whose cost advise "
                           "estimates") + ")")
            continue
        seconds = sigma_k_seconds(m, int(K), max_rounds)
        if seconds <= SIGMA_K_ALLOWANCE:
            tried.append(int(K))
        else:
            left.append(f"K = {int(K)} (estimated {seconds:.3g} s per curve, more than the "
                        f"{SIGMA_K_ALLOWANCE:g} s allowed)")
    if not left:
        return tuple(tried), None
    where, given = (("covariate shift", "--federation FILE") if shift else
                    ("the covariance spectrum", "--spectrum SPEC"))
    return tuple(tried), (f"local steps K in {{{', '.join(map(str, tried))}}} under {where}; "
                          f"left out: {'; '.join(left)}; riskcalc.rounds_limit (riskcalc "
                          f"predict fedavg --rounds T --local-steps K {given}) evaluates one")


def shift_top(fed) -> float:
    """Under covariate shift, the largest top edge of the clients' limiting sample spectra
    (client j's in its own covariance: ``weighted_mp.support_edges``); eta = EDGE_SHARE 2 / it
    keeps every client's local step stable, and the pooled map's too (A = sum_j p_j S_j)."""
    from riskcalc.linear.engine import weighted_mp
    from riskcalc.spectrum import Spectrum

    tops = {}
    for g, spec in zip(fed.gamma, fed.spectra):
        if (float(g), spec) not in tops:
            parsed = Spectrum.parse(spec, d=fed.d)
            tops[float(g), spec] = ((1.0 + np.sqrt(g)) ** 2 if parsed.is_identity
                                    else weighted_mp.support_edges(float(g), parsed)[1])
    return float(max(tops.values()))


def rounds_candidates(fed, signal: float, max_rounds: int, candidate, skipped) -> list:
    """The early-stopped FedAvg candidates (module docstring), one per weighting, named
    ``fedavg_rounds`` with tuning {rounds, local_steps (None: the exact local solve),
    step_size, global_step}.

    Parameters
    ----------
    fed : Federation
    signal : float
        ||theta_0|| >= 0.
    max_rounds : int
        The largest T considered, >= 1.
    candidate : callable
        The ``Candidate`` constructor of ``riskcalc.advise``.
    skipped : list
        Receives a sentence for each curve a route refuses.
    """
    from riskcalc.linear.dynamics import rounds_limit
    from riskcalc.linear.engine.joint_spectrum import d_if_used

    spectrum = (fed.spectrum if fed.spectrum is not None and not fed.spectrum.is_identity
                else None)
    shift = {}
    if fed.shift:
        top = shift_top(fed)
        steps, note = spectrum_local_steps(fed.m, max_rounds, shift=True)
        shift = {"spectra": list(fed.spectra), "max_seconds": SHIFT_ALLOWANCE,
                 **d_if_used(fed.d, fed.spectra)}
        extra = () if note is None else (note,)
    elif spectrum is None:
        top, steps, extra = float(np.max((1.0 + np.sqrt(fed.gamma)) ** 2)), LOCAL_STEPS, ()
    else:
        from riskcalc.linear.engine import weighted_mp

        top = max(weighted_mp.support_edges(float(g), spectrum)[1] for g in np.unique(fed.gamma))
        steps, note = spectrum_local_steps(fed.m, max_rounds)
        extra = () if note is None else (note,)
    eta = EDGE_SHARE * 2.0 / top
    out = []
    for weights in ("samples", "uniform"):
        best = None
        for K in steps:
            try:
                curve = rounds_limit("fedavg", gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                     signal=signal, rounds=range(max_rounds + 1),
                                     local_steps=K, step_size=None if np.isinf(K) else eta,
                                     weights=weights, spectrum=spectrum, **shift)
            # The routes' limits and their solvers' failures (SolverError): said, not the whole
            # advice lost.
            except (ValueError, SolverError) as exc:
                # The allowance named after a time refusal only (it was appended to every
                # refusal under shift, the round map's spectrum reaching 0 among them).
                skipped.append(f"fedavg along the rounds ({weights} weights, K = {K}): {exc}"
                               + (f" (advise allows {SHIFT_ALLOWANCE:g} s of estimate per "
                                  "curve under covariate shift)"
                                  if fed.shift and "max_seconds" in str(exc) else ""))
                continue
            mean = curve.risk.mean(axis=0)
            T = int(np.argmin(mean))
            if best is None or mean[T] < best[0]:
                best = (mean[T], K, T, curve.risk[:, T].copy(), _falling(mean, T))
        if best is None:
            continue
        _, K, T, risks, falling = best
        p = ((1.0 / fed.gamma) / np.sum(1.0 / fed.gamma) if weights == "samples"
             else np.full(fed.m, 1.0 / fed.m))
        tuning = {"rounds": T, "local_steps": None if np.isinf(K) else int(K),
                  "step_size": eta, "global_step": 1.0}
        notes = ((("local_steps None: the exact local solve",) if np.isinf(K) else ()) + extra
                 + falling)
        out.append(candidate("fedavg_rounds", tuning, weights, p, risks, limit="rounds",
                             notes=notes))
    return out


def pfedme_rounds_candidates(fed, signal: float, max_rounds: int, candidate, skipped,
                             tuned) -> list:
    """pFedMe stopped early: paper 004's Algorithm 1 with exact prox (K = inf local solves,
    eq. 9; server step 1 / lam, eq. 10) for T = 0..``max_rounds`` rounds, each client's risk
    that of its own (personalized) model, at the lam and weights of each pFedMe candidate
    (``tuned``: the pFedMe ``Candidate``s; T = inf is their finite-M limit), T minimizing the
    mean risk. Named ``pfedme_rounds``, tuning {rounds, local_steps None, lam, global_step}.
    Any shared spectrum (``riskcalc.linear.dynamics.sigma.prox_sigma``); skipped under
    covariate shift (``rounds_limit`` covers it there, ``shift.algorithm1.prox``, at one solve
    per client metric: not yet a candidate), and where the spectrum route's size limits refuse
    the federation.
    """
    from riskcalc.linear.dynamics import rounds_limit

    if not tuned:
        return []
    if fed.shift:
        skipped.append("pfedme along the rounds under covariate shift: not a candidate yet "
                       "(riskcalc.rounds_limit('pfedme', local_steps=inf, spectra=...) computes "
                       "it, at one solve per client covariance)")
        return []
    spectrum = (fed.spectrum if fed.spectrum is not None and not fed.spectrum.is_identity
                else None)
    out = []
    for c in tuned:
        lam = float(c.tuning["lam"])
        try:
            curve = rounds_limit("pfedme", gamma=fed.gamma, r=fed.r, sigma=fed.sigma,
                                 signal=signal, rounds=range(max_rounds + 1),
                                 local_steps=np.inf, lam=lam, spectrum=spectrum,
                                 weights=c.p if c.weights == "optimal" else c.weights)
        # The spectrum route's size limits and its solvers' failures: said, not the whole
        # advice lost (at the huge lam pFedMe tunes to where every r_j = 0, the pencil's
        # Newton method did not converge, and advise --rounds ended in that error).
        except (ValueError, SolverError) as exc:
            skipped.append(f"pfedme along the rounds ({c.weights} weights): {exc}")
            continue
        mean = curve.risk.mean(axis=0)
        T = int(np.argmin(mean))
        falling = _falling(mean, T)
        out.append(candidate("pfedme_rounds", {"rounds": T, "local_steps": None, "lam": lam,
                                               "global_step": 1.0 / lam},
                             c.weights, c.p, curve.risk[:, T].copy(), limit="rounds",
                             notes=("Algorithm 1 of paper 004 with exact prox (local_steps "
                                    "None), at the lam tuned for pFedMe's minimizer",)
                             + (("its optimal weights are pFedMe's (searched for T = inf, not "
                                 "along the rounds)",) if c.weights == "optimal" else ())
                             + falling))
    return out


def _falling(mean, T: int) -> tuple:
    """A note where the best round ``T`` is the last one evaluated and the mean risk still
    falls there (more rounds may do better: --rounds caps the search), else ()."""
    if T == mean.size - 1 and T > 0 and mean[T] < mean[T - 1]:
        return (f"the mean risk still decreases at the largest number of rounds tried (T = "
                f"{T}): allow more with --rounds",)
    return ()
