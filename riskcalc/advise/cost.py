"""What ``riskcalc.advise`` will cost, estimated before it starts (``--max-minutes``).

Per pipeline: the number of evaluations of its finite-M limits (``clients_limit``) the tuning
and the optimal weights take, times the seconds of one evaluation, a + b M per route (M the
number of clients). The counts follow the searches of ``tune`` and ``weights``: the RTFA
penalty grid (81 points, batched for Sigma = I) and golden-section search (about 45 points)
for three weightings; about 25 evaluations of the shared alpha / lam per weighting; the
optimal weights with exact gradients (Sigma = I: about ``OPT_GRADIENTS`` gradients, each a few
evaluations) or with finite differences (a covariance spectrum or covariate shift: about
``OPT_ITERATIONS`` iterations of M + 2 evaluations, M + 1 more for RTFA's penalties).
The seconds per evaluation were measured on a loaded 2-core machine (one BLAS thread) for
5, 100 and 1000 clients, rounded up; under covariate shift MAML-FL and pFedMe were measured
at 1000 clients of three types (7 s and about 230 s per evaluation). RTFA with Sigma = I was
re-measured once its target traces had closed forms (10,000 clients: one evaluation 0.013 s,
one gradient 0.03 s, 278 gradients for 12 clients and 133 for 1000). The estimate aims at the
right order of magnitude, erring on the long side.
"""

from __future__ import annotations

#: Seconds of one evaluation: (a, b) for a + b M, per route and method.
EVAL = {
    "identity": {"fedavg": (1e-3, 3e-6), "ftfa": (1e-3, 3e-6), "rtfa": (2e-3, 3e-6),
                 "maml_fl": (5e-3, 3e-5), "pfedme": (5e-3, 4e-5)},
    "general": {"fedavg": (5e-3, 2e-4), "ftfa": (5e-3, 1e-4), "rtfa": (5e-3, 1e-4),
                "maml_fl": (0.05, 1e-2), "pfedme": (0.05, 0.25)},
}
#: Seconds of one exact gradient (Sigma = I), a + b M.
GRADIENT = {"fedavg": (2e-3, 5e-6), "ftfa": (2e-3, 5e-6), "rtfa": (5e-3, 1e-5),
            "maml_fl": (1e-2, 2e-4), "pfedme": (1e-2, 4e-4)}
OPT_GRADIENTS = {"fedavg": 80, "ftfa": 80, "rtfa": 300, "maml_fl": 60, "pfedme": 80}
OPT_ITERATIONS = 60
#: Fine-tuning steps: seconds per client and weighting (Sigma = I: quadrature; a spectrum:
#: pencils of 100 steps per atom).
STEPS = {"identity": 2e-3, "general": 0.05}


def estimate_seconds(fed, methods) -> dict:
    """Estimated CPU seconds of each pipeline of ``riskcalc.advise.advise(fed, methods)``
    (module docstring).

    Returns
    -------
    dict
        pipeline -> seconds.
    """
    m = fed.m
    route = "general" if (fed.shift or fed.spectrum is not None) else "identity"
    atoms = 1 if fed.spectrum is None else fed.spectrum.atoms.size

    def ev(method):
        a, b = EVAL[route][method]
        return a + b * m

    def opt(method, extra):
        if route == "identity":
            a, b = GRADIENT[method]
            return OPT_GRADIENTS[method] * (a + b * m)
        return OPT_ITERATIONS * (m + 1 + extra) * ev(method)

    out = {}
    for method in methods:
        if method in ("fedavg", "ftfa"):
            out[method] = 3 * ev(method) + opt(method, 0)
        elif method == "rtfa":
            out[method] = 3 * (81 + 46) * ev("rtfa") + opt("rtfa", m)
        elif method in ("maml_fl", "pfedme"):
            out[method] = 52 * ev(method) + opt(method, 1)
        elif method == "ftfa_steps":
            out[method] = 0.0 if fed.shift else 2 * STEPS[route] * m * atoms
        else:
            out[method] = 1e-3 * m
    return out


def advice(estimates: dict, limit: float) -> str:
    """What brings the estimate under ``limit`` seconds: the pipelines to keep (leaving out
    the slowest first), or fewer clients."""
    kept = dict(estimates)
    while kept and sum(kept.values()) > limit:
        kept.pop(max(kept, key=kept.get))
    slow = ", ".join(f"{k} ~{_duration(v)}" for k, v in sorted(
        estimates.items(), key=lambda kv: -kv[1]) if k not in kept)
    if kept:
        return (f"the slowest pipelines are {slow}: --methods {','.join(kept)} would take "
                f"about {_duration(sum(kept.values()))}")
    return f"every pipeline alone exceeds it ({slow}): use fewer clients"


def _duration(seconds: float) -> str:
    for unit, size in (("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
