"""``riskcalc advise --model logistic``: a logistic federation's candidate pipelines, ranked.

The federation comes from ``--federation FILE`` or ``--clients-file FILE`` (the versioned
object, or a bare list of ALL clients), each client with ``gamma`` (or ``n`` with the file's
``d`` or ``--d``) and ``r``; ``signal`` (||w_0||) from the file or ``--signal``; sigma and rho
are not used by the logistic model (a warning names them). ``--global-lam`` is the ridge of
FedAvg's and FedProx's global model. Theory: ``riskcalc.advise.logistic``. The table, the
recommendation, ``--per-client``, ``--json`` and ``--csv`` are those of the linear advise
(``riskcalc.cli.advise``), with every client's predicted test error beside its risk.
"""

from __future__ import annotations

import csv
import sys
import warnings

import numpy as np

from riskcalc.cli.shared import guards
from riskcalc.cli.advise import check_d
from riskcalc.cli.options.fedargs import differing_covariance
from riskcalc.cli.tables.advise import PER_CLIENT_MAX, QUANTILES, _fmt, print_table
from riskcalc._files import atomic

#: The advise options that apply under ``--model logistic`` (``riskcalc.cli.options.families``).
OPTIONS = {"clients_file", "federation", "spectrum", "d", "methods", "json", "per_client",
           "csv", "no_progress", "max_minutes", "signal", "global_lam"}
#: Columns of ``--csv``.
CSV_COLUMNS = ("rank", "method", "weights", "client", "name", "risk", "test_error", "p", "lam")


def read_federation(args):
    """The ``LogisticFederation`` of ``--federation`` / ``--clients-file`` and the clients'
    names (or None)."""
    from riskcalc import federation_file
    from riskcalc._validate import nonnegative
    from riskcalc.advise.logistic import LogisticFederation
    from riskcalc.spectrum import as_spectrum

    from riskcalc.cli.logistic import file_ranges

    if args.federation is not None:
        ff = federation_file.read(args.federation, "--federation", versioned=True,
                                  ranges=file_ranges())
    else:
        ff = federation_file.read(args.clients_file, "--clients-file", ranges=file_ranges())
    check_d(args, ff, sized=False)
    if args.d is not None and ff.d is not None and float(args.d) != ff.d:
        raise ValueError(f"{ff.where}: the file gives d = {ff.d}, --d {args.d:g} another")
    d = ff.d if ff.d is not None else args.d
    gamma = []
    for j, c in enumerate(ff.clients):
        if "gamma" not in c and d is None:
            raise ff.error(j, "gives n: give the file's d or --d to turn it into gamma = d/n")
        gamma.append(c["gamma"] if "gamma" in c else d / c["n"])
    r = ff.column("r", "the logistic model needs it")
    if ff.signal is not None and args.signal is not None:
        raise ValueError(f"--signal does not apply with {ff.where}: the file gives "
                         f"signal = {ff.signal:g}")
    signal = ff.signal if ff.signal is not None else args.signal
    if signal is None:
        raise ValueError("advise --model logistic needs --signal S (||w_0||) or a federation "
                         'file with "signal"')
    if args.global_lam is None:
        raise ValueError("advise --model logistic needs --global-lam LG (the ridge toward 0 of "
                         "the global model of FedAvg and FedProx, >= 0)")
    # Checked as the option it is: a bad one was blamed on the file ("--federation FED.json:
    # global_lam must lie in [0, inf), got -1.0"), which has no global_lam.
    nonnegative("--global-lam", args.global_lam)
    specs = ff.spectra(args.spectrum or "identity")
    if differing_covariance(ff, specs, None if d is None else int(d)) is not None:
        raise ValueError(f"{ff.where}: the clients give different spectra; the logistic family "
                         "takes one covariance shared by the clients (no covariate shift)")
    try:
        spectrum = as_spectrum(specs[0], d=None if d is None else int(d))  # a count must be d
    except ValueError as exc:
        # ff.spectra read the file's own spectra (and named them) but sized none by d.
        where = "" if d is None else f" ({ff.where}: d = {d:g})"
        if args.spectrum is None:       # the clients' own spectra
            raise ValueError(f"{ff.where}: the clients' spectrum: {exc}") from None
        raise ValueError(f"--spectrum {args.spectrum}{where}: {exc}") from None
    for note in ff.notes("logistic"):
        warnings.warn(note, stacklevel=2)
    names = [c.get("name") for c in ff.clients]
    try:
        fed = LogisticFederation(gamma=gamma, r=r, signal=signal, global_lam=args.global_lam,
                                 spectrum=spectrum)
    except ValueError as exc:
        raise ValueError(f"{ff.where}: {exc}") from None
    return fed, (names if any(n is not None for n in names) else None)


def run(args) -> int:
    """Read, estimate the work (``--max-minutes``), advise, print."""
    from tqdm.auto import tqdm

    from riskcalc.advise import cost, pipelines
    from riskcalc.advise.logistic import PIPELINES, RANKED_BY, advise_logistic, estimate_seconds
    from riskcalc.logistic.finite_clients import ALIASES

    fed, names = read_federation(args)
    # Refused as the linear advise refuses them: no name, an empty, unknown or repeated one.
    methods = None if args.methods is None else list(pipelines(args.methods, PIPELINES,
                                                               ALIASES))
    chosen = PIPELINES if methods is None else methods
    seconds = estimate_seconds(fed, chosen)
    # What fits, as the linear advise names it; each pipeline alone carries the global model
    # it shares with the others, so the pipelines kept are estimated on the long side.
    alone = {m: estimate_seconds(fed, [m]) for m in chosen}
    guards.budget(args, 1, seconds, f"advise --model logistic ({fed.m} clients)",
                  cost.advice(alone, guards.max_seconds(args)))
    bar = tqdm(total=len(chosen), desc="advise", file=sys.stderr, leave=False,
               disable=args.no_progress or seconds < 5.0)
    finished = []
    try:
        with guards.time_limit(guards.max_seconds(args)):
            result = advise_logistic(fed, methods, progress=lambda name: (
                finished.append(name), bar.set_postfix_str(name), bar.update(1)))
    except guards.OutOfTime as exc:
        # As the linear advise: stopped in flight, naming what finished.
        hint = (f"--methods {','.join(finished)} finished in time" if finished else
                "no pipeline finished")
        raise guards.OutOfTime(f"{exc}; nothing was printed; {hint}. Allow more time with "
                               "--max-minutes, or choose fewer --methods") from None
    finally:
        bar.close()
    if args.csv:
        write_csv(result, args.csv, names)
    if args.json:
        out = result.as_dict()
        out["ranked_by"] = RANKED_BY
        if names is not None:
            out["federation"]["names"] = names
        print(guards.dumps(out))
        return 0
    print_table(result, per_client=args.per_client, names=names)
    print(f"ranked by {RANKED_BY}")
    print_test_errors(result, per_client=args.per_client)
    if args.csv:
        print(f"per-client rows of every candidate written to {args.csv}")
    return 0


def print_test_errors(result, per_client: bool = False) -> None:
    """Every candidate's predicted test misclassification rate, in the ranking's order: per
    client up to ``PER_CLIENT_MAX`` clients (or with ``per_client``), else mean, worst and
    quantiles."""
    wide = result.federation.m > PER_CLIENT_MAX and not per_client
    print("predicted test error (misclassification rate on a fresh sample):")
    print(f"{'rank':>4}  {'method':<12}{'weights':<9} {'mean':>8} {'worst':>8}  "
          + ("(quantiles of the per-client test error)" if wide else "per-client test errors"))
    for k, c in enumerate(result.candidates, 1):
        errs = np.asarray(c.test_errors, dtype=float)
        cells = ("".join(f"  q{100 * q:g} {_fmt(float(np.quantile(errs, q)))}"
                         for q in QUANTILES) if wide
                 else "  " + " ".join(f"{_fmt(x):>7}" for x in errs))
        # One space before each number: 9-character ones (0.0001234) ran into the next.
        print(f"{k:>4}  {c.method:<12}{c.weights:<9} {_fmt(c.mean_test_error):>8}"
              f" {_fmt(float(np.max(errs))):>8}{cells}")


def write_csv(result, path, names=None) -> None:
    """One row per candidate and client (``CSV_COLUMNS``), written atomically."""
    with atomic(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for k, c in enumerate(result.candidates, 1):
            for j in range(result.federation.m):
                lam = c.tuning.get("lam")
                writer.writerow({
                    "rank": k, "method": c.method, "weights": c.weights, "client": j,
                    "name": "" if names is None or names[j] is None else names[j],
                    "risk": repr(float(c.risks[j])), "test_error": repr(float(c.test_errors[j])),
                    "p": "" if c.p is None else repr(float(c.p[j])),
                    "lam": "" if lam is None else repr(lam[j] if isinstance(lam, list) else lam)})

