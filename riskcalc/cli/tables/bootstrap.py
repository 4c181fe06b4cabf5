"""``riskcalc advise --data FED.npz --bootstrap [B]``: the intervals of every candidate's
predicted risk and the recommendation's stability (``riskcalc.advise.uncertainty``), in the
text table, ``--json`` and ``--csv``."""

from __future__ import annotations

import numpy as np

from riskcalc._validate import seed_integer
from riskcalc.advise.uncertainty import DRAWS, LEVEL


def add_arguments(p) -> None:
    """``--bootstrap [B]`` and ``--seed``."""
    p.add_argument("--bootstrap", type=int, nargs="?", const=DRAWS, metavar="B",
                   help=f"with --data: {100 * LEVEL:g}%% intervals on every candidate's "
                        "predicted risk and the share of plausible federations that keep the "
                        f"recommendation, from B (default {DRAWS}) draws of the estimates "
                        "within their standard errors (parametric bootstrap; B advise runs)")
    # default None: an explicit --seed 0 without --bootstrap is refused as --seed 3 is
    p.add_argument("--seed", type=int,
                   help="seed of the bootstrap draws (numpy.random.SeedSequence; default 0)")


def check(args) -> None:
    """The options' ranges, before any work."""
    if args.bootstrap is None:
        if args.seed is not None:
            raise ValueError("--seed applies to --bootstrap only")
        return
    if args.seed is None:
        args.seed = 0
    if args.data is None:
        raise ValueError("--bootstrap needs --data: it draws the estimates within their joint "
                         "covariance, which only the data give (a federation file's se are "
                         "each number's own standard error, without the covariances)")
    if not 2 <= args.bootstrap <= 100_000:
        # 1 was taken: a point "interval" [x, x] and the recommendation "stable" in 1 draw.
        raise ValueError(f"--bootstrap must be a number of draws in 2..100000 (an interval "
                         f"needs two), got {args.bootstrap}")
    seed_integer("--seed", args.seed)


def compute(args, est, result, seconds: float, left: float, done=None):
    """The ``Intervals`` of ``--bootstrap`` (None without it), within the ``left`` seconds of
    ``--max-minutes`` that the advice left: estimated before it starts (B times ``seconds``,
    the CPU time of the point estimate's advise: each draw is one more such run) and bounded
    while it runs (the caller's ``guards.time_limit`` stops it in flight; ``done`` is called
    after each draw)."""
    if args.bootstrap is None:
        return None
    import sys

    from tqdm.auto import tqdm

    from riskcalc.advise import uncertainty
    from riskcalc.cli.shared import guards
    from riskcalc.spectrum import as_spectrum

    each = max(seconds, 1e-3)
    guards.check_time(args.bootstrap, each, 1, left,
                      f"the bootstrap ({args.bootstrap} advise runs, after the advice)",
                      "use fewer draws (--bootstrap B) or fewer pipelines (--methods), or "
                      "allow more time with --max-minutes")
    spectrum = as_spectrum(args.spectrum, d=est.d) if args.spectrum else None
    bar = tqdm(total=args.bootstrap, desc="bootstrap", file=sys.stderr, leave=False,
               disable=args.no_progress or args.bootstrap * each < 5.0)
    try:
        return uncertainty.bootstrap(est, result, spectrum=spectrum,
                                     draws=args.bootstrap, seed=args.seed,
                                     max_seconds=left, progress=lambda: _step(bar, done))
    finally:
        bar.close()


def _step(bar, done) -> None:
    bar.update(1)
    if done is not None:
        done()


def add_json(out: dict, result, intervals) -> None:
    """``--json``: ``interval`` in every candidate (``Intervals.candidate``) and the
    bootstrap's summary under ``uncertainty``."""
    if intervals is None:
        return
    for c, d in zip(result.candidates, out["candidates"]):
        d["interval"] = intervals.candidate((c.method, c.weights))
    out["recommended"]["interval"] = intervals.candidate(
        (result.recommended.method, result.recommended.weights))
    out["uncertainty"] = intervals.as_dict()


#: Columns ``--csv`` adds with ``--bootstrap``: the bounds of the client's risk.
CSV_COLUMNS = ("risk_lo", "risk_hi")


def csv_cells(intervals, c, j) -> dict:
    """The ``CSV_COLUMNS`` of candidate ``c`` and client ``j`` (``inf`` for an infinite end,
    as the risk; empty: no draw evaluated the candidate)."""
    q = intervals.risks.get((c.method, c.weights))
    if q is None:
        return dict.fromkeys(CSV_COLUMNS, "")
    return {k: repr(float(v)) if not np.isnan(v) else "" for k, v in zip(CSV_COLUMNS, q[j])}


def print_intervals(result, intervals, per_client: bool) -> None:
    """The candidates' intervals (mean, worst, and per client when ``per_client``) and the
    recommendation's stability, after the table."""
    if intervals is None:
        return
    iv = intervals
    # The ends are inverted-CDF quantiles: with B (1 - level) / 2 <= 1 the lower end is the
    # smallest draw itself (B <= 20 at level 0.9), which a few draws did not say.
    enough = int(np.floor(2.0 / (1.0 - iv.level) + 1e-9)) + 1
    print(f"{100 * iv.level:g}% intervals (parametric bootstrap over the estimates, "
          f"{iv.draws} draws, seed {iv.seed})"
          + (f"; below {enough} draws an end is the extreme draw itself" if iv.draws < enough
             else "") + ":")
    # A space before each interval: two of 22 characters ([1.069e-32, 5.738e-17]) ran together.
    print(f"{'rank':>4}  {'method':<12}{'weights':<9}{'mean risk':>25}{'worst risk':>25}"
          + ("  per-client risks" if per_client else ""))
    for k, c in enumerate(result.candidates, 1):
        key = (c.method, c.weights)
        if key not in iv.mean:
            print(f"{k:>4}  {c.method:<12}{c.weights:<9}  evaluated in no draw")
            continue
        cells = ("  " + " ".join(_pair(q) for q in iv.risks[key])) if per_client else ""
        missing = iv.draws - iv.evaluated[key]
        tail = f"  ({missing} draw(s) left it out)" if missing else ""
        print(f"{k:>4}  {c.method:<12}{c.weights:<9} {_pair(iv.mean[key]):>24}"
              f" {_pair(iv.worst[key]):>24}{cells}{tail}")
    point = f"{iv.point[0]} ({iv.point[1]} weights)" if iv.point[1] != "none" \
        else f"{iv.point[0]} (no global model)"
    others = [f"{share / iv.draws:.0%} {m} ({w})" for (m, w), share in
              iv.recommended.most_common() if (m, w) != iv.point]
    rounding = (f"; {iv.rounding / iv.draws:.0%} of the draws have their best mean risk at "
                "rounding level too" if iv.rounding else "")
    if result.at_rounding():
        # Which of risks at rounding level is smallest is rounding: no recommendation to test.
        print(f"no recommendation to test: {point}'s mean risk is at rounding level, tied with "
              f"it in {iv.stability:.0%} of the draws{rounding}")
    else:
        print(f"recommendation {point} (or a pipeline tied with it) in {iv.stability:.0%} of "
              "the draws" + (f"; otherwise {', '.join(others[:4])}" if others else " (stable)")
              + rounding)
    if iv.incomplete:
        print(f"  {iv.incomplete} draw(s) left out a candidate that has no limit there (local "
              "ridge at an estimated rho_j = 0, a tuning that fails): the shares count only "
              "the candidates each draw evaluated")


def _pair(q) -> str:
    lo, hi = (("inf" if not np.isfinite(v) else f"{v:.4g}") for v in q)
    return f"[{lo}, {hi}]"
