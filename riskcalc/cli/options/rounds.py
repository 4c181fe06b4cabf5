"""The risk along federated training on the command line: ``predict`` and ``compare`` with
``--rounds T[,T2,...,inf]`` (issue 29; DESIGN.md, "Contracts added in the fourth round").

The options of the training dynamics (``add_options``), their parsing, the federation they act
on (``--clients M`` identical clients or ``--clients-file``, the target first), the predicted
curve (``riskcalc.rounds_limit``) and the simulated one (``montecarlo.linear.rounds``). A
row per T: the target's (client 0's) bias, variance and risk of the server model, the server
model's risk and the diagnostics of the round map (contraction, converges). Personalization
after round T: ``fedavg|fedprox --steps k --step-size e`` (FTFA from the server model of round
T) and ``rtfa --lam L`` (FedAvg's rounds, then RTFA, the ridge L toward the server model of round
T: ``RoundsLimit.personalized_risk(lam=L)``; ``--lam`` as for ``predict rtfa`` at convergence).
"""

from __future__ import annotations

import numpy as np

import riskcalc
from riskcalc._validate import (MAX_INT, SCALE_MAX, as_array, positive, positive_int,
                                seed_integer)
from riskcalc._text import distinct, integer
from riskcalc.cli import GIVEN
from riskcalc.cli.options import clients_file, families, fedargs
from riskcalc.cli.shared import guards
from riskcalc.cli.tables.rounds import (METHODS, compare_text, ftfa_converges, own_models,
                                       predict_text)
from riskcalc.linear.engine.joint_spectrum import d_if_used
from riskcalc.linear.dynamics.personalize import MAX_STEPS
from riskcalc.spectrum import Spectrum

#: Options of the model verbs that have no meaning along the rounds.
NOT_WITH_ROUNDS = ("rho", "alpha", "route")
#: Most clients along the rounds (--clients M, --federation, --clients-file): the rounds limits
#: solve every client (none grouped), 5 s at M = 1000 and a failed solve after 40 s at 10^4
#: (measured, FedAvg).
MAX_CLIENTS = 1000


def add_options(parser) -> None:
    """Add --rounds, --local-steps, --local-step-size, --global-step and --max-memory."""
    parser.add_argument("--rounds", metavar="T[,T2,...,inf]",
                        help="the risk after these numbers of communication rounds (fedavg, "
                             "fedprox; rtfa: FedAvg's rounds, then RTFA with --lam from the "
                             "server model of round T; inf: the fixed point) instead of at "
                             "convergence; needs --local-steps, --local-step-size and --signal")
    parser.add_argument("--local-steps", metavar="K",
                        help="local full-batch gradient steps per round, an integer >= 1 or "
                             "inf (an exact local solve)")
    parser.add_argument("--local-step-size", type=float, metavar="ETA",
                        help="step size of the local steps, > 0")
    parser.add_argument("--global-step", type=float, metavar="G",
                        help="server step g > 0: FedAvg's w <- w + g sum_j p_j (v_j - w) "
                             "(default 1); fedprox (Algorithm 1): w <- w - g lam sum_j p_j "
                             "(w - v_j) (default 1 / lam: plain averaging)")
    parser.add_argument("--max-memory", type=float, metavar="GB",
                        help="with --rounds and a --spectrum (or fedprox with finite "
                             "--local-steps): refuse a solve whose estimated peak memory "
                             "exceeds GB gigabytes (default 4; the estimate is printed with "
                             "the refusal)")


def asked(args) -> bool:
    """Whether this call asks for the rounds (any of the rounds options given)."""
    return any(getattr(args, k, None) is not None
               for k in ("rounds", "local_steps", "local_step_size", "global_step",
                         "max_memory"))


def parse_rounds(text: str) -> list:
    """``"0,10,inf"`` -> ``[0, 10, inf]``: integers >= 0 (an integral decimal such as 10.0
    too, as every integer option reads it: ``_text.integer``) and ``inf``, in the order
    given."""
    out = []
    for item in str(text).split(","):
        item = item.strip()
        if item.lower() == "inf":
            out.append(np.inf)
            continue
        k = _count(item)
        if not 0 <= k <= MAX_INT:
            raise ValueError(f"--rounds takes integers in 0..{MAX_INT} (2^53) and inf, "
                             f"comma-separated; got {item[:40]!r}")
        out.append(k)
    return distinct("--rounds", out)    # --rounds 1,1,1 printed three rows


def parse_local_steps(text: str):
    """``--local-steps``: an integer >= 1 (or an integral decimal, as for ``parse_rounds``)
    or ``inf``."""
    text = str(text).strip()
    if text.lower() == "inf":
        return np.inf
    k = _count(text)
    if not 1 <= k <= MAX_INT:
        raise ValueError(f"--local-steps must be an integer in 1..{MAX_INT} (2^53) or inf; "
                         f"got {text[:40]!r}")
    return k


def _count(text: str) -> int:
    """``text`` as an integer, or -1 (out of every range) when it writes none: the caller's
    message states its range and ``inf``."""
    try:
        return integer(text, "a count")
    except ValueError:
        return -1


def check(args, verb: str) -> None:
    """The rounds options given together, and none that has no meaning along the rounds."""
    needed = [("--rounds", "rounds"), ("--local-steps", "local_steps"), ("--signal", "signal")]
    # Read first (was: "--local-steps nan" or "infinity" asked for --local-step-size, then
    # refused the value once it came).
    K = None if getattr(args, "local_steps", None) is None else parse_local_steps(args.local_steps)
    if K is None or np.isfinite(K):
        needed.insert(2, ("--local-step-size", "local_step_size"))
    if args.method not in METHODS:  # first: "predict ftfa --max-memory 1" was asked for
        # --rounds, --local-steps, ..., then refused them (fuzz42 seams3 F4)
        ftfa = (" (FTFA after T rounds: predict fedavg --rounds ... --steps S --step-size E)"
                if args.method == "ftfa" else "")
        option = next(flag for flag in ("--rounds", "--local-steps", "--local-step-size",
                                         "--global-step", "--max-memory")
                      if getattr(args, flag[2:].replace("-", "_"), None) is not None)
        raise ValueError(f"{option} applies to fedavg, pfedme (fedprox) and rtfa (FedAvg's "
                         f"rounds, then RTFA with --lam), not {args.method}{ftfa}")
    missing = [flag for flag, dest in needed if getattr(args, dest, None) is None]
    if missing:
        raise ValueError(f"{verb} along the rounds needs {', '.join(missing)} (with --rounds, "
                         "--local-steps, --local-step-size unless --local-steps inf, and "
                         "--signal)")
    for dest in NOT_WITH_ROUNDS:
        if families.given(args, dest):
            raise ValueError(f"{families.flag(args._family_parser, dest)} does not apply with "
                             "--rounds")
    if args.method == "pfedme" and args.lam is None:
        raise ValueError("fedprox along the rounds needs --lam (its proximal penalty)")
    # Named as the options (was "reps must be ...", "global_step must ...": the Python names).
    if verb == "compare":
        positive_int("--reps", args.reps, minimum=2)
    if getattr(args, "max_memory", None) == np.inf:     # as --max-minutes inf (fuzz40 small F1);
        # was "must be a finite number in (0, inf)" alone (fuzz42 seams3 F6)
        raise ValueError("--max-memory must be a finite number > 0, got inf; for no limit give "
                         "a number beyond this machine's memory, e.g. 1e300")
    for flag, dest in (("--global-step", "global_step"), ("--max-memory", "max_memory")):
        if getattr(args, dest, None) is not None:
            positive(flag, getattr(args, dest), ndim=0)
    from riskcalc.linear.dynamics.inputs import check_memory_used

    check_memory_used(getattr(args, "max_memory", None), "pfedme" if args.method == "pfedme"
                      else "fedavg", K, covariance_given(args), "--max-memory")
    eta = getattr(args, "local_step_size", None)
    if eta is not None:     # the limit's range, named as the option (was "step_size must ...")
        if np.isinf(K):
            raise ValueError("--local-step-size does not apply with --local-steps inf (no step)")
        from riskcalc.linear.dynamics.inputs import check_step_floor

        as_array("--local-step-size", eta, low=0.0, low_open=True, high=SCALE_MAX, ndim=0)
        # Sigma = I's floor on the step itself; with a covariance the limit checks step x its
        # largest eigenvalue (scaled:1e100 at 1e-101 was refused here; fuzz41 path F1)
        if not covariance_given(args):
            check_step_floor(eta, K, 1.0, names=("--local-step-size", "--local-steps"))
    steps = [families.given(args, d) for d in ("steps", "step_size")]
    if any(steps) and not all(steps):
        raise ValueError("--steps and --step-size (FTFA from the server model of round T) go "
                         "together")
    if steps[0]:    # named as the option, before the curves are solved (was "steps must lie
        # in [0, inf), got -1.0" after them); the range of RoundsLimit.personalized_risk
        positive_int("--steps", args.steps, minimum=0, maximum=MAX_STEPS)
    if args.method == "fedavg" and args.lam is not None:
        raise ValueError("--lam does not apply to fedavg (RTFA from the server model of round "
                         "T: predict rtfa --lam L --rounds ...)")
    if args.method == "rtfa":
        if args.lam is None:
            raise ValueError("rtfa along the rounds needs --lam (RTFA's ridge toward the server "
                             "model of round T)")
        if any(steps):
            raise ValueError("--steps/--step-size (FTFA) do not apply to rtfa: one "
                             "personalization after round T (fedavg --steps k --step-size e "
                             "for FTFA)")


def covariance_given(args) -> bool:
    """Whether a covariance other than the identity may be asked: ``--spectrum`` other than
    identity, or a federation (its clients may carry spectra)."""
    spec = getattr(args, "spectrum", None)
    return (spec is not None and str(spec).strip().lower() != "identity"
            or getattr(args, "federation", None) is not None
            or getattr(args, "clients_file", None) is not None)


def federation(args) -> dict:
    """Per-client gamma, r, sigma (the target, client 0, first) from the model options and
    --clients M (identical clients; default 1), or --federation / --clients-file (read by
    ``riskcalc.cli.options.fedargs``, the one reader of federation files)."""
    if args.sigma is None or args.r is None:
        raise ValueError("--rounds needs --r and --sigma (the target's), or --federation")
    target = {"gamma": float(args.gamma), "r": float(args.r), "sigma": float(args.sigma)}
    if args.clients_file is not None:
        others = clients_file.other_clients(args, clients_file.read_clients_file)
        if 1 + len(others["gamma"]) > MAX_CLIENTS:
            raise ValueError(f"{args.clients_file}: {1 + len(others['gamma'])} clients; at most "
                             f"{MAX_CLIENTS} along the rounds (each client is solved, none "
                             "grouped: minutes beyond)")
        fed = {k: [target[k]] + [float(v) for v in others[k]] for k in target}
        spectra = fedargs.client_spectra(args, others)
        if spectra is not None:
            if args.method not in ("fedavg", "pfedme", "rtfa"):    # rtfa: FedAvg's rounds
                raise ValueError("per-client spectra (covariate shift) along the rounds: "
                                 "fedavg, pfedme/fedprox and rtfa only")
            # d where a spectrum uses it (compare's --d, the simulation's, is not the spectra's)
            d = getattr(args, "d", None)
            fed.update(spectra=spectra, **d_if_used(d, spectra))
        return fed
    m = 1 if args.clients is None else positive_int("--clients", args.clients,
                                                     maximum=MAX_INT)
    if m > MAX_CLIENTS:
        raise ValueError(f"--clients {m}: at most {MAX_CLIENTS} identical clients along the "
                         "rounds (each client is solved, none grouped: minutes beyond)")
    return {k: [v] * m for k, v in target.items()}


def rounds_method(args) -> str:
    """The method run along the rounds: FedAvg for rtfa (personalized after round T)."""
    return "fedavg" if args.method == "rtfa" else args.method


def personalization(args):
    """The keyword arguments of ``RoundsLimit.personalized_risk`` asked on the command line
    (RTFA: rtfa's --lam; FTFA: --steps, --step-size), or None."""
    if args.method == "rtfa":
        return {"lam": args.lam}
    if families.given(args, "steps"):
        return {"steps": args.steps, "step_size": args.step_size}
    return None


def kwargs(args) -> dict:
    """The keyword arguments of ``riskcalc.rounds_limit`` and ``simulate_rounds``."""
    fed = federation(args)
    out = dict(**fed, signal=args.signal, rounds=parse_rounds(args.rounds),
               local_steps=parse_local_steps(args.local_steps),
               step_size=args.local_step_size, global_step=args.global_step,
               weights=args.weights or "samples")
    if args.method == "pfedme":
        out["lam"] = args.lam
    spec = Spectrum.parse(getattr(args, "spectrum", None) or "identity",
                          d=getattr(args, "d", None))
    if not spec.is_identity and "spectra" not in fed:   # rounds_limit refuses what it does
        out["spectrum"] = spec                              # not cover
    return out


def rows(res, local, target: int = 0, personalized=None, pers=None) -> list:
    """One JSON row per T (DESIGN.md): the target's bias, variance and risk of the model the
    method gives it, the server model's risk, the risk of the target's own model after its K
    local steps of round T (``local``: ``own_models``' pair), the round map's diagnostics, and with
    ``personalized`` ((M, R) array) the risk after the personalization ``pers`` (FTFA or RTFA
    keyword arguments, ``personalization``) from the server model of round T."""
    def num(v):
        v = float(v)
        return v if np.isfinite(v) else None
    local, whole = local[0], res.as_dict()      # RoundsLimit.as_dict: every client's arrays
    out = []
    for t, T in enumerate(whole["rounds"]):
        out.append({"method": res.method, "params": whole["params"], "rounds": T,
                    **{k: whole[k][target][t] for k in ("bias", "variance", "risk",
                                                        "global_risk")},
                    "local_risk": num(local[target, t]),
                    "distance_to_fixed_point": whole["distance_to_fixed_point"][t],
                    "clients_risk": [row[t] for row in whole["risk"]],
                    "diagnostics": dict(whole["diagnostics"]),
                    # as the tables print them (fuzz41 path F14: a contraction given as its
                    # bound, F2, said so in the table only)
                    "notes": list(whole.get("notes", ()))})
        if personalized is not None:
            out[-1]["personalized_risk"] = num(personalized[target, t])
            out[-1]["personalization"] = {"method": "rtfa" if "lam" in pers else "ftfa",
                                          **pers}
            if "lam" not in pers:   # FTFA's divergence is a result (steps_limit's convention)
                out[-1]["personalization"]["converges"] = ftfa_converges(res, pers, target)
    return out


def predict(args) -> int:
    """``riskcalc predict METHOD --rounds ...``."""
    check(args, "predict")
    asked_pers = personalization(args)
    # Progress while it computes, as compare shows (10 s and more under a spectrum were silent);
    # each part's work is estimated before it solves (rounds_limit's max_seconds).
    with guards.working(f"riskcalc predict {args.method} along the rounds"):
        res, local = solve(args, kwargs(args))
        pers = None if asked_pers is None else res.personalized_risk(**asked_pers)
    if args.json:
        print(guards.dumps(rows(res, local, personalized=pers, pers=asked_pers)))
        return 0
    predict_text(args, res, pers, asked_pers, local)
    return 0


def solve(args, kw):
    """The rounds limit of the call (``riskcalc.rounds_limit``) and its own models
    (``own_models``' pair, row by row where the whole list is refused)."""
    def limit(rounds):
        return riskcalc.rounds_limit(rounds_method(args), **{**kw, "rounds": rounds},
                                     max_seconds=guards.max_seconds(args),
                                     max_gigabytes=args.max_memory)
    res = limit(kw["rounds"])
    return res, own_models(res, lambda T: limit([T]))


def compare(args) -> int:
    """``riskcalc compare METHOD --rounds ... --d D --reps R [--steps k --step-size e]``: the
    predicted curve next to the simulated one (``montecarlo.linear.rounds.simulate_rounds``,
    the same algorithm, weights and federation at dimension d); with ``--steps`` also FTFA
    (``rtfa --lam L``: RTFA) from the server model of round T, predicted and simulated on the
    same replicates. Per-client spectra (covariate shift; fedavg or pfedme with a finite
    --local-steps): both at d = --d, the simulated clients' covariances in the shared basis
    (``montecarlo.linear.rounds_shift``)."""
    from montecarlo.linear.rounds import replicate_seconds, simulate_rounds
    from montecarlo.prediction import realized_spectrum, simulated_ratios

    check(args, "compare")
    for dest in ("measure", "eigvecs", "features", "noise", "df", "scheduler"):
        if families.given(args, dest):
            raise ValueError(f"{families.flag(args._family_parser, dest)} does not apply with "
                             "--rounds (Gaussian features and noise, the federated model)")
    if "global_model" in getattr(args, GIVEN, {}) and args.global_model == "oracle":
        # taken, and the federated model simulated
        raise ValueError("--global oracle does not apply with --rounds (the rounds train the "
                         "federated model over the clients)")
    seed_integer("--seed", args.seed)       # named as the option (was "seed must be ...")
    kw = kwargs(args)     # under covariate shift with d = --d (the clients' spectra at d)
    guards.budget(args, max(args.reps, 1),      # reps and d themselves: simulate_rounds's
                  replicate_seconds(rounds_method(args), max(args.d, 1), len(kw["gamma"]),
                                    max([t for t in kw["rounds"] if np.isfinite(t)], default=0)),
                  f"compare {args.method} along the rounds: {args.reps} replicate(s) at d = "
                  f"{args.d} with {len(kw['gamma'])} client(s)",
                  "lower --reps, --d, the largest --rounds or "
                  + ("the federation's clients" if getattr(args, "federation", None) is not None
                     or getattr(args, "clients_file", None) is not None else "--clients"))
    ftfa = personalization(args)        # FTFA or RTFA after round T
    realized, note = simulated_ratios(args.d, kw["gamma"])
    # The spectrum too (was: two-point:1,4,0.01 at d = 40, Sigma = 4 I simulated, round 0
    # predicted 7.94 against 8; fuzz39 fuzz F10).
    spectrum, spread = realized_spectrum(kw.get("spectrum"), args.d)
    with guards.working(f"riskcalc compare {args.method}: the prediction"):
        pred, local = solve(args, {**kw, "gamma": realized,
                                   **({"spectrum": spectrum} if spread else {})})
        pers = None if ftfa is None else pred.personalized_risk(**ftfa)
    sim = simulate_rounds(rounds_method(args), **{**kw, "d": args.d}, reps=args.reps,
                          seed=args.seed,
                          jobs=guards.jobs(args.jobs), progress=not args.no_progress,
                          personalize=[] if ftfa is None else [ftfa])
    sim_pers = None if ftfa is None else (sim.personalized_risk(**ftfa),
                                           sim.personalized_risk_se(**ftfa))
    out = []
    base = ("bias", "variance", "risk", "local_risk")
    quantities = base + (() if ftfa is None else ("personalized_risk",))
    for row, t in zip(rows(pred, local, personalized=pers, pers=ftfa),
                      range(len(pred.rounds))):
        simulated = {q: getattr(sim, q)[0, t] for q in base}
        simulated.update({q + "_se": getattr(sim, q + "_se")[0, t] for q in base})
        if ftfa is not None:
            simulated.update(personalized_risk=sim_pers[0][0, t],
                             personalized_risk_se=sim_pers[1][0, t])
        row = {**row, "predicted": {q: row[q] for q in quantities},
               "simulated": {**{k: float(v) for k, v in simulated.items()},
                             "reps": args.reps, "d": args.d}}
        out.append(row)
    if args.json:
        print(guards.dumps(out))
        return 0
    compare_text(args, pred, out, ftfa, tuple(n for n in (note, spread) if n) + pred.notes)
    return 0
