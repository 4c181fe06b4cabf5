"""``--federation FILE [--target J]`` and ``--clients-file FILE`` of the model verbs (``predict``,
``compare``, ``sweep``, both families): one reader (``riskcalc.federation_file``), one meaning.

* ``--federation FILE`` reads the versioned object listing ALL clients; the target is client
  ``--target J`` (a 0-based index or a name, default 0) and the others are the rest of the
  federation, in file order. The clients' parameters come from the file, so ``--gamma``,
  ``--r``, ``--sigma`` and ``--rho`` are refused; ``--spectrum`` is the covariance of the
  clients that give none (identity by default).
* ``--clients-file FILE`` holding that object means the same (the object always lists ALL
  clients); holding a bare list, it keeps its old meaning: the OTHER clients, the target being
  given by the model options.

``resolve`` turns either into the options the verbs already read (``args.gamma`` ... from the
target; ``args.clients_file`` set, ``riskcalc.cli.options.clients_file.other_clients`` the
others), so the two forms share every code path after it.
"""

from __future__ import annotations

import dataclasses
import warnings

from riskcalc import federation_file

#: The target's parameters an option may not repeat when the file gives them.
CLIENT_OPTIONS = ("gamma", "r", "sigma", "rho")


def add_options(parser) -> None:
    """Add ``--federation`` and ``--target``."""
    parser.add_argument("--federation", metavar="FED.json",
                        help='federation file {"fedrisk_federation": 1, "clients": [...]} '
                             "listing ALL clients (riskcalc estimate --json writes one); the "
                             "clients' gamma, r, sigma come from it")
    parser.add_argument("--target", metavar="J",
                        help="with --federation: the client whose risk is reported, a 0-based "
                             "index or a client name (default 0)")


def resolve(args, family: str = "linear", multi: bool = False) -> None:
    """Read ``--federation`` (or an object given to ``--clients-file``) and fill the target's
    model options from it, in place; the keys the family ignores are named in a warning. A bare
    list given to ``--clients-file`` is left to the verb (``other_clients``)."""
    args._others = args._bare = None
    fed_path = getattr(args, "federation", None)
    if fed_path is None and getattr(args, "clients_file", None) is None:
        if getattr(args, "target", None) is not None:
            raise ValueError("--target applies with --federation only")
        _default_global(args, False)
        return
    if fed_path is not None and args.clients_file is not None:
        raise ValueError("give --federation or --clients-file, not both")
    option = "--federation" if fed_path is not None else "--clients-file"
    if getattr(args, "clients", None) is not None:
        raise ValueError(f"give --clients M (identical clients) or {option}, not both")
    ranges = None
    if family == "logistic":    # its gamma range named by the reader (was the linear one)
        from riskcalc.cli.logistic import file_ranges

        ranges = file_ranges()
    if fed_path is not None:
        ff = federation_file.read(fed_path, "--federation", versioned=True, ranges=ranges)
    else:
        ff = federation_file.read(args.clients_file, "--clients-file", ranges=ranges)
        if not ff.versioned:
            if getattr(args, "target", None) is not None:
                raise ValueError("--target applies with --federation (a bare --clients-file "
                                 "list holds the OTHER clients: the target is the client of "
                                 "the model options)")
            _unused_d(args, ff, option)
            # Kept for other_clients: a pipe (/dev/stdin) can be read once only.
            args._bare = _bare_gammas(ff, getattr(args, "d", None), family)
            _default_global(args, False)
            return
    _default_global(args, True)
    if getattr(args, "global_model", None) == "oracle":
        raise ValueError(f"{option} gives the federation of the global model: it applies "
                         "with --global federated (the default with a federation file)")
    for name in CLIENT_OPTIONS:
        if getattr(args, name, None) is not None:
            raise ValueError(f"--{name} does not apply with {option}: the clients' "
                             f"parameters come from {ff.path}")
    t = ff.target(0 if args.target is None else args.target)
    if ff.d is None:
        _unused_d(args, ff, option)
    _check_d(args, ff, option, family)
    fill = (lambda v: repr(float(v))) if multi else float
    # A client's n is d / gamma at the file's d, else --d's (as advise --d; was refused as
    # 'the file needs "d"' with --d given).
    gammas = ff.gammas(getattr(args, "d", None))
    if hasattr(args, "_family_parser"):     # the default identity is not --spectrum given
        from riskcalc.cli.options import families

        ff.check_default_spectrum(args.spectrum if families.given(args, "spectrum") else None)
    default = getattr(args, "spectrum", None) or "identity"
    specs = ff.spectra(default)
    _unsized_target(args, ff, t, specs[t])
    order = [t] + [j for j in range(ff.m) if j != t]
    if family == "logistic":
        others = _logistic(args, ff, gammas, specs, order)
    else:
        others = _linear(args, ff, gammas, specs, order, t, fill)
    args.gamma = fill(gammas[t])
    args.spectrum = specs[t]
    args.clients_file = ff.path
    args._others = others
    unused = ()
    # Along the rounds the linear model uses ||theta_0|| (--signal): the file's, when it gives it.
    signal_used = family == "linear" and getattr(args, "rounds", None) is not None
    if signal_used and ff.signal is not None:
        if getattr(args, "signal", None) is not None:
            raise ValueError(f"--signal does not apply with {ff.where}: the file gives "
                             f"signal = {ff.signal:g}")
        args.signal = ff.signal
    if family == "linear":
        import riskcalc

        info = riskcalc.get_method(args.method)
        unused = tuple(k for k in ("r", "rho") if k not in info.parameters)
        if info.signal == "rho" and getattr(args, "weights", None) is not None:
            # predict took it and ignored it; compare said it needs --global federated, which
            # it then refused for a local baseline.
            raise ValueError(f"--weights does not apply to {args.method}: it uses no global "
                             "model (the other clients of the federation play no part)")
        if info.signal == "rho" and hasattr(args, "reps"):
            # compare/sweep of a local baseline simulate the target alone, as predict answers
            # its own limit (was refused as '--global federated does not apply', an option
            # nobody gave: the file's default).
            args.global_model, args.clients_file, args._others = "oracle", None, None
            warnings.warn(f"{ff.where}: {args.method} uses no global model: the other "
                          "clients of the federation play no part", stacklevel=2)
    for note in ff.notes(family, unused, signal_used=signal_used):
        # A warning: written after the output, and not at all when the command fails.
        warnings.warn(note, stacklevel=2)


def _bare_gammas(ff, d, family="linear"):
    """A bare list's clients with ``n`` turned into gamma = d / n at ``--d`` (the list has no d
    of its own). A client's n was refused ('must have exactly the keys gamma, r, sigma') after
    --d had been accepted as turning it into gamma. The logistic family takes no --d there."""
    if not any("n" in c for c in ff.clients):
        return ff
    if family == "logistic":
        j = next(j for j, c in enumerate(ff.clients) if "n" in c)
        raise ff.error(j, "gives n: with --model logistic a bare list gives gamma (d / n; --d "
                          "does not apply there), or use the federation object with its d")
    for j, c in enumerate(ff.clients):
        if ("gamma" in c) == ("n" in c):
            raise ff.error(j, "give exactly one of gamma (d / n) and n (with --d), got "
                              + ("both" if "gamma" in c else "neither"))
    if d is None:
        j = next(j for j, c in enumerate(ff.clients) if "n" in c)
        raise ff.error(j, "gives n: give --d to turn it into gamma = d/n")
    gammas = ff.gammas(d)
    clients = tuple({**{k: v for k, v in c.items() if k != "n"}, "gamma": g}
                    for c, g in zip(ff.clients, gammas))
    return dataclasses.replace(ff, clients=clients)


def _default_global(args, federated: bool) -> None:
    """``--global``'s default: federated with a federation file, else oracle."""
    if hasattr(args, "global_model") and args.global_model is None:
        args.global_model = "federated" if federated else "oracle"


def _unused_d(args, ff, option) -> None:
    """``predict`` with a file that gives no d: ``--d`` sizes ``powerlaw:P``, is checked
    against the lengths of ``powerlaw:P,D`` and ``file:PATH`` and turns a client's n into
    gamma; refused when nothing of these is in ``--spectrum`` or the file (was: taken
    silently, the answer the same at every d)."""
    if getattr(args, "d", None) is None or hasattr(args, "reps"):
        return
    if not ff.uses_d(getattr(args, "spectrum", None)):
        raise ValueError(f"--d {args.d}: nothing uses it (it sizes powerlaw:P, is checked "
                         "against the eigenvalues of file:PATH and powerlaw:P,D and turns a "
                         f"client's n into gamma; --spectrum and {option} {ff.path} have none "
                         "of these, and their limits do not depend on d): leave it out")


def _check_d(args, ff, option, family) -> None:
    """The file's d as ``--d``: the default dimension of a simulation (``compare``, ``sweep``:
    another --d simulates the same gammas at that size) and, for ``predict``, the size of the
    spectra (another --d is an error there; the logistic ``predict`` sizes powerlaw:P only)."""
    if ff.d is None or not hasattr(args, "d"):
        return
    simulates = hasattr(args, "reps")
    if args.d is None:
        # The logistic predict's d sizes powerlaw:P (its advise's did: predict refused the
        # same file, 'powerlaw needs the number of eigenvalues') and checks a file: count (3
        # eigenvalues beside the file's d = 5 were taken from --spectrum, refused by advise).
        from riskcalc.spectrum import spec_uses_d

        sizes = any(spec_uses_d(s)
                    for s in ff.spectra(getattr(args, "spectrum", None) or "identity"))
        if simulates or family == "linear" or sizes:
            args.d = ff.d
    elif not simulates and args.d != ff.d:
        raise ValueError(f"--d {args.d} differs from the d = {ff.d} of {option} {ff.path}")


def require_d(args) -> None:
    """``compare``/``sweep``: --d is required unless a federation file gives d, and is >= 2
    in every family (as ``check`` and the logistic simulations: the linear ``compare --d 1``
    simulated a 1-dimensional problem where the others refuse it)."""
    from riskcalc._validate import positive_int

    if args.d is None:
        raise ValueError("the following arguments are required: --d (or a federation file "
                         'with "d")')
    positive_int("--d", args.d, minimum=2)


def _unsized_target(args, ff, t, spec) -> None:
    """The target's own ``powerlaw:P`` without a number of eigenvalues, a file d or --d,
    refused naming the file and the client (``federation_file`` leaves it to the verb's --d:
    the verb's refusal named neither, while another client's named the file). A simulation
    needs --d first (and sizes every SPEC by it)."""
    from riskcalc.spectrum import Spectrum, spec_kind

    if "spectrum" in ff.clients[t] and getattr(args, "d", None) is None \
            and not hasattr(args, "reps") and spec_kind(spec)[0] == "powerlaw":
        try:
            Spectrum.parse(spec)
        except ValueError as exc:
            raise ff.error(t, f"spectrum: {exc}") from None


def _linear(args, ff, gammas, specs, order, t, fill):
    """The target's r (or rho) and sigma into ``args``; the other clients as the lists the
    linear verbs read (``clients_file.read_clients_file``'s form)."""
    import riskcalc

    info = riskcalc.get_method(args.method)
    why = f"the linear model's {args.method} needs it"
    sigma = ff.column("sigma", why)
    args.sigma = fill(sigma[t])
    if "rho" in info.parameters:
        args.rho = fill(ff.column("rho", why)[t])
    if "r" in info.parameters or info.signal == "r":
        args.r = fill(ff.column("r", why)[t])
    rest = order[1:]
    r = ff.column("r", "the other clients' distance to theta_0 enters the global model") \
        if rest and info.signal == "r" else [0.0] * ff.m
    shared = all(specs[j] == specs[t] for j in rest)
    return {"gamma": [gammas[j] for j in rest], "r": [r[j] for j in rest],
            "sigma": [sigma[j] for j in rest],
            "spectrum": [None if shared else specs[j] for j in rest]}


def _logistic(args, ff, gammas, specs, order):
    """The logistic family's lists (gamma, r per client, no sigma) and ``--signal``."""
    # One covariance shared by every client is the family's --spectrum (riskcalc estimate
    # writes the estimated one into every client: was refused as per-client); differing
    # ones are covariate shift, which the family does not cover.
    j = differing_covariance(ff, specs, getattr(args, "d", None))
    if j is not None:
        raise ff.error(j, f"spectrum {specs[j]!r}: the logistic family takes one covariance "
                          "shared by every client (no covariate shift), and the clients' "
                          "spectra differ")
    if ff.signal is not None:
        if getattr(args, "signal", None) is not None:
            raise ValueError(f"--signal does not apply with {ff.where}: the file gives "
                             f"signal = {ff.signal:g}")
        args.signal = ff.signal
    r = ff.column("r", "the logistic model needs it")
    from riskcalc.logistic.ranges import GAMMA_RANGE

    for j in order:     # was: 'got 1e-20 (entry 1 of 2)', the target counted first
        if not GAMMA_RANGE[0] <= gammas[j] <= GAMMA_RANGE[1]:
            raise ff.error(j, f"gamma must lie in [{GAMMA_RANGE[0]:g}, {GAMMA_RANGE[1]:g}] with "
                              f"--model logistic (riskcalc.logistic.ranges), got {gammas[j]:g}")
    args.r = r[order[0]]
    return {"gamma": [gammas[j] for j in order[1:]], "r": [r[j] for j in order[1:]]}


def differing_covariance(ff, specs, d=None) -> int | None:
    """None when the SPECs ``specs`` (one per client of ``ff``) are one covariance, else the
    first client whose covariance is not the identity. Compared by their eigenvalues in the
    shared basis, as the linear ``riskcalc.advise.Federation`` compares them: identity,
    scaled:1 and IDENTITY are one covariance (the logistic family compared the text, and
    refused them as covariate shift)."""
    if len(set(specs)) == 1:
        return None
    from riskcalc.linear.engine.joint_spectrum import joint_spectrum

    try:
        joint = joint_spectrum(list(specs), d)
    except ValueError as exc:
        raise ff.error(None, f"spectrum: {exc}") from None
    if (joint.values == joint.values[0]).all():
        return None
    return int((joint.values != 1.0).any(axis=1)[joint.types].argmax())


def client_spectra(args, fed) -> list | None:
    """Covariate shift: every client's SPEC (the target's --spectrum first; a client without
    one has the target's), or None when no client of ``fed`` gives a spectrum."""
    if all(s is None for s in fed["spectrum"]):
        return None
    from riskcalc.spectrum import Spectrum, as_spectrum

    option = "--federation" if getattr(args, "federation", None) is not None else \
        "--clients-file"
    # predict: a file: or powerlaw:P,D SPEC must have d eigenvalues (a file of 4 beside --d 5
    # was taken); a simulation's --d is its size, to which any spectrum is expanded.
    read = Spectrum.parse if hasattr(args, "reps") else as_spectrum
    for spec in dict.fromkeys(s for s in fed["spectrum"] if s is not None):
        try:
            # Parsed here only to name the file: the solvers' own refusal of
            # 'powerlaw:1' without --d named neither the file nor its option.
            read(spec, d=getattr(args, "d", None))
        except ValueError as exc:
            raise ValueError(f"{option} {args.clients_file}: {exc}") from None
    return [args.spectrum] + [args.spectrum if s is None else s for s in fed["spectrum"]]


def finite_route(args, option, spectra) -> None:
    """``--route`` beside a finite-M limit over ``option``'s clients: auto, or closed where
    every covariance of ``spectra`` (Spectrum objects, SPECs or None for Sigma = I) is the
    identity, as ``riskcalc.limit(..., clients=M)`` takes it (``predict --clients M`` refused
    kappa and closed under a spectrum; beside a clients or federation file they were ignored,
    or refused naming --clients-file for --federation)."""
    from riskcalc.spectrum import as_spectrum

    if args.route not in ("auto", "closed"):
        raise ValueError(f"--route {args.route} does not apply with {option}: the finite-clients "
                         "limit has one route (auto, or closed for Sigma = I)")

    def identity(s):
        try:
            s = as_spectrum(s, d=getattr(args, "d", None)) if isinstance(s, str) else s
        except ValueError:
            return False
        return s is None or (s.is_identity and s.signal_is_uniform)

    if args.route == "closed" and not all(identity(s) for s in spectra):
        raise ValueError("route 'closed' holds for Sigma = I only (spectrum identity)")


def simulated_route(args, method, setting, spectrum) -> None:
    """``finite_route`` for ``compare``/``sweep``: their prediction under ``--global
    federated`` (no ``--steps``, which refuse any route) is the finite-M limit of the methods
    that have one (the others' is the oracle limit, where every route applies)."""
    from riskcalc._validate import canonical_method
    from riskcalc.linear import finite_clients

    if (setting.global_model == "federated" and args.steps is None
            and canonical_method(method) in finite_clients.METHODS):
        finite_route(args, "--global federated", [spectrum] + list(setting.spectra or []))
