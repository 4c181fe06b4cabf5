"""``riskcalc.advise``: from a federation to the pipeline with the lowest predicted risk.

For a federation of M clients (``Federation``: every client's gamma_j, r_j, sigma_j and one
shared covariance spectrum, or one covariance per client diagonal in a shared basis: covariate
shift), every candidate pipeline of paper 003 (``003_4b976ddf5225c17e.txt``) is evaluated on
the exact finite-M limits of ``riskcalc.clients_limit`` (the global model solved over these M
clients; under covariate shift each client's risk in its own covariance):

* FedAvg (eq. 6), FTFA (eq. 7, Thm 1), RTFA (eq. 8, Thm 2) with each client's lam_j minimizing
  its own finite-M risk, MAML-FL (eqs. 12-13) and pFedMe (eq. 14) at the alpha / lam
  minimizing the mean risk;
* fine-tuning stopped early: each client's number of gradient steps from the finite-M FedAvg
  model minimizing its exact finite-M risk (Sec. 7, Algs. 5-6; ``tune.optimal_steps``), with
  sample and uniform weights (a shared spectrum only: no finite-M steps limit under covariate
  shift, so it is skipped there);
* each with sample weights p_j = n_j / N, uniform weights 1/M and the OPTIMAL weights (the
  point of the simplex minimizing the mean risk jointly with the tuning; ``weights``);
* local ridge at its lam* (Cor. 3.1; no global model, so exact at any M, in each client's own
  covariance; needs rho_j).

Candidates are ranked by the federation's mean risk (1/M) sum_j R_j and the first is
recommended; per client, the candidate with its smallest risk. Every candidate is ranked on its
finite-M limit: none on the oracle one (the centre theta_0 known exactly, M -> infinity), which
is optimistic at finite M. Every limit is called with the federation's covariance(s) from
``Federation.limit_kwargs``, so the shared and the covariate-shift cases share all the code.
"""

from __future__ import annotations

import numpy as np

from riskcalc.advise.federation import Federation, from_clients
from riskcalc.advise import candidates, cost
from riskcalc.advise.result import TIE_RTOL, Advice, Candidate
from riskcalc._validate import METHOD_ALIASES, parameter, positive_int
from riskcalc.errors import IllConditioned, SolverError

__all__ = ["Advice", "Candidate", "Federation", "TIE_RTOL", "advise", "estimate_seconds",
           "from_clients", "pipelines"]

WEIGHT_NAMES = ("samples", "uniform", "optimal")
#: Every pipeline ``advise`` knows, in the order it evaluates them.
PIPELINES = ("fedavg", "ftfa", "rtfa", "maml_fl", "pfedme", "local_ridge", "ftfa_steps")


def advise(federation: Federation, methods=None, progress=None, rounds=None,
           signal=None) -> Advice:
    """Every candidate pipeline's predicted risks for ``federation``, ranked.

    Paper 003 (``003_4b976ddf5225c17e.txt``), eqs. 6-14 and Thms 1-4 at finite M
    (``riskcalc.clients_limit``) and Cor. 3.1; the tuning and the optimal weights are derived
    here (``riskcalc.advise.tune``, ``riskcalc.advise.weights``).

    Parameters
    ----------
    federation : Federation
    methods : sequence of str, optional
        The pipelines to evaluate (default: all of ``PIPELINES``).
    progress : callable, optional
        Called with each pipeline's name when it is done (a progress bar's update).
    rounds : int, optional
        Also rank FedAvg stopped early (and pFedMe, when it is among ``methods``: Algorithm 1
        with exact prox at each pFedMe candidate's lam, Sigma = I): the rounds T <=
        ``rounds`` and local steps K minimizing the mean risk (``riskcalc.advise.rounds``;
        FedAvg with a covariance spectrum: K = 1 and the K >= 2 whose exact curve fits
        ``rounds.SIGMA_K_ALLOWANCE``; under covariate shift the same K, each curve within
        ``rounds.SHIFT_ALLOWANCE``). Needs ``signal``; both
        are checked before any pipeline runs.
    signal : float, optional
        ||theta_0|| (training starts at 0), for ``rounds`` (an error without them).

    Returns
    -------
    Advice
        ``candidates`` sorted by mean risk (the first is recommended), ``skipped`` (one
        sentence per pipeline or weighting left out), ``refused`` ((pipeline, reason) for each
        pipeline whose limits refused the federation, e.g. a derivative past the floats: the
        others are ranked).

    Raises
    ------
    ValueError
        Bad arguments (before any pipeline runs), or no candidate at all: one line naming
        each pipeline's reason.

    Examples
    --------
    >>> fed = Federation(gamma=[0.5, 1.5, 2.0], r=[0.5, 1.0, 1.0], sigma=[1.0, 0.5, 0.5])
    >>> adv = advise(fed)
    >>> adv.recommended.mean_risk <= min(c.mean_risk for c in adv.candidates)
    True
    """
    fed = _federation(federation)
    if progress is not None and not callable(progress):   # was a TypeError after the first
        raise ValueError(f"progress must be a callable (called with each pipeline's name), "
                         f"got {progress!r:.60}")
    chosen = pipelines(methods)
    if rounds is not None:      # before any pipeline runs (they take seconds to minutes)
        rounds, signal = _rounds_args(rounds, signal)
    elif signal is not None:    # was ignored, silently
        raise ValueError("signal applies with rounds only (FedAvg along the rounds starts at "
                         "w = 0; the other pipelines do not depend on ||theta_0||): leave it "
                         "out, or give rounds")
    cands, skipped, refused = [], [], []
    starts = {"samples": (1.0 / fed.gamma) / np.sum(1.0 / fed.gamma),
              "uniform": np.full(fed.m, 1.0 / fed.m)}
    done = progress or (lambda name: None)
    # FTFA's optimal weights start RTFA's and MAML-FL's searches too, MAML-FL's pFedMe's
    # (``weights``' docstring).
    for method, build in (("fedavg", lambda: candidates.untuned("fedavg", fed, starts,
                                                                skipped)),
                          ("ftfa", lambda: candidates.untuned("ftfa", fed, starts, skipped)),
                          ("rtfa", lambda: candidates.rtfa(fed, starts, skipped,
                                                           _optimal(cands, "ftfa"))),
                          ("maml_fl", lambda: candidates.own("maml_fl", fed, starts, skipped,
                                                             _optimal(cands, "ftfa"))),
                          ("pfedme", lambda: candidates.own("pfedme", fed, starts, skipped,
                                                            _optimal(cands, "maml_fl")))):
        if method in chosen:
            try:
                cands += build()
            except IllConditioned as exc:           # no number rather than a wrong one
                skipped.append(f"{method}: {exc}")
            except (ValueError, SolverError) as exc:
                # One pipeline's refusal aborted the whole advice (gamma [1e-100, 1e100]:
                # FedAvg's derivative overflowed where MAML-FL and pFedMe answer).
                refused.append((method, str(exc)))
            done(method)
    if "local_ridge" not in chosen:
        pass
    elif fed.rho is None:
        skipped.append("local_ridge: needs rho_j = ||theta_j|| for every client (the clients "
                       "file's rho, or riskcalc estimate)")
    elif np.any(fed.rho == 0):
        skipped.append("local_ridge: rho_j = 0 for client(s) "
                       f"{', '.join(map(str, np.flatnonzero(fed.rho == 0)))}: lam* is infinite "
                       "there (the zero vector would have zero risk; an estimated rho_j = 0 "
                       "means rho_j is not identified)")
    else:
        try:
            cands.append(candidates.local_ridge(fed))
        except ValueError as exc:
            skipped.append(f"local_ridge: {exc}")
        except SolverError as exc:
            refused.append(("local_ridge", str(exc)))
    if "local_ridge" in chosen:
        done("local_ridge")
    if "ftfa_steps" not in chosen:
        pass
    elif fed.shift:
        skipped.append("ftfa_steps: no finite-M limit of fine-tuning steps under covariate "
                       "shift (riskcalc.steps_limit with clients takes one shared spectrum)")
    else:
        cands += candidates.ftfa_steps(fed, starts, skipped)
    if "ftfa_steps" in chosen:
        done("ftfa_steps")
    if rounds is not None:
        from riskcalc.advise.rounds import pfedme_rounds_candidates, rounds_candidates

        cands += rounds_candidates(fed, signal, rounds, Candidate, skipped)
        cands += pfedme_rounds_candidates(fed, signal, rounds, Candidate, skipped,
                                          [c for c in cands if c.method == "pfedme"])
        done("rounds")
    if not cands:
        # Each reason once, with what it left out (as the logistic family's advice): one
        # gamma beyond the rounds' reach was said 14 times, once per (weights, K) curve.
        reasons = {}
        for who, _, why in [s.partition(": ") for s in skipped] + [(m, 0, w) for m, w in refused]:
            reasons.setdefault(why, []).append(who)
        raise ValueError("no candidate with a finite-M (or exact) limit among the methods "
                         f"chosen ({', '.join(chosen)}): " + "; ".join(
                             f"{', '.join(m)}: {why}" for why, m in reasons.items()))
    order = sorted(range(len(cands)), key=lambda k: (_rank(cands[k].mean_risk),
                                                      _rank(cands[k].worst_risk), k))
    return Advice(fed, tuple(cands[k] for k in order), tuple(skipped), tuple(refused))


def _federation(fed) -> Federation:
    """``fed`` when it is a Federation, else ValueError (was an AttributeError on its first
    field)."""
    if not isinstance(fed, Federation):
        raise ValueError("federation must be a riskcalc.advise.Federation (Federation(gamma=, "
                         "r=, sigma=, ...) or Federation.from_file(PATH)), got "
                         f"{type(fed).__name__}")
    return fed


def estimate_seconds(fed, methods=None, rounds=None) -> dict:
    """Estimated CPU seconds of each pipeline of ``advise(fed, methods, rounds=rounds)``
    (``riskcalc.advise.cost``), its arguments read as ``advise`` reads them: ``methods`` None
    for every pipeline, a sequence of names or one comma-separated string (``pipelines``),
    ``rounds`` an integer in 1..``MAX_ROUNDS`` (methods=None was a TypeError, "rtfa" a KeyError
    'r')."""
    rounds = (None if rounds is None else
              positive_int("rounds", rounds, minimum=1, maximum=MAX_ROUNDS))
    return cost.estimate_seconds(_federation(fed), pipelines(methods), rounds)


def _optimal(cands, method):
    """The optimal weights of ``method`` among ``cands``, or None."""
    return next((c.p for c in cands if (c.method, c.weights) == (method, "optimal")), None)


#: Largest ``rounds``, as ``riskcalc advise --rounds`` (``riskcalc.cli.advise.MAX_ROUNDS``: each
#: candidate's curve solves T = 0..rounds at once, ``riskcalc.optimal_rounds``'s bound).
MAX_ROUNDS = 3000


def _rounds_args(rounds, signal):
    """``advise``'s rounds (an integer in 1..``MAX_ROUNDS``) and signal (needed with them),
    validated."""
    rounds = positive_int("rounds", rounds, minimum=1, maximum=MAX_ROUNDS)
    if signal is None:
        raise ValueError("rounds: FedAvg along the rounds starts at w = 0, so its risk "
                         "needs signal = ||theta_0||")
    signal = float(parameter("signal", signal, ndim=0))    # rounds_limit's range
    return rounds, signal


def pipelines(methods=None, among=PIPELINES, aliases=None) -> tuple:
    """The pipelines ``methods`` names: None for all of ``among`` (default ``PIPELINES``),
    else a sequence of names or one comma-separated string (``--methods``). Each pipeline
    once, none empty; a name of ``aliases`` stands for its pipeline (the logistic family's
    ``fedprox`` for ``pfedme``: ``riskcalc.advise.logistic``).

    Raises
    ------
    ValueError
        One line, for an empty sequence, an empty entry, an unknown name or a pipeline given twice
        (also under two of its names).
    """
    among = tuple(among)
    if methods is None:
        return among
    # fedprox is pfedme's alias in every verb (the linear advice refused it).
    aliases = aliases or {k: v for k, v in METHOD_ALIASES.items() if v in among}
    also = "".join(f" ({k}: alias of {v})" for k, v in aliases.items())
    msg = f"methods must be among {', '.join(among)}{also}, each named once"
    try:
        if isinstance(methods, (bytes, bytearray, dict)):
            raise TypeError
        names = methods.split(",") if isinstance(methods, str) else list(methods)
    except TypeError:       # an int was a TypeError, bytes read as their codes (102, 101, ...)
        raise ValueError(f"{msg}: None for all, a comma-separated string or a sequence of "
                         f"names; got {type(methods).__name__} {methods!r:.60}") from None
    odd = [n for n in names if not isinstance(n, str)]
    if odd:
        raise ValueError(f"{msg}, as strings; got {odd[0]!r:.60} ({type(odd[0]).__name__})")
    names = [n.strip() for n in names]
    if not names:
        raise ValueError(f"methods is empty: name at least one of {', '.join(among)}{also}, "
                         "or leave methods out (None) for all of them")
    if not all(names):
        raise ValueError(f"{msg}; got an empty name in {methods!r}")
    unknown = [n for n in names if aliases.get(n, n) not in among]
    if unknown:
        raise ValueError(f"{msg}; got {', '.join(map(repr, unknown))}")
    names = [aliases.get(n, n) for n in names]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{msg}; got {', '.join(twice)} more than once")
    return tuple(names)


def _rank(v):
    return v if np.isfinite(v) else np.inf
