"""The risk along federated training on the command line: ``predict`` and ``compare`` with
``--rounds T[,T2,...,inf]`` (issue 29; DESIGN.md, "Contracts added in the fourth round").

The options of the training dynamics (``add_options``), their parsing, the federation they act
on (``--clients M`` identical clients or ``--clients-file``, the target first), the predicted
curve (``riskcalc.rounds_limit``) and the simulated one (``montecarlo.linear.rounds``). A
row per T: the target's (client 0's) bias, variance and risk of the server model, the server
model's risk and the diagnostics of the round map (contraction, converges).
"""

from __future__ import annotations

import numpy as np

import riskcalc
from riskcalc.cli import families, fedargs, guards

#: Options of the model verbs that have no meaning along the rounds.
NOT_WITH_ROUNDS = ("rho", "alpha", "route")
#: Methods with rounds, and what each runs.
METHODS = {"fedavg": "FedAvg with local gradient descent",
           "pfedme": "paper 004's Algorithm 1 (bilevel FedProx)"}


def add_options(parser) -> None:
    """Add --rounds, --local-steps, --local-step-size and --global-step."""
    parser.add_argument("--rounds", metavar="T[,T2,...,inf]",
                        help="the risk after these numbers of communication rounds (fedavg; "
                             "inf: the fixed point) instead of at convergence; needs "
                             "--local-steps, --local-step-size and --signal")
    parser.add_argument("--local-steps", metavar="K",
                        help="local full-batch gradient steps per round, an integer >= 1 or "
                             "inf (an exact local solve)")
    parser.add_argument("--local-step-size", type=float, metavar="ETA",
                        help="step size of the local steps, > 0")
    parser.add_argument("--global-step", type=float, metavar="G",
                        help="server step g > 0: w <- w + g sum_j p_j (v_j - w) (default 1)")


def asked(args) -> bool:
    """Whether this call asks for the rounds (any of the rounds options given)."""
    return any(getattr(args, k, None) is not None
               for k in ("rounds", "local_steps", "local_step_size", "global_step"))


def parse_rounds(text: str) -> list:
    """``"0,10,inf"`` -> ``[0, 10, inf]``: integers >= 0 and ``inf``, in the order given."""
    out = []
    for item in str(text).split(","):
        item = item.strip()
        if item.lower() == "inf":
            out.append(np.inf)
            continue
        if not (item.isascii() and item.isdigit()):
            raise ValueError(f"--rounds takes integers >= 0 and inf, comma-separated; got "
                             f"{item!r}")
        out.append(int(item))
    return out


def parse_local_steps(text: str):
    """``--local-steps``: an integer >= 1 or ``inf``."""
    text = str(text).strip()
    if text.lower() == "inf":
        return np.inf
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"--local-steps must be an integer >= 1 or inf; got {text!r}")
    return int(text)


def check(args, verb: str) -> None:
    """The rounds options given together, and none that has no meaning along the rounds."""
    needed = [("--rounds", "rounds"), ("--local-steps", "local_steps"), ("--signal", "signal")]
    if str(getattr(args, "local_steps", "")).strip().lower() != "inf":
        needed.insert(2, ("--local-step-size", "local_step_size"))
    missing = [flag for flag, dest in needed if getattr(args, dest, None) is None]
    if missing:
        raise ValueError(f"{verb} along the rounds needs {', '.join(missing)} (with --rounds, "
                         "--local-steps, --local-step-size unless --local-steps inf, and "
                         "--signal)")
    if args.method not in METHODS:
        raise ValueError(f"--rounds applies to {' and '.join(METHODS)} (fedprox), not "
                         f"{args.method}")
    for dest in NOT_WITH_ROUNDS:
        if families.given(args, dest):
            raise ValueError(f"{families.flag(args._family_parser, dest)} does not apply with "
                             "--rounds")
    if getattr(args, "spectrum", "identity") != "identity":
        raise ValueError("--spectrum: the rounds limits are for Sigma = I only (a shared "
                         "spectrum needs operator-valued subordination: not yet)")
    if args.method == "pfedme" and args.lam is None:
        raise ValueError("fedprox along the rounds needs --lam (its proximal penalty)")
    steps = [families.given(args, d) for d in ("steps", "step_size")]
    if any(steps) and verb != "predict":
        raise ValueError("--steps/--step-size (FTFA after round T) are predicted only along "
                         "the rounds: the simulator does not personalize after round T yet")
    if any(steps) and not all(steps):
        raise ValueError("--steps and --step-size (FTFA from the server model of round T) go "
                         "together")
    if args.method == "fedavg" and args.lam is not None:
        raise ValueError("--lam does not apply to fedavg")


def federation(args) -> dict:
    """Per-client gamma, r, sigma (the target, client 0, first) from the model options and
    --clients M (identical clients; default 1), or --federation / --clients-file (read by
    ``riskcalc.cli.fedargs``, the one reader of federation files)."""
    if args.sigma is None or args.r is None:
        raise ValueError("--rounds needs --r and --sigma (the target's), or --federation")
    target = {"gamma": float(args.gamma), "r": float(args.r), "sigma": float(args.sigma)}
    if args.clients_file is not None:
        others = fedargs.other_clients(args, fedargs.read_clients_file)
        if any(s is not None for s in others["spectrum"]) or args.spectrum != "identity":
            raise ValueError("the rounds limits are for Sigma = I only (no client spectrum)")
        return {k: [target[k]] + [float(v) for v in others[k]] for k in target}
    m = 1 if args.clients is None else int(args.clients)
    if m < 1:
        raise ValueError(f"--clients must be >= 1, got {m}")
    return {k: [v] * m for k, v in target.items()}


def kwargs(args) -> dict:
    """The keyword arguments of ``riskcalc.rounds_limit`` and ``simulate_rounds``."""
    fed = federation(args)
    out = dict(**fed, signal=args.signal, rounds=parse_rounds(args.rounds),
               local_steps=parse_local_steps(args.local_steps),
               step_size=args.local_step_size, global_step=args.global_step,
               weights=args.weights or "samples")
    if args.method == "pfedme":
        out["lam"] = args.lam
    return out


def rows(res, target: int = 0, personalized=None) -> list:
    """One JSON row per T (DESIGN.md): the target's bias, variance and risk of the model the
    method gives it, the server model's risk, the risk of the target's own model after its K
    local steps of round T (``local_risk``), the round map's diagnostics, and with
    ``personalized`` ((M, R) array) the risk after FTFA from the server model of round T."""
    def num(v):
        v = float(v)
        return v if np.isfinite(v) else None
    local = res.local_risk
    out = []
    for t, T in enumerate(res.rounds):
        out.append({"method": res.method, "params": res.params,
                    "rounds": None if np.isinf(T) else int(T),
                    "bias": num(res.bias[target, t]), "variance": num(res.variance[target, t]),
                    "risk": num(res.risk[target, t]),
                    "global_risk": num(res.global_risk[target, t]),
                    "local_risk": num(local[target, t]),
                    "distance_to_fixed_point": num(res.distance_to_fixed_point[t]),
                    "clients_risk": [num(v) for v in res.risk[:, t]],
                    "diagnostics": {"contraction": num(res.contraction),
                                    "converges": bool(res.converges)}})
        if personalized is not None:
            out[-1]["personalized_risk"] = num(personalized[target, t])
    return out


def predict(args) -> int:
    """``riskcalc predict METHOD --rounds ...``."""
    check(args, "predict")
    res = riskcalc.rounds_limit(args.method, **kwargs(args))
    pers = None
    if families.given(args, "steps"):
        pers = res.personalized_risk(steps=args.steps, step_size=args.step_size)
    if args.json:
        print(guards.dumps(rows(res, personalized=pers)))
        return 0
    m = res.risk.shape[0]
    print(f"{METHODS[res.method]} ({res.method}) along the rounds; derived here (exact limit, "
          f"M = {m} client{'s' if m > 1 else ''}, Sigma = I)")
    print("  " + ", ".join(f"{k} = {v}" for k, v in res.params.items()))
    print(f"  round map: contraction {res.contraction:.6g} "
          f"(converges: {'true' if res.converges else 'false'})")
    own = res.method == "pfedme"
    print(f"  {'rounds':>7} {'bias':>13} {'variance':>13} {'risk':>13} {'mean risk':>13} "
          f"{'server risk' if own else 'local risk':>13}"
          + ("" if pers is None else f" {'FTFA risk':>13}"))
    last = res.global_risk if own else res.local_risk
    for t, T in enumerate(res.rounds):
        label = "inf" if np.isinf(T) else str(int(T))
        print(f"  {label:>7} {res.bias[0, t]:>13.8g} {res.variance[0, t]:>13.8g} "
              f"{res.risk[0, t]:>13.8g} {res.risk[:, t].mean():>13.8g} {last[0, t]:>13.8g}"
              + ("" if pers is None else f" {pers[0, t]:>13.8g}"))
    if pers is not None:
        print(f"  FTFA risk: the target's model after {args.steps} gradient steps of size "
              f"{args.step_size:g} on its own loss from the server model of round T")
    if own:
        print("  risk: the target's own model after its local phase of round T (the prox of "
              "the server model w_{T-1}); server risk: the server model's after T rounds")
    else:
        print("  risk: the server model's after T rounds; local risk: the target's own model "
              "after its K local steps of round T")
    return 0


def compare(args) -> int:
    """``riskcalc compare METHOD --rounds ... --d D --reps R``: the predicted curve next to the
    simulated one (``montecarlo.linear.rounds.simulate_rounds``, the same algorithm, weights
    and federation at dimension d)."""
    from montecarlo.linear.rounds import simulate_rounds

    check(args, "compare")
    for dest in ("measure", "eigvecs", "features", "noise", "df", "scheduler"):
        if families.given(args, dest):
            raise ValueError(f"{families.flag(args._family_parser, dest)} does not apply with "
                             "--rounds (Gaussian features and noise, the federated model)")
    kw = kwargs(args)
    pred = riskcalc.rounds_limit(args.method, **kw)
    sim = simulate_rounds(args.method, **kw, d=args.d, reps=args.reps, seed=args.seed,
                          jobs=guards.jobs(args.jobs), progress=not args.no_progress)
    out = []
    for row, t in zip(rows(pred), range(len(pred.rounds))):
        quantities = ("bias", "variance", "risk", "local_risk")
        row = {**row, "predicted": {q: row[q] for q in quantities},
               "simulated": {**{q: float(getattr(sim, q)[0, t]) for q in quantities},
                             **{q + "_se": float(getattr(sim, q + "_se")[0, t])
                                for q in quantities},
                             "reps": args.reps, "d": args.d}}
        out.append(row)
    if args.json:
        print(guards.dumps(out))
        return 0
    print(f"{METHODS[pred.method]} ({pred.method}) along the rounds: predicted (exact limit) vs "
          f"simulated at d = {args.d}, {args.reps} replicates, seed {args.seed}")
    print("  " + ", ".join(f"{k} = {v}" for k, v in pred.params.items()))
    print(f"  {'rounds':>7} {'predicted':>12} {'simulated':>12} {'std.err':>10} {'rel.diff':>9}")
    for row in out:
        p, s = row["predicted"]["risk"], row["simulated"]["risk"]
        rel = "n/a" if p in (None, 0) or not np.isfinite(s) else f"{100 * (s - p) / p:+.3f}%"
        label = "inf" if row["rounds"] is None else str(row["rounds"])
        print(f"  {label:>7} {float('inf') if p is None else p:>12.6g} {s:>12.6g} "
              f"{row['simulated']['risk_se']:>10.3g} {rel:>9}")
    return 0
