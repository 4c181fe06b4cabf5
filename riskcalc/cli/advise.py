"""``riskcalc advise``: the candidate pipelines of a federation, ranked by predicted risk.

The federation comes from ``--federation`` (the versioned federation file listing ALL clients,
``riskcalc.federation_file``), ``--clients-file`` (that object, or a bare JSON list of every
client: ``gamma`` or ``n`` with ``--d``, ``r``, ``sigma``, optionally ``rho`` and
``spectrum``; clients with different SPECs are covariate shift) or from data (``--data
FED.npz|FED.csv``, through ``riskcalc estimate``; ``--bootstrap`` adds intervals and the
recommendation's stability: ``riskcalc.cli.tables.bootstrap``). Theory: ``riskcalc.advise``.

The text table lists every client's risk for up to ``PER_CLIENT_MAX`` clients; beyond, each
candidate's mean, worst and quantiles of the per-client risks (the per-client rows go to
``--per-client``, ``--json`` and ``--csv FILE``): ``riskcalc.cli.tables.advise``. The advice
runs within ``--max-minutes`` with a progress bar on stderr (``_solve``). ``--model
logistic``: the logistic family's candidates (``riskcalc.cli.logistic.advise``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
import warnings

from riskcalc._validate import MAX_INT, positive_int
from riskcalc.cli import COMMANDS
from riskcalc.cli.options import families
from riskcalc.cli.shared import guards
from riskcalc.cli.shared.outputs import check_writable, not_an_input
from riskcalc.cli.tables import bootstrap
from riskcalc.cli.tables.advise import PER_CLIENT_MAX, print_table, write_csv

#: Largest --rounds: every round up to T is evaluated, for each K (3000 rounds are about the
#: most ``riskcalc.rounds_limit`` evaluates in one curve,
#: ``riskcalc.linear.dynamics.inputs.MAX_ROUND_CELLS``).
MAX_ROUNDS = 3000


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
                          'covariances diagonal in one shared basis in SPEC order), or the '
                          'federation object of --federation')
    src.add_argument("--federation", metavar="FED.json",
                     help='federation file {"fedrisk_federation": 1, "clients": [...]} listing '
                          "ALL clients (riskcalc estimate --json writes one)")
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
    p.add_argument("--rounds", type=int, metavar="T",
                   help="also rank FedAvg stopped early: the rounds <= T and local steps K "
                        "minimizing the mean risk at a local step size fixed at 0.9 times the "
                        "stability edge (not tuned; a covariance spectrum or covariate shift: "
                        "K = 1 and the K >= 2 whose exact curve is estimated within 5 s; "
                        "needs ||theta_0||: the federation file's signal, else --signal, "
                        "else the estimate's with --data)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--per-client", action="store_true",
                   help="also print one row per client (its best candidate, and its risk "
                        "under the recommended one); automatic up to "
                        f"{PER_CLIENT_MAX} clients")
    p.add_argument("--csv", metavar="FILE",
                   help="write one row per candidate and client (rank, method, weights, "
                        "client, risk, weight p_j, tuning) to FILE")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    bootstrap.add_arguments(p)
    guards.add_budget_option(p, stop="names the pipelines that finished (nothing else is "
                                     "printed)", logistic=True)
    families.add_options(p, "advise")
    p.set_defaults(func=run)


def read_federation(args):
    """The Federation of ``--federation``, ``--clients-file`` or ``--data``, the estimate (or
    None) and the clients' names (or None)."""
    from riskcalc import federation_file
    from riskcalc.advise.federation import from_file_object
    from riskcalc.spectrum import as_spectrum

    est = None
    if args.data is not None:
        from riskcalc.cli.estimate import estimate_data

        if args.d is not None:
            raise ValueError("--d applies to --federation and --clients-file (the data give d)")
        est = estimate_data(args.data, max_seconds=guards.max_seconds(args))
        if est.centring_note():
            warnings.warn(f"--data {args.data}: {est.centring_note()}", stacklevel=2)
        if args.spectrum:
            # as_spectrum: a file: or powerlaw:P,D SPEC must list the data's d eigenvalues (a
            # file of 4 beside data of d = 40 was taken, silently).
            try:
                spectrum = as_spectrum(args.spectrum, d=est.d)
            except ValueError as exc:
                raise ValueError(f"--spectrum {args.spectrum} (--data {args.data}: d = "
                                 f"{est.d}): {exc}") from None
            note = est.contradiction(spectrum)
            if note:
                warnings.warn(f"--spectrum {args.spectrum}: {note}", stacklevel=2)
            return est.federation(spectrum=spectrum), est, None, est.as_dict()["signal"]
        # The estimates' federation file, as --federation reads it: the same federation.
        ff = federation_file.from_object(est.as_dict(), f"--data {args.data}")
    elif args.federation is not None:
        ff = federation_file.read(args.federation, "--federation", versioned=True)
    else:
        ff = federation_file.read(args.clients_file, "--clients-file")
    if est is None:
        from riskcalc.advise import PIPELINES, pipelines

        given = [("rho" in c) for c in ff.clients]
        chosen = PIPELINES if args.methods is None else pipelines(args.methods)
        # Only local ridge reads rho: a file giving it for some clients was refused whatever
        # --methods asked ('give it for every client or none'), where predict reads the same
        # file with rho ignored and a note; refused still when local ridge is asked.
        partial = any(given) and not all(given) and "local_ridge" not in chosen
        for note in ff.notes("linear", ("rho",) if partial else (),
                             signal_used=args.rounds is not None):
            warnings.warn(note, stacklevel=2)
        if partial:
            ff = dataclasses.replace(ff, clients=tuple(
                {k: v for k, v in c.items() if k != "rho"} for c in ff.clients))
        ff.check_default_spectrum(args.spectrum)
    check_d(args, ff, sized=True)
    names = [c.get("name") for c in ff.clients]
    return (from_file_object(ff, spectrum=args.spectrum or None, d=args.d), est,
            names if any(n is not None for n in names) else None, ff.signal)


def check_d(args, ff, sized: bool) -> None:
    """``--d``: a whole number (it was a float: 1e300 was taken) that something uses, a client's
    ``n`` or (``sized``, the linear family) a ``powerlaw:`` or ``file:`` SPEC, whose number of
    eigenvalues it gives or checks; otherwise it was accepted and silently ignored."""
    if args.d is None:
        return
    args.d = positive_int("--d", args.d, maximum=MAX_INT)
    if ff.uses_d(args.spectrum, sized):     # ff.d: checked against the file's own
        return
    raise ValueError(f"--d {args.d}: nothing in {ff.where} uses it (it turns a client's n into "
                     "gamma = d / n" + (" and sizes powerlaw:P spectra" if sized else "")
                     + "; every client gives gamma)")


def run(args) -> int:
    not_an_input(args, ("csv",))
    check_writable(args.csv, "--csv")
    family = families.select(args, "advise")
    if family is not None:
        return family.advise(args)
    bootstrap.check(args)
    from riskcalc.advise import pipelines
    from riskcalc.advise.memory import keep_freed_memory

    # '' names no pipeline, as ',,,' does: an error, as is a name given twice.
    methods = None if args.methods is None else list(pipelines(args.methods))
    if args.rounds is not None:     # checked before the work, not after every other pipeline
        positive_int("--rounds", args.rounds, maximum=MAX_ROUNDS)
    fed, est, names, signal = read_federation(args)
    if args.rounds is not None and families.given(args, "signal"):
        if est is None and signal is not None:
            # As predict and advise --model logistic refuse it (was: the file's taken over).
            where = (f"--federation {args.federation}" if args.federation is not None
                     else f"--clients-file {args.clients_file}")
            raise ValueError(f"--signal does not apply with {where}: the file gives "
                             f"signal = {signal:g}")
        signal = args.signal
    if args.rounds is not None and signal is None:
        raise ValueError("--rounds: FedAvg along the rounds starts at w = 0, so its risk needs "
                         "||theta_0||: give --signal (the federation file gives no signal)")
    # The command's own process: a library call leaves its host's allocator alone.
    keep_freed_memory()
    result, intervals = _solve(args, fed, methods,
                               (args.rounds, None if args.rounds is None else signal), est)
    if args.csv:
        write_csv(result, args.csv, names, intervals)
    if args.json:
        out = result.as_dict()
        if names is not None:
            out["federation"]["names"] = names
        if est is not None:
            out["estimate"] = est.as_dict()
        bootstrap.add_json(out, result, intervals)
        print(guards.dumps(out))
        return 0
    print_table(result, per_client=args.per_client, names=names)
    bootstrap.print_intervals(result, intervals,
                                     args.per_client or fed.m <= PER_CLIENT_MAX)
    if est is not None and intervals is None:
        print("error bars from the estimates' standard errors: --bootstrap [B]")
    if args.csv:
        print(f"per-client rows of every candidate written to {args.csv}")
    return 0


def _solve(args, fed, methods, rounds=(None, None), estimate=None):
    """``riskcalc.advise.advise`` and ``--bootstrap``'s intervals (None without it) within one
    ``--max-minutes``: each estimated before it starts (``riskcalc.advise.cost``, then B times
    the advice's CPU time for the bootstrap, against the time left; refused with what would
    fit) and both stopped in flight at the limit (``guards.time_limit``; the message names the
    pipelines that finished and the bootstrap draws done), with a progress bar over the
    pipelines on stderr."""
    import sys

    from riskcalc import advise as adv
    from riskcalc.advise import cost

    chosen = adv.PIPELINES if methods is None else methods
    est = cost.estimate_seconds(fed, [m for m in chosen if m in adv.PIPELINES], rounds[0])
    limit = guards.max_seconds(args)
    guards.budget(args, 1, sum(est.values()), f"advise ({fed.m} clients)",
                  cost.advice(est, limit, fed.m))
    finished = []
    bar = None
    if not args.no_progress and sum(est.values()) >= 5.0:
        # Below 5 s no bar: tqdm is not even imported (a tenth of the whole run at 5 clients).
        from tqdm.auto import tqdm

        bar = tqdm(total=len(chosen) + (rounds[0] is not None), desc="advise",
                   file=sys.stderr, leave=False)

    order = [m for m in adv.PIPELINES if m in chosen] + ["rounds"] * (rounds[0] is not None)
    ticker = _Ticker(bar, order, est)

    def progress(name):
        finished.append(name)
        if bar is not None:
            ticker.done(name)
            bar.update(1)

    draws = None    # the bootstrap's draws done, once the advice has finished
    wall, cpu = time.monotonic(), time.process_time()
    try:
        with guards.time_limit(limit):
            with ticker:
                result = adv.advise(fed, methods=methods, rounds=rounds[0], signal=rounds[1],
                                    progress=progress)
            if bar is not None:
                bar.close()
                bar = None
            draws = []
            intervals = bootstrap.compute(
                args, estimate, result, time.process_time() - cpu,
                limit - (time.monotonic() - wall), lambda: draws.append(1))
            return result, intervals
    except guards.OutOfTime as exc:
        if draws is not None and args.bootstrap is not None:
            raise guards.OutOfTime(
                f"{exc}: the advice finished, the bootstrap did {len(draws)} of "
                f"{args.bootstrap} draws; nothing was printed. Allow more time with "
                "--max-minutes, or ask for fewer draws (--bootstrap B) or pipelines") from None
        kept = [m for m in finished if m in chosen]
        hint = (f"--methods {','.join(kept)} finished in time" if kept else
                "no pipeline finished")
        raise guards.OutOfTime(f"{exc} (estimated {guards.duration(sum(est.values()))}); "
                               f"nothing was printed; {hint}. Allow more time with "
                               "--max-minutes, or ask for fewer pipelines or clients") from None
    finally:
        if bar is not None:
            bar.close()


class _Ticker:
    """The progress bar's line redrawn every ``PERIOD`` seconds with the pipeline running, its
    time so far and its estimate (a daemon thread): a pipeline can take minutes (MAML-FL and
    pFedMe at 5000 clients: about 4 min) between two updates of the bar, which looked hung."""

    PERIOD = 1.0

    def __init__(self, bar, order, est):
        self.bar, self.order, self.est = bar, list(order), est
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.stop = threading.Event()
        self.thread = None

    def done(self, name):
        with self.lock:
            if name in self.order:
                self.order.remove(name)
            self.start = time.monotonic()
        self.tick()

    def tick(self):
        with self.lock:
            if not self.order:
                self.bar.set_postfix_str("")
                return
            name, spent = self.order[0], time.monotonic() - self.start
        guess = self.est.get(name)
        clock = f"{spent:.0f} s" if spent < 60 else guards.duration(spent)
        self.bar.set_postfix_str(f"{name} running {clock}" + (
            "" if guess is None else f" (CPU estimated {guards.duration(guess)})"))

    def _loop(self):
        while not self.stop.wait(self.PERIOD):
            self.tick()

    def __enter__(self):
        if self.bar is not None:
            self.tick()
            self.thread = threading.Thread(target=self._loop, name="advise-ticker",
                                           daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
