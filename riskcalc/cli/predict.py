"""``riskcalc predict METHOD ...``: the asymptotic bias, variance and risk of one client.

Also home of the options every model command shares (``add_model_options``) and of their
conversion into a validated ``ClientSpec`` (``spec_from_args``), so that ``predict``,
``compare`` and ``sweep`` read the model the same way.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import riskcalc
from riskcalc._validate import METHOD_ALIASES, canonical_method, positive_int
from riskcalc.cli import COMMANDS
from riskcalc.cli.options import clients_file, families, fedargs, rounds
from riskcalc.cli.shared import guards
from riskcalc.cli.tables.rounds import OVERFLOW
from riskcalc.linear.engine.joint_spectrum import d_if_used
from riskcalc.linear.steps import finite_clients as finite_clients_steps
from riskcalc.linear.client_weights import WEIGHTS as CLIENT_WEIGHTS
from riskcalc.linear.model import ClientSpec
from riskcalc.spectrum import Spectrum, as_spectrum


def add_model_options(parser, *, multi: bool = False, sigma_required: bool = True) -> None:
    """Add METHOD and the model options (--gamma --r --rho --sigma --lam --alpha --spectrum).

    With ``multi=True`` the numeric options take comma-separated lists (for ``sweep``), kept
    as strings for ``parse_list``.
    """
    kind = str if multi else float
    lst = " (comma-separated list)" if multi else ""
    # An alias (fedprox) is read as its canonical name (pfedme) before the choices are checked.
    parser.add_argument("method", metavar="METHOD", choices=list(riskcalc.METHODS),
                        type=canonical_method,
                        help="one of " + ", ".join(riskcalc.METHODS) + " ("
                             + ", ".join(f"{k}: alias of {v}" for k, v in METHOD_ALIASES.items())
                             + ")")
    parser.add_argument("--gamma", type=kind, help="d / n_i > 0" + lst + " (required "
                        "unless --federation gives it)")
    parser.add_argument("--sigma", type=kind, required=sigma_required,
                        help="noise level >= 0" + lst)
    parser.add_argument("--r", type=kind, help="||theta_i - theta_0|| >= 0" + lst)
    parser.add_argument("--rho", type=kind, help="||theta_i|| >= 0 (local, local_ridge)" + lst)
    parser.add_argument("--lam", type=kind,
                        help="ridge penalty >= 0 (rtfa, pfedme, local_ridge)" + lst)
    parser.add_argument("--alpha", type=kind, help="MAML step size >= 0 (maml_fl)" + lst)
    parser.add_argument("--spectrum", default="identity", metavar="SPEC",
                        help="identity | scaled:C | two-point:A,B,W | powerlaw:P[,D] | "
                             "file:PATH (default identity; scaled:C is C times identity); the "
                             "file holds a 1-d list of eigenvalues (.npy or text), a matrix "
                             "is refused")


def spectrum_from_args(args, d: int | None = None) -> Spectrum | None:
    """The ``--spectrum`` option as a Spectrum (None for identity, the isotropic case). In
    predict a ``file:`` or ``powerlaw:P,D`` SPEC must have --d eigenvalues (``as_spectrum``;
    a file of 4 beside --d 5 was taken); a simulation expands any spectrum to its --d."""
    read = Spectrum.parse if hasattr(args, "reps") else as_spectrum
    spec = read(args.spectrum, d=d if d is not None else getattr(args, "d", None))
    return None if spec.is_identity else spec


def require_parameters(method: str, values: dict) -> None:
    """The method's parameters given (``values``: option name -> value or None), else one
    error naming the options (ClientSpec's own "method rtfa needs lam" names none)."""
    info = riskcalc.get_method(canonical_method(method))
    missing = [f"--{name}" for name in info.parameters if values.get(name) is None]
    if missing:
        raise ValueError(f"{method} needs {', '.join(missing)} (it takes "
                         f"{', '.join('--' + name for name in info.parameters)})")


def spec_from_args(args, d: int | None = None, **override) -> ClientSpec:
    """A validated ClientSpec from parsed model options (``override`` replaces values)."""
    values = {k: getattr(args, k) for k in ("gamma", "sigma", "r", "rho", "lam", "alpha")}
    values.update(override)
    if values["gamma"] is None:
        raise ValueError("the following arguments are required: --gamma (or --federation)")
    if values["sigma"] is None:
        raise ValueError("the following arguments are required: --sigma")
    require_parameters(args.method, values)
    return ClientSpec(args.method, spectrum=spectrum_from_args(args, d), **values)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "predict", help=COMMANDS["predict"],
        description="Print the limits of the bias, variance and risk of one client's prediction "
                    "(paper 003, Thms 1-4, Cor. 3.1), or after --steps personalization gradient "
                    "steps (Sec. 7, Algs. 5-6).")
    add_model_options(p, sigma_required=False)   # --model logistic has no sigma
    families.add_options(p, "predict")
    p.add_argument("--d", type=int, help="number of eigenvalues for powerlaw:P without D")
    p.add_argument("--route", choices=riskcalc.ROUTES, default="auto",
                   help="closed (Sigma = I), kappa, paper (c0/Stieltjes forms); default auto")
    p.add_argument("--steps", type=int,
                   help="the limit after this many full-batch personalization gradient steps "
                        "(ftfa, rtfa, local, local_ridge; with --clients/--clients-file from "
                        "the finite-M FedAvg model) instead of at convergence")
    p.add_argument("--step-size", type=float, help="step size of --steps")
    p.add_argument("--clients", type=int, metavar="M",
                   help="the method's global model over M clients sharing these parameters "
                        "(fedavg, ftfa, rtfa, maml_fl, pfedme; any --spectrum) instead of the "
                        "exact one")
    p.add_argument("--clients-file", metavar="PATH",
                   help="JSON list of the OTHER clients of the federation, each "
                        '{"gamma": G, "r": R, "sigma": S[, "spectrum": SPEC]} (covariances '
                        "diagonal in one shared basis); the target is the client of the "
                        "model options (a federation object here means --federation)")
    fedargs.add_options(p)
    p.add_argument("--weights", choices=CLIENT_WEIGHTS,
                   help="client weights with --clients/--clients-file: samples n_j/N "
                        "(default) or uniform 1/M")
    rounds.add_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    guards.add_budget_option(p, stop="prints nothing (a limit has no partial answer)",
                             logistic=True)
    p.set_defaults(func=run)


def _federation(args, spec):
    """(per-client gamma, r, sigma lists with the target first) for --clients-file, else
    None."""
    if args.clients_file is None:
        return None
    others = clients_file.other_clients(args, clients_file.read_clients_file)
    out = {k: [float(getattr(spec, "signal" if k == "r" else k))] + others[k]
           for k in ("gamma", "r", "sigma")}
    spectra = fedargs.client_spectra(args, others)
    if spectra is None:
        return out
    return {**out, "spectra": spectra, **d_if_used(args.d, spectra)}


def _finite_clients(args, spec):
    """The finite-M LimitResult of the target and, for --clients-file, the whole federation."""
    if args.clients is not None and args.clients_file is not None:
        raise ValueError("give --clients M (identical clients) or --clients-file, not both")
    weights = args.weights or "samples"
    fed = _federation(args, spec)
    if args.steps is not None or args.step_size is not None:
        return _finite_clients_steps(args, spec, fed, weights), None
    if fed is None:
        return riskcalc.spec_limit(spec, route=args.route, clients=args.clients,
                                   weights=weights), None
    option = "--federation" if getattr(args, "federation", None) else "--clients-file"
    if np.ndim(spec.gamma) or np.ndim(spec.sigma):
        raise ValueError(f"{option} takes scalar model options")
    fedargs.finite_route(args, option, [spec.spectrum] + list(fed.get("spectra") or []))
    _finite_clients_budget(args, spec, fed)
    tune = spec.info.tuning
    shared = {} if "spectra" in fed else {"spectrum": spec.spectrum}
    pop = riskcalc.clients_limit(spec.method, weights=weights, **shared, **fed,
                                 **({tune: float(getattr(spec, tune))} if tune else {}))
    params = {**spec.params(), "clients": len(fed["gamma"]), "weights": weights}
    if "spectra" in pop.params:
        params["spectra"] = pop.params["spectra"]
    res = riskcalc.LimitResult(spec.method, params,
                               float(pop.bias[0]), float(pop.variance[0]), float(pop.risk[0]),
                               route="finite_clients", notes=pop.notes)
    return res, pop


def _finite_clients_budget(args, spec, fed) -> None:
    """Refuse, before solving, a federation whose finite-M limit is estimated to take longer
    than --max-minutes: one evaluation of ``riskcalc.advise.cost.PREDICT_EVAL`` (a + b M + c M^2
    seconds per route and method), M counting distinct clients (identical ones are solved
    once)."""
    from riskcalc.advise.cost import PREDICT_EVAL

    general = "spectra" in fed or spec.spectrum is not None
    rows = zip(*(fed[k] for k in ("gamma", "r", "sigma")), fed.get("spectra") or [None] * len(
        fed["gamma"]))
    distinct = len(set(rows))
    route = "identity" if not general else ("general" if "spectra" in fed else "spectrum")
    a, b, c = PREDICT_EVAL[route][spec.method]
    if "spectra" in fed:            # covariate shift: the distinct spectra's cube counts
        from riskcalc.linear.engine.joint_spectrum import joint_spectrum
        from riskcalc.linear.finite_clients.shift.limits import check_work

        joint = joint_spectrum(fed["spectra"], fed.get("d"))
        if not joint.shared:
            a += check_work(spec.method, distinct, *joint.values.shape)
    guards.check_time(1, a + (b + c * distinct) * distinct, 1, guards.max_seconds(args),
                      f"predict {spec.method} over {distinct} distinct clients"
                      + (" with a covariance spectrum" if general else ""),
                      "give fewer distinct clients (identical ones cost one), or allow more "
                      "time with --max-minutes")


def _finite_clients_steps(args, spec, fed, weights):
    """The target's limit after --steps gradient steps from the finite-M global model."""
    if args.steps is None or args.step_size is None:
        raise ValueError("--steps and --step-size go together")
    if args.route != "auto":
        raise ValueError("--route does not apply with --steps")
    if fed is not None and "spectra" in fed:
        raise ValueError("--steps has no finite-M limit under covariate shift (a clients-file "
                         "spectrum per client): give the clients one shared --spectrum")
    if fed is None or spec.method not in finite_clients_steps.METHODS:
        # Also the one error for a method without a steps limit.
        return riskcalc.spec_steps_limit(spec, args.steps, args.step_size,
                                         clients=args.clients or len(fed["gamma"]),
                                         weights=weights, max_seconds=guards.max_seconds(args))
    bias, var = finite_clients_steps.clients_steps_limit(
        spec.method, **fed, lam=float(spec.lam) if spec.method == "rtfa" else None,
        steps=args.steps, step_size=args.step_size, weights=weights, spectrum=spec.spectrum,
        max_seconds=guards.max_seconds(args))
    params = {**spec.params(), "steps": args.steps, "step_size": args.step_size,
              "clients": len(fed["gamma"]), "weights": weights}
    converges, notes = finite_clients_steps.stability(spec.gamma, spec.penalty, args.step_size,
                                                      spec.spectrum)
    if len(fed["gamma"]) == 1 and not converges:     # fuzz39 steps F10
        converges, notes = True, (finite_clients_steps.ONE_CLIENT,)
    return riskcalc.LimitResult(spec.method, params, float(bias), float(var), float(bias + var),
                                route=finite_clients_steps.ROUTE, notes=notes,
                                converges=converges)


def run(args) -> int:
    """Print the limit; stopped at --max-minutes with nothing printed."""
    limit = guards.max_seconds(args)
    try:
        with guards.time_limit(limit), guards.working(f"riskcalc predict {args.method}"):
            return _run(args)
    except guards.OutOfTime as exc:
        raise guards.OutOfTime(f"{exc} before the answer was ready; nothing was printed. "
                               "Allow more time with --max-minutes, or ask for less (fewer "
                               "distinct clients, fewer eigenvalues, fewer steps or rounds)"
                               ) from None


def _run(args) -> int:
    guards.predict_options(args)
    fedargs.resolve(args, args.model)
    family = families.select(args, "predict")
    if family is not None:
        return family.predict(args)
    if rounds.asked(args):
        return rounds.predict(args)
    if args.steps is not None:  # named as the option (was "steps must lie in [0, inf)")
        positive_int("--steps", args.steps, minimum=0)
    spec = spec_from_args(args)
    pop = None
    federated = (args._others is not None or args.clients is not None
                 or args.clients_file is not None)
    # A local baseline has no global model: the target's own limit, whatever the others
    # (--clients M was refused as "finite-clients limits are implemented for ...", where a
    # federation file answered).
    local = federated and spec.info.signal == "rho"
    if local and args.weights is not None:
        # As --federation's check (fedargs): --clients M took it and ignored it.
        raise ValueError(f"--weights does not apply to {spec.method}: it uses no global "
                         "model (the other clients of the federation play no part)")
    if federated and not local:
        res, pop = _finite_clients(args, spec)
    elif args.weights is not None and not local:
        raise ValueError("--weights applies with --clients or --clients-file only")
    elif args.steps is None:
        if args.step_size is not None:
            raise ValueError("--step-size is only used with --steps")
        # A local baseline with --clients M: riskcalc.limit's own answer and note.
        res = riskcalc.spec_limit(spec, route=args.route,
                                  clients=args.clients if local else None)
    else:
        if args.step_size is None:
            raise ValueError("--steps needs --step-size")
        if args.route != "auto":
            raise ValueError("--route does not apply with --steps (one route: the "
                             "spectral integral of riskcalc.steps_limit)")
        res = riskcalc.spec_steps_limit(spec, args.steps, args.step_size,
                                        clients=args.clients if local else None)
    if local and not any("uses no global model" in n for n in res.notes):
        res = dataclasses.replace(res, notes=res.notes + (
            f"{spec.method} uses no global model: the other clients of the federation play "
            "no part",))
    if args.json:
        out = res.as_dict()
        if pop is not None:
            out["federation"] = pop.as_dict()
        print(guards.dumps(out))
        return 0
    info = riskcalc.get_method(res.method)
    print(f"{info.title} ({res.method}); {info.reference}")
    print(guards.params_line(res.params))
    print(f"  route: {res.route}")
    # After finitely many steps every limit is finite: inf is a value past the floats,
    # printed ``overflow`` as in the rounds tables (it printed inf).
    steps = res.converges is not None
    for name in ("bias", "variance", "risk"):
        v = getattr(res, name)
        print(f"  {name:<9} " + ("overflow" if steps and np.isinf(v) else f"{v:.10g}"))
    if steps:
        print(f"  converges: {'true' if np.all(res.converges) else 'false'}")
        if np.isinf(res.risk):
            print(OVERFLOW)
    if pop is not None:
        print(f"  population average over the {pop.risk.size} clients: bias "
              f"{pop.mean_bias:.10g}, variance {pop.mean_variance:.10g}, risk "
              f"{pop.mean_risk:.10g}")
    for note in res.notes:
        print(f"  note: {note}")
    return 0
