"""``--model logistic`` of ``riskcalc predict`` and ``riskcalc compare``: personalized logistic
regression (``riskcalc.logistic``, ``montecarlo.logistic_ridge``).

``predict`` and ``compare`` add these options with ``add_options`` and hand over with
``if logistic.applies(args): return logistic.predict(args)`` (or ``compare``); everything
logistic lives here so that the linear commands stay as they are.
"""

from __future__ import annotations

from riskcalc.cli import guards


MODELS = ("linear", "logistic")
TITLE = "RTFA with the logistic loss (rtfa, --model logistic)"
REFERENCE = "CGMT limit, riskcalc.logistic (after Salehi-Abbasi-Hassibi 2019, Sur-Candes 2019)"
QUANTITIES = ("risk", "cosine", "test_logloss", "test_error")

# Options of the linear model that have no meaning here, with their parser defaults (None
# stands for "not given" too, e.g. predict's --weights): giving any of them another value with
# --model logistic is an error rather than silently ignored.
_LINEAR_ONLY = {"sigma": None, "rho": None, "alpha": None, "spectrum": "identity",
                "route": "auto", "steps": None, "step_size": None, "global_model": "oracle",
                "clients": None, "clients_file": None, "weights": None,
                "measure": "conditional", "eigvecs": "aligned", "features": "gaussian",
                "noise": "gaussian", "df": None, "scheduler": None}


def add_options(parser) -> None:
    """Add ``--model`` and ``--signal``."""
    parser.add_argument("--model", choices=MODELS, default="linear",
                        help="linear (paper 003, default) or logistic (P(y=1|x) = sigmoid(x.w_i),"
                             " w_i = w_0 + r u, ||w_0|| = --signal; rtfa only)")
    parser.add_argument("--signal", type=float,
                        help="||w_0||, the norm of the centre, >= 0 (--model logistic)")


def applies(args) -> bool:
    """True for ``--model logistic`` (after checking its options); False for linear."""
    if args.model != "logistic":
        if args.signal is not None:
            raise ValueError("--signal applies to --model logistic only")
        return False
    if args.method != "rtfa":
        raise ValueError(f"--model logistic supports METHOD rtfa only, got {args.method}")
    for name, default in _LINEAR_ONLY.items():
        if getattr(args, name, default) not in (default, None):
            raise ValueError(f"--{name.replace('_', '-')} does not apply to --model logistic"
                             .replace("--global-model", "--global"))
    for name in ("signal", "r", "lam"):
        if getattr(args, name) is None:
            raise ValueError(f"--model logistic needs --{name}")
    return True


def _limit(args):
    from riskcalc.logistic import logistic_limit

    return logistic_limit(gamma=args.gamma, signal=args.signal, r=args.r, lam=args.lam)


def predict(args) -> int:
    """``riskcalc predict rtfa --model logistic``: the limits of ``riskcalc.logistic_limit``."""
    res = _limit(args)
    if args.json:
        print(guards.dumps(res.as_dict()))
        return 0
    print(f"{TITLE}; {REFERENCE}")
    print("  " + ", ".join(f"{k} = {v:g}" for k, v in res.params.items()))
    for name in QUANTITIES:
        print(f"  {name:<12} {getattr(res, name):.10g}")
    for note in res.notes:
        print(f"  note: {note}")
    return 0


def compare(args) -> int:
    """``riskcalc compare rtfa --model logistic``: the limits next to the exact-Newton
    simulation (``montecarlo.logistic_ridge``) at dimension ``--d``."""
    from montecarlo.logistic_ridge import simulate
    from montecarlo.stats import t_half_width
    from riskcalc._validate import positive_int

    from montecarlo.budget import logistic_replicate_seconds

    d = positive_int("--d", args.d, minimum=2)
    reps = positive_int("--reps", args.reps, minimum=2)
    res = _limit(args)
    guards.budget(args, reps, logistic_replicate_seconds(d, args.gamma),
                  f"{reps} replicates of the logistic model at d = {d}", "lower --reps or --d")
    sim = simulate(gamma=args.gamma, signal=args.signal, r=args.r, lams=[args.lam], d=d,
                   reps=reps, seed=args.seed, n_jobs=args.jobs, progress=not args.no_progress)
    out = {"model": "logistic", "method": "rtfa", "params": res.params,
           "predicted": {q: getattr(res, q) for q in QUANTITIES},
           "simulated": {"d": d, "n": sim["n"], "reps": reps, "seed": args.seed},
           "comparison": {}, "notes": list(res.notes)}
    for q in QUANTITIES:
        pred, mean, se = getattr(res, q), float(sim[q][0][0]), float(sim[q][1][0])
        ok = pred == pred and mean == mean   # NaN (cosine at r = 0) has no comparison
        out["simulated"][q], out["simulated"][q + "_se"] = (mean, se) if ok else (None, None)
        out["comparison"][q] = {
            "rel_diff": (mean - pred) / abs(pred) if ok and pred != 0 else None,
            "inside_ci95": bool(abs(mean - pred) <= t_half_width(se, reps)) if ok else None}
        if not ok:
            out["predicted"][q] = None
    if args.json:
        print(guards.dumps(out))
        return 0
    print(f"{TITLE}; {REFERENCE}")
    print("  " + ", ".join(f"{k} = {v:g}" for k, v in res.params.items()))
    print(f"  simulation: d = {d} (n = {sim['n']}), {reps} replicates, seed {args.seed}, "
          "exact Newton solves, oracle centre w_0")
    print(f"  {'':<12} {'predicted':>12} {'simulated':>12} {'std.err':>10} {'rel.diff':>9}"
          f"  in 95% CI")
    for q in QUANTITIES:
        cmp = out["comparison"][q]
        if out["predicted"][q] is None:
            print(f"  {q:<12} {'n/a':>12}")
            continue
        rel = "n/a" if cmp["rel_diff"] is None else f"{100 * cmp['rel_diff']:+.3f}%"
        print(f"  {q:<12} {out['predicted'][q]:>12.6g} {out['simulated'][q]:>12.6g} "
              f"{out['simulated'][q + '_se']:>10.3g} {rel:>9}  "
              f"{'yes' if cmp['inside_ci95'] else 'no'}")
    for note in res.notes:
        print(f"  note: {note}")
    return 0
