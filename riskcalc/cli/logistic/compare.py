"""``riskcalc compare METHOD --model logistic``: the logistic limits next to exact-Newton
simulations (``riskcalc.cli.logistic.family.compare`` checks the problem and hands it over): the
simulation at the ratios and spectrum it realizes, its work estimate before any replicate, and the
table or JSON of predicted against simulated.
"""

from __future__ import annotations

import math

from riskcalc.cli.shared import guards
from riskcalc.logistic.result import measured_fields
from riskcalc.spectrum import Spectrum


def _simulate(args, prob, d, reps):
    """Simulated means and standard errors of the target's quantities: ``{q: (mean, se)}``."""
    names = measured_fields(prob["method"], prob["federated"], prob["spectrum"])
    if not prob["federated"] or prob["method"] == "local_ridge":
        # Local ridge uses the target's data only: the one-client simulation with centre 0 (the
        # same draws as the pipeline's client 0), which also samples x ~ N(0, Sigma).
        from montecarlo.logistic.ridge import simulate
        from riskcalc.logistic.spectrum.limits import centre_scale

        scale = 0.0 if prob["method"] == "local_ridge" else centre_scale(
            prob["signal"], prob["r"], prob["spectrum"] or Spectrum.identity(), prob["centre"])
        sim = simulate(gamma=prob["gamma"], signal=prob["signal"], r=prob["r"],
                       lams=[prob["lam"]], d=d, reps=reps, seed=args.seed, n_jobs=args.jobs,
                       progress=not args.no_progress, centre_scale=scale,
                       spectrum=prob["spectrum"], max_minutes=None)     # timed by _budget
        return {q: (float(sim[q][0][0]), float(sim[q][1][0])) for q in names}, \
            sim["n"]
    from montecarlo.logistic.pipeline import simulate_pipeline
    from riskcalc.logistic.result import GLOBAL_FIELDS

    sim = simulate_pipeline(gamma=prob["gammas"], r=prob["rs"], signal=prob["signal"],
                            lams=[] if prob["method"] == "fedavg" else [prob["lam"]],
                            global_lam=prob["global_lam"], weights=prob["weights"], d=d,
                            reps=reps, seed=args.seed, n_jobs=args.jobs,
                            progress=not args.no_progress, pfedme=prob["method"] == "pfedme",
                            spectrum=prob["spectrum"], max_minutes=None)
    est = sim[prob["method"]]
    pick = (lambda v: float(v)) if prob["method"] == "fedavg" else (lambda v: float(v[0]))
    out = {q: (pick(est[q][0]), pick(est[q][1])) for q in names
           if q not in GLOBAL_FIELDS}
    out.update({"global_overlap": tuple(map(float, sim["global"]["overlap"])),
                "global_dist": tuple(map(float, sim["global"]["dist"]))})
    return out, sim["n"][0]


def _realized(prob, d):
    """``(prob, notes)``: the problem at the ratios d / n_j and the spectrum the simulation
    realizes (``montecarlo.prediction.simulated_ratios`` with the pipeline's ``client_sizes``;
    ``pipeline.simulated_spectrum``), with a note where they differ from those asked."""
    from montecarlo.logistic.pipeline import client_sizes, simulated_spectrum
    from montecarlo.prediction import simulated_ratios

    asked = prob["gammas"] if prob["federated"] else [prob["gamma"]]
    ratios, note = simulated_ratios(d, asked, sizes=client_sizes)
    spectrum, spread = simulated_spectrum(prob["spectrum"], d)
    out = dict(prob, gamma=ratios[0], spectrum=spectrum)
    if prob["federated"]:
        out["gammas"] = ratios
    return out, [n for n in (note, spread) if n is not None]


def _budget(args, prob, d, reps) -> None:
    """The work estimate (``guards.budget``) before any replicate runs: the target's exact
    Newton fit and, with M clients, the pooled fit over N = d sum_j 1/gamma_j samples (and
    FedProx's proximal fits of every client, and the exact test metrics at ||w_i||_Sigma:
    ``logistic_pipeline_seconds``)."""
    from montecarlo.runner.budget import logistic_pipeline_seconds, logistic_replicate_seconds

    seconds = logistic_replicate_seconds(d, prob["gamma"])
    samples = guards.many_samples(d, prob["gamma"])
    what = f"{reps} replicates of the logistic model at d = {d}{samples}"
    if prob["federated"] and prob["method"] != "local_ridge":
        root = 1.0 if prob["spectrum"] is None else prob["spectrum"].mean ** 0.5
        seconds = logistic_pipeline_seconds(d, prob["gamma"], prob["gammas"],
                                            fedprox=prob["method"] == "pfedme",
                                            kappa=root * math.hypot(prob["signal"], prob["r"]))
        what += f" with {prob['clients']} clients"
    guards.budget(args, reps, seconds, what,
                  "lower --reps or --d" + (" or the clients, --signal and --r (the exact test "
                                           "metrics' rule grows with ||w_i||)"
                                           if prob["federated"] else "")
                  + (", or raise --gamma" if samples else ""))


def run(args, prob, *, limit, header, max_seconds) -> int:
    """``riskcalc compare METHOD --model logistic`` for the checked problem ``prob``
    (``logistic._problem``): the limits next to exact-Newton simulations at dimension ``--d``
    (oracle / infinite-client centre: ``montecarlo.logistic.ridge``; ``--global federated``:
    ``montecarlo.logistic.pipeline``). ``limit``, ``header`` and ``max_seconds`` are
    ``riskcalc.cli.logistic.family``'s, handed over so that this module does not import it back."""
    from montecarlo.runner.stats import t_half_width
    from riskcalc._validate import positive_int, seed_integer

    d = positive_int("--d", args.d, minimum=2)
    reps = positive_int("--reps", args.reps, minimum=2)
    seed_integer("--seed", args.seed)
    prob, moved = _realized(prob, d)
    pred, _ = limit(prob, max_seconds(args))
    pred["notes"] = list(pred.get("notes") or ()) + moved
    if prob["method"] != "fedavg":
        from riskcalc.cli.logistic.sweep import simulated_lams

        simulated_lams([prob["lam"]], "compare")
    _budget(args, prob, d, reps)
    sim, n = _simulate(args, prob, d, reps)
    names = measured_fields(prob["method"], prob["federated"], prob["spectrum"])
    out = {"model": "logistic", "method": prob["method"], "params": pred["params"],
           "predicted": {}, "simulated": {"d": d, "n": n, "reps": reps, "seed": args.seed},
           "comparison": {}, "notes": list(pred.get("notes", ()))}
    for q in names:
        p, (mean, se) = pred.get(q), sim[q]
        ok = p is not None and mean == mean
        out["predicted"][q] = p if ok else None
        out["simulated"][q], out["simulated"][q + "_se"] = (mean, se) if ok else (None, None)
        out["comparison"][q] = {
            "rel_diff": (mean - p) / abs(p) if ok and p != 0 else None,
            "inside_ci95": bool(abs(mean - p) <= t_half_width(se, reps)) if ok else None}
    if args.json:
        print(guards.dumps(out))
        return 0
    header(pred, prob)
    where = ("centre 0 (local ridge uses the target's data only)"
             if prob["method"] == "local_ridge" else
             f"FedAvg's exact global model over {prob['clients']} client"
             f"{'s' if prob['clients'] > 1 else ''} (global_lam "
             f"{prob['global_lam']:g}, {prob['weights']} weights)" if prob["federated"]
             else f"{prob['centre']} centre")
    print(f"  simulation: d = {d} (n = {n}), {reps} replicates, seed {args.seed}, "
          f"exact Newton solves, {where}")
    print(f"  {'':<14} {'predicted':>12} {'simulated':>12} {'std.err':>10} {'rel.diff':>9}"
          f"  in 95% CI")
    for q in names:
        cmp = out["comparison"][q]
        if out["predicted"][q] is None:
            print(f"  {q:<14} {'n/a':>12}")
            continue
        rel = "n/a" if cmp["rel_diff"] is None else f"{100 * cmp['rel_diff']:+.3f}%"
        print(f"  {q:<14} {out['predicted'][q]:>12.6g} {out['simulated'][q]:>12.6g} "
              f"{out['simulated'][q + '_se']:>10.3g} {rel:>9}  "
              f"{'yes' if cmp['inside_ci95'] else 'no'}")
    for note in out["notes"]:
        print(f"  note: {note}")
    return 0
