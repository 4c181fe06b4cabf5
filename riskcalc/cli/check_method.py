"""``riskcalc check-method NAME``: the method registry's common checks on one method
(``montecarlo.check_method``), e.g. a method loaded with ``--plugin``."""

from __future__ import annotations

import math

from riskcalc.cli import COMMANDS
from riskcalc.cli.shared import guards


def add_parser(subparsers) -> None:
    from montecarlo.registry_checks import D, K, REPS, RTOL

    p = subparsers.add_parser(
        "check-method", help=COMMANDS["check-method"],
        description="Check that a method's limit is finite, vectorized and route-independent, "
                    "that its estimator has the right shapes, and that the simulated bias, "
                    "variance and risk agree with the limit: the replicate means at d and 2d "
                    "are extrapolated to d = infinity (2 m(2d) - m(d)) and must lie within "
                    "--k standard errors plus --rtol of the limit (a 2% error in a limit "
                    "fails). A check that raises is a FAIL row. Exit status 1 when a check "
                    "fails.")
    p.add_argument("method", metavar="METHOD", help="a registered method name")
    p.add_argument("--gamma", type=float, default=2.0, help="d / n of the client (default 2)")
    p.add_argument("--sigma", type=float, default=0.5, help="noise level (default 0.5)")
    p.add_argument("--r", type=float, help="||theta_i - theta_0|| (methods taking r; default 1)")
    p.add_argument("--rho", type=float, help="||theta_i|| (methods taking rho; default 1)")
    p.add_argument("--lam", type=float, help="penalty (methods taking lam; default 0.5)")
    p.add_argument("--alpha", type=float, help="step size (methods taking alpha; default 0.5)")
    p.add_argument("--spectrum", metavar="SPEC",
                   help="simulate this covariance only (as in predict; default: identity and "
                        "two-point:1,4,0.5)")
    p.add_argument("--d", type=int, default=D,
                   help=f"smaller dimension of the simulation; it runs at d and 2d "
                        f"(default {D})")
    p.add_argument("--reps", type=int, default=REPS,
                   help=f"replicates per dimension, >= 2 (default {REPS})")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--rtol", type=float, default=RTOL,
                   help=f"allowance for the finite-d difference left after extrapolation, "
                        f"relative, > 0 (default {RTOL})")
    p.add_argument("--k", type=float, default=K,
                   help=f"standard errors of the extrapolated mean allowed, > 0 (default {K:g})")
    guards.add_budget_option(p)
    p.add_argument("--json", action="store_true", help="print the rows as one JSON list")
    p.set_defaults(func=run)


def _positive(name, value, high=math.inf):
    if not (math.isfinite(value) and 0 < value <= high):
        raise ValueError(f"{name} must be a finite number in (0, {high:g}], got {value!r}")


def _model(args):
    """(signal, tuning, spectrum cases) from the options, checked against the method."""
    import riskcalc
    from montecarlo.linear.estimators import get_estimator
    from montecarlo.registry_checks import CASES, finite_limits, grid_in_range
    from riskcalc.spectrum import Spectrum

    info = riskcalc.get_method(args.method)
    get_estimator(args.method)          # before any work: a method with a limit alone
    for name in ("r", "rho"):
        if name != info.signal and getattr(args, name) is not None:
            raise ValueError(f"--{name} does not apply to {args.method} (it takes "
                             f"--{info.signal})")
    for name in ("lam", "alpha"):
        if name != info.tuning and getattr(args, name) is not None:
            raise ValueError(f"--{name} does not apply to {args.method}"
                             + (f" (it takes --{info.tuning})" if info.tuning else ""))
    signal = getattr(args, info.signal)
    tuning = getattr(args, info.tuning) if info.tuning else None
    cases = CASES
    if args.spectrum is not None:
        sp = Spectrum.parse(args.spectrum, d=args.d)
        cases = ((args.spectrum, None if sp.is_identity else sp),)
    signal = 1.0 if signal is None else signal
    tuning = (0.5 if tuning is None else tuning) if info.tuning else None
    # Validate the model once, as predict would, before any simulation.
    riskcalc.ClientSpec(args.method, gamma=args.gamma, sigma=args.sigma,
                        **{info.signal: signal}, **({info.tuning: tuning} if info.tuning else {}))
    for check in (grid_in_range, finite_limits):
        check(args.method, gamma=args.gamma, sigma=args.sigma, signal=signal, tuning=tuning,
              cases=cases, option="--")
    return signal, 0.5 if tuning is None else tuning, cases


def run(args) -> int:
    from montecarlo.linear.instances import linear_replicate_seconds
    from montecarlo.linear.instances import Setting
    from montecarlo.registry_checks import run_checks
    from riskcalc._validate import positive_int, seed_integer

    positive_int("--d", args.d, minimum=2)
    positive_int("--reps", args.reps, minimum=2)
    seed_integer("--seed", args.seed)
    _positive("--rtol", args.rtol, 1.0)
    _positive("--k", args.k, 100.0)
    signal, tuning, cases = _model(args)
    samples = guards.many_samples(2 * args.d, args.gamma)
    guards.budget(args, 2 * len(cases) * args.reps,
                  linear_replicate_seconds(Setting(d=2 * args.d), args.gamma),
                  f"{args.reps} replicates x {len(cases)} case(s) at d = {args.d} and "
                  f"{2 * args.d}{samples}", "lower --reps or --d"
                  + (", or raise --gamma" if samples else ""))
    rows = run_checks(args.method, gamma=args.gamma, sigma=args.sigma, signal=signal,
                      tuning=tuning, spectrum=cases, d=args.d, reps=args.reps,
                      seed=args.seed, rtol=args.rtol, k=args.k)
    if args.json:
        print(guards.dumps([{k: (bool(v) if k == "ok" else v) for k, v in row.items()}
                            for row in rows]))
    else:
        for row in rows:
            extra = ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in row.items() if k not in ("check", "case", "ok"))
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {row['check']:<20} {row['case']:<18} "
                  f"{extra}")
    return 0 if all(row["ok"] for row in rows) else 1
