"""``riskcalc compare METHOD ...``: predicted (riskcalc) vs simulated (montecarlo) risk.

Per quantity (bias, variance, risk): the limit of paper 003 (``003_4b976ddf5225c17e.txt``,
Thms 1-4, Cor. 3.1), the mean over replicates of the finite-d measurement of eq. (3), its
standard error, the relative difference, and whether the prediction lies inside the 95%
interval. Also home of the simulation options shared with ``sweep`` (``add_simulation_options``,
``setting_from_args``).
"""

from __future__ import annotations

import numpy as np

import riskcalc
from montecarlo.compare import QUANTITIES, compare
from montecarlo.linear.instances import DISTRIBUTIONS, EIGVECS, GLOBAL_MODELS, WEIGHTS, Setting
from montecarlo.linear.measure import KINDS
from riskcalc.cli import COMMANDS
from riskcalc.cli.options import clients_file, families, fedargs, rounds
from riskcalc.cli.shared import guards
from riskcalc.cli.predict import add_model_options, spec_from_args
from riskcalc.cli.tables.rounds import OVERFLOW


def add_simulation_options(p, *, reps: int, multi: bool = False) -> None:
    """Add the options describing the simulated instances and the replicates (``multi``:
    --clients takes a comma-separated list, for ``sweep``)."""
    p.add_argument("--d", type=int, help="dimension of the simulated problem (required; "
                                         "default with --federation: the file's d)")
    p.add_argument("--reps", type=int, default=reps,
                   help=f"number of replicates, >= 2 (default {reps})")
    p.add_argument("--seed", type=int, default=0, help="seed of the experiment (default 0)")
    p.add_argument("--global", dest="global_model", choices=GLOBAL_MODELS,
                   help="global model: the oracle center theta_0 (the limit; default) or the "
                        "federated solution over --clients clients (the default with "
                        "--federation)")
    p.add_argument("--clients", type=str if multi else int,
                   help="clients M of the federated global model (default 100; --global "
                        "federated only)" + (" (comma-separated list)" if multi else ""))
    p.add_argument("--clients-file", metavar="PATH",
                   help="JSON list of the OTHER clients of the federation, each "
                        '{"gamma": G, "r": R, "sigma": S[, "spectrum": SPEC]} (M = 1 + their '
                        "number; --global federated only; a federation object here means "
                        "--federation)")
    fedargs.add_options(p)
    p.add_argument("--weights", choices=WEIGHTS,
                   help="client weights p_j: samples n_j/N (default, as in predict) or "
                        "uniform 1/M (--global federated only)")
    p.add_argument("--measure", choices=KINDS, default="conditional",
                   help="conditional: exact expectation given X (default); empirical: the test "
                        "risk of sampled parameters and noise")
    p.add_argument("--eigvecs", choices=EIGVECS, default="aligned",
                   help="eigenvectors of Sigma (default aligned)")
    p.add_argument("--features", choices=DISTRIBUTIONS, default="gaussian",
                   help="law of the standardized feature entries (default gaussian)")
    p.add_argument("--noise", choices=DISTRIBUTIONS, default="gaussian",
                   help="law of the noise (default gaussian; drawn under --measure "
                        "empirical only)")
    p.add_argument("--df", type=float,
                   help="Student-t degrees of freedom, > 4 (default 5; with student-t "
                        "features or noise only)")
    p.add_argument("--steps", type=int,
                   help="personalize with this many full-batch gradient steps instead of the "
                        "converged closed form (paper 003, Figs. 5-6)")
    p.add_argument("--step-size", type=float, help="step size of --steps")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a dask.distributed scheduler (tcp://host:port, or 'local')")
    p.add_argument("--route", choices=riskcalc.ROUTES, default="auto",
                   help="riskcalc route of the prediction (default auto)")
    guards.add_budget_option(p, logistic=True, stop=(
        "writes nothing (the linear model; --cache keeps the finished tasks)" if multi else
        "prints nothing (a comparison has no partial answer)"))


def setting_from_args(args, clients=None) -> Setting:
    """The ``Setting`` described by the simulation options (``clients`` overrides
    --clients)."""
    guards.simulation_options(args)
    clients = args.clients if clients is None else clients
    others = {}
    if args.clients_file is not None:
        if clients is not None:
            raise ValueError("give --clients M or --clients-file, not both")
        fed = clients_file.other_clients(args, clients_file.read_clients_file)
        clients = 1 + len(fed["gamma"])
        if fed["gamma"]:        # a federation file of one client has no others
            others = {"gammas": fed["gamma"], "rs": fed["r"], "sigmas": fed["sigma"]}
            spectra = fedargs.client_spectra(args, fed)
            if spectra is not None:
                others["spectra"] = spectra
    return Setting(d=args.d, clients=100 if clients is None else clients,
                   global_model=args.global_model, weights=args.weights or "samples",
                   eigvecs=args.eigvecs, features=args.features, noise=args.noise,
                   df=5.0 if args.df is None else args.df, **others)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help=COMMANDS["compare"],
        description="Simulate the method at finite d and print, per quantity, the predicted "
                    "limit, the simulated mean, its standard error, the relative difference and "
                    "whether the prediction lies in the simulation's 95% interval.")
    add_model_options(p, sigma_required=False)   # --model logistic has no sigma
    families.add_options(p, "compare")
    add_simulation_options(p, reps=20)
    rounds.add_options(p)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar (stderr)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    """Print the comparison; stopped at --max-minutes with nothing printed: the estimate
    before the work counts the simulation only, and a finite-M prediction of 41 clients
    under powerlaw:1,200 ran 30 s past --max-minutes 0.2, which predict stops at (fuzz39 fuzz
    F13)."""
    try:
        with guards.time_limit(guards.max_seconds(args)):
            return _run(args)
    except guards.OutOfTime as exc:
        raise guards.OutOfTime(f"{exc} before the comparison was ready; nothing was printed. "
                               "Allow more time with --max-minutes, or ask for less (fewer "
                               "--reps, a smaller --d, fewer distinct clients)") from None


def _run(args) -> int:
    fedargs.resolve(args, args.model)
    fedargs.require_d(args)
    family = families.select(args, "compare")
    if family is not None:
        return family.compare(args)
    if rounds.asked(args):
        return rounds.compare(args)
    setting = setting_from_args(args)
    spec = spec_from_args(args, d=args.d)
    fedargs.simulated_route(args, spec.method, setting, spec.spectrum)
    guards.linear_budget(args, setting, spec.gamma, 1)
    res = compare(spec, setting, reps=args.reps, seed=args.seed, measure=args.measure,
                  steps=args.steps, step_size=args.step_size, route=args.route,
                  n_jobs=args.jobs, scheduler=args.scheduler, progress=not args.no_progress,
                  max_minutes=None)     # --max-minutes: checked above (linear_budget)
    out = res.as_dict()
    if args.json:
        print(guards.dumps(out))
        return 0
    info = riskcalc.get_method(spec.method)
    sim = out["simulated"]
    print(f"{info.title} ({spec.method}); {info.reference}")
    print(guards.params_line(out["params"]))
    glob = (f"federated global model over {setting.clients} client"
            f"{'s' if setting.clients > 1 else ''}"
            if setting.global_model == "federated" else "oracle global model")
    steps = "" if args.steps is None else f", {args.steps} personalization steps"
    print(f"  simulation: d = {sim['d']} (n = {sim['n']}), {sim['reps']} replicates, seed "
          f"{sim['seed']}, {sim['measure']} measure, {glob}{steps}")
    print(f"  {'':<9} {'predicted':>12} {'simulated':>12} {'std.err':>10} {'rel.diff':>9}"
          f"  in 95% CI")
    overflowed = False
    for q in QUANTITIES:
        cmp = out["comparison"][q]
        # None also where the prediction is below the risk's rounding (summarize's scale).
        rel = "n/a" if cmp["rel_diff"] is None else _percent(100 * cmp["rel_diff"])
        # The JSON form holds None for a non-finite number (e.g. the ridgeless variance at
        # gamma = 1, predicted inf: outside the simulation's interval, "no"): the table prints
        # the number itself, n/a for a standard error and a 95% test that the simulation has
        # not (a divergent FTFA printed "nan" and "no" for inf against inf).
        pred, mean = float(getattr(res.limit, q)), float(res.summary[q]["mean"])
        se = sim[q + "_se"]
        se = "n/a" if se is None or not np.isfinite(se) else f"{se:.3g}"
        inside = "n/a" if se == "n/a" else "yes" if cmp["inside_ci95"] else "no"
        # A simulation, or a limit after finitely many steps, is finite: inf there is past
        # the floats, ``overflow`` as in the rounds tables (it printed inf, the word of the
        # ridgeless variance's infinite limit at gamma = 1).
        over = (res.limit.converges is not None and np.isinf(pred), np.isinf(mean))
        cells = ["overflow" if o else f"{v:.6g}" for o, v in zip(over, (pred, mean))]
        overflowed = overflowed or any(over)
        print(f"  {q:<9} {cells[0]:>12} {cells[1]:>12} {se:>10} {rel:>9}  {inside}")
    if overflowed:
        print(OVERFLOW)
    for note in res.limit.notes:
        print(f"  note: {note}")
    return 0


def _percent(value: float) -> str:
    """A relative difference in percent: three decimals, three digits past 1e6 % (a spectrum
    spanning 1e-100..1e100 printed +17583031645349874555397291335133167616.000%; fuzz42 sim
    F13)."""
    return f"{value:+.3f}%" if abs(value) < 1e6 else f"{value:+.3g}%"
