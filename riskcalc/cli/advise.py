"""``riskcalc advise``: the candidate pipelines of a federation, ranked by predicted risk.

The federation comes from ``--clients-file`` (a JSON list of every client: ``gamma`` or ``n``
with ``--d``, ``r``, ``sigma``, optionally ``rho`` and ``spectrum``; clients with different
SPECs are covariate shift) or from data (``--data FED.npz|FED.csv``, through
``riskcalc estimate``). Theory: ``riskcalc.advise``.
"""

from __future__ import annotations

from riskcalc.cli import COMMANDS, guards


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "advise", help=COMMANDS["advise"],
        description="Evaluate every candidate pipeline (FedAvg, FTFA, RTFA at each client's "
                    "optimal lam, MAML-FL and pFedMe at their tuned parameter, local ridge; "
                    "sample, uniform and optimal client weights) on the exact finite-M limits "
                    "and recommend the one with the smallest mean risk (paper 003 at finite M).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--clients-file", metavar="FED.json",
                     help='JSON list of ALL clients, each {"gamma": G (or "n": N with --d), '
                          '"r": R, "sigma": S} and optionally "rho" (||theta_j||, for local '
                          'ridge) and "spectrum" (SPEC; different SPECs are covariate shift: '
                          'covariances diagonal in one shared basis in SPEC order)')
    src.add_argument("--data", metavar="FED.npz",
                     help="estimate the federation from data first (see riskcalc estimate)")
    p.add_argument("--spectrum", metavar="SPEC",
                   help="covariance spectrum of the clients that give none (default identity; "
                        "with --data, the estimated one)")
    p.add_argument("--d", type=float,
                   help="dimension, to turn clients' n into gamma = d / n (and the number of "
                        "eigenvalues of powerlaw:P under covariate shift)")
    p.add_argument("--methods", metavar="LIST",
                   help="comma-separated pipelines to evaluate (default all: "
                        "fedavg,ftfa,rtfa,maml_fl,pfedme,local_ridge,ftfa_steps)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    guards.add_budget_option(p)
    p.set_defaults(func=run)


def read_federation(args):
    """The Federation of ``--clients-file`` or ``--data`` (and the estimate, or None)."""
    from riskcalc import advise as adv
    from riskcalc.spectrum import Spectrum

    if args.data is not None:
        from riskcalc import estimate

        if args.d is not None:
            raise ValueError("--d applies to --clients-file (the data give d)")
        est = estimate.estimate_file(args.data)
        spectrum = (Spectrum.parse(args.spectrum, d=est.d) if args.spectrum
                    else est.spectrum())
        return est.federation(spectrum=spectrum), est
    path = args.clients_file
    data = guards.client_objects(path, '{"gamma": G, "r": R, "sigma": S}')
    return adv.from_clients(data, d=args.d, spectrum=args.spectrum or None), None


def run(args) -> int:
    from riskcalc import advise as adv

    fed, est = read_federation(args)
    methods = None
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    result = _solve(args, fed, methods)
    if args.json:
        out = result.as_dict()
        if est is not None:
            out["estimate"] = est.as_dict()
        print(guards.dumps(out))
        return 0
    print_table(result)
    return 0


def _solve(args, fed, methods):
    """``riskcalc.advise.advise`` within ``--max-minutes`` (estimated before it starts:
    ``riskcalc.advise.cost``), with a progress bar over the pipelines on stderr."""
    import sys

    from tqdm.auto import tqdm

    from riskcalc import advise as adv
    from riskcalc.advise import cost

    chosen = adv.PIPELINES if methods is None else methods
    est = cost.estimate_seconds(fed, [m for m in chosen if m in adv.PIPELINES])
    limit = 60.0 * getattr(args, "max_minutes", guards.MAX_MINUTES)
    guards.budget(args, 1, sum(est.values()), f"advise ({fed.m} clients)",
                  cost.advice(est, limit))
    bar = tqdm(total=len(chosen), desc="advise", file=sys.stderr, leave=False,
               disable=args.no_progress or sum(est.values()) < 5.0)
    try:
        return adv.advise(fed, methods=methods,
                          progress=lambda name: (bar.set_postfix_str(name), bar.update(1)))
    finally:
        bar.close()


def _fmt(v) -> str:
    return "inf" if v is None or v == float("inf") else f"{v:.4g}"


def _tuning(c) -> str:
    parts = []
    for k, v in c.tuning.items():
        if isinstance(v, list):
            parts.append(f"{k}=[{', '.join(_fmt(x) for x in v)}]")
        elif v is not None:
            parts.append(f"{k}={_fmt(v)}")
    return " ".join(parts) or "-"


def print_table(result) -> None:
    """The ranked candidates, the recommendation, the weight gains and the skips."""
    fed = result.federation
    print(f"federation: {fed.m} clients, {fed.covariance_text()}")
    head = f"{'rank':>4}  {'method':<12}{'weights':<9}{'mean':>9}{'worst':>9}  per-client risks"
    print(head)
    for k, c in enumerate(result.candidates, 1):
        d = c.as_dict()
        risks = " ".join(f"{_fmt(x):>7}" for x in d["risks"])
        print(f"{k:>4}  {c.method:<12}{c.weights:<9}{_fmt(d['mean_risk']):>9}"
              f"{_fmt(d['worst_risk']):>9}  {risks}")
        print(f"{'':>6}tuning: {_tuning(c)}")
    rec = result.recommended
    how = "no global model" if rec.p is None else f"{rec.weights} weights"
    print(f"recommended for the federation: {rec.method} ({how}) "
          f"(mean risk {_fmt(rec.mean_risk)}, worst client {_fmt(rec.worst_risk)})")
    if rec.p is not None:
        print("  weights p_j: " + ", ".join(f"{x:.4g}" for x in rec.p))
    for row in result.per_client():
        how = ("no global model" if row["weights"] == "none"
               else f"{row['weights']} weights")
        print(f"  client {row['client']}: {row['method']} ({how}), risk {_fmt(row['risk'])}")
    for g in result.weight_gains():
        print(f"optimal weights, {g['method']}: mean risk {_fmt(g['optimal'])} vs samples "
              f"{_fmt(g['samples'])}, uniform {_fmt(g.get('uniform'))} "
              f"(gain {100 * (g['gain_vs_samples'] or 0):.2f}% over samples)")
    for s in result.skipped:
        print(f"skipped: {s}")
