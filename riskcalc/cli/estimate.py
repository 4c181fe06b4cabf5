"""``riskcalc estimate --data FED.npz``: a federation's gamma_j, sigma_j, r_j, rho_j and
covariance spectrum from data, with standard errors (``riskcalc.estimate``)."""

from __future__ import annotations

from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards

#: Most clients a note names (the table has every client).
NOTE_MAX = 10


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "estimate", help=COMMANDS["estimate"],
        description="Moment (Dicker 2014) or local least-squares estimates of every client's "
                    "gamma_j = d/n_j, sigma_j, r_j = ||theta_j - theta_0||, rho_j = ||theta_j|| "
                    "and of the spectral moments of the covariance, with standard errors. The "
                    "JSON is a federation file (fedrisk_federation 1) for --federation of "
                    "riskcalc advise, predict, compare and sweep.")
    p.add_argument("--data", required=True, metavar="FED.npz",
                   help="a .npz with arrays X (N x d), y (N,), client (N,) integer ids, or a "
                        "CSV with a header naming a 'client' and a 'y' column (the other "
                        "columns are the features)")
    p.add_argument("--route", choices=("auto", "moments", "least-squares"), default="auto",
                   help="client estimates: moments (any n_j) or least squares (every n_j > "
                        "d + 2); auto: least squares when every n_j >= 1.5 d and n_j > d + 2")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    guards.add_budget_option(p)
    p.set_defaults(func=run)


def estimate_data(path, **options):
    """``riskcalc.estimate.estimate_file(path, **options)`` with its messages naming the flag:
    the library's "data file PATH: ..." (and "path needs a file name") as "--data PATH: ..."
    (the library began them with "--data", a flag, when called from Python)."""
    from riskcalc import estimate

    try:
        return estimate.estimate_file(path, **options)
    except ValueError as exc:
        text = str(exc)
        for lib in ("data file ", "path "):
            if text.startswith(lib):
                raise ValueError("--data " + text[len(lib):]) from None
        raise


def run(args) -> int:
    # A large data file is read and estimated in tens of seconds (97 MB of CSV: 37 s, silent).
    limit = guards.max_seconds(args)    # the estimate's time, before its work (its data read)
    with guards.working("riskcalc estimate"):
        est = estimate_data(args.data, route=args.route, max_seconds=limit)
    out = est.as_dict()
    if args.json:
        print(guards.dumps(out))
        return 0
    print(f"d = {out['d']}, {len(out['clients'])} clients, route: {out['estimate']['route']}")
    for note in est.notes:
        print(f"note: {note}")
    print(f"{'client':>8} {'n':>7} {'gamma':>8} {'sigma':>17} {'r':>17} {'rho':>17}")
    for c in out["clients"]:
        # One space before each column: wider values (ids past 8 digits, 1.234e-05) ran
        # into the next.
        cells = "".join(f" {c[k]:>8.4g} +- {_se(c['se'][k])}" for k in ("sigma", "r", "rho"))
        print(f"{c['id']:>8} {c['n']:>7} {out['d'] / c['n']:>8.4g}{cells}")
    sp = out["estimate"]["spectrum"]
    moments = ", ".join(f"m{k + 1} = {m:.4g} +- {s:.2g}"
                        for k, (m, s) in enumerate(zip(sp["moments"], sp["moments_se"])))
    print(f"||theta_0|| = {out['signal']:.4g} +- {_se(out['estimate']['signal_se'])}")
    print(f"covariance spectrum: {moments}; as a spectrum: {sp['spec']}")
    for k in ("sigma", "r", "rho"):
        at_zero = [(c["id"], sq[k + "2"], sq[k + "2_se"])
                   for c, sq in zip(out["clients"], out["estimate"]["squares"])
                   if c["se"][k] is None]
        if at_zero:
            # The first NOTE_MAX only: 1000 clients made each note a line of 40,000 characters.
            more = len(at_zero) - NOTE_MAX
            shown = at_zero[:NOTE_MAX]
            rest = f" and {more} more (--json has them all)" if more > 0 else ""
            print(f"note: {k} of client(s) {', '.join(str(i) for i, _, _ in shown)}{rest} "
                  f"estimated at or within two standard errors (or rounding) of 0 (the unbiased "
                  f"estimate of {k}^2 is " + ", ".join(f"{v:.3g} +- {e:.2g}" for _, v, e in shown)
                  + (", ..." if rest else "")
                  + f"): no standard error for {k} itself there (the delta method needs "
                  f"{k}^2 well away from 0)")
    if est.centring_note():
        print(f"note: {est.centring_note()}")
    if len(out["clients"]) == 2:
        print("note: with 2 clients r_j assumes theta_0 in a direction independent of the "
              "clients' deviations (from 3 clients on, r_j comes from the pairwise distances "
              "and needs no assumption on theta_0)")
    print("--json writes these estimates as a federation file (riskcalc advise --federation, "
          "predict/compare --federation --target J)")
    return 0


def _se(v) -> str:
    return f"{'n/a':<6}" if v is None else f"{v:<6.2g}"
