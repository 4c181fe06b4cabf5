"""``riskcalc sweep METHOD --model logistic``: predicted vs simulated logistic limits over a grid.

Comma-separated ``--gamma``, ``--r``, ``--lam`` and ``--clients`` span the grid (outer
product); ``--signal`` and ``--global-lam`` are single values. Without ``--global federated``
the method is RTFA toward the oracle or FedAvg's infinite-client centre (``--centre``), or local
ridge (centre 0); with it
(and ``--clients M,...``, ``--clients-file`` or ``--federation``) the pipeline at finite M
(``montecarlo.logistic.sweep``). The rows, ``--out``, ``--format``, ``--cache`` (resume after
an interrupt), ``--jobs``, ``--scheduler`` and ``--max-minutes`` behave as in the linear sweep.
"""

from __future__ import annotations

from riskcalc.cli.shared import guards
from riskcalc.cli.sweep import _floats, emit, integers


def run(args, *, methods, spectrum, max_seconds) -> int:
    """The sweep of ``args`` (``riskcalc.cli.logistic.family.sweep`` gives the METHODs of this mode,
    the ``--spectrum`` and the limits' ``max_seconds``, as predict and compare hold them)."""
    from montecarlo.logistic.sweep import METHODS, cached_tasks, grid, sweep_logistic
    from montecarlo.logistic.sweep_checks import replicate_seconds
    from riskcalc._validate import positive_int, seed_integer

    fed = args.global_model == "federated"
    if args.method not in methods:
        raise ValueError(f"sweep --model logistic supports METHOD rtfa and local_ridge without "
                         f"M clients; {', '.join(METHODS)} with --global federated --clients M "
                         f"(got {args.method})")
    values = {k: _floats(k, getattr(args, k)) for k in ("gamma", "r", "lam")}
    given = {**values, "signal": args.signal}
    for name in ("gamma", "r", "signal") + (() if args.method == "fedavg" else ("lam",)):
        if given[name] is None:
            raise ValueError(f"sweep --model logistic needs --{name}")
    d = positive_int("--d", args.d, minimum=2)
    reps = positive_int("--reps", args.reps, minimum=2)
    seed_integer("--seed", args.seed)
    if args.method != "fedavg":
        pfedme_lams(args.method, values["lam"])
        simulated_lams(values["lam"], "sweep")
    clients, others = None, None
    if fed:
        if args.global_lam is None and args.method != "local_ridge":
            raise ValueError("--model logistic with M clients needs --global-lam LG (the global "
                             "model's ridge toward 0, >= 0)")
        if args.clients_file is not None:
            if args.clients is not None:
                raise ValueError("give --clients M (identical clients) or --clients-file, not "
                                 "both")
            from riskcalc.cli.options import clients_file

            others = clients_file.other_clients(args, clients_file.read_logistic_clients_file)
        elif args.clients is None:
            raise ValueError("--global federated needs --clients M[,M2,...], --clients-file or "
                             "--federation")
        else:
            clients = integers("clients", args.clients)
    points = grid(values["gamma"], values["r"], clients, others)
    lams = 1 if args.method == "fedavg" or values["lam"] is None else len(values["lam"])
    seconds = replicate_seconds(args.method, points, others, d, lams, args.signal, spectrum)
    run = dict(gamma=values["gamma"], r=values["r"], signal=args.signal, lam=values["lam"],
               d=d, clients=clients, others=others, global_lam=args.global_lam,
               weights=args.weights or "samples", centre=args.centre or "oracle",
               spectrum=spectrum, reps=reps, seed=args.seed)
    # Only the tasks --cache lacks are timed: a resumed sweep keeps the default limit.
    cached = cached_tasks(args.method, cache=args.cache, **run) if args.cache else 0
    samples = guards.many_samples(d, min(g for g, _, _ in points))
    guards.budget(args, reps * len(points), seconds / len(points),
                  f"{reps} replicate(s) x {len(points)} point(s) of the logistic model at "
                  f"d = {d}{samples}", "lower --reps, --d, the grid"
                  + (" or the clients, --signal and --r (the exact test metrics' rule grows "
                     "with ||w_i||)" if fed else "") + (", or raise --gamma" if samples else ""),
                  cached)
    rows = sweep_logistic(args.method, n_jobs=args.jobs, scheduler=args.scheduler,
                          progress=not args.no_progress, cache=args.cache,
                          max_seconds=max_seconds, max_minutes=None, **run)
    return emit(args, rows)


def pfedme_lams(method: str, lams) -> None:
    """Refuse ``--lam 0`` with METHOD pfedme (predict, compare, sweep): predict said Python's
    "lam must lie in (0, inf)", naming no option, and sweep that "predict gives the lam = 0
    limit", which it does not for pfedme."""
    if method == "pfedme" and lams is not None and any(v == 0 for v in lams):
        raise ValueError("--lam 0: METHOD pfedme needs --lam > 0 (at lam = 0 its joint "
                         "objective no longer couples the clients to the global model: each is "
                         "its own unpenalized fit, METHOD local_ridge --lam 0)")


def simulated_lams(lams, verb: str) -> None:
    """Refuse ``--lam 0`` before a simulation: predict answers lam = 0 below the separability
    threshold (the MLE exists as d -> inf), but the simulation's exact Newton fit at finite d
    needs lam > 0 (the data of one replicate may be separable: the MLE then does not exist).
    It used to start, then stop with "lam must lie in (0, inf)" naming no option."""
    if lams is not None and any(v == 0 for v in lams):
        raise ValueError(f"--lam 0: {verb} --model logistic simulates lam > 0 only (at finite d "
                         "the data may be separable and the unpenalized MLE then does not "
                         "exist); predict gives the lam = 0 limit where the MLE exists (gamma "
                         "below the Candes-Sur threshold h(||w_i||), riskcalc.logistic."
                         "transition; it refuses lam = 0 above it), or simulate a small lam > 0 "
                         "such as 1e-4")
