"""The OTHER clients of a bare ``--clients-file`` list (``riskcalc.cli.options.fedargs``
resolves ``--federation`` and ``--clients-file`` first): ``other_clients`` and the readers of
the list for the linear (``read_clients_file``) and logistic (``read_logistic_clients_file``)
families."""

from __future__ import annotations

from riskcalc import federation_file


def other_clients(args, read_bare):
    """The OTHER clients: from the federation object (``resolve``), else ``read_bare`` of the
    bare list of ``--clients-file`` (the list ``resolve`` read, else the path)."""
    others = getattr(args, "_others", None)
    if others is not None:
        return others
    bare = getattr(args, "_bare", None)
    return read_bare(args.clients_file if bare is None else bare)


def bare_list(source):
    """``(path, clients)`` of a bare ``--clients-file`` list: ``source`` is its path or the
    ``FederationFile`` ``resolve`` already read (a pipe such as /dev/stdin reads once)."""
    from riskcalc.federation_file import FederationFile

    ff = source if isinstance(source, FederationFile) else \
        federation_file.read(source, "--clients-file", versioned=False)
    return ff.path, ff.clients


def read_clients_file(path) -> dict:
    """The clients of a ``--clients-file`` (its path, or the list ``resolve`` read): a JSON
    list of objects with keys gamma, r, sigma (numbers) and optionally spectrum (a SPEC:
    covariate shift, DESIGN.md), returned as lists
    ``{"gamma": [...], "r": [...], "sigma": [...], "spectrum": [SPEC or None, ...]}``."""
    path, data = bare_list(path)
    keys = ("gamma", "r", "sigma")
    for k, c in enumerate(data):
        if not set(keys) <= set(c) <= set(keys) | {"spectrum"}:
            raise ValueError(f"--clients-file {path}: client {k} must have exactly the keys "
                             "gamma, r, sigma (and optionally spectrum); got "
                             f"{', '.join(sorted(c)) or 'none'}")
        if not isinstance(c.get("spectrum", ""), str):
            raise ValueError(f"--clients-file {path}: client {k}'s spectrum must be a SPEC "
                             "string (identity, scaled:C, two-point:A,B,W, powerlaw:P[,D], "
                             "file:PATH)")
    return {**{key: [c[key] for c in data] for key in keys},
            "spectrum": [c.get("spectrum") for c in data]}


def read_logistic_clients_file(path) -> dict:
    """The other clients of a ``--clients-file`` with ``--model logistic`` (its path, or the
    list ``resolve`` read; ``read_clients_file``'s format without sigma): a JSON list of
    objects with exactly the keys gamma and r, as ``{"gamma": [...], "r": [...]}``."""
    from riskcalc.logistic.ranges import GAMMA_RANGE

    path, data = bare_list(path)
    for k, c in enumerate(data):
        if set(c) != {"gamma", "r"}:
            raise ValueError(f"--clients-file {path}: client {k} must have exactly the keys "
                             f"gamma, r with --model logistic; got "
                             f"{', '.join(sorted(c)) or 'none'}")
        for key in ("gamma", "r"):
            if isinstance(c[key], bool) or not isinstance(c[key], (int, float)):
                raise ValueError(f"--clients-file {path}: client {k}: {key} must be a number, "
                                 f"got {c[key]!r}")
        # The logistic range here, naming the file and client (was: '... got 1e-20 (entry 1
        # of 2)' from the pipeline, the target counted as entry 0).
        if not GAMMA_RANGE[0] <= c["gamma"] <= GAMMA_RANGE[1]:
            raise ValueError(f"--clients-file {path}: client {k}: gamma must lie in "
                             f"[{GAMMA_RANGE[0]:g}, {GAMMA_RANGE[1]:g}] with --model logistic "
                             f"(riskcalc.logistic.ranges), got {c['gamma']:g}")
    return {key: [float(c[key]) for c in data] for key in ("gamma", "r")}
