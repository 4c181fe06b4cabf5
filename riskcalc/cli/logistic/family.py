"""The logistic model family of ``riskcalc predict``, ``compare``, ``sweep`` and ``advise``
(``--model logistic``, see ``riskcalc.cli.options.families``): personalized logistic regression.
``sweep`` and ``advise`` live in ``riskcalc.cli.logistic.sweep`` and ``.advise``.

Model (DESIGN.md, second to fourth rounds): ``x ~ N(0, I_d)`` or ``N(0, Sigma)`` with
``--spectrum SPEC``, ``P(y = 1 | x) = sigmoid(x.w_j)``, ``w_j = w_0 + r_j u_j``,
``||w_0|| = --signal``. Two modes:

* infinitely many clients (no ``--clients``): RTFA toward the oracle centre ``w_0`` or FedAvg's
  infinite-client centre (``--centre``), or ``local_ridge`` (centre 0, the client's data only:
  its limits do not depend on the federation), ``riskcalc.logistic_limit``; simulated by
  ``montecarlo.logistic.ridge``;
* M clients (``--clients M``, or ``--clients-file`` listing the other clients' gamma and r):
  the global model is FedAvg's logistic fit over all M clients' data with ridge
  ``--global-lam``, and METHOD is ``rtfa`` (fine-tuning toward it), ``fedavg`` (the global model
  itself), ``local_ridge`` (centre 0) or ``pfedme`` (the FedProx / pFedMe joint objective's
  w_j): ``riskcalc.logistic_limit(..., clients=M)`` and
  ``riskcalc.logistic_clients_limit``; simulated by ``montecarlo.logistic.pipeline``
  (``compare --global federated``).

A spectrum (one ``Sigma`` for every client) is taken in both modes by every method
(``riskcalc.logistic.spectrum.fixed_point`` and ``riskcalc.logistic.finite_clients``).
Fields (issue 33): ``cosine`` is ``cos(w_hat - c, w_i - c)`` (RTFA with infinitely many
clients only, c the deterministic centre),
``cosine_uncentred`` is ``cos(w_hat, w_i)`` (both modes); ``sigma_risk`` (with a spectrum) is
``(w_hat - w_i)' Sigma (w_hat - w_i)``; the global model's fields are shown where one is used.
"""

from __future__ import annotations

from riskcalc.cli.options import families
from riskcalc.cli.shared import guards

VERBS = ("predict", "compare", "sweep", "advise")
CENTRES = ("oracle", "fedavg")
TITLES = {"rtfa": "RTFA with the logistic loss", "fedavg": "FedAvg's logistic global model",
          "local_ridge": "local ridge logistic regression (centre 0)",
          "pfedme": "FedProx / pFedMe joint objective (the client's w_j)"}
REFERENCE = "CGMT limit, riskcalc.logistic (after Salehi-Abbasi-Hassibi 2019, Sur-Candes 2019)"

OPTIONS = {
    "signal": (("--signal",), dict(type=float, help="||w_0||, the norm of the centre, >= 0 "
                                                    "(--model logistic)")),
    "global_lam": (("--global-lam",), dict(type=float, metavar="LG",
                                           help="ridge toward 0 of the logistic global model "
                                                "over the M clients, >= 0 (--model logistic "
                                                "with --clients or --clients-file)")),
    "centre": (("--centre",), dict(choices=CENTRES,
                                   help="infinitely many clients (--model logistic without "
                                        "--clients): fine-tune toward the oracle centre w_0 "
                                        "(default) or FedAvg's infinite-client global model")),
}
#: OPTIONS a verb never takes, so not offered by its parser (advise ranks at the file's finite
#: M: --centre, the infinite-client centre, was in its --help and refused whatever the model).
NOT_OFFERED = {"advise": {"centre"}}
_MODEL = {"gamma", "signal", "r", "lam", "json", "spectrum", "max_minutes"}
_FEDERATED = {"clients", "clients_file", "federation", "target", "weights", "global_lam"}
_SIMULATION = {"d", "reps", "seed", "jobs", "no_progress", "global_model", "max_minutes"}
_SWEEP = {"out", "format", "cache", "scheduler"}
#: Options that apply in some mode of some verb only (``mode_note`` names the mode); any
#: other option refused (--sigma: logistic labels have no noise level) applies in none.
MODAL = _FEDERATED | _SIMULATION | {"centre"}


def federated(args, verb) -> bool:
    """M clients (``--clients``/``--clients-file`` for predict, ``--global federated`` for
    compare) rather than infinitely many."""
    if verb in ("compare", "sweep"):
        return args.global_model == "federated"
    return args.clients is not None or args.clients_file is not None


def accepted(args, verb) -> set:
    """The options that apply (``riskcalc.cli.options.families``)."""
    if verb == "advise":
        from riskcalc.cli.logistic.advise import OPTIONS as advise_options

        return advise_options
    out = _MODEL | (_SIMULATION if verb in ("compare", "sweep") else set()) \
        | (_SWEEP if verb == "sweep" else set())
    # d: the number of eigenvalues of powerlaw:P, which a file: count must equal (as a file's
    # client spectra and advise check it).
    from riskcalc.spectrum import spec_uses_d

    if verb == "predict" and spec_uses_d(str(args.spectrum)):
        out = out | {"d"}
    return out | (_FEDERATED if federated(args, verb) else {"centre"})


def quantities(prob) -> tuple:
    """The fields that apply to this problem (module docstring), in print order
    (``riskcalc.logistic.result.measured_fields``)."""
    from riskcalc.logistic.result import measured_fields

    return measured_fields(prob["method"], prob["federated"], prob["spectrum"])


def mode_note(args, verb) -> str:
    if verb == "advise":
        return ""
    if verb in ("compare", "sweep"):
        return (" with --global federated" if federated(args, verb)
                else " with --global oracle (give --global federated --clients M)")
    return (" with --clients/--clients-file" if federated(args, verb)
            else " without --clients M or --clients-file")


def sweep(args) -> int:
    """``riskcalc sweep METHOD --model logistic`` (``riskcalc.cli.logistic.sweep``)."""
    from riskcalc.cli.logistic.sweep import run
    from riskcalc.logistic.limits import UNFEDERATED

    # This module's pieces are handed over, so that logistic_sweep does not import it back.
    return run(args, methods=tuple(TITLES) if federated(args, "sweep") else UNFEDERATED,
               spectrum=_spectrum(args, "sweep"), max_seconds=_max_seconds(args))


def advise(args) -> int:
    """``riskcalc advise --model logistic`` (``riskcalc.cli.logistic.advise``)."""
    from riskcalc.cli.logistic.advise import run

    return run(args)


def check_method(args, verb) -> None:
    """Refuse a METHOD the family has in no mode (maml_fl), before the options are checked
    against it: ``predict maml_fl --model logistic --alpha 0.1`` blamed --alpha (fuzz40 small
    F5). Which of its methods a mode takes is ``_problem``'s check."""
    from riskcalc.logistic.limits import UNFEDERATED

    method = getattr(args, "method", None)      # advise takes --methods
    if method is not None and method not in TITLES:
        raise ValueError(f"--model logistic has no method {method}: its methods are "
                         f"{' and '.join(UNFEDERATED)} without M clients; {', '.join(TITLES)} "
                         "with " + ("--global federated --clients M" if verb in ("compare", "sweep")
                                    else "--clients M or --clients-file"))


def _problem(args, verb) -> dict:
    """The checked problem: method, model values, and for M clients the per-client lists
    (target first), global_lam and weights."""
    from riskcalc.logistic.limits import UNFEDERATED

    fed = federated(args, verb)
    methods = tuple(TITLES) if fed else UNFEDERATED
    if args.method not in methods:
        raise ValueError(f"--model logistic supports METHOD {' and '.join(UNFEDERATED)} "
                         f"without M clients; {', '.join(TITLES)} with "
                         + ("--global federated --clients M" if verb == "compare"
                            else "--clients M or --clients-file") + f" (got {args.method})")
    need = ("gamma", "signal", "r") + (() if args.method == "fedavg" else ("lam",))
    for name in need:
        if getattr(args, name) is None:
            raise ValueError(f"--model logistic needs --{name}")
    from riskcalc._validate import parameter
    from riskcalc.logistic.ranges import check_gamma

    # gamma in the family's range, as its files' and the Python API's (--gamma 1e-300 named
    # the linear [1e-100, 1e+100], 1e-20 this one); signal and r the shared ranges
    check_gamma(args.gamma)
    for name in ("signal", "r"):
        parameter(name, getattr(args, name))
    if not fed and args.method == "local_ridge" and args.centre is not None:
        raise ValueError("--centre does not apply to METHOD local_ridge (its centre is 0)")
    if args.method == "fedavg" and args.lam is not None:
        raise ValueError("--lam does not apply to METHOD fedavg (the global model's ridge is "
                         "--global-lam)")
    from riskcalc.cli.logistic.sweep import pfedme_lams

    pfedme_lams(args.method, [args.lam])
    prob = dict(method=args.method, gamma=args.gamma, signal=args.signal, r=args.r,
                lam=args.lam, centre=args.centre or "oracle", federated=fed,
                spectrum=_spectrum(args, verb))
    if not fed:
        return prob
    if args.clients is not None and args.clients_file is not None:
        raise ValueError("give --clients M (identical clients) or --clients-file, not both")
    if args.clients is None and args.clients_file is None:
        raise ValueError("--global federated needs --clients M or --clients-file")
    if args.global_lam is None and args.method != "local_ridge":
        raise ValueError("--model logistic with M clients needs --global-lam LG (the global "
                         "model's ridge toward 0, >= 0)")
    prob.update(global_lam=args.global_lam,
                weights=args.weights if families.given(args, "weights") else "samples")
    if args.clients_file is not None:
        from riskcalc.cli.options import clients_file

        others = clients_file.other_clients(args, clients_file.read_logistic_clients_file)
        prob.update(gammas=[args.gamma] + others["gamma"], rs=[args.r] + others["r"])
    else:
        from riskcalc.logistic.ranges import identical_clients

        # Checked before the lists are built (10^9 clients: 15.7 GB before any refusal).
        m = identical_clients(args.clients, "--clients")
        prob.update(gammas=[args.gamma] * m, rs=[args.r] * m)
    prob["clients"] = len(prob["gammas"])
    return prob


def _spectrum(args, verb):
    """``--spectrum`` as a Spectrum (None for identity); ``powerlaw:P`` sized by ``--d``, which
    a ``powerlaw:P,D`` or ``file:`` count must equal (as in the linear family: powerlaw:1,50
    beside a federation file's d = 100 was taken). Its errors name ``--spectrum`` and the d."""
    from riskcalc.spectrum import as_spectrum

    d = getattr(args, "d", None)
    try:
        spec = as_spectrum(args.spectrum, d=d)
    except ValueError as exc:
        if args.spectrum is None:
            raise
        from riskcalc.cli import GIVEN

        # A federation file's client spectra arrive here too (riskcalc.cli.options.fedargs).
        lead = (f"--spectrum {args.spectrum}" if "spectrum" in getattr(args, GIVEN, ())
                else f"the clients' spectrum in {args.clients_file}")
        raise ValueError(lead + ("" if d is None else f" (d = {d})") + f": {exc}") from None
    return None if spec.is_identity else spec


#: Seconds of ``--max-minutes`` kept from the solvers under predict's timer (at least 5%, at
#: most half): their deadline falls a residual evaluation (1.5 s at gamma 0.49995, lam 0)
#: before it, so their reason is printed (the timer's generic message, at the same moment, won).
SOLVER_MARGIN = 3.0


def _max_seconds(args, timed: bool = False) -> float:
    """``--max-minutes`` in seconds when given (less ``SOLVER_MARGIN`` when ``timed``), else the
    logistic solvers' own limit (``riskcalc.logistic.work.MAX_SECONDS``): their estimates count
    quadrature alone, and the command line's 10 minutes would let a spectrum such as
    two-point:1e-4,1e4 run for minutes where it is refused with its estimate."""
    from riskcalc.logistic.work import MAX_SECONDS

    if not families.given(args, "max_minutes"):
        return MAX_SECONDS
    seconds = guards.max_seconds(args)
    return seconds - min(0.5 * seconds, max(0.05 * seconds, SOLVER_MARGIN)) if timed else seconds


def _limit(prob, max_seconds):
    """``(target, federation)``: the target's limits (a dict of the quantities, the global
    model's, diagnostics) and, for a heterogeneous federation, every client's result; the
    solvers' work estimates are held to ``max_seconds`` (``--max-minutes``)."""
    import riskcalc

    if not prob["federated"]:
        res = riskcalc.logistic_limit(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                                      lam=prob["lam"], centre=prob["centre"],
                                      method=prob["method"], spectrum=prob["spectrum"],
                                      max_seconds=max_seconds)
        return res.as_dict(), None
    common = dict(signal=prob["signal"], global_lam=prob["global_lam"],
                  weights=prob["weights"], method=prob["method"], spectrum=prob["spectrum"],
                  max_seconds=max_seconds,
                  **({} if prob["method"] == "fedavg" else {"lam": prob["lam"]}))
    if len(set(zip(prob["gammas"], prob["rs"]))) == 1:
        res = riskcalc.logistic_limit(gamma=prob["gamma"], r=prob["r"],
                                      clients=prob["clients"], **common)
        out = res.as_dict()
        out["method"] = prob["method"]
        return _local_note(out, prob), None
    pop = riskcalc.logistic_clients_limit(gamma=prob["gammas"], r=prob["rs"], **common)
    full = pop.as_dict()
    out = {k: full[k] for k in ("model", "iterations", "residual", "notes")}
    out["method"] = prob["method"]
    _local_note(out, prob)
    out["params"] = dict(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                         lam=prob["lam"], clients=prob["clients"],
                         global_lam=prob["global_lam"], weights=prob["weights"])
    if prob["spectrum"] is not None:
        out["params"]["spectrum"] = full["params"]["spectrum"]
    from riskcalc.logistic.result import GLOBAL_FIELDS

    out.update({q: full[q][0] for q in quantities(prob) if q not in GLOBAL_FIELDS})
    out.update({q: full[q] for q in GLOBAL_FIELDS if q in full})
    return out, full


def _local_note(out, prob):
    """``out`` with, for local ridge, the note the linear family prints: its risk is the
    target's own, whatever the federation (it answered with --clients and --global-lam and said
    nothing of them)."""
    if prob["method"] == "local_ridge":
        out["notes"] = [n for n in out.get("notes") or () if "no global model" not in n] + [
            "local_ridge uses no global model: the other clients of the federation and the "
            "global model's penalty play no part"]
    return out


def _header(out, prob):
    print(f"{TITLES[out['method']]} ({out['method']}, --model logistic); {REFERENCE}")
    print(guards.params_line({k: v for k, v in out["params"].items() if v is not None}))
    print("  risk = ||w_hat - w_i||^2"
          + ("; sigma_risk = (w_hat - w_i)' Sigma (w_hat - w_i)" if prob["spectrum"] is not None
             else "")
          + ("; cosine = cos(w_hat - c, w_i - c), c the centre" if "cosine" in quantities(prob)
             else "")
          + "; cosine_uncentred = cos(w_hat, w_i)")


def predict(args) -> int:
    """``riskcalc predict METHOD --model logistic``: the limits of the target client."""
    prob = _problem(args, "predict")
    out, fed = _limit(prob, _max_seconds(args, timed=True))
    if fed is not None:
        out["federation"] = fed
    if args.json:
        print(guards.dumps(out))
        return 0
    _header(out, prob)
    for name in quantities(prob):
        v = out.get(name)
        print(f"  {name:<16} {'n/a' if v is None else format(v, '.10g')}")
    if fed is not None:
        print(f"  mean over the {prob['clients']} clients: "
              + ", ".join(f"{q} {fed['mean'][q]:.10g}" for q in quantities(prob)
                          if q in fed["mean"] and fed["mean"][q] is not None))
    for note in out.get("notes", ()):
        print(f"  note: {note}")
    return 0


def compare(args) -> int:
    """``riskcalc compare METHOD --model logistic`` (``riskcalc.cli.logistic.compare``)."""
    from riskcalc.cli.logistic.compare import run

    return run(args, _problem(args, "compare"), limit=_limit, header=_header,
               max_seconds=_max_seconds)
