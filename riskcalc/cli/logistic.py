"""The logistic model family of ``riskcalc predict`` and ``riskcalc compare`` (``--model
logistic``, see ``riskcalc.cli.families``): personalized logistic regression.

Model (DESIGN.md, second and third rounds): ``x ~ N(0, I_d)``, ``P(y = 1 | x) =
sigmoid(x.w_j)``, ``w_j = w_0 + r_j u_j``, ``||w_0|| = --signal``. Two modes:

* infinitely many clients (no ``--clients``): RTFA toward the oracle centre ``w_0`` or FedAvg's
  infinite-client centre (``--centre``), ``riskcalc.logistic_limit``; simulated by
  ``montecarlo.logistic_ridge``;
* M clients (``--clients M``, or ``--clients-file`` listing the other clients' gamma and r):
  the global model is FedAvg's logistic fit over all M clients' data with ridge
  ``--global-lam``, and METHOD is ``rtfa`` (fine-tuning toward it), ``fedavg`` (the global model
  itself), ``local_ridge`` (centre 0) or ``pfedme`` (the FedProx / pFedMe joint objective's
  w_j): ``riskcalc.logistic_limit(..., clients=M)`` and
  ``riskcalc.logistic_clients_limit``; simulated by ``montecarlo.logistic_pipeline``
  (``compare --global federated``).
"""

from __future__ import annotations

from riskcalc.cli import families, guards

VERBS = ("predict", "compare")
QUANTITIES = ("risk", "cosine", "test_logloss", "test_error")
GLOBAL = ("global_overlap", "global_dist")
CENTRES = ("oracle", "fedavg")
TITLES = {"rtfa": "RTFA with the logistic loss", "fedavg": "FedAvg's logistic global model",
          "local_ridge": "local ridge logistic regression (centre 0)",
          "pfedme": "FedProx / pFedMe joint objective (the client's w_j)"}
#: METHOD names of the command -> method names of riskcalc.logistic and the simulation (the
#: joint objective of pFedMe and FedProx is one, ``fedprox`` in riskcalc.logistic).
API_METHOD = {"rtfa": "rtfa", "fedavg": "fedavg", "local_ridge": "local_ridge",
              "pfedme": "fedprox"}
REFERENCE = "CGMT limit, riskcalc.logistic (after Salehi-Abbasi-Hassibi 2019, Sur-Candes 2019)"

OPTIONS = {
    "signal": (("--signal",), dict(type=float, help="||w_0||, the norm of the centre, >= 0 "
                                                    "(--model logistic)")),
    "global_lam": (("--global-lam",), dict(type=float, metavar="LG",
                                           help="ridge toward 0 of the logistic global model "
                                                "over the M clients, >= 0 (--model logistic "
                                                "with --clients or --clients-file)")),
    "centre": (("--centre",), dict(choices=CENTRES,
                                   help="infinitely many clients (--model logistic without "
                                        "--clients): fine-tune toward the oracle centre w_0 "
                                        "(default) or FedAvg's infinite-client global model")),
}
_MODEL = {"gamma", "signal", "r", "lam", "json"}
_FEDERATED = {"clients", "clients_file", "federation", "target", "weights", "global_lam"}
_SIMULATION = {"d", "reps", "seed", "jobs", "no_progress", "global_model", "max_minutes"}


def federated(args, verb) -> bool:
    """M clients (``--clients``/``--clients-file`` for predict, ``--global federated`` for
    compare) rather than infinitely many."""
    if verb == "compare":
        return args.global_model == "federated"
    return args.clients is not None or args.clients_file is not None


def accepted(args, verb) -> set:
    """The options that apply (``riskcalc.cli.families``)."""
    out = _MODEL | (_SIMULATION if verb == "compare" else set())
    return out | (_FEDERATED if federated(args, verb) else {"centre"})


def mode_note(args, verb) -> str:
    if verb == "compare":
        return (" with --global federated" if federated(args, verb)
                else " with --global oracle (give --global federated --clients M)")
    return (" with --clients/--clients-file" if federated(args, verb)
            else " without --clients M or --clients-file")


def read_clients_file(path) -> dict:
    """The other clients of a ``--clients-file`` (the linear format without sigma): a JSON list
    of objects with exactly the keys gamma and r, as ``{"gamma": [...], "r": [...]}``."""
    from riskcalc import federation_file

    data = federation_file.read(path, "--clients-file", versioned=False).clients
    for k, c in enumerate(data):
        if set(c) != {"gamma", "r"}:
            raise ValueError(f"--clients-file {path}: client {k} must have exactly the keys "
                             f"gamma, r with --model logistic; got "
                             f"{', '.join(sorted(c)) or 'none'}")
        for key in ("gamma", "r"):
            if isinstance(c[key], bool) or not isinstance(c[key], (int, float)):
                raise ValueError(f"--clients-file {path}: client {k}: {key} must be a number, "
                                 f"got {c[key]!r}")
    return {key: [float(c[key]) for c in data] for key in ("gamma", "r")}


def _problem(args, verb) -> dict:
    """The checked problem: method, model values, and for M clients the per-client lists
    (target first), global_lam and weights."""
    fed = federated(args, verb)
    methods = tuple(TITLES) if fed else ("rtfa",)
    if args.method not in methods:
        raise ValueError(f"--model logistic supports METHOD rtfa only without M clients; "
                         f"{', '.join(TITLES)} with "
                         + ("--global federated --clients M" if verb == "compare"
                            else "--clients M or --clients-file") + f" (got {args.method})")
    need = ("gamma", "signal", "r") + (() if args.method == "fedavg" else ("lam",))
    for name in need:
        if getattr(args, name) is None:
            raise ValueError(f"--model logistic needs --{name}")
    if args.method == "fedavg" and args.lam is not None:
        raise ValueError("--lam does not apply to METHOD fedavg (the global model's ridge is "
                         "--global-lam)")
    prob = dict(method=args.method, gamma=args.gamma, signal=args.signal, r=args.r,
                lam=args.lam, centre=args.centre or "oracle", federated=fed)
    if not fed:
        return prob
    if args.clients is not None and args.clients_file is not None:
        raise ValueError("give --clients M (identical clients) or --clients-file, not both")
    if args.clients is None and args.clients_file is None:
        raise ValueError("--global federated needs --clients M or --clients-file")
    if args.global_lam is None:
        raise ValueError("--model logistic with M clients needs --global-lam LG (the global "
                         "model's ridge toward 0, >= 0)")
    prob.update(global_lam=args.global_lam,
                weights=args.weights if families.given(args, "weights") else "samples")
    if args.clients_file is not None:
        from riskcalc.cli import fedargs

        others = fedargs.other_clients(args, read_clients_file)
        prob.update(gammas=[args.gamma] + others["gamma"], rs=[args.r] + others["r"])
    else:
        from riskcalc._validate import positive_int

        m = positive_int("--clients", args.clients)
        prob.update(gammas=[args.gamma] * m, rs=[args.r] * m)
    prob["clients"] = len(prob["gammas"])
    return prob


def _limit(prob):
    """``(target, federation)``: the target's limits (a dict of the quantities, the global
    model's, diagnostics) and, for a heterogeneous federation, every client's result."""
    import riskcalc

    if not prob["federated"]:
        res = riskcalc.logistic_limit(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                                      lam=prob["lam"], centre=prob["centre"])
        return res.as_dict(), None
    common = dict(signal=prob["signal"], global_lam=prob["global_lam"],
                  weights=prob["weights"], method=API_METHOD[prob["method"]],
                  **({} if prob["method"] == "fedavg" else {"lam": prob["lam"]}))
    if len(set(zip(prob["gammas"], prob["rs"]))) == 1:
        res = riskcalc.logistic_limit(gamma=prob["gamma"], r=prob["r"],
                                      clients=prob["clients"], **common)
        out = res.as_dict()
        out["method"] = prob["method"]
        return out, None
    pop = riskcalc.logistic_clients_limit(gamma=prob["gammas"], r=prob["rs"], **common)
    full = pop.as_dict()
    out = {k: full[k] for k in ("model", "iterations", "residual", "notes")}
    out["method"] = prob["method"]
    out["params"] = dict(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                         lam=prob["lam"], clients=prob["clients"],
                         global_lam=prob["global_lam"], weights=prob["weights"])
    out.update({q: full[q][0] for q in QUANTITIES})
    out.update({q: full[q] for q in GLOBAL})
    return out, full


def _header(out, federated):
    print(f"{TITLES[out['method']]} ({out['method']}, --model logistic); {REFERENCE}")
    print("  " + ", ".join(f"{k} = {v}" for k, v in out["params"].items() if v is not None))
    # The two modes' limits define the cosine differently (riskcalc.logistic.finite_clients,
    # riskcalc.logistic.fixed_point): say which.
    print("  risk = ||w_hat - w_i||^2; cosine = "
          + ("cos(w_hat, w_i)" if federated else "cos(w_hat - c, w_i - c), c the centre"))


def predict(args) -> int:
    """``riskcalc predict METHOD --model logistic``: the limits of the target client."""
    prob = _problem(args, "predict")
    out, fed = _limit(prob)
    if fed is not None:
        out["federation"] = fed
    if args.json:
        print(guards.dumps(out))
        return 0
    _header(out, prob["federated"])
    for name in QUANTITIES + (GLOBAL if prob["federated"] else ()):
        v = out.get(name)
        print(f"  {name:<14} {'n/a' if v is None else format(v, '.10g')}")
    if fed is not None:
        print(f"  mean over the {prob['clients']} clients: "
              + ", ".join(f"{q} {fed['mean'][q]:.10g}" for q in QUANTITIES
                          if fed["mean"][q] is not None))
    for note in out.get("notes", ()):
        print(f"  note: {note}")
    return 0


def _simulate(args, prob, d, reps):
    """Simulated means and standard errors of the target's quantities: ``{q: (mean, se)}``."""
    if not prob["federated"]:
        from montecarlo.logistic_ridge import simulate
        import riskcalc

        scale = (1.0 if prob["centre"] == "oracle"
                 else riskcalc.fedavg_centre_scale(prob["signal"], prob["r"]))
        sim = simulate(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                       lams=[prob["lam"]], d=d, reps=reps, seed=args.seed, n_jobs=args.jobs,
                       progress=not args.no_progress, centre_scale=scale)
        return {q: (float(sim[q][0][0]), float(sim[q][1][0])) for q in QUANTITIES}, sim["n"]
    from montecarlo.logistic_pipeline import simulate_pipeline

    sim = simulate_pipeline(gamma=prob["gammas"], r=prob["rs"], signal=prob["signal"],
                            lams=[] if prob["method"] == "fedavg" else [prob["lam"]],
                            global_lam=prob["global_lam"], weights=prob["weights"], d=d,
                            reps=reps, seed=args.seed, n_jobs=args.jobs,
                            progress=not args.no_progress, fedprox=prob["method"] == "pfedme")
    est = sim[API_METHOD[prob["method"]]]
    pick = (lambda v: float(v)) if prob["method"] == "fedavg" else (lambda v: float(v[0]))
    out = {q: (pick(est[q][0]), pick(est[q][1])) for q in QUANTITIES}
    out.update({"global_overlap": tuple(map(float, sim["global"]["overlap"])),
                "global_dist": tuple(map(float, sim["global"]["dist"]))})
    return out, sim["n"][0]


def _budget(args, prob, d, reps) -> None:
    """The work estimate (``guards.budget``) before any replicate runs: the target's exact
    Newton fit and, with M clients, the pooled fit over N = d sum_j 1/gamma_j samples."""
    from montecarlo.budget import logistic_replicate_seconds

    seconds = logistic_replicate_seconds(d, prob["gamma"])
    what = f"{reps} replicates of the logistic model at d = {d}"
    if prob["federated"]:
        pooled = 1.0 / sum(1.0 / g for g in prob["gammas"])
        seconds += logistic_replicate_seconds(d, pooled)
        what += f" with {prob['clients']} clients"
    guards.budget(args, reps, seconds, what,
                  "lower --reps or --d" + (" or the clients" if prob["federated"] else ""))


def compare(args) -> int:
    """``riskcalc compare METHOD --model logistic``: the limits next to exact-Newton
    simulations at dimension ``--d`` (oracle / infinite-client centre:
    ``montecarlo.logistic_ridge``; ``--global federated``: ``montecarlo.logistic_pipeline``)."""
    from montecarlo.stats import t_half_width
    from riskcalc._validate import positive_int

    prob = _problem(args, "compare")
    d = positive_int("--d", args.d, minimum=2)
    reps = positive_int("--reps", args.reps, minimum=2)
    pred, _ = _limit(prob)
    _budget(args, prob, d, reps)
    sim, n = _simulate(args, prob, d, reps)
    names = QUANTITIES + (GLOBAL if prob["federated"] else ())
    out = {"model": "logistic", "method": prob["method"], "params": pred["params"],
           "predicted": {}, "simulated": {"d": d, "n": n, "reps": reps, "seed": args.seed},
           "comparison": {}, "notes": list(pred.get("notes", ()))}
    for q in names:
        p, (mean, se) = pred.get(q), sim[q]
        ok = p is not None and mean == mean
        out["predicted"][q] = p if ok else None
        out["simulated"][q], out["simulated"][q + "_se"] = (mean, se) if ok else (None, None)
        out["comparison"][q] = {
            "rel_diff": (mean - p) / abs(p) if ok and p != 0 else None,
            "inside_ci95": bool(abs(mean - p) <= t_half_width(se, reps)) if ok else None}
    if args.json:
        print(guards.dumps(out))
        return 0
    _header(pred, prob["federated"])
    where = (f"FedAvg's exact global model over {prob['clients']} clients (global_lam "
             f"{prob['global_lam']:g}, {prob['weights']} weights)" if prob["federated"]
             else f"{prob['centre']} centre")
    print(f"  simulation: d = {d} (n = {n}), {reps} replicates, seed {args.seed}, "
          f"exact Newton solves, {where}")
    print(f"  {'':<14} {'predicted':>12} {'simulated':>12} {'std.err':>10} {'rel.diff':>9}"
          f"  in 95% CI")
    for q in names:
        cmp = out["comparison"][q]
        if out["predicted"][q] is None:
            print(f"  {q:<14} {'n/a':>12}")
            continue
        rel = "n/a" if cmp["rel_diff"] is None else f"{100 * cmp['rel_diff']:+.3f}%"
        print(f"  {q:<14} {out['predicted'][q]:>12.6g} {out['simulated'][q]:>12.6g} "
              f"{out['simulated'][q + '_se']:>10.3g} {rel:>9}  "
              f"{'yes' if cmp['inside_ci95'] else 'no'}")
    for note in out["notes"]:
        print(f"  note: {note}")
    return 0
