"""``riskcalc predict METHOD ...``: the asymptotic bias, variance and risk of one client.

Also home of the options every model command shares (``add_model_options``) and of their
conversion into a validated ``ClientSpec`` (``spec_from_args``), so that ``predict``,
``compare`` and ``sweep`` read the model the same way.
"""

from __future__ import annotations

import json

import riskcalc
from riskcalc.cli import logistic
from riskcalc.linear.model import ClientSpec
from riskcalc.spectrum import Spectrum


def add_model_options(parser, *, multi: bool = False, sigma_required: bool = True) -> None:
    """Add METHOD and the model options (--gamma --r --rho --sigma --lam --alpha --spectrum).

    With ``multi=True`` the numeric options take comma-separated lists (for ``sweep``), kept
    as strings for ``parse_list``.
    """
    kind = str if multi else float
    lst = " (comma-separated list)" if multi else ""
    parser.add_argument("method", metavar="METHOD", choices=list(riskcalc.METHODS),
                        help="one of " + ", ".join(riskcalc.METHODS))
    parser.add_argument("--gamma", type=kind, required=True, help="d / n_i > 0" + lst)
    parser.add_argument("--sigma", type=kind, required=sigma_required,
                        help="noise level >= 0" + lst)
    parser.add_argument("--r", type=kind, help="||theta_i - theta_0|| >= 0" + lst)
    parser.add_argument("--rho", type=kind, help="||theta_i|| >= 0 (local, local_ridge)" + lst)
    parser.add_argument("--lam", type=kind,
                        help="ridge penalty >= 0 (rtfa, pfedme, local_ridge)" + lst)
    parser.add_argument("--alpha", type=kind, help="MAML step size >= 0 (maml_fl)" + lst)
    parser.add_argument("--spectrum", default="identity", metavar="SPEC",
                        help="identity | two-point:A,B,W | powerlaw:P[,D] | file:PATH "
                             "(default identity)")


def spectrum_from_args(args, d: int | None = None) -> Spectrum | None:
    """The ``--spectrum`` option as a Spectrum (None for identity, the isotropic case)."""
    spec = Spectrum.parse(args.spectrum, d=d if d is not None else getattr(args, "d", None))
    return None if spec.is_identity else spec


def spec_from_args(args, d: int | None = None, **override) -> ClientSpec:
    """A validated ClientSpec from parsed model options (``override`` replaces values)."""
    values = {k: getattr(args, k) for k in ("gamma", "sigma", "r", "rho", "lam", "alpha")}
    values.update(override)
    if values["sigma"] is None:
        raise ValueError("the following arguments are required: --sigma")
    return ClientSpec(args.method, spectrum=spectrum_from_args(args, d), **values)


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "predict", help="asymptotic bias, variance and risk of a method",
        description="Print the limits of the bias, variance and risk of one client's prediction "
                    "(paper 003, Thms 1-4, Cor. 3.1), or after --steps personalization gradient "
                    "steps (Sec. 7, Algs. 5-6).")
    add_model_options(p, sigma_required=False)   # --model logistic has no sigma
    logistic.add_options(p)
    p.add_argument("--d", type=int, help="number of eigenvalues for powerlaw:P without D")
    p.add_argument("--route", choices=riskcalc.ROUTES, default="auto",
                   help="closed (Sigma = I), kappa, paper (c0/Stieltjes forms); default auto")
    p.add_argument("--steps", type=int,
                   help="the limit after this many full-batch personalization gradient steps "
                        "(ftfa, rtfa, local, local_ridge) instead of at convergence")
    p.add_argument("--step-size", type=float, help="step size of --steps")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    if logistic.applies(args):
        return logistic.predict(args)
    spec = spec_from_args(args)
    if args.steps is None:
        if args.step_size is not None:
            raise ValueError("--step-size is only used with --steps")
        res = riskcalc.spec_limit(spec, route=args.route)
    else:
        if args.step_size is None:
            raise ValueError("--steps needs --step-size")
        if args.route != "auto":
            raise ValueError("--route does not apply with --steps (one route: the "
                             "spectral integral of riskcalc.steps_limit)")
        res = riskcalc.spec_steps_limit(spec, args.steps, args.step_size)
    if args.json:
        print(json.dumps(res.as_dict()))
        return 0
    info = riskcalc.get_method(res.method)
    print(f"{info.title} ({res.method}); {info.reference}")
    print("  " + ", ".join(f"{k} = {v}" for k, v in res.params.items()))
    print(f"  route: {res.route}")
    for name in ("bias", "variance", "risk"):
        print(f"  {name:<9} {getattr(res, name):.10g}")
    for note in res.notes:
        print(f"  note: {note}")
    return 0
